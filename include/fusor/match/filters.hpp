#pragma once
// Fourier filters for template matching, computed once as multipliers of a real FFT (the shape
// rfftn gives: (n0, n1, n2 / 2 + 1)): bandpass in Å (hard or Gaussian edges), the missing wedge of a
// tilt series (and a tilt series' whole weight: tilt_weight.hpp), the contrast transfer function,
// and spectral whitening from a volume's power spectrum. A fourier_filter combines them (their
// product); scan applies one to the target once and one to every rotated template.
//
// Frequencies: position k of a transform axis of length n is the signed frequency k / n cycles per
// voxel (numpy.fft.fftfreq; rfftfreq on the last axis), so k / (n s) cycles per Å at s Å per voxel,
// and |f| is the Euclidean norm over the axes. The axes are (x, y, z) as everywhere in
// fusor::match.
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "../core/create.hpp"
#include "../core/reduce.hpp"
#include "../core/transfer.hpp"
#include "../fft/transforms.hpp"
#include "interpolation.hpp"
#include "tilt_weight.hpp"

namespace fusor::match {

/// Keeps the frequencies between the resolutions `highpass` and `lowpass` (Å; 0: no cut on that
/// side). Hard: 1 where 1/highpass <= |f| <= 1/lowpass, else 0. Gaussian (pyTME's default):
/// exp(-ln 2 (|f| lowpass)^2) (1/2 at the cut) times 1 - exp(-ln 2 (|f| highpass)^2).
struct bandpass {
  double lowpass = 0;
  double highpass = 0;
  bool gaussian = true;
};

/// The Fourier components a tilt series measured: a projection at tilt t (degrees, a rotation about
/// `tilt_axis`) samples the central section holding the tilt axis and the direction
/// cos t e_p + sin t e_b (e_b: the beam axis, e_p: the third axis). A component is kept (1) where
/// its elevation atan2(f_b, f_p), folded into (-90, 90], lies in [tilt_min, tilt_max]; components
/// on the tilt axis (f_b = f_p = 0) are always kept. The elevation uses frequencies in cycles per
/// voxel of each axis, so the wedge keeps its angles on non-cubic grids (pyTME corrects its index
/// grid by the aspect ratio for the same reason).
struct missing_wedge {
  double tilt_min = -60;
  double tilt_max = 60;
  int tilt_axis = 1;  // y
  int beam_axis = 2;  // z
};

/// The contrast transfer function as pyTME writes it (after CTFFIND4):
///   ctf(f) = sin(pi lambda |f|^2 (defocus - Cs lambda^2 |f|^2 / 2) + phase_shift + atan(A / sqrt(1 - A^2)))
/// with lambda the relativistic electron wavelength at `voltage_kv`, defocus in Å (positive:
/// underfocus), Cs in mm, A the amplitude contrast; phase_flip takes |ctf| (for phase-flipped data).
struct contrast_transfer {
  double defocus = 30000;
  double voltage_kv = 300;
  double cs_mm = 2.7;
  double amplitude_contrast = 0.07;
  double phase_shift_degrees = 0;
  bool phase_flip = false;
};

/// A radial multiplier: value[s] at |f| = s / (2 (value.size() - 1)) cycles per voxel, linear
/// between shells, the last value beyond them (whitening_profile makes one).
struct radial_profile {
  std::vector<float> value;
};

/// A product of filters; empty parts are left out. voxel_size: Å per voxel of the volume it is
/// evaluated for.
struct fourier_filter {
  double voxel_size = 1;
  std::optional<bandpass> band;
  std::optional<missing_wedge> wedge;
  std::optional<contrast_transfer> ctf;
  std::optional<radial_profile> whitening;
  std::optional<tilt_weighting> tilts;  // a tilt series' 3-D weight (tilt_weight.hpp), at voxel_size
  bool empty() const { return !band && !wedge && !ctf && !whitening && !tilts; }
};

namespace detail {

inline constexpr int max_profile = 4096;

/// The multiplier at each position of an rfft-shaped array of the real shape (n0, n1, n2).
struct filter_generator {
  using value_type = float;
  index_t n0, n1, n2, h2;  // h2 = n2 / 2 + 1
  double scale;            // multiplies the product (1 / |grid| folds an inverse's scaling in)
  double voxel;
  // bandpass
  bool has_band, band_gaussian;
  double low_cut, high_cut;  // cycles per Å; 0 = none
  // wedge
  bool has_wedge;
  int tilt_axis, beam_axis, perp_axis;
  double tilt_min, tilt_max;
  // ctf
  bool has_ctf, ctf_flip;
  double lambda, defocus, cs, phase;
  // whitening
  const float* profile;
  int profile_size;

