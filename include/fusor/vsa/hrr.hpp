#pragma once
// HRR, Plate's Holographic Reduced Representations: d reals drawn from N(0, 1/d). bind is
// circular convolution, computed as irfft(rfft(a) * rfft(b)) along the rows (one batched FFT
// call per operand, O(d log d)); unbind uses Plate's approximate inverse, the involution
// x[-i mod d] (circular correlation), or on request the exact inverse, the division of spectra
// (exact for vectors with no zero in their spectrum, unstable near one). Similarity is the cosine.
// hrr holds float32 rows; hrr_of<float16> and hrr_of<bfloat16> hold 16-bit rows, drawn in float32
// and rounded, bound through float32 transforms (fft of 16-bit data is float32) and rounded once,
// bundled with float32 accumulation, compared through the half GEMM.
#include <cmath>
#include <numbers>
#include <string_view>

#include "../fft/transforms.hpp"
#include "dense.hpp"
#include "kernels.hpp"
#include "../core/ext.hpp"

namespace fusor::vsa {

template <class T>
struct hrr_of : detail::unit_rows_model<hrr_of<T>> {
  static_assert(std::is_same_v<T, float> || fusor::ext::small_float_v<T>,
                "fusor: HRR rows are float, float16 or bfloat16");
  using value_type = T;
  static constexpr std::string_view name = "HRR";
  static constexpr bool self_inverse = false;
  static constexpr bool commutative = true;
  static constexpr bool exact_inverse = false;  // the default inverse is the approximate one
  static constexpr metric default_metric = metric::cosine;
  static constexpr double similarity_lo = -1.0, similarity_hi = 1.0;

  using detail::unit_rows_model<hrr_of<T>>::unit_rows_model;
  using detail::unit_rows_model<hrr_of<T>>::d;

  /// Rows first .. first + n - 1 of the random vectors of `seed`: N(0, 1/d) by Box-Muller on
  /// Philox uniforms (in float32; rounded to T once).
  template <class B>
  array<T, B> draw(index_t n, std::uint64_t seed, index_t first) const {
    const index_t dp = detail::padded_width(d);
    const extents shape{n, dp};
    // the uniforms written whole first (a generator filling long runs, not a packet at a time),
    // then one fused SIMD pass of the transcendental functions
    const array<float, B> u1 = detail::generate<B>(detail::row_draw<detail::radius_elements>{{}, seed, first, dp}, shape);
    const array<float, B> t = detail::generate<B>(detail::row_draw<detail::angle_elements>{{}, seed, first, dp}, shape);
    const float scale = float(std::sqrt(2.0 / double(d)));  // sqrt(-2 log u1) / sqrt(d)
    const array<float, B> padded(sqrt(-log(u1)) * cos(t) * scale);
    return array<T, B>(cast<T>(padded(all, range(0, d))));
  }

  /// The identity of circular convolution: (1, 0, ..., 0).
  template <class B>
  array<T, B> identity(const extents& shape) const {
    return array<T, B>(cast<T>(lazy::coordinates<std::int64_t, B>(shape, -1) == std::int64_t(0)));
  }
  template <class X, class Y>
  auto bind(const X& a, const Y& b) const {
    return rows(fft::irfft(fft::rfft(a) * fft::rfft(b), d));
  }
  template <class X>
  auto inverse(const X& a, inverse_kind k) const {
    if (k == inverse_kind::exact) return rows(fft::irfft(1.0f / fft::rfft(a), d));
    const auto ac = fusor::ext::contiguous_of(a);  // an array is read where it lies
    return rows(roll(flip(ac.view(), -1), 1, -1));  // a[-i mod d]
  }
  template <class X, class Y>
  auto unbind(const X& c, const Y& a, inverse_kind k) const {
    if (k == inverse_kind::exact) return rows(fft::irfft(fft::rfft(c) / fft::rfft(a), d));
    return rows(fft::irfft(fft::rfft(c) * conj(fft::rfft(a)), d));  // circular correlation
  }
  /// Circular convolution of the rows along axis -2: the product of their spectra.
  template <class X>
  auto multibind(const X& x) const {
    return rows(fft::irfft(prod(fft::rfft(x), -2), d));
  }
  /// Fractional power of the spectrum: irfft(rfft(x)^p) (fractional power encoding).
  template <class X>
  auto fractional_power(const X& x, double p) const {
    return rows(fft::irfft(pow(fft::rfft(x), float(p)), d));
  }

 private:
  /// A float32 result as rows of T (itself for float; rounded once for the 16-bit types).
  template <class A>
  static auto rows(A&& a) {
    if constexpr (std::is_same_v<value_t<std::remove_cvref_t<A>>, T>) return std::forward<A>(a);
    else return array<T, backend_of_t<std::remove_cvref_t<A>>>(cast<T>(a));
  }
};

/// HRR over float32 rows.
using hrr = hrr_of<float>;

namespace detail {
/// HRR's N(0, 1/d) rows scaled to unit norm: the vectors of VTB and MBAT (HoloVec's real space).
template <class B>
array<float, B> unit_normal_rows(index_t d, index_t n, std::uint64_t seed, index_t first) {
  return unit_rows(hrr(d).template draw<B>(n, seed, first));
}
}  // namespace detail

}  // namespace fusor::vsa
