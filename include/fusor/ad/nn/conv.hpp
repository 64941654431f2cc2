#pragma once
// Convolutions, PyTorch's torch.nn.functional.conv1d/conv2d/conv3d (cross-correlations, NCHW
// layout, weight (out_channels, in_channels / groups, *kernel)), for arrays and for variables, on
// any backend: im2col and GEMMs (conv_gemm.hpp), the engine's BLAS or cuBLAS.
//
// On variables a convolution is one node, replayed by ad::compile, whose adjoints are the GEMMs of
// the same matrices (conv_gemm.hpp); its columns are kept for the backward pass (taps times the
// input's size: 9 times it for a 3 x 3 kernel). Where the backend has a convolution library for
// the element type (conv_library<B>: oneDNN for float on the cpu, when fusor is built with it),
// the node calls it instead and keeps nothing beyond its operands. A bias is added as with linear: lazily on
// variables (it fuses with the activation after it), in place on arrays.
#include <cstdint>
#include <string>
#include <type_traits>

#include "../../core/array.hpp"
#include "../ops.hpp"
#include "../views.hpp"
#include "activations.hpp"
#include "conv_gemm.hpp"
#include "conv_geometry.hpp"
#include "../../core/ext.hpp"

namespace fusor::ad::nn {

namespace detail {

/// The tape scratch buffers a convolution's forward step and backward pass use (0 to 2 belong
/// to reduce_to and matmul's adjoint; a conv's buffers are free again when its call returns).
inline constexpr std::size_t conv_scratch_out = 3, conv_scratch_grad = 4, conv_scratch_weight = 5,
                             conv_scratch_columns = 6, conv_scratch_input = 7;

template <class T, class B>
T* conv_buffer(ad::tape& t, std::size_t k, index_t elements) {
  return static_cast<T*>(t.scratch<B>(k, std::size_t(elements) * sizeof(T)));
}

/// x's elements for the library, which reads them contiguous: where they lie, or copied into the
/// tape's scratch buffer k (a strided input is copied at each step, so a replay reads its new values).
template <class T, class B>
const T* contiguous_input(ad::tape& t, const ad::detail::operand<T, B>& x, std::size_t k) {
  if (x.value.strides == contiguous_strides(x.shape())) return x.value.data;
  T* c = conv_buffer<T, B>(t, k, x.shape().numel());
  fusor::ext::assign_expr(leaf<T, B>{c, x.shape(), contiguous_strides(x.shape())}, x.value, false);
  return c;
}

template <class T, class B>
struct conv_step {
  ad::detail::operand<T, B> x, w;  // w contiguous
  conv_geometry geometry;
  T* columns;  // null: the backend's convolution library (conv_library<B>) computes it
  std::uint32_t out;
};
/// out = conv(x, w) (a capture's forward step, and the first computation): the library's forward
/// pass, or the columns into the tape's kept buffer and the products through a scratch buffer
/// into the output slot.
template <class T, class B>
void conv_forward(ad::tape& t, const void* p) {
  const auto& n = *static_cast<const conv_step<T, B>*>(p);
  const conv_geometry& g = n.geometry;
  const leaf<T, B> o = ad::detail::value_leaf<T, B>(t, n.out);
  if (o.shape.numel() == 0) return;
  if constexpr (conv_library_takes<T, B>())
    if (!n.columns)
      return conv_library<B>::forward(g.problem(), contiguous_input(t, n.x, conv_scratch_columns), n.w.value.data, o.data);
  im2col(g, n.x.view(), n.columns);
  T* y = conv_buffer<T, B>(t, conv_scratch_out, o.shape.numel());
  columns_product<T, B>(g, n.w.value.data, n.columns, y);
  channels_first(g, y, o);
}

template <class T, class B>
struct conv_back {
  ad::detail::operand<T, B> x, w;
  conv_geometry geometry;
  const T* columns;

  void operator()(ad::tape& t, const leaf<T, B>& grad) const {
    const conv_geometry& g = geometry;
    if constexpr (conv_library_takes<T, B>())
      if (!columns) return through_library(t, grad);
    T* gp = conv_buffer<T, B>(t, conv_scratch_grad, grad.shape.numel());
    batch_inside(g, grad, gp);
    if (w.grad) {
      T* dw = conv_buffer<T, B>(t, conv_scratch_weight, w.shape().numel());
      weight_product<T, B>(g, gp, columns, dw);
      ad::detail::accumulate_into(t, w, leaf<T, B>{dw, w.shape(), contiguous_strides(w.shape())}, w.shape());
    }
    if (x.grad) {
      const index_t cols = g.columns_shape().numel();
      T* dcols = conv_buffer<T, B>(t, conv_scratch_columns, cols);
      columns_adjoint<T, B>(g, w.value.data, gp, dcols);
      T* dx = conv_buffer<T, B>(t, conv_scratch_input, x.shape().numel());
      const leaf<T, B> dxl{dx, x.shape(), contiguous_strides(x.shape())};
      fusor::ext::assign_expr(dxl, scalar_expr<T>{T{}}, false);
      col2im_add<T, B>(g, dcols, dx, x.shape());
      ad::detail::accumulate_into(t, x, dxl, x.shape());
    }
  }

