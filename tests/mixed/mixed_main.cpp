// A program made of a .cpp and a .cu that evaluate the same cpu expression. Every fusor template
// the statement needs is instantiated in both objects, and the linker keeps one copy of each (the
// .cu object comes first on the link line, so its copies win where they differ). The .cpp must
// still take the SIMD path, and both must give the same, correct values: the cpu templates have
// one body in both compilers.
#include <cmath>
#include <cstdio>
#include <vector>

#include "statement.hpp"

namespace mixed {
outcome statement_in_cpp(const fusor::array<float>& a, const fusor::array<float>& b, const fusor::array<float>& c) {
  MIXED_STATEMENT_BODY;
}
}  // namespace mixed

int main() {
  using namespace fusor;
  const index_t n = 1003;
  array<float> a(extents{n}), b(extents{n}), c(extents{n});
  for (index_t i = 0; i < n; ++i) {
    a.data()[i] = float(i % 97) * 0.25f;
    b.data()[i] = float(i % 13) - 6.0f;
    c.data()[i] = float(i % 7) * 0.5f;
  }
  const mixed::outcome from_cpp = mixed::statement_in_cpp(a, b, c);
  const mixed::outcome from_cu = mixed::statement_in_cu(a, b, c);
  int failures = 0;
  if (from_cpp.simd_passes != 1) {
    std::printf("the .cpp's statement ran %ld SIMD passes, expected 1 (it took the .cu's scalar copy)\n",
                from_cpp.simd_passes);
    ++failures;
  }
  if (from_cu.simd_passes != 1) {
    std::printf("the .cu's statement ran %ld SIMD passes, expected 1\n", from_cu.simd_passes);
    ++failures;
  }
  index_t bad = 0;
  for (index_t i = 0; i < n; ++i) {
    const float x = a.data()[i], want = x * b.data()[i] + c.data()[i] - std::sqrt(x);
    bad += std::abs(from_cpp.result(i) - want) > 1e-5f * (1 + std::abs(want)) || from_cu.result(i) != from_cpp.result(i);
  }
  if (bad) {
    std::printf("%ld of %ld values differ from the reference or between the two objects\n", long(bad), long(n));
    ++failures;
  }
  std::printf("test_mixed_link: %s\n", failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}
