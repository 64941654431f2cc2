#pragma once
// Attention, for arrays and variables on any backend (PyTorch's names and conventions):
//   functional::scaled_dot_product_attention(q, k, v[, mask], options)
//       softmax(q·kᵀ · scale [masked]) · v over the last two axes, batch axes broadcast
//       (F.scaled_dot_product_attention): q (..., L, E), k (..., S, E), v (..., S, Ev);
//   functional::multi_head_attention(query, key, value, heads, in_proj_weight, in_proj_bias,
//       out_proj_weight, out_proj_bias[, mask], options)   (F.multi_head_attention_forward);
//   nn::multihead_attention(embed_dim, num_heads)          (nn.MultiheadAttention);
//   nn::transformer_encoder_layer(d_model, heads, ff)      (nn.TransformerEncoderLayer);
//   nn::positional_embedding(max_length, dim)              a learned position table, added.
//
// Built from the engine's pieces, so each piece is one recorded node and replays under
// ad::compile: the projections and the two products are (batched) GEMMs through BLAS or cuBLAS
// on strided views (the heads are views of the projection, no copy), the scale, the causal mask
// and a given mask are one fused expression inside the row softmax (the causal mask is computed
// from the element's coordinates, not stored). What is stored per head: the (L, S) scores (the
// product, read by the softmax's adjoint) and the (L, S) weights (read by both products'
// adjoints), a third (L, S) array with dropout; the backward pass adds their adjoints.
//
// Masks follow F.scaled_dot_product_attention (and jax.nn.dot_product_attention): a boolean mask
// is true where a query may attend a key; a floating mask is added to the scores. This is the
// opposite of nn.MultiheadAttention's boolean attn_mask (true = not allowed): pass the negated
// mask, array<bool>(logical_not(mask)), when porting such code. causal with a mask keeps what both
// allow (PyTorch's scaled_dot_product_attention refuses the pair). A query row with no key left to
// attend is NaN, as in PyTorch's reference.
//
// Layouts: batch first, (N, L, E) or unbatched (L, E), as PyTorch's batch_first=True. The
// attention and transformer layers keep PyTorch's parameter names and layouts (in_proj_weight
// (3E, E), linear1.weight (ff, d_model): out × in), so a PyTorch state_dict loads unchanged;
// nn::linear keeps JAX's (in, out).
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "../../core/array.hpp"
#include "../../core/create.hpp"
#include "../../core/random.hpp"
#include "../softmax.hpp"
#include "../views.hpp"
#include "functional.hpp"
#include "layers.hpp"
#include "../../core/ext.hpp"

