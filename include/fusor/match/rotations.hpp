#pragma once
// Rotations for template matching, on the host in double: unit quaternions, 3 x 3 matrices, Euler
// angles in named conventions, axis-angle vectors and the geodesic distance; deterministic
// near-uniform rotation sets for an angular step, their covering radius, symmetry reduction (Cn,
// Dn) and cone-restricted sets.
//
// Conventions, written once for all of fusor::match:
// - a rotation is active: it moves the object, v' = R v, for column vectors (x, y, z);
// - a quaternion is (w, x, y, z) = (cos(t/2), sin(t/2) u) for the rotation by t about the unit axis
//   u; q and -q are the same rotation (canonical() picks w >= 0); a * b rotates by b, then by a;
// - angles are in degrees at the interface (RELION, pyTME and scipy write degrees);
// - Euler angles (a, b, c):
//     zyz_intrinsic: R = Rz(a) Ry(b) Rz(c), scipy's from_euler("ZYZ"), RELION's (rot, tilt, psi);
//                    RELION's own matrix A is the transpose (it rotates coordinates, not the object)
//     zyz_extrinsic: R = Rz(c) Ry(b) Rz(a), scipy's from_euler("zyz") (pyTME hands its `seq` to
//                    scipy: lowercase "zyz" is this, uppercase "ZYZ" zyz_intrinsic)
//     zxz_intrinsic: R = Rz(a) Rx(b) Rz(c)      zxz_extrinsic: R = Rz(c) Rx(b) Rz(a)
//   with Rz(t) = [[cos t, -sin t, 0], [sin t, cos t, 0], [0, 0, 1]] and likewise about x and y.
//   to_euler returns b in [0, 180] and a, c in (-180, 180]; where b is 0 or 180 only a sum or
//   difference of a and c is defined, and c is 0 (scipy sets the third angle to 0 too).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <string>
#include <string_view>
#include <vector>

#include "../core/error.hpp"
#include "../core/random.hpp"

