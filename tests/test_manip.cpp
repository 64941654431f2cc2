// Copying operations: concatenate/stack/split, tile/repeat, pad, roll, topleft_pad/extract_center,
// take/scatter/put, masks, nonzero/argwhere, index grids and conversions, triangles. References
// are plain loops over the inputs, or literal results printed by NumPy 2 for the same call.
#include "common.hpp"

using namespace fusor;
using test::index_t;

template <class T>
std::vector<T> vec(std::initializer_list<T> v) {
  return std::vector<T>(v);
}

TEST_CASE_TEMPLATE("concatenate and stack along every axis, contiguous and strided inputs", T, float, double,
                   std::int32_t, std::uint8_t, std::complex<float>) {
  auto a = test::iota<T>({2, 3});
  auto b0 = test::iota<T>({4, 3});
  auto c1src = test::iota<T>({4, 2});
  auto c1 = transpose(c1src);  // (2, 4), strided
  auto r0 = concatenate({a.view(), b0.view()}, 0);
  CHECK(r0.shape() == extents{6, 3});
  for (index_t i = 0; i < 6; ++i)
    for (index_t j = 0; j < 3; ++j) CHECK(r0(i, j) == (i < 2 ? a(i, j) : b0(i - 2, j)));
  auto r1 = concatenate({a.view(), c1, a.view()}, -1);
  CHECK(r1.shape() == extents{2, 10});
  for (index_t i = 0; i < 2; ++i)
    for (index_t j = 0; j < 10; ++j) CHECK(r1(i, j) == (j < 3 ? a(i, j) : j < 7 ? c1src(j - 3, i) : a(i, j - 7)));
  std::vector<array<T>> parts;
  for (int k = 0; k < 3; ++k) parts.push_back(test::iota<T>({2, 3}) + T(k));
  auto s0 = stack(parts, 0), s2 = stack(parts, 2), s1 = stack(parts, -2);
  CHECK(s0.shape() == extents{3, 2, 3});
  CHECK(s2.shape() == extents{2, 3, 3});
  CHECK(s1.shape() == extents{2, 3, 3});
  for (int k = 0; k < 3; ++k)
    for (index_t i = 0; i < 2; ++i)
      for (index_t j = 0; j < 3; ++j) {
        CHECK(s0(k, i, j) == parts[std::size_t(k)](i, j));
        CHECK(s2(i, j, k) == parts[std::size_t(k)](i, j));
        CHECK(s1(i, k, j) == parts[std::size_t(k)](i, j));
      }
  CHECK_THROWS_WITH_AS(concatenate({a.view(), b0.view()}, 1),
                       doctest::Contains("expects every array to have shape (2, 3) except on that axis; array 1 has shape (4, 3)"),
                       shape_error);
  CHECK_THROWS_WITH_AS(stack({a.view(), b0.view()}), doctest::Contains("stack expects arrays of one shape"), shape_error);
  CHECK_THROWS_AS(concatenate(std::vector<array<T>>{}), value_error);
  CHECK_THROWS_AS(concatenate({a.view()}, 2), index_error);
  // 0-size parts
  auto e = zeros<T>({0, 3});
  CHECK(concatenate({e.view(), a.view(), e.view()}).shape() == extents{2, 3});
}

TEST_CASE("split and array_split return views; uneven sections are an error for split") {
  auto a = test::iota<int>({7, 2});
  auto p = array_split(a, 3);
  REQUIRE(p.size() == 3);
  CHECK(p[0].shape() == extents{3, 2});
  CHECK(p[1].shape() == extents{2, 2});
  CHECK(p[2].shape() == extents{2, 2});
  CHECK(p[1].data() == a.data() + 6);
  CHECK(p[2].at(1, 1) == a(6, 1));
  auto q = split(a, std::vector<index_t>{2, 5, 3}, 0);  // NumPy: a[:2], a[2:5], a[5:3] (empty), a[3:]
  REQUIRE(q.size() == 4);
  CHECK(q[0].shape()[0] == 2);
  CHECK(q[1].shape()[0] == 3);
  CHECK(q[2].shape()[0] == 0);
  CHECK(q[3].shape()[0] == 4);
  CHECK(q[3].data() == a.data() + 6);
  auto c = split(a, 2, 1);
  CHECK(test::walk(c[1]) == test::walk(a(all, 1)));
  CHECK_THROWS_WITH_AS(split(a, 3), doctest::Contains("size 7 into 3 sections does not divide evenly"), value_error);
  CHECK_THROWS_AS(split(a, 0), value_error);
  c[0] = -1;  // views write through
  CHECK(a(3, 0) == -1);
}

