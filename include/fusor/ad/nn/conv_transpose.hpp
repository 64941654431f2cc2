#pragma once
// Transposed convolutions, PyTorch's torch.nn.functional.conv_transpose1d/2d/3d: x (N, C_in,
// *in) or unbatched, weight (C_in, C_out / groups, *kernel), optional bias (C_out,), and per
// spatial axis a stride, a padding, an output padding and a dilation:
//
//   out_i = (in_i - 1) stride_i - 2 padding_i + dilation_i (kernel_i - 1) + output_padding_i + 1
//
// It is the adjoint of the convolution (conv.hpp) from C_out to C_in channels with the same weight
// (its weight layout (O, C / groups, *kernel) is this one's): with that convolution's geometry,
// the forward pass is the convolution's input adjoint (dcols = W^T x, then the columns added back
// tap by tap), and the adjoints are the convolution's forward pass (dx = conv(g, w)) and its
// weight adjoint (dW = x cols(g)^T). One node on variables, replayed by ad::compile.
#include <cstdint>
#include <string>
#include <type_traits>

#include "../../core/array.hpp"
#include "../ops.hpp"
#include "../views.hpp"
#include "conv.hpp"
#include "conv_gemm.hpp"
#include "conv_geometry.hpp"
#include "../../core/ext.hpp"

