// Evaluation: NumPy broadcasting checked at assignment, the alias check, noalias, assignment
// semantics, thread-count independence, and the proof that a statement fuses into one pass
// with no allocation besides its result (counters compiled into the test build only).
#include "common.hpp"

#include <string>

using namespace fusor;
using test::index_t;

TEST_CASE("broadcasting follows NumPy, including size-1 and size-0 axes") {
  array<double> m = arange<double>(12).reshape({3, 4});
  array<double> row{10, 20, 30, 40};
  array<double> col = arange<double>(3).reshape({3, 1});
  array<double> r = m + row * col;
  REQUIRE(r.shape() == extents{3, 4});
  for (index_t i = 0; i < 3; ++i)
    for (index_t j = 0; j < 4; ++j) CHECK(r(i, j) == double(i * 4 + j) + double((j + 1) * 10) * double(i));
  // rank extension on the left and a scalar
  array<double> s = ones<double>({1, 1, 1}) + m;
  CHECK(s.shape() == extents{1, 3, 4});
  CHECK(s(0, 2, 3) == 12);
  // outer product by broadcasting
  array<double> o = col * array<double>{1, 2};
  CHECK(o.shape() == extents{3, 2});
  CHECK(o(2, 1) == 4);
  // size-0 axes broadcast against 1 and give empty results
  array<double> e = zeros<double>({0, 4}) + row;
  CHECK(e.shape() == extents{0, 4});
  array<double> e2 = zeros<double>({3, 0}) * col;
  CHECK(e2.shape() == extents{3, 0});
  CHECK_THROWS_WITH_AS((void)array<double>(zeros<double>({0, 4}) + zeros<double>({2, 4})),
                       doctest::Contains("cannot broadcast shapes (0, 4) and (2, 4)"), shape_error);
}

TEST_CASE("shape errors name both shapes") {
  array<float> a = zeros<float>({3, 4}), b = zeros<float>({5});
  CHECK_THROWS_WITH_AS((void)eval(a + b),
                       "fusor: cannot broadcast shapes (3, 4) and (5,): axis -1 has sizes 4 and 5 (expected equal sizes or 1)",
                       shape_error);
  array<float> d = zeros<float>({4});
  CHECK_THROWS_WITH_AS(assign(d, a * 2),
                       "fusor: cannot assign an expression of shape (3, 4) to an array of shape (4,) (expected a shape "
                       "that broadcasts to the destination)",
                       shape_error);
  CHECK_THROWS_AS(d.view() = a, shape_error);
}

TEST_CASE("array assignment reuses the buffer when shapes match and reallocates otherwise") {
  array<float> a = arange<float>(8), b = ones<float>({8});
  array<float> d = zeros<float>({8});
  const float* p = d.data();
  d = a + b;
  CHECK(d.data() == p);
  CHECK(d(7) == 8);
  d = a.reshape({2, 4}) * 2;
  CHECK(d.shape() == extents{2, 4});
  CHECK(d(1, 3) == 14);
  d += 1;
  CHECK(d(1, 3) == 15);
  d *= d;
  CHECK(d(0, 1) == 9);
  array<float> row = zeros<float>({4});
  row.view() = array<float>{1, 2, 3, 4};
  assign(d, row);  // broadcast into d
  CHECK(d(1, 2) == 3);
}

TEST_CASE("overlapping reads go through a temporary; same-position reads do not") {
  // a[1:] = a[:-1] + 1 must read the old values (NumPy semantics)
  array<int> a = arange<int>(10);
  array_view<int> tail(a.data() + 1, {9}), head(a.data(), {9});
  instrument::reset();
  tail = head + 1;
  CHECK(instrument::allocations == 1);  // the temporary
  for (int i = 0; i < 10; ++i) CHECK(a(i) == (i == 0 ? 0 : i));
  // reversed view onto the same memory (a = a[::-1])
  array<int> r = arange<int>(6);
  array_view<int> rev(r.data() + 5, {6}, {-1});
  r.view() = rev * 1;
  for (int i = 0; i < 6; ++i) CHECK(r(i) == 5 - i);
  // element-by-element self reads need no temporary
  array<double> x = arange<double>(100);
  instrument::reset();
  x = x * x + x;
  CHECK(instrument::allocations == 0);
  CHECK(x(9) == 90);
  // noalias skips the check (caller's promise); here the result is visibly different
  array<int> n = arange<int>(10);
  array_view<int> nt(n.data() + 1, {9}), nh(n.data(), {9});
  instrument::reset();
  noalias(nt) = nh + 1;
  CHECK(instrument::allocations == 0);
  CHECK(n(9) == 9);  // the running update 0,1,2,... happens to agree; the point is no temporary
}

