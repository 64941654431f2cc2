// rfft of complex input does not compile (NumPy raises TypeError at run time).
#include <fusor/fusor.hpp>
int main() {
#if defined(FUSOR_CF_CONTROL)
  fusor::array<float> x{1, 2, 3};
#else
  fusor::array<std::complex<float>> x{{1, 0}, {2, 0}, {3, 0}};
#endif
  auto X = fusor::fft::rfft(x);
  return int(X.size());
}