namespace fusor::ad::nn {

/// How scaled_dot_product_attention masks, scales and drops (F.scaled_dot_product_attention's
/// is_causal, scale and dropout_p, with the generator and the training flag dropout needs).
struct attention_options {
  bool causal = false;          // query i attends keys j <= i (the top-left triangle, PyTorch's)
  double dropout = 0.0;         // probability of dropping an attention weight while training
  std::optional<double> scale = std::nullopt;  // of the scores; 1 / sqrt(E) when not given
  fusor::random::generator* rng = nullptr;  // the dropout masks' generator (needed when dropout > 0)
  bool training = true;
};

namespace functional {
namespace detail {

/// No mask given.
struct no_mask {};

template <class X>
extents shape_of(const X& x) {
  return expr_shape(fusor::ext::to_node(x));
}

/// An array or variable operand as it is (a reference); a lazy array expression evaluated.
template <class X>
decltype(auto) as_operand(const X& x) {
  if constexpr (has_vars<X>() || fusor::ext::is_array_v<X> || fusor::ext::is_view_v<X>) return (x);
  else return fusor::eval(x);
}

/// The scores' shape (batch axes broadcast, then (L, S)) after checking q, k and v.
inline extents attention_scores_shape(const extents& q, const extents& k, const extents& v) {
  const auto given = [&] { return ", got query " + to_string(q) + ", key " + to_string(k) + " and value " + to_string(v); };
  if (q.size() < 2 || k.size() < 2 || v.size() < 2)
    throw shape_error("fusor: scaled_dot_product_attention needs query (..., L, E), key (..., S, E) and value (..., S, Ev) of rank >= 2" +
                      given());
  if (q[q.size() - 1] != k[k.size() - 1])
    throw shape_error("fusor: scaled_dot_product_attention needs the query's and the key's last axes (E) equal" + given());
  if (k[k.size() - 2] != v[v.size() - 2])
    throw shape_error("fusor: scaled_dot_product_attention needs the key's and the value's second-to-last axes (S) equal" + given());
  const auto batch = [](const extents& s) {
    extents b;
    for (int d = 0; d + 2 < s.size(); ++d) b.push_back(s[d]);
    return b;
  };
  extents out;
  try {
    out = broadcast_shapes(broadcast_shapes(batch(q), batch(k)), batch(v));
  } catch (const shape_error&) {
    throw shape_error("fusor: scaled_dot_product_attention needs batch axes that broadcast" + given());
  }
  out.push_back(q[q.size() - 2]);
  out.push_back(k[k.size() - 2]);
  return out;
}

inline void check_attention_options(const attention_options& o) {
  if (!(o.dropout >= 0.0 && o.dropout <= 1.0))
    throw value_error("fusor: attention needs 0 <= dropout <= 1, got " + std::to_string(o.dropout));
  if (o.training && o.dropout > 0.0 && o.rng == nullptr)
    throw value_error("fusor: attention with dropout " + std::to_string(o.dropout) +
                      " while training needs a generator (attention_options::rng), got none");
  if (o.scale && !std::isfinite(*o.scale))
    throw value_error("fusor: attention needs a finite scale, got " + std::to_string(*o.scale));
}

/// A mask's type and shape: an array or view of bool or floating values that broadcasts to the
/// scores' shape (a shape_error naming both otherwise).
template <class M>
void check_mask(const M& mask, const extents& scores) {
  if constexpr (!std::is_same_v<M, no_mask>) {
    static_assert(fusor::ext::is_array_v<M> || fusor::ext::is_view_v<M>,
                  "fusor: an attention mask is an array or a view (its values are read where they lie)");
    using MT = value_t<node_t<M>>;
    static_assert(std::is_same_v<MT, bool> || std::is_floating_point_v<MT> || fusor::ext::small_float_v<MT>,
                  "fusor: an attention mask holds bool (true: may attend) or floating values (added to the scores)");
    const extents ms = mask.shape();
    bool fits = ms.size() <= scores.size();
    if (fits) {
      try {
        fits = broadcast_shapes(ms, scores) == scores;
      } catch (const shape_error&) {
        fits = false;
      }
    }
    if (!fits)
      throw shape_error("fusor: attention needs a mask that broadcasts to the scores' shape " + to_string(scores) + ", got " +
                        to_string(ms));
  }
}

template <class T, class B, class S, class M>
auto masked_scores(const S& scaled, const M& mask) {
  if constexpr (std::is_same_v<M, no_mask>) {
    return scaled;
  } else {
    using MT = value_t<node_t<M>>;
    if constexpr (std::is_same_v<MT, bool>) return where(mask, scaled, -std::numeric_limits<T>::infinity());
    else return scaled + fusor::cast<T>(mask);
  }
}

/// scaled_dot_product_attention after the checks: its three steps (scores, weights, output).
template <class Q, class K, class V, class M>
auto attention_of(const Q& q, const K& k, const V& v, const M& mask, const attention_options& o) {
  using T = value_t<node_t<Q>>;
  using B = backend_of_t<node_t<Q>>;
  static_assert(std::is_floating_point_v<T>, "fusor: attention takes float or double values (cast 16-bit values first)");
  static_assert(std::is_same_v<value_t<node_t<K>>, T> && std::is_same_v<value_t<node_t<V>>, T>,
                "fusor: attention needs query, key and value of one element type");
  const extents qs = shape_of(q);
  const extents scores = attention_scores_shape(qs, shape_of(k), shape_of(v));
  check_attention_options(o);
  check_mask(mask, scores);
  // the causal mask compares positions in T (below): float counts them exactly to 2^24
  const index_t longest = std::max(scores[scores.size() - 1], scores[scores.size() - 2]);
  if (std::is_same_v<T, float> && o.causal && longest > (index_t(1) << 24))
    throw shape_error("fusor: a causal float32 attention takes at most 2^24 queries and keys, got " + to_string(scores));
  const index_t e = qs[qs.size() - 1];
  const T scale = T(o.scale ? *o.scale : e > 0 ? 1.0 / std::sqrt(double(e)) : 1.0);
  const auto s = matmul_of(q, swapaxes(k, -1, -2));
  // key j of query i is masked when j - i > reach: 0 for the causal triangle, S (never) otherwise
  // coordinates of type T keep the mask in the scores' SIMD lanes (index_t ones would take the
  // softmax's passes off the packet loop)
  const T reach = o.causal ? T(0) : T(scores[scores.size() - 1]);
  const auto j_minus_i = lazy::coordinates<T, B>(scores, -1) - lazy::coordinates<T, B>(scores, -2);
  auto weights = ad::softmax(
      masked_scores<T, B>(where(j_minus_i > reach, -std::numeric_limits<T>::infinity(), s * scale), mask), -1);
  if (o.training && o.dropout > 0.0) weights = functional::dropout(weights, o.dropout, *o.rng, true);
  return matmul_of(weights, v);
}

/// (..., L, E) -> (..., H, L, E / H): a view (the heads of a projection are column blocks of it).
template <class X>
auto split_heads(const X& x, index_t heads) {
  extents s = shape_of(x);
  const index_t e = s[s.size() - 1];
  s[s.size() - 1] = heads;
  s.push_back(e / heads);
  return swapaxes(reshape(x, s), -3, -2);
}

/// (..., H, L, D) -> (..., L, H·D): the heads side by side again (one copy).
template <class X>
auto merge_heads(const X& x) {
  extents s = shape_of(x);
  const int n = s.size();
  extents merged;
  for (int d = 0; d + 3 < n; ++d) merged.push_back(s[d]);
  merged.push_back(s[n - 2]);
  merged.push_back(s[n - 3] * s[n - 1]);
  if constexpr (has_vars<X>()) {
    return ad::reshape(ad::swapaxes(x, -3, -2), merged);
  } else {
    array<value_t<node_t<X>>, backend_of_t<node_t<X>>> c(fusor::swapaxes(x, -3, -2));
    return std::move(c).reshape(merged);
  }
}

/// x · weightᵀ + bias with PyTorch's (out, in) weight: the GEMM reads the weight transposed where
/// it lies.
template <class X, class W, class Bi>
auto torch_linear(const X& x, const W& weight, const Bi& bias) {
  return functional::linear(x, transpose(weight), bias);
}

template <class X>
auto settled(X&& x) {
  using N = std::remove_cvref_t<X>;
  if constexpr (has_vars<N>()) {
    if constexpr (is_var_v<N>) return N(x);
    else return ad::eval(x);
  } else if constexpr (fusor::ext::is_array_v<N> && !std::is_lvalue_reference_v<X>) {
    return N(std::move(x));
  } else {
    return fusor::eval(x);
  }
}

inline void check_heads(const char* what, index_t embed_dim, index_t heads) {
  if (embed_dim < 1 || heads < 1 || embed_dim % heads != 0)
    throw value_error(std::string("fusor: ") + what + " needs embed_dim >= 1 divisible by num_heads >= 1, got embed_dim " +
                      std::to_string(embed_dim) + " and " + std::to_string(heads) + " heads");
}

template <class Q, class K, class V, class W, class Bi, class OW, class OB, class M>
auto multi_head_attention_of(const Q& query, const K& key, const V& value, index_t heads, const W& in_w, const Bi& in_b,
                             const OW& out_w, const OB& out_b, const M& mask, const attention_options& o) {
  const char* what = "multi_head_attention";
  const extents ws = shape_of(in_w);
  const index_t e = ws.size() == 2 ? ws[1] : 0;
  const auto expect = [&](const char* name, const extents& got, const extents& want) {
    if (!(got == want))
      throw shape_error(std::string("fusor: ") + what + " needs " + name + " of shape " + to_string(want) + ", got " +
                        to_string(got));
  };
  expect("in_proj_weight", ws, extents{3 * e, e});
  check_heads(what, e, heads);
  expect("in_proj_bias", shape_of(in_b), extents{3 * e});
  expect("out_proj_weight", shape_of(out_w), extents{e, e});
  expect("out_proj_bias", shape_of(out_b), extents{e});
  const extents qs = shape_of(query), ks = shape_of(key), vs = shape_of(value);
  const auto inputs_fit = [&] {
    if (qs.size() < 2 || qs.size() > 3 || ks.size() != qs.size() || vs.size() != qs.size()) return false;
    if (qs[qs.size() - 1] != e || ks[ks.size() - 1] != e || vs[vs.size() - 1] != e) return false;
    if (!(ks == vs)) return false;
    return qs.size() == 2 || qs[0] == ks[0];
  };
  if (!inputs_fit())
    throw shape_error(std::string("fusor: ") + what + " needs query (N, L, E) or (L, E), key and value (N, S, E) or (S, E) with E = " +
                      std::to_string(e) + ", got query " + to_string(qs) + ", key " + to_string(ks) + " and value " +
                      to_string(vs));
  // the scores' shape, (N, heads, L, S) or (heads, L, S): the mask and the options are checked
  // before the projections run
  extents scores;
  if (qs.size() == 3) scores.push_back(qs[0]);
  scores.push_back(heads);
  scores.push_back(qs[qs.size() - 2]);
  scores.push_back(ks[ks.size() - 2]);
  check_attention_options(o);
  check_mask(mask, scores);
  const auto attend = [&](const auto& q, const auto& k, const auto& v) {
    const auto o_heads = attention_of(split_heads(q, heads), split_heads(k, heads), split_heads(v, heads), mask, o);
    return torch_linear(merge_heads(o_heads), out_w, out_b);
  };
  if constexpr (std::is_same_v<Q, K> && std::is_same_v<Q, V>) {
    if (static_cast<const void*>(&query) == static_cast<const void*>(&key) &&
        static_cast<const void*>(&query) == static_cast<const void*>(&value)) {
      // self-attention: one GEMM with the whole (3E, E) weight, q, k and v its column blocks
      const auto proj = settled(torch_linear(query, in_w, in_b));
      const auto parts = split(proj, 3, -1);
      return settled(attend(parts[0], parts[1], parts[2]));
    }
  }
  const auto q = settled(torch_linear(query, in_w(fusor::range(0, e)), in_b(fusor::range(0, e))));
  const auto k = settled(torch_linear(key, in_w(fusor::range(e, 2 * e)), in_b(fusor::range(e, 2 * e))));
  const auto v = settled(torch_linear(value, in_w(fusor::range(2 * e, 3 * e)), in_b(fusor::range(2 * e, 3 * e))));
  return settled(attend(q, k, v));
}

}  // namespace detail

/// softmax(q·kᵀ · scale) · v (F.scaled_dot_product_attention): q (..., L, E), k (..., S, E), v
/// (..., S, Ev), batch axes broadcast; the result is (..., L, Ev). scale is 1 / sqrt(E) unless
/// given; options.causal masks key j > i for query i; options.dropout drops weights while
/// training (from options.rng). A shape_error or value_error before any work on a bad input.
template <expression Q, expression K, expression V>
auto scaled_dot_product_attention(const Q& q, const K& k, const V& v, const attention_options& options = {}) {
  return detail::attention_of(detail::as_operand(q), detail::as_operand(k), detail::as_operand(v), detail::no_mask{}, options);
}
/// With a mask broadcast to the scores' (..., L, S): boolean (true: may attend) or added to the
/// scores (floating).
template <expression Q, expression K, expression V, expression M>
auto scaled_dot_product_attention(const Q& q, const K& k, const V& v, const M& mask, const attention_options& options = {}) {
  return detail::attention_of(detail::as_operand(q), detail::as_operand(k), detail::as_operand(v), mask, options);
}

/// Multi-head attention with PyTorch's packed parameters (F.multi_head_attention_forward, batch
/// first): query (N, L, E) or (L, E), key and value (N, S, E) or (S, E); in_proj_weight (3E, E)
/// and in_proj_bias (3E,) give q, k and v (rows [0, E), [E, 2E), [2E, 3E)), each split into
/// `heads` heads of E / heads, attended (scaled_dot_product_attention, options as there), joined
/// and projected by out_proj_weight (E, E) and out_proj_bias (E,). Passing one object as query,
/// key and value (self-attention) projects all three with one GEMM.
template <expression Q, expression K, expression V, expression W, expression Bi, expression OW, expression OB>
auto multi_head_attention(const Q& query, const K& key, const V& value, index_t heads, const W& in_proj_weight,
                          const Bi& in_proj_bias, const OW& out_proj_weight, const OB& out_proj_bias,
                          const attention_options& options = {}) {
  return detail::multi_head_attention_of(query, key, value, heads, in_proj_weight, in_proj_bias, out_proj_weight, out_proj_bias,
                                         detail::no_mask{}, options);
}
/// With a mask broadcast to (N, heads, L, S) (as scaled_dot_product_attention's: true may attend).
template <expression Q, expression K, expression V, expression W, expression Bi, expression OW, expression OB, expression M>
auto multi_head_attention(const Q& query, const K& key, const V& value, index_t heads, const W& in_proj_weight,
                          const Bi& in_proj_bias, const OW& out_proj_weight, const OB& out_proj_bias, const M& mask,
                          const attention_options& options = {}) {
  return detail::multi_head_attention_of(query, key, value, heads, in_proj_weight, in_proj_bias, out_proj_weight, out_proj_bias,
                                         mask, options);
}

/// PyTorch's key_padding_mask (N, S), true where a key is padding, as the mask attention takes:
/// (N, 1, 1, S), true where a key may be attended (it broadcasts over heads and queries).
template <class B>
array<bool, B> key_padding_mask(const array<bool, B>& padding) {
  const extents s = padding.shape();
  if (s.size() != 2)
    throw shape_error("fusor: key_padding_mask needs PyTorch's (N, S) mask (true: padding), got shape " + to_string(s));
  return array<bool, B>(logical_not(padding)).reshape(extents{s[0], 1, 1, s[1]});
}

}  // namespace functional

/// No mask: where a layer takes masks, this one stands for none (nn::no_mask{}).
using no_mask = functional::detail::no_mask;

/// nn.MultiheadAttention's options beside its sizes (bias and kdim/vdim are not offered: biases
/// are always there and keys and values have embed_dim features).
struct multihead_attention_options {
  double dropout = 0.0;  // on the attention weights, while training
  bool causal = false;   // query i attends keys j <= i only (self-attention: itself and earlier positions)
  std::uint64_t seed = 0;
};

/// Multi-head attention as a layer (nn.MultiheadAttention with batch_first=True): parameters
/// in_proj_weight (3E, E, Xavier-uniform), in_proj_bias (3E, zeros), out_proj.weight (E, E,
/// U(±1/sqrt(E))) and out_proj.bias (E, zeros), PyTorch's names, layouts and initialisation. In a
/// model it is self-attention on (N, L, E) or (L, E); attention(query, key, value, get) attends
/// other keys and values (cross-attention).
struct multihead_attention {
  index_t embed_dim, num_heads;
  multihead_attention_options options;
  fusor::random::generator rng;
  bool training = true;

