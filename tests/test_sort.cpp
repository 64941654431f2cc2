// Sorting, searching and scans against std::stable_sort / std::partial_sort / plain loops, on
// contiguous and strided inputs, every axis, NaN ordering, ties, and SIMD-edge sizes.
#include "common.hpp"

#include <algorithm>
#include <atomic>
#include <numeric>
#if defined(_OPENMP)
#include <omp.h>
#endif

using namespace fusor;
using test::index_t;

namespace {
template <class T>
bool numpy_less(const T& a, const T& b) {  // reference order: NaN last, complex lexicographic
  if constexpr (is_complex_v<T>) {
    if (a.real() != b.real()) return a.real() < b.real();
    return a.imag() < b.imag();
  } else if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
    return a < b;
  } else {
    return a < b;
  }
}
template <class T>
bool same(const T& a, const T& b) {
  if constexpr (std::is_floating_point_v<T>)
    if (std::isnan(a) && std::isnan(b)) return true;
  return a == b;
}
}  // namespace

namespace {
// std::stable_sort of positions, as std::sort with a position tie-break: the same order, and no
// clang 19 warning about the deprecated get_temporary_buffer inside libstdc++ 12's stable_sort
template <class Less>
void stable_index_sort(std::vector<index_t>& idx, Less less) {
  std::sort(idx.begin(), idx.end(), [&](index_t i, index_t j) { return less(i, j) || (!less(j, i) && i < j); });
}
}  // namespace

TEST_CASE_TEMPLATE("sort and stable argsort match std::stable_sort on every axis", T, float, double, std::int32_t,
                   std::int64_t, std::uint8_t, std::complex<float>) {
  for (index_t n : test::edge_sizes<T>(false)) {
    auto v = test::values<T>(3 * n, std::is_unsigned_v<T> ? 0 : -5, 5, std::uint64_t(n) + 3);  // many ties
    if constexpr (std::is_floating_point_v<T>)
      if (n > 2) v[1] = v[std::size_t(n)] = std::numeric_limits<T>::quiet_NaN();
    auto a = test::make(v).reshape({3, n});
    for (int axis : {0, 1, -1}) {
      auto s = sort(a, axis);
      auto p = argsort(a, axis);
      CHECK(s.shape() == a.shape());
      const int ax = axis < 0 ? axis + 2 : axis;
      const index_t rows = ax == 1 ? 3 : n, len = ax == 1 ? n : 3;
      for (index_t r = 0; r < rows; ++r) {
        auto at = [&](const auto& arr, index_t i) { return ax == 1 ? arr(r, i) : arr(i, r); };
        std::vector<index_t> ref(static_cast<std::size_t>(len));
        std::iota(ref.begin(), ref.end(), index_t(0));
        stable_index_sort(ref, [&](index_t i, index_t j) { return numpy_less(at(a, i), at(a, j)); });
        for (index_t i = 0; i < len; ++i) {
          CHECK(at(p, i) == ref[std::size_t(i)]);
          CHECK(same(at(s, i), at(a, ref[std::size_t(i)])));
        }
      }
    }
  }
  // strided input: a reversed transpose
  auto m = test::make(test::values<T>(20, std::is_unsigned_v<T> ? 0 : -9, 9, 7)).reshape({4, 5});
  auto st = sort(flip(transpose(m), 1), 0);
  for (index_t j = 0; j < 4; ++j)
    for (index_t i = 0; i + 1 < 5; ++i) CHECK(!numpy_less(st(i + 1, j), st(i, j)));
  CHECK_THROWS_AS(sort(m, 2), index_error);
}

