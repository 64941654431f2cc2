#pragma once
// layer_norm of float or double variables as one tape node. The forward pass keeps each row's
// mean μ and r = 1/sqrt(var + eps) (rows: the last axis) and writes y = (x − μ)·r·w + b; the
// backward pass is the closed form, with x̂ = (x − μ)·r and ĝ = g·w:
//     dx = r·(ĝ − (Σ ĝ + x̂·Σ ĝ·x̂) / D),   dw = Σ_rows g·x̂,   db = Σ_rows g,
// two row sums and one pass for dx, where differentiating the composed statistics (mean, variance,
// the normalised affine expression) took five passes over dual numbers and a reduction each.
// Dual-number variables (forward over reverse, the gradients of gradients) keep the composed form
// in functional.hpp, which they differentiate through.
#include <cstdint>
#include <type_traits>

#include "../../core/array.hpp"
#include "../ops.hpp"
#include "../reductions.hpp"
#include "../../core/ext.hpp"

namespace fusor::ad::nn::detail {

template <class T, class B>
struct layer_norm_step {
  ad::detail::operand<T, B> x, w, b;  // w and b: absent (data == nullptr) without the affine
  T eps;
  T* mean;  // per row (x's shape without its last axis), kept by the tape
  T* rstd;
  std::uint32_t out;

  extents rows() const { return fusor::ext::drop_axis(x.shape(), x.shape().size() - 1); }
  /// A per-row quantity seen at every element of x (stride 0 along the last axis).
  leaf<T, B> spread(T* per_row) const { return ad::detail::axis_reduced<T, B>{x.shape().size() - 1, x.shape()}.spread(per_row); }
  auto normalised() const { return (x.value - spread(mean)) * spread(rstd); }
};

template <class T, class B>
void layer_norm_forward(tape& t, const void* p) {
  const auto& n = *static_cast<const layer_norm_step<T, B>*>(p);
  const extents shape = n.x.shape();
  const leaf<T, B> y = ad::detail::value_leaf<T, B>(t, n.out);
  if (shape.numel() == 0) return;
  const int ax = shape.size() - 1;
  const T inv_d = T(1) / T(shape[ax]);
  const extents rows = n.rows();
  const leaf<T, B> mean{n.mean, rows, contiguous_strides(rows)}, rstd{n.rstd, rows, contiguous_strides(rows)};
  executor<B>::template reduce_axis<fusor::ext::sum_op>(mean, n.x.value, ax);
  fusor::ext::assign_expr(mean, mean * inv_d, false);
  executor<B>::template reduce_axis<fusor::ext::sum_op>(rstd, square(n.x.value - n.spread(n.mean)), ax);
  fusor::ext::assign_expr(rstd, T(1) / sqrt(rstd * inv_d + n.eps), false);
  if (n.w.value.data == nullptr) fusor::ext::assign_expr(y, n.normalised(), false);
  else fusor::ext::assign_expr(y, n.normalised() * n.w.value + n.b.value, false);
}

template <class T, class B>
struct layer_norm_back {
  layer_norm_step<T, B> n;
  T* sums;  // two per row: Σ ĝ, then Σ ĝ·x̂

  void operator()(tape& t, const leaf<T, B>& g) const {
    const extents shape = n.x.shape();
    if (shape.numel() == 0) return;
    const int ax = shape.size() - 1;
    const T inv_d = T(1) / T(shape[ax]);
    const extents rows = n.rows();
    T* const second = sums + rows.numel();
    const leaf<T, B> s1{sums, rows, contiguous_strides(rows)}, s2{second, rows, contiguous_strides(rows)};
    const bool affine = n.w.value.data != nullptr;
    auto dx = [&](const auto& gw) {
      executor<B>::template reduce_axis<fusor::ext::sum_op>(s1, gw, ax);
      executor<B>::template reduce_axis<fusor::ext::sum_op>(s2, gw * n.normalised(), ax);
      ad::detail::accumulate_into(
          t, n.x, n.spread(n.rstd) * (gw - (n.spread(sums) + n.normalised() * n.spread(second)) * inv_d), shape);
    };
    if (n.x.grad) {
      if (affine) dx(g * n.w.value);
      else dx(g);
    }
    if (affine) {
      ad::detail::accumulate_into(t, n.w, g * n.normalised(), shape);  // summed over the rows
      ad::detail::accumulate_into(t, n.b, g, shape);
    }
  }
};

/// The node for x (of rank >= 1, checked by the caller) normalised over its last axis, then times
/// w plus b when affine (each of the last axis's shape, checked by the caller).
template <class T, class B>
var<T, B> layer_norm_op(tape& t, const ad::detail::operand<T, B>& x, const ad::detail::operand<T, B>& w,
                        const ad::detail::operand<T, B>& b, double eps) {
  const extents shape = x.shape();
  const index_t rows = fusor::ext::drop_axis(shape, shape.size() - 1).numel();
  auto [out, grad] = ad::detail::new_output<T, B>(t, shape, x.grad || w.grad || b.grad);
  // one kept buffer: mean and 1/std per row, then the backward pass's two row sums when recorded
  T* stats = t.keep(array<T, B>(extents{(grad ? 4 : 2) * rows}))->data();
  const layer_norm_step<T, B> step{x, w, b, T(eps), stats, stats + rows, out.id()};
  layer_norm_forward<T, B>(t, &step);
  t.record_forward(&layer_norm_forward<T, B>, step, out.id());
  if (grad) ad::detail::record_op<T, B>(t, out.id(), layer_norm_back<T, B>{step, stats + 2 * rows});
  return out;
}

/// layer_norm(x, eps), then · weight + bias when given, of variables (float or double) as one node.
template <class X>
auto layer_norm_node(const X& x, double eps) {
  using T = value_t<node_t<X>>;
  using B = backend_of_t<node_t<X>>;
  tape& t = *ad::detail::common_tape("layer_norm", x);
  return layer_norm_op<T, B>(t, ad::detail::make_operand<T>(t, x), {}, {}, eps);
}
template <class X, class W, class Bi>
auto layer_norm_node(const X& x, const W& weight, const Bi& bias, double eps) {
  using T = value_t<node_t<X>>;
  using B = backend_of_t<node_t<X>>;
  tape& t = *ad::detail::common_tape("layer_norm", x, weight, bias);
  const auto xo = ad::detail::make_operand<T>(t, x);
  const auto wo = ad::detail::make_operand<T>(t, weight);
  return layer_norm_op<T, B>(t, xo, wo, ad::detail::make_operand<T>(t, bias), eps);
}

}  // namespace fusor::ad::nn::detail