TEST_CASE("a fused statement makes one pass and allocates only its result") {
  const index_t n = 100'003;
  array<float> a = arange<float>(float(n)) * 1e-4f, b = ones<float>({n}), c = full<float>({n}, 0.5);
  instrument::reset();
  array<float> d = a * b + c * sin(a);
  CHECK(instrument::allocations == 1);
  CHECK(instrument::passes == 1);
  for (index_t i = 0; i < n; i += 997) CHECK(d(i) == doctest::Approx(a(i) * b(i) + c(i) * std::sin(a(i))).epsilon(1e-6));

  instrument::reset();
  d = sqrt(abs(a * b - c) + 1) * exp(-a) / (1 + square(tanh(c - a)));  // six levels deep
  CHECK(instrument::allocations == 0);
  CHECK(instrument::passes == 1);
  for (index_t i = 0; i < n; i += 997) {
    const float x = a(i), y = b(i), z = c(i);
    CHECK(d(i) == doctest::Approx(std::sqrt(std::abs(x * y - z) + 1) * std::exp(-x) /
                                  (1 + std::tanh(z - x) * std::tanh(z - x)))
                      .epsilon(1e-5));
  }

  instrument::reset();
  const float s = sum(a * b);
  CHECK(instrument::allocations == 0);
  CHECK(instrument::passes == 1);
  double ref = 0;
  for (index_t i = 0; i < n; ++i) ref += double(a(i)) * double(b(i));
  CHECK(s == doctest::Approx(ref).epsilon(1e-6));
}

TEST_CASE("results do not depend on the thread count") {
  const index_t n = 3'000'017;
  random::generator g(7);
  auto x = random::uniform<double>(g, {n}, -1, 1);
  auto m = random::uniform<float>(g, {1001, 997});
  set_parallel_threshold(1000);
  set_num_threads(1);
  array<double> y1 = exp(x) * 2 + x;
  array_view<float> mt(m.data(), {997, 1001}, {1, 997});  // transposed: strided reads
  array<float> t1 = m.reshape({997, 1001}) * mt;
  const double s1 = sum(x);
  set_num_threads(2);
  array<double> y2 = exp(x) * 2 + x;
  array<float> t2 = m.reshape({997, 1001}) * mt;
  const double s2 = sum(x);
  set_num_threads(0);
  set_parallel_threshold(index_t(1) << 17);
  CHECK(all(y1 == y2));
  CHECK(all(t1 == t2));
  CHECK(s1 == doctest::Approx(s2).epsilon(1e-12));
}

TEST_CASE("broadcast and strided statements take the row path and agree with a plain loop") {
  for (index_t cols : {index_t(1), index_t(7), index_t(8), index_t(9), index_t(33)}) {
    const index_t rows = 5;
    auto mv = test::values<float>(rows * cols, -3, 3, 5);
    array<float> m(mv, {rows, cols});
    array<float> rowv = test::make(test::values<float>(cols, -1, 1, 9));
    array<float> colv = test::make(test::values<float>(rows, -1, 1, 13)).reshape({rows, 1});
    array<float> r = where(m > rowv, m * colv, rowv - colv);
    for (index_t i = 0; i < rows; ++i)
      for (index_t j = 0; j < cols; ++j) {
        const float x = m(i, j), rv = rowv(j), cv = colv(i, 0);
        CHECK(r(i, j) == (x > rv ? x * cv : rv - cv));
      }
    // transposed read through a strided view into a contiguous destination
    array_view<float> mt(m.data(), {cols, rows}, {1, cols});
    array<float> t = mt + 0;
    for (index_t i = 0; i < cols; ++i)
      for (index_t j = 0; j < rows; ++j) CHECK(t(i, j) == m(j, i));
  }
}
