#pragma once
// Fractional power encoding (Plate; Frady et al., 2021, "Computing on functions using randomized
// vector representations"): a scalar x in [low, high] becomes the vector whose position j is the
// phasor e^{i w_j (x - low)} (FHRR), or the real vector whose spectrum bin k is e^{i w_k (x - low)}
// (HRR: irfft of unit phasors, the DC and Nyquist bins fixed at 1). So encode(low) is the identity
// of bind, bind(encode(a), encode(b)) = encode(a + b - low), and the similarity of two encodings
// depends on x - y alone: for frequencies w = theta * bandwidth / (high - low) with theta drawn
// from a distribution p, its expectation is the kernel E[cos(theta u)] at u = bandwidth (x - y) /
// (high - low) (Bochner: the characteristic function of p):
//   sinc      theta uniform in [-pi, pi):     K(u) = sin(pi u) / (pi u)
//   gaussian  theta normal N(0, 1):           K(u) = exp(-u^2 / 2)
//   laplace   theta Cauchy (0, 1):            K(u) = exp(-|u|)
//   cauchy    theta Laplace (0, 1):           K(u) = 1 / (1 + u^2)
// (kernels named by the similarity they give; HoloVec names its phase_dist by theta's law.) A
// mixture of components (kernel, bandwidth, weight) draws each position's theta from component
// k with probability weight_k, so the kernel is sum_k weight_k K_k(bandwidth_k (x - y) / (high -
// low)) while every vector stays a unit phasor vector that binds and bundles like any other (a
// weighted sum of several encodings, HoloVec's mixture, would not).
//
// decode finds the value whose encoding is most similar to a vector: the best of a grid of
// encoded values (one similarity GEMM), then a safeguarded Newton search on the similarity's
// derivative inside that grid cell (the derivative is a sum over the frequencies, computed
// exactly), for a batch at once.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../../core/random.hpp"
#include "../../core/reduce.hpp"
#include "../../fft/transforms.hpp"
#include "../fhrr.hpp"
#include "../hrr.hpp"
#include "../operations.hpp"
#include "scalar.hpp"
#include "../../core/ext.hpp"