  multihead_attention(index_t embed_dim_, index_t num_heads_, multihead_attention_options o = {})
      : embed_dim(embed_dim_), num_heads(num_heads_), options(o), rng(o.seed) {
    functional::detail::check_heads(name(), embed_dim, num_heads);
    if (!(o.dropout >= 0.0 && o.dropout <= 1.0))
      throw value_error("fusor: multihead_attention needs 0 <= dropout <= 1, got " + std::to_string(o.dropout));
  }
  std::vector<param_spec> parameters() const {
    const index_t e = embed_dim;
    return {{"in_proj_weight", extents{3 * e, e}, init::xavier_uniform(), e, 3 * e},
            {"in_proj_bias", extents{3 * e}, init::zeros(), e, 3 * e},
            {"out_proj.weight", extents{e, e}, init::torch_linear(), e, e},
            {"out_proj.bias", extents{e}, init::zeros(), e, e}};
  }
  index_t output_features(index_t f) const { return detail::expect_features(name(), embed_dim, f); }
  void train(bool on) { training = on; }
  void placed(std::size_t index) { rng = detail::placed_generator(options.seed, index); }
  template <class X, class Get>
  auto operator()(const X& x, const Get& get) {
    const auto& xs = functional::detail::as_operand(x);
    return functional::multi_head_attention(xs, xs, xs, num_heads, get(0), get(1), get(2), get(3), attention());
  }
  /// Cross-attention: query (N, L, E) attends key and value (N, S, E).
  template <class Q, class K, class V, class Get>
  auto attend(const Q& query, const K& key, const V& value, const Get& get) {
    return functional::multi_head_attention(query, key, value, num_heads, get(0), get(1), get(2), get(3), attention());
  }
  /// The options scaled_dot_product_attention is called with.
  attention_options attention() { return {options.causal, options.dropout, std::nullopt, &rng, training}; }
  static constexpr const char* name() { return "multihead_attention"; }
};

/// The transformer MLP's activation.
enum class transformer_activation { relu, gelu };

/// nn.TransformerEncoderLayer's options beside its sizes. Defaults differ from PyTorch's where
/// today's models do: pre-norm (norm_first), GELU (the exact, erf form), no dropout.
struct transformer_options {
  double dropout = 0.0;  // after the attention, inside and after the MLP, and on the attention weights
  bool causal = false;   // each position attends only itself and earlier ones (a decoder-only model)
  bool norm_first = true;
  transformer_activation activation = transformer_activation::gelu;
  double eps = 1e-5;  // of both layer norms
  std::uint64_t seed = 0;
};

namespace detail {
/// What the transformer blocks share: their sizes and options (checked), the dropout generator and
/// training flag, the MLP and the layer norms, read from the parameter getter by position.
struct transformer_block {
  index_t d_model, num_heads, dim_feedforward;
  transformer_options options;
  fusor::random::generator rng;
  bool training = true;