  FUSOR_HD static double freq(index_t k, index_t n) { return double(k <= (n - 1) / 2 ? k : k - n) / double(n); }

  FUSOR_HD double at(index_t i, index_t j, index_t k) const {
    const double c[3] = {freq(i, n0), freq(j, n1), double(k) / double(n2)};  // cycles per voxel
    const double fv = ::sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
    const double f = fv / voxel;  // cycles per Å
    double v = scale;
    if (has_band) {
      if (band_gaussian) {
        const double ln2 = 0.69314718055994531;
        if (low_cut > 0) v *= ::exp(-ln2 * (f / low_cut) * (f / low_cut));
        if (high_cut > 0) v *= 1.0 - ::exp(-ln2 * (f / high_cut) * (f / high_cut));
      } else {
        if (low_cut > 0 && f > low_cut) v = 0.0;
        if (high_cut > 0 && f < high_cut) v = 0.0;
      }
    }
    if (has_wedge) {
      const double b = c[beam_axis], p = c[perp_axis];
      if (b != 0.0 || p != 0.0) {
        double e = ::atan2(b, p) * (180.0 / 3.14159265358979323846);
        if (e > 90.0) e -= 180.0;
        if (e <= -90.0) e += 180.0;
        if (e < tilt_min || e > tilt_max) v = 0.0;
      }
    }
    if (has_ctf) {
      const double f2 = f * f;
      double t = ::sin(3.14159265358979323846 * lambda * f2 * (defocus - 0.5 * cs * lambda * lambda * f2) + phase);
      v *= ctf_flip ? ::fabs(t) : t;
    }
    if (profile_size > 0) {
      const double x = fv * double(2 * (profile_size - 1));
      const int s = int(x);
      v *= s >= profile_size - 1 ? double(profile[profile_size - 1])
                                 : double(profile[s]) + (x - double(s)) * double(profile[s + 1] - profile[s]);
    }
    return v;
  }

