#pragma once
// Joining and splitting: concatenate, stack, split/array_split, tile, repeat. Each result is one
// new array written by ordinary (fused, backend-dispatched) assignments into views of it, so
// these run on every backend that can assign.
#include <initializer_list>
#include <ranges>
#include <string>
#include <vector>

#include "shape_ops.hpp"

namespace fusor {

namespace detail {
// Views assign elements on `=`, so loops that narrow a window step by step use leaf (a plain
// pointer/shape/strides struct) and make a view at the end.
template <class T, class B>
leaf<T, B> slice_leaf(leaf<T, B> l, int axis, index_t start, index_t stop) {
  if (stop > start && l.data) l.data += start * l.strides[axis];
  l.shape[axis] = stop - start;
  return l;
}
template <class T, class B>
array_view<T, B> as_view(const leaf<T, B>& l) {
  return {l.data, l.shape, l.strides};
}
/// x restricted to [start, stop) along one axis.
template <class T, class B>
array_view<T, B> slice_axis(const array_view<T, B>& v, int axis, index_t start, index_t stop) {
  return as_view(slice_leaf(v.as_leaf(), axis, start, stop));
}
/// x at index i along one axis (the axis removed).
template <class T, class B>
array_view<T, B> index_axis(const array_view<T, B>& v, int axis, index_t i) {
  extents shape, strides;
  for (int k = 0; k < v.ndim(); ++k)
    if (k != axis) {
      shape.push_back(v.shape()[k]);
      strides.push_back(v.strides()[k]);
    }
  return {v.data() ? v.data() + i * v.strides()[axis] : nullptr, shape, strides};
}

template <class R>
auto view_list(const R& parts) {
  using P = std::remove_cvref_t<std::ranges::range_value_t<R>>;
  static_assert(is_view_v<P> || is_array_v<P>, "fusor: expected a range of arrays or array_views");
  std::vector<decltype(part_view(std::declval<const P&>()))> v;
  for (const auto& p : parts) v.push_back(part_view(p));
  return v;
}
}  // namespace detail

/// Joins arrays along an existing axis (np.concatenate). `parts`: any range of arrays or views
/// of one element type (a std::vector<array<float>>, {a.view(), b.view()}, ...).
template <std::ranges::input_range R>
auto concatenate(const R& parts, int axis = 0) {
  const auto v = detail::view_list(parts);
  using V = typename decltype(v)::value_type;
  if (v.empty()) throw value_error("fusor: concatenate needs at least one array, got none");
  const int r = v[0].ndim();
  if (r == 0) throw shape_error("fusor: concatenate cannot join 0-d arrays; use stack");
  const int ax = normalize_axis(axis, r);
  extents shape = v[0].shape();
  shape[ax] = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    bool ok = v[i].ndim() == r;
    for (int k = 0; ok && k < r; ++k) ok = k == ax || v[i].shape()[k] == v[0].shape()[k];
    if (!ok)
      throw shape_error("fusor: concatenate along axis " + std::to_string(ax) + " expects every array to have shape " +
                        to_string(v[0].shape()) + " except on that axis; array " + std::to_string(i) +
                        " has shape " + to_string(v[i].shape()));
    shape[ax] += v[i].shape()[ax];
  }
  array<value_t<V>, backend_of_t<V>> out(shape);
  index_t off = 0;
  for (const auto& p : v) {
    detail::slice_axis(out.view(), ax, off, off + p.shape()[ax]) = p;
    off += p.shape()[ax];
  }
  return out;
}
template <class T, class B>
array<T, B> concatenate(std::initializer_list<array_view<T, B>> parts, int axis = 0) {
  return concatenate(std::vector<array_view<T, B>>(parts), axis);
}