  transformer_block(const char* what, index_t d, index_t heads, index_t feedforward, const transformer_options& o)
      : d_model(d), num_heads(heads), dim_feedforward(feedforward), options(o), rng(o.seed) {
    functional::detail::check_heads(what, d_model, num_heads);
    check_positive(what, "dim_feedforward", dim_feedforward);
    if (!(o.dropout >= 0.0 && o.dropout <= 1.0))
      throw value_error(std::string("fusor: ") + what + " needs 0 <= dropout <= 1, got " + std::to_string(o.dropout));
    if (!(o.eps > 0)) throw value_error(std::string("fusor: ") + what + " needs eps > 0, got " + std::to_string(o.eps));
  }
  /// The attention parameters under each prefix, then linear1, linear2 and norm1 ... norm<norms>.
  std::vector<param_spec> block_parameters(std::initializer_list<const char*> attention, int norms) const {
    std::vector<param_spec> p;
    for (const char* prefix : attention)
      for (param_spec s : multihead_attention(d_model, num_heads).parameters()) {
        s.name = prefix + s.name;
        p.push_back(s);
      }
    const index_t d = d_model, f = dim_feedforward;
    p.push_back({"linear1.weight", extents{f, d}, init::torch_linear(), d, f});
    p.push_back({"linear1.bias", extents{f}, init::torch_linear(), d, f});
    p.push_back({"linear2.weight", extents{d, f}, init::torch_linear(), f, d});
    p.push_back({"linear2.bias", extents{d}, init::torch_linear(), f, d});
    for (int k = 1; k <= norms; ++k) {
      p.push_back({"norm" + std::to_string(k) + ".weight", extents{d}, init::ones(), d, d});
      p.push_back({"norm" + std::to_string(k) + ".bias", extents{d}, init::zeros(), d, d});
    }
    return p;
  }
  void train(bool on) { training = on; }
  void placed(std::size_t index) { rng = placed_generator(options.seed, index); }

