// NumPy-completeness bodies written once and instantiated per backend: the elementwise functions
// NumPy has beyond the engine's first set, isclose and the whole-array comparisons, order
// statistics (median, quantile, percentile, by selection), partition, and the NaN-ignoring
// reductions. tests/test_numpy.cpp runs them on cpu (in the test_sort program), test_core_cuda.cu
// on cuda. References are plain loops over a full std::sort, the C++ library's functions
// (std::cyl_bessel_i for i0, std::gcd) in long double, and hand-computed cases; NumPy's own
// numbers come from the fixtures in tests/data/stats (tests/test_numpy.cpp, cpu).
//
// The includer defines TEST_BACKEND (fusor::cpu or fusor::cuda) before including this file.
#include "../common.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <set>
#include <tuple>
#include <string>
#include <vector>

namespace npbody {

using fusor::index_t;
using B = TEST_BACKEND;
using test::host_values;
#if defined(__CUDACC__)
using ref_t = double;
#else
using ref_t = long double;
#endif

template <class T>
fusor::array<T, B> dev(const std::vector<T>& v, const fusor::extents& shape) {
  return test::on<B>(v, shape);
}
template <class T>
fusor::array<T, B> dev(const std::vector<T>& v) {
  return test::on<B>(v);
}
template <class T>
fusor::array<T, B> vec(std::initializer_list<T> v) {
  return dev(std::vector<T>(v));
}
template <class T>
std::vector<index_t> sizes() {
  return test::edge_sizes<T>(false);  // 0, 1, W-1, W, W+1, 3W+5
}
inline constexpr double nan = std::numeric_limits<double>::quiet_NaN();
inline constexpr double inf = std::numeric_limits<double>::infinity();

/// f(x) on every edge size, contiguous and every other element of a buffer, against ref per element.
template <class T, class F, class Ref>
void check_unary(const char* name, F f, Ref ref, double lo, double hi, double tol) {
  for (index_t n : sizes<T>()) {
    const auto v = test::values<T>(n, lo, hi, std::uint64_t(n) + 11);
    std::vector<T> wide(2 * v.size());
    for (std::size_t i = 0; i < v.size(); ++i) wide[2 * i] = v[i];
    auto x = dev(v), xw = dev(wide);
    const auto got = host_values(f(x));
    const auto got_strided = host_values(f(xw(fusor::range(0, 2 * n, 2))));
    REQUIRE(got.size() == v.size());
    REQUIRE(got_strided.size() == v.size());
    index_t bad = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
      using R = typename decltype(got)::value_type;
      const R want = static_cast<R>(ref(v[i]));
      if (!test::close(got[i], want, tol) || !test::close(got_strided[i], want, tol)) {
        if (bad++ == 0) {
          INFO(name, " n=", n, " x=", double(v[i]), " got ", double(got[i]), " want ", double(want));
          CHECK(false);
        }
      }
    }
    CHECK(bad == 0);
  }
}
/// f(x, y) against ref per element, on every edge size.
template <class T, class F, class Ref>
void check_binary(const char* name, F f, Ref ref, double lo, double hi, double tol) {
  for (index_t n : sizes<T>()) {
    const auto v = test::values<T>(n, lo, hi, std::uint64_t(n) + 21), w = test::values<T>(n, lo, hi, std::uint64_t(n) + 22);
    const auto got = host_values(f(dev(v), dev(w)));
    REQUIRE(got.size() == v.size());
    index_t bad = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
      using R = typename decltype(got)::value_type;
      const R want = static_cast<R>(ref(v[i], w[i]));
      if (!test::close(got[i], want, tol) && bad++ == 0) {
        INFO(name, " n=", n, " x=", double(v[i]), " y=", double(w[i]), " got ", double(got[i]), " want ", double(want));
        CHECK(false);
      }
    }
    CHECK(bad == 0);
  }
}

/// NumPy's quantile written out from its documentation over a fully sorted copy: the reference
/// for the selection code (which never sorts on cpu).
inline double ref_quantile(std::vector<double> v, double q, fusor::quantile_method m, bool skip_nan) {
  if (skip_nan) v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return std::isnan(x); }), v.end());
  if (v.empty()) return nan;
  for (double x : v)
    if (std::isnan(x)) return nan;
  std::sort(v.begin(), v.end());
  const double idx = q * double(v.size() - 1);
  const double lo = std::floor(idx), hi = std::ceil(idx);
  const double a = v[std::size_t(lo)], b = v[std::size_t(hi)];
  switch (m) {
    case fusor::quantile_method::lower: return a;
    case fusor::quantile_method::higher: return b;
    case fusor::quantile_method::nearest: return v[std::size_t(std::nearbyint(idx))];
    case fusor::quantile_method::midpoint: return lo == hi ? a : (a + b) / 2;
    default: return lo == hi ? a : a + (b - a) * (idx - lo);
  }
}

}  // namespace npbody

using namespace fusor;
using test::host_values;
using npbody::B;

TEST_CASE_TEMPLATE("NumPy's further elementwise functions against the C++ library", T, float, double) {
  using R = npbody::ref_t;
  const double tol = test::ulps<T>(8);
  npbody::check_unary<T>("reciprocal", [](const auto& a) { return reciprocal(a); }, [](T x) { return R(1) / R(x); }, 0.1, 9, tol);
  npbody::check_unary<T>("rint", [](const auto& a) { return rint(a); }, [](T x) { return std::nearbyint(x); }, -9, 9, 0);
  npbody::check_unary<T>("fix", [](const auto& a) { return fix(a); }, [](T x) { return std::trunc(x); }, -9, 9, 0);
  npbody::check_unary<T>("signbit", [](const auto& a) { return signbit(a); }, [](T x) { return std::signbit(x); }, -9, 9, 0);
  npbody::check_unary<T>("deg2rad", [](const auto& a) { return deg2rad(a); },
                         [](T x) { return R(x) * std::acos(R(-1)) / 180; }, -720, 720, tol);
  npbody::check_unary<T>("rad2deg", [](const auto& a) { return degrees(a); },
                         [](T x) { return R(x) * 180 / std::acos(R(-1)); }, -7, 7, tol);
  npbody::check_unary<T>("sinc", [](const auto& a) { return sinc(a); },
                         [](T x) {
                           const R y = std::acos(R(-1)) * R(x);
                           return x == 0 ? R(1) : std::sin(y) / y;
                         },
                         -6, 6, 64 * test::ulps<T>(1));
  // i0 against the C++17 special function, across both of its formulas (the series to 30, the
  // asymptotic series beyond)
  npbody::check_unary<T>("i0", [](const auto& a) { return i0(a); }, [](T x) { return std::cyl_bessel_i(R(0), std::abs(R(x))); },
                         -60, 60, test::ulps<T>(16));
  npbody::check_binary<T>("hypot", [](const auto& a, const auto& b) { return hypot(a, b); },
                          [](T x, T y) { return std::sqrt(R(x) * R(x) + R(y) * R(y)); }, -1e3, 1e3, tol);
  npbody::check_binary<T>("copysign", [](const auto& a, const auto& b) { return copysign(a, b); },
                          [](T x, T y) { return std::copysign(x, y); }, -9, 9, 0);
  npbody::check_binary<T>("fmod", [](const auto& a, const auto& b) { return fmod(a, b); },
                          [](T x, T y) { return std::fmod(x, y); }, -9, 9, 0);
  npbody::check_binary<T>("remainder", [](const auto& a, const auto& b) { return remainder(a, b); },
                          [](T x, T y) {  // Python's %: the divisor's sign
                            const T r = std::fmod(x, y);
                            return (r != 0 && ((r < 0) != (y < 0))) ? T(r + y) : r;
                          },
                          -9, 9, tol);
  npbody::check_binary<T>("logaddexp", [](const auto& a, const auto& b) { return logaddexp(a, b); },
                          [](T x, T y) { return std::log(std::exp(R(x)) + std::exp(R(y))); }, -30, 30, tol);
  npbody::check_binary<T>("logaddexp2", [](const auto& a, const auto& b) { return logaddexp2(a, b); },
                          [](T x, T y) { return std::log2(std::exp2(R(x)) + std::exp2(R(y))); }, -30, 30, tol);
  npbody::check_binary<T>("heaviside", [](const auto& a, const auto& b) { return heaviside(floor(a), b); },
                          [](T x, T y) { return std::floor(x) < 0 ? T(0) : (std::floor(x) > 0 ? T(1) : y); }, -2, 2, 0);

  // special values, as NumPy gives them
  const std::vector<T> sv{T(0), T(-0.0), T(npbody::inf), T(-npbody::inf), T(npbody::nan), T(1), T(-2.5)};
  const auto x = npbody::dev(sv);
  const auto sinc_v = host_values(sinc(x));
  CHECK(sinc_v[0] == 1);
  CHECK(sinc_v[1] == 1);
  CHECK(std::isnan(sinc_v[4]));
  const auto sb = host_values(signbit(x));
  CHECK(sb == std::vector<bool>{false, true, false, true, false, false, true});
  const auto i0v = host_values(i0(x));
  CHECK(i0v[0] == 1);
  CHECK(std::isinf(i0v[2]));
  CHECK(std::isinf(i0v[3]));
  CHECK(std::isnan(i0v[4]));
  const auto la = host_values(logaddexp(x, x));
  CHECK(la[2] == T(npbody::inf));   // inf + inf: no NaN from inf - inf
  CHECK(la[3] == T(-npbody::inf));  // log(0 + 0)
  CHECK(std::isnan(la[4]));
  CHECK(host_values(logaddexp2(x, x))[5] == 2);
  const auto hv = host_values(heaviside(x, T(0.5)));
  CHECK(hv[0] == T(0.5));
  CHECK(hv[2] == 1);
  CHECK(hv[3] == 0);
  CHECK(std::isnan(hv[4]));
  const auto nn = host_values(nan_to_num(x));
  CHECK(nn[2] == std::numeric_limits<T>::max());
  CHECK(nn[3] == std::numeric_limits<T>::lowest());
  CHECK(nn[4] == 0);
  CHECK(nn[6] == T(-2.5));
  const auto nc = host_values(nan_to_num(x, {.nan = -1, .posinf = 7, .neginf = -7}));
  CHECK(nc[2] == 7);
  CHECK(nc[3] == -7);
  CHECK(nc[4] == -1);
  CHECK(host_values(copysign(x, T(-1)))[0] == 0);
  CHECK(std::signbit(host_values(copysign(x, T(-1)))[0]));
  CHECK(std::isnan(host_values(fmod(x, T(0)))[5]));  // x fmod 0 is NaN for floats
  CHECK(host_values(hypot(x, T(npbody::nan)))[2] == T(npbody::inf));  // hypot(inf, NaN) = inf (C and NumPy)
  CHECK(host_values(reciprocal(x))[1] == T(-npbody::inf));
}

