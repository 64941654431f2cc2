// Autodiff test bodies written once and instantiated per backend: tests/test_ad.cpp runs them on
// cpu, tests/test_ad_cuda.cu on cuda. Every derivative is compared with a closed form (written
// out by hand below) or with central differences computed here in long double, never with fusor's
// own derivative code.
//
// The includer defines TEST_BACKEND (fusor::cpu or fusor::cuda) before including this file.
#include "../common.hpp"

#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace adbody {

using fusor::index_t;
using B = TEST_BACKEND;
using fusor::ad::dual;

template <class T>
fusor::array<T, B> dev(const std::vector<T>& v, const fusor::extents& shape) {
  return fusor::to<B>(fusor::array<T>(std::span<const T>(v.data(), v.size()), shape));
}
template <class T>
fusor::array<T, B> dev(const std::vector<T>& v) {
  return dev(v, fusor::extents{index_t(v.size())});
}
template <class E>
auto host_values(const E& e) {
  const auto h = fusor::to<fusor::cpu>(e);
  using T = fusor::value_t<decltype(h)>;
  std::vector<T> out(std::size_t(h.size()));
  for (index_t i = 0; i < h.size(); ++i) out[std::size_t(i)] = h.data()[i];
  return out;
}

// One elementary function: the generic code under test (called on arrays of duals, so the
// backend's functor runs), and its value and derivative written out by hand in long double.
struct case_t {
  const char* name;
  double lo, hi;  // the domain the inputs are drawn from
  std::function<fusor::array<dual<double>, B>(const fusor::array<dual<double>, B>&)> f;
  std::function<long double(long double)> value, slope;
};

inline std::vector<case_t> cases() {
  using A = fusor::array<dual<double>, B>;
  using L = long double;
  return {
      {"sin", -4, 4, [](const A& x) { return A(sin(x)); }, [](L x) { return std::sin(x); }, [](L x) { return std::cos(x); }},
      {"cos", -4, 4, [](const A& x) { return A(cos(x)); }, [](L x) { return std::cos(x); }, [](L x) { return -std::sin(x); }},
      {"tan", -1.2, 1.2, [](const A& x) { return A(tan(x)); }, [](L x) { return std::tan(x); },
       [](L x) { return 1 / (std::cos(x) * std::cos(x)); }},
      {"exp", -3, 3, [](const A& x) { return A(exp(x)); }, [](L x) { return std::exp(x); }, [](L x) { return std::exp(x); }},
      {"exp2", -3, 3, [](const A& x) { return A(exp2(x)); }, [](L x) { return std::exp2(x); },
       [](L x) { return std::exp2(x) * std::log(L(2)); }},
      {"expm1", -3, 3, [](const A& x) { return A(expm1(x)); }, [](L x) { return std::expm1(x); }, [](L x) { return std::exp(x); }},
      {"log", 0.1, 5, [](const A& x) { return A(log(x)); }, [](L x) { return std::log(x); }, [](L x) { return 1 / x; }},
      {"log2", 0.1, 5, [](const A& x) { return A(log2(x)); }, [](L x) { return std::log2(x); },
       [](L x) { return 1 / (x * std::log(L(2))); }},
      {"log10", 0.1, 5, [](const A& x) { return A(log10(x)); }, [](L x) { return std::log10(x); },
       [](L x) { return 1 / (x * std::log(L(10))); }},
      {"log1p", -0.5, 5, [](const A& x) { return A(log1p(x)); }, [](L x) { return std::log1p(x); }, [](L x) { return 1 / (1 + x); }},
      {"sqrt", 0.1, 5, [](const A& x) { return A(sqrt(x)); }, [](L x) { return std::sqrt(x); },
       [](L x) { return 1 / (2 * std::sqrt(x)); }},
      {"cbrt", 0.1, 5, [](const A& x) { return A(cbrt(x)); }, [](L x) { return std::cbrt(x); },
       [](L x) { return 1 / (3 * std::cbrt(x) * std::cbrt(x)); }},
      {"asin", -0.9, 0.9, [](const A& x) { return A(asin(x)); }, [](L x) { return std::asin(x); },
       [](L x) { return 1 / std::sqrt(1 - x * x); }},
      {"acos", -0.9, 0.9, [](const A& x) { return A(acos(x)); }, [](L x) { return std::acos(x); },
       [](L x) { return -1 / std::sqrt(1 - x * x); }},
      {"atan", -3, 3, [](const A& x) { return A(atan(x)); }, [](L x) { return std::atan(x); }, [](L x) { return 1 / (1 + x * x); }},
      {"sinh", -2, 2, [](const A& x) { return A(sinh(x)); }, [](L x) { return std::sinh(x); }, [](L x) { return std::cosh(x); }},
      {"cosh", -2, 2, [](const A& x) { return A(cosh(x)); }, [](L x) { return std::cosh(x); }, [](L x) { return std::sinh(x); }},
      {"tanh", -2, 2, [](const A& x) { return A(tanh(x)); }, [](L x) { return std::tanh(x); },
       [](L x) { return 1 - std::tanh(x) * std::tanh(x); }},
      {"abs", -2, 2, [](const A& x) { return A(abs(x)); }, [](L x) { return std::fabs(x); }, [](L x) { return x > 0 ? 1 : -1; }},
      {"square", -2, 2, [](const A& x) { return A(square(x)); }, [](L x) { return x * x; }, [](L x) { return 2 * x; }},
      {"x*x+3x-1", -2, 2, [](const A& x) { return A(x * x + 3.0 * x - 1.0); }, [](L x) { return x * x + 3 * x - 1; },
       [](L x) { return 2 * x + 3; }},
      {"1/x", 0.5, 3, [](const A& x) { return A(1.0 / x); }, [](L x) { return 1 / x; }, [](L x) { return -1 / (x * x); }},
      {"x/(1+x*x)", -2, 2, [](const A& x) { return A(x / (1.0 + x * x)); }, [](L x) { return x / (1 + x * x); },
       [](L x) { return (1 - x * x) / ((1 + x * x) * (1 + x * x)); }},
      {"x**2.5", 0.1, 3, [](const A& x) { return A(pow(x, 2.5)); }, [](L x) { return std::pow(x, L(2.5)); },
       [](L x) { return L(2.5) * std::pow(x, L(1.5)); }},
      {"x**2 (negative base)", -3, -0.1, [](const A& x) { return A(pow(x, 2.0)); }, [](L x) { return x * x; },
       [](L x) { return 2 * x; }},
      {"2**x", -2, 2, [](const A& x) { return A(pow(2.0, x)); }, [](L x) { return std::pow(L(2), x); },
       [](L x) { return std::pow(L(2), x) * std::log(L(2)); }},
      {"atan2(x, 2)", -2, 2, [](const A& x) { return A(atan2(x, 2.0)); }, [](L x) { return std::atan2(x, L(2)); },
       [](L x) { return 2 / (4 + x * x); }},
      {"floor", -2, 2, [](const A& x) { return A(floor(x)); }, [](L x) { return std::floor(x); }, [](L) { return L(0); }},
      {"maximum(x, 0.5)", -2, 2, [](const A& x) { return A(maximum(x, 0.5)); }, [](L x) { return std::max(x, L(0.5)); },
       [](L x) { return x > 0.5 ? 1 : 0; }},
      {"where(x > 0, x, -2x)", -2, 2, [](const A& x) { return A(where(x > 0.0, x, -2.0 * x)); },
       [](L x) { return x > 0 ? x : -2 * x; }, [](L x) { return x > 0 ? 1 : -2; }},
  };
}

}  // namespace adbody

