#pragma once
// BSDC, binary sparse distributed codes (Rachkovskij and Kussul, 2001; Kanerva), bit-packed as
// BSC's: each bit is set with a small probability p (by default 1/sqrt(d), HoloVec's choice). Two
// bindings, two types:
//   bsdc      XOR, as HoloVec binds them: self-inverse and exact, but the density of a bound
//             vector is 2p(1 - p), about twice p;
//   bsdc_cdt  context-dependent thinning of the superposition: bind(a, b) = thin(a | b), a subset of
//             a | b of about density p. Similar to each operand (so it keeps the structure of
//             similar inputs), commutative, and not invertible: there is no unbind.
// Both bundle by a density-keeping vote: the k = round(p d) positions with the most votes (never a
// position with none), ties to the lower position or to a seeded Philox draw. Similarity is the
// cosine of the bit vectors, |a & b| / sqrt(|a| |b|), in [0, 1]; dot and overlap count |a & b|,
// hamming is 1 - h / d. normalize thins a row to the density (Rachkovskij's normalisation).
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include "dense.hpp"
#include "packed.hpp"
#include "sparse_kernels.hpp"

namespace fusor::vsa {

namespace detail {

template <class M>
struct sparse_bits_model : packed_bits<M> {
  using value_type = std::uint64_t;
  static constexpr metric default_metric = metric::cosine;
  static constexpr double similarity_lo = 0.0, similarity_hi = 1.0;
  using packed_bits<M>::d;
  using packed_bits<M>::width;

  double p = 0.125;               // the density: the probability of a set bit
  std::uint64_t thinning_seed = 0;  // picks the shifts of the thinning rotations

  sparse_bits_model() = default;
  /// d bits of density p in (0, 1); p = 0 picks 1/sqrt(d).
  explicit sparse_bits_model(index_t dim, double density = 0.0, std::uint64_t thin_seed = 0)
      : packed_bits<M>(dim), p(checked_density(density, dim)), thinning_seed(thin_seed) {}

  double density() const { return p; }
  /// The number of set bits a bundle keeps: round(p d), at least 1.
  index_t active() const {
    const auto k = index_t(std::llround(p * double(d)));
    return k < 1 ? 1 : k;
  }

  static double checked_density(double density, index_t dim) {
    if (density == 0.0) return 1.0 / std::sqrt(double(dim < 1 ? 1 : dim));
    if (!(density > 0.0 && density < 1.0))
      throw value_error("fusor::vsa: a " + std::string(M::name) + " model needs a density p in (0, 1) (or 0 for " +
                        "1/sqrt(d)), got " + std::to_string(density));
    return density;
  }

  template <class B>
  array<std::uint64_t, B> draw(index_t n, std::uint64_t seed, index_t first) const {
    const double t = std::ldexp(p, 32);
    const auto threshold = std::uint32_t(t >= 4294967295.0 ? 4294967295.0 : t);
    return generate<B>(sparse_bits_draw{seed, first, width(), d, threshold}, extents{n, width()});
  }

  /// Context-dependent thinning of every row to about the density p (rows no denser are kept).
  template <class X>
  auto thin(const X& x) const {
    const auto xc = fusor::detail::contiguous_of(x);
    using B = backend_of_t<decltype(xc.view())>;
    const index_t rows = xc.view().size() / width();
    const array<std::int32_t, B> ones = generate<B>(row_popcounts{xc.data(), width()}, extents{rows});
    return generate<B>(cdt_thin{xc.data(), ones.data(), width(), d, p, thinning_seed}, xc.view().shape());
  }
  template <class X>
  auto normalize(const X& x) const {
    return thin(x);
  }

  template <class X>
  auto bundle(const X& x, const bundle_options& o) const {
    if (o.norm == normalization::none)
      throw value_error("fusor::vsa::bundle: " + std::string(M::name) + " vectors are bits and cannot hold a sum "
                        "(normalization::none); use bundle_counts for the per-bit counts");
    return strongest(this->bundle_counts(x), o.ties == tie_break::random, o.seed);
  }
  /// The weighted vote of items (N, words) for weights (Q, N): the k positions of largest positive
  /// weighted sum (one GEMM on the unpacked bits).
  template <class W, class X>
  auto superpose(const W& weights, const X& items) const {
    using B = backend_of_t<X>;
    const array<float, B> s = matmul(weights, cast<float>(this->unpack(items)));
    return strongest(s, false, 0);
  }

