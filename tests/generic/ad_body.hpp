// Autodiff test bodies written once and instantiated per backend: tests/test_ad.cpp runs them on
// cpu, tests/test_ad_cuda.cu on cuda. Every derivative is compared with a closed form (written
// out by hand below, evaluated in long double on the host) or with central differences, never
// with fusor's own derivative code.
//
// The includer defines TEST_BACKEND (fusor::cpu or fusor::cuda) before including this file.
#include "../common.hpp"

#include <cmath>
#include <functional>
#include <map>
#include <unordered_map>
#include <string>
#include <vector>

namespace adbody {

using fusor::index_t;
using B = TEST_BACKEND;
using fusor::ad::dual;
// the references' precision: long double on the host (nvcc would treat it as double, and says so)
#if defined(__CUDACC__)
using ref_t = double;
#else
using ref_t = long double;
#endif

/// A backend array holding v; the elements of a backend array or expression, back on the host.
template <class T>
fusor::array<T, B> dev(const std::vector<T>& v, const fusor::extents& shape) {
  return test::on<B>(v, shape);
}
template <class T>
fusor::array<T, B> dev(const std::vector<T>& v) {
  return test::on<B>(v);
}
using test::host_values;

// One elementary function, written once (a generic lambda, run on arrays of duals for forward
// mode and on variables for reverse mode), and its value and derivative written out by hand.
template <class F, class V, class D>
void check_function(const char* name, double lo, double hi, F f, V value, D slope) {
  CAPTURE(name);
  // forward: the functor on dual numbers, SIMD and scalar paths
  for (index_t n : {index_t(0), index_t(1), test::lanes<double> - 1, test::lanes<double>, test::lanes<double> + 1,
                    3 * test::lanes<double> + 5, index_t(10'001)}) {
    CAPTURE(n);
    const auto xs = test::values<double>(n, lo, hi, 11);
    std::vector<dual<double>> seeded(xs.size());
    for (std::size_t i = 0; i < xs.size(); ++i) seeded[i] = dual<double>{xs[i], {1.0}};
    const auto y = host_values(fusor::array<dual<double>, B>(f(dev(seeded))));
    REQUIRE(y.size() == xs.size());
    index_t bad = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      const ref_t want_v = value(xs[i]), want_d = slope(xs[i]);
      const bool ok = test::close(y[i].value, double(want_v), 1e-12) && test::close(y[i].tangent[0], double(want_d), 1e-11);
      if (!ok && bad++ == 0) {
        CAPTURE(xs[i]);
        CHECK(y[i].value == doctest::Approx(double(want_v)));
        CHECK(y[i].tangent[0] == doctest::Approx(double(want_d)));
      }
    }
    CHECK(bad == 0);
  }
  // reverse: the gradient of sum(f(x)) is f'(x) elementwise, from the tape's adjoint of the functor
  for (index_t n : {index_t(0), index_t(1), test::lanes<double> + 1, index_t(10'001)}) {
    CAPTURE(n);
    const auto xs = test::values<double>(n, lo, hi, 12);
    const auto [v, g] = fusor::ad::value_and_grad([&](const auto& x) { return sum(f(x)); })(dev(xs));
    const auto hg = host_values(g);
    REQUIRE(hg.size() == xs.size());
    ref_t want_v = 0;
    index_t bad = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      want_v += value(xs[i]);
      if (!test::close(hg[i], double(slope(xs[i])), 1e-11) && bad++ == 0) {
        CAPTURE(xs[i]);
        CHECK(hg[i] == doctest::Approx(double(slope(xs[i]))));
      }
    }
    CHECK(bad == 0);
    CHECK(test::close(v, double(want_v), 1e-11));
  }
}

}  // namespace adbody

using namespace fusor;
using adbody::B;
using adbody::index_t;
using fusor::ad::dual;

TEST_CASE("every elementary function: forward (dual numbers, scalar and SIMD) and reverse (tape) derivatives") {
  using L = adbody::ref_t;
  using adbody::check_function;
#define AD_CASE(NAME, LO, HI, EXPR, VALUE, SLOPE) \
  check_function(NAME, LO, HI, [](const auto& x) { return EXPR; }, [](L x) { return L(VALUE); }, \
                 [](L x) { (void)x; return L(SLOPE); })
  AD_CASE("sin", -4, 4, sin(x), std::sin(x), std::cos(x));
  AD_CASE("cos", -4, 4, cos(x), std::cos(x), -std::sin(x));
  AD_CASE("tan", -1.2, 1.2, tan(x), std::tan(x), 1 / (std::cos(x) * std::cos(x)));
  AD_CASE("exp", -3, 3, exp(x), std::exp(x), std::exp(x));
  AD_CASE("exp2", -3, 3, exp2(x), std::exp2(x), std::exp2(x) * std::log(L(2)));
  AD_CASE("expm1", -3, 3, expm1(x), std::expm1(x), std::exp(x));
  AD_CASE("log", 0.1, 5, log(x), std::log(x), 1 / x);
  AD_CASE("log2", 0.1, 5, log2(x), std::log2(x), 1 / (x * std::log(L(2))));
  AD_CASE("log10", 0.1, 5, log10(x), std::log10(x), 1 / (x * std::log(L(10))));
  AD_CASE("log1p", -0.5, 5, log1p(x), std::log1p(x), 1 / (1 + x));
  AD_CASE("erf", -3, 3, erf(x), std::erf(x), 1.1283791670955125739 * std::exp(-x * x));
  AD_CASE("sigmoid", -8, 8, sigmoid(x), 1 / (1 + std::exp(-x)), std::exp(-x) / ((1 + std::exp(-x)) * (1 + std::exp(-x))));
  AD_CASE("sqrt", 0.1, 5, sqrt(x), std::sqrt(x), 1 / (2 * std::sqrt(x)));
  AD_CASE("cbrt", 0.1, 5, cbrt(x), std::cbrt(x), 1 / (3 * std::cbrt(x) * std::cbrt(x)));
  AD_CASE("asin", -0.9, 0.9, asin(x), std::asin(x), 1 / std::sqrt(1 - x * x));
  AD_CASE("acos", -0.9, 0.9, acos(x), std::acos(x), -1 / std::sqrt(1 - x * x));
  AD_CASE("atan", -3, 3, atan(x), std::atan(x), 1 / (1 + x * x));
  AD_CASE("sinh", -2, 2, sinh(x), std::sinh(x), std::cosh(x));
  AD_CASE("cosh", -2, 2, cosh(x), std::cosh(x), std::sinh(x));
  AD_CASE("tanh", -2, 2, tanh(x), std::tanh(x), 1 - std::tanh(x) * std::tanh(x));
  AD_CASE("abs", -2, 2, abs(x), std::fabs(x), x > 0 ? 1 : -1);
  AD_CASE("square", -2, 2, square(x), x * x, 2 * x);
  AD_CASE("x*x+3x-1", -2, 2, x * x + 3.0 * x - 1.0, x * x + 3 * x - 1, 2 * x + 3);
  AD_CASE("1/x", 0.5, 3, 1.0 / x, 1 / x, -1 / (x * x));
  AD_CASE("x/(1+x*x)", -2, 2, x / (1.0 + x * x), x / (1 + x * x), (1 - x * x) / ((1 + x * x) * (1 + x * x)));
  AD_CASE("x**2.5", 0.1, 3, pow(x, 2.5), std::pow(x, L(2.5)), L(2.5) * std::pow(x, L(1.5)));
  AD_CASE("x**2 (negative base)", -3, -0.1, pow(x, 2.0), x * x, 2 * x);
  AD_CASE("2**x", -2, 2, pow(2.0, x), std::pow(L(2), x), std::pow(L(2), x) * std::log(L(2)));
  AD_CASE("atan2(x, 2)", -2, 2, atan2(x, 2.0), std::atan2(x, L(2)), 2 / (4 + x * x));
  AD_CASE("atan2(1.5, x)", 0.5, 2, atan2(1.5, x), std::atan2(L(1.5), x), -L(1.5) / (L(2.25) + x * x));
  AD_CASE("floor", -2, 2, floor(x) + x, std::floor(x) + x, 1);
  AD_CASE("maximum(x, 0.5)", -2, 2, maximum(x, 0.5), std::max(x, L(0.5)), x > 0.5 ? 1 : 0);
  AD_CASE("minimum(x, 0.5)", -2, 2, minimum(x, 0.5), std::min(x, L(0.5)), x < 0.5 ? 1 : 0);
  AD_CASE("clip(x, -1, 1)", -2, 2, clip(x, -1.0, 1.0), std::max(L(-1), std::min(x, L(1))), std::abs(x) < 1 ? 1 : 0);
  AD_CASE("where(x > 0, x, -2x)", -2, 2, where(x > 0.0, x, -2.0 * x), x > 0 ? x : -2 * x, x > 0 ? 1 : -2);
  AD_CASE("sin(x) * exp(-x*x) + x*x/2", -2, 2, sin(x) * exp(-x * x) + x * x / 2.0,
          std::sin(x) * std::exp(-x * x) + x * x / 2,
          std::cos(x) * std::exp(-x * x) - 2 * x * std::sin(x) * std::exp(-x * x) + x);
#undef AD_CASE
}

TEST_CASE("vector mode: N tangents carry N directions through one evaluation") {
  // f(x) = sin(x) * x + exp(x / 4): three directions at once against three single-tangent runs
  auto f = [](const auto& x) { return sin(x) * x + exp(x / 4.0); };
  const index_t n = 3 * test::lanes<double> + 5;
  const auto xs = test::values<double>(n, -2, 2, 3);
  std::vector<dual<double, 3>> seeded(xs.size());
  for (std::size_t i = 0; i < xs.size(); ++i) seeded[i] = dual<double, 3>{xs[i], {1.0, -2.0, double(i % 5)}};
  const auto y = adbody::host_values(array<dual<double, 3>, B>(f(adbody::dev(seeded))));
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double x = xs[i], d = std::cos(x) * x + std::sin(x) + std::exp(x / 4) / 4;
    CHECK(test::close(y[i].value, std::sin(x) * x + std::exp(x / 4), 1e-13));
    CHECK(test::close(y[i].tangent[0], d, 1e-12));
    CHECK(test::close(y[i].tangent[1], -2 * d, 1e-12));
    CHECK(test::close(y[i].tangent[2], double(i % 5) * d, 1e-12));
  }
}

TEST_CASE("dual arrays: promotion, weak scalars, conversions, names and parts") {
  static_assert(std::is_same_v<promote_t<dual<float>, double>, dual<double>>);
  static_assert(std::is_same_v<promote_t<dual<float>, std::int32_t>, dual<double>>);
  static_assert(std::is_same_v<promote_t<dual<float>, std::int16_t>, dual<float>>);
  static_assert(std::is_same_v<weak_result_t<dual<float>, double>, dual<float>>);
  static_assert(same_kind_castable_v<float, dual<double>> && !same_kind_castable_v<dual<double>, double>);
  static_assert(std::is_trivially_copyable_v<dual<float, 4>> && std::is_aggregate_v<dual<float, 4>>);
  CHECK(std::string(dtype_name<dual<float>>()) == "dual<float32>");
  CHECK(std::string(dtype_name<dual<double, 12>>()) == "dual<float64, 12>");
  constexpr dual<double> c = dual<double>{3.0, {1.0}} * dual<double>{3.0, {1.0}};
  static_assert(c.value == 9.0 && c.tangent[0] == 6.0);

  const index_t n = 2 * test::lanes<float> + 3;
  const auto xs = test::values<float>(n, -1, 1, 5);
  const auto ws = test::values<double>(n, -1, 1, 6);
  array<float, B> x = adbody::dev(xs), v = ones<float, B>({n});
  array<double, B> w = adbody::dev(ws);
  // dual<float> with a float64 array is dual<double>; the constant w has no tangent
  const auto y = adbody::host_values(array<dual<double>, B>(ad::make_dual(x, v) * w + 2.0));
  for (std::size_t i = 0; i < xs.size(); ++i) {
    CHECK(test::close(y[i].value, double(xs[i]) * ws[i] + 2.0, 1e-12));
    CHECK(test::close(y[i].tangent[0], ws[i], 1e-12));
  }
  // plain numbers assign into duals as constants; parts come back out lazily
  array<dual<float>, B> d(x.shape());
  d = x;
  CHECK(adbody::host_values(array<float, B>(ad::tangent(d))) == std::vector<float>(xs.size(), 0.0f));
  CHECK(adbody::host_values(array<float, B>(ad::primal(d))) == xs);
  CHECK_THROWS_WITH_AS((void)ad::tangent(d, 1), "fusor: tangent index 1 is out of range for dual<float32> (expected 0 to 0)",
                       value_error);
  CHECK_THROWS_AS((void)ad::make_dual(x, ones<float, B>({n + 1})), shape_error);
}

TEST_CASE("reductions of duals: sum, mean, max and along an axis") {
  for (index_t n : {index_t(0), index_t(1), test::lanes<float> + 1, index_t(100'003)}) {
    CAPTURE(n);
    const auto xs = test::values<float>(n, -1, 1, 8);
    array<float, B> x = adbody::dev(xs), v = adbody::dev(test::values<float>(n, -1, 1, 9));
    const auto vs = adbody::host_values(v);
    const dual<float> s = sum(sin(ad::make_dual(x, v)));
    double want_v = 0, want_d = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) want_v += std::sin(double(xs[i])), want_d += std::cos(double(xs[i])) * vs[i];
    CHECK(test::close(double(s.value), want_v, 1e-4));
    CHECK(test::close(double(s.tangent[0]), want_d, 1e-4));
    if (n > 0) {
      const dual<float> m = mean(ad::make_dual(x, v));
      double mv = 0;
      for (float e : vs) mv += e;
      CHECK(test::close(double(m.tangent[0]), mv / double(n), 1e-4));
      const dual<float> hi = max(ad::make_dual(x, v));
      const auto at = std::max_element(xs.begin(), xs.end()) - xs.begin();
      CHECK(hi.value == xs[std::size_t(at)]);
      CHECK(hi.tangent[0] == vs[std::size_t(at)]);
    }
  }
  // along an axis: the tangent of each row sum
  const auto xs = test::values<double>(6 * 37, -1, 1, 4);
  array<double, B> x = adbody::dev(xs, {6, 37}), v = ones<double, B>({6, 37});
  const auto rows = adbody::host_values(array<dual<double>, B>(sum(ad::make_dual(x, v) * ad::make_dual(x, v), 1)));
  for (int r = 0; r < 6; ++r) {
    double want = 0;
    for (int c = 0; c < 37; ++c) want += 2 * xs[std::size_t(r * 37 + c)];
    CHECK(test::close(rows[std::size_t(r)].tangent[0], want, 1e-12));
  }
}

TEST_CASE("jvp: value and directional derivative in one fused pass") {
  auto f = [](const auto& x) { return sum(square(2.0 * (x + 1.0))); };           // Σ(2(x+1))²
  auto g = [](const auto& x) { return sum(sin(x) * exp(-x * x) + x * x / 2.0); };  // Σ sin(x)e^{-x²} + x²/2
  for (index_t n : {index_t(0), index_t(1), test::lanes<double> - 1, test::lanes<double> + 1, index_t(100'001)}) {
    CAPTURE(n);
    const auto xs = test::values<double>(n, -1, 1, 1), vs = test::values<double>(n, -1, 1, 2);
    array<double, B> x = adbody::dev(xs), v = adbody::dev(vs);
    adbody::ref_t fv = 0, fd = 0, gv = 0, gd = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      const adbody::ref_t t = xs[i], e = std::exp(-t * t);
      fv += 4 * (t + 1) * (t + 1), fd += 8 * (t + 1) * vs[i];
      gv += std::sin(t) * e + t * t / 2, gd += (std::cos(t) * e - 2 * t * std::sin(t) * e + t) * vs[i];
    }
    const auto [f0, f1] = ad::jvp(f, x, v);
    CHECK(test::close(f0, double(fv), 1e-12));
    CHECK(test::close(f1, double(fd), 1e-11));
    const auto [g0, g1] = ad::jvp(g, x, v);
    CHECK(test::close(g0, double(gv), 1e-12));
    CHECK(test::close(g1, double(gd), 1e-11));
  }
  // an array-valued function: the value and the tangent arrays
  const auto xs = test::values<double>(1001, -1, 1, 3);
  array<double, B> x = adbody::dev(xs), v = ones<double, B>({1001});
  const auto [y, dy] = ad::jvp([](const auto& t) { return tanh(t) * t; }, x, v);
  const auto hy = adbody::host_values(y), hdy = adbody::host_values(dy);
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double t = xs[i], th = std::tanh(t);
    CHECK(test::close(hy[i], th * t, 1e-14));
    CHECK(test::close(hdy[i], (1 - th * th) * t + th, 1e-13));
  }
#if defined(FUSOR_INSTRUMENT)
  // the seed is a lazy node: f(seed) is one pass, and nothing is allocated for a scalar result
  instrument::reset();
  (void)ad::jvp(g, x, v);
  CHECK(instrument::passes == 1);
  CHECK(instrument::allocations == 0);
#endif
}

TEST_CASE("KlongPy's documented derivatives") {
  // f:>x for x^2 at 3, x^3 at 2, 3x^4 - 2x^2 + x at 1
  CHECK(ad::derivative([](auto x) { return x * x; }, 3.0) == 6.0);
  CHECK(ad::derivative([](auto x) { return x * x * x; }, 2.0) == 12.0);
  CHECK(ad::derivative([](auto x) { return 3.0 * x * x * x * x - 2.0 * x * x + x; }, 1.0) == 9.0);
  // the gradient of Σx² at [1 2 3] is [2 4 6]
  array<double, B> x = adbody::dev(std::vector<double>{1, 2, 3});
  CHECK(adbody::host_values(ad::jacfwd([](const auto& t) { return sum(t * t); }, x)) == std::vector<double>{2, 4, 6});
  // w^2 + b^2 at w = 2, b = 3: [4 6] (both parameters in one array)
  array<double, B> wb = adbody::dev(std::vector<double>{2, 3});
  CHECK(adbody::host_values(ad::jacfwd([](const auto& p) { return sum(p * p); }, wb)) == std::vector<double>{4, 6});
  // the Jacobian of x^2 at [1 2] is [[2 0] [0 4]]
  array<double, B> x2 = adbody::dev(std::vector<double>{1, 2});
  const auto J = ad::jacfwd([](const auto& t) { return t * t; }, x2);
  CHECK(J.shape() == extents{2, 2});
  CHECK(adbody::host_values(J) == std::vector<double>{2, 0, 0, 4});
  // 50 steps of w <- w - 0.1 d(w^2)/dw from 10: w_k = 10 * 0.8^k
  double w = 10;
  for (int k = 0; k < 50; ++k) w -= 0.1 * ad::derivative([](auto t) { return t * t; }, w);
  CHECK(w == doctest::Approx(10 * std::pow(0.8, 50)).epsilon(1e-12));
}

TEST_CASE("jacfwd: chunks of columns, matrix inputs and outputs") {
  // y = A·sin(x) for a 5x17 matrix A (17 inputs: chunks 8 + 8 + 1), x of shape (17,)
  const auto as = test::values<double>(5 * 17, -1, 1, 7), xs = test::values<double>(17, -1, 1, 8);
  array<double, B> A = adbody::dev(as, {5, 17}), x = adbody::dev(xs);
  auto f = [&](const auto& t) { return sum(A * sin(t), 1); };
  const auto J = ad::jacfwd(f, x);
  REQUIRE(J.shape() == extents{5, 17});
  const auto hj = adbody::host_values(J);
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 17; ++j)
      CHECK(test::close(hj[std::size_t(i * 17 + j)], as[std::size_t(i * 17 + j)] * std::cos(xs[std::size_t(j)]), 1e-14));
  // a (2, 3) input and (2, 3) output: shape (2, 3, 2, 3), diagonal exp(x)
  array<double, B> m = adbody::dev(test::values<double>(6, -1, 1, 9), {2, 3});
  const auto Jm = ad::jacfwd<4>([](const auto& t) { return exp(t); }, m);
  REQUIRE(Jm.shape() == extents{2, 3, 2, 3});
  const auto hm = adbody::host_values(m), hjm = adbody::host_values(Jm);
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 6; ++j) CHECK(hjm[std::size_t(i * 6 + j)] == (i == j ? std::exp(hm[std::size_t(i)]) : 0.0));
  // no inputs: an empty Jacobian of the right shape
  CHECK(ad::jacfwd([](const auto& t) { return t * 2.0; }, zeros<double, B>({0})).shape() == extents{0, 0});
}

