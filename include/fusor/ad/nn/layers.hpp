#pragma once
// Layers with parameters: linear, embedding, layer_norm, and dropout (no parameters, but a seed
// and a training flag). A layer describes its parameters (names, shapes, initialisers, fans),
// checks and maps the feature count flowing through a model, and is applied to an input with its
// parameters looked up by the model. Plain structs: no virtual functions, copied into the model.
//
// What a model needs of a layer L (the layer protocol):
//   std::vector<param_spec> parameters() const   what it owns, names relative to the layer
//   index_t output_features(index_t in) const    its output's last axis for an input's (any_features
//                                                when not known); a shape_error when `in` is wrong
//   auto operator()(const X& x, const Get& get)  the output; get(k) is parameter k (array or variable)
//   void train(bool) (optional)                  training or evaluation mode
//   auto operator()(x, get, autocast_t<H>)       (optional) the output under a mixed-precision
//                                                policy; a layer without it runs in float32
// Anything else callable with one argument (nn::relu, a lambda) is a layer without parameters
// that keeps the feature count.
#include <cstdint>
#include <string>
#include <vector>

#include "../../core/array.hpp"
#include "../../core/random.hpp"
#include "../gather.hpp"
#include "activations.hpp"
#include "conv.hpp"
#include "conv_transpose.hpp"
#include "functional.hpp"
#include "init.hpp"

namespace fusor::ad::nn {

/// A feature count not known until the model is called (the input of a first embedding).
inline constexpr index_t any_features = -1;

/// One parameter of a layer: its name (within the layer), shape, initialiser and fans.
struct param_spec {
  std::string name;
  extents shape;
  initializer init;
  index_t fan_in = 0, fan_out = 0;
};

namespace detail {
inline void check_positive(const char* layer, const char* what, index_t n) {
  if (n <= 0)
    throw value_error(std::string("fusor: ") + layer + " needs " + what + " >= 1, got " + std::to_string(n));
}
/// A layer's generator for its place `index` in a model: (seed, index) mixed by SplitMix64's
/// finaliser, so that neighbouring seeds and indices give unrelated streams.
inline fusor::random::generator placed_generator(std::uint64_t seed, std::size_t index) {
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * (std::uint64_t(index) + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return fusor::random::generator(z ^ (z >> 31));
}
inline index_t expect_features(const char* layer, index_t want, index_t in) {
  if (in != any_features && in != want)
    throw shape_error(std::string("fusor: ") + layer + " expects inputs with " + std::to_string(want) +
                      " features (the last axis), but gets " + std::to_string(in));
  return want;
}
}  // namespace detail

/// Picks the linear layer without a bias: nn::linear(in, out, nn::no_bias).
struct no_bias_t {
  explicit no_bias_t() = default;
};
inline constexpr no_bias_t no_bias{};

struct linear_options {
  initializer weight_init = init::torch_linear();  // PyTorch's: U(±1/sqrt(in))
  initializer bias_init = init::torch_linear();
};

/// y = x · weight + bias: weight (in, out), bias (out,) (JAX's layout: no transpose in the GEMM).
/// nn::linear(in, out) has a bias, nn::linear(in, out, nn::no_bias) has not (a type of its own:
/// on variables the two return different expressions).
template <bool Bias = true>
struct linear {
  index_t in, out;
  linear_options options;

  linear(index_t in_features, index_t out_features, linear_options o = {})
    requires Bias
      : in(in_features), out(out_features), options(o) {
    check();
  }
  linear(index_t in_features, index_t out_features, no_bias_t, linear_options o = {})
    requires(!Bias)
      : in(in_features), out(out_features), options(o) {
    check();
  }
  std::vector<param_spec> parameters() const {
    std::vector<param_spec> p{{"weight", extents{in, out}, options.weight_init, in, out}};
    if constexpr (Bias) p.push_back({"bias", extents{out}, options.bias_init, in, out});
    return p;
  }
  index_t output_features(index_t f) const {
    detail::expect_features("linear", in, f);
    return out;
  }
  template <class X, class Get>
  auto operator()(const X& x, const Get& get) const {
    if constexpr (Bias) return functional::linear(x, get(0), get(1));
    else return functional::linear(x, get(0));
  }
  /// Under ad::autocast<H>: the product in H (the result is H).
  template <class X, class Get, class H>
  auto operator()(const X& x, const Get& get, autocast_t<H> policy) const {
    if constexpr (Bias) return functional::linear(x, get(0), get(1), policy);
    else return functional::linear(x, get(0), policy);
  }

