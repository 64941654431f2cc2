#pragma once
// Binary trees as hypervectors (torchhd's Tree): a leaf's path from the root, a sequence of left
// (0) and right (1) steps, is the product of the step roles permuted by depth,
// permute(role[p_0], 0) * permute(role[p_1], 1) * ...; a tree is the record of its leaves bound to
// their paths, and unbinding a path gives its leaf back (noisy; an item memory cleans it up).
// Paths of different depths share one array: a path ends at its first -1. HRR, whose bind commutes
// with the shift (lr and rl would be one path), is a value_error.
#include <string>

#include "../operations.hpp"
#include "structures.hpp"
#include "../../core/ext.hpp"

namespace fusor::vsa {

/// The vectors of paths (..., D) of 0 (left) and 1 (right) steps, each padded with -1 after its
/// end, for step roles (2, width): (..., width). The empty path (the root) is the identity. One
/// gather and one bind per depth for the whole batch; the paths are checked on the host.
template <model M, class R, expression I>
auto tree_paths(const M& m, const R& roles, const I& paths) {
  detail::require_order<M>("tree_paths", "a step's depth");
  const extents rs = detail::checked_rows(m, roles, "tree_paths", "roles");
  if (rs.size() != 2 || rs[0] != 2)
    throw shape_error("fusor::vsa::tree_paths: expects roles (2, " + std::to_string(m.width()) +
                      "): the left and the right step, got shape " + to_string(rs));
  const auto rc = fusor::ext::contiguous_of(roles);
  using T = typename M::value_type;
  using B = backend_of_t<decltype(rc.view())>;
  static_assert(integer<value_t<I>>,
                "fusor::vsa::tree_paths: paths must be integers (0 left, 1 right, -1 padding)");
  const array<std::int64_t, B> tok(cast<std::int64_t>(paths));
  const extents ps = tok.shape();
  if (ps.size() < 1)
    throw shape_error("fusor::vsa::tree_paths: expects paths (..., D), got a scalar");
  detail::checked_token_lengths(tok, 2, "tree_paths", "a step (0 left, 1 right)", "path");
  const index_t depth = ps[ps.size() - 1], count = detail::leading_count(ps), w = m.width();
  extents out = ps;
  out[out.size() - 1] = w;
  array<T, B> acc = identity<B>(m, count);
  if (count == 0 || depth == 0) return std::move(acc).reshape(out);
  const auto steps = tok.reshape(extents{count, depth});
  array<T, B> book(extents{3, w});  // row 0: the identity (padding), rows 1, 2: the roles permuted by depth
  book(range(0, 1), all) = identity<B>(m, 1);
  for (index_t i = 0; i < depth; ++i) {
    book(range(1, 3), all) = m.permute(rc.view(), i);
    const array<std::int64_t, B> pick(steps(all, i) + std::int64_t(1));
    const array<T, B> factor = take(book, pick, 0);
    acc = m.bind(acc, factor);
  }
  return std::move(acc).reshape(out);
}

/// Trees of leaves (..., N, width) at paths (N, D) (as tree_paths reads them): the leaves bound to
/// their paths and bundled, (..., width).
template <model M, class R, expression I, class L>
auto tree(const M& m, const R& roles, const I& paths, const L& leaves, const bundle_options& o = {}) {
  const extents ps = expr_shape(fusor::ext::to_node(paths));
  if (ps.size() != 2)
    throw shape_error("fusor::vsa::tree: expects paths (N, D), one per leaf, got shape " + to_string(ps));
  const auto keys = tree_paths(m, roles, paths);
  return array<typename M::value_type, backend_of_t<decltype(keys.view())>>(record(m, keys, leaves, o));
}

/// The leaf of each tree at each path (..., D): unbind(tree, path vector), noisy.
template <model M, class X, class R, expression I>
auto tree_leaf(const M& m, const X& tree_vector, const R& roles, const I& paths) {
  const auto keys = tree_paths(m, roles, paths);
  return array<typename M::value_type, backend_of_t<decltype(keys.view())>>(unbind(m, tree_vector, keys));
}

}  // namespace fusor::vsa