TEST_CASE_TEMPLATE("topk equals the head of a stable sort, largest and smallest", T, float, double, std::int32_t,
                   std::int64_t) {
  for (index_t n : {index_t(1), index_t(7), index_t(9), index_t(1000), index_t(100'003)}) {
    auto v = test::values<T>(2 * n, -30, 30, std::uint64_t(n));
    auto a = test::make(v).reshape({2, n});
    for (bool largest : {true, false}) {
      // the reference order of each row, once for every k (sorted over plain values: under the
      // sanitizers a sort through the array's checked indexing took two minutes)
      std::vector<std::vector<index_t>> ref(2);
      for (index_t row = 0; row < 2; ++row) {
        const std::vector<T> x(v.begin() + row * n, v.begin() + (row + 1) * n);
        ref[std::size_t(row)].resize(static_cast<std::size_t>(n));
        std::iota(ref[std::size_t(row)].begin(), ref[std::size_t(row)].end(), index_t(0));
        stable_index_sort(ref[std::size_t(row)], [&](index_t i, index_t j) {
          return largest ? x[std::size_t(j)] < x[std::size_t(i)] : x[std::size_t(i)] < x[std::size_t(j)];
        });
      }
      for (index_t k : {index_t(0), index_t(1), std::min<index_t>(n, 10), n}) {
        auto r = topk(a, k, 1, largest);
        CHECK(r.values.shape() == extents{2, k});
        index_t wrong_index = 0, wrong_value = 0;  // counted, then checked once (1.6M CHECKs were slow)
        for (index_t row = 0; row < 2; ++row)
          for (index_t j = 0; j < k; ++j) {
            const index_t want = ref[std::size_t(row)][std::size_t(j)];
            wrong_index += r.indices(row, j) != want;
            wrong_value += r.values(row, j) != v[std::size_t(row * n + want)];
          }
        CHECK(wrong_index == 0);
        CHECK(wrong_value == 0);
      }
    }
  }
  auto a = test::make(test::values<T>(12, 0, 100, 3)).reshape({3, 4});
  auto r0 = topk(a, 2, 0);  // along the first axis
  CHECK(r0.values.shape() == extents{2, 4});
  for (index_t j = 0; j < 4; ++j) CHECK(r0.values(0, j) == std::max({a(0, j), a(1, j), a(2, j)}));
  CHECK_THROWS_WITH_AS(topk(a, 5), doctest::Contains("topk expects 0 <= k <= 4 (the axis length), got k = 5"), value_error);
}

TEST_CASE("topk puts NaN first when largest, as NumPy's sort order ranks it highest") {
  array<float> a{1.0f, std::numeric_limits<float>::quiet_NaN(), 3.0f};
  auto r = topk(a, 2);
  CHECK(std::isnan(r.values(0)));
  CHECK(r.indices(1) == 2);
}

TEST_CASE_TEMPLATE("unique with counts, first indices and inverse", T, float, std::int32_t, std::int64_t, std::uint8_t) {
  for (index_t n : test::edge_sizes<T>()) {
    auto v = test::values<T>(n, 0, 20, std::uint64_t(n) + 11);
    for (auto& x : v) x = T(std::floor(double(x)));  // about 20 distinct values, many repeats
    auto a = test::make(v);
    auto u = unique(a);
    std::vector<T> ref = v;
    std::sort(ref.begin(), ref.end());
    ref.erase(std::unique(ref.begin(), ref.end()), ref.end());
    CHECK(test::walk(u.values) == ref);
    for (index_t j = 0; j < u.values.size(); ++j) {
      const T x = u.values(j);
      CHECK(u.counts(j) == std::count(v.begin(), v.end(), x));
      CHECK(u.index(j) == std::find(v.begin(), v.end(), x) - v.begin());
    }
    bool inverse_ok = u.inverse.shape() == a.shape();
    for (index_t i = 0; i < n; ++i) inverse_ok = inverse_ok && u.values(u.inverse(i)) == v[std::size_t(i)];
    CHECK(inverse_ok);
  }
  auto m = array<int>{3, 1, 3, 2, 1, 3}.reshape({2, 3});
  auto u = unique(transpose(m));
  CHECK(test::walk(u.values) == std::vector<int>{1, 2, 3});
  CHECK(u.inverse.shape() == extents{3, 2});
  CHECK(test::walk(u.counts) == std::vector<std::int64_t>{2, 1, 3});
}

TEST_CASE("searchsorted left and right, scalar and array queries") {
  array<double> a{1.0, 2.0, 2.0, 3.0, 5.0};
  array<double> q{0.0, 1.0, 2.0, 2.5, 5.0, 9.0};
  CHECK(test::walk(searchsorted(a, q)) == std::vector<std::int64_t>{0, 0, 1, 3, 4, 5});
  CHECK(test::walk(searchsorted(a, q, side::right)) == std::vector<std::int64_t>{0, 1, 3, 3, 5, 5});
  CHECK(searchsorted(a, 2.0) == 1);
  CHECK(searchsorted(a, 2.0, side::right) == 3);
  CHECK(searchsorted(zeros<float>({0}), 1.0f) == 0);
  // queries compare in the promoted type, as NumPy: 2.5 lies between 2 and 3 of an int array
  CHECK(searchsorted(array<int>{1, 2, 3}, 2.5) == 2);
  CHECK(test::walk(searchsorted(array<int>{1, 2, 3}, array<double>{2.5, 0.5})) == std::vector<std::int64_t>{2, 0});
  CHECK(searchsorted(array<float>{0.1f}, 0.1, side::right) == 0);
  CHECK_THROWS_AS(searchsorted(zeros<float>({2, 2}), 1.0f), shape_error);
}

TEST_CASE_TEMPLATE("cumsum and cumprod along axes and flattened", T, float, double, std::int32_t, std::int64_t) {
  for (index_t n : test::edge_sizes<T>()) {
    auto v = test::values<T>(n, -3, 3, std::uint64_t(n) + 5);
    auto a = test::make(v);
    auto c = cumsum(a);
    double acc = 0;
    bool ok = true;
    for (index_t i = 0; i < n; ++i) {
      acc += double(v[std::size_t(i)]);
      ok = ok && test::close(double(c(i)), acc, 1e-6 * std::max(1.0, double(i)));
    }
    CHECK(ok);
    if constexpr (std::is_same_v<T, std::int32_t>) CHECK(std::is_same_v<value_t<decltype(c)>, std::int64_t>);
  }
  array<T> mm = test::iota<T>({3, 4}) + T(1);
  auto c0 = cumsum(mm, 0), p1 = cumprod(mm, 1), cf = cumsum(transpose(mm));
  for (index_t i = 0; i < 3; ++i)
    for (index_t j = 0; j < 4; ++j) {
      double s = 0, p = 1;
      for (index_t k = 0; k <= i; ++k) s += double(mm(k, j));
      for (index_t k = 0; k <= j; ++k) p *= double(mm(i, k));
      CHECK(double(c0(i, j)) == s);
      CHECK(double(p1(i, j)) == p);
    }
  CHECK(cf.shape() == extents{12});
  CHECK(double(cf(11)) == 78.0);  // 1 + ... + 12
}

TEST_CASE("diff, bincount and histogram") {
  array<int> a{1, 4, 9, 16, 25};
  CHECK(test::walk(diff(a)) == std::vector<int>{3, 5, 7, 9});
  CHECK(test::walk(diff(a, 2)) == std::vector<int>{2, 2, 2});
  CHECK(diff(a, 7).size() == 0);
  auto m = test::iota<double>({3, 4});
  auto d0 = diff(m, 1, 0);
  CHECK(d0.shape() == extents{2, 4});
  CHECK(d0(1, 3) == m(2, 3) - m(1, 3));
  CHECK_THROWS_AS(diff(a, -1), value_error);
  CHECK(test::walk(diff(a * 2)) == std::vector<int>{6, 10, 14, 18});  // an expression argument
  // uint8 values accumulate in uint64 (NumPy's cumsum type), never wrapping at 255
  auto cu = cumsum(array<std::uint8_t>{200, 100});
  CHECK(std::is_same_v<value_t<decltype(cu)>, std::uint64_t>);
  CHECK(cu(1) == 300);
  auto he = histogram(zeros<float>({0}), 2);  // no data, no range: [0, 1] as NumPy
  CHECK(test::walk(he.edges) == std::vector<float>{0, 0.5f, 1});
  // the edges take the input's float type (np.histogram: float32 data, float32 edges; integers: float64)
  static_assert(std::is_same_v<value_t<decltype(he.edges)>, float>);
  static_assert(std::is_same_v<value_t<decltype(histogram(array<double>{1}).edges)>, double>);
  static_assert(std::is_same_v<value_t<decltype(histogram(array<std::int32_t>{1}).edges)>, double>);
  static_assert(std::is_same_v<value_t<decltype(histogram(array<std::uint8_t>{1}).edges)>, double>);
  // np.histogram(np.float32([0.1, 0.2, 0.7]), 3): edges are float32 values of linspace(0.1, 0.7, 4)
  auto hf = histogram(array<float>{0.1f, 0.2f, 0.7f}, 3);
  CHECK(test::walk(hf.counts) == std::vector<std::int64_t>{2, 0, 1});
  CHECK(hf.edges(1) == float(0.1f + (double(0.7f) - double(0.1f)) / 3));

  // a 0-d array with an axis is one element of rank 1 (NumPy 2's cumsum, cumprod and argsort)
  const auto zero_d = full<std::int32_t>(extents{}, 5);
  for (int axis : {0, -1}) {
    CHECK(test::walk(cumsum(zero_d, axis)) == std::vector<std::int64_t>{5});
    CHECK(test::walk(cumprod(zero_d, axis)) == std::vector<std::int64_t>{5});
    CHECK(test::walk(argsort(zero_d, axis)) == std::vector<std::int64_t>{0});
    CHECK(argsort(zero_d * 2, axis).shape() == extents{1});
  }
  CHECK_THROWS_WITH_AS(cumsum(zero_d, 1), doctest::Contains("axis 1 is out of range for an array of rank 1"), index_error);
  CHECK_THROWS_WITH_AS(argsort(zero_d, 1), doctest::Contains("axis 1 is out of range for an array of rank 1"), index_error);
  CHECK_THROWS_WITH_AS(sort(zero_d, 0), doctest::Contains("sorting needs an array of rank >= 1"), shape_error);

  array<std::int64_t> x{0, 1, 1, 3, 2, 1, 7};
  CHECK(test::walk(bincount(x)) == std::vector<std::int64_t>{1, 3, 1, 1, 0, 0, 0, 1});
  CHECK(bincount(x, 10).size() == 10);
  array<double> w{0.5, 1, 1, 1, 1, 1, 2};
  CHECK(test::walk(bincount(x, w)) == std::vector<double>{0.5, 3, 1, 1, 0, 0, 0, 2});
  CHECK_THROWS_WITH_AS(bincount(array<int>{1, -2}), doctest::Contains("non-negative values, got -2"), value_error);

  // np.histogram([0, 0.1, 0.2, 0.3, 0.5, 0.99, 1.0], bins=4) -> [3, 1, 1, 2], edges 0, .25, .5, .75, 1
  array<double> h{0, 0.1, 0.2, 0.3, 0.5, 0.99, 1.0};
  auto r = histogram(h, 4);
  CHECK(test::walk(r.counts) == std::vector<std::int64_t>{3, 1, 1, 2});
  CHECK(test::walk(r.edges) == std::vector<double>{0, 0.25, 0.5, 0.75, 1.0});
  // against a loop over the edges on random data with an explicit range (outside values dropped)
  auto v = test::values<float>(10'001, -1, 11, 5);
  auto hr = histogram(test::make(v), 7, 0.0, 10.0);
  std::vector<std::int64_t> ref(7, 0);
  for (float f : v)
    for (int b = 0; b < 7; ++b)
      if (f >= hr.edges(b) && (f < hr.edges(b + 1) || (b == 6 && f <= hr.edges(7)))) {
        ++ref[std::size_t(b)];
        break;
      }
  CHECK(test::walk(hr.counts) == ref);
  CHECK_THROWS_AS(histogram(h, 0), value_error);
  CHECK_THROWS_AS(histogram(h, 3, 2.0, 1.0), value_error);
}

#if defined(_OPENMP)
namespace {
// An element whose comparison notes the size of the OpenMP team it runs in: the largest team a
// sort's loop used.
std::atomic<int> widest_team{0};
struct team_probe {
  int v;
  friend bool operator<(const team_probe& a, const team_probe& b) {
    const int n = omp_get_num_threads();
    int seen = widest_team.load();
    while (n > seen && !widest_team.compare_exchange_weak(seen, n)) {
    }
    return a.v < b.v;
  }
};
int widest_team_sorting(index_t rows, index_t n) {
  std::vector<team_probe> x(std::size_t(rows * n));
  for (std::size_t i = 0; i < x.size(); ++i) x[i].v = int((i * 7919) % 1009);
  widest_team = 0;
  algorithms<cpu>::sort_rows(x.data(), rows, n);
  for (index_t r = 0; r < rows; ++r)
    if (!std::is_sorted(x.begin() + r * n, x.begin() + (r + 1) * n)) return -1;
  return widest_team.load();
}
}  // namespace

TEST_CASE("the host loops (sort, unique, histograms) use set_num_threads and the context's thread cap") {
  const index_t rows = 16, n = 4001;  // past the loops' threshold for a team
  set_num_threads(1);
  CHECK(widest_team_sorting(rows, n) == 1);  // OpenMP's default would take every core
  set_num_threads(4);
  {
    context<cpu> capped;
    capped.threads = 2;
    const auto scope = capped.enter();
    const int team = widest_team_sorting(rows, n);
    CHECK(team >= 1);
    CHECK(team <= 2);
  }
  {
    context<cpu> single;
    single.threads = 1;
    CHECK(with_context<cpu>(single, [&] { return widest_team_sorting(rows, n); }) == 1);
  }
  set_num_threads(0);
}
#endif
