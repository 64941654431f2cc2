// fusor::match rotations: every conversion against matrices built here from the elementary
// rotations, RELION's published matrix, the trace formula for distances, the Haar measure's angle
// law; rotation sets checked for their covering radius, symmetry classes and cones.
#include <doctest/doctest.h>

#include <fusor/match.hpp>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <span>
#include <numbers>
#include <random>
#include <string>
#include <vector>

namespace match = fusor::match;
using match::euler_convention;
using match::matrix3;
using match::quaternion;
using match::vec3;

namespace {

constexpr double deg = std::numbers::pi / 180;

matrix3 mul(const matrix3& a, const matrix3& b) {
  matrix3 r{};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 3; ++k) r[i][j] += a[i][k] * b[k][j];
  return r;
}
matrix3 transpose(const matrix3& a) {
  matrix3 r{};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r[i][j] = a[j][i];
  return r;
}
/// The elementary active rotation about axis 0 (x), 1 (y) or 2 (z), by t degrees.
matrix3 elementary(int axis, double t) {
  const double c = std::cos(t * deg), s = std::sin(t * deg);
  if (axis == 0) return {{{1, 0, 0}, {0, c, -s}, {0, s, c}}};
  if (axis == 1) return {{{c, 0, s}, {0, 1, 0}, {-s, 0, c}}};
  return {{{c, -s, 0}, {s, c, 0}, {0, 0, 1}}};
}
/// The convention's matrix as the product of its elementary rotations.
matrix3 reference_matrix(const match::euler_angles& e, euler_convention c) {
  const int mid = c == euler_convention::zyz_intrinsic || c == euler_convention::zyz_extrinsic ? 1 : 0;
  const bool intrinsic = c == euler_convention::zyz_intrinsic || c == euler_convention::zxz_intrinsic;
  return intrinsic ? mul(mul(elementary(2, e[0]), elementary(mid, e[1])), elementary(2, e[2]))
                   : mul(mul(elementary(2, e[2]), elementary(mid, e[1])), elementary(2, e[0]));
}
double max_diff(const matrix3& a, const matrix3& b) {
  double m = 0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) m = std::max(m, std::abs(a[i][j] - b[i][j]));
  return m;
}
/// The rotation angle of a^T b from its trace, in degrees.
double trace_distance(const matrix3& a, const matrix3& b) {
  const matrix3 r = mul(transpose(a), b);
  return std::acos(std::clamp((r[0][0] + r[1][1] + r[2][2] - 1) / 2, -1.0, 1.0)) / deg;
}
const euler_convention all_conventions[] = {euler_convention::zyz_intrinsic, euler_convention::zyz_extrinsic,
                                            euler_convention::zxz_intrinsic, euler_convention::zxz_extrinsic};
std::vector<match::euler_angles> angle_cases() {
  std::vector<match::euler_angles> v = {{10, 20, 30},    {-170, 95, 45},  {0, 0, 0},      {30, 0, 40},    {30, 180, 40},
                                        {180, 90, -180}, {45, 1e-9, 10},  {45, 180 - 1e-9, 10}, {-90, 135, 179.5},
                                        {360, 45, 720},  {12.5, 170, -33}};
  for (int k = 0; k < 20; ++k) v.push_back({-180 + 37.3 * k, std::fmod(11.7 * k, 180), 179 - 23.9 * k});
  return v;
}

}  // namespace

TEST_CASE("match rotations: elementary rotations, matrices and quaternions agree; Shepperd's branches; bad matrices") {
  for (double t : {0.0, 30.0, -75.0, 180.0, 270.0})
    for (int axis = 0; axis < 3; ++axis) {
      const vec3 u{double(axis == 0), double(axis == 1), double(axis == 2)};
      CHECK(max_diff(match::to_matrix(match::axis_angle(u, t)), elementary(axis, t)) < 1e-14);
    }
  // every quaternion back from its matrix, including half turns about each axis (each of
  // Shepperd's four branches) and near-identity rotations
  std::vector<quaternion> qs = match::random_rotations(200, 3);
  for (const vec3& u : {vec3{1, 0, 0}, vec3{0, 1, 0}, vec3{0, 0, 1}, vec3{1, 1, 0}, vec3{1, -2, 3}})
    for (double t : {180.0, 179.999, 1e-8, 90.0}) qs.push_back(match::axis_angle(u, t));
  double worst = 0;
  for (const quaternion& q : qs) {
    const quaternion back = match::to_quaternion(match::to_matrix(q));
    const quaternion c = match::canonical(match::normalized(q));
    worst = std::max({worst, std::abs(back.w - c.w), std::abs(back.x - c.x), std::abs(back.y - c.y), std::abs(back.z - c.z)});
    CHECK(back.w >= 0);
  }
  CHECK(worst < 1e-12);
  // the product rotates by b, then a
  const quaternion a = match::axis_angle({0, 0, 1}, 90), b = match::axis_angle({1, 0, 0}, 90);
  CHECK(max_diff(match::to_matrix(a * b), mul(elementary(2, 90), elementary(0, 90))) < 1e-14);
  const vec3 moved = match::rotate(a * b, {0, 1, 0});  // x-turn: y -> z; then z-turn: z stays
  CHECK(std::abs(moved[2] - 1) < 1e-14);
  CHECK(match::distance(a * match::inverse(a), quaternion{}) < 1e-12);
  // bad input
  matrix3 scaled = elementary(2, 30);
  for (auto& row : scaled)
    for (double& v : row) v *= 1.01;
  CHECK_THROWS_WITH_AS(match::to_quaternion(scaled), doctest::Contains("orthonormal"), fusor::value_error);
  matrix3 mirror = elementary(2, 30);
  for (double& v : mirror[2]) v = -v;
  CHECK_THROWS_WITH_AS(match::to_quaternion(mirror), doctest::Contains("determinant -1"), fusor::value_error);
  matrix3 nan = elementary(1, 10);
  nan[1][1] = std::nan("");
  CHECK_THROWS_AS(match::to_quaternion(nan), fusor::value_error);
  CHECK_THROWS_AS(match::normalized(quaternion{0, 0, 0, 0}), fusor::value_error);
  CHECK_THROWS_AS(match::axis_angle({0, 0, 0}, 10), fusor::value_error);
  CHECK_THROWS_AS(match::axis_angle({0, 0, 1}, HUGE_VAL), fusor::value_error);
}

