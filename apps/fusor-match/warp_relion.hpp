#pragma once
// The tilt series as Warp/M and RELION 5 keep it: Warp's per-tilt-series XML (through pugixml,
// Debian's libpugixml-dev) and RELION 5's tomograms.star with each tomogram's tilt-series STAR
// (through gemmi's STAR parser: star_tables.hpp). They live beside the program rather than in
// fusor's headers so that fusor itself stays free of both libraries (and gemmi 0.5.7 cannot be
// compiled as C++20 by clang 19). A malformed file is a fusor::io_error naming the file, the line
// (or the row of a loop) and the field.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <pugixml.hpp>

#include <fusor/match.hpp>

#include "star_tables.hpp"

namespace fusor_match {

namespace match = fusor::match;

namespace metadata_detail {

[[noreturn]] inline void fail(const std::string& fn, const std::string& where, const std::string& what) {
  throw fusor::io_error("match: " + fn + ": " + where + ": " + what);
}

/// The line (from 1) of byte `offset` in `text`.
inline std::size_t line_of(const std::string& text, std::ptrdiff_t offset) {
  std::size_t line = 1;
  for (std::ptrdiff_t i = 0; i < offset && i < std::ptrdiff_t(text.size()); ++i) line += text[std::size_t(i)] == '\n';
  return line;
}

}  // namespace metadata_detail

/// Warp/M's tilt-series XML (TiltSeries.SaveMeta): <Angles> and <Dose> hold one number per line
/// (the dose accumulated before each tilt), <UseTilt> True or False per line (tilts Warp excluded
/// are left out here too), <CTF> holds <Param Name Value> pairs (Voltage kV, Cs mm, Amplitude,
/// PixelSize Å, and Defocus, DefocusDelta in µm, DefocusAngle in degrees, PhaseShift in units of
/// π, as Warp's CTF.cs keeps them), and <GridCTF>, <GridCTFDefocusDelta>, <GridCTFDefocusAngle>,
/// <GridCTFPhase> one <Node Z Value> per tilt. Warp's defocus along the astigmatism angle is
/// Defocus + DefocusDelta / 2 (U) and across it Defocus - DefocusDelta / 2 (V): CTF.cs's Get2D.
/// Warp writes the file in UTF-16; pugixml reads either encoding.
inline match::tilt_series read_warp_xml(const std::string& path) {
  const std::string fn = "read_warp_xml";
  std::ifstream in(path, std::ios::binary);
  if (!in) metadata_detail::fail(fn, path, "cannot open the file");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  pugi::xml_document doc;
  const pugi::xml_parse_result parsed = doc.load_buffer(text.data(), text.size());
  if (!parsed)
    metadata_detail::fail(fn, path + ":" + std::to_string(metadata_detail::line_of(text, parsed.offset)),
                          std::string("not well-formed XML: ") + parsed.description());
  const pugi::xml_node root = doc.child("TiltSeries");
  if (!root) metadata_detail::fail(fn, path, "expected a <TiltSeries> root element (Warp's tilt-series XML)");
  // the line of a node: pugixml counts bytes from the start of the buffer it parsed (UTF-8 or
  // the converted UTF-16), so the line is reported for UTF-8 files and omitted otherwise
  const bool utf8 = text.size() < 2 || !((text[0] == '\xff' && text[1] == '\xfe') || (text[0] == '\xfe' && text[1] == '\xff'));
  const auto where = [&](const pugi::xml_node& n) {
    return utf8 ? path + ":" + std::to_string(metadata_detail::line_of(text, n.offset_debug())) : path;
  };
  const auto numbers = [&](const char* element, bool required) {
    std::vector<double> out;
    const pugi::xml_node n = root.child(element);
    if (!n) {
      if (required) metadata_detail::fail(fn, path, std::string("has no <") + element + "> element");
      return out;
    }
    std::istringstream s(n.text().get());
    for (std::string word; s >> word;) {
      const auto v = match::detail::number_in(word);
      if (!v) metadata_detail::fail(fn, where(n), std::string("<") + element + "> holds '" + word + "', not a finite number");
      out.push_back(*v);
    }
    return out;
  };
  const std::vector<double> angles = numbers("Angles", true), doses = numbers("Dose", false);
  const std::size_t count = angles.size();
  if (count == 0) metadata_detail::fail(fn, where(root.child("Angles")), "<Angles> holds no angle");
  if (!doses.empty() && doses.size() != count)
    metadata_detail::fail(fn, where(root.child("Dose")),
                          "<Dose> holds " + std::to_string(doses.size()) + " values for " + std::to_string(count) + " angles");
  std::vector<bool> use(count, true);
  if (const pugi::xml_node n = root.child("UseTilt")) {
    std::istringstream s(n.text().get());
    std::size_t i = 0;
    for (std::string word; s >> word; ++i) {
      if (word != "True" && word != "False")
        metadata_detail::fail(fn, where(n), "<UseTilt> holds '" + word + "'; expected True or False");
      if (i < count) use[i] = word == "True";
    }
    if (i != count)
      metadata_detail::fail(fn, where(n), "<UseTilt> holds " + std::to_string(i) + " values for " + std::to_string(count) + " angles");
  }
  // the CTF's parameters
  match::microscope optics;
  double pixel = 0, defocus = 0, delta = 0, angle = 0, phase = 0;
  bool has_defocus = false;
  if (const pugi::xml_node ctf = root.child("CTF")) {
    for (const pugi::xml_node p : ctf.children("Param")) {
      const std::string name = p.attribute("Name").value(), value = p.attribute("Value").value();
      const auto take = [&](double& into) {
        const auto v = match::detail::number_in(value);
        if (!v) metadata_detail::fail(fn, where(p), "CTF parameter " + name + " = '" + value + "' is not a finite number");
        into = *v;
      };
      if (name == "Voltage") take(optics.voltage_kv);
      else if (name == "Cs") take(optics.cs_mm);
      else if (name == "Amplitude") take(optics.amplitude_contrast);
      else if (name == "PixelSize") take(pixel);
      else if (name == "DefocusDelta") take(delta);
      else if (name == "DefocusAngle") take(angle);
      else if (name == "PhaseShift") take(phase);
      else if (name == "Defocus") {
        take(defocus);
        has_defocus = true;
      }
    }
  }
  // a grid per tilt: Node Z (the tilt) and Value; absent grids keep the CTF's one value
  const auto grid = [&](const char* element, double fallback) {
    std::vector<double> out(count, fallback);
    const pugi::xml_node g = root.child(element);
    if (!g) return out;
    std::vector<bool> seen(count, false);
    for (const pugi::xml_node node : g.children("Node")) {
      const auto z = match::detail::number_in(node.attribute("Z").value());
      const auto v = match::detail::number_in(node.attribute("Value").value());
      if (!z || *z != std::floor(*z) || *z < 0 || *z >= double(count))
        metadata_detail::fail(fn, where(node), std::string("<") + element + "> has a Node with Z '" + node.attribute("Z").value() +
                                                   "'; expected a tilt index in 0.." + std::to_string(count - 1));
      if (!v)
        metadata_detail::fail(fn, where(node), std::string("<") + element + "> has a Node with Value '" + node.attribute("Value").value() +
                                                   "', not a finite number");
      out[std::size_t(*z)] = *v;
      seen[std::size_t(*z)] = true;
    }
    for (std::size_t i = 0; i < count; ++i)
      if (!seen[i]) metadata_detail::fail(fn, where(g), std::string("<") + element + "> has no Node for tilt " + std::to_string(i));
    return out;
  };
  const bool per_tilt = bool(root.child("GridCTF"));
  const std::vector<double> d = grid("GridCTF", defocus), dd = grid("GridCTFDefocusDelta", delta),
                            da = grid("GridCTFDefocusAngle", angle), dp = grid("GridCTFPhase", phase);
  match::tilt_series s;
  s.optics = optics;
  s.pixel_size = pixel;
  for (std::size_t i = 0; i < count; ++i) {
    if (!use[i]) continue;
    match::tilt_image t;
    t.angle = angles[i];
    t.dose = doses.empty() ? 0.0 : doses[i];
    if (has_defocus || per_tilt) {
      t.defocus_u = (d[i] + 0.5 * dd[i]) * 1e4;
      t.defocus_v = (d[i] - 0.5 * dd[i]) * 1e4;
      t.astigmatism_angle = da[i];
    }
    t.phase_shift = dp[i] * 180.0;  // units of π
    s.tilts.push_back(t);
  }
  if (s.tilts.empty()) metadata_detail::fail(fn, path, "every tilt is excluded (<UseTilt> False)");
  try {
    match::validate_tilt_series(s);
  } catch (const fusor::value_error& e) {
    metadata_detail::fail(fn, path, e.what());
  }
  return s;
}

/// What RELION 5 says about one tomogram: its tilt series and its handedness (rlnTomoHand: the
/// sign of the defocus gradient across the tomogram's height).
struct relion5_tomogram {
  match::tilt_series series;
  double hand = 1;
  std::filesystem::path tilt_series_star;
};

namespace metadata_detail {

/// A STAR path as RELION writes it: relative to the project folder, which is the current folder
/// where RELION ran; failing that, relative to the folder of `from` or to one of its parents.
inline std::filesystem::path resolve_star_path(const std::string& written, const std::filesystem::path& from) {
  const std::filesystem::path p(written);
  if (p.is_absolute() || std::filesystem::exists(p)) return p;
  for (std::filesystem::path dir = std::filesystem::absolute(from).parent_path(); !dir.empty(); dir = dir.parent_path()) {
    if (std::filesystem::exists(dir / p)) return dir / p;
    if (dir == dir.parent_path()) break;
  }
  return p;
}

inline std::vector<star_block> star_or_fail(const std::string& fn, const std::string& path) {
  try {
    return read_star_tables(path);
  } catch (const std::exception& e) {
    fail(fn, path, e.what());
  }
}

}  // namespace metadata_detail

/// RELION 5's tomograms.star (data_global: a row per tomogram with rlnTomoName, rlnVoltage,
/// rlnSphericalAberration, rlnAmplitudeContrast, rlnTomoTiltSeriesPixelSize, rlnTomoHand and
/// rlnTomoTiltSeriesStarFile), and the tomogram `name`'s tilt-series STAR (block data_<name>, a
/// row per tilt: the angle rlnTomoYTilt, or rlnTomoNominalStageTiltAngle without it; the dose
/// rlnMicrographPreExposure; rlnDefocusU, rlnDefocusV (Å), rlnDefocusAngle (degrees); rlnPhaseShift
/// (degrees) where present).
inline relion5_tomogram read_relion5_tomogram(const std::string& tomograms_star, const std::string& name) {
  const std::string fn = "read_relion5_tomogram";
  const auto blocks = metadata_detail::star_or_fail(fn, tomograms_star);
  const star_loop* global = nullptr;
  for (const auto& b : blocks)
    if (b.name == "global" && !b.loops.empty()) global = &b.loops.front();
  if (!global) metadata_detail::fail(fn, tomograms_star, "has no data_global block with a loop (RELION 5's tomograms.star)");
  const int name_col = global->column("rlnTomoName");
  if (name_col < 0) metadata_detail::fail(fn, tomograms_star, "data_global has no rlnTomoName column");
  const std::vector<std::string>* row = nullptr;
  std::string names;
  for (const auto& r : global->rows) {
    names += (names.empty() ? "" : ", ") + r[std::size_t(name_col)];
    if (r[std::size_t(name_col)] == name) row = &r;
  }
  if (!row) metadata_detail::fail(fn, tomograms_star, "has no tomogram named '" + name + "'; it has " + names);
  const std::string where_row = tomograms_star + ": data_global, tomogram " + name;
  const auto value = [&](const char* tag, bool required, double fallback) {
    const int c = global->column(tag);
    if (c < 0) {
      if (required) metadata_detail::fail(fn, where_row, std::string("no ") + tag + " column");
      return fallback;
    }
    const auto v = match::detail::number_in((*row)[std::size_t(c)]);
    if (!v) metadata_detail::fail(fn, where_row, std::string(tag) + " '" + (*row)[std::size_t(c)] + "' is not a finite number");
    return *v;
  };
  relion5_tomogram t;
  t.series.optics = {value("rlnVoltage", true, 0), value("rlnSphericalAberration", true, 0), value("rlnAmplitudeContrast", true, 0)};
  t.series.pixel_size = value("rlnTomoTiltSeriesPixelSize", false, 0);
  t.hand = value("rlnTomoHand", false, 1);
  const int star_col = global->column("rlnTomoTiltSeriesStarFile");
  if (star_col < 0) metadata_detail::fail(fn, where_row, "no rlnTomoTiltSeriesStarFile column");
  t.tilt_series_star = metadata_detail::resolve_star_path((*row)[std::size_t(star_col)], tomograms_star);
  const std::string ts = t.tilt_series_star.string();
  const auto tilt_blocks = metadata_detail::star_or_fail(fn, ts);
  const star_loop* tilts = nullptr;
  for (const auto& b : tilt_blocks)
    if (b.name == name && !b.loops.empty()) tilts = &b.loops.front();
  if (!tilts) metadata_detail::fail(fn, ts, "has no data_" + name + " block with a loop");
  const int angle_col = tilts->column("rlnTomoYTilt") >= 0 ? tilts->column("rlnTomoYTilt") : tilts->column("rlnTomoNominalStageTiltAngle");
  if (angle_col < 0) metadata_detail::fail(fn, ts, "data_" + name + " has neither rlnTomoYTilt nor rlnTomoNominalStageTiltAngle");
  const int dose_col = tilts->column("rlnMicrographPreExposure"), u_col = tilts->column("rlnDefocusU"),
            v_col = tilts->column("rlnDefocusV"), a_col = tilts->column("rlnDefocusAngle"), p_col = tilts->column("rlnPhaseShift");
  if ((u_col < 0) != (v_col < 0)) metadata_detail::fail(fn, ts, "data_" + name + " has one of rlnDefocusU and rlnDefocusV without the other");
  for (std::size_t r = 0; r < tilts->rows.size(); ++r) {
    const auto& cells = tilts->rows[r];
    const std::string at = ts + ": data_" + name + " (the loop from line " + std::to_string(tilts->line) + "), row " + std::to_string(r + 1);
    const auto cell = [&](int c, const char* tag) {
      if (c < 0) return 0.0;
      const auto v = match::detail::number_in(cells[std::size_t(c)]);
      if (!v) metadata_detail::fail(fn, at, std::string(tag) + " '" + cells[std::size_t(c)] + "' is not a finite number");
      return *v;
    };
    match::tilt_image image;
    image.angle = cell(angle_col, tilts->tags[std::size_t(angle_col)].c_str());
    image.dose = cell(dose_col, "rlnMicrographPreExposure");
    image.defocus_u = cell(u_col, "rlnDefocusU");
    image.defocus_v = cell(v_col, "rlnDefocusV");
    image.astigmatism_angle = cell(a_col, "rlnDefocusAngle");
    image.phase_shift = cell(p_col, "rlnPhaseShift");
    t.series.tilts.push_back(image);
  }
  if (t.series.tilts.empty()) metadata_detail::fail(fn, ts, "data_" + name + " has no tilts");
  try {
    match::validate_tilt_series(t.series);
  } catch (const fusor::value_error& e) {
    metadata_detail::fail(fn, ts, e.what());
  }
  return t;
}

}  // namespace fusor_match
