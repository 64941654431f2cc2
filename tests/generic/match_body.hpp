// Template-matching test bodies written once and instantiated per backend: tests/test_match.cpp
// runs them on cpu, tests/test_match_cuda.cu on cuda. Interpolation is checked against a host
// reference in double that computes the spline coefficients by another method (Unser's recursive
// filter) and evaluates the B-spline basis directly; rigid transforms also against exact voxel
// permutations, integer shifts and a Gaussian rotated in closed form; masks against their
// definitions evaluated by plain loops.
//
// The includer defines TEST_BACKEND (fusor::cpu or fusor::cuda) before including this file.
#include "../common.hpp"

#if defined(_OPENMP)
#include <omp.h>
#endif

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <complex>
#include <filesystem>
#include <limits>
#include <mutex>
#include <numbers>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace matchbody {

using fusor::extents;
using fusor::index_t;
using B = TEST_BACKEND;
namespace match = fusor::match;
using test::host_values;

using volume = std::vector<double>;  // C order, (n0, n1, n2)

inline index_t at(const extents& s, index_t i, index_t j, index_t k) { return (i * s[1] + j) * s[2] + k; }

inline index_t mirror(index_t i, index_t n) {
  if (n == 1) return 0;
  while (i < 0 || i >= n) i = i < 0 ? -i : 2 * (n - 1) - i;
  return i;
}

/// The cubic B-spline coefficients of one line, mirror boundary, by Unser's causal/anticausal
/// recursion in double (Unser, IEEE Signal Proc. Mag. 16(6), 1999, Box 2).
inline std::vector<double> line_coefficients(std::vector<double> c) {
  const index_t n = index_t(c.size());
  if (n == 1) return c;
  const double z = std::sqrt(3.0) - 2.0;
  double sum = 0, zk = 1;
  for (index_t k = 0; k < 60; ++k, zk *= z) sum += zk * c[std::size_t(mirror(k, n))];
  for (auto& x : c) x *= 6.0;  // the gain (1 - z)(1 - 1/z)
  sum *= 6.0;
  c[0] = sum;
  for (index_t k = 1; k < n; ++k) c[std::size_t(k)] += z * c[std::size_t(k - 1)];
  c[std::size_t(n - 1)] = z / (z * z - 1) * (c[std::size_t(n - 1)] + z * c[std::size_t(n - 2)]);
  for (index_t k = n - 2; k >= 0; --k) c[std::size_t(k)] = z * (c[std::size_t(k + 1)] - c[std::size_t(k)]);
  return c;
}

inline volume coefficients(volume v, const extents& s) {
  for (int axis = 0; axis < 3; ++axis) {
    const index_t n = s[axis];
    for (index_t a = 0; a < s[(axis + 1) % 3]; ++a)
      for (index_t b = 0; b < s[(axis + 2) % 3]; ++b) {
        auto idx = [&](index_t t) {
          index_t p[3];
          p[axis] = t;
          p[(axis + 1) % 3] = a;
          p[(axis + 2) % 3] = b;
          return std::size_t(at(s, p[0], p[1], p[2]));
        };
        std::vector<double> line(static_cast<std::size_t>(n));
        for (index_t t = 0; t < n; ++t) line[std::size_t(t)] = v[idx(t)];
        line = line_coefficients(line);
        for (index_t t = 0; t < n; ++t) v[idx(t)] = line[std::size_t(t)];
      }
  }
  return v;
}

/// The cubic B-spline basis.
inline double beta3(double x) {
  x = std::abs(x);
  if (x < 1) return 2.0 / 3.0 - x * x + x * x * x / 2;
  if (x < 2) return (2 - x) * (2 - x) * (2 - x) / 6;
  return 0;
}

/// The volume's value at p: off the volume (by more than 1e-3 voxels) `fill`; else the trilinear
/// value or the spline sum over the 4 x 4 x 4 neighbours of coefficients c (mirrored).
inline double sample(const volume& v, const volume& c, const extents& s, const double p[3], bool cubic, double fill) {
  for (int a = 0; a < 3; ++a)
    if (!(p[a] >= -1e-3 && p[a] <= double(s[a] - 1) + 1e-3)) return fill;
  double total = 0;
  if (!cubic) {
    const index_t f0 = index_t(std::floor(p[0])), f1 = index_t(std::floor(p[1])), f2 = index_t(std::floor(p[2]));
    for (int d0 = 0; d0 < 2; ++d0)
      for (int d1 = 0; d1 < 2; ++d1)
        for (int d2 = 0; d2 < 2; ++d2) {
          const double w = (1 - std::abs(p[0] - double(f0 + d0))) * (1 - std::abs(p[1] - double(f1 + d1))) *
                           (1 - std::abs(p[2] - double(f2 + d2)));
          if (w <= 0) continue;
          const index_t i = std::clamp<index_t>(f0 + d0, 0, s[0] - 1), j = std::clamp<index_t>(f1 + d1, 0, s[1] - 1),
                        k = std::clamp<index_t>(f2 + d2, 0, s[2] - 1);
          total += w * v[std::size_t(at(s, i, j, k))];
        }
    return total;
  }
  const index_t f0 = index_t(std::floor(p[0])), f1 = index_t(std::floor(p[1])), f2 = index_t(std::floor(p[2]));
  for (index_t i = f0 - 1; i <= f0 + 2; ++i)
    for (index_t j = f1 - 1; j <= f1 + 2; ++j)
      for (index_t k = f2 - 1; k <= f2 + 2; ++k)
        total += beta3(p[0] - double(i)) * beta3(p[1] - double(j)) * beta3(p[2] - double(k)) *
                 c[std::size_t(at(s, mirror(i, s[0]), mirror(j, s[1]), mirror(k, s[2])))];
  return total;
}

/// The reference transform: out(o) = v(R^T (o - c' - t) + c), c = n // 2 unless given. Cubic
/// prefilters (templates) or, with prefilter false, takes the values as coefficients (FLC's masks).
inline volume transformed(const volume& v, const extents& s, const extents& out_shape, const match::matrix3& r,
                          const match::vec3& t, bool cubic, double fill = 0, const match::vec3* center = nullptr,
                          bool prefilter = true) {
  const volume c = !cubic ? volume{} : prefilter ? coefficients(v, s) : v;
  volume out(std::size_t(out_shape.numel()));
  match::vec3 cin{double(s[0] / 2), double(s[1] / 2), double(s[2] / 2)};
  if (center) cin = *center;
  for (index_t i = 0; i < out_shape[0]; ++i)
    for (index_t j = 0; j < out_shape[1]; ++j)
      for (index_t k = 0; k < out_shape[2]; ++k) {
        const double o[3] = {double(i), double(j), double(k)};
        double q[3], p[3];
        for (int a = 0; a < 3; ++a) q[a] = o[a] - (cin[a] + double(out_shape[a] / 2 - s[a] / 2)) - t[a];
        for (int a = 0; a < 3; ++a) p[a] = r[0][a] * q[0] + r[1][a] * q[1] + r[2][a] * q[2] + cin[a];
        out[std::size_t(at(out_shape, i, j, k))] = sample(v, c, s, p, cubic, fill);
      }
  return out;
}

inline fusor::array<float, B> device_volume(const volume& v, const extents& s) {
  std::vector<float> f(v.begin(), v.end());
  return test::on<B>(f, s);
}

inline double max_abs_diff(const std::vector<float>& a, const volume& b) {
  REQUIRE(a.size() == b.size());
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(double(a[i]) - b[i]));
  return worst;
}

inline volume random_volume(const extents& s, std::uint64_t seed) {
  const auto f = test::values<float>(s.numel(), -1.0, 1.0, seed);
  return volume(f.begin(), f.end());
}

inline match::matrix3 rz90() { return {{{0, -1, 0}, {1, 0, 0}, {0, 0, 1}}}; }

TEST_CASE("match: bspline coefficients interpolate every voxel (mirror boundary)") {
  for (const extents& s : {extents{1, 1, 1}, extents{1, 2, 3}, extents{2, 1, 40}, extents{5, 7, 9}, extents{3, 17, 33},
                          extents{4, 16, 31}}) {
    CAPTURE(fusor::to_string(s));
    const volume v = random_volume(s, 3 + std::uint64_t(s.numel()));
    const auto c = host_values(match::bspline_coefficients(device_volume(v, s)));
    // against Unser's recursion
    CHECK(max_abs_diff(c, coefficients(v, s)) < 2e-5);
    // and the defining property: (1/6, 4/6, 1/6) along each axis, mirrored, gives back v
    double worst = 0;
    for (index_t i = 0; i < s[0]; ++i)
      for (index_t j = 0; j < s[1]; ++j)
        for (index_t k = 0; k < s[2]; ++k) {
          double total = 0;
          for (index_t a = -1; a <= 1; ++a)
            for (index_t b = -1; b <= 1; ++b)
              for (index_t d = -1; d <= 1; ++d)
                total += (a ? 1.0 : 4.0) * (b ? 1.0 : 4.0) * (d ? 1.0 : 4.0) / 216.0 *
                         double(c[std::size_t(at(s, mirror(i + a, s[0]), mirror(j + b, s[1]), mirror(k + d, s[2])))]);
          worst = std::max(worst, std::abs(total - v[std::size_t(at(s, i, j, k))]));
        }
    CHECK(worst < 1e-5);
  }
  CHECK_THROWS_AS(match::bspline_coefficients(fusor::array<float, B>(extents{4, 4})), fusor::shape_error);
}

