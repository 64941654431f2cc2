#pragma once
// Readers of the text files that carry a tilt series' metadata, each from its program's documented
// format: IMOD's tilt angles (.tlt, .rawtlt) and defocus files (ctfplotter's versions 2 and 3),
// CTFFIND4/5's output, SerialEM's .mdoc, and the plain per-tilt dose file pytom reads
// (--dose-accumulation); and the start,stop:step form of a tilt range. A malformed file is an
// io_error naming the file, the line (from 1) and the field; nothing is returned half read.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "../core/error.hpp"
#include "tilt_series.hpp"

namespace fusor::match {

/// One tilt's defocus as a CTF program estimated it: U and V in Å (underfocus positive), the
/// angle of U from the image's x axis and the phase shift, in degrees.
struct tilt_defocus {
  double defocus_u = 0;
  double defocus_v = 0;
  double astigmatism_angle = 0;
  double phase_shift = 0;
};

/// What a SerialEM .mdoc says about each image, in the order of its [ZValue] sections: the tilt
/// angle, and the dose accumulated before the image (the sum of the earlier sections'
/// ExposureDose: SerialEM numbers the sections in the order it recorded them); the pixel size
/// (PixelSpacing, Å) of the first section that has one, 0 if none does.
struct mdoc_tilts {
  std::vector<double> angles;
  std::vector<double> doses;
  double pixel_size = 0;
};

namespace detail {

/// A text file's lines, read whole before anything is parsed.
inline std::vector<std::string> text_lines(const std::filesystem::path& path, const char* fn) {
  std::ifstream in(path);
  if (!in)
    throw io_error(std::string("fusor::match::") + fn + ": cannot open " + path.string() + ": " +
                   std::error_code(errno, std::generic_category()).message());
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();  // written on Windows
    lines.push_back(line);
  }
  if (in.bad()) throw io_error(std::string("fusor::match::") + fn + ": cannot read " + path.string());
  return lines;
}

inline std::vector<std::string> fields_of(const std::string& line) {
  std::istringstream s(line);
  std::vector<std::string> out;
  for (std::string f; s >> f;) out.push_back(f);
  return out;
}

inline bool blank(const std::string& line) { return line.find_first_not_of(" \t") == std::string::npos; }

/// A reader's error at `line` (from 1; 0: the file as a whole).
[[noreturn]] inline void file_error(const char* fn, const std::filesystem::path& path, std::size_t line, const std::string& what) {
  throw io_error(std::string("fusor::match::") + fn + ": " + path.string() + (line ? ":" + std::to_string(line) : std::string()) + ": " + what);
}

/// The whole of `text` as a finite number, or nothing.
inline std::optional<double> number_in(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(v)) return std::nullopt;
  return v;
}

inline double field_number(const char* fn, const std::filesystem::path& path, std::size_t line, const std::string& text,
                           const std::string& field) {
  const auto v = number_in(text);
  if (!v) file_error(fn, path, line, field + " '" + text + "' is not a finite number");
  return *v;
}

/// A file of one number per line, blank lines skipped (IMOD's tilt angles, pytom's doses).
inline std::vector<double> number_per_line(const std::filesystem::path& path, const char* fn, const char* field) {
  const auto lines = text_lines(path, fn);
  std::vector<double> out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (blank(lines[i])) continue;
    const auto f = fields_of(lines[i]);
    if (f.size() != 1) file_error(fn, path, i + 1, "expected one " + std::string(field) + " per line, got " + std::to_string(f.size()) + " fields");
    out.push_back(field_number(fn, path, i + 1, f[0], field));
  }
  if (out.empty()) file_error(fn, path, 0, "holds no " + std::string(field));
  return out;
}

}  // namespace detail

/// IMOD's tilt angles (.tlt, .rawtlt): one angle in degrees per line, in the order of the views.
inline std::vector<double> read_tilt_angles(const std::filesystem::path& path) {
  auto a = detail::number_per_line(path, "read_tilt_angles", "tilt angle");
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!(a[i] >= -90 && a[i] <= 90))
      detail::file_error("read_tilt_angles", path, 0,
                         "view " + std::to_string(i + 1) + " has tilt angle " + detail::number_text(a[i]) + "; expected [-90, 90]");
  return a;
}

/// pytom's dose file (--dose-accumulation): the dose accumulated before each view, e⁻/Å², one
/// per line in the order of the views.
inline std::vector<double> read_dose_file(const std::filesystem::path& path) {
  auto d = detail::number_per_line(path, "read_dose_file", "dose");
  for (std::size_t i = 0; i < d.size(); ++i)
    if (d[i] < 0)
      detail::file_error("read_dose_file", path, 0, "view " + std::to_string(i + 1) + " has dose " + detail::number_text(d[i]) + "; expected >= 0");
  return d;
}

