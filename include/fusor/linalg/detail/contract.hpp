#pragma once
// The one contraction kernel behind tensordot, dot, inner and einsum: permute each operand so its
// axes read (batch, free, contracted) and (batch, contracted, free), view the free and contracted
// runs as single axes (a copy only when the memory does not allow that), and run one batched
// matrix product.
#include <string>

#include "../matmul.hpp"

namespace fusor::detail::linalg {

/// A short list of axis numbers.
struct axis_list {
  int v[max_rank] = {};
  int n = 0;
  void push_back(int x) { v[n++] = x; }
  const int* begin() const { return v; }
  const int* end() const { return v + n; }
  bool contains(int x) const {
    for (int i = 0; i < n; ++i)
      if (v[i] == x) return true;
    return false;
  }
};

// v's axes in the order (g0, g1, g2) seen as (g0..., merged g1, merged g2): zero-copy when both
// runs merge, else a contiguous copy of the permuted view.
template <class T, class B>
strided<T, B> grouped(const strided<T, B>& v, const axis_list& g0, const axis_list& g1, const axis_list& g2,
                         array<T, B>& keep) {
  axis_list perm;
  for (int x : g0) perm.push_back(x);
  for (int x : g1) perm.push_back(x);
  for (int x : g2) perm.push_back(x);
  strided<T, B> p = permuted(v, perm.v, perm.n);
  auto m1 = merge_axes(p.shape(), p.strides(), g0.n, g0.n + g1.n);
  auto m2 = merge_axes(p.shape(), p.strides(), g0.n + g1.n, perm.n);
  if (!m1 || !m2) {
    keep = p.copy();
    p = keep.view();
    m1 = merge_axes(p.shape(), p.strides(), g0.n, g0.n + g1.n);
    m2 = merge_axes(p.shape(), p.strides(), g0.n + g1.n, perm.n);
  }
  extents s, st;
  for (int d = 0; d < g0.n; ++d) {
    s.push_back(p.shape()[d]);
    st.push_back(p.strides()[d]);
  }
  s.push_back(m1.size);
  st.push_back(m1.stride);
  s.push_back(m2.size);
  st.push_back(m2.stride);
  return {p.data(), s, st};
}

/// out[batch, free_a, free_b] = sum over contracted of a[...] * b[...]. Batch axes of a and b pair
/// up in order (their sizes are equal, checked by the caller), as do contracted axes.
template <class T, class B>
array<T, B> contract(const strided<T, B>& a, const strided<T, B>& b, const axis_list& bat_a,
                     const axis_list& free_a, const axis_list& con_a, const axis_list& bat_b, const axis_list& con_b,
                     const axis_list& free_b) {
  extents out_shape;
  for (int x : bat_a) out_shape.push_back(a.shape()[x]);
  for (int x : free_a) out_shape.push_back(a.shape()[x]);
  for (int x : free_b) out_shape.push_back(b.shape()[x]);
  array<T, B> out(out_shape);
  if (out.size() == 0) return out;
  array<T, B> ka, kb;
  const strided<T, B> va = grouped(a, bat_a, free_a, con_a, ka);
  const strided<T, B> vb = grouped(b, bat_b, con_b, free_b, kb);
  extents cs;
  for (int d = 0; d < bat_a.n; ++d) cs.push_back(out_shape[d]);
  cs.push_back(va.shape()[bat_a.n]);
  cs.push_back(vb.shape()[bat_b.n + 1]);
  matmul_into(va, vb, strided<T, B>(out.data(), cs));
  return out;
}

/// Checks that paired axes have equal sizes; the message names both shapes and the axes.
inline void check_pairs(const char* what, const extents& sa, const extents& sb, const axis_list& ca,
                        const axis_list& cb) {
  for (int i = 0; i < ca.n; ++i)
    if (sa[ca.v[i]] != sb[cb.v[i]])
      throw shape_error(std::string("fusor: ") + what + ": shapes " + to_string(sa) + " and " + to_string(sb) +
                        " do not match: axis " + std::to_string(ca.v[i]) + " of the first has size " +
                        std::to_string(sa[ca.v[i]]) + ", axis " + std::to_string(cb.v[i]) +
                        " of the second has size " + std::to_string(sb[cb.v[i]]) + " (expected equal sizes)");
}

/// All axes of a rank-n array not in `used`, in order.
inline axis_list rest(int n, const axis_list& used) {
  axis_list r;
  for (int k = 0; k < n; ++k)
    if (!used.contains(k)) r.push_back(k);
  return r;
}

}  // namespace fusor::detail::linalg