TEST_CASE("central differences and gradcheck") {
  const auto xs = test::values<double>(9, -1, 1, 12);
  array<double, B> x = adbody::dev(xs);
  auto g = [](const auto& t) { return sum(sin(t) * exp(-t * t) + t * t / 2.0); };
  const auto ng = adbody::host_values(ad::numeric_grad(g, x));
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double t = xs[i], e = std::exp(-t * t);
    CHECK(test::close(ng[i], std::cos(t) * e - 2 * t * std::sin(t) * e + t, 1e-8));
  }
  const auto res = ad::gradcheck(g, x, {.directions = 4, .per_coordinate = true});
  CHECK(res.passed);
  CHECK(res.directions_checked == 4 + 9);
  CHECK(res.max_abs_error < 1e-8);
  CHECK(res.report().find("gradcheck passed: 13 directions") == 0);
  // a function whose dual code disagrees with its plain code (a wrong derivative) fails
  auto wrong = [](const auto& t) {
    if constexpr (ad::is_dual_v<value_t<std::remove_cvref_t<decltype(t)>>>) return sum(t * t * 1.5);
    else return sum(t * t);
  };
  const auto bad = ad::gradcheck(wrong, x, {.directions = 3});
  CHECK_FALSE(bad.passed);
  CHECK(bad.max_abs_error > 0.1);
  CHECK(bad.worst_direction.shape() == x.shape());
  CHECK(bad.report().find("gradcheck FAILED") == 0);
  // bad input
  CHECK_THROWS_WITH_AS(ad::numeric_grad(g, x, 0.0), "fusor: numeric_grad needs a step h > 0, got 0.000000", value_error);
  CHECK_THROWS_WITH_AS(ad::numeric_grad([](const auto& t) { return t * 2.0; }, x),
                       "fusor: numeric_grad needs f to return one number, got 9 values (use numeric_jvp, or jacfwd, for a "
                       "vector function)",
                       shape_error);
  CHECK_THROWS_AS(ad::gradcheck(g, x, {.directions = -1}), value_error);
  CHECK_THROWS_AS(ad::numeric_jvp(g, x, zeros<double, B>({3})), shape_error);
}

