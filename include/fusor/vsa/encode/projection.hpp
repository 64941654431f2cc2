#pragma once
// Encoders of feature vectors x in R^f by random matrices, each one GEMM for a batch:
//   random_projection  HoloVec's RandomProjectionEncoder and torchhd's Projection: x P with P an
//                      (f, d) matrix of N(0, 1) draws. MAP-B takes the sign and BSC the bits of
//                      x P < 0 (sign random projection, SimHash: each position differs with
//                      probability angle(x, y) / pi, so MAP-B's cosine is 1 - 2 angle / pi and
//                      BSC's hamming similarity 1 - angle / pi); the real models (MAP-C clipped to
//                      [-1, 1], HRR, VTB, MBAT) keep x P / sqrt(f d) (N(0, 1/d) elements, HRR's
//                      scale, for features of unit variance), whose cosines estimate x's.
//   fractional_power_features
//                      multivariate fractional power encoding (random Fourier features; torchhd's
//                      FractionalPower): for feature ranges [low_k, high_k], position j holds
//                      e^{i sum_k w_kj (x_k - low_k)} (FHRR; HRR the real vector with that
//                      spectrum), w_kj = theta_kj bandwidth / (high_k - low_k) with the theta of
//                      one fpe_kernel drawn independently per feature. The similarity of two
//                      encodings is the product of the features' kernels (a gaussian kernel: the
//                      RBF kernel), bind(encode(x), encode(y)) = encode(x + y - low), and the one
//                      GEMM (x - low) W gives every phase (x - low in double, then float: a range
//                      far from 0 keeps its resolution).
#include <cmath>
#include <complex>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "../../core/random.hpp"
#include "../../linalg/matmul.hpp"
#include "../bsc.hpp"
#include "../map.hpp"
#include "../mbat.hpp"
#include "../item_memory.hpp"
#include "../operations.hpp"
#include "../resonator.hpp"
#include "../vtb.hpp"
#include "fractional_power.hpp"
#include "../../core/ext.hpp"

namespace fusor::vsa {

namespace detail {
/// The (n, f) matrix of feature rows (..., f) as T, after checking f.
template <class T, class B, class X>
array<T, B> feature_rows(const X& x, index_t f, const char* what) {
  const extents s = expr_shape(fusor::ext::to_node(x));
  if (s.size() < 1 || s[s.size() - 1] != f)
    throw shape_error("fusor::vsa::" + std::string(what) + ": expects feature vectors (..., " + std::to_string(f) +
                      "), got shape " + to_string(s));
  array<T, B> r(cast<T>(x));
  const index_t n = f > 0 ? r.size() / f : 0;
  return std::move(r).reshape(extents{n, f});
}
/// The shape (..., width) of the encodings of feature rows of shape (..., f).
template <class X>
extents encoded_shape(const X& x, index_t width) {
  extents s = expr_shape(fusor::ext::to_node(x));
  s[s.size() - 1] = width;
  return s;
}

/// Unit phasors e^{i phase} of an (n, k) float array of phases, written in one pass.
struct phasors_of_phases {
  using value_type = std::complex<float>;
  const float* phase;
  FUSOR_HD void fill(index_t first, std::complex<float>* out, index_t count) const {
    float* o = reinterpret_cast<float*>(out);
    const float* p = phase + first;
    for (index_t j = 0; j < count; ++j) {
      float s, c;
      sincos_poly(p[j], s, c);
      o[2 * j] = c;
      o[2 * j + 1] = s;
    }
  }
};
}  // namespace detail

/// Random projection of feature vectors (see the file comment).
template <model M, backend B = default_backend>
class random_projection {
 public:
  using value_type = typename M::value_type;
  static constexpr bool supported = std::is_same_v<M, map_b> || std::is_same_v<M, bsc> || std::is_same_v<M, map_c> ||
                                    std::is_same_v<M, hrr> || std::is_same_v<M, vtb> || std::is_same_v<M, mbat>;

  /// An (features, d) matrix of N(0, 1) draws from `seed`.
  random_projection(const M& m, index_t features, std::uint64_t seed) : m_(m), f_(features) {
    if constexpr (!supported)
      throw value_error("fusor::vsa::random_projection: " + std::string(M::name) +
                        " has no projection encoding; expected MAP-B, BSC (signs), MAP-C, HRR, VTB or MBAT (real "
                        "elements)");
    if (features < 1)
      throw value_error("fusor::vsa::random_projection: expects at least one feature, got " + std::to_string(features));
    fusor::random::generator g(seed);
    p_ = fusor::random::normal<float, B>(g, extents{features, m.dim()});
  }

  const M& model() const { return m_; }
  index_t features() const { return f_; }
  /// P, (features, d).
  const array<float, B>& matrix() const& { return p_; }
  const array<float, B>& matrix() const&& = delete;

