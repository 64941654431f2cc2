// Reductions against plain loops (double accumulation) and xtensor, whole-array and along each
// axis, with keepdims, on contiguous, strided and broadcast inputs, and their errors.
#include "common.hpp"

// xtensor 0.24's argmax (xsort.hpp's get_permutations) trips g++ 12's -Warray-bounds on its own
// small-vector insert: a false positive in the reference library, silenced where it is included
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Warray-bounds"
#endif
#include <xtensor/xarray.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xsort.hpp>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#include <fusor/interop/xtensor.hpp>

using namespace fusor;
using test::index_t;

TEST_CASE_TEMPLATE("whole-array reductions match plain loops at SIMD edge sizes", T, float, double, std::int32_t,
                   std::int64_t) {
  for (index_t n : test::edge_sizes<T>()) {
    const auto v = test::values<T>(n, -50, 50, std::uint64_t(n) + 1);
    const auto w = test::values<T>(n, -2, 2, std::uint64_t(n) + 2);
    auto a = test::make(v);
    auto b = test::make(w);
    double s = 0, sp = 0, mx = -INFINITY, mn = INFINITY, l1 = 0, l2 = 0;
    index_t amx = 0, amn = 0;
    bool any_ = false, all_ = true;
    for (index_t i = 0; i < n; ++i) {
      const double x = double(v[std::size_t(i)]);
      s += x;
      sp += x * double(w[std::size_t(i)]);
      if (x > mx) mx = x, amx = i;
      if (x < mn) mn = x, amn = i;
      l1 += std::abs(x);
      l2 += x * x;
      any_ = any_ || x != 0;
      all_ = all_ && x != 0;
    }
    INFO("n=", n, " dtype=", dtype_name<T>());
    const double tol = std::is_same_v<T, float> ? 1e-5 : 1e-12;
    CHECK(double(sum(a)) == doctest::Approx(s).epsilon(tol).scale(1.0 + double(n)));
    CHECK(double(sum(a * b)) == doctest::Approx(sp).epsilon(tol).scale(1.0 + double(n)));
    CHECK(double(dot(a, b).item()) == doctest::Approx(sp).epsilon(tol).scale(1.0 + double(n)));
    CHECK(any(a) == any_);
    CHECK(all(a) == all_);
    if (n > 0) {
      CHECK(double(max(a)) == mx);
      CHECK(double(min(a)) == mn);
      CHECK(argmax(a) == amx);
      CHECK(argmin(a) == amn);
      CHECK(double(mean(a)) == doctest::Approx(s / double(n)).epsilon(tol * 10));
      CHECK(double(norm(a, 1)) == doctest::Approx(l1).epsilon(tol));
      CHECK(double(norm(a)) == doctest::Approx(std::sqrt(l2)).epsilon(tol));
      CHECK(double(norm(a, INFINITY)) == std::max(std::abs(mx), std::abs(mn)));
      double ss = 0;
      const double mu = s / double(n);
      for (index_t i = 0; i < n; ++i) ss += (double(v[std::size_t(i)]) - mu) * (double(v[std::size_t(i)]) - mu);
      CHECK(double(var(a)) == doctest::Approx(ss / double(n)).epsilon(tol * 10));
      if (n > 1) CHECK(double(fusor::std(a, ddof(1))) == doctest::Approx(std::sqrt(ss / double(n - 1))).epsilon(tol * 10));
    }
  }
}

