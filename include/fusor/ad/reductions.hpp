#pragma once
// Reductions of expressions of variables beyond sum and mean (record.hpp): prod, max, min, var,
// std, norm and logsumexp, whole or along an axis, with keepdims. Like sum, each is one node that
// keeps the expression tree: the forward pass reduces the fused expression, and the backward pass
// runs the reduction's seed (the output's adjoint times the reduction's derivative, itself an
// expression of the tree's values) through the tree's adjoint, one fused pass per input. The
// auxiliary reductions a derivative needs (the mean of var, the count of tied maxima, the zeros
// of prod) are computed in the backward pass, so a forward pass costs what the array function costs.
// On a tape of dual numbers (forward over reverse: hessian, hvp) the same derivatives run on duals;
// var, std and norm are then computed from their definitions (the engine reduces those in double).
//
// Derivatives at the non-smooth points follow JAX: tied maxima and minima share the adjoint
// equally; prod's is the product of the other elements, exact with zeros; norm's and std's are 0
// where the norm or the deviation is 0 (a subgradient, where JAX gives NaN).
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "../core/reduce.hpp"
#include "../core/reduce_ops.hpp"
#include "record.hpp"
#include "../core/ext.hpp"

namespace fusor::ad {

namespace detail {

enum class statistic { prod, max, min, var, std, norm, logsumexp };

template <class E>
struct stat_node {
  E tree;
  std::uint32_t out;
  int axis;  // < 0: the whole expression
  statistic kind;
  int ddof;
  double ord;
};

// Whole reductions: the reduced quantities are host numbers, spread as scalars.
template <class R>
struct whole_reduced {
  template <class X>
  R total(const X& x) const {
    return R(fusor::sum(x));
  }
  template <class X>
  R product(const X& x) const {
    return R(fusor::prod(x));
  }
  template <class X>
  R mean(const X& x, index_t count) const {
    return total(x) / R(lane_t<R>(count));
  }
  scalar_expr<R> spread(R v) const { return {v}; }
};
// Reductions along an axis: the reduced quantities are arrays with the axis kept (size 1), spread
// back over the axis with stride 0.
template <class R, class B>
struct axis_reduced {
  int axis;
  extents shape;  // the reduced expression's

