#pragma once
// Evaluation entry points: assign (with broadcast and alias checks), noalias, eval. The work is
// handed to executor<B>, specialised by each backend.
#include <algorithm>
#include <type_traits>

#include "array.hpp"

namespace fusor {

namespace detail {

// A leaf that reads the destination's memory is harmless only when it reads each element at the
// same position it is written (same pointer, same strides once broadcast to the output).
template <class T, class B, class U, class C>
bool reads_unsafely(const leaf<T, B>& dst, const leaf<U, C>& src) {
  if (src.data == nullptr || dst.data == nullptr || !ranges_overlap(dst, src)) return false;
  if constexpr (!std::is_same_v<T, U>) return true;
  else {
    if (static_cast<const void*>(src.data) != static_cast<const void*>(dst.data)) return true;
    const int n = dst.shape.size(), off = n - src.shape.size();
    for (int k = 0; k < n; ++k) {
      if (dst.shape[k] == 1) continue;
      const index_t s = (k < off || src.shape[k - off] == 1) ? 0 : src.strides[k - off];
      if (s != dst.strides[k]) return true;
    }
    return false;
  }
}

template <class T, class B, class E>
void assign_expr(const leaf<T, B>& dst, const E& e, bool check_alias) {
  using V = value_t<E>;
  static_assert(std::is_same_v<backend_of_t<E>, B> || std::is_same_v<backend_of_t<E>, no_backend>,
                "fusor: cannot assign an expression on one backend to an array on another; "
                "transfer explicitly with to<cpu>(x) or to<cuda>(x)");
  static_assert(same_kind_castable_v<V, T>,
                "fusor: this assignment would lose information (complex to real, floating to integer, "
                "or number to bool); convert explicitly with real()/abs(), cast<U>(expr) or astype<U>()");
  const extents s = expr_shape(e);
  if (broadcast_shapes(dst.shape, s) != dst.shape)
    throw shape_error("fusor: cannot assign an expression of shape " + to_string(s) +
                      " to an array of shape " + to_string(dst.shape) +
                      " (expected a shape that broadcasts to the destination)");
  if (dst.shape.numel() == 0) return;
  note_write(dst);
  bool alias = false;
  if (check_alias) for_each_leaf(e, [&](const auto& l) { alias = alias || reads_unsafely(dst, l); });
  if (alias) {
    // evaluate into a temporary first: the statement reads memory it also writes elsewhere
    array<T, B> tmp(dst.shape);
    executor<B>::assign(tmp.as_leaf(), e);
    executor<B>::assign(dst, tmp.as_leaf());
  } else {
    executor<B>::assign(dst, e);
  }
}

}  // namespace detail

/// Writes `e` into `dst` (shape must broadcast to dst's shape; never reallocates).
template <class D, class E>
  requires(expression<E> || scalar<E>)
void assign(D&& dst, const E& e) {
  if constexpr (scalar<E>) {
    using T = value_t<D>;
    detail::assign_expr(dst.as_leaf(), scalar_expr<T>{convert_element<T>(e)}, false);
  } else {
    detail::assign_expr(dst.as_leaf(), detail::to_node(e), true);
  }
}

/// `noalias(d) = e` promises that e does not read d's memory except element by element at the
/// same position, and skips the overlap check.
template <class T, class B>
struct noalias_proxy {
  leaf<T, B> dst;
  template <expression E>
  noalias_proxy& operator=(const E& e) {
    detail::assign_expr(dst, detail::to_node(e), false);
    return *this;
  }
};
template <class A>
  requires requires(const A& a) { a.as_leaf(); }
auto noalias(A& a) {
  auto l = a.as_leaf();
  return noalias_proxy<typename decltype(l)::value_type, typename decltype(l)::backend_type>{l};
}
template <class T, class B>
auto noalias(array_view<T, B> v) {
  return noalias_proxy<T, B>{v.as_leaf()};
}

/// Evaluates an expression into a new array.
template <expression E>
auto eval(const E& e) {
  using B = backend_of_t<E>;
  static_assert(!std::is_same_v<B, no_backend>, "fusor: eval needs an expression with at least one array");
  return array<value_t<E>, B>(e);
}

}  // namespace fusor
