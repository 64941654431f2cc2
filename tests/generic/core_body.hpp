// Core test bodies written once and instantiated per backend: tests/test_core.cpp runs them on
// cpu, tests/test_core_cuda.cu on cuda. Inputs come from the tests' own generator on the host,
// are moved to the backend under test with to<B>, and results come back with to<cpu> to be
// compared with plain-loop references (never with the code under test).
//
// The includer defines TEST_BACKEND (fusor::cpu or fusor::cuda) before including this file.
#include "../common.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <latch>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace body {

using fusor::index_t;
using B = TEST_BACKEND;

/// A backend array holding v (moved there from the host).
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
/// Mismatches between got and want (with the test's tolerance), and the first one's position.
template <class T, class U>
std::pair<index_t, index_t> mismatches(const std::vector<T>& got, const std::vector<U>& want, double tol) {
  index_t bad = 0, first = -1;
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!test::close(got[i], T(want[i]), tol)) bad += 1, first = first < 0 ? index_t(i) : first;
  return {bad, first};
}

inline std::vector<index_t> sizes() { return {0, 1, 3, 4, 5, 7, 8, 9, 33, 1'000'003}; }

}  // namespace body

using namespace fusor;
using body::B;
using body::index_t;

namespace body {
/// The sizes every elementwise body runs: body::sizes() and T's SIMD edges on this build.
template <class T>
std::vector<index_t> sizes_for() {
  std::vector<index_t> s = sizes();
  for (index_t n : test::edge_sizes<fusor::real_t<T>>(false))
    if (std::find(s.begin(), s.end(), n) == s.end()) s.push_back(n);
  return s;
}
/// f applied to contiguous values and to every other element of a buffer twice as long (the
/// strided path), against ref applied element by element on the host.
template <class T, class F, class Ref>
void check_unary(const char* name, F f, Ref ref, double lo, double hi, double ulps) {
  for (index_t n : sizes_for<T>()) {
    const auto v = test::values<T>(n, lo, hi, std::uint64_t(n) + 5);
    std::vector<T> wide(2 * v.size());
    for (std::size_t i = 0; i < v.size(); ++i) wide[2 * i] = v[i];
    auto x = dev(v), xw = dev(wide);
    const auto got = host_values(f(x));
    const auto got_strided = host_values(f(xw(fusor::range(0, 2 * n, 2))));
    using R = typename decltype(got)::value_type;
    std::vector<R> want(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) want[i] = R(ref(v[i]));
    const auto [bad, first] = mismatches(got, want, test::ulps<R>(ulps));
    const auto [bad_strided, first_strided] = mismatches(got_strided, want, test::ulps<R>(ulps));
    INFO(name, " ", fusor::dtype_name<T>(), " n=", n, " first mismatch at ", first, " (strided: ", first_strided, ")");
    CHECK(bad == 0);
    CHECK(bad_strided == 0);
  }
}
}  // namespace body