 private:
  void check() const {
    detail::check_positive("linear", "in_features", in);
    detail::check_positive("linear", "out_features", out);
  }
};
linear(index_t, index_t) -> linear<true>;
linear(index_t, index_t, linear_options) -> linear<true>;
linear(index_t, index_t, no_bias_t) -> linear<false>;
linear(index_t, index_t, no_bias_t, linear_options) -> linear<false>;

/// A lookup table: integer indices (any shape) -> rows of weight (num, dim), i.e. x.shape + (dim,).
/// The adjoint scatter-adds into the rows read (an index read k times gets k contributions).
struct embedding {
  index_t num, dim;
  initializer weight_init = init::normal(0, 1);  // PyTorch's

  embedding(index_t num_embeddings, index_t embedding_dim, initializer w = init::normal(0, 1))
      : num(num_embeddings), dim(embedding_dim), weight_init(w) {
    detail::check_positive("embedding", "num_embeddings", num);
    detail::check_positive("embedding", "embedding_dim", dim);
  }
  std::vector<param_spec> parameters() const { return {{"weight", extents{num, dim}, weight_init, num, dim}}; }
  index_t output_features(index_t) const { return dim; }  // its input is indices, not features
  template <class X, class Get>
  auto operator()(const X& indices, const Get& get) const {
    static_assert(std::is_integral_v<value_t<node_t<X>>>, "fusor: embedding takes integer indices");
    const auto& w = get(0);
    // a table has no row -1: indices in [0, num), checked by every replay too (ad::compile)
    if constexpr (ad::detail::holds_vars_v<std::remove_cvref_t<decltype(w)>>) {
      return ad::detail::take_of(w, indices, 0, "embedding");
    } else {
      detail::check_indices("embedding", "indices", "indices", indices, num);
      return fusor::take(w, indices, 0);
    }
  }
};

/// Layer normalisation over the last axis, with a weight (ones) and a bias (zeros) per feature.
struct layer_norm {
  index_t features;
  double eps = 1e-5;

  explicit layer_norm(index_t n, double epsilon = 1e-5) : features(n), eps(epsilon) {
    detail::check_positive("layer_norm", "features", features);
    if (!(eps > 0)) throw value_error("fusor: layer_norm needs eps > 0, got " + std::to_string(eps));
  }
  std::vector<param_spec> parameters() const {
    return {{"weight", extents{features}, init::ones(), features, features},
            {"bias", extents{features}, init::zeros(), features, features}};
  }
  index_t output_features(index_t f) const { return detail::expect_features("layer_norm", features, f); }
  template <class X, class Get>
  auto operator()(const X& x, const Get& get) const {
    return functional::layer_norm(x, get(0), get(1), eps);
  }
};

/// Inverted dropout with probability p while training (nn::functional::dropout), the identity in
/// evaluation mode. Its masks come from its own generator, seeded from `seed` and the layer's
/// place in its model (placed(index)), so two dropout layers of one model never share masks and
/// a training run repeats exactly, on any backend.
struct dropout {
  double p;
  std::uint64_t seed;
  fusor::random::generator rng;
  bool training = true;

  explicit dropout(double probability, std::uint64_t s = 0) : p(probability), seed(s), rng(s) {
    if (!(p >= 0.0 && p <= 1.0)) throw value_error("fusor: dropout needs 0 <= p <= 1, got p = " + std::to_string(p));
  }
  std::vector<param_spec> parameters() const { return {}; }
  index_t output_features(index_t f) const { return f; }
  void train(bool on) { training = on; }
  /// Called by a model with the layer's index: the generator restarts from (seed, index).
  void placed(std::size_t index) { rng = detail::placed_generator(seed, index); }
  template <class X, class Get>
  auto operator()(const X& x, const Get&) {
    return functional::dropout(x, p, rng, training);
  }
  /// Under ad::autocast: in the element type it is given (a mask costs no precision).
  template <class X, class Get, class H>
  auto operator()(const X& x, const Get& get, autocast_t<H>) {
    return (*this)(x, get);
  }
};

namespace detail {
/// A convolution layer's kernel size: one value (every axis) or D, each >= 1.
template <int D>
extents conv_kernel(const char* layer, const extents& k) {
  const extents full = k.size() == 1 ? (D == 1 ? k : D == 2 ? extents{k[0], k[0]} : extents{k[0], k[0], k[0]}) : k;
  if (full.size() != D)
    throw value_error(std::string("fusor: ") + layer + " expects a kernel size of one value or " + std::to_string(D) + ", got " +
                      to_string(k));
  for (index_t e : full) check_positive(layer, "a kernel size", e);
  return full;
}
/// A convolution layer's channels: positive, both divisible by the groups.
inline void check_conv_channels(const char* layer, index_t in, index_t out, index_t groups) {
  check_positive(layer, "in_channels", in);
  check_positive(layer, "out_channels", out);
  check_positive(layer, "groups", groups);
  if (in % groups != 0 || out % groups != 0)
    throw value_error(std::string("fusor: ") + layer + " needs in_channels and out_channels divisible by groups, got " +
                      std::to_string(in) + ", " + std::to_string(out) + " and " + std::to_string(groups) + " groups");
}
/// A convolution weight's parameters: (first, second, *kernel) with its fans, and the bias (bias_len,).
inline std::vector<param_spec> conv_params(index_t first, index_t second, const extents& kernel, index_t fan_in, index_t fan_out,
                                           const initializer& w, const initializer& b, index_t bias_len, bool bias) {
  extents shape{first, second};
  for (index_t k : kernel) shape.push_back(k);
  std::vector<param_spec> p{{"weight", shape, w, fan_in, fan_out}};
  if (bias) p.push_back({"bias", extents{bias_len}, b, fan_in, fan_out});
  return p;
}
inline index_t kernel_size(const extents& kernel) {
  index_t n = 1;
  for (index_t k : kernel) n *= k;
  return n;
}
}  // namespace detail

/// A convolution layer with D spatial axes (PyTorch's nn.Conv1d, Conv2d, Conv3d): weight
/// (out_channels, in_channels / groups, *kernel) and bias (out_channels,), both drawn as PyTorch
/// draws them, U(±1/sqrt(fan_in)) with fan_in = in_channels / groups times the kernel's size.
/// Its input is (N, C, *spatial) or unbatched (C, *spatial); in a sequential model it keeps no
/// feature count (its last axis is spatial), so the layer after it checks nothing against it.
template <int D, bool Bias>
struct conv_layer {
  static_assert(D >= 1 && D <= detail::max_conv_dims, "fusor: convolution layers have 1 to 3 spatial axes");
  index_t in_channels, out_channels;
  extents kernel;  // one extent per spatial axis
  conv_options options;
  initializer weight_init = init::torch_linear();
  initializer bias_init = init::torch_linear();

