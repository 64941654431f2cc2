// Views: slicing, axis permutations, reshape/ravel, squeeze/expand_dims, broadcast_to, flip,
// diagonal, real/imag. Each result is read by walking its pointer and strides by hand and
// compared with the element the NumPy rule selects, computed by a closed form.
#include "common.hpp"

using namespace fusor;
using test::index_t;

TEST_CASE_TEMPLATE("slicing follows Python's rules on every axis", T, float, double, std::int32_t, std::int64_t,
                   std::uint8_t, std::complex<float>) {
  for (index_t n : test::edge_sizes<float>(false)) {
    auto a = test::iota<T>({n});
    // (start, stop, step) triples including negatives, clamping and empty results
    const index_t cases[][3] = {{0, n, 1},       {1, n, 2},   {none, none, -1}, {n - 1, none, -2}, {-3, none, 1},
                                {none, -2, 1},   {5, 2, 1},   {2, 5, -1},       {-100, 100, 3},    {100, -100, -3},
                                {none, none, 7}, {0, 0, 1}};
    for (auto& c : cases) {
      auto v = a(range(c[0], c[1], c[2]));
      // reference: Python's slice semantics, written out
      std::vector<T> expect;
      const index_t step = c[2];
      auto norm = [&](index_t i, index_t dflt, index_t lo, index_t hi) {
        if (i == none) return dflt;
        if (i < 0) i += n;
        return std::clamp(i, lo, hi);
      };
      if (step > 0) {
        for (index_t i = norm(c[0], 0, 0, n); i < norm(c[1], n, 0, n); i += step) expect.push_back(a.data()[i]);
      } else {
        for (index_t i = norm(c[0], n - 1, -1, n - 1); i > norm(c[1], -1, -1, n - 1); i += step)
          expect.push_back(a.data()[i]);
      }
      CHECK(test::walk(v) == expect);
      CHECK(v.shape() == extents{index_t(expect.size())});
    }
  }
}

TEST_CASE("integer subscripts drop axes, all keeps them, newaxis and ellipsis insert and expand") {
  auto a = test::iota<int>({3, 4, 5});
  auto row = a(1, all, all);
  CHECK(row.shape() == extents{4, 5});
  CHECK(row.at(2, 3) == a(1, 2, 3));
  auto col = a(all, 2);  // trailing axes taken whole
  CHECK(col.shape() == extents{3, 5});
  CHECK(col.at(2, 4) == a(2, 2, 4));
  auto last = a(ellipsis, -1);
  CHECK(last.shape() == extents{3, 4});
  CHECK(last.at(1, 3) == a(1, 3, 4));
  auto e = a(newaxis, range(0, 2), ellipsis, newaxis);
  CHECK(e.shape() == extents{1, 2, 4, 5, 1});
  CHECK(e.at(0, 1, 3, 4, 0) == a(1, 3, 4));
  auto neg = a(-1, range(none, none, -1), 0);
  CHECK(neg.shape() == extents{4});
  CHECK(test::walk(neg) == std::vector<int>{a(2, 3, 0), a(2, 2, 0), a(2, 1, 0), a(2, 0, 0)});
  // slicing a slice composes
  auto ss = a(range(0, 3, 2))(all, range(1, none));
  CHECK(ss.shape() == extents{2, 3, 5});
  CHECK(ss.at(1, 2, 4) == a(2, 3, 4));

  CHECK_THROWS_WITH_AS(a(3, all), doctest::Contains("index 3 is out of bounds for axis 0 with size 3"), index_error);
  CHECK_THROWS_WITH_AS(a(0, -5, all), doctest::Contains("index -5 is out of bounds for axis 1"), index_error);
  CHECK_THROWS_WITH_AS(a(all, all, all, all), doctest::Contains("too many indices"), index_error);
  CHECK_THROWS_WITH_AS(a(range(0, 3, 0)), doctest::Contains("slice step cannot be zero"), value_error);
  // a huge step selects the first element (no overflow in the count)
  auto huge = a(range(0, none, std::numeric_limits<index_t>::max()));
  CHECK(huge.shape() == extents{1, 4, 5});
  CHECK(a(range(none, none, std::numeric_limits<index_t>::min() + 1)).shape() == extents{1, 4, 5});
}

TEST_CASE("assigning into a view writes through, fused and broadcast") {
  auto a = zeros<float>({6, 4});
  auto b = test::iota<float>({3, 4});
  instrument::reset();
  a(range(0, 6, 2), all) = b * 2 + 1;
  CHECK(instrument::passes == 1);
  CHECK(instrument::allocations == 0);
  for (index_t i = 0; i < 6; ++i)
    for (index_t j = 0; j < 4; ++j) CHECK(a(i, j) == (i % 2 == 0 ? b(i / 2, j) * 2 + 1 : 0.0f));
  a(range(1, 6, 2), 1) = 7.0f;  // a scalar fills the selection
  for (index_t i = 1; i < 6; i += 2) CHECK(a(i, 1) == 7.0f);
  a(all, range(none, none, -1)) = arange<float>(4);  // broadcast a row into reversed columns
  for (index_t i = 0; i < 6; ++i) CHECK(a(i, 0) == 3.0f);
  CHECK_THROWS_AS(a(range(0, 3), all) = b(range(0, 2), all), shape_error);
  // overlapping read and write (shifting a row in place) goes through a temporary
  auto r = arange<int>(10);
  r(range(1, 10)) = r(range(0, 9));
  CHECK(test::walk(r) == std::vector<int>{0, 0, 1, 2, 3, 4, 5, 6, 7, 8});
}