TEST_CASE("match: rigid_transform against a double reference, both interpolations") {
  const match::matrix3 r = match::to_matrix(match::from_euler({31, 47, -112}, match::euler_convention::zyz_intrinsic));
  for (const extents& s : {extents{9, 9, 9}, extents{8, 10, 12}, extents{3, 17, 6}, extents{1, 5, 33}}) {
    const volume v = random_volume(s, std::uint64_t(s.numel()));
    const auto dv = device_volume(v, s);
    for (const bool cubic : {false, true}) {
      CAPTURE(fusor::to_string(s));
      CAPTURE(cubic);
      match::transform_options o;
      o.method = cubic ? match::interpolation::cubic : match::interpolation::linear;
      const match::vec3 t{0.3, -1.25, 0.5};
      CHECK(max_abs_diff(host_values(match::rigid_transform(dv, r, t, o)), transformed(v, s, s, r, t, cubic)) < 2e-4);
      // the identity gives the volume back (cubic: through the prefilter and the spline)
      const match::matrix3 id{{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};
      CHECK(max_abs_diff(host_values(match::rigid_transform(dv, id, {}, o)), v) < (cubic ? 2e-5 : 1e-7));
      // a given centre and a fill value
      o.center = match::vec3{1.5, 2.0, 0.25};
      o.fill = -3.0f;
      CHECK(max_abs_diff(host_values(match::rigid_transform(dv, r, t, o)),
                         transformed(v, s, s, r, t, cubic, -3.0, &*o.center)) < 2e-4);
    }
  }
}

TEST_CASE("match: rigid_transform permutes voxels exactly for quarter turns and shifts by whole voxels") {
  const extents s{7, 7, 5};  // odd: the centre (3, 3, 2) maps the grid onto itself
  const volume v = random_volume(s, 11);
  const auto dv = device_volume(v, s);
  for (const auto m : {match::interpolation::linear, match::interpolation::cubic}) {
    match::transform_options o;
    o.method = m;
    // Rz(90): out[i][j][k] = v[j][2c - i][k]
    const auto rotated = host_values(match::rigid_transform(dv, rz90(), {}, o));
    double worst = 0;
    for (index_t i = 0; i < 7; ++i)
      for (index_t j = 0; j < 7; ++j)
        for (index_t k = 0; k < 5; ++k)
          worst = std::max(worst, std::abs(double(rotated[std::size_t(at(s, i, j, k))]) - v[std::size_t(at(s, j, 6 - i, k))]));
    CHECK(worst < (m == match::interpolation::linear ? 1e-6 : 2e-5));
    // four quarter turns compose to the identity; a half turn twice likewise
    auto a = dv.copy();
    for (int q = 0; q < 4; ++q) a = match::rigid_transform(a, rz90(), {}, o);
    CHECK(max_abs_diff(host_values(a), v) < 1e-4);
    // a whole-voxel shift moves values and exposes the fill
    o.fill = 7.0f;
    const auto shifted = host_values(match::rigid_transform(dv, match::matrix3{{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}}, {1, -2, 0}, o));
    double off = 0;
    for (index_t i = 0; i < 7; ++i)
      for (index_t j = 0; j < 7; ++j)
        for (index_t k = 0; k < 5; ++k) {
          const index_t si = i - 1, sj = j + 2;
          const double want = si >= 0 && sj < 7 ? v[std::size_t(at(s, si, sj, k))] : 7.0;
          off = std::max(off, std::abs(double(shifted[std::size_t(at(s, i, j, k))]) - want));
        }
    CHECK(off < (m == match::interpolation::linear ? 1e-6 : 2e-5));
  }
}

TEST_CASE("match: a rotated Gaussian against its closed form") {
  // an anisotropic Gaussian centred off the rotation centre, rotated and moved: the cubic spline
  // follows it closely, trilinear loosely
  const extents s{32, 33, 31};
  const double c[3] = {16, 16, 15}, mu[3] = {14.0, 18.5, 15.5}, sg[3] = {3.0, 2.2, 4.0};
  auto g = [&](const double p[3]) {
    double e = 0;
    for (int a = 0; a < 3; ++a) e += (p[a] - mu[a]) * (p[a] - mu[a]) / (2 * sg[a] * sg[a]);
    return std::exp(-e);
  };
  volume v(std::size_t(s.numel()));
  for (index_t i = 0; i < s[0]; ++i)
    for (index_t j = 0; j < s[1]; ++j)
      for (index_t k = 0; k < s[2]; ++k) {
        const double p[3] = {double(i), double(j), double(k)};
        v[std::size_t(at(s, i, j, k))] = g(p);
      }
  const match::matrix3 r = match::to_matrix(match::axis_angle({1, 2, -0.5}, 57));
  const match::vec3 t{1.5, -0.75, 2.0};
  const auto dv = device_volume(v, s);
  for (const bool cubic : {true, false}) {
    match::transform_options o;
    o.method = cubic ? match::interpolation::cubic : match::interpolation::linear;
    const auto out = host_values(match::rigid_transform(dv, r, t, o));
    double worst = 0;
    for (index_t i = 0; i < s[0]; ++i)
      for (index_t j = 0; j < s[1]; ++j)
        for (index_t k = 0; k < s[2]; ++k) {
          // the point p lands at R (p - c) + c + t, so output voxel o shows g at R^T (o - c - t) + c
          const double q[3] = {double(i) - c[0] - t[0], double(j) - c[1] - t[1], double(k) - c[2] - t[2]};
          double p[3];
          for (int a = 0; a < 3; ++a) p[a] = r[0][a] * q[0] + r[1][a] * q[1] + r[2][a] * q[2] + c[a];
          worst = std::max(worst, std::abs(double(out[std::size_t(at(s, i, j, k))]) - g(p)));
        }
    CAPTURE(cubic);
    CHECK(worst < (cubic ? 4e-3 : 5e-2));  // measured 0.0011 and 0.037
    const std::string note = std::string(cubic ? "cubic" : "trilinear") + " worst error on a rotated Gaussian (peak 1): " +
                             std::to_string(worst);
    MESSAGE(note);
  }
}

TEST_CASE("match: rigid_transform into another shape, prefiltered input, bad input") {
  const extents s{5, 6, 5}, big{9, 9, 10};
  const volume v = random_volume(s, 5);
  const auto dv = device_volume(v, s);
  const match::matrix3 r = match::to_matrix(match::from_euler({10, 80, 33}, match::euler_convention::zxz_intrinsic));
  for (const bool cubic : {false, true}) {
    match::transform_options o;
    o.method = cubic ? match::interpolation::cubic : match::interpolation::linear;
    fusor::array<float, B> out(big);
    match::rigid_transform(dv, r, {0.5, 0, -1}, out, o);
    CHECK(max_abs_diff(host_values(out), transformed(v, s, big, r, {0.5, 0, -1}, cubic)) < 2e-4);
    fusor::array<float, B> small(extents{3, 4, 3});
    match::rigid_transform(dv, r, {}, small, o);
    CHECK(max_abs_diff(host_values(small), transformed(v, s, extents{3, 4, 3}, r, {}, cubic)) < 2e-4);
  }
  // coefficients computed once give the same bits as computing them per call
  const auto coef = match::bspline_coefficients(dv);
  match::transform_options pre;
  pre.prefiltered = true;
  CHECK(host_values(match::rigid_transform(coef, r, {}, pre)) == host_values(match::rigid_transform(dv, r)));
  // quaternion overload
  CHECK(host_values(match::rigid_transform(dv, match::to_quaternion(r))) == host_values(match::rigid_transform(dv, r)));
  // empty output, empty input
  fusor::array<float, B> none(extents{0, 3, 3});
  match::rigid_transform(dv, r, {}, none);
  CHECK(match::rigid_transform(fusor::array<float, B>(extents{0, 2, 2}), r).size() == 0);
  fusor::array<float, B> some(extents{2, 2, 2});
  CHECK_THROWS_AS(match::rigid_transform(fusor::array<float, B>(extents{0, 2, 2}), r, {}, some), fusor::shape_error);
  // bad input
  CHECK_THROWS_AS(match::rigid_transform(fusor::array<float, B>(extents{4, 4}), r), fusor::shape_error);
  fusor::array<float, B> flat(extents{4, 4});
  CHECK_THROWS_AS(match::rigid_transform(dv, r, {}, flat), fusor::shape_error);
  const match::matrix3 scaled{{{2, 0, 0}, {0, 1, 0}, {0, 0, 1}}}, mirrored{{{-1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};
  CHECK_THROWS_WITH_AS(match::rigid_transform(dv, scaled), doctest::Contains("expected a rotation matrix"), fusor::value_error);
  CHECK_THROWS_AS(match::rigid_transform(dv, mirrored), fusor::value_error);
  CHECK_THROWS_AS(match::rigid_transform(dv, r, {0, std::nan(""), 0}), fusor::value_error);
  match::transform_options bad_centre;
  bad_centre.center = match::vec3{0, 0, INFINITY};
  CHECK_THROWS_AS(match::rigid_transform(dv, r, {}, bad_centre), fusor::value_error);
  auto same = dv.copy();
  CHECK_THROWS_WITH_AS(match::rigid_transform(same, r, {}, same), doctest::Contains("shares its buffer"), fusor::value_error);
  CHECK(match::volume_center(extents{4, 5, 1}) == match::vec3{2, 2, 0});
}

// ---- masks ------------------------------------------------------------------------------------

/// The mask's definition at every voxel, by plain loops: `inside(p)` in the shape's frame and
/// `dist(p)` outside it.
template <class Inside, class Dist>
volume mask_reference(const extents& s, const match::vec3& c, const match::matrix3& r, const match::mask_edge& e,
                      Inside inside, Dist dist) {
  volume out(std::size_t(s.numel()));
  for (index_t i = 0; i < s[0]; ++i)
    for (index_t j = 0; j < s[1]; ++j)
      for (index_t k = 0; k < s[2]; ++k) {
        const double x[3] = {double(i) - c[0], double(j) - c[1], double(k) - c[2]};
        double p[3];
        for (int a = 0; a < 3; ++a) p[a] = r[0][a] * x[0] + r[1][a] * x[1] + r[2][a] * x[2];
        double value = 1;
        if (!inside(p)) {
          const double d = dist(p);
          using K = match::mask_edge::kind;
          value = e.profile == K::hard       ? 0.0
                  : e.profile == K::gaussian ? (d > e.cutoff * e.width ? 0.0 : std::exp(-d * d / (2 * e.width * e.width)))
                                             : (d >= e.width ? 0.0 : 0.5 + 0.5 * std::cos(std::numbers::pi * d / e.width));
        }
        out[std::size_t(at(s, i, j, k))] = value;
      }
  return out;
}

TEST_CASE("match: masks against their definitions, every edge, oriented") {
  const extents s{13, 16, 11};
  const match::matrix3 id{{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};
  const match::matrix3 r = match::to_matrix(match::axis_angle({0.3, -1, 2}, 38));
  for (const auto& edge : {match::mask_edge::hard(), match::mask_edge::gaussian(1.5), match::mask_edge::gaussian(2, 1.5),
                           match::mask_edge::cosine(3)}) {
    for (const auto& orient : {id, r}) {
      match::mask_options o;
      o.edge = edge;
      o.orientation = orient;
      const match::vec3 c = match::volume_center(s);
      CAPTURE(int(edge.profile));
      auto norm = [](const double p[3]) { return std::sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]); };
      // sphere (orientation does not change it)
      const double rad = 4.5;
      CHECK(max_abs_diff(host_values(match::sphere_mask<B>(s, rad, o)),
                         mask_reference(s, c, id, edge, [&](const double* p) { return p[0] * p[0] + p[1] * p[1] + p[2] * p[2] <= rad * rad; },
                                        [&](const double* p) { return norm(p) - rad; })) < 1e-6);
      // ellipsoid: distance along the ray from the centre
      const match::vec3 ax{5, 3, 2.5};
      auto e_r = [&](const double* p) {
        return std::sqrt(p[0] * p[0] / (ax[0] * ax[0]) + p[1] * p[1] / (ax[1] * ax[1]) + p[2] * p[2] / (ax[2] * ax[2]));
      };
      CHECK(max_abs_diff(host_values(match::ellipsoid_mask<B>(s, ax, o)),
                         mask_reference(s, c, orient, edge, [&](const double* p) { return e_r(p) <= 1; },
                                        [&](const double* p) { return norm(p) * (1 - 1 / e_r(p)); })) < 1e-6);
      // box
      const match::vec3 h{3, 2, 4};
      CHECK(max_abs_diff(host_values(match::box_mask<B>(s, h, o)),
                         mask_reference(s, c, orient, edge,
                                        [&](const double* p) {
                                          return std::abs(p[0]) <= h[0] && std::abs(p[1]) <= h[1] && std::abs(p[2]) <= h[2];
                                        },
                                        [&](const double* p) {
                                          double d = 0;
                                          for (int a = 0; a < 3; ++a) d += std::pow(std::max(std::abs(p[a]) - h[a], 0.0), 2);
                                          return std::sqrt(d);
                                        })) < 1e-6);
      // hollow tube along axis 2
      const double ri = 2, ro = 5, height = 6;
      CHECK(max_abs_diff(host_values(match::tube_mask<B>(s, ri, ro, height, o)),
                         mask_reference(s, c, orient, edge,
                                        [&](const double* p) {
                                          const double rho = std::hypot(p[0], p[1]);
                                          return rho >= ri && rho <= ro && std::abs(p[2]) <= height / 2;
                                        },
                                        [&](const double* p) {
                                          const double rho = std::hypot(p[0], p[1]);
                                          const double radial = std::max({rho - ro, ri - rho, 0.0});
                                          const double axial = std::max(std::abs(p[2]) - height / 2, 0.0);
                                          return std::hypot(radial, axial);
                                        })) < 1e-6);
    }
  }
}

TEST_CASE("match: mask geometry, centres and bad input") {
  // a hard sphere of radius 10 holds about 4/3 pi r^3 voxels
  const auto big = host_values(match::sphere_mask<B>(extents{25, 25, 25}, 10.0));
  double count = 0;
  for (float x : big) count += x;
  CHECK(std::abs(count / (4.0 / 3.0 * std::numbers::pi * 1000.0) - 1) < 0.01);
  // an ellipsoid with equal radii is the sphere; a box of half-width 0 is its centre voxel
  const extents s{8, 9, 10};
  match::mask_options off;
  off.center = match::vec3{2.5, 6, 3};
  off.edge = match::mask_edge::cosine(2);
  CHECK(host_values(match::ellipsoid_mask<B>(s, {3, 3, 3}, off)) == host_values(match::sphere_mask<B>(s, 3, off)));
  const auto dot = host_values(match::box_mask<B>(s, {0, 0, 0}));
  CHECK(std::count(dot.begin(), dot.end(), 1.0f) == 1);
  CHECK(dot[std::size_t(at(s, 4, 4, 5))] == 1.0f);
  // a quarter turn about axis 2 swaps a box's half-widths along 0 and 1
  match::mask_options turned;
  turned.orientation = rz90();
  CHECK(host_values(match::box_mask<B>(s, {1, 3, 2}, turned)) == host_values(match::box_mask<B>(s, {3, 1, 2})));
  // size-1 and empty volumes
  CHECK(host_values(match::sphere_mask<B>(extents{1, 1, 1}, 0.5)) == std::vector<float>{1.0f});
  CHECK(match::tube_mask<B>(extents{0, 4, 4}, 0, 1, 1).size() == 0);
  // bad input
  CHECK_THROWS_WITH_AS(match::sphere_mask<B>(s, -1), doctest::Contains("radius > 0"), fusor::value_error);
  CHECK_THROWS_AS(match::sphere_mask<B>(extents{4, 4}, 1), fusor::shape_error);
  CHECK_THROWS_AS(match::ellipsoid_mask<B>(s, {1, 0, 1}), fusor::value_error);
  CHECK_THROWS_AS(match::box_mask<B>(s, {1, NAN, 1}), fusor::value_error);
  CHECK_THROWS_WITH_AS(match::tube_mask<B>(s, 4, 3, 2), doctest::Contains("inner radius <= outer radius"), fusor::value_error);
  match::mask_options soft;
  soft.edge = match::mask_edge::gaussian(0);
  CHECK_THROWS_WITH_AS(match::sphere_mask<B>(s, 2, soft), doctest::Contains("width > 0"), fusor::value_error);
  soft.edge = match::mask_edge::gaussian(1, -1);
  CHECK_THROWS_AS(match::sphere_mask<B>(s, 2, soft), fusor::value_error);
  match::mask_options skew;
  skew.orientation = {{{1, 0.5, 0}, {0, 1, 0}, {0, 0, 1}}};
  CHECK_THROWS_AS(match::sphere_mask<B>(s, 2, skew), fusor::value_error);
}

TEST_CASE("match: normalize_under_mask as pyTME's normalize_template") {
  const extents s{6, 7, 9};
  const volume v = random_volume(s, 21);
  match::mask_options o;
  o.edge = match::mask_edge::gaussian(1.0);
  const auto mask = match::sphere_mask<B>(s, 2.5, o);
  const auto w = host_values(mask);
  const auto out = host_values(match::normalize_under_mask(device_volume(v, s), mask));
  double n = 0, m = 0, q = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    n += w[i];
    m += w[i] * v[i];
    q += w[i] * v[i] * v[i];
  }
  m /= n;
  const double sd = std::sqrt(q / n - m * m);
  double worst = 0;
  for (std::size_t i = 0; i < v.size(); ++i) worst = std::max(worst, std::abs(double(out[i]) - (v[i] - m) / sd * w[i]));
  CHECK(worst < 1e-5);
  // a hard mask: zero mean and unit variance over its voxels
  const auto hard = match::box_mask<B>(s, {2, 2, 3});
  const auto z = host_values(match::normalize_under_mask(device_volume(v, s), hard));
  const auto hw = host_values(hard);
  double s1 = 0, s2 = 0, cnt = 0;
  for (std::size_t i = 0; i < z.size(); ++i) {
    s1 += z[i];
    s2 += double(z[i]) * z[i];
    cnt += hw[i];
    if (hw[i] == 0) CHECK(z[i] == 0.0f);
  }
  CHECK(std::abs(s1) < 1e-4);
  CHECK(std::abs(s2 / cnt - 1) < 1e-5);
  // bad input
  CHECK_THROWS_AS(match::normalize_under_mask(device_volume(v, s), match::sphere_mask<B>(extents{6, 7, 8}, 2)), fusor::shape_error);
  const fusor::array<float, B> zero = fusor::zeros<float, B>(s);
  CHECK_THROWS_WITH_AS(match::normalize_under_mask(device_volume(v, s), zero), doctest::Contains("positive sum"), fusor::value_error);
  const fusor::array<float, B> flat = fusor::full<float, B>(s, 2.0f);
  CHECK_THROWS_WITH_AS(match::normalize_under_mask(flat, hard), doctest::Contains("constant under the mask"), fusor::value_error);
}

// ---- the scan ---------------------------------------------------------------------------------

/// The volume rotated about its centre (or `center`) in double (see transformed).
inline volume rotated(const volume& v, const extents& s, const match::matrix3& r, bool cubic, bool prefilter,
                      const match::vec3* center = nullptr) {
  return transformed(v, s, s, r, {}, cubic, 0, center, prefilter);
}

inline volume dft_filtered(const volume& v, const extents& s, const match::fourier_filter& flt);  // below

/// CC(f, g)(x) = sum_y f(x + y - c) g(y), c = M // 2, f zero outside (periodic: f repeated): the
/// direct sum.
inline volume direct_cc(const volume& f, const extents& n, const volume& g, const extents& m, bool periodic = false) {
  volume out(std::size_t(n.numel()), 0.0);
  for (index_t x0 = 0; x0 < n[0]; ++x0)
    for (index_t x1 = 0; x1 < n[1]; ++x1)
      for (index_t x2 = 0; x2 < n[2]; ++x2) {
        double total = 0;
        for (index_t y0 = 0; y0 < m[0]; ++y0)
          for (index_t y1 = 0; y1 < m[1]; ++y1)
            for (index_t y2 = 0; y2 < m[2]; ++y2) {
              index_t t0 = x0 + y0 - m[0] / 2, t1 = x1 + y1 - m[1] / 2, t2 = x2 + y2 - m[2] / 2;
              if (periodic) {
                t0 = (t0 + n[0]) % n[0];
                t1 = (t1 + n[1]) % n[1];
                t2 = (t2 + n[2]) % n[2];
              }
              if (t0 < 0 || t0 >= n[0] || t1 < 0 || t1 >= n[1] || t2 < 0 || t2 >= n[2]) continue;
              total += f[std::size_t(at(n, t0, t1, t2))] * g[std::size_t(at(m, y0, y1, y2))];
            }
        out[std::size_t(at(n, x0, x1, x2))] = total;
      }
  return out;
}

inline volume laplacian(const volume& v, const extents& s) {
  volume out(v.size());
  for (index_t i = 0; i < s[0]; ++i)
    for (index_t j = 0; j < s[1]; ++j)
      for (index_t k = 0; k < s[2]; ++k) {
        auto w = [&](index_t a, index_t b, index_t c) {
          return v[std::size_t(at(s, (a + s[0]) % s[0], (b + s[1]) % s[1], (c + s[2]) % s[2]))];
        };
        out[std::size_t(at(s, i, j, k))] = w(i - 1, j, k) + w(i + 1, j, k) + w(i, j - 1, k) + w(i, j + 1, k) +
                                           w(i, j, k - 1) + w(i, j, k + 1) - 6 * w(i, j, k);
      }
  return out;
}

inline volume standardise(volume v) {
  double m = 0, q = 0;
  for (double x : v) m += x;
  m /= double(v.size());
  for (double x : v) q += (x - m) * (x - m);
  const double sd = std::sqrt(q / double(v.size()));
  for (double& x : v) x = (x - m) / sd;
  return v;
}

/// Every rotation's score map by the formulas of scores.hpp, in double, from direct sums; each
/// rotated template filtered in its box by a naive DFT when a template filter is given.
inline std::vector<volume> reference_scores(match::score kind, const volume& f0, const extents& n, const volume& g0,
                                            const volume& mask, const extents& m, const std::vector<match::quaternion>& rots,
                                            bool cubic, const match::fourier_filter* template_filter = nullptr,
                                            const volume* target_mask = nullptr, bool periodic = false,
                                            const match::vec3* center = nullptr) {
  const auto direct_cc = [periodic](const volume& a, const extents& na, const volume& b, const extents& nb) {
    return matchbody::direct_cc(a, na, b, nb, periodic);
  };
  using S = match::score;
  volume f = kind == S::lcc ? laplacian(f0, n) : kind == S::cam ? standardise(f0) : f0;
  const volume t = target_mask ? *target_mask : volume(f0.size(), 1.0);  // MCC's t: 1 on the target when not given
  if (kind == S::mcc)
    for (std::size_t i = 0; i < f.size(); ++i) f[i] *= t[i];
  volume g = kind == S::lcc ? laplacian(g0, m) : kind == S::cam ? standardise(g0) : g0;
  volume f2(f.size());
  for (std::size_t i = 0; i < f.size(); ++i) f2[i] = f[i] * f[i];
  double nm = 0;
  for (double w : mask) nm += w;
  const double eps = double(std::numeric_limits<float>::epsilon());
  std::vector<volume> out;
  volume numerator, inv;
  if (kind == S::corr || kind == S::cam || kind == S::flc_spherical_mask) {
    const volume w1 = direct_cc(f, n, mask, m), w2 = direct_cc(f2, n, mask, m);
    numerator.assign(w1.size(), 0.0);
    inv.assign(w1.size(), 0.0);
    double mean = 0, ssd = 0;
    for (std::size_t i = 0; i < g.size(); ++i) mean += g[i] * mask[i];
    mean /= nm;
    for (std::size_t i = 0; i < g.size(); ++i) ssd += (g[i] - mean) * (g[i] - mean) * mask[i];
    for (std::size_t i = 0; i < w1.size(); ++i) {
      if (kind == S::flc_spherical_mask) {
        double sigma = std::sqrt(std::max(w2[i] / nm - (w1[i] / nm) * (w1[i] / nm), 0.0));
        if (sigma < eps) sigma = 1;
        inv[i] = 1 / (sigma * nm);
      } else {
        numerator[i] = w1[i] * mean;
        const double den = std::sqrt(std::max((w2[i] - w1[i] * w1[i] / double(g.size())) * ssd, 0.0));
        inv[i] = den > eps ? 1 / den : 0;
      }
    }
    if (kind != S::flc_spherical_mask)
      for (std::size_t i = 0; i < g.size(); ++i) g[i] *= mask[i];
  }
  for (const auto& q : rots) {
    const match::matrix3 r = match::to_matrix(q);
    volume gr = rotated(g, m, r, cubic, true, center), w = mask;
    if (template_filter) gr = dft_filtered(gr, m, *template_filter);
    if (kind == S::flc || kind == S::mcc) w = rotated(mask, m, r, cubic, false, center);
    double nw = 0;
    for (double x : w) nw += x;
    if (kind == S::flc || kind == S::flc_spherical_mask || kind == S::mcc) {
      double mean = 0, sq = 0;
      for (std::size_t i = 0; i < gr.size(); ++i) {
        mean += gr[i] * w[i];
        sq += gr[i] * gr[i] * w[i];
      }
      mean /= nw;
      const double sd = std::sqrt(sq / nw - mean * mean);
      for (std::size_t i = 0; i < gr.size(); ++i) gr[i] = (gr[i] - mean) / sd * w[i];
    }
    volume sc = direct_cc(f, n, gr, m);
    if (kind == S::mcc) {
      // Padfield's six correlations, then the formula of scores.hpp
      volume gr2(gr.size());
      for (std::size_t i = 0; i < gr.size(); ++i) gr2[i] = gr[i] * gr[i];
      const volume d = direct_cc(f, n, w, m), e = direct_cc(f2, n, w, m), b = direct_cc(t, n, gr, m),
                   o = direct_cc(t, n, w, m), h = direct_cc(t, n, gr2, m);
      for (std::size_t i = 0; i < sc.size(); ++i) {
        const double ov = std::max(o[i], eps);
        const double fixed = e[i] - d[i] * d[i] / ov, moving = h[i] - b[i] * b[i] / ov;
        if (ov < 0.3 * nw || !(fixed > 1e3 * eps * e[i]) || !(moving > 1e3 * eps * h[i])) {
          sc[i] = 0;
          continue;
        }
        sc[i] = std::clamp((sc[i] - d[i] * b[i] / ov) / std::sqrt(fixed * moving), -1.0, 1.0);
      }
    } else if (kind == S::flc) {
      const volume w1 = direct_cc(f, n, w, m), w2 = direct_cc(f2, n, w, m);
      for (std::size_t i = 0; i < sc.size(); ++i) {
        double sigma = std::sqrt(std::max(w2[i] / nw - (w1[i] / nw) * (w1[i] / nw), 0.0));
        if (sigma < eps) sigma = 1;
        sc[i] /= sigma * nw;
      }
    } else if (!inv.empty()) {
      for (std::size_t i = 0; i < sc.size(); ++i) sc[i] = (sc[i] - numerator[i]) * inv[i];
    }
    out.push_back(std::move(sc));
  }
  return out;
}

/// How far a scan's best-score map lies from the best of the reference's maps (the largest
/// difference), and the largest reference score it is measured against.
inline std::pair<double, double> best_map_error(const std::vector<float>& best, const std::vector<volume>& ref) {
  double worst = 0, scale = 0;
  for (std::size_t i = 0; i < best.size(); ++i) {
    double top = -INFINITY;
    for (const auto& r : ref) top = std::max(top, r[i]);
    scale = std::max(scale, std::abs(top));
    worst = std::max(worst, std::abs(double(best[i]) - top));
  }
  return {worst, scale};
}

inline std::vector<match::quaternion> few_rotations() {
  return {match::quaternion{}, match::axis_angle({0, 0, 1}, 90), match::axis_angle({1, -0.5, 0.25}, 37),
          match::from_euler({-20, 100, 65}, match::euler_convention::zyz_intrinsic), match::axis_angle({0, 1, 1}, 180)};
}

TEST_CASE("match scan: every score against direct correlation sums in double") {
  const extents n{11, 10, 12}, m{5, 4, 5};
  const volume f = random_volume(n, 31);
  volume g = random_volume(m, 32);
  match::mask_options soft;
  soft.edge = match::mask_edge::gaussian(1.0);
  const auto dmask = match::sphere_mask<B>(m, 1.6, soft);
  const auto hmask = host_values(dmask);
  const volume mask(hmask.begin(), hmask.end());
  const auto rots = few_rotations();
  const auto df = device_volume(f, n), dg = device_volume(g, m);
  using S = match::score;
  // MCC's target mask: soft, zero on a slab, so that overlaps vary
  volume tmask(f.size());
  for (index_t i = 0; i < n[0]; ++i)
    for (index_t j = 0; j < n[1]; ++j)
      for (index_t k = 0; k < n[2]; ++k)
        tmask[std::size_t(at(n, i, j, k))] = i < 3 ? 0.0 : std::min(1.0, 0.3 + 0.1 * double(j + k));
  const auto dtmask = device_volume(tmask, n);
  struct score_case {
    S kind;
    bool with_target_mask;  // MCC twice: without a target mask and with one
  };
  for (const score_case sc : {score_case{S::cc, false}, score_case{S::lcc, false}, score_case{S::corr, false},
                              score_case{S::cam, false}, score_case{S::flc_spherical_mask, false}, score_case{S::flc, false},
                              score_case{S::mcc, false}, score_case{S::mcc, true}}) {
    const S kind = sc.kind;
    const bool with_target_mask = sc.with_target_mask;
    // zeros beyond the target; the target repeated (wrap), whole and in tiles
    struct edge_case {
      match::edge_mode edges;
      extents tile, grid;
      match::grid_choice choice = match::grid_choice::fast;
    };
    using G = match::grid_choice;
    for (const bool cubic : {true, false})
      for (const edge_case& ec : {// at least n + m // 2 = 13, 12, 14: the cheapest 7-smooth lengths by
                                  // fft::transform_cost (16 and 16 beat 14's factor 7 and 15's odd length)
                                  edge_case{match::edge_mode::zeros, {}, {16, 12, 16}},
                                  // the least: 13, 12, 14 as they are (13 a prime)
                                  edge_case{match::edge_mode::zeros, {}, {13, 12, 14}, G::target},
                                  // wrap: 10 and 12 the grid's own; 11, a prime, reads a periodic halo
                                  // on a grid of at least 11 + 5 - 1
                                  edge_case{match::edge_mode::wrap, {}, {16, 10, 12}},
                                  // the target's own grid, 11 included: the correlation's own wrap
                                  edge_case{match::edge_mode::wrap, {}, {11, 10, 12}, G::target},
                                  // tiles of 4, 5, 6 with halos: windows 8, 8, 10
                                  edge_case{match::edge_mode::wrap, {4, 5, 6}, {8, 8, 10}}}) {
      const bool periodic = ec.edges == match::edge_mode::wrap;
      if (periodic && !cubic) continue;  // the edges do not depend on the interpolation
      CAPTURE(match::to_string(kind));
      CAPTURE(with_target_mask);
      CAPTURE(cubic);
      CAPTURE(match::to_string(ec.edges));
      CAPTURE(fusor::to_string(ec.tile));
      CAPTURE(match::to_string(ec.choice));
      match::scan_options o;
      o.grid = ec.choice;
      o.method = cubic ? match::interpolation::cubic : match::interpolation::linear;
      o.mean_map = true;
      o.edges = ec.edges;
      o.tile = ec.tile;
      // both ways through the scan's passes: the backend's batch (cpu: rotations in pairs, one
      // complex transform pair each; 5 rotations leave a pair holding one) with and without the
      // statistics (the cpu's key pass over both rotations of a pair at once, or a key update per
      // rotation), and one rotation at a time with the statistics
      o.batch = cubic ? 0 : 1;
      o.statistics = !cubic || periodic;
      CAPTURE(o.batch);
      const auto res = with_target_mask ? match::scan(df, dg, dmask, rots, kind, o, dtmask) : match::scan(df, dg, dmask, rots, kind, o);
      CHECK(res.best_score.shape() == n);
      CHECK(res.fft_shape == ec.grid);
      if (ec.tile.size() == 0) CHECK(match::scan_fft_shape(n, m, ec.edges, ec.choice) == ec.grid);
      const auto ref = reference_scores(kind, f, n, g, mask, m, rots, cubic, nullptr, with_target_mask ? &tmask : nullptr, periodic);
      const auto best = host_values(res.best_score);
      const auto arg = host_values(res.best_rotation);
      const auto mean = host_values(res.mean_score);
      double scale = 0;
      for (const auto& r : ref)
        for (double x : r) scale = std::max(scale, std::abs(x));
      double worst = 0, worst_mean = 0, sum = 0, sum2 = 0;
      index_t decided = 0, agree = 0;
      for (const auto& r : ref)
        for (double x : r) {
          sum += x;
          sum2 += x * x;
        }
      for (std::size_t i = 0; i < best.size(); ++i) {
        double top = -INFINITY, second = -INFINITY, avg = 0;
        std::int32_t which = -1;
        for (std::size_t r = 0; r < ref.size(); ++r) {
          avg += ref[r][i] / double(ref.size());
          if (ref[r][i] > top) {
            second = top;
            top = ref[r][i];
            which = std::int32_t(r);
          } else if (ref[r][i] > second) {
            second = ref[r][i];
          }
        }
        worst = std::max(worst, std::abs(double(best[i]) - top));
        worst_mean = std::max(worst_mean, std::abs(double(mean[i]) - avg));
        if (top - second > 1e-3 * scale) {
          ++decided;
          agree += arg[i] == which;
        }
      }
      CHECK(worst <= 2e-5 * std::max(1.0, scale));
      CHECK(worst_mean <= 2e-5 * std::max(1.0, scale));
      CHECK(agree == decided);
      CHECK(decided > index_t(best.size()) / 2);
      if (o.statistics) {  // every score of every rotation, against the reference's
        const double count = double(n.numel()) * double(rots.size()), mu = sum / count;
        CHECK(res.statistics.count == n.numel() * std::int64_t(rots.size()));
        CHECK(std::abs(res.statistics.mean - mu) <= 2e-5 * std::max(1.0, scale));
        CHECK(std::abs(res.statistics.stddev - std::sqrt(std::max(0.0, sum2 / count - mu * mu))) <= 2e-5 * std::max(1.0, scale));
      }
    }
  }
}

TEST_CASE("match scan: the rotation centre, m // 2 or pyTME's (m - 1) / 2, against direct sums with even sides") {
  // a template with two even axes and an odd one: each centre's scan equals the direct sums of the
  // template rotated about that centre, and the two differ (on the odd axis the centres agree)
  const extents n{12, 11, 10}, m{6, 5, 4};
  const volume f = random_volume(n, 41), g = random_volume(m, 42);
  match::mask_options soft;
  soft.edge = match::mask_edge::gaussian(1.0);
  soft.center = match::index_center(m);  // centred on pyTME's centre: FLC rotates it too
  const auto dmask = match::sphere_mask<B>(m, 1.8, soft);
  const auto hmask = host_values(dmask);
  const volume mask(hmask.begin(), hmask.end());
  const auto rots = few_rotations();
  const auto df = device_volume(f, n), dg = device_volume(g, m);
  CHECK(match::index_center(m) == match::vec3{2.5, 2.0, 1.5});
  CHECK(match::volume_center(m) == match::vec3{3.0, 2.0, 2.0});
  using S = match::score;
  for (const S kind : {S::cc, S::flc}) {
    std::vector<std::vector<float>> maps;
    for (const bool pytme : {false, true}) {
      CAPTURE(match::to_string(kind));
      CAPTURE(pytme);
      match::scan_options o;
      if (pytme) o.rotation_center = match::index_center(m);
      const match::vec3 c = pytme ? match::index_center(m) : match::volume_center(m);
      const auto res = match::scan(df, dg, dmask, rots, kind, o);
      const auto ref = reference_scores(kind, f, n, g, mask, m, rots, true, nullptr, nullptr, false, &c);
      const auto best = host_values(res.best_score);
      const auto [worst, scale] = best_map_error(best, ref);
      CHECK(worst <= 2e-5 * std::max(1.0, scale));
      maps.push_back(best);
    }
    double apart = 0;
    for (std::size_t i = 0; i < maps[0].size(); ++i) apart = std::max(apart, std::abs(double(maps[0][i]) - maps[1][i]));
    CHECK(apart > 1e-2);  // half a voxel on two axes is not rounding
  }
  // the centre must be a point of the box, on every axis
  match::scan_options bad;
  for (const match::vec3& c : {match::vec3{-0.5, 2, 2}, match::vec3{3, 4.5, 2}, match::vec3{3, 2, NAN}}) {
    bad.rotation_center = c;
    CHECK_THROWS_WITH_AS(match::scan(df, dg, dmask, rots, S::cc, bad), doctest::Contains("rotation centre inside the template's box"),
                         fusor::value_error);
  }
  CHECK_THROWS_AS(match::index_center(extents{4, 4}), fusor::shape_error);
}

/// An asymmetric template of shape m (centre m // 2), so that every rotation looks different: an
/// ellipsoidal Gaussian exp(-(x^2/d0 + y^2/d1 + z^2/d2)) and a lobe of weight 0.6 at (lx, ly, 0),
/// exp(-|p - lobe|^2 / w).
inline volume blob_with_lobe(const extents& m, const std::array<double, 3>& d, double lx, double ly, double w) {
  volume g(std::size_t(m.numel()));
  for (index_t i = 0; i < m[0]; ++i)
    for (index_t j = 0; j < m[1]; ++j)
      for (index_t k = 0; k < m[2]; ++k) {
        const double x = double(i - m[0] / 2), y = double(j - m[1] / 2), z = double(k - m[2] / 2);
        g[std::size_t(at(m, i, j, k))] = std::exp(-(x * x / d[0] + y * y / d[1] + z * z / d[2])) +
                                         0.6 * std::exp(-((x - lx) * (x - lx) + (y - ly) * (y - ly) + z * z) / w);
      }
  return g;
}

/// Adds the template g (shape m), rotated by q (the reference's cubic B-spline), to f (shape n)
/// with its centre on voxel c.
inline void plant(volume& f, const extents& n, const volume& g, const extents& m, const match::quaternion& q,
                  const index_t (&c)[3]) {
  const volume gr = rotated(g, m, match::to_matrix(q), true, true);
  for (index_t i = 0; i < m[0]; ++i)
    for (index_t j = 0; j < m[1]; ++j)
      for (index_t l = 0; l < m[2]; ++l)
        f[std::size_t(at(n, c[0] + i - m[0] / 2, c[1] + j - m[1] / 2, c[2] + l - m[2] / 2))] += gr[std::size_t(at(m, i, j, l))];
}

/// The planted problem of the scan tests: an asymmetric template (an ellipsoidal blob and a side
/// lobe) planted three times in noise, turned by members of the uniform set of `step` degrees.
struct planted_problem {
  struct copy {
    std::size_t rotation;
    index_t c[3];
  };
  extents n{40, 36, 38}, m{11, 11, 11};
  volume g, f;
  std::vector<match::quaternion> rots;
  std::array<copy, 3> planted;
  explicit planted_problem(double step) : g(blob_with_lobe(m, {8, 3, 1.5}, 2.5, -2, 1.5)), f(random_volume(n, 41)),
                                          rots(match::uniform_rotations(step)) {
    planted = {copy{7, {12, 10, 14}}, copy{rots.size() / 2, {27, 25, 22}}, copy{rots.size() - 3, {11, 27, 29}}};
    for (double& x : f) x *= 0.05;
    for (const copy& p : planted) plant(f, n, g, m, rots[p.rotation], p.c);
  }
};

TEST_CASE("match scan: planted copies are found by every score at their centres with their rotations") {
  // the planted problem with a 60-degree set: every score puts its maxima on the planted centres
  // with the planted rotation
  const planted_problem pp(60.0);
  const auto& [n, m, g, f, rots, planted] = pp;
  using copy = planted_problem::copy;
  const auto mask = match::sphere_mask<B>(m, 5.0);
  using S = match::score;
  for (const auto kind : {S::cc, S::lcc, S::corr, S::cam, S::flc_spherical_mask, S::flc, S::mcc}) {
    CAPTURE(match::to_string(kind));
    const auto res = match::scan(device_volume(f, n), device_volume(g, m), mask, rots, kind);
    const auto best = host_values(res.best_score);
    const auto arg = host_values(res.best_rotation);
    for (const copy& p : planted) {
      // the maximum over the neighbourhood of the planted centre sits on it
      const std::size_t at_c = std::size_t(at(n, p.c[0], p.c[1], p.c[2]));
      float local = -INFINITY;
      for (index_t i = -3; i <= 3; ++i)
        for (index_t j = -3; j <= 3; ++j)
          for (index_t l = -3; l <= 3; ++l) local = std::max(local, best[std::size_t(at(n, p.c[0] + i, p.c[1] + j, p.c[2] + l))]);
      CHECK(best[at_c] == local);
      CHECK(arg[at_c] == std::int32_t(p.rotation));
      if (kind == S::flc || kind == S::flc_spherical_mask || kind == S::mcc) CHECK(best[at_c] > 0.9f);
    }
  }
}

TEST_CASE("match seeded scan: seeds find the planted copies with the whole scan's scores at a fraction of the rotations") {
  // three copies planted as in the test above; seeds a few voxels off each, with the planted
  // rotation's cone as their prior, and one at a corner of the target (its box cut by two faces,
  // one axis not searched). Every seeded voxel scores as the exhaustive scan does wherever the
  // exhaustive scan's best rotation is among the seed's; no seeded score beats the exhaustive one
  const planted_problem pp(30.0);
  const auto& [n, m, g, f, rots, planted] = pp;
  using copy = planted_problem::copy;
  const auto df = device_volume(f, n), dg = device_volume(g, m);
  const auto mask = match::sphere_mask<B>(m, 5.0);
  const double cone = 25;
  std::vector<match::seed> seeds;
  const index_t off[3][3] = {{1, -1, 2}, {-2, 0, 1}, {0, 2, -1}};
  for (int i = 0; i < 3; ++i) {
    const copy& p = planted[i];
    match::seed s;
    for (std::size_t a = 0; a < 3; ++a) s.position[a] = double(p.c[a] + off[i][a]) + (a == 0 ? 0.3 : 0.0);  // rounded
    s.radius = {3, 3, 3};
    s.rotations = match::rotations_in_cone(rots, match::rotate(rots[p.rotation], {0, 0, 1}), cone);
    seeds.push_back(s);
  }
  seeds.push_back({{1, 34, 0}, {2, 0, 3.5}, {}});  // every rotation; the box cut at x = 0 and z = 0, y not searched
  using S = match::score;
  for (const S kind : {S::flc_spherical_mask, S::flc}) {
    CAPTURE(match::to_string(kind));
    const auto whole = match::scan(df, dg, mask, rots, kind);
    const auto wb = host_values(whole.best_score);
    const auto wr = host_values(whole.best_rotation);
    match::scan_options o;
    std::size_t last = 0, told = 0;
    o.progress = [&](std::size_t done, std::size_t total) {
      last = done;
      told = total;
      return true;
    };
    const auto res = match::seeded_scan(df, dg, mask, rots, seeds, kind, o);
    const auto sb = host_values(res.maps.best_score);
    const auto sr = host_values(res.maps.best_rotation);
    REQUIRE(res.seeds.size() == seeds.size());
    std::size_t expected_total = 0;
    for (const auto& s : seeds) expected_total += s.rotations.empty() ? rots.size() : s.rotations.size();
    CHECK(res.rotations_scored == expected_total);
    CHECK(told == expected_total);
    CHECK(last == expected_total);
    float scale = 0.0f;
    for (float x : wb) scale = std::max(scale, std::abs(x));
    const float tol = 2e-6f * std::max(1.0f, scale);
    // which seeds hold each voxel, from the ellipsoid written out
    std::vector<std::vector<std::size_t>> holders(wb.size());
    std::vector<index_t> held(seeds.size(), 0);
    for (std::size_t s = 0; s < seeds.size(); ++s) {
      const auto& sd = seeds[s];
      for (index_t i = 0; i < n[0]; ++i)
        for (index_t j = 0; j < n[1]; ++j)
          for (index_t l = 0; l < n[2]; ++l) {
            const double d[3] = {double(i) - std::round(sd.position[0]), double(j) - std::round(sd.position[1]),
                                 double(l) - std::round(sd.position[2])};
            double q = 0;
            bool in = true;
            for (int a = 0; a < 3; ++a) {
              if (sd.radius[std::size_t(a)] < 1) in = in && d[a] == 0;
              else q += d[a] * d[a] / (sd.radius[std::size_t(a)] * sd.radius[std::size_t(a)]);
            }
            if (in && q <= 1) {
              holders[std::size_t(at(n, i, j, l))].push_back(s);
              ++held[s];
            }
          }
    }
    int outside_bad = 0, above = 0, unequal = 0, compared = 0;
    for (std::size_t v = 0; v < wb.size(); ++v) {
      if (holders[v].empty()) {
        outside_bad += !(std::isnan(sb[v]) && sr[v] == -1);
        continue;
      }
      above += sb[v] > wb[v] + tol;
      bool among = false;
      for (const std::size_t s : holders[v])
        among = among || seeds[s].rotations.empty() ||
                std::binary_search(seeds[s].rotations.begin(), seeds[s].rotations.end(), std::uint32_t(wr[v]));
      if (among) {
        ++compared;
        unequal += !(std::abs(sb[v] - wb[v]) <= tol);
      }
    }
    CHECK(outside_bad == 0);
    CHECK(above == 0);
    CHECK(unequal == 0);
    CHECK(compared > 50);
    for (std::size_t s = 0; s < seeds.size(); ++s) {
      CAPTURE(s);
      CHECK(res.seeds[s].voxels == held[s]);
      CHECK(res.seeds[s].rotations == (seeds[s].rotations.empty() ? rots.size() : seeds[s].rotations.size()));
    }
    for (int i = 0; i < 3; ++i) {
      const copy& p = planted[i];
      const match::seed_match& found = res.seeds[std::size_t(i)];
      CAPTURE(i);
      CHECK(found.position == std::array<index_t, 3>{p.c[0], p.c[1], p.c[2]});
      CHECK(found.rotation == std::int32_t(p.rotation));
      CHECK(std::abs(found.score - wb[std::size_t(at(n, p.c[0], p.c[1], p.c[2]))]) <= tol);
      CHECK(found.score > 0.9f);
      CHECK(seeds[std::size_t(i)].rotations.size() * 8 < rots.size());  // the cone holds under 1/8 of the rotations
    }
    double work = 0;  // rotations x voxels scored
    for (std::size_t s = 0; s < seeds.size(); ++s) work += double(res.seeds[s].rotations) * double(held[s]);
    MESSAGE(match::to_string(kind), ": ", rots.size(), " rotations in the set; the seeds' 25-degree cones hold ",
            seeds[0].rotations.size(), ", ", seeds[1].rotations.size(), " and ", seeds[2].rotations.size(),
            "; rotations x voxels scored, against the whole scan's: ", work / (double(rots.size()) * double(n.numel())));
  }

  // no seeds: nothing scored; a seed of radius 0 scores its voxel alone
  const auto none = match::seeded_scan(df, dg, mask, rots, {}, S::flc_spherical_mask);
  const auto nb = host_values(none.maps.best_score);
  CHECK(std::all_of(nb.begin(), nb.end(), [](float x) { return std::isnan(x); }));
  CHECK(none.rotations_scored == 0);
  const auto one = match::seeded_scan(df, dg, mask, rots, {{{12, 10, 14}, {}, {}}}, S::flc_spherical_mask);
  CHECK(one.seeds[0].voxels == 1);
  CHECK(one.seeds[0].position == std::array<index_t, 3>{12, 10, 14});
  CHECK(one.seeds[0].rotation == 7);

  // bad seeds and options, before any work
  const auto bad = [&](const match::seed& s, const char* says) {
    CHECK_THROWS_WITH_AS(match::seeded_scan(df, dg, mask, rots, {seeds[0], s}, S::flc), doctest::Contains(says), fusor::value_error);
  };
  bad({{40, 5, 5}, {}, {}}, "seed 1 lies at 40");
  bad({{-0.6, 5, 5}, {}, {}}, "outside the target");
  bad({{std::nan(""), 5, 5}, {}, {}}, "outside the target");
  bad({{5, 5, 5}, {1, -1, 1}, {}}, "radius of -1");
  bad({{5, 5, 5}, {1, 1, 1}, {0, std::uint32_t(rots.size())}}, "names rotation");
  match::scan_options keep;
  keep.statistics = true;
  CHECK_THROWS_WITH_AS(match::seeded_scan(df, dg, mask, rots, seeds, S::flc, keep), doctest::Contains("no mean map or statistics"),
                       fusor::value_error);
  keep = {};
  keep.tile = {10, 10, 10};
  CHECK_THROWS_AS(match::seeded_scan(df, dg, mask, rots, seeds, S::flc, keep), fusor::value_error);
}

TEST_CASE("match scan tiles: tiled and batched scans equal the whole scan for every score; a target mask skips tiles") {
  const extents n{26, 23, 21}, m{7, 6, 7};
  const volume f = random_volume(n, 61);
  const volume g = random_volume(m, 62);
  match::mask_options soft;
  soft.edge = match::mask_edge::gaussian(1.0);
  const auto dmask = match::sphere_mask<B>(m, 2.5, soft);
  const auto rots = few_rotations();
  const auto df = device_volume(f, n), dg = device_volume(g, m);
  using S = match::score;
  for (const S kind : {S::cc, S::lcc, S::corr, S::cam, S::flc_spherical_mask, S::flc, S::mcc}) {
    CAPTURE(match::to_string(kind));
    match::scan_options o;
    o.mean_map = true;
    o.statistics = true;
    if (kind == S::corr) o.target_filter.band = match::bandpass{0.0, 4.0, false};  // a whole-target filter
    const auto whole = match::scan(df, dg, dmask, rots, kind, o);
    CHECK(whole.tile == n);
    CHECK(whole.tiles_skipped == 0);
    // the runner-up of every voxel, from each rotation scanned alone: rotations must agree where
    // the best is clear of it
    std::vector<float> second(std::size_t(n.numel()), -INFINITY), first(std::size_t(n.numel()), -INFINITY);
    for (const auto& q : rots) {
      const auto one = host_values(match::scan(df, dg, dmask, std::vector<match::quaternion>{q}, kind, o).best_score);
      for (std::size_t i = 0; i < one.size(); ++i) {
        if (one[i] > first[i]) {
          second[i] = first[i];
          first[i] = one[i];
        } else if (one[i] > second[i]) {
          second[i] = one[i];
        }
      }
    }
    const auto wb = host_values(whole.best_score), wm = host_values(whole.mean_score);
    const auto wr = host_values(whole.best_rotation);
    float scale = 0.0f;
    for (float x : wb) scale = std::max(scale, std::abs(x));
    // tiles, batches of rotations (transformed by one call; 5 rotations leave a part-filled last
    // batch), and both
    struct cut {
      extents tile;
      index_t batch;
    };
    for (const cut& c : {cut{{9, 8, 10}, 0}, cut{{26, 23, 5}, 0}, cut{{4, 23, 21}, 0}, cut{n, 2}, cut{n, 3}, cut{n, 7},
                         cut{{9, 8, 10}, 4}}) {
      CAPTURE(fusor::to_string(c.tile));
      CAPTURE(c.batch);
      o.tile = c.tile;
      o.batch = c.batch;
      const auto tiled = match::scan(df, dg, dmask, rots, kind, o);
      CHECK(tiled.tile == c.tile);
      const auto tb = host_values(tiled.best_score), tm = host_values(tiled.mean_score);
      const auto tr = host_values(tiled.best_rotation);
      double worst = 0, worst_mean = 0;
      int disagree = 0;
      for (std::size_t i = 0; i < tb.size(); ++i) {
        worst = std::max(worst, double(std::abs(tb[i] - wb[i])));
        worst_mean = std::max(worst_mean, double(std::abs(tm[i] - wm[i])));
        if (first[i] - second[i] > 1e-4f * std::max(1.0f, scale)) disagree += tr[i] != wr[i];
      }
      CHECK(worst <= 2e-6 * std::max(1.0f, scale));
      CHECK(worst_mean <= 2e-6 * std::max(1.0f, scale));
      CHECK(disagree == 0);
      CHECK(tiled.statistics.count == whole.statistics.count);
      CHECK(tiled.statistics.mean == doctest::Approx(whole.statistics.mean).epsilon(1e-5).scale(whole.statistics.stddev));
      CHECK(tiled.statistics.stddev == doctest::Approx(whole.statistics.stddev).epsilon(1e-5));
    }
    o.tile = {};
    o.batch = 0;

    // the tiles dealt to 3 parts (as to 3 processes): each part scores its own tiles and leaves
    // the rest NaN and -1; the parts merged by a max of their keys are the tiled scan, bit for bit
    {
      o.tile = {13, 12, 21};  // 2 x 2 x 1 tiles: parts of 2, 1 and 1
      const auto all = match::scan(df, dg, dmask, rots, kind, o);
      const auto ab = host_values(all.best_score);
      const auto ar = host_values(all.best_rotation);
      std::vector<std::uint64_t> merged(ab.size(), 0);
      std::int64_t count = 0;
      double sum = 0.0, sum2 = 0.0;
      index_t unscored_total = 0;
      for (index_t part = 0; part < 3; ++part) {
        o.tile_part = part;
        o.tile_parts = 3;
        const auto pr = match::scan(df, dg, dmask, rots, kind, o);
        const auto pb = host_values(pr.best_score);
        const auto pt = host_values(pr.best_rotation);
        index_t unscored = 0;
        for (std::size_t i = 0; i < pb.size(); ++i) {
          if (pt[i] < 0) {
            unscored += std::isnan(pb[i]);
            continue;
          }
          merged[i] = std::max(merged[i], match::detail::score_key(pb[i], std::uint32_t(pt[i])));
        }
        unscored_total += unscored;
        CHECK(unscored == n.numel() - pr.statistics.count / std::int64_t(rots.size()));
        count += pr.statistics.count;
        sum += pr.statistics.mean * double(pr.statistics.count);
        sum2 += (pr.statistics.stddev * pr.statistics.stddev + pr.statistics.mean * pr.statistics.mean) *
                double(pr.statistics.count);
      }
      CHECK(unscored_total == 2 * n.numel());  // each voxel scored by one part of the three
      bool same = true;
      for (std::size_t i = 0; i < ab.size(); ++i)
        same = same && match::detail::key_score(merged[i]) == ab[i] &&
               std::int32_t(match::detail::key_rotation(merged[i])) == ar[i];
      CHECK(same);
      CHECK(count == all.statistics.count);
      const double mean = sum / double(count);
      CHECK(mean == doctest::Approx(all.statistics.mean).epsilon(1e-9).scale(all.statistics.stddev));
      CHECK(std::sqrt(sum2 / double(count) - mean * mean) == doctest::Approx(all.statistics.stddev).epsilon(1e-7));
      o.tile_parts = 1;
      o.tile_part = 0;
      o.tile = {};
    }

    // a target mask that covers only a corner box: the tiles that miss it are skipped
    volume tm(f.size(), 0.0);
    for (index_t i = 2; i < 7; ++i)
      for (index_t j = 17; j < 20; ++j)
        for (index_t k = 12; k < 15; ++k) tm[std::size_t(at(n, i, j, k))] = 1.0;
    // (MCC reads the mask in its score: its reference is the whole scan with the same mask)
    const auto wmb = kind == S::mcc ? host_values(match::scan(df, dg, dmask, rots, kind, o, device_volume(tm, n)).best_score) : wb;
    o.tile = {9, 8, 10};
    const auto masked = match::scan(df, dg, dmask, rots, kind, o, device_volume(tm, n));
    index_t expected_skips = 0;
    std::vector<bool> scanned(std::size_t(n.numel()), false);
    for (index_t a0 = 0; a0 < n[0]; a0 += 9)
      for (index_t a1 = 0; a1 < n[1]; a1 += 8)
        for (index_t a2 = 0; a2 < n[2]; a2 += 10) {
          bool any = false;
          for (index_t i = a0; i < std::min(n[0], a0 + 9); ++i)
            for (index_t j = a1; j < std::min(n[1], a1 + 8); ++j)
              for (index_t k = a2; k < std::min(n[2], a2 + 10); ++k) any = any || tm[std::size_t(at(n, i, j, k))] != 0.0;
          expected_skips += !any;
          for (index_t i = a0; any && i < std::min(n[0], a0 + 9); ++i)
            for (index_t j = a1; j < std::min(n[1], a1 + 8); ++j)
              for (index_t k = a2; k < std::min(n[2], a2 + 10); ++k) scanned[std::size_t(at(n, i, j, k))] = true;
        }
    CHECK(masked.tiles_skipped == expected_skips);
    CHECK(expected_skips == 3 * 3 * 3 - 1);
    const auto mb = host_values(masked.best_score), mm = host_values(masked.mean_score);
    const auto mr = host_values(masked.best_rotation);
    bool skipped_ok = true, scanned_ok = true;
    for (std::size_t i = 0; i < mb.size(); ++i) {
      if (scanned[i]) scanned_ok = scanned_ok && std::abs(mb[i] - wmb[i]) <= 2e-6f * std::max(1.0f, scale);
      else skipped_ok = skipped_ok && std::isnan(mb[i]) && mr[i] == -1 && std::isnan(mm[i]);
    }
    CHECK(scanned_ok);
    CHECK(skipped_ok);
    CHECK(masked.statistics.count == std::int64_t(std::count(scanned.begin(), scanned.end(), true)) * std::int64_t(rots.size()));
    o.tile = {};
  }
}

TEST_CASE("match scan tiles: the memory estimate picks tiles that fit a budget; bad tiles and budgets") {
  const extents n{40, 36, 30}, m{9, 9, 9};
  const volume f = random_volume(n, 71), g = random_volume(m, 72);
  const auto df = device_volume(f, n), dg = device_volume(g, m);
  const auto dmask = match::sphere_mask<B>(m, 4.0);
  const auto rots = few_rotations();
  using S = match::score;
  match::scan_options o;
  o.threads = 1;
  o.memory_budget = std::size_t(1) << 40;
  // the backend's batch (cpu a pair of rotations, a device several) never exceeds the
  // rotations, and is halved to fit a budget before the target is tiled
  const auto chosen = match::estimate_scan_memory<B>(n, m, S::flc, o, rots.size());
  CHECK(chosen.batch == (std::is_same_v<B, fusor::cpu> ? 2 : index_t(rots.size())));
  CHECK(chosen.tile == n);
  if (chosen.batch > 1) {
    o.memory_budget = chosen.bytes - 1;
    const auto fewer = match::estimate_scan_memory<B>(n, m, S::flc, o, rots.size());
    CHECK(fewer.batch < chosen.batch);
    CHECK(fewer.tile == n);
    CHECK(fewer.bytes <= o.memory_budget);
  }
  // an explicit batch is kept, and costs its lanes' grids
  o.memory_budget = std::size_t(1) << 40;
  o.batch = 3;
  const auto three = match::estimate_scan_memory<B>(n, m, S::flc, o, rots.size());
  CHECK(three.batch == 3);
  o.batch = 1;
  const auto whole = match::estimate_scan_memory<B>(n, m, S::flc, o, rots.size());
  CHECK(whole.batch == 1);
  CHECK(three.bytes > whole.bytes + 2 * 4 * std::size_t(whole.grid.numel()));
  CHECK(whole.tile == n);
  CHECK(whole.tiles == extents{1, 1, 1});
  CHECK(whole.grid == match::scan_fft_shape(n, m));
  CHECK(whole.budget == o.memory_budget);
  // a budget a little below the whole: tiles, each within it, more of them for less
  o.memory_budget = whole.bytes - 1;
  const auto cut = match::estimate_scan_memory<B>(n, m, S::flc, o, rots.size());
  CHECK(cut.tile != n);
  CHECK(cut.bytes <= o.memory_budget);
  CHECK(cut.tiles.numel() > 1);
  o.memory_budget = whole.bytes / 2;
  const auto finer = match::estimate_scan_memory<B>(n, m, S::flc, o, rots.size());
  CHECK(finer.bytes <= o.memory_budget);
  CHECK(finer.tiles.numel() > cut.tiles.numel());
  MESSAGE("whole: ", whole.bytes, " bytes; under ", whole.bytes / 2, ": tiles ", fusor::to_string(finer.tile), " x ",
          finer.tiles.numel(), ", ", finer.bytes, " bytes");
  // the scan under that budget uses those tiles and scores as the whole does
  const auto res = match::scan(df, dg, dmask, rots, S::flc, o);
  CHECK(res.tile == finer.tile);
  o.memory_budget = 0;
  const auto ref = match::scan(df, dg, dmask, rots, S::flc, o);
  CHECK(ref.tile == n);  // this machine holds a 40 x 36 x 30 scan
  const auto a = host_values(res.best_score), b = host_values(ref.best_score);
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, double(std::abs(a[i] - b[i])));
  CHECK(worst <= 2e-6);
  if constexpr (std::is_same_v<B, fusor::cpu>) {
    // the estimate against the bytes the scan's arrays really held at their peak: whole, tiled,
    // and in batches of 3
    for (const auto& [budget, batch] : {std::pair{std::size_t(1) << 40, index_t(1)}, std::pair{finer.budget, index_t(1)},
                                        std::pair{std::size_t(1) << 40, index_t(3)}}) {
      o.memory_budget = budget;
      o.batch = batch;
      const auto e = match::estimate_scan_memory<B>(n, m, S::flc, o, rots.size());
      fusor::reset_cpu_peak_memory();
      const std::size_t before = fusor::cpu_memory_stats().allocated;
      { const auto r = match::scan(df, dg, dmask, rots, S::flc, o); }
      const std::size_t peak = fusor::cpu_memory_stats().peak - before;
      MESSAGE("estimated ", e.bytes, " bytes, held at most ", peak);
      CHECK(double(peak) <= 1.1 * double(e.bytes));
      CHECK(double(peak) >= 0.5 * double(e.bytes));
    }
  }
  // bad input
  o = {};
  o.batch = -1;
  CHECK_THROWS_WITH_AS(match::estimate_scan_memory<B>(n, m, S::flc, o), doctest::Contains("got -1"), fusor::value_error);
  CHECK_THROWS_AS(match::scan(df, dg, dmask, rots, S::flc, o), fusor::value_error);
  o = {};
  o.memory_budget = 1000;
  CHECK_THROWS_WITH_AS(match::estimate_scan_memory<B>(n, m, S::flc, o), doctest::Contains("one-voxel tile"), fusor::value_error);
  CHECK_THROWS_AS(match::scan(df, dg, dmask, rots, S::flc, o), fusor::value_error);
  o = {};
  o.tile = {0, 4, 4};
  CHECK_THROWS_AS(match::scan(df, dg, dmask, rots, S::flc, o), fusor::value_error);
  o.tile = {4, 4};
  CHECK_THROWS_AS(match::scan(df, dg, dmask, rots, S::flc, o), fusor::value_error);
  o = {};
  o.tile_part = 2;
  o.tile_parts = 2;
  CHECK_THROWS_WITH_AS(match::scan(df, dg, dmask, rots, S::flc, o), doctest::Contains("got part 2 of 2"), fusor::value_error);
  o.tile_parts = 0;
  o.tile_part = 0;
  CHECK_THROWS_WITH_AS(match::scan(df, dg, dmask, rots, S::flc, o), doctest::Contains("got part 0 of 0"), fusor::value_error);
  o = {};
  CHECK_THROWS_AS(match::scan(df, dg, dmask, rots, S::flc, o, fusor::zeros<float, B>(extents{40, 36, 29})), fusor::shape_error);
  // an all-zero target mask skips everything
  const auto none = match::scan(df, dg, dmask, rots, S::flc, o, fusor::zeros<float, B>(n));
  CHECK(none.tiles_skipped == 1);
  CHECK(std::isnan(host_values(none.best_score)[0]));
}

