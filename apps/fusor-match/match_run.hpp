#pragma once
// `fusor-match match`: every rotation of a template scored against a target by FFT (fusor::match::
// scan), written as an output folder: scores.mrc (the best score per voxel), rotations.mrc (the
// index of the rotation that gave it, as float32, exact below 2^24), rotations.tsv (the rotation
// table) and metadata.json (every parameter, the fusor version, the grid, tiles, statistics and
// timings), which `peaks` reads. Everything that can be checked is checked before the scan starts.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <fusor/fusor.hpp>

#include "distributed.hpp"
#include "hdf5_volumes.hpp"
#include "healpix_angles.hpp"
#include "output.hpp"
#include "numbers.hpp"
#include "progress.hpp"
#include "result_folder.hpp"
#include "seeds_file.hpp"
#include "tilt_options.hpp"

#ifndef FUSOR_MATCH_VERSION
#define FUSOR_MATCH_VERSION "unknown"
#endif

namespace fusor_match {

namespace match = fusor::match;
using json = nlohmann::ordered_json;

struct match_args {
  std::string target, templ, mask, target_mask, rotations, output;
  double angular_step = 30.0;
  double particle_diameter = 0, resolution = 0;  // --particle-diameter: the step by the Crowther criterion
  double cone_angle = -1;                         // --cone-angle: only rotations turning z within it of --cone-axis
  std::vector<double> cone_axis{0, 0, 1};
  std::string seeds, seeds_tomo;                  // --seeds: a constrained search about a table's points
  std::vector<double> seed_radius;                // --seed-radius: one radius or x, y, z (voxels)
  double seed_cone = -1;                          // --seed-cone: degrees about each point's z axis; -1: every rotation
  bool hdf5 = false;                              // --hdf5: the maps also as HDF5 files (pyTME's Density layout)
  bool half_precision = false;                    // --half-precision: scores.mrc in float16, rotations.mrc in int16
  bool noise_correction = false;                  // --noise-correction: a phase-randomised template's scores subtracted
  unsigned long long noise_seed = 321;
  std::string symmetry = "C1";
  std::string angle_set = "uniform";              // --angle-set: fusor's uniform set, or pytom's HEALPix list
  std::string score = "FLCSphericalMask";
  double lowpass = 0, highpass = 0;
  std::vector<double> wedge;  // tilt_min tilt_max (degrees), empty: none
  tilt_args tilt;             // the tilt series (tilt_options.hpp), and --defocus
  double voltage = 300, cs = 2.7, amplitude_contrast = 0.07;
  bool phase_flip = false, whiten = false;
  std::string memory;
  int threads = 0;
  std::string planning = "measure";
  std::string edges = "zeros";
  std::string grid = "fast";
  std::string rotations_convention = "active";
  std::string rotation_centre = "relion";
  bool quiet = false;
  std::vector<std::string> command_line;
};

/// Bytes for people: "1.50 GiB", "2.0 MiB", "512 KiB".
inline std::string format_bytes(double b) {
  char text[32];
  if (b >= 1073741824.0) std::snprintf(text, sizeof text, "%.2f GiB", b / 1073741824.0);
  else if (b >= 1048576.0) std::snprintf(text, sizeof text, "%.1f MiB", b / 1048576.0);
  else std::snprintf(text, sizeof text, "%.0f KiB", b / 1024.0);
  return text;
}

/// "512M", "4G", "1.5GiB", "800000000": bytes; a value_error naming the option otherwise.
inline std::size_t parse_bytes(const std::string& s) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  std::string unit = s.substr(used);
  for (auto& ch : unit) ch = char(std::toupper(static_cast<unsigned char>(ch)));
  if (unit.size() > 1 && unit.back() == 'B') unit.pop_back();
  if (unit.size() > 1 && unit.back() == 'I') unit.pop_back();
  const double scale = unit.empty() || unit == "B" ? 1.0 : unit == "K" ? 1024.0 : unit == "M" ? 1048576.0 : unit == "G" ? 1073741824.0 : unit == "T" ? 1099511627776.0 : -1.0;
  if (used == 0 || scale < 0 || !(v > 0) || !std::isfinite(v))
    throw fusor::value_error("match: --memory expects a positive size such as 800M, 4G or 16GiB, got \"" +
                             s + "\"");
  // the product is checked as a double, before any conversion: 1e30 would not fit a size_t
  // (undefined behaviour), and 0.5 would become 0, which means "no budget"
  const double bytes = std::floor(v * scale);
  constexpr double largest = 1125899906842624.0;  // 1 PiB: far above any machine, exact in a size_t
  if (bytes < 1.0 || bytes > largest)
    throw fusor::value_error("match: --memory expects a size from 1 byte to 1024T, got \"" + s + "\"");
  return std::size_t(bytes);
}

/// The point of the template the rotations turn about (--rotation-centre): relion, voxel m // 2
/// (RELION's box centre, fusor's default), or pytme, (m - 1) / 2 (half a voxel lower on an even
/// axis; the same on an odd one).
inline match::vec3 parse_rotation_centre(const std::string& s, const fusor::extents& m) {
  if (s == "relion") return match::volume_center(m);
  if (s == "pytme") return match::index_center(m);
  throw fusor::value_error("match: --rotation-centre expects relion or pytme, got \"" + s + "\"");
}

