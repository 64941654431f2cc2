#pragma once
// softmax and log_softmax along an axis, stable (the row maximum is subtracted first): for arrays
// and expressions a new array, for expressions of variables one node that keeps the tree. The
// backward pass runs y·(g − Σ g·y) (softmax) or g − exp(y)·Σ g (log_softmax) through the tree's
// adjoint: one reduction of the output's adjoint, then one fused pass per input. Neither pass
// allocates (the row maxima and sums live in a buffer the tape keeps), so ad::compile replays them.
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "reductions.hpp"
#include "../core/ext.hpp"

namespace fusor::ad {

namespace detail {

template <class E, class R>
struct softmax_node {
  E tree;
  std::uint32_t out;
  int axis;
  bool log;
  R* work;  // the reduced shape, kept by the tape: the row maxima and sums, then the backward's row sums
};

/// softmax (or log_softmax) of plain expression x along axis ax, into dst (x's shape, contiguous).
/// `work` holds x's shape without the axis: the row maxima, then the row sums. Nothing allocates,
/// so a replay (ad::compile) runs it as it is.
template <class R, class B, class N>
void softmax_into(const leaf<R, B>& dst, const N& x, int ax, bool log, R* work) {
  const extents shape = expr_shape(x);
  if (shape.numel() == 0) return;
  const axis_reduced<R, B> red{ax, shape};
  const extents rows = fusor::ext::drop_axis(shape, ax);
  const leaf<R, B> w{work, rows, contiguous_strides(rows)};
  executor<B>::template reduce_axis<fusor::ext::max_op>(w, x, ax);
  fusor::ext::assign_expr(w, where(isfinite(w), w, R(0)), false);  // a row of -inf stays NaN-free until its own arithmetic
  if (log) {
    fusor::ext::assign_expr(dst, x - red.spread(work), false);
    executor<B>::template reduce_axis<fusor::ext::sum_op>(w, exp(dst), ax);
    fusor::ext::assign_expr(w, fusor::log(w), false);
    fusor::ext::assign_expr(dst, dst - red.spread(work), false);
  } else {
    fusor::ext::assign_expr(dst, exp(x - red.spread(work)), false);
    executor<B>::template reduce_axis<fusor::ext::sum_op>(w, dst, ax);
    fusor::ext::assign_expr(dst, dst / red.spread(work), false);
  }
}

// the forward step (a capture's replay computes through it too)
template <class E, class R>
void softmax_forward(tape& t, const void* p) {
  const auto& n = *static_cast<const softmax_node<E, R>*>(p);
  softmax_into(value_leaf<R, backend_of_t<E>>(t, n.out), strip(n.tree), n.axis, n.log, n.work);
}

template <class E, class R>
void softmax_backward(tape& t, const void* p) {
  const auto& n = *static_cast<const softmax_node<E, R>*>(p);
  const auto& s = t.slot_at(n.out);
  if (!s.adjoint_written) return;
  using B = backend_of_t<E>;
  const extents shape = s.shape;
  if (shape.numel() == 0) return;  // (the inputs' gradients stay unwritten: zero)
  const leaf<R, B> y{static_cast<R*>(s.value), shape, contiguous_strides(shape)};
  const leaf<R, B> g{static_cast<R*>(s.adjoint), shape, contiguous_strides(shape)};
  const axis_reduced<R, B> red{n.axis, shape};
  const extents rows = fusor::ext::drop_axis(shape, n.axis);
  const leaf<R, B> w{n.work, rows, contiguous_strides(rows)};  // the forward is done with it
  if (n.log) {
    executor<B>::template reduce_axis<fusor::ext::sum_op>(w, g, n.axis);
    propagate(t, n.tree, g - exp(y) * red.spread(n.work), shape);
  } else {
    executor<B>::template reduce_axis<fusor::ext::sum_op>(w, g * y, n.axis);
    propagate(t, n.tree, y * (g - red.spread(n.work)), shape);
  }
}

template <class E>
auto softmax_of(const E& e, int axis, bool log) {
  const auto node = fusor::ext::to_node(e);
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
  const extents rows = fusor::ext::drop_axis(shape, ax);
  if constexpr (has_vars_v<N>) {
    tape& t = tape_of(node, log ? "log_softmax" : "softmax");
    const bool grad = recording() && any_requires_grad(t, node);
    const std::uint32_t id = t.new_slot<R, B>(shape, grad);
    const softmax_node<N, R> n{node, id, ax, log, t.keep(array<R, B>(rows))->data()};
    softmax_forward<N, R>(t, &n);
    capture_tree(t, &softmax_forward<N, R>, n, id, node, grad);
    if (grad) record_tree(t, &softmax_backward<N, R>, n, node);
    return var<R, B>(&t, id);
  } else {
    array<R, B> out(shape), work(rows);
    softmax_into(out.as_leaf(), node, ax, log, work.data());
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