/// Joins arrays of one shape along a new axis (np.stack).
template <std::ranges::input_range R>
auto stack(const R& parts, int axis = 0) {
  const auto v = detail::view_list(parts);
  using V = typename decltype(v)::value_type;
  if (v.empty()) throw value_error("fusor: stack needs at least one array, got none");
  const int ax = normalize_axis(axis, v[0].ndim() + 1);
  for (std::size_t i = 1; i < v.size(); ++i)
    if (v[i].shape() != v[0].shape())
      throw shape_error("fusor: stack expects arrays of one shape: array 0 has shape " + to_string(v[0].shape()) +
                        ", array " + std::to_string(i) + " has shape " + to_string(v[i].shape()));
  extents shape;
  for (int k = 0, src = 0; k <= v[0].ndim(); ++k) shape.push_back(k == ax ? index_t(v.size()) : v[0].shape()[src++]);
  array<value_t<V>, backend_of_t<V>> out(shape);
  for (std::size_t i = 0; i < v.size(); ++i) detail::index_axis(out.view(), ax, index_t(i)) = v[i];
  return out;
}
template <class T, class B>
array<T, B> stack(std::initializer_list<array_view<T, B>> parts, int axis = 0) {
  return stack(std::vector<array_view<T, B>>(parts), axis);
}

namespace detail {
template <class T, class B>
std::vector<array_view<T, B>> split_at(const array_view<T, B>& v, int axis, const std::vector<index_t>& cuts) {
  const int ax = normalize_axis(axis, v.ndim());
  const index_t n = v.shape()[ax];
  std::vector<array_view<T, B>> out;
  index_t prev = 0;
  for (std::size_t i = 0; i <= cuts.size(); ++i) {
    index_t c = i < cuts.size() ? cuts[i] : n;
    if (c < 0) c += n;
    c = std::clamp<index_t>(c, 0, n);
    out.push_back(slice_axis(v, ax, prev, std::max(prev, c)));  // NumPy: x[prev:c], empty when c < prev
    prev = c;
  }
  return out;
}
template <class X>
auto lvalue_view(const X& x) {
  static_assert(is_view_v<X> || is_array_v<X>, "fusor: split takes an array or an array_view");
  return part_view(x);
}
}  // namespace detail

namespace detail {
/// What split can return views of: an lvalue array, or a view (a temporary array would dangle).
/// A named concept, so that the layers above can add overloads that subsume it.
template <class X>
concept split_source = !std::is_rvalue_reference_v<X&&> || is_view_v<std::remove_cvref_t<X>>;
}  // namespace detail

/// Views of `sections` equal parts along an axis (np.split); value_error when the axis does not
/// divide evenly (array_split allows that).
template <class X>
  requires detail::split_source<X>
auto split(X&& x, index_t sections, int axis = 0) {
  const auto v = detail::lvalue_view(x);
  const int ax = normalize_axis(axis, v.ndim());
  if (sections <= 0) throw value_error("fusor: split needs a positive number of sections, got " + std::to_string(sections));
  const index_t n = v.shape()[ax];
  if (n % sections != 0)
    throw value_error("fusor: split of an axis of size " + std::to_string(n) + " into " + std::to_string(sections) +
                      " sections does not divide evenly (use array_split)");
  std::vector<index_t> cuts;
  for (index_t i = 1; i < sections; ++i) cuts.push_back(i * (n / sections));
  return detail::split_at(v, ax, cuts);
}
/// Views split before each of the given indices along an axis (np.split(x, [i, j])).
template <class X>
  requires detail::split_source<X>
auto split(X&& x, const std::vector<index_t>& indices, int axis = 0) {
  return detail::split_at(detail::lvalue_view(x), axis, indices);
}
/// Views of `sections` nearly equal parts: the first n % sections parts get one extra element.
template <class X>
  requires detail::split_source<X>
auto array_split(X&& x, index_t sections, int axis = 0) {
  const auto v = detail::lvalue_view(x);
  const int ax = normalize_axis(axis, v.ndim());
  if (sections <= 0)
    throw value_error("fusor: array_split needs a positive number of sections, got " + std::to_string(sections));
  const index_t n = v.shape()[ax], q = n / sections, extra = n % sections;
  std::vector<index_t> cuts;
  index_t at = 0;
  for (index_t i = 0; i + 1 < sections; ++i) cuts.push_back(at += q + (i < extra ? 1 : 0));
  return detail::split_at(v, ax, cuts);
}