namespace fusor::vsa {

/// The similarity kernel of a fractional power encoding (see the file comment).
enum class fpe_kernel { sinc, gaussian, laplace, cauchy };

inline std::string_view to_string(fpe_kernel k) {
  switch (k) {
    case fpe_kernel::sinc: return "sinc";
    case fpe_kernel::gaussian: return "gaussian";
    case fpe_kernel::laplace: return "laplace";
    default: return "cauchy";
  }
}

/// One component of a kernel mixture: its kernel, its bandwidth (the kernel's argument is
/// bandwidth (x - y) / (high - low)) and its weight (weights are normalised to sum to 1).
struct fpe_component {
  fpe_kernel kernel = fpe_kernel::sinc;
  double bandwidth = 1.0;
  double weight = 1.0;
};

/// K(u) of one kernel (1 at u = 0).
inline double kernel_value(fpe_kernel k, double u) {
  switch (k) {
    case fpe_kernel::sinc: return u == 0.0 ? 1.0 : std::sin(std::numbers::pi * u) / (std::numbers::pi * u);
    case fpe_kernel::gaussian: return std::exp(-0.5 * u * u);
    case fpe_kernel::laplace: return std::exp(-std::abs(u));
    default: return 1.0 / (1.0 + u * u);
  }
}

namespace detail {
/// sin and cos of x together in plain float arithmetic that the compiler vectorises (the engine's
/// cos and sin are separate SIMD passes, and a complex output cannot be one): a Cody-Waite
/// reduction by pi/2 in three parts (exact products for |x| < 1e4, a slowly growing error beyond),
/// Cephes' minimax polynomials of sinf and cosf on [-pi/4, pi/4], and the quadrant's swap and
/// signs as selects. About 1e-7 absolute error for |x| < 1e4; the same code on every backend.
FUSOR_HD inline void sincos_poly(float x, float& s, float& c) {
  constexpr float two_over_pi = 0.636619772367581f, round = 12582912.0f;  // 1.5 * 2^23: round to nearest
  const float q = (x * two_over_pi + round) - round;
  const float r = ((x - q * 1.5703125f) - q * 4.837512969970703125e-4f) - q * 7.54978995489188216e-8f;
  const float z = r * r;
  const float sp = ((-1.9515295891e-4f * z + 8.3321608736e-3f) * z - 1.6666654611e-1f) * z * r + r;
  const float cp = ((2.443315711809948e-5f * z - 1.388731625493765e-3f) * z + 4.166664568298827e-2f) * z * z - 0.5f * z + 1.0f;
  // the quadrant k mod 4 as arithmetic, not branches (a branch stops vectorisation): swap is 0 or
  // 1, so each sum below has exactly one nonzero term, and the signs are +-1
  const int k = int(q);
  const float swap = float(k & 1), keep = 1.0f - swap;
  const float ss = float(1 - 2 * ((k >> 1) & 1)), cs = float(1 - 2 * (((k + 1) >> 1) & 1));
  s = (sp * keep + cp * swap) * ss;
  c = (cp * keep + sp * swap) * cs;
}

/// The expected cosine of two FPE vectors whose frequencies give kernel value k: k itself for FHRR;
/// for HRR the DC bin (and an even d's Nyquist bin), whose frequency is 0, always agree.
template <class M>
double expected_similarity(const M& m, double k) {
  if constexpr (std::is_same_v<M, hrr>) {
    const double d = double(m.dim()), fixed = m.dim() % 2 == 0 ? 2.0 : 1.0;
    return (fixed + (d - fixed) * k) / d;
  }
  return k;
}

/// The shape of the vectors a decoder takes, (Q, width) or one (width) vector, after checking them;
/// `what` names the decoder in errors ("residue_encoder::decode").
template <class M, class X>
extents decoded_rows(const M& m, const X& vectors, const std::string& what) {
  const extents qs = checked_rows(m, vectors, what.c_str(), "vectors");
  if (qs.size() > 2)
    throw shape_error("fusor::vsa::" + what + ": expects (Q, " + std::to_string(m.width()) + ") vectors or one (" +
                      std::to_string(m.width()) + ") vector, got shape " + to_string(qs));
  return qs;
}
/// The grid an FPE decoder searches: `grid` values (at least 2), or for 0 four per unit of the
/// widest bandwidth, at least 9.
inline index_t decode_grid(index_t grid, double widest_bandwidth, const std::string& what) {
  if (grid < 0 || grid == 1)
    throw value_error("fusor::vsa::" + what + ": expects a grid of at least 2 values (or 0 for the default), got " +
                      std::to_string(grid));
  return grid > 0 ? grid : std::max<index_t>(9, index_t(std::ceil(4.0 * widest_bandwidth)) + 1);
}

/// Rows of unit phasors: element (r, j) of an (n, k) output is e^{i w_j t_r}, written once.
struct phasor_outer {
  using value_type = std::complex<float>;
  const float *w, *t;
  index_t k;
  FUSOR_HD void fill(index_t first, std::complex<float>* out, index_t count) const {
    float* o = reinterpret_cast<float*>(out);
    index_t row = first / k, col = first % k, i = 0;
    while (i < count) {
      const index_t run = k - col < count - i ? k - col : count - i;
      const float tr = t[row];
      const float* wr = w + col;
      float* orow = o + 2 * i;
      for (index_t j = 0; j < run; ++j) {  // one row's stretch: a loop the compiler vectorises
        float sv, cv;
        sincos_poly(wr[j] * tr, sv, cv);
        orow[2 * j] = cv;
        orow[2 * j + 1] = sv;
      }
      i += run;
      col = 0;
      ++row;
    }
  }
};
}  // namespace detail

/// Fractional power encoding of scalars in [low, high] for FHRR or HRR (see the file comment).
template <model M, backend B = default_backend>
class fractional_power_encoder {
 public:
  using value_type = typename M::value_type;
  /// The models with fractional powers of unit phasors.
  static constexpr bool supported = std::is_same_v<M, fhrr> || std::is_same_v<M, hrr>;

