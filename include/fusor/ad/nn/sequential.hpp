#pragma once
// A sequential model: layers applied in order, with named parameters kept outside the model in a
// map (Mithril's parameter dict, PyTorch's state_dict names: "0.weight", "0.bias", "2.weight").
// The model is a description; the same model runs on arrays (inference) and on the variables
// ad::value_and_grad passes (training), because every layer is generic. Building it checks that
// the layers' feature counts chain; calling it checks the input and every parameter's shape.
//
// No virtual dispatch: the layers are a std::tuple, and a call is a fold over it. On variables a
// bias and the activation after it stay one lazy expression, so they record one node.
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "../../core/array.hpp"
#include "../../core/random.hpp"
#include "../autocast.hpp"
#include "../params.hpp"
#include "../record.hpp"
#include "layers.hpp"
#include "../../core/ext.hpp"

namespace fusor::ad::nn {

/// A model's parameters by name.
template <class T, class B = default_backend>
using parameters = std::map<std::string, array<T, B>>;

namespace detail {
template <class L>
concept parametrised = requires(const L& l, index_t f) {
  { l.parameters() } -> std::same_as<std::vector<param_spec>>;
  { l.output_features(f) } -> std::same_as<index_t>;
};
template <class L>
concept trainable = requires(L& l) { l.train(true); };

template <class L>
std::string layer_name(const L&) {
  if constexpr (requires { L::in; L::out; }) return "linear";
  else if constexpr (std::is_same_v<L, embedding>) return "embedding";
  else if constexpr (std::is_same_v<L, nn::layer_norm>) return "layer_norm";
  else if constexpr (std::is_same_v<L, nn::dropout>) return "dropout";
  else if constexpr (requires { L::name(); }) return L::name();
  else return "function";
}
}  // namespace detail

template <class T, class B, class... L>
class sequential_model {
  static_assert(std::is_floating_point_v<T>, "fusor: a model's parameters are float or double");

 public:
  explicit sequential_model(L... layers) : layers_(std::move(layers)...) {
    build(std::index_sequence_for<L...>{});
  }

  /// Every parameter, in layer order, with its full name ("<layer index>.<name>").
  const std::vector<param_spec>& parameter_specs() const { return specs_; }
  /// The last axis the model takes (any_features when its first layer is an embedding or a function).
  index_t input_features() const { return in_features_; }
  /// The last axis it returns (any_features when no layer fixes it).
  index_t output_features() const { return out_features_; }
  /// Layer I as the model holds it (a batch_norm's running statistics, a layer's options).
  template <std::size_t I>
  const auto& layer() const {
    return std::get<I>(layers_);
  }
  static constexpr std::size_t layer_count() { return sizeof...(L); }

  /// The parameters, drawn from one Philox generator seeded here: the same numbers for a seed on
  /// every backend. Parameters are drawn in layer order, each from the generator's next stream.
  parameters<T, B> init(std::uint64_t seed) const {
    fusor::random::generator rng(seed);
    parameters<T, B> p;
    for (const param_spec& s : specs_) p.emplace(s.name, initialize<T, B>(s.init, s.shape, s.fan_in, s.fan_out, rng));
    return p;
  }

  /// Training mode (dropout active) or evaluation mode; a new model trains.
  void train(bool on = true) {
    training_ = on;
    std::apply([&](auto&... l) { (set_mode(l, on), ...); }, layers_);
  }
  void eval() { train(false); }
  bool training() const { return training_; }

  /// The model applied to x with `params` (a map from the names to arrays, or to the variables
  /// ad::value_and_grad makes of them). Arrays in, an array out; variables in, a variable out.
  /// A missing parameter is a value_error and a parameter of another shape a shape_error, each
  /// naming it; an input whose last axis differs from the first layer's is a shape_error.
  /// Dropout layers draw their next masks (the layers are state: the call is const for
  /// convenience, like a PyTorch module's forward).
  template <class P, expression X>
  auto operator()(const P& params, const X& x) const {
    check_input(x);
    return apply_from<0>(params, x, no_policy{});
  }
  /// The model under a mixed-precision policy (ad::autocast<float16> or <bfloat16>, torch.autocast):
  /// linear layers compute in the 16-bit type and pass it on through the activations; layers
  /// without a policy form (layer_norm, embedding) and the output are float32 (T). The parameters
  /// stay T: their gradients come back in T.
  template <class P, expression X, class H>
  auto operator()(const P& params, const X& x, autocast_t<H> policy) const {
    check_input(x);
    return apply_from<0>(params, x, policy);
  }

  /// Mithril's evaluate(params, inputs): the outputs, computed on arrays (no recording).
  template <expression X>
  auto evaluate(const parameters<T, B>& params, const X& x) const {
    return (*this)(params, x);
  }

  /// Mithril's evaluate(params, inputs, output_gradients): the outputs and the gradient of every
  /// parameter for the given gradient of the outputs (a vector-Jacobian product: one recording,
  /// one backward pass). The output gradient must have the outputs' shape (a shape_error).
  template <expression X>
  std::pair<array<T, B>, parameters<T, B>> evaluate(const parameters<T, B>& params, const X& x,
                                                     const array<T, B>& output_gradient) const {
    tape t;
    const use_tape on(t);
    const auto vars = param_tree(t, params);
    auto grads = ad::detail::borrowed_gradient_tree(t, vars);
    const auto y = (*this)(vars, x);
    if (!(y.shape() == output_gradient.shape()))
      throw shape_error("fusor: evaluate's output gradient must have the outputs' shape " + to_string(y.shape()) +
                        ", got " + to_string(output_gradient.shape()));
    backward(sum(y * output_gradient));
    ad::detail::finish_gradient_tree(vars);
    array<T, B> out(y.value());
    t.stop_watching();
    return {std::move(out), std::move(grads)};
  }

