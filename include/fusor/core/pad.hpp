#pragma once
// Padding, rolling and cropping: pad (constant, edge, wrap, reflect, symmetric; n-d), roll
// (several axes at once), and pyTME's topleft_pad / extract_center. Written as assignments
// between views of the result, so they run on every backend that can assign.
#include <string>
#include <utility>
#include <vector>

#include "join.hpp"

namespace fusor {

enum class pad_mode { constant, edge, wrap, reflect, symmetric };

inline const char* pad_mode_name(pad_mode m) {
  switch (m) {
    case pad_mode::constant: return "constant";
    case pad_mode::edge: return "edge";
    case pad_mode::wrap: return "wrap";
    case pad_mode::reflect: return "reflect";
    case pad_mode::symmetric: return "symmetric";
  }
  return "?";
}

/// (before, after) pad widths per axis.
using pad_widths = std::vector<std::pair<index_t, index_t>>;

namespace detail {
/// Source position (inside [0, n)) of padded position i (relative to the original start).
inline index_t pad_source(index_t i, index_t n, pad_mode mode) {
  auto mod = [](index_t a, index_t m) { return ((a % m) + m) % m; };
  switch (mode) {
    case pad_mode::edge: return i < 0 ? 0 : (i >= n ? n - 1 : i);
    case pad_mode::wrap: return mod(i, n);
    case pad_mode::reflect: {
      if (n == 1) return 0;
      const index_t m = mod(i, 2 * n - 2);
      return m >= n ? 2 * n - 2 - m : m;
    }
    case pad_mode::symmetric: {
      const index_t m = mod(i, 2 * n);
      return m >= n ? 2 * n - 1 - m : m;
    }
    case pad_mode::constant: break;
  }
  return i;
}

/// The (before, after) widths of axis k (one pair may stand for every axis).
inline std::pair<index_t, index_t> pad_width(const pad_widths& widths, int k) {
  return widths.size() == 1 ? widths[0] : widths[std::size_t(k)];
}

/// The shape of `shape` padded by `widths` in `mode`, after checking the widths.
inline extents padded_shape(const extents& in, const pad_widths& widths, pad_mode mode) {
  const int r = in.size();
  if (!(widths.size() == std::size_t(r) || widths.size() == 1))
    throw value_error("fusor: pad expects 1 or " + std::to_string(r) + " (before, after) pairs for shape " +
                      to_string(in) + ", got " + std::to_string(widths.size()));
  extents shape;
  for (int k = 0; k < r; ++k) {
    const auto [b, a] = pad_width(widths, k);
    if (b < 0 || a < 0)
      throw value_error("fusor: pad widths must be >= 0, got (" + std::to_string(b) + ", " + std::to_string(a) +
                        ") for axis " + std::to_string(k));
    if (mode != pad_mode::constant && in[k] == 0 && (a > 0 || b > 0))
      throw value_error(std::string("fusor: pad mode '") + pad_mode_name(mode) + "' cannot extend the empty axis " +
                        std::to_string(k) + " of shape " + to_string(in));
    shape.push_back(in[k] + b + a);
  }
  return shape;
}

template <class T, class B, class V>
array<T, B> pad_view(const array_view<T, B>& v, const pad_widths& widths, pad_mode mode, V value) {
  const int r = v.ndim();
  auto width = [&](int k) { return pad_width(widths, k); };
  array<T, B> out(padded_shape(v.shape(), widths, mode));
  if (out.size() == 0) return out;
  leaf<T, B> region = out.as_leaf();
  for (int k = 0; k < r; ++k) region = slice_leaf(region, k, width(k).first, width(k).first + v.shape()[k]);
  as_view(region) = v;
  // Axis after axis, the region written so far (axes < k padded in full, axes >= k the original
  // range) grows by its pads along k, so each element is written once and corners come from
  // already padded edges, as in NumPy.
  for (int k = 0; k < r; ++k) {
    const auto [b, a] = width(k);
    const index_t n = v.shape()[k];
    leaf<T, B> full = region;
    full.data -= b * region.strides[k];
    full.shape[k] = n + b + a;
    const array_view<T, B> fv = as_view(full);
    if (mode == pad_mode::constant) {
      if (b > 0) slice_axis(fv, k, 0, b) = value;
      if (a > 0) slice_axis(fv, k, b + n, b + n + a) = value;
    } else {
      for (index_t i = -b; i < n + a; ++i)
        if (i < 0 || i >= n) index_axis(fv, k, i + b) = index_axis(fv, k, pad_source(i, n, mode) + b);
    }
    region = full;
  }
  return out;
}
}  // namespace detail

/// np.pad: widths has one (before, after) pair per axis, or a single pair for every axis. The
/// constant mode fills with `value`; the others read the array itself, axis after axis as NumPy
/// does (so corners come from already padded edges). Every element is written once.
template <class X, class V = int>
auto pad(const X& x, const pad_widths& widths, pad_mode mode = pad_mode::constant, V value = 0) {
  return detail::with_input(x, [&](const auto& v) { return detail::pad_view(v, widths, mode, value); });
}
template <class X, class V = int>
auto pad(const X& x, index_t width, pad_mode mode = pad_mode::constant, V value = 0) {
  return pad(x, pad_widths{{width, width}}, mode, value);
}

namespace detail {
template <class T, class B>
array<T, B> roll_view(const array_view<T, B>& v, const extents& shifts, const extents& axes) {
  if (axes.size() == 0) {
    if (shifts.size() != 1)
      throw value_error("fusor: roll without axes takes one shift, got " + to_string(shifts));
    if (v.is_contiguous())  // rolled as one axis in place of a flattened copy
      return roll_view(array_view<T, B>(v.data(), extents{v.size()}), shifts, extents{0}).reshape(v.shape());
    const array<T, B> flat = flatten(v);
    return roll_view(flat.view(), shifts, extents{0}).reshape(v.shape());
  }
  if (shifts.size() != axes.size() && shifts.size() != 1)
    throw value_error("fusor: roll expects one shift per axis, got shifts " + to_string(shifts) + " for axes " +
                      to_string(axes));
  extents shift;
  shift.resize(v.ndim());
  for (auto& s : shift) s = 0;
  for (int i = 0; i < axes.size(); ++i) {
    const int ax = normalize_axis(int(axes[i]), v.ndim());
    shift[ax] += shifts[shifts.size() == 1 ? 0 : i];  // NumPy: a repeated axis adds its shifts
  }
  array<T, B> out(v.shape());
  if (out.size() == 0) return out;
  int rolled[max_rank], nr = 0;
  for (int k = 0; k < v.ndim(); ++k) {
    const index_t n = v.shape()[k];
    shift[k] = ((shift[k] % n) + n) % n;
    if (shift[k] != 0) rolled[nr++] = k;
  }
  for (int mask = 0; mask < (1 << nr); ++mask) {
    leaf<T, B> dst = out.as_leaf(), src = v.as_leaf();
    for (int j = 0; j < nr; ++j) {
      const int k = rolled[j];
      const index_t n = v.shape()[k], s = shift[k];
      // low part: src [0, n-s) -> dst [s, n); high part: src [n-s, n) -> dst [0, s)
      if (mask & (1 << j)) {
        src = detail::slice_leaf(src, k, n - s, n);
        dst = detail::slice_leaf(dst, k, 0, s);
      } else {
        src = detail::slice_leaf(src, k, 0, n - s);
        dst = detail::slice_leaf(dst, k, s, n);
      }
    }
    detail::as_view(dst) = detail::as_view(src);
  }
  return out;
}
}  // namespace detail
/// np.roll: elements shifted along each axis in `axes` by the matching entry of `shifts`,
/// wrapping around; with no axes, the flattened array is rolled and the shape kept. The result
/// is written in 2^k block copies for k axes (one pass over the data).
template <class X>
auto roll(const X& x, const extents& shifts, const extents& axes) {
  return detail::with_input(x, [&](const auto& v) { return detail::roll_view(v, shifts, axes); });
}
template <class X>
auto roll(const X& x, index_t shift, int axis) {
  return roll(x, extents{shift}, extents{axis});
}
template <class X>
auto roll(const X& x, index_t shift) {
  return roll(x, extents{shift}, extents{});
}

/// pyTME's topleft_pad: a zero array of `shape` with x in its top-left corner (x is cropped
/// where `shape` is smaller): the cropped corner padded with zeros after it.
template <class X>
auto topleft_pad(const X& x, const extents& shape) {
  return detail::with_input(x, [&](const auto& v) {
    if (shape.size() != v.ndim())
      throw shape_error("fusor: topleft_pad expects a shape of rank " + std::to_string(v.ndim()) +
                        " for an array of shape " + to_string(v.shape()) + ", got " + to_string(shape));
    check_shape(shape);
    auto corner = v.as_leaf();
    pad_widths after;
    for (int k = 0; k < v.ndim(); ++k) {
      const index_t n = std::min(shape[k], v.shape()[k]);
      corner = detail::slice_leaf(corner, k, 0, n);
      after.push_back({0, shape[k] - n});
    }
    return detail::pad_view(detail::as_view(corner), after, pad_mode::constant, 0);
  });
}

/// pyTME's extract_center: the centred block of `shape` (clamped to x's shape; the start on each
/// axis is (n - m) / 2 rounded down). A view for arrays and views.
template <class X>
auto extract_center(X&& x, const extents& shape) {
  return detail::with_view(std::forward<X>(x), [&](const auto& v) {
    if (shape.size() != v.ndim())
      throw shape_error("fusor: extract_center expects a shape of rank " + std::to_string(v.ndim()) +
                        " for an array of shape " + to_string(v.shape()) + ", got " + to_string(shape));
    check_shape(shape);
    auto out = v.as_leaf();
    for (int k = 0; k < v.ndim(); ++k) {
      const index_t m = std::min(shape[k], v.shape()[k]), start = (v.shape()[k] - m) / 2;
      out = detail::slice_leaf(out, k, start, start + m);
    }
    return detail::as_view(out);
  });
}

}  // namespace fusor