  /// One kernel at one bandwidth.
  fractional_power_encoder(const M& m, double low, double high, std::uint64_t seed,
                           fpe_kernel kernel = fpe_kernel::sinc, double bandwidth = 1.0)
      : fractional_power_encoder(m, low, high, seed, std::vector<fpe_component>{{kernel, bandwidth, 1.0}}) {}

  /// A mixture of kernels (see the file comment).
  fractional_power_encoder(const M& m, double low, double high, std::uint64_t seed, std::vector<fpe_component> mixture)
      : m_(m), low_(low), high_(high), parts_(std::move(mixture)) {
    if constexpr (!supported)
      throw value_error("fusor::vsa::fractional_power_encoder: " + std::string(M::name) +
                        " has no fractional powers of unit phasors; expected FHRR or HRR");
    detail::check_range(low, high, "fractional_power_encoder");
    if (parts_.empty())
      throw value_error("fusor::vsa::fractional_power_encoder: expects at least one mixture component, got none");
    double total = 0;
    for (const auto& p : parts_) {
      if (!(p.bandwidth > 0.0 && std::isfinite(p.bandwidth)))
        throw value_error("fusor::vsa::fractional_power_encoder: expects a finite bandwidth > 0, got " +
                          std::to_string(p.bandwidth));
      if (!(p.weight >= 0.0 && std::isfinite(p.weight)))
        throw value_error("fusor::vsa::fractional_power_encoder: expects finite weights >= 0, got " +
                          std::to_string(p.weight));
      total += p.weight;
    }
    if (!(total > 0.0))
      throw value_error("fusor::vsa::fractional_power_encoder: expects weights with a positive sum, got " +
                        std::to_string(total));
    for (auto& p : parts_) p.weight /= total;
    if constexpr (supported) draw_frequencies(seed);
  }

  const M& model() const { return m_; }
  double low() const { return low_; }
  double high() const { return high_; }
  /// The mixture (a single kernel is one component of weight 1), weights normalised.
  const std::vector<fpe_component>& components() const { return parts_; }
  /// w_j, radians per unit of x: (d) for FHRR, the (d / 2 + 1) spectrum bins for HRR.
  const array<float, B>& frequencies() const& { return w_; }
  const array<float, B>& frequencies() const&& = delete;

  /// The expected similarity (cosine) of encode(x) and encode(x + delta) over seeds: the
  /// kernel mixture at delta (HRR: with its DC and Nyquist bins, which always agree).
  double similarity(double delta) const {
    double k = 0;
    for (const auto& p : parts_) k += p.weight * kernel_value(p.kernel, p.bandwidth * delta / (high_ - low_));
    return detail::expected_similarity(m_, k);
  }

  /// The same encoder with every bandwidth multiplied by `scale` > 0: the same draws, the
  /// frequencies times scale (what a learned scale gives back as an encoder).
  fractional_power_encoder scaled(double scale) const {
    if (!(scale > 0.0 && std::isfinite(scale)))
      throw value_error("fusor::vsa::fractional_power_encoder::scaled: expects a finite scale > 0, got " +
                        std::to_string(scale));
    fractional_power_encoder r(*this);
    for (auto& p : r.parts_) p.bandwidth *= scale;
    r.w_ = array<float, B>(w_ * float(scale));
    return r;
  }
  fractional_power_encoder(const fractional_power_encoder& o)
      : m_(o.m_), low_(o.low_), high_(o.high_), parts_(o.parts_), w_(o.w_.copy()) {}
  fractional_power_encoder(fractional_power_encoder&&) = default;
  fractional_power_encoder& operator=(fractional_power_encoder&&) = default;