TEST_CASE("match rotations: Euler conventions against products of elementary matrices; round trips; gimbal lock") {
  for (euler_convention c : all_conventions) {
    CAPTURE(match::to_string(c));
    for (const auto& e : angle_cases()) {
      CAPTURE(e[0]);
      CAPTURE(e[1]);
      CAPTURE(e[2]);
      const quaternion q = match::from_euler(e, c);
      CHECK(max_diff(match::to_matrix(q), reference_matrix(e, c)) < 1e-13);
      const auto back = match::to_euler(q, c);
      // the ranges, and the same rotation
      CHECK(back[1] >= 0);
      CHECK(back[1] <= 180);
      CHECK(back[0] > -180);
      CHECK(back[0] <= 180);
      CHECK(back[2] > -180);
      CHECK(back[2] <= 180);
      CHECK(max_diff(reference_matrix(back, c), reference_matrix(e, c)) < 1e-9);
      // in range and away from gimbal lock, the angles themselves come back
      const bool canonical_input = e[1] > 1e-6 && e[1] < 180 - 1e-6 && e[0] > -180 && e[0] <= 180 && e[2] > -180 && e[2] <= 180;
      if (canonical_input) {
        CHECK(std::abs(back[0] - e[0]) < 1e-6);
        CHECK(std::abs(back[1] - e[1]) < 1e-9);
        CHECK(std::abs(back[2] - e[2]) < 1e-6);
      }
      // from a matrix, the same angles
      const auto from_matrix = match::to_euler(match::to_matrix(q), c);
      CHECK(max_diff(reference_matrix(from_matrix, c), reference_matrix(e, c)) < 1e-9);
      // into every other convention and back
      for (euler_convention d : all_conventions) {
        const auto there = match::convert(e, c, d);
        CHECK(max_diff(reference_matrix(there, d), reference_matrix(e, c)) < 1e-9);
      }
    }
    // gimbal lock: the third angle is 0 and the first carries the sum (or difference)
    const auto lock0 = match::to_euler(match::from_euler({30, 0, 40}, c), c);
    CHECK(lock0[1] == doctest::Approx(0).epsilon(1e-12));
    CHECK(lock0[2] == 0.0);
    CHECK(lock0[0] == doctest::Approx(70));
    const auto lock180 = match::to_euler(match::from_euler({30, 180, 40}, c), c);
    CHECK(lock180[1] == doctest::Approx(180));
    CHECK(lock180[2] == 0.0);
  }
  // intrinsic (a, b, c) is extrinsic (c, b, a)
  CHECK(match::distance(match::from_euler({10, 20, 30}, euler_convention::zyz_intrinsic),
                        match::from_euler({30, 20, 10}, euler_convention::zyz_extrinsic)) < 1e-12);
  // RELION's matrix for (rot, tilt, psi), as its Euler_angles2matrix writes it, is the transpose of
  // the zyz_intrinsic rotation
  for (const auto& e : angle_cases()) {
    const double ca = std::cos(e[0] * deg), sa = std::sin(e[0] * deg), cb = std::cos(e[1] * deg), sb = std::sin(e[1] * deg),
                 cg = std::cos(e[2] * deg), sg = std::sin(e[2] * deg);
    const matrix3 relion{{{cg * cb * ca - sg * sa, cg * cb * sa + sg * ca, -cg * sb},
                          {-sg * cb * ca - cg * sa, -sg * cb * sa + cg * ca, sg * sb},
                          {sb * ca, sb * sa, cb}}};
    CHECK(max_diff(transpose(match::to_matrix(match::from_euler(e, euler_convention::zyz_intrinsic))), relion) < 1e-13);
  }
  CHECK_THROWS_AS(match::from_euler({0, std::nan(""), 0}, euler_convention::zyz_intrinsic), fusor::value_error);
}

TEST_CASE("match rotations: distances against the trace formula, accurate near 0 and 180; rotation vectors") {
  const auto a = match::random_rotations(100, 1), b = match::random_rotations(100, 2);
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = match::distance(a[i], b[i]);
    if (d > 1 && d < 179) worst = std::max(worst, std::abs(d - trace_distance(match::to_matrix(a[i]), match::to_matrix(b[i]))));
    CHECK(match::distance(a[i], quaternion{-a[i].w, -a[i].x, -a[i].y, -a[i].z}) == 0.0);  // q and -q
    CHECK(match::distance(a[i], b[i]) == doctest::Approx(match::distance(b[i], a[i])).epsilon(1e-12));
  }
  CHECK(worst < 1e-9);
  // tiny and half-turn angles, where acos of the trace loses every digit
  for (double t : {1e-7, 1e-3, 179.9999, 180.0}) CHECK(match::distance(quaternion{}, match::axis_angle({1, 2, 3}, t)) ==
                                                          doctest::Approx(t).epsilon(1e-9));
  // quaternions of any length are read as their direction; a zero one is an error
  const quaternion long_q{2 * std::cos(45 * deg), 0, 0, 2 * std::sin(45 * deg)};
  CHECK(match::distance(match::axis_angle({0, 0, 1}, 30), long_q) == doctest::Approx(60));
  CHECK(match::nearest_distances({long_q}, {match::axis_angle({0, 0, 1}, 30)})[0] == doctest::Approx(60));
  CHECK_THROWS_AS(match::distance(a[0], quaternion{0, 0, 0, 0}), fusor::value_error);
  const auto r = match::rotation_vector(match::axis_angle({0, 3, 4}, 50));
  CHECK(r[0] == doctest::Approx(0).epsilon(1e-12));
  CHECK(r[1] == doctest::Approx(30));
  CHECK(r[2] == doctest::Approx(40));
  CHECK(match::rotation_vector(quaternion{}) == vec3{0, 0, 0});
}

TEST_CASE("match rotations: random rotations follow the Haar measure's angle law, reproducibly") {
  const auto r = match::random_rotations(20000, 11);
  // the rotation angle of a Haar-random rotation has density (1 - cos t) / pi on [0, pi]: mean
  // pi / 2 + 2 / pi, and P(t < 90 degrees) = (pi / 2 - 1) / pi
  double mean = 0, below = 0;
  for (const quaternion& q : r) {
    const double t = match::distance(quaternion{}, q) * deg;
    mean += t / double(r.size());
    below += t < std::numbers::pi / 2 ? 1.0 / double(r.size()) : 0.0;
  }
  CHECK(mean == doctest::Approx(std::numbers::pi / 2 + 2 / std::numbers::pi).epsilon(0.01));
  CHECK(below == doctest::Approx((std::numbers::pi / 2 - 1) / std::numbers::pi).epsilon(0.05));
  const auto again = match::random_rotations(5, 11);
  for (std::size_t i = 0; i < 5; ++i) CHECK(match::distance(again[i], r[i]) == 0.0);
  CHECK(match::random_rotations(0, 1).empty());
  CHECK_THROWS_AS(match::random_rotations(-1, 1), fusor::value_error);
}

