#pragma once
// BSC, Kanerva's Binary Spatter Codes, bit-packed: d bits per vector in ceil(d / 64) uint64
// words, bit j of a vector in bit j % 64 of word j / 64, the bits past d always 0. bind is XOR
// (self-inverse, exact, commutative), bundle the bitwise majority, permute a rotation of the d
// bits, and similarity counts differing bits with popcount: 64 dimensions per instruction, and
// a (Q, N) search is one blocked XOR+popcount pass.
#include <cstdint>
#include <string_view>
#include <vector>

#include "dense.hpp"
#include "kernels.hpp"

namespace fusor::vsa {

struct bsc {
  using value_type = std::uint64_t;
  static constexpr std::string_view name = "BSC";
  static constexpr bool self_inverse = true;
  static constexpr bool commutative = true;
  static constexpr bool exact_inverse = true;
  static constexpr metric default_metric = metric::hamming;
  static constexpr double similarity_lo = 0.0, similarity_hi = 1.0;  // hamming: 1 - h / d
  static constexpr index_t per_block = 2;  // two 64-bit words per Philox block

  index_t d = 64;

  bsc() = default;
  explicit bsc(index_t dim) : d(detail::checked_dim(dim, name)) {}
  index_t dim() const { return d; }
  index_t width() const { return (d + 63) / 64; }

  FUSOR_HD std::uint64_t element(const detail::philox_words& w, index_t col) const {
    const index_t q = col & 1;
    const std::uint64_t v = std::uint64_t(w[2 * q]) | (std::uint64_t(w[2 * q + 1]) << 32);
    return v & detail::valid_bits(col, (d + 63) / 64, d);
  }

  /// The valid bits of each word, as a (width) row on backend B.
  template <class B>
  array<std::uint64_t, B> valid_mask() const {
    std::vector<std::uint64_t> m(static_cast<std::size_t>(width()));
    for (index_t w = 0; w < width(); ++w) m[std::size_t(w)] = detail::valid_bits(w, width(), d);
    return array<std::uint64_t, B>(std::span<const std::uint64_t>(m), extents{width()});
  }

  /// Rows with the bits past d cleared (item memories apply it to rows from outside).
  template <class X>
  auto canonical(const X& x) const {
    return eval(x & valid_mask<backend_of_t<X>>());
  }

