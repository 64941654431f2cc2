// A VSA model's vectors have one element type (MAP-B: float): binding double arrays as MAP-B
// vectors must not compile, with a sentence that names the types each model takes.
#include <fusor/fusor.hpp>
int main() {
  const fusor::vsa::map_b m(8);
#if defined(FUSOR_CF_CONTROL)
  fusor::array<float> a = fusor::ones<float>({8}), b = fusor::ones<float>({8});
#else
  fusor::array<double> a = fusor::ones<double>({8}), b = fusor::ones<double>({8});
#endif
  (void)fusor::vsa::bind(m, a, b);
}