TEST_CASE("match rotation sets: uniform sets cover SO(3) within the step, up to Cn, Dn, T, O and I; deterministic") {
  CHECK(match::symmetry::parse("C1").order() == 1);
  CHECK(match::symmetry::parse("c4").order() == 4);
  CHECK(match::symmetry::parse("D7").order() == 14);
  CHECK(match::symmetry::parse("D7").name() == "D7");
  for (const char* bad : {"", "C", "C0", "X3", "D-2", "C2.5", "T2"})
    CHECK_THROWS_WITH_AS(match::symmetry::parse(bad), doctest::Contains("Cn or Dn"), fusor::value_error);
  CHECK_THROWS_AS(match::symmetry('C', 0), fusor::value_error);
  CHECK_THROWS_AS(match::symmetry('D', 200000), fusor::value_error);
  CHECK_THROWS_AS(match::covering_radius(match::super_fibonacci(10), 0), fusor::value_error);
  CHECK_THROWS_WITH_AS(match::uniform_rotations(1e-9), doctest::Contains("more than 2^32"), fusor::value_error);
  const auto c1 = match::uniform_rotations(20);
  for (const char* name : {"C1", "C2", "C5", "D2", "D3", "T", "O", "I"}) {
    CAPTURE(name);
    const auto s = match::symmetry::parse(name);
    const auto g = match::group_elements(s);
    REQUIRE(int(g.size()) == s.order());
    CHECK(match::distance(g[0], quaternion{}) == 0.0);
    bool closed = true, distinct = true;  // every product is in the group; the elements differ
    for (std::size_t i = 0; i < g.size(); ++i)
      for (std::size_t j = 0; j < g.size(); ++j) {
        double nearest = 360;
        for (const auto& z : g) nearest = std::min(nearest, match::distance(g[i] * g[j], z));
        closed = closed && nearest < 1e-9;
        distinct = distinct && (i == j || match::distance(g[i], g[j]) > 1);
      }
    CHECK(closed);
    CHECK(distinct);
    const bool polyhedral = s.polyhedral();
    for (double step : polyhedral ? std::vector<double>{30.0, 10.0} : std::vector<double>{45.0, 20.0}) {
      CAPTURE(step);
      const auto set = match::uniform_rotations(step, s);
      // any rotation r is within the step of a member q up to the symmetry: min over g of d(r g, q)
      // (probes, then the worst ones moved uphill, as covering_radius does for C1)
      const auto probes = match::random_rotations(4000, 9);
      double radius = 0;
      for (const auto& r : probes) {
        double best = 360;
        for (const auto& h : g) best = std::min(best, match::nearest_distances(set, {r * h})[0]);
        radius = std::max(radius, best);
      }
      if (s.order() == 1) radius = std::max(radius, match::covering_radius(set, 20000, 5));
      MESSAGE(std::string(name), " step ", step, ": ", set.size(), " rotations, covering radius ", radius);
      CHECK(radius <= step);
      CHECK(radius >= (polyhedral ? 0.6 : 0.75) * step);  // not wastefully dense
      if (step == 20.0) {  // about 1/|G| of the C1 set
        CHECK(double(set.size()) >= 0.8 * double(c1.size()) / s.order());
        CHECK(double(set.size()) <= 1.3 * double(c1.size()) / s.order() + 10);
      }
      if (step == 10.0) {  // T, O, I: 1/|G| of C1's, and a quarter more where the cell's faces cut the spiral
        const auto c1_fine = match::uniform_rotations(10);
        CHECK(double(set.size()) >= 1.0 * double(c1_fine.size()) / s.order());
        CHECK(double(set.size()) <= 1.35 * double(c1_fine.size()) / s.order());
      }
    }
  }
  // RELION's orientations of T, O and I: their named axes are in the groups (I's three-fold is not
  // one of its generators)
  const auto has = [](const char* name, const vec3& axis, double angle) {
    for (const auto& h : match::group_elements(match::symmetry::parse(name)))
      if (match::distance(h, match::axis_angle(axis, angle)) < 1e-3) return true;  // degrees: the axes as printed, to 6 digits
    return false;
  };
  CHECK(has("T", {0, 0, 1}, 120));
  CHECK(has("T", {0, 0.816496, 0.577350}, 180));
  CHECK(has("O", {0, 0, 1}, 90));
  CHECK(has("O", {1, 1, 1}, 120));
  CHECK(has("I", {0, 0, 1}, 180));
  CHECK(has("I", {0.525731114, 0, 0.850650807}, 72));
  CHECK(has("I", {0, 0.356822076, 0.934172364}, 120));
  CHECK(!has("I", {1, 0, 0}, 72));
  CHECK(match::symmetry::parse("i2").name() == "I");
  CHECK(match::symmetry::parse("O").order() == 24);
  for (const char* bad : {"T2", "O1", "I5", "I0", "I22", "Q"})
    CHECK_THROWS_WITH_AS(match::symmetry::parse(bad), doctest::Contains("or I (I1 to I4)"), fusor::value_error);
  CHECK_THROWS_AS(match::symmetry('T', 2), fusor::value_error);
  CHECK_THROWS_AS(match::symmetry('I', 5), fusor::value_error);
  // RELION's other icosahedral settings: I1 (no-Crowther 222), I3 and I4 (five-fold about z). Their
  // named axes, and each group as RELION derives it (healpix_sampling.cpp turns I2's asymmetric
  // unit by its Euler matrix A(0, t, 0), the rotation by -t about y): I1 = A(0, 90, 0) I2 A^-1,
  // I3 and I4 with t = +-31.7174745559 degrees, which brings one of I2's five-folds onto z
  CHECK(match::symmetry::parse("I1").name() == "I1");
  CHECK(match::symmetry::parse("i4").name() == "I4");
  CHECK(has("I1", {0, 0, 1}, 180));
  CHECK(has("I1", {1, 0, 0}, 180));
  CHECK(has("I1", {0, 1, 0}, 180));
  CHECK(has("I1", {0, 0.525731114, 0.850650807}, 72));
  CHECK(!has("I1", {0.525731114, 0, 0.850650807}, 72));
  for (const char* setting : {"I3", "I4"}) {
    const double side = setting[1] == '3' ? -1 : 1;
    CAPTURE(setting);
    CHECK(has(setting, {0, 0, 1}, 72));
    CHECK(has(setting, {0, 1, 0}, 180));
    CHECK(has(setting, {side * 0.894427191, 0, 0.447213595}, 72));
    CHECK(!has(setting, {-side * 0.894427191, 0, 0.447213595}, 72));
  }
  const auto i2 = match::group_elements(match::symmetry::parse("I"));
  for (const auto& [setting, tilt] : {std::pair{"I1", 90.0}, std::pair{"I3", 31.7174745559}, std::pair{"I4", -31.7174745559}}) {
    CAPTURE(setting);
    const auto g = match::group_elements(match::symmetry::parse(setting));
    REQUIRE(g.size() == 60);
    const quaternion a = match::axis_angle({0, 1, 0}, -tilt);
    double worst = 0;
    for (const auto& h : i2) {  // every conjugate A h A^-1 of I2's elements is one of the setting's
      double nearest = 360;
      for (const auto& e : g) nearest = std::min(nearest, match::distance(a * h * match::inverse(a), e));
      worst = std::max(worst, nearest);
    }
    CHECK(worst < 1e-6);
  }
  {  // a uniform set in I3's asymmetric unit covers within the step, up to the group
    const auto s = match::symmetry::parse("I3");
    const auto g = match::group_elements(s);
    const auto set = match::uniform_rotations(30, s);
    double radius = 0;
    for (const auto& r : match::random_rotations(1500, 4)) {
      double best = 360;
      for (const auto& h : g) best = std::min(best, match::nearest_distances(set, {r * h})[0]);
      radius = std::max(radius, best);
    }
    CHECK(radius <= 30);
    CHECK(set.size() * 60 >= match::uniform_rotations(30).size());
  }
  // the Crowther criterion: resolution / diameter radians
  CHECK(match::crowther_step(200, 20) == doctest::Approx(0.1 / deg));
  CHECK(match::crowther_step(10, 100) == 180);
  CHECK_THROWS_WITH_AS(match::crowther_step(0, 20), doctest::Contains("diameter and resolution > 0"), fusor::value_error);
  const auto again = match::uniform_rotations(20);
  bool same = again.size() == c1.size();
  for (std::size_t i = 0; same && i < c1.size(); ++i) same = match::distance(c1[i], again[i]) == 0.0;
  CHECK(same);
  for (double bad : {0.0, -5.0, 181.0, std::nan("")}) CHECK_THROWS_AS(match::uniform_rotations(bad), fusor::value_error);
  // super-Fibonacci: n unit quaternions, spread: the covering radius of 1000 is near that of a
  // uniform set of 1000
  CHECK_THROWS_AS(match::super_fibonacci(0), fusor::value_error);
  const auto fib = match::super_fibonacci(1000);
  REQUIRE(fib.size() == 1000);
  for (const quaternion& q : fib) CHECK(std::abs(match::dot(q, q) - 1) < 1e-14);
  const double fib_radius = match::covering_radius(fib, 20000, 5);
  MESSAGE("super-Fibonacci, 1000 rotations: covering radius ", fib_radius);
  CHECK(fib_radius < 25);  // a uniform set of 1000 covers within about 22.5 degrees
}

