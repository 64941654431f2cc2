#pragma once
// The files `fusor-match simulate --tilt-series` writes beside the tomogram, each in the form its
// program writes and fusor's readers read (tilt_files.hpp, warp_relion.hpp): IMOD's .tlt and
// ctfplotter's version-3 .defocus with astigmatism, pytom's dose file, and RELION 5's
// tomograms.star with the tomogram's tilt-series STAR.
#include <cstdio>
#include <filesystem>
#include <string>

#include <fusor/match.hpp>

#include "output.hpp"

namespace fusor_match {

namespace match = fusor::match;

/// One number per line, as printf's `format` writes it.
inline std::string one_per_line(const match::tilt_series& s, double match::tilt_image::*field, const char* format) {
  std::string out;
  char line[64];
  for (const auto& t : s.tilts) {
    std::snprintf(line, sizeof line, format, t.*field);
    out += line;
  }
  return out;
}

/// IMOD's tilt angles: one per line, as newstack and tilt write them.
inline std::string imod_tilt_angles(const match::tilt_series& s) { return one_per_line(s, &match::tilt_image::angle, "%10.4f\n"); }

/// ctfplotter's defocus file, version 3 with astigmatism (flag 1): a line per view, numbered from
/// 1, with its angle twice, defocus 1 and 2 in nm and the astigmatism angle in degrees.
inline std::string imod_defocus_file(const match::tilt_series& s) {
  std::string out = "1  0 0. 0. 0  3\n";
  char line[160];
  for (std::size_t i = 0; i < s.tilts.size(); ++i) {
    const auto& t = s.tilts[i];
    std::snprintf(line, sizeof line, "%zu\t%zu\t%.2f\t%.2f\t%.4f\t%.4f\t%.4f\n", i + 1, i + 1, t.angle, t.angle, t.defocus_u / 10, t.defocus_v / 10,
                  t.astigmatism_angle);
    out += line;
  }
  return out;
}

/// pytom's dose file: the dose accumulated before each view, e/Å², one per line.
inline std::string dose_file(const match::tilt_series& s) { return one_per_line(s, &match::tilt_image::dose, "%.4f\n"); }

/// RELION 5's tomograms.star for one tomogram `name` of shape n, its tilt-series STAR at
/// `tilt_series_star` (written as given, relative to the folder both sit in).
inline std::string relion5_tomograms_star(const match::tilt_series& s, const std::string& name, const fusor::extents& n,
                                          const std::string& tilt_series_star) {
  char row[512];
  std::snprintf(row, sizeof row, "%s %.6f %.6f %.6f %.6f 1.000000 %.6f %s 1.000000 %lld %lld %lld\n", name.c_str(), s.optics.voltage_kv,
                s.optics.cs_mm, s.optics.amplitude_contrast, s.pixel_size, s.pixel_size, tilt_series_star.c_str(), (long long)n[0],
                (long long)n[1], (long long)n[2]);
  return "\n# version 50001 (fusor-match simulate)\n\ndata_global\n\nloop_\n_rlnTomoName #1\n_rlnVoltage #2\n_rlnSphericalAberration #3\n"
         "_rlnAmplitudeContrast #4\n_rlnMicrographOriginalPixelSize #5\n_rlnTomoHand #6\n_rlnTomoTiltSeriesPixelSize #7\n"
         "_rlnTomoTiltSeriesStarFile #8\n_rlnTomoTomogramBinning #9\n_rlnTomoSizeX #10\n_rlnTomoSizeY #11\n_rlnTomoSizeZ #12\n" +
         std::string(row) + "\n";
}

/// The tomogram's tilt-series STAR: block data_<name>, a row per tilt in angle order.
inline std::string relion5_tilt_series_star(const match::tilt_series& s, const std::string& name) {
  std::string out = "\n# version 50001 (fusor-match simulate)\n\ndata_" + name +
                    "\n\nloop_\n_rlnTomoNominalStageTiltAngle #1\n_rlnTomoNominalTiltAxisAngle #2\n_rlnMicrographPreExposure #3\n"
                    "_rlnDefocusU #4\n_rlnDefocusV #5\n_rlnDefocusAngle #6\n_rlnTomoXTilt #7\n_rlnTomoYTilt #8\n_rlnTomoZRot #9\n"
                    "_rlnTomoXShiftAngst #10\n_rlnTomoYShiftAngst #11\n";
  char line[256];
  for (const auto& t : s.tilts) {
    std::snprintf(line, sizeof line, "%.4f 90.000000 %.4f %.4f %.4f %.4f 0.000000 %.4f 90.000000 0.000000 0.000000\n", t.angle, t.dose,
                  t.defocus_u, t.defocus_v, t.astigmatism_angle, t.angle);
    out += line;
  }
  return out + "\n";
}

}  // namespace fusor_match
