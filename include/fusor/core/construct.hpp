#pragma once
// Construction and joining beyond concatenate and stack, with NumPy's names and rules: logspace,
// geomspace, meshgrid, diag, diagflat, atleast_1d/2d/3d, vstack, hstack, dstack, column_stack,
// append, insert and delete_ (np.delete; `delete` is a C++ keyword). Each result is a new array
// written by ordinary assignments (or one gather), so all of them run on every backend.
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <numeric>
#include <ranges>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "create.hpp"
#include "indexing.hpp"
#include "join.hpp"
#include "transfer.hpp"

namespace fusor {

/// np.logspace: base ** linspace(start, stop, num, endpoint), computed in double.
template <element T = double, backend B = default_backend>
array<T, B> logspace(double start, double stop, index_t num, bool endpoint = true, double base = 10.0) {
  array<T, B> out(extents{num < 0 ? 0 : num});
  if (num < 0) throw value_error("fusor: logspace needs num >= 0, got " + std::to_string(num));
  out = cast<T>(pow(base, lazy::linspace<double, B>(start, stop, num, endpoint)));
  return out;
}

/// np.geomspace: num values from start to stop in geometric progression (both of one sign, not
/// zero); the ends are exactly start and stop.
template <element T = double, backend B = default_backend>
array<T, B> geomspace(double start, double stop, index_t num, bool endpoint = true) {
  if (num < 0) throw value_error("fusor: geomspace needs num >= 0, got " + std::to_string(num));
  if (start == 0 || stop == 0)
    throw value_error("fusor: a geometric sequence cannot include zero, got start " + std::to_string(start) +
                      " and stop " + std::to_string(stop));
  if ((start < 0) != (stop < 0))
    throw value_error("fusor: geomspace needs start and stop of one sign (NumPy gives NaN between), got " +
                      std::to_string(start) + " and " + std::to_string(stop));
  const double sign = start < 0 ? -1.0 : 1.0;
  array<T, B> out = logspace<T, B>(std::log10(std::abs(start)), std::log10(std::abs(stop)), num, endpoint);
  if (sign < 0) out = -out;
  if (num > 0) detail::slice_axis(out.view(), 0, 0, 1) = T(start);
  if (num > 1 && endpoint) detail::slice_axis(out.view(), 0, num - 1, num) = T(stop);
  return out;
}

/// meshgrid's two conventions: xy (Cartesian; the first two output axes swapped, NumPy's default)
/// and ij (matrix).
enum class mesh_indexing { xy, ij };

namespace detail {
template <class X>
auto flat_copy(const X& x) {
  return flatten(x);
}
template <std::size_t... K, class... X>
auto meshgrid_impl(std::index_sequence<K...>, mesh_indexing ix, const X&... xs) {
  const auto flats = std::make_tuple(flat_copy(xs)...);
  extents shape{std::get<K>(flats).size()...};
  constexpr int n = int(sizeof...(X));
  const bool swap = ix == mesh_indexing::xy && n >= 2;
  if (swap) std::swap(shape[0], shape[1]);
  auto one = [&](const auto& f, int k) {
    using T = value_t<std::remove_cvref_t<decltype(f)>>;
    using Bk = backend_of_t<std::remove_cvref_t<decltype(f)>>;
    const int axis = swap && k < 2 ? 1 - k : k;
    extents s;
    for (int a = 0; a < n; ++a) s.push_back(a == axis ? f.size() : 1);
    array<T, Bk> out(shape);
    out = broadcast_to(reshape(f.view(), s), shape);
    return out;
  };
  return std::make_tuple(one(std::get<K>(flats), int(K))...);
}
}  // namespace detail

/// np.meshgrid: one array per input (each flattened), spanning the grid of all of them; with
/// mesh_indexing::xy (the default) the first two axes are swapped, as NumPy does. A tuple:
/// `auto [X, Y] = meshgrid(x, y);`.
template <class... X>
  requires(sizeof...(X) >= 1 && (expression<X> && ...))
auto meshgrid(mesh_indexing ix, const X&... xs) {
  return detail::meshgrid_impl(std::index_sequence_for<X...>{}, ix, xs...);
}
template <class... X>
  requires(sizeof...(X) >= 1 && (expression<X> && ...))
auto meshgrid(const X&... xs) {
  return meshgrid(mesh_indexing::xy, xs...);
}

/// np.diag: of a 1-d array, the square matrix with it on diagonal k (zeros elsewhere); of a 2-d
/// array, a copy of its k-th diagonal.
template <expression X>
auto diag(const X& x, index_t k = 0) {
  return detail::with_input(x, [&](const auto& v) {
    using T = value_t<std::remove_cvref_t<decltype(v)>>;
    using Bk = backend_of_t<std::remove_cvref_t<decltype(v)>>;
    if (v.ndim() == 1) {
      const index_t n = v.size() + (k < 0 ? -k : k);
      array<T, Bk> out = zeros<T, Bk>(extents{n, n});
      diagonal(out.view(), k) = v;
      return out;
    }
    if (v.ndim() == 2) return array<T, Bk>(diagonal(v, k));
    throw shape_error("fusor: diag needs a 1-d array (to make a matrix) or a 2-d one (to read a diagonal), got shape " +
                      to_string(v.shape()));
  });
}
/// np.diagflat: the flattened input on diagonal k of a square matrix.
template <expression X>
auto diagflat(const X& x, index_t k = 0) {
  return diag(flatten(x), k);
}

/// np.atleast_1d / 2d / 3d: views with unit axes added in front (1d, 2d) or, for 3d, a 1-d (n)
/// as (1, n, 1) and a 2-d (m, n) as (m, n, 1), as NumPy does; higher ranks unchanged.
template <class X>
auto atleast_1d(X&& x) {
  return detail::with_view(std::forward<X>(x), [](const auto& v) { return v.ndim() >= 1 ? v : expand_dims(v, 0); });
}
template <class X>
auto atleast_2d(X&& x) {
  return detail::with_view(std::forward<X>(x), [](const auto& v) {
    if (v.ndim() >= 2) return v;
    if (v.ndim() == 1) return expand_dims(v, 0);
    return expand_dims(expand_dims(v, 0), 0);
  });
}
template <class X>
auto atleast_3d(X&& x) {
  return detail::with_view(std::forward<X>(x), [](const auto& v) {
    if (v.ndim() >= 3) return v;
    if (v.ndim() == 2) return expand_dims(v, 2);
    if (v.ndim() == 1) return expand_dims(expand_dims(v, 0), 2);
    return expand_dims(expand_dims(expand_dims(v, 0), 0), 0);
  });
}

namespace detail {
template <class R, class F>
auto joined_views(const R& parts, F&& shape_up) {
  const auto v = view_list(parts);
  std::remove_cvref_t<decltype(v)> out;
  for (const auto& p : v) out.push_back(shape_up(p));
  return out;
}
template <class R>
void require_parts(const R& parts, const char* what) {
  if (std::ranges::empty(parts)) throw value_error(std::string("fusor: ") + what + " needs at least one array, got none");
}
}  // namespace detail

/// np.vstack: rows on rows (1-d inputs become rows), concatenated along axis 0.
template <std::ranges::input_range R>
auto vstack(const R& parts) {
  detail::require_parts(parts, "vstack");
  return concatenate(detail::joined_views(parts, [](const auto& p) { return atleast_2d(p); }), 0);
}
/// np.hstack: along axis 1, or along axis 0 when the inputs are 1-d.
template <std::ranges::input_range R>
auto hstack(const R& parts) {
  detail::require_parts(parts, "hstack");
  const auto v = detail::joined_views(parts, [](const auto& p) { return atleast_1d(p); });
  return concatenate(v, v.front().ndim() == 1 ? 0 : 1);
}
/// np.dstack: along the third axis (1-d and 2-d inputs made 3-d first).
template <std::ranges::input_range R>
auto dstack(const R& parts) {
  detail::require_parts(parts, "dstack");
  return concatenate(detail::joined_views(parts, [](const auto& p) { return atleast_3d(p); }), 2);
}
/// np.column_stack: 1-d inputs as columns, 2-d ones as they are, along axis 1.
template <std::ranges::input_range R>
auto column_stack(const R& parts) {
  detail::require_parts(parts, "column_stack");
  return concatenate(detail::joined_views(parts,
                                          [](const auto& p) {
                                            if (p.ndim() == 1) return expand_dims(p, 1);
                                            return atleast_2d(p);
                                          }),
                     1);
}
#define FUSOR_JOIN_LIST(NAME)                                                  \
  template <class T, class B>                                                  \
  array<T, B> NAME(std::initializer_list<array_view<T, B>> parts) {            \
    return NAME(std::vector<array_view<T, B>>(parts));                         \
  }
FUSOR_JOIN_LIST(vstack)
FUSOR_JOIN_LIST(hstack)
FUSOR_JOIN_LIST(dstack)
FUSOR_JOIN_LIST(column_stack)
#undef FUSOR_JOIN_LIST

/// np.append without an axis: both flattened, values after x.
template <expression X, class V>
auto append(const X& x, const V& values) {
  const auto a = flatten(x);
  const auto b = flatten(values);
  return concatenate(std::vector{a.view(), b.view()}, 0);
}
/// np.append along an axis: concatenate((x, values), axis); the ranks must agree.
template <expression X, class V>
auto append(const X& x, const V& values, int axis) {
  return detail::with_input(x, [&](const auto& xv) {
    return detail::with_input(values, [&](const auto& vv) { return concatenate(std::vector{xv, vv}, axis); });
  });
}

namespace detail {
/// x's positions along the axis with the inserted blocks placed before positions pos (stable):
/// the gather order of concatenate(x, block) that gives np.insert's result.
inline std::vector<std::int64_t> insertion_order(index_t n, const std::vector<index_t>& pos) {
  std::vector<std::pair<index_t, index_t>> keys;  // (2 * position [+ 1 for originals], source)
  keys.reserve(std::size_t(n) + pos.size());
  for (index_t i = 0; i < n; ++i) keys.push_back({2 * i + 1, i});
  for (std::size_t j = 0; j < pos.size(); ++j) keys.push_back({2 * pos[j], n + index_t(j)});
  std::sort(keys.begin(), keys.end());  // equal positions keep the values' order: the sources ascend
  std::vector<std::int64_t> order;
  order.reserve(keys.size());
  for (const auto& k : keys) order.push_back(std::int64_t(k.second));
  return order;
}
/// Host values as an array of backend B (one copy there).
template <class B, class T>
array<T, B> host_to_backend(const std::vector<T>& v) {
  array<T, B> out(extents{index_t(v.size())});
  if (!v.empty()) backend_memory<B>::copy_from_host(out.data(), v.data(), index_t(v.size()));
  return out;
}
/// A contiguous array's values on the host.
template <class T, class B>
std::vector<T> backend_to_host(const array<T, B>& a) {
  std::vector<T> out(static_cast<std::size_t>(a.size()));
  if (a.size() > 0) backend_memory<B>::copy_to_host(out.data(), a.data(), a.size());
  return out;
}
template <class B>
array<std::int64_t, B> index_array(const std::vector<std::int64_t>& v) {
  return host_to_backend<B>(v);
}
/// The block np.insert puts in: x's shape with `count` slices along the axis, values broadcast.
template <class T, class B, class VV>
array<T, B> insertion_block(const array_view<T, B>& xv, int ax, index_t count, const VV& values_view) {
  extents bs = xv.shape();
  bs[ax] = count;
  array<T, B> block(bs);
  block.view() = cast<T>(broadcast_to(values_view, bs));
  return block;
}
/// np.insert: values before the positions pos (x's indexing) along the axis. With one position
/// (`scalar` when it was given as a number), NumPy's rule: values get x's rank by leading unit
/// axes, a number position then moves their first axis to `axis`, and as many slices go in as
/// values have along it. Several positions: one slice each, values broadcast to them.
template <class T, class B, class V>
array<T, B> insert_along(const array_view<T, B>& xv, std::vector<index_t> pos, const V& values, int axis, bool scalar) {
  const int ax = normalize_axis(axis, xv.ndim());
  const index_t n = xv.shape()[ax];
  for (auto& p : pos) {
    const index_t q = p < 0 ? p + n : p;
    if (q < 0 || q > n)
      throw index_error("fusor: insert position " + std::to_string(p) + " is out of bounds for axis " +
                        std::to_string(axis) + " of length " + std::to_string(n) + " (expected -" + std::to_string(n) +
                        " <= position <= " + std::to_string(n) + ")");
    p = q;
  }
  array<T, B> block;
  if (pos.size() == 1) {
    auto one = [&](const auto& vv) {
      extents padded;
      for (int k = vv.ndim(); k < xv.ndim(); ++k) padded.push_back(1);
      for (int k = 0; k < vv.ndim(); ++k) padded.push_back(vv.shape()[k]);
      const auto shaped = reshape(vv, padded);
      const auto moved = scalar && padded.size() > 0 ? moveaxis(shaped, 0, ax) : shaped;
      if (moved.ndim() != xv.ndim())
        throw shape_error("fusor: insert's values of shape " + to_string(vv.shape()) + " have more axes than the array's " +
                          std::to_string(xv.ndim()));
      return insertion_block(xv, ax, moved.shape()[ax], moved);
    };
    if constexpr (expression<V>) {
      block = with_input(values, [&](const auto& vv) { return one(vv); });
    } else {  // a number: one slice of it
      extents bs = xv.shape();
      bs[ax] = 1;
      block = array<T, B>(bs);
      block = T(values);
    }
    pos.assign(std::size_t(block.shape()[ax]), pos[0]);
  } else {
    extents bs = xv.shape();
    bs[ax] = index_t(pos.size());
    block = array<T, B>(bs);
    if constexpr (expression<V>) block.view() = cast<T>(values);  // broadcast into the block
    else block = T(values);
  }
  const auto joined = concatenate(std::vector{xv, block.view()}, ax);
  return take(joined, index_array<B>(insertion_order(n, pos)), ax);
}
}  // namespace detail

/// np.insert along an axis: values inserted before the given positions (in x's indexing; a
/// position may be n, the end). With one position NumPy's rule applies (see insert_along): a
/// number position and values [1, 2, 3] along axis 1 of a (3, 2) array insert one column; several
/// positions take one slice each, values broadcast to them.
template <expression X, class V>
auto insert(const X& x, const std::vector<index_t>& positions, const V& values, int axis) {
  return detail::with_input(x, [&](const auto& xv) {
    if (xv.ndim() == 0) throw shape_error("fusor: insert along an axis needs rank >= 1, got a 0-d array");
    return detail::insert_along(xv, positions, values, axis, false);
  });
}
template <expression X, class V>
auto insert(const X& x, index_t position, const V& values, int axis) {
  return detail::with_input(x, [&](const auto& xv) {
    if (xv.ndim() == 0) throw shape_error("fusor: insert along an axis needs rank >= 1, got a 0-d array");
    return detail::insert_along(xv, std::vector<index_t>(1, position), values, axis, true);
  });
}
/// np.insert without an axis: into the flattened array (array values flattened too).
template <expression X, class V>
auto insert(const X& x, const std::vector<index_t>& positions, const V& values) {
  if constexpr (expression<V>) return insert(flatten(x), positions, flatten(values), 0);
  else return insert(flatten(x), positions, values, 0);
}
template <expression X, class V>
auto insert(const X& x, index_t position, const V& values) {
  if constexpr (expression<V>) return insert(flatten(x), position, flatten(values), 0);
  else return insert(flatten(x), position, values, 0);
}

/// np.delete along an axis (named delete_: `delete` is a C++ keyword): x without the slices at
/// the given positions (negative from the end; repeats allowed; out of range is an index_error).
template <expression X>
auto delete_(const X& x, const std::vector<index_t>& positions, int axis) {
  return detail::with_input(x, [&](const auto& xv) {
    using Bk = backend_of_t<std::remove_cvref_t<decltype(xv)>>;
    if (xv.ndim() == 0) throw shape_error("fusor: delete_ along an axis needs rank >= 1, got a 0-d array");
    const int ax = normalize_axis(axis, xv.ndim());
    const index_t n = xv.shape()[ax];
    std::vector<bool> drop(std::size_t(n), false);
    for (index_t p : positions) {
      const index_t q = p < 0 ? p + n : p;
      if (q < 0 || q >= n)
        throw index_error("fusor: delete_ position " + std::to_string(p) + " is out of bounds for axis " +
                          std::to_string(axis) + " of length " + std::to_string(n));
      drop[std::size_t(q)] = true;
    }
    std::vector<std::int64_t> keep;
    for (index_t i = 0; i < n; ++i)
      if (!drop[std::size_t(i)]) keep.push_back(i);
    return take(xv, detail::index_array<Bk>(keep), ax);
  });
}
template <expression X>
auto delete_(const X& x, index_t position, int axis) {
  return delete_(x, std::vector<index_t>{position}, axis);
}
/// np.delete without an axis: from the flattened array.
template <expression X>
auto delete_(const X& x, const std::vector<index_t>& positions) {
  return delete_(flatten(x), positions, 0);
}
template <expression X>
auto delete_(const X& x, index_t position) {
  return delete_(flatten(x), std::vector<index_t>{position}, 0);
}

}  // namespace fusor