  conv_layer(index_t in, index_t out, const extents& kernel_size, conv_options o = {})
    requires Bias
      : in_channels(in), out_channels(out), kernel(detail::conv_kernel<D>(name(), kernel_size)), options(o) {
    detail::check_conv_channels(name(), in_channels, out_channels, options.groups);
  }
  conv_layer(index_t in, index_t out, const extents& kernel_size, no_bias_t, conv_options o = {})
    requires(!Bias)
      : in_channels(in), out_channels(out), kernel(detail::conv_kernel<D>(name(), kernel_size)), options(o) {
    detail::check_conv_channels(name(), in_channels, out_channels, options.groups);
  }
  std::vector<param_spec> parameters() const {
    const index_t taps = detail::kernel_size(kernel);
    return detail::conv_params(out_channels, in_channels / options.groups, kernel, in_channels / options.groups * taps,
                               out_channels / options.groups * taps, weight_init, bias_init, out_channels, Bias);
  }
  index_t output_features(index_t) const { return any_features; }
  template <class X, class Get>
  auto operator()(const X& x, const Get& get) const {
    if constexpr (Bias) return detail::conv_bias_of(name(), D, x, get(0), get(1), options);
    else return detail::conv_of(name(), D, x, get(0), options);
  }
  /// Under ad::autocast<H>: input, weight and bias cast to H, the products accumulated in float32.
  template <class X, class Get, class H>
  auto operator()(const X& x, const Get& get, autocast_t<H>) const {
    if constexpr (Bias)
      return detail::conv_bias_of(name(), D, ad::detail::in_type<H>(x), ad::detail::in_type<H>(get(0)),
                                  ad::detail::in_type<H>(get(1)), options);
    else return detail::conv_of(name(), D, ad::detail::in_type<H>(x), ad::detail::in_type<H>(get(0)), options);
  }
  static constexpr const char* name() { return D == 1 ? "conv1d" : D == 2 ? "conv2d" : "conv3d"; }
};

/// nn.Conv1d, nn.Conv2d and nn.Conv3d: nn::conv2d(in, out, {3, 3}) has a bias,
/// nn::conv2d(in, out, {3}, nn::no_bias) has not.
template <bool Bias = true>
struct conv1d : conv_layer<1, Bias> {
  using conv_layer<1, Bias>::conv_layer;
};
template <bool Bias = true>
struct conv2d : conv_layer<2, Bias> {
  using conv_layer<2, Bias>::conv_layer;
};
template <bool Bias = true>
struct conv3d : conv_layer<3, Bias> {
  using conv_layer<3, Bias>::conv_layer;
};
conv1d(index_t, index_t, const extents&) -> conv1d<true>;
conv1d(index_t, index_t, const extents&, conv_options) -> conv1d<true>;
conv1d(index_t, index_t, const extents&, no_bias_t) -> conv1d<false>;
conv1d(index_t, index_t, const extents&, no_bias_t, conv_options) -> conv1d<false>;
conv2d(index_t, index_t, const extents&) -> conv2d<true>;
conv2d(index_t, index_t, const extents&, conv_options) -> conv2d<true>;
conv2d(index_t, index_t, const extents&, no_bias_t) -> conv2d<false>;
conv2d(index_t, index_t, const extents&, no_bias_t, conv_options) -> conv2d<false>;
conv3d(index_t, index_t, const extents&) -> conv3d<true>;
conv3d(index_t, index_t, const extents&, conv_options) -> conv3d<true>;
conv3d(index_t, index_t, const extents&, no_bias_t) -> conv3d<false>;
conv3d(index_t, index_t, const extents&, no_bias_t, conv_options) -> conv3d<false>;

/// A transposed convolution layer with D spatial axes (PyTorch's nn.ConvTranspose1d/2d/3d):
/// weight (in_channels, out_channels / groups, *kernel) and bias (out_channels,), both
/// U(±1/sqrt(fan_in)) with PyTorch's fan_in for that weight: out_channels / groups times the
/// kernel's size.
template <int D, bool Bias>
struct conv_transpose_layer {
  static_assert(D >= 1 && D <= detail::max_conv_dims, "fusor: convolution layers have 1 to 3 spatial axes");
  index_t in_channels, out_channels;
  extents kernel;
  conv_transpose_options options;
  initializer weight_init = init::torch_linear();
  initializer bias_init = init::torch_linear();

