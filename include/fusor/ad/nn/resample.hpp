#pragma once
// Resampling, PyTorch's torch.nn.functional.adaptive_avg_pool1d/2d/3d and interpolate (nearest,
// linear, bilinear, trilinear), for arrays and variables on any backend, NCHW.
//
// Both are separable: each spatial axis in turn is mapped by a linear operator along it.
//   adaptive average pooling: output o of an axis of length I averages inputs
//     [floor(o I / O), ceil((o + 1) I / O)): a constant (I, O) matrix, applied as one GEMM with
//     the axis moved last (a view), so its adjoint is the GEMM's and it replays under ad::compile;
//     it costs O multiply-adds per input element and I x O values: cheap for the usual small
//     outputs (7 x 7, 1 x 1), dear for a long axis pooled to many outputs;
//   interpolation: output o reads input floor(src) and the one after it, src from PyTorch's
//     formulas (below), weighted 1 - λ and λ (nearest: floor(o · scale), one read): gathers
//     (ad::take, whose adjoint scatter-adds) and one fused weighted sum, O(1) per output.
// The index and weight arrays are made once per call and kept by the tape (a replay reads them).
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "../../core/array.hpp"
#include "../../core/shape_ops.hpp"
#include "../gather.hpp"
#include "../products.hpp"
#include "../views.hpp"
#include "conv.hpp"
#include "../../core/ext.hpp"

