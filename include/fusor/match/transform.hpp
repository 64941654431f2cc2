#pragma once
// Rigid transforms of volumes: rotate about a centre and translate, sampling the input with
// trilinear or cubic B-spline interpolation (interpolation.hpp). One generator computes each output
// voxel from its position, so the transform is one pass on every backend (threads and the
// executor's loop on cpu, one kernel on cuda) and can write into a caller's buffer (a scan rotates
// its template into the same buffer for every rotation).
//
// Conventions (fusor::match, all of it):
// - a volume's axes (0, 1, 2) are (x, y, z), as pyTME's Density holds them (it transposes MRC's
//   z-slowest layout); positions are voxel indices along those axes;
// - the centre of a volume of shape n is n // 2 on every axis (the voxel an FFT shift moves to the
//   origin, and the one a peak's position names), unless given;
// - rigid_transform(v, R, t) moves the content: the point p of v lands at R (p - c) + c' + t, where
//   c is v's centre and c' the output's (c' = c + (m // 2 - n // 2) for an output of shape m, so
//   centres meet). Each output voxel o samples v at R^T (o - c' - t) + c.
#include <optional>
#include <string>

#include "interpolation.hpp"
#include "rotations.hpp"

namespace fusor::match {

/// n // 2 on every axis of a 3-d shape: the centre of a volume (see above).
inline vec3 volume_center(const extents& shape) {
  detail::require_volume(shape, "volume_center");
  return {double(shape[0] / 2), double(shape[1] / 2), double(shape[2] / 2)};
}

/// (n - 1) / 2 on every axis of a 3-d shape: the middle of the index range, which pyTME rotates
/// about (half a voxel below volume_center on an even axis; the same voxel on an odd one).
inline vec3 index_center(const extents& shape) {
  detail::require_volume(shape, "index_center");
  return {double(shape[0] - 1) / 2, double(shape[1] - 1) / 2, double(shape[2] - 1) / 2};
}

struct transform_options {
  interpolation method = interpolation::cubic;
  /// The rotation centre in the input, in voxels; volume_center(input shape) when empty.
  std::optional<vec3> center;
  /// Cubic only: the input already holds bspline_coefficients(volume), as when one template is
  /// rotated many times. Otherwise the coefficients are computed on each call.
  bool prefiltered = false;
  /// The value of output voxels whose sample lies off the input.
  float fill = 0.0f;
};

namespace detail {

/// Output voxel (i, j, k) of an output with axes 1 and 2 of lengths m1, m2 takes the input's
/// value at a (i, j, k, 1)^T. The coordinates are computed per voxel (not accumulated along a
/// row), so every backend samples the same points.
struct affine_resample {
  using value_type = float;
  volume_sampler sample;
  index_t m1, m2;
  float a[3][4];
  FUSOR_HD void fill(index_t first, float* out, index_t count) const {
    index_t i = first / (m1 * m2), j = (first / m2) % m1, k = first % m2;
    for (index_t e = 0; e < count; ++e) {
      const float fi = float(i), fj = float(j), fk = float(k);
      out[e] = sample(a[0][0] * fi + a[0][1] * fj + a[0][2] * fk + a[0][3],
                      a[1][0] * fi + a[1][1] * fj + a[1][2] * fk + a[1][3],
                      a[2][0] * fi + a[2][1] * fj + a[2][2] * fk + a[2][3]);
      if (++k == m2) {
        k = 0;
        if (++j == m1) {
          j = 0;
          ++i;
        }
      }
    }
  }
};

inline void check_rotation(const matrix3& r) {
  // R R^T = I and det R = 1, loosely: a matrix read from a file carries a few digits
  double worst = 0;
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) {
      double d = 0;
      for (int k = 0; k < 3; ++k) {
        check_finite(r[a][k], "rigid_transform: a rotation matrix element");
        d += r[a][k] * r[b][k];
      }
      worst = std::max(worst, std::abs(d - (a == b ? 1.0 : 0.0)));
    }
  const double det = r[0][0] * (r[1][1] * r[2][2] - r[1][2] * r[2][1]) -
                     r[0][1] * (r[1][0] * r[2][2] - r[1][2] * r[2][0]) +
                     r[0][2] * (r[1][0] * r[2][1] - r[1][1] * r[2][0]);
  if (worst > 1e-4 || std::abs(det - 1.0) > 1e-4)
    throw value_error("fusor::match::rigid_transform: expected a rotation matrix (R R^T = I, det R = 1, to 1e-4), "
                      "got one with |R R^T - I| up to " + std::to_string(worst) + " and det " + std::to_string(det));
}

/// The generator for `out_shape` sampling `source` (values or coefficients) of shape `in_shape`.
template <class B>
generator_expr<affine_resample, B> resample_expr(const float* source, const extents& in_shape, const extents& out_shape,
                                                 const matrix3& r, const vec3& t, const transform_options& o) {
  const vec3 c = o.center ? *o.center : volume_center(in_shape);
  for (int a = 0; a < 3; ++a) check_finite(c[std::size_t(a)], "rigid_transform: the centre");
  for (int a = 0; a < 3; ++a) check_finite(t[std::size_t(a)], "rigid_transform: the translation");
  check_rotation(r);
  affine_resample g{volume_sampler{source, in_shape[0], in_shape[1], in_shape[2], o.method, o.fill}, out_shape[1],
                    out_shape[2], {}};
  // source = R^T (o - c' - t) + c, c' = c + (m // 2 - n // 2), in double, then rounded once
  vec3 shift{};
  for (int a = 0; a < 3; ++a)
    shift[std::size_t(a)] = c[std::size_t(a)] + double(out_shape[a] / 2 - in_shape[a] / 2) + t[std::size_t(a)];
  for (int row = 0; row < 3; ++row) {
    double offset = c[std::size_t(row)];
    for (int col = 0; col < 3; ++col) {
      const double rt = r[std::size_t(col)][std::size_t(row)];  // (R^T)[row][col]
      g.a[row][col] = float(rt);
      offset -= rt * shift[std::size_t(col)];
    }
    g.a[row][3] = float(offset);
  }
  return {g, out_shape, contiguous_strides(out_shape)};
}

}  // namespace detail

