#pragma once
// `fusor-match simulate`: a planted test problem. A template (an elongated blob with a side lobe,
// so that every rotation looks different), copies of it turned by rotations of the set a search
// with the same angular step uses, added at well-separated random places to Gaussian noise. It
// writes target.mrc, template.mrc, mask.mrc (a soft sphere) and truth.tsv.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <fusor/fusor.hpp>

#include "output.hpp"
#include "tilt_writers.hpp"

namespace fusor_match {

namespace match = fusor::match;

struct simulate_args {
  std::string output;
  std::vector<long long> size{96, 96, 96};
  long long template_size = 21;
  int copies = 4;
  double angular_step = 30.0;
  double noise = 0.3;
  double voxel_size = 10.0;
  unsigned long long seed = 1;
  // --tilt-series: a tomogram reconstructed from a simulated tilt series (match::simulate_tilt_series)
  bool tilt_series = false;
  std::string tilt_angles = "-60,60:3";
  double dose_per_tilt = 3, defocus = 35000, defocus_spread = 15000, astigmatism = 400, contrast = 0.02;
  bool phase_flip = false;
  // --template, --other, --other-copies (with --tilt-series): the template from a file, and other
  // particles planted beside its copies
  std::string template_file;
  std::vector<std::string> others;
  std::vector<int> other_copies;
};

/// The template of a simulated problem: m³ voxels, an ellipsoid with a sphere beside it.
inline fusor::array<float> simulated_template(fusor::index_t m) {
  const fusor::extents s{m, m, m};
  const double c = double(m / 2), r = double(m) / 17.0;
  match::mask_options body, lobe;
  body.edge = lobe.edge = match::mask_edge::gaussian(1.0);
  lobe.center = match::vec3{c, c + 4 * r, c + r};
  return fusor::array<float>(match::ellipsoid_mask<fusor::cpu>(s, {5 * r, 3 * r, 2 * r}, body) +
                             0.6f * match::sphere_mask<fusor::cpu>(s, 1.5 * r, lobe));
}

/// `simulate --tilt-series`: the tomogram of a simulated tilt series, the template (with a second
/// lobe, so that noise does not make a half turn look as good as the copy's own rotation), its
/// mask, the truth (rotations drawn at random: rotation -1), and the series' files.
inline int run_simulate_tilt_series(const simulate_args& a, const fusor::extents& n, fusor::index_t m) {
  const fusor::extents ms{m, m, m};
  const double c = double(m / 2), r = double(m) / 17.0;
  match::mask_options soft;
  soft.edge = match::mask_edge::gaussian(1.0);
  match::mask_options other = soft;
  other.center = match::vec3{c + 3 * r, c - 2 * r, c - 3 * r};
  fusor::array<float> templ;
  std::vector<fusor::array<float>> others;
  if (a.template_file.empty()) {
    templ = fusor::array<float>(simulated_template(m) + 0.8f * match::sphere_mask<fusor::cpu>(ms, 1.2 * r, other));
  } else {
    // a template from a file (fusor-match template), and the other particles: the voxel size and the box of the simulation
    const auto read = [&](const std::string& path, const char* what) {
      require_file(path, what);
      auto v = match::read_mrc(path);
      for (int k = 0; k < 3; ++k)
        if (std::abs(v.voxel_size[std::size_t(k)] - a.voxel_size) > 1e-3 * a.voxel_size)
          throw fusor::value_error("simulate: the " + std::string(what) + " " + path + " has voxels of " +
                                   std::to_string(v.voxel_size[std::size_t(k)]) + " Å along " + "xyz"[k] + "; --voxel-size is " +
                                   std::to_string(a.voxel_size) + " Å");
      return std::move(v.data);
    };
    templ = read(a.template_file, "template");
    for (const std::string& o : a.others) {
      others.push_back(read(o, "other template"));
      if (others.back().shape() != templ.shape())
        throw fusor::shape_error("simulate: the other template " + o + " is " + fusor::to_string(others.back().shape()) +
                                 "; expected the template's box " + fusor::to_string(templ.shape()));
    }
  }
  match::tilt_simulation s;
  s.shape = n;
  s.voxel_size = a.voxel_size;
  s.copies = a.copies;
  s.angles = match::parse_tilt_range(a.tilt_angles);
  s.dose_per_tilt = a.dose_per_tilt;
  s.defocus = a.defocus;
  s.defocus_spread = a.defocus_spread;
  s.astigmatism = a.astigmatism;
  s.contrast = a.contrast;
  s.phase_flip = a.phase_flip;
  s.seed = a.seed;
  const auto sim = match::simulate_tilt_series(templ, s, others, a.other_copies);
  const fusor::extents mt = templ.shape();
  prepare_folder(a.output);
  const fs::path dir(a.output);
  match::mrc_write_options w;
  w.voxel_size = {a.voxel_size, a.voxel_size, a.voxel_size};
  match::write_mrc(dir / "target.mrc", sim.tomogram, w);
  match::write_mrc(dir / "template.mrc", templ, w);
  match::write_mrc(dir / "mask.mrc",
                   fusor::array<float>(match::sphere_mask<fusor::cpu>(mt, double(*std::min_element(mt.begin(), mt.end()) / 2) - 1.0, soft)), w);
  write_text(dir / "TS.tlt", imod_tilt_angles(sim.series));
  write_text(dir / "TS.defocus", imod_defocus_file(sim.series));
  write_text(dir / "dose.txt", dose_file(sim.series));
  fs::create_directories(dir / "tilt_series");
  write_text(dir / "tomograms.star", relion5_tomograms_star(sim.series, "TS", n, "tilt_series/TS.star"));
  write_text(dir / "tilt_series" / "TS.star", relion5_tilt_series_star(sim.series, "TS"));
  // the last column: which template the copy is (0 the template, k the k-th --other)
  std::string t = "x\ty\tz\trotation\trot\ttilt\tpsi\ttemplate\n";
  char line[256];
  for (std::size_t i = 0; i < sim.positions.size(); ++i) {
    const auto e = relion_angles(sim.rotations[i]);
    const auto& p = sim.positions[i];
    std::snprintf(line, sizeof line, "%lld\t%lld\t%lld\t-1\t%.4f\t%.4f\t%.4f\t%d\n", (long long)p[0], (long long)p[1], (long long)p[2],
                  e[0], e[1], e[2], sim.kinds[i]);
    t += line;
  }
  write_text(dir / "truth.tsv", t);
  std::printf("simulate: a tilt series of %zu tilts (%s, %.1f e/Å² each, defocus %.0f ± %.0f Å%s) of %zu copies of a %lld^3 template in a "
              "%lld x %lld x %lld volume, reconstructed by weighted back-projection -> %s/{target,template,mask}.mrc, truth.tsv, "
              "TS.tlt, TS.defocus, dose.txt, tomograms.star, tilt_series/TS.star\n",
              sim.series.tilts.size(), a.tilt_angles.c_str(), a.dose_per_tilt, a.defocus, a.defocus_spread,
              a.phase_flip ? ", phase-flipped" : "", std::size_t(s.copies), (long long)mt[0], (long long)n[0], (long long)n[1], (long long)n[2],
              a.output.c_str());
  if (!others.empty()) std::printf("simulate: and %zu copies of %zu other template(s) (truth.tsv's last column)\n",
                                   sim.positions.size() - std::size_t(s.copies), others.size());
  return 0;
}

inline int run_simulate(const simulate_args& a) {
  using fusor::index_t;
  const index_t m = a.template_size;
  if (a.size.size() != 3)
    throw fusor::value_error("simulate: --size expects 3 lengths (x y z), got " +
                             std::to_string(a.size.size()));
  const fusor::extents n{a.size[0], a.size[1], a.size[2]};
  for (int k = 0; k < 3; ++k)
    if (n[k] < m)
      throw fusor::value_error("simulate: --size " + std::to_string(n[k]) +
                               " is smaller than the template (--template-size " + std::to_string(m) + ")");
  if (!a.tilt_series && (!a.template_file.empty() || !a.others.empty()))
    throw fusor::value_error("simulate: --template and --other are for --tilt-series");
  if (a.others.size() != a.other_copies.size())
    throw fusor::value_error("simulate: give one --other-copies per --other (" + std::to_string(a.others.size()) + " --other, " +
                             std::to_string(a.other_copies.size()) + " --other-copies)");
  if (!a.others.empty() && a.template_file.empty()) throw fusor::value_error("simulate: --other needs --template");
  if (a.tilt_series) return run_simulate_tilt_series(a, n, m);
  prepare_folder(a.output);
  const auto templ = simulated_template(m);
  const auto rotations = match::uniform_rotations(a.angular_step);
  fusor::random::generator g(a.seed);
  auto target = fusor::random::normal<float>(g, n, 0.0f, float(a.noise));

  // places at least a template apart and a half template inside each face, drawn until they fit
  struct copy {
    index_t x, y, z;
    std::size_t rotation;
  };
  std::vector<copy> planted;
  std::mt19937_64 pick(a.seed * 7919 + 17);
  const index_t h = m / 2;
  for (int tries = 0; int(planted.size()) < a.copies && tries < 100000; ++tries) {
    const auto at = [&](int k) { return h + index_t(pick() % std::uint64_t(n[k] - 2 * h)); };
    const copy c{at(0), at(1), at(2), std::size_t(pick() % rotations.size())};
    bool apart = true;
    for (const copy& o : planted) {
      const double dx = double(c.x - o.x), dy = double(c.y - o.y), dz = double(c.z - o.z);
      apart = apart && std::sqrt(dx * dx + dy * dy + dz * dz) >= double(m);
    }
    if (apart) planted.push_back(c);
  }
  if (int(planted.size()) < a.copies)
    throw fusor::value_error("simulate: " + std::to_string(a.copies) + " copies of a " + std::to_string(m) +
                             "³ template do not fit a template apart in the target; got " +
                             std::to_string(planted.size()) + ": use a larger --size or fewer --copies");
  for (const copy& c : planted) {  // the template's centre voxel h on the copy's voxel
    auto box = target(fusor::range(c.x - h, c.x - h + m), fusor::range(c.y - h, c.y - h + m),
                      fusor::range(c.z - h, c.z - h + m));
    const auto turned = match::rigid_transform(templ, rotations[c.rotation]);
    box = box + turned;  // (views have no +=; box reads each voxel where it writes it)
  }
  const fs::path dir(a.output);
  match::mrc_write_options w;
  w.voxel_size = {a.voxel_size, a.voxel_size, a.voxel_size};
  match::write_mrc(dir / "target.mrc", target, w);
  match::write_mrc(dir / "template.mrc", templ, w);
  match::mask_options soft;
  soft.edge = match::mask_edge::gaussian(1.0);
  match::write_mrc(dir / "mask.mrc", fusor::array<float>(match::sphere_mask<fusor::cpu>(templ.shape(), double(h) - 1.0, soft)), w);
  std::ostringstream t;
  t << "x\ty\tz\trotation\trot\ttilt\tpsi\n";
  char line[256];
  for (const copy& c : planted) {
    const auto e = relion_angles(rotations[c.rotation]);  // as the peaks' STAR rows give them
    std::snprintf(line, sizeof line, "%lld\t%lld\t%lld\t%zu\t%.4f\t%.4f\t%.4f\n", (long long)c.x, (long long)c.y,
                  (long long)c.z, c.rotation, e[0], e[1], e[2]);
    t << line;
  }
  write_text(dir / "truth.tsv", t.str());
  std::printf("simulate: %zu copies of a %lld^3 template in a %lld x %lld x %lld target (noise %.2f, rotations of a "
              "%.1f-degree set) -> %s/{target,template,mask}.mrc, truth.tsv\n",
              planted.size(), (long long)m, (long long)n[0], (long long)n[1], (long long)n[2], a.noise, a.angular_step,
              a.output.c_str());
  return 0;
}

}  // namespace fusor_match
