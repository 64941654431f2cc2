#pragma once
// The 3-D transfer function of a tomogram reconstructed from a tilt series, as an rfft-layout
// multiplier of a template-sized spectrum: the sum over tilts of each tilt's central slice
// weighted by what that image measured (its CTF, its exposure, its angle, the reconstruction's
// radial filter). It lies in the tomogram's frame: a scan computes it once (a fourier_filter's
// `tilts`) and multiplies it into every rotated template's spectrum.
//
// Frequencies are those of filters.hpp: c = (k0 / n0, k1 / n1, k2 / n2) cycles per voxel (signed),
// c / voxel_size cycles per Å. With p the third axis (x for tilt axis y and beam z) and t a tilt's
// angle, the tilt's image sampled the plane through the tilt axis and d = cos t e_p + sin t e_b
// (e_b: the beam axis); its normal is m = -sin t e_p + cos t e_b. Each tilt contributes
//   s(c) = max(0, 1 - |c . m| / h),  h = sqrt((sin t / n_p)^2 + (cos t / n_b)^2),
// a slab one Fourier voxel thick around its plane with linear edges (the plane of one voxel
// linearly interpolated onto the grid, pytom's "fanned" wedge; h is one voxel's extent along m),
// times its weight w(c) at the image frequency (x, y) = (c . d, c_tiltaxis):
//   ctf:        sin(pi lambda f^2 (Δf(φ) - Cs lambda^2 f^2 / 2) + phase + atan(A / sqrt(1 - A^2))), |.| for
//               a phase-flipped tomogram; Δf(φ) = (U + V) / 2 + (U - V) / 2 cos(2 (φ - φ_ast)), φ = atan2(y, x)
//   exposure:   Grant & Grigorieff (2015): exp(-D / (2 (0.245 f^-1.665 + 2.81))), f in 1/Å, D the dose
//               accumulated before the image; relion: exp(-4 D f^2) (pyTME's, after Warp)
//   cosine:     cos t
//   filter:     on r = 2 |x| (1 at Nyquist): ram-lak r, shepp-logan r sinc(r / 2), cosine r cos(pi r / 2),
//               hamming r (0.54 + 0.46 cos(pi r)); ramp min(1, |x| n_p Δt) (Δt: the smallest angular step)
// and the weight is their normalised sum, W = Σ s w / max(1, Σ s) (at the Nyquist frequency of an
// even axis, the mean over its two signs: tilt_weight_generator::at): where slabs overlap (low
// frequencies) the average of the tilts that measured it, where one slab reaches (high
// frequencies between tilts) that slab's share. Without CTF, dose and weights a dense angular
// range gives today's missing_wedge up to one voxel at its edges.
#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "../core/create.hpp"
#include "../core/transfer.hpp"
#include "interpolation.hpp"
#include "tilt_series.hpp"

namespace fusor::match {

/// How each tilt's exposure weights it: not at all, by Grant & Grigorieff's critical-exposure
/// filter (pytom's per-tilt weighting, pyTME's "grigorieff"), or by RELION's Gaussian of the dose.
enum class exposure_weighting { none, grant_grigorieff, relion };

/// The radial filter of the weighted back-projection that made the tomogram (pyTME's
/// --reconstruction-filter): it multiplies each tilt's slab.
enum class reconstruction_filter { none, ram_lak, ramp, shepp_logan, cosine, hamming };

/// A tilt series and how it weights a template. The CTF is used where the series carries defocus
/// values (as CTF, or |CTF| when series.correction is phase_flip) and ctf is true; the exposure
/// where it carries doses.
///
/// The defocus gradient (pytom's --defocus-handedness): the series' defocus values are those of
/// the tomogram's centre. With defocus_handedness h = +1 or -1, the weight is made for the point
/// `center_offset` (voxels from the tomogram's centre, along the tomogram's axes), which tilt t saw
/// at defocus Δf_t + h s (cos t o_b - sin t o_p), s the voxel size: its height along that tilt's
/// beam, underfocus growing with it for h = +1. A tiled scan sets center_offset to each tile's
/// centre, so each tile's template carries the defocus at its height; h = 0 (the default) keeps
/// the centre's defocus everywhere.
struct tilt_weighting {
  tilt_series series;
  bool ctf = true;
  exposure_weighting exposure = exposure_weighting::grant_grigorieff;
  bool cosine = false;  // each tilt by cos(angle): pyTME's "angle"; with exposure relion, its "relion"
  reconstruction_filter filter = reconstruction_filter::none;
  int defocus_handedness = 0;
  std::array<double, 3> center_offset{0, 0, 0};
};

namespace detail {

/// Each tilt's numbers as the generator reads them (tilt_weight_generator::stride doubles a tilt).
enum tilt_field : int { tw_sin, tw_cos, tw_half_width, tw_scalar, tw_dose, tw_defocus_mean, tw_defocus_half, tw_astigmatism, tw_phase, tw_ramp, tw_fields };

/// The weight at each position of an rfft-shaped array of the real shape (n0, n1, n2).
struct tilt_weight_generator {
  using value_type = float;
  static constexpr int stride = tw_fields;
  index_t n0, n1, n2, h2;
  int tilt_axis, beam_axis, perp_axis;
  double voxel, lambda, cs;  // Å per voxel, Å, Å
  bool use_ctf, flip;
  int exposure, filter;  // exposure_weighting, reconstruction_filter
  const double* params;
  int tilts;