/// Writes `volume` rotated by `r` about its centre and moved by `t` (voxels) into `out`, whose
/// shape may differ from the input's (centres meet; see the conventions above). `out` must not
/// share memory with `volume`. Nothing is allocated when the input is linear or prefiltered.
template <class B>
void rigid_transform(const array<float, B>& volume, const matrix3& r, const vec3& t, array<float, B>& out,
                     const transform_options& o = {}) {
  detail::require_volume(volume.shape(), "rigid_transform");
  detail::require_volume(out.shape(), "rigid_transform (the output)");
  if (volume.size() > 0 && out.size() > 0 && volume.data() == out.data())
    throw value_error("fusor::match::rigid_transform: the output shares its buffer with the input; pass another array");
  if (out.size() == 0) return;
  if (volume.size() == 0)
    throw shape_error("fusor::match::rigid_transform: expected a non-empty input volume, got shape " +
                      to_string(volume.shape()));
  if (o.method == interpolation::cubic && !o.prefiltered) {
    const array<float, B> coefficients = bspline_coefficients(volume);
    out = detail::resample_expr<B>(coefficients.data(), volume.shape(), out.shape(), r, t, o);
  } else {
    out = detail::resample_expr<B>(volume.data(), volume.shape(), out.shape(), r, t, o);
  }
}

/// `volume` rotated by `r` about its centre and moved by `t` (voxels), in a volume of the same
/// shape: out(o) = volume(R^T (o - c - t) + c).
template <class B>
array<float, B> rigid_transform(const array<float, B>& volume, const matrix3& r, const vec3& t = {},
                                const transform_options& o = {}) {
  detail::require_volume(volume.shape(), "rigid_transform");
  array<float, B> out(volume.shape());
  if (volume.size() > 0) rigid_transform(volume, r, t, out, o);
  return out;
}

/// The same with the rotation as a quaternion.
template <class B>
array<float, B> rigid_transform(const array<float, B>& volume, const quaternion& q, const vec3& t = {},
                                const transform_options& o = {}) {
  return rigid_transform(volume, to_matrix(q), t, o);
}

}  // namespace fusor::match