TEST_CASE_TEMPLATE("tile and repeat match plain loops", T, float, std::int64_t, std::complex<double>) {
  auto a = test::iota<T>({2, 3});
  auto t = tile(a, {2, 3});
  CHECK(t.shape() == extents{4, 9});
  for (index_t i = 0; i < 4; ++i)
    for (index_t j = 0; j < 9; ++j) CHECK(t(i, j) == a(i % 2, j % 3));
  auto t3 = tile(a, {2, 1, 1});  // reps longer than the rank
  CHECK(t3.shape() == extents{2, 2, 3});
  CHECK(t3(1, 1, 2) == a(1, 2));
  auto tt = tile(transpose(a), {2});  // strided input, reps shorter than the rank
  CHECK(tt.shape() == extents{3, 4});
  CHECK(tt(2, 3) == a(1, 2));
  // rank > 4 takes the per-axis path
  auto a5 = test::iota<T>({1, 2, 1, 2, 3});
  auto t5 = tile(a5, {2, 1, 3, 1, 2});
  CHECK(t5.shape() == extents{2, 2, 3, 2, 6});
  for (index_t i = 0; i < 2; ++i)
    for (index_t k = 0; k < 3; ++k)
      for (index_t m = 0; m < 6; ++m) CHECK(t5(i, 1, k, 1, m) == a5(0, 1, 0, 1, m % 3));
  CHECK(tile(a, {0, 2}).size() == 0);
  CHECK_THROWS_AS(tile(a, {-1}), value_error);

  auto r = repeat(a, 3, 1);
  CHECK(r.shape() == extents{2, 9});
  for (index_t i = 0; i < 2; ++i)
    for (index_t j = 0; j < 9; ++j) CHECK(r(i, j) == a(i, j / 3));
  auto r0 = repeat(flip(a, 0), 2, 0);
  CHECK(r0.shape() == extents{4, 3});
  CHECK(r0(3, 1) == a(0, 1));
  auto rf = repeat(a, 2);
  CHECK(rf.shape() == extents{12});
  CHECK(rf(11) == a(1, 2));
  CHECK(repeat(a, 0, 0).shape() == extents{0, 3});
  CHECK_THROWS_AS(repeat(a, -1, 0), value_error);
}