  template <class B>
  array<std::uint64_t, B> identity(const extents& shape) const {
    return zeros<std::uint64_t, B>(shape);
  }
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
  /// Every bit flipped (the bipolar negation): the vector least similar to a.
  template <class X>
  auto negative(const X& a) const {
    using B = backend_of_t<X>;
    return eval(a ^ valid_mask<B>());
  }
  template <class X>
  auto permute(const X& a, index_t shift) const {
    const auto ac = fusor::detail::contiguous_of(a);
    using B = backend_of_t<decltype(ac.view())>;
    const index_t s = ((shift % d) + d) % d;
    return detail::generate<B>(detail::bit_roll{ac.data(), width(), d, s}, ac.view().shape());
  }
  /// Bit j of every output row is bit order[j] of the input row (a permutation of the d bits).
  template <class X, class I>
  auto permute_by(const X& a, const I& order) const {
    const auto ac = fusor::detail::contiguous_of(a);
    using B = backend_of_t<decltype(ac.view())>;
    return detail::generate<B>(detail::bit_gather{ac.data(), order.data(), width(), d}, ac.view().shape());
  }
  /// XOR of the rows along axis -2.
  template <class X>
  auto multibind(const X& x) const {
    const auto xc = fusor::detail::contiguous_of(x);
    using B = backend_of_t<decltype(xc.view())>;
    detail::bundle_shape(xc.view().shape(), name, "multibind");
    const auto v = xc.view();
    array<std::uint64_t, B> r(detail::row_at(v, 0));
    for (index_t k = 1; k < v.shape()[v.ndim() - 2]; ++k) r = r ^ detail::row_at(v, k);
    return r;
  }
  /// The number of set bits at each of the d positions, summed along axis -2: (..., d) of int32.
  template <class X>
  auto bundle_counts(const X& x) const {
    const auto xc = fusor::detail::contiguous_of(x);
    using B = backend_of_t<decltype(xc.view())>;
    extents out = detail::bundle_shape(xc.view().shape(), name, "bundle_counts");
    const index_t n = xc.view().shape()[xc.view().ndim() - 2];
    out[out.size() - 1] = d;
    return detail::generate<B>(detail::bit_counts{xc.data(), n, width(), d}, out);
  }
  template <class X>
  auto bundle(const X& x, const bundle_options& o) const {
    if (o.norm == normalization::none)
      throw value_error("fusor::vsa::bundle: BSC vectors are bits and cannot hold a sum (normalization::none); "
                        "use bundle_counts for the per-bit counts");
    const auto xc = fusor::detail::contiguous_of(x);
    using B = backend_of_t<decltype(xc.view())>;
    const extents out = detail::bundle_shape(xc.view().shape(), name);
    const index_t n = xc.view().shape()[xc.view().ndim() - 2];
    return detail::generate<B>(
        detail::bit_majority{xc.data(), n, width(), d, o.ties == tie_break::random, o.seed}, out);
  }
  template <class X>
  auto normalize(const X& x) const {
    return eval(+x);
  }
  /// The weighted superposition of items (N, words) for weights (Q, N): the sign of the weighted
  /// sum of the bipolar vectors (a weighted majority), packed. One GEMM on the unpacked items.
  template <class W, class X>
  auto superpose(const W& weights, const X& items) const {
    using B = backend_of_t<X>;
    const array<float, B> bipolar = 1.0f - 2.0f * cast<float>(unpack(items));
    const array<float, B> s = matmul(weights, bipolar);
    return pack(eval(s < 0.0f));
  }
  /// (Q, N) similarities from one XOR (AND for overlap) + popcount pass.
  template <class X, class Y>
  auto similarity(const X& q, const Y& x, metric s) const {
    static_assert(std::is_same_v<backend_of_t<X>, backend_of_t<Y>>,
                  "fusor::vsa::similarity: the queries and the items must live on the same backend");
    const auto qc = fusor::detail::contiguous_of(q);
    const auto xc = fusor::detail::contiguous_of(x);
    using B = backend_of_t<decltype(qc.view())>;
    const extents out = detail::similarity_shape(qc.view().shape(), xc.view().shape(), "similarity");
    const auto qm = detail::as_matrix(qc.view()), xm = detail::as_matrix(xc.view());
    const array<std::int32_t, B> c = detail::generate<B>(
        detail::popcount_product{qm.data(), xm.data(), xm.shape()[0], width(), s == metric::overlap},
        extents{qm.shape()[0], xm.shape()[0]});
    const float fd = float(d);
    array<float, B> r;
    switch (s) {
      case metric::hamming: r = eval(1.0f - cast<float>(c) / fd); break;
      case metric::cosine: r = eval(1.0f - 2.0f * cast<float>(c) / fd); break;
      case metric::dot: r = eval(fd - 2.0f * cast<float>(c)); break;
      default: r = eval(cast<float>(c)); break;
    }
    return std::move(r).reshape(out);
  }

  /// The bits as (..., d) uint8 zeros and ones.
  template <class X>
  auto unpack(const X& x) const {
    detail::check_rows(*this, expr_shape(fusor::detail::to_node(x)), "unpack");
    const auto xc = fusor::detail::contiguous_of(x);
    using B = backend_of_t<decltype(xc.view())>;
    extents out = xc.view().shape();
    out[out.size() - 1] = d;
    return detail::generate<B>(detail::bit_unpack{xc.data(), width(), d}, out);
  }
  /// (..., d) elements (non-zero: bit set) packed into (..., width) words.
  template <class X>
  auto pack(const X& bits) const {
    const auto bc = fusor::detail::contiguous_of(bits);
    using B = backend_of_t<decltype(bc.view())>;
    using T = value_t<decltype(bc.view())>;
    extents out = bc.view().shape();
    if (out.size() == 0 || out[out.size() - 1] != d)
      throw shape_error("fusor::vsa::pack: expects (..., " + std::to_string(d) + ") elements for BSC of dimension " +
                        std::to_string(d) + ", got shape " + to_string(out));
    out[out.size() - 1] = width();
    return detail::generate<B>(detail::bit_pack<T>{bc.data(), width(), d}, out);
  }
};

}  // namespace fusor::vsa
