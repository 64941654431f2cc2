#pragma once
// Activation functions as function objects (nn::relu, nn::gelu, ...): called on an array, a
// variable or an expression of either, each returns a lazy expression, so a bias, an activation
// and whatever follows fuse into one pass (and one tape node on variables). Being objects, they
// are also layers: nn::sequential(nn::linear(4, 8), nn::relu, nn::linear(8, 2)).
//
// Their gradients are the engine's: where() sends the adjoint to the branch taken, and the
// functions' derivative forms (tanh, sigmoid, erf) run as one forward-mode pass.
#include <cmath>
#include <string>
#include <type_traits>

#include "../../core/array.hpp"
#include "../../core/indexing.hpp"
#include "../../core/operators.hpp"
#include "../../core/reduce.hpp"
#include "../ops.hpp"
#include "../softmax.hpp"
#include "../../core/ext.hpp"

namespace fusor::ad::nn {

namespace detail {
template <class X>
using value_of_t = value_t<node_t<X>>;

/// Whether x holds variables (the recording path) rather than arrays.
template <class X>
constexpr bool has_vars() {
  return ad::detail::holds_vars_v<std::remove_cvref_t<X>>;
}

using fusor::ext::check_indices;  // indices in [0, n), for the lookups of the layers

template <class X>
constexpr void require_real() {
  static_assert(real_differentiable_v<value_of_t<X>>,
                "fusor: activation functions take float or double values (cast first)");
}
}  // namespace detail

/// max(x, 0). The gradient is 1 where x > 0 and 0 elsewhere, at 0 too (PyTorch's and JAX's
/// choice); NaN stays NaN (a diverging run shows).
struct relu_fn {
  template <expression X>
  auto operator()(const X& x) const {
    detail::require_real<X>();
    using V = detail::value_of_t<X>;
    return where(x <= V(0), V(0), x);
  }
};
inline constexpr relu_fn relu{};

/// x where x > 0, else slope · x (PyTorch's default slope 0.01).
struct leaky_relu_fn {
  template <expression X>
  auto operator()(const X& x, double slope = 0.01) const {
    detail::require_real<X>();
    using V = detail::value_of_t<X>;
    return where(x > V(0), x, x * V(slope));
  }
};
inline constexpr leaky_relu_fn leaky_relu{};

/// x · Φ(x), Φ the standard normal CDF: x/2 · (1 + erf(x/√2)) (PyTorch's default GELU).
struct gelu_fn {
  template <expression X>
  auto operator()(const X& x) const {
    detail::require_real<X>();
    using V = detail::value_of_t<X>;
    return x * (V(0.5) + V(0.5) * fusor::erf(x * V(0.70710678118654752440)));
  }
};
inline constexpr gelu_fn gelu{};

/// GELU's tanh approximation (PyTorch's approximate="tanh", GPT-2's):
/// x/2 · (1 + tanh(√(2/π) (x + 0.044715 x³))).
struct gelu_tanh_fn {
  template <expression X>
  auto operator()(const X& x) const {
    detail::require_real<X>();
    using V = detail::value_of_t<X>;
    return x * (V(0.5) + V(0.5) * fusor::tanh(V(0.79788456080286535588) * (x + V(0.044715) * x * x * x)));
  }
};
inline constexpr gelu_tanh_fn gelu_tanh{};

/// x · sigmoid(x) (SiLU, swish).
struct silu_fn {
  template <expression X>
  auto operator()(const X& x) const {
    detail::require_real<X>();
    return x * fusor::sigmoid(x);
  }
};
inline constexpr silu_fn silu{};

/// The logistic function 1 / (1 + e⁻ˣ) (fusor::sigmoid, as an object).
struct sigmoid_fn {
  template <expression X>
  auto operator()(const X& x) const {
    detail::require_real<X>();
    return fusor::sigmoid(x);
  }
};
inline constexpr sigmoid_fn sigmoid{};

/// tanh (fusor::tanh, as an object).
struct tanh_fn {
  template <expression X>
  auto operator()(const X& x) const {
    detail::require_real<X>();
    return fusor::tanh(x);
  }
};
inline constexpr tanh_fn tanh{};

/// softmax along the last axis (ad::softmax: one node on variables, an array otherwise).
struct softmax_fn {
  template <expression X>
  auto operator()(const X& x, int axis = -1) const {
    return ad::softmax(x, axis);
  }
};
inline constexpr softmax_fn softmax{};

/// log_softmax along the last axis (ad::log_softmax).
struct log_softmax_fn {
  template <expression X>
  auto operator()(const X& x, int axis = -1) const {
    return ad::log_softmax(x, axis);
  }
};
inline constexpr log_softmax_fn log_softmax{};

}  // namespace fusor::ad::nn