TEST_CASE("reduction result types follow NumPy") {
  array<std::int32_t> i{1, 2, 3};
  array<bool> b{true, true, false};
  array<float> f{1, 2};
  static_assert(std::is_same_v<decltype(sum(i)), std::int64_t>);
  static_assert(std::is_same_v<decltype(sum(b)), std::int64_t>);
  static_assert(std::is_same_v<decltype(sum(f)), float>);
  static_assert(std::is_same_v<decltype(mean(i)), double>);
  static_assert(std::is_same_v<decltype(mean(f)), float>);
  static_assert(std::is_same_v<decltype(max(i)), std::int32_t>);
  static_assert(std::is_same_v<decltype(sum(i, 0)), array<std::int64_t>>);
  CHECK(sum(b) == 2);
  CHECK(sum(f > 1.5f) == 1);
  CHECK(prod(array<int>{2, 3, 4}) == 24);
  CHECK(sum(array<std::int32_t>{2'000'000'000, 2'000'000'000}) == 4'000'000'000);  // int64 accumulator
}

TEST_CASE_TEMPLATE("axis reductions match xtensor on every axis, with keepdims", T, float, double, std::int64_t) {
  for (auto shape : {extents{5, 7, 9}, extents{3, 1, 17}, extents{1, 33}, extents{4, 600}, extents{700, 3}}) {
    const auto v = test::values<T>(shape.numel(), -20, 20, std::uint64_t(shape.numel()));
    array<T> a(v, shape);
    auto x = as_xtensor(a);
    for (int axis = 0; axis < shape.size(); ++axis) {
      INFO("shape ", to_string(shape), " axis ", axis, " dtype ", dtype_name<T>());
      auto s = sum(a, axis);
      xt::xarray<double> xs = xt::sum(xt::cast<double>(x), {std::size_t(axis)});
      auto mx = max(a, axis);
      xt::xarray<T> xmx = xt::amax(x, {std::size_t(axis)});
      auto mn = min(a, axis);
      xt::xarray<T> xmn = xt::amin(x, {std::size_t(axis)});
      auto am = argmax(a, axis);
      xt::xarray<std::size_t> xam = xt::argmax(x, std::size_t(axis));
      auto me = mean(a, axis);
      REQUIRE(index_t(xs.size()) == s.size());
      const double tol = std::is_same_v<T, float> ? 1e-5 : 1e-12;
      for (index_t k = 0; k < s.size(); ++k) {
        CHECK(double(s.data()[k]) == doctest::Approx(xs.data()[k]).epsilon(tol).scale(20));
        CHECK(mx.data()[k] == xmx.data()[k]);
        CHECK(mn.data()[k] == xmn.data()[k]);
        CHECK(am.data()[k] == std::int64_t(xam.data()[k]));
        CHECK(double(me.data()[k]) == doctest::Approx(xs.data()[k] / double(shape[axis])).epsilon(tol).scale(1));
      }
      auto kd = sum(a, axis, true);
      extents expect = shape;
      expect[axis] = 1;
      CHECK(kd.shape() == expect);
      auto neg = sum(a, axis - shape.size());
      CHECK(all(neg == s));
    }
  }
}

TEST_CASE("axis reductions of expressions, broadcasts and strided views") {
  array<double> m = arange<double>(12).reshape({3, 4});
  array<double> row{1, 2, 3, 4};
  auto s = sum(m * row, 0);  // fused: (3,4) * (4,) reduced over rows
  for (index_t j = 0; j < 4; ++j) CHECK(s(j) == double(j + 1) * (j + (4 + j) + (8 + j)));
  array_view<double> mt(m.data(), {4, 3}, {1, 4});  // transpose
  auto st = sum(mt, 1);
  for (index_t j = 0; j < 4; ++j) CHECK(st(j) == double(j + (4 + j) + (8 + j)));
  auto v = var(m, 1);
  for (index_t i = 0; i < 3; ++i) CHECK(v(i) == doctest::Approx(1.25));
  auto sd = fusor::std(m, 0, ddof(1), true);
  CHECK(sd.shape() == extents{1, 4});
  CHECK(sd(0, 0) == doctest::Approx(4.0));
  auto n2 = norm(m, 2, 1);
  CHECK(n2(0) == doctest::Approx(std::sqrt(0 + 1 + 4 + 9)));
  auto ninf = norm(m - 20, INFINITY, 0);
  CHECK(ninf(0) == 20);
  auto any1 = any(m > 10, 1), all0 = all(m >= 0, 0);
  CHECK(!any1(0));
  CHECK(any1(2));
  CHECK(all0(3));
  CHECK(sum(zeros<double>({0, 3}), 0)(2) == 0);  // empty axis: the identity
}

TEST_CASE("NaN propagates through max/min and argmax finds the first NaN, as NumPy") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (index_t n : test::edge_sizes<double>(false)) {
    if (n < 3) continue;
    auto v = test::values<double>(n, -1, 1, 3);
    v[std::size_t(n / 2)] = nan;
    auto a = test::make(v);
    CHECK(std::isnan(max(a)));
    CHECK(std::isnan(min(a)));
    CHECK(argmax(a) == n / 2);
    CHECK(std::isnan(sum(a)));
  }
}

