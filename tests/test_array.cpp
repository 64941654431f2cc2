// array and array_view: construction, shape queries, element access, reshape, astype, copies,
// creation functions, printing, and the errors each raises.
#include "common.hpp"

#include <sstream>
#include <string>

using namespace fusor;
using test::index_t;

template <class E>
std::string str(const E& e) {
  std::ostringstream os;
  os << e;
  return os.str();
}

TEST_CASE_TEMPLATE("arrays are aligned, row-major and move-only", B, cpu) {
  auto a = zeros<float, B>({3, 4});
  CHECK(a.ndim() == 2);
  CHECK(a.size() == 12);
  CHECK(a.shape() == extents{3, 4});
  CHECK(a.strides() == extents{4, 1});
  CHECK(reinterpret_cast<std::uintptr_t>(a.data()) % 64 == 0);
  static_assert(!std::is_copy_constructible_v<array<float, B>>);
  static_assert(std::is_nothrow_move_constructible_v<array<float, B>>);
  static_assert(std::is_trivially_copyable_v<leaf<float, B>>);
  const float* p = a.data();
  array<float, B> b = std::move(a);
  CHECK(b.data() == p);
  CHECK(a.size() == 0);
  auto c = b.copy();
  CHECK(c.data() != b.data());
  CHECK(c.shape() == b.shape());
  array<float, B> empty_default;
  CHECK(empty_default.shape() == extents{0});
  const std::size_t rows = 2;
  const int cols = 5;
  CHECK(zeros<float, B>({rows, cols}).shape() == extents{2, 5});  // any integer types in braces
  CHECK(zeros<float, B>(7).shape() == extents{7});
  CHECK(extents(std::vector<std::size_t>{4, 3, 2}) == extents{4, 3, 2});
}

TEST_CASE("nested initializer lists give values and shape") {
  array<int> m{{1, 2, 3}, {4, 5, 6}};
  CHECK(m.shape() == extents{2, 3});
  CHECK(m(1, 2) == 6);
  CHECK(m.at(-1, -3) == 4);
  array<double> t{{{1, 2}, {3, 4}}, {{5, 6}, {7, 8}}};
  CHECK(t.shape() == extents{2, 2, 2});
  CHECK(t(1, 0, 1) == 6);
  CHECK_THROWS_WITH_AS((array<int>{{1, 2}, {3}}), doctest::Contains("ragged: expected 2 elements at depth 1, got 1"),
                       shape_error);
  std::vector<float> v{1, 2, 3, 4, 5, 6};
  array<float> fromv(v, {3, 2});
  CHECK(fromv(2, 1) == 6);
  CHECK_THROWS_WITH_AS(array<float>(v, {4, 2}), doctest::Contains("6 values cannot fill shape (4, 2) (expected 8)"),
                       shape_error);
}

TEST_CASE("element access checks rank and bounds in at()") {
  array<float> a = arange<float>(12).reshape({3, 4});
  CHECK(a(2, 3) == 11);
  CHECK(a.at(-1, -1) == 11);
  CHECK_THROWS_WITH_AS(a.at(3, 0), doctest::Contains("index 3 is out of bounds for axis 0 with size 3"), index_error);
  CHECK_THROWS_WITH_AS(a.at(1), doctest::Contains("expected 2 indices for an array of shape (3, 4), got 1"),
                       index_error);
  CHECK_THROWS_WITH_AS(a.item(), doctest::Contains("item() needs exactly one element, got shape (3, 4)"), shape_error);
  CHECK(array<float>{7}.item() == 7);
}

TEST_CASE("reshape is a view; bad shapes are rejected with both shapes named") {
  array<float> a = arange<float>(24);
  auto v = a.reshape({2, -1, 4});
  CHECK(v.shape() == extents{2, 3, 4});
  CHECK(v.data() == a.data());
  v(1, 2, 3) = 100;
  CHECK(a(23) == 100);
  CHECK_THROWS_WITH_AS(a.reshape({5, 5}),
                       doctest::Contains("cannot reshape an array of shape (24,) (size 24) into shape (5, 5) (size 25)"),
                       shape_error);
  CHECK_THROWS_WITH_AS(a.reshape({-1, -1}), doctest::Contains("at most one -1"), shape_error);
  CHECK_THROWS_WITH_AS(a.reshape({7, -1}), doctest::Contains("cannot reshape"), shape_error);
  CHECK_THROWS_AS(zeros<float>({2, -3}), shape_error);
  // a zero dimension does not excuse the others: the strides of (0, 2^63 - 1, 2) overflow
  constexpr index_t huge = std::numeric_limits<index_t>::max();
  CHECK_THROWS_WITH_AS(zeros<float>({0, huge, 2}),
                       doctest::Contains("shape (0, 9223372036854775807, 2) is too large"), shape_error);
  CHECK_THROWS_WITH_AS(empty<double>({3037000500, 0, 3037000500}), doctest::Contains("too large"), shape_error);
  array<float> none_(extents{0});
  CHECK_THROWS_WITH_AS(none_.reshape({0, huge, 2}), doctest::Contains("is too large"), shape_error);
  CHECK_THROWS_WITH_AS(contiguous_strides({0, huge, 2}), doctest::Contains("is too large"), shape_error);
  CHECK_THROWS_WITH_AS(none_.reshape({huge, 2, 0}), doctest::Contains("is too large"), shape_error);
  CHECK(zeros<float>({0, index_t(1) << 40, 3}).size() == 0);  // large but representable: fine
  // reshape of a temporary keeps the buffer alive by moving it into an array
  auto t = arange<float>(6).reshape({2, -1});
  static_assert(std::is_same_v<decltype(t), array<float>>);
  CHECK(t.shape() == extents{2, 3});
  CHECK(t(1, 2) == 5);
}

