// The backend-generic autodiff bodies (tests/generic/ad_body.hpp) on the cpu backend.
#define TEST_BACKEND fusor::cpu
#include "generic/ad_body.hpp"

// Forward mode through var, std and norm of dual arrays (cpu: the reductions' closed forms, with
// their derivatives by hand: d var / dx_i = 2 (x_i - mean) / n, d std = d var / (2 std),
// d |x|_p / dx_i = |x_i|^(p-1) sign(x_i) |x|_p^(1-p))
TEST_CASE("forward mode through var, std and norm: their closed-form derivatives") {
  using fusor::array;
  using fusor::ad::dual;
  const array<double> x{1.0, 2.0, 4.0, -3.0}, v{1.0, 0.0, 0.0, 0.0};
  const auto d = fusor::ad::make_dual(x, v);
  const double n = 4, mean = 1.0, var = (0.0 + 1.0 + 9.0 + 16.0) / n;
  const dual<double> dv = fusor::var(d), ds = fusor::std(d), d1 = fusor::var(d, fusor::ddof(1));
  CHECK(dv.value == doctest::Approx(var));
  CHECK(dv.tangent[0] == doctest::Approx(2 * (1.0 - mean) / n));
  CHECK(ds.tangent[0] == doctest::Approx(2 * (1.0 - mean) / n / (2 * std::sqrt(var))));
  CHECK(d1.value == doctest::Approx(var * n / (n - 1)));
  const array<double> x2{3.0, 1.0, 4.0, 1.5}, v2{0.0, 1.0, 0.0, 0.0};
  const auto d2 = fusor::ad::make_dual(x2, v2);
  CHECK(fusor::var(d2).tangent[0] == doctest::Approx(2 * (1.0 - 2.375) / n));
  for (const double p : {2.0, 1.0, 3.0, -1.0, -2.5}) {
    CAPTURE(p);
    double s = 0;
    for (int i = 0; i < 4; ++i) s += std::pow(std::abs(x(i)), p);
    const double np = std::pow(s, 1 / p);
    const dual<double> r = fusor::norm(d, p);
    CHECK(r.value == doctest::Approx(np));
    CHECK(r.tangent[0] == doctest::Approx(std::pow(std::abs(x(0)), p - 1) * std::pow(np, 1 - p)));
  }
  // along an axis: the columns of a 2 x 2, the first one's first element seeded
  const array<dual<double>> m =
      fusor::ad::make_dual(array<double>{{1.0, 2.0}, {3.0, 4.0}}, array<double>{{1.0, 0.0}, {0.0, 0.0}});
  const array<dual<double>> cn = fusor::norm(m, 2.0, 0), cv = fusor::var(m, 0);
  CHECK(cn(0).tangent[0] == doctest::Approx(1.0 / std::sqrt(10.0)));
  CHECK(cn(1).tangent[0] == 0.0);
  CHECK(cv(0).tangent[0] == doctest::Approx(2 * (1.0 - 2.0) / 2));
  // a transposed array of duals: flatten copies it (a view's reshape never copies, for every
  // element type: reshape(x.copy(), shape) as the message says)
  const array<dual<double>> flat = fusor::flatten(fusor::swapaxes(m.view(), 0, 1));
  CHECK(flat(1).value == 3.0);
  CHECK(flat(2).tangent[0] == 0.0);
  CHECK(flat(0).tangent[0] == 1.0);
}
