#pragma once
// Operators and named elementwise functions. Each builds a node and runs nothing: work happens
// when the expression is assigned, reduced or eval()-ed, in one fused pass.
//
// Misuse that the types reveal fails to compile here, with a sentence: mixing backends,
// arithmetic on two bool operands, ordering or rounding complex numbers, bitwise ops on floats.
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "error.hpp"

#include "expr/nodes.hpp"
#include "functors.hpp"
#include "reduce_ops.hpp"

namespace fusor {

namespace detail {

template <class A, class B>
concept operand_pair = (expression<A> && (expression<B> || scalar<B>)) || (scalar<A> && expression<B>);

// A scalar operand becomes a scalar_expr of the type NumPy's weak-scalar rule gives it; the
// other operand (an expression) decides.
template <class X, class Other>
auto operand_node(const X& x) {
  if constexpr (expression<X>) return to_node(x);
  else {
    static_assert(expression<Other>, "fusor: at least one operand must be a fusor array or expression");
    using T = weak_result_t<value_t<Other>, X>;
    if constexpr (integer<X> && integer<T>) {
      if (!std::in_range<T>(x))
        throw value_error("fusor: the scalar " + std::to_string(x) + " does not fit in " +
                          std::string(dtype_name<T>()) +
                          ", the array's type (NumPy 2 raises too); convert the array first, e.g. astype<std::int64_t>()");
    }
    if constexpr (small_float_v<X>) return scalar_expr<T>{convert_element<T>(x)};  // (to complex too)
    else return scalar_expr<T>{static_cast<T>(x)};
  }
}

template <class F, class... V>
constexpr void check_operand_types() {
  using C = typename op_traits<F, V...>::compute;
  static_assert(!(F::bool_arithmetic_error && (std::is_same_v<V, bool> && ...)),
                "fusor: arithmetic (+ - * / % sign) on bool operands is not allowed (NumPy rejects - and "
                "gives logical results for + and *); say what you mean with logical_and / logical_or / "
                "logical_xor, or convert with astype<std::int32_t>() first");
  static_assert(!(F::real_only && is_complex_v<C>),
                "fusor: this operation is only defined for real numbers (ordering, maximum/minimum, "
                "clip, rounding, sign, %, cbrt/exp2/expm1/log2/log1p, atan2) and an operand is complex; "
                "apply real(), imag() or abs() first");
  static_assert(!(F::integral_only && !std::is_integral_v<C>),
                "fusor: bitwise operations (& | ^ ~ << >>) need integer or bool operands; "
                "use logical_and / logical_or for conditions, or astype<std::int64_t>() for numbers");
  static_assert(!(F::integer_math_only && !integer<C>),
                "fusor: gcd and lcm need integer operands (not bool, floating or complex); "
                "convert with astype<std::int64_t>() first");
}

template <class... B>
constexpr bool backends_agree() {
  using list = std::tuple<B...>;
  if constexpr (sizeof...(B) == 1) return true;
  else if constexpr (sizeof...(B) == 2)
    return same_backend<std::tuple_element_t<0, list>, std::tuple_element_t<1, list>>;
  else
    return same_backend<std::tuple_element_t<0, list>, std::tuple_element_t<1, list>> &&
           same_backend<std::tuple_element_t<0, list>, std::tuple_element_t<2, list>> &&
           same_backend<std::tuple_element_t<1, list>, std::tuple_element_t<2, list>>;
}

#define FUSOR_CHECK_BACKENDS(...)                                                            \
  static_assert(backends_agree<__VA_ARGS__>(),                                               \
                "fusor: cannot combine arrays on different backends (for example cpu and cuda) " \
                "in one expression; move one operand first with to<cpu>(x) or to<cuda>(x)")

template <class F, class A>
auto make_unary(const A& a, const F& f = F{}) {
  static_assert(expression<A>, "fusor: the operand must be a fusor array or expression");
  using NA = node_t<A>;
  check_operand_types<F, value_t<NA>>();
  return unary_expr<F, NA>{f, to_node(a)};
}

// The third operand of where/clip may be the only non-scalar one; find one to type scalars by.
template <class A, class B, class C>
using first_expression_t =
    std::conditional_t<expression<A>, A, std::conditional_t<expression<B>, B, C>>;

template <class F, class A, class B>
auto make_plain_binary(const A& a, const B& b, const F& f = F{}) {
  using Ref = first_expression_t<A, B, B>;
  auto na = operand_node<A, Ref>(a);
  auto nb = operand_node<B, Ref>(b);
  using NA = decltype(na);
  using NB = decltype(nb);
  FUSOR_CHECK_BACKENDS(backend_of_t<NA>, backend_of_t<NB>);
  check_operand_types<F, value_t<NA>, value_t<NB>>();
  return binary_expr<F, NA, NB>{f, na, nb};
}

template <class F>
inline constexpr bool is_comparison_v =
    one_of<F, equal_fn, not_equal_fn, less_fn, less_equal_fn, greater_fn, greater_equal_fn>;

// Whether some value of the C++ integer scalar type S lies outside the integer type T.
template <class S, class T>
constexpr bool may_not_fit() {
  if constexpr (!integer<S> || !integer<T>)
    return false;
  else
    return !(std::in_range<T>(std::numeric_limits<S>::min()) && std::in_range<T>(std::numeric_limits<S>::max()));
}

/// x OP s (or s OP x when ScalarLeft) for an integer scalar s that may not fit x's type: NumPy 2
/// compares the exact values, so an s beyond the type's range gives one answer for every element.
template <class F, bool ScalarLeft, class X, class S>
auto make_scalar_comparison(const X& x, const S& s) {
  using T = weak_result_t<value_t<X>, S>;
  auto nx = to_node(x);
  using NX = decltype(nx);
  check_operand_types<F, value_t<NX>, T>();
  scalar_comparison_fn<F> f{};
  T value = T(0);
  if (std::in_range<T>(s)) {
    value = static_cast<T>(s);
  } else {
    // every element of x lies below s (s above the range) or above it: F's answer for such a pair
    const bool above = std::cmp_greater(s, std::numeric_limits<T>::max());
    const bool left_is_smaller = above != ScalarLeft;
    f.verdict = F{}(left_is_smaller ? 0 : 1, left_is_smaller ? 1 : 0) ? 1 : 0;
  }
  if constexpr (ScalarLeft) return binary_expr<scalar_comparison_fn<F>, scalar_expr<T>, NX>{f, {value}, nx};
  else return binary_expr<scalar_comparison_fn<F>, NX, scalar_expr<T>>{f, nx, {value}};
}

// An integer scalar in a true division of an integer array: NumPy divides in float64 (the
// quotient of integers is float64), so the scalar is never converted to the array's type and may
// lie outside it (uint8 / 300 is float64, as NumPy 2 gives; + - * // % and ** with such a scalar
// raise, in NumPy and here).
// (a concept: its conjunction stops at the first unsatisfied part, before value_t of a non-expression)
template <class S, class Other>
concept int_scalar_of_true_division = integer<S> && expression<Other> && std::is_integral_v<value_t<Other>>;

template <class F, class A, class B>
auto make_binary(const A& a, const B& b) {
  if constexpr (std::is_same_v<F, divide_fn> && int_scalar_of_true_division<B, A>) {
    return make_plain_binary<F>(a, double(b));
  } else if constexpr (std::is_same_v<F, divide_fn> && int_scalar_of_true_division<A, B>) {
    return make_plain_binary<F>(double(a), b);
  } else if constexpr (is_comparison_v<F> && expression<A> && scalar<B>) {
    if constexpr (may_not_fit<B, weak_result_t<value_t<A>, B>>()) return make_scalar_comparison<F, false>(a, b);
    else return make_plain_binary<F>(a, b);
  } else if constexpr (is_comparison_v<F> && scalar<A> && expression<B>) {
    if constexpr (may_not_fit<A, weak_result_t<value_t<B>, A>>()) return make_scalar_comparison<F, true>(b, a);
    else return make_plain_binary<F>(a, b);
  } else {
    return make_plain_binary<F>(a, b);
  }
}

template <class F, class A, class B, class C>
auto make_ternary(const A& a, const B& b, const C& c) {
  static_assert(expression<A> || expression<B> || expression<C>,
                "fusor: at least one operand must be a fusor array or expression");
  // scalars take the type of the value operands (for where, the condition does not count)
  using Ref = std::conditional_t<F::condition_first,
                                 std::conditional_t<expression<B>, B, std::conditional_t<expression<C>, C, A>>,
                                 first_expression_t<A, B, C>>;
  auto na = operand_node<A, Ref>(a);
  auto nb = operand_node<B, Ref>(b);
  auto nc = operand_node<C, Ref>(c);
  using NA = decltype(na);
  using NB = decltype(nb);
  using NC = decltype(nc);
  FUSOR_CHECK_BACKENDS(backend_of_t<NA>, backend_of_t<NB>, backend_of_t<NC>);
  check_operand_types<F, value_t<NA>, value_t<NB>, value_t<NC>>();
  return ternary_expr<F, NA, NB, NC>{F{}, na, nb, nc};
}
#undef FUSOR_CHECK_BACKENDS

}  // namespace detail

// ---- operators ---------------------------------------------------------------------------------
#define FUSOR_BINARY_OPERATOR(OP, FN)                                             \
  template <class A, class B>                                                     \
    requires detail::operand_pair<A, B>                                           \
  auto operator OP(const A& a, const B& b) {                                      \
    return detail::make_binary<FN>(a, b);                                         \
  }
FUSOR_BINARY_OPERATOR(+, add_fn)
FUSOR_BINARY_OPERATOR(-, subtract_fn)
FUSOR_BINARY_OPERATOR(*, multiply_fn)
FUSOR_BINARY_OPERATOR(/, divide_fn)
FUSOR_BINARY_OPERATOR(%, mod_fn)
FUSOR_BINARY_OPERATOR(==, equal_fn)
FUSOR_BINARY_OPERATOR(!=, not_equal_fn)
FUSOR_BINARY_OPERATOR(<, less_fn)
FUSOR_BINARY_OPERATOR(<=, less_equal_fn)
FUSOR_BINARY_OPERATOR(>, greater_fn)
FUSOR_BINARY_OPERATOR(>=, greater_equal_fn)
FUSOR_BINARY_OPERATOR(&&, logical_and_fn)
FUSOR_BINARY_OPERATOR(||, logical_or_fn)
FUSOR_BINARY_OPERATOR(&, bit_and_fn)
FUSOR_BINARY_OPERATOR(|, bit_or_fn)
FUSOR_BINARY_OPERATOR(^, bit_xor_fn)
FUSOR_BINARY_OPERATOR(<<, left_shift_fn)
FUSOR_BINARY_OPERATOR(>>, right_shift_fn)
#undef FUSOR_BINARY_OPERATOR

template <expression A>
auto operator-(const A& a) {
  return detail::make_unary<negate_fn>(a);
}
template <expression A>
auto operator+(const A& a) {
  return detail::to_node(a);
}
template <expression A>
auto operator!(const A& a) {
  return detail::make_unary<logical_not_fn>(a);
}
template <expression A>
auto operator~(const A& a) {
  return detail::make_unary<bit_not_fn>(a);
}

// ---- named functions ---------------------------------------------------------------------------
#define FUSOR_UNARY_FUNCTION(NAME, FN) \
  template <expression A>              \
  auto NAME(const A& a) {              \
    return detail::make_unary<FN>(a);  \
  }
FUSOR_UNARY_FUNCTION(abs, abs_fn)
FUSOR_UNARY_FUNCTION(sign, sign_fn)
FUSOR_UNARY_FUNCTION(sqrt, sqrt_fn)
FUSOR_UNARY_FUNCTION(cbrt, cbrt_fn)
FUSOR_UNARY_FUNCTION(square, square_fn)
FUSOR_UNARY_FUNCTION(exp, exp_fn)
FUSOR_UNARY_FUNCTION(exp2, exp2_fn)
FUSOR_UNARY_FUNCTION(expm1, expm1_fn)
FUSOR_UNARY_FUNCTION(log, log_fn)
FUSOR_UNARY_FUNCTION(log2, log2_fn)
FUSOR_UNARY_FUNCTION(log10, log10_fn)
FUSOR_UNARY_FUNCTION(log1p, log1p_fn)
FUSOR_UNARY_FUNCTION(erf, erf_fn)
FUSOR_UNARY_FUNCTION(sigmoid, sigmoid_fn)
FUSOR_UNARY_FUNCTION(sin, sin_fn)
FUSOR_UNARY_FUNCTION(cos, cos_fn)
FUSOR_UNARY_FUNCTION(tan, tan_fn)
FUSOR_UNARY_FUNCTION(asin, asin_fn)
FUSOR_UNARY_FUNCTION(acos, acos_fn)
FUSOR_UNARY_FUNCTION(atan, atan_fn)
FUSOR_UNARY_FUNCTION(sinh, sinh_fn)
FUSOR_UNARY_FUNCTION(cosh, cosh_fn)
FUSOR_UNARY_FUNCTION(tanh, tanh_fn)
FUSOR_UNARY_FUNCTION(floor, floor_fn)
FUSOR_UNARY_FUNCTION(ceil, ceil_fn)
FUSOR_UNARY_FUNCTION(round, round_fn)
FUSOR_UNARY_FUNCTION(trunc, trunc_fn)
FUSOR_UNARY_FUNCTION(isnan, isnan_fn)
FUSOR_UNARY_FUNCTION(isinf, isinf_fn)
FUSOR_UNARY_FUNCTION(isfinite, isfinite_fn)
FUSOR_UNARY_FUNCTION(conj, conj_fn)
FUSOR_UNARY_FUNCTION(real, real_fn)
FUSOR_UNARY_FUNCTION(imag, imag_fn)
FUSOR_UNARY_FUNCTION(arg, arg_fn)
FUSOR_UNARY_FUNCTION(cis, cis_fn)
FUSOR_UNARY_FUNCTION(logical_not, logical_not_fn)
FUSOR_UNARY_FUNCTION(bitwise_not, bit_not_fn)
FUSOR_UNARY_FUNCTION(reciprocal, reciprocal_fn)
FUSOR_UNARY_FUNCTION(signbit, signbit_fn)
FUSOR_UNARY_FUNCTION(rint, rint_fn)
FUSOR_UNARY_FUNCTION(fix, trunc_fn)  // np.fix rounds toward zero: trunc, integers kept
FUSOR_UNARY_FUNCTION(deg2rad, deg2rad_fn)
FUSOR_UNARY_FUNCTION(rad2deg, rad2deg_fn)
FUSOR_UNARY_FUNCTION(radians, deg2rad_fn)
FUSOR_UNARY_FUNCTION(degrees, rad2deg_fn)
FUSOR_UNARY_FUNCTION(sinc, sinc_fn)
FUSOR_UNARY_FUNCTION(i0, i0_fn)
#undef FUSOR_UNARY_FUNCTION

#define FUSOR_BINARY_FUNCTION(NAME, FN)      \
  template <class A, class B>                \
    requires detail::operand_pair<A, B>      \
  auto NAME(const A& a, const B& b) {        \
    return detail::make_binary<FN>(a, b);    \
  }
FUSOR_BINARY_FUNCTION(add, add_fn)
FUSOR_BINARY_FUNCTION(subtract, subtract_fn)
FUSOR_BINARY_FUNCTION(multiply, multiply_fn)
FUSOR_BINARY_FUNCTION(divide, divide_fn)
FUSOR_BINARY_FUNCTION(mod, mod_fn)
FUSOR_BINARY_FUNCTION(floor_divide, floor_divide_fn)
FUSOR_BINARY_FUNCTION(atan2, atan2_fn)
FUSOR_BINARY_FUNCTION(maximum, maximum_fn)
FUSOR_BINARY_FUNCTION(minimum, minimum_fn)
FUSOR_BINARY_FUNCTION(equal, equal_fn)
FUSOR_BINARY_FUNCTION(not_equal, not_equal_fn)
FUSOR_BINARY_FUNCTION(less, less_fn)
FUSOR_BINARY_FUNCTION(less_equal, less_equal_fn)
FUSOR_BINARY_FUNCTION(greater, greater_fn)
FUSOR_BINARY_FUNCTION(greater_equal, greater_equal_fn)
FUSOR_BINARY_FUNCTION(logical_and, logical_and_fn)
FUSOR_BINARY_FUNCTION(logical_or, logical_or_fn)
FUSOR_BINARY_FUNCTION(logical_xor, logical_xor_fn)
FUSOR_BINARY_FUNCTION(bitwise_and, bit_and_fn)
FUSOR_BINARY_FUNCTION(bitwise_or, bit_or_fn)
FUSOR_BINARY_FUNCTION(bitwise_xor, bit_xor_fn)
FUSOR_BINARY_FUNCTION(left_shift, left_shift_fn)
FUSOR_BINARY_FUNCTION(right_shift, right_shift_fn)
FUSOR_BINARY_FUNCTION(hypot, hypot_fn)
FUSOR_BINARY_FUNCTION(copysign, copysign_fn)
FUSOR_BINARY_FUNCTION(fmod, fmod_fn)
FUSOR_BINARY_FUNCTION(remainder, mod_fn)  // np.remainder is Python's %: the divisor's sign
FUSOR_BINARY_FUNCTION(gcd, gcd_fn)
FUSOR_BINARY_FUNCTION(lcm, lcm_fn)
FUSOR_BINARY_FUNCTION(heaviside, heaviside_fn)
FUSOR_BINARY_FUNCTION(logaddexp, logaddexp_fn)
FUSOR_BINARY_FUNCTION(logaddexp2, logaddexp2_fn)
#undef FUSOR_BINARY_FUNCTION

/// The replacements of nan_to_num; unset infinities become the type's largest and lowest values.
struct nan_to_num_values {
  double nan = 0.0;
  std::optional<double> posinf{}, neginf{};
};
/// np.nan_to_num(x, nan=0, posinf=None, neginf=None), lazily: nan_to_num(x, {.nan = -1, .posinf = 1e30}).
template <expression A>
auto nan_to_num(const A& a, const nan_to_num_values& v = {}) {
  nan_to_num_fn f;
  f.nan = v.nan;
  f.has_posinf = v.posinf.has_value();
  f.posinf = v.posinf.value_or(0.0);
  f.has_neginf = v.neginf.has_value();
  f.neginf = v.neginf.value_or(0.0);
  return detail::make_unary<nan_to_num_fn>(a, f);
}

/// The tolerances of isclose and allclose (NumPy's defaults).
struct isclose_options {
  double rtol = 1e-5, atol = 1e-8;
  bool equal_nan = false;
};
/// np.isclose(a, b, rtol, atol, equal_nan), lazily (a bool expression): isclose(a, b, {.rtol = 1e-6}).
template <class A, class B>
  requires detail::operand_pair<A, B>
auto isclose(const A& a, const B& b, const isclose_options& t = {}) {
  if (!(t.rtol >= 0) || !(t.atol >= 0))
    throw value_error("fusor: isclose expects non-negative tolerances, got rtol = " + std::to_string(t.rtol) +
                      " and atol = " + std::to_string(t.atol));
  isclose_fn f;
  f.rtol = t.rtol;
  f.atol = t.atol;
  f.equal_nan = t.equal_nan;
  return detail::make_plain_binary<isclose_fn>(a, b, f);
}

namespace detail {
/// NumPy raises for an integer raised to a negative integer power (a ValueError, whatever the base).
/// Checked when the expression is built: a scalar exponent directly, an array exponent by one
/// min-reduction over it (NumPy checks during its loop; fusor's loops cannot throw, on a device).
template <class E>
void require_nonnegative_exponent(const E& exponent) {
  using V = value_t<E>;
  if constexpr (std::is_signed_v<V>) {
    V lowest;
    if constexpr (requires { exponent.value; }) {
      lowest = exponent.value;
    } else {
      if (expr_shape(exponent).numel() == 0) return;
      lowest = V(executor<backend_of_t<E>>::template reduce<min_op>(exponent));
    }
    if (lowest < V(0))
      throw value_error("fusor: integers to negative integer powers are not allowed (NumPy raises too); got the "
                        "exponent " + std::to_string(lowest) + "; use a floating base, e.g. pow(cast<double>(a), b)");
  }
}
}  // namespace detail

/// a ** b elementwise (np.power). Integer powers are exact (by squaring, wrapping like NumPy); an
/// integer base with a negative integer exponent is a value_error, as in NumPy.
template <class A, class B>
  requires detail::operand_pair<A, B>
auto pow(const A& a, const B& b) {
  auto e = detail::make_binary<power_fn>(a, b);
  using C = typename decltype(e)::traits::compute;
  if constexpr (std::is_integral_v<C>) detail::require_nonnegative_exponent(e.b);
  return e;
}

/// where(condition, a, b): a where condition is non-zero, else b (np.where with three arguments).
template <class C, class A, class B>
  requires(expression<C> || expression<A> || expression<B>)
auto where(const C& c, const A& a, const B& b) {
  return detail::make_ternary<where_fn>(c, a, b);
}
/// clip(x, lo, hi): lo and hi may be scalars or arrays (np.clip).
template <class X, class L, class H>
  requires(expression<X> || expression<L> || expression<H>)
auto clip(const X& x, const L& lo, const H& hi) {
  return detail::make_ternary<clip_fn>(x, lo, hi);
}
/// fma(a, b, c) = a * b + c with a single rounding for floating types.
template <class A, class B, class C>
  requires(expression<A> || expression<B> || expression<C>)
auto fma(const A& a, const B& b, const C& c) {
  return detail::make_ternary<fma_fn>(a, b, c);
}

/// A lazy element type conversion (astype without the copy).
template <element U, expression A>
auto cast(const A& a) {
  return cast_expr<U, node_t<A>>{detail::to_node(a)};
}

}  // namespace fusor
