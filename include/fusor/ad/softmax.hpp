#pragma once
// softmax and log_softmax along an axis, stable (the row maximum is subtracted first): for arrays
// and expressions a new array, for expressions of variables one node that keeps the tree. The
// backward pass runs y·(g − Σ g·y) (softmax) or g − exp(y)·Σ g (log_softmax) through the tree's
// adjoint: one reduction of the output's adjoint, then one fused pass per input.
#include <cstdint>
#include <limits>
#include <string>

#include "reductions.hpp"

namespace fusor::ad {

namespace detail {

template <class E>
struct softmax_node {
  E tree;
  std::uint32_t out;
  int axis;
  bool log;
};

/// softmax (or log_softmax) of plain expression x along axis ax, into dst (x's shape, contiguous).
template <class R, class B, class N>
void softmax_into(const leaf<R, B>& dst, const N& x, int ax, bool log) {
  const extents shape = expr_shape(x);
  if (shape.numel() == 0) return;
  const axis_reduced<R, B> red{ax, shape};
  array<R, B> m = fusor::max(x, ax, true);
  m = where(isfinite(m), m, R(0));  // a row of -inf stays NaN-free until its own arithmetic
  const array_view<R, B> y(dst.data, dst.shape, dst.strides);
  if (log) {
    fusor::detail::assign_expr(dst, x - red.spread(m), false);
    array<R, B> s = fusor::sum(exp(y), ax, true);
    s = fusor::log(s);  // in place: no second buffer
    fusor::detail::assign_expr(dst, y - red.spread(s), false);
  } else {
    fusor::detail::assign_expr(dst, exp(x - red.spread(m)), false);
    array<R, B> s = fusor::sum(y, ax, true);
    fusor::detail::assign_expr(dst, y / red.spread(s), false);
  }
}

template <class E>
void softmax_backward(tape& t, const void* p) {
  const auto& n = *static_cast<const softmax_node<E>*>(p);
  const auto& s = t.slot_at(n.out);
  if (!s.adjoint_written) return;
  using R = value_t<E>;
  using B = backend_of_t<E>;
  const extents shape = s.shape;
  const leaf<R, B> y{static_cast<R*>(s.value), shape, contiguous_strides(shape)};
  const leaf<R, B> g{static_cast<R*>(s.adjoint), shape, contiguous_strides(shape)};
  const axis_reduced<R, B> red{n.axis, shape};
  if (n.log) {
    const array<R, B> total = fusor::sum(g, n.axis, true);
    propagate(t, n.tree, g - exp(y) * red.spread(total), shape);
  } else {
    const array<R, B> gy = fusor::sum(g * y, n.axis, true);
    propagate(t, n.tree, y * (g - red.spread(gy)), shape);
  }
}

template <class E>
auto softmax_of(const E& e, int axis, bool log) {
  const auto node = fusor::detail::to_node(e);
  using N = std::remove_cv_t<decltype(node)>;
  using R = value_t<N>;
  using B = backend_of_t<N>;
  static_assert(real_differentiable_v<R>,
                "fusor: softmax needs float or double values, or their dual numbers (cast first)");
  const extents shape = expr_shape(node);
  if (shape.size() == 0)
    throw index_error(std::string("fusor: ") + (log ? "log_softmax" : "softmax") +
                      " needs an expression of rank >= 1, got a 0-dimensional one");
  const int ax = normalize_axis(axis, shape.size());
  if constexpr (has_vars_v<N>) {
    tape& t = tape_of(node, log ? "log_softmax" : "softmax");
    const bool grad = recording() && any_requires_grad(t, node);
    const std::uint32_t id = t.new_slot<R, B>(shape, grad);
    softmax_into(value_leaf<R, B>(t, id), strip(node), ax, log);
    if (grad) record_tree(t, &softmax_backward<N>, softmax_node<N>{node, id, ax, log}, node);
    return var<R, B>(&t, id);
  } else {
    array<R, B> out(shape);
    softmax_into(out.as_leaf(), node, ax, log);
    return out;
  }
}
}  // namespace detail

/// exp(x) / Σ exp(x) along axis (the last by default), computed with the maximum subtracted.
template <expression E>
auto softmax(const E& e, int axis = -1) {
  return detail::softmax_of(e, axis, false);
}
/// x − logsumexp(x) along axis (the last by default): the log of softmax without its rounding.
template <expression E>
auto log_softmax(const E& e, int axis = -1) {
  return detail::softmax_of(e, axis, true);
}

}  // namespace fusor::ad
