#pragma once
// Gradient clipping by norm (torch.nn.utils.clip_grad_norm_): the gradients of a whole parameter
// tree taken as one vector; when its 2-norm exceeds max_norm, every gradient is scaled by
// max_norm / (norm + 1e-6), in place.
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "../../core/array.hpp"
#include "../../core/error.hpp"
#include "../../core/reduce.hpp"
#include "leaves.hpp"

namespace fusor::ad::optim {

/// Scales the gradients in `grads` (a parameter tree of one element type and backend) so that
/// their joint 2-norm is at most max_norm, and returns the norm they had (summed in double).
/// A non-finite norm is returned and the gradients are left as they are.
template <class T, class B, class G>
double clip_grad_norm(G& grads, double max_norm) {
  if (!(max_norm > 0.0) || !std::isfinite(max_norm))
    throw value_error("fusor::ad::optim::clip_grad_norm: expected a finite max_norm > 0, got " + std::to_string(max_norm));
  std::vector<detail::leaf_pair<T, B>> leaves;  // the tree paired with itself: its arrays, in order
  detail::leaf_pairs<T, B>(grads, grads, leaves);
  double squares = 0.0;
  for (const auto& l : leaves) squares += double(sum(square(cast<double>(*l.grad))));
  const double norm = std::sqrt(squares);
  if (std::isfinite(norm) && norm > max_norm) {
    const T scale = T(max_norm / (norm + 1e-6));
    for (const auto& l : leaves) *l.param = *l.param * scale;
  }
  return norm;
}

/// The same, the element type and backend read from the tree's arrays.
template <class G>
double clip_grad_norm(G& grads, double max_norm) {
  using A = detail::leaf_t<G>;
  return clip_grad_norm<typename A::value_type, typename A::backend_type>(grads, max_norm);
}

}  // namespace fusor::ad::optim
