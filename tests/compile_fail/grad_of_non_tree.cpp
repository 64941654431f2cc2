// Differentiating with respect to an argument that holds no arrays (a plain number here) has no
// meaning: it must not compile, with a sentence that says what may be differentiated.
#include <fusor/fusor.hpp>
int main() {
  fusor::array<double> x{1.0, 2.0};
  auto f = [](const auto& a, const auto& c) { return sum(a * c); };
#if defined(FUSOR_CF_CONTROL)
  (void)fusor::ad::grad(f, fusor::ad::argnums<0>)(x, 2.0);
#else
  (void)fusor::ad::grad(f, fusor::ad::argnums<1>)(x, 2.0);
#endif
}
