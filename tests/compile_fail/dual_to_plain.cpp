// Assigning dual numbers into a plain array would drop their tangents: it must not compile; the
// parts are taken explicitly.
#include <fusor/fusor.hpp>
int main() {
  fusor::array<float> x{1.0f, 2.0f}, v{1.0f, 1.0f};
  fusor::array<float> y{0.0f, 0.0f};
#if defined(FUSOR_CF_CONTROL)
  y = fusor::ad::primal(sin(fusor::ad::make_dual(x, v)));
#else
  y = sin(fusor::ad::make_dual(x, v));
#endif
}
