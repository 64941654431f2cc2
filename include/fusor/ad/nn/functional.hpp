#pragma once
// The functional forms of the layers that are more than one expression (PyTorch's
// torch.nn.functional): linear, dropout and layer_norm, for arrays and for variables. The layer
// types (nn::linear, nn::dropout, nn::layer_norm in layers.hpp) call these with their parameters.
//
// On variables a result may be a lazy expression of variables (its leaves are tape buffers, so it
// outlives the statement) and fuses with what follows; where a constant array takes part (a
// weight that is not a variable) the result is a variable, and on arrays an array, because an
// expression would point into the caller's arrays, which may be temporaries.
#include <cmath>
#include <string>
#include <type_traits>

#include "../../core/array.hpp"
#include "../../core/random.hpp"
#include "../ops.hpp"
#include "../autocast.hpp"
#include "../products.hpp"
#include "../reductions.hpp"
#include "activations.hpp"
#include "layer_norm_node.hpp"
#include "../../core/ext.hpp"

namespace fusor::ad::nn::functional {

namespace detail {
using nn::detail::has_vars;
/// x as a value: an expression of variables stays lazy, anything else becomes an array.
template <class X>
auto settle(X&& x) {
  using N = std::remove_cvref_t<X>;
  if constexpr (has_vars<N>()) return std::forward<X>(x);
  else if constexpr (fusor::ext::is_array_v<N>) return N(std::forward<X>(x));
  else return fusor::eval(x);
}
/// matmul of variables (ad's: one node, GEMM adjoints) or of arrays (the engine's).
template <class X, class W>
auto matmul_of(const X& x, const W& w) {
  if constexpr (has_vars<X>() || has_vars<W>()) return ad::matmul(x, w);
  else return fusor::matmul(x, w);
}
}  // namespace detail

/// x · weight (+ bias): weight of shape (in, out), bias (out,), x (..., in). One GEMM (BLAS or
/// cuBLAS); on variables the bias add stays lazy, to fuse with the activation after it.
template <expression X, expression W>
auto linear(const X& x, const W& weight) {
  return detail::matmul_of(x, weight);
}
template <expression X, expression W, expression Bi>
auto linear(const X& x, const W& weight, const Bi& bias) {
  if constexpr (detail::has_vars<W>() && detail::has_vars<Bi>()) {
    return detail::matmul_of(x, weight) + bias;  // leaves: the product's and the bias's tape buffers
  } else if constexpr (detail::has_vars<X>() || detail::has_vars<W>() || detail::has_vars<Bi>()) {
    return ad::eval(detail::matmul_of(x, weight) + bias);  // the constant bias is read now
  } else {
    auto y = detail::matmul_of(x, weight);
    y += bias;  // in place: no second buffer
    return y;
  }
}

/// linear under a mixed-precision policy (ad::autocast<H>): x, weight and bias cast to H (float32
/// parameters stay the masters: their gradients come back through the casts), the product in H
/// with float32 accumulation. The result has element type H.
template <expression X, expression W, class H>
auto linear(const X& x, const W& weight, autocast_t<H>) {
  return linear(ad::detail::in_type<H>(x), ad::detail::in_type<H>(weight));
}
template <expression X, expression W, expression Bi, class H>
auto linear(const X& x, const W& weight, const Bi& bias, autocast_t<H>) {
  return linear(ad::detail::in_type<H>(x), ad::detail::in_type<H>(weight), ad::detail::in_type<H>(bias));
}

/// Inverted dropout: each element is zeroed with probability p and the others scaled by 1/(1 − p),
/// so the expectation is x's. The mask is a Philox draw from rng (its next stream): the same for
/// a seed on every backend and thread count, and drawn again identically by the backward pass
/// instead of being stored. Not training (or p = 0): x unchanged, and rng is not advanced.
/// 0 <= p <= 1, a value_error otherwise; p = 1 gives zeros.
template <expression X>
auto dropout(const X& x, double p, fusor::random::generator& rng, bool training = true) {
  using T = value_t<node_t<X>>;
  using B = backend_of_t<node_t<X>>;
  static_assert(std::is_floating_point_v<T> || fusor::ext::small_float_v<T>,
                "fusor: dropout takes float, double, float16 or bfloat16 values");
  if (!(p >= 0.0 && p <= 1.0)) throw value_error("fusor: dropout needs 0 <= p <= 1, got p = " + std::to_string(p));
  const extents shape = expr_shape(fusor::ext::to_node(x));
  const bool active = training && p > 0.0;
  // one expression type for both cases: a kept fraction of 1 draws nothing (a scalar condition)
  const T scale = p < 1.0 ? T(1.0 / (1.0 - p)) : T(0);
  if constexpr (detail::has_vars<X>()) {
    if (!active) return ad::eval(x * T(1));
    // a replay would draw the recorded mask again: a capture of it cannot be replayed
    ad::detail::tape_of(fusor::ext::to_node(x), "dropout").not_replayable("dropout in training mode (a new mask each call)");
    return ad::eval(where(lazy::random::bernoulli<B>(rng, shape, 1.0 - p), x * scale, T(0)));
  } else {
    if (!active) return array<T, B>(x * T(1));  // a copy: x may be an array, a view or an expression
    return array<T, B>(where(lazy::random::bernoulli<B>(rng, shape, 1.0 - p), x * scale, T(0)));
  }
}

/// Layer normalisation over the last axis: (x − mean) / sqrt(var + eps), the biased variance
/// (PyTorch's), then · weight + bias when given (each of shape (features,)).
namespace detail {
inline void check_layer_norm(const extents& shape, double eps) {
  if (shape.size() == 0) throw shape_error("fusor: layer_norm needs an input of rank >= 1, got a 0-dimensional one");
  if (!(eps > 0.0)) throw value_error("fusor: layer_norm needs eps > 0, got " + std::to_string(eps));
}
/// layer_norm of float or double values (the public one widens 16-bit values to float32 first).
template <expression X>
auto layer_norm_of(const X& x, double eps) {
  using T = value_t<node_t<X>>;
  check_layer_norm(expr_shape(fusor::ext::to_node(x)), eps);
  if constexpr (detail::has_vars<X>() && std::is_floating_point_v<T>) {
    return nn::detail::layer_norm_node(x, eps);  // one node with the closed-form adjoint
  } else {
    auto mu = mean(x, -1, true);
    auto centred = detail::settle(x - mu);
    auto variance = mean(square(centred), -1, true);
    auto inv = detail::settle(T(1) / sqrt(variance + T(eps)));
    if constexpr (detail::has_vars<X>()) {
      return centred * inv;
    } else {
      centred *= inv;
      return centred;
    }
  }
}
}  // namespace detail

template <expression X>
auto layer_norm(const X& x, double eps = 1e-5) {
  using T = value_t<node_t<X>>;
  static_assert(std::is_floating_point_v<T> || fusor::ext::small_float_v<T>,
                "fusor: layer_norm takes float, double, float16 or bfloat16 values");
  if constexpr (fusor::ext::small_float_v<T>) {
    // in float32, rounded once (PyTorch's half layer_norm): a 16-bit variance loses the small rows
    return detail::settle(fusor::cast<T>(layer_norm(fusor::cast<float>(x), eps)));
  } else {
    return detail::layer_norm_of(x, eps);
  }
}
template <expression X, expression W, expression Bi>
auto layer_norm(const X& x, const W& weight, const Bi& bias, double eps = 1e-5) {
  const extents shape = expr_shape(fusor::ext::to_node(x));
  const extents ws = expr_shape(fusor::ext::to_node(weight)), bs = expr_shape(fusor::ext::to_node(bias));
  const extents features = shape.size() ? extents{shape[shape.size() - 1]} : extents{};
  if (!(ws == features) || !(bs == features))
    throw shape_error("fusor: layer_norm's weight and bias must have the shape of the last axis, " +
                      to_string(features) + ", got " + to_string(ws) + " and " + to_string(bs));
  using T = value_t<node_t<X>>;
  constexpr bool one_type = std::is_same_v<value_t<node_t<W>>, T> && std::is_same_v<value_t<node_t<Bi>>, T>;
  if constexpr ((detail::has_vars<X>() || detail::has_vars<W>() || detail::has_vars<Bi>()) &&
                std::is_floating_point_v<T> && one_type) {
    detail::check_layer_norm(shape, eps);
    return nn::detail::layer_norm_node(x, weight, bias, eps);  // one node with the closed-form adjoint
  } else if constexpr (detail::has_vars<X>() && detail::has_vars<W>() && detail::has_vars<Bi>()) {
    return layer_norm(x, eps) * weight + bias;
  } else if constexpr (detail::has_vars<X>() || detail::has_vars<W>() || detail::has_vars<Bi>()) {
    return ad::eval(layer_norm(x, eps) * weight + bias);  // evaluated while its constants live
  } else {
    auto y = layer_norm(x, eps);
    y *= weight;
    y += bias;
    return y;
  }
}

}  // namespace fusor::ad::nn::functional