/// How a rotation file's rows turn the template (--rotations-convention).
enum class rotations_convention {
  active,  ///< each row is the rotation applied to the template (ZYZ intrinsic angles, or w x y z)
  relion,  ///< Euler angles as RELION's rlnAngleRot/Tilt/Psi (a quaternion row as active)
  pytme,   ///< pyTME's rotation sets, which pull the template: each row's inverse turns it
  pytom    ///< pytom-match-pick's angle lists: ZXZ Euler angles Z1 X Z2 in radians (from_pytom_angles)
};
inline rotations_convention parse_rotations_convention(const std::string& s) {
  if (s == "active") return rotations_convention::active;
  if (s == "relion") return rotations_convention::relion;
  if (s == "pytme") return rotations_convention::pytme;
  if (s == "pytom") return rotations_convention::pytom;
  throw fusor::value_error("match: --rotations-convention expects active, relion, pytme or pytom, got \"" + s + "\"");
}

/// pytom's HEALPix angle list for the step (healpix_angles.hpp), as orientations; with a Cn
/// symmetry only the rows whose turn about the template's own z (Z1) is below 360 / n.
inline std::vector<match::quaternion> healpix_rotations(double step, const match::symmetry& sym, healpix_angle_list& list) {
  if (sym.kind != 'C')
    throw fusor::value_error("match: --angle-set healpix takes a Cn symmetry (pytom's --rotational-symmetry), got " + sym.name());
  try {
    list = healpix_angles(step);
  } catch (const std::invalid_argument& e) {
    throw fusor::value_error(std::string("match: ") + e.what());
  }
  std::vector<match::quaternion> out;
  const double period = 2 * 3.14159265358979323846 / double(sym.n);
  for (const auto& zxz : list.zxz)
    if (zxz[0] < period - 1e-12) out.push_back(from_pytom_angles(zxz));
  return out;
}

/// Rotations from a text file: one per line, 3 columns (ZYZ Euler angles rot, tilt, psi in
/// degrees) or 4 (a quaternion w x y z), read in `convention`; '#' starts a comment; a first line
/// of names is skipped.
inline std::vector<match::quaternion> read_rotations(const fs::path& path,
                                                     rotations_convention convention = rotations_convention::active) {
  std::istringstream in(read_text(path));
  std::vector<match::quaternion> out;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    for (auto& ch : line)
      if (ch == ',' || ch == '\t') ch = ' ';
    std::istringstream fields(line);
    std::vector<double> v;
    std::string word;
    bool numeric = true;
    while (fields >> word) {
      try {
        std::size_t used = 0;
        v.push_back(std::stod(word, &used));
        numeric = numeric && used == word.size();
      } catch (const std::exception&) {
        numeric = false;
      }
    }
    if (v.empty() && numeric) continue;  // blank or comment
    if (!numeric && out.empty() && number == 1) continue;  // a header of column names
    if (!numeric || (v.size() != 3 && v.size() != 4))
      throw fusor::value_error("match: " + path.string() + " line " + std::to_string(number) +
                               ": expected 3 numbers (ZYZ Euler angles in degrees) or 4 (a quaternion w x y z), got \"" +
                               line + "\"");
    const std::string where = "match: " + path.string() + " line " + std::to_string(number) + ": ";
    if (v.size() == 3 && convention == rotations_convention::pytom) {
      for (double a : v)
        if (!(std::abs(a) <= 2 * 3.14159265358979323846 + 1e-9))
          throw fusor::value_error(where + "expected pytom's ZXZ Euler angles in radians from -2 pi to 2 pi, got " + short_number(a));
      out.push_back(from_pytom_angles({v[0], v[1], v[2]}));
    } else if (v.size() == 3) {
      for (double a : v)
        if (!(std::abs(a) <= 360.0))
          throw fusor::value_error(where + "expected Euler angles in degrees from -360 to 360, got " + short_number(a));
      const match::euler_angles e{v[0], v[1], v[2]};
      out.push_back(convention == rotations_convention::active ? match::from_euler(e, match::euler_convention::zyz_intrinsic)
                                                               : from_relion_angles(e));
    } else if (convention == rotations_convention::pytom) {
      throw fusor::value_error(where + "expected pytom's three ZXZ Euler angles in radians, got 4 numbers");
    } else {
      const double norm = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2] + v[3] * v[3]);
      if (!(norm > 1e-6 && norm < 1e6))  // NaN and inf fail here too
        throw fusor::value_error(where + "expected a quaternion w x y z of finite, non-zero length, got length " +
                                 short_number(norm));
      const match::quaternion q{v[0] / norm, v[1] / norm, v[2] / norm, v[3] / norm};
      out.push_back(convention == rotations_convention::pytme ? match::inverse(q) : q);
    }
  }
  if (out.empty()) throw fusor::value_error("match: " + path.string() + " holds no rotations");
  return out;
}

/// The rotation table written beside the maps: index, RELION's Euler angles of the rotation, and
/// the rotation applied to the template as a quaternion in full.
inline std::string rotation_table(const std::vector<match::quaternion>& rotations) {
  std::string t = "index\trot\ttilt\tpsi\tw\tx\ty\tz\n";
  char line[320];
  for (std::size_t i = 0; i < rotations.size(); ++i) {
    const auto& q = rotations[i];
    const auto e = relion_angles(q);
    std::snprintf(line, sizeof line, "%zu\t%.6f\t%.6f\t%.6f\t%.17g\t%.17g\t%.17g\t%.17g\n", i, e[0], e[1], e[2], q.w, q.x,
                  q.y, q.z);
    t += line;
  }
  return t;
}

inline fusor::fft::planning parse_planning(const std::string& s) {
  if (s == "estimate") return fusor::fft::planning::estimate;
  if (s == "measure") return fusor::fft::planning::measure;
  if (s == "patient") return fusor::fft::planning::patient;
  throw fusor::value_error("match: --planning expects estimate, measure or patient, got \"" + s + "\"");
}

