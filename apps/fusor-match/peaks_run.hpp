#pragma once
// `fusor-match peaks`: peaks called on a match output folder (fusor::match::find_peaks on its
// maps, with the rotations and statistics its metadata.json recorded), written as a TSV table and
// a RELION 5 STAR file: coordinates in voxels, centred coordinates in Å, ZYZ Euler angles in
// degrees (rot, tilt, psi), the score.
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <fusor/fusor.hpp>

#include "output.hpp"
#include "result_folder.hpp"
#include "stats_run.hpp"

namespace fusor_match {

namespace match = fusor::match;

struct peaks_args {
  std::string input, output, tomo_name;
  long long count = 1000;
  double min_distance = -1;  // < 0: the template's radius
  std::vector<long long> margin;
  std::optional<double> min_score, false_positives;
  std::string tomogram_mask;  // peaks only where it is above 0
  std::vector<std::string> backgrounds;  // --background: match results whose scores are subtracted (pyTME's)
  bool tophat = false;        // peaks only where the scores' white top-hat passes its noise cut-off
  int tophat_connectivity = 1;
  bool quiet = false;
};

/// The rotation table of a match output (rotations.tsv), its quaternions read in full.
inline std::vector<match::quaternion> read_rotation_table(const fs::path& path) {
  std::istringstream in(read_text(path));
  std::string line;
  std::getline(in, line);  // the header
  std::vector<match::quaternion> out;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::istringstream f(line);
    double index, rot, tilt, psi;
    match::quaternion q;
    if (!(f >> index >> rot >> tilt >> psi >> q.w >> q.x >> q.y >> q.z))
      throw fusor::io_error("peaks: " + path.string() + " line " + std::to_string(out.size() + 2) +
                            ": expected index, rot, tilt, psi and a quaternion w x y z");
    out.push_back(q);
  }
  return out;
}

/// The template's rotation centre a result was scanned with (metadata.json's rotation_centre, in
/// template voxels), inside the template's box; results written before the option turned about
/// m // 2.
inline match::vec3 recorded_rotation_centre(const nlohmann::json& meta, const std::array<fusor::index_t, 3>& m,
                                            const fs::path& file) {
  if (!meta.contains("rotation_centre")) return match::volume_center(fusor::extents{m[0], m[1], m[2]});
  const auto c = metadata_field<match::vec3>(meta, {"rotation_centre", "voxel"}, file);
  for (std::size_t k = 0; k < 3; ++k)
    if (c[k] < 0 || c[k] > double(m[k] - 1))
      throw fusor::io_error(file.string() + ": rotation_centre.voxel is " + meta["rotation_centre"]["voxel"].dump() +
                            "; expected a point inside the template's box of " + fusor::to_string(fusor::extents{m[0], m[1], m[2]}));
  return c;
}

/// A coordinate as short as it is exact: 31, 31.5, 30.8660254.
inline std::string coordinate(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.10g", std::abs(x) < 5e-11 ? 0.0 : x);
  return text;
}