 protected:
  attention_options attention(bool causal) { return {causal, options.dropout, std::nullopt, &rng, training}; }
  template <class Y>
  auto drop(Y&& y) {
    auto v = functional::detail::settled(std::forward<Y>(y));
    if (training && options.dropout > 0.0) v = functional::dropout(v, options.dropout, rng, true);
    return v;
  }
  /// linear2(act(linear1(h))), dropped after the activation and after linear2; the four
  /// parameters from get(first) on.
  template <class H, class Get>
  auto mlp(const H& h, const Get& get, std::size_t first) {
    namespace fd = functional::detail;
    const auto up = fd::torch_linear(h, get(first), get(first + 1));
    auto act = options.activation == transformer_activation::gelu ? fd::settled(gelu(up)) : fd::settled(relu(up));
    return drop(fd::torch_linear(drop(std::move(act)), get(first + 2), get(first + 3)));
  }
  template <class H, class Get>
  auto norm(const H& h, const Get& get, std::size_t k) const {
    return functional::detail::settled(functional::layer_norm(h, get(k), get(k + 1), options.eps));
  }
};
}  // namespace detail

/// A transformer encoder block (nn.TransformerEncoderLayer with batch_first=True) on (N, L,
/// d_model) or (L, d_model). Pre-norm: x + attn(norm1(x)), then + linear2(act(linear1(norm2(·))));
/// post-norm (norm_first = false): norm1(x + attn(x)), then norm2(· + mlp(·)). PyTorch's
/// parameter names, layouts and initialisation: self_attn.in_proj_weight, self_attn.in_proj_bias,
/// self_attn.out_proj.weight/bias, linear1.weight (ff, d)/bias, linear2.weight (d, ff)/bias,
/// norm1.weight/bias, norm2.weight/bias.
struct transformer_encoder_layer : detail::transformer_block {
  transformer_encoder_layer(index_t d, index_t heads, index_t feedforward, transformer_options o = {})
      : transformer_block(name(), d, heads, feedforward, o) {}
  std::vector<param_spec> parameters() const { return block_parameters({"self_attn."}, 2); }
  index_t output_features(index_t f) const { return detail::expect_features(name(), d_model, f); }

