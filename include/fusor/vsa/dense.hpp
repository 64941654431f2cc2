#pragma once
// Pieces shared by the models whose vectors are plain real or complex rows (MAP, HRR, FHRR, VTB):
// contiguous row access, and similarity of (Q, w) queries against (N, w) items as one GEMM.
#include <algorithm>
#include <complex>
#include <string>

#include "../core/indexing.hpp"
#include "../core/pad.hpp"
#include "../core/reduce.hpp"
#include "../core/shape_ops.hpp"
#include "../linalg/matmul.hpp"
#include "kernels.hpp"
#include "model.hpp"
#include "../core/ext.hpp"

namespace fusor::vsa::detail {

/// Real rows scaled to unit L2 norm (a zero row stays zero), reading an array where it lies.
template <class X>
auto unit_rows(const X& x) {
  const auto xc = fusor::ext::contiguous_of(x);
  const auto v = xc.view();
  const array<value_t<decltype(v)>, backend_of_t<decltype(v)>> n = sqrt(sum(v * v, -1, true));
  return eval(v / maximum(n, 1e-30f));
}

/// q (Q, w) or (w,) against x (N, w) or (w,): the rows as 2-d views plus the result's shape
/// (Q, N), (N), (Q) or () as matmul(q, x^T) would give.
inline extents similarity_shape(const extents& q, const extents& x, const char* what) {
  if (q.size() > 2 || x.size() > 2)
    throw shape_error(std::string("fusor::vsa::") + what +
                      ": queries and items are (n, width) batches or single (width) vectors; got shapes " +
                      to_string(q) + " and " + to_string(x));
  extents out;
  if (q.size() == 2) out = extents{q[0]};
  if (x.size() == 2) out = q.size() == 2 ? extents{q[0], x[0]} : extents{x[0]};
  return out;
}
template <class T, class B>
array_view<T, B> as_matrix(const array_view<T, B>& v) {
  const index_t w = v.shape()[v.ndim() - 1], n = v.ndim() == 2 ? v.shape()[0] : 1;
  return array_view<T, B>(v.data(), extents{n, w}, extents{w, 1});
}
/// Complex rows read as interleaved real rows of twice the width: then Re <a, conj b> is the real
/// dot product of the two rows, one real GEMM instead of a complex one (half the arithmetic).
template <class R, class B>
array_view<R, B> as_real_matrix(const array_view<std::complex<R>, B>& v) {
  const index_t w = v.shape()[v.ndim() - 1], n = v.ndim() == 2 ? v.shape()[0] : 1;
  return array_view<R, B>(reinterpret_cast<R*>(v.data()), extents{n, 2 * w}, extents{2 * w, 1});
}

/// A contiguous complex view as reals: the same shape with the last axis doubled (re, im, ...).
template <class R, class B>
array_view<R, B> interleaved(const array_view<std::complex<R>, B>& v) {
  extents shape = v.shape(), strides = v.strides();
  for (int k = 0; k < shape.size(); ++k) strides[k] *= 2;
  if (shape.size() > 0) {
    shape[shape.size() - 1] *= 2;
    strides[shape.size() - 1] = 1;
  }
  return array_view<R, B>(reinterpret_cast<R*>(v.data()), shape, strides);
}
/// The sum along axis -2 of complex rows, summed as interleaved reals (the real reduction is the
/// SIMD one; complex sums along an outer axis are not).
template <class X>
auto complex_row_sum(const X& x) {
  const auto xc = fusor::ext::contiguous_of(x);
  using T = value_t<decltype(xc.view())>;
  using B = backend_of_t<decltype(xc.view())>;
  extents out;
  for (int k = 0; k < xc.view().ndim(); ++k)
    if (k != xc.view().ndim() - 2) out.push_back(xc.view().shape()[k]);
  array<T, B> r(out);
  auto rv = interleaved(r.view());
  rv = sum(interleaved(xc.view()), -2);
  return r;
}

/// Cosines of one real row v (w) against every row of x (N, w), reading x once: each row's dot
/// product with v and its squared norm accumulate together in 64 independent lanes (which the
/// compiler vectorises without reassociating a sum), then the lanes are added in a fixed order. A
/// GEMV followed by a pass of row norms would read the batch twice. `vn` is |v|.
template <class R>
struct cosines_against_one {
  using value_type = R;
  static constexpr index_t lanes = 64;
  const R *v, *x;
  index_t w;
  R vn;
  FUSOR_HD void fill(index_t first, R* out, index_t count) const {
    for (index_t i = 0; i < count; ++i) {
      const R* row = x + (first + i) * w;
      R dp[lanes] = {}, sp[lanes] = {};
      index_t k = 0;
      for (; k + lanes <= w; k += lanes)
        for (index_t l = 0; l < lanes; ++l) {
          dp[l] += v[k + l] * row[k + l];
          sp[l] += row[k + l] * row[k + l];
        }
      for (index_t l = 0; k + l < w; ++l) {
        dp[l] += v[k + l] * row[k + l];
        sp[l] += row[k + l] * row[k + l];
      }
      for (index_t h = lanes / 2; h > 0; h /= 2)  // a fixed tree: the same sums on every call
        for (index_t l = 0; l < h; ++l) {
          dp[l] += dp[l + h];
          sp[l] += sp[l + h];
        }
      const R den = std::sqrt(sp[0]) * vn;
      out[i] = dp[0] / (den > R(1e-30) ? den : R(1e-30));
    }
  }
};

/// Dot products (and cosines) of real rows: one GEMM, then one fused pass dividing by the norms
/// (a zero vector has cosine 0 with everything). Where the host can read the rows (the cpu), the
/// cosines of one row against a batch (a GEMV's shape) are one pass over the batch instead.
template <class R, class B>
array<R, B> real_similarity(const array_view<R, B>& q, const array_view<R, B>& x, bool cosine) {
  // (16-bit rows take the GEMM below: this pass would convert them one element at a time, 3.7x
  // slower than float32's; the half GEMM widens them in registers)
  if constexpr (backend_traits<B>::host_accessible && !fusor::ext::small_float_v<R>) {
    const index_t nq = q.shape()[0], nx = x.shape()[0], w = q.shape()[1];
    if (cosine && (nq == 1 || nx == 1) && w > 0) {
      const bool one_query = nq == 1;
      const array_view<R, B>& one = one_query ? q : x;
      const array_view<R, B>& batch = one_query ? x : q;
      double n2 = 0;
      for (index_t k = 0; k < w; ++k) n2 += double(one.data()[k]) * double(one.data()[k]);
      array<R, B> r = generate<B>(cosines_against_one<R>{one.data(), batch.data(), w, R(std::sqrt(n2))},
                                  extents{batch.shape()[0]});
      return std::move(r).reshape(one_query ? extents{1, nx} : extents{nq, 1});
    }
  }
  array<R, B> out = matmul(q, transpose(x));  // (16-bit floats: accumulated in float32)
  if (cosine) {
    if constexpr (fusor::ext::small_float_v<R>) {  // the norms and the quotient in float32
      const array<float, B> qn = sqrt(sum(square(cast<float>(q)), 1)), xn = sqrt(sum(square(cast<float>(x)), 1));
      out = cast<R>(cast<float>(out) / maximum(expand_dims(qn, 1) * xn, 1e-30f));
    } else {
      const array<R, B> qn = sqrt(sum(q * q, 1)), xn = sqrt(sum(x * x, 1));
      out = out / maximum(expand_dims(qn, 1) * xn, R(1e-30));
    }
  }
  return out;
}

/// Similarity of rows of a dense model: T real (or complex, read as interleaved reals). R is the
/// real type of the result.
template <class X, class Y>
auto dense_similarity(const X& q, const Y& x, metric s, std::string_view model, const char* what = "similarity") {
  const auto qc = fusor::ext::contiguous_of(q);
  const auto xc = fusor::ext::contiguous_of(x);
  const extents out_shape = similarity_shape(qc.view().shape(), xc.view().shape(), what);
  if (s != metric::cosine && s != metric::dot)
    throw value_error("fusor::vsa::" + std::string(what) + ": " + std::string(model) + " has no " +
                      std::string(to_string(s)) + " similarity; it supports cosine and dot");
  using T = value_t<decltype(qc.view())>;
  if constexpr (is_complex_v<T>) {
    auto r = real_similarity(as_real_matrix(qc.view()), as_real_matrix(xc.view()), s == metric::cosine);
    return std::move(r).reshape(out_shape);
  } else {
    auto r = real_similarity(as_matrix(qc.view()), as_matrix(xc.view()), s == metric::cosine);
    return std::move(r).reshape(out_shape);
  }
}

/// What the models over plain rows (MAP, FHRR, HRR, VTB) share: the dimension (one element per
/// dimension, so width() == dim()), negation, the cyclic shift along the rows and the similarity
/// by one GEMM (MAP replaces it to compare its integers as floats). M names itself in errors.
template <class M>
struct dense_model {
  index_t d = 1;
  dense_model() = default;
  explicit dense_model(index_t dim) : d(checked_dim(dim, M::name)) {}
  index_t dim() const { return d; }
  index_t width() const { return d; }
  template <class X>
  auto negative(const X& a) const {
    return eval(-a);
  }
  template <class X>
  auto permute(const X& a, index_t shift) const {
    return roll(a, shift, -1);
  }
  template <class X, class Y>
  auto similarity(const X& q, const Y& x, metric s) const {
    return dense_similarity(q, x, s, M::name);
  }
};

/// What HRR and VTB share: real rows that bundle into the plain sum (scaled to unit norm on
/// request), normalise to unit L2 norm and superpose by one GEMM.
template <class M>
struct unit_rows_model : dense_model<M> {
  using dense_model<M>::dense_model;
  template <class X>
  auto bundle_counts(const X& x) const {
    return sum(x, -2);
  }
  template <class X>
  auto bundle(const X& x, const bundle_options& o) const {
    auto s = bundle_counts(x);
    if (o.norm == normalization::project) s = normalize(s);
    return s;
  }
  /// Rows scaled to unit L2 norm (a zero row stays zero).
  template <class X>
  auto normalize(const X& x) const {
    return unit_rows(x);
  }
  /// The weighted superposition of items (N, d) for weights (Q, N), scaled to unit norm.
  template <class W, class X>
  auto superpose(const W& weights, const X& items) const {
    return unit_rows(matmul(weights, items));
  }
};

/// What FHRR and GHRR share: complex rows bundled by their sum (interleaved-real reduction) and
/// projected by the model's normalize unless normalization::none; the weighted superposition is
/// one complex GEMM, projected the same way.
template <class M>
struct projected_complex_sum {
  template <class X>
  auto bundle_counts(const X& x) const {
    return complex_row_sum(x);
  }
  template <class X>
  auto bundle(const X& x, const bundle_options& o) const {
    auto s = bundle_counts(x);
    if (o.norm != normalization::none) s = self().normalize(s);
    return s;
  }
  template <class W, class X>
  auto superpose(const W& weights, const X& items) const {
    return self().normalize(matmul(cast<typename M::value_type>(weights), items));
  }

