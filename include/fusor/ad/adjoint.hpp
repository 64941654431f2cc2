#pragma once
// The adjoint of an expression tree, built by walking it with a derivative table keyed by the
// functor types: for the variable at position P (tree order), the seed (the output's adjoint) is
// multiplied by each partial derivative on the way down to it. The result is a lazy expression of
// plain leaves, so it runs as one fused pass (one loop or kernel), like any statement.
//
// derivative<F>::partial<I>(f, seed, args...) is seed * dF/d(arg I), as an expression of the
// operands' (stripped) subtrees; `no_contribution` where the derivative is zero or undefined
// (comparisons, rounding, sign: the path ends and costs nothing).
#include <array>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include "../core/functors.hpp"
#include "../core/expr/nodes.hpp"
#include "../core/operators.hpp"
#include "functors.hpp"
#include "var.hpp"
#include "../core/ext.hpp"

namespace fusor::ad {

namespace detail {

struct no_contribution {};
template <class X>
inline constexpr bool is_none_v = std::is_same_v<X, no_contribution>;

template <class F>
struct derivative {
  static constexpr bool defined = false;
};

// Functors with no derivative (the result is constant almost everywhere, or not a number):
// comparisons, logic, classification, rounding, sign.
template <class F>
struct zero_derivative {
  static constexpr bool defined = true;
  template <int I, class S, class... A>
  static no_contribution partial(const F&, const S&, const A&...) {
    return {};
  }
};
#define FUSOR_AD_ZERO(F) \
  template <>            \
  struct derivative<F> : zero_derivative<F> {};
FUSOR_AD_ZERO(equal_fn)
FUSOR_AD_ZERO(not_equal_fn)
FUSOR_AD_ZERO(less_fn)
FUSOR_AD_ZERO(less_equal_fn)
FUSOR_AD_ZERO(greater_fn)
FUSOR_AD_ZERO(greater_equal_fn)
FUSOR_AD_ZERO(logical_and_fn)
FUSOR_AD_ZERO(logical_or_fn)
FUSOR_AD_ZERO(logical_xor_fn)
FUSOR_AD_ZERO(logical_not_fn)
FUSOR_AD_ZERO(isnan_fn)
FUSOR_AD_ZERO(isinf_fn)
FUSOR_AD_ZERO(isfinite_fn)
FUSOR_AD_ZERO(sign_fn)
FUSOR_AD_ZERO(floor_fn)
FUSOR_AD_ZERO(ceil_fn)
FUSOR_AD_ZERO(trunc_fn)
FUSOR_AD_ZERO(round_fn)
FUSOR_AD_ZERO(floor_divide_fn)
#undef FUSOR_AD_ZERO
template <class F>
struct derivative<scalar_comparison_fn<F>> : zero_derivative<scalar_comparison_fn<F>> {};

/// A derivative factor as the adjoint needs it: conjugated for complex operands (the convention of
/// var.hpp: g_in = g_out times the conjugate of f'), unchanged (the same expression type) for real.
template <class X>
auto cj(const X& x) {
  if constexpr (is_complex_v<value_t<X>>) return fusor::conj(x);
  else return x;
}

// One-argument functors: seed * f'(a).
#define FUSOR_AD_UNARY(F, ...)                                        \
  template <>                                                         \
  struct derivative<F> {                                              \
    static constexpr bool defined = true;                             \
    template <int I, class S, class A>                                \
    static auto partial(const F&, const S& seed, const A& a) {        \
      (void)a;                                                        \
      return __VA_ARGS__;                                             \
    }                                                                 \
  };
FUSOR_AD_UNARY(negate_fn, -seed)
FUSOR_AD_UNARY(square_fn, seed * cj(2 * a))
FUSOR_AD_UNARY(sqrt_fn, seed * cj(0.5 / fusor::sqrt(a)))
FUSOR_AD_UNARY(cbrt_fn, seed / (3 * fusor::square(fusor::cbrt(a))))
FUSOR_AD_UNARY(exp_fn, seed * cj(fusor::exp(a)))
FUSOR_AD_UNARY(exp2_fn, seed * cj(fusor::exp2(a) * 0.693147180559945309417232121458176568))
FUSOR_AD_UNARY(expm1_fn, seed * cj(fusor::exp(a)))
FUSOR_AD_UNARY(log_fn, seed / cj(a))
FUSOR_AD_UNARY(log2_fn, seed / cj(a * 0.693147180559945309417232121458176568))
FUSOR_AD_UNARY(log10_fn, seed / cj(a * 2.302585092994045684017360959213684420))
FUSOR_AD_UNARY(log1p_fn, seed / cj(1 + a))
FUSOR_AD_UNARY(erf_fn, seed * (1.128379167095512573896158903121545172 * fusor::exp(-fusor::square(a))))
FUSOR_AD_UNARY(sigmoid_fn, seed * (fusor::sigmoid(a) * (1 - fusor::sigmoid(a))))
FUSOR_AD_UNARY(sin_fn, seed * cj(fusor::cos(a)))
FUSOR_AD_UNARY(cos_fn, -(seed * cj(fusor::sin(a))))
FUSOR_AD_UNARY(tan_fn, seed * cj(1 + fusor::square(fusor::tan(a))))
FUSOR_AD_UNARY(asin_fn, seed / cj(fusor::sqrt(1 - fusor::square(a))))
FUSOR_AD_UNARY(acos_fn, -(seed / cj(fusor::sqrt(1 - fusor::square(a)))))
FUSOR_AD_UNARY(atan_fn, seed / cj(1 + fusor::square(a)))
FUSOR_AD_UNARY(sinh_fn, seed * cj(fusor::cosh(a)))
FUSOR_AD_UNARY(cosh_fn, seed * cj(fusor::sinh(a)))
FUSOR_AD_UNARY(tanh_fn, seed * cj(1 - fusor::square(fusor::tanh(a))))
#undef FUSOR_AD_UNARY

// The functors that treat a complex number as its two real parts (not holomorphic). With
// z = x + iy and g the adjoint of their real result: |z| gives g z/|z| (0 at 0, as PyTorch),
// Re z gives g, Im z gives i g, arg z gives g i z/|z|². conj gives conj(g). For real operands
// |x| gives g sign(x), and Im and arg are constant.
template <class A>
inline constexpr bool complex_operand_v = is_complex_v<value_t<A>>;
template <>
struct derivative<abs_fn> {
  static constexpr bool defined = true;
  template <int I, class S, class A>
  static auto partial(const abs_fn&, const S& seed, const A& a) {
    if constexpr (complex_operand_v<A>) return fusor::where(a == 0, 0, seed * (a / fusor::abs(a)));
    else return seed * fusor::sign(a);
  }
};
template <>
struct derivative<conj_fn> {
  static constexpr bool defined = true;
  template <int I, class S, class A>
  static auto partial(const conj_fn&, const S& seed, const A&) {
    if constexpr (complex_operand_v<A>) return fusor::conj(seed);
    else return seed;  // real variables: the identity
  }
};
template <>
struct derivative<real_fn> {
  static constexpr bool defined = true;
  template <int I, class S, class A>
  static auto partial(const real_fn&, const S& seed, const A&) {
    if constexpr (complex_operand_v<A>) return fusor::cast<value_t<A>>(seed);
    else return seed;
  }
};
template <>
struct derivative<imag_fn> {
  static constexpr bool defined = true;
  template <int I, class S, class A>
  static auto partial(const imag_fn&, const S& seed, const A&) {
    using V = value_t<A>;
    if constexpr (complex_operand_v<A>) return fusor::cast<V>(seed) * V(0, 1);
    else return no_contribution{};
  }
};
template <>
struct derivative<arg_fn> {
  static constexpr bool defined = true;
  template <int I, class S, class A>
  static auto partial(const arg_fn&, const S& seed, const A& a) {
    using V = value_t<A>;
    if constexpr (complex_operand_v<A>)
      return fusor::where(a == 0, 0, seed * (V(0, 1) * a / fusor::square(fusor::abs(a))));
    else return no_contribution{};
  }
};

// Two- and three-argument functors: one expression per argument.
#define FUSOR_AD_BINARY(F, DA, DB)                                           \
  template <>                                                                \
  struct derivative<F> {                                                     \
    static constexpr bool defined = true;                                    \
    template <int I, class S, class A, class C>                              \
    static auto partial(const F&, const S& seed, const A& a, const C& b) {   \
      (void)a;                                                               \
      (void)b;                                                               \
      if constexpr (I == 0) return DA;                                       \
      else return DB;                                                        \
    }                                                                        \
  };
FUSOR_AD_BINARY(add_fn, seed, seed)
FUSOR_AD_BINARY(subtract_fn, seed, -seed)
FUSOR_AD_BINARY(multiply_fn, seed * cj(b), seed * cj(a))
FUSOR_AD_BINARY(divide_fn, seed / cj(b), -(seed * cj(a / fusor::square(b))))
FUSOR_AD_BINARY(mod_fn, seed, -(seed * fusor::floor(a / b)))
FUSOR_AD_BINARY(power_fn, seed * cj(b * fusor::pow(a, b - 1)), seed * cj(fusor::pow(a, b) * fusor::log(a)))
FUSOR_AD_BINARY(atan2_fn, seed * (b / (fusor::square(a) + fusor::square(b))),
                -(seed * (a / (fusor::square(a) + fusor::square(b)))))
// the branch taken gets the adjoint (ties go to the first operand, as the forward pass picks it)
FUSOR_AD_BINARY(maximum_fn, fusor::where(a >= b, seed, 0), fusor::where(a >= b, 0, seed))
FUSOR_AD_BINARY(minimum_fn, fusor::where(a <= b, seed, 0), fusor::where(a <= b, 0, seed))
#undef FUSOR_AD_BINARY

template <>
struct derivative<fma_fn> {
  static constexpr bool defined = true;
  template <int I, class S, class A, class C, class D>
  static auto partial(const fma_fn&, const S& seed, const A& a, const C& b, const D&) {
    if constexpr (I == 0) return seed * cj(b);
    else if constexpr (I == 1) return seed * cj(a);
    else return seed;
  }
};
template <>
struct derivative<clip_fn> {
  static constexpr bool defined = true;
  template <int I, class S, class A, class C, class D>
  static auto partial(const clip_fn&, const S& seed, const A& x, const C& lo, const D& hi) {
    if constexpr (I == 0) return fusor::where(fusor::logical_and(x >= lo, x <= hi), seed, 0);
    else if constexpr (I == 1) return fusor::where(x < lo, seed, 0);
    else return fusor::where(fusor::maximum(x, lo) > hi, seed, 0);
  }
};
template <>
struct derivative<where_fn> {
  static constexpr bool defined = true;
  template <int I, class S, class C, class A, class D>
  static auto partial(const where_fn&, const S& seed, const C& c, const A&, const D&) {
    if constexpr (I == 0) return no_contribution{};
    else if constexpr (I == 1) return fusor::where(c, seed, 0);
    else return fusor::where(c, 0, seed);
  }
};

// ---- the walk -------------------------------------------------------------------------------------
template <class F>
constexpr void require_derivative() {
  static_assert(derivative<F>::defined,
                "fusor: this operation has no derivative rule in fusor::ad (ad/adjoint.hpp lists them); "
                "wrap it in ad::stop_gradient, or give it one with ad::custom_vjp");
}

template <int P, class E, class S>
auto adjoint_at(const E& e, const S& seed);

// Through argument I of a node whose operands (stripped) are args..., towards position P of child.
template <int P, int I, class F, class Child, class S, class... Args>
auto through(const F& f, const Child& child, const S& seed, const Args&... args) {
  require_derivative<F>();
  auto d = derivative<F>::template partial<I>(f, seed, args...);
  if constexpr (is_none_v<decltype(d)>) return no_contribution{};
  else return adjoint_at<P>(child, d);
}

/// seed * d(e)/d(variable at position P), as a lazy expression (or no_contribution).
template <int P, class E, class S>
auto adjoint_at(const E& e, const S& seed) {
  if constexpr (is_var_leaf_v<E>) {
    // a real variable in a complex expression: the adjoint of its real part
    if constexpr (!is_complex_v<value_t<E>> && is_complex_v<value_t<S>>) return fusor::real(seed);
    else return seed;
  } else if constexpr (functor_node<E>) {
    // through the operand holding position P, with every operand stripped for the derivative
    constexpr std::size_t I = operand_holding<is_var_leaf, E, P>();
    constexpr int first = terminals_before<is_var_leaf, E, I>();
    const auto kids = children(e);
    return std::apply([&](const auto&... k) { return through<P - first, int(I)>(e.f, std::get<I>(kids), seed, strip(k)...); },
                      kids);
  } else {  // a cast: the adjoint goes back in the operand's type
    static_assert(is_cast_v<E>, "fusor: autodiff has no adjoint for this kind of node");
    using V = value_t<decltype(e.a)>;
    if constexpr (!differentiable_v<V>) return no_contribution{};
    else return adjoint_at<P>(e.a, fusor::cast<V>(seed));
  }
}

// a + b, where either may be no_contribution
template <class A, class C>
auto plus(const A& a, const C& b) {
  if constexpr (is_none_v<A>) return b;
  else if constexpr (is_none_v<C>) return a;
  else return a + b;
}
template <class X>
auto gated(const X& x, bool on) {
  if constexpr (is_none_v<X>) return x;
  else {
    auto node = fusor::ext::to_node(x);
    return unary_expr<gate_fn, decltype(node)>{gate_fn{{}, on}, node};
  }
}

template <class A>
auto fold_plus(const A& a) {
  return a;
}
template <class A, class X, class... R>
auto fold_plus(const A& a, const X& x, const R&... rest) {
  return fold_plus(plus(a, x), rest...);
}

// ---- the dual-number form of an adjoint -----------------------------------------------------------
// For a tree whose every functor has a dual form that runs on SIMD packets, the adjoint of a group
// of positions is seed * tangent(e evaluated on duals seeded 1 at those positions and 0 elsewhere):
// one forward-mode evaluation, in which sin and cos share a sincos and exp, tanh reuse their own
// result. The derivative table instead builds one product per position, and recomputes what
// positions share (sin(x)·exp(−x²) + x²/2 computes exp three times that way).

/// dual(x[p], t) at position p of a variable's view: the variable as a dual number, seeded t.
template <class T>
struct flag_seed {
  using value_type = dual<T, 1>;
  const T* x;
  T t;
  FUSOR_HD void fill(index_t first, value_type* out, index_t count) const {
    for (index_t i = 0; i < count; ++i) out[i] = value_type{x[first + i], {t}};
  }
  template <class Packet>
  Packet packet(index_t first) const {
    using Lane = decltype(Packet{}.value);
    return Packet{Lane::load_unaligned(x + first), {Lane(t)}};
  }
};

// (complex values take the derivative table: there are no complex dual numbers; nor do casts)
template <class E>
constexpr bool dual_capable_tree();
template <class E, std::size_t... I>
constexpr bool operands_dual_capable(std::index_sequence<I...>) {
  return (dual_capable_tree<child_t<I, E>>() && ...);
}
template <class E>
constexpr bool dual_capable_tree() {
  if constexpr (is_terminal_v<E>) {  // leaves, scalars, generators, variables
    return !is_complex_v<value_t<E>>;
  } else if constexpr (functor_node<E>) {
    return forward_simd_v<typename E::functor_type> && !is_complex_v<value_t<E>> &&
           operands_dual_capable<E>(std::make_index_sequence<expr_node<E>::arity>{});
  } else {
    return false;
  }
}
template <class E>
struct dual_capable : std::bool_constant<dual_capable_tree<E>()> {};

/// e with the variable at position k (in tree order) replaced by its flag_seed, seeded on[k].
template <class E>
auto dualise(const E& e, const bool* on) {
  int position = 0;
  return map_terminals(e, [&](const auto& t) {
    using X = std::remove_cvref_t<decltype(t)>;
    if constexpr (is_var_leaf_v<X>) {
      using T = value_t<X>;
      using G = flag_seed<T>;
      const bool seeded = on[position++];
      return generator_expr<G, backend_of_t<X>>{G{t.value.data, seeded ? T(1) : T(0)}, t.value.shape, t.value.strides};
    } else {
      return t;
    }
  });
}
template <class E, class S>
auto dual_adjoint(const E& e, const S& seed, const bool* on) {
  auto d = dualise(e, on);
  return seed * unary_expr<tangent_fn, decltype(d)>{tangent_fn{{}, 0}, d};
}

// ---- adjoints that need no pass of their own --------------------------------------------------------
// Two shapes of tree give a position's adjoint without evaluating the tree again:
//  - a position reached from the root through + and − only (the bias of x·w + b, either side of a
//    residual x + f(x)) has derivative ±1 everywhere: its adjoint is the seed, or minus it;
//  - the two operands of one a + b or a − b of variables (a GEMM's output and its bias under an
//    activation) have the same adjoint up to the sign: the second is read back from the first's
//    adjoint buffer when that buffer held nothing before (propagate checks it at run time).
// Both give the bits the dual pass gives (its tangents there are exactly ±1 times the same chain).

/// Per variable position of a tree: `sign` ±1 when its derivative is ±1 (0: anything else);
/// `partner` the other operand of its a ± b of two variables (−1: none), with `partner_sign`.
template <int N>
struct linear_paths {
  std::array<int, N> sign{}, partner{}, partner_sign{};
  constexpr linear_paths() { partner.fill(-1); }
};

template <class E, int N>
constexpr void find_linear_paths(linear_paths<N>& r, int first, int sign);
template <class E, int N, std::size_t... I>
constexpr void find_linear_paths_below(linear_paths<N>& r, int first, std::index_sequence<I...>) {
  (find_linear_paths<child_t<I, E>>(r, first + terminals_before<is_var_leaf, E, I>(), 0), ...);
}
template <class E, int N>
constexpr void find_linear_paths(linear_paths<N>& r, int first, int sign) {
  using X = std::remove_cvref_t<E>;
  if constexpr (is_var_leaf_v<X>) {
    r.sign[first] = sign;
  } else if constexpr (is_terminal_v<X>) {
    return;
  } else if constexpr (functor_node<X> && expr_node<X>::arity == 2 &&
                       (std::is_same_v<typename X::functor_type, add_fn> ||
                        std::is_same_v<typename X::functor_type, subtract_fn>)) {
    constexpr bool add = std::is_same_v<typename X::functor_type, add_fn>;
    using A = child_t<0, X>;
    using C = child_t<1, X>;
    const int second = first + terminal_count<is_var_leaf, A>();
    if constexpr (is_var_leaf_v<A> && is_var_leaf_v<C> && std::is_same_v<value_t<A>, value_t<C>>) {
      r.partner[first] = second;
      r.partner[second] = first;
      r.partner_sign[first] = r.partner_sign[second] = add ? 1 : -1;
    }
    find_linear_paths<A>(r, first, sign);
    find_linear_paths<C>(r, second, add ? sign : -sign);
  } else if constexpr (functor_node<X> && std::is_same_v<typename X::functor_type, negate_fn>) {
    find_linear_paths<child_t<0, X>>(r, first, -sign);
  } else {  // any other functor (or a cast): the derivative below it is not ±1
    find_linear_paths_below<X>(r, first, std::make_index_sequence<expr_node<X>::arity>{});
  }
}
template <class E>
constexpr auto linear_paths_of() {
  linear_paths<var_count<E>> r;
  find_linear_paths<E>(r, 0, 1);
  return r;
}

/// The sum of the adjoints at every position (one variable seen through one view).
template <class E, class S, int... P>
auto adjoint_sum(const E& e, const S& seed, std::integer_sequence<int, P...>) {
  no_contribution none;
  return fold_plus(none, adjoint_at<P>(e, seed)...);
}
/// The element type of the variable at position P (in tree order) of tree E.
template <class E, int P>
auto var_value_at_impl() {
  using N = std::remove_cvref_t<E>;
  if constexpr (is_var_leaf_v<N>) {
    return std::type_identity<value_t<N>>{};
  } else {
    constexpr std::size_t I = operand_holding<is_var_leaf, N, P>();
    return var_value_at_impl<child_t<I, N>, P - terminals_before<is_var_leaf, N, I>()>();
  }
}
template <class E, int P>
using var_value_at = typename decltype(var_value_at_impl<E, P>())::type;

/// Position P's gated term of a sum accumulated into a variable of element type V. A variable of
/// another type is never that variable, so its term is left out at compile time: computed and
/// gated off, it would only mix a second type into the pass (in a mixed-precision tree, a float32
/// parameter under a cast beside 16-bit activations) and keep the pass off the SIMD loop.
template <class V, int P, class E, class S>
auto gated_term(const E& e, const S& seed, bool on) {
  if constexpr (!std::is_same_v<var_value_at<E, P>, V>) return no_contribution{};
  else return gated(adjoint_at<P>(e, seed), on);
}

/// The sum of the adjoints at the positions `on` selects (several variables in one tree), for a
/// variable of element type V.
template <class V, class E, class S, int... P>
auto adjoint_gated_sum(const E& e, const S& seed, const bool* on, std::integer_sequence<int, P...>) {
  no_contribution none;
  return fold_plus(none, gated_term<V, P>(e, seed, on[P])...);
}

}  // namespace detail
}  // namespace fusor::ad
