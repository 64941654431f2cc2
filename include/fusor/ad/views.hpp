#pragma once
// Shape operations on variables: transpose, permute_dims, swapaxes, moveaxis, squeeze,
// expand_dims, reshape, ravel, broadcast_to, flip, diagonal and split. Each is the array
// function's zero-copy view, taken of the variable's elements: the result is a variable view
// (like a slice), so it records nothing, and its adjoint lands on the viewed elements (a
// broadcast view's on the one element it repeats, summed). An expression of variables is
// evaluated into a variable first (one node). reshape of a layout that cannot be seen in the new
// shape copies (one node), where the array function would throw: a variable is read-only, so the
// copy cannot be mistaken for a view that writes.
//
// These overloads are found by argument-dependent lookup, like ad's reductions: transpose(x) on a
// variable is this one, on an array the array function. They take forwarding references, as the
// array functions do, so that the constraint (not the value category) decides between them.
#include <cstdint>
#include <type_traits>
#include <vector>

#include "../core/join.hpp"
#include "../core/shape_ops.hpp"
#include "ops.hpp"
#include "../core/ext.hpp"

namespace fusor::ad {

namespace detail {
/// x as a variable view: a variable's or view's own elements, an expression's evaluated.
template <class X>
auto var_view_of(const X& x) {
  if constexpr (is_var_v<X>) return x.as_leaf();
  else if constexpr (requires { x.owner; x.value; }) return x;
  else return materialise(fusor::ext::to_node(x)).as_leaf();
}
/// The same variable, seen through f (an array_view -> array_view function).
template <class T, class B, class F>
var_leaf<T, B> review(var_leaf<T, B> l, F&& f) {
  const array_view<T, B> v(l.value.data, l.value.shape, l.value.strides);
  const auto w = f(v);
  l.value = leaf<T, B>{const_cast<T*>(w.data()), w.shape(), w.strides()};
  return l;
}
template <class X, class F>
auto view_op(const X& x, F&& f) {
  return review(var_view_of(x), std::forward<F>(f));
}
}  // namespace detail

template <class X>
  requires detail::holds_vars_v<X>
auto transpose(X&& x) {
  return detail::view_op(x, [](const auto& v) { return fusor::transpose(v); });
}
template <class X>
  requires detail::holds_vars_v<X>
auto transpose(X&& x, const extents& axes) {
  return detail::view_op(x, [&](const auto& v) { return fusor::permute_dims(v, axes); });
}
template <class X>
  requires detail::holds_vars_v<X>
auto permute_dims(X&& x, const extents& axes) {
  return detail::view_op(x, [&](const auto& v) { return fusor::permute_dims(v, axes); });
}
template <class X>
  requires detail::holds_vars_v<X>
auto swapaxes(X&& x, int axis1, int axis2) {
  return detail::view_op(x, [&](const auto& v) { return fusor::swapaxes(v, axis1, axis2); });
}
template <class X>
  requires detail::holds_vars_v<X>
auto moveaxis(X&& x, int source, int destination) {
  return detail::view_op(x, [&](const auto& v) { return fusor::moveaxis(v, source, destination); });
}
template <class X>
  requires detail::holds_vars_v<X>
auto moveaxis(X&& x, const extents& source, const extents& destination) {
  return detail::view_op(x, [&](const auto& v) { return fusor::moveaxis(v, source, destination); });
}
template <class X>
  requires detail::holds_vars_v<X>
auto squeeze(X&& x) {
  return detail::view_op(x, [](const auto& v) { return fusor::squeeze(v); });
}
template <class X>
  requires detail::holds_vars_v<X>
auto squeeze(X&& x, int axis) {
  return detail::view_op(x, [&](const auto& v) { return fusor::squeeze(v, axis); });
}
template <class X>
  requires detail::holds_vars_v<X>
auto expand_dims(X&& x, int axis) {
  return detail::view_op(x, [&](const auto& v) { return fusor::expand_dims(v, axis); });
}
template <class X>
  requires detail::holds_vars_v<X>
auto broadcast_to(X&& x, const extents& shape) {
  return detail::view_op(x, [&](const auto& v) { return fusor::broadcast_to(v, shape); });
}
template <class X>
  requires detail::holds_vars_v<X>
auto flip(X&& x) {
  return detail::view_op(x, [](const auto& v) { return fusor::flip(v); });
}
template <class X>
  requires detail::holds_vars_v<X>
auto flip(X&& x, int axis) {
  return detail::view_op(x, [&](const auto& v) { return fusor::flip(v, axis); });
}
template <class X>
  requires detail::holds_vars_v<X>
auto diagonal(X&& x, index_t offset = 0, int axis1 = 0, int axis2 = 1) {
  return detail::view_op(x, [&](const auto& v) { return fusor::diagonal(v, offset, axis1, axis2); });
}
/// A view in a new shape (one extent may be -1); a copy (one node) when the layout cannot be
/// seen in that shape, such as the flattening of a transposed matrix.
template <class X>
  requires detail::holds_vars_v<X>
auto reshape(X&& x, const extents& new_shape) {
  auto l = detail::var_view_of(x);
  const extents s = fusor::ext::resolve_reshape(l.value.shape, new_shape);
  extents strides;
  if (!fusor::ext::reshape_strides(l.value.shape, l.value.strides, s, strides)) {
    l = detail::materialise(l).as_leaf();
    strides = contiguous_strides(s);
  }
  l.value.shape = s;
  l.value.strides = strides;
  return l;
}
template <class X>
  requires detail::holds_vars_v<X>
auto ravel(X&& x) {
  return ad::reshape(x, extents{-1});
}

namespace detail {
template <class X, class Cut>
auto split_views(const X& x, const Cut& cut, int axis) {
  const auto l = var_view_of(x);
  using L = std::remove_cvref_t<decltype(l)>;
  const array_view<value_t<L>, backend_of_t<L>> v(l.value.data, l.value.shape, l.value.strides);
  std::vector<L> parts;
  for (const auto& p : fusor::split(v, cut, axis)) parts.push_back(review(l, [&](const auto&) { return p; }));
  return parts;
}
}  // namespace detail

/// Splits a variable along an axis into equal sections (np.split): views, so nothing is recorded.
/// (Two overloads each: one subsumes the array function's constraint, for lvalues, the other
/// takes what it refuses: a variable handle or an expression is not a temporary array.)
template <class X>
  requires(fusor::ext::split_source<X> && detail::holds_vars_v<X>)
auto split(X&& x, index_t sections, int axis = 0) {
  return detail::split_views(x, sections, axis);
}
template <class X>
  requires(!fusor::ext::split_source<X> && detail::holds_vars_v<X>)
auto split(X&& x, index_t sections, int axis = 0) {
  return detail::split_views(x, sections, axis);
}
/// Splits at the given indices along an axis (np.split with a list).
template <class X>
  requires(fusor::ext::split_source<X> && detail::holds_vars_v<X>)
auto split(X&& x, const std::vector<index_t>& indices, int axis = 0) {
  return detail::split_views(x, indices, axis);
}
template <class X>
  requires(!fusor::ext::split_source<X> && detail::holds_vars_v<X>)
auto split(X&& x, const std::vector<index_t>& indices, int axis = 0) {
  return detail::split_views(x, indices, axis);
}

}  // namespace fusor::ad