  template <class X, class Get>
  auto operator()(const X& x, const Get& get) {
    namespace fd = functional::detail;
    const extents in_shape = fd::shape_of(x);
    if (in_shape.size() < 2 || in_shape.size() > 3 || in_shape[in_shape.size() - 1] != d_model)
      throw shape_error(std::string("fusor: transformer_encoder_layer expects inputs (N, L, ") + std::to_string(d_model) + ") or (L, " +
                        std::to_string(d_model) + "), got shape " + to_string(in_shape));
    const attention_options a = attention(options.causal);
    const auto attend = [&](const auto& h) {
      return drop(functional::multi_head_attention(h, h, h, num_heads, get(0), get(1), get(2), get(3), a));
    };
    const auto& xs = fd::as_operand(x);
    if (options.norm_first) {
      const auto h = fd::settled(xs + attend(norm(xs, get, 8)));
      return fd::settled(h + mlp(norm(h, get, 10), get, 4));
    }
    const auto h = norm(xs + attend(xs), get, 8);
    return norm(h + mlp(h, get, 4), get, 10);
  }
  static constexpr const char* name() { return "transformer_encoder_layer"; }
};

/// A transformer decoder block (nn.TransformerDecoderLayer with batch_first=True): the target
/// (N, L, d_model) or (L, d_model) attends itself (causal when options.causal: each position
/// itself and earlier ones), then the memory (N, S, d_model) or (S, d_model), then the MLP.
/// Pre-norm: x + self_attn(norm1(x)), + multihead_attn(norm2(·), memory), + mlp(norm3(·));
/// post-norm (norm_first = false): norm1(x + self_attn(x)), norm2(· + multihead_attn(·, memory)),
/// norm3(· + mlp(·)). PyTorch's parameter names, layouts and initialisation: self_attn.*,
/// multihead_attn.* (as multihead_attention's), linear1.*, linear2.*, norm1.*, norm2.*, norm3.*.
/// Called (tgt, memory, get), or (tgt, memory, tgt_mask, memory_mask, get) with masks as
/// multi_head_attention takes them (nn::no_mask{} for none; functional::key_padding_mask turns
/// PyTorch's key_padding_mask into one).
struct transformer_decoder_layer : detail::transformer_block {
  transformer_decoder_layer(index_t d, index_t heads, index_t feedforward, transformer_options o = {})
      : transformer_block(name(), d, heads, feedforward, o) {}
  std::vector<param_spec> parameters() const { return block_parameters({"self_attn.", "multihead_attn."}, 3); }
  index_t output_features(index_t f) const { return detail::expect_features(name(), d_model, f); }

