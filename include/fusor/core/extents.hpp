#pragma once
// extents: a small inline list of up to max_rank signed integers, used for shapes and strides,
// plus NumPy's broadcasting rule.
#include <algorithm>
#include <array>
#include <limits>
#include <ranges>
#include <string>

#include "config.hpp"
#include "error.hpp"

namespace fusor {

class extents {
 public:
  constexpr extents() = default;
  /// extents{3, 4}: any integer types (a braced list of std::size_t variables works too, which
  /// an initializer_list<index_t> constructor would reject as narrowing).
  template <std::integral... I>
    requires(sizeof...(I) > 0)
  extents(I... dims) {
    static_assert(sizeof...(I) <= max_rank, "fusor: at most 8 dimensions are supported");
    (push_back(static_cast<index_t>(dims)), ...);
  }
  /// From any range of integers (std::vector<std::size_t>, std::span<const int>, ...).
  template <std::ranges::input_range R>
    requires std::integral<std::ranges::range_value_t<R>>
  explicit extents(const R& values) {
    assign(std::ranges::begin(values), std::ranges::end(values));
  }

  constexpr int size() const { return n_; }
  constexpr bool empty() const { return n_ == 0; }
  constexpr index_t& operator[](int i) { return v_[i]; }
  constexpr const index_t& operator[](int i) const { return v_[i]; }
  constexpr index_t* data() { return v_.data(); }
  constexpr const index_t* data() const { return v_.data(); }
  constexpr index_t* begin() { return v_.data(); }
  constexpr index_t* end() { return v_.data() + n_; }
  constexpr const index_t* begin() const { return v_.data(); }
  constexpr const index_t* end() const { return v_.data() + n_; }
  constexpr index_t back() const { return v_[n_ - 1]; }

  void push_back(index_t x) {
    if (n_ == max_rank)
      throw shape_error("fusor: at most " + std::to_string(max_rank) + " dimensions are supported, got more");
    v_[n_++] = x;
  }
  constexpr void resize(int n) { n_ = n; }

  /// Number of elements of an array with this shape.
  constexpr index_t numel() const {
    index_t p = 1;
    for (int i = 0; i < n_; ++i) p *= v_[i];
    return p;
  }

  friend constexpr bool operator==(const extents& a, const extents& b) {
    return a.n_ == b.n_ && std::equal(a.begin(), a.end(), b.begin());
  }

 private:
  template <class It, class End>
  void assign(It first, End last) {
    for (; first != last; ++first) {
      const auto x = static_cast<index_t>(*first);
      push_back(x);
    }
  }
  std::array<index_t, max_rank> v_{};
  int n_ = 0;
};

/// NumPy's spelling of a shape: "(3, 4)", "(5,)", "()".
inline std::string to_string(const extents& e) {
  std::string s = "(";
  for (int i = 0; i < e.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(e[i]);
  }
  if (e.size() == 1) s += ",";
  return s + ")";
}

namespace detail {
/// The product of a shape's dimensions with zeros counted as 1, or -1 when it overflows `limit`.
/// This (not the element count) is what must fit: a zero before huge dimensions makes the count
/// 0 while the row-major strides of the dimensions after it still multiply up.
inline index_t strided_extent(const extents& shape, index_t limit) {
  index_t n = 1;
  for (index_t d : shape) {
    const index_t f = d > 1 ? d : 1;
    if (n > limit / f) return -1;
    n *= f;
  }
  return n;
}
}  // namespace detail

/// Rejects negative dimensions and shapes whose strides or element count overflow a 64-bit
/// index, whatever zeros they hold (a shape given by the user or read from a file).
inline void check_shape(const extents& shape) {
  for (index_t d : shape)
    if (d < 0) throw shape_error("fusor: dimensions must be >= 0, got shape " + to_string(shape));
  if (detail::strided_extent(shape, std::numeric_limits<index_t>::max()) < 0)
    throw shape_error("fusor: shape " + to_string(shape) +
                      " is too large: the product of its non-zero dimensions overflows a 64-bit index");
}

/// Row-major (C order) strides in elements for a shape (checked: a shape whose strides overflow
/// is a shape_error, never a wrapped stride).
inline extents contiguous_strides(const extents& shape) {
  check_shape(shape);
  extents s;
  s.resize(shape.size());
  index_t acc = 1;
  for (int i = shape.size() - 1; i >= 0; --i) {
    s[i] = acc;
    acc *= std::max<index_t>(shape[i], 1);
  }
  return s;
}

/// NumPy broadcasting: align at the trailing axis; each pair of dimensions must be equal or 1.
inline extents broadcast_shapes(const extents& a, const extents& b) {
  const int n = std::max(a.size(), b.size());
  extents r;
  r.resize(n);
  for (int i = 0; i < n; ++i) {
    const int ia = a.size() - n + i, ib = b.size() - n + i;
    const index_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    if (da != db && da != 1 && db != 1)
      throw shape_error("fusor: cannot broadcast shapes " + to_string(a) + " and " + to_string(b) +
                        ": axis " + std::to_string(i - n) + " has sizes " + std::to_string(da) +
                        " and " + std::to_string(db) + " (expected equal sizes or 1)");
    r[i] = da == 1 ? db : da;
  }
  return r;
}

namespace detail {
/// A reshape target for `shape`: resolves the one allowed -1 and checks that the sizes agree.
inline extents resolve_reshape(const extents& shape, extents new_shape) {
  int infer = -1;
  extents given = new_shape;  // the -1 counted as 1, so that the product below cannot overflow
  for (int k = 0; k < new_shape.size(); ++k) {
    if (new_shape[k] == -1) {
      if (infer >= 0) throw shape_error("fusor: reshape accepts at most one -1, got " + to_string(new_shape));
      infer = k;
      given[k] = 1;
    } else if (new_shape[k] < 0) {
      throw shape_error("fusor: reshape dimensions must be >= 0 or -1, got " + to_string(new_shape));
    }
  }
  check_shape(given);
  const index_t known = given.numel();
  const index_t n = shape.numel();
  if (infer >= 0) {
    if (known == 0 || n % known != 0)
      throw shape_error("fusor: cannot reshape an array of shape " + to_string(shape) + " (size " + std::to_string(n) +
                        ") into " + to_string(new_shape));
    new_shape[infer] = n / known;
  }
  if (new_shape.numel() != n)
    throw shape_error("fusor: cannot reshape an array of shape " + to_string(shape) + " (size " + std::to_string(n) +
                      ") into shape " + to_string(new_shape) + " (size " + std::to_string(new_shape.numel()) + ")");
  return new_shape;
}
}  // namespace detail

/// Resolves a possibly negative axis against a rank, or throws index_error.
inline int normalize_axis(int axis, int rank) {
  if (axis < -rank || axis >= rank)
    throw index_error("fusor: axis " + std::to_string(axis) + " is out of range for an array of rank " +
                      std::to_string(rank) + " (expected " + std::to_string(-rank) + " <= axis < " +
                      std::to_string(rank) + ")");
  return axis < 0 ? axis + rank : axis;
}

}  // namespace fusor
