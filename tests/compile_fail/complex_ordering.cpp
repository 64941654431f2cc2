// Ordering comparisons of complex numbers must not compile.
#include <fusor/fusor.hpp>
int main() {
  fusor::array<std::complex<float>> c{std::complex<float>(1, 2)};
#if defined(FUSOR_CF_CONTROL)
  auto e = fusor::abs(c) < 1.f;
#else
  auto e = c < 1.f;
#endif
  (void)e;
}
