#pragma once
// Models over integers modulo q, one per element:
//   MCR   Snaider and Franklin's Modular Composite Representation: element k stands for the
//         phasor e^{2 pi i k / q} (a discretised FHRR); bundle sums the phasors and rounds the
//         angle back to the nearest of the q values. uint8 elements, 2 <= q <= 256.
//   CGR   the Cyclic Group Representation (Yu et al., 2022): MCR's algebra with bundling by the
//         elementwise mode (the most frequent value). uint8 elements, 2 <= q <= 256.
//   BSBC  binary sparse block codes in index form (Laiho et al., 2015; torchhd's BSBC, also
//         called SBC): d blocks of L = q positions with one active position each, stored as its
//         index. Binding (block-wise circular convolution of one-hot blocks) adds the indices
//         modulo L; bundling takes the most frequent index per block (the argmax of the summed
//         one-hot blocks); similarity counts the blocks that agree. uint16 elements, L <= 65536.
//         The one-hot vector has d * L dimensions; dim() is d, the number of blocks.
// All three bind by addition modulo q (commutative, exact, the inverse is -a mod q), permute by
// np.roll, and draw elements uniformly from [0, q). The (Q, N) similarity is one sweep over the
// pairs, one vectorised loop per pair (a modular distance is not bilinear, so there is no GEMM).
#include <cstdint>
#include <limits>
#include <numbers>
#include <string>
#include <string_view>
#include <vector>

#include "dense.hpp"
#include "modular_kernels.hpp"
#include "../core/ext.hpp"

namespace fusor::vsa {

namespace detail {
enum class modular_kind { mcr, cgr, block };
}

template <class T, detail::modular_kind Kind>
struct modular_model {
  using value_type = T;
  static constexpr std::string_view name =
      Kind == detail::modular_kind::mcr ? "MCR" : Kind == detail::modular_kind::cgr ? "CGR" : "BSBC";
  static constexpr bool self_inverse = false;  // only for q = 2
  static constexpr bool commutative = true;
  static constexpr bool exact_inverse = true;
  static constexpr bool block_code = Kind == detail::modular_kind::block;
  /// MCR and CGR: the scaled modular Manhattan similarity in [-1, 1] (torchhd's); block codes: the
  /// fraction of agreeing blocks, the cosine of the one-hot vectors, in [0, 1].
  static constexpr metric default_metric = block_code ? metric::hamming : metric::cosine;
  static constexpr double similarity_lo = block_code ? 0.0 : -1.0, similarity_hi = 1.0;
  static constexpr index_t per_block = 4;  // four elements per Philox block
  static constexpr index_t max_modulus = index_t(std::numeric_limits<T>::max()) + 1;
  static constexpr index_t default_modulus = block_code ? 64 : 16;

  index_t d = 1;
  std::int32_t q = std::int32_t(default_modulus);

  modular_model() = default;
  /// d elements (blocks) modulo q (the block size of a block code).
  explicit modular_model(index_t dim, index_t modulus = default_modulus)
      : d(detail::checked_dim(dim, name)), q(checked_modulus(modulus)) {}
  index_t dim() const { return d; }
  index_t width() const { return d; }
  /// q: the number of values an element takes (a block code's block size).
  index_t modulus() const { return q; }

  static std::int32_t checked_modulus(index_t q) {
    if (q < 2 || q > max_modulus)
      throw value_error("fusor::vsa: a " + std::string(name) + " model needs " +
                        std::string(block_code ? "a block size" : "a modulus") + " q in [2, " +
                        std::to_string(max_modulus) + "], got q = " + std::to_string(q));
    return std::int32_t(q);
  }

  /// Elements reduced modulo q (item memories apply it to rows from outside: a file saved under
  /// another q, the caller's array). Every operation keeps elements in [0, q); on elements outside
  /// it the results are unspecified (but no kernel reads out of bounds: the votes reduce them).
  template <class X>
  auto canonical(const X& x) const {
    return eval(cast<T>(cast<std::int32_t>(x) % q));
  }

