#pragma once
// A domain layer calling core's detail instead of fusor::ext: check_layers.py must reject it.
namespace fusor::vsa {
template <class X>
auto peek(const X& x) {
  return fusor::detail::to_node(x);
}
}  // namespace fusor::vsa