TEST_CASE_TEMPLATE("transpose, permute_dims, swapaxes and moveaxis reorder axes without copying", T, float, double,
                   std::int64_t, std::complex<double>) {
  auto a = test::iota<T>({2, 3, 4});
  auto t = transpose(a);
  CHECK(t.data() == a.data());
  CHECK(t.shape() == extents{4, 3, 2});
  for (index_t i = 0; i < 2; ++i)
    for (index_t j = 0; j < 3; ++j)
      for (index_t k = 0; k < 4; ++k) {
        CHECK(t.at(k, j, i) == a(i, j, k));
        CHECK(permute_dims(a, {1, 2, 0}).at(j, k, i) == a(i, j, k));
        CHECK(swapaxes(a, 0, -1).at(k, j, i) == a(i, j, k));
        CHECK(moveaxis(a, 0, -1).at(j, k, i) == a(i, j, k));
        CHECK(moveaxis(a, -1, 0).at(k, i, j) == a(i, j, k));
        CHECK(moveaxis(a, {0, 1}, {-1, -2}).at(k, j, i) == a(i, j, k));
      }
  // a transposed temporary is materialised (a view would dangle)
  array<T> tt = transpose(a * T(2));
  CHECK(tt.shape() == extents{4, 3, 2});
  CHECK(tt(3, 2, 1) == a(1, 2, 3) * T(2));
  // transposed views feed fused expressions
  array<T> s = transpose(a) + transpose(a);
  CHECK(s(1, 2, 0) == a(0, 2, 1) * T(2));
  CHECK_THROWS_WITH_AS(permute_dims(a, {0, 0, 1}), doctest::Contains("expects each axis once"), value_error);
  CHECK_THROWS_WITH_AS(permute_dims(a, {0, 1}), doctest::Contains("expects 3 axes"), value_error);
  CHECK_THROWS_WITH_AS(swapaxes(a, 0, 3), doctest::Contains("axis 3 is out of range for an array of rank 3"), index_error);
}

TEST_CASE("reshape is a view whenever the strides allow and says so when they do not") {
  auto a = test::iota<int>({4, 6});
  auto r = reshape(a, {2, 2, -1});
  CHECK(r.data() == a.data());
  CHECK(r.shape() == extents{2, 2, 6});
  CHECK(test::walk(r) == test::walk(a));
  // a column slice of a row-major matrix can split its rows
  auto cols = a(all, range(0, 6, 2));  // (4, 3) strides (6, 2)
  auto rc = reshape(cols, {2, 2, 3});
  CHECK(rc.data() == a.data());
  CHECK(test::walk(rc) == test::walk(cols));
  // size-1 axes anywhere are free
  CHECK(test::walk(reshape(a(range(1, 2), all), {6, 1})) == test::walk(a(1, all)));
  // flattening a transpose needs a copy: an error that names the fix, and flatten does it
  CHECK_THROWS_WITH_AS(ravel(transpose(a)), doctest::Contains("without copying; use reshape(x.copy(), shape) or flatten(x)"),
                       shape_error);
  auto f = flatten(transpose(a));
  CHECK(f.shape() == extents{24});
  CHECK(test::walk(f) == test::walk(transpose(a)));
  CHECK(ravel(a).data() == a.data());
  CHECK_THROWS_WITH_AS(reshape(a, {5, -1}), doctest::Contains("cannot reshape an array of shape (4, 6)"), shape_error);
  CHECK_THROWS_AS(reshape(a, {-1, -1}), shape_error);
  auto z = zeros<float>({0, 3});
  CHECK(reshape(z, {3, 0, 5}).shape() == extents{3, 0, 5});
}