 private:
  template <std::size_t... I>
  void build(std::index_sequence<I...>) {
    index_t f = any_features;
    bool first = true;
    params_of_.resize(sizeof...(L));
    auto visit = [&](auto& layer, std::size_t index) {
      using Li = std::remove_cvref_t<decltype(layer)>;
      if constexpr (requires { layer.placed(index); }) layer.placed(index);
      if constexpr (detail::parametrised<Li>) {
        try {
          f = layer.output_features(f);
        } catch (const shape_error& e) {
          throw shape_error("fusor: sequential layer " + std::to_string(index) + " (" + detail::layer_name(layer) +
                            ") does not fit the layer before it: " + e.what());
        }
        if (first && !std::is_same_v<Li, embedding>) in_features_ = input_of(layer);
        for (param_spec s : layer.parameters()) {
          s.name = std::to_string(index) + "." + s.name;
          params_of_[index].push_back(specs_.size());
          specs_.push_back(std::move(s));
        }
      }
      first = false;
    };
    (visit(std::get<I>(layers_), I), ...);
    out_features_ = f;
  }

  template <class Li>
  static index_t input_of(const Li& layer) {
    if constexpr (requires { layer.in; }) return layer.in;
    else if constexpr (requires { layer.features; }) return layer.features;
    else return any_features;
  }

  template <class Li>
  static void set_mode(Li& layer, bool on) {
    if constexpr (detail::trainable<Li>) layer.train(on);
  }

  template <class X>
  void check_input(const X& x) const {
    const extents shape = expr_shape(fusor::ext::to_node(x));
    if (in_features_ != any_features && (shape.size() == 0 || shape[shape.size() - 1] != in_features_))
      throw shape_error("fusor: the model expects inputs with " + std::to_string(in_features_) +
                        " features (the last axis), got shape " + to_string(shape));
  }

  struct no_policy {};
  /// x in T when it is 16-bit (a lazy cast), else x: what a layer without a policy form is given
  /// under autocast (integer indices stay integers).
  template <class X>
  static decltype(auto) in_master_type(X&& x) {
    if constexpr (fusor::ext::small_float_v<value_t<node_t<std::remove_cvref_t<X>>>>) return fusor::cast<T>(x);
    else return std::forward<X>(x);
  }

  // Each layer's output lives in this frame while the rest of the model runs on it, so lazy
  // expressions of it (an activation) are safe until the result is settled.
  template <std::size_t I, class P, class X, class Policy>
  auto apply_from(const P& params, X&& x, Policy policy) const {
    if constexpr (I == sizeof...(L)) {
      if constexpr (std::is_same_v<Policy, no_policy>) return settle(std::forward<X>(x));
      else return settle(in_master_type(std::forward<X>(x)));
    } else {
      auto& layer = std::get<I>(layers_);
      using Li = std::remove_cvref_t<decltype(layer)>;
      if constexpr (detail::parametrised<Li>) {
        auto get = [&](std::size_t k) -> const auto& { return lookup(params, I, k); };
        auto y = [&] {
          if constexpr (std::is_same_v<Policy, no_policy>) return layer(x, get);
          else if constexpr (requires { layer(x, get, policy); }) return layer(x, get, policy);
          else return layer(in_master_type(x), get);  // a layer without a policy form: float32
        }();
        return apply_from<I + 1>(params, std::move(y), policy);
      } else {
        auto y = layer(x);
        return apply_from<I + 1>(params, std::move(y), policy);
      }
    }
  }

  template <class P>
  const auto& lookup(const P& params, std::size_t layer, std::size_t k) const {
    const param_spec& spec = specs_[params_of_[layer][k]];
    const auto it = params.find(spec.name);
    if (it == params.end())
      throw value_error("fusor: the parameters have no \"" + spec.name + "\" (expected shape " +
                        to_string(spec.shape) + "; make them with the model's init)");
    if (!(it->second.shape() == spec.shape))
      throw shape_error("fusor: the parameter \"" + spec.name + "\" has shape " + to_string(it->second.shape()) +
                        ", the model expects " + to_string(spec.shape));
    return it->second;
  }

  /// A final result as a value: a variable, or an array (an expression is evaluated).
  template <class X>
  static auto settle(X&& x) {
    using N = std::remove_cvref_t<X>;
    if constexpr (ad::detail::holds_vars_v<N>) {
      if constexpr (is_var_v<N>) return N(x);
      else return ad::eval(x);
    } else if constexpr (fusor::ext::is_array_v<N>) {
      if constexpr (std::is_rvalue_reference_v<X&&>) return N(std::move(x));
      else return N(x.view().copy());  // the caller's input itself (a model without layers)
    } else {
      return fusor::eval(x);
    }
  }

  mutable std::tuple<L...> layers_;
  std::vector<std::vector<std::size_t>> params_of_;  // each layer's parameters: indices into specs_
  std::vector<param_spec> specs_;
  index_t in_features_ = any_features, out_features_ = any_features;
  bool training_ = true;
};

/// A sequential model of element type T on backend B: nn::sequential<float>(nn::linear(784, 128),
/// nn::relu, nn::linear(128, 10)). A shape_error when a layer's input does not fit the one before.
template <class T, class B = default_backend, class... L>
auto sequential(L... layers) {
  return sequential_model<T, B, L...>(std::move(layers)...);
}

}  // namespace fusor::ad::nn