 private:
  const M& self() const { return static_cast<const M&>(*this); }
};

}  // namespace fusor::vsa::detail

namespace fusor::vsa::detail {

/// The shape of a bundle of x (..., n, w): (..., w). Fewer than two axes or n = 0 is an error (an
/// empty bundle has no value in any model).
inline extents bundle_shape(const extents& x, std::string_view model, const char* what = "bundle") {
  if (x.size() < 2)
    throw shape_error("fusor::vsa::" + std::string(what) + ": expects (..., n, width) vectors to bundle along axis -2, got shape " +
                      to_string(x));
  if (x[x.size() - 2] == 0)
    throw value_error("fusor::vsa::" + std::string(what) + ": cannot bundle zero " + std::string(model) +
                      " vectors (shape " + to_string(x) + "): an empty bundle has no value");
  extents out;
  for (int k = 0; k < x.size(); ++k)
    if (k != x.size() - 2) out.push_back(x[k]);
  return out;
}

/// Row 0 along axis -2 of a (..., n, w) view: (..., w).
template <class T, class B>
array_view<T, B> first_row(const array_view<T, B>& v) {
  extents shape, strides;
  for (int k = 0; k < v.ndim(); ++k)
    if (k != v.ndim() - 2) {
      shape.push_back(v.shape()[k]);
      strides.push_back(v.strides()[k]);
    }
  return array_view<T, B>(v.data(), shape, strides);
}

}  // namespace fusor::vsa::detail

namespace fusor::vsa::detail {
/// Row i along axis -2 of a (..., n, w) view: (..., w).
template <class T, class B>
array_view<T, B> row_at(const array_view<T, B>& v, index_t i) {
  const array_view<T, B> r = first_row(v);
  return array_view<T, B>(v.data() + i * v.strides()[v.ndim() - 2], r.shape(), r.strides());
}
/// m.bind folded left along axis -2: bind(bind(x_0, x_1), x_2) ... (the multibind of the models
/// whose bind is not commutative, VTB and GHRR, where the order is the meaning).
template <class M, class X>
auto fold_left(const M& m, const X& x) {
  const auto xc = fusor::ext::contiguous_of(x);
  const auto v = xc.view();
  array<value_t<decltype(v)>, backend_of_t<decltype(v)>> r(row_at(v, 0));
  for (index_t k = 1; k < v.shape()[v.ndim() - 2]; ++k) r = m.bind(r, row_at(v, k));
  return r;
}
}  // namespace fusor::vsa::detail