TEST_CASE("NumPy's further elementwise functions on integers, and their result types") {
  for (index_t n : npbody::sizes<std::int32_t>()) {
    const auto a = test::values<std::int32_t>(n, -1000, 1000, 31), b = test::values<std::int32_t>(n, -60, 60, 32);
    const auto g = host_values(gcd(npbody::dev(a), npbody::dev(b)));
    const auto l = host_values(lcm(npbody::dev(a), npbody::dev(b)));
    const auto fm = host_values(fmod(npbody::dev(a), npbody::dev(b)));
    const auto rc = host_values(reciprocal(npbody::dev(b)));
    for (std::size_t i = 0; i < a.size(); ++i) {
      CHECK(g[i] == std::gcd(a[i], b[i]));  // std::gcd and std::lcm of the magnitudes
      CHECK(l[i] == std::lcm(a[i], b[i]));
      CHECK(fm[i] == (b[i] == 0 ? 0 : a[i] % b[i]));
      CHECK(rc[i] == (b[i] == 0 ? 0 : 1 / b[i]));
    }
  }
  const auto big = npbody::dev(std::vector<std::int64_t>{std::numeric_limits<std::int64_t>::min(), 0, -12, 18});
  const auto gb = host_values(gcd(big, std::int64_t(0)));
  CHECK(gb[1] == 0);
  CHECK(gb[2] == 12);
  CHECK(host_values(lcm(big, std::int64_t(4)))[3] == 36);
  // NumPy's result types: rint and hypot of integers are float64; fix and signbit keep integers
  const auto iv = npbody::dev(std::vector<std::int32_t>{-3, 0, 4});
  static_assert(std::is_same_v<value_t<decltype(rint(iv))>, double>);
  static_assert(std::is_same_v<value_t<decltype(hypot(iv, iv))>, double>);
  static_assert(std::is_same_v<value_t<decltype(fix(iv))>, std::int32_t>);
  static_assert(std::is_same_v<value_t<decltype(signbit(iv))>, bool>);
  static_assert(std::is_same_v<value_t<decltype(gcd(iv, iv))>, std::int32_t>);
  static_assert(std::is_same_v<value_t<decltype(hypot(npbody::dev(std::vector<float>{1}), 2.0))>, float>);
  CHECK(host_values(hypot(iv, 4)) == std::vector<double>{5, 4, std::sqrt(32.0)});
  CHECK(host_values(signbit(iv)) == std::vector<bool>{true, false, false});
  CHECK(host_values(nan_to_num(iv)) == std::vector<std::int32_t>{-3, 0, 4});
}

TEST_CASE("isclose, allclose, array_equal and array_equiv follow NumPy's rules") {
  const std::vector<double> av{1.0, 1e10, 1e-8, npbody::inf, -npbody::inf, npbody::nan, 0.0, 1.0};
  const std::vector<double> bv{1.0 + 1e-6, 1.00001e10, 0.0, npbody::inf, npbody::inf, npbody::nan, 1e-9, 1.1};
  const auto a = npbody::dev(av), b = npbody::dev(bv);
  CHECK(host_values(isclose(a, b)) == std::vector<bool>{true, true, true, true, false, false, true, false});
  CHECK(host_values(isclose(a, b, {.equal_nan = true}))[5]);
  CHECK(host_values(isclose(a, b, {.rtol = 0, .atol = 0})) ==
        std::vector<bool>{false, false, false, true, false, false, false, false});
  CHECK(host_values(isclose(a, b, {.rtol = 0.2}))[7]);
  // the formula is asymmetric: |a - b| <= atol + rtol |b|
  const auto p = npbody::dev(std::vector<double>{100}), q = npbody::dev(std::vector<double>{110});
  CHECK(host_values(isclose(p, q, {.rtol = 0.095, .atol = 0}))[0]);
  CHECK_FALSE(host_values(isclose(q, p, {.rtol = 0.095, .atol = 0}))[0]);
  CHECK_THROWS_AS((void)isclose(a, b, {.rtol = -1}), value_error);
  // float32 compares in float32 (NumPy's weak Python-float tolerances)
  const auto f = npbody::dev(std::vector<float>{1.0f}), g = npbody::dev(std::vector<float>{1.0f + 5e-6f});
  CHECK(host_values(isclose(f, g))[0]);

  CHECK(allclose(a(range(0, 4)), b(range(0, 4))));
  CHECK_FALSE(allclose(a, b));
  CHECK(allclose(a(range(0, 4)), b(range(0, 4)), {.rtol = 1e-3}));
  const auto row = npbody::dev(std::vector<double>{1, 2, 3}), mat = npbody::dev(std::vector<double>{1, 2, 3, 1, 2, 3}, {2, 3});
  CHECK(allclose(mat, row));  // broadcasting
  CHECK_THROWS_AS((void)allclose(mat, npbody::dev(std::vector<double>{1, 2})), shape_error);
  CHECK(allclose(mat, 2.0, {.atol = 1.0}));

  CHECK(array_equal(row, npbody::dev(std::vector<double>{1, 2, 3})));
  CHECK_FALSE(array_equal(row, mat));  // broadcastable but not the same shape
  CHECK_FALSE(array_equal(row, npbody::dev(std::vector<double>{1, 2, 4})));
  const auto withnan = npbody::dev(std::vector<double>{1, npbody::nan});
  CHECK_FALSE(array_equal(withnan, withnan));
  CHECK(array_equal(withnan, withnan, true));
  CHECK(array_equiv(row, mat));
  CHECK_FALSE(array_equiv(row, npbody::dev(std::vector<double>{1, 2})));  // not broadcastable: false, no error
  CHECK_FALSE(array_equiv(mat, npbody::dev(std::vector<double>{1, 2, 4})));
  CHECK(array_equal(npbody::dev(std::vector<double>{}), npbody::dev(std::vector<double>{})));
}

