#pragma once
// Masks for template matching: sphere, ellipsoid, box and tube (a cylinder, hollow when its inner
// radius is above 0), each with a hard, Gaussian or raised-cosine edge, in any orientation; and the
// template's normalisation under a mask (pyTME's normalize_template).
//
// A mask is 1 inside its shape and falls off with the distance d from the shape's surface outside
// it. Every shape is placed by its centre c (volume_center(shape) by default: n // 2) and an
// orientation R: the voxel at position x lies at p = R^T (x - c) in the shape's own frame, so R
// rotates the shape as rigid_transform rotates a volume. One generator computes each voxel from
// its position, in double, on every backend.
#include <cmath>
#include <optional>
#include <string>

#include "../core/reduce.hpp"
#include "transform.hpp"

namespace fusor::match {

/// How a mask falls off outside its shape, over the distance d (voxels) from the surface:
///   hard:     0 (the shape's voxels are 1, the rest 0);
///   gaussian: exp(-d^2 / (2 width^2)), cut to 0 beyond `cutoff` widths (pyTME's sigma_decay and
///             cutoff_sigma, 3 by default);
///   cosine:   (1 + cos(pi d / width)) / 2 up to d = width, then 0 (RELION's soft edge).
struct mask_edge {
  enum class kind { hard, gaussian, cosine };
  kind profile = kind::hard;
  double width = 0;
  double cutoff = 3;

  static mask_edge hard() { return {}; }
  static mask_edge gaussian(double sigma, double cutoff_sigmas = 3) { return {kind::gaussian, sigma, cutoff_sigmas}; }
  static mask_edge cosine(double width) { return {kind::cosine, width, 0}; }
};

struct mask_options {
  /// The shape's centre in voxels; volume_center(shape) when empty.
  std::optional<vec3> center;
  /// Rotates the shape about its centre (the identity by default).
  matrix3 orientation{{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};
  mask_edge edge;
};

namespace detail {

enum class mask_shape { sphere, ellipsoid, box, tube };

/// d, the distance outside the shape (0 inside) of the point p in the shape's frame:
///   sphere (radius a0):        |p| - a0;
///   ellipsoid (radii a):       with r = |p / a| > 1, the distance from the surface point on the
///                              ray from the centre, |p| (1 - 1/r): exact for a sphere, at least
///                              the true distance otherwise (as pyTME, which scales by the mean
///                              radius instead);
///   box (half-widths a):       the Euclidean distance to the box;
///   tube (radii a0 <= a1 about axis 2, half-height a2): radial and axial excess combined.
struct mask_generator {
  using value_type = float;
  mask_shape shape;
  index_t n1, n2;
  double c[3];
  double rt[3][3];  // R^T
  double a[3];
  mask_edge::kind profile;
  double width, cutoff;

  FUSOR_HD double outside(double p0, double p1, double p2) const {
    switch (shape) {
      case mask_shape::sphere: {
        const double r = ::sqrt(p0 * p0 + p1 * p1 + p2 * p2);
        return r > a[0] ? r - a[0] : 0.0;
      }
      case mask_shape::ellipsoid: {
        const double q0 = p0 / a[0], q1 = p1 / a[1], q2 = p2 / a[2];
        const double r2 = q0 * q0 + q1 * q1 + q2 * q2;
        if (r2 <= 1.0) return 0.0;
        return ::sqrt(p0 * p0 + p1 * p1 + p2 * p2) * (1.0 - 1.0 / ::sqrt(r2));
      }
      case mask_shape::box: {
        const double e0 = ::fabs(p0) - a[0], e1 = ::fabs(p1) - a[1], e2 = ::fabs(p2) - a[2];
        const double d0 = e0 > 0 ? e0 : 0.0, d1 = e1 > 0 ? e1 : 0.0, d2 = e2 > 0 ? e2 : 0.0;
        return ::sqrt(d0 * d0 + d1 * d1 + d2 * d2);
      }
      default: {  // tube
        const double rho = ::sqrt(p0 * p0 + p1 * p1);
        double radial = rho - a[1];
        if (a[0] - rho > radial) radial = a[0] - rho;
        if (radial < 0) radial = 0;
        double axial = ::fabs(p2) - a[2];
        if (axial < 0) axial = 0;
        return ::sqrt(radial * radial + axial * axial);
      }
    }
  }

  FUSOR_HD float value(double d) const {
    if (d <= 0.0) return 1.0f;
    switch (profile) {
      case mask_edge::kind::hard:
        return 0.0f;
      case mask_edge::kind::gaussian:
        return d > cutoff * width ? 0.0f : float(::exp(-d * d / (2.0 * width * width)));
      default:  // cosine
        return d >= width ? 0.0f : float(0.5 * (1.0 + ::cos(3.14159265358979323846 * d / width)));
    }
  }