namespace fusor::ad::nn {

/// A transposed convolution's steps (PyTorch's ConvTranspose arguments), one value for every
/// spatial axis or one per axis.
struct conv_transpose_options {
  extents stride{1};
  /// Removed from both ends of each spatial axis of the full output: dilation (kernel - 1) - padding
  /// zeros padded to the input of the equivalent convolution.
  extents padding{0};
  /// Added to one end of each spatial axis of the output (to pick among the sizes a strided
  /// convolution maps to the same input size): less than the stride or the dilation.
  extents output_padding{0};
  extents dilation{1};
  index_t groups = 1;
};

namespace detail {

/// The convolution whose adjoint fn(x, w, o) is: input (N, C_out, *out), weight w, output x.
inline conv_geometry plan_conv_transpose(const char* fn, const extents& x, const extents& w, const conv_transpose_options& o,
                                         int dims) {
  const int wd = w.size() - 2;
  if (wd < 1 || wd > max_conv_dims || (dims != 0 && wd != dims))
    throw shape_error(std::string("fusor: ") + fn + ": expected a weight of shape (in_channels, out_channels / groups, " +
                      (dims == 1 ? "k" : dims == 2 ? "kh, kw" : dims == 3 ? "kd, kh, kw" : "k1, ..., kd with 1 <= d <= 3") +
                      "), got shape " + to_string(w));
  if (x.size() != wd + 2 && x.size() != wd + 1)
    throw shape_error(std::string("fusor: ") + fn + ": expected an input of shape (batch, channels, " + std::to_string(wd) +
                      " spatial axes) or, unbatched, (channels, " + std::to_string(wd) + " spatial axes), got shape " + to_string(x));
  if (o.groups < 1) throw value_error(std::string("fusor: ") + fn + ": expected groups >= 1, got " + std::to_string(o.groups));
  conv_geometry g;
  g.dims = wd;
  g.batched = x.size() == wd + 2;
  const int c = g.batched ? 1 : 0;
  g.batch = g.batched ? x[0] : 1;
  g.groups = o.groups;
  g.out_channels = x[c];  // the convolution's output is this one's input
  if (w[0] != x[c])
    throw shape_error(std::string("fusor: ") + fn + ": the input has " + std::to_string(x[c]) + " channels (axis " + std::to_string(c) +
                      " of shape " + to_string(x) + "), but the weight " + to_string(w) + " expects in_channels = " + std::to_string(w[0]));
  if (x[c] % o.groups != 0)
    throw value_error(std::string("fusor: ") + fn + ": expected in_channels divisible by groups, got " + std::to_string(x[c]) +
                      " channels and " + std::to_string(o.groups) + " groups");
  g.in_channels = w[1] * o.groups;
  per_axis(fn, "stride", o.stride, wd, 1, g.stride);
  per_axis(fn, "dilation", o.dilation, wd, 1, g.dilation);
  per_axis(fn, "padding", o.padding, wd, 0, g.before);
  index_t extra[max_conv_dims] = {};
  per_axis(fn, "output_padding", o.output_padding, wd, 0, extra);
  for (int i = 0; i < wd; ++i) {
    g.kernel[i] = w[2 + i];
    if (g.kernel[i] < 1)
      throw shape_error(std::string("fusor: ") + fn + ": expected a kernel of at least one element per spatial axis, got weight shape " +
                        to_string(w));
    g.taps *= g.kernel[i];
    if (extra[i] >= g.stride[i] && extra[i] >= g.dilation[i])
      throw value_error(std::string("fusor: ") + fn + ": output_padding must be smaller than the stride or the dilation (as PyTorch), got " +
                        to_string(o.output_padding) + " with stride " + to_string(o.stride) + " and dilation " + to_string(o.dilation));
    g.out[i] = x[c + 1 + i];
    g.after[i] = g.before[i];  // output_padding's extra elements are read by no tap
    g.in[i] = (g.out[i] - 1) * g.stride[i] - 2 * g.before[i] + g.dilation[i] * (g.kernel[i] - 1) + extra[i] + 1;
    if (g.in[i] < 1)
      throw shape_error(std::string("fusor: ") + fn + ": the output would have " + std::to_string(g.in[i]) + " elements along spatial axis " +
                        std::to_string(i) + " (input " + to_string(x) + ", padding " + to_string(o.padding) + "): expected at least one");
  }
  return g;
}

/// The transposed convolution's output shape: the convolution's input, (N, C_out, *out).
inline extents transposed_shape(const conv_geometry& g) {
  extents s = g.batched ? extents{g.batch, g.in_channels} : extents{g.in_channels};
  for (int i = 0; i < g.dims; ++i) s.push_back(g.in[i]);
  return s;
}

inline constexpr std::size_t transpose_scratch_input = 3, transpose_scratch_columns = 4, transpose_scratch_out = 5,
                             transpose_scratch_weight = 6, transpose_scratch_dx = 7;

/// out (zeroed here) = the adjoint of the convolution g applied to x, with gp and dcols as scratch.
template <class T, class B>
void transposed_into(const conv_geometry& g, const leaf<T, B>& x, const T* w, T* gp, T* dcols, T* out, const extents& out_shape) {
  batch_inside(g, x, gp);
  columns_adjoint<T, B>(g, w, gp, dcols);
  fusor::ext::assign_expr(leaf<T, B>{out, out_shape, contiguous_strides(out_shape)}, scalar_expr<T>{T{}}, false);
  col2im_add<T, B>(g, dcols, out, out_shape);
}

template <class T, class B>
struct conv_transpose_step {
  ad::detail::operand<T, B> x, w;  // both contiguous
  conv_geometry geometry;
  std::uint32_t out;
  bool library;  // through the backend's convolution library (conv_library<B>)
};
template <class T, class B>
void conv_transpose_forward(ad::tape& t, const void* p) {
  const auto& n = *static_cast<const conv_transpose_step<T, B>*>(p);
  const conv_geometry& g = n.geometry;
  const leaf<T, B> o = ad::detail::value_leaf<T, B>(t, n.out);
  if (o.shape.numel() == 0) return;
  if constexpr (conv_library_takes<T, B>())  // the convolution's input adjoint
    if (n.library) return conv_library<B>::backward(g.problem(), nullptr, n.w.value.data, n.x.value.data, o.data, nullptr);
  T* gp = conv_buffer<T, B>(t, transpose_scratch_input, n.x.shape().numel());
  T* dcols = conv_buffer<T, B>(t, transpose_scratch_columns, g.columns_shape().numel());
  transposed_into<T, B>(g, n.x.value, n.w.value.data, gp, dcols, o.data, o.shape);
}

template <class T, class B>
struct conv_transpose_back {
  ad::detail::operand<T, B> x, w;
  conv_geometry geometry;
  bool library;
  void operator()(ad::tape& t, const leaf<T, B>& grad) const {
    const conv_geometry& g = geometry;
    if constexpr (conv_library_takes<T, B>())
      if (library) return through_library(t, grad);
    T* cols = conv_buffer<T, B>(t, transpose_scratch_columns, g.columns_shape().numel());
    im2col(g, array_view<T, B>(grad.data, grad.shape, grad.strides), cols);  // the output's adjoint as the convolution's input
    if (x.grad) {  // dx = conv(g, w)
      T* y = conv_buffer<T, B>(t, transpose_scratch_out, x.shape().numel());
      columns_product<T, B>(g, w.value.data, cols, y);
      T* dx = conv_buffer<T, B>(t, transpose_scratch_dx, x.shape().numel());
      const leaf<T, B> dxl{dx, x.shape(), contiguous_strides(x.shape())};
      channels_first(g, y, dxl);
      ad::detail::accumulate_into(t, x, dxl, x.shape());
    }
    if (w.grad) {  // dW = x cols(g)^T, x seen as the convolution's output adjoint
      T* gp = conv_buffer<T, B>(t, transpose_scratch_input, x.shape().numel());
      batch_inside(g, x.value, gp);
      T* dw = conv_buffer<T, B>(t, transpose_scratch_weight, w.shape().numel());
      weight_product<T, B>(g, gp, cols, dw);
      ad::detail::accumulate_into(t, w, leaf<T, B>{dw, w.shape(), contiguous_strides(w.shape())}, w.shape());
    }
  }

