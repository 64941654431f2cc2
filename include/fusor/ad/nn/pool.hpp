#pragma once
// Pooling, PyTorch's torch.nn.functional.max_pool1d/2d/3d and avg_pool1d/2d/3d (NCHW, an input
// (N, C, *spatial) or unbatched (C, *spatial)), for arrays and variables, on any backend.
//
// Max pooling reads each window in one generator pass (padding reads as -inf; NaN wins, as in
// PyTorch), which writes the flat position of each window's maximum; the values are gathered from
// there. On variables it is one node, replayed by ad::compile, whose adjoint scatter-adds the
// output's adjoint to those positions (PyTorch's: the first maximum of a window gets it all).
// Average pooling (zeros of the padding counted, PyTorch's count_include_pad) is a depthwise
// convolution with a constant kernel (conv.hpp), so it has the convolution's adjoint and replay.
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <limits>
#include <string>
#include <type_traits>

#include "../../core/array.hpp"
#include "../gather.hpp"
#include "../ops.hpp"
#include "conv.hpp"
#include "conv_geometry.hpp"
#include "../../core/ext.hpp"

namespace fusor::ad::nn {

/// How a pooling window steps (PyTorch's MaxPool/AvgPool arguments), one value for every spatial
/// axis or one per axis. stride empty: the kernel size (PyTorch's default).
struct pool_options {
  extents stride{};
  /// -inf (max) or zeros (average) added before and after each spatial axis: at most half the
  /// (dilated) window.
  extents padding{0};
  /// Max pooling only.
  extents dilation{1};
};

namespace detail {

/// The geometry of a pooling window over x: a conv_geometry with one filter per channel.
inline conv_geometry plan_pool(const char* fn, const extents& x, const extents& kernel, const pool_options& o, int dims,
                               bool dilation_allowed) {
  const int xd = x.size();
  if (xd != dims + 1 && xd != dims + 2)
    throw shape_error(std::string("fusor: ") + fn + ": expected an input of shape (batch, channels, " + std::to_string(dims) +
                      " spatial axes) or, unbatched, (channels, " + std::to_string(dims) + " spatial axes), got shape " +
                      to_string(x));
  conv_geometry g;
  g.dims = dims;
  g.batched = xd == dims + 2;
  const int c = g.batched ? 1 : 0;
  g.batch = g.batched ? x[0] : 1;
  g.in_channels = g.out_channels = g.groups = x[c];
  per_axis(fn, "kernel_size", kernel, dims, 1, g.kernel);
  per_axis(fn, "stride", o.stride.size() ? o.stride : kernel, dims, 1, g.stride);
  per_axis(fn, "dilation", o.dilation, dims, 1, g.dilation);
  bool dilated = false;
  for (int i = 0; i < dims; ++i) dilated = dilated || g.dilation[i] != 1;
  if (!dilation_allowed && dilated)
    throw value_error(std::string("fusor: ") + fn + ": average pooling takes no dilation (as PyTorch), got " + to_string(o.dilation));
  per_axis(fn, "padding", o.padding, dims, 0, g.before);
  for (int i = 0; i < dims; ++i) {
    g.in[i] = x[c + 1 + i];
    g.taps *= g.kernel[i];
    const index_t reach = g.dilation[i] * (g.kernel[i] - 1) + 1;
    if (2 * g.before[i] > reach)
      throw value_error(std::string("fusor: ") + fn + ": padding should be at most half the window (as PyTorch), got padding " +
                        to_string(o.padding) + " for a window of " + spatial_text(g.kernel, dims) +
                        (g.dilation[i] > 1 ? " with dilation " + to_string(o.dilation) : std::string()));
    const index_t padded = g.in[i] + 2 * g.before[i];
    if (padded < reach)
      throw shape_error(std::string("fusor: ") + fn + ": the padded input (" + std::to_string(padded) + " on spatial axis " +
                        std::to_string(i) + " of shape " + to_string(x) + ") is smaller than the window (" +
                        std::to_string(reach) + ")");
    g.out[i] = (padded - reach) / g.stride[i] + 1;
    // a dilated window can step over a short input: every window must read at least one value
    for (index_t o = 0; o < g.out[i]; ++o) {
      bool reads = false;
      for (index_t k = 0; k < g.kernel[i] && !reads; ++k) {
        const index_t at = o * g.stride[i] + k * g.dilation[i] - g.before[i];
        reads = at >= 0 && at < g.in[i];
      }
      if (!reads)
        throw value_error(std::string("fusor: ") + fn + ": window " + std::to_string(o) + " along spatial axis " + std::to_string(i) +
                          " reads only padding (input length " + std::to_string(g.in[i]) + ", kernel " + std::to_string(g.kernel[i]) +
                          ", dilation " + std::to_string(g.dilation[i]) + ", padding " + std::to_string(g.before[i]) + ")");
    }
  }
  return g;
}

/// For every output element (N, C, *out, in C order): the flat position in the input (contiguous,
/// (N, C, *in)) of its window's maximum, the first one; a NaN wins over any number, and a later
/// NaN over an earlier one (PyTorch's loop). A window of padding only cannot occur (plan_pool
/// refuses one).
template <class T>
struct pool_argmax {
  using value_type = std::int64_t;
  const T* x;
  conv_geometry g;
  // Divisions only to place the run's first output: later outputs and every window's taps are
  // stepped to like an odometer (last axis fastest), which keeps the taps in PyTorch's order. A
  // tap's flat position is stepped to by adding strides; a window inside the input on every axis
  // (all of them without padding) needs no bounds test. The geometry is copied to locals so that
  // the stores to `out` cannot be taken to change it.
  FUSOR_HD void fill(index_t first, std::int64_t* out, index_t count) const {
    if (count <= 0) return;
    const int dims = g.dims;
    const index_t taps = g.taps;
    index_t in[max_conv_dims], outs[max_conv_dims], stride[max_conv_dims], dil[max_conv_dims], before[max_conv_dims],
        kernel[max_conv_dims], step[max_conv_dims];
    index_t in_plane = 1, out_plane = 1;
    for (int i = dims - 1; i >= 0; --i) {
      in[i] = g.in[i];
      outs[i] = g.out[i];
      stride[i] = g.stride[i];
      dil[i] = g.dilation[i];
      before[i] = g.before[i];
      kernel[i] = g.kernel[i];
      step[i] = dil[i] * in_plane;  // one tap along axis i, in input elements
      in_plane *= in[i];
      out_plane *= outs[i];
    }
    index_t plane = first / out_plane;  // n C + c
    index_t o[max_conv_dims] = {0, 0, 0};
    for (index_t i = dims - 1, rest = first % out_plane; i >= 0; --i) {
      o[i] = rest % outs[i];
      rest /= outs[i];
    }
    using C = std::conditional_t<std::is_same_v<T, double>, double, float>;  // 16-bit values compared as float
    for (index_t j = 0; j < count; ++j) {
      const T* base = x + plane * in_plane;
      C best = -C(INFINITY);
      index_t at = -1;
      // the window's first tap (its flat position, whether inside or not) and its corner per axis
      index_t origin = 0, lo[max_conv_dims] = {0, 0, 0};
      bool interior = true;
      for (int i = 0; i < dims; ++i) {
        lo[i] = o[i] * stride[i] - before[i];
        origin = origin * in[i] + lo[i];
        interior = interior && lo[i] >= 0 && lo[i] + (kernel[i] - 1) * dil[i] < in[i];
      }
      index_t k[max_conv_dims] = {0, 0, 0}, pos = origin;
      for (index_t tap = 0; tap < taps; ++tap) {
        bool inside = interior;
        if (!interior) {
          inside = true;
          for (int i = 0; i < dims; ++i) {
            const index_t idx = lo[i] + k[i] * dil[i];
            inside = inside && idx >= 0 && idx < in[i];
          }
        }
        if (inside) {
          if (at < 0) at = pos;  // PyTorch starts at the window's first position inside the input
          const C v = C(base[pos]);
          if (v > best || v != v) {
            best = v;
            at = pos;
          }
        }
        for (int i = dims - 1; i >= 0; --i) {
          pos += step[i];
          if (++k[i] < kernel[i]) break;
          pos -= kernel[i] * step[i];
          k[i] = 0;
        }
      }
      out[j] = std::int64_t(plane * in_plane + at);
      int i = dims - 1;
      for (; i >= 0 && ++o[i] == outs[i]; --i) o[i] = 0;
      if (i < 0) ++plane;
    }
  }
};

/// out (count values) = the maxima of x's windows, `positions` (count) where each was read.
template <class T, class B>
void max_pool_into(const conv_geometry& g, const T* x, index_t x_size, std::int64_t* positions, T* out, index_t count) {
  if (count == 0) return;
  const extents flat{count};
  fusor::ext::assign_expr(leaf<std::int64_t, B>{positions, flat, extents{1}},
                          generator_expr<pool_argmax<T>, B>{pool_argmax<T>{x, g}, flat, extents{1}}, false);
  algorithms<B>::gather(x, index_t(1), x_size, index_t(1), positions, count, out);
}

template <class T, class B>
struct max_pool_step {
  ad::detail::operand<T, B> x;  // contiguous
  conv_geometry geometry;
  std::int64_t* positions;  // kept: the backward pass reads them
  std::uint32_t out;
};
template <class T, class B>
void max_pool_forward(ad::tape& t, const void* p) {
  const auto& n = *static_cast<const max_pool_step<T, B>*>(p);
  const leaf<T, B> o = ad::detail::value_leaf<T, B>(t, n.out);
  max_pool_into<T, B>(n.geometry, n.x.value.data, n.x.shape().numel(), n.positions, o.data, o.shape.numel());
}
template <class T, class B>
struct max_pool_back {
  ad::detail::operand<T, B> x;
  const std::int64_t* positions;
  void operator()(ad::tape& t, const leaf<T, B>& g) const {
    const index_t count = g.shape.numel(), total = x.shape().numel();
    ad::detail::scatter_into(t, x, true, [&](T* dst) { algorithms<B>::scatter(dst, index_t(1), total, index_t(1), positions, count, g.data, true); });
  }
};

template <class X>
auto max_pool_of(const char* fn, int dims, const X& x, const extents& kernel, const pool_options& o) {
  using T = value_of_t<X>;
  using B = backend_of_t<node_t<X>>;
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double> || fusor::ext::small_float_v<T>,
                "fusor: pooling takes float, double, float16 or bfloat16 values (cast first)");
  const conv_geometry g = plan_pool(fn, expr_shape(fusor::ext::to_node(x)), kernel, o, dims, true);
  if constexpr (has_vars<X>()) {
    ad::tape& t = *ad::detail::common_tape(fn, x);
    // the windows are read from contiguous elements (a strided view is copied: one node)
    const auto ox = contiguous_operand<T>(t, x, ad::detail::make_operand<T>(t, x), "max pooling");
    std::int64_t* positions = t.keep(array<std::int64_t, B>(extents{g.output_shape().numel()}))->data();
    auto [out, grad] = ad::detail::new_output<T, B>(t, g.output_shape(), ox.grad);
    const max_pool_step<T, B> step{ox, g, positions, out.id()};
    max_pool_forward<T, B>(t, &step);
    t.record_forward(&max_pool_forward<T, B>, step, out.id());
    if (grad) ad::detail::record_op<T, B>(t, out.id(), max_pool_back<T, B>{ox, positions});
    return out;
  } else {
    const auto xc = fusor::ext::contiguous_of(x);
    array<T, B> out(g.output_shape());
    array<std::int64_t, B> positions(extents{out.size()});
    max_pool_into<T, B>(g, xc.view().data(), xc.view().size(), positions.data(), out.data(), out.size());
    return out;
  }
}

/// Average pooling: the depthwise convolution with the constant kernel 1 / (kernel size).
template <class X>
auto avg_pool_of(const char* fn, int dims, const X& x, const extents& kernel, const pool_options& o) {
  using T = value_of_t<X>;
  using B = backend_of_t<node_t<X>>;
  require_conv_type<T>();
  const conv_geometry g = plan_pool(fn, expr_shape(fusor::ext::to_node(x)), kernel, o, dims, false);
  extents wshape{g.in_channels, 1};
  for (int i = 0; i < dims; ++i) wshape.push_back(g.kernel[i]);
  conv_options co;
  co.stride = extents(std::span<const index_t>(g.stride, std::size_t(dims)));
  co.padding = extents(std::span<const index_t>(g.before, std::size_t(dims)));
  co.groups = g.in_channels;
  const T value = T(1.0 / double(g.taps));
  if constexpr (has_vars<X>()) {
    ad::tape& t = *ad::detail::common_tape(fn, x);
    const array<T, B>& w = *t.keep(fusor::full<T, B>(wshape, value));  // read by the backward pass and replays
    return conv_of(fn, dims, x, w, co);
  } else {
    return conv_of(fn, dims, x, fusor::full<T, B>(wshape, value), co);
  }
}

}  // namespace detail

