#pragma once
// A mask that follows the template's shape, as RELION's relion_mask_create makes one: the voxels
// beyond a threshold, grown by a distance, with a raised-cosine edge. Distances are Euclidean,
// from an exact distance transform (Felzenszwalb and Huttenlocher 2012: a lower envelope of
// parabolas along each axis in turn, linear in the voxels).
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "interpolation.hpp"

namespace fusor::match {

struct tight_mask_options {
  /// The template's voxels above this value are the particle (below it with `dark`).
  double threshold = 0;
  /// For a template with dark protein: the particle is below the threshold.
  bool dark = false;
  /// The particle grown by this many voxels (Euclidean), all 1.
  double dilation = 0;
  /// Beyond the grown particle, (1 + cos(pi d / width)) / 2 over the distance d < width voxels
  /// (mask_edge::cosine's profile); 0 for a hard edge.
  double soft_edge = 0;
};

namespace detail {

/// The squared distance transform of one line in place: f[q] becomes min_p (q - p)^2 + f[p].
/// Points with an infinite f are no parabola; a line of them stays infinite.
inline void squared_distance_line(double* f, index_t n, std::vector<double>& out, std::vector<index_t>& v, std::vector<double>& z) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  out.resize(std::size_t(n));
  v.resize(std::size_t(n));
  z.resize(std::size_t(n) + 1);
  index_t k = -1;
  for (index_t q = 0; q < n; ++q) {
    if (f[q] == inf) continue;
    double s = -inf;
    while (k >= 0) {
      const index_t p = v[std::size_t(k)];
      s = ((f[q] + double(q) * double(q)) - (f[p] + double(p) * double(p))) / (2.0 * double(q - p));
      if (s > z[std::size_t(k)]) break;
      --k;
    }
    ++k;
    v[std::size_t(k)] = q;
    z[std::size_t(k)] = k == 0 ? -inf : s;
    z[std::size_t(k) + 1] = inf;
  }
  if (k < 0) return;
  index_t j = 0;
  for (index_t q = 0; q < n; ++q) {
    while (z[std::size_t(j) + 1] < double(q)) ++j;
    const double d = double(q - v[std::size_t(j)]);
    out[std::size_t(q)] = d * d + f[v[std::size_t(j)]];
  }
  std::copy_n(out.data(), n, f);
}

}  // namespace detail

/// The Euclidean distance (voxels) from each voxel of the shape to the nearest voxel where
/// `inside` is true (0 there; infinite when no voxel is), on the host.
template <class Inside>
std::vector<double> distance_transform(const extents& shape, const Inside& inside) {
  detail::require_volume(shape, "distance_transform");
  const index_t n0 = shape[0], n1 = shape[1], n2 = shape[2];
  std::vector<double> d(std::size_t(shape.numel()));
  for (index_t q = 0; q < shape.numel(); ++q) d[std::size_t(q)] = inside(q) ? 0.0 : std::numeric_limits<double>::infinity();
  std::vector<double> line, out, z;
  std::vector<index_t> v;
  const index_t len[3] = {n0, n1, n2}, stride[3] = {n1 * n2, n2, 1};
  for (int axis = 2; axis >= 0; --axis) {
    line.resize(std::size_t(len[axis]));
    const index_t lines = shape.numel() / len[axis];
    for (index_t l = 0; l < lines; ++l) {
      // the first voxel of line l: l enumerates the other two axes
      index_t first = 0;
      if (axis == 2) first = l * n2;
      if (axis == 1) first = (l / n2) * n1 * n2 + l % n2;
      if (axis == 0) first = l;
      for (index_t t = 0; t < len[axis]; ++t) line[std::size_t(t)] = d[std::size_t(first + t * stride[axis])];
      detail::squared_distance_line(line.data(), len[axis], out, v, z);
      for (index_t t = 0; t < len[axis]; ++t) d[std::size_t(first + t * stride[axis])] = line[std::size_t(t)];
    }
  }
  for (double& x : d) x = std::sqrt(x);
  return d;
}

/// The mask `o` describes for a template (see the top of this header), on B.
template <class B>
array<float, B> tight_mask(const array<float, B>& templ, const tight_mask_options& o) {
  detail::require_volume(templ.shape(), "tight_mask");
  const auto finite_at_least_0 = [](double v) { return std::isfinite(v) && v >= 0; };
  if (!std::isfinite(o.threshold))
    throw value_error("fusor::match::tight_mask: expected a finite threshold, got " + std::to_string(o.threshold));
  if (!finite_at_least_0(o.dilation))
    throw value_error("fusor::match::tight_mask: expected a finite dilation >= 0 voxels, got " + std::to_string(o.dilation));
  if (!finite_at_least_0(o.soft_edge))
    throw value_error("fusor::match::tight_mask: expected a finite soft edge >= 0 voxels, got " + std::to_string(o.soft_edge));
  const extents n = templ.shape();
  using H = detail::host_of_t<B>;
  const array<float, H> t = to<H>(templ);
  const float* v = t.data();
  const auto inside = [&](index_t q) { return o.dark ? double(v[q]) < o.threshold : double(v[q]) > o.threshold; };
  bool any = false;
  float low = std::numeric_limits<float>::infinity(), high = -low;
  for (index_t q = 0; q < n.numel(); ++q) {
    any = any || inside(q);
    low = std::min(low, v[q]), high = std::max(high, v[q]);
  }
  if (!any)
    throw value_error("fusor::match::tight_mask: no voxel of the template is " + std::string(o.dark ? "below" : "above") +
                      " the threshold " + std::to_string(o.threshold) + " (its values run from " + std::to_string(low) + " to " +
                      std::to_string(high) + ")");
  const std::vector<double> d = distance_transform(n, inside);
  array<float, H> mask(n);
  constexpr double pi = 3.14159265358979323846;
  for (index_t q = 0; q < n.numel(); ++q) {
    const double e = d[std::size_t(q)] - o.dilation;
    mask.data()[q] = e <= 0 ? 1.0f : e < o.soft_edge ? float(0.5 * (1 + std::cos(pi * e / o.soft_edge))) : 0.0f;
  }
  return to<B>(mask);
}

}  // namespace fusor::match