TEST_CASE("match: cubic B-splines reproduce cubic polynomials away from the edges; trilinear linear ones everywhere") {
  const extents s{24, 22, 26};
  auto cubic_poly = [](double x, double y, double z) {
    return 1 + 0.3 * x - 0.02 * y * y + 0.001 * x * y * z - 0.0005 * z * z * z + 0.002 * x * x * y;
  };
  auto linear_poly = [](double x, double y, double z) { return 2 - 0.25 * x + 0.5 * y + 0.125 * z; };
  volume vc(std::size_t(s.numel())), vl(vc.size());
  for (index_t i = 0; i < s[0]; ++i)
    for (index_t j = 0; j < s[1]; ++j)
      for (index_t k = 0; k < s[2]; ++k) {
        vc[std::size_t(at(s, i, j, k))] = cubic_poly(double(i), double(j), double(k));
        vl[std::size_t(at(s, i, j, k))] = linear_poly(double(i), double(j), double(k));
      }
  // a small rotation about the centre and a shift keep the samples of the central 8^3 voxels at
  // least 7 voxels from every edge, where the mirrored boundary's effect has decayed below 1e-6
  const match::matrix3 r = match::to_matrix(match::axis_angle({1, 1, 2}, 9));
  const match::vec3 t{0.37, -0.61, 0.23};
  match::transform_options cubic, linear;
  linear.method = match::interpolation::linear;
  const auto oc = host_values(match::rigid_transform(device_volume(vc, s), r, t, cubic));
  const auto ol = host_values(match::rigid_transform(device_volume(vl, s), r, t, linear));
  double worst_c = 0, worst_l = 0, scale = 0;
  for (index_t i = 0; i < s[0]; ++i)
    for (index_t j = 0; j < s[1]; ++j)
      for (index_t k = 0; k < s[2]; ++k) {
        const double q[3] = {double(i - s[0] / 2) - t[0], double(j - s[1] / 2) - t[1], double(k - s[2] / 2) - t[2]};
        double p[3];
        for (int a = 0; a < 3; ++a) p[a] = r[0][a] * q[0] + r[1][a] * q[1] + r[2][a] * q[2] + double(s[a] / 2);
        bool inside = true;
        for (int a = 0; a < 3; ++a) inside = inside && p[a] >= 0 && p[a] <= double(s[a] - 1);
        if (!inside) continue;
        worst_l = std::max(worst_l, std::abs(double(ol[std::size_t(at(s, i, j, k))]) - linear_poly(p[0], p[1], p[2])));
        if (std::abs(i - s[0] / 2) < 4 && std::abs(j - s[1] / 2) < 4 && std::abs(k - s[2] / 2) < 4) {
          const double want = cubic_poly(p[0], p[1], p[2]);
          scale = std::max(scale, std::abs(want));
          worst_c = std::max(worst_c, std::abs(double(oc[std::size_t(at(s, i, j, k))]) - want));
        }
      }
  CHECK(worst_l < 2e-5);
  CHECK(worst_c < 2e-5 * std::max(1.0, scale));
}