inline match::grid_choice parse_grid(const std::string& s) {
  if (s == "fast") return match::grid_choice::fast;
  if (s == "target") return match::grid_choice::target;
  throw fusor::value_error("match: --grid expects fast or target, got \"" + s + "\"");
}

inline match::edge_mode parse_edges(const std::string& s) {
  if (s == "zeros") return match::edge_mode::zeros;
  if (s == "wrap") return match::edge_mode::wrap;
  throw fusor::value_error("match: --edges expects zeros or wrap, got \"" + s + "\"");
}

/// A volume read onto B whose every voxel is finite, or a value_error naming the file and the
/// first voxel that is not (a NaN or inf would make every score it touches NaN or inf).
template <class B>
fusor::array<float, B> finite_volume(const match::mrc_file& file, const std::string& path, const char* what) {
  fusor::array<float, B> v = file.read<B>();
  if (const auto bad = match::first_non_finite(v))
    throw fusor::value_error("match: the " + std::string(what) + " " + path + " holds a non-finite value (NaN or inf) at voxel (" +
                             std::to_string((*bad)[0]) + ", " + std::to_string((*bad)[1]) + ", " + std::to_string((*bad)[2]) +
                             "); replace such voxels (e.g. by the mean) before matching");
  return v;
}

/// The same for a mask file, which must have the shape `expected` (`whose`: "the template's").
template <class B>
fusor::array<float, B> finite_volume(const std::string& path, const char* what, const fusor::extents& expected,
                                     const char* whose) {
  const match::mrc_file f(path);
  if (f.shape() != expected)
    throw fusor::shape_error("match: the " + std::string(what) + " " + path + " has shape " + fusor::to_string(f.shape()) +
                             "; expected " + whose + " " + fusor::to_string(expected));
  return finite_volume<B>(f, path, what);
}

/// What `match` will do, fixed before any voxel is read: the inputs' headers, the rotations and
/// this process's share of them or of the tiles, the scan's options and memory estimate.
struct match_job {
  std::unique_ptr<match::mrc_file> target_file, templ_file;  // headers checked, voxels not read yet
  fusor::extents n, m;                                       // the target's and the template's shapes
  match::score kind{};
  match::edge_mode edges{};
  match::grid_choice grid{};
  match::vec3 centre{};
  std::vector<match::quaternion> rotations, share;  // all, and this process's
  std::size_t first = 0;                            // the index of share[0] among all
  std::size_t ranks = 1, rank = 0;
  bool root = true, talk = true;
  bool split_tiles = false;  // processes split the tiles (each every rotation), not the rotations
  match::scan_options options;
  match::scan_memory_estimate estimate;
  std::optional<match::tilt_weighting> tilts;  // the series' weight on the template, when one is given
  double angular_step = 0;                      // --angular-step, or the Crowther criterion's
  double resolution = 0;                        // the resolution that criterion took (Å)
  healpix_angle_list healpix;                   // --angle-set healpix: pytom's list (nside, steps)
  std::vector<match::seed> seeds;               // --seeds: the constrained search's points, in the target's voxels
  std::vector<seed_point> seed_points;          // as read (where each came from)
  std::vector<match::seed_match> found;         // what each seed found (the template's scan)
  std::size_t seed_rotations = 0;               // rotations scored, summed over the seeds
};

/// The seeds of a constrained search (--seeds), read in the target's frame: each point's ellipsoid
/// (--seed-radius) and the indices of the rotations in its cone (--seed-cone about the point's own
/// orientation, up to the symmetry), checked before any voxel is read.
inline void plan_seeds(const match_args& a, const world& w, match_job& job, const match::symmetry& sym) {
  if (w.size() > 1) throw fusor::value_error("match: --seeds runs in one process; got " + std::to_string(w.size()));
  if (!a.target_mask.empty()) throw fusor::value_error("match: --seeds picks the voxels to score; it excludes --target-mask");
  if (a.seed_radius.empty())
    throw fusor::value_error("match: --seeds needs --seed-radius, the voxels searched about each point (0 for the point alone)");
  if (a.seed_radius.size() == 2) throw fusor::value_error("match: --seed-radius expects one radius or three (x,y,z), got two");
  seed_frame f;
  f.target = job.n;
  f.voxel_size = job.target_file->header().voxel_size();
  for (std::size_t k = 0; k < 3; ++k) f.shift[k] = job.centre[k] - double(job.m[int(k)] / 2);
  f.tomo = a.seeds_tomo;
  job.seed_points = read_seeds(a.seeds, f);
  const match::vec3 radius = a.seed_radius.size() == 1 ? match::vec3{a.seed_radius[0], a.seed_radius[0], a.seed_radius[0]}
                                                       : match::vec3{a.seed_radius[0], a.seed_radius[1], a.seed_radius[2]};
  for (const seed_point& p : job.seed_points) {
    for (int k = 0; k < 3; ++k)
      if (!(p.voxel[std::size_t(k)] > -0.5 && p.voxel[std::size_t(k)] < double(job.n[k]) - 0.5))
        throw fusor::value_error("match: " + p.where + ": the point's score voxel (" + short_number(p.voxel[0]) + ", " +
                                 short_number(p.voxel[1]) + ", " + short_number(p.voxel[2]) + ") lies outside the target " +
                                 fusor::to_string(job.n));
    match::seed s;
    s.position = p.voxel;
    s.radius = radius;
    if (a.seed_cone >= 0) {
      if (!p.prior)
        throw fusor::value_error("match: --seed-cone needs each point's orientation; " + p.where + " has no angles");
      s.rotations = match::rotations_in_cone(job.rotations, match::rotate(*p.prior, {0, 0, 1}), a.seed_cone, sym);
      if (s.rotations.empty())
        throw fusor::value_error("match: " + p.where + ": no rotation of the set (" + std::to_string(job.rotations.size()) +
                                 ") lies within its " + short_number(a.seed_cone) +
                                 "-degree cone; widen --seed-cone or take a finer step");
    }
    job.seed_rotations += s.rotations.empty() ? job.rotations.size() : s.rotations.size();
    job.seeds.push_back(std::move(s));
  }
}

