// Combining a cpu operand with a cuda operand must not compile.
#if defined(FUSOR_CF_MODULE)  // the same misuse through `import fusor;` (tests/package/consumer)
import fusor;
#else
#include <fusor/fusor.hpp>
#endif
int main() {
  float host[4] = {};
  fusor::array_view<float, fusor::cpu> a(host, {4});
#if defined(FUSOR_CF_CONTROL)
  fusor::array_view<float, fusor::cpu> b(host, {4});
#else
  fusor::array_view<float, fusor::cuda> b(nullptr, {4});
#endif
  auto e = a + b;
  (void)e;
}