namespace fusor::match {

using vec3 = std::array<double, 3>;
/// Row-major: m[r][c]. Acts on column vectors.
using matrix3 = std::array<std::array<double, 3>, 3>;
/// Three Euler angles in degrees, in the order the convention names them.
using euler_angles = std::array<double, 3>;

struct quaternion {
  double w = 1, x = 0, y = 0, z = 0;
};

enum class euler_convention { zyz_intrinsic, zyz_extrinsic, zxz_intrinsic, zxz_extrinsic };

constexpr std::string_view to_string(euler_convention c) {
  switch (c) {
    case euler_convention::zyz_intrinsic: return "zyz_intrinsic";
    case euler_convention::zyz_extrinsic: return "zyz_extrinsic";
    case euler_convention::zxz_intrinsic: return "zxz_intrinsic";
    case euler_convention::zxz_extrinsic: return "zxz_extrinsic";
  }
  return "?";
}

namespace detail {
inline constexpr double deg = std::numbers::pi / 180.0;

inline void check_finite(double v, const char* what) {
  if (!std::isfinite(v)) throw value_error(std::string("fusor::match: ") + what + " must be finite, got " + std::to_string(v));
}
/// An angle in radians wrapped to (-pi, pi].
inline double wrap(double t) {
  t = std::remainder(t, 2 * std::numbers::pi);
  return t <= -std::numbers::pi ? t + 2 * std::numbers::pi : t;
}
inline double norm4(const quaternion& q) { return std::sqrt(q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z); }
inline vec3 cross(const vec3& a, const vec3& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
/// v scaled to unit length; a zero or non-finite vector is a value_error naming `what`.
inline vec3 unit(const vec3& v, const std::string& what) {
  const double n = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  if (!(n > 0) || !std::isfinite(n))
    throw value_error("fusor::match: " + what + " needs a finite non-zero length, got (" + std::to_string(v[0]) + ", " +
                      std::to_string(v[1]) + ", " + std::to_string(v[2]) + ")");
  return {v[0] / n, v[1] / n, v[2] / n};
}
}  // namespace detail

/// The Hamilton product: rotates by b, then by a.
constexpr quaternion operator*(const quaternion& a, const quaternion& b) {
  return {a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z, a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
          a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x, a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w};
}
/// The inverse rotation (the conjugate of a unit quaternion).
constexpr quaternion inverse(const quaternion& q) { return {q.w, -q.x, -q.y, -q.z}; }
constexpr double dot(const quaternion& a, const quaternion& b) { return a.w * b.w + a.x * b.x + a.y * b.y + a.z * b.z; }

/// q scaled to unit norm; a zero or non-finite quaternion is a value_error.
inline quaternion normalized(const quaternion& q) {
  const double n = detail::norm4(q);
  if (!(n > 0) || !std::isfinite(n))
    throw value_error("fusor::match: a rotation quaternion needs a finite non-zero norm, got (" + std::to_string(q.w) +
                      ", " + std::to_string(q.x) + ", " + std::to_string(q.y) + ", " + std::to_string(q.z) + ")");
  return {q.w / n, q.x / n, q.y / n, q.z / n};
}
/// The representative with w > 0 (or, where w = 0, the first non-zero component positive).
constexpr quaternion canonical(const quaternion& q) {
  const double lead = q.w != 0 ? q.w : q.x != 0 ? q.x : q.y != 0 ? q.y : q.z;
  return lead < 0 ? quaternion{-q.w, -q.x, -q.y, -q.z} : q;
}

/// The rotation by `degrees` about `axis` (any non-zero length).
inline quaternion axis_angle(const vec3& axis, double degrees) {
  detail::check_finite(degrees, "a rotation angle");
  const vec3 u = detail::unit(axis, "a rotation axis");
  const double h = 0.5 * degrees * detail::deg, s = std::sin(h);
  return {std::cos(h), u[0] * s, u[1] * s, u[2] * s};
}
/// The rotation vector (axis times angle, in degrees) of q, the angle in [0, 180].
inline vec3 rotation_vector(const quaternion& q) {
  const quaternion c = canonical(normalized(q));
  const double s = std::sqrt(c.x * c.x + c.y * c.y + c.z * c.z);
  if (s == 0) return {0, 0, 0};
  const double t = 2 * std::atan2(s, c.w) / detail::deg;
  return {c.x / s * t, c.y / s * t, c.z / s * t};
}

/// The angle in degrees of the rotation a^-1 b, in [0, 180]: the geodesic distance on SO(3). (The
/// half-angle from atan2 of the chord lengths, accurate for near and far rotations alike.)
inline double distance(const quaternion& a0, const quaternion& b0) {
  const quaternion a = normalized(a0), b = normalized(b0);
  const double s = dot(a, b) < 0 ? -1.0 : 1.0;
  const double dw = a.w - s * b.w, dx = a.x - s * b.x, dy = a.y - s * b.y, dz = a.z - s * b.z;
  const double pw = a.w + s * b.w, px = a.x + s * b.x, py = a.y + s * b.y, pz = a.z + s * b.z;
  return 4 * std::atan2(std::sqrt(dw * dw + dx * dx + dy * dy + dz * dz), std::sqrt(pw * pw + px * px + py * py + pz * pz)) /
         detail::deg;
}

/// The rotation matrix of q (normalised first).
inline matrix3 to_matrix(const quaternion& q0) {
  const quaternion q = normalized(q0);
  const double w = q.w, x = q.x, y = q.y, z = q.z;
  return {{{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
           {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
           {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}}};
}
/// The quaternion of a rotation matrix (canonical). R must be orthonormal with determinant +1 to
/// within 1e-6 (a value_error names the deviation); it is read by Shepperd's method, from the
/// largest of the trace and the diagonal, so no branch divides by a small number.
inline quaternion to_quaternion(const matrix3& r) {
  double worst = 0;  // |R^T R - I| and the determinant's distance from 1
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      if (!std::isfinite(r[i][j]))
        throw value_error("fusor::match: a rotation matrix needs finite entries, got " + std::to_string(r[i][j]) +
                          " at (" + std::to_string(i) + ", " + std::to_string(j) + ")");
      double s = 0;
      for (int k = 0; k < 3; ++k) s += r[k][i] * r[k][j];
      worst = std::max(worst, std::abs(s - (i == j ? 1.0 : 0.0)));
    }
  const double det = r[0][0] * (r[1][1] * r[2][2] - r[1][2] * r[2][1]) - r[0][1] * (r[1][0] * r[2][2] - r[1][2] * r[2][0]) +
                     r[0][2] * (r[1][0] * r[2][1] - r[1][1] * r[2][0]);
  if (worst > 1e-6 || std::abs(det - 1) > 1e-6)
    throw value_error("fusor::match: expects a rotation matrix (orthonormal, determinant +1, to within 1e-6), got one "
                      "with max |R^T R - I| = " + std::to_string(worst) + " and determinant " + std::to_string(det));
  const double tr = r[0][0] + r[1][1] + r[2][2];
  quaternion q;
  if (tr >= r[0][0] && tr >= r[1][1] && tr >= r[2][2]) {
    const double s = 2 * std::sqrt(1 + tr);  // 4 w
    q = {s / 4, (r[2][1] - r[1][2]) / s, (r[0][2] - r[2][0]) / s, (r[1][0] - r[0][1]) / s};
  } else if (r[0][0] >= r[1][1] && r[0][0] >= r[2][2]) {
    const double s = 2 * std::sqrt(1 + r[0][0] - r[1][1] - r[2][2]);  // 4 x
    q = {(r[2][1] - r[1][2]) / s, s / 4, (r[0][1] + r[1][0]) / s, (r[0][2] + r[2][0]) / s};
  } else if (r[1][1] >= r[2][2]) {
    const double s = 2 * std::sqrt(1 - r[0][0] + r[1][1] - r[2][2]);  // 4 y
    q = {(r[0][2] - r[2][0]) / s, (r[0][1] + r[1][0]) / s, s / 4, (r[1][2] + r[2][1]) / s};
  } else {
    const double s = 2 * std::sqrt(1 - r[0][0] - r[1][1] + r[2][2]);  // 4 z
    q = {(r[1][0] - r[0][1]) / s, (r[0][2] + r[2][0]) / s, (r[1][2] + r[2][1]) / s, s / 4};
  }
  return canonical(normalized(q));
}

/// R v.
inline vec3 rotate(const quaternion& q, const vec3& v) {
  const matrix3 m = to_matrix(q);
  return {m[0][0] * v[0] + m[0][1] * v[1] + m[0][2] * v[2], m[1][0] * v[0] + m[1][1] * v[1] + m[1][2] * v[2],
          m[2][0] * v[0] + m[2][1] * v[1] + m[2][2] * v[2]};
}

namespace detail {
inline bool intrinsic(euler_convention c) {
  return c == euler_convention::zyz_intrinsic || c == euler_convention::zxz_intrinsic;
}
inline bool middle_is_y(euler_convention c) {
  return c == euler_convention::zyz_intrinsic || c == euler_convention::zyz_extrinsic;
}
}  // namespace detail

/// The rotation of Euler angles (degrees) in a convention: the product of the three elementary
/// rotations in the convention's order.
inline quaternion from_euler(const euler_angles& e, euler_convention c) {
  for (double v : e) detail::check_finite(v, "an Euler angle");
  const vec3 z{0, 0, 1}, middle = detail::middle_is_y(c) ? vec3{0, 1, 0} : vec3{1, 0, 0};
  // R = Rz(A) Rmiddle(B) Rz(C): (A, B, C) = (a, b, c) intrinsic, (c, b, a) extrinsic
  const double A = detail::intrinsic(c) ? e[0] : e[2], C = detail::intrinsic(c) ? e[2] : e[0];
  return canonical(axis_angle(z, A) * axis_angle(middle, e[1]) * axis_angle(z, C));
}

/// Euler angles (degrees) of q in a convention: b in [0, 180], a and c in (-180, 180]; c = 0 where
/// b is 0 or 180. Read from the quaternion in closed form: with R = Rz(A) Rm(B) Rz(C), S = (A+C)/2
/// and D = (A-C)/2, q = (cos(B/2) cos S, ., ., cos(B/2) sin S) and its x, y hold sin(B/2) times
/// (cos D, sin D) about x or (-sin D, cos D) about y, so B, S and D are each one atan2.
inline euler_angles to_euler(const quaternion& q0, euler_convention c) {
  const quaternion q = normalized(q0);
  const double outer = std::hypot(q.w, q.z), inner = std::hypot(q.x, q.y);
  const double B = 2 * std::atan2(inner, outer);
  const double S = std::atan2(q.z, q.w);
  const double D = detail::middle_is_y(c) ? std::atan2(-q.x, q.y) : std::atan2(q.y, q.x);
  // the third angle of the convention is 0 where only a sum or difference is defined: C for the
  // intrinsic conventions, A (their c) for the extrinsic ones
  const bool third_is_C = detail::intrinsic(c);
  double A, C;
  constexpr double tiny = 1e-12;
  if (inner <= tiny * outer) {  // B = 0: only A + C = 2 S is defined
    A = third_is_C ? 2 * S : 0.0;
    C = third_is_C ? 0.0 : 2 * S;
  } else if (outer <= tiny * inner) {  // B = 180: only A - C = 2 D is defined
    A = third_is_C ? 2 * D : 0.0;
    C = third_is_C ? 0.0 : -2 * D;
  } else {
    A = S + D;
    C = S - D;
  }
  A = detail::wrap(A) / detail::deg;
  C = detail::wrap(C) / detail::deg;
  const double b = B / detail::deg;
  // intrinsic (a, b, c) = (A, B, C); extrinsic (a, b, c) = (C, B, A)
  return detail::intrinsic(c) ? euler_angles{A, b, C} : euler_angles{C, b, A};
}
inline euler_angles to_euler(const matrix3& r, euler_convention c) { return to_euler(to_quaternion(r), c); }
/// The same rotation's angles in another convention.
inline euler_angles convert(const euler_angles& e, euler_convention from, euler_convention to) {
  return to_euler(from_euler(e, from), to);
}

// ---- rotation sets ----------------------------------------------------------------------------

/// n rotations uniform on SO(3) (Haar) from Philox keyed by (seed, i): Shoemake's subgroup
/// algorithm on three uniforms. For probes and tests: the sets below are deterministic grids.
inline std::vector<quaternion> random_rotations(std::int64_t n, std::uint64_t seed) {
  if (n < 0) throw value_error("fusor::match::random_rotations: needs n >= 0, got " + std::to_string(n));
  std::vector<quaternion> out;
  out.reserve(std::size_t(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const auto w = fusor::random::block_words(seed, std::uint64_t(i), 0);
    const auto v = fusor::random::block_words(seed, std::uint64_t(i), 1);
    const double u1 = fusor::random::detail::unit_double(w[0], w[1]), u2 = fusor::random::detail::unit_double(w[2], w[3]),
                 u3 = fusor::random::detail::unit_double(v[0], v[1]);
    const double a = std::sqrt(1 - u1), b = std::sqrt(u1), t2 = 2 * std::numbers::pi * u2, t3 = 2 * std::numbers::pi * u3;
    out.push_back(canonical({b * std::cos(t3), a * std::sin(t2), a * std::cos(t2), b * std::sin(t3)}));
  }
  return out;
}

/// Alexa's super-Fibonacci spiral (CVPR 2022) of n rotations: point i at s = i + 1/2 has radii
/// sqrt(s/n) and sqrt(1 - s/n) on the two circles of the Hopf torus and angles 2 pi s / sqrt(2) and
/// 2 pi s / psi (psi the real root of x^4 = x + 4), a low-discrepancy set on S^3 that needs no
/// table: n well-spread rotations where a count, not a covering radius, is wanted. (Its covering
/// radius is about that of uniform_rotations with as many members, but varies by 10% with n.)
inline std::vector<quaternion> super_fibonacci(std::int64_t n) {
  if (n < 1) throw value_error("fusor::match::super_fibonacci: needs n >= 1 rotations, got " + std::to_string(n));
  constexpr double phi = 1.4142135623730950488, psi = 1.5337511687552042881;
  std::vector<quaternion> out;
  out.reserve(std::size_t(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const double s = double(i) + 0.5, r = std::sqrt(s / double(n)), R = std::sqrt(1 - s / double(n));
    const double alpha = 2 * std::numbers::pi * s / phi, beta = 2 * std::numbers::pi * s / psi;
    out.push_back(canonical({R * std::cos(beta), r * std::sin(alpha), r * std::cos(alpha), R * std::sin(beta)}));
  }
  return out;
}

namespace detail {
/// The unit quaternions of a set (checked once, not per probe).
inline std::vector<quaternion> normalized_set(const std::vector<quaternion>& set) {
  if (set.empty()) throw value_error("fusor::match: the rotation set is empty");
  std::vector<quaternion> out(set.size());
  for (std::size_t i = 0; i < set.size(); ++i) out[i] = normalized(set[i]);
  return out;
}
/// The distance in degrees from p to its nearest member of a normalised set: the member of largest
/// |<p, q>|, by brute force.
inline double nearest_distance(const std::vector<quaternion>& unit_set, const quaternion& p0) {
  const quaternion p = normalized(p0);
  std::size_t best = 0;
  double top = -1;
  for (std::size_t i = 0; i < unit_set.size(); ++i) {
    const double c = std::abs(dot(p, unit_set[i]));
    if (c > top) {
      top = c;
      best = i;
    }
  }
  return distance(p, unit_set[best]);
}
}  // namespace detail

/// The distance in degrees from each probe to its nearest member of `set`: the brute-force search
/// (N probes x M members). The maximum over many random probes estimates the covering radius.
inline std::vector<double> nearest_distances(const std::vector<quaternion>& set, const std::vector<quaternion>& probes) {
  const auto unit_set = detail::normalized_set(set);
  std::vector<double> out;
  out.reserve(probes.size());
  for (const quaternion& p : probes) out.push_back(detail::nearest_distance(unit_set, p));
  return out;
}
/// The covering radius in degrees, estimated: the largest nearest distance over `probes` random
/// rotations, then each of the 16 worst probes moved uphill (small turns about +-x, +-y, +-z,
/// halving the turn when none helps) to the local maximum of its nearest distance. A lower bound
/// on the true radius that the refinement makes tight to a fraction of a degree.
inline double covering_radius(const std::vector<quaternion>& set, std::int64_t probes = 20000, std::uint64_t seed = 7) {
  if (probes < 1) throw value_error("fusor::match::covering_radius: needs probes >= 1, got " + std::to_string(probes));
  const auto unit_set = detail::normalized_set(set);
  const auto start = random_rotations(probes, seed);
  std::vector<double> d;
  d.reserve(start.size());
  for (const quaternion& p : start) d.push_back(detail::nearest_distance(unit_set, p));
  std::vector<std::size_t> order(d.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  const std::size_t keep = std::min<std::size_t>(16, order.size());
  std::partial_sort(order.begin(), order.begin() + std::ptrdiff_t(keep), order.end(),
                    [&](std::size_t a, std::size_t b) { return d[a] > d[b]; });
  double best = d[order[0]];
  const vec3 axes[3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  for (std::size_t k = 0; k < keep; ++k) {
    quaternion p = start[order[k]];
    double here = d[order[k]], turn = 2.0;
    while (turn > 1e-3) {
      bool moved = false;
      for (const vec3& a : axes)
        for (double sign : {-1.0, 1.0}) {
          const quaternion c = axis_angle(a, sign * turn) * p;
          const double dc = detail::nearest_distance(unit_set, c);
          if (dc > here) {
            p = c;
            here = dc;
            moved = true;
          }
        }
      if (!moved) turn /= 2;
    }
    best = std::max(best, here);
  }
  return best;
}

// ---- symmetry -----------------------------------------------------------------------------------

/// A point group of a template, as RELION names and orients them: cyclic Cn (n-fold about z),
/// dihedral Dn (Cn and n two-fold axes in the xy plane, the first along x), tetrahedral T (a
/// three-fold about z, a two-fold along (0, 0.816496, 0.577350)), octahedral O (four-fold about z,
/// three-fold along (1, 1, 1)) and icosahedral I in RELION's four settings (Heymann et al. 2005's
/// names in brackets): I1 (no-Crowther 222: two-folds along x, y and z, five-fold along
/// (0, 0.525731, 0.850651)), I2, the default I (Crowther 222: two-folds along x, y and z,
/// five-fold along (0.525731, 0, 0.850651), three-fold along (0, 0.356822, 0.934172)), I3 (n25:
/// five-fold about z, two-fold along y, five-fold along (-0.894427, 0, 0.447214)) and I4 (n25r:
/// the same with the last five-fold along (0.894427, 0, 0.447214)). C1 is no symmetry.
struct symmetry {
  char kind = 'C';  // 'C', 'D', 'T', 'O' or 'I'
  int n = 1;        // Cn and Dn's n; 1 for T and O; I's setting, 1 to 4 (2: RELION's default)

  symmetry() = default;
  symmetry(char k, int order) : kind(k), n(order) {
    const bool valid = k == 'T' || k == 'O' ? order == 1
                       : k == 'I'           ? order >= 1 && order <= 4
                                            : (k == 'C' || k == 'D') && order >= 1 && order <= 100000;
    if (!valid)
      throw value_error(std::string("fusor::match: a symmetry is Cn or Dn with 1 <= n <= 100000, T, O, or I in setting 1 to 4, "
                                    "got ") + k + std::to_string(order));
  }
  /// "C1", "C4", "D7", "T", "O", "I" (RELION's I2), "I1" to "I4" (case-insensitive).
  static symmetry parse(std::string_view s) {
    const auto bad = [&] {
      return value_error("fusor::match: a symmetry is written Cn or Dn with n >= 1 (C1, C4, D2, ...), T, O, or I (I1 to I4), got \"" +
                         std::string(s) + "\"");
    };
    if (s.empty()) throw bad();
    const char k = char(s[0] >= 'a' && s[0] <= 'z' ? s[0] - 'a' + 'A' : s[0]);
    if ((k == 'T' || k == 'O') && s.size() == 1) return symmetry(k, 1);
    if (k == 'I' && s.size() == 1) return symmetry(k, 2);
    if (k == 'I' && s.size() == 2 && s[1] >= '1' && s[1] <= '4') return symmetry(k, s[1] - '0');
    if (s.size() < 2) throw bad();
    int n = 0;
    for (std::size_t i = 1; i < s.size(); ++i) {
      if (s[i] < '0' || s[i] > '9' || n > 100000) throw bad();  // (the constructor names the range)
      n = 10 * n + (s[i] - '0');
    }
    if ((k != 'C' && k != 'D') || n < 1) throw bad();
    return symmetry(k, n);
  }
  int order() const { return kind == 'D' ? 2 * n : kind == 'T' ? 12 : kind == 'O' ? 24 : kind == 'I' ? 60 : n; }
  bool polyhedral() const { return kind == 'T' || kind == 'O' || kind == 'I'; }
  /// "C4", "D7", "T", "O", "I" (I2), "I1", "I3", "I4".
  std::string name() const {
    if (kind == 'T' || kind == 'O' || (kind == 'I' && n == 2)) return std::string(1, kind);
    return std::string(1, kind) + std::to_string(n);
  }
};

/// The group's rotations, the identity first: Cn and Dn written out, T, O and I closed from their
/// generators (products until nothing new appears).
inline std::vector<quaternion> group_elements(const symmetry& s) {
  std::vector<quaternion> g;
  if (s.polyhedral()) {
    std::vector<quaternion> gen;
    if (s.kind == 'T') gen = {axis_angle({0, 0, 1}, 120), axis_angle({0, 0.816496580927726, 0.577350269189626}, 180)};
    if (s.kind == 'O') gen = {axis_angle({0, 0, 1}, 90), axis_angle({1, 1, 1}, 120)};
    // I: a two-fold about z and a five-fold (I1, I2), or five-folds about z and beside it (I3, I4)
    constexpr double a = 0.525731112119134, b = 0.850650808352040, c = 0.894427190999916, d = 0.447213595499958;
    if (s.kind == 'I' && s.n == 1) gen = {axis_angle({0, 0, 1}, 180), axis_angle({0, a, b}, 72)};
    if (s.kind == 'I' && s.n == 2) gen = {axis_angle({0, 0, 1}, 180), axis_angle({a, 0, b}, 72)};
    if (s.kind == 'I' && s.n == 3) gen = {axis_angle({0, 0, 1}, 72), axis_angle({-c, 0, d}, 72)};
    if (s.kind == 'I' && s.n == 4) gen = {axis_angle({0, 0, 1}, 72), axis_angle({c, 0, d}, 72)};
    g.push_back(quaternion{});
    for (std::size_t i = 0; i < g.size(); ++i)
      for (const quaternion& h : gen) {
        const quaternion p = canonical(normalized(g[i] * h));
        bool known = false;
        for (const quaternion& x : g) known = known || std::abs(dot(x, p)) > 1 - 1e-9;
        if (!known) g.push_back(p);
      }
    return g;
  }
  for (int k = 0; k < s.n; ++k) g.push_back(canonical(axis_angle({0, 0, 1}, 360.0 * k / s.n)));
  if (s.kind == 'D')
    for (int k = 0; k < s.n; ++k) {
      const double t = std::numbers::pi * k / s.n;
      g.push_back(canonical(axis_angle({std::cos(t), std::sin(t), 0}, 180.0)));
    }
  return g;
}

/// The angular step (degrees) by the Crowther criterion: a particle of `diameter` resolved to
/// `resolution` (both Å) needs views pi diameter / resolution apart over a half turn, a step of
/// resolution / diameter radians. (pyTME's --particle-diameter takes twice that, 360 r / (pi d)
/// degrees, with r at least two voxels.)
inline double crowther_step(double diameter, double resolution) {
  if (!(std::isfinite(diameter) && diameter > 0) || !(std::isfinite(resolution) && resolution > 0))
    throw value_error("fusor::match::crowther_step: expected a finite diameter and resolution > 0 Å, got " + std::to_string(diameter) +
                      " and " + std::to_string(resolution));
  return std::min(180.0, resolution / diameter / detail::deg);
}

// ---- cones ----------------------------------------------------------------------------------------

/// The rotation that turns unit vector `from` onto unit vector `to` by the shortest arc (about
/// from x to; a half turn about an axis orthogonal to `from` when they are opposite).
inline quaternion align_vectors(const vec3& from, const vec3& to) {
  const vec3 a = detail::unit(from, "align_vectors: the vector to turn"), b = detail::unit(to, "align_vectors: the target vector");
  const double c = a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
  const vec3 x = detail::cross(a, b);
  if (1 + c < 1e-12)  // opposite: a half turn about any orthogonal axis
    return canonical(axis_angle(detail::cross(a, std::abs(a[0]) < 0.9 ? vec3{1, 0, 0} : vec3{0, 1, 0}), 180.0));
  // q = (1 + c, a x b) normalised is the half-angle rotation about a x b
  return canonical(normalized({1 + c, x[0], x[1], x[2]}));
}

/// Rotations that place `reference` (the template's principal axis) within `cone_angle` degrees
/// of `axis`: directions on a Fibonacci spiral over the cap, about `cone_step` apart, each turned to by
/// the shortest arc from the axis, then every in-plane turn about the direction, `inplane_step`
/// apart over 360 / inplane_symmetry degrees (a template with n-fold symmetry about `reference`
/// needs 1/n of the turns). R = R_d(psi) R_align(d) R_align(reference -> axis).
inline std::vector<quaternion> cone_rotations(const vec3& axis, double cone_angle, double cone_step, double inplane_step,
                                              const vec3& reference = {0, 0, 1}, int inplane_symmetry = 1) {
  detail::check_finite(cone_angle, "the cone angle");
  detail::check_finite(cone_step, "the cone step");
  detail::check_finite(inplane_step, "the in-plane step");
  if (!(cone_angle >= 0) || cone_angle > 180)
    throw value_error("fusor::match::cone_rotations: a cone half-angle in [0, 180] degrees, got " + std::to_string(cone_angle));
  if (!(cone_step > 0) || !(inplane_step > 0))
    throw value_error("fusor::match::cone_rotations: steps must be > 0 degrees, got cone step " + std::to_string(cone_step) +
                      " and in-plane step " + std::to_string(inplane_step));
  if (inplane_symmetry < 1)
    throw value_error("fusor::match::cone_rotations: the in-plane symmetry is n >= 1, got " + std::to_string(inplane_symmetry));
  const quaternion to_axis = align_vectors(reference, axis);
  const vec3 u = detail::unit(axis, "cone_rotations: the cone axis");
  // directions: a Fibonacci spiral over the cap of the unit sphere, as many as a hexagonal grid of
  // spacing cone_step needs (sqrt(3)/2 cone_step^2 of area each)
  const double cap = 2 * std::numbers::pi * (1 - std::cos(cone_angle * detail::deg));
  const double cell = std::sqrt(3.0) / 2 * std::pow(cone_step * detail::deg, 2);
  const double span = 360.0 / inplane_symmetry;
  const double directions = std::max(1.0, std::ceil(cap / cell - 1e-9)), turns = std::max(1.0, std::ceil(span / inplane_step - 1e-9));
  constexpr double most = 4294967296.0;  // 2^32 rotations: far beyond any search (and its memory)
  if (directions * turns > most)
    throw value_error("fusor::match::cone_rotations: the steps (cone " + std::to_string(cone_step) + ", in-plane " +
                      std::to_string(inplane_step) + " degrees) ask for " + std::to_string(directions * turns) +
                      " rotations, more than 2^32");
  const auto nd = std::int64_t(directions), ni = std::int64_t(turns);
  std::vector<quaternion> out;
  out.reserve(std::size_t(nd * ni));
  const double golden = std::numbers::pi * (3 - std::sqrt(5.0));
  const double lo = std::cos(cone_angle * detail::deg);
  const quaternion z_to_u = align_vectors({0, 0, 1}, u);
  for (std::int64_t i = 0; i < nd; ++i) {
    // cos(theta) from 1 down to cos(cone) uniformly in area; the first direction is the axis
    const double ct = nd == 1 ? 1.0 : 1 - (1 - lo) * double(i) / double(nd - 1);
    const double st = std::sqrt(std::max(0.0, 1 - ct * ct)), ph = golden * double(i);
    const vec3 local{st * std::cos(ph), st * std::sin(ph), ct};  // about +z
    const vec3 d = rotate(z_to_u, local);
    const quaternion to_d = align_vectors(u, d) * to_axis;
    for (std::int64_t k = 0; k < ni; ++k) out.push_back(canonical(axis_angle(d, span * double(k) / double(ni)) * to_d));
  }
  return out;
}

/// The indices of the members of `set` that place `reference` (the template's principal axis)
/// within `cone_angle` degrees of `axis`, every in-plane turn allowed: pyTME's per-seed cone
/// (--orientations-cone), whose reference is z. For a template of symmetry s, R places it as
/// R g does for every g of the group, so a member counts when any of its equivalent placements
/// R g reference lies in the cone (Dn: a member pointing z at -axis counts). In increasing order;
/// 180 degrees or more: every member.
inline std::vector<std::uint32_t> rotations_in_cone(const std::vector<quaternion>& set, const vec3& axis, double cone_angle,
                                                    const symmetry& s = {}, const vec3& reference = {0, 0, 1}) {
  detail::check_finite(cone_angle, "the cone angle");
  if (!(cone_angle >= 0))
    throw value_error("fusor::match::rotations_in_cone: expected a cone half-angle >= 0 degrees, got " + std::to_string(cone_angle));
  if (set.size() > std::size_t(std::numeric_limits<std::uint32_t>::max()))
    throw value_error("fusor::match::rotations_in_cone: expected at most 2^32 - 1 rotations, got " + std::to_string(set.size()));
  const vec3 u = detail::unit(axis, "rotations_in_cone: the cone axis");
  const vec3 ref = detail::unit(reference, "rotations_in_cone: the reference");
  // the distinct directions the group turns the reference to (Cn about z: z alone)
  std::vector<vec3> refs;
  for (const quaternion& g : group_elements(s)) {
    const vec3 d = rotate(g, ref);
    bool known = false;
    for (const vec3& e : refs) known = known || d[0] * e[0] + d[1] * e[1] + d[2] * e[2] > 1 - 1e-9;
    if (!known) refs.push_back(d);
  }
  // compared as cosines, with a margin of rounding so that a member on the cone's edge counts
  const double least = cone_angle >= 180 ? -2.0 : std::cos(cone_angle * detail::deg) - 1e-12;
  std::vector<std::uint32_t> out;
  for (std::size_t i = 0; i < set.size(); ++i) {
    const quaternion q = normalized(set[i]);
    for (const vec3& r : refs) {
      const vec3 d = rotate(q, r);
      if (d[0] * u[0] + d[1] * u[1] + d[2] * u[2] >= least) {
        out.push_back(std::uint32_t(i));
        break;
      }
    }
  }
  return out;
}


/// A deterministic near-uniform set whose covering radius is at most `step` degrees, up to the
/// symmetry s of the template (C1 by default: none): for every rotation R some member Q and group
/// element g have d(R g, Q) <= step. R and R g place the template alike; g in Cn turns it about its
/// z axis, and a two-fold of Dn maps its z axis to -z. So the set is the template's z axis pointed
/// at directions over the sphere (Cn) or the upper hemisphere (Dn), a Fibonacci spiral about
/// 1.1 step apart, each with in-plane turns 1.1 step apart or less over 360 / n degrees: about
/// 1/|G| of the set for C1. The spacing is measured: covering_radius / step is 0.88 to 0.93 from 5
/// to 90 degrees (the tests check it).
inline std::vector<quaternion> uniform_rotations(double step, const symmetry& s = {}) {
  detail::check_finite(step, "the angular step");
  if (!(step > 0) || step > 180)
    throw value_error("fusor::match::uniform_rotations: an angular step in (0, 180] degrees, got " + std::to_string(step));
  constexpr double spacing = 1.1;  // grid spacing per degree of covering radius
  if (!s.polyhedral())
    return cone_rotations({0, 0, 1}, s.kind == 'D' ? 90.0 : 180.0, spacing * step, spacing * step, {0, 0, 1}, s.n);
  // T, O and I: the members are the inverses M^-1 of rotations M = A(d) Rz(psi) (A(d): the
  // shortest arc from z to d) whose direction d = M z lies in one cell of the sphere's tiling by
  // the group: R and R g place the template alike, and M -> g^-1 M turns d by g^-1, so every
  // orbit of directions meets the cell. The cell holds the points nearer p0 than any of its images
  // g p0 (p0: the spiral point farthest from its images, off every axis). Its directions: C1's
  // spiral inside it, then, where the cell's faces cut the spiral (the next cell's directions are
  // images of other points, not a continuation), the point of the cell farthest from every image
  // of a direction is added until none is farther than 0.6 of the spacing (the spiral's own
  // covering radius on the sphere). In-plane turns as C1's.
  const std::vector<quaternion> g = group_elements(s);
  const auto spiral = [](std::int64_t n, std::int64_t i) {
    const double golden = std::numbers::pi * (3 - std::sqrt(5.0));
    const double ct = 1 - 2 * (double(i) + 0.5) / double(n), st = std::sqrt(std::max(0.0, 1 - ct * ct));
    return vec3{st * std::cos(golden * double(i)), st * std::sin(golden * double(i)), ct};
  };
  const auto dot3 = [](const vec3& a, const vec3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; };
  vec3 p0{0, 0, 1};
  double widest = -1;
  for (std::int64_t i = 0; i < 2000; ++i) {
    const vec3 p = spiral(2000, i);
    double nearest = 2;
    for (std::size_t k = 1; k < g.size(); ++k) nearest = std::min(nearest, 1 - dot3(p, rotate(g[k], p)));
    if (nearest > widest) widest = nearest, p0 = p;
  }
  std::vector<vec3> normals;  // the cell: x . (p0 - g p0) >= 0 for every g but the identity
  for (std::size_t k = 1; k < g.size(); ++k) {
    const vec3 q = rotate(g[k], p0);
    normals.push_back({p0[0] - q[0], p0[1] - q[1], p0[2] - q[2]});
  }
  const auto in_cell = [&](const vec3& d) {
    for (const vec3& nrm : normals)
      if (dot3(d, nrm) < 0) return false;
    return true;
  };
  const double gap = spacing * step * detail::deg;
  const double area = std::sqrt(3.0) / 2 * gap * gap;
  const auto full = std::int64_t(std::ceil(4 * std::numbers::pi / area - 1e-9));
  const double turns = std::ceil(360.0 / (spacing * step) - 1e-9);
  if (double(full) / double(g.size()) * turns > 4294967296.0)
    throw value_error("fusor::match::uniform_rotations: the step " + std::to_string(step) + " asks for more than 2^32 rotations");
  std::vector<vec3> dirs;
  for (std::int64_t i = 0; i < full; ++i)
    if (const vec3 d = spiral(full, i); in_cell(d)) dirs.push_back(d);
  if (dirs.empty()) dirs.push_back(p0);
  // probes: a spiral 16 times as dense, the cell's part; cos of the angle to the nearest image
  std::vector<vec3> probes;
  for (std::int64_t i = 0, np = 16 * full; i < np; ++i)
    if (const vec3 p = spiral(np, i); in_cell(p)) probes.push_back(p);
  std::vector<double> nearest(probes.size(), -2);
  const auto add_images = [&](const vec3& d) {
    for (const quaternion& h : g) {
      const vec3 image = rotate(h, d);
      for (std::size_t j = 0; j < probes.size(); ++j) nearest[j] = std::max(nearest[j], dot3(probes[j], image));
    }
  };
  for (const vec3& d : dirs) add_images(d);
  const double enough = std::cos(0.6 * gap);
  while (!probes.empty()) {
    const std::size_t worst = std::size_t(std::min_element(nearest.begin(), nearest.end()) - nearest.begin());
    if (nearest[worst] >= enough) break;
    dirs.push_back(probes[worst]);
    add_images(probes[worst]);
  }
  const auto ni = std::int64_t(turns);
  std::vector<quaternion> out;
  out.reserve(dirs.size() * std::size_t(ni));
  for (const vec3& d : dirs) {
    const quaternion to_d = align_vectors({0, 0, 1}, d);
    for (std::int64_t k = 0; k < ni; ++k) out.push_back(canonical(inverse(axis_angle(d, 360.0 * double(k) / double(ni)) * to_d)));
  }
  return out;
}

}  // namespace fusor::match
