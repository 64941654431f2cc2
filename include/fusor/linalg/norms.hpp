#pragma once
// Matrix norms over two axes (np.linalg.matrix_norm / np.linalg.norm with a 2-tuple axis):
// Frobenius, and the induced 1- and inf-norms (max / min of column or row sums of |a|). Built
// from the core reductions, so an expression operand is read in one pass by the first one.
// The spectral (2, -2) and nuclear norms read the singular values (linalg::svdvals).
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>

#include "../core/reduce.hpp"
#include "decompositions.hpp"

namespace fusor {

namespace detail::linalg {

template <class N>
using norm_real_t = std::conditional_t<std::is_same_v<to_float_t<real_t<value_t<N>>>, float>, float, double>;

inline std::pair<int, int> norm_axes(const std::array<int, 2>& axes, const extents& s) {
  if (s.size() < 2)
    throw value_error("fusor: matrix_norm needs an array of rank >= 2, got shape " + to_string(s));
  const int a0 = normalize_axis(axes[0], s.size()), a1 = normalize_axis(axes[1], s.size());
  if (a0 == a1)
    throw value_error("fusor: matrix_norm needs two different axes, got " + std::to_string(axes[0]) + " and " +
                      std::to_string(axes[1]) + " for shape " + to_string(s));
  return {a0, a1};
}

template <class R, class B>
array<R, B> keep_norm_dims(array<R, B>&& r, const extents& s, int a0, int a1, bool keepdims) {
  if (!keepdims) return std::move(r);
  extents k = s;
  k[a0] = 1;
  k[a1] = 1;
  return std::move(r).reshape(k);
}

// ord = +-1: extreme column sum (sum over rows a0); ord = +-inf: extreme row sum (sum over a1).
template <class N>
auto induced_norm(const N& node, int a0, int a1, bool max_, bool columns, bool keepdims) {
  using R = norm_real_t<N>;
  const extents s = expr_shape(node);
  const auto mag = magnitude<R>(node);
  const int summed = columns ? a0 : a1, other = columns ? a1 : a0;
  const auto sums = sum(mag, summed);
  const int o = other > summed ? other - 1 : other;
  array<R, backend_of_t<N>> r = max_ ? max(sums, o) : min(sums, o);
  return keep_norm_dims(std::move(r), s, a0, a1, keepdims);
}

/// The singular values of the (a0, a1) planes, the two axes moved last: (other axes..., k).
template <class R, class N>
auto plane_singular_values(const N& node, int a0, int a1) {
  const array<value_t<N>, backend_of_t<N>> planes(moveaxis(eval(node), extents{a0, a1}, extents{-2, -1}));
  return array<R, backend_of_t<N>>(cast<R>(fusor::linalg::svdvals(planes)));
}
template <class R, class B>
array<R, B> reduce_singular_values(const array<R, B>& s, int how) {  // how: 1 max, -1 min, 0 sum
  const int last = s.ndim() - 1;
  if (s.shape()[last] == 0) {
    if (how == 0) return zeros<R, B>(detail::drop_axis(s.shape(), last));
    throw value_error("fusor: matrix_norm: the spectral norm of an empty matrix is undefined (no singular values)");
  }
  if (how > 0) return max(s, last);
  if (how < 0) return min(s, last);
  return sum(s, last);
}

}  // namespace detail::linalg

/// Matrix norm over axes (a0, a1) (rows, columns; default the last two): "fro" (default). An
/// array of the other axes (0-d for a matrix; .item() reads it), float32 for float32/complex64
/// and small integers, else float64. "nuc": the sum of the singular values (an SVD per matrix).
template <expression E>
auto matrix_norm(const E& e, std::string_view ord = "fro", std::array<int, 2> axes = {-2, -1},
                 bool keepdims = false) {
  using N = node_t<E>;
  using R = detail::linalg::norm_real_t<N>;
  const N node = detail::to_node(e);
  const extents s = expr_shape(node);
  const auto [a0, a1] = detail::linalg::norm_axes(axes, s);
  if (ord == "fro" || ord == "f") {
    const auto sq = square(detail::magnitude<R>(node));
    const int hi = std::max(a0, a1), lo = std::min(a0, a1);
    array<R, backend_of_t<N>> r = sum(sum(sq, hi), lo);
    r = sqrt(r);
    return detail::linalg::keep_norm_dims(std::move(r), s, a0, a1, keepdims);
  }
  if (ord == "nuc") {
    auto r = detail::linalg::reduce_singular_values(detail::linalg::plane_singular_values<R>(node, a0, a1), 0);
    return detail::linalg::keep_norm_dims(std::move(r), s, a0, a1, keepdims);
  }
  throw value_error("fusor: matrix_norm: unknown order \"" + std::string(ord) +
                    "\" (expected \"fro\", \"nuc\" or a number: 2, -2, 1, -1, inf, -inf)");
}
/// Matrix norm with a numeric order: 1 / -1 (largest / smallest column sum of |a|), inf / -inf
/// (largest / smallest row sum), 2 / -2 (largest / smallest singular value: an SVD per matrix).
template <expression E>
auto matrix_norm(const E& e, double ord, std::array<int, 2> axes = {-2, -1}, bool keepdims = false) {
  using N = node_t<E>;
  const N node = detail::to_node(e);
  const extents s = expr_shape(node);
  const auto [a0, a1] = detail::linalg::norm_axes(axes, s);
  constexpr double inf = std::numeric_limits<double>::infinity();
  if (ord == 1 || ord == -1) return detail::linalg::induced_norm(node, a0, a1, ord > 0, true, keepdims);
  if (ord == inf || ord == -inf) return detail::linalg::induced_norm(node, a0, a1, ord > 0, false, keepdims);
  if (ord == 2 || ord == -2) {
    using R = detail::linalg::norm_real_t<N>;
    auto r = detail::linalg::reduce_singular_values(detail::linalg::plane_singular_values<R>(node, a0, a1), ord > 0 ? 1 : -1);
    return detail::linalg::keep_norm_dims(std::move(r), s, a0, a1, keepdims);
  }
  throw value_error("fusor: matrix_norm: unsupported order " + std::to_string(ord) +
                    " (expected \"fro\", \"nuc\", 2, -2, 1, -1, inf or -inf)");
}

}  // namespace fusor
