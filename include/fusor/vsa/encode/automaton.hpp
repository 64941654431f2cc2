#pragma once
// Finite-state automata as hypervectors (torchhd's FiniteStateAutomata): a transition from state s
// on symbol a to state t is bind(bind(s, a), permute(t)), and an automaton is the bundle of its
// transitions. Unbinding the current state and symbol gives the next state (noisy; an item memory
// of the states cleans it up). The permutation keeps s -> t apart from t -> s; HRR, whose bind
// commutes with it, is a value_error.
#include <string>

#include "../operations.hpp"
#include "structures.hpp"
#include "../../core/ext.hpp"

namespace fusor::vsa {

/// Automata of transitions (..., T, 3), each (state, symbol, next state) as indices into states
/// (S, width) and symbols (A, width): the bundle of bind(bind(s, a), permute(t)), (..., width).
template <model M, class S, class A, expression I>
auto automaton(const M& m, const S& states, const A& symbols, const I& transitions, const bundle_options& o = {}) {
  detail::require_order<M>("automaton", "a transition's direction");
  const extents ss = detail::checked_rows(m, states, "automaton", "states");
  const extents as = detail::checked_rows(m, symbols, "automaton", "symbols");
  const extents ts = expr_shape(fusor::ext::to_node(transitions));
  if (ss.size() != 2 || as.size() != 2 || ts.size() < 2 || ts[ts.size() - 1] != 3)
    throw shape_error("fusor::vsa::automaton: expects states (S, " + std::to_string(m.width()) + "), symbols (A, " +
                      std::to_string(m.width()) + ") and transitions (..., T, 3) of (state, symbol, next state), got shapes " +
                      to_string(ss) + ", " + to_string(as) + " and " + to_string(ts));
  const auto sc = fusor::ext::contiguous_of(states);
  const auto ac = fusor::ext::contiguous_of(symbols);
  using T = typename M::value_type;
  using B = backend_of_t<decltype(sc.view())>;
  static_assert(integer<value_t<I>>,
                "fusor::vsa::automaton: transitions must be integer indices");
  const array<std::int64_t, B> idx(cast<std::int64_t>(transitions));
  const index_t count = idx.size() / 3;
  const auto triples = idx.reshape(extents{count, 3});
  auto column = [&](int c, index_t n) {
    array<std::int64_t, B> col = triples(all, c).copy();
    const char* given[] = {"states", "symbols", "next states"};
    fusor::ext::check_indices("vsa::automaton", c == 1 ? "symbol indices" : "state indices", given[c], col, n);
    return col;
  };
  const array<T, B> from = take(sc.view(), column(0, ss[0]), 0), on = take(ac.view(), column(1, as[0]), 0);
  const array<T, B> to = take(sc.view(), column(2, ss[0]), 0);
  const array<T, B> edge = m.bind(from, on), next = m.permute(to, 1);
  extents rows = ts;
  rows[rows.size() - 1] = m.width();
  return array<T, B>(bundle(m, array<T, B>(m.bind(edge, next)).reshape(rows), o));
}

/// The state each automaton reaches from `state` on `symbol` (rows broadcast as bind does):
/// unpermute(unbind_left(automaton, bind(state, symbol))), noisy.
template <model M, class F, class S, class A>
auto next_state(const M& m, const F& fsa, const S& state, const A& symbol) {
  detail::require_order<M>("next_state", "a transition's direction");
  const auto sc = fusor::ext::contiguous_of(state);
  using T = typename M::value_type;
  using B = backend_of_t<decltype(sc.view())>;
  const array<T, B> edge(vsa::bind(m, sc.view(), symbol));
  const array<T, B> next(unbind_left(m, fsa, edge));
  return array<T, B>(unpermute(m, next, 1));
}

}  // namespace fusor::vsa