/// A tilt range written start,stop:step (degrees, e.g. -60,60:3): start, start + step, ... up
/// to stop (included when a whole number of steps away, to 1e-9 of a step); a negative step counts
/// down. A value_error names what is wrong.
inline std::vector<double> parse_tilt_range(const std::string& text) {
  const auto bad = [&](const std::string& why) -> std::vector<double> {
    throw value_error("fusor::match::parse_tilt_range: '" + text + "' " + why + "; expected start,stop:step in degrees (e.g. -60,60:3)");
  };
  const auto comma = text.find(','), colon = text.find(':');
  if (comma == std::string::npos || colon == std::string::npos || colon < comma) return bad("is not in that form");
  const auto start = detail::number_in(text.substr(0, comma)), stop = detail::number_in(text.substr(comma + 1, colon - comma - 1)),
             step = detail::number_in(text.substr(colon + 1));
  if (!start || !stop || !step) return bad("holds a part that is not a finite number");
  if (!(*start >= -90 && *start <= 90 && *stop >= -90 && *stop <= 90)) return bad("reaches outside [-90, 90]");
  if (*step == 0 || (*stop - *start) * *step < 0) return bad("has a step that does not lead from start to stop");
  const double count = std::floor((*stop - *start) / *step + 1e-9);
  if (count > 100000) return bad("has more than 100000 tilts");
  std::vector<double> out;
  for (double i = 0; i <= count; ++i) out.push_back(*start + i * *step);
  return out;
}

/// IMOD's defocus file as ctfplotter writes it and ctfphaseflip reads it (IMOD's ctfphaseflip
/// manual, "Defocus file format"), per view (numbered from 1 in the file, from 0 here), for a
/// series of `views` views. Version 2: lines "start_view end_view start_angle end_angle defocus_nm",
/// the first with a sixth field, the version 2. Version 3: a first line "flags 0 0. 0. 0 3", then
/// lines of the same five fields, with defocus 2 and the astigmatism angle after the defocus
/// where flags has 1 (angle in radians if 2), then the phase shift where flags has 4 (radians if
/// 8), then the cut-on frequency where flags has 32 (read past: fusor has no cut-on model). Defocus
/// in nm, underfocus positive; a line covers views start..end. Every view must be covered once.
inline std::vector<tilt_defocus> read_imod_defocus(const std::filesystem::path& path, std::size_t views) {
  const char* fn = "read_imod_defocus";
  const auto lines = detail::text_lines(path, fn);
  std::size_t first = 0;
  while (first < lines.size() && detail::blank(lines[first])) ++first;
  if (first == lines.size()) detail::file_error(fn, path, 0, "is empty");
  const auto head = detail::fields_of(lines[first]);
  if (head.size() != 6) detail::file_error(fn, path, first + 1, "expected 6 fields on the first line (the version last), got " + std::to_string(head.size()));
  const double version = detail::field_number(fn, path, first + 1, head[5], "version");
  int flags = 0;
  std::size_t data = first;
  if (version == 3) {
    const double f = detail::field_number(fn, path, first + 1, head[0], "flags");
    if (f != std::floor(f) || f < 0 || f > 63) detail::file_error(fn, path, first + 1, "flags " + head[0] + " is not a sum of IMOD's flags 1..32");
    flags = int(f);
    if (flags & 16)
      detail::file_error(fn, path, first + 1, "flags " + head[0] + " has 16 (tilt angles to be inverted), which fusor does not apply");
    data = first + 1;
  } else if (version != 2) {
    detail::file_error(fn, path, first + 1, "version " + head[5] + " is not 2 or 3");
  }
  const bool astig = flags & 1, phase = flags & 4, cut_on = flags & 32;
  const std::size_t columns = 5 + (astig ? 2 : 0) + (phase ? 1 : 0) + (cut_on ? 1 : 0);
  const double deg = 180 / 3.14159265358979323846;
  std::vector<tilt_defocus> out(views);
  std::vector<std::size_t> seen(views, 0);  // the line (from 1) that gave each view, 0: none yet
  for (std::size_t i = data; i < lines.size(); ++i) {
    if (detail::blank(lines[i])) continue;
    auto f = detail::fields_of(lines[i]);
    if (i == first && version == 2) f.pop_back();  // the version
    if (f.size() != columns)
      detail::file_error(fn, path, i + 1, "expected " + std::to_string(columns) + " fields for version " + head[5] +
                                              (version == 3 ? " with flags " + head[0] : std::string()) + ", got " + std::to_string(f.size()));
    const double a = detail::field_number(fn, path, i + 1, f[0], "start view"), b = detail::field_number(fn, path, i + 1, f[1], "end view");
    if (a != std::floor(a) || b != std::floor(b) || a < 1 || b < a || b > double(views))
      detail::file_error(fn, path, i + 1, "views " + f[0] + " to " + f[1] + " are not a range within 1.." + std::to_string(views));
    tilt_defocus d;
    d.defocus_u = d.defocus_v = 10 * detail::field_number(fn, path, i + 1, f[4], "defocus");
    std::size_t c = 5;
    if (astig) {
      d.defocus_v = 10 * detail::field_number(fn, path, i + 1, f[c++], "defocus 2");
      d.astigmatism_angle = detail::field_number(fn, path, i + 1, f[c++], "astigmatism angle") * (flags & 2 ? deg : 1.0);
    }
    if (phase) d.phase_shift = detail::field_number(fn, path, i + 1, f[c++], "phase shift") * (flags & 8 ? deg : 1.0);
    if (!(d.defocus_u > 0 && d.defocus_v > 0))
      detail::file_error(fn, path, i + 1, "defocus " + detail::number_text(d.defocus_u / 10) + " nm, " + detail::number_text(d.defocus_v / 10) +
                                              " nm; expected positive underfocus");
    for (auto v = std::size_t(a); v <= std::size_t(b); ++v) {
      if (seen[v - 1])
        detail::file_error(fn, path, i + 1, "view " + std::to_string(v) + " was already given on line " + std::to_string(seen[v - 1]));
      seen[v - 1] = i + 1;
      out[v - 1] = d;
    }
  }
  for (std::size_t v = 0; v < views; ++v)
    if (!seen[v]) detail::file_error(fn, path, 0, "gives no defocus for view " + std::to_string(v + 1) + " of " + std::to_string(views));
  return out;
}