TEST_CASE("match scan strategy: workers in [1, batches]; run_team calls body once on each thread of its team") {
  using strategy = match::scan_strategy<B>;
  static_assert(strategy::default_batch >= 1);
  for (const int threads : {0, 1, 2, 3, 7}) {
    for (const std::size_t batches : {std::size_t(1), std::size_t(2), std::size_t(5), std::size_t(64)}) {
      const int w = strategy::workers(threads, batches);
      CHECK(w >= 1);
      CHECK(std::size_t(w) <= batches);
      if (threads > 0) CHECK(w <= threads);
    }
  }
  for (const int asked : {1, 2, 3}) {
    std::atomic<int> calls{0}, team_seen{-1}, bad{0};
    std::array<std::atomic<int>, 8> per_thread{};
    strategy::run_team(asked, [&](int t, int team) {
      calls.fetch_add(1);
      team_seen.store(team);
      if (t < 0 || t >= team || team < 1 || team > asked || t >= int(per_thread.size())) bad.fetch_add(1);
      else per_thread[std::size_t(t)].fetch_add(1);
    });
    // loaded into plain ints first: doctest's CHECK copies its operands, an atomic cannot be copied
    const int n = calls.load(), team = team_seen.load(), wrong = bad.load();
    CHECK(wrong == 0);
    CHECK(team >= 1);
    CHECK(n == team);
    for (int t = 0; t < team && t < int(per_thread.size()); ++t) {
      const int once = per_thread[std::size_t(t)].load();
      CHECK(once == 1);
    }
  }
}