using namespace fusor;
using adbody::B;
using adbody::index_t;
using fusor::ad::dual;

TEST_CASE("dual numbers: value and derivative of every elementary function, scalar and SIMD") {
  for (const auto& c : adbody::cases()) {
    CAPTURE(c.name);
    for (index_t n : {index_t(0), index_t(1), test::lanes<double> - 1, test::lanes<double>, test::lanes<double> + 1,
                      3 * test::lanes<double> + 5, index_t(10'001)}) {
      CAPTURE(n);
      const auto xs = test::values<double>(n, c.lo, c.hi, 11);
      std::vector<dual<double>> seeded(xs.size());
      for (std::size_t i = 0; i < xs.size(); ++i) seeded[i] = dual<double>{xs[i], {1.0}};
      const auto y = adbody::host_values(c.f(adbody::dev(seeded)));
      REQUIRE(y.size() == xs.size());
      index_t bad = 0;
      for (std::size_t i = 0; i < xs.size(); ++i) {
        const long double want_v = c.value(xs[i]), want_d = c.slope(xs[i]);
        const bool ok = test::close(y[i].value, double(want_v), 1e-12) && test::close(y[i].tangent[0], double(want_d), 1e-11);
        if (!ok && bad++ == 0) {
          CAPTURE(xs[i]);
          CHECK(y[i].value == doctest::Approx(double(want_v)));
          CHECK(y[i].tangent[0] == doctest::Approx(double(want_d)));
        }
      }
      CHECK(bad == 0);
    }
  }
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
    long double fv = 0, fd = 0, gv = 0, gd = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      const long double t = xs[i], e = std::exp(-t * t);
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