/// CTFFIND4/5's output text: '#' lines are comments; each other line is one micrograph (for a
/// tilt series, one tilt in the stack's order): micrograph number, defocus 1 and 2 (Å), the
/// azimuth of astigmatism (degrees), the additional phase shift (radians), the cross-correlation,
/// the resolution of the fit (Å), and in CTFFIND5 further columns (read past).
inline std::vector<tilt_defocus> read_ctffind(const std::filesystem::path& path) {
  const char* fn = "read_ctffind";
  const auto lines = detail::text_lines(path, fn);
  std::vector<tilt_defocus> out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (detail::blank(lines[i]) || lines[i].find_first_not_of(" \t") == lines[i].find('#')) continue;
    const auto f = detail::fields_of(lines[i]);
    if (f.size() < 7) detail::file_error(fn, path, i + 1, "expected at least 7 columns, got " + std::to_string(f.size()));
    const double number = detail::field_number(fn, path, i + 1, f[0], "micrograph number");
    if (number != double(out.size() + 1))
      detail::file_error(fn, path, i + 1, "micrograph " + f[0] + " where " + std::to_string(out.size() + 1) + " was expected next");
    tilt_defocus d;
    d.defocus_u = detail::field_number(fn, path, i + 1, f[1], "defocus 1");
    d.defocus_v = detail::field_number(fn, path, i + 1, f[2], "defocus 2");
    d.astigmatism_angle = detail::field_number(fn, path, i + 1, f[3], "azimuth of astigmatism");
    d.phase_shift = detail::field_number(fn, path, i + 1, f[4], "phase shift") * (180 / 3.14159265358979323846);
    for (std::size_t c = 5; c < f.size(); ++c) detail::field_number(fn, path, i + 1, f[c], "column " + std::to_string(c + 1));
    if (!(d.defocus_u > 0 && d.defocus_v > 0))
      detail::file_error(fn, path, i + 1, "defocus " + f[1] + " Å, " + f[2] + " Å; expected positive underfocus");
    out.push_back(d);
  }
  if (out.empty()) detail::file_error(fn, path, 0, "holds no micrograph");
  return out;
}