  FUSOR_HD static double freq(index_t k, index_t n) { return double(k <= (n - 1) / 2 ? k : k - n) / double(n); }

  /// One tilt's CTF at image frequency (x, y) in cycles per voxel (signed: as the image has it).
  FUSOR_HD double ctf_at(const double* q, double x, double y) const {
    const double pi = 3.14159265358979323846;
    const double f2 = (x * x + y * y) / (voxel * voxel);  // (1/Å)^2
    const double df = q[tw_defocus_mean] + q[tw_defocus_half] * ::cos(2.0 * (::atan2(y, x) - q[tw_astigmatism]));
    return ::sin(pi * lambda * f2 * (df - 0.5 * cs * lambda * lambda * f2) + q[tw_phase]);
  }

  /// One tilt's exposure filter at image frequency (x, y) in cycles per voxel.
  FUSOR_HD double exposure_at(const double* q, double x, double y) const {
    const double f2 = (x * x + y * y) / (voxel * voxel);
    if (exposure == int(exposure_weighting::grant_grigorieff) && f2 > 0)
      return ::exp(-q[tw_dose] / (2.0 * (0.245 * ::pow(f2, -1.665 / 2.0) + 2.81)));
    if (exposure == int(exposure_weighting::relion)) return ::exp(-4.0 * q[tw_dose] * f2);
    return 1.0;
  }

  /// The weight of one tilt's image at image frequency (x, y) in cycles per voxel.
  FUSOR_HD double image_weight(const double* q, double x, double y) const {
    const double pi = 3.14159265358979323846;
    double w = q[tw_scalar];
    if (use_ctf) {
      const double v = ctf_at(q, x, y);
      w *= flip ? ::fabs(v) : v;
    }
    w *= exposure_at(q, x, y);
    const double r = 2.0 * ::fabs(x);
    switch (filter) {
      case int(reconstruction_filter::ram_lak): w *= r; break;
      case int(reconstruction_filter::ramp): w *= ::fmin(1.0, ::fabs(x) * q[tw_ramp]); break;
      case int(reconstruction_filter::shepp_logan): w *= r > 0 ? r * ::sin(pi * r / 2) / (pi * r / 2) : 0.0; break;
      case int(reconstruction_filter::cosine): w *= r * ::cos(pi * r / 2); break;
      case int(reconstruction_filter::hamming): w *= r * (0.54 + 0.46 * ::cos(pi * r)); break;
      default: break;
    }
    return w;
  }

  /// The weight at frequency c. A component at the Nyquist frequency of an even axis stands for
  /// both +1/2 and -1/2 there, and the weight is not even in one axis alone (astigmatism, the
  /// tilts' slabs): at() takes the mean over both signs, so that the multiplier is Hermitian as a
  /// real filter must be (the component and its partner in the rfft half get the same value).
  FUSOR_HD double at(index_t i, index_t j, index_t k) const {
    const bool nyq[3] = {n0 % 2 == 0 && 2 * i == n0, n1 % 2 == 0 && 2 * j == n1, n2 % 2 == 0 && 2 * k == n2};
    double c[3] = {freq(i, n0), freq(j, n1), double(k) / double(n2)};
    double total = 0;
    int count = 0;
    for (int flips = 0; flips < 8; ++flips) {
      if (((flips & 1) && !nyq[0]) || ((flips & 2) && !nyq[1]) || ((flips & 4) && !nyq[2])) continue;
      const double f[3] = {flips & 1 ? -c[0] : c[0], flips & 2 ? -c[1] : c[1], flips & 4 ? -c[2] : c[2]};
      total += weight_at(f);
      ++count;
    }
    return total / double(count);
  }

  FUSOR_HD double weight_at(const double c[3]) const {
    const double cp = c[perp_axis], cb = c[beam_axis], ct = c[tilt_axis];
    double sum = 0, cover = 0;
    for (int t = 0; t < tilts; ++t) {
      const double* q = params + t * stride;
      const double dist = ::fabs(-q[tw_sin] * cp + q[tw_cos] * cb);
      if (dist >= q[tw_half_width]) continue;
      const double s = 1.0 - dist / q[tw_half_width];
      sum += s * image_weight(q, q[tw_cos] * cp + q[tw_sin] * cb, ct);
      cover += s;
    }
    return sum / (cover > 1.0 ? cover : 1.0);
  }

