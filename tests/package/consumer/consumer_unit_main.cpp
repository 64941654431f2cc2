// Imports both the consumer's own module and fusor, in a target with module units of its own
// (so, with clang 19, this file includes xsimd before the import: docs/packaging.md).
#include <xsimd/xsimd.hpp>
import consumer_unit;
import fusor;

#include <cstdio>

int main() {
  const double s = odd_sum(1001);
  const double t = fusor::sum(fusor::ones<double>(fusor::extents{7}));
  const bool ok = s == 1001.0 * 1001.0 && t == 7.0;
  std::printf("consumer module unit: %s (odd_sum(1001) = %.1f, sum of 7 ones = %.1f)\n", ok ? "ok" : "WRONG", s, t);
  return ok ? 0 : 1;
}
