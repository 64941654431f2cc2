#pragma once
// Automatic mixed precision as a policy (torch.autocast, Mithril's use_amp, jmp's compute dtype):
// ad::autocast<float16> or ad::autocast<bfloat16>, passed to a model call or a functional layer.
// Under it the matrix products run in the 16-bit type (operands rounded to it, products
// accumulated in float32 by the half GEMM, the result rounded once), the activations between them
// stay 16-bit (half the bytes), and what PyTorch's autocast keeps in float32 runs in float32:
// normalisation, embeddings, the model's output (so losses and softmax see float32). Parameters
// stay float32 master copies: each is cast to the 16-bit type inside the step, and its gradient
// comes back through the cast into float32 (the cast's adjoint is a cast).
//
// A policy is a type, not a runtime scope, because a variable's element type is part of its type:
// the model's intermediate results are var<float16> under the policy and var<float> without it.
// Loss scaling (float16's gradients underflow below 6e-8) is optim::grad_scaler.
#include <type_traits>

#include "../core/ext.hpp"
#include "../core/half.hpp"
#include "var.hpp"

namespace fusor::ad {

/// The mixed-precision policy computing in H (float16 or bfloat16).
template <class H>
struct autocast_t {
  static_assert(fusor::ext::small_float_v<H>, "fusor: ad::autocast computes in float16 or bfloat16");
  using compute_type = H;
};
/// ad::autocast<float16>: the policy value passed to a model (model(params, x, ad::autocast<float16>))
/// or to a functional layer (nn::functional::linear(x, w, b, ad::autocast<bfloat16>)).
template <class H>
inline constexpr autocast_t<H> autocast{};

namespace detail {
/// x with element type U: x itself when it has it, else a lazy cast. A cast of variables is an
/// expression whose adjoint goes back through the cast into x's type; a cast of an array is a
/// constant expression, which an operation of variables evaluates into a tape buffer (a temporary
/// array here would be read by the backward pass after it is gone).
template <class U, class X>
decltype(auto) in_type(const X& x) {
  if constexpr (std::is_same_v<value_t<node_t<X>>, U>) return (x);
  else return fusor::cast<U>(x);
}
}  // namespace detail

}  // namespace fusor::ad