  FUSOR_HD void fill(index_t first, float* out, index_t count) const {
    for (index_t e = 0; e < count; ++e) {
      const index_t p = first + e, k = p % h2, row = p / h2;
      out[e] = float(at(row / n1, row % n1, k));
    }
  }
};

/// The generator and the device copy of its per-tilt numbers (which must outlive its use).
template <class B>
struct tilt_weight_parts {
  array<double, B> params;
  tilt_weight_generator gen;
};

template <class B>
tilt_weight_parts<B> make_tilt_weight(const tilt_weighting& w, const extents& shape, double voxel_size) {
  require_volume(shape, "tilt weight");
  check_length(voxel_size, "tilt_weight", "voxel size", "(Å)");
  const tilt_series& s = w.series;
  validate_tilt_series(s);
  if (w.defocus_handedness < -1 || w.defocus_handedness > 1)
    throw value_error("fusor::match: a tilt weighting's defocus handedness is -1, 0 or 1, got " + std::to_string(w.defocus_handedness));
  for (double o : w.center_offset)
    if (!std::isfinite(o)) throw value_error("fusor::match: a tilt weighting's centre offset must be finite");
  const int perp = 3 - s.tilt_axis - s.beam_axis;
  const double deg = 3.14159265358979323846 / 180.0;
  double step = 0;  // the smallest angular step (radians), for the ramp filter
  if (w.filter == reconstruction_filter::ramp) {
    std::vector<double> a;
    for (const tilt_image& t : s.tilts) a.push_back(t.angle);
    std::sort(a.begin(), a.end());
    for (std::size_t i = 1; i < a.size(); ++i)
      if (a[i] > a[i - 1]) step = step == 0 ? a[i] - a[i - 1] : std::min(step, a[i] - a[i - 1]);
    if (step == 0)
      throw value_error("fusor::match: the ramp reconstruction filter needs two different tilt angles, got " +
                        std::to_string(s.tilts.size()) + " tilt(s) at one angle");
    step *= deg;
  }
  const double a = s.optics.amplitude_contrast;
  const double np = double(shape[perp]), nb = double(shape[s.beam_axis]);
  std::vector<double> host(s.tilts.size() * std::size_t(tw_fields));
  for (std::size_t i = 0; i < s.tilts.size(); ++i) {
    const tilt_image& t = s.tilts[i];
    double* q = host.data() + i * std::size_t(tw_fields);
    q[tw_sin] = std::sin(t.angle * deg);
    q[tw_cos] = std::cos(t.angle * deg);
    q[tw_half_width] = std::sqrt(q[tw_sin] * q[tw_sin] / (np * np) + q[tw_cos] * q[tw_cos] / (nb * nb));
    q[tw_scalar] = w.cosine ? q[tw_cos] : 1.0;
    q[tw_dose] = t.dose;
    // the defocus at center_offset: its height along this tilt's beam (the normal m), in Å
    const double height = (q[tw_cos] * w.center_offset[std::size_t(s.beam_axis)] - q[tw_sin] * w.center_offset[std::size_t(perp)]) * voxel_size;
    q[tw_defocus_mean] = 0.5 * (t.defocus_u + t.defocus_v) + double(w.defocus_handedness) * height;
    q[tw_defocus_half] = 0.5 * (t.defocus_u - t.defocus_v);
    q[tw_astigmatism] = t.astigmatism_angle * deg;
    q[tw_phase] = t.phase_shift * deg + std::atan(a / std::sqrt(1 - a * a));
    q[tw_ramp] = np * step;
  }
  tilt_weight_parts<B> parts{array<double, B>(extents{index_t(host.size())}), {}};
  backend_memory<B>::copy_from_host(parts.params.data(), host.data(), index_t(host.size()));
  const bool ctf = w.ctf && s.has_defocus();
  parts.gen = tilt_weight_generator{shape[0],
                                    shape[1],
                                    shape[2],
                                    shape[2] / 2 + 1,
                                    s.tilt_axis,
                                    s.beam_axis,
                                    perp,
                                    voxel_size,
                                    electron_wavelength(s.optics.voltage_kv),
                                    s.optics.cs_mm * 1e7,
                                    ctf,
                                    s.correction == ctf_correction::phase_flip,
                                    s.has_dose() ? int(w.exposure) : int(exposure_weighting::none),
                                    int(w.filter),
                                    parts.params.data(),
                                    int(s.tilts.size())};
  return parts;
}

}  // namespace detail

/// The tilt series' weight for a real volume of `shape` at `voxel_size` Å per voxel, rfft-shaped:
/// (n0, n1, n2 / 2 + 1). A fourier_filter's `tilts` multiplies it with the filter's other parts.
template <class B = default_backend>
array<float, B> tilt_weight(const tilt_weighting& w, const extents& shape, double voxel_size) {
  const detail::tilt_weight_parts<B> parts = detail::make_tilt_weight<B>(w, shape, voxel_size);
  const extents h{shape[0], shape[1], shape[2] / 2 + 1};
  return array<float, B>(generator_expr<detail::tilt_weight_generator, B>{parts.gen, h, contiguous_strides(h)});
}

}  // namespace fusor::match
