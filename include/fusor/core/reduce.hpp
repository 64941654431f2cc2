#pragma once
// Reductions: whole-array (returning a C++ value) and along one axis (returning an array, with
// keepdims). Each consumes an expression directly: sum(a * b) reads a and b once and allocates
// nothing. mean/var/std/norm/dot are built from the primitive reductions; var and std make two
// passes (mean, then squared deviations), as NumPy does, for accuracy.
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "assign.hpp"
#include "operators.hpp"
#include "reduce_ops.hpp"

namespace fusor {

namespace detail {

template <class E>
using reduce_backend_t = backend_of_t<node_t<E>>;

inline extents drop_axis(const extents& s, int axis) {
  extents r;
  for (int k = 0; k < s.size(); ++k)
    if (k != axis) r.push_back(s[k]);
  return r;
}
inline extents keep_axis(const extents& s, int axis) {
  extents r = s;
  r[axis] = 1;
  return r;
}

template <class Op, class R, class N>
auto reduce_along(const N& node, int axis, bool keepdims) {
  using B = backend_of_t<N>;
  const extents s = expr_shape(node);
  if (s.size() == 0)
    throw index_error("fusor: cannot reduce a 0-dimensional expression along axis " + std::to_string(axis) +
                      " (expected an expression of rank >= 1)");
  const int ax = normalize_axis(axis, s.size());
  const extents out_shape = drop_axis(s, ax);
  array<R, B> out(keepdims ? keep_axis(s, ax) : out_shape);
  const leaf<R, B> dst{out.data(), out_shape, contiguous_strides(out_shape)};
  if (s[ax] == 0) {
    // NumPy raises even when the result would be empty too (shape (0, 0)): the axis decides
    if constexpr (std::is_same_v<Op, max_op> || std::is_same_v<Op, min_op>)
      throw value_error("fusor: max/min along an axis of length 0 is undefined (no identity); got shape " +
                        to_string(s) + " and axis " + std::to_string(axis));
    assign_expr(dst, scalar_expr<R>{convert_element<R>(Op::template identity<typename Op::template wide<value_t<N>>>())},
                false);
  } else {
    executor<B>::template reduce_axis<Op>(dst, node, ax);
  }
  return out;
}

template <class N>
void require_nonempty(const N& node, const char* what) {
  const extents s = expr_shape(node);
  if (s.numel() == 0)
    throw value_error(std::string("fusor: ") + what + " of an empty array is undefined (no identity); got shape " +
                      to_string(s));
}

// (types outside NumPy's table, such as dual numbers, keep their type: they carry more than a value)
template <class V>
using mean_result_t = std::conditional_t<std::is_floating_point_v<V> || small_float_v<V> || is_complex_v<V> ||
                                             element_traits<V>::kind == element_kind::other,
                                         V, double>;

// float16 and bfloat16 statistics keep the 16-bit type (NumPy's dtype) but are computed in float32
// on the widened values and rounded once at the end (PyTorch's float32 arithmetic for them): a
// float16 sum of squares would overflow past deviations of 256, and a rounded mean would bias
// the deviations. So mean, var, std and their NaN and weighted forms call their float32 selves.
template <class V>
inline constexpr bool stats_in_float32 = small_float_v<V>;
/// The float32 result r (a value or an array) rounded once to the 16-bit type V.
template <class V, class R>
auto rounded_stat(const R& r) {
  if constexpr (is_expression_v<R>) return r.template astype<V>();
  else return convert_element<V>(r);
}

template <class V>
constexpr void require_real() {
  static_assert(!is_complex_v<V>,
                "fusor: max, min, argmax and argmin are not defined for complex values; reduce abs(x) or real(x)");
}

}  // namespace detail

namespace detail {
// Whole-array reduction: Op's wide accumulator over every element of e, in one pass.
template <class Op, class E>
auto reduce_whole(const E& e) {
  const auto node = to_node(e);
  return executor<backend_of_t<decltype(node)>>::template reduce<Op>(node);
}
// max/min/argmax/argmin of an empty array have no identity.
template <class E>
auto nonempty_node(const E& e, const char* what) {
  const auto node = to_node(e);
  require_real<value_t<decltype(node)>>();
  require_nonempty(node, what);
  return node;
}
}  // namespace detail

// ---- sum / prod ------------------------------------------------------------------------------------
template <expression E>
auto sum(const E& e) {
  return convert_element<detail::sum_result_t<value_t<node_t<E>>>>(detail::reduce_whole<detail::sum_op>(e));
}
template <expression E>
auto sum(const E& e, int axis, bool keepdims = false) {
  return detail::reduce_along<detail::sum_op, detail::sum_result_t<value_t<node_t<E>>>>(detail::to_node(e), axis, keepdims);
}
template <expression E>
auto prod(const E& e) {
  return convert_element<detail::sum_result_t<value_t<node_t<E>>>>(detail::reduce_whole<detail::prod_op>(e));
}
template <expression E>
auto prod(const E& e, int axis, bool keepdims = false) {
  return detail::reduce_along<detail::prod_op, detail::sum_result_t<value_t<node_t<E>>>>(detail::to_node(e), axis, keepdims);
}

// ---- max / min ---------------------------------------------------------------------------------------
template <expression E>
auto max(const E& e) {
  return detail::reduce_whole<detail::max_op>(detail::nonempty_node(e, "max"));
}
template <expression E>
auto max(const E& e, int axis, bool keepdims = false) {
  detail::require_real<value_t<node_t<E>>>();
  return detail::reduce_along<detail::max_op, value_t<node_t<E>>>(detail::to_node(e), axis, keepdims);
}
template <expression E>
auto min(const E& e) {
  return detail::reduce_whole<detail::min_op>(detail::nonempty_node(e, "min"));
}
template <expression E>
auto min(const E& e, int axis, bool keepdims = false) {
  detail::require_real<value_t<node_t<E>>>();
  return detail::reduce_along<detail::min_op, value_t<node_t<E>>>(detail::to_node(e), axis, keepdims);
}

// ---- any / all ---------------------------------------------------------------------------------------
template <expression E>
bool any(const E& e) {
  return detail::reduce_whole<detail::any_op>(e);
}
template <expression E>
auto any(const E& e, int axis, bool keepdims = false) {
  return detail::reduce_along<detail::any_op, bool>(detail::to_node(e), axis, keepdims);
}
namespace detail {
// `all` is an object rather than a function so that the same name can also stand for "the
// whole axis" in slicing, a(all, 0), as in xtensor; called, it is the reduction.
struct all_fn {
  template <expression E>
  bool operator()(const E& e) const {
    return detail::reduce_whole<detail::all_op>(e);
  }
  template <expression E>
  auto operator()(const E& e, int axis, bool keepdims = false) const {
    return detail::reduce_along<detail::all_op, bool>(detail::to_node(e), axis, keepdims);
  }
};
}  // namespace detail
/// all(e): whether every element is nonzero (whole or along an axis). In a subscript,
/// a(all, 2), it selects a whole axis.
inline constexpr detail::all_fn all{};

// ---- argmax / argmin (first occurrence; a NaN counts as the extreme, as in NumPy) ---------------
template <expression E>
std::int64_t argmax(const E& e) {
  const auto node = detail::nonempty_node(e, "argmax");
  return executor<backend_of_t<decltype(node)>>::template arg_extreme<true>(node);
}
template <expression E>
std::int64_t argmin(const E& e) {
  const auto node = detail::nonempty_node(e, "argmin");
  return executor<backend_of_t<decltype(node)>>::template arg_extreme<false>(node);
}
namespace detail {
template <bool Max, class N>
auto arg_along(const N& node, int axis, bool keepdims) {
  using B = backend_of_t<N>;
  require_real<value_t<N>>();
  const extents s = expr_shape(node);
  if (s.size() == 0)
    throw index_error("fusor: cannot take argmax/argmin of a 0-dimensional expression along axis " +
                      std::to_string(axis));
  const int ax = normalize_axis(axis, s.size());
  const extents out_shape = drop_axis(s, ax);
  if (s[ax] == 0)  // even when the result is empty (NumPy: shape (0, 0) raises, (3, 0) along 0 does not)
    throw value_error("fusor: argmax/argmin along an axis of length 0 is undefined; got shape " + to_string(s) +
                      " and axis " + std::to_string(axis));
  array<std::int64_t, B> out(keepdims ? keep_axis(s, ax) : out_shape);
  if (out_shape.numel() == 0) return out;
  executor<B>::template arg_extreme_axis<Max>(leaf<std::int64_t, B>{out.data(), out_shape, contiguous_strides(out_shape)},
                                              node, ax);
  return out;
}
}  // namespace detail
template <expression E>
auto argmax(const E& e, int axis, bool keepdims = false) {
  return detail::arg_along<true>(detail::to_node(e), axis, keepdims);
}
template <expression E>
auto argmin(const E& e, int axis, bool keepdims = false) {
  return detail::arg_along<false>(detail::to_node(e), axis, keepdims);
}

// ---- mean / var / std ----------------------------------------------------------------------------
/// Delta degrees of freedom for var and std: var(x, ddof(1)). A distinct type, so that
/// var(x, 1) means "along axis 1", as np.var(x, 1) does.
struct ddof {
  explicit constexpr ddof(int v) : value(v) {}
  int value;
};

/// Mean of all elements (float64 for integer input); NaN for an empty array, as in NumPy.
template <expression E>
auto mean(const E& e) {
  auto node = detail::to_node(e);
  using V = value_t<decltype(node)>;
  using M = detail::mean_result_t<V>;
  const index_t n = expr_shape(node).numel();
  const auto total = detail::reduce_whole<detail::mean_sum_op>(node);
  if (n == 0) return M(std::numeric_limits<real_t<M>>::quiet_NaN());
  if constexpr (element_traits<M>::kind == element_kind::other) return convert_element<M>(total / double(n));
  else return convert_element<M>(total / static_cast<real_t<std::remove_const_t<decltype(total)>>>(n));
}
template <expression E>
auto mean(const E& e, int axis, bool keepdims = false) {
  auto node = detail::to_node(e);
  using M = detail::mean_result_t<value_t<decltype(node)>>;
  if constexpr (detail::stats_in_float32<M>) return detail::rounded_stat<M>(mean(cast<float>(node), axis, keepdims));
  else {
    const extents s = expr_shape(node);
    auto out = detail::reduce_along<detail::mean_sum_op, M>(node, axis, keepdims);
    const index_t count = s[normalize_axis(axis, s.size())];
    if constexpr (element_traits<M>::kind == element_kind::other) out /= double(count);
    else out /= static_cast<real_t<M>>(count);
    return out;
  }
}

namespace detail {
// n - ddof, clamped at 0 so that too large a ddof gives inf/NaN as in NumPy, not a negative variance.
template <class R>
R dof(index_t n, int d) {
  return static_cast<R>(std::max<index_t>(n - d, 0));
}
}  // namespace detail

/// Variance of all elements (two passes: mean, then squared deviations).
template <expression E>
auto var(const E& e, ddof d = ddof(0)) {
  auto node = detail::to_node(e);
  using M = detail::mean_result_t<value_t<decltype(node)>>;
  if constexpr (detail::stats_in_float32<M>) return detail::rounded_stat<M>(var(cast<float>(node), d));
  else {
    using R = real_t<M>;
    const index_t n = expr_shape(node).numel();
    const M m = mean(node);
    const auto dev = cast<M>(node) - scalar_expr<M>{m};  // (a node: a dual mean is no plain scalar)
    R ss;
    if constexpr (is_complex_v<M>) ss = sum(square(abs(dev)));
    else ss = sum(square(dev));
    return ss / detail::dof<R>(n, d.value);
  }
}
/// Variance along one axis.
template <expression E>
auto var(const E& e, int axis, ddof d, bool keepdims = false) {
  auto node = detail::to_node(e);
  using M = detail::mean_result_t<value_t<decltype(node)>>;
  if constexpr (detail::stats_in_float32<M>) return detail::rounded_stat<M>(var(cast<float>(node), axis, d, keepdims));
  else {
    using R = real_t<M>;
    const extents s = expr_shape(node);
    const int ax = normalize_axis(axis, s.size());
    const auto m = mean(node, ax, true);
    const auto dev = cast<M>(node) - m;
    array<R, detail::reduce_backend_t<E>> out;
    if constexpr (is_complex_v<M>) out = sum(square(abs(dev)), ax, keepdims);
    else out = sum(square(dev), ax, keepdims);
    if constexpr (element_traits<R>::kind == element_kind::other) out /= double(std::max<index_t>(s[ax] - d.value, 0));
    else out /= detail::dof<R>(s[ax], d.value);
    return out;
  }
}
template <expression E>
auto var(const E& e, int axis, bool keepdims = false) {
  return var(e, axis, ddof(0), keepdims);
}
template <expression E>
auto std(const E& e, ddof d = ddof(0)) {
  using std::sqrt;
  using V = value_t<node_t<E>>;
  if constexpr (detail::stats_in_float32<V>) return detail::rounded_stat<V>(std(cast<float>(detail::to_node(e)), d));
  else return sqrt(var(e, d));
}
template <expression E>
auto std(const E& e, int axis, ddof d, bool keepdims = false) {
  using V = value_t<node_t<E>>;
  if constexpr (detail::stats_in_float32<V>) {
    return detail::rounded_stat<V>(std(cast<float>(detail::to_node(e)), axis, d, keepdims));
  } else {
    auto v = var(e, axis, d, keepdims);
    v = sqrt(v);
    return v;
  }
}
template <expression E>
auto std(const E& e, int axis, bool keepdims = false) {
  return fusor::std(e, axis, ddof(0), keepdims);
}

// ---- norms and dot ----------------------------------------------------------------------------------
namespace detail {
// |x| in the norm's floating type; reals are converted first, so abs(INT_MIN) cannot wrap.
template <class R, class N>
auto magnitude(const N& node) {
  if constexpr (is_complex_v<value_t<N>>) return cast<R>(abs(node));
  else return abs(cast<R>(node));
}
}  // namespace detail
namespace detail {
// float32 for float32, complex64 and small integers, float64 for the others; a type outside
// NumPy's table (a dual number: forward mode through a norm) keeps its type
template <class V>
using norm_result_t =
    std::conditional_t<element_traits<V>::kind == element_kind::other, V,
                       std::conditional_t<std::is_same_v<to_float_t<real_t<V>>, float>, float, double>>;
// the exponent of a p-norm: a plain number of the norm's type (a double for a dual)
template <class R>
using norm_power_t = std::conditional_t<element_traits<R>::kind == element_kind::other, double, R>;
inline void check_norm_order(double ord) {
  if (std::isnan(ord)) throw value_error("fusor: norm order must be a number or +-inf, got nan");
}
}  // namespace detail
/// Vector norm of all elements: ord = 2 (default), 1, inf, -inf, 0 (count of non-zeros) or any
/// other p, negative ones included: (sum |x|^p)^(1/p), as numpy.linalg.norm on a flattened array
/// (a zero element makes a negative order's norm 0). int32/int64 are measured in float64,
/// uint8/bool in float32.
template <expression E>
auto norm(const E& e, double ord = 2) {
  detail::check_norm_order(ord);
  auto node = detail::to_node(e);
  using Rw = detail::norm_result_t<value_t<decltype(node)>>;
  const auto a = detail::magnitude<Rw>(node);
  if (expr_shape(node).numel() == 0) return Rw(0);
  using std::pow;
  using std::sqrt;  // (and a dual's own, found by argument)
  if (ord == 2) return static_cast<Rw>(sqrt(sum(square(a))));
  if (ord == 1) return static_cast<Rw>(sum(a));
  if (ord == std::numeric_limits<double>::infinity()) return max(a);
  if (ord == -std::numeric_limits<double>::infinity()) return min(a);
  if (ord == 0) return static_cast<Rw>(sum(node != 0));
  using P = detail::norm_power_t<Rw>;
  return static_cast<Rw>(pow(sum(pow(a, P(ord))), Rw(1.0 / ord)));
}
/// Norm along one axis (same orders).
template <expression E>
auto norm(const E& e, double ord, int axis, bool keepdims = false) {
  detail::check_norm_order(ord);
  auto node = detail::to_node(e);
  using Rw = detail::norm_result_t<value_t<decltype(node)>>;
  using B = detail::reduce_backend_t<E>;
  const auto a = detail::magnitude<Rw>(node);
  array<Rw, B> out;
  if (ord == 2) {
    out = sum(square(a), axis, keepdims);
    out = sqrt(out);
  } else if (ord == 1) {
    out = sum(a, axis, keepdims);
  } else if (ord == std::numeric_limits<double>::infinity()) {
    out = max(a, axis, keepdims);
  } else if (ord == -std::numeric_limits<double>::infinity()) {
    out = min(a, axis, keepdims);
  } else if (ord == 0) {
    out = cast<Rw>(sum(node != 0, axis, keepdims));
  } else {
    using P = detail::norm_power_t<Rw>;
    out = sum(pow(a, P(ord)), axis, keepdims);
    out = pow(out, P(1.0 / ord));
  }
  return out;
}
// dot (NumPy's, for any ranks) is in linalg/products.hpp: a 1-d . 1-d product there is the same
// single fused pass as sum(a * b), returned as a 0-d array.

}  // namespace fusor