  /// The encodings of feature vectors (..., features): (..., width), one GEMM and one pass.
  template <class X>
  array<value_type, B> encode(const X& x) const {
    const array<float, B> rows = detail::feature_rows<float, B>(x, f_, "random_projection::encode");
    const extents out = detail::encoded_shape(x, m_.width());
    const array<float, B> y = matmul(rows, p_);
    if constexpr (std::is_same_v<M, map_b>) {
      return array<value_type, B>(where(y < 0.0f, -1.0f, 1.0f)).reshape(out);
    } else if constexpr (std::is_same_v<M, bsc>) {
      return array<value_type, B>(m_.pack(eval(y < 0.0f))).reshape(out);
    } else if constexpr (std::is_same_v<M, map_c>) {
      return array<value_type, B>(clip(y * float(1.0 / std::sqrt(double(f_) * double(m_.dim()))), -1.0f, 1.0f)).reshape(out);
    } else {
      return array<value_type, B>(y * float(1.0 / std::sqrt(double(f_) * double(m_.dim())))).reshape(out);
    }
  }

 private:
  M m_;
  index_t f_;
  array<float, B> p_;
};

/// Multivariate fractional power encoding (see the file comment), FHRR and HRR.
template <model M, backend B = default_backend>
class fractional_power_features {
 public:
  using value_type = typename M::value_type;
  static constexpr bool supported = std::is_same_v<M, fhrr> || std::is_same_v<M, hrr>;

  /// Feature k ranges over [low[k], high[k]]; every feature's frequencies follow `kernel` at
  /// `bandwidth` (the kernel's argument is bandwidth (x_k - y_k) / (high_k - low_k)).
  fractional_power_features(const M& m, std::vector<double> low, std::vector<double> high, std::uint64_t seed,
                            fpe_kernel kernel = fpe_kernel::gaussian, double bandwidth = 1.0)
      : m_(m), low_(std::move(low)), high_(std::move(high)), kernel_(kernel), bandwidth_(bandwidth) {
    if constexpr (!supported)
      throw value_error("fusor::vsa::fractional_power_features: " + std::string(M::name) +
                        " has no fractional powers of unit phasors; expected FHRR or HRR");
    if (low_.empty() || low_.size() != high_.size())
      throw value_error("fusor::vsa::fractional_power_features: expects one low and one high per feature (at least "
                        "one), got " + std::to_string(low_.size()) + " and " + std::to_string(high_.size()));
    for (std::size_t k = 0; k < low_.size(); ++k) detail::check_range(low_[k], high_[k], "fractional_power_features");
    if (!(bandwidth > 0.0 && std::isfinite(bandwidth)))
      throw value_error("fusor::vsa::fractional_power_features: expects a finite bandwidth > 0, got " +
                        std::to_string(bandwidth));
    if constexpr (supported) {
      // each feature's row of frequencies: a scalar encoder's, drawn from its own stream
      const index_t f = index_t(low_.size()), k = std::is_same_v<M, hrr> ? m.dim() / 2 + 1 : m.dim();
      w_ = array<float, B>(extents{f, k});
      for (index_t r = 0; r < f; ++r) {
        scalars_.emplace_back(m, low_[std::size_t(r)], high_[std::size_t(r)],
                              seed + std::uint64_t(r) * 0x9E3779B97F4A7C15ull, kernel, bandwidth);
        w_(r, all) = scalars_.back().frequencies();
      }
      offset_ = array<double, B>(std::span<const double>(low_), extents{f});
    }
  }

  const M& model() const { return m_; }
  index_t features() const { return index_t(low_.size()); }
  /// Feature k's scalar encoder: its frequencies are row k of frequencies(), so encode(x) is the
  /// binding of feature(k).encode(x_k) over k.
  const fractional_power_encoder<M, B>& feature(index_t k) const& {
    if (k < 0 || k >= features())
      throw index_error("fusor::vsa::fractional_power_features::feature: expects a feature in [0, " +
                        std::to_string(features()) + "), got " + std::to_string(k));
    return scalars_[std::size_t(k)];
  }
  const fractional_power_encoder<M, B>& feature(index_t k) const&& = delete;
  /// w, (features, d) for FHRR and (features, d / 2 + 1) spectrum bins for HRR: radians per unit
  /// of each feature.
  const array<float, B>& frequencies() const& { return w_; }
  const array<float, B>& frequencies() const&& = delete;

  /// The expected similarity of the encodings of x and x + delta: the product of the features'
  /// kernels (HRR: with its DC and Nyquist bins, which always agree).
  double similarity(const std::vector<double>& delta) const {
    if (delta.size() != low_.size())
      throw value_error("fusor::vsa::fractional_power_features::similarity: expects " + std::to_string(low_.size()) +
                        " differences, got " + std::to_string(delta.size()));
    double k = 1;
    for (std::size_t i = 0; i < delta.size(); ++i) k *= kernel_value(kernel_, bandwidth_ * delta[i] / (high_[i] - low_[i]));
    return detail::expected_similarity(m_, k);
  }