TEST_CASE("median, quantile and percentile against a full sort, every method, along axes") {
  using M = quantile_method;
  const M methods[] = {M::linear, M::lower, M::higher, M::nearest, M::midpoint};
  const double qs[] = {0.0, 0.1, 0.25, 0.5, 0.7, 0.75, 1.0};
  // whole arrays: every edge size, odd and even, one and several quantiles
  for (index_t n : {index_t(1), index_t(2), test::lanes<double> - 1, test::lanes<double> + 1, index_t(33), index_t(1001)}) {
    CAPTURE(n);
    const auto v = test::values<double>(n, -50, 50, std::uint64_t(n) + 40);
    const auto x = npbody::dev(v);
    CHECK(median(x) == doctest::Approx(npbody::ref_quantile(v, 0.5, M::midpoint, false)).epsilon(1e-14));
    for (M m : methods) {
      CAPTURE(int(m));
      for (double q : qs) {
        CAPTURE(q);
        const double want = npbody::ref_quantile(v, q, m, false);
        CHECK(quantile(x, q, m) == doctest::Approx(want).epsilon(1e-14));
        CHECK(percentile(x, 100 * q, m) == doctest::Approx(want).epsilon(1e-14));
      }
      const auto several = host_values(quantile(x, std::vector<double>(std::begin(qs), std::end(qs)), m));
      REQUIRE(several.size() == std::size(qs));
      for (std::size_t k = 0; k < std::size(qs); ++k)
        CHECK(several[k] == doctest::Approx(npbody::ref_quantile(v, qs[k], m, false)).epsilon(1e-14));
    }
    // float keeps float; the input is not modified
    const auto vf = test::values<float>(n, -50, 50, std::uint64_t(n) + 41);
    const auto xf = npbody::dev(vf);
    const float mf = median(xf);
    std::vector<double> vd(vf.begin(), vf.end());
    CHECK(mf == doctest::Approx(npbody::ref_quantile(vd, 0.5, M::midpoint, false)).epsilon(1e-6));
    CHECK(host_values(xf) == vf);
  }
  // integers give float64, as in NumPy
  const auto iv = npbody::dev(std::vector<std::int32_t>{7, -3, 4, 4, 10, 0});
  static_assert(std::is_same_v<decltype(median(iv)), double>);
  CHECK(median(iv) == 4.0);
  CHECK(quantile(iv, 0.9) == doctest::Approx(8.5));
  CHECK(percentile(iv, 50.0, M::lower) == 4.0);
  // hand-computed: NumPy's documentation example [[10, 7, 4], [3, 2, 1]]
  const auto a = npbody::dev(std::vector<double>{10, 7, 4, 3, 2, 1}, {2, 3});
  CHECK(median(a) == 3.5);
  CHECK(host_values(median(a, 0)) == std::vector<double>{6.5, 4.5, 2.5});
  CHECK(host_values(median(a, 1)) == std::vector<double>{7, 2});
  CHECK(median(a, 1, true).shape() == extents{2, 1});
  CHECK(percentile(a, 50.0) == 3.5);
  CHECK(host_values(percentile(a, 50.0, 0)) == std::vector<double>{6.5, 4.5, 2.5});
  // along every axis of a 3-d array, with keepdims and several quantiles
  const index_t d0 = 4, d1 = 5, d2 = 7;
  const auto v3 = test::values<double>(d0 * d1 * d2, -5, 5, 50);
  const auto x3 = npbody::dev(v3, {d0, d1, d2});
  const std::vector<double> q3{0.2, 0.5, 0.95};
  const index_t dims[] = {d0, d1, d2};
  for (int axis = -3; axis < 3; ++axis) {
    CAPTURE(axis);
    const int ax = axis < 0 ? axis + 3 : axis;
    for (M m : methods) {
      const auto r = quantile(x3, q3, axis, false, m);
      const auto rk = quantile(x3, q3, axis, true, m);
      extents want_shape{3};
      for (int k = 0; k < 3; ++k)
        if (k != ax) want_shape.push_back(dims[k]);
      REQUIRE(r.shape() == want_shape);
      CHECK(rk.shape()[ax + 1] == 1);
      const auto got = host_values(r);
      std::size_t at = 0;
      for (std::size_t qi = 0; qi < q3.size(); ++qi)
        for (index_t i = 0; i < (ax == 0 ? d1 : d0); ++i)
          for (index_t j = 0; j < (ax == 2 ? d1 : d2); ++j) {
            std::vector<double> line;
            for (index_t t = 0; t < dims[ax]; ++t) {
              const index_t idx0 = ax == 0 ? t : i, idx1 = ax == 0 ? i : (ax == 1 ? t : j), idx2 = ax == 2 ? t : j;
              line.push_back(v3[std::size_t((idx0 * d1 + idx1) * d2 + idx2)]);
            }
            CHECK(got[at++] == doctest::Approx(npbody::ref_quantile(line, q3[qi], m, false)).epsilon(1e-14));
          }
    }
  }
  // empty: NaN (NumPy warns); a 0-d array is one value
  CHECK(std::isnan(median(npbody::dev(std::vector<double>{}))));
  // the median is the mean of the middle two (NumPy), so an infinite one gives inf, not inf - inf
  CHECK(median(npbody::vec<double>({1, npbody::inf})) == npbody::inf);
  CHECK(nanmedian(npbody::vec<double>({1, npbody::inf, npbody::nan})) == npbody::inf);
  CHECK(std::isnan(quantile(npbody::vec<double>({1, npbody::inf}), 0.5, quantile_method::midpoint)));  // NumPy's lerp
  CHECK(host_values(median(npbody::dev(std::vector<double>{}, {0, 3}), 0)).size() == 3);
  CHECK(std::isnan(host_values(median(npbody::dev(std::vector<double>{}, {0, 3}), 0))[0]));
  CHECK(median(npbody::dev(std::vector<double>{2.5}, extents{})) == 2.5);
  // bad input: q outside its range, a 0-d array along an axis, an axis out of range
  CHECK_THROWS_WITH_AS((void)quantile(a, 1.5), "fusor: quantile expects q in [0, 1], got 1.500000", value_error);
  CHECK_THROWS_WITH_AS((void)percentile(a, -1.0), "fusor: percentile expects q in [0, 100], got -1.000000", value_error);
  CHECK_THROWS_AS((void)quantile(a, std::vector<double>{0.5, npbody::nan}), value_error);
  CHECK_THROWS_AS((void)median(npbody::dev(std::vector<double>{1}, extents{}), 0), index_error);
  CHECK_THROWS_AS((void)median(a, 2), index_error);
}

TEST_CASE("NaN in order statistics: propagated by the plain forms, ignored by the nan- forms") {
  using M = quantile_method;
  const double nan = npbody::nan;
  const std::vector<double> v{3, nan, 1, 7, nan, 2, 9};
  const auto x = npbody::dev(v);
  CHECK(std::isnan(median(x)));
  CHECK(std::isnan(quantile(x, 0.3)));
  CHECK(nanmedian(x) == 3.0);
  for (double q : {0.0, 0.3, 0.5, 0.9, 1.0})
    for (M m : {M::linear, M::lower, M::higher, M::nearest, M::midpoint})
      CHECK(nanquantile(x, q, m) == doctest::Approx(npbody::ref_quantile(v, q, m, true)).epsilon(1e-14));
  CHECK(nanpercentile(x, 25.0) == doctest::Approx(npbody::ref_quantile(v, 0.25, M::linear, true)));
  // rows: a clean row, a row with NaN, an all-NaN row
  const auto r = npbody::dev(std::vector<double>{4, 1, 3, 2, nan, 5, 1, 2, nan, nan, nan, nan}, {3, 4});
  const auto med = host_values(median(r, 1));
  CHECK(med[0] == 2.5);
  CHECK(std::isnan(med[1]));
  CHECK(std::isnan(med[2]));
  const auto nmed = host_values(nanmedian(r, 1));
  CHECK(nmed[0] == 2.5);
  CHECK(nmed[1] == 2.0);
  CHECK(std::isnan(nmed[2]));
  const auto np90 = host_values(nanpercentile(r, std::vector<double>{10, 90}, 1));
  REQUIRE(np90.size() == 6);
  CHECK(np90[1] == doctest::Approx(npbody::ref_quantile({5, 1, 2}, 0.1, M::linear, true)));
  CHECK(np90[4] == doctest::Approx(npbody::ref_quantile({5, 1, 2}, 0.9, M::linear, true)));
  // a large row with scattered NaN, float
  const index_t n = 100'001;
  auto vf = test::values<float>(n, -1, 1, 61);
  for (index_t i = 0; i < n; i += 97) vf[std::size_t(i)] = std::numeric_limits<float>::quiet_NaN();
  const std::vector<double> vd(vf.begin(), vf.end());
  CHECK(nanmedian(npbody::dev(vf)) == doctest::Approx(npbody::ref_quantile(vd, 0.5, M::midpoint, true)).epsilon(1e-6));
  CHECK(std::isnan(median(npbody::dev(vf))));
}