// ---- reverse mode -------------------------------------------------------------------------------

TEST_CASE("grad and value_and_grad: KlongPy's documented gradients") {
  // x^2 at 3 is 6; x^3 at 2 is 12; 3x^4 - 2x^2 + x at 1 is 9 (one-element arrays)
  auto at = [](double v) { return adbody::dev(std::vector<double>{v}); };
  CHECK(adbody::host_values(ad::grad([](const auto& x) { return sum(x * x); })(at(3))) == std::vector<double>{6});
  CHECK(adbody::host_values(ad::grad([](const auto& x) { return sum(x * x * x); })(at(2))) == std::vector<double>{12});
  CHECK(adbody::host_values(ad::grad([](const auto& x) { return sum(3.0 * x * x * x * x - 2.0 * x * x + x); })(at(1))) ==
        std::vector<double>{9});
  // Σx² at [1 2 3] is [2 4 6]
  CHECK(adbody::host_values(ad::grad([](const auto& x) { return sum(x * x); })(adbody::dev(std::vector<double>{1, 2, 3}))) ==
        std::vector<double>{2, 4, 6});
  // w^2 + b^2 at w = 2, b = 3: [4 6] (KlongPy's loss:>[w b]; JAX's argnums)
  const auto [gw, gb] = ad::grad([](const auto& w, const auto& b) { return sum(w * w + b * b); }, ad::argnums<0, 1>)(at(2), at(3));
  CHECK(adbody::host_values(gw) == std::vector<double>{4});
  CHECK(adbody::host_values(gb) == std::vector<double>{6});
  // 50 steps of w <- w - 0.1 dL/dw for L = w^2, from 10: w = 10 * 0.8^50
  auto dl = ad::grad([](const auto& w) { return sum(w * w); });
  array<double, B> w = at(10);
  for (int k = 0; k < 50; ++k) w = w - 0.1 * dl(w);
  CHECK(adbody::host_values(w)[0] == doctest::Approx(10 * std::pow(0.8, 50)).epsilon(1e-12));
  // a constant argument (not in argnums) is passed through
  const auto [v, g] = ad::value_and_grad([](const auto& x, const auto& c) { return sum(x * c); })(at(2), at(5));
  CHECK(v == 10.0);
  CHECK(adbody::host_values(g) == std::vector<double>{5});
  // has_aux: the loss and something else
  const auto [v2, aux, g2] =
      ad::value_and_grad([](const auto& x) { return std::make_pair(sum(x * x), 42); }, ad::has_aux)(at(3));
  CHECK(v2 == 9.0);
  CHECK(aux == 42);
  CHECK(adbody::host_values(g2) == std::vector<double>{6});
}

