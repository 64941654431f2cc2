#pragma once
// The subscript vocabulary of views: a(range(0, 10, 2), all), a(1, range(none, none, -1)),
// a(newaxis, ellipsis, 0). Python's slice rules (negative indices count from the end, bounds
// are clamped, negative steps walk backwards); an integer removes its axis; newaxis inserts an
// axis of size 1; ellipsis stands for as many whole axes as needed. Everything here is
// arithmetic on (offset, shape, strides): slicing never touches the elements.
#include <limits>
#include <string>
#include <type_traits>

#include "error.hpp"
#include "extents.hpp"

namespace fusor {

/// "Not given" in a range, like Python's None in a[::-1].
inline constexpr index_t none = std::numeric_limits<index_t>::min();

/// start:stop:step on one axis. range(2, none) is a[2:], range(none, none, -1) is a[::-1].
struct range {
  index_t start = none;
  index_t stop = none;
  index_t step = 1;
  constexpr range() = default;
  constexpr range(index_t start_, index_t stop_, index_t step_ = 1) : start(start_), stop(stop_), step(step_) {}
};

struct newaxis_t {};
/// Inserts an axis of size 1 (np.newaxis).
inline constexpr newaxis_t newaxis{};
struct ellipsis_t {};
/// As many whole axes as needed to index every axis (NumPy's ...).
inline constexpr ellipsis_t ellipsis{};

namespace detail {
struct all_fn;  // fusor::all (core/reduce.hpp): also a whole-axis subscript

template <class S>
inline constexpr bool is_slice_tag_v = std::is_same_v<S, range> || std::is_same_v<S, newaxis_t> ||
                                       std::is_same_v<S, ellipsis_t> || std::is_same_v<S, all_fn>;
}  // namespace detail

/// One argument of a view subscript.
template <class S>
concept subscript = std::integral<std::remove_cvref_t<S>> || detail::is_slice_tag_v<std::remove_cvref_t<S>>;
/// A subscript list that makes a view (at least one argument is not an integer; all integers is
/// element access).
template <class... S>
concept view_subscripts = (subscript<S> && ...) && !(std::integral<std::remove_cvref_t<S>> && ...);

namespace detail {

/// Python's slice.indices(n): the first index, the step and the number of elements.
struct resolved_range {
  index_t first;
  index_t step;
  index_t count;
};
inline resolved_range resolve(const range& r, index_t n, int axis) {
  if (r.step == 0) throw value_error("fusor: slice step cannot be zero (axis " + std::to_string(axis) + ")");
  if (r.step == none) throw value_error("fusor: slice step must be an integer, got none");
  const index_t step = r.step;
  auto clamp = [&](index_t i, index_t lo, index_t hi) {
    if (i < 0) i += n;
    return i < lo ? lo : (i > hi ? hi : i);
  };
  index_t start, stop;
  if (step > 0) {
    start = r.start == none ? 0 : clamp(r.start, 0, n);
    stop = r.stop == none ? n : clamp(r.stop, 0, n);
    const index_t count = stop > start ? (stop - start - 1) / step + 1 : 0;  // no overflow for huge steps
    return {start, step, count};
  }
  start = r.start == none ? n - 1 : clamp(r.start, -1, n - 1);
  stop = r.stop == none ? -1 : clamp(r.stop, -1, n - 1);
  const index_t count = start > stop ? (start - stop - 1) / (-step) + 1 : 0;
  return {start, step, count};
}

/// A strided window: what slicing and the shape operations compute.
struct window {
  index_t offset = 0;
  extents shape;
  extents strides;
};

template <class S>
void apply_subscript(const S& s, const extents& shape, const extents& strides, int& in_axis, int n_expand,
                     window& w) {
  using U = std::remove_cvref_t<S>;
  if constexpr (std::is_same_v<U, newaxis_t>) {
    w.shape.push_back(1);
    w.strides.push_back(0);
  } else if constexpr (std::is_same_v<U, ellipsis_t>) {
    for (int k = 0; k < n_expand; ++k, ++in_axis) {
      w.shape.push_back(shape[in_axis]);
      w.strides.push_back(strides[in_axis]);
    }
  } else if constexpr (std::is_same_v<U, all_fn>) {
    w.shape.push_back(shape[in_axis]);
    w.strides.push_back(strides[in_axis]);
    ++in_axis;
  } else if constexpr (std::is_same_v<U, range>) {
    const resolved_range r = resolve(s, shape[in_axis], in_axis);
    if (r.count > 0) w.offset += r.first * strides[in_axis];
    w.shape.push_back(r.count);
    w.strides.push_back(r.count > 1 ? r.step * strides[in_axis] : strides[in_axis]);
    ++in_axis;
  } else {
    const index_t n = shape[in_axis];
    index_t i = static_cast<index_t>(s);
    if (i < -n || i >= n)
      throw index_error("fusor: index " + std::to_string(i) + " is out of bounds for axis " + std::to_string(in_axis) +
                        " with size " + std::to_string(n) + " (shape " + to_string(shape) + ")");
    if (i < 0) i += n;
    w.offset += i * strides[in_axis];
    ++in_axis;
  }
}

/// The window selected by a subscript list on an array of the given layout.
template <class... S>
window subscript_window(const extents& shape, const extents& strides, const S&... s) {
  constexpr int n_ellipsis = (int(std::is_same_v<std::remove_cvref_t<S>, ellipsis_t>) + ... + 0);
  constexpr int n_new = (int(std::is_same_v<std::remove_cvref_t<S>, newaxis_t>) + ... + 0);
  constexpr int n_consuming = int(sizeof...(S)) - n_ellipsis - n_new;
  static_assert(n_ellipsis <= 1, "fusor: a subscript can contain at most one ellipsis");
  if (n_consuming > shape.size())
    throw index_error("fusor: too many indices: an array of shape " + to_string(shape) + " has " +
                      std::to_string(shape.size()) + " axes, the subscript indexes " + std::to_string(n_consuming));
  const int n_expand = shape.size() - n_consuming;
  window w;
  int in_axis = 0;
  (apply_subscript(s, shape, strides, in_axis, n_expand, w), ...);
  for (; in_axis < shape.size(); ++in_axis) {  // axes not mentioned are taken whole
    w.shape.push_back(shape[in_axis]);
    w.strides.push_back(strides[in_axis]);
  }
  return w;
}

}  // namespace detail
}  // namespace fusor