TEST_CASE("pad in every mode matches NumPy, including widths beyond the axis length") {
  array<int> a{1, 2, 3};
  CHECK(test::walk(pad(a, 5, pad_mode::reflect)) == vec({2, 1, 2, 3, 2, 1, 2, 3, 2, 1, 2, 3, 2}));
  CHECK(test::walk(pad(a, 5, pad_mode::symmetric)) == vec({2, 3, 3, 2, 1, 1, 2, 3, 3, 2, 1, 1, 2}));
  CHECK(test::walk(pad(a, 5, pad_mode::wrap)) == vec({2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2}));
  CHECK(test::walk(pad(a, 5, pad_mode::edge)) == vec({1, 1, 1, 1, 1, 1, 2, 3, 3, 3, 3, 3, 3}));
  CHECK(test::walk(pad(a, pad_widths{{1, 2}}, pad_mode::constant, 9)) == vec({9, 1, 2, 3, 9, 9}));
  auto b = arange<int>(6).reshape({2, 3});
  // np.pad(np.arange(6).reshape(2, 3), ((3, 1), (2, 4)), mode=...)
  auto rb = pad(b, pad_widths{{3, 1}, {2, 4}}, pad_mode::reflect);
  CHECK(rb.shape() == extents{6, 9});
  CHECK(test::walk(rb) == vec({5, 4, 3, 4, 5, 4, 3, 4, 5, 2, 1, 0, 1, 2, 1, 0, 1, 2, 5, 4, 3, 4, 5, 4, 3, 4, 5,
                               2, 1, 0, 1, 2, 1, 0, 1, 2, 5, 4, 3, 4, 5, 4, 3, 4, 5, 2, 1, 0, 1, 2, 1, 0, 1, 2}));
  auto sb = pad(b, pad_widths{{3, 1}, {2, 4}}, pad_mode::symmetric);
  CHECK(test::walk(sb) == vec({4, 3, 3, 4, 5, 5, 4, 3, 3, 4, 3, 3, 4, 5, 5, 4, 3, 3, 1, 0, 0, 1, 2, 2, 1, 0, 0,
                               1, 0, 0, 1, 2, 2, 1, 0, 0, 4, 3, 3, 4, 5, 5, 4, 3, 3, 4, 3, 3, 4, 5, 5, 4, 3, 3}));
  // constant padding of a strided 3-d float view against a plain loop
  auto c = test::iota<float>({3, 4, 5});
  auto cv = c(range(none, none, -1), all, range(0, 5, 2));  // (3, 4, 3)
  auto pc = pad(cv, pad_widths{{1, 0}, {0, 2}, {3, 3}}, pad_mode::constant, -1.5f);
  CHECK(pc.shape() == extents{4, 6, 9});
  for (index_t i = 0; i < 4; ++i)
    for (index_t j = 0; j < 6; ++j)
      for (index_t k = 0; k < 9; ++k) {
        const bool inside = i >= 1 && j < 4 && k >= 3 && k < 6;
        CHECK(pc(i, j, k) == (inside ? c(2 - (i - 1), j, 2 * (k - 3)) : -1.5f));
      }
  CHECK_THROWS_WITH_AS(pad(b, pad_widths{{1, 1}, {1, 1}, {1, 1}}), doctest::Contains("expects 1 or 2 (before, after) pairs"),
                       value_error);
  CHECK_THROWS_AS(pad(b, -1), value_error);
  CHECK_THROWS_WITH_AS(pad(zeros<int>({0}), 1, pad_mode::wrap), doctest::Contains("cannot extend the empty axis 0"),
                       value_error);
}

TEST_CASE_TEMPLATE("roll along one axis, several axes and the flattened array", T, float, std::int32_t, std::int64_t) {
  auto a = arange<T>(10).reshape({2, 5});
  // np.roll(np.arange(10).reshape(2, 5), (1, -2), (0, 1))
  CHECK(test::walk(roll(a, {1, -2}, {0, 1})) == std::vector<T>{7, 8, 9, 5, 6, 2, 3, 4, 0, 1});
  CHECK(test::walk(roll(a, 3)) == std::vector<T>{7, 8, 9, 0, 1, 2, 3, 4, 5, 6});
  for (index_t n : test::edge_sizes<T>(false)) {
    if (n == 0) continue;
    auto x = test::iota<T>({3, n});
    for (index_t s : {index_t(0), index_t(1), n - 1, n, 2 * n + 1, -n - 2}) {
      auto r = roll(x(range(none, none, -1), all), s, 1);
      for (index_t i = 0; i < 3; ++i)
        for (index_t j = 0; j < n; ++j) CHECK(r(i, j) == x(2 - i, (((j - s) % n) + n) % n));
    }
  }
  CHECK_THROWS_AS(roll(a, {1, 2}, {0}), value_error);
  CHECK_THROWS_AS(roll(a, 1, 2), index_error);
}

TEST_CASE("topleft_pad and extract_center (pyTME's helpers)") {
  auto a = test::iota<float>({3, 4});
  auto p = topleft_pad(a, {5, 6});
  for (index_t i = 0; i < 5; ++i)
    for (index_t j = 0; j < 6; ++j) CHECK(p(i, j) == (i < 3 && j < 4 ? a(i, j) : 0.0f));
  auto crop = topleft_pad(a, {2, 6});  // smaller on axis 0: cropped
  CHECK(crop.shape() == extents{2, 6});
  CHECK(crop(1, 3) == a(1, 3));
  auto big = test::iota<float>({7, 8});
  auto c = extract_center(big, {3, 4});
  CHECK(c.shape() == extents{3, 4});
  CHECK(c.data() == &big(2, 2));
  auto c2 = extract_center(big, {10, 5});  // clamped to the array on axis 0
  CHECK(c2.shape() == extents{7, 5});
  CHECK(c2.at(0, 0) == big(0, 1));
  CHECK_THROWS_AS(extract_center(big, {3}), shape_error);
  CHECK_THROWS_AS(topleft_pad(a, {3, 4, 1}), shape_error);
}

