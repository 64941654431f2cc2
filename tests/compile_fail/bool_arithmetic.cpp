// Arithmetic on two bool operands must not compile (NumPy raises for bool - bool).
#include <fusor/fusor.hpp>
int main() {
  fusor::array<bool> p{true, false};
#if defined(FUSOR_CF_CONTROL)
  auto e = fusor::logical_or(p, p);
#else
  auto e = p - p;
#endif
  (void)e;
}
