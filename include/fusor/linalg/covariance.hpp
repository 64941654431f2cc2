#pragma once
// np.cov and np.corrcoef: the covariance (and correlation) matrix of variables observed
// together, one GEMM of the centred observations with their conjugate transpose. In the linear
// algebra layer because of that product; the names are NumPy's, in namespace fusor.
#include <algorithm>
#include <cmath>
#include <complex>
#include <string>
#include <type_traits>

#include "../core/construct.hpp"
#include "../core/reduce.hpp"
#include "matmul.hpp"

namespace fusor {

namespace detail::linalg {
/// float64 or complex128 whatever the input (NumPy: result_type(m, float64)).
template <class V>
using cov_t = std::conditional_t<is_complex_v<V>, std::complex<double>, double>;

/// The observations as (variables, observations) rows in the computation type.
template <class C, class X>
array<C, backend_of_t<node_t<X>>> observation_rows(const X& x, bool rowvar, const char* what) {
  using B = backend_of_t<node_t<X>>;
  const array<C, B> a = cast<C>(to_node(x));
  if (a.ndim() > 2)
    throw shape_error(std::string("fusor: ") + what + " takes a 1-d or 2-d array of observations, got shape " +
                      to_string(a.shape()));
  if (a.ndim() < 2) return array<C, B>(atleast_2d(a.view()));
  if (rowvar) return a.copy();
  return array<C, B>(transpose(a.view()));
}
template <class C, class B>
array<C, B> covariance_of_rows(const array<C, B>& rows, int ddof_value) {
  const index_t vars = rows.shape()[0], n = rows.shape()[1];
  array<C, B> centred = rows - mean(rows, 1, true);
  array<C, B> c = zeros<C, B>(extents{vars, vars});
  if (vars > 0 && n > 0) c = matmul(centred, conj(transpose(centred.view())));
  // NumPy clamps n - ddof at 0: a zero divisor gives inf / NaN (with a warning), never a sign flip
  const real_t<C> dof = real_t<C>(std::max<index_t>(n - ddof_value, 0));
  c = c / C(dof);
  return c;
}
template <class C, class B>
array<C, B> correlation_of(array<C, B>&& c) {
  const index_t vars = c.shape()[0];
  const array<C, B> d = diagonal(c.view());
  const array<C, B> s = sqrt(d);
  c = c / reshape(s.view(), extents{vars, 1});
  c = c / reshape(s.view(), extents{1, vars});
  // rounding can leave |r| slightly above 1: clipped, as NumPy does (the real and imaginary parts)
  if constexpr (is_complex_v<C>) {
    using R = real_t<C>;
    array<R, B> re = clip(real(c), R(-1), R(1)), im = clip(imag(c), R(-1), R(1));
    c = cast<C>(re) + cast<C>(im) * C(R(0), R(1));
  } else {
    c = clip(c, real_t<C>(-1), real_t<C>(1));
  }
  return std::move(c);
}
/// A single variable gives a 0-d result, as NumPy's does.
template <class C, class B>
array<C, B> drop_single(array<C, B>&& c) {
  if (c.shape()[0] == 1) return std::move(c).reshape(extents{});
  return std::move(c);
}
}  // namespace detail::linalg

/// np.cov(m, rowvar, ddof): the covariance matrix of the variables in m's rows (its columns with
/// rowvar = false), normalised by n - ddof (ddof(1) by default: NumPy's unbiased estimate;
/// ddof(0) is bias = True). A 0-d array for one variable.
template <expression X>
auto cov(const X& m, bool rowvar = true, ddof d = ddof(1)) {
  using C = detail::linalg::cov_t<value_t<node_t<X>>>;
  auto rows = detail::linalg::observation_rows<C>(m, rowvar, "cov");
  return detail::linalg::drop_single(detail::linalg::covariance_of_rows(rows, d.value));
}
/// np.cov(x, y, rowvar, ddof): the variables of x and of y together (y's rows after x's).
template <expression X, expression Y>
auto cov(const X& x, const Y& y, bool rowvar = true, ddof d = ddof(1)) {
  using C = detail::linalg::cov_t<promote_t<value_t<node_t<X>>, value_t<node_t<Y>>>>;
  const auto a = detail::linalg::observation_rows<C>(x, rowvar, "cov");
  const auto b = detail::linalg::observation_rows<C>(y, rowvar, "cov");
  if (a.shape()[1] != b.shape()[1])
    throw shape_error("fusor: cov needs x and y with the same number of observations, got " + std::to_string(a.shape()[1]) +
                      " and " + std::to_string(b.shape()[1]));
  const auto rows = concatenate(std::vector{a.view(), b.view()}, 0);
  return detail::linalg::drop_single(detail::linalg::covariance_of_rows(rows, d.value));
}
/// np.corrcoef(x[, y], rowvar): Pearson correlation coefficients, cov / sqrt(var_i var_j),
/// clipped to [-1, 1]; 1 (0-d) for one variable.
template <expression X>
auto corrcoef(const X& x, bool rowvar = true) {
  using C = detail::linalg::cov_t<value_t<node_t<X>>>;
  auto rows = detail::linalg::observation_rows<C>(x, rowvar, "corrcoef");
  return detail::linalg::drop_single(detail::linalg::correlation_of(detail::linalg::covariance_of_rows(rows, 1)));
}
template <expression X, expression Y>
auto corrcoef(const X& x, const Y& y, bool rowvar = true) {
  using C = detail::linalg::cov_t<promote_t<value_t<node_t<X>>, value_t<node_t<Y>>>>;
  const auto a = detail::linalg::observation_rows<C>(x, rowvar, "corrcoef");
  const auto b = detail::linalg::observation_rows<C>(y, rowvar, "corrcoef");
  if (a.shape()[1] != b.shape()[1])
    throw shape_error("fusor: corrcoef needs x and y with the same number of observations, got " +
                      std::to_string(a.shape()[1]) + " and " + std::to_string(b.shape()[1]));
  const auto rows = concatenate(std::vector{a.view(), b.view()}, 0);
  return detail::linalg::drop_single(detail::linalg::correlation_of(detail::linalg::covariance_of_rows(rows, 1)));
}

}  // namespace fusor
