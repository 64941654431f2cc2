#pragma once
// array<T, B>: an owning, 64-byte-aligned (cpu), row-major n-d array of up to max_rank
// dimensions with shape and strides stored inline.
//
// Move-only: a copy of a large buffer should be visible in the code, so it is spelled
// a.copy(). Assigning an expression evaluates it: `d = a * b + c;` runs one fused pass, reusing
// d's buffer when the shape matches and reallocating otherwise (like Eigen and xtensor).
#include <algorithm>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

#include "expr/nodes.hpp"
#include "view.hpp"
#include "write_watch.hpp"

namespace fusor {

template <element T, backend B = default_backend>
class array {
  static_assert(requires { backend_memory<B>::template allocate<T>(index_t{}); },
                "fusor: this backend has no memory support in this translation unit; for cuda "
                "include <fusor/cuda.cuh> (or the cuda backend's memory header)");

 public:
  using value_type = T;
  using backend_type = B;

  /// An empty one-dimensional array (shape (0,)); nothing is allocated.
  array() { shape_.push_back(0); strides_ = contiguous_strides(shape_); }
  /// Uninitialised storage of the given shape (like np.empty); see zeros/full for filled arrays.
  explicit array(const extents& shape) : shape_(shape), strides_(contiguous_strides(shape)) {
    check_shape(shape_);
    if (const index_t n = shape_.numel(); n > 0) data_ = backend_memory<B>::template allocate<T>(n);
  }
  /// Evaluates an expression into a new array of its shape.
  template <expression E>
    requires(!std::is_same_v<std::remove_cvref_t<E>, array>)
  array(const E& e) : array(expr_shape(detail::to_node(e))) {
    static_assert(std::is_same_v<backend_of_t<E>, B> || std::is_same_v<backend_of_t<E>, no_backend>,
                  "fusor: cannot initialise an array from an expression on another backend; "
                  "transfer explicitly with to<cpu>(x) or to<cuda>(x)");
    detail::assign_expr(as_leaf(), detail::to_node(e), false);
  }

  /// Copies host data of the given shape (sizes must agree).
  array(std::span<const T> values, const extents& shape) : array(shape) {
    if (index_t(values.size()) != shape_.numel())
      throw shape_error("fusor: " + std::to_string(values.size()) + " values cannot fill shape " + to_string(shape_) +
                        " (expected " + std::to_string(shape_.numel()) + ")");
    copy_from_host(values.data());
  }
  /// Nested braces give the values and the shape: array<float> m{{1, 2}, {3, 4}} is 2x2.
  /// (For a shape, use empty/zeros/full: array<float>({3, 4}) holds the two values 3 and 4.)
  array(std::initializer_list<T> v) : array(std::span<const T>(v.begin(), v.size()), extents{index_t(v.size())}) {}
  array(std::initializer_list<std::initializer_list<T>> v) { from_nested(v); }
  array(std::initializer_list<std::initializer_list<std::initializer_list<T>>> v) { from_nested(v); }
  array(std::initializer_list<std::initializer_list<std::initializer_list<std::initializer_list<T>>>> v) {
    from_nested(v);
  }

  array(array&& o) noexcept : data_(std::exchange(o.data_, nullptr)), shape_(o.shape_), strides_(o.strides_) {
    o.reset_empty();
  }
  array& operator=(array&& o) noexcept {
    if (this != &o) {
      release();
      data_ = std::exchange(o.data_, nullptr);
      shape_ = o.shape_;
      strides_ = o.strides_;
      o.reset_empty();
    }
    return *this;
  }
  array(const array&) = delete;             // use a.copy()
  array& operator=(const array&) = delete;  // use d = a.copy(), or d.view() = a to copy elements
  ~array() { release(); }

  /// Evaluates `e` into this array: in place (with an alias check) when the shapes are equal,
  /// otherwise into a new buffer of e's shape.
  template <expression E>
    requires(!std::is_same_v<std::remove_cvref_t<E>, array>)
  array& operator=(const E& e) {
    auto node = detail::to_node(e);
    const extents s = expr_shape(node);
    if (s == shape_) detail::assign_expr(as_leaf(), node, true);
    else *this = array(node);
    return *this;
  }
  /// Sets every element (like a.fill(s)).
  template <scalar S>
  array& operator=(const S& s) {
    fill(s);
    return *this;
  }
  template <class S>
    requires(scalar<S> || std::is_same_v<S, T>)
  void fill(const S& s) {
    detail::assign_expr(as_leaf(), scalar_expr<T>{convert_element<T>(s)}, false);
  }

#define FUSOR_COMPOUND(OP, OPEQ)                                            \
  template <class E>                                                        \
    requires(expression<E> || scalar<E>)                                    \
  array& operator OPEQ(const E& e) {                                        \
    detail::assign_expr(as_leaf(), as_leaf() OP e, true);                  \
    return *this;                                                           \
  }
  FUSOR_COMPOUND(+, +=)
  FUSOR_COMPOUND(-, -=)
  FUSOR_COMPOUND(*, *=)
  FUSOR_COMPOUND(/, /=)
  FUSOR_COMPOUND(%, %=)
  FUSOR_COMPOUND(&, &=)
  FUSOR_COMPOUND(|, |=)
  FUSOR_COMPOUND(^, ^=)
#undef FUSOR_COMPOUND