TEST_CASE("parameter trees: tuples, pairs, std::array, std::vector and maps of arrays, nested") {
  const auto ws = test::values<double>(3 * 2, -1, 1, 21), bs = test::values<double>(2, -1, 1, 22),
             xs = test::values<double>(3, -1, 1, 23);
  const array<double, B> w = adbody::dev(ws, {3, 2}), b = adbody::dev(bs), x = adbody::dev(xs, {3, 1});
  // L = Σ_ij (x_i w_ij + b_j)²: dL/dw_ij = 2 r_ij x_i, dL/db_j = Σ_i 2 r_ij, written out by hand
  std::vector<double> want_w(6), want_b(2, 0.0);
  double want_l = 0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j) {
      const double r = xs[std::size_t(i)] * ws[std::size_t(2 * i + j)] + bs[std::size_t(j)];
      want_l += r * r;
      want_w[std::size_t(2 * i + j)] = 2 * r * xs[std::size_t(i)];
      want_b[std::size_t(j)] += 2 * r;
    }
  auto close_all = [](const std::vector<double>& got, const std::vector<double>& want) {
    REQUIRE(got.size() == want.size());
    for (std::size_t k = 0; k < got.size(); ++k) CHECK(test::close(got[k], want[k], 1e-14));
  };
  const auto model = [&x](const auto& wv, const auto& bv) { return sum(square(x * wv + bv)); };
  SUBCASE("a tuple, and std::tie of the caller's arrays (KlongPy's loss:>[w b])") {
    auto f = [&](const auto& p) { return model(std::get<0>(p), std::get<1>(p)); };
    // arrays are move-only: a tree owns copies (.copy()) or refers to the caller's (std::tie)
    const auto [l, g] = ad::value_and_grad(f)(std::make_tuple(w.copy(), b.copy()));
    CHECK(test::close(l, want_l, 1e-14));
    close_all(adbody::host_values(std::get<0>(g)), want_w);
    close_all(adbody::host_values(std::get<1>(g)), want_b);
    CHECK(std::get<0>(g).shape() == extents{3, 2});
    const auto g2 = ad::grad(f)(std::tie(w, b));  // references: no copy of the parameters
    close_all(adbody::host_values(std::get<1>(g2)), want_b);
  }
  SUBCASE("a pair and a std::array") {
    const auto gp = ad::grad([&](const auto& p) { return model(p.first, p.second); })(std::make_pair(w.copy(), b.copy()));
    close_all(adbody::host_values(gp.first), want_w);
    close_all(adbody::host_values(gp.second), want_b);
    const std::array<array<double, B>, 2> bb{b.copy(), b.copy()};  // L(b0, b1) = model(w, b0) + model(w, b1)
    const auto ga = ad::grad([&](const auto& p) { return model(w, p[0]) + model(w, p[1]); })(bb);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(ga)>, std::array<array<double, B>, 2>>);
    close_all(adbody::host_values(ga[0]), want_b);
    close_all(adbody::host_values(ga[1]), want_b);
  }
  SUBCASE("a std::vector of any length, and one with repeated entries") {
    for (std::size_t n : {std::size_t(1), std::size_t(3)}) {
      std::vector<array<double, B>> layers;
      for (std::size_t k = 0; k < n; ++k) layers.push_back(b.copy());
      auto f = [&](const auto& v) {
        auto acc = model(w, v[0]);
        for (std::size_t k = 1; k < v.size(); ++k) acc = acc + model(w, v[k]);
        return acc;
      };
      const auto g = ad::grad(f)(layers);
      REQUIRE(g.size() == n);
      for (const auto& gk : g) close_all(adbody::host_values(gk), want_b);
    }
  }
  SUBCASE("maps from names to arrays (Mithril's parameter dict), ordered and unordered") {
    std::map<std::string, array<double, B>> params;
    params.emplace("w", w.copy());
    params.emplace("b", b.copy());
    auto f = [&](const auto& p) { return model(p.at("w"), p.at("b")); };
    const auto [l, g] = ad::value_and_grad(f)(params);
    CHECK(test::close(l, want_l, 1e-14));
    REQUIRE(g.size() == 2);
    close_all(adbody::host_values(g.at("w")), want_w);
    close_all(adbody::host_values(g.at("b")), want_b);
    std::unordered_map<std::string, array<double, B>> up;
    for (const auto& [key, a] : params) up.emplace(key, a.copy());
    const auto gu = ad::grad(f)(up);
    close_all(adbody::host_values(gu.at("w")), want_w);
  }
  SUBCASE("nested trees, argnums and has_aux together") {
    using layer = std::pair<array<double, B>, array<double, B>>;
    std::vector<layer> net;
    net.emplace_back(w.copy(), b.copy());
    auto f = [&](const auto& scale, const auto& p) {
      return std::make_pair(scale * model(p[0].first, p[0].second), p.size());
    };
    const auto [l, aux, g] = ad::value_and_grad(f, ad::has_aux, ad::argnums<1>)(2.0, net);
    CHECK(test::close(l, 2 * want_l, 1e-14));
    CHECK(aux == 1);
    std::vector<double> w2 = want_w;
    for (auto& v : w2) v *= 2;
    close_all(adbody::host_values(g[0].first), w2);
  }
  SUBCASE("an explicit tape: param_tree and gradient_tree") {
    ad::tape t;
    std::vector<array<double, B>> bv;
    bv.push_back(b.copy());
    const auto p = ad::param_tree(t, std::tie(w, bv));
    auto y = model(std::get<0>(p), std::get<1>(p)[0]);
    ad::backward(y);
    const auto g = ad::gradient_tree(p);
    close_all(adbody::host_values(std::get<0>(g)), want_w);
    close_all(adbody::host_values(std::get<1>(g)[0]), want_b);
  }
}

