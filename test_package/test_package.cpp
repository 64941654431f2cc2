#include <fusor/fusor.hpp>

#include <cstdio>

int main() {
  fusor::array<float> x = fusor::arange<float>(0, 100);
  const double s = fusor::sum(2.0f * x + 1.0f);  // 2 * 4950 + 100
  auto f = fusor::fft::rfft(x);
  std::printf("fusor test_package: sum %.1f, rfft bins %lld\n", s, static_cast<long long>(f.size()));
  return s == 10000.0 && f.size() == 51 ? 0 : 1;
}
