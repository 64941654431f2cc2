#pragma once
// array_view<T, B>: a non-owning strided window onto an array's memory (or any memory the user
// wraps). Copying a view copies the handle; *assigning* to a view writes elements, like
// NumPy's `a[...] = x`, so `v = a + b` evaluates into the viewed memory in one fused pass.
#include <cassert>
#include <string>
#include <type_traits>

#include "backend.hpp"
#include "dtype.hpp"
#include "expr/leaf.hpp"
#include "expr/nodes.hpp"
#include "slice.hpp"

namespace fusor {

template <element T, backend B>
class array;

namespace detail {
inline index_t checked_offset(const extents& shape, const extents& strides, const index_t* idx, int n) {
  if (n != shape.size())
    throw index_error("fusor: expected " + std::to_string(shape.size()) + " indices for an array of shape " +
                      to_string(shape) + ", got " + std::to_string(n));
  index_t off = 0;
  for (int k = 0; k < n; ++k) {
    index_t i = idx[k];
    if (i < -shape[k] || i >= shape[k])
      throw index_error("fusor: index " + std::to_string(i) + " is out of bounds for axis " + std::to_string(k) +
                        " with size " + std::to_string(shape[k]) + " (shape " + to_string(shape) + ")");
    if (i < 0) i += shape[k];
    off += i * strides[k];
  }
  return off;
}
template <class B>
constexpr void require_host() {
  static_assert(std::is_same_v<B, cpu>,
                "fusor: element access needs host memory; copy the array to the cpu first with to<cpu>(a)");
}
}  // namespace detail

template <element T, backend B = default_backend>
class array_view {
 public:
  using value_type = T;
  using backend_type = B;

  array_view() = default;
  /// Wraps existing memory (not owned): shape and strides in elements.
  array_view(T* data, extents shape, extents strides) : data_(data), shape_(shape), strides_(strides) {
    check_shape(shape_);
    if (strides_.size() != shape_.size())
      throw shape_error("fusor: expected " + std::to_string(shape_.size()) + " strides for shape " +
                        to_string(shape_) + ", got " + std::to_string(strides_.size()));
  }
  /// Wraps existing contiguous row-major memory (not owned).
  array_view(T* data, extents shape) : array_view(data, shape, contiguous_strides(shape)) {}

  array_view(const array_view&) = default;
  /// Writes the other view's elements into this one (shapes must broadcast to this shape).
  array_view& operator=(const array_view& other) {
    detail::assign_expr(as_leaf(), other.as_leaf(), true);
    return *this;
  }
  /// Evaluates an expression into the viewed elements (one fused pass; broadcasting allowed).
  template <expression E>
  array_view& operator=(const E& e) {
    detail::assign_expr(as_leaf(), detail::to_node(e), true);
    return *this;
  }
  template <scalar S>
  array_view& operator=(const S& s) {
    detail::assign_expr(as_leaf(), scalar_expr<T>{convert_element<T>(s)}, false);
    return *this;
  }

  const extents& shape() const { return shape_; }
  const extents& strides() const { return strides_; }
  index_t size() const { return shape_.numel(); }
  int ndim() const { return shape_.size(); }
  T* data() const { return data_; }
  bool is_contiguous() const {
    const extents c = contiguous_strides(shape_);
    for (int k = 0; k < shape_.size(); ++k)
      if (shape_[k] > 1 && strides_[k] != c[k]) return false;
    return true;
  }
  leaf<T, B> as_leaf() const { return {data_, shape_, strides_}; }

  /// Element access (cpu only): one index per axis, not range-checked (asserted in debug
  /// builds); see at() for checked access.
  template <std::integral... I>
  T& operator()(I... i) const {
    detail::require_host<B>();
    assert(int(sizeof...(I)) == ndim() && "fusor: element access needs one index per axis");
    static_assert(sizeof...(I) <= max_rank, "fusor: more indices than the maximum rank");
    const index_t idx[] = {static_cast<index_t>(i)..., 0};
    index_t off = 0;
    for (int k = 0; k < int(sizeof...(I)); ++k) off += idx[k] * strides_[k];
    return data_[off];
  }
  /// A sub-view: v(range(0, 10, 2), all), v(1, all) (row 1 of a 2-d view), v(newaxis, ellipsis).
  /// (All-integer subscripts are element access.)
  /// Zero-copy; assigning to the result writes into this view's elements.
  template <class... S>
    requires view_subscripts<S...>
  array_view operator()(const S&... s) const {
    const detail::window w = detail::subscript_window(shape_, strides_, s...);
    return {data_ ? data_ + w.offset : nullptr, w.shape, w.strides};
  }
  /// Checked element access: the number of indices must equal the rank; negative indices count
  /// from the end; out-of-range indices throw index_error.
  template <std::integral... I>
  T& at(I... i) const {
    detail::require_host<B>();
    const index_t idx[] = {static_cast<index_t>(i)..., 0};
    return data_[detail::checked_offset(shape_, strides_, idx, int(sizeof...(I)))];
  }
  /// The only element of a size-1 view.
  /// The only element of a size-1 view (on a device backend: copied to the host, which waits
  /// for the work queued on the current stream).
  T item() const {
    if (size() != 1)
      throw shape_error("fusor: item() needs exactly one element, got shape " + to_string(shape_));
    if constexpr (backend_traits<B>::host_accessible) {
      return *data_;
    } else {
      T v{};
      backend_memory<B>::copy_to_host(&v, data_, 1);
      return v;
    }
  }

  array<T, B> copy() const;

 private:
  T* data_ = nullptr;
  extents shape_;
  extents strides_;
};

template <class T, class B>
inline constexpr bool is_expression_v<array_view<T, B>> = true;

}  // namespace fusor