TEST_CASE("match rotations_in_cone: against the angle written out, with and without a symmetry's equivalent axes") {
  const auto set = match::random_rotations(3000, 5);
  const match::vec3 axis{0.3, -0.2, 0.9};
  const double an = std::sqrt(0.09 + 0.04 + 0.81);
  const auto angle_to = [&](const match::quaternion& q, double sign) {
    const auto d = match::rotate(q, {0, 0, 1});
    return std::acos(std::clamp(sign * (d[0] * axis[0] + d[1] * axis[1] + d[2] * axis[2]) / an, -1.0, 1.0)) / deg;
  };
  for (const double cone : {0.0, 10.0, 40.0, 120.0, 180.0}) {
    CAPTURE(cone);
    std::vector<std::uint32_t> c1, d2;
    for (std::size_t i = 0; i < set.size(); ++i) {
      if (angle_to(set[i], 1) <= cone) c1.push_back(std::uint32_t(i));
      // D2's two-folds turn z to -z: a member pointing z within the cone of -axis counts too
      if (angle_to(set[i], 1) <= cone || angle_to(set[i], -1) <= cone) d2.push_back(std::uint32_t(i));
    }
    CHECK(match::rotations_in_cone(set, axis, cone) == c1);
    CHECK(match::rotations_in_cone(set, axis, cone, match::symmetry('C', 5)) == c1);  // Cn keeps z
    CHECK(match::rotations_in_cone(set, axis, cone, match::symmetry('D', 2)) == d2);
  }
  CHECK(match::rotations_in_cone(set, axis, 180).size() == set.size());
  CHECK(match::rotations_in_cone({}, axis, 30).empty());
  CHECK_THROWS_AS(match::rotations_in_cone(set, axis, -1), fusor::value_error);
  CHECK_THROWS_AS(match::rotations_in_cone(set, {0, 0, 0}, 30), fusor::value_error);
  CHECK_THROWS_AS(match::rotations_in_cone(set, axis, std::nan("")), fusor::value_error);
}

TEST_CASE("match cones: every rotation puts the reference inside the cone; the cone is covered; bad input") {
  const vec3 axis{1, 1, 0}, ref{0, 0, 1};
  const double cone = 30, step = 10;
  const auto set = match::cone_rotations(axis, cone, step, step, ref);
  const double an = std::sqrt(2.0);
  for (const auto& q : set) {
    const vec3 d = match::rotate(q, ref);
    CHECK(std::acos(std::clamp((d[0] + d[1]) / an, -1.0, 1.0)) / deg <= cone + 1e-9);
  }
  // rotations whose reference lands in the cone (20 000 random, kept if inside) are near the set
  std::vector<quaternion> inside;
  for (const auto& r : match::random_rotations(200000, 4)) {
    const vec3 d = match::rotate(r, ref);
    if (std::acos(std::clamp((d[0] + d[1]) / an, -1.0, 1.0)) / deg <= cone) inside.push_back(r);
  }
  REQUIRE(inside.size() > 1000);
  const auto near = match::nearest_distances(set, inside);
  const double radius = *std::max_element(near.begin(), near.end());
  MESSAGE("cone 30 degrees, steps 10: ", set.size(), " rotations, covering radius ", radius);
  CHECK(radius <= step);
  // the first direction is the axis itself; in-plane symmetry keeps 1/n of the turns
  CHECK(match::cone_rotations(axis, cone, step, step, ref, 3).size() * 3 == set.size());
  const auto flat = match::cone_rotations(axis, 0, step, 90, ref);
  CHECK(flat.size() == 4);
  for (const auto& q : flat) {
    const vec3 d = match::rotate(q, ref);
    CHECK(std::abs(d[0] - 1 / an) < 1e-12);
    CHECK(std::abs(d[1] - 1 / an) < 1e-12);
  }
  const quaternion turn = match::align_vectors({1, 0, 0}, {-1, 0, 0});
  CHECK(match::rotate(turn, {1, 0, 0})[0] == doctest::Approx(-1));
  CHECK(match::distance(match::align_vectors({0, 2, 0}, {0, 1, 0}), quaternion{}) < 1e-12);
  CHECK_THROWS_AS(match::cone_rotations(axis, 200, step, step), fusor::value_error);
  CHECK_THROWS_AS(match::cone_rotations(axis, cone, 0, step), fusor::value_error);
  CHECK_THROWS_AS(match::cone_rotations({0, 0, 0}, cone, step, step), fusor::value_error);
  CHECK_THROWS_AS(match::cone_rotations(axis, cone, step, step, ref, 0), fusor::value_error);
  CHECK_THROWS_AS(match::cone_rotations(axis, cone, 1e-9, 90), fusor::value_error);  // 3e21 directions
  CHECK_THROWS_AS(match::cone_rotations(axis, cone, step, 1e-300), fusor::value_error);
}