/// Every check before any work: the files exist, their headers agree (shapes, voxel sizes), the
/// options parse, the budget holds a tile, and the work is shared between the processes.
template <class B>
void plan_match(const match_args& a, const world& w, match_job& job) {
  using fusor::extents;
  require_file(a.target, "target");
  require_file(a.templ, "template");
  if (!a.mask.empty()) require_file(a.mask, "mask");
  if (!a.target_mask.empty()) require_file(a.target_mask, "target mask");
  if (!a.rotations.empty()) require_file(a.rotations, "rotation file");
  job.kind = match::parse_score(a.score);
  if (a.half_precision && (job.kind == match::score::cc || job.kind == match::score::lcc))
    throw fusor::value_error("match: --half-precision writes the scores as float16, which holds at most 65504; " + a.score +
                             " is an unnormalised correlation that can exceed it: use a normalised score (CORR, CAM, "
                             "FLCSphericalMask, FLC or MCC) or leave the scores in float32");
  const auto sym = match::symmetry::parse(a.symmetry);
  const auto planning = parse_planning(a.planning);
  job.edges = parse_edges(a.edges);
  job.grid = parse_grid(a.grid);
  if (!(a.angular_step > 0 && a.angular_step <= 180))
    throw fusor::value_error("match: --angular-step expects degrees in (0, 180], got " +
                             std::to_string(a.angular_step));
  if (!a.wedge.empty() && (a.wedge.size() != 2 || !(a.wedge[0] < a.wedge[1])))
    throw fusor::value_error("match: --wedge expects two tilt angles, the lower first (e.g. --wedge -60 60)");
  // the tilt series: its files read and checked now, before any voxel
  job.tilts = tilt_weighting_of(a.tilt, {a.voltage, a.cs, a.amplitude_contrast}, a.phase_flip, !a.wedge.empty());
  job.target_file = std::make_unique<match::mrc_file>(a.target);
  job.templ_file = std::make_unique<match::mrc_file>(a.templ);
  const extents n = job.target_file->shape(), m = job.templ_file->shape();
  job.n = n;
  job.m = m;
  const auto vt = job.target_file->header().voxel_size(), vm = job.templ_file->header().voxel_size();
  if (n.numel() == 0) throw fusor::shape_error("match: the target " + a.target + " is empty (" + fusor::to_string(n) + " voxels)");
  if (m.numel() == 0)
    throw fusor::shape_error("match: the template " + a.templ + " is empty (" + fusor::to_string(m) + " voxels)");
  if (a.mask.empty() && *std::min_element(m.begin(), m.end()) < 3)
    throw fusor::shape_error("match: the template " + a.templ + " (" + fusor::to_string(m) +
                             " voxels) is too small for the default spherical mask (3 voxels a side at least); "
                             "give a --mask");
  for (int k = 0; k < 3; ++k) {
    if (m[k] > n[k])
      throw fusor::shape_error("match: the template " + a.templ + " (" + fusor::to_string(m) +
                               " voxels) is larger than the target " + a.target + " (" + fusor::to_string(n) +
                               ") along axis " + "xyz"[k] + std::string("; crop the template or match a larger target"));
    if (std::abs(vt[k] - vm[k]) > 1e-3 * std::max(vt[k], vm[k]))
      throw fusor::value_error("match: mismatched voxel sizes: the target has " + std::to_string(vt[k]) +
                               " Å along " + "xyz"[k] + ", the template " + std::to_string(vm[k]) +
                               " Å; resample the template to the target's voxel size");
  }
  job.centre = parse_rotation_centre(a.rotation_centre, m);
  job.angular_step = a.angular_step;
  if (a.particle_diameter > 0) {
    // the resolution the search can reach: Nyquist (two voxels) or the low-pass, the coarser
    job.resolution = a.resolution > 0 ? a.resolution : std::max(2 * std::max(vt[0], std::max(vt[1], vt[2])), a.lowpass);
    job.angular_step = match::crowther_step(a.particle_diameter, job.resolution);
  } else if (a.resolution > 0) {
    throw fusor::value_error("match: --resolution sets the step with --particle-diameter; give that too");
  }
  if (a.cone_angle >= 0) {
    // a cone about an axis (pyTME's --cone-angle): the template's z axis within the cone, spaced as
    // uniform_rotations spaces the whole sphere (1.1 step), in-plane turns over 360 / n for Cn
    if (!a.rotations.empty()) throw fusor::value_error("match: --cone-angle builds its own rotations; it excludes --rotations");
    if (a.angle_set != "uniform") throw fusor::value_error("match: --cone-angle builds its own rotations; it excludes --angle-set " + a.angle_set);
    if (sym.kind != 'C')
      throw fusor::value_error("match: --cone-angle takes a Cn symmetry (in-plane turns about the template's z), got " + sym.name());
    if (a.cone_axis.size() != 3) throw fusor::value_error("match: --cone-axis expects three numbers (x y z)");
    job.rotations = match::cone_rotations({a.cone_axis[0], a.cone_axis[1], a.cone_axis[2]}, a.cone_angle, 1.1 * job.angular_step,
                                          1.1 * job.angular_step, {0, 0, 1}, sym.n);
  } else if (a.angle_set == "healpix") {
    if (!a.rotations.empty()) throw fusor::value_error("match: --angle-set healpix builds its own rotations; it excludes --rotations");
    job.rotations = healpix_rotations(job.angular_step, sym, job.healpix);
  } else if (a.angle_set == "uniform") {
    job.rotations = a.rotations.empty() ? match::uniform_rotations(job.angular_step, sym)
                                        : read_rotations(a.rotations, parse_rotations_convention(a.rotations_convention));
  } else {
    throw fusor::value_error("match: --angle-set expects uniform or healpix, got \"" + a.angle_set + "\"");
  }
  const std::vector<match::quaternion>& rotations = job.rotations;
  if (!a.seeds.empty()) plan_seeds(a, w, job, sym);
  job.ranks = std::size_t(w.size());
  job.rank = std::size_t(w.rank());
  job.root = job.rank == 0;
  job.talk = job.root && !a.quiet;
  const std::size_t ranks = job.ranks, rank = job.rank;
  match::scan_options& o = job.options;
  o.threads = a.threads;
  if (a.threads > 0) {  // the whole program within --threads: the target's preparation too
    fusor::set_num_threads(a.threads);
    fusor::fft::set_threads(a.threads);
  }
  o.planning = planning;
  o.edges = job.edges;
  o.grid = job.grid;
  o.rotation_center = job.centre;
  o.statistics = job.seeds.empty();  // a seeded search's scores are no sample of the noise
  if (!a.memory.empty()) o.memory_budget = parse_bytes(a.memory);
  // the budget must hold a tile: estimate_scan_memory says so now, not after the target is read
  const match::scan_memory_estimate whole = match::estimate_scan_memory<B>(n, m, job.kind, o, rotations.size());
  // this rank's share. A target cut into at least as many tiles as there are ranks: every
  // rotation on every ranks-th tile (each rank prepares only its own tiles' spectra, where a
  // share of the rotations would prepare every tile on every rank). Otherwise a contiguous block
  // of the rotations, cut between the batches a single process would score (cpu transforms a
  // batch's rotations in pairs, whose last bits depend on the pairing), so that the merged maps
  // are a single process's bit for bit; in single rotations only when there are fewer batches
  // than ranks. One process: everything.
  job.split_tiles = ranks > 1 && std::size_t(whole.tiles.numel()) >= ranks;
  if (!job.split_tiles && rotations.size() < ranks)
    throw fusor::value_error("match: " + std::to_string(ranks) + " processes for " + std::to_string(rotations.size()) +
                             " rotations; expected at most one process per rotation");
  const std::size_t unit = std::size_t(whole.batch), blocks = (rotations.size() + unit - 1) / unit;
  const auto cut = [&](std::size_t r) {
    return blocks >= ranks ? std::min(rotations.size(), unit * (blocks * r / ranks)) : rotations.size() * r / ranks;
  };
  job.first = job.split_tiles ? 0 : cut(rank);
  const std::size_t last = job.split_tiles ? rotations.size() : cut(rank + 1);
  job.share.assign(rotations.begin() + std::ptrdiff_t(job.first), rotations.begin() + std::ptrdiff_t(last));
  if (job.split_tiles) {
    o.tile_part = fusor::index_t(rank);
    o.tile_parts = fusor::index_t(ranks);
  }
  job.estimate = job.split_tiles ? whole : match::estimate_scan_memory<B>(n, m, job.kind, o, job.share.size());
}

