#pragma once
// Internals shared by the linear-algebra front end: operands as strided views (evaluating an
// expression once when it is not an array of the compute type), permuted views, merging runs of
// axes into one, and the test for "BLAS can read this matrix as it lies".
#include <algorithm>
#include <string>
#include <type_traits>
#include <utility>

#include "../../core/array.hpp"
#include "../../core/assign.hpp"
#include "../../core/operators.hpp"
#include "../../core/shape_ops.hpp"
#include "../../core/view.hpp"
#include "../blas_fwd.hpp"

namespace fusor::detail::linalg {

/// A rebindable (pointer, shape, strides) with array_view's accessors. The front end re-points
/// handles as it copies operands; array_view cannot be used for that, since assigning one view
/// to another writes elements (NumPy's a[...] = b).
template <class T, class B>
class strided {
 public:
  strided() = default;
  strided(T* data, const extents& shape, const extents& strides) : data_(data), shape_(shape), strides_(strides) {}
  strided(T* data, const extents& shape) : strided(data, shape, contiguous_strides(shape)) {}
  strided(const array_view<T, B>& v) : strided(v.data(), v.shape(), v.strides()) {}

  T* data() const { return data_; }
  const extents& shape() const { return shape_; }
  const extents& strides() const { return strides_; }
  int ndim() const { return shape_.size(); }
  index_t size() const { return shape_.numel(); }
  array_view<T, B> view() const { return {data_, shape_, strides_}; }
  leaf<T, B> as_leaf() const { return {data_, shape_, strides_}; }
  bool is_contiguous() const { return view().is_contiguous(); }
  array<T, B> copy() const { return view().copy(); }

 private:
  T* data_ = nullptr;
  extents shape_, strides_;
};

/// An operand as a view of element type R: an array or view of type R is used where it lies;
/// anything else (an expression, another element type) is evaluated once into `keep`.
template <class R, class B>
struct operand {
  array<R, B> keep;
  strided<R, B> view;
};
template <class R, class N>
operand<R, backend_of_t<N>> materialize(const N& node) {
  using B = backend_of_t<N>;
  operand<R, B> o;
  if constexpr (std::is_same_v<N, leaf<R, B>>) {
    o.view = strided<R, B>(node.data, node.shape, node.strides);
  } else {
    o.keep = array<R, B>(cast<R>(node));
    o.view = o.keep.view();
  }
  return o;
}

/// v with its axes reordered (permute_dims): axis k of the result is axis perm[k] of v; perm
/// names every axis of v once.
template <class T, class B>
strided<T, B> permuted(const strided<T, B>& v, const int* perm, int n) {
  extents axes;
  for (int k = 0; k < n; ++k) axes.push_back(perm[k]);
  return permute_dims(v.view(), axes);
}

/// Axes [first, last) of a strided layout as one axis of `size` elements `stride` apart, when the
/// memory allows it (each axis steps over the whole of the next); size-1 axes do not matter.
struct axis_run {
  bool ok = false;
  index_t size = 1, stride = 0;
  explicit operator bool() const { return ok; }
};
inline axis_run merge_axes(const extents& shape, const extents& strides, int first, int last) {
  axis_run r{true, 1, 0};
  for (int k = first; k < last; ++k)
    if (shape[k] == 0) return {true, 0, 1};
  bool any = false;
  for (int k = last - 1; k >= first; --k) {
    if (shape[k] == 1) continue;
    if (!any) {
      r.stride = strides[k];
      any = true;
    } else if (strides[k] != r.stride * r.size) {
      return {};
    }
    r.size *= shape[k];
  }
  return r;
}

/// How BLAS reads an r x c matrix with row stride rs and column stride cs: as it lies (row-major
/// with leading dimension ld >= c) or transposed (a column-major layout, ld >= r).
struct mat_layout {
  bool ok = false;  // false: BLAS cannot read this layout, copy it
  bool trans = false;
  index_t ld = 1;
  explicit operator bool() const { return ok; }
};
inline mat_layout blas_layout(index_t r, index_t c, index_t rs, index_t cs) {
  const index_t rr = std::max<index_t>(r, 1), cc = std::max<index_t>(c, 1);
  if ((c <= 1 || cs == 1) && (r <= 1 || rs >= cc)) return mat_layout{true, false, r <= 1 ? cc : rs};
  if ((r <= 1 || rs == 1) && (c <= 1 || cs >= rr)) return mat_layout{true, true, c <= 1 ? rr : cs};
  return {};
}

/// Bytes a view reads or writes, for overlap checks.
template <class T, class B>
std::pair<const char*, const char*> bytes_of(const strided<T, B>& v) {
  return byte_range(v.as_leaf());
}
template <class T, class B, class U>
bool overlaps(const strided<T, B>& a, const strided<U, B>& b) {
  auto [a0, a1] = bytes_of(a);
  auto [b0, b1] = bytes_of(b);
  return a0 != nullptr && b0 != nullptr && a0 < b1 && b0 < a1;
}

/// x * y, or logical and for two bool operands (NumPy's product of booleans).
template <class X, class Y>
auto times(const X& x, const Y& y) {
  if constexpr (std::is_same_v<value_t<X>, bool> && std::is_same_v<value_t<Y>, bool>) return logical_and(x, y);
  else return x * y;
}

template <class B>
constexpr void require_blas() {
  static_assert(blas_backend<B>,
                "fusor: linear algebra on this backend needs its BLAS kernels in this translation unit; include "
                "<fusor/fusor.hpp> for cpu (CBLAS) or <fusor/cuda.cuh> for cuda (cuBLAS)");
}
template <class A, class B>
constexpr void require_same_backend() {
  static_assert(std::is_same_v<A, B>,
                "fusor: linear-algebra operands must be on the same backend (for example both cpu); move one "
                "first with to<cpu>(x) or to<cuda>(x)");
}

/// The two operands of a binary linear-algebra function: their node types, backend B (both
/// operands must share it; checked on construction) and promoted element type R, with the nodes
/// and their shapes. Unpack with `const auto [na, nb, sa, sb] = binary_args<A, Bx>(a, b);`.
template <class A, class Bx>
struct binary_args {
  using NA = node_t<A>;
  using NB = node_t<Bx>;
  using B = backend_of_t<NA>;
  using R = promote_t<value_t<NA>, value_t<NB>>;

  NA na;
  NB nb;
  extents sa, sb;

  binary_args(const A& a, const Bx& b) : na(to_node(a)), nb(to_node(b)), sa(expr_shape(na)), sb(expr_shape(nb)) {
    require_same_backend<B, backend_of_t<NB>>();
  }
};

}  // namespace fusor::detail::linalg