// Templates from atomic models and maps, tight masks. These run on the host whatever the backend
// (a one-off edit of a template, returned on B), so they are checked here once.
namespace {

using fusor::extents;
using fusor::index_t;

/// An atom's density at distance^2 r2 (Å^2), its Gaussians each widened by `extra` Å^2: the
/// published closed form rho = q sum_i a_i (4 pi / beta_i)^(3/2) exp(-4 pi^2 r^2 / beta_i).
double atom_density(const match::scattering_atom& t, double r2, double extra) {
  const double pi = std::numbers::pi;
  double rho = 0;
  for (int i = 0; i < 5; ++i) {
    const double beta = t.b[i] + t.b_factor + extra;
    rho += t.occupancy * t.a[i] * std::pow(4 * pi / beta, 1.5) * std::exp(-4 * pi * pi * r2 / beta);
  }
  return rho;
}

/// The structure factor F(k) = sum q f(|k| / 2) exp(-B |k|^2 / 4) exp(-2 pi i k.r), k in 1/Å.
std::complex<double> structure_factor(const std::vector<match::scattering_atom>& atoms, const vec3& k) {
  const double pi = std::numbers::pi;
  const double k2 = k[0] * k[0] + k[1] * k[1] + k[2] * k[2];
  std::complex<double> f = 0;
  for (const auto& t : atoms) {
    double amp = 0;
    for (int i = 0; i < 5; ++i) amp += t.a[i] * std::exp(-(t.b[i] + t.b_factor) * k2 / 4);
    const double phase = -2 * pi * (k[0] * t.position[0] + k[1] * t.position[1] + k[2] * t.position[2]);
    f += t.occupancy * amp * std::complex<double>(std::cos(phase), std::sin(phase));
  }
  return f;
}

/// Three atoms with carbon-, oxygen- and sulphur-like factors (the shape of International Tables
/// C 4.3.2.2's: five Gaussians from sharp to wide), odd B-factors and occupancies.
std::vector<match::scattering_atom> three_atoms() {
  std::vector<match::scattering_atom> atoms(3);
  atoms[0] = {{10.2, -3.1, 4.4}, 1.0, 15, {0.0489, 0.2091, 0.7537, 1.1420, 0.3555}, {0.114, 1.056, 5.656, 18.5, 47.6}, 12.011};
  atoms[1] = {{13.9, 1.7, 2.0}, 0.7, 32, {0.0974, 0.2921, 0.6910, 0.6990, 0.2039}, {0.207, 1.381, 4.694, 12.7, 32.5}, 15.999};
  atoms[2] = {{7.5, 0.4, 9.8}, 1.0, 48, {0.0915, 0.4312, 1.0847, 2.4671, 1.0852}, {0.184, 1.72, 5.83, 24.4, 62.7}, 32.06};
  return atoms;
}

std::vector<double> host(const fusor::array<float>& a) { return std::vector<double>(a.data(), a.data() + a.size()); }
const fusor::array<float>& flat_mask_of(const extents& n) {
  static fusor::array<float> m;
  m = fusor::ones<float, fusor::cpu>(n);
  return m;
}

}  // namespace

TEST_CASE("match model density: a blurred model against the direct sum of its Gaussians; F(0) and F(k) unblurred; bad input") {
  const auto atoms = three_atoms();
  const double s = 2.0;
  const extents n{24, 19, 27};  // even and odd sides
  const vec3 c = match::center_of_mass(atoms);
  {  // blurred so that every Gaussian is 2 voxels wide or more: the band-limited map is the sampled density
    match::model_density_options o;
    o.voxel_size = s, o.box = n, o.blur = 1300;
    const auto map = host(match::density_from_model(std::span<const match::scattering_atom>(atoms), o));
    double top = 0, err = 0;
    for (index_t i = 0; i < n[0]; ++i)
      for (index_t j = 0; j < n[1]; ++j)
        for (index_t k = 0; k < n[2]; ++k) {
          const vec3 r{c[0] + double(i - n[0] / 2) * s, c[1] + double(j - n[1] / 2) * s, c[2] + double(k - n[2] / 2) * s};
          double want = 0;
          for (const auto& t : atoms)
            for (int p0 = -1; p0 <= 1; ++p0)  // periodic images: the box is periodic
              for (int p1 = -1; p1 <= 1; ++p1)
                for (int p2 = -1; p2 <= 1; ++p2) {
                  const double d0 = r[0] - t.position[0] + p0 * n[0] * s, d1 = r[1] - t.position[1] + p1 * n[1] * s,
                               d2 = r[2] - t.position[2] + p2 * n[2] * s;
                  want += atom_density(t, d0 * d0 + d1 * d1 + d2 * d2, 1300);
                }
          top = std::max(top, want);
          err = std::max(err, std::abs(map[std::size_t((i * n[1] + j) * n[2] + k)] - want));
        }
    MESSAGE("blurred model: max error ", err / top, " of the peak");
    CHECK(err <= 2e-4 * top);
  }
  {  // no blur: the map's DFT is the structure factor at the box's frequencies up to Nyquist
    match::model_density_options o;
    o.voxel_size = s, o.box = n;
    const auto map = match::density_from_model(std::span<const match::scattering_atom>(atoms), o);
    const auto v = host(map);
    double total = 0;
    for (double x : v) total += x;
    CHECK(total * s * s * s == doctest::Approx(match::forward_scattering(atoms)).epsilon(1e-5));
    const auto spec = fusor::fft::rfftn(map);
    const vec3 r0{c[0] - double(n[0] / 2) * s, c[1] - double(n[1] / 2) * s, c[2] - double(n[2] / 2) * s};  // voxel 0
    const double f0 = std::abs(structure_factor(atoms, {0, 0, 0}));
    double worst = 0;
    for (const auto& f : std::vector<std::array<index_t, 3>>{{1, 0, 0}, {0, 3, 2}, {5, -4, 7}, {-11, 8, 12}, {11, -9, 13}}) {
      const vec3 k{double(f[0]) / (n[0] * s), double(f[1]) / (n[1] * s), double(f[2]) / (n[2] * s)};
      const double pi = std::numbers::pi;
      const double ph = -2 * pi * (k[0] * r0[0] + k[1] * r0[1] + k[2] * r0[2]);
      // sum_v rho(r_v) e^(-2 pi i f.v/n) s^3 = e^(2 pi i k.r0) F(k)... written as F(k) shifted to voxel 0
      const std::complex<double> want = structure_factor(atoms, k) * std::complex<double>(std::cos(-ph), std::sin(-ph));
      const index_t i0 = (f[0] + n[0]) % n[0], i1 = (f[1] + n[1]) % n[1];
      const std::complex<double> got = std::complex<double>(spec.data()[(i0 * n[1] + i1) * (n[2] / 2 + 1) + f[2]]) * (s * s * s);
      worst = std::max(worst, std::abs(got - want) / f0);
    }
    MESSAGE("unblurred model: max error of F(k) ", worst, " of F(0)");
    CHECK(worst <= 2e-4);
    // the centre given: the same map moved by whole voxels
    o.center = vec3{c[0] + 2 * s, c[1] - s, c[2]};
    const auto moved = host(match::density_from_model(std::span<const match::scattering_atom>(atoms), o));
    double diff = 0, top = 0;
    for (index_t i = 2; i < n[0]; ++i)
      for (index_t j = 0; j + 1 < n[1]; ++j)
        for (index_t k = 0; k < n[2]; ++k) {
          top = std::max(top, std::abs(v[std::size_t((i * n[1] + j) * n[2] + k)]));
          diff = std::max(diff, std::abs(moved[std::size_t(((i - 2) * n[1] + j + 1) * n[2] + k)] - v[std::size_t((i * n[1] + j) * n[2] + k)]));
        }
    CHECK(diff <= 1e-5 * top);
    o.invert = true, o.center.reset();
    const auto dark = host(match::density_from_model(std::span<const match::scattering_atom>(atoms), o));
    CHECK(dark[100] == doctest::Approx(-v[100]));
    // a one-voxel box holds the mean density of the box
    o.invert = false, o.box = extents{1, 1, 1};
    const auto one = host(match::density_from_model(std::span<const match::scattering_atom>(atoms), o));
    CHECK(one[0] * s * s * s == doctest::Approx(match::forward_scattering(atoms)).epsilon(1e-5));
  }
  {  // a low-pass at 12 Å multiplies each Fourier coefficient by exp(-ln 2 (|k| 12 Å)^2), the
     // Gaussian bandpass written out (|k| in cycles per Å)
    match::model_density_options o;
    o.voxel_size = s, o.box = n, o.lowpass = 12;
    const auto low = fusor::fft::rfftn(match::density_from_model(std::span<const match::scattering_atom>(atoms), o));
    o.lowpass = 0;
    const auto full = fusor::fft::rfftn(match::density_from_model(std::span<const match::scattering_atom>(atoms), o));
    const index_t h = n[2] / 2 + 1;
    double worst = 0;
    for (index_t i = 0; i < n[0]; ++i)
      for (index_t j = 0; j < n[1]; ++j)
        for (index_t k = 0; k < h; ++k) {
          const double f0 = double(i <= (n[0] - 1) / 2 ? i : i - n[0]) / (n[0] * s), f1 = double(j <= (n[1] - 1) / 2 ? j : j - n[1]) / (n[1] * s),
                       f2 = double(k) / (n[2] * s);
          const double g = std::exp(-std::log(2.0) * (f0 * f0 + f1 * f1 + f2 * f2) * 144.0);
          const index_t q = (i * n[1] + j) * h + k;
          worst = std::max(worst, std::abs(std::complex<double>(low.data()[q]) - g * std::complex<double>(full.data()[q])));
        }
    CHECK(worst <= 1e-5 * std::abs(std::complex<double>(full.data()[0])));
  }
  const std::span<const match::scattering_atom> all(atoms);
  match::model_density_options bad;
  bad.voxel_size = 0, bad.box = n;
  CHECK_THROWS_WITH_AS(match::density_from_model(all, bad), doctest::Contains("voxel size > 0"), fusor::value_error);
  bad.voxel_size = s, bad.box = extents{4, 4};
  CHECK_THROWS_WITH_AS(match::density_from_model(all, bad), doctest::Contains("3-d shape"), fusor::shape_error);
  bad.box = n, bad.blur = -1;
  CHECK_THROWS_WITH_AS(match::density_from_model(all, bad), doctest::Contains("blur >= 0"), fusor::value_error);
  bad.blur = 0;
  auto broken = atoms;
  broken[1].b_factor = -5;
  CHECK_THROWS_WITH_AS(match::density_from_model(std::span<const match::scattering_atom>(broken), bad),
                       doctest::Contains("atom 1 has B-factor -5"), fusor::value_error);
  broken[1].b_factor = 5, broken[2].position[1] = std::nan("");
  CHECK_THROWS_WITH_AS(match::density_from_model(std::span<const match::scattering_atom>(broken), bad),
                       doctest::Contains("atom 2 has a non-finite coordinate y"), fusor::value_error);
  CHECK_THROWS_WITH_AS(match::density_from_model(std::span<const match::scattering_atom>(), bad), doctest::Contains("weight"),
                       fusor::value_error);
}