  /// (Q, N) similarities from one AND (XOR for hamming) + popcount pass.
  template <class X, class Y>
  auto similarity(const X& q, const Y& x, metric s) const {
    static_assert(std::is_same_v<backend_of_t<X>, backend_of_t<Y>>,
                  "fusor::vsa::similarity: the queries and the items must live on the same backend");
    const auto qc = fusor::detail::contiguous_of(q);
    const auto xc = fusor::detail::contiguous_of(x);
    using B = backend_of_t<decltype(qc.view())>;
    const extents out = similarity_shape(qc.view().shape(), xc.view().shape(), "similarity");
    const auto qm = as_matrix(qc.view()), xm = as_matrix(xc.view());
    const index_t nq = qm.shape()[0], nx = xm.shape()[0];
    const array<std::int32_t, B> c = generate<B>(
        popcount_product{qm.data(), xm.data(), nx, width(), s != metric::hamming}, extents{nq, nx});
    array<float, B> r;
    if (s == metric::hamming) {
      r = eval(1.0f - cast<float>(c) / float(d));
    } else if (s == metric::cosine) {
      const array<float, B> a = cast<float>(generate<B>(row_popcounts{qm.data(), width()}, extents{nq, 1}));
      const array<float, B> b = cast<float>(generate<B>(row_popcounts{xm.data(), width()}, extents{nx}));
      r = eval(cast<float>(c) / maximum(sqrt(a * b), 1.0f));  // no set bit: cosine 0 (c is 0)
    } else {
      r = eval(cast<float>(c));
    }
    return std::move(r).reshape(out);
  }

 private:
  /// Packed rows with the active() positions of largest positive score s (..., d) set, ties broken
  /// by position or by Philox: the k-th largest key is the threshold, every key unique.
  template <class S>
  auto strongest(const S& s, bool random_ties, std::uint64_t seed) const {
    const auto sc = fusor::detail::contiguous_of(s);
    using B = backend_of_t<decltype(sc.view())>;
    using T = value_t<decltype(sc.view())>;
    extents shape = sc.view().shape();
    const index_t rows = sc.view().size() / d, k = active() < d ? active() : d;
    const array<std::uint64_t, B> keys =
        generate<B>(ranked_keys<T>{sc.data(), d, random_ties, seed}, extents{rows, d});
    const auto top = topk(keys, k, -1);
    const auto flat = reshape(sc.view(), extents{rows, d});
    const array<bool, B> keep = keys >= top.values(all, range(k - 1, k)) && flat > T(0);
    auto packed = this->pack(keep);
    shape[shape.size() - 1] = width();
    return std::move(packed).reshape(shape);
  }
};

}  // namespace detail

/// BSDC bound by XOR (HoloVec's BSDC).
struct bsdc : detail::sparse_bits_model<bsdc> {
  static constexpr std::string_view name = "BSDC";
  static constexpr bool self_inverse = true;
  static constexpr bool commutative = true;
  static constexpr bool exact_inverse = true;

  using sparse_bits_model::sparse_bits_model;

  template <class X, class Y>
  auto bind(const X& a, const Y& b) const {
    return eval(a ^ b);
  }
  template <class X>
  auto inverse(const X& a, inverse_kind) const {
    return eval(+a);
  }
  template <class X, class Y>
  auto unbind(const X& c, const Y& a, inverse_kind) const {
    return eval(c ^ a);
  }
  /// XOR of the rows along axis -2.
  template <class X>
  auto multibind(const X& x) const {
    return this->fold_rows(x, false);
  }
};

/// BSDC bound by context-dependent thinning (Rachkovskij and Kussul): not invertible.
struct bsdc_cdt : detail::sparse_bits_model<bsdc_cdt> {
  static constexpr std::string_view name = "BSDC-CDT";
  static constexpr bool self_inverse = false;
  static constexpr bool commutative = true;
  static constexpr bool exact_inverse = false;

  using sparse_bits_model::sparse_bits_model;

  /// thin(a | b): similar to both a and b, about density p.
  template <class X, class Y>
  auto bind(const X& a, const Y& b) const {
    return thin(eval(a | b));
  }
  /// thin(the OR of the rows along axis -2): Rachkovskij's thinning of several inputs at once.
  template <class X>
  auto multibind(const X& x) const {
    return thin(this->fold_rows(x, true));
  }
};

}  // namespace fusor::vsa
