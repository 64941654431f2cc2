#pragma once
// From a tree to what a backend runs. bind<Bk>(e, out) turns a tree of core's nodes into a
// backend's evaluator bound to the output shape `out`: every strided operand (array leaves and
// generators) gets its strides aligned to the output's rank, 0 on the axes it is broadcast
// along. The backend's binding Bk supplies only the evaluator of each kind of node:
//
//   Bk::bind_leaf(const leaf<T, B>&, const index_t* strides)     memory read through strides
//   Bk::bind_generator(const G&, const index_t* strides)          values computed from positions
//   Bk::bind_scalar(const scalar_expr<T>&)                        one value everywhere
//   Bk::template bind_map<F, Traits>(f, children...)              a functor over its operands
//   Bk::template bind_cast<U>(child)                              an element type conversion
//
// Every evaluator exposes `leaves` (how many stride tables it holds) and visit_strides(v), which
// calls v(index_t*) on each table in tree order; the executors coalesce, permute and seek
// through those. A node with a functor over any number of operands binds as a map through its
// expr_node (traverse.hpp); a new node type of another kind is one more overload here mapping it
// onto these kinds.
#include <array>
#include <cstddef>
#include <tuple>

#include "../dependent_false.hpp"
#include "nodes.hpp"

namespace fusor::detail {

/// The strides of an operand of `shape` and `strides` inside an output of shape `out` (which
/// it broadcasts to): aligned to the right, 0 on axes it lacks or has as 1.
inline void output_strides(const extents& shape, const extents& strides, const extents& out, index_t* st) {
  const int n = out.size(), off = n - shape.size();
  for (int k = 0; k < max_rank; ++k)
    st[k] = (k >= n || k < off || shape[k - off] == 1) ? 0 : strides[k - off];
}

template <class Bk>
struct bind_tree {
  template <class T, class B>
  static auto of(const leaf<T, B>& l, const extents& out) {
    index_t st[max_rank];
    output_strides(l.shape, l.strides, out, st);
    return Bk::bind_leaf(l, st);
  }
  template <class G, class B>
  static auto of(const generator_expr<G, B>& g, const extents& out) {
    index_t st[max_rank];
    output_strides(g.shape, g.strides, out, st);
    return Bk::bind_generator(g.gen, st);
  }
  template <class T>
  static auto of(const scalar_expr<T>& s, const extents&) {
    return Bk::bind_scalar(s);
  }
  // a functor over its operands, whatever their number
  template <functor_node E>
  static auto of(const E& e, const extents& out) {
    return std::apply(
        [&](const auto&... k) {
          return Bk::template bind_map<typename E::functor_type, typename E::traits>(e.f, of(k, out)...);
        },
        children(e));
  }
  template <class U, class A>
  static auto of(const cast_expr<U, A>& e, const extents& out) {
    return Bk::template bind_cast<U>(of(e.a, out));
  }
  // Anything else is a node the engine does not evaluate itself (autodiff's variables: a path
  // that evaluated them here would drop their gradient).
  template <class E>
  static auto of(const E&, const extents&) {
    static_assert(dependent_false<E>,
                  "fusor: this expression holds a node the engine cannot evaluate directly; for autodiff "
                  "variables (fusor::ad::var) call the reduction unqualified (sum(x * x): argument-dependent "
                  "lookup picks fusor::ad::sum) or materialise with ad::eval / var<T> y = expr");
    return 0;
  }
};

/// The backend Bk's evaluator of expression e, bound to the output shape `out`.
template <class Bk, class E>
auto bind(const E& e, const extents& out) {
  return bind_tree<Bk>::of(e, out);
}

/// Pointers to the stride tables of every strided operand of an evaluator, after `Extra` leading
/// slots (for the destination's): what coalesce() merges.
template <std::size_t Extra, class Ev>
std::array<index_t*, Extra + std::size_t(Ev::leaves)> stride_table(Ev& ev) {
  std::array<index_t*, Extra + std::size_t(Ev::leaves)> t{};
  std::size_t k = Extra;
  ev.visit_strides([&](index_t* s) { t[k++] = s; });
  return t;
}

}  // namespace fusor::detail