  /// The similarity (cosine) of the encodings of x and x + delta for each delta ((n) float), with
  /// every bandwidth multiplied by `scale` (shape (1)): (1/d) sum_k c_k cos(scale w_k delta), c_k
  /// HRR's bin counts (1 for FHRR). An expression of `scale`: with an fusor::ad variable, the
  /// bandwidth is learned by gradient descent on any loss of these similarities (the encodings'
  /// similarity is differentiable in the bandwidth); with a plain array, the value.
  template <class D, class S>
  auto similarity_at(const D& delta, const S& scale) const {
    const index_t n = expr_shape(fusor::ext::to_node(delta)).size() == 1
                          ? expr_shape(fusor::ext::to_node(delta))[0] : -1;
    if (n < 0)
      throw shape_error("fusor::vsa::fractional_power_encoder::similarity_at: expects differences of shape (n), got " +
                        to_string(expr_shape(fusor::ext::to_node(delta))));
    const index_t k = w_.size();
    const array<float, B> dc = array<float, B>(cast<float>(delta)).reshape(extents{n, 1});
    array<float, B> phase(dc * w_.reshape(extents{1, k}));
    const array<float, B> c(bin_counts() * float(1.0 / double(m_.dim())));
    // sum and cos unqualified: argument-dependent lookup finds fusor::ad's for a variable
    return sum(cos(phase * scale) * c.reshape(extents{1, k}), -1);
  }

  /// The encodings of values in [low, high] (any shape (...) -> (..., width)); a value outside
  /// (or NaN) is a value_error naming it.
  template <class X>
  array<value_type, B> encode(const X& values) const {
    detail::check_scalars(values, low_, high_, "fractional_power_encoder::encode");
    const auto vc = fusor::ext::contiguous_of(values);
    extents out = vc.view().shape();
    const array<float, B> t(cast<float>(cast<double>(ravel(vc.view())) - low_));
    array<value_type, B> r = encode_offsets(t);
    out.push_back(m_.width());
    return std::move(r).reshape(out);
  }

