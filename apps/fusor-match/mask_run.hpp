#pragma once
// `fusor-match mask`: a mask MRC for a template: a sphere, an ellipsoid or a cylinder (about z),
// or a tight mask from the template itself (its voxels beyond a threshold, grown, with a soft
// edge: match::tight_mask), every edge a raised cosine.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <fusor/fusor.hpp>

#include "output.hpp"
#include "template_run.hpp"

namespace fusor_match {

struct mask_args {
  std::string output, shape = "sphere", templ;
  std::vector<long long> box;
  double voxel_size = 0;  // 0: the template's, or 1
  double radius = 0, height = 0;
  std::vector<double> radii;
  double soft_edge = 0;
  double threshold = 0, dilation = 0;
  bool dark = false, quiet = false;
};

inline int run_mask(const mask_args& a) {
  require_output_file(a.output);
  fusor::extents box = box_shape(a.box, "mask");
  const bool tight = a.shape == "tight";
  if (tight && a.templ.empty()) throw fusor::value_error("mask: --shape tight needs --template (the MRC it follows)");
  match::mrc_write_options w;
  std::optional<match::mrc_volume<fusor::cpu>> templ;
  if (!a.templ.empty()) {
    require_file(a.templ, "template");
    templ = match::read_mrc(a.templ);
    if (!box.empty() && box != templ->data.shape())
      throw fusor::shape_error("mask: --box " + fusor::to_string(box) + " is not the template's shape " +
                               fusor::to_string(templ->data.shape()) + "; leave --box out to take the template's");
    box = templ->data.shape();
    w.voxel_size = templ->voxel_size;
  } else if (box.empty()) {
    throw fusor::value_error("mask: give --box (the edge in voxels, or x y z) or --template");
  }
  if (a.voxel_size > 0) w.voxel_size = {a.voxel_size, a.voxel_size, a.voxel_size};
  const auto need = [&](bool ok, const std::string& what) {
    if (!ok) throw fusor::value_error("mask: --shape " + a.shape + " needs " + what);
  };
  match::mask_options o;
  if (a.soft_edge > 0) o.edge = match::mask_edge::cosine(a.soft_edge);
  fusor::array<float> mask;
  if (a.shape == "sphere") {
    need(a.radius > 0, "--radius (voxels)");
    mask = match::sphere_mask<fusor::cpu>(box, a.radius, o);
  } else if (a.shape == "ellipsoid") {
    need(a.radii.size() == 3, "--radii (three, voxels along x y z)");
    mask = match::ellipsoid_mask<fusor::cpu>(box, {a.radii[0], a.radii[1], a.radii[2]}, o);
  } else if (a.shape == "cylinder") {
    need(a.radius > 0 && a.height > 0, "--radius and --height (voxels; the axis is z)");
    mask = match::tube_mask<fusor::cpu>(box, 0, a.radius, a.height, o);
  } else if (tight) {
    match::tight_mask_options t;
    t.threshold = a.threshold, t.dark = a.dark, t.dilation = a.dilation, t.soft_edge = a.soft_edge;
    mask = match::tight_mask(templ->data, t);
  } else {
    throw fusor::value_error("mask: --shape expects sphere, ellipsoid, cylinder or tight, got " + a.shape);
  }
  w.label = "fusor-match mask (" + a.shape + ")";
  make_output_folder(a.output);
  match::write_mrc(a.output, mask, w);
  if (!a.quiet) {
    double inside = 0;
    for (fusor::index_t q = 0; q < mask.size(); ++q) inside += mask.data()[q];
    std::printf("mask: %s, %s voxels, %.0f voxels' worth inside (%.1f%%) -> %s\n", a.shape.c_str(), fusor::to_string(box).c_str(),
                inside, 100 * inside / double(mask.size()), a.output.c_str());
  }
  return 0;
}

}  // namespace fusor_match
