#pragma once
// The one traversal of expression trees. A node kind states once what its operands are and how
// the same node is made over other operands (expr_node<E>); every pass over a tree is written
// with the walks below: its shape (nodes.hpp), the alias check's leaves, the binding to a
// backend's evaluator (bind.hpp), and autodiff's variable counts, stripping, seeding and adjoints
// (ad/var.hpp, ad/adjoint.hpp). So a new node kind is added in one place, its expr_node
// specialisation, plus whatever evaluates it; no pass is taught its arity.
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include "leaf.hpp"

namespace fusor {

/// How a node kind exposes its operands. The primary template is a terminal, a node without
/// operands: array leaves, scalars, generators, and the terminals layers add (autodiff's
/// variables). A node with operands specialises it with
///
///   static constexpr int arity;                        how many operands, > 0
///   static auto children(const E& e);                  std::tuple of const references to them, in tree order
///   template <class... K> static auto rebuild(const E& e, K... kids);   the same node over kids
///
/// rebuild keeps everything that is not an operand (the functor, the target type of a cast).
template <class E>
struct expr_node {
  static constexpr int arity = 0;
  static std::tuple<> children(const E&) { return {}; }
  static E rebuild(const E& e) { return e; }
};

template <class E>
inline constexpr bool is_terminal_v = expr_node<std::remove_cvref_t<E>>::arity == 0;

/// The operands of node e, as a tuple of const references (empty for a terminal).
template <class E>
auto children(const E& e) {
  return expr_node<E>::children(e);
}
/// Node e over the operands kids (as many as e has, in its order).
template <class E, class... K>
auto rebuild(const E& e, K... kids) {
  static_assert(sizeof...(K) == std::size_t(expr_node<E>::arity), "fusor: rebuild needs one operand per child");
  return expr_node<E>::rebuild(e, std::move(kids)...);
}

/// The type of operand I of node kind E.
template <std::size_t I, class E>
using child_t = std::remove_cvref_t<std::tuple_element_t<I, decltype(expr_node<E>::children(std::declval<const E&>()))>>;

/// A node that applies a functor to its operands (unary_expr, binary_expr, ternary_expr and any
/// node of another arity with a functor member `f`, its `functor_type` and `traits`).
template <class E>
concept functor_node = !is_terminal_v<E> && requires(const E& e) {
  typename E::functor_type;
  typename E::traits;
  e.f;
};

/// Calls fn(t) on every terminal t of e, in tree order (left to right).
template <class E, class Fn>
void for_each_terminal(const E& e, Fn&& fn) {
  if constexpr (is_terminal_v<E>) fn(e);
  else std::apply([&](const auto&... k) { (for_each_terminal(k, fn), ...); }, children(e));
}

/// e with every terminal t replaced by fn(t), rebuilt node by node. fn is called on the terminals
/// in tree order (a braced list evaluates left to right), so it may count positions.
template <class E, class Fn>
auto map_terminals(const E& e, Fn&& fn) {
  if constexpr (is_terminal_v<E>) {
    return fn(e);
  } else {
    return std::apply(
        [&](const auto&... k) {
          std::tuple<decltype(map_terminals(k, fn))...> kids{map_terminals(k, fn)...};
          return std::apply([&](auto&... m) { return rebuild(e, m...); }, kids);
        },
        children(e));
  }
}

/// How many terminals of tree E satisfy Pred (a unary type trait), at compile time.
template <template <class> class Pred, class E>
constexpr int terminal_count();
namespace detail {
// the terminals satisfying Pred in operands I... of E
template <template <class> class Pred, class E, std::size_t... I>
constexpr int children_terminal_count(std::index_sequence<I...>) {
  return (0 + ... + terminal_count<Pred, child_t<I, E>>());
}
}  // namespace detail
template <template <class> class Pred, class E>
constexpr int terminal_count() {
  using N = std::remove_cvref_t<E>;  // decltype(e) of a const tree counts as the tree
  if constexpr (is_terminal_v<N>) return Pred<N>::value ? 1 : 0;
  else return detail::children_terminal_count<Pred, N>(std::make_index_sequence<expr_node<N>::arity>{});
}

/// How many terminals satisfying Pred the operands of E before operand I hold: the tree-order
/// position of operand I's first such terminal (I = arity: all of them).
template <template <class> class Pred, class E, std::size_t I>
constexpr int terminals_before() {
  return detail::children_terminal_count<Pred, E>(std::make_index_sequence<I>{});
}

/// The operand of E that holds the terminal satisfying Pred at tree-order position P.
template <template <class> class Pred, class E, int P, std::size_t I = 0>
constexpr std::size_t operand_holding() {
  static_assert(I < std::size_t(expr_node<E>::arity), "fusor: no operand holds this position");
  if constexpr (P < terminals_before<Pred, E, I + 1>()) return I;
  else return operand_holding<Pred, E, P, I + 1>();
}

}  // namespace fusor