  /// The value whose encoding is most similar to each vector ((Q, width) -> (Q), (width) -> ()):
  /// the best of `grid` evenly spaced values (0: 4 per unit of the largest bandwidth, at least 9),
  /// refined inside its grid cell. Exact for a clean encoding up to float rounding; for a noisy
  /// one (a bundle, an unbinding) the peak of the similarity.
  template <class X>
  array<double, B> decode(const X& vectors, index_t grid = 0) const {
    const extents qs = detail::decoded_rows(m_, vectors, "fractional_power_encoder::decode");
    double widest = 0;
    for (const auto& p : parts_) widest = std::max(widest, p.bandwidth);
    const index_t g = detail::decode_grid(grid, widest, "fractional_power_encoder::decode");
    const double span = high_ - low_, h = span / double(g - 1);
    const auto qc = fusor::ext::contiguous_of(vectors);
    const auto q = detail::as_matrix(qc.view());
    const index_t nq = q.shape()[0];

    // the grid: its encodings, their similarities to the queries, the best of each row
    const array<float, B> tg(lazy::arange<float, B>(0.0f, float(g)) * float(h));
    const array<value_type, B> cells = encode_offsets(tg);
    const array<float, B> sims = vsa::similarity(m_, q, cells, metric::dot);
    array<double, B> t(cast<double>(argmax(sims.reshape(extents{nq, g}), -1)) * h);

    // Newton on s'(t) = sum_k c_k w_k Im(P_k e^{-i w_k t}), s'' = -sum_k c_k w_k^2 Re(...), where P is
    // the vector's phasors (FHRR) or spectrum (HRR) and c_k counts bin k's conjugate (HRR: 2)
    const auto spec = phasors_of(q);
    const index_t k = w_.size();
    const array_view<float, B> pr(reinterpret_cast<float*>(const_cast<std::complex<float>*>(spec.data())),
                                  extents{nq, k}, extents{2 * k, 2});
    const array_view<float, B> pi(reinterpret_cast<float*>(const_cast<std::complex<float>*>(spec.data())) + 1,
                                  extents{nq, k}, extents{2 * k, 2});
    const array<float, B> cw0 = bin_counts(), cw(cw0 * w_), cw2(cw * w_);
    array<double, B> lo(maximum(t - h, 0.0)), hi(minimum(t + h, span));
    // e^{i w_k x} for every query, written by the encoder's one-pass phasor generator into one
    // buffer; c and s are its real and imaginary parts
    array<std::complex<float>, B> e(extents{nq, k});
    array<float, B> tf(extents{nq});
    const array_view<float, B> c(reinterpret_cast<float*>(e.data()), extents{nq, k}, extents{2 * k, 2});
    const array_view<float, B> s(reinterpret_cast<float*>(e.data()) + 1, extents{nq, k}, extents{2 * k, 2});
    array<double, B> d1(extents{nq}), d2(extents{nq}), next(extents{nq});
    const auto at = [&](const array<double, B>& x) {
      tf = cast<float>(x);
      e.view() = generator_expr<detail::phasor_outer, B>{{w_.data(), tf.data(), k}, extents{nq, k}, extents{k, 1}};
    };
    const auto score = [&] { return array<double, B>(cast<double>(sum((pr * c + pi * s) * cw0, -1))); };
    at(t);
    const array<double, B> start(t + 0.0), start_score = score();
    if (cusp()) {
      // a laplace component's kernel has a cusp at its peak and its derivative is noise there (the
      // Cauchy frequencies): golden-section search on the similarity itself, one pass per step
      constexpr double g1 = 0.38196601125010515;  // 1 - 1 / golden ratio
      array<double, B> x1(lo + g1 * (hi - lo)), x2(hi - g1 * (hi - lo)), s1(extents{nq}), s2(extents{nq});
      at(x1);
      s1 = score();
      at(x2);
      s2 = score();
      for (int it = 0; it < 60 && nq > 0 && double(max(hi - lo)) > 1e-9 * span; ++it) {
        const array<bool, B> left(s1 >= s2);  // the peak is in [lo, x2]
        hi = where(left, x2, hi);
        lo = where(left, lo, x1);
        next = where(left, hi - (1.0 - g1) * (hi - lo), lo + (1.0 - g1) * (hi - lo));  // the new probe
        at(next);
        d1 = score();
        // left: (x1, x2) = (probe, old x1); right: (old x2, probe)
        d2 = where(left, next, x2);
        x2 = where(left, x1, next);
        std::swap(x1, d2);
        d2 = where(left, d1, s2);
        s2 = where(left, s1, d1);
        std::swap(s1, d2);
      }
      t = 0.5 * (lo + hi);
    } else {
      // smooth kernels: Newton on the derivative, kept inside a bracket that bisection shrinks
      for (int it = 0; it < 30; ++it) {
        if (it > 0) at(t);
        d1 = cast<double>(sum((pi * c - pr * s) * cw, -1));
        d2 = cast<double>(-sum((pr * c + pi * s) * cw2, -1));
        lo = where(d1 > 0.0, t, lo);
        hi = where(d1 > 0.0, hi, t);
        const auto newton = t - d1 / d2;
        next = where(d2 < 0.0 && newton > lo && newton < hi, newton, 0.5 * (lo + hi));
        const double moved = nq > 0 ? double(max(abs(next - t))) : 0.0;
        std::swap(t, next);
        if (moved <= 1e-9 * span) break;
      }
    }
    // never worse than the grid: a noisy derivative (a heavy-tailed kernel's, a noisy vector's)
    // can send the search astray
    at(t);
    t = where(score() >= start_score, t, start);
    array<double, B> out(low_ + minimum(maximum(t, 0.0), span));
    if (qs.size() == 1) return std::move(out).reshape(extents{});
    return out;
  }

