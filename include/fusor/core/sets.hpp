#pragma once
// Set operations and searches built from the sorting kernels (NumPy's names and results):
// isin, intersect1d, union1d, setdiff1d (sorted, distinct values, as NumPy returns them), lexsort,
// digitize, and take_along_axis / put_along_axis. Each is a few sorts, searches and gathers, so
// each runs on every backend that has algorithms<B>.
#include <cstdint>
#include <string>
#include <vector>

#include "construct.hpp"
#include "reduce.hpp"
#include "sort.hpp"

namespace fusor {

/// np.isin: for each element of x, whether it equals some element of `test` (any shapes; the
/// result has x's shape). One sort of test and one binary search per element. NaN is in nothing.
template <expression X, expression S>
auto isin(const X& x, const S& test, bool invert = false) {
  const auto sorted = sort(flatten(test));
  using B = backend_of_t<node_t<X>>;
  const auto xv = detail::owned_copy(x);
  array<bool, B> out(xv.shape());
  const index_t n = sorted.size();
  if (n == 0) {
    out = invert;
    return out;
  }
  const auto at = searchsorted(sorted, xv);
  const auto found = take(sorted, minimum(at, std::int64_t(n - 1)));  // at's shape, x's
  if (invert) out = logical_not(logical_and(at < std::int64_t(n), found == xv));
  else out = logical_and(at < std::int64_t(n), found == xv);
  return out;
}

/// np.union1d: the sorted distinct values of both (flattened).
template <expression A, expression Bx>
auto union1d(const A& a, const Bx& b) {
  return unique(append(a, b)).values;
}
/// np.intersect1d: the sorted distinct values present in both.
template <expression A, expression Bx>
auto intersect1d(const A& a, const Bx& b) {
  auto ua = unique(a).values;
  return mask_select(ua, isin(ua, b));
}
/// np.setdiff1d: the sorted distinct values of a that are not in b.
template <expression A, expression Bx>
auto setdiff1d(const A& a, const Bx& b) {
  auto ua = unique(a).values;
  return mask_select(ua, isin(ua, b, true));
}

/// np.lexsort: the indices that sort by several 1-d keys of one length, the LAST key primary
/// (NumPy's order), ties broken by the keys before it; stable.
template <class K>
auto lexsort(const std::vector<K>& keys) {
  if (keys.empty()) throw value_error("fusor: lexsort needs at least one key, got none");
  const extents s = expr_shape(detail::to_node(keys.front()));
  for (const auto& k : keys)
    if (expr_shape(detail::to_node(k)) != s || s.size() != 1)
      throw shape_error("fusor: lexsort needs 1-d keys of one length, got shapes " + to_string(s) + " and " +
                        to_string(expr_shape(detail::to_node(k))));
  auto order = argsort(keys.front());
  for (std::size_t k = 1; k < keys.size(); ++k) {
    const auto permuted = take(keys[k], order);
    const auto by = argsort(permuted);  // stable: the earlier keys' order survives ties
    order = take(order, by);
  }
  return order;
}

/// np.digitize: for each x, the index of the bin it falls in, for monotonic `bins` (increasing:
/// bins[i-1] <= x < bins[i], or with right bins[i-1] < x <= bins[i]; decreasing mirrored). int64,
/// x's shape; 0 and len(bins) mark values below and above.
template <expression X, expression E>
auto digitize(const X& x, const E& bins, bool right = false) {
  const auto be = detail::owned_copy(bins);
  if (be.ndim() != 1) throw value_error("fusor: digitize needs 1-d bins, got shape " + to_string(be.shape()));
  const index_t n = be.size();
  const auto hb = detail::backend_to_host(be);
  bool up = true, down = true;
  for (std::size_t i = 1; i < hb.size(); ++i) {
    up = up && !(hb[i] < hb[i - 1]);
    down = down && !(hb[i] > hb[i - 1]);
  }
  if (!up && !down) throw value_error("fusor: digitize needs monotonic bins (increasing or decreasing), got neither");
  if (up || n < 2) return searchsorted(be, x, right ? side::left : side::right);
  // decreasing: search the reversed bins and count from the other end
  const auto rev = flip(be);
  auto at = searchsorted(rev, x, right ? side::left : side::right);
  at = std::int64_t(n) - at;
  return at;
}

namespace detail {
/// The flat C-order positions in x of take_along_axis(x, idx, axis): idx wrapped (and checked),
/// times the axis's stride, plus each other axis's coordinate times its stride (0 where x is
/// broadcast); the result's shape is the broadcast of x (the axis replaced) and idx.
template <class T, class B, class I>
array<std::int64_t, B> along_axis_positions(const array_view<T, B>& xv, const I& indices, int axis, extents& shape) {
  const auto in = owned_copy(indices);
  static_assert(std::is_integral_v<value_t<decltype(in)>>, "fusor: take_along_axis needs integer indices");
  if (in.ndim() != xv.ndim())
    throw shape_error("fusor: take_along_axis / put_along_axis need indices of the array's rank " +
                      std::to_string(xv.ndim()) + ", got shape " + to_string(in.shape()));
  const int ax = normalize_axis(axis, xv.ndim());
  const index_t n = xv.shape()[ax];
  extents xs = xv.shape();
  xs[ax] = in.shape()[ax];
  shape = broadcast_shapes(xs, in.shape());
  if (shape.numel() > 0) {
    const auto lo = std::int64_t(min(in)), hi = std::int64_t(max(in));
    if (lo < -n || hi >= n)
      throw index_error("fusor: take_along_axis / put_along_axis index " + std::to_string(lo < -n ? lo : hi) +
                        " is out of bounds for axis " + std::to_string(axis) + " of length " + std::to_string(n));
  }
  const extents st = contiguous_strides(xv.shape());
  array<std::int64_t, B> flat(shape);
  flat = where(in < 0, cast<std::int64_t>(in) + std::int64_t(n), cast<std::int64_t>(in)) * std::int64_t(st[ax]);
  for (int k = 0; k < xv.ndim(); ++k)
    if (k != ax && xv.shape()[k] > 1)
      flat = flat + lazy::coordinates<std::int64_t, B>(shape, k) * std::int64_t(st[k]);
  return flat;
}
}  // namespace detail

/// np.take_along_axis: out[..., j, ...] = x[..., indices[..., j, ...], ...] along `axis`;
/// indices have x's rank and broadcast against it on the other axes (argsort's and argpartition's
/// results pick the sorted values this way).
template <class X, expression I>
auto take_along_axis(const X& x, const I& indices, int axis) {
  const auto c = detail::contiguous_of(x);
  extents shape;
  const auto flat = detail::along_axis_positions(c.view(), indices, axis, shape);
  auto out = take(c.view(), flat);
  return reshape(std::move(out), shape);
}
/// np.put_along_axis: dst[..., indices[..., j, ...], ...] = values (broadcast to the indices'
/// layout) along `axis`; dst must be contiguous. With repeated indices the last write wins.
template <class D, expression I, class V>
void put_along_axis(D&& dst, const I& indices, const V& values, int axis) {
  auto d = detail::part_view(dst);
  extents shape;
  const auto flat = detail::along_axis_positions(d, indices, axis, shape);
  using T = value_t<decltype(d)>;
  using B = backend_of_t<decltype(d)>;
  array<T, B> vals(shape);
  if constexpr (expression<V>) vals.view() = cast<T>(values);  // broadcast to the indices' layout
  else vals = T(values);
  put(dst, flat, vals);
}

}  // namespace fusor
