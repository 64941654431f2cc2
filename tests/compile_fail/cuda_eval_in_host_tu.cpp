// Evaluating a cuda expression in a host-compiled translation unit must not compile.
#if defined(FUSOR_CF_MODULE)  // the same misuse through `import fusor;` (tests/package/consumer)
import fusor;
#else
#include <fusor/fusor.hpp>
#endif
int main() {
#if defined(FUSOR_CF_CONTROL)
  float host[3] = {1, 2, 3};
  fusor::array_view<float, fusor::cpu> v(host, {3});
#else
  fusor::array_view<float, fusor::cuda> v(nullptr, {3});
#endif
  return int(fusor::sum(v * 2));
}