TEST_CASE("astype converts like NumPy") {
  array<double> d{1.7, -2.5, 0.0};
  auto i = d.astype<std::int32_t>();
  CHECK(i(0) == 1);
  CHECK(i(1) == -2);
  auto b = d.astype<bool>();
  CHECK(b(0));
  CHECK(!b(2));
  array<std::complex<float>> c{std::complex<float>(3, 4)};
  CHECK(c.astype<float>()(0) == 3);  // the real part, as NumPy (which also warns)
  array<float> lazy = cast<float>(i) * 0.5;
  CHECK(lazy(1) == -1.0f);
}

TEST_CASE_TEMPLATE("creation functions against closed forms", T, float, double, std::int32_t, std::int64_t) {
  auto z = test::host(zeros<T>({2, 3}));
  auto o = test::host(ones<T>({5}));
  auto f = test::host(full<T>({4}, 7));
  for (index_t k = 0; k < 6; ++k) CHECK(z.data()[k] == T(0));
  for (index_t k = 0; k < 5; ++k) CHECK(o.data()[k] == T(1));
  for (index_t k = 0; k < 4; ++k) CHECK(f.data()[k] == T(7));
  for (index_t n : test::edge_sizes<T>(false)) {
    auto r = arange<T>(T(3), T(3 + 2 * n), T(2));
    REQUIRE(r.size() == n);
    for (index_t k = 0; k < n; ++k) CHECK(r.data()[k] == T(3 + 2 * k));
  }
  auto like = zeros_like(f);
  CHECK(like.shape() == f.shape());
  auto like_d = ones_like<double>(f);
  static_assert(std::is_same_v<decltype(like_d), array<double>>);
  auto e = eye<T>(3, 4, 1);
  for (index_t r = 0; r < 3; ++r)
    for (index_t c = 0; c < 4; ++c) CHECK(e(r, c) == T(c - r == 1 ? 1 : 0));
}

TEST_CASE("arange and linspace edge cases") {
  CHECK(arange<double>(0, 1, 0.1).size() == 10);  // ceil((1 - 0) / 0.1), as NumPy
  CHECK(arange<int>(5, 0).size() == 0);
  CHECK(arange<int>(5, 0, -1).size() == 5);
  CHECK_THROWS_WITH_AS(arange<float>(0, 1, 0), doctest::Contains("arange step must be non-zero"), value_error);
  auto l = linspace<double>(0, 1, 5);
  for (int k = 0; k < 5; ++k) CHECK(l(k) == doctest::Approx(k * 0.25));
  CHECK(l(4) == 1.0);
  auto ln = linspace<double>(0, 1, 4, false);
  CHECK(ln(3) == doctest::Approx(0.75));
  CHECK(linspace<float>(0, 1, 0).size() == 0);
  CHECK(linspace<float>(2, 3, 1)(0) == 2.0f);
  CHECK_THROWS_AS(linspace<float>(0, 1, -1), value_error);
  auto li = linspace<int>(-5, 5, 4);  // float64 values floored, as NumPy 2: -5, -1.67, 1.67, 5
  CHECK(li(0) == -5);
  CHECK(li(1) == -2);
  CHECK(li(2) == 1);
  CHECK(li(3) == 5);
}

TEST_CASE("views write through and wrap external memory") {
  std::vector<double> buf(12, 0.0);
  array_view<double> v(buf.data(), {3, 4});
  CHECK(v.is_contiguous());
  v = 2.0;
  CHECK(buf[11] == 2.0);
  array_view<double> col(buf.data() + 1, {3}, {4});  // column 1
  CHECK(!col.is_contiguous());
  col = arange<double>(3) * 10;
  CHECK(buf[1] == 0);
  CHECK(buf[5] == 10);
  CHECK(buf[9] == 20);
  CHECK_THROWS_WITH_AS(array_view<double>(buf.data(), {3, 4}, {1}), doctest::Contains("expected 2 strides"),
                       shape_error);
}