// The one table of unary functions: run on the cpu by test_core (and again for other SIMD targets
// by test_simd_*), on cuda by test_core_cuda.
#define BODY_UNARY(FN, REF, LO, HI, ULPS) \
  body::check_unary<T>(#FN, [](const auto& a) { return FN(a); }, []([[maybe_unused]] T x) { return REF; }, LO, HI, ULPS)

TEST_CASE_TEMPLATE("unary functions match the C++ library on every size, contiguous and strided", T, float, double) {
  BODY_UNARY(sqrt, std::sqrt(x), 0, 100, 2);
  BODY_UNARY(cbrt, std::cbrt(x), -100, 100, 4);
  BODY_UNARY(square, x * x, -100, 100, 1);
  BODY_UNARY(exp, std::exp(x), -20, 20, 4);
  BODY_UNARY(exp2, std::exp2(x), -20, 20, 4);
  BODY_UNARY(expm1, std::expm1(x), -5, 5, 4);
  BODY_UNARY(log, std::log(x), 1e-3, 1e3, 4);
  BODY_UNARY(log2, std::log2(x), 1e-3, 1e3, 4);
  BODY_UNARY(log10, std::log10(x), 1e-3, 1e3, 4);
  BODY_UNARY(log1p, std::log1p(x), -0.9, 100, 4);
  BODY_UNARY(erf, std::erf(x), -5, 5, 4);
  BODY_UNARY(sigmoid, 1 / (1 + std::exp(-x)), -30, 30, 4);
  BODY_UNARY(sin, std::sin(x), -10, 10, 4);
  BODY_UNARY(cos, std::cos(x), -10, 10, 4);
  BODY_UNARY(tan, std::tan(x), -1.5, 1.5, 4);
  BODY_UNARY(asin, std::asin(x), -1, 1, 4);
  BODY_UNARY(acos, std::acos(x), -1, 1, 4);
  BODY_UNARY(atan, std::atan(x), -50, 50, 4);
  BODY_UNARY(sinh, std::sinh(x), -10, 10, 4);
  BODY_UNARY(cosh, std::cosh(x), -10, 10, 4);
  BODY_UNARY(tanh, std::tanh(x), -10, 10, 4);
  BODY_UNARY(floor, std::floor(x), -50, 50, 0);
  BODY_UNARY(ceil, std::ceil(x), -50, 50, 0);
  BODY_UNARY(trunc, std::trunc(x), -50, 50, 0);
  BODY_UNARY(round, std::nearbyint(x), -50, 50, 0);
  BODY_UNARY(abs, std::abs(x), -50, 50, 0);
  BODY_UNARY(-, -x, -50, 50, 0);
  BODY_UNARY(sign, T(x > 0 ? 1 : (x < 0 ? -1 : 0)), -5, 5, 0);
  BODY_UNARY(conj, x, -5, 5, 0);
  BODY_UNARY(real, x, -5, 5, 0);
  BODY_UNARY(imag, T(0), -5, 5, 0);
  BODY_UNARY(arg, std::atan2(T(0), x), -5, 5, 0);
  BODY_UNARY(cis, std::complex<T>(std::cos(x), std::sin(x)), -5, 5, 2);
  BODY_UNARY(isnan, std::isnan(x), -5, 5, 0);
  BODY_UNARY(isinf, std::isinf(x), -5, 5, 0);
  BODY_UNARY(isfinite, std::isfinite(x), -5, 5, 0);
  BODY_UNARY(!, x == 0, -1, 1, 0);
}

TEST_CASE_TEMPLATE("complex elementwise functions match std::complex", T, std::complex<float>, std::complex<double>) {
  BODY_UNARY(exp, std::exp(x), -3, 3, 8);
  BODY_UNARY(log, std::log(x), 0.1, 3, 8);
  BODY_UNARY(sqrt, std::sqrt(x), -3, 3, 8);
  BODY_UNARY(sin, std::sin(x), -3, 3, 8);
  BODY_UNARY(conj, std::conj(x), -3, 3, 0);
  BODY_UNARY(square, x * x, -3, 3, 4);
  for (index_t n : body::sizes()) {
    const auto v = test::values<T>(n, -3, 3, 9), w = test::values<T>(n, 0.5, 2, 10);
    auto x = body::dev(v), y = body::dev(w);
    const auto got = body::host_values(x * y - x / y + 2.0 * conj(x));
    const auto mag = body::host_values(abs(x));
    const auto re = body::host_values(real(x) + imag(y));
    // the reference in a wider type (long double, double for complex<float>): the same expression
    // in T has rounding errors of its own as large as the tolerance, so its agreement with fusor
    // depended on how the compiler lowered std::complex (exact at -O3, 22 of 10^6 elements past 8
    // ulps at -O2, while fusor's own error against the wider reference is 7 ulps at both)
    using W = std::complex<std::conditional_t<std::is_same_v<T, std::complex<float>>, double, long double>>;
    for (std::size_t i = 0; i < v.size(); ++i) {
      INFO(dtype_name<T>(), " n=", n, " i=", i);
      const W a(v[i]), b(w[i]), r = a * b - a / b + typename W::value_type(2) * std::conj(a);
      CHECK(test::close(got[i], T(r), test::ulps<T>(8)));
      CHECK(test::close(mag[i], std::abs(v[i]), test::ulps<T>(4)));
      CHECK(test::close(re[i], v[i].real() + w[i].imag(), 0));
    }
  }
}

TEST_CASE_TEMPLATE("fused arithmetic, comparisons and where follow NumPy's rules", T, float, double, std::int32_t,
                   std::int64_t) {
  for (index_t n : body::sizes()) {
    const auto a = test::values<T>(n, -50, 50, 1), b = test::values<T>(n, -50, 50, 2), c = test::values<T>(n, 1, 9, 3);
    auto x = body::dev(a), y = body::dev(b), z = body::dev(c);
    const auto fused = body::host_values(x * y + z - x);
    const auto sel = body::host_values(where(x > y, x, y * T(2)));
    const auto mx = body::host_values(maximum(x, y) + minimum(x, z));
    const auto md = body::host_values(x % z);
    const auto lt = body::host_values(x < y);
    index_t bad = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      bad += !test::close(fused[i], T(a[i] * b[i] + c[i] - a[i]), 0);
      bad += !test::close(sel[i], a[i] > b[i] ? a[i] : T(b[i] * T(2)), 0);
      bad += !test::close(mx[i], T(std::max(a[i], b[i]) + std::min(a[i], c[i])), 0);
      T r;
      if constexpr (std::is_integral_v<T>) r = T(((a[i] % c[i]) + c[i]) % c[i]);
      else r = T(a[i] - std::floor(a[i] / c[i]) * c[i]);
      bad += !test::close(md[i], r, test::ulps<T>(64));
      bad += lt[i] != (a[i] < b[i]);
    }
    INFO(dtype_name<T>(), " n=", n);
    CHECK(bad == 0);
  }
}

TEST_CASE("integer arithmetic wraps like NumPy and casts saturate") {
  const std::vector<std::int32_t> a{2147483647, -2147483647 - 1, 5, -7};
  auto x = body::dev(a);
  const auto sum = body::host_values(x + 1);
  CHECK(sum[0] == -2147483647 - 1);
  CHECK(sum[1] == -2147483647);
  const std::vector<double> f{1e300, -1e300, std::nan(""), 2.9, -2.9};
  auto y = body::dev(f);
  const auto as_int = body::host_values(cast<std::int32_t>(y));
  CHECK(as_int == std::vector<std::int32_t>{2147483647, -2147483647 - 1, 0, 2, -2});
  const auto as_bool = body::host_values(cast<bool>(y));
  CHECK(as_bool[2]);  // NaN is non-zero
  const auto f32 = body::host_values(x.astype<float>());
  CHECK(f32[2] == 5.0f);
}