TEST_CASE("match scan: thread counts, scores by name, bad input") {
  const extents n{9, 8, 10}, m{3, 3, 4};
  const auto f = device_volume(random_volume(n, 51), n), g = device_volume(random_volume(m, 52), m);
  const auto mask = match::box_mask<B>(m, {1, 1, 2});
  const auto rots = match::uniform_rotations(45.0);
  match::scan_options one, many;
  one.threads = 1;
  many.threads = 3;
  one.mean_map = many.mean_map = true;
  const auto a = match::scan(f, g, mask, rots, match::score::flc, one);
  const auto b = match::scan(f, g, mask, rots, match::score::flc, many);
  CHECK(host_values(a.best_score) == host_values(b.best_score));
  CHECK(host_values(a.best_rotation) == host_values(b.best_rotation));
  if constexpr (std::is_same_v<B, fusor::cpu>) {
    // called from inside a parallel region, a scan asking for 3 threads gets a team of 1 (nested
    // regions are inactive) and must still score every rotation
    std::vector<float> inner[2];
#pragma omp parallel num_threads(2)
    {
#if defined(_OPENMP)
      const int t = omp_get_thread_num();
#else
      const int t = 0;
#endif
      inner[t] = host_values(match::scan(f, g, mask, rots, match::score::flc, many).best_score);
    }
    CHECK(inner[0] == host_values(a.best_score));
  }
  {
    // on an explicit context, the scan's team runs with it too: its hook hears every thread's
    // allocations, and the scores are the same
    struct team_log {
      std::mutex m;
      std::vector<std::thread::id> threads;
      void operator()(const fusor::memory_event&) {
        const std::lock_guard<std::mutex> lock(m);
        if (std::find(threads.begin(), threads.end(), std::this_thread::get_id()) == threads.end())
          threads.push_back(std::this_thread::get_id());
      }
    } log;
    fusor::context<B> c;
    c.on_memory = fusor::memory_hook(log);
    const auto on_c = match::scan(c, f, g, mask, rots, match::score::flc, many);
    CHECK(host_values(on_c.best_score) == host_values(b.best_score));
    CHECK_FALSE(bool(fusor::current_context<B>().on_memory));
    // as many threads as the team asked for (OpenMP gives a team of 3 unless dynamic teams let
    // it choose fewer); the caller's thread alone would mean the team did not get the context
    const std::size_t batch = std::size_t(match::scan_strategy<B>::default_batch);
    const int team = match::scan_strategy<B>::workers(many.threads, (rots.size() + batch - 1) / batch);
    INFO("team of ", team, ", ", log.threads.size(), " threads heard");
#if defined(_OPENMP)
    if (!omp_get_dynamic()) CHECK(log.threads.size() == std::size_t(team));
#endif
    CHECK(log.threads.size() >= 1);
    CHECK(log.threads.size() <= std::size_t(team));
  }
  // one rotation: the map is that rotation's, index 0 everywhere
  const auto single = match::scan(f, g, mask, {rots[3]}, match::score::cc);
  const auto idx = host_values(single.best_rotation);
  CHECK(std::all_of(idx.begin(), idx.end(), [](std::int32_t i) { return i == 0; }));
  // a template as large as the target
  CHECK(match::scan(g, g, mask, {match::quaternion{}}, match::score::flc).best_score.shape() == m);
  // names
  for (const auto s : {match::score::cc, match::score::lcc, match::score::corr, match::score::cam,
                       match::score::flc_spherical_mask, match::score::flc, match::score::mcc})
    CHECK(match::parse_score(match::to_string(s)) == s);
  CHECK(match::to_string(match::score::mcc) == "MCC");
  match::scan_options bad_ratio;
  bad_ratio.overlap_ratio = 1.5;
  CHECK_THROWS_WITH_AS(match::scan(f, g, mask, rots, match::score::mcc, bad_ratio), doctest::Contains("overlap_ratio"),
                       fusor::value_error);
  CHECK_THROWS_WITH_AS(match::parse_score("flc"), doctest::Contains("FLCSphericalMask"), fusor::value_error);
  // bad input
  CHECK_THROWS_WITH_AS(match::scan(g, f, mask, rots, match::score::cc), doctest::Contains("no larger than the target"),
                       fusor::shape_error);
  CHECK_THROWS_AS(match::scan(f, g, match::box_mask<B>(extents{3, 3, 3}, {1, 1, 1}), rots, match::score::cc), fusor::shape_error);
  CHECK_THROWS_WITH_AS(match::scan(f, g, mask, {}, match::score::cc), doctest::Contains("at least one rotation"), fusor::value_error);
  CHECK_THROWS_AS(match::scan(fusor::array<float, B>(extents{9, 8}), g, mask, rots, match::score::cc), fusor::shape_error);
  CHECK_THROWS_AS(match::scan(f, g, mask, {match::quaternion{0, 0, 0, 0}}, match::score::cc), fusor::value_error);
  const fusor::array<float, B> no_mask = fusor::zeros<float, B>(m);
  CHECK_THROWS_WITH_AS(match::scan(f, g, no_mask, rots, match::score::flc), doctest::Contains("positive sum"), fusor::value_error);
  CHECK(match::scan(f, g, no_mask, {rots[0]}, match::score::cc).best_score.shape() == n);  // CC ignores the mask
  const fusor::array<float, B> flat = fusor::full<float, B>(m, 1.5f);
  CHECK_THROWS_WITH_AS(match::scan(f, flat, mask, rots, match::score::flc), doctest::Contains("constant under the mask"),
                       fusor::value_error);
  CHECK_THROWS_WITH_AS(match::scan(f, flat, mask, rots, match::score::cam), doctest::Contains("constant"), fusor::value_error);
  // one non-finite voxel anywhere in an input: refused before any work, naming the input and the voxel
  // (NaN first, then inf, at the first voxel, an inner one and the last: the reduction's edges)
  CHECK_FALSE(match::first_non_finite(f).has_value());
  CHECK_THROWS_AS(match::first_non_finite(fusor::array<float, B>(extents{4, 4})), fusor::shape_error);
  const std::vector<float> fh = host_values(f);
  const std::array<std::array<index_t, 3>, 3> spots{{{0, 0, 0}, {3, 2, 5}, {n[0] - 1, n[1] - 1, n[2] - 1}}};
  for (const float bad : {NAN, INFINITY, -INFINITY})
    for (const auto& at : spots) {
      std::vector<float> v = fh;
      v[std::size_t((at[0] * n[1] + at[1]) * n[2] + at[2])] = bad;
      const auto fb = test::on<B>(v, n);
      const auto found = match::first_non_finite(fb);
      REQUIRE(found.has_value());
      CHECK(*found == at);
      const std::string voxel = "(" + std::to_string(at[0]) + ", " + std::to_string(at[1]) + ", " + std::to_string(at[2]) + ")";
      CHECK_THROWS_WITH_AS(match::scan(fb, g, mask, rots, match::score::flc_spherical_mask),
                           doctest::Contains(("the target holds a non-finite value (NaN or inf) at voxel " + voxel).c_str()),
                           fusor::value_error);
    }
  std::vector<float> gh = host_values(g);
  gh.back() = NAN;  // a NaN template is not "constant under the mask": say what it is
  CHECK_THROWS_WITH_AS(match::scan(f, test::on<B>(gh, m), mask, rots, match::score::flc),
                       doctest::Contains("the template holds a non-finite value"), fusor::value_error);
  std::vector<float> mh = host_values(mask);
  mh[0] = INFINITY;
  CHECK_THROWS_WITH_AS(match::scan(f, g, test::on<B>(mh, m), rots, match::score::cc),
                       doctest::Contains("the mask holds a non-finite value (NaN or inf) at voxel (0, 0, 0)"),
                       fusor::value_error);
}

TEST_CASE("match scan: progress counts every rotation of every tile once; a callback that says stop stops it") {
  const extents n{12, 10, 11}, m{3, 3, 3};
  const auto f = device_volume(random_volume(n, 61), n), g = device_volume(random_volume(m, 62), m);
  const auto mask = match::box_mask<B>(m, {1, 1, 1});
  const auto rots = match::uniform_rotations(60.0);
  const std::size_t r = rots.size();
  for (const int threads : {1, 3})
    for (const bool tiled : {false, true}) {
      match::scan_options o;
      o.threads = threads;
      if (tiled) o.tile = extents{5, 10, 6};  // 3 x 1 x 2 tiles
      const std::size_t total = r * (tiled ? 6 : 1);
      std::vector<std::size_t> seen;
      o.progress = [&](std::size_t done, std::size_t all) {
        CHECK(all == total);
        seen.push_back(done);
        // one thread asked for: the scan's own loops run on that thread alone (their cap)
        if constexpr (std::is_same_v<B, fusor::cpu>)
          if (threads == 1) CHECK(fusor::num_threads() == 1);
        return true;
      };
      const auto with = match::scan(f, g, mask, rots, match::score::flc, o);
      CAPTURE(threads);
      CAPTURE(tiled);
      REQUIRE(!seen.empty());
      CHECK(std::is_sorted(seen.begin(), seen.end()));
      CHECK(seen.back() == total);
      CHECK(seen.size() >= (tiled ? 6u : 1u));
      o.progress = nullptr;
      CHECK(host_values(match::scan(f, g, mask, rots, match::score::flc, o).best_score) == host_values(with.best_score));
      // stop after the first report: the scan throws, naming how far it got
      std::size_t calls = 0;
      o.progress = [&](std::size_t, std::size_t) { return ++calls < 2; };
      CHECK_THROWS_WITH_AS(match::scan(f, g, mask, rots, match::score::flc, o), doctest::Contains("stopped by its progress"),
                           match::scan_stopped);
      CHECK(calls == 2);
    }
}

// ---- Fourier filters --------------------------------------------------------------------------

inline double fftfreq(index_t k, index_t n) { return double(k <= (n - 1) / 2 ? k : k - n) / double(n); }

/// The filter's value at frequency (c0, c1, c2) cycles per voxel, written from the definitions.
/// A tilt series' weight at frequency c (cycles per voxel) of a volume of shape s, written from the
/// model's definitions in 3-D vectors: each tilt's plane normal m and in-plane direction d turned
/// from the beam and third axes, the slab's half-width as the voxel's extent along m, the
/// astigmatic defocus as U cos^2 + V sin^2 of the angle from the U axis.
inline double tilt_weight_value(const match::tilt_weighting& w, const extents& s, double voxel, const double c[3]) {
  const auto& ts = w.series;
  const int tax = ts.tilt_axis, bax = ts.beam_axis, pax = 3 - tax - bax;
  const double pi = std::numbers::pi, rad = pi / 180;
  const double lambda = match::electron_wavelength(ts.optics.voltage_kv), cs = ts.optics.cs_mm * 1e7;
  const double a = ts.optics.amplitude_contrast;
  const bool ctf = w.ctf && ts.has_defocus(), dose = ts.has_dose();
  std::vector<double> angles;
  for (const auto& t : ts.tilts) angles.push_back(t.angle);
  std::sort(angles.begin(), angles.end());
  double step = 1e300;
  for (std::size_t i = 1; i < angles.size(); ++i)
    if (angles[i] != angles[i - 1]) step = std::min(step, (angles[i] - angles[i - 1]) * rad);
  double num = 0, den = 0;
  for (const auto& t : ts.tilts) {
    double m[3] = {0, 0, 0}, d[3] = {0, 0, 0};
    m[pax] = -std::sin(t.angle * rad);
    m[bax] = std::cos(t.angle * rad);
    d[pax] = std::cos(t.angle * rad);
    d[bax] = std::sin(t.angle * rad);
    double dist = 0, h = 0, x = 0;
    for (int q = 0; q < 3; ++q) {
      dist += c[q] * m[q];
      h += m[q] * m[q] / double(s[q] * s[q]);
      x += c[q] * d[q];
    }
    dist = std::abs(dist);
    h = std::sqrt(h);
    if (dist >= h) continue;
    const double slab = 1 - dist / h, y = c[tax];
    const double f = std::hypot(x, y) / voxel;  // 1/Å
    double v = w.cosine ? std::cos(t.angle * rad) : 1.0;
    if (ctf) {
      const double from_u = std::atan2(y, x) - t.astigmatism_angle * rad;
      // the gradient: the offset's height along this tilt's beam (m), in Å, times the handedness
      const double height = (w.center_offset[0] * m[0] + w.center_offset[1] * m[1] + w.center_offset[2] * m[2]) * voxel;
      const double df = t.defocus_u * std::pow(std::cos(from_u), 2) + t.defocus_v * std::pow(std::sin(from_u), 2) +
                        w.defocus_handedness * height;
      const double chi = pi * lambda * f * f * df - pi / 2 * cs * std::pow(lambda, 3) * std::pow(f, 4) + t.phase_shift * rad +
                         std::asin(a);
      v *= ts.correction == match::ctf_correction::phase_flip ? std::abs(std::sin(chi)) : std::sin(chi);
    }
    if (dose && w.exposure == match::exposure_weighting::grant_grigorieff && f > 0)
      v *= std::exp(-t.dose / (2 * (0.245 * std::pow(f, -1.665) + 2.81)));
    if (dose && w.exposure == match::exposure_weighting::relion) v *= std::exp(-4 * t.dose * f * f);
    const double r = 2 * std::abs(x);  // 1 at Nyquist
    switch (w.filter) {
      case match::reconstruction_filter::ram_lak: v *= r; break;
      case match::reconstruction_filter::ramp: v *= std::min(1.0, std::abs(x) * double(s[pax]) * step); break;
      case match::reconstruction_filter::shepp_logan: v *= r == 0 ? 0.0 : r * std::sin(pi * r / 2) / (pi * r / 2); break;
      case match::reconstruction_filter::cosine: v *= r * std::cos(pi * r / 2); break;
      case match::reconstruction_filter::hamming: v *= r * (0.54 + 0.46 * std::cos(pi * r)); break;
      case match::reconstruction_filter::none: break;
    }
    num += slab * v;
    den += slab;
  }
  return num / std::max(1.0, den);
}