  FUSOR_HD T element(const detail::philox_words& w, index_t col) const {
    return T(detail::below(w[col & 3], std::uint32_t(q)));
  }

  template <class B>
  array<T, B> identity(const extents& shape) const {
    return zeros<T, B>(shape);
  }
  /// (a + b) mod q, in int32 so no element type overflows.
  template <class X, class Y>
  auto bind(const X& a, const Y& b) const {
    const auto s = cast<std::int32_t>(a) + cast<std::int32_t>(b);
    return eval(cast<T>(where(s >= q, s - q, s)));
  }
  template <class X>
  auto inverse(const X& a, inverse_kind) const {
    const auto v = cast<std::int32_t>(a);
    return eval(cast<T>(where(v == 0, 0, q - v)));
  }
  /// (c - a) mod q: recovers b from c = bind(b, a).
  template <class X, class Y>
  auto unbind(const X& c, const Y& a, inverse_kind) const {
    const auto s = cast<std::int32_t>(c) - cast<std::int32_t>(a);
    return eval(cast<T>(where(s < 0, s + q, s)));
  }
  /// a + floor(q / 2) mod q: the opposite phasor (MCR, CGR: similarity -1 for even q); a block
  /// code's blocks then all disagree (similarity 0, its minimum).
  template <class X>
  auto negative(const X& a) const {
    const auto s = cast<std::int32_t>(a) + q / 2;
    return eval(cast<T>(where(s >= q, s - q, s)));
  }
  template <class X>
  auto permute(const X& a, index_t shift) const {
    return roll(a, shift, -1);
  }
  /// The sum of the rows along axis -2, modulo q.
  template <class X>
  auto multibind(const X& x) const {
    return eval(cast<T>(sum(cast<std::int64_t>(x), -2) % std::int64_t(q)));
  }
  /// The accumulator, before the vote: MCR the sum of the rows' phasors (complex<float>,
  /// (..., d)); CGR and block codes how many rows hold each value ((..., d, q) of int32).
  template <class X>
  auto bundle_counts(const X& x) const {
    const auto xc = fusor::ext::contiguous_of(x);
    using B = backend_of_t<decltype(xc.view())>;
    if constexpr (Kind == detail::modular_kind::mcr) {
      const float step = float(2.0 * std::numbers::pi / double(q));
      return detail::complex_row_sum(cis(cast<float>(xc.view()) * step));
    } else {
      extents out = detail::bundle_shape(xc.view().shape(), name, "bundle_counts");
      const index_t n = xc.view().shape()[xc.view().ndim() - 2];
      out.push_back(q);
      return detail::generate<B>(detail::value_counts<T>{xc.data(), n, d, q}, out);
    }
  }
  template <class X>
  auto bundle(const X& x, const bundle_options& o) const {
    if (o.norm == normalization::none)
      throw value_error("fusor::vsa::bundle: " + std::string(name) +
                        " vectors are integers modulo q and cannot hold a sum (normalization::none); use "
                        "bundle_counts for the accumulator");
    const auto xc = fusor::ext::contiguous_of(x);
    using B = backend_of_t<decltype(xc.view())>;
    const extents out = detail::bundle_shape(xc.view().shape(), name);
    const index_t n = xc.view().shape()[xc.view().ndim() - 2];
    return vote<B>(xc.data(), nullptr, n, n * d, out, o.ties == tie_break::random, o.seed);
  }
  /// The weighted vote of items (N, d) under weights (Q, N): MCR the value nearest the weighted
  /// phasor sum, CGR and block codes the value of largest total weight. Resonators and attention
  /// cleanup use it.
  template <class W, class X>
  auto superpose(const W& weights, const X& items) const {
    using B = backend_of_t<X>;
    const auto wc = fusor::ext::contiguous_of(weights);
    const auto xc = fusor::ext::contiguous_of(items);
    const index_t nq = wc.view().shape()[0], n = xc.view().shape()[0];
    return vote<B>(xc.data(), wc.data(), n, 0, extents{nq, d}, false, 0);
  }
  /// (Q, N) in one sweep: cosine and dot from the modular distances, hamming and overlap from the
  /// equal elements (block codes: cosine is hamming and dot is overlap, the one-hot measures).
  template <class X, class Y>
  auto similarity(const X& qr, const Y& x, metric s) const {
    static_assert(std::is_same_v<backend_of_t<X>, backend_of_t<Y>>,
                  "fusor::vsa::similarity: the queries and the items must live on the same backend");
    const auto qc = fusor::ext::contiguous_of(qr);
    const auto xc = fusor::ext::contiguous_of(x);
    using B = backend_of_t<decltype(qc.view())>;
    const extents out = detail::similarity_shape(qc.view().shape(), xc.view().shape(), "similarity");
    const auto qm = detail::as_matrix(qc.view()), xm = detail::as_matrix(xc.view());
    detail::modular_measure how = detail::modular_measure::cosine;
    switch (s) {
      case metric::cosine: how = block_code ? detail::modular_measure::hamming : detail::modular_measure::cosine; break;
      case metric::dot: how = block_code ? detail::modular_measure::overlap : detail::modular_measure::dot; break;
      case metric::hamming: how = detail::modular_measure::hamming; break;
      default: how = detail::modular_measure::overlap; break;
    }
    array<float, B> r = detail::generate<B>(detail::modular_similarity<T>{qm.data(), xm.data(), xm.shape()[0], d, q, how},
                                            extents{qm.shape()[0], xm.shape()[0]});
    return std::move(r).reshape(out);
  }
  /// The elements as unit phasors e^{2 pi i k / q} (FHRR vectors of the same dimension).
  template <class X>
  auto phasors(const X& x) const {
    detail::check_rows(*this, expr_shape(fusor::ext::to_node(x)), "phasors");
    return eval(cis(cast<float>(x) * float(2.0 * std::numbers::pi / double(q))));
  }