namespace fusor::ad::nn {

/// interpolate's modes: nearest (PyTorch's 'nearest'), linear ('linear', 'bilinear' or
/// 'trilinear' by the number of spatial axes).
enum class interpolation { nearest, linear };

/// F.interpolate's arguments: exactly one of size (one value or one per spatial axis) and
/// scale_factor (likewise); align_corners for linear only.
struct interpolate_options {
  extents size{};
  std::vector<double> scale_factor{};
  interpolation mode = interpolation::nearest;
  bool align_corners = false;
};

namespace detail {

/// The spatial axes of x for `fn` with `dims` of them: (N, C, *spatial), or (C, *spatial) where
/// unbatched inputs are allowed. Returns the first spatial axis.
inline int spatial_start(const char* fn, const extents& x, int dims, bool unbatched_allowed) {
  const int r = x.size();
  if (r == dims + 2 || (unbatched_allowed && r == dims + 1)) return r - dims;
  throw shape_error(std::string("fusor: ") + fn + ": expected an input of shape (batch, channels, " + std::to_string(dims) +
                    " spatial axes)" + (unbatched_allowed ? " or, unbatched, (channels, " + std::to_string(dims) + " spatial axes)" : std::string()) +
                    ", got shape " + to_string(x));
}

/// One value for every axis or one per axis, each >= 1.
inline extents sizes_per_axis(const char* fn, const char* what, const extents& given, int dims) {
  if (given.size() != 1 && given.size() != dims)
    throw value_error(std::string("fusor: ") + fn + " expects " + what + " of one value or " + std::to_string(dims) + ", got " +
                      to_string(given));
  extents out;
  for (int i = 0; i < dims; ++i) out.push_back(given[given.size() == 1 ? 0 : i]);
  for (index_t e : out)
    if (e < 1) throw value_error(std::string("fusor: ") + fn + " needs " + what + " >= 1, got " + to_string(given));
  return out;
}

/// The (in, out) averaging matrix of adaptive average pooling along one axis.
template <class T, class B>
array<T, B> adaptive_matrix(index_t in, index_t out) {
  std::vector<T> m(std::size_t(in * out), T(0));
  for (index_t o = 0; o < out; ++o) {
    const index_t start = (o * in) / out, end = ((o + 1) * in + out - 1) / out;
    for (index_t i = start; i < end; ++i) m[std::size_t(i * out + o)] = T(1.0 / double(end - start));
  }
  return array<T, B>(std::span<const T>(m), extents{in, out});
}

/// Adaptive average pooling of variables along spatial axes K.. (a GEMM per axis, the axis moved
/// last and back: views).
template <int K, int D, class X>
auto adaptive_axes(ad::tape& t, const X& x, int first, const extents& out) {
  if constexpr (K == D) {
    return x;
  } else {
    using T = value_t<node_t<X>>;
    using B = backend_of_t<node_t<X>>;
    const int a = first + K;
    const index_t in = expr_shape(fusor::ext::to_node(x))[a];
    const array<T, B>& m = *t.keep(adaptive_matrix<T, B>(in, out[K]));
    const auto y = ad::matmul(ad::moveaxis(x, a, -1), m);
    return adaptive_axes<K + 1, D>(t, ad::moveaxis(y, -1, a), first, out);
  }
}

template <int D, class X>
auto adaptive_avg_pool_of(const char* fn, const X& x, const extents& output_size) {
  using T = value_of_t<X>;
  using B = backend_of_t<node_t<X>>;
  require_conv_type<T>();
  const extents xs = expr_shape(fusor::ext::to_node(x));
  const int first = spatial_start(fn, xs, D, true);
  const extents out = sizes_per_axis(fn, "an output size", output_size, D);
  for (int k = 0; k < D; ++k)
    if (xs[first + k] < 1)
      throw value_error(std::string("fusor: ") + fn + " needs spatial axes of length >= 1, got shape " + to_string(xs));
  if constexpr (has_vars<X>()) {
    ad::tape& t = *ad::detail::common_tape(fn, x);
    return ad::detail::var_view_of(adaptive_axes<0, D>(t, ad::detail::var_view_of(x), first, out));
  } else {
    array<T, B> cur(x * T(1));  // x may be an array, a view or an expression
    for (int k = 0; k < D; ++k) {
      const int a = first + k;
      const array<T, B> y = fusor::matmul(fusor::moveaxis(cur, a, -1), adaptive_matrix<T, B>(cur.shape()[a], out[k]));
      cur = array<T, B>(fusor::moveaxis(y, -1, a));
    }
    return cur;
  }
}

/// Where output o of an axis of length `in` resized to `out` reads (PyTorch's
/// area_pixel_compute_source_index, compute_source_index_and_lambda and nearest_idx): index i0,
/// its neighbour i1 and weight λ of i1, computed in A (PyTorch's accumulation type: float for
/// float and the 16-bit types, double for double) so that positions on a boundary round as its do.
struct axis_taps {
  std::vector<std::int64_t> i0, i1;
  std::vector<double> lambda;
};
template <class A>
axis_taps interpolation_taps(index_t in, index_t out, double scale_factor, interpolation mode, bool align_corners) {
  axis_taps t;
  // compute_scales_value: 1 / factor where a factor is given, else in / out
  const A scale = scale_factor > 0 ? A(1.0 / scale_factor) : A(in) / A(out);
  for (index_t o = 0; o < out; ++o) {
    if (mode == interpolation::nearest) {
      std::int64_t i;
      if (out == in) i = o;
      else if (out == 2 * in) i = o >> 1;
      else i = std::min<std::int64_t>(std::int64_t(std::floor(A(o) * scale)), in - 1);
      t.i0.push_back(i);
      continue;
    }
    if (out == in) {  // the identity, whatever the factor
      t.i0.push_back(o);
      t.i1.push_back(o);
      t.lambda.push_back(0.0);
      continue;
    }
    A src;
    if (align_corners) src = out > 1 ? A(in - 1) / A(out - 1) * A(o) : A(0);
    else src = std::max(scale * (A(o) + A(0.5)) - A(0.5), A(0));
    const std::int64_t i0 = std::min<std::int64_t>(std::int64_t(src), in - 1);
    t.i0.push_back(i0);
    t.i1.push_back(std::min<std::int64_t>(i0 + 1, in - 1));
    t.lambda.push_back(double(std::min(std::max(src - A(i0), A(0)), A(1))));
  }
  return t;
}

/// The (out,) weights of one tap along axis a of a rank-r array: shape (out, 1, ..., 1).
template <class T, class B>
array<T, B> tap_weights(const std::vector<double>& w, bool complement, int a, int r) {
  std::vector<T> v;
  for (double l : w) v.push_back(T(complement ? 1.0 - l : l));
  extents s{index_t(w.size())};
  for (int d = a + 1; d < r; ++d) s.push_back(1);
  return array<T, B>(std::span<const T>(v), s);
}

template <class X>
auto interpolate_of(const X& x, const interpolate_options& o) {
  using T = value_of_t<X>;
  using B = backend_of_t<node_t<X>>;
  require_conv_type<T>();
  const char* fn = "interpolate";
  const extents xs = expr_shape(fusor::ext::to_node(x));
  if (xs.size() < 3 || xs.size() > 5)
    throw shape_error("fusor: interpolate expects an input (batch, channels, 1 to 3 spatial axes), got shape " + to_string(xs));
  const int dims = xs.size() - 2, r = xs.size();
  if ((o.size.size() > 0) == (o.scale_factor.size() > 0))
    throw value_error("fusor: interpolate needs exactly one of size and scale_factor, got " +
                      std::string(o.size.size() > 0 ? "both" : "neither"));
  if (o.align_corners && o.mode == interpolation::nearest)
    throw value_error("fusor: interpolate's align_corners applies to linear interpolation only, got it with nearest");
  extents out;
  std::vector<double> factor(std::size_t(dims), 0.0);
  if (o.size.size() > 0) {
    out = sizes_per_axis(fn, "a size", o.size, dims);
  } else {
    if (o.scale_factor.size() != 1 && o.scale_factor.size() != std::size_t(dims))
      throw value_error("fusor: interpolate expects a scale_factor of one value or " + std::to_string(dims) + ", got " +
                        std::to_string(o.scale_factor.size()));
    for (int k = 0; k < dims; ++k) {
      factor[std::size_t(k)] = o.scale_factor[o.scale_factor.size() == 1 ? 0 : std::size_t(k)];
      if (!(factor[std::size_t(k)] > 0) || !std::isfinite(factor[std::size_t(k)]))
        throw value_error("fusor: interpolate needs scale factors > 0, got " + std::to_string(factor[std::size_t(k)]));
      const double length = std::floor(double(xs[2 + k]) * factor[std::size_t(k)]);
      if (!(length < 1e15))
        throw value_error("fusor: interpolate's scale factor " + std::to_string(factor[std::size_t(k)]) + " makes axis " +
                          std::to_string(2 + k) + " of length " + std::to_string(xs[2 + k]) + " too long to store");
      const index_t n = index_t(length);
      if (n < 1)
        throw value_error("fusor: interpolate's scale factor " + std::to_string(factor[std::size_t(k)]) + " leaves axis " +
                          std::to_string(2 + k) + " of length " + std::to_string(xs[2 + k]) + " with no element");
      out.push_back(n);
    }
  }
  for (int k = 0; k < dims; ++k)
    if (xs[2 + k] < 1) throw value_error("fusor: interpolate needs spatial axes of length >= 1, got shape " + to_string(xs));
  // PyTorch ignores a given scale factor where align_corners decides the positions
  const auto taps_of = [&](int k, index_t in) {
    using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
    return interpolation_taps<A>(in, out[k], o.align_corners ? 0.0 : factor[std::size_t(k)], o.mode, o.align_corners);
  };
  const auto index_array = [](const std::vector<std::int64_t>& v) {
    return array<std::int64_t, B>(std::span<const std::int64_t>(v), extents{index_t(v.size())});
  };
  if constexpr (has_vars<X>()) {
    ad::tape& t = *ad::detail::common_tape(fn, x);
    var<T, B> cur = [&] {
      if constexpr (is_var_v<X>) return x;
      else return ad::detail::materialise(fusor::ext::to_node(x));
    }();
    for (int k = 0; k < dims; ++k) {
      const int a = 2 + k;
      const axis_taps tp = taps_of(k, cur.shape()[a]);
      const auto& i0 = *t.keep(index_array(tp.i0));
      if (o.mode == interpolation::nearest) {
        cur = ad::take(cur, i0, a);
      } else {
        const auto& i1 = *t.keep(index_array(tp.i1));
        const auto& w0 = *t.keep(tap_weights<T, B>(tp.lambda, true, a, r));
        const auto& w1 = *t.keep(tap_weights<T, B>(tp.lambda, false, a, r));
        cur = ad::eval(ad::take(cur, i0, a) * w0 + ad::take(cur, i1, a) * w1);
      }
    }
    return cur;
  } else {
    array<T, B> cur(x * T(1));
    for (int k = 0; k < dims; ++k) {
      const int a = 2 + k;
      const axis_taps tp = taps_of(k, cur.shape()[a]);
      if (o.mode == interpolation::nearest) {
        cur = fusor::take(cur, index_array(tp.i0), a);
      } else {
        const array<T, B> lo = fusor::take(cur, index_array(tp.i0), a), hi = fusor::take(cur, index_array(tp.i1), a);
        cur = array<T, B>(lo * tap_weights<T, B>(tp.lambda, true, a, r) + hi * tap_weights<T, B>(tp.lambda, false, a, r));
      }
    }
    return cur;
  }
}

}  // namespace detail

namespace functional {

/// torch.nn.functional.adaptive_avg_pool1d/2d/3d: each output averages the window
/// [floor(o I / O), ceil((o + 1) I / O)) of its axis, for output_size (one value or one per
/// spatial axis; 1 is global average pooling); x (N, C, *spatial) or (C, *spatial).
template <expression X>
auto adaptive_avg_pool1d(const X& x, const extents& output_size) {
  return nn::detail::adaptive_avg_pool_of<1>("adaptive_avg_pool1d", x, output_size);
}
template <expression X>
auto adaptive_avg_pool2d(const X& x, const extents& output_size) {
  return nn::detail::adaptive_avg_pool_of<2>("adaptive_avg_pool2d", x, output_size);
}
template <expression X>
auto adaptive_avg_pool3d(const X& x, const extents& output_size) {
  return nn::detail::adaptive_avg_pool_of<3>("adaptive_avg_pool3d", x, output_size);
}
/// torch.nn.functional.interpolate of (N, C, *spatial) with 1 to 3 spatial axes: nearest
/// (floor(o · in / out), or floor(o / scale_factor) when a factor is given) or linear in each
/// axis (bilinear, trilinear; align_corners as PyTorch's).
template <expression X>
auto interpolate(const X& x, const interpolate_options& options) {
  return nn::detail::interpolate_of(x, options);
}

}  // namespace functional

/// nn.AdaptiveAvgPool1d/2d/3d: no parameters, an output size; keeps no feature count.
template <int D>
struct adaptive_avg_pool {
  extents output_size;
  adaptive_avg_pool(std::initializer_list<index_t> size) : adaptive_avg_pool(extents(std::span<const index_t>(size.begin(), size.size()))) {}
  explicit adaptive_avg_pool(const extents& size) : output_size(detail::sizes_per_axis(name(), "an output size", size, D)) {}
  template <expression X>
  auto operator()(const X& x) const {
    return detail::adaptive_avg_pool_of<D>(name(), x, output_size);
  }
  static constexpr const char* name() {
    return D == 1 ? "adaptive_avg_pool1d" : D == 2 ? "adaptive_avg_pool2d" : "adaptive_avg_pool3d";
  }
};
using adaptive_avg_pool1d = adaptive_avg_pool<1>;
using adaptive_avg_pool2d = adaptive_avg_pool<2>;
using adaptive_avg_pool3d = adaptive_avg_pool<3>;

/// nn.Upsample: interpolate with fixed options (a size or a scale factor, the mode).
struct upsample {
  interpolate_options options;
  explicit upsample(interpolate_options o) : options(std::move(o)) {
    if ((options.size.size() > 0) == (options.scale_factor.size() > 0))
      throw value_error("fusor: upsample needs exactly one of size and scale_factor");
  }
  template <expression X>
  auto operator()(const X& x) const {
    return detail::interpolate_of(x, options);
  }
  static constexpr const char* name() { return "upsample"; }
};

}  // namespace fusor::ad::nn