TEST_CASE("reduction errors are typed and say what was expected") {
  array<float> e = zeros<float>({0});
  CHECK_THROWS_WITH_AS(max(e), "fusor: max of an empty array is undefined (no identity); got shape (0,)", value_error);
  CHECK_THROWS_WITH_AS(argmin(e), doctest::Contains("argmin of an empty array"), value_error);
  array<float> m = zeros<float>({2, 3});
  CHECK_THROWS_WITH_AS(sum(m, 2), "fusor: axis 2 is out of range for an array of rank 2 (expected -2 <= axis < 2)",
                       index_error);
  CHECK_THROWS_WITH_AS(max(zeros<float>({2, 0}), 1), doctest::Contains("axis of length 0 is undefined"), value_error);
  // NumPy 2: a length-0 axis raises even when the result is empty; a non-empty axis of an empty
  // array gives an empty result
  for (const extents& s : {extents{0, 0}, extents{0, 3}}) {
    INFO("shape ", to_string(s));
    CHECK_THROWS_WITH_AS(max(zeros<float>(s), 0), doctest::Contains("axis of length 0"), value_error);
    CHECK_THROWS_WITH_AS(min(zeros<float>(s), 0), doctest::Contains("axis of length 0"), value_error);
    CHECK_THROWS_WITH_AS(argmax(zeros<float>(s), 0), doctest::Contains("axis of length 0"), value_error);
    CHECK_THROWS_WITH_AS(argmin(zeros<float>(s), 0, true), doctest::Contains("axis of length 0"), value_error);
  }
  CHECK(max(zeros<float>({3, 0}), 0).shape() == extents{0});
  CHECK(argmin(zeros<float>({3, 0}), 0, true).shape() == extents{1, 0});
  CHECK_THROWS_WITH_AS(dot(m, m), doctest::Contains("dot: shapes (2, 3) and (2, 3) do not match"),
                       shape_error);
  CHECK_THROWS_WITH_AS(norm(m, std::nan("")), doctest::Contains("norm order must be a number or +-inf, got nan"), value_error);
  CHECK_THROWS_AS(norm(m, std::nan(""), 0), value_error);
  CHECK(std::isnan(mean(e)));
  CHECK(sum(e) == 0);
}

TEST_CASE("reductions of uint8, bool and complex arrays against plain loops") {
  for (test::index_t n : test::edge_sizes<float>()) {
    const auto u = test::values<std::uint8_t>(n, 0, 256, 3);
    const auto c = test::values<std::complex<double>>(n, -1, 1, 4);
    std::uint64_t su = 0;
    std::int64_t sb = 0;
    std::uint8_t mu = 0;
    std::complex<double> sc = 0;
    double l2 = 0;
    for (std::size_t i = 0; i < std::size_t(n); ++i) {
      su += u[i];
      mu = std::max(mu, u[i]);
      sb += u[i] > 127;
      sc += c[i];
      l2 += std::norm(c[i]);
    }
    auto au = test::make(u);
    auto ac = test::make(c);
    array<bool> ab = au > 127;
    INFO("n=", n);
    static_assert(std::is_same_v<decltype(sum(au)), std::uint64_t>);  // no uint8 overflow (NumPy: uint64)
    CHECK(sum(au) == su);
    CHECK(sum(ab) == sb);
    CHECK(any(ab) == (sb > 0));
    CHECK(all(ab) == (sb == n));
    const auto s = sum(ac);
    static_assert(std::is_same_v<std::remove_const_t<decltype(s)>, std::complex<double>>);
    CHECK(test::close(s, sc, 1e-12 * double(n + 1)));
    CHECK(norm(ac) == doctest::Approx(std::sqrt(l2)).epsilon(1e-12));
    if (n > 0) {
      CHECK(max(au) == mu);
      CHECK(test::close(mean(ac), sc / double(n), 1e-12));
    }
  }
}