  template <class X, class M, class Get>
  auto operator()(const X& tgt, const M& memory, const Get& get) {
    return (*this)(tgt, memory, no_mask{}, no_mask{}, get);
  }
  template <class X, class M, class TM, class MM, class Get>
  auto operator()(const X& tgt, const M& memory, const TM& tgt_mask, const MM& memory_mask, const Get& get) {
    namespace fd = functional::detail;
    const extents ts = fd::shape_of(tgt), ms = fd::shape_of(memory);
    const bool fits = ts.size() >= 2 && ts.size() <= 3 && ms.size() == ts.size() && ts[ts.size() - 1] == d_model &&
                      ms[ms.size() - 1] == d_model && (ts.size() == 2 || ts[0] == ms[0]);
    if (!fits)
      throw shape_error(std::string("fusor: transformer_decoder_layer expects a target (N, L, ") + std::to_string(d_model) +
                        ") or (L, " + std::to_string(d_model) + ") and a memory (N, S, " + std::to_string(d_model) +
                        ") or (S, " + std::to_string(d_model) + "), got target " + to_string(ts) + " and memory " +
                        to_string(ms));
    const attention_options self_a = attention(options.causal), cross_a = attention(false);
    const auto& mem = fd::as_operand(memory);
    const auto self_attend = [&](const auto& h) {
      return drop(fd::multi_head_attention_of(h, h, h, num_heads, get(0), get(1), get(2), get(3), tgt_mask, self_a));
    };
    const auto cross_attend = [&](const auto& h) {
      return drop(fd::multi_head_attention_of(h, mem, mem, num_heads, get(4), get(5), get(6), get(7), memory_mask, cross_a));
    };
    const auto& xs = fd::as_operand(tgt);
    if (options.norm_first) {
      const auto h1 = fd::settled(xs + self_attend(norm(xs, get, 12)));
      const auto h2 = fd::settled(h1 + cross_attend(norm(h1, get, 14)));
      return fd::settled(h2 + mlp(norm(h2, get, 16), get, 8));
    }
    const auto h1 = norm(xs + self_attend(xs), get, 12);
    const auto h2 = norm(h1 + cross_attend(h1), get, 14);
    return norm(h2 + mlp(h2, get, 8), get, 16);
  }
  static constexpr const char* name() { return "transformer_decoder_layer"; }
};

/// A learned position table added to its input (GPT's): weight (max_length, dim), N(0, 0.02)
/// unless given; an input (..., L, dim) gets rows [0, L) added. L > max_length is a shape_error.
struct positional_embedding {
  index_t max_length, dim;
  initializer weight_init = init::normal(0, 0.02);