TEST_CASE("reverse mode through broadcasting, views, axis reductions and chained nodes (against central differences)") {
  const auto ws = test::values<double>(4 * 3, -1, 1, 31), bs = test::values<double>(3, -1, 1, 32),
             cs = test::values<double>(4 * 3, -1, 1, 33);
  array<double, B> W = adbody::dev(ws, {4, 3}), b = adbody::dev(bs), c = adbody::dev(cs, {4, 3});
  auto check = [&](const char* name, auto f, const array<double, B>& x) {
    CAPTURE(name);
    const auto g = adbody::host_values(ad::grad(f)(x));
    const auto ng = adbody::host_values(ad::numeric_grad(f, x));
    REQUIRE(g.size() == ng.size());
    for (std::size_t i = 0; i < g.size(); ++i) CHECK(test::close(g[i], ng[i], 1e-7));
  };
  // a (3,) bias broadcast over the rows of a (4, 3) matrix: its adjoint sums over the rows
  check("bias", [&](const auto& t) { return sum(tanh(W + t) * c); }, b);
  check("matrix with a broadcast bias", [&](const auto& t) { return sum(sin(t * b) + t); }, W);
  // reductions along axes, with and without keepdims, and a mean
  check("sum along axis 1", [&](const auto& t) { return sum(square(sum(t * c, 1))); }, W);
  check("mean along axis 0, keepdims", [&](const auto& t) { return sum(exp(mean(t, 0, true)) * W); }, W);
  check("mean", [&](const auto& t) { return mean(t * t * c); }, W);
  // a chain of materialised nodes
  check("chained", [&](const auto& t) {
    if constexpr (ad::is_var_v<std::remove_cvref_t<decltype(t)>>) {
      ad::var<double, B> h = tanh(t * c);
      ad::var<double, B> s = sum(h, 1);
      return sum(s * s + sum(h));
    } else {
      return sum(square(sum(tanh(t * c), 1)) + sum(tanh(t * c)));
    }
  }, W);
  // a box of a matrix as the first write (assigned, the rest zeroed), then a strided view added
  check("box and strided rows", [&](const auto& t) {
    return sum(sin(t(range(1, 3), range(1, 3)))) + sum(square(t(range(0, 4, 2), fusor::all)));
  }, W);
  check("a corner box alone", [&](const auto& t) { return sum(exp(t(range(2, 4), range(0, 2)))); }, W);
  // views of one variable in one expression: Rosenbrock
  auto rosen = [](const auto& x) {
    const index_t n = x.size();
    return sum(100.0 * square(x(range(1, n)) - square(x(range(0, n - 1)))) + square(1.0 - x(range(0, n - 1))));
  };
  const auto xs = test::values<double>(17, -1.5, 1.5, 34);
  const auto g = adbody::host_values(ad::grad(rosen)(adbody::dev(xs)));
  for (std::size_t i = 0; i < xs.size(); ++i) {
    double want = 0;
    if (i + 1 < xs.size()) want += -400 * xs[i] * (xs[i + 1] - xs[i] * xs[i]) - 2 * (1 - xs[i]);
    if (i > 0) want += 200 * (xs[i] - xs[i - 1] * xs[i - 1]);
    CHECK(test::close(g[i], want, 1e-12));
  }
}