  const extents& shape() const { return shape_; }
  const extents& strides() const { return strides_; }
  index_t size() const { return shape_.numel(); }
  int ndim() const { return shape_.size(); }
  T* data() { return data_; }
  const T* data() const { return data_; }

  array_view<T, B> view() const& { return {data_, shape_, strides_}; }
  array_view<T, B> view() && = delete;  // would dangle: the temporary dies at the end of the statement
  leaf<T, B> as_leaf() const { return {data_, shape_, strides_}; }

  /// On a temporary (arange<float>(12).reshape({3, -1})): the same buffer, moved into an array
  /// of the new shape, so nothing dangles and nothing is copied.
  array reshape(const extents& new_shape) && {
    const array_view<T, B> v = static_cast<const array&>(*this).reshape(new_shape);
    array r(std::move(*this));
    r.shape_ = v.shape();
    r.strides_ = v.strides();
    return r;
  }
  /// A view with a new shape of the same size; one dimension may be -1 (inferred).
  array_view<T, B> reshape(const extents& new_shape) const& {
    const extents s = detail::resolve_reshape(shape_, new_shape);
    return {data_, s, contiguous_strides(s)};
  }

  /// A converted copy (np.astype): complex to real keeps the real part, anything to bool is != 0.
  template <element U>
  array<U, B> astype() const {
    array<U, B> r(shape_);
    detail::assign_expr(r.as_leaf(), cast_expr<U, leaf<T, B>>{as_leaf()}, false);
    return r;
  }
  /// A deep copy.
  array copy() const { return view().copy(); }

  template <std::integral... I>
  T& operator()(I... i) {
    return view()(i...);
  }
  template <std::integral... I>
  const T& operator()(I... i) const {
    return view()(i...);
  }
  /// A view of part of the array: a(range(0, 10, 2), all) = b * 2; writes through (see slice.hpp).
  template <class... S>
    requires view_subscripts<S...>
  array_view<T, B> operator()(const S&... s) const& {
    return view()(s...);
  }
  template <class... S>
    requires view_subscripts<S...>
  array_view<T, B> operator()(const S&... s) && = delete;  // would dangle: the temporary dies at the end of the statement
  template <std::integral... I>
  T& at(I... i) {
    return view().at(i...);
  }
  template <std::integral... I>
  const T& at(I... i) const {
    return view().at(i...);
  }
  T item() const { return view().item(); }

  T* begin() {
    detail::require_host<B>();
    return data_;
  }
  T* end() { return begin() + size(); }
  const T* begin() const {
    detail::require_host<B>();
    return data_;
  }
  const T* end() const { return begin() + size(); }

 private:
  void copy_from_host(const T* src) {
    if (shape_.numel() > 0) backend_memory<B>::copy_from_host(data_, src, shape_.numel());
  }
  template <class L>
  static void nested_shape(const L& l, extents& shape, int depth) {
    if (depth == shape.size()) shape.push_back(index_t(l.size()));
    else if (shape[depth] != index_t(l.size()))
      throw shape_error("fusor: nested initializer lists are ragged: expected " + std::to_string(shape[depth]) +
                        " elements at depth " + std::to_string(depth) + ", got " + std::to_string(l.size()));
    if constexpr (!std::is_same_v<typename L::value_type, T>)
      for (const auto& sub : l) nested_shape(sub, shape, depth + 1);
  }
  template <class L>
  static void nested_copy(const L& l, T*& out) {
    if constexpr (std::is_same_v<typename L::value_type, T>) out = std::copy(l.begin(), l.end(), out);
    else
      for (const auto& sub : l) nested_copy(sub, out);
  }
  template <class L>
  void from_nested(const L& l) {
    extents shape;
    nested_shape(l, shape, 0);
    // an empty outer list leaves inner sizes unknown: NumPy gives shape (0,) for [] and (1, 0) for [[]]
    while (shape.size() < nesting_depth<L>()) shape.push_back(0);
    *this = array(shape);
    if constexpr (backend_traits<B>::host_accessible) {
      T* out = data_;
      nested_copy(l, out);
    } else {  // gathered on the host, then one transfer
      auto staging = std::make_unique<T[]>(std::size_t(shape.numel()));
      T* out = staging.get();
      nested_copy(l, out);
      copy_from_host(staging.get());
    }
  }
  template <class L>
  static constexpr int nesting_depth() {
    if constexpr (std::is_same_v<typename L::value_type, T>) return 1;
    else return 1 + nesting_depth<typename L::value_type>();
  }

  void release() {
    if (data_ && !detail::adopted_on_release(data_, shape_.numel(), &release_buffer))
      backend_memory<B>::template deallocate<T>(data_, shape_.numel());
    data_ = nullptr;
  }
  static void release_buffer(void* p, index_t n) { backend_memory<B>::template deallocate<T>(static_cast<T*>(p), n); }
  void reset_empty() {
    shape_ = extents{0};
    strides_ = extents{1};
  }
  T* data_ = nullptr;
  extents shape_;
  extents strides_;
};

template <class T, class B>
inline constexpr bool is_expression_v<array<T, B>> = true;

template <element T, backend B>
array<T, B> array_view<T, B>::copy() const {
  array<T, B> r(shape_);
  detail::assign_expr(r.as_leaf(), as_leaf(), false);
  return r;
}

}  // namespace fusor
