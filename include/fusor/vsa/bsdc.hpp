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
// position with none), ties broken by a fixed pseudo-random order of the positions (tie_break::first:
// it favours no input, where BSC's "first vector decides" would favour one) or a seeded one
// (tie_break::random). Similarity is the
// cosine of the bit vectors, |a & b| / sqrt(|a| |b|), in [0, 1]; dot and overlap count |a & b|,
// hamming is 1 - h / d. normalize thins a row to the density (Rachkovskij's normalisation).
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include "dense.hpp"
#include "modular.hpp"
#include "operations.hpp"
#include "packed.hpp"
#include "sparse_kernels.hpp"
#include "../core/ext.hpp"

namespace fusor::vsa {

namespace detail {

/// (Q, N) similarities of bit rows from one AND (XOR for hamming) + popcount pass: cosine
/// |a & b| / sqrt(|a| |b|) (0 where a row has no set bit), dot and overlap |a & b|, hamming 1 - h / d.
template <class M, class X, class Y>
auto sparse_similarity(const M& m, const X& q, const Y& x, metric s) {
  static_assert(std::is_same_v<backend_of_t<X>, backend_of_t<Y>>,
                "fusor::vsa::similarity: the queries and the items must live on the same backend");
  const auto qc = fusor::ext::contiguous_of(q);
  const auto xc = fusor::ext::contiguous_of(x);
  using B = backend_of_t<decltype(qc.view())>;
  const extents out = similarity_shape(qc.view().shape(), xc.view().shape(), "similarity");
  const auto qm = as_matrix(qc.view()), xm = as_matrix(xc.view());
  const index_t nq = qm.shape()[0], nx = xm.shape()[0], words = m.width();
  const array<std::int32_t, B> c =
      generate<B>(popcount_product{qm.data(), xm.data(), nx, words, s != metric::hamming}, extents{nq, nx});
  array<float, B> r;
  if (s == metric::hamming) {
    r = eval(1.0f - cast<float>(c) / float(m.bits()));
  } else if (s == metric::cosine) {
    const array<float, B> a = cast<float>(generate<B>(row_popcounts{qm.data(), words}, extents{nq, 1}));
    const array<float, B> b = cast<float>(generate<B>(row_popcounts{xm.data(), words}, extents{nx}));
    r = eval(cast<float>(c) / maximum(sqrt(a * b), 1.0f));  // no set bit: cosine 0 (c is 0)
  } else {
    r = eval(cast<float>(c));
  }
  return std::move(r).reshape(out);
}

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
    const double t = std::ldexp(p, 32);  // p in steps of 2^-32
    const auto threshold = std::uint32_t(t >= 4294967295.0 ? 4294967295.0 : t);
    return generate<B>(sparse_bits_draw{seed, first, width(), d, threshold}, extents{n, width()});
  }