TEST_CASE("partition and argpartition: the kth elements in sorted place, smaller before, larger after") {
  for (index_t n : {index_t(1), index_t(2), test::lanes<float> - 1, test::lanes<float> + 1, index_t(37), index_t(2001)}) {
    CAPTURE(n);
    auto v = test::values<float>(n, -10, 10, std::uint64_t(n) + 70);
    if (n > 5) v[3] = std::numeric_limits<float>::quiet_NaN();  // NaN sorts last
    auto sorted = v;
    std::sort(sorted.begin(), sorted.end(), [](float a, float b) { return a < b || (!std::isnan(a) && std::isnan(b)); });
    const auto x = npbody::dev(v);
    const std::vector<index_t> kths{0, n / 3, n / 2, n - 1};
    for (index_t k : kths) {
      CAPTURE(k);
      const auto p = host_values(partition(x, k));
      const auto ap = host_values(argpartition(x, k));
      REQUIRE(p.size() == v.size());
      CHECK(test::close(p[std::size_t(k)], sorted[std::size_t(k)], 0));
      CHECK(test::close(v[std::size_t(ap[std::size_t(k)])], sorted[std::size_t(k)], 0));
      for (index_t i = 0; i < n; ++i) {
        const float pi = p[std::size_t(i)], ai = v[std::size_t(ap[std::size_t(i)])], pk = p[std::size_t(k)];
        if (i < k) {
          CHECK_FALSE(pi > pk);
          CHECK_FALSE(ai > pk);
        }
        if (i > k) {
          CHECK_FALSE(pi < pk);
          CHECK_FALSE(ai < pk);
        }
      }
      // the same multiset, and argpartition a permutation
      auto ps = p;
      std::sort(ps.begin(), ps.end(), [](float a, float b) { return a < b || (!std::isnan(a) && std::isnan(b)); });
      for (std::size_t i = 0; i < ps.size(); ++i) CHECK(test::close(ps[i], sorted[i], 0));
      auto perm = ap;
      std::sort(perm.begin(), perm.end());
      for (std::size_t i = 0; i < perm.size(); ++i) CHECK(perm[i] == std::int64_t(i));
    }
    // several kth at once, negative ones counted from the end
    const auto pm = host_values(partition(x, std::vector<index_t>{0, -1, n / 2}));
    CHECK(test::close(pm[0], sorted[0], 0));
    CHECK(test::close(pm[std::size_t(n - 1)], sorted[std::size_t(n - 1)], 0));
    CHECK(test::close(pm[std::size_t(n / 2)], sorted[std::size_t(n / 2)], 0));
  }
  // along an axis of a 2-d integer array
  const auto m = npbody::dev(std::vector<std::int64_t>{5, 1, 4, 9, 2, 8, 3, 7}, {2, 4});
  const auto p0 = partition(m, 1, 0), p1 = partition(m, 2, 1);
  const auto h1 = host_values(p1);
  CHECK(h1[2] == 5);
  CHECK(h1[6] == 7);
  CHECK(host_values(p0) == std::vector<std::int64_t>{2, 1, 3, 7, 5, 8, 4, 9});
  const auto a0 = host_values(argpartition(m, 0, 0));
  CHECK(a0 == std::vector<std::int64_t>{1, 0, 1, 1, 0, 1, 0, 0});
  // bad kth, 0-d input
  CHECK_THROWS_WITH_AS((void)partition(m, 4), "fusor: partition expects -4 <= kth < 4 (the axis length), got kth = 4", value_error);
  CHECK_THROWS_AS((void)argpartition(m, -5), value_error);
  CHECK_THROWS_AS((void)partition(npbody::dev(std::vector<double>{}), 0), value_error);
  CHECK_THROWS_AS((void)partition(npbody::dev(std::vector<double>{1}, extents{}), 0), shape_error);
}

TEST_CASE("the nan- reductions, ptp and average against plain loops") {
  const double nan = npbody::nan;
  const index_t rows = 5, cols = 9;
  auto v = test::values<double>(rows * cols, -4, 4, 80);
  for (std::size_t i = 0; i < v.size(); i += 4) v[i] = nan;
  for (index_t c = 0; c < cols; ++c) v[std::size_t(2 * cols + c)] = nan;  // row 2 all NaN
  const auto x = npbody::dev(v, {rows, cols});
  // whole
  double s = 0, p = 1, mx = -npbody::inf, mn = npbody::inf;
  index_t cnt = 0, amx = -1, amn = -1;
  for (std::size_t i = 0; i < v.size(); ++i)
    if (!std::isnan(v[i])) {
      s += v[i], p *= v[i], cnt += 1;
      if (v[i] > mx) mx = v[i], amx = index_t(i);
      if (v[i] < mn) mn = v[i], amn = index_t(i);
    }
  double ss = 0;
  for (double e : v)
    if (!std::isnan(e)) ss += (e - s / double(cnt)) * (e - s / double(cnt));
  CHECK(nansum(x) == doctest::Approx(s).epsilon(1e-13));
  CHECK(nanprod(x) == doctest::Approx(p).epsilon(1e-12));
  CHECK(nanmean(x) == doctest::Approx(s / double(cnt)).epsilon(1e-13));
  CHECK(nanvar(x) == doctest::Approx(ss / double(cnt)).epsilon(1e-13));
  CHECK(nanvar(x, ddof(1)) == doctest::Approx(ss / double(cnt - 1)).epsilon(1e-13));
  CHECK(nanstd(x) == doctest::Approx(std::sqrt(ss / double(cnt))).epsilon(1e-13));
  CHECK(nanmax(x) == mx);
  CHECK(nanmin(x) == mn);
  CHECK(nanargmax(x) == amx);
  CHECK(nanargmin(x) == amn);
  // along each axis, keepdims; the all-NaN row gives NaN (sum 0, as NumPy)
  const auto rs = host_values(nansum(x, 1)), rm = host_values(nanmean(x, 1)), rv = host_values(nanvar(x, -1, ddof(1))),
             rx = host_values(nanmax(x, 1)), rn = host_values(nanmin(x, 1, true)), rsd = host_values(nanstd(x, 1));
  CHECK(nanmean(x, 1, true).shape() == extents{rows, 1});
  for (index_t r = 0; r < rows; ++r) {
    CAPTURE(r);
    double rsum = 0, rmax = -npbody::inf, rmin = npbody::inf;
    index_t rc = 0;
    for (index_t c = 0; c < cols; ++c) {
      const double e = v[std::size_t(r * cols + c)];
      if (!std::isnan(e)) rsum += e, rc += 1, rmax = std::max(rmax, e), rmin = std::min(rmin, e);
    }
    double rss = 0;
    for (index_t c = 0; c < cols; ++c) {
      const double e = v[std::size_t(r * cols + c)];
      if (!std::isnan(e)) rss += (e - rsum / double(rc)) * (e - rsum / double(rc));
    }
    CHECK(rs[std::size_t(r)] == doctest::Approx(rsum));
    if (rc == 0) {
      CHECK(std::isnan(rm[std::size_t(r)]));
      CHECK(std::isnan(rv[std::size_t(r)]));
      CHECK(std::isnan(rx[std::size_t(r)]));
      CHECK(std::isnan(rn[std::size_t(r)]));
    } else {
      CHECK(rm[std::size_t(r)] == doctest::Approx(rsum / double(rc)));
      CHECK(rv[std::size_t(r)] == doctest::Approx(rss / double(rc - 1)));
      CHECK(rsd[std::size_t(r)] == doctest::Approx(std::sqrt(rss / double(rc))));
      CHECK(rx[std::size_t(r)] == rmax);
      CHECK(rn[std::size_t(r)] == rmin);
    }
  }
  const auto cs = host_values(nanargmax(x, 0));
  for (index_t c = 0; c < cols; ++c) {
    index_t best = -1;
    for (index_t r = 0; r < rows; ++r) {
      const double e = v[std::size_t(r * cols + c)];
      if (!std::isnan(e) && (best < 0 || e > v[std::size_t(best * cols + c)])) best = r;
    }
    CHECK(cs[std::size_t(c)] == best);
  }
  // NumPy raises for an all-NaN slice in nanargmax/nanargmin, and for empty arrays
  CHECK_THROWS_AS((void)nanargmax(x, 1), value_error);
  CHECK_THROWS_AS((void)nanargmin(npbody::dev(std::vector<double>{nan, nan})), value_error);
  CHECK_THROWS_AS((void)nanmax(npbody::dev(std::vector<double>{})), value_error);
  CHECK(std::isnan(nanmax(npbody::dev(std::vector<double>{nan, nan}))));
  CHECK(std::isnan(nanmean(npbody::dev(std::vector<double>{nan}))));
  CHECK(std::isnan(nanvar(npbody::vec<double>({1, 2, nan}), ddof(2))));  // no degrees of freedom left: NaN
  CHECK(std::isnan(host_values(nanvar(npbody::dev(std::vector<double>{1, 2, 3, nan}, {2, 2}), 1, ddof(1)))[1]));
  // integers: the plain reductions
  const auto iv = npbody::dev(std::vector<std::int32_t>{3, -8, 5, 1});
  CHECK(nansum(iv) == 1);
  CHECK(nanmax(iv) == 5);
  CHECK(nanargmin(iv) == 1);
  CHECK(nanmean(iv) == 0.25);
  // ptp
  CHECK(ptp(iv) == 13);
  CHECK(host_values(ptp(npbody::dev(std::vector<double>{1, 5, 2, 0, 7, 7}, {2, 3}), 0)) == std::vector<double>{1, 2, 5});
  CHECK(ptp(npbody::dev(std::vector<std::int8_t>{-128, 127})) == std::int8_t(-1));  // wraps, as NumPy
  CHECK_THROWS_AS((void)ptp(npbody::dev(std::vector<double>{})), value_error);
  // average
  const auto d = npbody::dev(std::vector<double>{1, 2, 3, 4, 5, 6}, {2, 3});
  const auto w = npbody::dev(std::vector<double>{3, 0, 1, 1, 1, 2}, {2, 3});
  CHECK(average(d, w) == doctest::Approx((3.0 + 3 + 4 + 5 + 12) / 8));
  CHECK(average(d) == 3.5);
  CHECK(host_values(average(d, w, 1)) == std::vector<double>{1.5, 21.0 / 4});
  CHECK(host_values(average(d, npbody::dev(std::vector<double>{1, 3}), 0)) == std::vector<double>{3.25, 4.25, 5.25});
  CHECK(average(d, npbody::dev(std::vector<double>{1, 1, 2}), 1, true).shape() == extents{2, 1});
  CHECK(average(npbody::dev(std::vector<std::int32_t>{1, 2}), npbody::dev(std::vector<std::int32_t>{1, 3})) == 1.75);
  CHECK_THROWS_AS((void)average(d, npbody::dev(std::vector<double>{1, 2})), shape_error);
  CHECK_THROWS_AS((void)average(d, npbody::dev(std::vector<double>{1, 2}), 1), shape_error);
  CHECK_THROWS_AS((void)average(d, npbody::dev(std::vector<double>{1, -1, 0}), 1), value_error);
  CHECK_THROWS_AS((void)average(d, d * 0.0), value_error);
}