/// The volumes a scan reads, on backend B.
template <class B>
struct match_inputs {
  fusor::array<float, B> target, templ, mask, target_mask;
};

/// The inputs read (every voxel finite, checked before any work), the default mask made, and the
/// filters set on the job's options: the band on both, the wedge and CTF on the template (made to
/// look as the data was imaged), the target's whitening profile on both.
template <class B>
match_inputs<B> read_inputs(const match_args& a, match_job& job) {
  match_inputs<B> in;
  in.target = finite_volume<B>(*job.target_file, a.target, "target");
  in.templ = finite_volume<B>(*job.templ_file, a.templ, "template");
  const fusor::extents& m = job.m;
  if (!a.mask.empty()) {
    in.mask = finite_volume<B>(a.mask, "mask", m, "the template's");
  } else {
    match::mask_options soft;
    soft.edge = match::mask_edge::gaussian(1.0);
    soft.center = job.centre;  // about the rotation centre, so that turning it leaves it in place
    in.mask = match::sphere_mask<B>(m, double(*std::min_element(m.begin(), m.end()) / 2) - 1.0, soft);
  }
  match::fourier_filter tf, gf;
  tf.voxel_size = gf.voxel_size = job.target_file->header().voxel_size()[0];
  if (a.lowpass > 0 || a.highpass > 0) tf.band = gf.band = match::bandpass{a.lowpass, a.highpass, true};
  if (!a.wedge.empty()) gf.wedge = match::missing_wedge{a.wedge[0], a.wedge[1], 1, 2};
  if (job.tilts) {
    gf.tilts = job.tilts;  // each tilt's CTF, exposure and weights, in the tomogram's frame
  } else if (const auto defocus = defocus_value(a.tilt)) {
    gf.ctf = match::contrast_transfer{*defocus, a.voltage, a.cs, a.amplitude_contrast, a.tilt.phase_shift, a.phase_flip};
  }
  if (a.whiten) tf.whitening = gf.whitening = match::whitening_profile(in.target);
  job.options.target_filter = tf;
  job.options.template_filter = gf;
  if (!a.target_mask.empty()) in.target_mask = finite_volume<B>(a.target_mask, "target mask", job.n, "the target's");
  return in;
}