TEST_CASE("match resample: a Gaussian keeps its width and integral, down and up, on odd and even grids; maps to templates") {
  const double pi = std::numbers::pi, sigma = 3.0;
  const extents n{40, 36, 45};
  const vec3 g{19.4, 17.2, 23.9};  // the Gaussian's centre, voxels
  fusor::array<float> v(n);
  for (index_t i = 0; i < n[0]; ++i)
    for (index_t j = 0; j < n[1]; ++j)
      for (index_t k = 0; k < n[2]; ++k) {
        const double d2 = (i - g[0]) * (i - g[0]) + (j - g[1]) * (j - g[1]) + (k - g[2]) * (k - g[2]);
        v.data()[(i * n[1] + j) * n[2] + k] = float(std::exp(-d2 / (2 * sigma * sigma)));
      }
  for (const extents& m : {extents{25, 22, 28}, extents{64, 51, 61}, extents{40, 36, 45}}) {
    const auto r = host(match::fourier_resample(v, m));
    double err = 0, total = 0;
    for (index_t i = 0; i < m[0]; ++i)
      for (index_t j = 0; j < m[1]; ++j)
        for (index_t k = 0; k < m[2]; ++k) {
          const double x0 = double(i) * n[0] / m[0] - g[0], x1 = double(j) * n[1] / m[1] - g[1], x2 = double(k) * n[2] / m[2] - g[2];
          const double want = std::exp(-(x0 * x0 + x1 * x1 + x2 * x2) / (2 * sigma * sigma));
          const double got = r[std::size_t((i * m[1] + j) * m[2] + k)];
          err = std::max(err, std::abs(got - want));
          total += got * (double(n[0]) / m[0]) * (double(n[1]) / m[1]) * (double(n[2]) / m[2]);
        }
    INFO("resampled to ", fusor::to_string(m));
    CHECK(err <= 2e-5);
    CHECK(total == doctest::Approx(std::pow(2 * pi, 1.5) * sigma * sigma * sigma).epsilon(1e-5));
  }
  // a constant stays that constant on any grid, a one-voxel grid included
  const auto flat = host(match::fourier_resample(fusor::full<float, fusor::cpu>(extents{6, 5, 7}, 2.5f), extents{1, 9, 4}));
  for (double x : flat) CHECK(x == doctest::Approx(2.5).epsilon(1e-6));
  CHECK_THROWS_WITH_AS(match::fourier_resample(v, extents{4, 0, 4}), doctest::Contains("at least one voxel"), fusor::shape_error);

  // a map of 1 Å voxels to a template of 2.3 Å: the Gaussian (sigma 3 Å) centred on the box,
  // its width in Å kept, the voxel size returned within 0.1% of the one asked for
  match::map_template_options o;
  o.voxel_size = 2.3, o.box = extents{24, 24, 23}, o.center_of_mass = true;
  const auto t = match::template_from_map(v, {1.0, 1.0, 1.0}, o);
  for (double x : t.voxel_size) CHECK(std::abs(x - 2.3) <= 2.3e-3);
  const auto check_gaussian = [&](const std::vector<double>& got, const vec3& at, double sign) {
    double err = 0;
    for (index_t i = 0; i < 24; ++i)
      for (index_t j = 0; j < 24; ++j)
        for (index_t k = 0; k < 23; ++k) {
          const double x0 = (i - at[0]) * t.voxel_size[0], x1 = (j - at[1]) * t.voxel_size[1], x2 = (k - at[2]) * t.voxel_size[2];
          const double want = sign * std::exp(-(x0 * x0 + x1 * x1 + x2 * x2) / (2 * sigma * sigma));
          err = std::max(err, std::abs(got[std::size_t((i * 24 + j) * 23 + k)] - want));
        }
    return err;
  };
  CHECK(check_gaussian(host(t.volume), {12, 12, 11}, 1) <= 1e-4);
  // centred on the map's centre voxel instead: the Gaussian sits where it was relative to it
  o.center_of_mass = false;
  const auto u = match::template_from_map(v, {1.0, 1.0, 1.0}, o);
  CHECK(check_gaussian(host(u.volume), {12 + (g[0] - 20) / u.voxel_size[0], 12 + (g[1] - 18) / u.voxel_size[1], 11 + (g[2] - 22) / u.voxel_size[2]}, 1) <= 1e-4);
  // mirrored along z about the centre voxel, and inverted
  o.mirror = true, o.invert = true;
  const auto w = match::template_from_map(v, {1.0, 1.0, 1.0}, o);
  CHECK(check_gaussian(host(w.volume), {12 + (g[0] - 20) / u.voxel_size[0], 12 + (g[1] - 18) / u.voxel_size[1], 11 - (g[2] - 22) / u.voxel_size[2]}, -1) <= 1e-4);
  o.voxel_size = 0;
  CHECK_THROWS_WITH_AS(match::template_from_map(v, {1.0, 1.0, 1.0}, o), doctest::Contains("voxel size > 0"), fusor::value_error);
  o.voxel_size = 2.3, o.center_of_mass = true;
  CHECK_THROWS_WITH_AS(match::template_from_map(fusor::array<float>(-v), {1.0, 1.0, 1.0}, o), doctest::Contains("positive density"),
                       fusor::value_error);
  CHECK_THROWS_WITH_AS(match::template_from_map(v, {1.0, -1.0, 1.0}, o), doctest::Contains("along y"), fusor::value_error);
  CHECK_THROWS_WITH_AS(match::template_from_map(fusor::ones<float, fusor::cpu>(extents{1, 1, 1}), {1.0, 1.0, 1.0},
                                                match::map_template_options{1000, {}, false, 0, false, false}),
                       doctest::Contains("within 0.1%"), fusor::value_error);
}