/// The same as a real filter takes it: at the Nyquist frequency of an even axis (which stands for
/// both signs there) the mean over the two signs.
inline double tilt_weight_real(const match::tilt_weighting& w, const extents& s, double voxel, const double c[3]) {
  double total = 0;
  int count = 0;
  for (int flips = 0; flips < 8; ++flips) {
    double f[3] = {c[0], c[1], c[2]};
    bool valid = true;
    for (int a = 0; a < 3; ++a)
      if (flips & (1 << a)) {
        valid = valid && s[a] % 2 == 0 && std::abs(std::abs(c[a]) - 0.5) < 1e-12;
        f[a] = -c[a];
      }
    if (!valid) continue;
    total += tilt_weight_value(w, s, voxel, f);
    ++count;
  }
  return total / count;
}

inline double filter_value(const match::fourier_filter& flt, const extents& s, const double c[3]) {
  const double fv = std::sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]), f = fv / flt.voxel_size;
  double v = 1;
  if (flt.band) {
    const auto& b = *flt.band;
    if (b.gaussian) {
      if (b.lowpass > 0) v *= std::exp(-std::log(2.0) * std::pow(f * b.lowpass, 2));
      if (b.highpass > 0) v *= 1 - std::exp(-std::log(2.0) * std::pow(f * b.highpass, 2));
    } else {
      if (b.lowpass > 0 && f > 1 / b.lowpass) v = 0;
      if (b.highpass > 0 && f < 1 / b.highpass) v = 0;
    }
  }
  if (flt.wedge) {
    const auto& w = *flt.wedge;
    const int perp = 3 - w.tilt_axis - w.beam_axis;
    // the line through the frequency, as an angle in (-90, 90] from the perpendicular axis
    if (c[w.beam_axis] != 0 || c[perp] != 0) {
      double e = c[perp] == 0 ? 90.0 : std::atan(c[w.beam_axis] / c[perp]) * 180 / std::numbers::pi;
      if (e == -90.0) e = 90.0;
      if (e < w.tilt_min || e > w.tilt_max) v = 0;
    }
  }
  if (flt.ctf) {
    const auto& t = *flt.ctf;
    const double lambda = match::electron_wavelength(t.voltage_kv), cs = t.cs_mm * 1e7;
    const double chi = std::numbers::pi * lambda * f * f * (t.defocus - 0.5 * cs * lambda * lambda * f * f) +
                       t.phase_shift_degrees * std::numbers::pi / 180 +
                       std::atan(t.amplitude_contrast / std::sqrt(1 - t.amplitude_contrast * t.amplitude_contrast));
    v *= t.phase_flip ? std::abs(std::sin(chi)) : std::sin(chi);
  }
  if (flt.whitening) {
    const auto& p = flt.whitening->value;
    const double x = fv * double(2 * (p.size() - 1));
    const std::size_t i = std::size_t(x);
    v *= i + 1 >= p.size() ? double(p.back()) : double(p[i]) + (x - double(i)) * double(p[i + 1] - p[i]);
  }
  if (flt.tilts) v *= tilt_weight_real(*flt.tilts, s, flt.voxel_size, c);
  return v;
}

/// The largest difference between a multiplier h in rfftn's layout for the real shape s and the
/// reference value at each position's frequency c (cycles per voxel); a wrong size fails too.
template <class F>
double rfft_error(const std::vector<float>& h, const extents& s, F reference) {
  REQUIRE(h.size() == std::size_t(s[0] * s[1] * (s[2] / 2 + 1)));
  double worst = 0;
  std::size_t p = 0;
  for (index_t i = 0; i < s[0]; ++i)
    for (index_t j = 0; j < s[1]; ++j)
      for (index_t k = 0; k < s[2] / 2 + 1; ++k) {
        const double c[3] = {fftfreq(i, s[0]), fftfreq(j, s[1]), double(k) / double(s[2])};
        worst = std::max(worst, std::abs(double(h[p++]) - reference(c)));
      }
  return worst;
}

TEST_CASE("match filters: each part and their product against the definitions") {
  // the electron wavelength against its published values (1.9687 pm at 300 kV, 2.5079 at 200, 3.7014 at 100)
  CHECK(std::abs(match::electron_wavelength(300) - 0.019687) < 5e-7);
  CHECK(std::abs(match::electron_wavelength(200) - 0.025079) < 5e-7);
  CHECK(std::abs(match::electron_wavelength(100) - 0.037014) < 5e-7);
  match::fourier_filter band_hard, band_soft, wedge_sym, wedge_asym, ctf, ctf_flip, white, all;
  band_hard.voxel_size = band_soft.voxel_size = 2.5;
  band_hard.band = match::bandpass{8, 20, false};
  band_soft.band = match::bandpass{8, 20, true};
  wedge_sym.wedge = match::missing_wedge{-45, 45, 1, 2};
  wedge_asym.wedge = match::missing_wedge{-30, 50, 0, 1};
  ctf.voxel_size = ctf_flip.voxel_size = 3.0;
  ctf.ctf = match::contrast_transfer{20000, 300, 2.7, 0.1, 10, false};
  ctf_flip.ctf = match::contrast_transfer{15000, 200, 2.0, 0.07, 0, true};
  white.whitening = match::radial_profile{{1.0f, 0.5f, 0.25f, 0.8f}};
  all = band_soft;
  all.wedge = wedge_asym.wedge;
  all.ctf = ctf.ctf;
  all.whitening = white.whitening;
  for (const auto* flt : {&band_hard, &band_soft, &wedge_sym, &wedge_asym, &ctf, &ctf_flip, &white, &all}) {
    for (const extents& s : {extents{6, 7, 9}, extents{8, 8, 8}, extents{1, 5, 2}}) {
      const auto h = host_values(match::filter_multiplier<B>(*flt, s));
      CAPTURE(fusor::to_string(s));
      CHECK(rfft_error(h, s, [&](const double* c) { return filter_value(*flt, s, c); }) < 1e-6);
    }
  }
  // closed forms: a Gaussian lowpass is 1/2 at its cut (10 Å at 2 Å per voxel: k = 2 of 10), a
  // highpass 1/2 at its; with Cs = 0 and no amplitude contrast the CTF is sin(pi lambda defocus f^2),
  // lambda the published 0.019687 Å at 300 kV
  {
    match::fourier_filter lp, hp, plain_ctf;
    lp.voxel_size = hp.voxel_size = 2;
    lp.band = match::bandpass{10, 0, true};
    hp.band = match::bandpass{0, 10, true};
    CHECK(std::abs(host_values(match::filter_multiplier<B>(lp, extents{10, 4, 4}))[std::size_t(2 * 4 * 3)] - 0.5f) < 1e-6f);
    CHECK(std::abs(host_values(match::filter_multiplier<B>(hp, extents{10, 4, 4}))[std::size_t(2 * 4 * 3)] - 0.5f) < 1e-6f);
    plain_ctf.voxel_size = 3;
    plain_ctf.ctf = match::contrast_transfer{25000, 300, 0, 0, 0, false};
    const auto c = host_values(match::filter_multiplier<B>(plain_ctf, extents{1, 1, 64}));
    double worst = 0;
    for (index_t k = 0; k <= 32; ++k) {
      const double f = double(k) / (64 * 3.0);
      worst = std::max(worst, std::abs(double(c[std::size_t(k)]) - std::sin(std::numbers::pi * 0.019687 * 25000 * f * f)));
    }
    CHECK(worst < 2e-3);
  }
  // the wedge keeps the components on its tilt axis and drops the beam axis beyond the range
  const auto w = host_values(match::filter_multiplier<B>(wedge_sym, extents{8, 8, 8}));
  CHECK(w[std::size_t((0 * 8 + 3) * 5 + 0)] == 1.0f);  // f along y, the tilt axis
  CHECK(w[std::size_t((0 * 8 + 0) * 5 + 3)] == 0.0f);  // f along z, the beam
  CHECK(w[std::size_t((3 * 8 + 0) * 5 + 0)] == 1.0f);  // f along x, perpendicular: tilt 0
  // bad input
  auto bad = band_hard;
  bad.band = match::bandpass{20, 8, false};
  CHECK_THROWS_WITH_AS(match::filter_multiplier<B>(bad, extents{4, 4, 4}), doctest::Contains("highpass > lowpass"), fusor::value_error);
  bad.band = match::bandpass{-1, 0, true};
  CHECK_THROWS_AS(match::filter_multiplier<B>(bad, extents{4, 4, 4}), fusor::value_error);
  bad = wedge_sym;
  bad.wedge->beam_axis = 1;
  CHECK_THROWS_WITH_AS(match::filter_multiplier<B>(bad, extents{4, 4, 4}), doctest::Contains("two different axes"), fusor::value_error);
  bad.wedge = match::missing_wedge{40, -40, 1, 2};
  CHECK_THROWS_AS(match::filter_multiplier<B>(bad, extents{4, 4, 4}), fusor::value_error);
  bad = ctf;
  bad.ctf->amplitude_contrast = 1;
  CHECK_THROWS_AS(match::filter_multiplier<B>(bad, extents{4, 4, 4}), fusor::value_error);
  bad = band_soft;
  bad.voxel_size = 0;
  CHECK_THROWS_WITH_AS(match::filter_multiplier<B>(bad, extents{4, 4, 4}), doctest::Contains("voxel size"), fusor::value_error);
  bad = white;
  bad.whitening->value = {1.0f};
  CHECK_THROWS_AS(match::filter_multiplier<B>(bad, extents{4, 4, 4}), fusor::value_error);
  CHECK_THROWS_AS(match::filter_multiplier<B>(band_soft, extents{4, 4}), fusor::shape_error);
}

/// The volume filtered through a naive DFT in double: sum over all frequencies, each multiplied by
/// the filter's value there (the filters are even in f, so the rfft half defines them).
inline volume dft_filtered(const volume& v, const extents& s, const match::fourier_filter& flt) {
  using C = std::complex<double>;
  const index_t n = s.numel();
  std::vector<C> spec(static_cast<std::size_t>(n));
  auto phase = [&](index_t a, index_t b, index_t c, index_t i, index_t j, index_t k) {
    return 2 * std::numbers::pi * (double(a * i) / double(s[0]) + double(b * j) / double(s[1]) + double(c * k) / double(s[2]));
  };
  for (index_t a = 0; a < s[0]; ++a)
    for (index_t b = 0; b < s[1]; ++b)
      for (index_t c = 0; c < s[2]; ++c) {
        C total = 0;
        for (index_t i = 0; i < s[0]; ++i)
          for (index_t j = 0; j < s[1]; ++j)
            for (index_t k = 0; k < s[2]; ++k) total += v[std::size_t(at(s, i, j, k))] * std::polar(1.0, -phase(a, b, c, i, j, k));
        const double f[3] = {fftfreq(a, s[0]), fftfreq(b, s[1]), std::abs(fftfreq(c, s[2]))};
        // the rfft half: -f for c past the middle (the filter is even)
        const double g[3] = {fftfreq(c, s[2]) < 0 ? -f[0] : f[0], fftfreq(c, s[2]) < 0 ? -f[1] : f[1], f[2]};
        spec[std::size_t(at(s, a, b, c))] = total * filter_value(flt, s, g);
      }
  volume out(static_cast<std::size_t>(n));
  for (index_t i = 0; i < s[0]; ++i)
    for (index_t j = 0; j < s[1]; ++j)
      for (index_t k = 0; k < s[2]; ++k) {
        C total = 0;
        for (index_t a = 0; a < s[0]; ++a)
          for (index_t b = 0; b < s[1]; ++b)
            for (index_t c = 0; c < s[2]; ++c) total += spec[std::size_t(at(s, a, b, c))] * std::polar(1.0, phase(a, b, c, i, j, k));
        out[std::size_t(at(s, i, j, k))] = total.real() / double(n);
      }
  return out;
}

TEST_CASE("match filters: apply_filter against a naive DFT; whitening recovers a known spectrum") {
  const extents s{5, 4, 6};
  const volume v = random_volume(s, 61);
  match::fourier_filter flt;
  flt.voxel_size = 4;
  flt.band = match::bandpass{10, 30, true};
  flt.wedge = match::missing_wedge{-50, 40, 1, 2};
  CHECK(max_abs_diff(host_values(match::apply_filter(device_volume(v, s), flt)), dft_filtered(v, s, flt)) < 1e-5);
  CHECK(host_values(match::apply_filter(device_volume(v, s), match::fourier_filter{})) == host_values(device_volume(v, s)));

  // white noise shaped by g(f) = 1 / (1 + (f / 0.1)^2): the whitening profile follows 1 / g
  const extents n{48, 48, 48};
  match::fourier_filter shape;
  shape.whitening = match::radial_profile{};
  const index_t shells = 25;
  for (index_t q = 0; q < shells; ++q) {
    const double f = double(q) / double(2 * (shells - 1));
    shape.whitening->value.push_back(float(1 / (1 + (f / 0.1) * (f / 0.1))));
  }
  const auto noise = device_volume(random_volume(n, 62), n);
  const auto coloured = match::apply_filter(noise, shape);
  const auto prof = match::whitening_profile(coloured);
  REQUIRE(prof.value.size() == std::size_t(shells));
  double worst = 0;
  for (index_t q = 3; q < 21; ++q) {
    const double want = double(shape.whitening->value[std::size_t(q)]) / double(shape.whitening->value[20]);
    const double got = double(prof.value[std::size_t(20)]) / double(prof.value[std::size_t(q)]);
    worst = std::max(worst, std::abs(got / want - 1));
  }
  CHECK(worst < 0.1);
  // whitening the coloured noise flattens its spectrum
  match::fourier_filter whiten;
  whiten.whitening = prof;
  const auto flat = match::whitening_profile(match::apply_filter(coloured, whiten));
  double lo = 1e9, hi = 0;
  for (index_t q = 3; q < 21; ++q) {
    lo = std::min(lo, double(flat.value[std::size_t(q)]));
    hi = std::max(hi, double(flat.value[std::size_t(q)]));
  }
  CHECK(hi / lo < 1.25);
  CHECK_THROWS_AS(match::whitening_profile(fusor::zeros<float, B>(extents{4, 4, 4})), fusor::value_error);
}

/// A series of tilts at the given angles, nothing else recorded.
inline match::tilt_weighting tilts_at(std::initializer_list<double> angles) {
  match::tilt_weighting w;
  for (double a : angles) w.series.tilts.push_back({a});
  return w;
}

TEST_CASE("match tilt weight: against the model's definitions for every part, axes and non-cubic boxes") {
  // a realistic series (defocus varying per tilt, astigmatism, dose accumulating) and every option
  match::tilt_weighting real;
  for (int i = 0; i < 21; ++i) {
    const double angle = -60 + 6 * i;
    real.series.tilts.push_back({angle, 3.0 * i, 30000.0 + 900 * i, 28500.0 + 700 * i, 20.0 + 7 * i, i % 3 == 0 ? 30.0 : 0.0});
  }
  real.series.optics = {300, 2.7, 0.08};
  std::vector<match::tilt_weighting> cases;
  cases.push_back(real);
  auto flipped = real;
  flipped.series.correction = match::ctf_correction::phase_flip;
  flipped.cosine = true;
  cases.push_back(flipped);
  auto relion = real;
  relion.exposure = match::exposure_weighting::relion;
  relion.cosine = true;
  relion.ctf = false;
  cases.push_back(relion);
  auto gradient = real;  // the weight of a point off the tomogram's centre, both handednesses
  gradient.defocus_handedness = 1;
  gradient.center_offset = {40, -7, 25};
  cases.push_back(gradient);
  gradient.defocus_handedness = -1;
  cases.push_back(gradient);
  auto other_axes = real;
  other_axes.series.tilt_axis = 0;
  other_axes.series.beam_axis = 1;
  other_axes.series.optics = {200, 2.0, 0.1};
  cases.push_back(other_axes);
  for (auto filter : {match::reconstruction_filter::ram_lak, match::reconstruction_filter::ramp, match::reconstruction_filter::shepp_logan,
                      match::reconstruction_filter::cosine, match::reconstruction_filter::hamming}) {
    auto f = tilts_at({-50, -20, 0, 10, 35, 50});
    f.filter = filter;
    cases.push_back(f);
  }
  for (const auto& w : cases)
    for (const extents& s : {extents{6, 7, 9}, extents{8, 8, 8}, extents{12, 5, 10}, extents{1, 1, 1}}) {
      const double voxel = 4.5;
      const auto h = host_values(match::tilt_weight<B>(w, s, voxel));
      CAPTURE(fusor::to_string(s));
      CHECK(rfft_error(h, s, [&](const double* c) { return tilt_weight_real(w, s, voxel, c); }) < 1e-5);
    }
  // a fourier_filter's tilts multiply its other parts in the same pass
  match::fourier_filter flt;
  flt.voxel_size = 4.5;
  flt.band = match::bandpass{10, 60, true};
  flt.tilts = real;
  const extents s{6, 7, 9};
  const auto both = host_values(match::filter_multiplier<B>(flt, s));
  const auto tilt = host_values(match::tilt_weight<B>(real, s, 4.5));
  flt.tilts.reset();
  const auto band = host_values(match::filter_multiplier<B>(flt, s));
  double worst = 0;
  for (std::size_t i = 0; i < both.size(); ++i) worst = std::max(worst, std::abs(double(both[i]) - double(tilt[i]) * double(band[i])));
  CHECK(worst < 1e-6);
}

