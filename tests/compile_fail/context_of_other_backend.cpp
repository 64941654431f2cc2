// An explicit execution context of another backend than the arrays' must not compile: its
// settings would silently not apply to the call.
#include <fusor/fusor.hpp>
namespace cf_context {
struct other_backend {};  // a tag whose context is the primary template's
}  // namespace cf_context
int main() {
  float host[8] = {};
  fusor::array_view<float, fusor::cpu> x(host, {8});
#if defined(FUSOR_CF_CONTROL)
  const fusor::context<fusor::cpu> c;
#else
  const fusor::context<cf_context::other_backend> c;
#endif
  auto y = fusor::fft::rfftn(c, x);
  (void)y;
}