TEST_CASE_TEMPLATE("take, scatter, scatter_add and put along an axis", T, float, double, std::int32_t,
                   std::complex<double>) {
  auto a = test::iota<T>({3, 5, 2});
  array<std::int64_t> idx{4, 0, -1, 2, 2};
  auto t = take(a, idx, 1);
  CHECK(t.shape() == extents{3, 5, 2});
  const index_t pos[] = {4, 0, 4, 2, 2};
  for (index_t i = 0; i < 3; ++i)
    for (index_t j = 0; j < 5; ++j)
      for (index_t k = 0; k < 2; ++k) CHECK(t(i, j, k) == a(i, pos[j], k));
  array<std::int32_t> idx2 = array<std::int32_t>{1, 0, 1, 1}.reshape({2, 2});
  auto t2 = take(transpose(a), idx2, 0);  // strided source, 2-d indices
  CHECK(t2.shape() == extents{2, 2, 5, 3});
  CHECK(t2(1, 0, 4, 2) == a(2, 4, 1));
  auto tf = take(a, array<std::int64_t>{29, 0});
  CHECK(test::walk(tf) == std::vector<T>{a(2, 4, 1), a(0, 0, 0)});
  CHECK_THROWS_WITH_AS(take(a, array<std::int64_t>{5}, 1),
                       doctest::Contains("index 5 is out of bounds for axis 1 with size 5"), index_error);
  CHECK_THROWS_AS(take(a, array<std::int64_t>{-6}, 1), index_error);

  auto d = zeros<T>({3, 5});
  scatter(d, array<std::int64_t>{1, 3, 1}, full<T>({3, 3}, T(2)) * test::iota<T>({3, 3}), 1);
  for (index_t i = 0; i < 3; ++i) {
    CHECK(d(i, 1) == T(2) * T(3 * i + 2));  // the last write to a repeated index wins
    CHECK(d(i, 3) == T(2) * T(3 * i + 1));
    CHECK(d(i, 0) == T(0));
  }
  auto acc = zeros<T>({4});
  scatter_add(acc, array<std::int64_t>{0, 2, 0, 0, -1}, T(1), 0);
  CHECK(test::walk(acc) == std::vector<T>{T(3), T(0), T(1), T(1)});
  {
    // contiguous values of the right shape are read in place; values that are the destination
    // itself are copied first (else rows added early would be added again): a plain loop checks both
    auto rows = test::iota<T>({4, 3});
    const array<std::int64_t> to{2, 0, 2, 3};
    auto sum = zeros<T>({4, 3});
    scatter_add(sum, to, rows, 0);
    auto self = test::iota<T>({4, 3});
    scatter_add(self, to, self, 0);
    for (index_t c = 0; c < 3; ++c)
      for (index_t r = 0; r < 4; ++r) {
        T want{}, want_self = rows(r, c);
        for (index_t i = 0; i < 4; ++i)
          if (to(i) == r) {
            want += rows(i, c);
            want_self += rows(i, c);
          }
        CHECK(sum(r, c) == want);
        CHECK(self(r, c) == want_self);
      }
    CHECK_THROWS_AS(scatter_add(sum, to, test::iota<T>({3, 3}), 0), shape_error);
  }
  // strided destination: written back through the view
  auto m = zeros<T>({4, 3});
  scatter(m(all, 1), array<std::int64_t>{3, 0}, array<T>{T(5), T(6)}, 0);
  CHECK(m(3, 1) == T(5));
  CHECK(m(0, 1) == T(6));
  CHECK(m(3, 0) == T(0));
  auto f = zeros<T>({2, 3});
  put(f, array<std::int64_t>{5, 0}, array<T>{T(1), T(2)});
  CHECK(f(1, 2) == T(1));
  CHECK(f(0, 0) == T(2));
  CHECK_THROWS_AS(scatter(d, array<std::int64_t>{9}, T(1), 1), index_error);
  CHECK_THROWS_AS(scatter(d, array<std::int64_t>{0, 1}, array<T>{T(1), T(2), T(3)}, 1), shape_error);
}