 private:
  /// The vote of bundle (group_stride n * d: each group its own rows) and superpose (weights,
  /// group_stride 0: every group the same items) into `out`.
  template <class B>
  array<T, B> vote(const T* rows, const float* weights, index_t n, index_t group_stride, const extents& out,
                   bool random_ties, std::uint64_t seed) const {
    constexpr bool phasor = Kind == detail::modular_kind::mcr;
    const array<double, B> table = phasor ? phasor_table<B>() : array<double, B>(extents{0});
    return detail::generate<B>(
        detail::modular_vote<T>{rows, weights, table.data(), n, d, group_stride, q, phasor, random_ties, seed}, out);
  }
  /// cos(2 pi k / q) then sin(2 pi k / q) for k < q, computed once on the host in double so every
  /// backend votes with the same numbers.
  template <class B>
  array<double, B> phasor_table() const {
    std::vector<double> t(static_cast<std::size_t>(2 * q));
    for (std::int32_t k = 0; k < q; ++k) {
      const double a = 2.0 * std::numbers::pi * double(k) / double(q);
      t[std::size_t(k)] = std::cos(a);
      t[std::size_t(q + k)] = std::sin(a);
    }
    return array<double, B>(std::span<const double>(t), extents{2 * q});
  }
};

/// Modular Composite Representation: uint8 elements modulo q (default 16), phasor bundling.
using mcr = modular_model<std::uint8_t, detail::modular_kind::mcr>;
/// Cyclic Group Representation: uint8 elements modulo q (default 16), bundling by the mode.
using cgr = modular_model<std::uint8_t, detail::modular_kind::cgr>;
/// Binary sparse block codes in index form: d blocks of size L (default 64), uint16 indices.
using bsbc = modular_model<std::uint16_t, detail::modular_kind::block>;

}  // namespace fusor::vsa