TEST_CASE("match tight mask: the distance transform against brute force; threshold, dilation and soft edge; bad input") {
  const extents n{9, 7, 11};
  fusor::array<float> t(n);
  std::vector<char> in(std::size_t(n.numel()));
  for (index_t q = 0; q < n.numel(); ++q) {
    const double x = std::sin(0.37 * double(q * q % 101) + 0.5);
    t.data()[q] = float(x);
    in[std::size_t(q)] = x > 0.93;
  }
  const auto d = match::distance_transform(n, [&](index_t q) { return bool(in[std::size_t(q)]); });
  const auto brute = [&](index_t q) {
    const index_t i = q / (n[1] * n[2]), j = (q / n[2]) % n[1], k = q % n[2];
    double best = std::numeric_limits<double>::infinity();
    for (index_t p = 0; p < n.numel(); ++p)
      if (in[std::size_t(p)]) {
        const index_t a = p / (n[1] * n[2]) - i, b = (p / n[2]) % n[1] - j, c = p % n[2] - k;
        best = std::min(best, std::sqrt(double(a * a + b * b + c * c)));
      }
    return best;
  };
  double err = 0;
  for (index_t q = 0; q < n.numel(); ++q) err = std::max(err, std::abs(d[std::size_t(q)] - brute(q)));
  CHECK(err <= 1e-12);
  const auto none = match::distance_transform(extents{2, 3, 1}, [](index_t) { return false; });
  for (double x : none) CHECK(std::isinf(x));

  match::tight_mask_options o;
  o.threshold = 0.93, o.dilation = 1.5, o.soft_edge = 2.5;
  const auto m = host(match::tight_mask(t, o));
  for (index_t q = 0; q < n.numel(); ++q) {
    const double e = brute(q) - 1.5;
    const double want = e <= 0 ? 1 : e < 2.5 ? 0.5 * (1 + std::cos(std::numbers::pi * e / 2.5)) : 0;
    CHECK(m[std::size_t(q)] == doctest::Approx(want).epsilon(1e-6));
  }
  o.dark = true, o.threshold = -0.93;  // the same particle with dark protein
  const auto dm = host(match::tight_mask(fusor::array<float>(-t), o));
  for (std::size_t q = 0; q < dm.size(); ++q) CHECK(dm[q] == m[q]);
  o.dark = false, o.threshold = 2;
  CHECK_THROWS_WITH_AS(match::tight_mask(t, o), doctest::Contains("no voxel of the template is above the threshold"), fusor::value_error);
  o.threshold = 0, o.soft_edge = -1;
  CHECK_THROWS_WITH_AS(match::tight_mask(t, o), doctest::Contains("soft edge >= 0"), fusor::value_error);
  o.soft_edge = 0, o.dilation = std::nan("");
  CHECK_THROWS_WITH_AS(match::tight_mask(t, o), doctest::Contains("dilation >= 0"), fusor::value_error);
}


TEST_CASE("match score histogram: the noise's Gaussian fitted under a tail of copies; false positives; masks; bad input") {
  const extents n{60, 50, 101};  // 303000 voxels
  fusor::array<float> map(n);
  std::mt19937_64 rng(11);
  std::normal_distribution<double> noise(0.01, 0.05);
  for (index_t q = 0; q < map.size(); ++q) map.data()[q] = float(noise(rng));
  fusor::array<float> mask = fusor::ones<float, fusor::cpu>(n);
  for (index_t q = 0; q < 300; ++q) {  // copies: a tail at 0.45, outside a mask that keeps the noise only
    map.data()[q * 1000 + 7] = float(0.45 + 0.02 * std::sin(double(q)));
    mask.data()[q * 1000 + 7] = 0;
  }
  const auto h = match::score_histogram(map, 200);
  CHECK(h.total() == doctest::Approx(double(n.numel())));
  const auto f = match::fit_noise(h);
  MESSAGE("noise fit: mean ", f.mean, " sigma ", f.sigma, " samples ", f.samples, " over bins ", f.first, " to ", f.last);
  CHECK(std::abs(f.mean - 0.01) < 0.002);
  CHECK(std::abs(f.sigma / 0.05 - 1) < 0.02);
  CHECK(std::abs(f.samples / 302700 - 1) < 0.03);
  CHECK(h.center(f.last) < 0.3);  // the tail is left out
  // the closed form, and the cut-off its inverse
  const double t = 0.2;
  CHECK(match::expected_false_positives(f, t) ==
        doctest::Approx(f.samples * 0.5 * std::erfc((t - f.mean) / (f.sigma * std::sqrt(2.0)))).epsilon(1e-12));
  for (double fp : {0.1, 1.0, 50.0})
    CHECK(match::expected_false_positives(f, match::noise_cutoff(f, fp)) == doctest::Approx(fp).epsilon(1e-8));
  // the mask leaves the copies out
  const auto hm = match::score_histogram(map, 200, &mask);
  CHECK(hm.total() == doctest::Approx(double(n.numel() - 300)));
  CHECK(hm.low + hm.width * 200 < 0.4);
  CHECK_THROWS_WITH_AS(match::score_histogram(map, 2), doctest::Contains("3 to 100000 bins"), fusor::value_error);
  CHECK_THROWS_WITH_AS(match::score_histogram(map, 50, &flat_mask_of(extents{2, 2, 2})), doctest::Contains("is not the map's"),
                       fusor::shape_error);
  CHECK_THROWS_WITH_AS(match::fit_noise(match::score_histogram(fusor::array<float>(fusor::zeros<float, fusor::cpu>(extents{3, 3, 3})), 20)),
                       doctest::Contains("no Gaussian bell"), fusor::value_error);
  CHECK_THROWS_WITH_AS(match::noise_cutoff(f, 0), doctest::Contains("false positives in (0,"), fusor::value_error);
}