TEST_CASE_TEMPLATE("boolean masks select and assign in C order", T, float, std::int64_t, std::uint8_t) {
  for (index_t n : test::edge_sizes<T>(false)) {
    auto x = test::iota<T>({2, n});
    auto sel = mask_select(x, x > T(3));
    std::vector<T> expect;
    for (index_t i = 0; i < 2; ++i)
      for (index_t j = 0; j < n; ++j)
        if (x(i, j) > T(3)) expect.push_back(x(i, j));
    CHECK(test::walk(sel) == expect);
    CHECK(count_nonzero(x > T(3)) == index_t(expect.size()));
    // masked assignment with values: one per selected element
    auto y = x.copy();
    array<T> vals = zeros<T>({index_t(expect.size())}) + T(1);
    mask_assign(y, y > T(3), vals);
    for (index_t i = 0; i < 2; ++i)
      for (index_t j = 0; j < n; ++j) CHECK(y(i, j) == (x(i, j) > T(3) ? T(1) : x(i, j)));
    auto z = x.copy();
    mask_assign(z.view(), z < T(2), T(9));
    for (index_t i = 0; i < 2; ++i)
      for (index_t j = 0; j < n; ++j) CHECK(z(i, j) == (x(i, j) < T(2) ? T(9) : x(i, j)));
  }
  auto x = test::iota<T>({3});
  CHECK_THROWS_WITH_AS(mask_assign(x, x > T(0), array<T>{T(1)}),
                       doctest::Contains("the mask selects 2 elements but 1 values were given"), shape_error);
  auto sel_b = mask_select(test::iota<T>({2, 3}), array<bool>{true, false, true});  // mask broadcast over rows
  CHECK(sel_b.size() == 4);
}

TEST_CASE("nonzero, argwhere, indices, unravel_index, ravel_multi_index") {
  array<int> a = array<int>{0, 3, 0, 0, 5, 6}.reshape({2, 3});
  auto nz = nonzero(a);
  REQUIRE(nz.size() == 2);
  CHECK(test::walk(nz[0]) == std::vector<std::int64_t>{0, 1, 1});
  CHECK(test::walk(nz[1]) == std::vector<std::int64_t>{1, 1, 2});
  auto aw = argwhere(transpose(a));
  CHECK(aw.shape() == extents{3, 2});
  CHECK(test::walk(aw) == std::vector<std::int64_t>{1, 0, 1, 1, 2, 1});
  CHECK(argwhere(zeros<int>({2, 2})).shape() == extents{0, 2});
  CHECK_THROWS_AS(nonzero(full<int>({}, 1)), value_error);

  auto g = indices({2, 3, 4});
  CHECK(g.shape() == extents{3, 2, 3, 4});
  for (index_t i = 0; i < 2; ++i)
    for (index_t j = 0; j < 3; ++j)
      for (index_t k = 0; k < 4; ++k) {
        CHECK(g(0, i, j, k) == i);
        CHECK(g(1, i, j, k) == j);
        CHECK(g(2, i, j, k) == k);
      }
  auto u = unravel_index(array<std::int64_t>{0, 23, 13}, {2, 3, 4});
  CHECK(test::walk(u[0]) == std::vector<std::int64_t>{0, 1, 1});
  CHECK(test::walk(u[1]) == std::vector<std::int64_t>{0, 2, 0});
  CHECK(test::walk(u[2]) == std::vector<std::int64_t>{0, 3, 1});
  CHECK(unravel_index(13, {2, 3, 4}) == extents{1, 0, 1});
  CHECK_THROWS_WITH_AS(unravel_index(array<std::int64_t>{24}, {2, 3, 4}),
                       doctest::Contains("flat index 24 is out of bounds for shape (2, 3, 4)"), index_error);
  auto flat = ravel_multi_index(u, {2, 3, 4});
  CHECK(test::walk(flat) == std::vector<std::int64_t>{0, 23, 13});
  std::vector<array<std::int64_t>> bad;
  bad.push_back(array<std::int64_t>{0});
  bad.push_back(array<std::int64_t>{3});
  CHECK_THROWS_WITH_AS(ravel_multi_index(bad, {2, 3}), doctest::Contains("coordinate 3 is out of bounds for axis 1"),
                       index_error);
  CHECK_THROWS_AS(ravel_multi_index(bad, {2, 3, 4}), value_error);
}

