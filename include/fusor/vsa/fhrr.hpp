#pragma once
// FHRR, Plate's Fourier Holographic Reduced Representations: d unit phasors e^{i theta} with
// angles uniform in [-pi, pi). bind is the elementwise complex product (commutative, exact),
// the inverse the conjugate, bundle the sum projected back onto unit phasors, and similarity
// Re <a, conj b> / (|a| |b|) (for phasors, the mean cosine of the angle differences), computed
// for a batch as one real GEMM over the interleaved (re, im) rows.
#include <complex>
#include <numbers>
#include <string_view>

#include "dense.hpp"
#include "kernels.hpp"
#include "../core/ext.hpp"

namespace fusor::vsa {

struct fhrr : detail::dense_model<fhrr>, detail::projected_complex_sum<fhrr> {
  using value_type = std::complex<float>;
  static constexpr std::string_view name = "FHRR";
  static constexpr bool self_inverse = false;
  static constexpr bool commutative = true;
  static constexpr bool exact_inverse = true;
  static constexpr metric default_metric = metric::cosine;
  static constexpr double similarity_lo = -1.0, similarity_hi = 1.0;

  using dense_model::dense_model;

  /// Rows first .. first + n - 1 of the random vectors of `seed`: cis of Philox angles.
  template <class B>
  array<value_type, B> draw(index_t n, std::uint64_t seed, index_t first) const {
    const index_t dp = detail::padded_width(d);
    // the angles written whole (a generator filling long runs), then cos and sin as two SIMD
    // passes, then interleaved (the engine's cis is scalar)
    const array<float, B> t = detail::generate<B>(detail::row_draw<detail::phase_elements>{{}, seed, first, dp}, extents{n, dp});
    const array<float, B> re(cos(t)), im(sin(t));
    return detail::generate<B>(detail::interleave_rows<float>{re.data(), im.data(), d, dp}, extents{n, d});
  }

  template <class B>
  array<value_type, B> identity(const extents& shape) const {
    return ones<value_type, B>(shape);
  }
  template <class X, class Y>
  auto bind(const X& a, const Y& b) const {
    return eval(a * b);
  }
  template <class X>
  auto inverse(const X& a, inverse_kind) const {
    return eval(conj(a));
  }
  template <class X, class Y>
  auto unbind(const X& c, const Y& a, inverse_kind) const {
    return eval(c * conj(a));
  }
  template <class X>
  auto multibind(const X& x) const {
    return prod(x, -2);
  }
  // bundle_counts, bundle (the sum, projected unless normalization::none) and superpose (one
  // complex GEMM, projected) come from projected_complex_sum.

  /// Each element divided by its magnitude; a zero element becomes 1 (the identity's).
  template <class X>
  auto normalize(const X& x) const {
    const auto xc = fusor::ext::contiguous_of(x);
    using B = backend_of_t<decltype(xc.view())>;
    return detail::generate<B>(detail::unit_phasors<float>{reinterpret_cast<const float*>(xc.data())},
                               xc.view().shape());
  }
  /// x^p elementwise on the angles: e^{i p theta}, theta in (-pi, pi] (fractional power encoding).
  template <class X>
  auto fractional_power(const X& x, double p) const {
    return eval(cis(float(p) * arg(x)));
  }
};

}  // namespace fusor::vsa
