// A view of a temporary array would dangle, so it must not compile.
#include <fusor/fusor.hpp>
int main() {
#if defined(FUSOR_CF_CONTROL)
  auto a = fusor::arange<float>(3);
  auto v = a.view();
#else
  auto v = fusor::arange<float>(3).view();
#endif
  return int(v.size());
}
