// Bitwise operations on floats must not compile.
#include <fusor/fusor.hpp>
int main() {
  fusor::array<float> f{1.f};
#if defined(FUSOR_CF_CONTROL)
  auto e = f.astype<std::int32_t>() & 1;
#else
  auto e = f & 1;
#endif
  (void)e;
}
