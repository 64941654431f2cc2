// xtensor interop: zero-copy views both ways, and xtensor as an independent oracle for fused
// expressions over broadcast shapes.
#include "common.hpp"

#include <xtensor/xarray.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xview.hpp>

#include <fusor/interop/xtensor.hpp>

using namespace fusor;

TEST_CASE("as_xtensor adapts without copying, in both directions of writes") {
  array<double> a = arange<double>(6).reshape({2, 3});
  auto x = as_xtensor(a);
  CHECK(x.data() == a.data());
  CHECK(x.shape()[0] == 2);
  CHECK(x(1, 2) == 5);
  x(0, 1) = 42;
  CHECK(a(0, 1) == 42);
  a(1, 0) = -1;
  CHECK(x(1, 0) == -1);
  // a strided fusor view adapts with its strides
  array_view<double> col(a.data() + 2, {2}, {3});
  auto xc = as_xtensor(col);
  CHECK(xc(1) == 5);
  array_view<double> reversed(a.data() + 5, {6}, {-1});
  CHECK_THROWS_WITH_AS(as_xtensor(reversed), doctest::Contains("needs non-negative strides"), value_error);
}

TEST_CASE("from_xtensor evaluates any xtensor expression into a fusor array") {
  xt::xarray<float> x = {{1, 2, 3}, {4, 5, 6}};
  auto a = from_xtensor(x * 2.f + 1.f);
  static_assert(std::is_same_v<decltype(a), array<float>>);
  CHECK(a.shape() == extents{2, 3});
  CHECK(a(1, 2) == 13);
  auto t = from_xtensor(xt::transpose(x));
  CHECK(t.shape() == extents{3, 2});
  CHECK(t(2, 1) == 6);
}

TEST_CASE("fused broadcast expressions agree with xtensor") {
  random::generator g(5);
  auto a = random::uniform<double>(g, {4, 1, 6}, -2, 2);
  auto b = random::uniform<double>(g, {5, 1}, 0.5, 2);
  auto c = random::uniform<double>(g, {6}, -1, 1);
  array<double> r = where(a > c, exp(a) * b, sqrt(b) - c) + maximum(a, c);
  auto xa = as_xtensor(a), xb = as_xtensor(b), xc = as_xtensor(c);
  xt::xarray<double> xr = xt::where(xa > xc, xt::exp(xa) * xb, xt::sqrt(xb) - xc) + xt::maximum(xa, xc);
  REQUIRE(r.shape() == extents{4, 5, 6});
  for (std::size_t k = 0; k < xr.size(); ++k) CHECK(r.data()[k] == doctest::Approx(xr.data()[k]).epsilon(1e-14));
}