TEST_CASE("printing matches NumPy's layout") {
  CHECK(str(array<double>{{1, 2}, {3, 4}}) == "[[1. 2.]\n [3. 4.]]");
  CHECK(str(array<double>{1, 2.5, 3.25}) == "[1.   2.5  3.25]");
  CHECK(str(array<int>{1, -20, 300}) == "[  1 -20 300]");
  CHECK(str(array<bool>{true, false}) == "[ True False]");
  CHECK(str(array<float>{0.1f}) == "[0.1]");
  CHECK(str(array<double>{1e-5, 1e10}) == "[1.e-05 1.e+10]");
  CHECK(str(array<double>{std::numeric_limits<double>::quiet_NaN(), -std::numeric_limits<double>::infinity(), 1}) ==
        "[ nan -inf   1.]");
  CHECK(str(zeros<float>({0})) == "[]");
  CHECK(str(arange<int>(2000)) == "[   0    1    2 ... 1997 1998 1999]");
  CHECK(str(arange<int>(3000).reshape({1000, 3})) ==
        "[[   0    1    2]\n [   3    4    5]\n [   6    7    8]\n ...\n [2991 2992 2993]\n [2994 2995 2996]\n [2997 2998 2999]]");
  CHECK(str(array<int>{{{1, 2}}, {{3, 4}}}) == "[[[1 2]]\n\n [[3 4]]]");
  CHECK(str(array<std::complex<double>>{std::complex<double>(1, 2), std::complex<double>(0.5, -1)}) == "[1. +2.j 0.5-1.j]");
  CHECK(str(array<int>{1, 2} * 3) == "[3 6]");  // an expression prints its value
  // float16 and bfloat16 print their own shortest digits, as NumPy prints float16
  // (np.array([0.1, 1, -2.5, 0.333], dtype=np.float16): [ 0.1    1.    -2.5    0.333]); ml_dtypes
  // prints bfloat16(0.1) through float32's %g (0.100098), fusor as the 0.1 it reads back from
  CHECK(str(array<float>{0.1f, 1, -2.5f, 0.333f}.astype<fusor::float16>()) == "[ 0.1    1.    -2.5    0.333]");
  CHECK(str(array<float>{0.1f, 3.0f}.astype<fusor::bfloat16>()) == "[0.1 3. ]");
}

TEST_CASE("host memory: live bytes and peak are counted; freed large blocks are reused up to the limit") {
  cpu_free_cache();
  reset_cpu_peak_memory();
  const auto s0 = cpu_memory_stats();
  {
    array<float> a(extents{300'000});  // 1.2 MB: cacheable, rounded to 64 KiB
    const auto s1 = cpu_memory_stats();
    CHECK(s1.allocated - s0.allocated == detail::host_bytes(300'000, sizeof(float)));
    CHECK(detail::host_bytes(300'000, sizeof(float)) % (64 << 10) == 0);
    CHECK(s1.peak >= s1.allocated);
    array<double> small(extents{100});  // 800 bytes: never cached
    CHECK(cpu_memory_stats().allocated - s1.allocated == 832);
  }
  const auto s2 = cpu_memory_stats();
  CHECK(s2.allocated == s0.allocated);
  CHECK(s2.peak >= s0.allocated + detail::host_bytes(300'000, sizeof(float)));
#if FUSOR_HOST_CACHE_ENABLED
  CHECK(s2.cached == detail::host_bytes(300'000, sizeof(float)));
  {
    // a slightly different size rounds to the same block: served from the cache
    array<float> b(extents{299'000});
    b = 1.0f;  // the reused block is fully writable
    CHECK(b.data()[298'999] == 1.0f);
    CHECK(cpu_memory_stats().cache_hits == s2.cache_hits + 1);
    CHECK(cpu_memory_stats().cached == 0);
    CHECK(reinterpret_cast<std::uintptr_t>(b.data()) % cpu_alignment == 0);
  }
  set_cpu_cache_limit(0);  // caching off: what is cached goes back, and nothing more is kept
  CHECK(cpu_memory_stats().cached == 0);
  { array<float> c(extents{300'000}); }
  CHECK(cpu_memory_stats().cached == 0);
  set_cpu_cache_limit(std::size_t(1) << 30);
  CHECK(cpu_cache_limit() == std::size_t(1) << 30);
  { array<float> big(extents{3'000'000}); }  // 12 MB: a huge-page block, rounded to 2 MiB
  CHECK(cpu_memory_stats().cached == detail::host_bytes(3'000'000, sizeof(float)));
  CHECK(detail::host_bytes(3'000'000, sizeof(float)) % (2 << 20) == 0);
  {
    array<float> again(extents{3'000'000});
    CHECK(reinterpret_cast<std::uintptr_t>(again.data()) % (2 << 20) == 0);
    CHECK(cpu_memory_stats().cached == 0);
  }
#endif
  cpu_free_cache();
  CHECK(cpu_memory_stats().cached == 0);
}