namespace functional {

/// torch.nn.functional.max_pool1d/2d/3d: the largest value of each window (kernel_size, stride
/// defaulting to it, padding read as -inf, dilation), x (N, C, *spatial) or (C, *spatial).
template <expression X>
auto max_pool1d(const X& x, const extents& kernel_size, const pool_options& o = {}) {
  return nn::detail::max_pool_of("max_pool1d", 1, x, kernel_size, o);
}
template <expression X>
auto max_pool2d(const X& x, const extents& kernel_size, const pool_options& o = {}) {
  return nn::detail::max_pool_of("max_pool2d", 2, x, kernel_size, o);
}
template <expression X>
auto max_pool3d(const X& x, const extents& kernel_size, const pool_options& o = {}) {
  return nn::detail::max_pool_of("max_pool3d", 3, x, kernel_size, o);
}
/// torch.nn.functional.avg_pool1d/2d/3d (count_include_pad=True, ceil_mode=False): the mean of
/// each window, padding zeros counted.
template <expression X>
auto avg_pool1d(const X& x, const extents& kernel_size, const pool_options& o = {}) {
  return nn::detail::avg_pool_of("avg_pool1d", 1, x, kernel_size, o);
}
template <expression X>
auto avg_pool2d(const X& x, const extents& kernel_size, const pool_options& o = {}) {
  return nn::detail::avg_pool_of("avg_pool2d", 2, x, kernel_size, o);
}
template <expression X>
auto avg_pool3d(const X& x, const extents& kernel_size, const pool_options& o = {}) {
  return nn::detail::avg_pool_of("avg_pool3d", 3, x, kernel_size, o);
}

}  // namespace functional