 private:
  void draw_frequencies(std::uint64_t seed) {
    const index_t d = m_.dim(), k = std::is_same_v<M, hrr> ? d / 2 + 1 : d;
    fusor::random::generator g(seed);
    const array<double, B> pick = fusor::random::uniform<double, B>(g, extents{k});
    const array<double, B> u = fusor::random::uniform<double, B>(g, extents{k});
    const array<double, B> z = fusor::random::normal<double, B>(g, extents{k});
    array<double, B> w = zeros<double, B>(extents{k});
    double from = 0;
    for (std::size_t c = 0; c < parts_.size(); ++c) {
      const auto& p = parts_[c];
      const double to = c + 1 == parts_.size() ? 2.0 : from + p.weight, scale = p.bandwidth / (high_ - low_);
      const auto mine = pick >= from && pick < to;
      const double pi = std::numbers::pi;
      // Cauchy draws reach 1e16, whose phases float cannot hold (nor SIMD sin and cos reduce);
      // capping |theta| at 1e4 moves about 6e-5 of them, and alters the kernel only for |u| < 1e-4
      constexpr double cauchy_cap = 1e4;
      switch (p.kernel) {
        case fpe_kernel::sinc: w = where(mine, pi * (2.0 * u - 1.0) * scale, w); break;
        case fpe_kernel::gaussian: w = where(mine, z * scale, w); break;
        case fpe_kernel::laplace: w = where(mine, clip(tan(pi * (u - 0.5)), -cauchy_cap, cauchy_cap) * scale, w); break;
        default: w = where(mine, -sign(u - 0.5) * log(maximum(1.0 - 2.0 * abs(u - 0.5), 1e-300)) * scale, w); break;
      }
      from = to;
    }
    if constexpr (std::is_same_v<M, hrr>) {  // the DC bin, and the Nyquist bin of an even d, are real
      const auto bin = lazy::arange<std::int64_t, B>(0, k);
      const std::int64_t nyquist = d % 2 == 0 ? k - 1 : -1;
      w = where(bin == 0 || bin == nyquist, 0.0, w);
    }
    w_ = array<float, B>(cast<float>(w));
  }

  /// Encodings of offsets t = x - low (no range check: decode's grid), (n, width).
  array<value_type, B> encode_offsets(const array<float, B>& t) const {
    const index_t n = t.size();
    array<std::complex<float>, B> ph =
        detail::generate<B>(detail::phasor_outer{w_.data(), t.data(), w_.size()}, extents{n, w_.size()});
    if constexpr (std::is_same_v<M, hrr>)
      return fft::irfft(std::move(ph), m_.dim());  // (c2r may overwrite its input: a temporary)
    else
      return ph;
  }

  /// The phasors a decode differentiates: the vectors themselves (FHRR) or their spectra (HRR).
  template <class V>
  array<std::complex<float>, B> phasors_of(const V& q) const {
    if constexpr (std::is_same_v<M, hrr>)
      return fft::rfft(q);
    else
      return array<std::complex<float>, B>(q);
  }

  /// Whether the kernel has a cusp at 0 (a laplace component).
  bool cusp() const {
    return std::any_of(parts_.begin(), parts_.end(), [](const fpe_component& p) { return p.kernel == fpe_kernel::laplace; });
  }

  /// How many full-spectrum bins each stored frequency stands for: 1 (FHRR); HRR 2, but 1 for
  /// the DC bin and an even d's Nyquist bin.
  array<float, B> bin_counts() const {
    const index_t k = w_.size();
    if constexpr (std::is_same_v<M, hrr>) {
      const auto bin = lazy::arange<std::int64_t, B>(0, k);
      const std::int64_t nyquist = m_.dim() % 2 == 0 ? k - 1 : -1;
      return array<float, B>(where(bin == 0 || bin == nyquist, 1.0f, 2.0f));
    } else {
      return ones<float, B>(extents{k});
    }
  }

  M m_;
  double low_, high_;
  std::vector<fpe_component> parts_;
  array<float, B> w_;
};

}  // namespace fusor::vsa
