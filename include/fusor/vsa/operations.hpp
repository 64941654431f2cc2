#pragma once
// The operations every model has, as free functions over (model, rows): they check what the
// model can check (element type at compile time, the row width at run time) and call the
// model's own implementation. Batch-first: a vector is a row, an operand is (..., width), and
// operands broadcast as NumPy's arrays do (a (1, w) or (w) row binds with every row of a batch).
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "../core/sort.hpp"
#include "dense.hpp"
#include "kernels.hpp"
#include "model.hpp"
#include "../core/ext.hpp"

namespace fusor::vsa {

namespace detail {
template <class M, class X>
extents checked_rows(const M& m, const X& x, const char* what, const char* which = "operand") {
  static_assert(expression<X>, "fusor::vsa: operands are fusor arrays, views or expressions of the model's rows");
  static_assert(std::is_same_v<value_t<X>, typename M::value_type>,
                "fusor::vsa: the vectors' element type must be the model's value_type (float for MAP-B, MAP-C, "
                "HRR, VTB and MBAT, std::int32_t for MAP-I, std::complex<float> for FHRR, std::uint64_t words for BSC, "
                "std::uint8_t for MCR and CGR, std::uint16_t for BSBC, std::complex<float> for GHRR, std::uint64_t "
                "words for BSDC)");
  const extents s = expr_shape(fusor::ext::to_node(x));
  check_rows(m, s, what, which);
  return s;
}
}  // namespace detail

/// n random vectors of model m, (n, m.width()). Row i comes from Philox keyed by (seed,
/// first + i) alone: the same vectors on every backend and thread count, and random(m, 5, s) is
/// the first five rows of random(m, 10, s) (first shifts the window: a codebook can grow).
template <backend B = default_backend, model M>
array<typename M::value_type, B> random(const M& m, index_t n, std::uint64_t seed, index_t first = 0) {
  if (n < 0) throw value_error("fusor::vsa::random: needs n >= 0 vectors, got n = " + std::to_string(n));
  if (first < 0) throw value_error("fusor::vsa::random: needs first >= 0, got first = " + std::to_string(first));
  if constexpr (requires { m.template draw<B>(n, seed, first); })  // a model with its own fused draw
    return m.template draw<B>(n, seed, first);
  else
    return detail::generate<B>(detail::row_draw<M>{m, seed, first, m.width()}, extents{n, m.width()});
}

/// n copies of the identity of bind: bind(x, identity) == x (and bind(identity, x) == x for the
/// commutative models; VTB's identity acts from the right only).
template <backend B = default_backend, model M>
array<typename M::value_type, B> identity(const M& m, index_t n = 1) {
  static_assert(requires { m.template identity<B>(extents{}); },
                "fusor::vsa::identity: this model's bind has no identity (MBAT mixes non-zero cyclic shifts)");
  if (n < 0) throw value_error("fusor::vsa::identity: needs n >= 0 vectors, got n = " + std::to_string(n));
  return m.template identity<B>(extents{n, m.width()});
}

/// n zero vectors (the empty bundle's accumulator; BSC: all bits clear).
template <backend B = default_backend, model M>
array<typename M::value_type, B> empty(const M& m, index_t n = 1) {
  if (n < 0) throw value_error("fusor::vsa::empty: needs n >= 0 vectors, got n = " + std::to_string(n));
  return zeros<typename M::value_type, B>(extents{n, m.width()});
}

/// Binds a and b row by row (broadcasting): MAP multiplies, BSC XORs, FHRR multiplies phasors,
/// HRR convolves circularly.
template <model M, class X, class Y>
auto bind(const M& m, const X& a, const Y& b) {
  detail::checked_rows(m, a, "bind", "first operand");
  detail::checked_rows(m, b, "bind", "second operand");
  return m.bind(a, b);
}

/// The inverse of a under bind (a itself for self-inverse models; FHRR: the conjugate; HRR: the
/// involution, or the exact inverse with inverse_kind::exact).
template <model M, class X>
auto inverse(const M& m, const X& a, inverse_kind k = inverse_kind::model_default) {
  static_assert(requires { m.inverse(a, k); },
                "fusor::vsa::inverse: this model's bind has no inverse (BSDC-CDT thins the superposition; MBAT reads "
                "its first operand through K weights only: recover the second with unbind_left)");
  detail::checked_rows(m, a, "inverse");
  return m.inverse(a, k);
}

/// Removes the key bound on the right: recovers a from c = bind(a, key) as bind(c, inverse(key))
/// (torchhd's and HoloVec's order; for commutative models either operand is a key), in one pass
/// where the model allows (HRR: one correlation, or with inverse_kind::exact a division of
/// spectra; VTB: one GEMM).
template <model M, class X, class Y>
auto unbind(const M& m, const X& c, const Y& key, inverse_kind k = inverse_kind::model_default) {
  static_assert(requires { m.unbind(c, key, k); },
                "fusor::vsa::unbind: this model cannot remove a key bound on the right (BSDC-CDT thins the "
                "superposition: query the bound vector by similarity instead; MBAT reads its first operand "
                "through K weights only: recover the second with unbind_left)");
  detail::checked_rows(m, c, "unbind", "bound vector");
  detail::checked_rows(m, key, "unbind", "key");
  return m.unbind(c, key, k);
}

/// Removes the key bound on the left: recovers b from c = bind(key, b). For commutative models this
/// is unbind(m, c, key); GHRR computes K_j^H C_j per block (exact), VTB sqrt(m) C^T K (approximate), MBAT the
/// transposed mix of shifts (approximate).
template <model M, class X, class Y>
auto unbind_left(const M& m, const X& c, const Y& key) {
  detail::checked_rows(m, c, "unbind_left", "bound vector");
  detail::checked_rows(m, key, "unbind_left", "key");
  if constexpr (requires { m.unbind_left(c, key); })
    return m.unbind_left(c, key);
  else {
    static_assert(M::commutative, "fusor::vsa::unbind_left: this non-commutative model has no left unbind");
    return vsa::unbind(m, c, key);
  }
}

/// The additive inverse: similarity(negative(a), a) is the model's minimum (BSC: every bit
/// flipped).
template <model M, class X>
auto negative(const M& m, const X& a) {
  detail::checked_rows(m, a, "negative");
  return m.negative(a);
}

/// Cyclic shift of every row by `shift` positions toward higher indices (np.roll along the
/// dimensions; BSC rotates its d bits, not its words). Any integer shift; negative undoes.
template <model M, class X>
auto permute(const M& m, const X& a, index_t shift = 1) {
  detail::checked_rows(m, a, "permute");
  return m.permute(a, shift);
}
/// permute(m, a, -shift).
template <model M, class X>
auto unpermute(const M& m, const X& a, index_t shift = 1) {
  detail::checked_rows(m, a, "unpermute");
  return m.permute(a, -shift);
}

/// A permutation of the d positions of a model's vectors, with its inverse: permute(m, x, p) moves
/// position p.order()[j] to position j (np.take(x, order, axis=-1)), unpermute undoes it. Built
/// from any (d) integer array holding each of 0 .. d-1 once (checked), or drawn by
/// random_permutation.
template <backend B = default_backend>
class permutation {
 public:
  template <class I>
  explicit permutation(const I& order) {
    static_assert(expression<I> && integer<value_t<I>>,
                  "fusor::vsa::permutation: the order is an integer array");
    static_assert(std::is_same_v<backend_of_t<I>, B>, "fusor::vsa::permutation: the order lives on the permutation's backend");
    const extents s = expr_shape(fusor::ext::to_node(order));
    if (s.size() != 1)
      throw shape_error("fusor::vsa::permutation: expects a 1-d order of the d positions, got shape " + to_string(s));
    order_ = array<std::int64_t, B>(cast<std::int64_t>(order));
    // checked and inverted on the host, once: the message names the first bad position
    const auto h = to<cpu>(order_);  // (auto: a cpu array named before the cpu backend is included)
    const index_t d = s[0];
    std::vector<std::int64_t> inv(static_cast<std::size_t>(d), -1);
    for (index_t j = 0; j < d; ++j) {
      const std::int64_t p = h.data()[j];
      const bool in_range = p >= 0 && p < d;
      if (!in_range || inv[std::size_t(p)] >= 0)
        throw value_error("fusor::vsa::permutation: the order must hold each of 0 .. " + std::to_string(d - 1) +
                          " exactly once (a permutation of the " + std::to_string(d) + " positions); order[" +
                          std::to_string(j) + "] = " + std::to_string(p) +
                          (in_range ? " repeats order[" + std::to_string(inv[std::size_t(p)]) + "]" : " is outside it"));
      inv[std::size_t(p)] = j;
    }
    inverse_ = array<std::int64_t, B>(std::span<const std::int64_t>(inv), extents{d});
  }
  index_t size() const { return order_.size(); }
  /// order()[j]: the position that permute moves to j.
  const array<std::int64_t, B>& order() const { return order_; }
  const array<std::int64_t, B>& inverse_order() const { return inverse_; }