TEST_CASE("strided, transposed and broadcast operands, and strided destinations") {
  const index_t R = 37, C = 129;
  const auto a = test::values<float>(R * C, -2, 2, 11), row = test::values<float>(C, -1, 1, 12),
             col = test::values<float>(R, -1, 1, 13);
  auto m = body::dev(a, {R, C});
  auto r = body::dev(row, {C});
  auto c = body::dev(col, {R, 1});
  // broadcast along both axes
  const auto bc = body::host_values(m * r + c);
  index_t bad = 0;
  for (index_t i = 0; i < R; ++i)
    for (index_t j = 0; j < C; ++j)
      bad += !test::close(bc[std::size_t(i * C + j)], a[std::size_t(i * C + j)] * row[std::size_t(j)] + col[std::size_t(i)], 0);
  CHECK(bad == 0);
  // a transpose read (gather) and a negative-step slice
  const auto tr = body::host_values(transpose(m) * 2.0f);
  bad = 0;
  for (index_t j = 0; j < C; ++j)
    for (index_t i = 0; i < R; ++i) bad += tr[std::size_t(j * R + i)] != a[std::size_t(i * C + j)] * 2.0f;
  CHECK(bad == 0);
  const auto rev = body::host_values(m(fusor::all, range(none, none, -3)));
  bad = 0;
  const index_t cols = (C + 2) / 3;
  for (index_t i = 0; i < R; ++i)
    for (index_t k = 0; k < cols; ++k) bad += rev[std::size_t(i * cols + k)] != a[std::size_t(i * C + (C - 1 - 3 * k))];
  CHECK(bad == 0);
  // writing through a strided view: every other column, in one statement
  auto d = zeros<float, B>({R, C});
  d(fusor::all, range(0, C, 2)) = m(fusor::all, range(0, C, 2)) + 1.0f;
  const auto dv = body::host_values(d);
  bad = 0;
  for (index_t i = 0; i < R; ++i)
    for (index_t j = 0; j < C; ++j)
      bad += dv[std::size_t(i * C + j)] != (j % 2 == 0 ? a[std::size_t(i * C + j)] + 1.0f : 0.0f);
  CHECK(bad == 0);
  // an assignment that reads its destination transposed goes through a temporary
  auto sq = body::dev(test::values<float>(64 * 64, -1, 1, 14), {64, 64});
  const auto before = body::host_values(sq);
  sq = transpose(sq) + sq;
  const auto after = body::host_values(sq);
  bad = 0;
  for (index_t i = 0; i < 64; ++i)
    for (index_t j = 0; j < 64; ++j) bad += after[std::size_t(i * 64 + j)] != before[std::size_t(j * 64 + i)] + before[std::size_t(i * 64 + j)];
  CHECK(bad == 0);
  CHECK_THROWS_AS(d = m + body::dev(row, {C}).reshape({C, 1}), shape_error);
}

TEST_CASE_TEMPLATE("whole reductions consume the expression", T, float, double, std::int32_t, std::int64_t) {
  for (index_t n : body::sizes()) {
    if (n == 0) continue;
    const auto a = test::values<T>(n, -3, 3, 21), b = test::values<T>(n, -3, 3, 22);
    auto x = body::dev(a), y = body::dev(b);
    double s = 0, mx = -1e300, mn = 1e300;
    index_t amax = 0, amin = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      s += double(a[i]) * double(b[i]);
      if (double(a[i]) > mx) mx = double(a[i]), amax = index_t(i);
      if (double(a[i]) < mn) mn = double(a[i]), amin = index_t(i);
    }
    INFO(dtype_name<T>(), " n=", n);
    CHECK(test::close(double(sum(x * y)), s, std::is_floating_point_v<T> ? 1e-4 * std::sqrt(double(n)) : 0));
    CHECK(double(max(x)) == mx);
    CHECK(double(min(x)) == mn);
    CHECK(argmax(x) == amax);
    CHECK(argmin(x) == amin);
    CHECK(fusor::any(x > T(2)) == std::any_of(a.begin(), a.end(), [](T v) { return v > T(2); }));
    CHECK(fusor::all(x > T(-4)));
  }
}

TEST_CASE("reductions along every axis of a 3-d array, NaN, means and variances") {
  // shapes whose axes give many short rows, few long ones (contiguous or across the layout) and
  // the sizes between: each way the cuda backend spreads an axis reduction over its threads
  const index_t shapes[][3] = {{5, 33, 71}, {3, 1500, 4}, {2, 300, 70}, {2, 100, 40}, {4, 2, 1100}};
  for (const auto& dims : shapes) {
    const index_t D0 = dims[0], D1 = dims[1], D2 = dims[2];
    const auto a = test::values<double>(D0 * D1 * D2, -1, 1, 31);
    auto x = body::dev(a, {D0, D1, D2});
    auto at = [&](index_t i, index_t j, index_t k) { return a[std::size_t((i * D1 + j) * D2 + k)]; };
    for (int axis = 0; axis < 3; ++axis) {
      const auto s = body::host_values(sum(x * 2.0, axis));
      const auto m = body::host_values(max(x, axis));
      const auto am = body::host_values(argmin(x, axis));
      const index_t o1 = axis == 0 ? D1 : D0, o2 = axis == 2 ? D1 : D2;
      index_t bad = 0;
      for (index_t p = 0; p < o1; ++p)
        for (index_t q = 0; q < o2; ++q) {
          double acc = 0, best = -1e300, low = 1e300;
          index_t arg = 0;
          for (index_t k = 0; k < dims[axis]; ++k) {
            const double v = axis == 0 ? at(k, p, q) : axis == 1 ? at(p, k, q) : at(p, q, k);
            acc += 2 * v;
            best = std::max(best, v);
            if (v < low) low = v, arg = k;
          }
          const std::size_t o = std::size_t(p * o2 + q);
          bad += !test::close(s[o], acc, 1e-12) + (m[o] != best) + (am[o] != arg);
        }
      INFO("shape (", D0, ", ", D1, ", ", D2, "), axis ", axis);
      CHECK(bad == 0);
    }
  }
  std::vector<float> withnan(1000, 1.0f);
  withnan[517] = std::nanf("");
  auto y = body::dev(withnan);
  CHECK(std::isnan(max(y)));
  CHECK(argmax(y) == 517);
  CHECK(std::isnan(sum(y)));
  const std::vector<std::int32_t> ints{1, 2, 3, 4};
  auto z = body::dev(ints);
  CHECK(mean(z) == 2.5);
  CHECK(test::close(var(z), 1.25, 1e-12));
  CHECK(sum(z) == std::int64_t(10));
  const auto kept = body::host_values(sum(body::dev(ints, {2, 2}), 1, true));
  CHECK(kept == std::vector<std::int64_t>{3, 7});
}