TEST_CASE("threaded axis reductions agree with plain loops, including NaN in both axis modes") {
  set_parallel_threshold(64);
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    const index_t R = 301, C = 517;
    auto v = test::values<double>(R * C, -5, 5, 77);
    v[std::size_t(7 * C + 3)] = std::numeric_limits<double>::quiet_NaN();
    array<double> a(v, {R, C});
    auto s0 = sum(a, 0), s1 = sum(a, 1);
    auto m0 = max(a, 0), m1 = min(a, 1);
    auto g0 = argmax(a, 0), g1 = argmin(a, 1);
    for (index_t j = 0; j < C; ++j) {
      double s = 0, m = -INFINITY;
      std::int64_t g = 0;
      bool nan = false;
      for (index_t i = 0; i < R; ++i) {
        const double x = a(i, j);
        s += x;
        if (!nan && (std::isnan(x) || x > m)) m = x, g = i, nan = std::isnan(x);
      }
      INFO("threads ", threads, " column ", j);
      CHECK(test::close(s0(j), s, 1e-12 * R));
      CHECK(test::close(m0(j), m, 0));
      CHECK(g0(j) == g);
    }
    for (index_t i = 0; i < R; ++i) {
      double s = 0, m = INFINITY;
      std::int64_t g = 0;
      bool nan = false;
      for (index_t j = 0; j < C; ++j) {
        const double x = a(i, j);
        s += x;
        if (!nan && (std::isnan(x) || x < m)) m = x, g = j, nan = std::isnan(x);
      }
      INFO("threads ", threads, " row ", i);
      CHECK(test::close(s1(i), s, 1e-12 * C));
      CHECK(test::close(m1(i), m, 0));
      CHECK(g1(i) == g);
    }
  }
  set_num_threads(0);
  set_parallel_threshold(index_t(1) << 17);
}

TEST_CASE("axis sums of int32, uint8 and complex arrays against plain loops") {
  const index_t R = 13, C = 11;
  auto vi = test::values<std::int32_t>(R * C, -2e9, 2e9, 1);
  auto vu = test::values<std::uint8_t>(R * C, 0, 256, 2);
  auto vc = test::values<std::complex<float>>(R * C, -1, 1, 3);
  array<std::int32_t> ai(vi, {R, C});
  array<std::uint8_t> au(vu, {R, C});
  array<std::complex<float>> ac(vc, {R, C});
  for (int axis : {0, 1}) {
    auto si = sum(ai, axis);
    auto su = sum(au, axis);
    auto sc = sum(ac, axis);
    auto mu = max(au, axis);
    const index_t outer = axis == 0 ? C : R, inner = axis == 0 ? R : C;
    for (index_t o = 0; o < outer; ++o) {
      std::int64_t ei = 0;
      std::uint64_t eu = 0;
      std::uint8_t em = 0;
      std::complex<double> ec = 0;
      for (index_t k = 0; k < inner; ++k) {
        const index_t r = axis == 0 ? k : o, c = axis == 0 ? o : k;
        ei += ai(r, c);
        eu += au(r, c);
        em = std::max(em, au(r, c));
        ec += std::complex<double>(ac(r, c));
      }
      CHECK(si(o) == ei);  // int64 accumulation: no int32 overflow
      CHECK(su(o) == eu);
      CHECK(mu(o) == em);
      CHECK(test::close(std::complex<double>(sc(o)), ec, 1e-5));
    }
  }
}

TEST_CASE("var/std ddof, norm of INT_MIN, and means of large int64 follow NumPy") {
  array<double> x{1, 2};
  CHECK(std::isinf(var(x, ddof(2))));    // n - ddof = 0
  CHECK(std::isinf(var(x, ddof(3))));    // clamped at 0, never a negative variance
  CHECK(var(x, ddof(1)) == doctest::Approx(0.5));
  array<double> m{{1, 2}, {3, 5}};
  CHECK(var(m, 1)(1) == doctest::Approx(1.0));             // var(x, 1) is along axis 1
  CHECK(fusor::std(m, 0, ddof(1))(1) == doctest::Approx(std::sqrt(4.5)));
  array<std::int32_t> lo{std::numeric_limits<std::int32_t>::min()};
  CHECK(norm(lo, 1) == 2147483648.0);
  CHECK(norm(lo, INFINITY) == 2147483648.0);
  array<std::int64_t> big{std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::max()};
  CHECK(mean(big) == doctest::Approx(9.223372036854775807e18));
  CHECK(mean(big, 0)() == doctest::Approx(9.223372036854775807e18));
}