/// SerialEM's .mdoc: "Key = value" lines, global ones first, then one "[ZValue = n]" section per
/// image, n from 0 in order. Reads TiltAngle (required in every section), ExposureDose (e⁻/Å², 0
/// where absent) and PixelSpacing.
inline mdoc_tilts read_mdoc(const std::filesystem::path& path) {
  const char* fn = "read_mdoc";
  const auto lines = detail::text_lines(path, fn);
  struct section {
    std::size_t line;
    std::optional<double> angle, dose, pixel;
  };
  std::vector<section> sections;
  std::optional<double> global_pixel;
  bool in_image = false;  // inside a [ZValue] section (not a [T = ...] title or another kind)
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    if (detail::blank(l)) continue;
    const auto open = l.find_first_not_of(" \t");
    if (l[open] == '[') {
      const auto close = l.find(']');
      const auto eq = l.find('=');
      if (close == std::string::npos) detail::file_error(fn, path, i + 1, "a section header without ']'");
      std::string key = l.substr(open + 1, (eq < close ? eq : close) - open - 1);
      key.erase(key.find_last_not_of(" \t") + 1);
      in_image = key == "ZValue";
      if (!in_image) continue;  // other sections ([T = ...] titles, [MontSection = ...]) are not images
      if (eq > close) detail::file_error(fn, path, i + 1, "a ZValue section without '= n'");
      const auto words = detail::fields_of(l.substr(eq + 1, close - eq - 1));
      const std::string value = words.size() == 1 ? words[0] : l.substr(eq + 1, close - eq - 1);
      const auto n = detail::number_in(value);
      if (!n || *n != double(sections.size()))
        detail::file_error(fn, path, i + 1, "ZValue '" + value + "' where " + std::to_string(sections.size()) + " was expected next");
      sections.push_back({i + 1, {}, {}, {}});
      continue;
    }
    const auto eq = l.find('=');
    if (eq == std::string::npos) continue;  // SerialEM writes only key = value lines; anything else is not ours
    std::string key = l.substr(open, eq - open);
    key.erase(key.find_last_not_of(" \t") + 1);
    const auto values = detail::fields_of(l.substr(eq + 1));
    const auto read = [&](const char* field) { return detail::field_number(fn, path, i + 1, values.empty() ? "" : values[0], field); };
    if (key == "TiltAngle" || key == "ExposureDose" || key == "PixelSpacing") {
      if (sections.empty()) {
        if (key == "PixelSpacing") global_pixel = read("PixelSpacing");
        continue;
      }
      if (!in_image) continue;
      section& s = sections.back();
      if (key == "TiltAngle") s.angle = read("TiltAngle");
      if (key == "ExposureDose") s.dose = read("ExposureDose");
      if (key == "PixelSpacing") s.pixel = read("PixelSpacing");
    }
  }
  if (sections.empty()) detail::file_error(fn, path, 0, "holds no [ZValue = n] section");
  mdoc_tilts out;
  double dose = 0;
  for (const section& s : sections) {
    if (!s.angle) detail::file_error(fn, path, s.line, "the section has no TiltAngle");
    if (!(*s.angle >= -90 && *s.angle <= 90))
      detail::file_error(fn, path, s.line, "TiltAngle " + detail::number_text(*s.angle) + "; expected [-90, 90]");
    if (s.dose && *s.dose < 0) detail::file_error(fn, path, s.line, "ExposureDose " + detail::number_text(*s.dose) + "; expected >= 0");
    out.angles.push_back(*s.angle);
    out.doses.push_back(dose);
    dose += s.dose.value_or(0);
    if (out.pixel_size == 0 && s.pixel) out.pixel_size = *s.pixel;
  }
  if (out.pixel_size == 0 && global_pixel) out.pixel_size = *global_pixel;
  if (out.pixel_size < 0) detail::file_error(fn, path, 0, "PixelSpacing " + detail::number_text(out.pixel_size) + "; expected > 0");
  return out;
}

/// A series from the parts separate files give: the tilt angles (one per view, required), the
/// doses accumulated before each view and the defocus of each (empty: not known), the optics and
/// the tomogram's CTF correction. A part of another length is a value_error saying both counts;
/// the series is validated (validate_tilt_series) before it is returned.
inline tilt_series assemble_tilt_series(const std::vector<double>& angles, const std::vector<double>& doses,
                                        const std::vector<tilt_defocus>& defocus, const microscope& optics = {},
                                        ctf_correction correction = ctf_correction::none) {
  const auto count = [&](std::size_t n, const char* what) {
    if (n != 0 && n != angles.size())
      throw value_error("fusor::match::assemble_tilt_series: " + std::to_string(n) + " " + what + " for " + std::to_string(angles.size()) +
                        " tilt angles; expected one per tilt");
  };
  count(doses.size(), "doses");
  count(defocus.size(), "defocus values");
  tilt_series s;
  s.optics = optics;
  s.correction = correction;
  for (std::size_t i = 0; i < angles.size(); ++i) {
    tilt_image t;
    t.angle = angles[i];
    if (!doses.empty()) t.dose = doses[i];
    if (!defocus.empty()) {
      t.defocus_u = defocus[i].defocus_u;
      t.defocus_v = defocus[i].defocus_v;
      t.astigmatism_angle = defocus[i].astigmatism_angle;
      t.phase_shift = defocus[i].phase_shift;
    }
    s.tilts.push_back(t);
  }
  validate_tilt_series(s);
  return s;
}

}  // namespace fusor::match