  FUSOR_HD void fill(index_t first, float* out, index_t count) const {
    for (index_t e = 0; e < count; ++e) {
      const index_t q = first + e;
      const double x0 = double(q / (n1 * n2)) - c[0], x1 = double((q / n2) % n1) - c[1], x2 = double(q % n2) - c[2];
      const double p0 = rt[0][0] * x0 + rt[0][1] * x1 + rt[0][2] * x2;
      const double p1 = rt[1][0] * x0 + rt[1][1] * x1 + rt[1][2] * x2;
      const double p2 = rt[2][0] * x0 + rt[2][1] * x1 + rt[2][2] * x2;
      out[e] = value(outside(p0, p1, p2));
    }
  }
};

inline void check_edge(const mask_edge& e, const char* what) {
  const std::string w = std::string(what) + ": ";
  if (e.profile == mask_edge::kind::hard) return;
  if (!(e.width > 0) || !std::isfinite(e.width))
    throw value_error("fusor::match::" + w + "a soft edge needs a finite width > 0 voxels, got " + std::to_string(e.width));
  if (e.profile == mask_edge::kind::gaussian && (!(e.cutoff > 0) || !std::isfinite(e.cutoff)))
    throw value_error("fusor::match::" + w + "a Gaussian edge needs a finite cutoff > 0 (in widths), got " +
                      std::to_string(e.cutoff));
}

template <class B>
array<float, B> make_mask(const extents& shape, mask_shape kind, const vec3& a, const mask_options& o, const char* what) {
  require_volume(shape, what);
  check_edge(o.edge, what);
  check_rotation(o.orientation);
  const vec3 c = o.center ? *o.center : volume_center(shape);
  mask_generator g{kind, shape[1], shape[2], {}, {}, {}, o.edge.profile, o.edge.width, o.edge.cutoff};
  for (int i = 0; i < 3; ++i) {
    check_finite(c[std::size_t(i)], "a mask's centre");
    g.c[i] = c[std::size_t(i)];
    g.a[i] = a[std::size_t(i)];
    for (int j = 0; j < 3; ++j) g.rt[i][j] = o.orientation[std::size_t(j)][std::size_t(i)];
  }
  return array<float, B>(generator_expr<mask_generator, B>{g, shape, contiguous_strides(shape)});
}

/// Weighted moments of a template-sized volume: (mean, 1 / standard deviation) under the weights
/// w with sum n, or an inverse of 0 where the values are constant under them; sums in double.
template <class B>
std::pair<float, float> weighted_standardisation(const array<float, B>& v, const array<float, B>& w, double n) {
  if (!(n > 0)) return {0.0f, 0.0f};
  const double mean = double(sum(cast<double>(v) * cast<double>(w))) / n;
  const double var = double(sum(cast<double>(v) * cast<double>(v) * cast<double>(w))) / n - mean * mean;
  return {float(mean), var > 0 ? float(1.0 / std::sqrt(var)) : 0.0f};
}

}  // namespace detail

/// 1 where |x - c| <= radius.
template <class B = default_backend>
array<float, B> sphere_mask(const extents& shape, double radius, const mask_options& o = {}) {
  detail::check_length(radius, "sphere_mask", "radius", "(voxels)");
  return detail::make_mask<B>(shape, detail::mask_shape::sphere, {radius, radius, radius}, o, "sphere_mask");
}

/// 1 where sum_i (p_i / radii_i)^2 <= 1 (pyTME's elliptical_mask, up to its edge; see above).
template <class B = default_backend>
array<float, B> ellipsoid_mask(const extents& shape, const vec3& radii, const mask_options& o = {}) {
  for (double r : radii) detail::check_length(r, "ellipsoid_mask", "radius", "(voxels)");
  return detail::make_mask<B>(shape, detail::mask_shape::ellipsoid, radii, o, "ellipsoid_mask");
}

/// 1 where |p_i| <= half_widths_i on every axis (a box 2 h + 1 voxels wide for integer h).
template <class B = default_backend>
array<float, B> box_mask(const extents& shape, const vec3& half_widths, const mask_options& o = {}) {
  for (double h : half_widths) detail::check_length(h, "box_mask", "half-width", "(voxels)", true);
  return detail::make_mask<B>(shape, detail::mask_shape::box, half_widths, o, "box_mask");
}

/// A cylinder along the shape frame's axis 2 (the volume's axis 2 unless oriented otherwise):
/// 1 where inner_radius <= sqrt(p0^2 + p1^2) <= outer_radius and |p2| <= height / 2; hollow when
/// inner_radius > 0 (pyTME's tube_mask with symmetry_axis 2).
template <class B = default_backend>
array<float, B> tube_mask(const extents& shape, double inner_radius, double outer_radius, double height,
                          const mask_options& o = {}) {
  detail::check_length(inner_radius, "tube_mask", "inner radius", "(voxels)", true);
  detail::check_length(outer_radius, "tube_mask", "outer radius", "(voxels)");
  detail::check_length(height, "tube_mask", "height", "(voxels)");
  if (inner_radius > outer_radius)
    throw value_error("fusor::match::tube_mask: expected inner radius <= outer radius, got " +
                      std::to_string(inner_radius) + " > " + std::to_string(outer_radius));
  return detail::make_mask<B>(shape, detail::mask_shape::tube, {inner_radius, outer_radius, height / 2}, o, "tube_mask");
}

/// The template standardised under the mask and multiplied by it, as pyTME's normalize_template:
/// with the mask's values as weights w, mean = sum(w t) / sum(w), var = sum(w t^2) / sum(w) - mean^2,
/// result = (t - mean) / sqrt(var) * w. Sums in double.
template <class B>
array<float, B> normalize_under_mask(const array<float, B>& templ, const array<float, B>& mask) {
  if (templ.shape() != mask.shape())
    throw shape_error("fusor::match::normalize_under_mask: expected a mask of the template's shape " +
                      to_string(templ.shape()) + ", got " + to_string(mask.shape()));
  const double n = templ.size() == 0 ? 0.0 : double(sum(cast<double>(mask)));
  if (!(n > 0))
    throw value_error("fusor::match::normalize_under_mask: expected a mask with a positive sum, got " + std::to_string(n));
  const auto [mean, inv] = detail::weighted_standardisation(templ, mask, n);
  if (inv == 0.0f)
    throw value_error("fusor::match::normalize_under_mask: the template is constant under the mask; nothing to normalise");
  return array<float, B>((templ - mean) * inv * mask);
}

}  // namespace fusor::match