TEST_CASE("creation functions give their closed forms") {
  const auto ar = body::host_values(arange<float, B>(1.0f, 1000.5f, 0.5f));
  REQUIRE(ar.size() == 1999);
  for (std::size_t i = 0; i < ar.size(); ++i) CHECK_MESSAGE(ar[i] == 1.0f + 0.5f * float(i), i);
  const auto ls = body::host_values(linspace<double, B>(-1, 1, 513));
  CHECK(ls.front() == -1.0);
  CHECK(ls.back() == 1.0);
  CHECK(ls[256] == 0.0);
  const auto e = body::host_values(eye<std::int32_t, B>(300, 301, 2));
  index_t bad = 0;
  for (index_t r = 0; r < 300; ++r)
    for (index_t c = 0; c < 301; ++c) bad += e[std::size_t(r * 301 + c)] != (c - r == 2 ? 1 : 0);
  CHECK(bad == 0);
  const auto f = body::host_values(full<std::complex<float>, B>({1000}, std::complex<float>(1, -2)));
  CHECK(std::all_of(f.begin(), f.end(), [](auto v) { return v == std::complex<float>(1, -2); }));
  const auto z = body::host_values(zeros<std::uint8_t, B>({7, 3}));
  CHECK(std::all_of(z.begin(), z.end(), [](auto v) { return v == 0; }));
  CHECK(body::host_values(ones<bool, B>({5})) == std::vector<bool>(5, true));
}

TEST_CASE("random draws are a function of (seed, stream, element) only") {
  random::generator g(2024);
  const auto ints = body::host_values(random::integers<std::int64_t, B>(g, {100'003}, -7, 1'000'000'007));
  const auto u = body::host_values(random::uniform<float, B>(g, {1001}));
  const auto nrm = body::host_values(random::normal<double, B>(g, {1001}, 3.0, 2.0));
  const auto bern = body::host_values(random::bernoulli<B>(g, {999}, 0.25));
  const auto perm = body::host_values(random::permutation<B>(g, 1000));
  // element 5 of the first draw, by hand from the Philox words (stream 0, block 2, second pair)
  const auto w = random::block_words(2024, 0, 2);
  const std::uint64_t bits = (std::uint64_t(w[2]) << 32) | w[3];
  const std::uint64_t range = 1'000'000'007ull + 7;
  CHECK(ints[5] == -7 + std::int64_t((unsigned __int128)bits * range >> 64));
  const auto wu = random::block_words(2024, 1, 0);
  CHECK(u[1] == float(wu[1] >> 8) * 0x1.0p-24f);
  std::vector<std::int64_t> sorted(perm.begin(), perm.end());
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i) CHECK(sorted[i] == std::int64_t(i));
  double mean_n = 0;
  for (double v : nrm) mean_n += v / double(nrm.size());
  CHECK(std::abs(mean_n - 3.0) < 0.25);
  const auto ones_count = std::count(bern.begin(), bern.end(), true);
  CHECK(ones_count > 180);
  CHECK(ones_count < 320);
}

namespace body {
// The draws' values as the block algorithm defines them (DESIGN: element k of a draw is value
// k % per_block of Philox block k / per_block), written here as plain loops over the Philox words.
inline std::uint64_t bits64(std::uint32_t hi, std::uint32_t lo) { return (std::uint64_t(hi) << 32) | lo; }
template <class T>
std::vector<T> ref_uniform(std::uint64_t seed, std::uint64_t stream, index_t n, T lo, T hi) {
  std::vector<T> out(static_cast<std::size_t>(n));
  for (index_t k = 0; k < n; ++k) {
    T u;
    if constexpr (std::is_same_v<T, float>) {
      const auto w = fusor::random::block_words(seed, stream, std::uint64_t(k / 4));
      u = float(w[std::size_t(k % 4)] >> 8) * 0x1.0p-24f;
    } else {
      const auto w = fusor::random::block_words(seed, stream, std::uint64_t(k / 2));
      const std::size_t q = std::size_t(k % 2);
      u = T(double(bits64(w[2 * q], w[2 * q + 1]) >> 11) * 0x1.0p-53);
    }
    out[std::size_t(k)] = lo + (hi - lo) * u;
  }
  return out;
}
template <class T>
std::vector<T> ref_normal(std::uint64_t seed, std::uint64_t stream, index_t n, T mean, T sd) {
  std::vector<T> out(static_cast<std::size_t>(n));
  for (index_t k = 0; k < n; ++k) {
    const auto w = fusor::random::block_words(seed, stream, std::uint64_t(k / 2));
    const double r = std::sqrt(-2.0 * std::log((double(bits64(w[0], w[1]) >> 11) + 1.0) * 0x1.0p-53));
    const double t = 2.0 * 3.14159265358979323846 * (double(bits64(w[2], w[3]) >> 11) * 0x1.0p-53);
    out[std::size_t(k)] = T(double(mean) + double(sd) * r * (k % 2 == 0 ? std::cos(t) : std::sin(t)));
  }
  return out;
}
inline std::vector<std::int64_t> ref_integers(std::uint64_t seed, std::uint64_t stream, index_t n, std::int64_t lo,
                                              std::int64_t hi) {
  std::vector<std::int64_t> out(static_cast<std::size_t>(n));
  const std::uint64_t range = std::uint64_t(hi) - std::uint64_t(lo);
  for (index_t k = 0; k < n; ++k) {
    const auto w = fusor::random::block_words(seed, stream, std::uint64_t(k / 2));
    const std::size_t q = std::size_t(k % 2);
    out[std::size_t(k)] = std::int64_t(std::uint64_t(lo) + std::uint64_t((unsigned __int128)bits64(w[2 * q], w[2 * q + 1]) * range >> 64));
  }
  return out;
}
inline std::vector<bool> ref_bernoulli(std::uint64_t seed, std::uint64_t stream, index_t n, double p) {
  std::vector<bool> out(static_cast<std::size_t>(n));
  for (index_t k = 0; k < n; ++k) {
    const auto w = fusor::random::block_words(seed, stream, std::uint64_t(k / 2));
    const std::size_t q = std::size_t(k % 2);
    out[std::size_t(k)] = double(bits64(w[2 * q], w[2 * q + 1]) >> 11) * 0x1.0p-53 < p;
  }
  return out;
}
}  // namespace body