  /// The encodings of feature vectors (..., features): (..., width). Each feature must lie in its
  /// range (a value_error names the first that does not). One GEMM for the phases, one pass for the
  /// phasors (HRR: and a batched c2r FFT).
  template <class X>
  array<value_type, B> encode(const X& x) const {
    const index_t f = features();
    const array<double, B> rows = detail::feature_rows<double, B>(x, f, "fractional_power_features::encode");
    check_ranges(rows);
    const extents out = detail::encoded_shape(x, m_.width());
    const index_t n = rows.shape()[0], k = w_.shape()[1];
    const array<float, B> centred(cast<float>(rows - offset_.reshape(extents{1, f})));
    const array<float, B> phase = matmul(centred, w_);
    array<std::complex<float>, B> ph = detail::generate<B>(detail::phasors_of_phases{phase.data()}, extents{n, k});
    if constexpr (std::is_same_v<M, hrr>)
      return fft::irfft(std::move(ph), m_.dim()).reshape(out);
    else
      return std::move(ph).reshape(out);
  }

  /// The feature vector each vector encodes ((Q, width) -> (Q, features), (width) -> (features)).
  /// A resonator network over the features' grids (feature k's codebook: the encodings of `grid`
  /// evenly spaced values of its range, 0 for the scalar decoder's default) finds every feature's
  /// grid cell at once, without trying grid^features combinations; then `rounds` passes refine
  /// each feature in turn, decoding the vector unbound by the other features' current encodings
  /// with that feature's scalar decoder (a grid search and a Newton search on the similarity).
  /// Exact for a clean encoding up to float rounding; for a noisy one, the resonator's fixed point
  /// refined, which can be wrong when the noise is large.
  template <class X>
  array<double, B> decode(const X& vectors, index_t grid = 0, int rounds = 2, const resonator_options& o = {}) const {
    const extents qs = detail::decoded_rows(m_, vectors, "fractional_power_features::decode");
    const index_t g = detail::decode_grid(grid, bandwidth_, "fractional_power_features::decode");
    if (rounds < 1)
      throw value_error("fusor::vsa::fractional_power_features::decode: expects at least 1 refinement round, got " +
                        std::to_string(rounds));
    const index_t f = features();
    const index_t nq = qs.size() == 2 ? qs[0] : 1;
    const auto qc = fusor::ext::contiguous_of(vectors);
    const array_view<value_type, B> q(const_cast<value_type*>(qc.data()), extents{nq, m_.width()},
                                      extents{m_.width(), 1});
    array<double, B> est(extents{nq, f});
    if (f == 1) {
      est = scalars_[0].decode(q, g).reshape(extents{nq, 1});
    } else if (nq > 0) {
      // the resonator over the grids: every feature's cell
      std::vector<item_memory<M, B>> books;
      std::vector<double> step(static_cast<std::size_t>(f));
      for (index_t k = 0; k < f; ++k) {
        const double lo = low_[std::size_t(k)], hi = high_[std::size_t(k)], h = (hi - lo) / double(g - 1);
        step[std::size_t(k)] = h;
        const array<double, B> values(minimum(lazy::arange<double, B>(0.0, double(g)) * h + lo, hi));
        books.emplace_back(m_, scalars_[std::size_t(k)].encode(values));
      }
      const auto res = resonate(m_, q, books, o);
      for (index_t k = 0; k < f; ++k)
        est(all, k) = cast<double>(res.indices[std::size_t(k)]) * step[std::size_t(k)] + low_[std::size_t(k)];
      // coordinate refinement: feature k from the vector unbound by the others' encodings (feature
      // k set to its low end, whose encoding is the identity)
      const array<std::int64_t, B> column = array<std::int64_t, B>(lazy::arange<std::int64_t, B>(0, f)).reshape(extents{1, f});
      for (int round = 0; round < rounds; ++round)
        for (index_t k = 0; k < f; ++k) {
          const array<double, B> others(where(column == std::int64_t(k), offset_.reshape(extents{1, f}), est));
          const array<value_type, B> u(vsa::unbind(m_, q, encode(others)));
          est(all, k) = scalars_[std::size_t(k)].decode(u, g);
        }
    }
    if (qs.size() == 1) return std::move(est).reshape(extents{f});
    return est;
  }

 private:
  void check_ranges(const array<double, B>& rows) const {
    const auto h = to<cpu>(rows);
    const index_t f = features(), n = rows.shape()[0];
    for (index_t r = 0; r < n; ++r)
      for (index_t k = 0; k < f; ++k) {
        const double v = h(r, k);
        if (!(v >= low_[std::size_t(k)] && v <= high_[std::size_t(k)]))
          throw value_error("fusor::vsa::fractional_power_features::encode: feature " + std::to_string(k) + " of row " +
                            std::to_string(r) + " is " + std::to_string(v) + ", outside its range [" +
                            std::to_string(low_[std::size_t(k)]) + ", " + std::to_string(high_[std::size_t(k)]) + "]");
      }
  }

  M m_;
  std::vector<double> low_, high_;
  fpe_kernel kernel_;
  double bandwidth_;
  array<float, B> w_;
  array<double, B> offset_;  // low
  std::vector<fractional_power_encoder<M, B>> scalars_;  // each feature's, for decode
};

}  // namespace fusor::vsa
