#pragma once
// Explicit transfers between backends: to<cuda>(a), to<cpu>(a), copy(dst, src). Nothing moves
// between host and device memory implicitly; these are the only doors. Each is one contiguous
// copy through the backends' memory hooks; a strided source is first packed on its own backend
// (one fused pass there), so a transposed device array comes back with one kernel and one copy.
//
// These work in host-compiled code too (a .cpp built by g++ can move arrays to and from the
// GPU): only packing a strided device view, or evaluating an expression, needs the backend's
// executor, and that is checked with a sentence.
#include <string>
#include <type_traits>

#include "indexing.hpp"

namespace fusor {

namespace detail {
template <class Dst, class Src, class T>
void copy_contiguous(T* dst, const T* src, index_t n) {
  if (n == 0) return;
  if constexpr (std::is_same_v<Dst, Src>) backend_memory<Dst>::copy_within(dst, src, n);
  else if constexpr (backend_traits<Src>::host_accessible) backend_memory<Dst>::copy_from_host(dst, src, n);
  else if constexpr (backend_traits<Dst>::host_accessible) backend_memory<Src>::copy_to_host(dst, src, n);
  else static_assert(backend_traits<Src>::host_accessible, "fusor: transfers between two device backends go through the cpu");
}

/// x's elements in C order in contiguous memory of x's backend: x itself when it already is,
/// else a packed copy (which needs the backend's executor).
template <class X>
auto packed_source(const X& x) {
  using B = backend_of_t<X>;
  static_assert(has_executor<B> || is_view_v<X> || is_array_v<X>,
                "fusor: transferring an expression evaluates it first, which for cuda needs nvcc: compile "
                "this in a .cu file that includes <fusor/cuda.cuh>, or transfer the arrays");
  if constexpr (has_executor<B>) {
    return contiguous_of(x);
  } else {
    const auto v = part_view(x);
    if (!v.is_contiguous())
      throw backend_error(std::string("fusor: packing a strided ") + backend_traits<B>::name +
                          " view before a transfer runs a kernel, which needs nvcc: transfer it from a .cu file "
                          "that includes <fusor/cuda.cuh>, or transfer a contiguous array (got shape " +
                          to_string(v.shape()) + ", strides " + to_string(v.strides()) + ")");
    struct holder {
      decltype(part_view(x)) w;
      auto view() const { return w; }
    };
    return holder{v};
  }
}
}  // namespace detail

/// A new array on backend Dst with x's elements (an array, a view or an expression, which is
/// evaluated on its own backend first). to<B>(x) on x's own backend is a deep copy.
template <backend Dst, expression E>
array<value_t<E>, Dst> to(const E& x) {
  using Src = backend_of_t<E>;
  using T = value_t<E>;
  static_assert(!std::is_same_v<Src, no_backend>, "fusor: to<B>(x) needs an array, a view or an expression with one");
  if constexpr (std::is_same_v<Src, Dst> && has_executor<Dst>) {
    return array<T, Dst>(detail::to_node(x));
  } else {  // (on one backend without its executor here: a contiguous device-to-device copy)
    const auto src = detail::packed_source(x);
    const extents shape = src.view().shape();
    array<T, Dst> r(shape);
    detail::copy_contiguous<Dst, Src>(r.data(), static_cast<const T*>(src.view().data()), shape.numel());
    return r;
  }
}

/// Writes src's elements into dst (an array or a view) across backends; the shapes must be
/// equal. On one backend it is plain assignment (which also broadcasts).
template <class D, expression S>
  requires requires(const D& d) { d.as_leaf(); }
void copy(const D& dst, const S& src) {
  using T = value_t<D>;
  using Dst = backend_of_t<D>;
  using Src = backend_of_t<S>;
  static_assert(std::is_same_v<value_t<S>, T>,
                "fusor: copy(dst, src) needs equal element types; convert first with astype<U>() or cast<U>(x)");
  const leaf<T, Dst> d = dst.as_leaf();
  if constexpr (std::is_same_v<Src, Dst>) {
    detail::assign_expr(d, detail::to_node(src), true);
  } else {
    const auto packed = detail::packed_source(src);
    const auto s = packed.view();
    if (s.shape() != d.shape)
      throw shape_error("fusor: copy between backends needs equal shapes: destination " + to_string(d.shape) +
                        ", source " + to_string(s.shape()));
    if (detail::as_view(d).is_contiguous()) {
      detail::note_write(d);
      detail::copy_contiguous<Dst, Src>(d.data, static_cast<const T*>(s.data()), s.size());
    } else if constexpr (has_executor<Dst>) {  // a packed buffer on the destination, then one strided pass
      array<T, Dst> tmp(s.shape());
      detail::copy_contiguous<Dst, Src>(tmp.data(), static_cast<const T*>(s.data()), s.size());
      detail::assign_expr(d, tmp.as_leaf(), false);
    } else {
      throw backend_error(std::string("fusor: copying into a strided ") + backend_traits<Dst>::name +
                          " view runs a kernel, which needs nvcc: do it in a .cu file that includes "
                          "<fusor/cuda.cuh>, or copy into a contiguous array");
    }
  }
}

}  // namespace fusor