TEST_CASE("a tape records one node per materialised expression, and a second iteration allocates nothing") {
  const index_t n = 100'003;
  const auto xs = test::values<double>(n, -1, 1, 41);
  array<double, B> x = adbody::dev(xs);
  ad::tape t;
  auto step = [&] {
    t.reset();
    ad::var<double, B> xv = ad::param(t, x);
    auto loss = sum(square(2.0 * (xv + 1.0)));  // Σ(2(x+1))²: one node
    ad::backward(loss);
    return std::make_pair(loss.item(), ad::gradient(xv));
  };
  (void)step();
  CHECK(t.size() == 1);
#if defined(FUSOR_INSTRUMENT)
  instrument::reset();
  const auto [value, g] = step();
  CHECK(instrument::allocations == 0);
  CHECK(instrument::passes == 2);  // the forward reduction, and one backward pass for x
#else
  const auto [value, g] = step();
#endif
  const auto hg = adbody::host_values(array<double, B>(g));
  double want = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    want += 4 * (xs[i] + 1) * (xs[i] + 1);
    CHECK(hg[i] == doctest::Approx(8 * (xs[i] + 1)).epsilon(1e-14));
  }
  CHECK(test::close(value, want, 1e-12));
}

TEST_CASE("no_grad, stop_gradient and constants") {
  array<double, B> x = adbody::dev(std::vector<double>{1, 2, 3});
  // stop_gradient: the second factor is a constant, so d/dx (x * stop(x)) = x
  CHECK(adbody::host_values(ad::grad([](const auto& t) { return sum(t * ad::stop_gradient(t)); })(x)) ==
        std::vector<double>{1, 2, 3});
  ad::tape t;
  auto xv = ad::param(t, x);
  {
    ad::no_grad scope;
    CHECK_FALSE(ad::recording());
    ad::var<double, B> y = xv * 2.0;
    CHECK_FALSE(y.requires_grad());
  }
  CHECK(ad::recording());
  ad::var<double, B> z = xv * 2.0;
  CHECK(z.requires_grad());
  CHECK(t.size() == 1);
  // a function that does not use its argument: zero gradient
  CHECK(adbody::host_values(ad::grad([](const auto& t2) { return sum(t2 * 0.0); })(x)) == std::vector<double>{0, 0, 0});
}

