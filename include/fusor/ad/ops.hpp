#pragma once
// Operations the elementwise tree cannot express (matmul, softmax, concatenate, a user's
// custom_vjp): each is recorded as one node whose backward function receives the output's adjoint
// and accumulates into its inputs' adjoints. record_op is the one registration point: the library's
// own operations and custom_vjp both go through it.
//
// An operation's operands are variables (or views of them), expressions of variables (evaluated
// into a variable first: one node), or constants. A constant array or view is read where it lies,
// as an expression's leaves are (watched like a parameter: a write before backward is an error, and
// its buffer outlives its array until the tape's reset); a
// constant expression is evaluated into a tape buffer.
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "../core/array.hpp"
#include "../core/assign.hpp"
#include "../core/shape_ops.hpp"
#include "record.hpp"
#include "tape.hpp"
#include "var.hpp"
#include "../core/ext.hpp"

namespace fusor::ad::detail {

/// One operand of an operation, as plain data: its elements (a view), and the variable slot they
/// belong to when `grad` (a constant has none).
template <class T, class B>
struct operand {
  using value_type = T;
  using backend_type = B;
  leaf<T, B> value;
  std::uint32_t id = 0;
  std::uint64_t generation = 0;
  bool grad = false;

  array_view<T, B> view() const { return {value.data, value.shape, value.strides}; }
  const extents& shape() const { return value.shape; }
  var_leaf<T, B> as_var(tape& t) const { return {value, &t, id, generation, t.identity()}; }
};

template <class X>
inline constexpr bool holds_vars_v = expression<std::remove_cvref_t<X>> && has_vars_v<std::remove_cvref_t<X>>;

/// The tape of the variables among xs (the same checks as an expression's); nullptr when none.
template <class... X>
tape* common_tape(const char* what, const X&... xs) {
  tape* t = nullptr;
  auto visit = [&](const auto& x) {
    using N = std::remove_cvref_t<decltype(x)>;
    if constexpr (holds_vars_v<N>) {
      tape& u = tape_of(fusor::ext::to_node(x), what);
      if (t != nullptr && t != &u)
        throw tape_error(std::string("fusor: ") + what +
                         " of variables from two different tapes (expected every variable of one operation on one "
                         "tape; use ad::stop_gradient on the other tape's values to use them as constants)");
      t = &u;
    }
  };
  (visit(xs), ...);
  return t;
}

/// x as an operand of element type T on tape t (see the file comment for what is copied).
template <class T, class X>
auto make_operand(tape& t, const X& x) {
  using B = backend_of_t<node_t<X>>;
  using V = value_t<node_t<X>>;
  // a plain constant beside dual-number variables (forward over reverse) is promoted to duals
  constexpr bool promoted = is_dual_v<T> && std::is_same_v<V, lane_t<T>> && !holds_vars_v<X>;
  static_assert(std::is_same_v<V, T> || promoted,
                "fusor: the operands of this operation must have one element type (cast with astype first)");
  if constexpr (promoted) {
    const auto node = fusor::ext::to_node(x);
    const std::uint32_t id = t.new_slot<T, B>(expr_shape(node), false);
    const leaf<T, B> dst = value_leaf<T, B>(t, id);
    fusor::ext::assign_expr(dst, cast_expr<T, std::remove_cv_t<decltype(node)>>{node}, false);
    return operand<T, B>{dst, 0, 0, false};
  } else if constexpr (holds_vars_v<X>) {
    if constexpr (std::is_same_v<X, var_leaf<T, B>>) {
      return operand<T, B>{x.value, x.id, x.generation, t.slot_at(x.id).requires_grad};
    } else {
      const var<T, B> v = [&] {
        if constexpr (is_var_v<X>) return x;
        else return materialise(fusor::ext::to_node(x));
      }();
      const var_leaf<T, B> l = v.as_leaf();
      return operand<T, B>{l.value, l.id, l.generation, t.slot_at(l.id).requires_grad};
    }
  } else if constexpr (fusor::ext::is_array_v<X> || fusor::ext::is_view_v<X>) {
    if (recording() || t.capturing()) t.watch(x.as_leaf(), false);  // read where it lies, in backward and replays
    return operand<T, B>{x.as_leaf(), 0, 0, false};
  } else {  // a constant expression: evaluated into a tape buffer (reused after reset, like any slot)
    const auto node = fusor::ext::to_node(x);
    using N = std::remove_cv_t<decltype(node)>;
    const std::uint32_t id = t.new_slot<T, B>(expr_shape(node), false);
    const map_node<N> step{node, id};
    map_forward<N>(t, &step);
    capture_tree(t, &map_forward<N>, step, id, node, false);
    return operand<T, B>{value_leaf<T, B>(t, id), 0, 0, false};
  }
}

/// A node for an operation: `back(tape, g)` receives the output's adjoint g (a contiguous leaf of
/// the output's shape) and accumulates into the operation's inputs.
template <class T, class B, class Back>
struct op_node {
  std::uint32_t out;
  Back back;
};
template <class T, class B, class Back>
void op_backward(tape& t, const void* p) {
  const auto& n = *static_cast<const op_node<T, B, Back>*>(p);
  const auto& s = t.slot_at(n.out);
  if (!s.adjoint_written) return;  // nothing downstream used the output
  const leaf<T, B> g{static_cast<T*>(s.adjoint), s.shape, contiguous_strides(s.shape)};
  n.back(t, g);
}
// A backward function that is not plain data lives in the tape's kept objects; the node holds its address.
template <class Back>
struct kept_back {
  Back* back;
  template <class G>
  void operator()(tape& t, const G& g) const {
    (*back)(t, g);
  }
};

/// Records an operation whose output is slot `out` (element type T): the registration point of
/// every non-elementwise operation. A plain-data `back` goes into the arena (no allocation).
template <class T, class B, class Back>
void record_op(tape& t, std::uint32_t out, Back back) {
  if constexpr (std::is_trivially_copyable_v<Back> && std::is_trivially_destructible_v<Back>) {
    t.record(&op_backward<T, B, Back>, op_node<T, B, Back>{out, back});
  } else {
    Back* kept = t.keep(std::move(back));
    t.record(&op_backward<T, B, kept_back<Back>>, op_node<T, B, kept_back<Back>>{out, kept_back<Back>{kept}});
  }
}

/// A new output variable of `shape` on t, recording when any operand needs a gradient; returns
/// (variable, whether a node must be recorded).
template <class T, class B>
std::pair<var<T, B>, bool> new_output(tape& t, const extents& shape, bool any_grad) {
  const bool grad = recording() && any_grad;
  return {var<T, B>(&t, t.new_slot<T, B>(shape, grad)), grad};
}
/// A variable on t whose value is `result` (kept by the tape until reset).
template <class T, class B>
std::pair<var<T, B>, bool> kept_output(tape& t, array<T, B> result, bool any_grad) {
  const bool grad = recording() && any_grad;
  const extents shape = result.shape();
  array<T, B>* kept = t.keep(std::move(result));
  return {var<T, B>(&t, t.borrowed_slot<T, B>(kept->data(), shape, grad)), grad};
}

template <class T, class B>
leaf<T, B> output_leaf(const var<T, B>& v) {
  return v.as_leaf().value;
}

/// adjoint(operand) += total (an expression of shape `out`, summed over broadcast axes), for a
/// variable operand; nothing for a constant.
template <class T, class B, class X>
void accumulate_into(tape& t, const operand<T, B>& o, const X& total, const extents& out) {
  if (o.grad) accumulate(t, o.as_var(t), total, out);
}

}  // namespace fusor::ad::detail
