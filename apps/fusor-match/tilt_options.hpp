#pragma once
// `fusor-match match`'s tilt-series options: the files and values that describe the series the
// target was reconstructed from (--tilt-angles, --mdoc, --dose, --defocus, the optics), made into a
// fusor::match::tilt_weighting whose weight the scan multiplies into every rotated template. Every
// file is read and every count and value checked before any voxel is read.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <fusor/match.hpp>

#include "warp_relion.hpp"

namespace fusor_match {

namespace match = fusor::match;

struct tilt_args {
  std::string angles;     // --tilt-angles: a .tlt/.rawtlt file or start,stop:step
  std::string mdoc;       // --mdoc: SerialEM's angles, doses and pixel size
  std::string dose;       // --dose: pytom's accumulated dose per tilt, one per line
  std::string defocus;    // --defocus: Å for every tilt (or the one CTF), or an IMOD .defocus / CTFFIND file
  std::string ctf_model = "none";        // --ctf-model: what the reconstruction did about the CTF
  std::string weighting = "grigorieff";  // --tilt-weighting
  std::string filter = "none";           // --reconstruction-filter
  double phase_shift = 0;                // --phase-shift, degrees, every tilt
  int handedness = 0;                    // --defocus-handedness: the defocus gradient's sign, 0 for none
  std::string warp_xml;                  // --warp-xml: Warp/M's tilt-series XML
  std::string relion_star, tomogram;     // --relion5-tomograms-star and --tomogram
  bool any_series() const { return !angles.empty() || !mdoc.empty() || !warp_xml.empty() || !relion_star.empty(); }
};

/// --defocus as a number of Å (the whole text a finite number), or nothing when it names a file
/// (or is not given).
inline std::optional<double> defocus_value(const tilt_args& t) { return match::detail::number_in(t.defocus); }

inline match::reconstruction_filter parse_reconstruction_filter(const std::string& s) {
  using f = match::reconstruction_filter;
  if (s == "none") return f::none;
  if (s == "ram-lak") return f::ram_lak;
  if (s == "ramp") return f::ramp;
  if (s == "shepp-logan") return f::shepp_logan;
  if (s == "cosine") return f::cosine;
  if (s == "hamming") return f::hamming;
  throw fusor::value_error("match: --reconstruction-filter expects none, ram-lak, ramp, shepp-logan, cosine or hamming, got \"" + s + "\"");
}

/// The series the options describe, or nothing when no tilt series is given (--tilt-angles,
/// --mdoc, --warp-xml or --relion5-tomograms-star; a --dose or a defocus file without one is an
/// error: they describe tilts). Warp's and RELION's files give the whole series, their optics
/// included; the other sources take the optics from `optics`. `wedge`: whether
/// --wedge was given too (an error: both describe the missing wedge).
inline std::optional<match::tilt_weighting> tilt_weighting_of(const tilt_args& t, const match::microscope& optics, bool phase_flip,
                                                              bool wedge) {
  const auto file = [](const std::string& path, const char* what) {
    if (!std::filesystem::is_regular_file(path))
      throw fusor::io_error("match: the " + std::string(what) + " " + path + " is not a file that can be read");
  };
  const bool defocus_file = !t.defocus.empty() && !defocus_value(t);
  if (!t.any_series()) {
    if (!t.dose.empty()) throw fusor::value_error("match: --dose gives a dose per tilt; give the tilts too (--tilt-angles or --mdoc)");
    if (!t.tomogram.empty())
      throw fusor::value_error("match: --tomogram names a tomogram of --relion5-tomograms-star; give that file too");
    if (defocus_file)
      throw fusor::value_error("match: --defocus " + t.defocus +
                               " is not a number, so it names a defocus file, which gives a defocus per tilt; give the tilts too "
                               "(--tilt-angles or --mdoc), or a defocus in Å");
    if (t.ctf_model != "none" || t.weighting != "grigorieff" || t.filter != "none" || t.handedness != 0)
      throw fusor::value_error("match: --ctf-model, --tilt-weighting, --reconstruction-filter and --defocus-handedness weight a "
                               "tilt series; give the tilts (--tilt-angles or --mdoc)");
    return std::nullopt;
  }
  if (wedge)
    throw fusor::value_error("match: --wedge and the tilt series (--tilt-angles, --mdoc, --warp-xml, --relion5-tomograms-star) both "
                             "describe the missing wedge; give one");
  if (int(!t.angles.empty()) + int(!t.mdoc.empty()) + int(!t.warp_xml.empty()) + int(!t.relion_star.empty()) > 1)
    throw fusor::value_error("match: --tilt-angles, --mdoc, --warp-xml and --relion5-tomograms-star each give the tilt series; give one");
  if (!t.tomogram.empty() && t.relion_star.empty())
    throw fusor::value_error("match: --tomogram names a tomogram of --relion5-tomograms-star; give that file too");
  const auto correction_of = [&] {
    if (t.ctf_model != "none" && t.ctf_model != "phase-flip")
      throw fusor::value_error("match: --ctf-model expects none or phase-flip, got \"" + t.ctf_model + "\"");
    return phase_flip || t.ctf_model == "phase-flip" ? match::ctf_correction::phase_flip : match::ctf_correction::none;
  };
  match::tilt_weighting w;
  if (!t.warp_xml.empty() || !t.relion_star.empty()) {
    // the whole series from Warp's or RELION's files: their optics, doses and defocus
    const std::string from = t.warp_xml.empty() ? "--relion5-tomograms-star" : "--warp-xml";
    if (!t.dose.empty() || !t.defocus.empty())
      throw fusor::value_error("match: " + from + " gives the doses and the defocus of every tilt; drop --dose and --defocus");
    if (!t.relion_star.empty() && t.tomogram.empty())
      throw fusor::value_error("match: --relion5-tomograms-star needs --tomogram NAME (its rlnTomoName)");
    if (!t.warp_xml.empty()) {
      file(t.warp_xml, "Warp XML");
      w.series = read_warp_xml(t.warp_xml);
    } else {
      file(t.relion_star, "tomograms.star");
      w.series = read_relion5_tomogram(t.relion_star, t.tomogram).series;
    }
    w.series.correction = correction_of();
  } else {
    std::vector<double> angles, doses;
    double pixel = 0;
    if (!t.mdoc.empty()) {
      file(t.mdoc, "mdoc file");
      match::mdoc_tilts m = match::read_mdoc(t.mdoc);
      angles = std::move(m.angles);
      doses = std::move(m.doses);
      pixel = m.pixel_size;
    } else if (std::filesystem::exists(t.angles) || t.angles.find(':') == std::string::npos) {
      file(t.angles, "tilt-angle file");
      angles = match::read_tilt_angles(t.angles);
    } else {
      angles = match::parse_tilt_range(t.angles);
    }
    if (!t.dose.empty()) {
      if (!t.mdoc.empty()) throw fusor::value_error("match: --dose and --mdoc both give the doses; give one");
      file(t.dose, "dose file");
      doses = match::read_dose_file(t.dose);
      if (doses.size() != angles.size())
        throw fusor::value_error("match: the dose file " + t.dose + " gives " + std::to_string(doses.size()) + " doses for " +
                                 std::to_string(angles.size()) + " tilts; expected one per tilt");
    }
    std::vector<match::tilt_defocus> defocus;
    if (defocus_file) {
      file(t.defocus, "defocus file");
      const bool imod = std::filesystem::path(t.defocus).extension() == ".defocus";
      defocus = imod ? match::read_imod_defocus(t.defocus, angles.size()) : match::read_ctffind(t.defocus);
      if (defocus.size() != angles.size())
        throw fusor::value_error("match: the defocus file " + t.defocus + " gives " + std::to_string(defocus.size()) + " tilts for " +
                                 std::to_string(angles.size()) + " tilt angles; expected one per tilt");
    } else if (const auto d = defocus_value(t)) {
      defocus.assign(angles.size(), match::tilt_defocus{*d, *d, 0, 0});
    }
    w.series = match::assemble_tilt_series(angles, doses, defocus, optics, correction_of());
    w.series.pixel_size = pixel;
  }
  for (auto& tilt : w.series.tilts) tilt.phase_shift += t.phase_shift;
  // pyTME's --tilt-weighting names; pytom's per-tilt weighting is grigorieff
  if (t.weighting == "none") {
    w.exposure = match::exposure_weighting::none;
  } else if (t.weighting == "angle") {
    w.exposure = match::exposure_weighting::none;
    w.cosine = true;
  } else if (t.weighting == "relion") {
    w.exposure = match::exposure_weighting::relion;
    w.cosine = true;
  } else if (t.weighting == "grigorieff") {
    w.exposure = match::exposure_weighting::grant_grigorieff;
  } else {
    throw fusor::value_error("match: --tilt-weighting expects none, angle, relion or grigorieff, got \"" + t.weighting + "\"");
  }
  w.filter = parse_reconstruction_filter(t.filter);
  if (t.handedness < -1 || t.handedness > 1)
    throw fusor::value_error("match: --defocus-handedness expects -1, 0 or 1, got " + std::to_string(t.handedness));
  if (t.handedness != 0 && !w.series.has_defocus())
    throw fusor::value_error("match: --defocus-handedness sets the sign of a defocus gradient; give the tilts' defocus too");
  w.defocus_handedness = t.handedness;
  match::validate_tilt_series(w.series);
  return w;
}

/// The series and its weighting as metadata.json records them.
inline nlohmann::ordered_json tilt_series_json(const tilt_args& t, const std::optional<match::tilt_weighting>& w) {
  if (!w) return nullptr;
  nlohmann::ordered_json j;
  std::vector<double> angle, dose, du, dv, ast, phase;
  for (const auto& x : w->series.tilts) {
    angle.push_back(x.angle);
    dose.push_back(x.dose);
    du.push_back(x.defocus_u);
    dv.push_back(x.defocus_v);
    ast.push_back(x.astigmatism_angle);
    phase.push_back(x.phase_shift);
  }
  j["tilt_angles"] = t.angles.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(t.angles);
  j["mdoc"] = t.mdoc.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(t.mdoc);
  j["warp_xml"] = t.warp_xml.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(t.warp_xml);
  j["relion5_tomograms_star"] = t.relion_star.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(t.relion_star);
  j["tomogram"] = t.tomogram.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(t.tomogram);
  j["voltage_kv"] = w->series.optics.voltage_kv;
  j["cs_mm"] = w->series.optics.cs_mm;
  j["amplitude_contrast"] = w->series.optics.amplitude_contrast;
  j["dose_file"] = t.dose.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(t.dose);
  j["defocus"] = t.defocus.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(t.defocus);
  j["angles"] = angle;
  j["doses"] = dose;
  j["defocus_u"] = du;
  j["defocus_v"] = dv;
  j["astigmatism_angle"] = ast;
  j["phase_shift"] = phase;
  j["pixel_size"] = w->series.pixel_size;
  j["ctf_model"] = w->series.correction == match::ctf_correction::phase_flip ? "phase-flip" : "none";
  j["ctf"] = w->ctf && w->series.has_defocus();
  j["tilt_weighting"] = t.weighting;
  j["reconstruction_filter"] = t.filter;
  j["defocus_handedness"] = t.handedness;
  return j;
}

}  // namespace fusor_match
