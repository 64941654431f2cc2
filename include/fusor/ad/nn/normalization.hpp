#pragma once
// Normalisations without running statistics (PyTorch's torch.nn.functional.group_norm,
// instance_norm, rms_norm, and the layers nn::group_norm and nn::rms_norm), for arrays and
// variables on any backend, built from layer_norm's statistics (functional.hpp):
//   group_norm:    each sample's channels in `groups` groups, normalised over a group's channels
//                  and positions together, then a weight and a bias per channel;
//   instance_norm: group_norm with one group per channel (each channel of each sample alone);
//   rms_norm:      x / sqrt(mean(x^2) + eps) over the last axis (Zhang and Sennrich, 2019), then a
//                  weight per feature.
// 16-bit values are normalised in float32 and rounded once, as layer_norm's are.
#include <limits>
#include <string>
#include <type_traits>

#include "../../core/array.hpp"
#include "../reductions.hpp"
#include "../views.hpp"
#include "functional.hpp"
#include "layers.hpp"
#include "../../core/ext.hpp"

namespace fusor::ad::nn {

namespace detail {

/// A normalised value in the input's shape: a variable view (an expression evaluated first, one
/// node), or a temporary array's own buffer.
template <class X>
auto reshaped(X&& x, const extents& shape) {
  using N = std::remove_cvref_t<X>;
  if constexpr (has_vars<N>()) {
    return ad::reshape(std::forward<X>(x), shape);
  } else {
    static_assert(fusor::ext::is_array_v<N> && !std::is_lvalue_reference_v<X>, "fusor: reshaped takes a temporary array");
    return std::move(x).reshape(shape);
  }
}

/// (C,) -> (C, 1, ..., 1) for a (N, C, *spatial) input of rank `rank`.
inline extents per_channel(index_t c, int rank) {
  extents s{c};
  for (int k = 2; k < rank; ++k) s.push_back(1);
  return s;
}

/// A per-channel parameter seen as (C, 1, ..., 1): a view of the variable or the array.
template <class W>
auto channel_view(const W& w, const extents& shape) {
  if constexpr (has_vars<W>()) {
    return ad::reshape(w, shape);
  } else {
    static_assert(fusor::ext::is_array_v<W> || fusor::ext::is_view_v<W>, "fusor: a normalisation's weight and bias are arrays or variables");
    return fusor::reshape(w, shape);
  }
}

/// y * weight + bias with weight and bias (C,) broadcast over (N, C, *spatial): lazy on variables,
/// evaluated where a constant takes part, in place on arrays.
template <class Y, class W, class Bi>
auto channel_affine(Y&& y, const W& weight, const Bi& bias, index_t channels, int rank) {
  const extents pc = per_channel(channels, rank);
  const auto w = channel_view(weight, pc);
  const auto b = channel_view(bias, pc);
  if constexpr (has_vars<Y>() && has_vars<W>() && has_vars<Bi>()) {
    return std::forward<Y>(y) * w + b;
  } else if constexpr (has_vars<Y>() || has_vars<W>() || has_vars<Bi>()) {
    return ad::eval(std::forward<Y>(y) * w + b);  // evaluated while its constants live
  } else {
    auto r = std::forward<Y>(y);
    r *= w;
    r += b;
    return r;
  }
}

template <class W, class Bi>
void check_channel_params(const char* fn, const W& weight, const Bi& bias, index_t channels) {
  const extents ws = expr_shape(fusor::ext::to_node(weight)), bs = expr_shape(fusor::ext::to_node(bias));
  if (!(ws == extents{channels}) || !(bs == extents{channels}))
    throw shape_error(std::string("fusor: ") + fn + "'s weight and bias must have shape (channels,) = (" + std::to_string(channels) +
                      ",), got " + to_string(ws) + " and " + to_string(bs));
}

}  // namespace detail

namespace functional {

/// torch.nn.functional.group_norm without the affine part: x (N, C, *spatial) with C divisible by
/// groups, each sample's group of C / groups channels normalised over its channels and positions
/// (the biased variance, as PyTorch).
template <expression X>
auto group_norm(const X& x, index_t groups, double eps = 1e-5) {
  using T = value_t<node_t<X>>;
  static_assert(std::is_floating_point_v<T> || fusor::ext::small_float_v<T>,
                "fusor: group_norm takes float, double, float16 or bfloat16 values");
  const extents s = expr_shape(fusor::ext::to_node(x));
  if (s.size() < 2)
    throw shape_error("fusor: group_norm expects an input of shape (batch, channels, *spatial), got " + to_string(s));
  if (groups < 1 || s[1] % groups != 0)
    throw value_error("fusor: group_norm needs groups >= 1 dividing the channels, got " + std::to_string(groups) +
                      " groups for " + std::to_string(s[1]) + " channels (axis 1 of " + to_string(s) + ")");
  index_t rest = s[1] / groups;
  for (int k = 2; k < s.size(); ++k) rest *= s[k];
  const extents grouped{s[0], groups, rest};
  if constexpr (fusor::ext::small_float_v<T>) {
    return detail::settle(fusor::cast<T>(group_norm(fusor::cast<float>(x), groups, eps)));
  } else if constexpr (nn::detail::has_vars<X>()) {
    return nn::detail::reshaped(layer_norm(ad::reshape(x, grouped), eps), s);
  } else {
    const auto xc = fusor::ext::contiguous_of(x);
    return nn::detail::reshaped(layer_norm(fusor::reshape(xc.view(), grouped), eps), s);
  }
}
/// group_norm with a weight and a bias per channel, each of shape (C,).
template <expression X, expression W, expression Bi>
auto group_norm(const X& x, index_t groups, const W& weight, const Bi& bias, double eps = 1e-5) {
  const extents s = expr_shape(fusor::ext::to_node(x));
  if (s.size() < 2)
    throw shape_error("fusor: group_norm expects an input of shape (batch, channels, *spatial), got " + to_string(s));
  nn::detail::check_channel_params("group_norm", weight, bias, s[1]);
  return nn::detail::channel_affine(group_norm(x, groups, eps), weight, bias, s[1], s.size());
}

/// torch.nn.functional.instance_norm (no running statistics): each channel of each sample
/// normalised over its positions; group_norm with one group per channel.
template <expression X>
auto instance_norm(const X& x, double eps = 1e-5) {
  const extents s = expr_shape(fusor::ext::to_node(x));
  if (s.size() < 3)
    throw shape_error("fusor: instance_norm expects an input of shape (batch, channels, *spatial) with a spatial axis, got " +
                      to_string(s));
  return group_norm(x, s[1], eps);
}
template <expression X, expression W, expression Bi>
auto instance_norm(const X& x, const W& weight, const Bi& bias, double eps = 1e-5) {
  const extents s = expr_shape(fusor::ext::to_node(x));
  if (s.size() < 3)
    throw shape_error("fusor: instance_norm expects an input of shape (batch, channels, *spatial) with a spatial axis, got " +
                      to_string(s));
  return group_norm(x, s[1], weight, bias, eps);
}

/// Root-mean-square normalisation over the last axis: x / sqrt(mean(x^2) + eps). eps < 0 (the
/// default): the machine epsilon of x's type, as PyTorch's rms_norm.
template <expression X>
auto rms_norm(const X& x, double eps = -1) {
  using T = value_t<node_t<X>>;
  static_assert(std::is_floating_point_v<T> || fusor::ext::small_float_v<T>,
                "fusor: rms_norm takes float, double, float16 or bfloat16 values");
  const extents s = expr_shape(fusor::ext::to_node(x));
  if (s.size() == 0) throw shape_error("fusor: rms_norm needs an input of rank >= 1, got a 0-dimensional one");
  if (eps < 0) eps = double(std::numeric_limits<T>::epsilon());
  if (!(eps >= 0)) throw value_error("fusor: rms_norm needs eps >= 0, got " + std::to_string(eps));
  if constexpr (fusor::ext::small_float_v<T>) {
    return detail::settle(fusor::cast<T>(rms_norm(fusor::cast<float>(x), eps)));
  } else if constexpr (nn::detail::has_vars<X>()) {
    auto inv = detail::settle(T(1) / sqrt(mean(square(x), -1, true) + T(eps)));
    return x * inv;
  } else {
    const auto xc = fusor::ext::contiguous_of(x);
    const auto inv = detail::settle(T(1) / sqrt(mean(square(xc.view()), -1, true) + T(eps)));
    return array<T, backend_of_t<node_t<X>>>(xc.view() * inv);
  }
}
/// rms_norm times a weight of the last axis's shape.
template <expression X, expression W>
auto rms_norm(const X& x, const W& weight, double eps = -1) {
  const extents s = expr_shape(fusor::ext::to_node(x)), ws = expr_shape(fusor::ext::to_node(weight));
  if (s.size() == 0 || !(ws == extents{s[s.size() - 1]}))
    throw shape_error("fusor: rms_norm's weight must have the shape of the last axis, got " + to_string(ws) + " for an input of shape " +
                      to_string(s));
  if constexpr (nn::detail::has_vars<X>() && nn::detail::has_vars<W>()) {
    return rms_norm(x, eps) * weight;
  } else if constexpr (nn::detail::has_vars<X>() || nn::detail::has_vars<W>()) {
    return ad::eval(rms_norm(x, eps) * weight);
  } else {
    auto y = rms_norm(x, eps);
    y *= weight;
    return y;
  }
}

}  // namespace functional

/// PyTorch's nn.GroupNorm(num_groups, num_channels, eps): a weight (ones) and a bias (zeros) per
/// channel. On (N, C, *spatial); in a sequential model it keeps no feature count.
struct group_norm {
  index_t groups, channels;
  double eps = 1e-5;
  group_norm(index_t num_groups, index_t num_channels, double epsilon = 1e-5) : groups(num_groups), channels(num_channels), eps(epsilon) {
    detail::check_positive("group_norm", "num_groups", groups);
    detail::check_positive("group_norm", "num_channels", channels);
    if (channels % groups != 0)
      throw value_error("fusor: group_norm needs num_channels divisible by num_groups, got " + std::to_string(channels) + " and " +
                        std::to_string(groups));
    if (!(eps > 0)) throw value_error("fusor: group_norm needs eps > 0, got " + std::to_string(eps));
  }
  std::vector<param_spec> parameters() const {
    return {{"weight", extents{channels}, init::ones(), channels, channels}, {"bias", extents{channels}, init::zeros(), channels, channels}};
  }
  index_t output_features(index_t) const { return any_features; }
  template <class X, class Get>
  auto operator()(const X& x, const Get& get) const {
    return functional::group_norm(x, groups, get(0), get(1), eps);
  }
};

/// PyTorch's nn.RMSNorm(features, eps): over the last axis, a weight (ones) per feature.
struct rms_norm {
  index_t features;
  double eps = -1;  // the machine epsilon of the input's type
  explicit rms_norm(index_t n, double epsilon = -1) : features(n), eps(epsilon) { detail::check_positive("rms_norm", "features", features); }
  std::vector<param_spec> parameters() const { return {{"weight", extents{features}, init::ones(), features, features}}; }
  index_t output_features(index_t f) const { return detail::expect_features("rms_norm", features, f); }
  template <class X, class Get>
  auto operator()(const X& x, const Get& get) const {
    return functional::rms_norm(x, get(0), eps);
  }
};

}  // namespace fusor::ad::nn