/// The scan of this process's share, announced on the root and drawn on `line` as it runs;
/// Ctrl-C (`interrupted`) stops it between batches.
template <class B>
match::scan_result<B> run_scan(const match_args& a, match_job& job, const match_inputs<B>& in, const fusor::array<float, B>& templ,
                               progress_line& line, bool noise) {
  const match::scan_memory_estimate& est = job.estimate;
  if (job.talk && !noise && !job.seeds.empty()) {
    std::printf("match: %zu seeds of %s, each an ellipsoid of radius (%g, %g, %g) voxels and %s, %zu rotations of a %s "
                "template in all (%s; the exhaustive search would score %zu at every voxel of %s)\n",
                job.seeds.size(), a.seeds.c_str(), job.seeds[0].radius[0], job.seeds[0].radius[1], job.seeds[0].radius[2],
                a.seed_cone >= 0 ? ("the rotations within " + short_number(a.seed_cone) + " degrees of its orientation").c_str()
                                 : "every rotation",
                job.seed_rotations, fusor::to_string(job.m).c_str(), match::to_string(job.kind).c_str(), job.rotations.size(),
                fusor::to_string(job.n).c_str());
  } else if (job.talk && noise) {
    std::printf("match: the same rotations of the phase-randomised template (noise correction, seed %llu)\n", a.noise_seed);
  } else if (job.talk) {
    std::printf("match: %zu rotations of a %s template over a %s target (%s, FFT grid %s, %lld tile(s)), budget %s",
                job.rotations.size(), fusor::to_string(job.m).c_str(), fusor::to_string(job.n).c_str(),
                match::to_string(job.kind).c_str(), fusor::to_string(est.grid).c_str(), (long long)est.tiles.numel(),
                format_bytes(double(est.budget)).c_str());
    if (a.particle_diameter > 0 && a.rotations.empty())
      std::printf("; a %.2f-degree step by the Crowther criterion (%g Å at %g Å)", job.angular_step, a.particle_diameter, job.resolution);
    if (job.ranks > 1 && job.split_tiles)
      std::printf(" per process; %zu processes, each scoring every rotation on every %zu-th tile", job.ranks, job.ranks);
    else if (job.ranks > 1)
      std::printf(" per process; %zu processes, rank 0 scores %zu rotations", job.ranks, job.share.size());
    std::printf("\n");
  }
  std::fflush(stdout);
  job.options.progress = [&](std::size_t done, std::size_t total) {
    line.update(done, total);
    return interrupted == 0;
  };
  if (!job.seeds.empty()) {
    auto r = match::seeded_scan(in.target, templ, in.mask, job.share, job.seeds, job.kind, job.options);
    if (!noise) job.found = std::move(r.seeds);
    return std::move(r.maps);
  }
  return a.target_mask.empty() ? match::scan(in.target, templ, in.mask, job.share, job.kind, job.options)
                               : match::scan(in.target, templ, in.mask, job.share, job.kind, job.options, in.target_mask);
}

/// The maps and statistics of the whole job, on the host.
struct match_maps {
  fusor::array<float> best_score;
  fusor::array<std::int32_t> best_rotation;
  match::score_statistics statistics;
};

/// The processes' maps merged on the root (rotation indices made global first): a max of the
/// scan's keys, the statistics from each process's count, sum and sum of squares. Every process
/// takes part; only the root's result is whole.
template <class B>
match_maps merge_ranks(const match_job& job, const match::scan_result<B>& r, const world& w) {
  match_maps maps{fusor::to<fusor::cpu>(r.best_score), fusor::to<fusor::cpu>(r.best_rotation), r.statistics};
  if (job.ranks == 1) return maps;
  const std::size_t voxels = std::size_t(job.n.numel());
  // the scan's own keys, with global rotation indices; key 0 (an unscored voxel) decodes to
  // NaN and rotation -1, as the scan's maps hold it
  std::vector<std::uint64_t> keys(voxels);
  for (std::size_t i = 0; i < voxels; ++i) {
    const std::int32_t k = maps.best_rotation.data()[i];
    keys[i] = k < 0 ? 0 : match::detail::score_key(maps.best_score.data()[i], std::uint32_t(k) + std::uint32_t(job.first));
  }
  w.max_to_root(keys);
  const match::score_statistics& s = maps.statistics;
  const double c = double(s.count);
  std::vector<double> moments{c, c * s.mean, c * (s.stddev * s.stddev + s.mean * s.mean)};
  w.sum_to_root(moments);
  if (!job.root) return maps;
  for (std::size_t i = 0; i < voxels; ++i) {
    maps.best_score.data()[i] = match::detail::key_score(keys[i]);
    maps.best_rotation.data()[i] = std::int32_t(match::detail::key_rotation(keys[i]));
  }
  const double mean = moments[0] > 0 ? moments[1] / moments[0] : 0.0;
  const double var = moments[0] > 0 ? moments[2] / moments[0] - mean * mean : 0.0;
  maps.statistics = {std::int64_t(moments[0]), mean, var > 0 ? std::sqrt(var) : 0.0};
  return maps;
}