  /// Context-dependent thinning of every row to about the density p (rows no denser are kept).
  template <class X>
  auto thin(const X& x) const {
    const auto xc = fusor::ext::contiguous_of(x);
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

  template <class X, class Y>
  auto similarity(const X& q, const Y& x, metric s) const {
    return sparse_similarity(static_cast<const M&>(*this), q, x, s);
  }

 private:
  /// Packed rows with the active() positions of largest positive score s (..., d) set, ties broken
  /// as ranked_keys does: the k-th largest key is the threshold, and no two keys of a row are equal.
  template <class S>
  auto strongest(const S& s, bool random_ties, std::uint64_t seed) const {
    const auto sc = fusor::ext::contiguous_of(s);
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
struct bsdc : detail::sparse_bits_model<bsdc>, detail::xor_binding<bsdc> {
  static constexpr std::string_view name = "BSDC";
  static constexpr bool self_inverse = true;
  static constexpr bool commutative = true;
  static constexpr bool exact_inverse = true;

  using sparse_bits_model::sparse_bits_model;
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

/// BSDC-SEG, segmented sparse codes (Laiho et al., 2015) in bit form: S segments of L bits with one
/// bit set in each (d = S L bits). Bound by shifting each segment of a by the position of b's bit
/// in it (the block-wise circular convolution of one-hot blocks): the same algebra as bsbc, whose
/// index form these are, so a bsdc_seg vector is bsbc's vector of the same seed in bits, and
/// every operation but similarity runs on the indices. Similarity counts agreeing segments by
/// AND + popcount. dim() is S, as bsbc's; permutations move whole segments.
///
/// HoloVec's BSDC-SEG binds by XOR, which leaves two bits (or none) in a segment; fusor keeps one.
struct bsdc_seg : detail::packed_bits<bsdc_seg> {
  using value_type = std::uint64_t;
  static constexpr std::string_view name = "BSDC-SEG";
  static constexpr bool self_inverse = false;
  static constexpr bool commutative = true;
  static constexpr bool exact_inverse = true;
  static constexpr metric default_metric = metric::cosine;  // the fraction of agreeing segments
  static constexpr double similarity_lo = 0.0, similarity_hi = 1.0;

  bsbc blocks;  // the index form: S blocks of size L

  bsdc_seg() = default;
  /// S segments of L bits (2 <= L <= 65536).
  explicit bsdc_seg(index_t segments, index_t length = bsbc::default_modulus)
      : packed_bits(checked_bits(segments, length)), blocks(segments, length) {}

  index_t dim() const { return blocks.dim(); }
  index_t segments() const { return blocks.dim(); }
  index_t length() const { return blocks.modulus(); }
  std::string row_layout() const {
    return std::to_string(segments()) + " segments of " + std::to_string(length()) + " bits in 64-bit words";
  }

  /// The active position of every segment, as bsbc's indices (..., S) (the lowest set bit; 0 for
  /// an empty segment).
  template <class X>
  auto to_indices(const X& x) const {
    const auto xc = fusor::ext::contiguous_of(x);
    using B = backend_of_t<decltype(xc.view())>;
    extents out = xc.view().shape();
    out[out.size() - 1] = segments();
    return detail::generate<B>(detail::segment_indices{xc.data(), width(), segments(), length()}, out);
  }
  /// One-hot segments from bsbc's indices (..., S).
  template <class X>
  auto from_indices(const X& idx) const {
    const auto ic = fusor::ext::contiguous_of(idx);
    using B = backend_of_t<decltype(ic.view())>;
    static_assert(std::is_same_v<value_t<decltype(ic.view())>, std::uint16_t>, "fusor::vsa::bsdc_seg: indices are uint16");
    extents out = ic.view().shape();
    if (out.size() == 0 || out[out.size() - 1] != segments())
      throw shape_error("fusor::vsa::bsdc_seg::from_indices: expects (..., " + std::to_string(segments()) +
                        ") segment indices, got shape " + to_string(out));
    out[out.size() - 1] = width();
    return detail::generate<B>(detail::segment_bits{ic.data(), width(), segments(), length()}, out);
  }

  template <class B>
  array<std::uint64_t, B> draw(index_t n, std::uint64_t seed, index_t first) const {
    return from_indices(vsa::random<B>(blocks, n, seed, first));
  }
  template <class B>
  array<std::uint64_t, B> identity(const extents& shape) const {
    extents s = shape;
    s[s.size() - 1] = segments();
    return from_indices(zeros<std::uint16_t, B>(s));
  }
  /// Every row in canonical form: one bit per segment (its lowest set bit; an empty segment gets
  /// its first bit).
  template <class X>
  auto canonical(const X& x) const {
    return from_indices(to_indices(x));
  }
  template <class X>
  auto normalize(const X& x) const {
    return canonical(x);
  }
  template <class X, class Y>
  auto bind(const X& a, const Y& b) const {
    return from_indices(blocks.bind(to_indices(a), to_indices(b)));
  }
  template <class X>
  auto inverse(const X& a, inverse_kind k) const {
    return from_indices(blocks.inverse(to_indices(a), k));
  }
  template <class X, class Y>
  auto unbind(const X& c, const Y& a, inverse_kind k) const {
    return from_indices(blocks.unbind(to_indices(c), to_indices(a), k));
  }
  /// Every segment's bit moved by L / 2: no segment agrees with a.
  template <class X>
  auto negative(const X& a) const {
    return from_indices(blocks.negative(to_indices(a)));
  }
  /// Whole segments rolled by `shift`.
  template <class X>
  auto permute(const X& a, index_t shift) const {
    return from_indices(blocks.permute(to_indices(a), shift));
  }
  /// Segments rearranged: output segment j is input segment order[j].
  template <class X, class I>
  auto permute_by(const X& a, const I& order) const {
    return from_indices(take(to_indices(a), order, -1));
  }
  template <class X>
  auto multibind(const X& x) const {
    return from_indices(blocks.multibind(to_indices(x)));
  }
  /// The most frequent position per segment (bsbc's mode, with its ties).
  template <class X>
  auto bundle(const X& x, const bundle_options& o) const {
    return from_indices(blocks.bundle(to_indices(x), o));
  }
  template <class W, class X>
  auto superpose(const W& weights, const X& items) const {
    return from_indices(blocks.superpose(weights, to_indices(items)));
  }
  template <class X, class Y>
  auto similarity(const X& q, const Y& x, metric s) const {
    return detail::sparse_similarity(*this, q, x, s);
  }

  static index_t checked_bits(index_t segments, index_t length) {
    if (segments < 1 || length < 2 || length > bsbc::max_modulus)
      throw value_error("fusor::vsa: a BSDC-SEG model needs S >= 1 segments of L in [2, " +
                        std::to_string(bsbc::max_modulus) + "] bits, got S = " + std::to_string(segments) +
                        ", L = " + std::to_string(length));
    return segments * length;
  }
};

}  // namespace fusor::vsa