 private:
  array<std::int64_t, B> order_, inverse_;
};

namespace detail {
/// 64 random bits per position j of stream 2^64 - 1 (no row uses it) under `seed`.
struct permutation_keys {
  using value_type = std::uint64_t;
  std::uint64_t seed;
  FUSOR_HD void fill(index_t first, std::uint64_t* out, index_t count) const {
    for (index_t i = 0; i < count; ++i) {
      const auto w = fusor::random::block_words(seed, ~std::uint64_t(0), std::uint64_t(first + i));
      out[i] = (std::uint64_t(w[1]) << 32) | w[0];
    }
  }
};

template <model M, class X, class I>
auto permute_positions(const M& m, const X& a, const I& order) {
  if constexpr (requires { m.permute_by(a, order); })
    return m.permute_by(a, order);
  else
    return take(a, order, -1);
}
/// permute (order) or unpermute (the inverse order) after the checks both share.
template <model M, class X, backend B>
auto apply_permutation(const M& m, const X& a, const permutation<B>& p, bool inverse, const char* what) {
  static_assert(std::is_same_v<backend_of_t<X>, B>,
                "fusor::vsa::permute: the rows and the permutation must live on the same backend");
  checked_rows(m, a, what);
  if (p.size() != m.dim())
    throw shape_error("fusor::vsa::" + std::string(what) + ": the permutation orders " + std::to_string(p.size()) +
                      " positions; " + std::string(M::name) + " vectors of this model have " +
                      std::to_string(m.dim()));
  return permute_positions(m, a, inverse ? p.inverse_order() : p.order());
}
}  // namespace detail

/// A random permutation of m's d positions for `seed`: the stable argsort of Philox keys, the same
/// on every backend.
template <backend B = default_backend, model M>
permutation<B> random_permutation(const M& m, std::uint64_t seed) {
  const array<std::uint64_t, B> keys = detail::generate<B>(detail::permutation_keys{seed}, extents{m.dim()});
  return permutation<B>(argsort(keys));
}

/// The positions of every row rearranged by p: out[..., j] = a[..., p.order()[j]] (BSC: its d
/// bits).
template <model M, class X, backend B>
auto permute(const M& m, const X& a, const permutation<B>& p) {
  return detail::apply_permutation(m, a, p, false, "permute");
}
/// Undoes permute(m, a, p).
template <model M, class X, backend B>
auto unpermute(const M& m, const X& a, const permutation<B>& p) {
  return detail::apply_permutation(m, a, p, true, "unpermute");
}

/// Superposes the n rows along axis -2 of x (..., n, width) into (..., width), then normalises
/// as `o.norm` says (model_default: see normalization), breaking ties as `o.ties` says.
template <model M, class X>
auto bundle(const M& m, const X& x, const bundle_options& o = {}) {
  detail::bundle_shape(detail::checked_rows(m, x, "bundle"), M::name);
  return m.bundle(x, o);
}

/// The bundle's accumulator along axis -2, before any normalisation: the sum (MAP-I: in int64,
/// returned as int32), or for BSC the number of set bits at each of the d positions (int32).
template <model M, class X>
auto bundle_counts(const M& m, const X& x) {
  detail::bundle_shape(detail::checked_rows(m, x, "bundle_counts"), M::name, "bundle_counts");
  return m.bundle_counts(x);
}

/// Back onto the model's domain: sign (MAP-B, MAP-I), clip (MAP-C), unit phasors (FHRR), unit
/// L2 norm (HRR). A model whose vectors never leave its domain (BSC's bits, the modular family's
/// residues) defines no normalize member: the result is a copy.
template <model M, class X>
auto normalize(const M& m, const X& x) {
  detail::checked_rows(m, x, "normalize");
  if constexpr (requires { m.normalize(x); }) return m.normalize(x);
  else return eval(+x);
}

/// torchhd's hard_quantize: +1 where x > 0, else -1 (0 goes to -1), in x's real element type; the
/// bipolar vector nearest a MAP accumulator. Elementwise and lazy: it fuses into the statement.
template <class X>
auto hard_quantize(const X& x) {
  static_assert(expression<X> && std::is_floating_point_v<value_t<X>>,
                "fusor::vsa::hard_quantize: expects real (float or double) elements");
  using T = value_t<X>;
  return where(x > T(0), T(1), T(-1));
}
/// torchhd's soft_quantize: tanh(x), a differentiable stand-in for hard_quantize.
template <class X>
auto soft_quantize(const X& x) {
  static_assert(expression<X> && std::is_floating_point_v<value_t<X>>,
                "fusor::vsa::soft_quantize: expects real (float or double) elements");
  return tanh(x);
}

/// Binds the n rows along axis -2 into one: (..., n, width) -> (..., width).
template <model M, class X>
auto multibind(const M& m, const X& x) {
  const extents s = detail::checked_rows(m, x, "multibind");
  detail::bundle_shape(s, M::name, "multibind");
  return m.multibind(x);
}

namespace detail {
/// Row i of x (..., n, w) permuted by n - 1 - i: the positions of a sequence.
template <class M, class X>
auto positioned(const M& m, const X& x) {
  const auto xc = fusor::ext::contiguous_of(x);
  const auto v = xc.view();
  using T = value_t<decltype(v)>;
  using B = backend_of_t<decltype(v)>;
  array<T, B> r(v.shape());
  const index_t n = v.shape()[v.ndim() - 2];
  for (index_t i = 0; i < n; ++i) {
    auto dst = row_at(r.view(), i);
    dst = m.permute(row_at(v, i), n - 1 - i);
  }
  return r;
}
}  // namespace detail

/// A sequence as one vector by binding: the rows x_0 ... x_{n-1} along axis -2 bound as
/// permute(x_0, n-1) * permute(x_1, n-2) * ... * x_{n-1} (torchhd's bind_sequence).
template <model M, class X>
auto bind_sequence(const M& m, const X& x) {
  const extents s = detail::checked_rows(m, x, "bind_sequence");
  detail::bundle_shape(s, M::name, "bind_sequence");
  return m.multibind(detail::positioned(m, x));
}

/// A sequence as one vector by bundling: permute(x_0, n-1) + ... + x_{n-1}, normalised as bundle
/// (torchhd's bundle_sequence).
template <model M, class X>
auto bundle_sequence(const M& m, const X& x, const bundle_options& o = {}) {
  const extents s = detail::checked_rows(m, x, "bundle_sequence");
  detail::bundle_shape(s, M::name, "bundle_sequence");
  return m.bundle(detail::positioned(m, x), o);
}

/// x to the real power p (fractional power encoding): FHRR raises each phasor, HRR each
/// spectrum coefficient. bind of powers adds exponents: fractional_power(x, a) bound with
/// fractional_power(x, b) is fractional_power(x, a + b).
template <model M, class X>
  requires requires(const M& m, const X& x) { m.fractional_power(x, 1.0); }
auto fractional_power(const M& m, const X& x, double p) {
  detail::checked_rows(m, x, "fractional_power");
  return m.fractional_power(x, p);
}

/// The weighted superposition of items (N, width) for real weights (Q, N) or (N): sum_j w_qj x_j,
/// projected onto the model's domain, as (Q, width) (or (width)). One GEMM (BSC: on the bipolar
/// unpacked bits). A resonator's or an attention cleanup's update.
template <model M, class W, class X>
auto superpose(const M& m, const W& weights, const X& items) {
  static_assert(expression<W> && std::is_same_v<value_t<W>, float>, "fusor::vsa::superpose: the weights are float");
  const extents ws = expr_shape(fusor::ext::to_node(weights));
  const extents xs = detail::checked_rows(m, items, "superpose", "items");
  if (xs.size() != 2 || ws.size() < 1 || ws.size() > 2 || ws[ws.size() - 1] != xs[0])
    throw shape_error("fusor::vsa::superpose: expects weights (Q, N) or (N) for items (N, " + std::to_string(m.width()) +
                      "), got weights " + to_string(ws) + " and items " + to_string(xs));
  if (xs[0] == 0)
    throw value_error("fusor::vsa::superpose: needs at least one item, got items of shape " + to_string(xs) +
                      ": an empty superposition has no value");
  if (ws.size() == 1) {
    auto r = m.superpose(eval(+weights).reshape(extents{1, ws[0]}), items);
    return std::move(r).reshape(extents{m.width()});
  }
  return m.superpose(weights, items);
}

/// Similarities of queries q (Q, width) or (width) against items x (N, width) or (width): (Q, N)
/// (or (N), (Q), ()) in one pass, a GEMM for real and complex models and one XOR + popcount
/// sweep for BSC. The result is float.
template <model M, class X, class Y>
auto similarity(const M& m, const X& q, const Y& x, metric s = M::default_metric) {
  detail::checked_rows(m, q, "similarity", "queries");
  detail::checked_rows(m, x, "similarity", "items");
  return m.similarity(q, x, s);
}

}  // namespace fusor::vsa
