#pragma once
// Graphs as hypervectors (torchhd's Graph): each edge of node vectors u -> v becomes one vector,
// and a graph is the bundle of its edges. An undirected edge is bind(u, v); a directed one is
// bind(permute(u), v), the bigram (source, target) as ngrams binds it, so that the two directions
// differ. Queries unbind: the neighbours of a node, the successors or predecessors of one, each a
// noisy bundle that an item memory of the nodes cleans up; an edge's presence is its similarity to
// the graph. Every call takes whole batches of edges, graphs and nodes. Directed graphs are not
// defined for HRR, whose bind commutes with the shift (a value_error).
#include <string>

#include "../hrr.hpp"
#include "../operations.hpp"
#include "structures.hpp"
#include "../../core/ext.hpp"

namespace fusor::vsa {

enum class edge_kind { undirected, directed };

namespace detail {
/// The edges (..., E, 2) as int64 node indices, each checked to lie in [0, K) for nodes (K, width).
template <class M, class C, class I>
auto checked_edges(const M& m, const C& nodes, const I& edges, const char* what) {
  static_assert(integer<value_t<I>>,
                "fusor::vsa: edges must be integer node indices");
  const extents ns = checked_rows(m, nodes, what, "nodes");
  const extents es = expr_shape(fusor::ext::to_node(edges));
  if (ns.size() != 2 || es.size() < 2 || es[es.size() - 1] != 2)
    throw shape_error("fusor::vsa::" + std::string(what) + ": expects nodes (K, " + std::to_string(m.width()) +
                      ") and edges (..., E, 2) of node indices, got shapes " + to_string(ns) + " and " + to_string(es));
  using B = backend_of_t<decltype(fusor::ext::contiguous_of(nodes).view())>;
  array<std::int64_t, B> idx(cast<std::int64_t>(edges));
  fusor::ext::check_indices(("vsa::" + std::string(what)).c_str(), "edges of node indices", "edges", idx, ns[0]);
  return idx;
}
template <class M>
void require_edge_kind(edge_kind kind, const char* what) {
  if (kind == edge_kind::undirected && !M::commutative)
    throw value_error("fusor::vsa::" + std::string(what) + ": an undirected edge needs a commutative bind, and " +
                      std::string(M::name) + "'s is not; use edge_kind::directed");
  if (kind == edge_kind::directed) require_order<M>(what, "an edge's direction");
}
}  // namespace detail

/// The vector of each edge (..., E, 2) into nodes (K, width): bind(u, v) (undirected) or
/// bind(permute(u), v) (directed). Shape (..., E, width).
template <model M, class C, expression I>
auto edge_vectors(const M& m, const C& nodes, const I& edges, edge_kind kind = edge_kind::undirected) {
  detail::require_edge_kind<M>(kind, "edge_vectors");
  const auto idx = detail::checked_edges(m, nodes, edges, "edge_vectors");
  const auto nc = fusor::ext::contiguous_of(nodes);
  using T = typename M::value_type;
  using B = backend_of_t<decltype(nc.view())>;
  extents out = idx.shape();
  out[out.size() - 1] = m.width();
  const index_t count = idx.size() / 2;
  const auto pairs = idx.reshape(extents{count, 2});
  const array<std::int64_t, B> from = pairs(all, 0).copy(), to = pairs(all, 1).copy();
  const array<T, B> u = take(nc.view(), from, 0), v = take(nc.view(), to, 0);
  if (kind == edge_kind::directed) {
    const array<T, B> pu = m.permute(u, 1);
    return array<T, B>(m.bind(pu, v)).reshape(out);
  }
  return array<T, B>(m.bind(u, v)).reshape(out);
}

/// A graph per batch: the bundle of its edges (..., E, 2) into nodes (K, width): (..., width). For
/// MAP and FHRR with ties to the first edge, a directed graph is summed in one pass (its edges are
/// the bigrams of the flattened index pairs).
template <model M, class C, expression I>
auto graph(const M& m, const C& nodes, const I& edges, edge_kind kind = edge_kind::undirected, const bundle_options& o = {}) {
  detail::require_edge_kind<M>(kind, "graph");
  using T = typename M::value_type;
  using B = backend_of_t<decltype(fusor::ext::contiguous_of(nodes).view())>;
  if constexpr (detail::elementwise_product_v<M>) {
    if (kind == edge_kind::directed && o.ties == tie_break::first) {
      const auto idx = detail::checked_edges(m, nodes, edges, "graph");
      const extents es = idx.shape();
      if (es[es.size() - 2] > 0) {
        extents pairs = es;  // (..., 2E): edge e is the bigram at 2e
        pairs.resize(es.size() - 1);
        pairs[pairs.size() - 1] = 2 * es[es.size() - 2];
        return array<T, B>(ngrams(m, nodes, idx.reshape(pairs), 2, 2, o));
      }
    }
  }
  return array<T, B>(bundle(m, edge_vectors(m, nodes, edges, kind), o));
}

/// The nodes joined to each node in an undirected graph, as one noisy bundle: unbind(g, node).
template <model M, class G, class X>
auto neighbours(const M& m, const G& g, const X& node) {
  static_assert(M::commutative, "fusor::vsa::neighbours: an undirected graph needs a commutative bind; for a "
                                "directed graph use successors or predecessors");
  return unbind(m, g, node);
}

/// The targets of each node's edges in a directed graph, as one noisy bundle:
/// unbind_left(g, permute(node)).
template <model M, class G, class X>
auto successors(const M& m, const G& g, const X& node) {
  detail::require_order<M>("successors", "an edge's direction");
  const array<typename M::value_type, backend_of_t<decltype(fusor::ext::contiguous_of(node).view())>> key(
      permute(m, node, 1));
  return array<typename M::value_type, backend_of_t<decltype(key.view())>>(unbind_left(m, g, key));
}

/// The sources of the edges into each node of a directed graph, as one noisy bundle:
/// unpermute(unbind(g, node)).
template <model M, class G, class X>
auto predecessors(const M& m, const G& g, const X& node) {
  detail::require_order<M>("predecessors", "an edge's direction");
  const array<typename M::value_type, backend_of_t<decltype(fusor::ext::contiguous_of(node).view())>> u(
      unbind(m, g, node));
  return array<typename M::value_type, backend_of_t<decltype(u.view())>>(unpermute(m, u, 1));
}

}  // namespace fusor::vsa