TEST_CASE_TEMPLATE("float16 and bfloat16 statistics keep the 16-bit type, computed in float32 and rounded once", H,
                   fusor::float16, fusor::bfloat16) {
  const index_t rows = 5, cols = 33;
  std::vector<H> v(std::size_t(rows * cols));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = H(float(std::sin(0.7 * double(i)) * 90 + 300));
  const array<H> x(std::span<const H>(v), extents{rows, cols});
  // a plain double loop over the 16-bit values, rounded to H once: within half a unit of H of
  // fusor's float32 result (float32's own error is far below that)
  auto within = [](H got, double want) {
    const double ulp = std::ldexp(1.0, std::ilogb(want) - std::numeric_limits<H>::digits + 1);
    return std::abs(double(float(got)) - want) <= 0.5 * ulp + 1e-6 * std::abs(want);
  };
  auto stats = [&](index_t begin, index_t count, index_t stride, int d) {
    double m = 0, ss = 0;
    for (index_t k = 0; k < count; ++k) m += double(float(v[std::size_t(begin + k * stride)]));
    m /= double(count);
    for (index_t k = 0; k < count; ++k) ss += std::pow(double(float(v[std::size_t(begin + k * stride)])) - m, 2);
    return std::pair{m, ss / double(count - d)};
  };
  const auto [m_all, v_all] = stats(0, rows * cols, 1, 0);
  static_assert(std::is_same_v<decltype(mean(x)), H> && std::is_same_v<decltype(var(x)), H>);
  static_assert(std::is_same_v<decltype(fusor::std(x)), H> && std::is_same_v<value_t<decltype(mean(x, 0))>, H>);
  CHECK(within(mean(x), m_all));
  CHECK(within(var(x), v_all));
  CHECK(within(fusor::std(x), std::sqrt(v_all)));
  CHECK(within(nanmean(x), m_all));
  CHECK(within(average(x, ones<H>(extents{rows, cols})), m_all));
  const array<H> m1 = mean(x, 1), v1 = var(x, 1, ddof(1)), s0 = fusor::std(x, 0), n1 = nanvar(x, 1);
  const array<H> a1 = average(x, ones<H>(extents{cols}), 1);
  for (index_t r = 0; r < rows; ++r) {
    const auto [m, var1] = stats(r * cols, cols, 1, 1);
    CHECK(within(m1.data()[r], m));
    CHECK(within(v1.data()[r], var1));
    CHECK(within(n1.data()[r], var1 * double(cols - 1) / double(cols)));
    CHECK(within(a1.data()[r], m));
  }
  for (index_t c = 0; c < cols; ++c) CHECK(within(s0.data()[c], std::sqrt(stats(c, rows, cols, 0).second)));

  // one deviation of 350 among eight: its square (122500) is past float16's largest value, which
  // NumPy's float16 var computes in; in float32 the variance 17500 is exact before its rounding
  const array<H> spike = array<H>(std::span<const H>(std::vector<H>{H(400.0f), H(0.0f), H(0.0f), H(0.0f), H(0.0f),
                                                                      H(0.0f), H(0.0f), H(0.0f)}),
                                  extents{8});
  CHECK(float(var(spike)) == float(H(17500.0f)));
  CHECK(float(var(spike.reshape(extents{1, 8}), 1).data()[0]) == float(H(17500.0f)));
  // a mean along an axis divides the float32 sum before rounding: 1027 + 1026 + 1024 is 3077, a
  // tie that float16 rounds to 3076 (mean 1025.33 -> 1025); unrounded, 1025.67 -> 1026
  if constexpr (std::is_same_v<H, fusor::float16>) {
    const array<H> t = array<H>(std::span<const H>(std::vector<H>{H(1027.0f), H(1026.0f), H(1024.0f)}), extents{1, 3});
    CHECK(float(mean(t, 1).data()[0]) == 1026.0f);
    CHECK(float(mean(t)) == 1026.0f);
  }
  // an empty mean is NaN in the 16-bit type, as NumPy's
  CHECK(fusor::isnan(mean(array<H>(extents{0}))));
}

