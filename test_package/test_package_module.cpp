import fusor;

#include <cstdio>

int main() {
  fusor::array<float> x = fusor::arange<float>(0, 100);
  const double s = fusor::sum(2.0f * x + 1.0f);
  std::printf("fusor test_package (import fusor;): sum %.1f\n", s);
  return s == 10000.0 ? 0 : 1;
}