  /// dx = conv(g, w) and dW = the convolution's weight adjoint with input g and output adjoint x.
  void through_library(ad::tape& t, const leaf<T, B>& grad) const {
    if (grad.shape.numel() == 0) return;
    const auto gc = fusor::ext::contiguous_of(array_view<T, B>(grad.data, grad.shape, grad.strides));
    const conv_problem p = geometry.problem();
    if (x.grad) {
      T* dx = conv_buffer<T, B>(t, transpose_scratch_dx, x.shape().numel());
      conv_library<B>::forward(p, gc.data(), w.value.data, dx);
      ad::detail::accumulate_into(t, x, leaf<T, B>{dx, x.shape(), contiguous_strides(x.shape())}, x.shape());
    }
    if (w.grad) {
      T* dw = conv_buffer<T, B>(t, transpose_scratch_weight, w.shape().numel());
      conv_library<B>::backward(p, gc.data(), w.value.data, x.value.data, nullptr, dw);
      ad::detail::accumulate_into(t, w, leaf<T, B>{dw, w.shape(), contiguous_strides(w.shape())}, w.shape());
    }
  }
};

template <class X, class W>
auto conv_transpose_of(const char* fn, int dims, const X& x, const W& weight, const conv_transpose_options& o) {
  using T = conv_value_t<X, W>;
  using B = backend_of_t<node_t<X>>;
  require_conv_pair<X, W>();
  static_assert(std::is_same_v<B, backend_of_t<node_t<W>>>, "fusor: a convolution's input and weight must be on one backend");
  const conv_geometry g =
      plan_conv_transpose(fn, expr_shape(fusor::ext::to_node(x)), expr_shape(fusor::ext::to_node(weight)), o, dims);
  const extents out_shape = transposed_shape(g);
  if constexpr (has_vars<X>() || has_vars<W>()) {
    ad::tape& t = *ad::detail::common_tape(fn, x, weight);
    // both read as contiguous matrices: a strided one is copied first
    const char* what = "a transposed convolution of a strided constant (its copy is taken once: pass a contiguous array)";
    const auto ox = contiguous_operand<T>(t, x, ad::detail::make_operand<T>(t, x), what);
    const auto ow = contiguous_operand<T>(t, weight, ad::detail::make_operand<T>(t, weight), what);
    const bool library = through_conv_library<T, B>(g);
    auto [out, grad] = ad::detail::new_output<T, B>(t, out_shape, ox.grad || ow.grad);
    const conv_transpose_step<T, B> step{ox, ow, g, out.id(), library};
    conv_transpose_forward<T, B>(t, &step);
    t.record_forward(&conv_transpose_forward<T, B>, step, out.id());
    if (grad) ad::detail::record_op<T, B>(t, out.id(), conv_transpose_back<T, B>{ox, ow, g, library});
    return out;
  } else {
    const auto xc = contiguous_as<T>(x);
    const auto wc = contiguous_as<T>(weight);
    array<T, B> out(out_shape);
    if (out.size() == 0) return out;
    if constexpr (conv_library_takes<T, B>())
      if (through_conv_library<T, B>(g)) {
        conv_library<B>::backward(g.problem(), nullptr, wc.view().data(), xc.view().data(), out.data(), nullptr);
        return out;
      }
    array<T, B> gp(xc.view().shape()), dcols(g.columns_shape());
    transposed_into<T, B>(g, xc.view().as_leaf(), wc.view().data(), gp.data(), dcols.data(), out.data(), out_shape);
    return out;
  }
}

/// fn(x, weight) + bias (C_out,), broadcast over the batch and spatial axes.
template <class X, class W, class Bi>
auto conv_transpose_bias_of(const char* fn, int dims, const X& x, const W& weight, const Bi& bias, const conv_transpose_options& o) {
  const extents bs = expr_shape(fusor::ext::to_node(bias)), ws = expr_shape(fusor::ext::to_node(weight));
  const index_t cout = ws.size() >= 2 ? ws[1] * o.groups : -1;
  if (bs.size() != 1 || bs[0] != cout)
    throw shape_error(std::string("fusor: ") + fn + ": expected a bias of shape (out_channels,) = (" + std::to_string(cout) +
                      ",) for the weight " + to_string(ws) + " and " + std::to_string(o.groups) + " group(s), got shape " +
                      to_string(bs));
  return add_channel_bias(conv_transpose_of(fn, dims, x, weight, o), bias, cout, ws.size() - 2);
}

}  // namespace detail

namespace functional {

/// torch.nn.functional.conv_transpose1d/2d/3d: x (N, C_in, *in) or unbatched, weight (C_in,
/// C_out / groups, *kernel), optional bias (C_out,); errors name the shapes and options before any work.
template <expression X, expression W>
auto conv_transpose1d(const X& x, const W& weight, const conv_transpose_options& o = {}) {
  return nn::detail::conv_transpose_of("conv_transpose1d", 1, x, weight, o);
}
template <expression X, expression W, expression Bi>
auto conv_transpose1d(const X& x, const W& weight, const Bi& bias, const conv_transpose_options& o = {}) {
  return nn::detail::conv_transpose_bias_of("conv_transpose1d", 1, x, weight, bias, o);
}
template <expression X, expression W>
auto conv_transpose2d(const X& x, const W& weight, const conv_transpose_options& o = {}) {
  return nn::detail::conv_transpose_of("conv_transpose2d", 2, x, weight, o);
}
template <expression X, expression W, expression Bi>
auto conv_transpose2d(const X& x, const W& weight, const Bi& bias, const conv_transpose_options& o = {}) {
  return nn::detail::conv_transpose_bias_of("conv_transpose2d", 2, x, weight, bias, o);
}
template <expression X, expression W>
auto conv_transpose3d(const X& x, const W& weight, const conv_transpose_options& o = {}) {
  return nn::detail::conv_transpose_of("conv_transpose3d", 3, x, weight, o);
}
template <expression X, expression W, expression Bi>
auto conv_transpose3d(const X& x, const W& weight, const Bi& bias, const conv_transpose_options& o = {}) {
  return nn::detail::conv_transpose_bias_of("conv_transpose3d", 3, x, weight, bias, o);
}

}  // namespace functional
}  // namespace fusor::ad::nn