TEST_CASE("match tilt weight: one tilt is its plane; a dense range is the missing wedge up to a voxel at its edges") {
  // tilt 0 about y samples the plane k_z = 0, about x with beam y the plane k_y = 0: 1 there, 0 off it
  for (const extents& s : {extents{8, 8, 8}, extents{6, 7, 9}}) {
    const auto z = host_values(match::tilt_weight<B>(tilts_at({0}), s, 2.0));
    auto about_x = tilts_at({0});
    about_x.series.tilt_axis = 0;
    about_x.series.beam_axis = 1;
    const auto y = host_values(match::tilt_weight<B>(about_x, s, 2.0));
    const index_t hk = s[2] / 2 + 1;
    std::size_t wrong = 0;
    for (index_t i = 0; i < s[0]; ++i)
      for (index_t j = 0; j < s[1]; ++j)
        for (index_t k = 0; k < hk; ++k) {
          const std::size_t p = std::size_t((i * s[1] + j) * hk + k);
          wrong += z[p] != (k == 0 ? 1.0f : 0.0f);
          wrong += y[p] != (j == 0 ? 1.0f : 0.0f);
        }
    CAPTURE(fusor::to_string(s));
    CHECK(wrong == 0);
  }
  // -60..60 in 1° steps: 1 wherever the wedge keeps a component; beyond it only within one voxel
  // of the last tilts' planes (distance R sin(|elevation| - 60°) < 1 voxel at radius R voxels)
  match::tilt_weighting dense;
  for (int a = -60; a <= 60; ++a) dense.series.tilts.push_back({double(a)});
  match::fourier_filter wedge;
  wedge.wedge = match::missing_wedge{-60, 60, 1, 2};
  const index_t n = 16, hk = n / 2 + 1;
  const auto got = host_values(match::tilt_weight<B>(dense, extents{n, n, n}, 1.0));
  const auto want = host_values(match::filter_multiplier<B>(wedge, extents{n, n, n}));
  std::size_t edge = 0, far_off = 0, inside_short = 0;
  for (index_t i = 0; i < n; ++i)
    for (index_t j = 0; j < n; ++j)
      for (index_t k = 0; k < hk; ++k) {
        const std::size_t p = std::size_t((i * n + j) * hk + k);
        if (want[p] == 1.0f) {
          inside_short += std::abs(got[p] - 1.0f) > 1e-6f;
          continue;
        }
        if (got[p] == 0.0f) continue;
        ++edge;
        const double cp = fftfreq(i, n) * double(n), cb = double(k);  // voxels
        const double elevation = std::abs(std::atan2(cb, std::abs(cp))) * 180 / std::numbers::pi;
        far_off += std::hypot(cp, cb) * std::sin((elevation - 60) * std::numbers::pi / 180) >= 1.0 + 1e-9;
      }
  CHECK(inside_short == 0);
  CHECK(far_off == 0);
  CHECK(edge > 0);  // the slabs do reach past the last tilts' planes, by less than a voxel (far_off)
}

TEST_CASE("match tilt weight: CTF zeros at the analytic frequencies; the exposure filter as published; astigmatism turns with its angle") {
  // one tilt at 0 (the plane k_z = 0), along x: the CTF's sign changes bracket exactly the roots of
  // pi lambda f^2 (Δf - Cs lambda^2 f^2 / 2) + asin(A) = n pi, found here by bisection in double
  // (2 µm at 4 Å per voxel: six zeros, four samples or more between two)
  {
    auto w = tilts_at({0});
    const double defocus = 20000, voxel = 4.0, lambda = match::electron_wavelength(300), cs = 2.7e7;
    w.series.tilts[0].defocus_u = w.series.tilts[0].defocus_v = defocus;
    const index_t n = 96;
    const auto h = host_values(match::tilt_weight<B>(w, extents{n, 1, 2}, voxel));
    const auto phase = [&](double f) { return std::numbers::pi * lambda * f * f * (defocus - 0.5 * cs * lambda * lambda * f * f) + std::asin(0.07); };
    std::vector<double> roots;
    const double top = 0.5 / voxel;
    for (int z = 1; z < 200; ++z) {  // phase rises from asin(A) through z pi for the first zeros
      double lo = 0, hi = top;
      if ((phase(hi) - z * std::numbers::pi) < 0) break;
      for (int it = 0; it < 100; ++it) {
        const double mid = 0.5 * (lo + hi);
        (phase(mid) < z * std::numbers::pi ? lo : hi) = mid;
      }
      roots.push_back(lo);
    }
    REQUIRE(roots.size() >= 5);
    std::vector<double> crossings;  // the frequency interval of each sign change along x
    for (index_t i = 1; i <= n / 2; ++i) {
      const float a = h[std::size_t((i - 1) * 2)], b = h[std::size_t(i * 2)];
      if ((a > 0) != (b > 0)) crossings.push_back(double(i));
    }
    CHECK(crossings.size() == roots.size());
    for (std::size_t z = 0; z < std::min(crossings.size(), roots.size()); ++z) {
      const double at_index = roots[z] * voxel * double(n);  // the root in voxels along x
      CHECK(at_index >= crossings[z] - 1);
      CHECK(at_index <= crossings[z]);
    }
  }
  // Grant & Grigorieff's exposure filter at 0.05, 0.1 and 0.2 / Å after 20 e/Å² (their formula
  // evaluated independently: 0.772461, 0.492975, 0.208706)
  {
    auto w = tilts_at({0});
    w.series.tilts[0].dose = 20;
    const auto h = host_values(match::tilt_weight<B>(w, extents{40, 1, 2}, 2.5));
    CHECK(std::abs(h[std::size_t(5 * 2)] - 0.772461f) < 2e-6f);
    CHECK(std::abs(h[std::size_t(10 * 2)] - 0.492975f) < 2e-6f);
    CHECK(std::abs(h[std::size_t(20 * 2)] - 0.208706f) < 2e-6f);
    CHECK(h[0] == 1.0f);  // nothing lost at f = 0
    w.exposure = match::exposure_weighting::none;
    CHECK(host_values(match::tilt_weight<B>(w, extents{40, 1, 2}, 2.5))[std::size_t(20 * 2)] == 1.0f);
  }
  // astigmatism: the pattern with the U axis at 30° + 90°, read at each point turned by 90° about
  // the beam, is the pattern at 30° (odd sides: every turned point is on the grid)
  {
    auto at30 = tilts_at({0});
    at30.series.tilts[0] = {0, 0, 26000, 18000, 30, 0};
    auto at120 = at30;
    at120.series.tilts[0].astigmatism_angle = 120;
    const index_t n = 15, hk = 2;
    const auto a = host_values(match::tilt_weight<B>(at30, extents{n, n, 2}, 3.0));
    const auto b = host_values(match::tilt_weight<B>(at120, extents{n, n, 2}, 3.0));
    double worst = 0, differs = 0;
    for (index_t i = 0; i < n; ++i)
      for (index_t j = 0; j < n; ++j) {
        const index_t ti = (n - j) % n, tj = i;  // (x, y) -> (-y, x)
        worst = std::max(worst, std::abs(double(a[std::size_t((i * n + j) * hk)]) - double(b[std::size_t((ti * n + tj) * hk)])));
        differs = std::max(differs, std::abs(double(a[std::size_t((i * n + j) * hk)]) - double(b[std::size_t((i * n + j) * hk)])));
      }
    CHECK(worst < 1e-6);
    CHECK(differs > 0.5);  // the astigmatism is there to turn
  }
  // a cosine weight on a 45° tilt: cos 45° on its plane (k_x = k_z)
  {
    auto w = tilts_at({45});
    w.cosine = true;
    const auto h = host_values(match::tilt_weight<B>(w, extents{8, 8, 8}, 1.0));
    CHECK(std::abs(h[std::size_t((3 * 8 + 2) * 5 + 3)] - float(std::sqrt(0.5))) < 1e-6f);
  }
}

TEST_CASE("match tilt series: validation names the tilt and the field; bad weights and shapes") {
  auto good = tilts_at({-30, 0, 30});
  for (auto& t : good.series.tilts) t.defocus_u = t.defocus_v = 30000;
  CHECK_NOTHROW(match::validate_tilt_series(good.series));
  const auto fails = [&](auto change, const char* says) {
    auto w = good;
    change(w);
    CAPTURE(says);
    CHECK_THROWS_WITH_AS(match::validate_tilt_series(w.series), doctest::Contains(says), fusor::value_error);
    // and before any work in the weight itself
    CHECK_THROWS_AS(match::tilt_weight<B>(w, extents{4, 4, 4}, 1.0), fusor::value_error);
  };
  fails([](auto& w) { w.series.tilts[1].defocus_u = -31000; }, "tilt 1 has defocus U -31000 Å; expected a positive underfocus");
  fails([](auto& w) { w.series.tilts[2].defocus_u = w.series.tilts[2].defocus_v = 0; },
        "tilt 2 has no defocus U while other tilts have one");
  fails([](auto& w) { w.series.tilts[0].angle = 95; }, "tilt 0 has angle 95°; expected [-90, 90]");
  fails([](auto& w) { w.series.tilts[2].angle = NAN; }, "tilt 2 has angle nan");
  fails([](auto& w) { w.series.tilts[1].dose = -1; }, "tilt 1 has dose -1 e/Å²");
  fails([](auto& w) { w.series.tilts[0].phase_shift = INFINITY; }, "tilt 0 has phase shift inf");
  fails([](auto& w) { w.series.tilts.clear(); }, "at least one tilt");
  fails([](auto& w) { w.series.beam_axis = 1; }, "two different axes");
  fails([](auto& w) { w.series.optics.amplitude_contrast = 1; }, "amplitude contrast 1;");
  fails([](auto& w) { w.series.optics.voltage_kv = 0; }, "voltage 0 kV");
  fails([](auto& w) { w.series.optics.cs_mm = -1; }, "spherical aberration -1 mm");
  fails([](auto& w) { w.series.pixel_size = -2; }, "pixel size -2");
  auto hand = good;
  hand.defocus_handedness = 2;
  CHECK_THROWS_WITH_AS(match::tilt_weight<B>(hand, extents{4, 4, 4}, 1.0), doctest::Contains("handedness is -1, 0 or 1, got 2"),
                       fusor::value_error);
  auto one = tilts_at({10, 10});
  one.filter = match::reconstruction_filter::ramp;
  CHECK_THROWS_WITH_AS(match::tilt_weight<B>(one, extents{4, 4, 4}, 1.0), doctest::Contains("two different tilt angles"), fusor::value_error);
  CHECK_THROWS_WITH_AS(match::tilt_weight<B>(good, extents{4, 4, 4}, 0.0), doctest::Contains("voxel size"), fusor::value_error);
  CHECK_THROWS_AS(match::tilt_weight<B>(good, extents{4, 4}, 1.0), fusor::shape_error);
  CHECK(match::tilt_weight<B>(good, extents{0, 4, 4}, 1.0).size() == 0);
}

TEST_CASE("match scan tiles: a tilt series' defocus gradient gives each tile the defocus at its centre") {
  // four tiles (two along x, the tilts' third axis, two along z, the beam), each scored with the
  // weight at its centre: against the direct sums with that tile's filter on that tile's voxels
  const extents n{10, 8, 10}, m{5, 4, 5}, tile{5, 8, 5};
  const volume f = random_volume(n, 81), g = random_volume(m, 82);
  const auto dmask = match::sphere_mask<B>(m, 1.8);
  const auto hm = host_values(dmask);
  const volume mask(hm.begin(), hm.end());
  const auto rots = few_rotations();
  match::scan_options o;
  o.tile = tile;
  o.template_filter.voxel_size = 30;  // coarse voxels: a tile's centre lies 75 Å from the tomogram's
  match::tilt_weighting w;
  for (int t = -60; t <= 60; t += 20) w.series.tilts.push_back({double(t), 0, 6000.0, 5800.0, 15, 0});
  w.defocus_handedness = -1;
  o.template_filter.tilts = w;
  const auto res = match::scan(device_volume(f, n), device_volume(g, m), dmask, rots, match::score::flc_spherical_mask, o);
  CHECK(res.tile == tile);
  const auto best = host_values(res.best_score);
  double worst = 0, scale = 0, without = 0;
  for (index_t a0 = 0; a0 < n[0]; a0 += tile[0])
    for (index_t a2 = 0; a2 < n[2]; a2 += tile[2]) {
      match::fourier_filter here = o.template_filter;
      here.tilts->center_offset = {double(a0) + 2 - 4.5, 0, double(a2) + 2 - 4.5};  // the tile's centre from the target's
      const auto ref = reference_scores(match::score::flc_spherical_mask, f, n, g, mask, m, rots, true, &here);
      match::fourier_filter centre = o.template_filter;
      centre.tilts->defocus_handedness = 0;
      const auto flat = reference_scores(match::score::flc_spherical_mask, f, n, g, mask, m, rots, true, &centre);
      for (index_t i = a0; i < a0 + tile[0]; ++i)
        for (index_t j = 0; j < n[1]; ++j)
          for (index_t k = a2; k < a2 + tile[2]; ++k) {
            const std::size_t p = std::size_t(at(n, i, j, k));
            double top = -INFINITY, flat_top = -INFINITY;
            for (std::size_t r = 0; r < ref.size(); ++r) {
              top = std::max(top, ref[r][p]);
              flat_top = std::max(flat_top, flat[r][p]);
            }
            worst = std::max(worst, std::abs(double(best[p]) - top));
            without = std::max(without, std::abs(double(best[p]) - flat_top));
            scale = std::max(scale, std::abs(top));
          }
    }
  CHECK(worst <= 1e-5 * std::max(1.0, scale));
  CHECK(without > 1e-3);  // the gradient changed the scores: the centre's defocus alone does not give them
}

TEST_CASE("match tilt simulation: projections keep a blob's mass and place it where the geometry says; WBP from a dense range; the series") {
  // a blob (sigma 1.5 voxels) at (13, 4, 6) of a 24 x 9 x 19 volume, projected at five tilts: each
  // image holds the blob's mass, centred on u = (x - cx) cos t + (z - cz) sin t, on row y = 4
  const extents n{24, 9, 19};
  std::vector<double> v(std::size_t(n.numel()));
  double mass = 0;
  for (index_t i = 0; i < n[0]; ++i)
    for (index_t j = 0; j < n[1]; ++j)
      for (index_t k = 0; k < n[2]; ++k) {
        const double d2 = (i - 13.0) * (i - 13.0) + (j - 4.0) * (j - 4.0) + (k - 6.0) * (k - 6.0);
        mass += v[std::size_t(at(n, i, j, k))] = std::exp(-d2 / (2 * 1.5 * 1.5));
      }
  const std::vector<double> angles{-60, -25, 0, 40, 75};
  const auto images = host_values(match::project_tilts(device_volume(v, n), angles));
  REQUIRE(images.size() == std::size_t(5 * n[0] * n[1]));
  for (std::size_t t = 0; t < angles.size(); ++t) {
    double m = 0, mu = 0, row = 0;
    for (index_t i = 0; i < n[0]; ++i)
      for (index_t j = 0; j < n[1]; ++j) {
        const double x = images[t * std::size_t(n[0] * n[1]) + std::size_t(i * n[1] + j)];
        m += x;
        mu += x * (double(i) - 0.5 * double(n[0] - 1));
        row += x * double(j);
      }
    const double a = angles[t] * std::numbers::pi / 180;
    CAPTURE(angles[t]);
    CHECK(std::abs(m / mass - 1) < 0.01);
    CHECK(std::abs(mu / m - ((13 - 11.5) * std::cos(a) + (6 - 9.0) * std::sin(a))) < 0.05);
    CHECK(std::abs(row / m - 4) < 1e-3);
  }
  // every half degree from -90 to 90, no CTF: the back-projection is the blob again (up to scale)
  match::tilt_series dense;
  std::vector<double> every;
  for (int a = -180; a < 180; ++a) {
    dense.tilts.push_back({a / 2.0});
    every.push_back(a / 2.0);
  }
  const extents b{32, 6, 30};
  std::vector<double> bv(std::size_t(b.numel()));
  for (index_t i = 0; i < b[0]; ++i)
    for (index_t j = 0; j < b[1]; ++j)
      for (index_t k = 0; k < b[2]; ++k)
        bv[std::size_t(at(b, i, j, k))] = std::exp(-((i - 14.0) * (i - 14.0) + (j - 3.0) * (j - 3.0) + (k - 17.0) * (k - 17.0)) / 8.0);
  const auto rec = host_values(match::weighted_back_projection(match::project_tilts(device_volume(bv, b), every), dense, b, 1.0));
  double ma = 0, mb = 0;
  for (std::size_t i = 0; i < bv.size(); ++i) {
    ma += bv[i] / double(bv.size());
    mb += double(rec[i]) / double(bv.size());
  }
  double sab = 0, saa = 0, sbb = 0;
  for (std::size_t i = 0; i < bv.size(); ++i) {
    sab += (bv[i] - ma) * (double(rec[i]) - mb);
    saa += (bv[i] - ma) * (bv[i] - ma);
    sbb += (double(rec[i]) - mb) * (double(rec[i]) - mb);
  }
  CHECK(sab / std::sqrt(saa * sbb) > 0.99);
  CHECK_THROWS_WITH_AS(match::weighted_back_projection(match::project_tilts(device_volume(bv, b), every), dense, extents{33, 6, 30}, 1.0),
                       doctest::Contains("expected images of shape (360, 33, 6)"), fusor::shape_error);
  // the series a simulation records: dose-symmetric accumulation, defocus within the spread
  match::tilt_simulation sim;
  sim.angles = {-6, -3, 0, 3, 6};
  sim.dose_per_tilt = 3;
  sim.defocus = 30000;
  sim.defocus_spread = 5000;
  sim.astigmatism = 400;
  const auto series = match::simulated_series(sim);
  REQUIRE(series.tilts.size() == 5);
  const double want[5] = {12, 6, 0, 3, 9};  // recorded 0, +3, -3, +6, -6
  for (std::size_t t = 0; t < 5; ++t) {
    CHECK(series.tilts[t].dose == want[t]);
    CHECK(series.tilts[t].defocus_u - series.tilts[t].defocus_v == doctest::Approx(400));
    CHECK(std::abs(0.5 * (series.tilts[t].defocus_u + series.tilts[t].defocus_v) - 30000) <= 5000);
  }
  sim.dose_symmetric = false;
  CHECK(match::simulated_series(sim).tilts[4].dose == 12);
  sim.defocus_spread = 30000;
  CHECK_THROWS_WITH_AS(match::simulated_series(sim), doctest::Contains("defocus - defocus_spread > 0"), fusor::value_error);
}