  /// Both adjoints by the backend's library (grad read as contiguous: the output's own slot).
  void through_library(ad::tape& t, const leaf<T, B>& grad) const {
    if (grad.shape.numel() == 0) return;
    const auto gc = fusor::ext::contiguous_of(array_view<T, B>(grad.data, grad.shape, grad.strides));
    T* dw = w.grad ? conv_buffer<T, B>(t, conv_scratch_weight, w.shape().numel()) : nullptr;
    T* dx = x.grad ? conv_buffer<T, B>(t, conv_scratch_input, x.shape().numel()) : nullptr;
    const T* xc = dw ? contiguous_input(t, x, conv_scratch_columns) : nullptr;
    conv_library<B>::backward(geometry.problem(), xc, w.value.data, gc.data(), dx, dw);
    if (dw) ad::detail::accumulate_into(t, w, leaf<T, B>{dw, w.shape(), contiguous_strides(w.shape())}, w.shape());
    if (dx) ad::detail::accumulate_into(t, x, leaf<T, B>{dx, x.shape(), contiguous_strides(x.shape())}, x.shape());
  }
};

/// Operand v (made from x on tape t) with contiguous elements, as the GEMMs and windows read it:
/// itself, or for a strided variable a copy (one node); a strided constant is copied once, which a
/// replay cannot redo (`what` names it in compile's error).
template <class T, class X, class O>
O contiguous_operand(ad::tape& t, const X&, const O& v, const char* what) {
  if (v.value.strides == contiguous_strides(v.shape())) return v;
  if constexpr (has_vars<X>()) {
    return ad::detail::make_operand<T>(t, ad::detail::materialise(v.as_var(t)));
  } else {
    t.not_replayable(what);
    return ad::detail::make_operand<T>(t, *t.keep(array<T, backend_of_t<node_t<X>>>(v.view().copy())));
  }
}

template <class T>
constexpr void require_conv_type() {
  // dual numbers: forward mode (jvp, jacfwd) and forward over reverse (hessian, hvp), the GEMMs
  // taken on their planes
  static_assert(std::is_same_v<ad::detail::lane_t<T>, float> || std::is_same_v<ad::detail::lane_t<T>, double> ||
                    fusor::ext::small_float_v<T>,
                "fusor: convolutions take float, double, float16 or bfloat16 values or their dual numbers (cast first)");
}

/// x's elements as a contiguous array of T: itself, or a plain operand beside dual numbers
/// promoted (its tangents zero).
template <class T, class X>
auto contiguous_as(const X& x) {
  if constexpr (std::is_same_v<value_of_t<X>, T>) return fusor::ext::contiguous_of(x);
  else return array<T, backend_of_t<node_t<X>>>(fusor::cast<T>(x));
}

/// The element type a convolution of x and weight computes in: their one type, or dual numbers
/// beside a plain operand of their lane type (forward mode in the input or in the weights: the
/// plain one is promoted).
template <class X, class W>
using conv_value_t = std::conditional_t<ad::is_dual_v<value_of_t<W>>, value_of_t<W>, value_of_t<X>>;
template <class X, class W>
constexpr void require_conv_pair() {
  using T = conv_value_t<X, W>;
  require_conv_type<T>();
  static_assert(std::is_same_v<value_of_t<X>, value_of_t<W>> ||
                    (ad::is_dual_v<T> && (std::is_same_v<value_of_t<X>, ad::detail::lane_t<T>> ||
                                          std::is_same_v<value_of_t<W>, ad::detail::lane_t<T>>)),
                "fusor: a convolution's input and weight must have one element type (cast first)");
}

/// fn(x, weight) with `dims` spatial axes (0: the weight's), no bias.
template <class X, class W>
auto conv_of(const char* fn, int dims, const X& x, const W& weight, const conv_options& o) {
  using T = conv_value_t<X, W>;
  using B = backend_of_t<node_t<X>>;
  require_conv_pair<X, W>();
  static_assert(std::is_same_v<B, backend_of_t<node_t<W>>>, "fusor: a convolution's input and weight must be on one backend");
  const conv_geometry g = plan_conv(fn, expr_shape(fusor::ext::to_node(x)), expr_shape(fusor::ext::to_node(weight)), o, dims);
  if constexpr (has_vars<X>() || has_vars<W>()) {
    ad::tape& t = *ad::detail::common_tape(fn, x, weight);
    const bool library = through_conv_library<T, B>(g);
    // the GEMMs read the weight as contiguous matrices; the input is read through its strides
    // (by im2col, or copied at each step for the library)
    const auto ox = ad::detail::make_operand<T>(t, x);
    const auto ow = contiguous_operand<T>(t, weight, ad::detail::make_operand<T>(t, weight),
                                          "a convolution with a strided constant weight (its copy is taken once: pass a contiguous array)");
    T* columns = library ? nullptr : t.keep(array<T, B>(g.columns_shape()))->data();
    auto [out, grad] = ad::detail::new_output<T, B>(t, g.output_shape(), ox.grad || ow.grad);
    const conv_step<T, B> step{ox, ow, g, columns, out.id()};
    conv_forward<T, B>(t, &step);
    t.record_forward(&conv_forward<T, B>, step, out.id());
    if (grad) ad::detail::record_op<T, B>(t, out.id(), conv_back<T, B>{ox, ow, g, columns});
    return out;
  } else {
    const auto xc = contiguous_as<T>(x);
    const auto wc = contiguous_as<T>(weight);
    return convolve_arrays<T, B>(g, xc.view(), wc.view());
  }
}

/// y (N, C, *spatial) + bias (C,) broadcast over the batch and spatial axes: lazy when both are
/// variables (it fuses with the activation after it), evaluated when one is a constant (read now),
/// in place on arrays.
template <class Y, class Bi>
auto add_channel_bias(Y&& y, const Bi& bias, index_t channels, int spatial) {
  extents per_channel{channels};  // (C, 1, ..., 1)
  for (int i = 0; i < spatial; ++i) per_channel.push_back(1);
  if constexpr (has_vars<Bi>()) {
    const auto b = ad::reshape(bias, per_channel);
    if constexpr (has_vars<Y>()) return std::forward<Y>(y) + b;  // leaves: the output's and the bias's tape buffers
    else return ad::eval(std::forward<Y>(y) + b);
  } else if constexpr (has_vars<Y>()) {
    const auto bc = fusor::ext::contiguous_of(bias);
    return ad::eval(std::forward<Y>(y) + fusor::reshape(bc.view(), per_channel));
  } else {
    const auto bc = fusor::ext::contiguous_of(bias);
    auto r = std::forward<Y>(y);
    r += fusor::reshape(bc.view(), per_channel);
    return r;
  }
}

/// fn(x, weight) + bias, the bias (out_channels,) broadcast over the batch and spatial axes.
template <class X, class W, class Bi>
auto conv_bias_of(const char* fn, int dims, const X& x, const W& weight, const Bi& bias, const conv_options& o) {
  const extents bs = expr_shape(fusor::ext::to_node(bias)), ws = expr_shape(fusor::ext::to_node(weight));
  if (bs.size() != 1 || ws.size() < 1 || bs[0] != ws[0])
    throw shape_error(std::string("fusor: ") + fn + ": expected a bias of shape (out_channels,) = (" +
                      (ws.size() ? std::to_string(ws[0]) : std::string("?")) + ",) for the weight " + to_string(ws) +
                      ", got shape " + to_string(bs));
  return add_channel_bias(conv_of(fn, dims, x, weight, o), bias, bs[0], ws.size() - 2);
}

}  // namespace detail

namespace functional {

/// PyTorch's convolution with 1 to 3 spatial axes (as many as the weight has): x (N, C, *in) or
/// unbatched (C, *in), weight (O, C / groups, *kernel), optional bias (O,). Errors name the
/// shapes and options before any work (nn::conv_options).
template <expression X, expression W>
auto conv(const X& x, const W& weight, const conv_options& o = {}) {
  return nn::detail::conv_of("conv", 0, x, weight, o);
}
template <expression X, expression W, expression Bi>
auto conv(const X& x, const W& weight, const Bi& bias, const conv_options& o = {}) {
  return nn::detail::conv_bias_of("conv", 0, x, weight, bias, o);
}

/// torch.nn.functional.conv1d: x (N, C, L), weight (O, C / groups, k).
template <expression X, expression W>
auto conv1d(const X& x, const W& weight, const conv_options& o = {}) {
  return nn::detail::conv_of("conv1d", 1, x, weight, o);
}
template <expression X, expression W, expression Bi>
auto conv1d(const X& x, const W& weight, const Bi& bias, const conv_options& o = {}) {
  return nn::detail::conv_bias_of("conv1d", 1, x, weight, bias, o);
}
/// torch.nn.functional.conv2d: x (N, C, H, W), weight (O, C / groups, kh, kw).
template <expression X, expression W>
auto conv2d(const X& x, const W& weight, const conv_options& o = {}) {
  return nn::detail::conv_of("conv2d", 2, x, weight, o);
}
template <expression X, expression W, expression Bi>
auto conv2d(const X& x, const W& weight, const Bi& bias, const conv_options& o = {}) {
  return nn::detail::conv_bias_of("conv2d", 2, x, weight, bias, o);
}
/// torch.nn.functional.conv3d: x (N, C, D, H, W), weight (O, C / groups, kd, kh, kw).
template <expression X, expression W>
auto conv3d(const X& x, const W& weight, const conv_options& o = {}) {
  return nn::detail::conv_of("conv3d", 3, x, weight, o);
}
template <expression X, expression W, expression Bi>
auto conv3d(const X& x, const W& weight, const Bi& bias, const conv_options& o = {}) {
  return nn::detail::conv_bias_of("conv3d", 3, x, weight, bias, o);
}

}  // namespace functional
}  // namespace fusor::ad::nn