TEST_CASE("squeeze, expand_dims and broadcast_to") {
  auto a = test::iota<double>({1, 3, 1, 2});
  CHECK(squeeze(a).shape() == extents{3, 2});
  CHECK(squeeze(a, 2).shape() == extents{1, 3, 2});
  CHECK(test::walk(squeeze(a)) == test::walk(a));
  CHECK_THROWS_WITH_AS(squeeze(a, 1), doctest::Contains("expects axis 1 to have size 1"), value_error);
  auto b = test::iota<double>({3, 2});
  CHECK(expand_dims(b, 0).shape() == extents{1, 3, 2});
  CHECK(expand_dims(b, -1).shape() == extents{3, 2, 1});
  CHECK(expand_dims(b, 1).at(2, 0, 1) == b(2, 1));
  CHECK_THROWS_AS(expand_dims(b, 3), index_error);
  auto bc = broadcast_to(b(all, range(0, 1)), {4, 3, 5});
  CHECK(bc.shape() == extents{4, 3, 5});
  for (index_t i = 0; i < 4; ++i)
    for (index_t j = 0; j < 3; ++j)
      for (index_t k = 0; k < 5; ++k) CHECK(bc.at(i, j, k) == b(j, 0));
  CHECK_THROWS_WITH_AS(broadcast_to(b, {3, 3}), doctest::Contains("axis 1 has size 2 (expected 1 or 3)"), shape_error);
  CHECK_THROWS_AS(broadcast_to(b, {2}), shape_error);
}

TEST_CASE_TEMPLATE("flip reverses with negative strides, on every size", T, float, std::int32_t, std::uint8_t) {
  for (index_t n : test::edge_sizes<T>(false)) {
    auto a = test::iota<T>({2, n});
    auto f = flip(a);
    auto f1 = flip(a, 1);
    auto f0 = flip(a, -2);
    for (index_t i = 0; i < 2; ++i)
      for (index_t j = 0; j < n; ++j) {
        CHECK(f.at(i, j) == a(1 - i, n - 1 - j));
        CHECK(f1.at(i, j) == a(i, n - 1 - j));
        CHECK(f0.at(i, j) == a(1 - i, j));
      }
    // fused through negative strides (SIMD body over a reversed inner axis)
    array<T> twice = f1 + f1;
    for (index_t j = 0; j < n; ++j) CHECK(twice(1, j) == T(a(1, n - 1 - j) + a(1, n - 1 - j)));
  }
}

TEST_CASE("diagonal with offsets and axes; real and imag views of complex arrays") {
  auto a = test::iota<float>({3, 4});
  CHECK(test::walk(diagonal(a)) == std::vector<float>{a(0, 0), a(1, 1), a(2, 2)});
  CHECK(test::walk(diagonal(a, 1)) == std::vector<float>{a(0, 1), a(1, 2), a(2, 3)});
  CHECK(test::walk(diagonal(a, -2)) == std::vector<float>{a(2, 0)});
  CHECK(diagonal(a, 7).size() == 0);
  auto b = test::iota<float>({2, 3, 3});
  auto d = diagonal(b, 0, 1, 2);
  CHECK(d.shape() == extents{2, 3});
  CHECK(d.at(1, 2) == b(1, 2, 2));
  diagonal(a) = 0.0f;  // writable
  CHECK(a(1, 1) == 0.0f);
  CHECK_THROWS_AS(diagonal(arange<float>(3)), shape_error);

  array<std::complex<double>> z{std::complex<double>(1.0, 2.0), std::complex<double>(3.0, -4.0)};
  auto re = real(z);
  auto im = imag(z);
  CHECK(test::walk(re) == std::vector<double>{1.0, 3.0});
  CHECK(test::walk(im) == std::vector<double>{2.0, -4.0});
  im = 0.5;
  CHECK(z(1) == std::complex<double>(3.0, 0.5));
  re = re * 2.0;
  CHECK(z(0) == std::complex<double>(2.0, 0.5));
  // on real expressions real() stays the elementwise function
  // of a temporary complex array: the values (a view would dangle)
  auto rt = real(z.copy());
  static_assert(std::is_same_v<decltype(rt), array<double>>);
  CHECK(test::walk(rt) == std::vector<double>{2.0, 6.0});
  array<double> r = real(arange<double>(3) + 1.0);
  CHECK(test::walk(r) == std::vector<double>{1, 2, 3});
}

TEST_CASE_TEMPLATE("large transposed and permuted reads take the tiled path and stay exact", T, float, double,
                   std::int32_t, std::complex<float>) {
  // inner lengths not multiples of the 32-element tile, row counts that split over threads
  for (auto [m, n] : {std::pair<index_t, index_t>{67, 130}, std::pair<index_t, index_t>{301, 517}}) {
    auto a = test::iota<T>({m, n});
    array<T> t = transpose(a);
    array<T> u = transpose(a) * T(2) + flip(transpose(a), 1);
    bool ok = t.shape() == extents{n, m};
    for (index_t i = 0; i < n && ok; ++i)
      for (index_t j = 0; j < m; ++j) {
        ok = ok && t(i, j) == a(j, i);
        ok = ok && u(i, j) == T(a(j, i) * T(2) + a(m - 1 - j, i));
      }
    CHECK(ok);
  }
  auto b = test::iota<T>({5, 70, 90});
  array<T> p = permute_dims(b, {2, 0, 1});
  bool ok = true;
  for (index_t i = 0; i < 90; ++i)
    for (index_t j = 0; j < 5; ++j)
      for (index_t k = 0; k < 70; ++k) ok = ok && p(i, j, k) == b(j, k, i);
  CHECK(ok);
}