  FUSOR_HD void fill(index_t first, float* out, index_t count) const {
    for (index_t e = 0; e < count; ++e) {
      const index_t p = first + e, k = p % h2, row = p / h2;
      out[e] = float(at(row / n1, row % n1, k));
    }
  }
};

/// The filter's parameters checked and laid out for the generator (profile: a device copy).
template <class B>
filter_generator make_filter(const fourier_filter& flt, const extents& shape, double scale, const array<float, B>& profile) {
  require_volume(shape, "fourier filter");
  check_length(flt.voxel_size, "fourier_filter", "voxel size", "(Å)");
  filter_generator g{shape[0], shape[1], shape[2], shape[2] / 2 + 1, scale, flt.voxel_size, false, false, 0, 0, false, 0, 2, 0,
                     0, 0, false, false, 0, 0, 0, 0, nullptr, 0};
  if (flt.band) {
    const bandpass& b = *flt.band;
    check_length(b.lowpass, "bandpass", "lowpass", "(Å)", true);
    check_length(b.highpass, "bandpass", "highpass", "(Å)", true);
    if (b.lowpass > 0 && b.highpass > 0 && b.highpass <= b.lowpass)
      throw value_error("fusor::match: bandpass expects highpass > lowpass (Å: a coarser resolution), got highpass " +
                        std::to_string(b.highpass) + " and lowpass " + std::to_string(b.lowpass));
    g.has_band = true;
    g.band_gaussian = b.gaussian;
    g.low_cut = b.lowpass > 0 ? 1.0 / b.lowpass : 0.0;
    g.high_cut = b.highpass > 0 ? 1.0 / b.highpass : 0.0;
  }
  if (flt.wedge) {
    const missing_wedge& w = *flt.wedge;
    if (w.tilt_axis < 0 || w.tilt_axis > 2 || w.beam_axis < 0 || w.beam_axis > 2 || w.tilt_axis == w.beam_axis)
      throw value_error("fusor::match: missing_wedge expects two different axes in 0..2, got tilt axis " +
                        std::to_string(w.tilt_axis) + " and beam axis " + std::to_string(w.beam_axis));
    if (!(w.tilt_min >= -90 && w.tilt_min <= w.tilt_max && w.tilt_max <= 90))
      throw value_error("fusor::match: missing_wedge expects -90 <= tilt_min <= tilt_max <= 90 degrees, got [" +
                        std::to_string(w.tilt_min) + ", " + std::to_string(w.tilt_max) + "]");
    g.has_wedge = true;
    g.tilt_axis = w.tilt_axis;
    g.beam_axis = w.beam_axis;
    g.perp_axis = 3 - w.tilt_axis - w.beam_axis;
    g.tilt_min = w.tilt_min;
    g.tilt_max = w.tilt_max;
  }
  if (flt.ctf) {
    const contrast_transfer& c = *flt.ctf;
    check_length(c.voltage_kv, "contrast_transfer", "voltage", "(kV)");
    check_length(c.cs_mm, "contrast_transfer", "spherical aberration", "(mm)", true);
    if (!std::isfinite(c.defocus) || !std::isfinite(c.phase_shift_degrees))
      throw value_error("fusor::match: the CTF's defocus and phase shift must be finite");
    if (!(c.amplitude_contrast >= 0 && c.amplitude_contrast < 1))
      throw value_error("fusor::match: the CTF's amplitude contrast must lie in [0, 1), got " +
                        std::to_string(c.amplitude_contrast));
    g.has_ctf = true;
    g.ctf_flip = c.phase_flip;
    g.lambda = electron_wavelength(c.voltage_kv);
    g.defocus = c.defocus;
    g.cs = c.cs_mm * 1e7;  // Å
    g.phase = c.phase_shift_degrees * (3.14159265358979323846 / 180.0) +
              std::atan(c.amplitude_contrast / std::sqrt(1 - c.amplitude_contrast * c.amplitude_contrast));
  }
  if (flt.whitening) {
    const auto& v = flt.whitening->value;
    if (v.size() < 2 || v.size() > std::size_t(max_profile))
      throw value_error("fusor::match: a radial profile needs 2 to " + std::to_string(max_profile) + " shells, got " +
                        std::to_string(v.size()));
    g.profile = profile.data();
    g.profile_size = int(v.size());
  }
  return g;
}

template <class B>
array<float, B> profile_on(const fourier_filter& flt) {
  if (!flt.whitening) return array<float, B>(extents{0});
  const auto& v = flt.whitening->value;
  for (float x : v)
    if (!std::isfinite(x)) throw value_error("fusor::match: a radial profile holds a value that is not finite");
  array<float, B> out(extents{index_t(v.size())});
  backend_memory<B>::copy_from_host(out.data(), v.data(), index_t(v.size()));
  return out;
}

}  // namespace detail

namespace detail {
/// The multiplier times `scale`.
template <class B>
array<float, B> filter_array(const fourier_filter& flt, const extents& shape, double scale) {
  const array<float, B> profile = profile_on<B>(flt);
  const filter_generator g = make_filter<B>(flt, shape, scale, profile);
  const extents h{shape[0], shape[1], shape[2] / 2 + 1};
  const generator_expr<filter_generator, B> parts{g, h, contiguous_strides(h)};
  if (!flt.tilts) return array<float, B>(parts);
  // the tilt series' weight fused into the same pass (its per-tilt numbers live until it is done)
  const tilt_weight_parts<B> tilts = make_tilt_weight<B>(*flt.tilts, shape, flt.voxel_size);
  return array<float, B>(parts * generator_expr<tilt_weight_generator, B>{tilts.gen, h, contiguous_strides(h)});
}
}  // namespace detail

/// The filter's multiplier for a real volume of `shape`, rfft-shaped: (n0, n1, n2 / 2 + 1).
template <class B = default_backend>
array<float, B> filter_multiplier(const fourier_filter& flt, const extents& shape) {
  return detail::filter_array<B>(flt, shape, 1.0);
}

/// The volume filtered: irfftn(rfftn(volume) multiplier).
template <class B>
array<float, B> apply_filter(const array<float, B>& volume, const fourier_filter& flt) {
  detail::require_volume(volume.shape(), "apply_filter");
  if (volume.size() == 0 || flt.empty()) return volume.copy();
  auto spec = fft::rfftn(volume);
  spec = spec * filter_multiplier<B>(flt, volume.shape());
  return fft::irfftn(std::move(spec), volume.shape());
}

/// A whitening profile from a volume's power spectrum: the mean of |F|^2 over shells of width
/// 1 / (2 (n - 1)) cycles per voxel (n = max(shape) // 2 + 1 shells, |f| rounded to the nearest
/// shell), and 1 / sqrt of it, scaled so its largest value is 1. Shells that no frequency reaches
/// take their neighbour's value; so does shell 0, the mean. (pyTME 0.3.6 averages log
/// periodograms of windowed patches and smooths the profile; this is the plain radial average.)
template <class B>
radial_profile whitening_profile(const array<float, B>& volume) {
  detail::require_volume(volume.shape(), "whitening_profile");
  const extents& s = volume.shape();
  if (volume.size() == 0) throw shape_error("fusor::match::whitening_profile: expected a non-empty volume");
  const auto spec = to<cpu>(fft::rfftn(volume));
  const index_t shells = std::max(s[0], std::max(s[1], s[2])) / 2 + 1;
  std::vector<double> power(std::size_t(shells), 0.0), count(std::size_t(shells), 0.0);
  const index_t h = s[2] / 2 + 1;
  for (index_t i = 0; i < s[0]; ++i)
    for (index_t j = 0; j < s[1]; ++j)
      for (index_t k = 0; k < h; ++k) {
        const double f0 = detail::filter_generator::freq(i, s[0]), f1 = detail::filter_generator::freq(j, s[1]),
                     f2 = double(k) / double(s[2]);
        const index_t shell = index_t(std::floor(std::sqrt(f0 * f0 + f1 * f1 + f2 * f2) * double(2 * (shells - 1)) + 0.5));
        if (shell >= shells) continue;
        power[std::size_t(shell)] += std::norm(spec.data()[(i * s[1] + j) * h + k]);
        count[std::size_t(shell)] += 1;
      }
  radial_profile p;
  p.value.assign(std::size_t(std::max<index_t>(shells, 2)), 0.0f);
  double top = 0;
  std::vector<double> w(p.value.size(), -1.0);
  // shell 0 (the mean, a rounding residual for a zero-mean volume) is left out: it takes the
  // value of the next shell with power
  for (std::size_t q = 1; q < std::size_t(shells); ++q)
    if (count[q] > 0 && power[q] > 0) {
      w[q] = 1.0 / std::sqrt(power[q] / count[q]);
      top = std::max(top, w[q]);
    }
  if (!(top > 0)) throw value_error("fusor::match::whitening_profile: the volume has no power to whiten");
  // a shell without power (the mean's at a zero-mean volume's DC, empty shells) takes the value
  // of the nearest shell below it, the first shells that of the first one with power
  if (w[0] < 0)
    for (double x : w)
      if (x > 0) {
        w[0] = x;
        break;
      }
  for (std::size_t q = 1; q < w.size(); ++q)
    if (w[q] < 0) w[q] = w[q - 1];
  for (std::size_t q = 0; q < w.size(); ++q) p.value[q] = float(w[q] / top);
  return p;
}

}  // namespace fusor::match