TEST_CASE("match white top-hat: against erosion and dilation written out, every connectivity; spikes stay, plateaus go") {
  const extents n{7, 6, 9};
  fusor::array<float> v(n);
  for (index_t q = 0; q < v.size(); ++q) v.data()[q] = float(std::sin(1.7 * double(q)) + 0.3 * std::cos(0.31 * double(q * q % 97)));
  const auto at = [&](const std::vector<double>& a, index_t i, index_t j, index_t k) {
    i = std::clamp<index_t>(i, 0, n[0] - 1), j = std::clamp<index_t>(j, 0, n[1] - 1), k = std::clamp<index_t>(k, 0, n[2] - 1);
    return a[std::size_t((i * n[1] + j) * n[2] + k)];
  };
  for (int conn : {1, 2, 3}) {
    const auto pass = [&](const std::vector<double>& a, bool take_min) {
      std::vector<double> out(a.size());
      for (index_t i = 0; i < n[0]; ++i)
        for (index_t j = 0; j < n[1]; ++j)
          for (index_t k = 0; k < n[2]; ++k) {
            double best = at(a, i, j, k);
            for (int x = -1; x <= 1; ++x)
              for (int y = -1; y <= 1; ++y)
                for (int z = -1; z <= 1; ++z)
                  if (x * x + y * y + z * z <= conn)
                    best = take_min ? std::min(best, at(a, i + x, j + y, k + z)) : std::max(best, at(a, i + x, j + y, k + z));
            out[std::size_t((i * n[1] + j) * n[2] + k)] = best;
          }
      return out;
    };
    const std::vector<double> in = host(v);
    const auto opened = pass(pass(in, true), false);
    const auto got = host(match::white_tophat(v, conn));
    double err = 0;
    for (std::size_t q = 0; q < in.size(); ++q) err = std::max(err, std::abs(got[q] - (in[q] - opened[q])));
    CAPTURE(conn);
    CHECK(err <= 1e-6);
  }
  // a one-voxel spike of 2 on a plateau of 1 wider than the element: 2 - 1 at the spike, 0 elsewhere
  fusor::array<float> s = fusor::full<float, fusor::cpu>(n, 1.0f);
  s.data()[(3 * n[1] + 2) * n[2] + 4] = 2;
  const auto top = host(match::white_tophat(s));
  for (index_t q = 0; q < s.size(); ++q) CHECK(top[std::size_t(q)] == (q == (3 * n[1] + 2) * n[2] + 4 ? 1.0 : 0.0));
  CHECK_THROWS_WITH_AS(match::white_tophat(s, 4), doctest::Contains("connectivity of 1, 2 or 3"), fusor::value_error);
}


TEST_CASE("match phase randomisation: the template's amplitudes, other phases, by seed; noise subtraction") {
  const extents n{21, 20, 19};
  match::mask_options soft;
  soft.edge = match::mask_edge::gaussian(1.0);
  const fusor::array<float> templ = match::ellipsoid_mask<fusor::cpu>(n, {6, 4, 3}, soft);
  const auto amplitudes = [&](const fusor::array<float>& v) {
    const auto f = fusor::fft::rfftn(v);
    std::vector<double> a(std::size_t(f.size()));
    for (index_t q = 0; q < f.size(); ++q) a[std::size_t(q)] = std::abs(f.data()[q]);
    return a;
  };
  const auto want = amplitudes(templ);
  const double top = *std::max_element(want.begin(), want.end());
  const auto correlation = [](const std::vector<double>& a, const std::vector<double>& b) {
    double ma = 0, mb = 0;
    for (std::size_t i = 0; i < a.size(); ++i) ma += a[i], mb += b[i];
    ma /= double(a.size()), mb /= double(b.size());
    double ab = 0, aa = 0, bb = 0;
    for (std::size_t i = 0; i < a.size(); ++i) ab += (a[i] - ma) * (b[i] - mb), aa += (a[i] - ma) * (a[i] - ma), bb += (b[i] - mb) * (b[i] - mb);
    return ab / std::sqrt(aa * bb);
  };
  const auto a = match::phase_randomized(templ, 321);
  const auto b = match::phase_randomized(templ, 321);
  const auto c = match::phase_randomized(templ, 322);
  for (const fusor::array<float>* v : {&a, &c}) {
    const auto got = amplitudes(*v);
    double err = 0;
    for (std::size_t q = 0; q < got.size(); ++q) err = std::max(err, std::abs(got[q] - want[q]));
    CHECK(err <= 1e-4 * top);
    CHECK(std::abs(correlation(host(*v), host(templ))) < 0.35);  // few low frequencies carry an ellipsoid
  }
  CHECK(host(a) == host(b));
  CHECK(host(a) != host(c));
  // the correction: scores - noise + mean(noise), NaN kept
  fusor::array<float> s(extents{1, 1, 3}), e(extents{1, 1, 3});
  s.data()[0] = 0.5f, s.data()[1] = 0.2f, s.data()[2] = std::nanf("");
  e.data()[0] = 0.3f, e.data()[1] = 0.1f, e.data()[2] = 0.2f;
  double noise_mean = 0;
  const auto corrected = host(match::subtract_noise_scores(s, e, &noise_mean));
  CHECK(noise_mean == doctest::Approx((0.3 + 0.1 + 0.2) / 3));
  CHECK(corrected[0] == doctest::Approx(0.5 - 0.3 + 0.2));
  CHECK(corrected[1] == doctest::Approx(0.2 - 0.1 + 0.2));
  CHECK(std::isnan(corrected[2]));
  CHECK_THROWS_WITH_AS(match::subtract_noise_scores(s, templ), doctest::Contains("is not the scores'"), fusor::shape_error);
  CHECK_THROWS_WITH_AS(match::phase_randomized(fusor::array<float>(extents{0, 2, 2}), 1), doctest::Contains("non-empty template"),
                       fusor::shape_error);
}

// The backend-generic bodies (interpolation, rigid transforms, masks) on the cpu backend.
#define TEST_BACKEND fusor::cpu
#include "generic/match_body.hpp"
