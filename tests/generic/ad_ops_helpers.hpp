// What the reverse-mode operation bodies (ad_ops_body.hpp, ad_fft_body.hpp) share: random inputs on
// the backend, and the comparisons with central differences (ad::numeric_grad and its complex
// counterpart only evaluate the function on arrays). The includer defines TEST_BACKEND.
#pragma once
#include "../common.hpp"

#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

namespace adops {

using fusor::extents;
using fusor::index_t;
using B = TEST_BACKEND;
template <class T>
using arr = fusor::array<T, B>;
namespace ad = fusor::ad;

inline arr<double> dev(const std::vector<double>& v, const extents& shape) { return test::on<B>(v, shape); }
inline arr<double> dev(const std::vector<double>& v) { return test::on<B>(v); }
inline arr<double> random(const extents& shape, std::uint64_t seed, double lo = -1, double hi = 1) {
  return dev(test::values<double>(shape.numel(), lo, hi, seed), shape);
}
using test::host_values;

template <class X>
inline constexpr bool is_var_arg = ad::detail::holds_vars_v<std::remove_cvref_t<X>>;

/// std of variables or of arrays (an unqualified std(...) would name the namespace).
template <class X, class... A>
auto stdev(const X& x, A... a) {
  if constexpr (is_var_arg<X>) return ad::std(x, a...);
  else return fusor::std(x, a...);
}

/// ad::grad(f)(x) against central differences of f on arrays, element by element.
template <class F>
void against_differences(const char* name, F f, const arr<double>& x, double tol = 1e-7) {
  const std::string label = name;
  CAPTURE(label);
  const auto g = host_values(ad::grad(f)(x));
  const auto ng = host_values(ad::numeric_grad(f, x));
  REQUIRE(g.size() == ng.size());
  index_t bad = 0;
  for (std::size_t i = 0; i < g.size(); ++i)
    if (!test::close(g[i], ng[i], tol) && bad++ == 0) {
      CAPTURE(i);
      CHECK(g[i] == doctest::Approx(ng[i]));
    }
  CHECK(bad == 0);
}

/// ad::hvp(f, x, v) against central differences of the reverse gradient along v.
template <class F>
void hvp_against_differences(const char* name, F f, const arr<double>& x, const arr<double>& v, double tol = 1e-7) {
  const std::string label = name;
  CAPTURE(label);
  const double h = 1e-5;
  const auto hv = host_values(ad::hvp(f, x, v));
  const auto up = host_values(ad::grad(f)(arr<double>(x + h * v)));
  const auto down = host_values(ad::grad(f)(arr<double>(x - h * v)));
  REQUIRE(hv.size() == up.size());
  index_t bad = 0;
  for (std::size_t i = 0; i < hv.size(); ++i) {
    const double want = (up[i] - down[i]) / (2 * h);
    if (!test::close(hv[i], want, tol) && bad++ == 0) {
      CAPTURE(i);
      CHECK(hv[i] == doctest::Approx(want));
    }
  }
  CHECK(bad == 0);
}

using cplx = std::complex<double>;
inline arr<cplx> random_complex(const extents& shape, std::uint64_t seed) {
  const auto re = test::values<double>(shape.numel(), -1, 1, seed), im = test::values<double>(shape.numel(), -1, 1, seed + 1000);
  std::vector<cplx> v(re.size());
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = {re[i], im[i]};
  return test::on<B>(v, shape);
}

/// ad::grad(f)(z) for a complex z against central differences along each real and imaginary
/// part: the adjoint's convention is dL/dRe + i dL/dIm.
template <class F>
void against_differences_complex(const char* name, F f, const arr<cplx>& z, double tol = 1e-7) {
  const std::string label = name;
  CAPTURE(label);
  const auto g = host_values(ad::grad(f)(z));
  const auto hz = host_values(z);
  REQUIRE(g.size() == hz.size());
  const double h = 1e-6;
  auto at = [&](std::size_t i, cplx d) {
    auto v = hz;
    v[i] += d;
    return ad::detail::host_values(f(test::on<B>(v, z.shape())))[0];
  };
  index_t bad = 0;
  for (std::size_t i = 0; i < hz.size(); ++i) {
    const double re = (at(i, {h, 0}) - at(i, {-h, 0})) / (2 * h), im = (at(i, {0, h}) - at(i, {0, -h})) / (2 * h);
    if (!(test::close(g[i].real(), re, tol) && test::close(g[i].imag(), im, tol)) && bad++ == 0) {
      CAPTURE(i);
      CHECK(g[i].real() == doctest::Approx(re));
      CHECK(g[i].imag() == doctest::Approx(im));
    }
  }
  CHECK(bad == 0);
}

}  // namespace adops

using namespace fusor;
using adops::against_differences;
using adops::arr;
using adops::host_values;
using fusor::fft::correlate;  // found with ad::correlate (by argument-dependent lookup) for variables
using fusor::fft::fftconvolve;