namespace detail {
template <class T, class B>
array<T, B> tile_view(const array_view<T, B>& src, const extents& reps) {
  for (index_t r : reps)
    if (r < 0) throw value_error("fusor: tile repetitions must be >= 0, got " + to_string(reps));
  const int d = std::max(src.ndim(), reps.size());
  extents in_shape, in_strides, rep;
  for (int k = 0; k < d; ++k) {
    const int s = k - (d - src.ndim()), q = k - (d - reps.size());
    in_shape.push_back(s >= 0 ? src.shape()[s] : 1);
    in_strides.push_back(s >= 0 ? src.strides()[s] : 0);
    rep.push_back(q >= 0 ? reps[q] : 1);
  }
  extents shape;
  for (int k = 0; k < d; ++k) shape.push_back(in_shape[k] * rep[k]);
  array<T, B> out(shape);
  if (out.size() == 0) return out;
  const array_view<T, B> in(src.data(), in_shape, in_strides);
  if (2 * d <= max_rank) {
    // one pass: the output seen as (rep0, n0, rep1, n1, ...) receives the input broadcast
    // along the rep axes
    extents s2, ds2, ss2;
    const extents cs = contiguous_strides(shape);
    for (int k = 0; k < d; ++k) {
      s2.push_back(rep[k]);
      s2.push_back(in_shape[k]);
      ds2.push_back(in_shape[k] * cs[k]);
      ds2.push_back(cs[k]);
      ss2.push_back(0);
      ss2.push_back(in_strides[k]);
    }
    array_view<T, B>(out.data(), s2, ds2) = array_view<T, B>(src.data(), s2, ss2);
  } else {
    // rank > 4: the input into the first block, then copies of the filled region along each axis
    const extents cs = contiguous_strides(shape);
    array_view<T, B>(out.data(), in_shape, cs) = in;
    extents filled = in_shape;
    for (int k = 0; k < d; ++k) {
      const array_view<T, B> block(out.data(), filled, cs);
      for (index_t r = 1; r < rep[k]; ++r) array_view<T, B>(out.data() + r * filled[k] * cs[k], filled, cs) = block;
      filled[k] *= rep[k];
    }
  }
  return out;
}
}  // namespace detail
/// Repeats the whole array `reps[k]` times along axis k (np.tile); reps may be longer or shorter
/// than the rank (NumPy's alignment at the trailing axes).
template <class X>
auto tile(const X& x, const extents& reps) {
  return detail::with_input(x, [&](const auto& v) { return detail::tile_view(v, reps); });
}

namespace detail {
template <class T, class B>
array<T, B> repeat_view(const array_view<T, B>& v, index_t repeats, int axis) {
  if (repeats < 0) throw value_error("fusor: repeat counts must be >= 0, got " + std::to_string(repeats));
  const int ax = normalize_axis(axis, v.ndim());
  extents shape = v.shape();
  shape[ax] *= repeats;
  array<T, B> out(shape);
  if (out.size() == 0) return out;
  if (v.ndim() + 1 > max_rank) {
    for (index_t i = 0; i < v.shape()[ax]; ++i)
      for (index_t r = 0; r < repeats; ++r)
        detail::index_axis(out.view(), ax, i * repeats + r) = detail::index_axis(v, ax, i);
    return out;
  }
  // the output seen with the axis split into (n, repeats); the input broadcast along repeats
  extents s2, ds, ss;
  const extents cs = contiguous_strides(shape);
  for (int k = 0; k < v.ndim(); ++k) {
    s2.push_back(v.shape()[k]);
    ds.push_back(k == ax ? cs[k] * repeats : cs[k]);
    ss.push_back(v.strides()[k]);
    if (k == ax) {
      s2.push_back(repeats);
      ds.push_back(cs[k]);
      ss.push_back(0);
    }
  }
  array_view<T, B>(out.data(), s2, ds) = array_view<T, B>(v.data(), s2, ss);
  return out;
}
}  // namespace detail
/// Repeats each element `repeats` times along an axis (np.repeat); one pass.
template <class X>
auto repeat(const X& x, index_t repeats, int axis) {
  return detail::with_input(x, [&](const auto& v) { return detail::repeat_view(v, repeats, axis); });
}
/// np.repeat without an axis: the flattened elements, each repeated.
template <class X>
auto repeat(const X& x, index_t repeats) {
  return repeat(flatten(x), repeats, 0);
}

}  // namespace fusor
