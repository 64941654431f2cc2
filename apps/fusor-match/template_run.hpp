#pragma once
// `fusor-match template`: a template MRC at the tomogram's voxel size, from an atomic model (PDB or
// mmCIF through gemmi: match::density_from_model) or from a density map (MRC: resampled by
// match::template_from_map). The header carries the voxel size the template really has.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <fusor/fusor.hpp>

#include "model_atoms.hpp"
#include "output.hpp"

namespace fusor_match {

namespace match = fusor::match;

struct template_args {
  std::string output, model, map;
  double voxel_size = 0;
  std::vector<long long> box;
  double map_voxel_size = 0;  // 0: the map header's
  double blur = 0, lowpass = 0;
  std::string centre = "mass";
  bool invert = false, mirror = false, keep_waters = false, quiet = false;
  std::optional<unsigned long long> scramble_seed;  // --scramble-phases: the template's amplitudes, seeded random phases
};

/// A box option (one edge, or x y z) as a shape; empty when not given.
inline fusor::extents box_shape(const std::vector<long long>& box, const char* what) {
  if (box.empty()) return {};
  if (box.size() != 1 && box.size() != 3)
    throw fusor::value_error(std::string(what) + ": --box expects one edge or three (x y z), got " + std::to_string(box.size()) + " numbers");
  return box.size() == 1 ? fusor::extents{box[0], box[0], box[0]} : fusor::extents{box[0], box[1], box[2]};
}

inline int run_template(const template_args& a) {
  if (a.model.empty() == a.map.empty())
    throw fusor::value_error("template: give exactly one of --model (PDB or mmCIF) and --map (MRC)");
  const fusor::extents box = box_shape(a.box, "template");
  require_output_file(a.output);
  match::mrc_write_options w;
  if (!a.model.empty()) {
    if (box.empty()) throw fusor::value_error("template: --model needs --box (the template's edge in voxels, or x y z)");
    if (a.centre != "mass")
      throw fusor::value_error("template: a model is centred on its centre of mass; --centre " + a.centre + " is for --map");
    const atomic_model_file file = read_atomic_model(a.model, a.keep_waters);
    std::vector<match::scattering_atom> atoms;
    atoms.reserve(file.atoms.size());
    for (const model_atom& t : file.atoms)
      atoms.push_back({{t.position[0], t.position[1], t.position[2]}, t.occupancy, t.b_iso, t.a, t.b, t.mass});
    match::model_density_options o;
    o.voxel_size = a.voxel_size, o.box = box, o.blur = a.blur, o.lowpass = a.lowpass, o.invert = a.invert;
    const std::span<const match::scattering_atom> all(atoms);
    const match::vec3 c = match::center_of_mass(all);
    auto map = match::density_from_model(all, o);
    if (a.mirror) map = match::mirror(map, 2);
    if (a.scramble_seed) map = match::phase_randomized(map, *a.scramble_seed);
    // how much of the model's scattering the box holds: an atom beyond a face wraps to the other
    double outside = 0;
    for (const auto& t : atoms)
      for (int k = 0; k < 3; ++k)
        if (std::abs(t.position[k] - c[k]) > (double(box[k] / 2) - 0.5) * a.voxel_size) {
          outside += 1;
          break;
        }
    w.voxel_size = {a.voxel_size, a.voxel_size, a.voxel_size};
    w.label = "fusor-match template from " + fs::path(a.model).filename().string();
    if (w.label.size() > 80) w.label.resize(80);
    make_output_folder(a.output);
    match::write_mrc(a.output, map, w);
    if (!a.quiet) {
      std::printf("template: %s (%s, %zu atoms of the first of %d model(s)%s), F(0) = %.1f Å, centre of mass (%.2f, %.2f, %.2f) Å "
                  "-> %s, %lld x %lld x %lld voxels of %g Å, values %.4g to %.4g\n",
                  a.model.c_str(), file.format.c_str(), atoms.size(), file.models_in_file,
                  file.waters_removed ? (", " + std::to_string(file.waters_removed) + " water atoms left out").c_str() : "",
                  match::forward_scattering(all), c[0], c[1], c[2], a.output.c_str(), (long long)box[0], (long long)box[1],
                  (long long)box[2], a.voxel_size, double(fusor::min(map)), double(fusor::max(map)));
      if (outside > 0)
        std::printf("template: warning: %.0f atoms lie outside the box (their density wraps to the opposite face); use a larger --box\n",
                    outside);
    }
    return 0;
  }
  if (a.blur != 0) throw fusor::value_error("template: --blur is for --model (it adds to the atoms' B-factors)");
  if (a.keep_waters) throw fusor::value_error("template: --keep-waters is for --model");
  if (a.centre != "mass" && a.centre != "box")
    throw fusor::value_error("template: --centre expects mass or box, got " + a.centre);
  require_file(a.map, "map");
  const auto in = match::read_mrc(a.map);
  std::array<double, 3> from = in.voxel_size;
  if (a.map_voxel_size > 0) from = {a.map_voxel_size, a.map_voxel_size, a.map_voxel_size};
  for (int k = 0; k < 3; ++k)
    if (!(from[k] > 0))
      throw fusor::value_error("template: the map " + a.map + " has no voxel size along " + "xyz"[k] +
                               " in its header; give --map-voxel-size");
  match::map_template_options o;
  o.voxel_size = a.voxel_size, o.box = box, o.center_of_mass = a.centre == "mass", o.lowpass = a.lowpass, o.mirror = a.mirror,
  o.invert = a.invert;
  auto t = match::template_from_map(in.data, from, o);
  if (a.scramble_seed) t.volume = match::phase_randomized(t.volume, *a.scramble_seed);
  w.voxel_size = t.voxel_size;
  w.label = "fusor-match template from " + fs::path(a.map).filename().string();
  if (w.label.size() > 80) w.label.resize(80);
  make_output_folder(a.output);
  match::write_mrc(a.output, t.volume, w);
  if (!a.quiet)
    std::printf("template: %s (%s voxels of %g x %g x %g Å) -> %s, %s voxels of %.5g x %.5g x %.5g Å\n", a.map.c_str(),
                fusor::to_string(in.data.shape()).c_str(), from[0], from[1], from[2], a.output.c_str(),
                fusor::to_string(t.volume.shape()).c_str(), t.voxel_size[0], t.voxel_size[1], t.voxel_size[2]);
  return 0;
}

}  // namespace fusor_match