TEST_CASE("NumPy parity: negative vector norm orders, integer true division by any integer, trapezoid's type") {
  // numpy.linalg.norm's values (NumPy 2.4): (sum |x|^p)^(1/p) for p < 0 too; a zero element gives 0
  const array<double> v{3.0, -4.0, 1.0, 0.5};
  CHECK(norm(v, -1) == doctest::Approx(0.27906976744186046).epsilon(1e-14));
  CHECK(norm(v, -2) == doctest::Approx(0.43964598326838705).epsilon(1e-14));
  CHECK(norm(v, -0.5) == doctest::Approx(0.08202760432560838).epsilon(1e-14));
  CHECK(norm(v, -3.5) == doctest::Approx(0.4877153984866114).epsilon(1e-14));
  const array<float> v32 = cast<float>(v);
  CHECK(norm(v32, -1) == doctest::Approx(0.27906975).epsilon(1e-6));
  CHECK(norm(array<double>{0.0, 1.0, 2.0}, -1) == 0.0);
  const array<double> m{{3.0, -4.0, 1.0}, {0.5, 2.0, -1.0}};
  const auto r1 = norm(m, -1.5, 1), r0 = norm(m, -1, 0);
  CHECK(r1(0) == doctest::Approx(0.83210325).epsilon(1e-7));
  CHECK(r1(1) == doctest::Approx(0.38525238).epsilon(1e-7));
  CHECK(r0(0) == doctest::Approx(0.42857143).epsilon(1e-7));
  CHECK(r0(1) == doctest::Approx(1.33333333).epsilon(1e-7));
  CHECK(r0(2) == doctest::Approx(0.5).epsilon(1e-12));

  // an integer array divided by an integer outside its type: float64, as NumPy 2 (only the
  // operations whose result keeps the integer type raise there, and here)
  const array<std::uint8_t> u{172, 179};
  const array<double> q = u / 300, rq = 300 / u, h = array<std::int8_t>{-7, 9} / -2;
  static_assert(std::is_same_v<value_t<node_t<decltype(u / 300)>>, double>);
  CHECK(q(0) == 172.0 / 300.0);  // NumPy: 0.5733333333333334
  CHECK(q(1) == 179.0 / 300.0);
  CHECK(rq(0) == doctest::Approx(1.74418605).epsilon(1e-8));
  CHECK(h(0) == 3.5);
  CHECK(h(1) == -4.5);
  const array<double> big = array<std::int64_t>{1, 2} / (std::int64_t(1) << 62);
  CHECK(big(1) == std::ldexp(1.0, -61));
  CHECK_THROWS_WITH_AS(u + 300, doctest::Contains("does not fit in uint8"), value_error);  // NumPy: OverflowError
  CHECK_THROWS_AS(u * -2, value_error);

  // float32 samples with float64 coordinates integrate in float64 (NumPy: 8.625, float64)
  const auto t = trapezoid(array<float>{1.0f, 2.5f, 3.0f}, array<double>{0.0, 1.0, 3.5});
  static_assert(std::is_same_v<decltype(t), const double>);
  CHECK(t == 8.625);
  static_assert(std::is_same_v<decltype(trapezoid(array<float>{1.0f, 2.0f}, array<float>{0.0f, 1.0f})), float>);
  // SciPy's erf and expit, NumPy's i0: float64 for integers and bools, float32 for float32
  static_assert(std::is_same_v<value_t<node_t<decltype(erf(u))>>, double>);
  static_assert(std::is_same_v<value_t<node_t<decltype(i0(array<bool>{true}))>>, double>);
  static_assert(std::is_same_v<value_t<node_t<decltype(erf(v32))>>, float>);
  CHECK(array<double>(erf(array<std::int16_t>{1}))(0) == doctest::Approx(0.8427007929497149).epsilon(1e-15));
}
