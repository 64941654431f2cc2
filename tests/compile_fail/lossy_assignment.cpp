// Assigning a floating expression into an integer array must not compile (NumPy's same_kind).
#include <fusor/fusor.hpp>
int main() {
  fusor::array<std::int32_t> i{1, 2};
  fusor::array<float> f{1.5f, 2.5f};
#if defined(FUSOR_CF_CONTROL)
  i = fusor::cast<std::int32_t>(f * 2);
#else
  i = f * 2;
#endif
}