TEST_CASE("random draws give the block algorithm's values, eager, lazy, fused, broadcast and strided") {
  // device transcendental functions and contraction into fma may differ by a few ulps from the host's
  const double tol_f = test::ulps<float>(4), tol_d = test::ulps<double>(64);
  for (index_t n : body::sizes_for<float>()) {
    CAPTURE(n);
    random::generator g(77);
    const auto u = body::host_values(random::uniform<float, B>(g, {n}, -2.0f, 3.0f));
    const auto z = body::host_values(random::normal<double, B>(g, {n}, 1.0, 2.0));
    const auto k = body::host_values(random::integers<std::int64_t, B>(g, {n}, -5, 1'000'000'007));
    const auto b = body::host_values(random::bernoulli<B>(g, {n}, 0.3));
    const auto uf = body::host_values(random::normal<float, B>(g, {n}));
    CHECK(body::mismatches(u, body::ref_uniform<float>(77, 0, n, -2.0f, 3.0f), tol_f).first == 0);
    CHECK(body::mismatches(z, body::ref_normal<double>(77, 1, n, 1.0, 2.0), tol_d).first == 0);
    CHECK(k == body::ref_integers(77, 2, n, -5, 1'000'000'007));
    CHECK(b == body::ref_bernoulli(77, 3, n, 0.3));
    CHECK(body::mismatches(uf, body::ref_normal<float>(77, 4, n, 0.0f, 1.0f), tol_f).first == 0);
  }
  // the node evaluates to the eager draw's values: alone, inside a fused statement, repeatedly
  const index_t n = 1'000'003;
  const auto ref = body::ref_normal<float>(5, 0, n, 1.0f, 0.5f);
  random::generator g(5);
  const auto node = lazy::random::normal<float, B>(g, {n}, 1.0f, 0.5f);
  CHECK(g.stream() == 1);  // the node took its stream when it was made
  const auto a = body::dev(test::values<float>(n, -1, 1, 3));
  const auto ha = body::host_values(a);
  array<float, B> y(extents{n});
  instrument::reset();
  y = a * 2.0f + node;
  CHECK(instrument::passes == 1);
  CHECK(instrument::allocations == 0);
  std::vector<float> want(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < want.size(); ++i) want[i] = ha[i] * 2.0f + ref[i];
  CHECK(body::mismatches(body::host_values(y), want, tol_f).first == 0);
  // evaluated again, alone: the same values, those of the block algorithm
  for (int again = 0; again < 2; ++again)
    CHECK(body::mismatches(body::host_values(array<float, B>(node)), ref, tol_f).first == 0);
  // a reduction reads the draw without materialising it
  instrument::reset();
  const double s = sum(cast<double>(node));
  CHECK(instrument::passes == 1);
  CHECK(instrument::allocations == 0);
  double sref = 0;
  for (float v : ref) sref += double(v);
  CHECK(s == doctest::Approx(sref).epsilon(1e-9));
  // broadcast: a (33,) draw added to every row of a (4, 33) array; strided: into every other column
  random::generator gb(6);
  const auto row = body::ref_uniform<double>(6, 0, 33, 0.0, 1.0);
  const auto m = body::host_values(zeros<double, B>({4, 33}) + lazy::random::uniform<double, B>(gb, {33}));
  index_t bad = 0;
  for (std::size_t i = 0; i < m.size(); ++i) bad += m[i] != row[i % 33];
  CHECK(bad == 0);
  auto dst = zeros<std::int64_t, B>({3, 22});
  random::generator gs(8);
  dst(fusor::all, range(0, 22, 2)) = lazy::random::integers<std::int64_t, B>(gs, {3, 11}, 0, 100);
  const auto ints = body::ref_integers(8, 0, 33, 0, 100);
  const auto hd = body::host_values(dst);
  bad = 0;
  for (index_t r = 0; r < 3; ++r)
    for (index_t c = 0; c < 22; ++c) bad += hd[std::size_t(r * 22 + c)] != (c % 2 ? 0 : ints[std::size_t(r * 11 + c / 2)]);
  CHECK(bad == 0);
  // broadcast along the inner axis: a (33, 1) draw repeated over 4 columns (the packet loop
  // broadcasts one position); a 0-d draw is position 0 everywhere
  random::generator gc(10);
  const auto colv = body::ref_uniform<float>(10, 0, 33, 0.0f, 1.0f);
  const auto wide = body::host_values(zeros<float, B>({33, 4}) + lazy::random::uniform<float, B>(gc, {33, 1}));
  bad = 0;
  for (std::size_t i = 0; i < wide.size(); ++i) bad += wide[i] != colv[i / 4];
  CHECK(bad == 0);
  const auto scalar_draw = body::host_values(zeros<double, B>({5}) + lazy::random::normal<double, B>(gc, {}));
  const auto z0 = body::ref_normal<double>(10, 1, 1, 0.0, 1.0);
  for (double v : scalar_draw) CHECK(test::close(v, z0[0], tol_d));
  // a bool draw as a where's condition: the scalar loop, which keeps one Philox block at a time
  random::generator gw(12);
  const auto cond = body::ref_bernoulli(12, 0, 100'001, 0.3);
  const auto picked = body::host_values(array<float, B>(where(lazy::random::bernoulli<B>(gw, {100'001}, 0.3),
                                                              lazy::arange<float, B>(100'001.0f), -1.0f)));
  bad = 0;
  for (std::size_t i = 0; i < picked.size(); ++i) bad += picked[i] != (cond[i] ? float(i) : -1.0f);
  CHECK(bad == 0);
  CHECK_THROWS_WITH_AS((lazy::random::normal<float, B>(g, {3}, 0.0f, -1.0f)), doctest::Contains("stddev >= 0, got -1"),
                       value_error);
  CHECK_THROWS_AS((lazy::random::uniform<float, B>(g, {2, -1})), shape_error);
}

TEST_CASE("lazy ramps, identities and coordinate grids fuse with their closed forms") {
  for (index_t n : body::sizes_for<float>()) {
    CAPTURE(n);
    const auto x = body::dev(test::values<float>(n, -1, 1, 9));
    const auto hx = body::host_values(x);
    instrument::reset();
    const array<float, B> fused = x * lazy::arange<float, B>(float(n)) + lazy::linspace<float, B>(-1, 1, n);
    CHECK(instrument::passes == (n > 0 ? 1 : 0));
    const auto y = body::host_values(fused);
    index_t bad = 0;
    for (index_t i = 0; i < n; ++i) {
      const double ls = n == 1 ? -1.0 : -1.0 + 2.0 * double(i) / double(n - 1);
      bad += !test::close(y[std::size_t(i)], float(double(hx[std::size_t(i)]) * double(i) + ls), test::ulps<float>(4));
    }
    CHECK(bad == 0);
  }
  // complex identities: the generator's host type converted for the device
  const auto ce = body::host_values(eye<std::complex<float>, B>(4, 5, 1));
  index_t cbad = 0;
  for (index_t r = 0; r < 4; ++r)
    for (index_t c = 0; c < 5; ++c)
      cbad += ce[std::size_t(r * 5 + c)] != std::complex<float>(c - r == 1 ? 1.0f : 0.0f, 0.0f);
  CHECK(cbad == 0);
  // sum of a ramp and of the identity without an array in sight
  CHECK(sum(lazy::arange<std::int64_t, B>(100'001)) == std::int64_t(100'000) * 100'001 / 2);
  CHECK(sum(lazy::eye<double, B>(37, 40, -3)) == 34.0);
  // a sphere mask from coordinate grids, against a plain loop
  const extents shape{9, 10, 11};
  const auto zc = lazy::coordinates<float, B>(shape, 0), yc = lazy::coordinates<float, B>(shape, 1),
             xc = lazy::coordinates<float, B>(shape, -1);
  instrument::reset();
  const array<bool, B> sphere = square(zc - 4.0f) + square(yc - 4.5f) + square(xc - 5.0f) < 16.0f;
  CHECK(instrument::passes == 1);
  const auto mask = body::host_values(sphere);
  index_t bad = 0, inside = 0;
  for (index_t z = 0; z < 9; ++z)
    for (index_t yy = 0; yy < 10; ++yy)
      for (index_t xx = 0; xx < 11; ++xx) {
        const double d = (z - 4.0) * (z - 4.0) + (yy - 4.5) * (yy - 4.5) + (xx - 5.0) * (xx - 5.0);
        const bool want = d < 16.0;
        inside += want;
        bad += mask[std::size_t((z * 10 + yy) * 11 + xx)] != want;
      }
  CHECK(bad == 0);
  CHECK(inside > 100);
  // np.indices through the same grids; reductions along an axis of a grid
  const auto idx = body::host_values(indices<B>({2, 3}));
  CHECK(idx == std::vector<std::int64_t>{0, 0, 0, 1, 1, 1, 0, 1, 2, 0, 1, 2});
  const auto col = body::host_values(sum(lazy::coordinates<std::int64_t, B>({4, 5}, 1), 0));
  CHECK(col == std::vector<std::int64_t>{0, 4, 8, 12, 16});
  CHECK_THROWS_AS((lazy::coordinates<float, B>(shape, 3)), index_error);
  CHECK_THROWS_WITH_AS((lazy::arange<float, B>(0.0f, 1.0f, 0.0f)), doctest::Contains("step must be non-zero"), value_error);
  CHECK_THROWS_WITH_AS((lazy::linspace<float, B>(0, 1, -2)), doctest::Contains("num >= 0, got -2"), value_error);
}

TEST_CASE("transfers: to<B>, to<cpu> and copy keep values, shapes and layouts") {
  const auto a = test::values<double>(6 * 35, -9, 9, 41);
  array<double> h(std::span<const double>(a.data(), a.size()), {6, 35});
  auto d = to<B>(h);
  CHECK(d.shape() == extents{6, 35});
  // a transposed view comes back in C order of the view
  const auto t = to<cpu>(transpose(d));
  CHECK(t.shape() == extents{35, 6});
  index_t bad = 0;
  for (index_t i = 0; i < 6; ++i)
    for (index_t j = 0; j < 35; ++j) bad += t(j, i) != h(i, j);
  CHECK(bad == 0);
  // copy into a strided destination across backends
  auto dst = zeros<double, B>({6, 70});
  copy(dst(fusor::all, range(0, 70, 2)), h);
  const auto back = to<cpu>(dst);
  bad = 0;
  for (index_t i = 0; i < 6; ++i)
    for (index_t j = 0; j < 70; ++j) bad += back(i, j) != (j % 2 == 0 ? h(i, j / 2) : 0.0);
  CHECK(bad == 0);
  array<double> host_dst(extents{6, 35});
  copy(host_dst, d);
  CHECK(fusor::all(host_dst == h));
  CHECK_THROWS_AS(copy(host_dst, transpose(d)), shape_error);
  // a moved array keeps its buffer; the source is left empty
  const double* p = d.data();
  array<double, B> moved(std::move(d));
  CHECK(moved.data() == p);
  CHECK(d.size() == 0);
  CHECK(to<cpu>(moved(2, fusor::all))(7) == h(2, 7));
  CHECK(array<float, B>{{1, 2}, {3, 4}}.shape() == extents{2, 2});
  CHECK(sum(array<float, B>{{1, 2}, {3, 4}}) == 10.0f);
  CHECK(array<int, B>({5}).reshape({1, 1}).item() == 5);
}

namespace body {
/// A memory hook's record of what one thread's context was told (thread-safe: a scan's team
/// reports to its caller's hook from several threads).
struct memory_log {
  std::mutex m;
  std::vector<fusor::memory_event> events;
  std::vector<std::thread::id> threads;
  void operator()(const fusor::memory_event& e) {
    const std::lock_guard<std::mutex> lock(m);
    events.push_back(e);
    if (std::find(threads.begin(), threads.end(), std::this_thread::get_id()) == threads.end())
      threads.push_back(std::this_thread::get_id());
  }
  bool saw(fusor::memory_event::kind_t kind, const void* address) {
    const std::lock_guard<std::mutex> lock(m);
    return std::any_of(events.begin(), events.end(), [&](const auto& e) { return e.kind == kind && e.address == address; });
  }
};
// The fields only some backends' contexts have (templates, so that a backend without them
// compiles the discarded branch away).
template <class C>
void set_loop_fields(C& c, int k) {
  if constexpr (requires { c.threads; }) {
    c.threads = 1 + 2 * k;  // 1 and 3
    c.fft_threads = 2 + k;
    c.fft_planning = k == 0 ? fusor::fft::planning::measure : fusor::fft::planning::patient;
  }
}
template <class C>
bool same_loop_fields(const C& a, const C& b) {
  if constexpr (requires { a.threads; })
    return a.threads == b.threads && a.fft_threads == b.fft_threads && a.fft_planning == b.fft_planning;
  else
    return true;
}
template <class C>
void set_threads(C& c, int n) {
  if constexpr (requires { c.threads; }) c.threads = n;
}
/// fft::planning_scope and fft::threads_scope set the current context's fields (where it has them).
template <class Backend, class C>
void check_fft_scopes(C& now) {
  if constexpr (requires { now.fft_planning; }) {
    {
      const fusor::fft::planning_scope<Backend> effort(fusor::fft::planning::measure);
      const fusor::fft::threads_scope<Backend> transforms(2);
      CHECK(now.fft_planning == fusor::fft::planning::measure);
      CHECK(now.fft_threads == 2);
    }
    CHECK_FALSE(now.fft_planning.has_value());
    CHECK(now.fft_threads == 0);
  }
}
/// A deterministic context plans by estimate whatever its fft_planning says: its transform finds
/// the plan an estimate context made (a hit), where a measuring one makes its own (a miss).
template <class Backend, class X>
void check_deterministic_plans(const X& x) {
  if constexpr (requires { fusor::current_context<Backend>().fft_planning; }) {
    fusor::fft::clear_plan_cache<Backend>();  // (no plan of an earlier test is found)
    fusor::context<Backend> estimate, measure, fixed;
    estimate.fft_planning = fusor::fft::planning::estimate;
    measure.fft_planning = fixed.fft_planning = fusor::fft::planning::measure;
    fixed.deterministic = true;
    (void)fusor::fft::rfftn(estimate, x);
    const auto before = fusor::fft::plan_cache_info<Backend>();
    (void)fusor::fft::rfftn(fixed, x);
    const auto after = fusor::fft::plan_cache_info<Backend>();
    CHECK(after.hits == before.hits + 1);
    CHECK(after.misses == before.misses);
    (void)fusor::fft::rfftn(measure, x);
    CHECK(fusor::fft::plan_cache_info<Backend>().misses == after.misses + 1);
  }
}
}  // namespace body

TEST_CASE("context: two threads with two contexts do not see each other's settings, hooks or streams") {
  CHECK_FALSE(current_context<B>().deterministic);
  CHECK(current_context<B>().memory_limit == 0);
  CHECK_FALSE(bool(current_context<B>().on_memory));
#if defined(_OPENMP)
  if constexpr (std::is_same_v<B, fusor::cpu>) set_num_threads(4);  // the process-wide setting the caps cut
#endif
  body::memory_log logs[2];
  std::latch both_entered(2), both_checked(2);
  const void* made[2] = {};
  bool own[2] = {};
  int loop_threads[2] = {};
  auto work = [&](int k) {
    context<B> c;
    c.deterministic = k == 0;
    c.memory_limit = std::size_t(1) << (40 + k);
    c.on_memory = memory_hook(logs[k]);
    body::set_loop_fields(c, k);
#if defined(__CUDACC__)
    fusor::cuda_stream stream;
    c.stream = stream.get();
#endif
    {
      const auto scope = c.enter();
      both_entered.arrive_and_wait();  // both contexts are current now, each on its thread
      auto a = array<float, B>(extents{1000 + 10 * k});
      made[k] = a.data();
      const context<B>& now = current_context<B>();
      own[k] = now.deterministic == (k == 0) && now.memory_limit == c.memory_limit && now.on_memory == c.on_memory &&
               body::same_loop_fields(now, c);
      loop_threads[k] = num_threads();
#if defined(__CUDACC__)
      own[k] = own[k] && current_cuda_stream() == stream.get();
      cuda_synchronize();
#endif
      both_checked.arrive_and_wait();
    }
    // the scope is over: this thread's context is the default again
    own[k] = own[k] && !current_context<B>().deterministic && !current_context<B>().on_memory;
  };
  std::thread t0(work, 0), t1(work, 1);
  t0.join();
  t1.join();
  CHECK(own[0]);
  CHECK(own[1]);
  for (int k = 0; k < 2; ++k) {
    INFO("thread ", k);
    // each hook heard its own thread's allocation and release, and nothing of the other's
    CHECK(logs[k].saw(memory_event::allocation, made[k]));
    CHECK(logs[k].saw(memory_event::release, made[k]));
    CHECK_FALSE(logs[k].saw(memory_event::allocation, made[1 - k]));
    CHECK(logs[k].threads.size() == 1);
  }
  if constexpr (std::is_same_v<B, fusor::cpu>) {
#if defined(_OPENMP)
    CHECK(loop_threads[0] == 1);
    CHECK(loop_threads[1] == 3);
    set_num_threads(0);
#endif
  }
}

TEST_CASE("context: scopes set one field; an explicit context holds for one call; the memory budget; determinism") {
  // the RAII scopes are setters of the current context
  body::check_fft_scopes<B>(current_context<B>());
#if defined(__CUDACC__)
  {
    fusor::cuda_stream s;
    {
      const cuda_stream_scope scope(s);
      CHECK(current_context<B>().stream == s.get());
    }
    CHECK(current_context<B>().stream == cudaStreamPerThread);
    CHECK(on(s).stream == s.get());
  }
#endif
  // an explicit context: the heavy entry points run as if it were current, then the thread's own
  // is back
  body::memory_log log;
  context<B> c;
  c.on_memory = memory_hook(log);
  const auto x = body::dev(test::values<float>(64, -1, 1, 3), {8, 8});
  const auto spectrum = fft::rfftn(c, x);
  CHECK(log.saw(memory_event::allocation, spectrum.data()));
  const auto product = matmul(c, x, x);
  CHECK(log.saw(memory_event::allocation, product.data()));
  const auto a = body::dev(std::vector<double>{4, 1, 0, 1, 3, 1, 0, 1, 2}, {3, 3});
  const auto rhs = body::dev(std::vector<double>{1, 2, 3});
  const auto solved = linalg::solve(c, a, rhs);
  CHECK(log.saw(memory_event::allocation, solved.data()));
  CHECK(body::host_values(solved) == body::host_values(linalg::solve(a, rhs)));
  CHECK_FALSE(bool(current_context<B>().on_memory));
  // the same numbers as without the context
  CHECK(body::host_values(spectrum) == body::host_values(fft::rfftn(x)));
  CHECK(body::host_values(product) == body::host_values(matmul(x, x)));

  // the budget: over it, a typed error naming the sizes before anything is taken; under it, fine
  {
    context<B> budget;
    budget.on_memory = memory_hook(log);
    const std::size_t before = log.events.size();
    budget.memory_limit = std::size_t(1) << 20;
    const auto scope = budget.enter();
    try {
      auto big = array<float, B>(extents{index_t(1) << 20});  // 4 MiB
      FAIL("an allocation over the budget succeeded");
    } catch (const memory_limit_error& e) {
      CHECK(e.requested >= (std::size_t(4) << 20));
      CHECK(e.limit == (std::size_t(1) << 20));
      CHECK(std::string(e.what()).find("memory_limit of 1048576 bytes") != std::string::npos);
    }
    CHECK(log.events.size() == before);  // nothing was allocated
    CHECK_THROWS_AS((array<float, B>(extents{index_t(1) << 20})), backend_error);  // the error's base
  }
  {
    context<B> roomy;
    roomy.memory_limit = std::size_t(1) << 40;
    const auto scope = roomy.enter();
    CHECK(sum(ones<float, B>(extents{1000})) == 1000.0f);
  }

  // deterministic: FFT plans by estimate; a whole-array reduction gives the same bits whatever
  // the thread count
  body::check_deterministic_plans<B>(body::dev(test::values<float>(7 * 9, -1, 1, 5), {7, 9}));
  const auto v = test::values<double>(index_t(1) << 20, -1, 1, 11);
  double ref = 0;
  for (double e : v) ref += e;
  const auto big = body::dev(v);
  context<B> fixed;
  fixed.deterministic = true;
  std::vector<double> got;
#if defined(_OPENMP)
  if constexpr (std::is_same_v<B, fusor::cpu>) set_num_threads(4);  // caps of 1 to 4 all hold
#endif
  for (int threads = 1; threads <= 4; ++threads) {
    body::set_threads(fixed, threads);
    const auto scope = fixed.enter();
    got.push_back(double(sum(big)));
  }
#if defined(_OPENMP)
  if constexpr (std::is_same_v<B, fusor::cpu>) set_num_threads(0);
#endif
  for (double g : got) CHECK(g == got[0]);
  CHECK(std::abs(got[0] - ref) <= 1e-9 * std::max(1.0, std::abs(ref)));
}