/// seeds.tsv: per seed where it was read, the voxel it names, and the voxel, score and rotation of
/// its best, with how many rotations and voxels it scored.
inline std::string seed_table(const match_job& job) {
  std::string t = "seed\tx\ty\tz\tbest_x\tbest_y\tbest_z\tscore\trotation\trotations\tvoxels\tfrom\n";
  char line[512];
  for (std::size_t i = 0; i < job.seeds.size(); ++i) {
    const match::seed_match& f = job.found[i];
    const match::vec3& p = job.seeds[i].position;
    std::snprintf(line, sizeof line, "%zu\t%.3f\t%.3f\t%.3f\t%lld\t%lld\t%lld\t%.6g\t%d\t%zu\t%lld\t", i, p[0], p[1], p[2],
                  (long long)f.position[0], (long long)f.position[1], (long long)f.position[2], double(f.score), f.rotation,
                  f.rotations, (long long)f.voxels);
    t += line + job.seed_points[i].where + "\n";
  }
  return t;
}

/// The MRC mode of rotations.mrc: float32 (every index up to 2^24 exact), or with --half-precision
/// int16 where every index and the -1 of an unscored voxel fit.
inline match::mrc_mode rotation_map_mode(const match_args& a, std::size_t rotations) {
  return a.half_precision && rotations <= 32767 ? match::mrc_mode::int16 : match::mrc_mode::float32;
}

/// The output folder's parts, staged then swapped in whole (result_folder.hpp): the maps as MRC
/// files on the target's voxel size and origin, the rotation table, and metadata.json with every
/// parameter, the grid, the tiles, the statistics and the timings.
template <class B>
void write_outputs(const match_args& a, const match_job& job, const match_maps& maps, const match::scan_result<B>& r,
                   double seconds, result_staging& out, std::optional<double> noise_mean) {
  const fusor::extents &n = job.n, &m = job.m;
  const auto vt = job.target_file->header().voxel_size();
  const match::scan_memory_estimate& est = job.estimate;
  match::mrc_write_options mw;
  mw.voxel_size = vt;
  mw.origin = job.target_file->header().origin_angstrom();
  // --half-precision (pytom-match-pick's): the scores rounded once to float16 (MRC mode 12), half
  // the file; the rotation indices exactly, as int16 (mode 1) where every index fits, else float32
  const match::mrc_mode score_mode = a.half_precision ? match::mrc_mode::float16 : match::mrc_mode::float32;
  const match::mrc_mode rotation_mode = rotation_map_mode(a, job.rotations.size());
  mw.mode = score_mode;
  match::write_mrc(out.part("scores.mrc"), maps.best_score, mw);
  mw.mode = rotation_mode;
  match::write_mrc(out.part("rotations.mrc"), fusor::array<float>(fusor::cast<float>(maps.best_rotation)), mw);
  mw.mode = match::mrc_mode::float32;
  write_text(out.part("rotations.tsv"), rotation_table(job.rotations));
  if (a.hdf5) {
    // the maps again as HDF5 in pyTME's Density layout: data [x, y, z], origin, sampling_rate
    hdf5_volume h;
    h.shape = {n[0], n[1], n[2]};
    h.origin = mw.origin;
    h.sampling_rate = vt;
    h.attributes = {{"program", "fusor-match " FUSOR_MATCH_VERSION}, {"score", match::to_string(job.kind)}};
    h.values.assign(maps.best_score.data(), maps.best_score.data() + maps.best_score.size());
    try {
      write_hdf5_volume(out.part("scores.h5").string(), h);
      h.values.clear();
      h.indices.assign(maps.best_rotation.data(), maps.best_rotation.data() + maps.best_rotation.size());
      h.attributes.push_back({"rotation_table", "rotations.tsv"});
      write_hdf5_volume(out.part("rotations.h5").string(), h);
    } catch (const std::runtime_error& e) {
      throw fusor::io_error(std::string("match: ") + e.what());
    }
  }
  json meta;
  meta["program"] = "fusor-match";
  meta["fusor_version"] = FUSOR_MATCH_VERSION;
  meta["command_line"] = a.command_line;
  meta["backend"] = fusor::backend_traits<B>::name;
#if defined(FUSOR_MATCH_CUDA)
  if constexpr (std::is_same_v<B, fusor::cuda>) meta["device"] = fusor::cuda_device_name();  // rank 0's
#endif
  meta["target"] = fs::absolute(a.target).string();
  meta["template"] = fs::absolute(a.templ).string();
  meta["mask"] = a.mask.empty() ? json(nullptr) : json(fs::absolute(a.mask).string());
  meta["target_mask"] = a.target_mask.empty() ? json(nullptr) : json(fs::absolute(a.target_mask).string());
  meta["target_shape"] = {n[0], n[1], n[2]};
  meta["template_shape"] = {m[0], m[1], m[2]};
  meta["voxel_size"] = {vt[0], vt[1], vt[2]};
  meta["score"] = match::to_string(job.kind);
  meta["precision"] = {{"scores", a.half_precision ? "float16" : "float32"},
                       {"rotations", rotation_map_mode(a, job.rotations.size()) == match::mrc_mode::int16 ? "int16" : "float32"}};
  // the template's point the rotations turn about, in its voxels: a score at voxel x puts it on
  // x + (voxel - template_shape // 2) (peaks_run.hpp reports that point)
  const match::vec3& centre = job.centre;
  meta["rotation_centre"] = {{"convention", a.rotation_centre}, {"voxel", {centre[0], centre[1], centre[2]}}};
  meta["rotations"] = {{"count", job.rotations.size()},
                       {"file", a.rotations.empty() ? json(nullptr) : json(fs::absolute(a.rotations).string())},
                       {"angular_step", a.rotations.empty() ? json(job.angular_step) : json(nullptr)},
                       {"crowther", a.particle_diameter > 0 ? json{{"particle_diameter", a.particle_diameter},
                                                                   {"resolution", job.resolution}}
                                                            : json(nullptr)},
                       {"file_convention", a.rotations.empty() ? json(nullptr) : json(a.rotations_convention)},
                       {"euler_convention", "RELION (rlnAngleRot/Tilt/Psi) in rotations.tsv and the peaks"},
                       {"symmetry", a.symmetry},
                       {"angle_set", a.rotations.empty() && a.cone_angle < 0 ? json(a.angle_set) : json(nullptr)},
                       {"healpix", a.angle_set == "healpix" ? json{{"nside", job.healpix.nside},
                                                                   {"pixel_step", job.healpix.pixel_step},
                                                                   {"inplane_step", job.healpix.inplane_step}}
                                                            : json(nullptr)},
                       {"cone", a.cone_angle >= 0 ? json{{"angle", a.cone_angle}, {"axis", a.cone_axis}} : json(nullptr)}};
  meta["hdf5"] = a.hdf5 ? json::array({"scores.h5", "rotations.h5"}) : json(nullptr);
  meta["seeds"] = job.seeds.empty() ? json(nullptr)
                                    : json{{"file", fs::absolute(a.seeds).string()},
                                           {"tomo", a.seeds_tomo.empty() ? json(nullptr) : json(a.seeds_tomo)},
                                           {"count", job.seeds.size()},
                                           {"radius", {job.seeds[0].radius[0], job.seeds[0].radius[1], job.seeds[0].radius[2]}},
                                           {"cone", a.seed_cone >= 0 ? json(a.seed_cone) : json(nullptr)},
                                           {"rotations_scored", job.seed_rotations},
                                           {"table", "seeds.tsv"}};
  if (!job.seeds.empty()) write_text(out.part("seeds.tsv"), seed_table(job));
  meta["filters"] = {{"lowpass", a.lowpass},
                     {"highpass", a.highpass},
                     {"wedge", a.wedge},
                     {"defocus", a.tilt.defocus.empty() ? json(nullptr) : defocus_value(a.tilt) ? json(*defocus_value(a.tilt)) : json(a.tilt.defocus)},
                     {"voltage_kv", a.voltage},
                     {"cs_mm", a.cs},
                     {"amplitude_contrast", a.amplitude_contrast},
                     {"phase_flip", a.phase_flip},
                     {"phase_shift", a.tilt.phase_shift},
                     {"whiten", a.whiten}};
  meta["tilt_series"] = tilt_series_json(a.tilt, job.tilts);
  meta["noise_correction"] = noise_mean ? json{{"seed", a.noise_seed}, {"noise_mean", *noise_mean},
                                               {"formula", "scores - noise_scores + mean(noise_scores)"}}
                                        : json(nullptr);
  meta["memory_budget"] = est.budget;
  meta["memory_estimate"] = est.bytes;
  meta["threads"] = a.threads;
  meta["planning"] = a.planning;
  meta["edges"] = match::to_string(job.edges);
  meta["grid"] = match::to_string(job.grid);
  meta["fft_shape"] = {r.fft_shape[0], r.fft_shape[1], r.fft_shape[2]};
  meta["tile"] = {r.tile[0], r.tile[1], r.tile[2]};
  meta["processes"] = job.ranks;
  meta["split"] = job.ranks == 1 ? json(nullptr) : json(job.split_tiles ? "tiles" : "rotations");
  const match::score_statistics& stats = maps.statistics;
  meta["statistics"] = {{"count", stats.count}, {"mean", stats.mean}, {"stddev", stats.stddev}};
  meta["seconds"] = seconds;
  meta["peak_memory_bytes"] = peak_memory_bytes();
  out.commit(meta);
  if (job.talk && !job.seeds.empty())
    std::printf("match: %zu seeds, %zu rotations scored in %s, peak memory %s -> %s/{scores,rotations}.mrc, rotations.tsv, "
                "seeds.tsv, metadata.json\n",
                job.seeds.size(), job.seed_rotations, progress_line::duration(seconds).c_str(),
                format_bytes(double(peak_memory_bytes())).c_str(), a.output.c_str());
  else if (job.talk)
    std::printf("match: %zu rotations in %s, %.2f ms per rotation, peak memory %s -> %s/{scores,rotations}.mrc, "
                "rotations.tsv, metadata.json\n",
                job.rotations.size(), progress_line::duration(seconds).c_str(), 1e3 * seconds / double(job.rotations.size()),
                format_bytes(double(peak_memory_bytes())).c_str(), a.output.c_str());
}