TEST_CASE("match tilt simulation: deterministic by seed; a tilt-weighted search finds every copy with its rotation") {
  // an ellipsoid with two side lobes, 17^3: no rotation but the identity maps it near itself
  const index_t t = 17;
  const extents ms{t, t, t};
  match::mask_options body, lobe, other;
  body.edge = lobe.edge = other.edge = match::mask_edge::gaussian(1.0);
  lobe.center = match::vec3{8, 12, 9};
  other.center = match::vec3{11, 6, 6};
  const auto templ = fusor::array<float, B>(match::ellipsoid_mask<B>(ms, {5, 3, 2}, body) + 0.6f * match::sphere_mask<B>(ms, 1.5, lobe) +
                                            0.8f * match::sphere_mask<B>(ms, 1.2, other));
  match::tilt_simulation s;  // ±60° in 3° steps, defocus 2–5 µm per tilt, 3 e/Å² per tilt, 10 Å voxels
  s.shape = {32, 30, 24};
  s.copies = 1;
  const auto one = match::simulate_tilt_series(templ, s), again = match::simulate_tilt_series(templ, s);
  CHECK(host_values(one.tomogram) == host_values(again.tomogram));
  s.seed = 2;
  CHECK(host_values(match::simulate_tilt_series(templ, s).tomogram) != host_values(one.tomogram));
  s.copies = 50;
  CHECK_THROWS_WITH_AS(match::simulate_tilt_series(templ, s), doctest::Contains("do not fit"), fusor::value_error);

  // 96 x 96 x 64 voxels, four copies: every one found at the one-false-positive threshold, within
  // a voxel, its rotation within the search set's 30° step of the planted one
  s.shape = {96, 96, 64};
  s.copies = 4;
  s.seed = 1;
  const auto sim = match::simulate_tilt_series(templ, s);
  match::mask_options soft;
  soft.edge = match::mask_edge::gaussian(1.0);
  const auto mask = match::sphere_mask<B>(ms, 7.0, soft);
  const auto rots = match::uniform_rotations(30);
  match::scan_options o;
  o.statistics = true;
  o.template_filter.voxel_size = s.voxel_size;
  o.template_filter.tilts = match::tilt_weighting{};
  o.template_filter.tilts->series = sim.series;
  const auto res = match::scan(sim.tomogram, templ, mask, rots, match::score::flc_spherical_mask, o);
  match::peak_options po;
  po.min_distance = double(t / 2);
  po.margin = {t / 2, t / 2, t / 2};
  po.false_positives = 1.0;
  const auto peaks = match::find_peaks(res, rots, po);
  CHECK(peaks.size() == sim.positions.size());
  for (std::size_t c = 0; c < sim.positions.size(); ++c) {
    const auto& p = sim.positions[c];
    bool found = false;
    for (const auto& k : peaks) {
      const double d = std::hypot(double(k.position[0] - p[0]), double(k.position[1] - p[1]), double(k.position[2] - p[2]));
      if (d <= 1.8) {
        found = true;
        CHECK(match::distance(k.orientation, sim.rotations[c]) <= 30.0);
      }
    }
    CAPTURE(c);
    CHECK(found);
  }
}

TEST_CASE("match scan: target and template filters against the direct sums") {
  const extents n{9, 8, 10}, m{5, 4, 5};
  const volume f = random_volume(n, 71), g = random_volume(m, 72);
  const auto dmask = match::sphere_mask<B>(m, 1.8);
  const auto hm = host_values(dmask);
  const volume mask(hm.begin(), hm.end());
  match::scan_options o;
  o.target_filter.voxel_size = o.template_filter.voxel_size = 5;
  o.target_filter.band = match::bandpass{12, 40, true};
  o.template_filter.wedge = match::missing_wedge{-40, 55, 1, 2};
  o.template_filter.ctf = match::contrast_transfer{8000, 300, 2.7, 0.1, 0, true};
  const auto rots = few_rotations();
  const volume ff = dft_filtered(f, n, o.target_filter);
  // the template weighted by a wedge and one CTF, then by a tilt series' weight (tilt_weight.hpp)
  match::fourier_filter series_weighted;
  series_weighted.voxel_size = 5;
  series_weighted.tilts = match::tilt_weighting{};
  for (int t = -45; t <= 57; t += 17) series_weighted.tilts->series.tilts.push_back({double(t), 2.0 * (t + 45), 9000.0 + 20 * t, 8500.0});
  for (const match::fourier_filter& template_filter : {o.template_filter, series_weighted}) {
    o.template_filter = template_filter;
    for (const auto kind : {match::score::cc, match::score::flc_spherical_mask, match::score::flc}) {
      CAPTURE(match::to_string(kind));
      const auto res = match::scan(device_volume(f, n), device_volume(g, m), dmask, rots, kind, o);
      // the reference: the filtered target, each rotated template filtered in its box by a naive DFT
      const auto ref = reference_scores(kind, ff, n, g, mask, m, rots, true, &o.template_filter);
      const auto [worst, scale] = best_map_error(host_values(res.best_score), ref);
      CHECK(worst <= 1e-5 * std::max(1.0, scale));
    }
  }
}

// ---- peak calling ---------------------------------------------------------------------------------

namespace peakref {
struct found {
  index_t p;
  float score;
};
// every voxel checked against its whole cube by a plain loop, then the greedy distance rule by
// comparing with every peak taken
inline std::vector<found> peaks(const std::vector<float>& v, const extents& s, const match::peak_options& o,
                                double threshold) {
  const index_t r = std::max<index_t>(1, index_t(std::floor(o.min_distance)));
  const auto value = [&](index_t p) { return std::isnan(v[std::size_t(p)]) ? -INFINITY : v[std::size_t(p)]; };
  std::vector<found> c;
  for (index_t i = o.margin[0]; i < s[0] - o.margin[0]; ++i)
    for (index_t j = o.margin[1]; j < s[1] - o.margin[1]; ++j)
      for (index_t k = o.margin[2]; k < s[2] - o.margin[2]; ++k) {
        const float x = value(at(s, i, j, k));
        bool top = x > -INFINITY && double(x) >= threshold;
        for (index_t a = std::max<index_t>(0, i - r); a <= std::min(s[0] - 1, i + r) && top; ++a)
          for (index_t b = std::max<index_t>(0, j - r); b <= std::min(s[1] - 1, j + r) && top; ++b)
            for (index_t e = std::max<index_t>(0, k - r); e <= std::min(s[2] - 1, k + r) && top; ++e)
              if (value(at(s, a, b, e)) > x) top = false;
        if (top) c.push_back({at(s, i, j, k), x});
      }
  // by score, ties in voxel order (c was filled in voxel order; a sort on both keys, since
  // clang-19 with libstdc++ 12 warns about stable_sort's deprecated temporary buffer)
  std::sort(c.begin(), c.end(), [](const found& a, const found& b) { return a.score > b.score || (a.score == b.score && a.p < b.p); });
  std::vector<found> out;
  for (const found& f : c) {
    if (index_t(out.size()) == o.max_peaks) break;
    bool apart = true;
    for (const found& q : out) {
      const double d0 = double(f.p / (s[1] * s[2]) - q.p / (s[1] * s[2])), d1 = double(f.p / s[2] % s[1] - q.p / s[2] % s[1]),
                   d2 = double(f.p % s[2] - q.p % s[2]);
      if (d0 * d0 + d1 * d1 + d2 * d2 < o.min_distance * o.min_distance) apart = false;
    }
    if (apart) out.push_back(f);
  }
  return out;
}
}  // namespace peakref

TEST_CASE("match peaks: find_peaks against a brute-force cube search, every size and option") {
  const extents shapes[] = {{1, 1, 1}, {1, 1, 9}, {7, 1, 3}, {5, 6, 7}, {17, 9, 33}, {31, 23, 2}};
  for (const extents& s : shapes) {
    // a smooth-ish random map with plateaus (values rounded to a coarse grid), a NaN and a -inf
    volume raw = random_volume(s, 77 + std::uint64_t(s.numel()));
    std::vector<float> v(raw.size());
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = float(std::round(raw[i] * 4.0) / 4.0);
    if (v.size() > 3) {
      v[1] = NAN;
      v[2] = -INFINITY;
    }
    volume as_double(v.begin(), v.end());
    const auto map = device_volume(as_double, s);
    for (const double md : {0.0, 1.0, 1.5, 2.0, 3.7}) {
      for (const index_t margin : {index_t(0), index_t(1), index_t(3)}) {
        for (const index_t k : {index_t(0), index_t(1), index_t(5), index_t(1000)}) {
          match::peak_options o;
          o.min_distance = md;
          o.margin = {margin, margin, margin == 3 ? 0 : margin};
          o.max_peaks = k;
          if (margin == 1) o.min_score = 0.25;
          CAPTURE(fusor::to_string(s));
          CAPTURE(md);
          CAPTURE(margin);
          CAPTURE(k);
          const auto got = match::find_peaks(map, o);
          const auto want = peakref::peaks(v, s, o, o.min_score ? *o.min_score : -INFINITY);
          REQUIRE(got.size() == want.size());
          for (std::size_t i = 0; i < got.size(); ++i) {
            CHECK(at(s, got[i].position[0], got[i].position[1], got[i].position[2]) == want[i].p);
            CHECK(got[i].score == want[i].score);
            CHECK(got[i].rotation == -1);
          }
        }
      }
    }
  }
}

TEST_CASE("match peaks: erfc_inverse against published values; the false-positive threshold") {
  // one-sided Gaussian tails: P(Z > z) = erfc(z / sqrt 2) / 2
  struct tail {
    double p, z;
  };
  for (const tail t : {tail{0.5, 0.0}, tail{0.025, 1.959963984540054}, tail{1e-6, 4.753424308822899},
                       tail{1e-9, 5.997807015007686}, tail{1e-15, 7.941345326170997}}) {
    CAPTURE(t.p);
    CHECK(std::sqrt(2.0) * match::erfc_inverse(2.0 * t.p) == doctest::Approx(t.z).epsilon(1e-12));
  }
  // (below -3 the round trip itself loses digits: erfc(x) is 2 minus a tail the double cannot hold)
  for (double x = -3.0; x <= 5.5; x += 0.37) {
    CAPTURE(x);
    CHECK(match::erfc_inverse(std::erfc(x)) == doctest::Approx(x).epsilon(1e-11));
  }
  CHECK_THROWS_AS(match::erfc_inverse(0.0), fusor::value_error);
  CHECK_THROWS_AS(match::erfc_inverse(2.0), fusor::value_error);
  CHECK_THROWS_AS(match::erfc_inverse(NAN), fusor::value_error);

  const match::score_statistics st{1000000, 0.01, 0.05};
  // one false positive in a million scores: the 1e-6 tail
  CHECK(match::false_positive_threshold(st, 1.0) == doctest::Approx(0.01 + 0.05 * 4.753424308822899).epsilon(1e-12));
  CHECK_THROWS_AS(match::false_positive_threshold(st, 0.0), fusor::value_error);
  CHECK_THROWS_AS(match::false_positive_threshold(st, 600000.0), fusor::value_error);
  CHECK_THROWS_AS(match::false_positive_threshold(match::score_statistics{}, 1.0), fusor::value_error);
}

TEST_CASE("match peaks: a scan's statistics, and its peaks are the planted copies with their rotations") {
  const extents n{36, 34, 30}, m{9, 9, 9};
  const volume g = blob_with_lobe(m, {6, 2, 1.2}, 2, -1.5, 1.2);
  const auto rots = match::uniform_rotations(60.0);
  struct copy {
    std::size_t rotation;
    index_t c[3];
  };
  const copy planted[2] = {{3, {10, 9, 8}}, {rots.size() - 2, {25, 24, 20}}};
  volume f = random_volume(n, 5);
  for (double& x : f) x *= 0.05;
  for (const copy& p : planted) plant(f, n, g, m, rots[p.rotation], p.c);
  const auto target = device_volume(f, n), templ = device_volume(g, m);
  const auto mask = match::sphere_mask<B>(m, 4.0);
  // estimated plans on one thread per transform, in the scan and in the reference scans alike: the
  // same FFT plans give the same scores bit for bit, so only the order of the double sums differs
  // (measured plans may differ between calls, and with them the scores' last bits); one rotation
  // per batch, as in the reference scans (cpu's default pairs of rotations share a complex
  // transform, whose rounding differs in the last bits)
  match::scan_options so;
  so.statistics = true;
  so.threads = 2;
  so.batch = 1;
  so.planning = fusor::fft::planning::estimate;
  match::scan_options one;
  one.threads = 1;
  one.planning = fusor::fft::planning::estimate;
  const auto res = match::scan(target, templ, mask, rots, match::score::flc_spherical_mask, so);

  // the statistics against every rotation's map, scanned one at a time and summed here in double:
  // FLCSphericalMask's scores are formed from precomputed maps as they are read, FLC's are
  // written over the correlation first (scores.hpp's two forms of a score map)
  const auto flc = match::scan(target, templ, mask, rots, match::score::flc, so);
  for (const match::score kind : {match::score::flc_spherical_mask, match::score::flc}) {
    CAPTURE(match::to_string(kind));
    const auto& r = kind == match::score::flc ? flc : res;
    double s1 = 0.0, s2 = 0.0;
    for (const auto& q : rots) {
      const auto map = host_values(match::scan(target, templ, mask, std::vector<match::quaternion>{q}, kind, one).best_score);
      for (float x : map) {
        s1 += double(x);
        s2 += double(x) * double(x);
      }
    }
    const double count = double(n.numel()) * double(rots.size()), mean = s1 / count;
    CHECK(r.statistics.count == n.numel() * std::int64_t(rots.size()));
    CHECK(std::abs(r.statistics.mean - mean) <= 1e-9 * r.statistics.stddev);  // a mean near 0: relative to the spread
    CHECK(r.statistics.stddev == doctest::Approx(std::sqrt(s2 / count - mean * mean)).epsilon(1e-9));
    CHECK(r.statistics.stddev > 0.0);
  }
  CHECK(match::scan(target, templ, mask, rots, match::score::flc_spherical_mask).statistics.count == 0);

  // one expected false positive: only the two copies pass
  match::peak_options po;
  po.min_distance = 4.0;
  po.false_positives = 1.0;
  const auto found = match::find_peaks(res, rots, po);
  REQUIRE(found.size() == 2);
  const double t = match::false_positive_threshold(res.statistics, 1.0);
  for (const auto& pk : found) {
    CAPTURE(pk.position[0]);
    CHECK(double(pk.score) >= t);
    const copy& p = pk.position[0] == planted[0].c[0] ? planted[0] : planted[1];
    CHECK(pk.position == std::array<index_t, 3>{p.c[0], p.c[1], p.c[2]});
    CHECK(pk.rotation == std::int32_t(p.rotation));
    CHECK(match::distance(pk.orientation, rots[p.rotation]) < 1e-12);
    const auto e = match::to_euler(rots[p.rotation], match::euler_convention::zyz_intrinsic);
    for (int a = 0; a < 3; ++a) CHECK(pk.euler[std::size_t(a)] == doctest::Approx(e[std::size_t(a)]).epsilon(1e-12));
  }
  CHECK(found[0].score >= found[1].score);
  // with the ZXZ convention the same rotation, other angles
  po.convention = match::euler_convention::zxz_intrinsic;
  const auto zxz = match::find_peaks(res, rots, po);
  REQUIRE(zxz.size() == 2);
  CHECK(match::distance(match::from_euler(zxz[0].euler, po.convention), found[0].orientation) < 1e-9);

  // bad input
  match::peak_options bad;
  bad.max_peaks = -1;
  CHECK_THROWS_AS(match::find_peaks(res, rots, bad), fusor::value_error);
  bad = {};
  bad.min_distance = NAN;
  CHECK_THROWS_AS(match::find_peaks(res, rots, bad), fusor::value_error);
  bad = {};
  bad.margin = {0, -1, 0};
  CHECK_THROWS_AS(match::find_peaks(res, rots, bad), fusor::value_error);
  bad = {};
  bad.false_positives = 1.0;
  CHECK_THROWS_AS(match::find_peaks(res.best_score, bad), fusor::value_error);  // a bare map has no statistics
  CHECK_THROWS_AS(match::find_peaks(match::scan(target, templ, mask, rots, match::score::flc_spherical_mask), rots, bad),
                  fusor::value_error);  // scanned without statistics
  const std::vector<match::quaternion> too_few(rots.begin(), rots.begin() + 2);
  CHECK_THROWS_AS(match::find_peaks(res, too_few, po), fusor::value_error);
  CHECK_THROWS_AS(match::find_peaks(fusor::zeros<float, B>(extents{4, 4}), match::peak_options{}), fusor::shape_error);
}

TEST_CASE("match mrc: a volume on the backend written and read back, whole and a box") {
  const extents s{9, 7, 5};
  const volume v = random_volume(s, 8);
  const auto a = device_volume(v, s);
  const auto path = std::filesystem::temp_directory_path() /
                    ("fusor_match_mrc_" + std::string(fusor::backend_traits<B>::name) + "_" + std::to_string(::getpid()) + ".mrc");
  match::mrc_write_options o;
  o.voxel_size = {2.0, 2.5, 3.0};
  match::write_mrc(path, a, o);
  const auto back = match::read_mrc<B>(path);
  CHECK(back.data.shape() == s);
  CHECK(host_values(back.data) == host_values(a));
  CHECK(back.voxel_size == std::array<double, 3>{2.0, 2.5, 3.0});
  const match::mrc_file f(path);
  const auto box = host_values(f.read<B>({2, 1, 3}, extents{4, 5, 2}));
  const auto all = host_values(a);
  bool same = true;
  for (index_t i = 0; i < 4; ++i)
    for (index_t j = 0; j < 5; ++j)
      for (index_t k = 0; k < 2; ++k) same = same && box[std::size_t((i * 5 + j) * 2 + k)] == all[std::size_t(at(s, i + 2, j + 1, k + 3))];
  CHECK(same);
  std::filesystem::remove(path);
}

}  // namespace matchbody
