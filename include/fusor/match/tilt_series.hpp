#pragma once
// A tilt series as data: what each tilt image of a tomogram's series was recorded with (its angle,
// the electron exposure accumulated before it, its defocus and phase shift) and what the whole
// series shares (the microscope, the pixel size, the tilt axis, whether the tomogram was
// CTF-corrected). fusor::match::tilt_weighting turns one into the tomogram's 3-D transfer
// function (tilt_weight.hpp); the readers of the files that carry one are in tilt_files.hpp.
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "../core/error.hpp"

namespace fusor::match {

/// One tilt image. Angles in degrees (a rotation about the series' tilt axis), dose in e⁻/Å²,
/// defocus in Å with underfocus positive. The defocus is astigmatic as CTFFIND writes it: U along
/// the direction at `astigmatism_angle` degrees from the image's x axis (counter-clockwise), V
/// perpendicular to it. A series either gives every tilt a defocus or none (all U and V 0: no CTF).
struct tilt_image {
  double angle = 0;
  double dose = 0;                // accumulated before this image was recorded (pytom's --dose-accumulation)
  double defocus_u = 0;
  double defocus_v = 0;
  double astigmatism_angle = 0;  // degrees
  double phase_shift = 0;        // degrees (a phase plate's)
};

/// What the tomogram's reconstruction did about the CTF: nothing (the data hold CTF-modulated
/// amplitudes, signs included) or phase flipping (the signs undone: |CTF| remains).
enum class ctf_correction { none, phase_flip };

/// The microscope's optics shared by every tilt.
struct microscope {
  double voltage_kv = 300;
  double cs_mm = 2.7;               // spherical aberration
  double amplitude_contrast = 0.07;
};

/// A tilt series. The axes are the tomogram's (x, y, z) = (0, 1, 2): the images were recorded
/// along `beam_axis` at tilt 0 and tilted about `tilt_axis`. An image's x axis is the third axis
/// at tilt 0 (x for the usual tilt axis y), turned with the tilt; its y axis is the tilt axis.
/// pixel_size: Å per pixel of the images as recorded (0: not known); a weight is evaluated at the
/// voxel size of the volume it is made for (fourier_filter::voxel_size), which differs from it
/// where the tomogram was binned.
struct tilt_series {
  std::vector<tilt_image> tilts;
  microscope optics;
  double pixel_size = 0;
  int tilt_axis = 1;  // y
  int beam_axis = 2;  // z
  ctf_correction correction = ctf_correction::none;

  /// Whether the tilts carry defocus values (then every tilt does: validate_tilt_series).
  bool has_defocus() const {
    for (const tilt_image& t : tilts)
      if (t.defocus_u != 0 || t.defocus_v != 0) return true;
    return false;
  }
  /// Whether any tilt saw an exposure before it.
  bool has_dose() const {
    for (const tilt_image& t : tilts)
      if (t.dose != 0) return true;
    return false;
  }
};

/// The relativistic electron wavelength in Å at an acceleration voltage in kV (0.019687 Å at 300 kV).
inline double electron_wavelength(double voltage_kv) {
  const double h = 6.62607015e-34, c = 299792458.0, e = 1.602176634e-19, m = 9.1093837015e-31;
  const double energy = e * voltage_kv * 1e3;
  return h * c / std::sqrt(energy * energy + 2 * energy * m * c * c) * 1e10;
}

namespace detail {
/// A number as a reader writes it back (%g: -31000, 0.07, 1e+06).
inline std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}
}  // namespace detail

/// Checks a series before any work: at least one tilt; angles in [-90, 90], doses >= 0, defocus
/// positive (underfocus) on every tilt or on none, every field finite; positive voltage, Cs >= 0,
/// amplitude contrast in [0, 1), pixel size >= 0, two different axes in 0..2. A value_error names
/// the tilt (numbered from 0, as in the vector) and the field:
///   "fusor::match: tilt 17 has defocus U -31000 Å; expected a positive underfocus"
inline void validate_tilt_series(const tilt_series& s) {
  const auto fail = [](const std::string& what) { throw value_error("fusor::match: " + what); };
  if (s.tilts.empty()) fail("a tilt series needs at least one tilt, got none");
  if (s.tilt_axis < 0 || s.tilt_axis > 2 || s.beam_axis < 0 || s.beam_axis > 2 || s.tilt_axis == s.beam_axis)
    fail("a tilt series needs two different axes in 0..2, got tilt axis " + std::to_string(s.tilt_axis) + " and beam axis " +
         std::to_string(s.beam_axis));
  const microscope& m = s.optics;
  if (!(std::isfinite(m.voltage_kv) && m.voltage_kv > 0))
    fail("the tilt series has voltage " + detail::number_text(m.voltage_kv) + " kV; expected a positive voltage");
  if (!(std::isfinite(m.cs_mm) && m.cs_mm >= 0))
    fail("the tilt series has spherical aberration " + detail::number_text(m.cs_mm) + " mm; expected Cs >= 0");
  if (!(m.amplitude_contrast >= 0 && m.amplitude_contrast < 1))
    fail("the tilt series has amplitude contrast " + detail::number_text(m.amplitude_contrast) + "; expected a fraction in [0, 1)");
  if (!(std::isfinite(s.pixel_size) && s.pixel_size >= 0))
    fail("the tilt series has pixel size " + detail::number_text(s.pixel_size) + " Å; expected a size >= 0 (0: unknown)");
  const bool defocus = s.has_defocus();
  for (std::size_t i = 0; i < s.tilts.size(); ++i) {
    const tilt_image& t = s.tilts[i];
    const std::string tilt = "tilt " + std::to_string(i) + " has ";
    if (!(t.angle >= -90 && t.angle <= 90)) fail(tilt + "angle " + detail::number_text(t.angle) + "°; expected [-90, 90]");
    if (!(std::isfinite(t.dose) && t.dose >= 0))
      fail(tilt + "dose " + detail::number_text(t.dose) + " e/Å²; expected an accumulated exposure >= 0");
    if (!std::isfinite(t.astigmatism_angle))
      fail(tilt + "astigmatism angle " + detail::number_text(t.astigmatism_angle) + "°; expected a finite angle");
    if (!std::isfinite(t.phase_shift)) fail(tilt + "phase shift " + detail::number_text(t.phase_shift) + "°; expected a finite angle");
    if (!defocus) continue;
    for (const auto& [name, v] : {std::pair<const char*, double>{"U", t.defocus_u}, {"V", t.defocus_v}})
      if (!(std::isfinite(v) && v > 0))
        fail(v == 0 ? tilt + "no defocus " + name + " while other tilts have one; expected every tilt or none to have a defocus"
                    : tilt + "defocus " + name + " " + detail::number_text(v) + " Å; expected a positive underfocus");
  }
}

}  // namespace fusor::match