TEST_CASE("logspace, geomspace, meshgrid, diag and diagflat against closed forms") {
  const auto ls = host_values(logspace<double, B>(-1.0, 2.0, 7));
  REQUIRE(ls.size() == 7);
  for (std::size_t i = 0; i < 7; ++i) CHECK(ls[i] == doctest::Approx(std::pow(10.0, -1.0 + 0.5 * double(i))).epsilon(1e-14));
  const auto l2 = host_values(logspace<float, B>(0.0, 3.0, 3, false, 2.0));
  CHECK(l2 == std::vector<float>{1, 2, 4});
  CHECK(logspace<double, B>(0.0, 1.0, 0).size() == 0);
  const auto gs = host_values(geomspace<double, B>(1.0, 1000.0, 4));
  CHECK(gs[0] == 1.0);
  CHECK(gs[1] == doctest::Approx(10.0).epsilon(1e-14));
  CHECK(gs[3] == 1000.0);  // the ends exactly
  const auto gn = host_values(geomspace<double, B>(-2.0, -162.0, 5));
  CHECK(gn[2] == doctest::Approx(-18.0).epsilon(1e-14));
  CHECK(gn[4] == -162.0);
  CHECK(host_values(geomspace<double, B>(3.0, 3.0, 1)) == std::vector<double>{3.0});
  CHECK_THROWS_AS(((void)geomspace<double, B>(0.0, 1.0, 3)), value_error);
  CHECK_THROWS_AS(((void)geomspace<double, B>(-1.0, 1.0, 3)), value_error);
  CHECK_THROWS_AS(((void)logspace<double, B>(0.0, 1.0, -1)), value_error);

  const auto x = npbody::vec<double>({1, 2, 3}), y = npbody::vec<double>({10, 20});
  const auto z = npbody::vec<std::int32_t>({-1, -2, -3, -4});
  const auto [X, Y] = meshgrid(x, y);  // xy: shape (len y, len x)
  REQUIRE(X.shape() == extents{2, 3});
  REQUIRE(Y.shape() == extents{2, 3});
  CHECK(host_values(X) == std::vector<double>{1, 2, 3, 1, 2, 3});
  CHECK(host_values(Y) == std::vector<double>{10, 10, 10, 20, 20, 20});
  const auto [I, J, K] = meshgrid(mesh_indexing::ij, x, y, z);
  REQUIRE(I.shape() == extents{3, 2, 4});
  const auto hi = host_values(I), hj = host_values(J);
  const auto hk = host_values(K);
  for (index_t a = 0; a < 3; ++a)
    for (index_t b = 0; b < 2; ++b)
      for (index_t c = 0; c < 4; ++c) {
        const std::size_t f = std::size_t((a * 2 + b) * 4 + c);
        CHECK(hi[f] == double(a + 1));
        CHECK(hj[f] == double(10 * (b + 1)));
        CHECK(hk[f] == -(c + 1));
      }
  const auto [X3, Y3, Z3] = meshgrid(x, y, z);  // xy swaps only the first two axes
  CHECK(X3.shape() == extents{2, 3, 4});
  CHECK(host_values(X3)[4] == 2.0);  // (0, 1, 0)

  const auto d = diag(x, 1);
  REQUIRE(d.shape() == extents{4, 4});
  const auto hd = host_values(d);
  for (index_t r = 0; r < 4; ++r)
    for (index_t c = 0; c < 4; ++c) CHECK(hd[std::size_t(r * 4 + c)] == (c == r + 1 ? double(c) : 0.0));
  CHECK(host_values(diag(x, -2))[std::size_t(2 * 5 + 0)] == 1.0);
  const auto m = npbody::dev(std::vector<double>{1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(host_values(diag(m)) == std::vector<double>{1, 5});
  CHECK(host_values(diag(m, 1)) == std::vector<double>{2, 6});
  CHECK(host_values(diag(m, -1)) == std::vector<double>{4});
  CHECK(diag(m, 5).size() == 0);
  const auto df = diagflat(m);
  CHECK(df.shape() == extents{6, 6});
  CHECK(host_values(diag(df)) == host_values(m));
  CHECK_THROWS_AS((void)diag(npbody::dev(std::vector<double>(8), {2, 2, 2})), shape_error);
}

TEST_CASE("atleast_nd, the stacks, append, insert and delete_ give NumPy's results") {
  const auto s = npbody::dev(std::vector<double>{7}, extents{});
  const auto v = npbody::vec<double>({1, 2, 3});
  const auto m = npbody::dev(std::vector<double>{1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(atleast_1d(s).shape() == extents{1});
  CHECK(atleast_2d(s).shape() == extents{1, 1});
  CHECK(atleast_3d(s).shape() == extents{1, 1, 1});
  CHECK(atleast_1d(v).shape() == extents{3});
  CHECK(atleast_2d(v).shape() == extents{1, 3});
  CHECK(atleast_3d(v).shape() == extents{1, 3, 1});
  CHECK(atleast_2d(m).shape() == extents{2, 3});
  CHECK(atleast_3d(m).shape() == extents{2, 3, 1});
  CHECK(host_values(atleast_3d(m)) == host_values(m));

  const auto w = npbody::vec<double>({4, 5, 6});
  const auto vs = vstack({v.view(), w.view(), m.view()});
  CHECK(vs.shape() == extents{4, 3});
  CHECK(host_values(vs) == std::vector<double>{1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6});
  CHECK(host_values(hstack({v.view(), w.view()})) == std::vector<double>{1, 2, 3, 4, 5, 6});
  const auto hs = hstack({m.view(), m.view()});
  CHECK(hs.shape() == extents{2, 6});
  CHECK(host_values(hs) == std::vector<double>{1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6});
  const auto cs = column_stack({v.view(), w.view()});
  CHECK(cs.shape() == extents{3, 2});
  CHECK(host_values(cs) == std::vector<double>{1, 4, 2, 5, 3, 6});
  const auto ds = dstack({v.view(), w.view()});
  CHECK(ds.shape() == extents{1, 3, 2});
  CHECK(host_values(ds) == std::vector<double>{1, 4, 2, 5, 3, 6});
  std::vector<array<double, B>> parts;
  parts.push_back(v.copy());
  parts.push_back(w.copy());
  CHECK(vstack(parts).shape() == extents{2, 3});
  CHECK_THROWS_AS(((void)vstack(std::vector<array<double, B>>{})), value_error);
  const auto two = npbody::vec<double>({1, 2});
  CHECK_THROWS_AS((void)vstack({v.view(), two.view()}), shape_error);

  CHECK(host_values(append(m, v)) == std::vector<double>{1, 2, 3, 4, 5, 6, 1, 2, 3});
  CHECK(append(m, m, 0).shape() == extents{4, 3});
  CHECK(append(m, m, 1).shape() == extents{2, 6});
  CHECK_THROWS_AS((void)append(m, v, 0), shape_error);  // the ranks must agree along an axis

  const auto a = npbody::dev(std::vector<std::int64_t>{0, 1, 2, 3, 4});
  // np.insert(np.arange(5), [1, 1, 3], [10, 20, 30]) -> [0 10 20 1 2 30 3 4]
  CHECK(host_values(insert(a, std::vector<index_t>{1, 1, 3}, npbody::vec<std::int64_t>({10, 20, 30}), 0)) ==
        std::vector<std::int64_t>{0, 10, 20, 1, 2, 30, 3, 4});
  CHECK(host_values(insert(a, 5, 9)) == std::vector<std::int64_t>{0, 1, 2, 3, 4, 9});
  CHECK(host_values(insert(a, -1, 9)) == std::vector<std::int64_t>{0, 1, 2, 3, 9, 4});
  CHECK(host_values(insert(a, 2, npbody::vec<std::int64_t>({7, 8}))) == std::vector<std::int64_t>{0, 1, 7, 8, 2, 3, 4});
  const auto mi = npbody::dev(std::vector<std::int64_t>{0, 1, 2, 3, 4, 5}, {2, 3});
  // np.insert(m, 1, [7, 8, 9], axis=0) and np.insert(m, 1, 7, axis=1)
  CHECK(host_values(insert(mi, 1, npbody::vec<std::int64_t>({7, 8, 9}), 0)) ==
        std::vector<std::int64_t>{0, 1, 2, 7, 8, 9, 3, 4, 5});
  CHECK(host_values(insert(mi, 1, 7, 1)) == std::vector<std::int64_t>{0, 7, 1, 2, 3, 7, 4, 5});
  CHECK(host_values(insert(mi, std::vector<index_t>{0, 3}, 9, 1)) ==
        std::vector<std::int64_t>{9, 0, 1, 2, 9, 9, 3, 4, 5, 9});
  CHECK(host_values(insert(mi, 1, 2.9, 0))[3] == 2);  // cast to the array's type, as NumPy does
  // one number position: values' first axis moves to the axis (NumPy); a one-element list: it does not
  const auto m32 = npbody::dev(std::vector<std::int64_t>{0, 1, 2, 3, 4, 5}, {3, 2});
  CHECK(host_values(insert(m32, 1, npbody::vec<std::int64_t>({7, 8, 9}), 1)) ==
        std::vector<std::int64_t>{0, 7, 1, 2, 8, 3, 4, 9, 5});
  const auto row = npbody::dev(std::vector<std::int64_t>{7, 8, 9}, {1, 3});
  CHECK(insert(m32, 1, row, 1).shape() == extents{3, 3});
  CHECK(host_values(insert(a, std::vector<index_t>{1}, npbody::vec<std::int64_t>({7, 8}), 0)) ==
        std::vector<std::int64_t>{0, 7, 8, 1, 2, 3, 4});
  CHECK_THROWS_AS((void)insert(a, 6, 1), index_error);
  CHECK_THROWS_AS((void)insert(a, -6, 1), index_error);

  CHECK(host_values(delete_(a, std::vector<index_t>{0, -1})) == std::vector<std::int64_t>{1, 2, 3});
  CHECK(host_values(delete_(a, 2)) == std::vector<std::int64_t>{0, 1, 3, 4});
  CHECK(host_values(delete_(mi, 1, 1)) == std::vector<std::int64_t>{0, 2, 3, 5});
  CHECK(host_values(delete_(mi, std::vector<index_t>{0, 0}, 0)) == std::vector<std::int64_t>{3, 4, 5});
  CHECK(delete_(mi, std::vector<index_t>{}, 0).shape() == extents{2, 3});
  CHECK_THROWS_AS((void)delete_(a, 5), index_error);
}

TEST_CASE("isin and the set functions against std::set, lexsort against a stable sort, digitize against a loop") {
  for (index_t n : {index_t(0), index_t(1), index_t(7), index_t(33), index_t(500)}) {
    CAPTURE(n);
    const auto av = test::values<std::int32_t>(n, -20, 20, std::uint64_t(n) + 90);
    const auto bv = test::values<std::int32_t>(n / 2 + 1, -10, 30, std::uint64_t(n) + 91);
    const auto a = npbody::dev(av), b = npbody::dev(bv);
    const std::set<std::int32_t> sa(av.begin(), av.end()), sb(bv.begin(), bv.end());
    const auto in = host_values(isin(a, b)), out = host_values(isin(a, b, true));
    for (std::size_t i = 0; i < av.size(); ++i) {
      CHECK(in[i] == (sb.count(av[i]) > 0));
      CHECK(out[i] != in[i]);
    }
    std::vector<std::int32_t> want_i, want_u, want_d;
    std::set_intersection(sa.begin(), sa.end(), sb.begin(), sb.end(), std::back_inserter(want_i));
    std::set_union(sa.begin(), sa.end(), sb.begin(), sb.end(), std::back_inserter(want_u));
    std::set_difference(sa.begin(), sa.end(), sb.begin(), sb.end(), std::back_inserter(want_d));
    CHECK(host_values(intersect1d(a, b)) == want_i);
    CHECK(host_values(union1d(a, b)) == want_u);
    CHECK(host_values(setdiff1d(a, b)) == want_d);
  }
  // isin keeps x's shape and promotes; NaN is in nothing
  const auto m = npbody::dev(std::vector<double>{1, 2.5, npbody::nan, 4}, {2, 2});
  CHECK(host_values(isin(m, npbody::vec<double>({4, npbody::nan, 1}))) == std::vector<bool>{true, false, false, true});
  CHECK(isin(m, npbody::vec<double>({1})).shape() == extents{2, 2});
  CHECK(host_values(isin(m, npbody::dev(std::vector<double>{}))) == std::vector<bool>(4, false));

  // lexsort: NumPy's example, then random keys against a sort on (last, ..., first, position)
  std::vector<array<std::int64_t, B>> keys;
  keys.push_back(npbody::vec<std::int64_t>({1, 5, 1, 4, 3, 4, 4}));
  keys.push_back(npbody::vec<std::int64_t>({9, 4, 0, 4, 0, 2, 1}));
  CHECK(host_values(lexsort(keys)) == std::vector<std::int64_t>{2, 4, 6, 5, 3, 1, 0});
  const index_t n = 301;
  const auto k0 = test::values<std::int32_t>(n, 0, 5, 95), k1 = test::values<std::int32_t>(n, 0, 3, 96),
             k2 = test::values<std::int32_t>(n, 0, 4, 97);
  std::vector<array<std::int32_t, B>> ks;
  ks.push_back(npbody::dev(k0));
  ks.push_back(npbody::dev(k1));
  ks.push_back(npbody::dev(k2));
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::int64_t p, std::int64_t q) {  // ties by position: stable
    return std::tuple(k2[std::size_t(p)], k1[std::size_t(p)], k0[std::size_t(p)], p) <
           std::tuple(k2[std::size_t(q)], k1[std::size_t(q)], k0[std::size_t(q)], q);
  });
  CHECK(host_values(lexsort(ks)) == order);
  CHECK_THROWS_AS(((void)lexsort(std::vector<array<std::int64_t, B>>{})), value_error);
  keys.push_back(npbody::vec<std::int64_t>({1, 2}));
  CHECK_THROWS_AS((void)lexsort(keys), shape_error);

  // digitize, increasing and decreasing bins, both sides (NumPy's examples and a loop)
  const auto xq = npbody::vec<double>({0.5, 1, 1.5, 3});
  CHECK(host_values(digitize(xq, npbody::vec<double>({1, 2, 3}))) == std::vector<std::int64_t>{0, 1, 1, 3});
  CHECK(host_values(digitize(xq, npbody::vec<double>({1, 2, 3}), true)) == std::vector<std::int64_t>{0, 0, 1, 2});
  CHECK(host_values(digitize(xq, npbody::vec<double>({3, 2, 1}))) == std::vector<std::int64_t>{3, 2, 2, 0});
  CHECK(host_values(digitize(xq, npbody::vec<double>({3, 2, 1}), true)) == std::vector<std::int64_t>{3, 3, 2, 1});
  const auto xs = test::values<double>(1000, -2, 12, 98);
  const std::vector<double> edges{0, 1, 1, 2.5, 7, 10};
  const auto dg = host_values(digitize(npbody::dev(xs), npbody::dev(edges)));
  for (std::size_t i = 0; i < xs.size(); ++i) {
    std::int64_t want = 0;
    while (want < std::int64_t(edges.size()) && edges[std::size_t(want)] <= xs[i]) ++want;
    CHECK(dg[i] == want);
  }
  CHECK_THROWS_AS((void)digitize(xq, npbody::vec<double>({1, 3, 2})), value_error);
  CHECK(host_values(digitize(xq, npbody::dev(std::vector<double>{}))) == std::vector<std::int64_t>(4, 0));
}

TEST_CASE("take_along_axis and put_along_axis against loops, with argsort's and argpartition's indices") {
  const index_t r = 4, c = 7;
  const auto v = test::values<double>(r * c, -9, 9, 99);
  const auto x = npbody::dev(v, {r, c});
  for (int axis : {0, 1, -1}) {
    CAPTURE(axis);
    const auto order = argsort(x, axis);
    const auto got = host_values(take_along_axis(x, order, axis));
    const auto want = host_values(sort(x, axis));
    CHECK(got == want);
  }
  // broadcasting: one column of indices per row picks one element per row
  const auto pick = npbody::dev(std::vector<std::int64_t>{6, 0, -1, 3}, {4, 1});
  const auto p = take_along_axis(x, pick, 1);
  CHECK(p.shape() == extents{4, 1});
  CHECK(host_values(p) == std::vector<double>{v[6], v[7], v[20], v[24]});
  const auto firstrow = take_along_axis(x, npbody::dev(std::vector<std::int64_t>{3, 1}, {2, 1}), 0);
  CHECK(firstrow.shape() == extents{2, 7});
  CHECK(host_values(firstrow)[0] == v[21]);
  CHECK(host_values(firstrow)[7 + 2] == v[9]);
  // put_along_axis writes back where take_along_axis reads
  array<double, B> y = npbody::dev(v, {r, c});
  put_along_axis(y, pick, -100.0, 1);
  const auto hy = host_values(y);
  for (std::size_t i = 0; i < hy.size(); ++i) {
    const bool hit = i == 6 || i == 7 || i == 20 || i == 24;
    CHECK(hy[i] == (hit ? -100.0 : v[i]));
  }
  array<double, B> z = zeros<double, B>(extents{r, c});
  put_along_axis(z, argsort(x, 1), npbody::dev(std::vector<double>{0, 1, 2, 3, 4, 5, 6}, {1, 7}), 1);  // ranks
  const auto hz = host_values(z);
  for (index_t i = 0; i < r; ++i)
    for (index_t j = 0; j < c; ++j) {
      index_t rank = 0;
      for (index_t k = 0; k < c; ++k) rank += v[std::size_t(i * c + k)] < v[std::size_t(i * c + j)];
      CHECK(hz[std::size_t(i * c + j)] == double(rank));
    }
  CHECK_THROWS_AS((void)take_along_axis(x, npbody::vec<std::int64_t>({1}), 1), shape_error);
  CHECK_THROWS_AS((void)take_along_axis(x, npbody::dev(std::vector<std::int64_t>{7}, {1, 1}), 1), index_error);
  CHECK_THROWS_AS((void)take_along_axis(x, npbody::dev(std::vector<std::int64_t>{0, 0, 0}, {3, 1}), 1), shape_error);
}

TEST_CASE("interp, gradient, cross, kron, convolve, correlate and trapezoid against plain loops") {
  // interp
  const std::vector<double> xp{-1, 0, 0.5, 2, 7}, fp{3, -1, 4, 4, 10};
  const auto xq = test::values<double>(501, -3, 9, 100);
  const auto got = host_values(interp(npbody::dev(xq), npbody::dev(xp), npbody::dev(fp)));
  for (std::size_t i = 0; i < xq.size(); ++i) {
    double want = xq[i] < xp[0] ? fp[0] : fp.back();
    for (std::size_t k = 0; k + 1 < xp.size(); ++k)
      if (xq[i] >= xp[k] && xq[i] <= xp[k + 1]) {
        want = fp[k] + (fp[k + 1] - fp[k]) * (xq[i] - xp[k]) / (xp[k + 1] - xp[k]);
        break;
      }
    CHECK(got[i] == doctest::Approx(want).epsilon(1e-13));
  }
  const auto ends = host_values(interp(npbody::vec<double>({-5, -1, 7, 8, npbody::nan}), npbody::dev(xp), npbody::dev(fp), -9.0, 99.0));
  CHECK(ends[0] == -9);
  CHECK(ends[1] == 3);
  CHECK(ends[2] == 10);
  CHECK(ends[3] == 99);
  CHECK(std::isnan(ends[4]));
  // an exact hit of a sample gives its value even beside an infinite one (NumPy)
  CHECK(host_values(interp(npbody::vec<double>({1}), npbody::vec<double>({0, 1, 2}), npbody::vec<double>({0, npbody::inf, 5})))[0] ==
        npbody::inf);
  CHECK(host_values(interp(npbody::vec<float>({0, 1, 2}), npbody::vec<double>({1}), npbody::vec<double>({5}))) ==
        std::vector<double>{5, 5, 5});
  CHECK_THROWS_AS((void)interp(npbody::vec<double>({1}), npbody::vec<double>({1, 2}), npbody::vec<double>({1})), value_error);

  // gradient: uniform and non-uniform spacing, both edge orders, along each axis of a 2-d array
  const index_t n0 = 5, n1 = 6;
  const auto fv = test::values<double>(n0 * n1, -3, 3, 101);
  const auto f = npbody::dev(fv, {n0, n1});
  const std::vector<double> coords{0, 0.5, 2, 2.25, 4, 7};
  for (int order : {1, 2}) {
    CAPTURE(order);
    const auto g1 = host_values(gradient(f, 1, npbody::dev(coords), order));
    const auto g0 = host_values(gradient(f, 0, 0.5, order));
    for (index_t i = 0; i < n0; ++i)
      for (index_t j = 0; j < n1; ++j) {
        const auto F = [&](index_t a, index_t b) { return fv[std::size_t(a * n1 + b)]; };
        double w1;  // along axis 1, NumPy's formulas written out with Lagrange weights
        auto lag = [&](index_t p, index_t q, index_t s, index_t at) {  // derivative at coords[at] of the parabola through p, q, s
          const double xa = coords[std::size_t(p)], xb = coords[std::size_t(q)], xc = coords[std::size_t(s)],
                       t = coords[std::size_t(at)];
          return F(i, p) * ((t - xb) + (t - xc)) / ((xa - xb) * (xa - xc)) +
                 F(i, q) * ((t - xa) + (t - xc)) / ((xb - xa) * (xb - xc)) +
                 F(i, s) * ((t - xa) + (t - xb)) / ((xc - xa) * (xc - xb));
        };
        if (j > 0 && j < n1 - 1) w1 = lag(j - 1, j, j + 1, j);
        else if (order == 2) w1 = j == 0 ? lag(0, 1, 2, 0) : lag(n1 - 3, n1 - 2, n1 - 1, n1 - 1);
        else w1 = j == 0 ? (F(i, 1) - F(i, 0)) / (coords[1] - coords[0])
                         : (F(i, n1 - 1) - F(i, n1 - 2)) / (coords[std::size_t(n1 - 1)] - coords[std::size_t(n1 - 2)]);
        CHECK(g1[std::size_t(i * n1 + j)] == doctest::Approx(w1).epsilon(1e-12));
        double w0;
        if (i > 0 && i < n0 - 1) w0 = (F(i + 1, j) - F(i - 1, j)) / 1.0;
        else if (order == 2) w0 = i == 0 ? (-3 * F(0, j) + 4 * F(1, j) - F(2, j)) / 1.0
                                         : (3 * F(n0 - 1, j) - 4 * F(n0 - 2, j) + F(n0 - 3, j)) / 1.0;
        else w0 = i == 0 ? (F(1, j) - F(0, j)) / 0.5 : (F(n0 - 1, j) - F(n0 - 2, j)) / 0.5;
        CHECK(g0[std::size_t(i * n1 + j)] == doctest::Approx(w0).epsilon(1e-12));
      }
  }
  CHECK(host_values(gradient(npbody::vec<std::int32_t>({1, 4, 9, 16}))) == std::vector<double>{3, 4, 6, 7});
  // evenly spaced samples never read f[i] for its own derivative: NaN and inf stay local (NumPy)
  const auto gn = host_values(gradient(npbody::vec<double>({0, npbody::nan, 2, 3})));
  CHECK(std::isnan(gn[0]));
  CHECK(gn[1] == 1);
  CHECK(std::isnan(gn[2]));
  CHECK(gn[3] == 1);
  const auto gi = host_values(gradient(npbody::vec<double>({0, npbody::inf, 0}), 0, npbody::vec<double>({1, 2, 3})));
  CHECK(gi == std::vector<double>{npbody::inf, 0, -npbody::inf});
  CHECK(host_values(gradient(npbody::vec<float>({1, 3}))) == std::vector<float>{2, 2});
  CHECK_THROWS_AS((void)gradient(npbody::vec<double>({1, 2}), 0, 1.0, 2), value_error);
  CHECK_THROWS_AS((void)gradient(npbody::vec<double>({1, 2, 3}), 0, 1.0, 3), value_error);
  CHECK_THROWS_AS((void)gradient(f, 1, npbody::vec<double>({1, 2})), shape_error);

  // cross: 3-vectors in a batch with broadcasting, 2-vectors, mixed
  const auto av = test::values<double>(4 * 3, -2, 2, 102), bv = test::values<double>(3, -2, 2, 103);
  const auto cr = host_values(cross(npbody::dev(av, {4, 3}), npbody::dev(bv)));
  REQUIRE(cr.size() == 12);
  for (std::size_t k = 0; k < 4; ++k) {
    const double* u = &av[3 * k];
    CHECK(cr[3 * k] == doctest::Approx(u[1] * bv[2] - u[2] * bv[1]));
    CHECK(cr[3 * k + 1] == doctest::Approx(u[2] * bv[0] - u[0] * bv[2]));
    CHECK(cr[3 * k + 2] == doctest::Approx(u[0] * bv[1] - u[1] * bv[0]));
  }
  CHECK(host_values(cross(npbody::vec<double>({1, 2}), npbody::vec<double>({4, 5}))) == std::vector<double>{-3});
  CHECK(host_values(cross(npbody::vec<double>({1, 2}), npbody::vec<double>({4, 5, 6}))) == std::vector<double>{12, -6, -3});
  CHECK(host_values(cross(npbody::vec<std::int32_t>({1, 2, 3}), npbody::vec<std::int32_t>({4, 5, 6}))) ==
        std::vector<std::int32_t>{-3, 6, -3});
  CHECK_THROWS_AS((void)cross(npbody::vec<double>({1, 2, 3, 4}), npbody::vec<double>({1, 2, 3})), value_error);

  // kron against its definition, ranks 1 to 3 (rank alignment included)
  const auto ka = test::values<double>(2 * 3, -3, 3, 104), kb = test::values<double>(4 * 2 * 2, -3, 3, 105);
  const auto kr = kron(npbody::dev(ka, {2, 3}), npbody::dev(kb, {4, 2, 2}));
  REQUIRE(kr.shape() == extents{4, 4, 6});
  const auto hk = host_values(kr);
  for (index_t p = 0; p < 4; ++p)
    for (index_t i = 0; i < 4; ++i)
      for (index_t j = 0; j < 6; ++j)
        CHECK(hk[std::size_t((p * 4 + i) * 6 + j)] ==
              doctest::Approx(ka[std::size_t((i / 2) * 3 + j / 2)] * kb[std::size_t((p * 2 + i % 2) * 2 + j % 2)]));
  CHECK(host_values(kron(npbody::vec<std::int32_t>({1, 10, 100}), npbody::vec<std::int32_t>({5, 6, 7}))) ==
        std::vector<std::int32_t>{5, 6, 7, 50, 60, 70, 500, 600, 700});

  // convolve and correlate: every mode, both length orders, against the double sum
  for (const auto& [n, m] : std::vector<std::pair<index_t, index_t>>{{1, 1}, {7, 3}, {3, 7}, {4, 9}, {10, 4}, {5, 5}, {33, 8}}) {
    CAPTURE(n);
    CAPTURE(m);
    const auto a = test::values<double>(n, -1, 1, std::uint64_t(n * 10 + m)), k = test::values<double>(m, -1, 1, std::uint64_t(m + 7));
    std::vector<double> full(std::size_t(n + m - 1), 0.0), cfull(full.size(), 0.0);
    for (index_t i = 0; i < n; ++i)
      for (index_t j = 0; j < m; ++j) {
        full[std::size_t(i + j)] += a[std::size_t(i)] * k[std::size_t(j)];
        cfull[std::size_t(i + m - 1 - j)] += a[std::size_t(i)] * k[std::size_t(j)];  // a[i] v[j] at lag i - j
      }
    const index_t big = std::max(n, m), small = std::min(n, m);
    const auto slice = [](const std::vector<double>& v, index_t from, index_t len) {
      return std::vector<double>(v.begin() + from, v.begin() + from + len);
    };
    const std::vector<std::pair<convolve_mode, std::pair<index_t, index_t>>> modes{
        {convolve_mode::full, {0, n + m - 1}}, {convolve_mode::same, {(small - 1) / 2, big}}, {convolve_mode::valid, {small - 1, big - small + 1}}};
    for (const auto& [mode, range] : modes) {
      CAPTURE(int(mode));
      const auto gc = host_values(convolve(npbody::dev(a), npbody::dev(k), mode));
      const auto gr = host_values(correlate(npbody::dev(a), npbody::dev(k), mode));
      // np.correlate with the longer second operand reverses a swapped correlation: its `same`
      // window starts at small / 2, not (small - 1) / 2 (they differ for an even small length)
      const index_t corr_from = mode == convolve_mode::same && m > n ? small / 2 : range.first;
      const auto wc = slice(full, range.first, range.second), wr = slice(cfull, corr_from, range.second);
      REQUIRE(gc.size() == wc.size());
      REQUIRE(gr.size() == wr.size());
      for (std::size_t i = 0; i < wc.size(); ++i) {
        CHECK(gc[i] == doctest::Approx(wc[i]).epsilon(1e-13));
        CHECK(gr[i] == doctest::Approx(wr[i]).epsilon(1e-13));
      }
    }
  }
  CHECK(host_values(correlate(npbody::vec<double>({1, 2, 3}), npbody::vec<double>({0, 1, 0.5}))) == std::vector<double>{3.5});
  // NumPy's results where the second operand is the longer one (even and odd shorter lengths)
  CHECK(host_values(correlate(npbody::vec<double>({1, 2}), npbody::vec<double>({1, 2, 3, 4, 5}), convolve_mode::same)) ==
        std::vector<double>{14, 11, 8, 5, 2});
  CHECK(host_values(correlate(npbody::vec<double>({1, 2, 3, 4}), npbody::vec<double>({1, 2, 3, 4, 5, 6}), convolve_mode::same)) ==
        std::vector<double>{32, 50, 40, 30, 20, 11});
  CHECK(host_values(correlate(npbody::vec<double>({1, 2, 3}), npbody::vec<double>({1, 2, 3, 4}), convolve_mode::same)) ==
        std::vector<double>{11, 20, 14, 8});
  CHECK(host_values(correlate(npbody::vec<double>({1, 2}), npbody::vec<double>({1, 2, 3, 4, 5}), convolve_mode::valid)) ==
        std::vector<double>{14, 11, 8, 5});
  CHECK(host_values(convolve(npbody::vec<double>({1, 2}), npbody::vec<double>({1, 2, 3, 4}), convolve_mode::same)) ==
        std::vector<double>{1, 4, 7, 10});
  CHECK_THROWS_AS((void)convolve(npbody::dev(std::vector<double>{}), npbody::vec<double>({1})), value_error);
  CHECK_THROWS_AS((void)convolve(npbody::dev(std::vector<double>(4), {2, 2}), npbody::vec<double>({1})), value_error);

  // trapezoid: uniform, coordinates, along axes
  CHECK(trapezoid(npbody::vec<double>({1, 2, 3})) == 4.0);
  CHECK(trapezoid(npbody::vec<double>({1, 2, 3}), 2.0) == 8.0);
  CHECK(trapezoid(npbody::vec<double>({1, 2, 3}), npbody::vec<double>({4, 6, 8})) == 8.0);
  CHECK(trapezoid(npbody::vec<std::int32_t>({1, 2})) == 1.5);
  CHECK(trapezoid(npbody::vec<double>({5})) == 0.0);
  const auto tv = test::values<double>(3 * 8, -1, 1, 106);
  const std::vector<double> tx{0, 0.1, 0.5, 0.6, 1, 2, 2.5, 4};
  const auto t1 = host_values(trapezoid(npbody::dev(tv, {3, 8}), npbody::dev(tx), 1));
  const auto t0 = host_values(trapezoid(npbody::dev(tv, {3, 8}), 0.5, 0));
  for (index_t i = 0; i < 3; ++i) {
    double s = 0;
    for (index_t j = 0; j + 1 < 8; ++j)
      s += (tx[std::size_t(j + 1)] - tx[std::size_t(j)]) * (tv[std::size_t(i * 8 + j)] + tv[std::size_t(i * 8 + j + 1)]) / 2;
    CHECK(t1[std::size_t(i)] == doctest::Approx(s).epsilon(1e-13));
  }
  for (index_t j = 0; j < 8; ++j)
    CHECK(t0[std::size_t(j)] == doctest::Approx(0.25 * (tv[std::size_t(j)] + 2 * tv[std::size_t(8 + j)] + tv[std::size_t(16 + j)])));
  CHECK_THROWS_AS((void)trapezoid(npbody::dev(tv, {3, 8})), shape_error);
  CHECK_THROWS_AS((void)trapezoid(npbody::dev(tv, {3, 8}), npbody::vec<double>({1, 2}), 1), shape_error);
}
