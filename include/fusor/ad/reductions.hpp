#pragma once
// Reductions of expressions of variables beyond sum and mean (record.hpp): prod, max, min, var,
// std, norm and logsumexp, whole or along an axis, with keepdims. Like sum, each is one node that
// keeps the expression tree: the forward pass reduces the fused expression, and the backward pass
// runs the reduction's seed (the output's adjoint times the reduction's derivative, itself an
// expression of the tree's values) through the tree's adjoint, one fused pass per input. The
// auxiliary reductions a derivative needs (the mean of var, the count of tied maxima, the zeros
// of prod) are computed in the backward pass, so a forward pass costs what the array function costs.
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
  leaf<R, B> spread(const R* data) const {
    extents st = contiguous_strides(fusor::detail::keep_axis(shape, axis));
    st[axis] = 0;
    return {const_cast<R*>(data), shape, st};
  }
  leaf<R, B> spread(const array<R, B>& a) const { return spread(a.data()); }
};

/// The seed of statistic n.kind for tree x: its output y and adjoint g (reduced quantities), the
/// count of reduced elements, propagated through the tree.
template <class R, class E, class Reduced, class Y>
void stat_propagate(tape& t, const stat_node<E>& n, const Reduced& red, const Y& y, const Y& g, R count) {
  const extents shape = expr_shape(n.tree);
  const auto x = strip(n.tree);
  const auto gy = red.spread(g);
  const auto yy = red.spread(y);
  if constexpr (is_dual_v<R>) {  // forward over reverse: logsumexp only (stat_reduce checks)
    propagate(t, n.tree, gy * exp(x - yy), shape);
  } else {
    switch (n.kind) {
      case statistic::prod: {
        // d/dx_i prod = the product of the others: q/x_i without zeros, q at the zero when exactly one
        const auto zeros = red.total(cast<R>(x == R(0)));
        const auto q = red.product(where(x == R(0), R(1), x));
        const auto z = red.spread(zeros);
        const auto qq = red.spread(q);
        propagate(t, n.tree, gy * where(x == R(0), where(z == R(1), qq, R(0)), where(z == R(0), qq / x, R(0))), shape);
        break;
      }
      case statistic::max:
      case statistic::min: {
        const auto ties = red.total(cast<R>(x == yy));
        propagate(t, n.tree, where(x == yy, gy / red.spread(ties), R(0)), shape);
        break;
      }
      case statistic::var:
      case statistic::std: {
        const auto mean = [&] {
          if constexpr (std::is_same_v<Y, R>) return R(red.total(x) / count);
          else {
            auto m = red.total(x);
            m /= count;
            return m;
          }
        }();
        const R dof = R(std::max<index_t>(index_t(count) - n.ddof, 0));
        if (n.kind == statistic::var) propagate(t, n.tree, gy * (R(2) / dof) * (x - red.spread(mean)), shape);
        else propagate(t, n.tree, where(yy == R(0), R(0), gy * (x - red.spread(mean)) / (dof * yy)), shape);
        break;
      }
      case statistic::norm: {
        const R ord = R(n.ord);
        if (n.ord == 0) break;  // a count: no derivative
        if (n.ord == 1) {
          propagate(t, n.tree, gy * sign(x), shape);
        } else if (std::isinf(n.ord)) {
          const auto ties = red.total(cast<R>(abs(x) == yy));
          propagate(t, n.tree, where(abs(x) == yy, gy * sign(x) / red.spread(ties), R(0)), shape);
        } else if (n.ord == 2) {
          propagate(t, n.tree, where(yy == R(0), R(0), gy * x / yy), shape);
        } else {
          propagate(t, n.tree, where(yy == R(0), R(0), gy * sign(x) * pow(abs(x) / yy, ord - R(1))), shape);
        }
        break;
      }
      case statistic::logsumexp:
        propagate(t, n.tree, gy * exp(x - yy), shape);
        break;
    }
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
    stat_propagate<R>(t, n, whole_reduced<R>{}, y, g, R(shape.numel()));
  } else {
    stat_propagate<R>(t, n, axis_reduced<R, B>{n.axis, shape}, static_cast<const R*>(s.value),
                      static_cast<const R*>(s.adjoint), R(shape[n.axis]));
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
    return full<R, B>(fusor::detail::keep_axis(shape, ax), R(-std::numeric_limits<lane_t<R>>::infinity()));
  array<R, B> m = fusor::max(x, ax, true);
  m = where(isfinite(m), m, R(0));
  const axis_reduced<R, B> red{ax, shape};
  array<R, B> out = fusor::sum(exp(x - red.spread(m)), ax, true);
  out = log(out) + m;
  return out;
}

template <statistic Kind, class N>
auto stat_reduce(const N& node, int axis, bool keepdims, int dd = 0, double ord = 2) {
  using R = value_t<N>;
  using B = backend_of_t<N>;
  static_assert(std::is_floating_point_v<R> || (real_differentiable_v<R> && Kind == statistic::logsumexp),
                "fusor: reductions of variables need float or double values (cast the expression first); forward "
                "over reverse (hessian, hvp: a tape of dual numbers) goes through sum, mean and logsumexp, not yet "
                "through prod, max, min, var, std or norm");
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
      else if constexpr (Kind == statistic::var) return R(fusor::var(x, ddof(dd)));
      else if constexpr (Kind == statistic::std) return R(fusor::std(x, ddof(dd)));
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
    else if constexpr (Kind == statistic::var) return fusor::var(x, ax, ddof(dd), true);
    else if constexpr (Kind == statistic::std) return fusor::std(x, ax, ddof(dd), true);
    else if constexpr (Kind == statistic::norm) return fusor::norm(x, ord, ax, true);
    else return plain_logsumexp(x, ax);
  }();
  const extents kept = fusor::detail::keep_axis(shape, ax);
  const std::uint32_t id = t.new_slot<R, B>(keepdims ? kept : fusor::detail::drop_axis(shape, ax), grad);
  fusor::detail::assign_expr(leaf<R, B>{static_cast<R*>(t.slot_at(id).value), kept, contiguous_strides(kept)},
                             value.as_leaf(), false);
  if (grad) record_tree(t, &stat_backward<N>, stat_node<N>{node, id, ax, Kind, dd, ord}, node);
  return var<R, B>(&t, id);
}
}  // namespace detail