TEST_CASE_TEMPLATE("tril, triu and their indices", T, float, std::int32_t, std::complex<float>) {
  array<T> a = test::iota<T>({2, 3, 4}) + T(1);
  for (index_t k : {index_t(-1), index_t(0), index_t(2)}) {
    auto lo = tril(a, k), up = triu(a, k);
    for (index_t b = 0; b < 2; ++b)
      for (index_t i = 0; i < 3; ++i)
        for (index_t j = 0; j < 4; ++j) {
          CHECK(lo(b, i, j) == (j - i <= k ? a(b, i, j) : T(0)));
          CHECK(up(b, i, j) == (j - i >= k ? a(b, i, j) : T(0)));
        }
  }
  auto ti = tril_indices(3);
  CHECK(test::walk(ti[0]) == std::vector<std::int64_t>{0, 1, 1, 2, 2, 2});
  CHECK(test::walk(ti[1]) == std::vector<std::int64_t>{0, 0, 1, 0, 1, 2});
  auto ui = triu_indices(3, 1, 4);
  CHECK(test::walk(ui[0]) == std::vector<std::int64_t>{0, 0, 0, 1, 1, 2});
  CHECK(test::walk(ui[1]) == std::vector<std::int64_t>{1, 2, 3, 2, 3, 3});
  // a 1-d array is the row of a square matrix (np.tril([1, 2, 3]) -> [[1,0,0],[1,2,0],[1,2,3]])
  CHECK(test::walk(tril(arange<float>(1, 4))) == std::vector<float>{1, 0, 0, 1, 2, 0, 1, 2, 3});
  CHECK(test::walk(triu(arange<float>(1, 4), 1)) == std::vector<float>{0, 2, 3, 0, 0, 3, 0, 0, 0});
  CHECK(tril(zeros<float>({0})).shape() == extents{0, 0});
  CHECK_THROWS_WITH_AS(tril(full<float>(extents{}, 1.0f)), doctest::Contains("rank >= 1, got shape ()"), shape_error);
}

TEST_CASE_TEMPLATE("floor_divide rounds toward minus infinity like NumPy's //", T, std::int32_t, std::int64_t, float,
                   double) {
  const auto av = test::values<T>(203, -50, 50, 3);
  auto bv = test::values<T>(203, -7, 7, 4);
  for (auto& b : bv)
    if (b == T(0)) b = T(3);
  auto q = eval(floor_divide(test::make(av), test::make(bv)));
  bool ok = true;
  for (std::size_t i = 0; i < av.size(); ++i)
    ok = ok && double(q(index_t(i))) == double(std::floor((long double)av[i] / (long double)bv[i]));
  CHECK(ok);
  if constexpr (std::is_floating_point_v<T>) {
    // np.floor_divide([inf, -inf, 1, -1, 0, 5, 1, -1, 0], [2, 2, inf, inf, inf, -inf, 0, 0, 0])
    //   -> [nan, nan, 0, -1, 0, -1, inf, -inf, nan]
    const T inf = std::numeric_limits<T>::infinity();
    auto r = eval(floor_divide(array<T>{inf, -inf, 1, -1, 0, 5, 1, -1, 0}, array<T>{2, 2, inf, inf, inf, -inf, 0, 0, 0}));
    CHECK(std::isnan(r(0)));
    CHECK(std::isnan(r(1)));
    CHECK((r(2) == 0 && !std::signbit(r(2))));
    CHECK(r(3) == -1);
    CHECK(r(4) == 0);
    CHECK(r(5) == -1);
    CHECK(r(6) == inf);
    CHECK(r(7) == -inf);
    CHECK(std::isnan(r(8)));
  }
  if constexpr (std::is_integral_v<T>) {
    CHECK(eval(floor_divide(array<T>{-7}, array<T>{2}))(0) == T(-4));
    CHECK(eval(floor_divide(array<T>{7}, array<T>{-2}))(0) == T(-4));
    CHECK(eval(floor_divide(array<T>{5}, array<T>{0}))(0) == T(0));  // NumPy: 0 (with a warning)
  }
}