/// `fusor-match match`: planned and checked, read, scanned, merged over the processes, written.
template <class B>
int run_match(const match_args& a, const world& w) {
  match_job job;
  plan_match<B>(a, w, job);
  const match_inputs<B> in = read_inputs<B>(a, job);
  // the output folder: made when missing, locked for the whole run, its parts staged beside it
  std::optional<result_staging> out;
  if (job.root) out.emplace(a.output);
  progress_line line(job.talk);
  const match::scan_result<B> r = run_scan(a, job, in, in.templ, line, false);
  match_maps maps = merge_ranks(job, r, w);
  std::optional<double> noise_mean;
  if (a.noise_correction) {
    // the phase-randomised template through the same scan; its per-voxel best subtracted, its mean
    // added back (phase_randomize.hpp); the statistics stay the template's own scan's
    const auto noise = run_scan(a, job, in, match::phase_randomized(in.templ, a.noise_seed), line, true);
    const match_maps noise_maps = merge_ranks(job, noise, w);
    if (job.root) {
      double mean = 0;
      maps.best_score = match::subtract_noise_scores(maps.best_score, noise_maps.best_score, &mean);
      noise_mean = mean;
    }
  }
  if (!job.root) return 0;
  write_outputs(a, job, maps, r, line.elapsed(), *out, noise_mean);
  return 0;
}

}  // namespace fusor_match