// ---- prod, max, min -------------------------------------------------------------------------------
template <expression E>
  requires detail::has_vars_v<E>
auto prod(const E& e) {
  return detail::stat_reduce<detail::statistic::prod>(fusor::detail::to_node(e), detail::whole, false);
}
template <expression E>
  requires detail::has_vars_v<E>
auto prod(const E& e, int axis, bool keepdims = false) {
  return detail::stat_reduce<detail::statistic::prod>(fusor::detail::to_node(e), axis, keepdims);
}
template <expression E>
  requires detail::has_vars_v<E>
auto max(const E& e) {
  return detail::stat_reduce<detail::statistic::max>(fusor::detail::to_node(e), detail::whole, false);
}
template <expression E>
  requires detail::has_vars_v<E>
auto max(const E& e, int axis, bool keepdims = false) {
  return detail::stat_reduce<detail::statistic::max>(fusor::detail::to_node(e), axis, keepdims);
}
template <expression E>
  requires detail::has_vars_v<E>
auto min(const E& e) {
  return detail::stat_reduce<detail::statistic::min>(fusor::detail::to_node(e), detail::whole, false);
}
template <expression E>
  requires detail::has_vars_v<E>
auto min(const E& e, int axis, bool keepdims = false) {
  return detail::stat_reduce<detail::statistic::min>(fusor::detail::to_node(e), axis, keepdims);
}

// ---- std (var is in namespace fusor, below) ----
template <expression E>
  requires detail::has_vars_v<E>
auto std(const E& e, ddof d = ddof(0)) {
  return detail::stat_reduce<detail::statistic::std>(fusor::detail::to_node(e), detail::whole, false, d.value);
}
template <expression E>
  requires detail::has_vars_v<E>
auto std(const E& e, int axis, ddof d, bool keepdims = false) {
  return detail::stat_reduce<detail::statistic::std>(fusor::detail::to_node(e), axis, keepdims, d.value);
}
template <expression E>
  requires detail::has_vars_v<E>
auto std(const E& e, int axis, bool keepdims = false) {
  return detail::stat_reduce<detail::statistic::std>(fusor::detail::to_node(e), axis, keepdims, 0);
}

// ---- norm -------------------------------------------------------------------------------------------
/// The vector norm (ord 2, 1, ±inf, 0 or any p > 0, as fusor::norm) of an expression of variables.
template <expression E>
  requires detail::has_vars_v<E>
auto norm(const E& e, double ord = 2) {
  return detail::stat_reduce<detail::statistic::norm>(fusor::detail::to_node(e), detail::whole, false, 0, ord);
}
template <expression E>
  requires detail::has_vars_v<E>
auto norm(const E& e, double ord, int axis, bool keepdims = false) {
  return detail::stat_reduce<detail::statistic::norm>(fusor::detail::to_node(e), axis, keepdims, 0, ord);
}

// ---- logsumexp ----------------------------------------------------------------------------------------
/// log Σ exp(x), computed stably as max + log Σ exp(x − max) (-inf for no elements): a number for
/// arrays and expressions, a 0-d variable for expressions of variables.
template <expression E>
auto logsumexp(const E& e) {
  const auto node = fusor::detail::to_node(e);
  static_assert(real_differentiable_v<value_t<decltype(node)>>,
                "fusor: logsumexp needs float or double values, or their dual numbers");
  if constexpr (detail::has_vars_v<E>) return detail::stat_reduce<detail::statistic::logsumexp>(node, detail::whole, false);
  else return detail::plain_logsumexp(node);
}
/// Along an axis, with keepdims.
template <expression E>
auto logsumexp(const E& e, int axis, bool keepdims = false) {
  const auto node = fusor::detail::to_node(e);
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
    return std::move(out).reshape(fusor::detail::drop_axis(s, ax));
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
  return ad::detail::stat_reduce<ad::detail::statistic::var>(detail::to_node(e), ad::detail::whole, false, d.value);
}
template <expression E>
  requires ad::detail::has_vars_v<E>
auto var(const E& e, int axis, ddof d, bool keepdims = false) {
  return ad::detail::stat_reduce<ad::detail::statistic::var>(detail::to_node(e), axis, keepdims, d.value);
}
template <expression E>
  requires ad::detail::has_vars_v<E>
auto var(const E& e, int axis, bool keepdims = false) {
  return ad::detail::stat_reduce<ad::detail::statistic::var>(detail::to_node(e), axis, keepdims, 0);
}
}  // namespace fusor