inline int run_peaks(const peaks_args& a) {
  using fusor::index_t;
  const fs::path dir(a.input);
  for (const char* f : {"metadata.json", "scores.mrc", "rotations.mrc", "rotations.tsv"})
    require_file(dir / f, "match output");
  if (a.min_score && a.false_positives)
    throw fusor::value_error("peaks: give --min-score or --false-positives, not both");
  if (!a.margin.empty() && a.margin.size() != 1 && a.margin.size() != 3)
    throw fusor::value_error("peaks: --margin expects 1 or 3 voxel counts, got " +
                             std::to_string(a.margin.size()));
  // writing into the result folder: hold its lock, so that no match swaps the result meanwhile
  const fs::path base = a.output.empty() ? dir / "peaks" : fs::path(a.output);
  std::error_code ec;
  std::optional<folder_lock> lock;
  if (fs::equivalent(fs::absolute(base).parent_path(), fs::absolute(dir), ec)) lock.emplace(dir, "writing peaks");
  const nlohmann::json meta = read_metadata(dir);
  const fs::path meta_file = dir / metadata_name;
  check_result_parts(dir, meta, {"scores.mrc", "rotations.mrc", "rotations.tsv"});
  const auto rotations = read_rotation_table(dir / "rotations.tsv");
  auto scores = match::read_mrc(dir / "scores.mrc");
  const auto rot = match::read_mrc(dir / "rotations.mrc");
  if (rot.data.shape() != scores.data.shape())
    throw fusor::io_error("peaks: rotations.mrc " + fusor::to_string(rot.data.shape()) +
                          " does not match scores.mrc " + fusor::to_string(scores.data.shape()));
  match::scan_result<fusor::cpu> r;
  r.best_score = std::move(scores.data);
  r.best_rotation = fusor::array<std::int32_t>(fusor::cast<std::int32_t>(rot.data));
  double background_mean = 0;
  if (!a.backgrounds.empty()) r.best_score = subtract_backgrounds(r.best_score, a.backgrounds, "peaks", &background_mean);
  r.statistics = {metadata_field<std::int64_t>(meta, {"statistics", "count"}, meta_file),
                  metadata_field<double>(meta, {"statistics", "mean"}, meta_file),
                  metadata_field<double>(meta, {"statistics", "stddev"}, meta_file)};
  if (a.false_positives && !a.backgrounds.empty())
    throw fusor::value_error("peaks: --false-positives reads the scan's score statistics, which describe the scores before "
                             "--background is subtracted; use --min-score (`stats --background` fits the normalised map's "
                             "noise and gives its cut-off) or --count");
  if (a.false_positives && meta.contains("seeds") && !meta["seeds"].is_null())
    throw fusor::value_error("peaks: " + dir.string() + " is a seeded search (match --seeds), whose scores are no sample of "
                             "the noise; --false-positives needs an exhaustive search's statistics (use --min-score or --count)");
  const auto recorded = metadata_field<std::size_t>(meta, {"rotations", "count"}, meta_file);
  if (rotations.size() != recorded)
    throw fusor::io_error("peaks: rotations.tsv holds " + std::to_string(rotations.size()) +
                          " rotations, metadata.json says " + std::to_string(recorded));

  // where peaks may be: where the top-hat of the scores passes its cut-off (the noise fit of its
  // own histogram, for --false-positives or 1), and inside the tomogram mask; elsewhere no voxel is
  // a peak. The top-hat is taken first, of the scores as they are (a masked voxel's -inf would
  // make its neighbours' top-hat infinite)
  const float none = -std::numeric_limits<float>::infinity();
  std::optional<double> tophat_cutoff;
  if (a.tophat) {
    const tophat_fit t = fit_tophat(r.best_score, a.tophat_connectivity, 200, nullptr);
    tophat_cutoff = match::noise_cutoff(t.noise, a.false_positives.value_or(1.0));
    for (index_t q = 0; q < t.top.size(); ++q)
      if (!(t.top.data()[q] > *tophat_cutoff)) r.best_score.data()[q] = none;
  }
  if (!a.tomogram_mask.empty()) {
    const auto mask = match::read_mrc(a.tomogram_mask).data;
    if (mask.shape() != r.best_score.shape())
      throw fusor::shape_error("peaks: the tomogram mask " + a.tomogram_mask + " " + fusor::to_string(mask.shape()) +
                               " is not the score map's shape " + fusor::to_string(r.best_score.shape()));
    for (index_t q = 0; q < mask.size(); ++q)
      if (!(mask.data()[q] > 0)) r.best_score.data()[q] = none;
  }
  match::peak_options o;
  o.max_peaks = index_t(a.count);
  const auto m = metadata_field<std::array<index_t, 3>>(meta, {"template_shape"}, meta_file);
  o.min_distance = a.min_distance >= 0 ? a.min_distance : double(*std::min_element(m.begin(), m.end()) / 2);
  const match::vec3 centre = recorded_rotation_centre(meta, m, meta_file);
  if (a.margin.size() == 1) o.margin = {index_t(a.margin[0]), index_t(a.margin[0]), index_t(a.margin[0])};
  if (a.margin.size() == 3) o.margin = {index_t(a.margin[0]), index_t(a.margin[1]), index_t(a.margin[2])};
  o.min_score = a.min_score;
  o.false_positives = a.false_positives;
  const auto peaks = match::find_peaks(r, rotations, o);

  const auto n = r.best_score.shape();
  const auto v = scores.voxel_size;
  const std::string tomo =
      !a.tomo_name.empty() ? a.tomo_name : fs::path(metadata_field<std::string>(meta, {"target"}, meta_file)).stem().string();
  std::string tsv = "x\ty\tz\tscore\trotation\trot\ttilt\tpsi\tx_angst\ty_angst\tz_angst\n";
  std::string star =
      "# RELION 5 particles from fusor-match " + metadata_field<std::string>(meta, {"fusor_version"}, meta_file) +
      "\n\ndata_particles\n\nloop_\n_rlnTomoName #1\n_rlnCoordinateX #2\n_rlnCoordinateY #3\n_rlnCoordinateZ #4\n"
      "_rlnCenteredCoordinateXAngst #5\n_rlnCenteredCoordinateYAngst #6\n_rlnCenteredCoordinateZAngst #7\n"
      "_rlnAngleRot #8\n_rlnAngleTilt #9\n_rlnAnglePsi #10\n_rlnLCCmax #11\n_rlnTomoTiltSeriesPixelSize #12\n";
  // Where a peak is: a score at voxel x put the template's voxel m // 2 on x, so its rotation
  // centre c on x + (c - m // 2): the TSV's x, y, z (the score's voxel itself when c is m // 2,
  // half a voxel lower on an even axis with pyTME's centre). RELION turns its reference about
  // the box centre m // 2, which the scan moved to x + (c - m // 2) + R (m // 2 - c): the STAR's
  // coordinates, so that RELION's extraction and rotation give the particle whatever the centre.
  match::vec3 shift{}, lever{};  // c - m // 2, and m // 2 - c, which the rotation turns
  for (std::size_t k = 0; k < 3; ++k) {
    shift[k] = centre[k] - double(m[k] / 2);
    lever[k] = -shift[k];
  }
  const auto where = [&](const match::peak& p) {
    const match::matrix3 r = match::to_matrix(p.orientation);
    match::vec3 tsv{}, star{};
    for (std::size_t k = 0; k < 3; ++k) {
      tsv[k] = double(p.position[k]) + shift[k];
      star[k] = tsv[k] + r[k][0] * lever[0] + r[k][1] * lever[1] + r[k][2] * lever[2];
    }
    return std::pair{tsv, star};
  };
  char line[512];
  for (const match::peak& p0 : peaks) {
    match::peak p = p0;
    p.euler = relion_angles(p.orientation);  // RELION's angles of the orientation (output.hpp)
    const auto [at, particle] = where(p);
    double c[3], cs[3];  // Å from the tomogram's centre, RELION 5's centred coordinates
    for (int k = 0; k < 3; ++k) {
      c[k] = (at[std::size_t(k)] - double(n[k] / 2)) * v[std::size_t(k)];
      cs[k] = (particle[std::size_t(k)] - double(n[k] / 2)) * v[std::size_t(k)];
    }
    std::snprintf(line, sizeof line, "%s\t%s\t%s\t%.6g\t%d\t%.4f\t%.4f\t%.4f\t%.3f\t%.3f\t%.3f\n", coordinate(at[0]).c_str(),
                  coordinate(at[1]).c_str(), coordinate(at[2]).c_str(), double(p.score), p.rotation, p.euler[0], p.euler[1],
                  p.euler[2], c[0], c[1], c[2]);
    tsv += line;
    std::snprintf(line, sizeof line, "%s\t%s\t%s\t%s\t%.3f\t%.3f\t%.3f\t%.4f\t%.4f\t%.4f\t%.6g\t%.6g\n", tomo.c_str(),
                  coordinate(particle[0]).c_str(), coordinate(particle[1]).c_str(), coordinate(particle[2]).c_str(), cs[0], cs[1],
                  cs[2], p.euler[0], p.euler[1], p.euler[2], double(p.score), v[0]);
    star += line;
  }
  if (base.has_parent_path()) prepare_folder(base.parent_path());
  write_text(base.string() + ".tsv", tsv);
  write_text(base.string() + ".star", star);
  if (!a.quiet) {
    std::printf("peaks: %zu peak(s)", peaks.size());
    if (a.false_positives)
      std::printf(" above %.4f (%g false positive(s) expected from noise)",
                  match::false_positive_threshold(r.statistics, *a.false_positives), *a.false_positives);
    if (tophat_cutoff) std::printf(", where the white top-hat passes %.4g", *tophat_cutoff);
    if (!a.backgrounds.empty())
      std::printf(", %zu background(s) subtracted (their mean %.4g added back)", a.backgrounds.size(), background_mean);
    std::printf(" -> %s.tsv, %s.star\n", base.string().c_str(), base.string().c_str());
    for (const match::peak& p : peaks) {
      const auto e = relion_angles(p.orientation);
      const auto at = where(p).first;
      std::printf("  (%s, %s, %s) score %.4f rotation %d, RELION rot/tilt/psi (%.1f, %.1f, %.1f)\n", coordinate(at[0]).c_str(),
                  coordinate(at[1]).c_str(), coordinate(at[2]).c_str(), double(p.score), p.rotation, e[0], e[1], e[2]);
    }
  }
  return 0;
}

}  // namespace fusor_match
