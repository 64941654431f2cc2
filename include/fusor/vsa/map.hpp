#pragma once
// MAP, Gayler's Multiply-Add-Permute, in the three variants of Schlegel et al. (2022):
//   MAP-B  bipolar {-1, +1} floats; bundle is the sign of the sum (ties broken, see tie_break);
//   MAP-I  bipolar integers (int32) that bundle into integer sums (no normalisation);
//   MAP-C  real values uniform in [-1, 1); bundle clips the sum to [-1, 1].
// bind is the elementwise product (self-inverse and exact for bipolar vectors; for MAP-C
// bind(bind(a, b), b) = a * b^2, so unbinding only approximates), permute is np.roll.
// Similarity is the cosine (or dot) of the rows, one GEMM for a batch.
#include <cstdint>
#include <string_view>

#include "dense.hpp"
#include "kernels.hpp"
#include "../core/ext.hpp"

namespace fusor::vsa {

namespace detail {
enum class map_kind { bipolar, integer, continuous };
}

template <class T, detail::map_kind Kind>
struct map_model : detail::dense_model<map_model<T, Kind>> {
  using value_type = T;
  static constexpr std::string_view name =
      Kind == detail::map_kind::bipolar ? "MAP-B" : Kind == detail::map_kind::integer ? "MAP-I" : "MAP-C";
  static constexpr bool self_inverse = true;
  static constexpr bool commutative = true;
  static constexpr bool exact_inverse = Kind != detail::map_kind::continuous;
  static constexpr metric default_metric = metric::cosine;
  static constexpr double similarity_lo = -1.0, similarity_hi = 1.0;
  /// Elements per Philox block: one bit each for bipolar vectors (bit 1 is -1, so a MAP-B vector
  /// and a BSC vector from the same seed are the same random bits), 24 bits for MAP-C.
  static constexpr index_t per_block = Kind == detail::map_kind::continuous ? 4 : 128;

  using detail::dense_model<map_model>::dense_model;

  FUSOR_HD T element(const detail::philox_words& w, index_t col) const {
    if constexpr (Kind == detail::map_kind::continuous) {
      return T(2.0f * fusor::random::detail::unit_float(w[col & 3]) - 1.0f);
    } else {
      const index_t j = col & 127;
      return bipolar(w[j / 32], int(j % 32));
    }
  }
  /// A whole block of bipolar elements, element(w, c) for c = 0 .. 127 (row_draw's fast path).
  FUSOR_HD void fill_block(const detail::philox_words& w, T* out) const
    requires(Kind != detail::map_kind::continuous)
  {
    for (int q = 0; q < 4; ++q)
      for (int j = 0; j < 32; ++j) out[32 * q + j] = bipolar(w[std::size_t(q)], j);
  }
  /// Bit j of a word as +1 (clear) or -1 (set); arithmetic, not a branch: the bit is random, a
  /// branch mispredicts.
  FUSOR_HD static T bipolar(std::uint32_t word, int j) { return T(1 - 2 * std::int32_t((word >> j) & 1u)); }

  template <class B>
  array<T, B> identity(const extents& shape) const {
    return ones<T, B>(shape);
  }
  template <class X, class Y>
  auto bind(const X& a, const Y& b) const {
    return eval(a * b);
  }
  template <class X>
  auto inverse(const X& a, inverse_kind) const {
    return eval(+a);
  }
  template <class X, class Y>
  auto unbind(const X& c, const Y& a, inverse_kind) const {
    return eval(c * a);
  }
  /// Along axis -2: the product of the rows.
  template <class X>
  auto multibind(const X& x) const {
    return eval(cast<T>(prod(x, -2)));
  }
  /// The sum along axis -2 (MAP-I sums in int64, returned as int32 like its vectors).
  template <class X>
  auto bundle_counts(const X& x) const {
    return eval(cast<T>(sum(x, -2)));
  }
  template <class X>
  auto bundle(const X& x, const bundle_options& o) const {
    const auto xc = fusor::ext::contiguous_of(x);
    using B = backend_of_t<decltype(xc.view())>;
    const extents out_shape = detail::bundle_shape(xc.view().shape(), name);
    array<T, B> s = bundle_counts(xc.view());
    normalization n = o.norm;
    if (n == normalization::model_default)
      n = Kind == detail::map_kind::integer ? normalization::none : normalization::project;
    if (n == normalization::none) return s;
    if constexpr (Kind == detail::map_kind::continuous) {
      s = clip(s, T(-1), T(1));
    } else if (o.ties == tie_break::random) {
      const map_model<T, detail::map_kind::bipolar> coin(this->d);
      const array<T, B> t = detail::generate<B>(detail::row_draw<decltype(coin)>{coin, o.seed, 0, this->d}, out_shape);
      s = where(s > T(0), T(1), where(s < T(0), T(-1), t));
    } else {
      s = where(s > T(0), T(1), where(s < T(0), T(-1), detail::first_row(xc.view())));
    }
    return s;
  }
  /// Back onto the model's domain: sign (0 stays 0: no tie to break without the operands) for
  /// MAP-B and MAP-I, clip to [-1, 1] for MAP-C.
  template <class X>
  auto normalize(const X& x) const {
    if constexpr (Kind == detail::map_kind::continuous) return eval(clip(x, T(-1), T(1)));
    else return eval(cast<T>(sign(x)));
  }
  /// The weighted superposition sum_j w_qj x_j of items x (N, d) for weights (Q, N), projected
  /// onto the domain (sign, or clip for MAP-C): one GEMM. Resonators and attention use it.
  template <class W, class X>
  auto superpose(const W& weights, const X& items) const {
    using B = backend_of_t<X>;
    const array<float, B> s = matmul(weights, cast<float>(items));
    if constexpr (Kind == detail::map_kind::continuous) return array<T, B>(clip(s, -1.0f, 1.0f));
    else return array<T, B>(cast<T>(where(s < 0.0f, -1.0f, 1.0f)));
  }
  template <class X, class Y>
  auto similarity(const X& q, const Y& x, metric s) const {
    if constexpr (std::is_integral_v<T>)
      return detail::dense_similarity(cast<float>(q), cast<float>(x), s, name);
    else
      return detail::dense_similarity(q, x, s, name);
  }
};

/// MAP with bipolar float vectors (bundle: sign of the sum).
using map_b = map_model<float, detail::map_kind::bipolar>;
/// MAP with bipolar int32 vectors that bundle into integer sums.
using map_i = map_model<std::int32_t, detail::map_kind::integer>;
/// MAP with real vectors uniform in [-1, 1) (bundle: sum clipped to [-1, 1]).
using map_c = map_model<float, detail::map_kind::continuous>;
/// MAP-B over float16 or bfloat16 rows: ±1 is exact in both, so rows, binds and projected bundles
/// are float32's bit for bit; the sums of bundle_counts are rounded to the type (exact up to 2048
/// in float16, 256 in bfloat16; their signs always are).
template <class T>
using map_b_of = map_model<T, detail::map_kind::bipolar>;
/// MAP-C over float16 or bfloat16 rows (drawn in float32 and rounded; products and bundles
/// computed in float32 and rounded once; similarity through the half GEMM).
template <class T>
using map_c_of = map_model<T, detail::map_kind::continuous>;

}  // namespace fusor::vsa