  template <class X>
  array<R, B> total(const X& x) const {
    return array<R, B>(fusor::sum(x, axis, true));
  }
  template <class X>
  array<R, B> product(const X& x) const {
    return array<R, B>(fusor::prod(x, axis, true));
  }
  template <class X>
  array<R, B> mean(const X& x, index_t count) const {
    array<R, B> m = total(x);
    m = m / scalar_expr<R>{R(lane_t<R>(count))};
    return m;
  }
  leaf<R, B> spread(const R* data) const {
    extents st = contiguous_strides(fusor::ext::keep_axis(shape, axis));
    st[axis] = 0;
    return {const_cast<R*>(data), shape, st};
  }
  leaf<R, B> spread(const array<R, B>& a) const { return spread(a.data()); }
};

/// The seed of statistic n.kind for tree x: its output y and adjoint g (reduced quantities), the
/// count of reduced elements, propagated through the tree.
template <class R, class E, class Reduced, class Y>
void stat_propagate(tape& t, const stat_node<E>& n, const Reduced& red, const Y& y, const Y& g, index_t count) {
  // R is float or double, or a dual number of them (forward over reverse: hessian, hvp); constants
  // are scalar nodes of R, as the engine takes only plain numbers as bare scalars
  const auto c = [](auto v) { return scalar_expr<R>{R(lane_t<R>(v))}; };
  const extents shape = expr_shape(n.tree);
  const auto x = strip(n.tree);
  const auto gy = red.spread(g);
  const auto yy = red.spread(y);
  switch (n.kind) {
    case statistic::prod: {
      // d/dx_i prod = the product of the others: q/x_i without zeros, q at the zero when exactly one
      const auto zeros = red.total(cast<R>(x == c(0)));
      const auto q = red.product(where(x == c(0), c(1), x));
      const auto z = red.spread(zeros);
      const auto qq = red.spread(q);
      propagate(t, n.tree, gy * where(x == c(0), where(z == c(1), qq, c(0)), where(z == c(0), qq / x, c(0))), shape);
      break;
    }
    case statistic::max:
    case statistic::min: {
      const auto ties = red.total(cast<R>(x == yy));
      propagate(t, n.tree, where(x == yy, gy / red.spread(ties), c(0)), shape);
      break;
    }
    case statistic::var:
    case statistic::std: {
      const auto mean = red.mean(x, count);
      const lane_t<R> dof = lane_t<R>(std::max<index_t>(count - n.ddof, 0));
      if (n.kind == statistic::var) propagate(t, n.tree, gy * c(2 / dof) * (x - red.spread(mean)), shape);
      else propagate(t, n.tree, where(yy == c(0), c(0), gy * (x - red.spread(mean)) / (c(dof) * yy)), shape);
      break;
    }
    case statistic::norm: {
      if (n.ord == 0) break;  // a count: no derivative
      if (n.ord == 1) {
        propagate(t, n.tree, gy * sign(x), shape);
      } else if (std::isinf(n.ord)) {
        const auto ties = red.total(cast<R>(abs(x) == yy));
        propagate(t, n.tree, where(abs(x) == yy, gy * sign(x) / red.spread(ties), c(0)), shape);
      } else if (n.ord == 2) {
        propagate(t, n.tree, where(yy == c(0), c(0), gy * x / yy), shape);
      } else {
        propagate(t, n.tree, where(yy == c(0), c(0), gy * sign(x) * pow(abs(x) / yy, c(n.ord - 1))), shape);
      }
      break;
    }
    case statistic::logsumexp:
      propagate(t, n.tree, gy * exp(x - yy), shape);
      break;
  }
}

template <class E>
void stat_backward(tape& t, const void* p) {
  const auto& n = *static_cast<const stat_node<E>*>(p);
  const auto& s = t.slot_at(n.out);
  if (!s.adjoint_written) return;
  using R = value_t<E>;
  using B = backend_of_t<E>;
  const extents shape = expr_shape(n.tree);
  if (n.axis < 0) {
    R y, g;
    backend_memory<B>::copy_to_host(&y, static_cast<const R*>(s.value), 1);
    backend_memory<B>::copy_to_host(&g, static_cast<const R*>(s.adjoint), 1);
    stat_propagate<R>(t, n, whole_reduced<R>{}, y, g, shape.numel());
  } else {
    stat_propagate<R>(t, n, axis_reduced<R, B>{n.axis, shape}, static_cast<const R*>(s.value),
                      static_cast<const R*>(s.adjoint), shape[n.axis]);
  }
}

/// logsumexp of a plain expression, whole: max + log Σ exp(x − max), -inf for no elements.
template <class N>
auto plain_logsumexp(const N& x) {
  using R = value_t<N>;
  using std::isfinite, std::log;  // (and ad's for dual numbers, by argument-dependent lookup)
  if (expr_shape(x).numel() == 0) return R(-std::numeric_limits<lane_t<R>>::infinity());
  R m = R(fusor::max(x));
  if (!isfinite(m)) m = R(0);  // all -inf (or an inf): the shift changes nothing
  return R(m + log(R(fusor::sum(exp(x - scalar_expr<R>{m})))));
}
/// Along an axis, into a keepdims-shaped array.
template <class N>
auto plain_logsumexp(const N& x, int ax) {
  using R = value_t<N>;
  using B = backend_of_t<N>;
  const extents shape = expr_shape(x);
  if (shape[ax] == 0)
    return full<R, B>(fusor::ext::keep_axis(shape, ax), R(-std::numeric_limits<lane_t<R>>::infinity()));
  array<R, B> m = fusor::max(x, ax, true);
  m = where(isfinite(m), m, R(0));
  const axis_reduced<R, B> red{ax, shape};
  array<R, B> out = fusor::sum(exp(x - red.spread(m)), ax, true);
  out = log(out) + m;
  return out;
}

// var and std of dual numbers (forward over reverse) by their definition, from sums the engine
// reduces for any element type: the engine's one-pass var is written for plain numbers.
template <class N>
auto dual_moment(const N& x, index_t dd, bool root) {
  using R = value_t<N>;
  using std::sqrt;  // (ad's for dual numbers, by argument-dependent lookup)
  const index_t count = expr_shape(x).numel();
  const R m = R(fusor::sum(x)) / R(lane_t<R>(count));
  R v = R(fusor::sum(square(x - scalar_expr<R>{m}))) / R(lane_t<R>(std::max<index_t>(count - dd, 0)));
  return root ? sqrt(v) : v;
}
template <class N>
auto dual_moment(const N& x, int ax, index_t dd, bool root) {
  using R = value_t<N>;
  using B = backend_of_t<N>;
  const extents shape = expr_shape(x);
  const axis_reduced<R, B> red{ax, shape};
  const array<R, B> m = red.mean(x, shape[ax]);
  array<R, B> v = fusor::sum(square(x - red.spread(m)), ax, true);
  v = v / scalar_expr<R>{R(lane_t<R>(std::max<index_t>(shape[ax] - dd, 0)))};
  if (root) v = sqrt(v);
  return v;
}

// The vector norm of dual numbers by its definition (the engine's norm reduces in double).
template <class N>
auto dual_norm(const N& x, double ord) {
  using R = value_t<N>;
  using std::sqrt, std::pow;  // (ad's for dual numbers, by argument-dependent lookup)
  const scalar_expr<R> zero{R(0)};
  if (ord == 2) return sqrt(R(fusor::sum(square(x))));
  if (ord == 1) return R(fusor::sum(abs(x)));
  if (ord == 0) return R(fusor::sum(where(x != zero, scalar_expr<R>{R(1)}, zero)));
  if (std::isinf(ord)) {
    if (expr_shape(x).numel() == 0) return ord > 0 ? R(0) : R(std::numeric_limits<lane_t<R>>::infinity());
    return ord > 0 ? R(fusor::max(abs(x))) : R(fusor::min(abs(x)));
  }
  return pow(R(fusor::sum(pow(abs(x), scalar_expr<R>{R(lane_t<R>(ord))}))), R(lane_t<R>(1 / ord)));
}
template <class N>
auto dual_norm(const N& x, double ord, int ax) {
  using R = value_t<N>;
  using B = backend_of_t<N>;
  const scalar_expr<R> zero{R(0)};
  array<R, B> out = [&]() -> array<R, B> {
    if (ord == 2) return fusor::sum(square(x), ax, true);
    if (ord == 1) return fusor::sum(abs(x), ax, true);
    if (ord == 0) return fusor::sum(where(x != zero, scalar_expr<R>{R(1)}, zero), ax, true);
    if (std::isinf(ord)) {
      if (expr_shape(x)[ax] == 0)
        return full<R, B>(fusor::ext::keep_axis(expr_shape(x), ax),
                          ord > 0 ? R(0) : R(std::numeric_limits<lane_t<R>>::infinity()));
      return ord > 0 ? fusor::max(abs(x), ax, true) : fusor::min(abs(x), ax, true);
    }
    return fusor::sum(pow(abs(x), scalar_expr<R>{R(lane_t<R>(ord))}), ax, true);
  }();
  if (ord == 2) out = sqrt(out);
  else if (ord != 1 && ord != 0 && !std::isinf(ord)) out = pow(out, scalar_expr<R>{R(lane_t<R>(1 / ord))});
  return out;
}

template <statistic Kind, class N>
auto stat_reduce(const N& node, int axis, bool keepdims, int dd = 0, double ord = 2) {
  using R = value_t<N>;
  using B = backend_of_t<N>;
  static_assert(real_differentiable_v<R>,
                "fusor: reductions of variables need float or double values (cast the expression first), or "
                "their dual numbers (forward over reverse: hessian, hvp)");
  tape& t = tape_of(node, "reducing an expression");
  // max, min and the ±inf norms find their maxima again in the backward pass by comparing the
  // elements with the result: the elements must be the very numbers reduced, so a computed tree
  // is evaluated once into a variable (a SIMD and a scalar exp may differ in the last bit)
  constexpr bool selects = Kind == statistic::max || Kind == statistic::min || Kind == statistic::norm;
  if constexpr (selects && !std::is_same_v<N, var_leaf<R, B>>) {
    if (Kind != statistic::norm || std::isinf(ord))
      return stat_reduce<Kind>(materialise(node).as_leaf(), axis, keepdims, dd, ord);
  }
  const bool grad = recording() && any_requires_grad(t, node);
  const extents shape = expr_shape(node);
  const auto x = strip(node);
  if (axis == whole) {
    const R value = [&]() -> R {
      if constexpr (Kind == statistic::prod) return R(fusor::prod(x));
      else if constexpr (Kind == statistic::max) return fusor::max(x);
      else if constexpr (Kind == statistic::min) return fusor::min(x);
      else if constexpr ((Kind == statistic::var || Kind == statistic::std) && is_dual_v<R>)
        return dual_moment(x, dd, Kind == statistic::std);
      else if constexpr (Kind == statistic::var) return R(fusor::var(x, ddof(dd)));
      else if constexpr (Kind == statistic::std) return R(fusor::std(x, ddof(dd)));
      else if constexpr (Kind == statistic::norm && is_dual_v<R>) return dual_norm(x, ord);
      else if constexpr (Kind == statistic::norm) return R(fusor::norm(x, ord));
      else return plain_logsumexp(x);
    }();
    const std::uint32_t id = t.new_slot<R, B>(extents{}, grad);
    backend_memory<B>::copy_from_host(static_cast<R*>(t.slot_at(id).value), &value, 1);
    if (grad) record_tree(t, &stat_backward<N>, stat_node<N>{node, id, -1, Kind, dd, ord}, node);
    return var<R, B>(&t, id);
  }
  if (shape.size() == 0)
    throw index_error("fusor: cannot reduce a 0-dimensional expression along axis " + std::to_string(axis) +
                      " (expected an expression of rank >= 1)");
  const int ax = normalize_axis(axis, shape.size());
  const array<R, B> value = [&]() -> array<R, B> {
    if constexpr (Kind == statistic::prod) return fusor::prod(x, ax, true);
    else if constexpr (Kind == statistic::max) return fusor::max(x, ax, true);
    else if constexpr (Kind == statistic::min) return fusor::min(x, ax, true);
    else if constexpr ((Kind == statistic::var || Kind == statistic::std) && is_dual_v<R>)
      return dual_moment(x, ax, dd, Kind == statistic::std);
    else if constexpr (Kind == statistic::var) return fusor::var(x, ax, ddof(dd), true);
    else if constexpr (Kind == statistic::std) return fusor::std(x, ax, ddof(dd), true);
    else if constexpr (Kind == statistic::norm && is_dual_v<R>) return dual_norm(x, ord, ax);
    else if constexpr (Kind == statistic::norm) return fusor::norm(x, ord, ax, true);
    else return plain_logsumexp(x, ax);
  }();
  const extents kept = fusor::ext::keep_axis(shape, ax);
  const std::uint32_t id = t.new_slot<R, B>(keepdims ? kept : fusor::ext::drop_axis(shape, ax), grad);
  fusor::ext::assign_expr(leaf<R, B>{static_cast<R*>(t.slot_at(id).value), kept, contiguous_strides(kept)},
                          value.as_leaf(), false);
  if (grad) record_tree(t, &stat_backward<N>, stat_node<N>{node, id, ax, Kind, dd, ord}, node);
  return var<R, B>(&t, id);
}
}  // namespace detail

// ---- prod, max, min -------------------------------------------------------------------------------
template <expression E>
  requires detail::has_vars_v<E>
auto prod(const E& e) {
  return detail::stat_reduce<detail::statistic::prod>(fusor::ext::to_node(e), detail::whole, false);
}
template <expression E>
  requires detail::has_vars_v<E>
auto prod(const E& e, int axis, bool keepdims = false) {
  return detail::stat_reduce<detail::statistic::prod>(fusor::ext::to_node(e), axis, keepdims);
}
template <expression E>
  requires detail::has_vars_v<E>
auto max(const E& e) {
  return detail::stat_reduce<detail::statistic::max>(fusor::ext::to_node(e), detail::whole, false);
}
template <expression E>
  requires detail::has_vars_v<E>
auto max(const E& e, int axis, bool keepdims = false) {
  return detail::stat_reduce<detail::statistic::max>(fusor::ext::to_node(e), axis, keepdims);
}
template <expression E>
  requires detail::has_vars_v<E>
auto min(const E& e) {
  return detail::stat_reduce<detail::statistic::min>(fusor::ext::to_node(e), detail::whole, false);
}
template <expression E>
  requires detail::has_vars_v<E>
auto min(const E& e, int axis, bool keepdims = false) {
  return detail::stat_reduce<detail::statistic::min>(fusor::ext::to_node(e), axis, keepdims);
}

// ---- std (var is in namespace fusor, below) ----
template <expression E>
  requires detail::has_vars_v<E>
auto std(const E& e, ddof d = ddof(0)) {
  return detail::stat_reduce<detail::statistic::std>(fusor::ext::to_node(e), detail::whole, false, d.value);
}
template <expression E>
  requires detail::has_vars_v<E>
auto std(const E& e, int axis, ddof d, bool keepdims = false) {
  return detail::stat_reduce<detail::statistic::std>(fusor::ext::to_node(e), axis, keepdims, d.value);
}
template <expression E>
  requires detail::has_vars_v<E>
auto std(const E& e, int axis, bool keepdims = false) {
  return detail::stat_reduce<detail::statistic::std>(fusor::ext::to_node(e), axis, keepdims, 0);
}

// ---- norm -------------------------------------------------------------------------------------------
/// The vector norm (ord 2, 1, ±inf, 0 or any p > 0, as fusor::norm) of an expression of variables.
template <expression E>
  requires detail::has_vars_v<E>
auto norm(const E& e, double ord = 2) {
  return detail::stat_reduce<detail::statistic::norm>(fusor::ext::to_node(e), detail::whole, false, 0, ord);
}
template <expression E>
  requires detail::has_vars_v<E>
auto norm(const E& e, double ord, int axis, bool keepdims = false) {
  return detail::stat_reduce<detail::statistic::norm>(fusor::ext::to_node(e), axis, keepdims, 0, ord);
}

// ---- logsumexp ----------------------------------------------------------------------------------------
/// log Σ exp(x), computed stably as max + log Σ exp(x − max) (-inf for no elements): a number for
/// arrays and expressions, a 0-d variable for expressions of variables.
template <expression E>
auto logsumexp(const E& e) {
  const auto node = fusor::ext::to_node(e);
  static_assert(real_differentiable_v<value_t<decltype(node)>>,
                "fusor: logsumexp needs float or double values, or their dual numbers");
  if constexpr (detail::has_vars_v<E>) return detail::stat_reduce<detail::statistic::logsumexp>(node, detail::whole, false);
  else return detail::plain_logsumexp(node);
}
/// Along an axis, with keepdims.
template <expression E>
auto logsumexp(const E& e, int axis, bool keepdims = false) {
  const auto node = fusor::ext::to_node(e);
  static_assert(real_differentiable_v<value_t<decltype(node)>>,
                "fusor: logsumexp needs float or double values, or their dual numbers");
  if constexpr (detail::has_vars_v<E>) {
    return detail::stat_reduce<detail::statistic::logsumexp>(node, axis, keepdims);
  } else {
    const extents s = expr_shape(node);
    if (s.size() == 0)
      throw index_error("fusor: cannot reduce a 0-dimensional expression along axis " + std::to_string(axis) +
                        " (expected an expression of rank >= 1)");
    const int ax = normalize_axis(axis, s.size());
    auto out = detail::plain_logsumexp(node, ax);
    if (keepdims) return out;
    return std::move(out).reshape(fusor::ext::drop_axis(s, ax));
  }
}

}  // namespace fusor::ad

// The variance of expressions of variables is declared in namespace fusor, beside the array
// function it overloads: ad::var names the variable type, so a function of that name cannot live
// in fusor::ad. Argument-dependent lookup finds it all the same (fusor is an associated namespace
// of every variable, through its backend), and fusor::var(e) picks it when e holds variables.
namespace fusor {
template <expression E>
  requires ad::detail::has_vars_v<E>
auto var(const E& e, ddof d = ddof(0)) {
  return ad::detail::stat_reduce<ad::detail::statistic::var>(fusor::ext::to_node(e), ad::detail::whole, false, d.value);
}
template <expression E>
  requires ad::detail::has_vars_v<E>
auto var(const E& e, int axis, ddof d, bool keepdims = false) {
  return ad::detail::stat_reduce<ad::detail::statistic::var>(fusor::ext::to_node(e), axis, keepdims, d.value);
}
template <expression E>
  requires ad::detail::has_vars_v<E>
auto var(const E& e, int axis, bool keepdims = false) {
  return ad::detail::stat_reduce<ad::detail::statistic::var>(fusor::ext::to_node(e), axis, keepdims, 0);
}
}  // namespace fusor