TEST_CASE("reverse-mode misuse is a typed error that says what was expected") {
  array<double, B> x = adbody::dev(std::vector<double>{1, 2, 3});
  ad::tape t, other;
  auto xv = ad::param(t, x);
  auto yv = ad::param(other, x);
  CHECK_THROWS_WITH_AS((void)ad::eval(xv * yv),
                       "fusor: evaluating an expression of variables from two different tapes (expected every variable of "
                       "one expression on one tape; use ad::stop_gradient on the other tape's values to use them as "
                       "constants)",
                       ad::tape_error);
  ad::var<double, B> y = xv * 2.0;
  CHECK_THROWS_WITH_AS(ad::backward(y),
                       "fusor: the gradient needs a function with one number as output (a 0-d variable, e.g. a sum), got "
                       "shape (3,) (use vjp or jacrev for a vector output)",
                       ad::tape_error);
  CHECK_THROWS_AS(ad::grad([](const auto& v) { return ad::eval(v * 2.0); })(x), ad::tape_error);
  t.reset();
  CHECK_THROWS_WITH_AS((void)ad::eval(xv * 2.0),
                       "fusor: use of a variable from an earlier recording: its tape was reset() since, or it no longer "
                       "exists (record it again)",
                       ad::tape_error);
  CHECK_THROWS_AS((void)y.value(), ad::tape_error);
  ad::var<double, B> never;
  CHECK_THROWS_WITH_AS((void)never.shape(),
                       "fusor: shape of a variable that was never made (default-constructed var)", ad::tape_error);

  // a variable that outlives its tape: every use is a tape_error, never a read of the freed tape
  // (the sanitizer build runs this: it reported a stack-use-after-scope before)
  ad::var<double, B> orphan, orphan_sum;
  {
    ad::tape scoped;
    orphan = ad::param(scoped, x);
    orphan_sum = sum(orphan * orphan);
    ad::backward(orphan_sum);
  }
  const std::string gone = "of a variable whose tape no longer exists (expected the tape to outlive its variables)";
  using dvar = ad::var<double, B>;
  CHECK_THROWS_WITH_AS((void)dvar(sum(orphan * orphan)), doctest::Contains(gone.c_str()), ad::tape_error);
  CHECK_THROWS_WITH_AS((void)ad::gradient(orphan), doctest::Contains(gone.c_str()), ad::tape_error);
  CHECK_THROWS_WITH_AS((void)orphan.value(), ("fusor: value " + gone).c_str(), ad::tape_error);
  CHECK_THROWS_AS(ad::backward(orphan_sum), ad::tape_error);
  CHECK_THROWS_AS((void)orphan_sum.item(), ad::tape_error);
  // a new tape taking the dead one's identity cell gives the old variables no life back
  ad::tape next;
  const auto fresh = ad::param(next, x);
  CHECK_THROWS_AS((void)ad::eval(orphan * 2.0), ad::tape_error);
  CHECK(fresh.shape() == x.shape());
}

