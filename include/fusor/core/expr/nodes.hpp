#pragma once
// Expression nodes: plain aggregates of fixed arity holding their operands by value (arrays as
// leaf, sub-expressions as nodes, scalars as scalar_expr, computed values as generator_expr).
// A node never holds a reference, so `auto e = a + b;` is valid while a and b live, like
// std::span. Nodes only describe work; bind.hpp turns a tree into a backend's evaluator and the
// backends' executors run it. Each node with operands states them once, in its expr_node
// specialisation (traverse.hpp): every walk over trees is written with that.
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include "leaf.hpp"
#include "traverse.hpp"

namespace fusor {

/// Element types an operation computes in and returns, from the functor's policy: each operand
/// is converted to `compute` (a where's condition keeps its own type) and the functor applied.
template <class F, class... V>
struct op_traits {
  using compute = typename F::template compute<V...>;
  template <std::size_t I>
  using arg = std::conditional_t<I == 0 && F::condition_first,
                                 std::tuple_element_t<0, std::tuple<V...>>, compute>;

 private:
  template <std::size_t... I>
  static auto result_of(std::index_sequence<I...>)
      -> decltype(std::declval<const F&>()(std::declval<arg<I>>()...));

 public:
  using result = decltype(result_of(std::index_sequence_for<V...>{}));
};

/// A C++ scalar inside an expression, already converted to the type it combines in.
template <class T>
struct scalar_expr {
  using value_type = T;
  using backend_type = no_backend;
  T value;
};

template <class F, class A>
struct unary_expr {
  using functor_type = F;
  using traits = op_traits<F, value_t<A>>;
  using value_type = typename traits::result;
  using backend_type = backend_of_t<A>;
  F f;
  A a;
};

template <class F, class A, class B>
struct binary_expr {
  using functor_type = F;
  using traits = op_traits<F, value_t<A>, value_t<B>>;
  using value_type = typename traits::result;
  using backend_type = typename detail::common_backend<backend_of_t<A>, backend_of_t<B>>::type;
  F f;
  A a;
  B b;
};

template <class F, class A, class B, class C>
struct ternary_expr {
  using functor_type = F;
  using traits = op_traits<F, value_t<A>, value_t<B>, value_t<C>>;
  using value_type = typename traits::result;
  using backend_type = typename detail::common_backend<
      typename detail::common_backend<backend_of_t<A>, backend_of_t<B>>::type, backend_of_t<C>>::type;
  F f;
  A a;
  B b;
  C c;
};

/// Element type conversion (astype, lazily).
template <class U, class A>
struct cast_expr {
  using value_type = U;
  using backend_type = backend_of_t<A>;
  A a;
};

template <class F, class A>
struct expr_node<unary_expr<F, A>> {
  static constexpr int arity = 1;
  static auto children(const unary_expr<F, A>& e) { return std::tie(e.a); }
  template <class A2>
  static auto rebuild(const unary_expr<F, A>& e, A2 a) {
    return unary_expr<F, A2>{e.f, std::move(a)};
  }
};
template <class F, class A, class B>
struct expr_node<binary_expr<F, A, B>> {
  static constexpr int arity = 2;
  static auto children(const binary_expr<F, A, B>& e) { return std::tie(e.a, e.b); }
  template <class A2, class B2>
  static auto rebuild(const binary_expr<F, A, B>& e, A2 a, B2 b) {
    return binary_expr<F, A2, B2>{e.f, std::move(a), std::move(b)};
  }
};
template <class F, class A, class B, class C>
struct expr_node<ternary_expr<F, A, B, C>> {
  static constexpr int arity = 3;
  static auto children(const ternary_expr<F, A, B, C>& e) { return std::tie(e.a, e.b, e.c); }
  template <class A2, class B2, class C2>
  static auto rebuild(const ternary_expr<F, A, B, C>& e, A2 a, B2 b, C2 c) {
    return ternary_expr<F, A2, B2, C2>{e.f, std::move(a), std::move(b), std::move(c)};
  }
};
template <class U, class A>
struct expr_node<cast_expr<U, A>> {
  static constexpr int arity = 1;
  static auto children(const cast_expr<U, A>& e) { return std::tie(e.a); }
  template <class A2>
  static auto rebuild(const cast_expr<U, A>&, A2 a) {
    return cast_expr<U, A2>{std::move(a)};
  }
};

template <class E>
inline constexpr bool is_cast_v = false;
template <class U, class A>
inline constexpr bool is_cast_v<cast_expr<U, A>> = true;

/// A nullary node: values computed from each element's position instead of read from memory
/// (random draws, ramps, grids), so they fuse into the statement that uses them. Element idx of
/// `shape` sits at position sum(idx[k] * strides[k]): contiguous strides number the elements in
/// C order, a 0 stride repeats the values along an axis. G is a trivially copyable FUSOR_HD
/// function object with a `value_type` and `fill(first, out, count)`, which writes the values at
/// positions first, first + 1, ..., first + count - 1 (a run lets a generator share work between
/// neighbours, as Philox blocks and Box-Muller pairs do). A generator may declare
/// `static constexpr index_t block`: its values come in aligned runs of that many positions, and a
/// loop that reads one position at a time may ask for the whole run (even past the last element).
template <class G, class B>
struct generator_expr {
  using value_type = typename G::value_type;
  using backend_type = B;
  G gen;
  extents shape;
  extents strides;
};

template <class T>
inline constexpr bool is_expression_v<scalar_expr<T>> = true;
template <class G, class B>
inline constexpr bool is_expression_v<generator_expr<G, B>> = true;
template <class F, class A>
inline constexpr bool is_expression_v<unary_expr<F, A>> = true;
template <class F, class A, class B>
inline constexpr bool is_expression_v<binary_expr<F, A, B>> = true;
template <class F, class A, class B, class C>
inline constexpr bool is_expression_v<ternary_expr<F, A, B, C>> = true;
template <class U, class A>
inline constexpr bool is_expression_v<cast_expr<U, A>> = true;

// Shapes are computed when an expression is evaluated (NumPy checks at the operation; we check
// once per statement, naming both offending shapes).
template <class T>
extents expr_shape(const scalar_expr<T>&) {
  return {};
}
template <class G, class B>
const extents& expr_shape(const generator_expr<G, B>& e) {
  return e.shape;
}
/// A node with operands has the shape its operands broadcast to.
template <class E>
  requires(!is_terminal_v<E>)
extents expr_shape(const E& e) {
  return std::apply(
      [](const auto& first, const auto&... rest) {
        extents s = expr_shape(first);
        ((s = broadcast_shapes(s, expr_shape(rest))), ...);
        return s;
      },
      children(e));
}

template <class E>
inline constexpr bool is_leaf_v = false;
template <class T, class B>
inline constexpr bool is_leaf_v<leaf<T, B>> = true;

/// Calls f(leaf) for every array leaf of an expression, in tree order (used by alias checks;
/// generators and scalars read no memory).
template <class E, class Fn>
void for_each_leaf(const E& e, Fn&& f) {
  for_each_terminal(e, [&](const auto& t) {
    if constexpr (is_leaf_v<std::remove_cvref_t<decltype(t)>>) f(t);
  });
}

namespace detail {
/// The node that stands for an operand: arrays and views become leaves, nodes stay.
template <class E>
auto to_node(const E& e) {
  if constexpr (requires { e.as_leaf(); }) return e.as_leaf();
  else return e;
}
}  // namespace detail
template <class E>
using node_t = decltype(detail::to_node(std::declval<const std::remove_cvref_t<E>&>()));

}  // namespace fusor