  positional_embedding(index_t max_len, index_t embedding_dim, initializer w = init::normal(0, 0.02))
      : max_length(max_len), dim(embedding_dim), weight_init(w) {
    detail::check_positive(name(), "max_length", max_length);
    detail::check_positive(name(), "embedding_dim", dim);
  }
  std::vector<param_spec> parameters() const { return {{"weight", extents{max_length, dim}, weight_init, max_length, dim}}; }
  index_t output_features(index_t f) const { return detail::expect_features(name(), dim, f); }
  template <class X, class Get>
  auto operator()(const X& x, const Get& get) const {
    const extents s = functional::detail::shape_of(x);
    if (s.size() < 2 || s[s.size() - 1] != dim || s[s.size() - 2] > max_length)
      throw shape_error(std::string("fusor: positional_embedding expects inputs (..., L, ") + std::to_string(dim) +
                        ") with L <= " + std::to_string(max_length) + ", got shape " + to_string(s));
    const auto& w = get(0);
    const auto rows = w(fusor::range(0, s[s.size() - 2]));
    if constexpr (functional::detail::has_vars<std::remove_cvref_t<decltype(w)>>() && functional::detail::has_vars<X>())
      return x + rows;  // leaves: tape buffers, so the sum may stay lazy
    else return functional::detail::settled(x + rows);
  }
  static constexpr const char* name() { return "positional_embedding"; }
};

}  // namespace fusor::ad::nn