TEST_CASE("active tapes nest as a stack; recorded arrays are watched for writes and outlive their arrays") {
  array<double, B> x = adbody::dev(std::vector<double>{1, 2, 3});
  CHECK_FALSE(ad::has_active_tape());
  CHECK_THROWS_WITH_AS((void)ad::active_tape(),
                       "fusor: no tape is active on this thread (expected a call inside an ad::use_tape scope or inside a "
                       "function that ad::grad, value_and_grad or vjp is differentiating; or pass the tape: "
                       "ad::param(tape, x))",
                       ad::tape_error);
  ad::tape outer, inner;
  {
    const ad::use_tape on(outer);
    const auto xv = ad::param(x);  // on the active tape
    CHECK(xv.owner() == &outer);
    {
      const ad::use_tape on_inner(inner);
      CHECK(&ad::active_tape() == &inner);
      CHECK(ad::param(x).owner() == &inner);
    }
    CHECK(&ad::active_tape() == &outer);
    // a transform called during the outer recording records on its own tape, active while it
    // calls the function, and leaves the outer one as it was
    const ad::tape* seen = nullptr;
    const array<double, B> g = ad::grad([&](const auto& v) {
      seen = &ad::active_tape();
      return sum(v * v * v);
    })(x);
    CHECK((seen != nullptr && seen != &outer && seen != &inner));
    CHECK(&ad::active_tape() == &outer);
    ad::backward(sum(xv * g));  // g = 3x² is a constant here
    CHECK(adbody::host_values(ad::gradient(xv)) == std::vector<double>{3, 12, 27});
  }
  CHECK_FALSE(ad::has_active_tape());
  // a transform inside a function being differentiated (on arrays), and a constant made inside the
  // function: its array dies when the function returns, the tape keeps its buffer for backward
  auto f = [&](const auto& w) {
    const array<double, B> inner_grad = ad::grad([](const auto& v) { return sum(sin(v)); })(x);  // cos(x)
    const array<double, B> c = x * 2.0;
    return sum(w * w * inner_grad + w * c);  // d/dw = 2w cos(x) + 2x
  };
  // (the outer tape above keeps g's buffer: g went out of scope while it watched it)
  const auto adopted = fusor::detail::watched_memory().adopted_buffers();
  CHECK(adopted == 1);
  const auto gf = adbody::host_values(ad::grad(f)(x));
  for (int i = 0; i < 3; ++i) CHECK(test::close(gf[std::size_t(i)], 2 * (i + 1) * std::cos(i + 1.0) + 2 * (i + 1), 1e-14));
  CHECK(fusor::detail::watched_memory().adopted_buffers() == adopted);  // the transform let its own go

  // writes into a parameter or a constant between recording and backward are caught, whatever
  // engine path wrote them: an assignment, a write through a view, a scatter
  array<double, B> w = adbody::dev(std::vector<double>{1, 2, 3}), c = adbody::dev(std::vector<double>{4, 5, 6});
  ad::tape t;
  auto record = [&] {
    t.reset();
    const auto wv = ad::param(t, w);
    return std::make_pair(wv, sum(wv * wv * c));
  };
  {
    const auto [wv, loss] = record();
    w += 1.0;
    CHECK_THROWS_WITH_AS(ad::backward(loss),
                         "fusor: an array the recording reads in its backward pass (a parameter of shape (3,)) was "
                         "written after it was recorded, so the gradient would be wrong; expected it unchanged until the "
                         "backward pass (update parameters after it, then record again)",
                         ad::tape_error);
  }
  {
    const auto [wv, loss] = record();
    c(range(1, 2)) = 7.0;
    CHECK_THROWS_WITH_AS(ad::backward(loss),
                         "fusor: an array the recording reads in its backward pass (a constant array of shape (3,)) was "
                         "written after it was recorded, so the gradient would be wrong; expected it unchanged until the "
                         "backward pass (update parameters after it, then record again)",
                         ad::tape_error);
  }
  {
    const auto [wv, loss] = record();
    const auto first = adbody::dev(std::vector<std::int64_t>{0});
    scatter_add(w, first, 1.0, 0);
    CHECK_THROWS_AS(ad::backward(loss), ad::tape_error);
  }
  w = adbody::dev(std::vector<double>{1, 2, 3});
  c = adbody::dev(std::vector<double>{4, 5, 6});
  {  // a training step: backward, then the update; the next recording starts clean
    for (int step = 0; step < 2; ++step) {
      const auto [wv, loss] = record();
      ad::backward(loss);
      w -= 0.1 * ad::gradient(wv);
    }
    CHECK(adbody::host_values(w)[0] == doctest::Approx(0.2 * 0.2).epsilon(1e-14));  // w ← w(1 − 0.2c), c = 4
  }
  {  // reassigning a parameter with another shape leaves the recorded buffer to the tape
    w = adbody::dev(std::vector<double>{1, 2, 3});
    const auto [wv, loss] = record();
    const auto kept = fusor::detail::watched_memory().adopted_buffers();
    w = adbody::dev(std::vector<double>{9, 9});
    CHECK(fusor::detail::watched_memory().adopted_buffers() == kept + 1);
    ad::backward(loss);  // d/dw = 2 w c at the recorded values
    CHECK(adbody::host_values(ad::gradient(wv)) == std::vector<double>{8, 20, 36});
    t.reset();
    CHECK(fusor::detail::watched_memory().adopted_buffers() == kept);
  }
  // inside a transform, and through a pullback
  auto writes = [&](const auto& v) {
    auto l = sum(v * c);
    c *= 2.0;
    return l;
  };
  CHECK_THROWS_AS(ad::grad(writes)(x), ad::tape_error);
  array<double, B> x2 = x.copy();
  auto [y, pb] = ad::vjp([](const auto& v) { return ad::eval(v * v); }, x2);
  x2 = x2 * 3.0;
  CHECK_THROWS_AS(pb(y), ad::tape_error);
}

TEST_CASE("vjp, jacrev and jacobian") {
  // the Jacobian of x^2 at [1 2] is [[2 0] [0 4]] by reverse mode too
  array<double, B> x2 = adbody::dev(std::vector<double>{1, 2});
  const auto J = ad::jacrev([](const auto& t) { return ad::eval(t * t); }, x2);
  CHECK(J.shape() == extents{2, 2});
  CHECK(adbody::host_values(J) == std::vector<double>{2, 0, 0, 4});
  // y = Σ_j A_ij sin(x_j): 5 outputs, 17 inputs, against the closed form; jacobian picks reverse
  const auto as = test::values<double>(5 * 17, -1, 1, 51), xs = test::values<double>(17, -1, 1, 52);
  array<double, B> A = adbody::dev(as, {5, 17}), x = adbody::dev(xs);
  auto f = [&](const auto& t) { return sum(A * sin(t), 1); };
  for (const auto& Jr : {ad::jacrev(f, x), ad::jacobian(f, x), ad::jacfwd(f, x)}) {
    REQUIRE(Jr.shape() == extents{5, 17});
    const auto h = adbody::host_values(Jr);
    for (int i = 0; i < 5; ++i)
      for (int j = 0; j < 17; ++j)
        CHECK(test::close(h[std::size_t(i * 17 + j)], as[std::size_t(i * 17 + j)] * std::cos(xs[std::size_t(j)]), 1e-14));
  }
  // vjp: the value and a pullback that can be called again
  auto [y, pb] = ad::vjp([](const auto& t) { return ad::eval(exp(t) * 2.0); }, x2);
  CHECK(adbody::host_values(y) == std::vector<double>{2 * std::exp(1.0), 2 * std::exp(2.0)});
  const auto c1 = adbody::host_values(pb(adbody::dev(std::vector<double>{1, 0})));
  const auto c2 = adbody::host_values(pb(adbody::dev(std::vector<double>{0.5, 3})));
  CHECK(c1 == std::vector<double>{2 * std::exp(1.0), 0});
  CHECK(test::close(c2[0], std::exp(1.0), 1e-15));
  CHECK(test::close(c2[1], 6 * std::exp(2.0), 1e-15));
  CHECK_THROWS_WITH_AS(pb(adbody::dev(std::vector<double>{1, 2, 3})),
                       "fusor: the cotangent must have the output's shape (2,), got (3,)", ad::tape_error);
}
