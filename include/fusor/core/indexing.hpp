#pragma once
// Indexing by arrays: take/put/scatter along an axis, boolean masks, nonzero/argwhere, index
// grids and conversions (indices, unravel_index, ravel_multi_index), triangles (tril/triu and
// their indices). Arithmetic ones are fused expressions; gathers and scatters go to the
// backend's algorithms<B>.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "algorithms_fwd.hpp"
#include "create.hpp"
#include "join.hpp"
#include "operators.hpp"
#include "reduce.hpp"

namespace fusor {

namespace detail {
/// x as contiguous memory: the array itself when it already is, otherwise a C-order copy.
/// (Holds a leaf, not a view: assigning a view writes elements, it does not rebind.)
template <class T, class B>
struct contiguous {
  array<T, B> storage;
  leaf<T, B> l;
  explicit contiguous(const array_view<T, B>& v) : l(v.as_leaf()) {
    if (!v.is_contiguous()) {
      storage = v.copy();
      l = storage.as_leaf();
    }
  }
  explicit contiguous(array<T, B>&& a) : storage(std::move(a)), l(storage.as_leaf()) {}
  array_view<T, B> view() const { return as_view(l); }
  T* data() const { return l.data; }
  bool copied() const { return l.data == storage.data() && storage.size() > 0; }
};
template <class X>
auto contiguous_of(const X& x) {
  if constexpr (is_view_v<X> || is_array_v<X>) {
    using V = decltype(part_view(x));
    return contiguous<value_t<V>, backend_of_t<V>>(part_view(x));
  } else {
    auto tmp = eval(x);
    return contiguous<value_t<decltype(tmp)>, backend_of_t<decltype(tmp)>>(std::move(tmp));
  }
}
/// Throws an index_error unless every integer of `indices` lies in [0, n): what a lookup table (an
/// embedding, class labels) needs where take() would wrap a negative index around (NumPy's rule).
template <class I>
void check_indices(const char* what, const char* expected, const char* given, const I& indices, index_t n) {
  if (expr_shape(to_node(indices)).numel() == 0) return;
  const auto lo = fusor::min(indices), hi = fusor::max(indices);
  if (lo < 0 || hi >= n)
    throw index_error(std::string("fusor: ") + what + " needs " + expected + " in [0, " + std::to_string(n) + "), got " +
                      given + " from " + std::to_string(lo) + " to " + std::to_string(hi));
}
/// The shape of take(x, indices, axis): x's shape with the axis replaced by the indices' shape.
inline extents take_shape(const extents& x, int axis, const extents& indices) {
  extents s;
  for (int k = 0; k < axis; ++k) s.push_back(x[k]);
  for (index_t d : indices) s.push_back(d);
  for (int k = axis + 1; k < x.size(); ++k) s.push_back(x[k]);
  return s;
}
/// Makes the `count` indices at `data` (along an axis of length n of `shape`) non-negative in
/// place; an index outside [-n, n) is an index_error naming the first.
template <class B>
void wrap_checked(std::int64_t* data, index_t count, index_t n, int axis, const extents& shape) {
  const index_t bad = algorithms<B>::wrap_indices(data, count, n);
  if (bad < count)
    throw index_error("fusor: index " + std::to_string(array_view<std::int64_t, B>(data + bad, extents{}).item()) +
                      " is out of bounds for axis " + std::to_string(axis) + " with size " + std::to_string(n) +
                      " (shape " + to_string(shape) + ")");
}
/// Integer index arrays (any integer dtype, any layout) as checked, wrapped int64.
template <class B, class I>
array<std::int64_t, B> checked_indices(const I& idx, index_t n, int axis, const extents& shape) {
  static_assert(integer<value_t<I>>,
                "fusor: index arrays must hold integers (use a bool array as a mask instead)");
  array<std::int64_t, B> out(expr_shape(to_node(idx)));
  out.view() = idx;
  wrap_checked<B>(out.data(), out.size(), n, axis, shape);
  return out;
}
/// One coordinate array per axis of `shape` for in-range flat C-order indices (one fused pass each).
template <class B>
std::vector<array<std::int64_t, B>> unravel_flat(const array<std::int64_t, B>& f, const extents& shape) {
  const extents strides = contiguous_strides(shape);
  std::vector<array<std::int64_t, B>> out;
  for (int k = 0; k < shape.size(); ++k) out.push_back(array<std::int64_t, B>(floor_divide(f, strides[k]) % shape[k]));
  return out;
}
/// A mask as contiguous bools of `shape`: a bool array of that shape is used as it is; a
/// comparison is evaluated; a mask of another shape is broadcast into a temporary.
template <class B, class M>
contiguous<bool, B> mask_of(const M& mask, const extents& shape) {
  static_assert(std::is_same_v<value_t<M>, bool>, "fusor: a mask must be a bool array or comparison");
  if (expr_shape(to_node(mask)) == shape) return contiguous_of(mask);
  array<bool, B> m(shape);
  m.view() = mask;
  return contiguous<bool, B>(std::move(m));
}
inline void split_around(const extents& s, int axis, index_t& outer, index_t& inner) {
  outer = inner = 1;
  for (int k = 0; k < axis; ++k) outer *= s[k];
  for (int k = axis + 1; k < s.size(); ++k) inner *= s[k];
}
}  // namespace detail

/// Elements along `axis` at the given integer indices (np.take(x, idx, axis)); the result's
/// shape is x's with that axis replaced by idx's shape. Negative indices count from the end.
template <class X, expression I>
auto take(const X& x, const I& indices, int axis) {
  const auto c = detail::contiguous_of(x);
  using T = value_t<decltype(c.view())>;
  using B = backend_of_t<decltype(c.view())>;
  const int ax = normalize_axis(axis, c.view().ndim());
  const auto idx = detail::checked_indices<B>(indices, c.view().shape()[ax], ax, c.view().shape());
  array<T, B> out(detail::take_shape(c.view().shape(), ax, idx.shape()));
  index_t outer, inner;
  detail::split_around(c.view().shape(), ax, outer, inner);
  if (out.size() > 0)
    algorithms<B>::gather(c.data(), outer, c.view().shape()[ax], inner, idx.data(), idx.size(), out.data());
  return out;
}
/// np.take without an axis: indices into the flattened array.
template <class X, expression I>
auto take(const X& x, const I& indices) {
  return take(flatten(x), indices, 0);
}

namespace detail {
template <class D, class I, class V>
void scatter_impl(D&& dst, const I& indices, const V& values, int axis, bool add) {
  auto d = part_view(dst);
  using T = value_t<decltype(d)>;
  using B = backend_of_t<decltype(d)>;
  const int ax = normalize_axis(axis, d.ndim());
  const auto idx = checked_indices<B>(indices, d.shape()[ax], ax, d.shape());
  const extents vs = take_shape(d.shape(), ax, idx.shape());  // the shape take(dst, indices, axis) would have
  // Values that already are contiguous T of that shape, apart from the destination's memory, are
  // read where they lie: a class's worth of samples added to centroids is not copied first.
  const T* src = nullptr;
  if constexpr (is_view_v<V> || is_array_v<V>) {
    const auto v = part_view(values);
    if constexpr (std::is_same_v<value_t<decltype(v)>, T> && std::is_same_v<backend_of_t<decltype(v)>, B>)
      if (v.is_contiguous() && v.shape() == vs && !ranges_overlap(d.as_leaf(), v.as_leaf())) src = v.data();
  }
  array<T, B> vals;
  if (src == nullptr) {
    vals = array<T, B>(vs);
    vals.view() = values;  // broadcasts, checks the shape, converts the type by the assignment rules
    src = vals.data();
  }
  contiguous<T, B> c(d);
  index_t outer, inner;
  split_around(d.shape(), ax, outer, inner);
  const bool any = vs.numel() > 0;
  if (any) algorithms<B>::scatter(c.data(), outer, d.shape()[ax], inner, idx.data(), idx.size(), src, add);
  if (c.copied()) d = c.storage;  // the destination was strided: write the result back
  else if (any) note_write(d.as_leaf());
}
}  // namespace detail

/// dst[..., indices[j], ...] = values[..., j, ...] along `axis` (the inverse of take; values
/// broadcast to take's result shape). With repeated indices the last write wins.
template <class D, expression I, class V>
void scatter(D&& dst, const I& indices, const V& values, int axis) {
  detail::scatter_impl(dst, indices, values, axis, false);
}
/// Like scatter, but adds: repeated indices accumulate (np.add.at).
template <class D, expression I, class V>
void scatter_add(D&& dst, const I& indices, const V& values, int axis) {
  detail::scatter_impl(dst, indices, values, axis, true);
}
namespace detail {
/// dst[to[k], :] += src[from[k], :] for every k, the rows gathered and added in one pass (take
/// then scatter_add would write every gathered row out and read it back). dst (rows, inner) and
/// src (rows', inner) are contiguous arrays; `to` is ascending, so each of its runs is one
/// destination row, summed in order of k on every backend; the indices are the caller's own,
/// in range (not wrapped, not checked).
template <class T, class B>
void add_gathered_rows(array<T, B>& dst, const array<std::int64_t, B>& to, const array<T, B>& src,
                       const array<std::int64_t, B>& from) {
  const index_t m = to.size();
  if (m == 0 || dst.size() == 0) return;
  array<bool, B> head(extents{m});  // where a run of one destination row begins
  head(range(0, 1)) = true;
  if (m > 1) head(range(1, none)) = to(range(1, none)) != to(range(0, m - 1));
  const array<std::int64_t, B> starts = std::move(nonzero(head)[0]);
  algorithms<B>::add_row_runs(dst.data(), dst.size() / dst.shape()[0], to.data(), starts.data(), starts.size(), m,
                              src.data(), from.data());
  note_write(dst.as_leaf());
}
}  // namespace detail

/// np.put: writes values at flat (C-order) indices of dst.
template <class D, expression I, class V>
void put(D&& dst, const I& indices, const V& values) {
  auto d = detail::part_view(dst);
  if (!d.is_contiguous())
    throw value_error("fusor: put needs a contiguous destination (flat indices), got strides " + to_string(d.strides()) +
                      " for shape " + to_string(d.shape()));
  detail::scatter_impl(array_view<value_t<decltype(d)>, backend_of_t<decltype(d)>>(d.data(), extents{d.size()}), indices,
                       values, 0, false);
}

// ---- boolean masks -------------------------------------------------------------------------------
/// x[mask] (NumPy boolean indexing): the selected elements in C order, as a 1-d array. mask must
/// have x's shape (or broadcast to it).
template <class X, expression M>
auto mask_select(const X& x, const M& mask) {
  const auto c = detail::contiguous_of(x);
  using T = value_t<decltype(c.view())>;
  using B = backend_of_t<decltype(c.view())>;
  const auto m = detail::mask_of<B>(mask, c.view().shape());
  array<T, B> out(extents{algorithms<B>::count_nonzero(m.data(), c.view().size())});
  algorithms<B>::compress(c.data(), m.data(), c.view().size(), out.data());
  return out;
}
/// x[mask] = values: one value for every true element, in C order (a scalar value is a fused
/// where(mask, value, x) instead; see docs/operations.md).
template <class D, expression M, expression V>
void mask_assign(D&& dst, const M& mask, const V& values) {
  auto d = detail::part_view(dst);
  using T = value_t<decltype(d)>;
  using B = backend_of_t<decltype(d)>;
  const auto m = detail::mask_of<B>(mask, d.shape());
  const index_t count = algorithms<B>::count_nonzero(m.data(), d.size());
  array<T, B> vals(extents{count});
  const extents vs = expr_shape(detail::to_node(values));
  if (vs.numel() != count)
    throw shape_error("fusor: the mask selects " + std::to_string(count) + " elements but " + std::to_string(vs.numel()) +
                      " values were given (shape " + to_string(vs) + ")");
  vals.reshape(vs) = values;
  detail::contiguous<T, B> c(d);
  algorithms<B>::expand(c.data(), m.data(), d.size(), vals.data());
  if (c.copied()) d = c.storage;
  else detail::note_write(d.as_leaf());
}
template <class D, expression M, scalar S>
void mask_assign(D&& dst, const M& mask, const S& value) {
  auto d = detail::part_view(dst);
  d = where(mask, value, d);
}

/// One int64 array per axis with the coordinates of the nonzero elements (np.nonzero).
template <class X>
auto nonzero(const X& x) {
  const auto c = detail::contiguous_of(x);
  using B = backend_of_t<decltype(c.view())>;
  if (c.view().ndim() == 0) throw value_error("fusor: nonzero of a 0-d array is not defined (NumPy 2); reshape it to 1-d");
  const auto flat = algorithms<B>::flat_nonzero(c.data(), c.view().size());
  const extents shape = c.view().shape();
  const index_t n = index_t(flat.size());
  const array<std::int64_t, B> f(std::span<const std::int64_t>(flat.data(), flat.size()), extents{n});
  return detail::unravel_flat(f, shape);
}
/// The coordinates of the nonzero elements as rows of an (N, ndim) int64 array (np.argwhere).
template <class X>
auto argwhere(const X& x) {
  const auto c = detail::contiguous_of(x);
  using B = backend_of_t<decltype(c.view())>;
  if (c.view().ndim() == 0)
    return array<std::int64_t, B>(extents{algorithms<B>::count_nonzero(c.data(), c.view().size()), 0});
  auto parts = nonzero(c.view());
  using A = typename decltype(parts)::value_type;
  std::vector<array_view<std::int64_t, backend_of_t<A>>> v;
  for (const auto& p : parts) v.push_back(p.view());
  return stack(v, 1);
}
/// The number of nonzero elements.
template <class X>
index_t count_nonzero(const X& x) {
  const auto c = detail::contiguous_of(x);
  return algorithms<backend_of_t<decltype(c.view())>>::count_nonzero(c.data(), c.view().size());
}

// ---- index grids -----------------------------------------------------------------------------------
/// np.indices: an int64 array of shape (ndim, *shape) whose k-th slab holds each element's
/// coordinate along axis k.
template <backend B = default_backend>
array<std::int64_t, B> indices(const extents& shape) {
  check_shape(shape);
  extents s{shape.size()};
  for (index_t d : shape) s.push_back(d);
  array<std::int64_t, B> out(s);
  for (int k = 0; k < shape.size(); ++k) detail::index_axis(out.view(), 0, k) = lazy::coordinates<std::int64_t, B>(shape, k);
  return out;
}

/// np.unravel_index: coordinates of flat C-order indices in `shape`, one int64 array per axis.
template <expression I>
auto unravel_index(const I& flat, const extents& shape) {
  using B = backend_of_t<I>;
  check_shape(shape);
  array<std::int64_t, B> f(expr_shape(detail::to_node(flat)));
  f.view() = flat;
  const index_t n = shape.numel();
  if (f.size() > 0) {
    const auto lo = min(f), hi = max(f);
    if (lo < 0 || hi >= n)
      throw index_error("fusor: flat index " + std::to_string(lo < 0 ? lo : hi) + " is out of bounds for shape " +
                        to_string(shape) + " (size " + std::to_string(n) + ")");
  }
  return detail::unravel_flat(f, shape);
}
/// Coordinates of one flat index.
inline extents unravel_index(index_t flat, const extents& shape) {
  check_shape(shape);
  if (flat < 0 || flat >= shape.numel())
    throw index_error("fusor: flat index " + std::to_string(flat) + " is out of bounds for shape " + to_string(shape) +
                      " (size " + std::to_string(shape.numel()) + ")");
  extents c;
  c.resize(shape.size());
  for (int k = shape.size() - 1; k >= 0; --k) {
    c[k] = flat % shape[k];
    flat /= shape[k];
  }
  return c;
}
/// np.ravel_multi_index: flat C-order indices from one coordinate array per axis (each must be
/// in range; they broadcast together).
template <class A>
auto ravel_multi_index(const std::vector<A>& coords, const extents& shape) {
  using B = backend_of_t<A>;
  check_shape(shape);
  if (int(coords.size()) != shape.size())
    throw value_error("fusor: ravel_multi_index expects " + std::to_string(shape.size()) + " coordinate arrays for shape " +
                      to_string(shape) + ", got " + std::to_string(coords.size()));
  const extents strides = contiguous_strides(shape);
  extents bshape;
  for (const auto& c : coords) bshape = broadcast_shapes(bshape, c.shape());
  array<std::int64_t, B> out = zeros<std::int64_t, B>(bshape);
  for (int k = 0; k < shape.size(); ++k) {
    const auto& c = coords[std::size_t(k)];
    if (c.size() > 0) {
      const auto lo = std::int64_t(min(c)), hi = std::int64_t(max(c));
      if (lo < 0 || hi >= shape[k])
        throw index_error("fusor: coordinate " + std::to_string(lo < 0 ? lo : hi) + " is out of bounds for axis " +
                          std::to_string(k) + " with size " + std::to_string(shape[k]));
    }
    out += cast<std::int64_t>(c) * strides[k];
  }
  return out;
}

// ---- triangles ---------------------------------------------------------------------------------------
namespace detail {
template <class X>
auto triangle(const X& x, index_t k, bool lower) {
  const auto v = [&] {
    if constexpr (is_view_v<X> || is_array_v<X>) return part_view(x);
    else return x;
  }();
  const extents s = expr_shape(to_node(v));
  if (s.size() < 1)
    throw shape_error(std::string("fusor: ") + (lower ? "tril" : "triu") + " needs an array of rank >= 1, got shape " +
                      to_string(s));
  using B = backend_of_t<decltype(v)>;
  // a 1-d x of length m is broadcast as the rows of an m x m matrix (NumPy: tri(*x.shape[-2:]))
  const index_t m = s[s.size() - 1], n = s.size() >= 2 ? s[s.size() - 2] : m;
  const auto rows = arange<std::int64_t, B>(n), cols = arange<std::int64_t, B>(m);
  const array_view<std::int64_t, B> r(const_cast<std::int64_t*>(rows.data()), extents{n, 1}, extents{1, 0});
  const array_view<std::int64_t, B> c(const_cast<std::int64_t*>(cols.data()), extents{1, m}, extents{0, 1});
  using T = value_t<decltype(v)>;
  if (lower) return array<T, B>(where(c - r <= k, v, T(0)));
  return array<T, B>(where(c - r >= k, v, T(0)));
}
}  // namespace detail
/// The lower triangle (elements with column - row <= k) of the last two axes; zeros above (np.tril).
/// A 1-d x gives the triangle of the square matrix whose rows are all x, as NumPy does.
template <class X>
auto tril(const X& x, index_t k = 0) {
  return detail::triangle(x, k, true);
}
/// The upper triangle (column - row >= k); zeros below (np.triu).
template <class X>
auto triu(const X& x, index_t k = 0) {
  return detail::triangle(x, k, false);
}
/// Row and column indices of the lower triangle of an n x m matrix, in row-major order (np.tril_indices).
template <backend B = default_backend>
auto tril_indices(index_t n, index_t k = 0, index_t m = -1) {
  if (m < 0) m = n;
  return nonzero(tril(ones<std::int64_t, B>({n, m}), k));
}
/// Row and column indices of the upper triangle (np.triu_indices).
template <backend B = default_backend>
auto triu_indices(index_t n, index_t k = 0, index_t m = -1) {
  if (m < 0) m = n;
  return nonzero(triu(ones<std::int64_t, B>({n, m}), k));
}

}  // namespace fusor
