#pragma once
// A layer whose intermediates are recomputed in the backward pass instead of kept on the tape
// (ad::checkpoint around any layer of the layer protocol; PyTorch's checkpoint_sequential,
// Flax's nn.remat): nn::checkpointed(nn::transformer_encoder_layer(...)) in a sequential model.
// The same parameters, names and shapes as the layer (a state_dict saved from one loads into the
// other); the same outputs and gradients, bit for bit. The layer's generator is copied before each
// call, so dropout draws the same masks when the backward pass runs the layer again.
#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../../core/array.hpp"
#include "../checkpoint.hpp"
#include "layers.hpp"

namespace fusor::ad::nn {

namespace detail {
/// A layer called with its parameters as one std::vector: what ad::checkpoint passes (every
/// variable the layer reads is then an argument).
template <class L>
struct layer_call {
  L layer;
  template <class X, class P>
  auto operator()(const X& x, const std::vector<P>& params) {
    auto get = [&params](std::size_t k) -> const P& { return params[k]; };
    return layer(x, get);
  }
};
/// How a parameter is held for the call: a variable as it is, an array as a view.
template <class P>
struct held_parameter {
  using type = P;
};
template <class T, class B>
struct held_parameter<array<T, B>> {
  using type = array_view<T, B>;
};
}  // namespace detail

template <class L>
class checkpointed {
 public:
  explicit checkpointed(L layer)
      : count_(layer.parameters().size()), fn_(nn::detail::layer_call<L>{std::move(layer)}) {}

  std::vector<param_spec> parameters() const { return layer().parameters(); }
  index_t output_features(index_t in) const { return layer().output_features(in); }
  void train(bool on) {
    if constexpr (requires(L& l) { l.train(on); }) layer().train(on);
  }
  void placed(std::size_t index) {
    if constexpr (requires(L& l) { l.placed(index); }) layer().placed(index);
  }
  static std::string name() {
    if constexpr (requires { L::name(); }) return std::string("checkpointed ") + L::name();
    else return "checkpointed layer";
  }
  /// The layer inside.
  const L& layer() const { return fn_.function().layer; }
  L& layer() { return fn_.function().layer; }

  /// The layer's output. On a variable input one tape node; its parameters are read through get,
  /// as the layer reads them. On an array input (inference, or a model's first layer) the layer
  /// itself: there is no activation to save before it.
  template <class X, class Get>
  auto operator()(const X& x, const Get& get) {
    using P = std::remove_cvref_t<decltype(get(std::size_t(0)))>;
    if constexpr (!ad::detail::holds_vars_v<X>) {
      return layer()(x, get);
    } else {
      std::vector<typename detail::held_parameter<P>::type> params;
      params.reserve(count_);
      for (std::size_t k = 0; k < count_; ++k) {
        if constexpr (fusor::ext::is_array_v<P>) params.push_back(get(k).view());
        else params.push_back(get(k));
      }
      return fn_(x, params);
    }
  }

 private:
  std::size_t count_;
  ad::detail::checkpoint_fn<nn::detail::layer_call<L>> fn_;
};

}  // namespace fusor::ad::nn
