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
#include "packed.hpp"
#include "../core/ext.hpp"

namespace fusor::vsa {

struct bsc : detail::packed_bits<bsc>, detail::xor_binding<bsc> {
  using value_type = std::uint64_t;
  static constexpr std::string_view name = "BSC";
  static constexpr bool self_inverse = true;
  static constexpr bool commutative = true;
  static constexpr bool exact_inverse = true;
  static constexpr metric default_metric = metric::hamming;
  static constexpr double similarity_lo = 0.0, similarity_hi = 1.0;  // hamming: 1 - h / d
  static constexpr index_t per_block = 2;  // two 64-bit words per Philox block

  using packed_bits::packed_bits;

  FUSOR_HD std::uint64_t element(const detail::philox_words& w, index_t col) const {
    const index_t q = col & 1;
    const std::uint64_t v = std::uint64_t(w[2 * q]) | (std::uint64_t(w[2 * q + 1]) << 32);
    return v & detail::valid_bits(col, (d + 63) / 64, d);
  }

  template <class X>
  auto bundle(const X& x, const bundle_options& o) const {
    if (o.norm == normalization::none)
      throw value_error("fusor::vsa::bundle: BSC vectors are bits and cannot hold a sum (normalization::none); "
                        "use bundle_counts for the per-bit counts");
    const auto xc = fusor::ext::contiguous_of(x);
    using B = backend_of_t<decltype(xc.view())>;
    const extents out = detail::bundle_shape(xc.view().shape(), name);
    const index_t n = xc.view().shape()[xc.view().ndim() - 2];
    return detail::generate<B>(
        detail::bit_majority{xc.data(), n, width(), d, o.ties == tie_break::random, o.seed}, out);
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
    const auto qc = fusor::ext::contiguous_of(q);
    const auto xc = fusor::ext::contiguous_of(x);
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

};

}  // namespace fusor::vsa
