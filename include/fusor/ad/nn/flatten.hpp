#pragma once
// PyTorch's nn.Flatten(): (N, *rest) -> (N, product of rest), the layer between convolutions and
// linear layers. A layer without parameters, like the activations: nn::flatten(x), or nn::flatten
// in a sequential model.
#include <string>
#include <type_traits>
#include <utility>

#include "../../core/array.hpp"
#include "../views.hpp"
#include "activations.hpp"
#include "../../core/ext.hpp"

namespace fusor::ad::nn {

struct flatten_fn {
  /// Variables: a view of the same elements (an expression is evaluated first, one node). Arrays
  /// and views: a view, as fusor::reshape gives (a temporary array keeps its buffer; an
  /// expression is evaluated).
  template <expression X>
  auto operator()(X&& x) const {
    using N = std::remove_cvref_t<X>;
    const extents s = expr_shape(fusor::ext::to_node(x));
    if (s.size() == 0)
      throw shape_error("fusor: nn::flatten needs an input with a batch axis (rank >= 1), got a 0-dimensional one");
    index_t rest = 1;
    for (int k = 1; k < s.size(); ++k) rest *= s[k];
    const extents to{s[0], rest};
    if constexpr (detail::has_vars<N>()) {
      return ad::reshape(std::forward<X>(x), to);
    } else if constexpr (fusor::ext::is_array_v<N> && !std::is_lvalue_reference_v<X>) {
      return std::move(x).reshape(to);
    } else if constexpr (fusor::ext::is_array_v<N> || fusor::ext::is_view_v<N>) {
      return fusor::reshape(x, to);
    } else {
      return array<value_t<node_t<N>>, backend_of_t<node_t<N>>>(x).reshape(to);
    }
  }
};
inline constexpr flatten_fn flatten{};

}  // namespace fusor::ad::nn