  conv_transpose_layer(index_t in, index_t out, const extents& kernel_size, conv_transpose_options o = {})
    requires Bias
      : in_channels(in), out_channels(out), kernel(detail::conv_kernel<D>(name(), kernel_size)), options(o) {
    detail::check_conv_channels(name(), in_channels, out_channels, options.groups);
  }
  conv_transpose_layer(index_t in, index_t out, const extents& kernel_size, no_bias_t, conv_transpose_options o = {})
    requires(!Bias)
      : in_channels(in), out_channels(out), kernel(detail::conv_kernel<D>(name(), kernel_size)), options(o) {
    detail::check_conv_channels(name(), in_channels, out_channels, options.groups);
  }
  std::vector<param_spec> parameters() const {
    const index_t taps = detail::kernel_size(kernel);
    return detail::conv_params(in_channels, out_channels / options.groups, kernel, out_channels / options.groups * taps,
                               in_channels / options.groups * taps, weight_init, bias_init, out_channels, Bias);
  }
  index_t output_features(index_t) const { return any_features; }
  template <class X, class Get>
  auto operator()(const X& x, const Get& get) const {
    if constexpr (Bias) return detail::conv_transpose_bias_of(name(), D, x, get(0), get(1), options);
    else return detail::conv_transpose_of(name(), D, x, get(0), options);
  }
  static constexpr const char* name() { return D == 1 ? "conv_transpose1d" : D == 2 ? "conv_transpose2d" : "conv_transpose3d"; }
};

/// nn.ConvTranspose1d/2d/3d: nn::conv_transpose2d(in, out, {3}, options), nn::no_bias after the kernel.
template <bool Bias = true>
struct conv_transpose1d : conv_transpose_layer<1, Bias> {
  using conv_transpose_layer<1, Bias>::conv_transpose_layer;
};
template <bool Bias = true>
struct conv_transpose2d : conv_transpose_layer<2, Bias> {
  using conv_transpose_layer<2, Bias>::conv_transpose_layer;
};
template <bool Bias = true>
struct conv_transpose3d : conv_transpose_layer<3, Bias> {
  using conv_transpose_layer<3, Bias>::conv_transpose_layer;
};
conv_transpose1d(index_t, index_t, const extents&) -> conv_transpose1d<true>;
conv_transpose1d(index_t, index_t, const extents&, conv_transpose_options) -> conv_transpose1d<true>;
conv_transpose1d(index_t, index_t, const extents&, no_bias_t) -> conv_transpose1d<false>;
conv_transpose1d(index_t, index_t, const extents&, no_bias_t, conv_transpose_options) -> conv_transpose1d<false>;
conv_transpose2d(index_t, index_t, const extents&) -> conv_transpose2d<true>;
conv_transpose2d(index_t, index_t, const extents&, conv_transpose_options) -> conv_transpose2d<true>;
conv_transpose2d(index_t, index_t, const extents&, no_bias_t) -> conv_transpose2d<false>;
conv_transpose2d(index_t, index_t, const extents&, no_bias_t, conv_transpose_options) -> conv_transpose2d<false>;
conv_transpose3d(index_t, index_t, const extents&) -> conv_transpose3d<true>;
conv_transpose3d(index_t, index_t, const extents&, conv_transpose_options) -> conv_transpose3d<true>;
conv_transpose3d(index_t, index_t, const extents&, no_bias_t) -> conv_transpose3d<false>;
conv_transpose3d(index_t, index_t, const extents&, no_bias_t, conv_transpose_options) -> conv_transpose3d<false>;

}  // namespace fusor::ad::nn