/// Pooling layers (PyTorch's nn.MaxPool2d, nn.AvgPool2d, ...): no parameters, a window and its
/// options; in a sequential model they keep no feature count, as the convolutions.
template <int D, bool Max>
struct pool_layer {
  extents kernel;
  pool_options options;
  /// nn::max_pool2d({2}): a braced kernel size (one value, or one per axis).
  pool_layer(std::initializer_list<index_t> kernel_size, pool_options o = {})
      : pool_layer(extents(std::span<const index_t>(kernel_size.begin(), kernel_size.size())), o) {}
  explicit pool_layer(const extents& kernel_size, pool_options o = {}) : kernel(kernel_size), options(o) {
    if (kernel.size() != 1 && kernel.size() != D)
      throw value_error(std::string("fusor: ") + name() + " expects a kernel size of one value or " + std::to_string(D) +
                        ", got " + to_string(kernel));
    for (index_t k : kernel)
      if (k < 1) throw value_error(std::string("fusor: ") + name() + " needs kernel sizes >= 1, got " + to_string(kernel));
  }
  template <expression X>
  auto operator()(const X& x) const {
    if constexpr (Max) return detail::max_pool_of(name(), D, x, kernel, options);
    else return detail::avg_pool_of(name(), D, x, kernel, options);
  }
  static constexpr const char* name() {
    return Max ? (D == 1 ? "max_pool1d" : D == 2 ? "max_pool2d" : "max_pool3d")
               : (D == 1 ? "avg_pool1d" : D == 2 ? "avg_pool2d" : "avg_pool3d");
  }
};
using max_pool1d = pool_layer<1, true>;
using max_pool2d = pool_layer<2, true>;
using max_pool3d = pool_layer<3, true>;
using avg_pool1d = pool_layer<1, false>;
using avg_pool2d = pool_layer<2, false>;
using avg_pool3d = pool_layer<3, false>;

}  // namespace fusor::ad::nn
