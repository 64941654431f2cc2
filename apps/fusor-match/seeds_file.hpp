#pragma once
// The seed points of a constrained search (`match --seeds`): a particle table, RELION 5's STAR as
// `peaks`, pytom-match-pick and pyTME write it, or the TSV `peaks` or pyTME writes, read as the voxels whose
// scores would place the template on each particle, with the particle's orientation as the prior
// of its cone where the table has angles.
#include <array>
#include <cmath>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fusor/fusor.hpp>

#include "numbers.hpp"
#include "output.hpp"
#include "star_tables.hpp"

namespace fusor_match {

/// A seed as read: the score voxel it names (x, y, z, not rounded), its orientation where the
/// table gives one, and where it was read (for messages).
struct seed_point {
  fusor::match::vec3 voxel{};
  std::optional<fusor::match::quaternion> prior;
  std::string where;
};

/// How a table's point maps to the score voxel: a score at voxel x puts the template's rotation
/// centre c on x + shift (shift = c - m // 2: the TSV's point), and RELION's box centre on
/// x + shift - R shift (the STAR's point, peaks_run.hpp). Zero shift: relion's centre, all alike.
struct seed_frame {
  fusor::extents target;                 // the target's shape (RELION's centred coordinates are from n // 2)
  std::array<double, 3> voxel_size{};    // Å
  fusor::match::vec3 shift{};            // c - m // 2
  std::string tomo;                      // --seeds-tomo: the rows of this rlnTomoName only
};

namespace detail_seeds {

inline double number(const std::string& text, const std::string& where, const char* what) {
  double v = 0;
  if (!parse_double(text, v) || !std::isfinite(v))
    throw fusor::value_error("match: " + where + ": expected a finite number for " + what + ", got \"" + text + "\"");
  return v;
}

/// The score voxel of a point of the table: p - shift for the TSV's rotation-centre point,
/// p - shift + R shift for the STAR's box centre (R the prior; none: the identity).
inline fusor::match::vec3 score_voxel(const fusor::match::vec3& p, const std::optional<fusor::match::quaternion>& q,
                                      const fusor::match::vec3& shift, bool box_centre) {
  fusor::match::vec3 turned = shift;
  if (box_centre && q) turned = fusor::match::rotate(*q, shift);
  fusor::match::vec3 v{};
  for (std::size_t k = 0; k < 3; ++k) v[k] = p[k] - shift[k] + (box_centre ? turned[k] : 0.0);
  return v;
}

inline std::vector<seed_point> read_star_seeds(const std::string& path, const seed_frame& f) {
  std::vector<star_block> blocks;
  try {
    blocks = read_star_tables(path);
  } catch (const std::exception& e) {
    throw fusor::io_error(std::string("match: --seeds ") + e.what());
  }
  const star_loop* loop = nullptr;
  for (const star_block& b : blocks)
    for (const star_loop& l : b.loops)
      if (!loop && (l.column("rlnCenteredCoordinateXAngst") >= 0 || l.column("rlnCoordinateX") >= 0)) loop = &l;
  if (!loop)
    throw fusor::value_error("match: --seeds " + path +
                             " holds no particle loop (expected rlnCenteredCoordinateX/Y/ZAngst or rlnCoordinateX/Y/Z columns)");
  const bool angst = loop->column("rlnCenteredCoordinateXAngst") >= 0;
  const char* names[3][2] = {{"rlnCenteredCoordinateXAngst", "rlnCoordinateX"},
                             {"rlnCenteredCoordinateYAngst", "rlnCoordinateY"},
                             {"rlnCenteredCoordinateZAngst", "rlnCoordinateZ"}};
  int coord[3], angle[3];
  for (int k = 0; k < 3; ++k) {
    coord[k] = loop->column(names[k][angst ? 0 : 1]);
    if (coord[k] < 0)
      throw fusor::value_error("match: --seeds " + path + " has no " + names[k][angst ? 0 : 1] + " column");
  }
  const char* angle_names[3] = {"rlnAngleRot", "rlnAngleTilt", "rlnAnglePsi"};
  int angles = 0;
  for (int k = 0; k < 3; ++k) angles += (angle[k] = loop->column(angle_names[k])) >= 0;
  if (angles != 0 && angles != 3)
    throw fusor::value_error("match: --seeds " + path + " has some of rlnAngleRot, rlnAngleTilt and rlnAnglePsi; expected all three or none");
  const int name = loop->column("rlnTomoName");
  std::set<std::string> tomograms;
  if (name >= 0)
    for (const auto& row : loop->rows) tomograms.insert(row[std::size_t(name)]);
  if (!f.tomo.empty() && name < 0)
    throw fusor::value_error("match: --seeds-tomo " + f.tomo + ": " + path + " has no rlnTomoName column");
  if (f.tomo.empty() && tomograms.size() > 1) {
    std::string list;
    for (const auto& t : tomograms) list += (list.empty() ? "" : ", ") + t;
    throw fusor::value_error("match: --seeds " + path + " holds the particles of " + std::to_string(tomograms.size()) +
                             " tomograms (" + list + "); say which with --seeds-tomo");
  }
  std::vector<seed_point> out;
  for (std::size_t r = 0; r < loop->rows.size(); ++r) {
    const auto& row = loop->rows[r];
    if (!f.tomo.empty() && row[std::size_t(name)] != f.tomo) continue;
    const std::string where = path + " row " + std::to_string(r + 1) + " of the loop at line " + std::to_string(loop->line);
    fusor::match::vec3 p{};
    for (std::size_t k = 0; k < 3; ++k) {
      p[k] = number(row[std::size_t(coord[k])], where, names[k][angst ? 0 : 1]);
      // RELION 5's centred coordinates: Å from the tomogram's centre voxel n // 2
      if (angst) p[k] = p[k] / f.voxel_size[k] + double(f.target[int(k)] / 2);
    }
    seed_point s;
    if (angles == 3) {
      fusor::match::euler_angles e{};
      for (int k = 0; k < 3; ++k) e[std::size_t(k)] = number(row[std::size_t(angle[k])], where, angle_names[k]);
      s.prior = from_relion_angles(e);
    }
    s.voxel = score_voxel(p, s.prior, f.shift, true);
    s.where = where;
    out.push_back(s);
  }
  if (out.empty())
    throw fusor::value_error("match: --seeds " + path + " holds no particles" + (f.tomo.empty() ? "" : " of tomogram " + f.tomo));
  return out;
}

inline std::vector<seed_point> read_tsv_seeds(const std::string& path, const seed_frame& f) {
  if (!f.tomo.empty()) throw fusor::value_error("match: --seeds-tomo selects rows of a STAR file; " + path + " is a TSV table");
  std::istringstream in(read_text(path));
  std::string line;
  std::vector<std::string> header;
  int number_of_line = 0;
  int col[6] = {-1, -1, -1, -1, -1, -1};  // x y z rot tilt psi
  const char* names[6] = {"x", "y", "z", "rot", "tilt", "psi"};
  // pyTME's orientation tables (Orientations.to_file) name the angles euler_x, euler_y, euler_z:
  // the numbers its STAR files hold as rlnAngleRot/Tilt/Psi, at the STAR's point
  const char* pytme_names[3] = {"euler_x", "euler_y", "euler_z"};
  bool pytme = false;
  std::vector<seed_point> out;
  while (std::getline(in, line)) {
    ++number_of_line;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::vector<std::string> v;
    for (std::string w; fields >> w;) v.push_back(w);
    if (v.empty()) continue;
    if (header.empty()) {
      header = v;
      for (int k = 0; k < 6; ++k)
        for (std::size_t c = 0; c < header.size(); ++c)
          if (header[c] == names[k] || (k >= 3 && header[c] == pytme_names[k - 3])) {
            col[k] = int(c);
            pytme = pytme || (k >= 3 && header[c] == pytme_names[k - 3]);
          }
      if (col[0] < 0 || col[1] < 0 || col[2] < 0)
        throw fusor::value_error("match: --seeds " + path +
                                 ": expected a first line of column names with x, y and z (and rot, tilt, psi for a prior), "
                                 "as `fusor-match peaks` writes, or pyTME's x, y, z, euler_x, euler_y, euler_z; got \"" + line + "\"");
      const int angles = (col[3] >= 0) + (col[4] >= 0) + (col[5] >= 0);
      if (angles != 0 && angles != 3)
        throw fusor::value_error("match: --seeds " + path + " has some of rot, tilt and psi (or euler_x, euler_y and euler_z); "
                                 "expected all three or none");
      continue;
    }
    const std::string where = path + " line " + std::to_string(number_of_line);
    if (v.size() != header.size())
      throw fusor::value_error("match: " + where + ": expected " + std::to_string(header.size()) + " columns, got " +
                               std::to_string(v.size()));
    fusor::match::vec3 p{};
    for (std::size_t k = 0; k < 3; ++k) p[k] = number(v[std::size_t(col[k])], where, names[k]);
    seed_point s;
    if (col[3] >= 0) {
      fusor::match::euler_angles e{};
      for (std::size_t k = 0; k < 3; ++k) e[k] = number(v[std::size_t(col[3 + k])], where, names[3 + k]);
      s.prior = from_relion_angles(e);
    }
    s.voxel = score_voxel(p, s.prior, f.shift, pytme);
    s.where = where;
    out.push_back(s);
  }
  if (out.empty()) throw fusor::value_error("match: --seeds " + path + " holds no points");
  return out;
}

}  // namespace detail_seeds

/// The seeds of `path`: STAR (a name ending in .star) or TSV, in the frame of the target.
inline std::vector<seed_point> read_seeds(const std::string& path, const seed_frame& f) {
  require_file(path, "seed table");
  const bool star = path.size() >= 5 && path.compare(path.size() - 5, 5, ".star") == 0;
  return star ? detail_seeds::read_star_seeds(path, f) : detail_seeds::read_tsv_seeds(path, f);
}

}  // namespace fusor_match
