#pragma once
// matmul (NumPy's @): 1-d operands are promoted to a row / column and the axis removed again;
// leading axes are batch axes and broadcast. Float and complex types go to the backend's GEMM
// (one call per batch matrix, or one call for a whole stack times one matrix); integer and bool
// types to a plain loop. Operands are read where they lie when BLAS can read them so (row-major,
// or transposed views as CblasTrans); anything else is evaluated or copied once.
//
// matmul is a fusion barrier: it returns a new array, which is itself an expression, so
// `y = maximum(matmul(x, w) + b, 0.0f)` is one GEMM and one fused elementwise pass.
#include <string>
#include <type_traits>

#include "detail/views.hpp"
#include "../core/context.hpp"
#include "../core/planar.hpp"

namespace fusor {

namespace detail::linalg {

/// A stack of matrices: batch axes first, the matrix in the last two, as BLAS reads it.
template <class T, class B>
struct mat_stack {
  array<T, B> keep;  // a contiguous copy when the operand's layout needed one
  strided<T, B> view;
  index_t rows = 0, cols = 0;
  mat_layout lay;
};
template <class T, class B>
mat_stack<T, B> make_stack(const strided<T, B>& v) {
  mat_stack<T, B> s;
  s.view = v;
  const int n = v.ndim();
  s.rows = v.shape()[n - 2];
  s.cols = v.shape()[n - 1];
  auto lay = blas_layout(s.rows, s.cols, v.strides()[n - 2], v.strides()[n - 1]);
  if (!lay) {
    s.keep = v.copy();
    s.view = s.keep.view();
    lay = blas_layout(s.rows, s.cols, s.view.strides()[n - 2], s.view.strides()[n - 1]);
  }
  s.lay = lay;
  return s;
}

/// One matrix product C = op(A) op(B) (C row-major with row stride ldc), choosing dot or gemv when
/// the result is a single element, column or row.
template <class BK, class T>
void product(bool ta, bool tb, index_t m, index_t n, index_t k, const T* a, index_t lda, const T* b, index_t ldb,
             T* c, index_t ldc) {
  if (m == 1 && n == 1) {
    const T v = blas<BK>::dotu(k, a, ta ? lda : 1, b, tb ? 1 : ldb);
    if constexpr (backend_traits<BK>::host_accessible) *c = v;
    else backend_memory<BK>::copy_from_host(c, &v, 1);  // c is device memory
  } else if (n == 1) {
    blas<BK>::gemv(ta, ta ? k : m, ta ? m : k, a, lda, b, tb ? 1 : ldb, c, ldc);
  } else if (m == 1) {
    blas<BK>::gemv(!tb, tb ? n : k, tb ? k : n, b, ldb, a, ta ? lda : 1, c, index_t(1));
  } else {
    blas<BK>::gemm(ta, tb, m, n, k, a, lda, b, ldb, c, ldc);
  }
}

/// c = a @ b for views of rank >= 2 whose batch axes broadcast to c's (checked by the caller);
/// c does not overlap a or b. Numbers go to the backend's GEMM, planar elements (dual numbers) to
/// GEMMs on their planes.
template <class T, class B>
void matmul_into(const strided<T, B>& av, const strided<T, B>& bv, const strided<T, B>& c);

/// c = a @ b for elements made of planes with a bilinear product (planar_traits<T>::product: dual
/// numbers): one product of lane matrices per term, on strided views of the planes (copied to
/// BLAS layouts where needed); a plane's later terms are added through one temporary.
template <class T, class B>
  requires planar_product<T>
void planar_matmul_into(const strided<T, B>& a, const strided<T, B>& b, const strided<T, B>& c) {
  using traits = planar_traits<T>;
  using R = typename traits::lane;
  static_assert(sizeof(T) == traits::planes * sizeof(R), "fusor: a planar element is its planes, packed");
  auto plane = [](const strided<T, B>& v, int k) {
    extents st = v.strides();
    for (int d = 0; d < st.size(); ++d) st[d] *= traits::planes;
    R* lanes = reinterpret_cast<R*>(v.data());
    return strided<R, B>(lanes ? lanes + k : lanes, v.shape(), st);  // (an empty operand has no buffer)
  };
  if (c.size() == 0) return;
  bool written[traits::planes] = {};
  array<R, B> term(traits::product.size() > std::size_t(traits::planes) ? c.shape() : extents{0});
  for (const plane_term& t : traits::product) {
    if (!written[t.out]) {
      matmul_into(plane(a, t.a), plane(b, t.b), plane(c, t.out));
      written[t.out] = true;
    } else {
      matmul_into(plane(a, t.a), plane(b, t.b), strided<R, B>(term.data(), c.shape()));
      const leaf<R, B> out = plane(c, t.out).as_leaf();
      assign_expr(out, out + term.as_leaf(), false);
    }
  }
  for (int k = 0; k < traits::planes; ++k)
    if (!written[k]) assign_expr(plane(c, k).as_leaf(), scalar_expr<R>{R(0)}, false);
}

template <class T, class B>
void gemm_matmul_into(const strided<T, B>& av, const strided<T, B>& bv, const strided<T, B>& c) {
  const int nc = c.ndim(), nb = nc - 2;
  if (c.size() == 0) return;
  mat_stack<T, B> a = make_stack(av), b = make_stack(bv);
  const index_t m = a.rows, k = a.cols, n = b.cols;
  if (k == 0) {
    assign_expr(c.as_leaf(), scalar_expr<T>{T(0)}, false);
    return;
  }
  // the destination: written where it lies when BLAS can (row-major, or column-major by computing
  // C^T = B^T A^T), else through a contiguous temporary
  auto lc = blas_layout(m, n, c.strides()[nc - 2], c.strides()[nc - 1]);
  const array<T, B> ctmp(lc ? extents{0} : c.shape());  // empty (no buffer) when c is usable
  strided<T, B> cw = c;
  if (!lc) {
    cw = ctmp.view();
    lc = mat_layout{true, false, std::max<index_t>(n, 1)};
  }
  // batch strides aligned to c's batch axes (0 where an operand broadcasts)
  index_t sa[max_rank] = {}, sb[max_rank] = {}, sc[max_rank] = {};
  auto align = [&](const strided<T, B>& v, index_t* s) {
    const int off = nb - (v.ndim() - 2);
    for (int d = 0; d < v.ndim() - 2; ++d) s[d + off] = v.shape()[d] == 1 ? 0 : v.strides()[d];
  };
  align(a.view, sa);
  align(b.view, sb);
  for (int d = 0; d < nb; ++d) sc[d] = cw.strides()[d];
  const T* pa = a.view.data();
  const T* pb = b.view.data();
  T* pc = cw.data();
  auto one = [&](const T* x, const T* y, T* z, index_t rows, index_t lda, index_t ldc) {
    if (lc.trans) product<B>(!b.lay.trans, !a.lay.trans, n, rows, k, y, b.lay.ld, x, lda, z, ldc);
    else product<B>(a.lay.trans, b.lay.trans, rows, n, k, x, lda, y, b.lay.ld, z, ldc);
  };

  // a stack times one matrix, with a's and c's rows evenly spaced across the stack (a contiguous
  // stack is): one call with m * batches rows, as NumPy does
  bool single = !a.lay.trans && !lc.trans && nb > 0;
  for (int d = 0; d < nb && single; ++d) single = sb[d] == 0;
  if (single) {
    extents shp, sta, stc;
    for (int d = 0; d < nb; ++d) {
      shp.push_back(cw.shape()[d]);
      sta.push_back(sa[d]);
      stc.push_back(sc[d]);
    }
    shp.push_back(m);
    sta.push_back(a.lay.ld);
    stc.push_back(lc.ld);
    const auto ma = merge_axes(shp, sta, 0, nb + 1), mc = merge_axes(shp, stc, 0, nb + 1);
    if (ma && mc && ma.size > m && ma.stride >= std::max<index_t>(k, 1) && mc.stride >= std::max<index_t>(n, 1)) {
      one(pa, pb, pc, ma.size, ma.stride, mc.stride);
      if (ctmp.data()) assign_expr(c.as_leaf(), ctmp.as_leaf(), false);
      return;
    }
  }

  index_t batches = 1;
  for (int d = 0; d < nb; ++d) batches *= cw.shape()[d];
  index_t idx[max_rank] = {};
  for (index_t t = 0; t < batches; ++t) {
    index_t oa = 0, ob = 0, oc = 0;
    for (int d = 0; d < nb; ++d) {
      oa += idx[d] * sa[d];
      ob += idx[d] * sb[d];
      oc += idx[d] * sc[d];
    }
    one(pa + oa, pb + ob, pc + oc, m, a.lay.ld, lc.ld);
    for (int d = nb - 1; d >= 0; --d) {
      if (++idx[d] < cw.shape()[d]) break;
      idx[d] = 0;
    }
  }
  if (ctmp.data()) assign_expr(c.as_leaf(), ctmp.as_leaf(), false);
}

template <class T, class B>
void matmul_into(const strided<T, B>& av, const strided<T, B>& bv, const strided<T, B>& c) {
  if constexpr (planar_product<T>) planar_matmul_into(av, bv, c);
  else gemm_matmul_into(av, bv, c);
}

/// Shapes of a matmul: promoted operand shapes, the batch shape, and the result shape.
struct matmul_plan {
  extents a, b;  // operands with 1-d promoted to (1, K) and (K, 1)
  extents batch;
  extents result;  // NumPy's result shape (promoted axes removed)
  extents full;    // batch + (M, N)
};
inline matmul_plan plan_matmul(const extents& sa, const extents& sb, const char* what) {
  const std::string pre = std::string("fusor: ") + what + ": ";
  if (sa.size() == 0 || sb.size() == 0)
    throw value_error(pre + "operands must have at least one dimension, got shapes " + to_string(sa) + " and " +
                      to_string(sb) + " (use * to multiply by a scalar)");
  matmul_plan p;
  p.a = sa.size() == 1 ? extents{index_t(1), sa[0]} : sa;
  p.b = sb.size() == 1 ? extents{sb[0], index_t(1)} : sb;
  const index_t ka = p.a[p.a.size() - 1], kb = p.b[p.b.size() - 2];
  if (ka != kb)
    throw shape_error(pre + "shapes " + to_string(sa) + " and " + to_string(sb) + " do not match: axis " +
                      (sa.size() == 1 ? "0" : "-1") + " of the first has size " + std::to_string(ka) + ", axis " +
                      (sb.size() == 1 ? "0" : "-2") + " of the second has size " + std::to_string(kb) +
                      " (expected equal sizes)");
  extents ba, bb;
  for (int d = 0; d + 2 < p.a.size(); ++d) ba.push_back(p.a[d]);
  for (int d = 0; d + 2 < p.b.size(); ++d) bb.push_back(p.b[d]);
  const int n = std::max(ba.size(), bb.size());
  for (int i = 0; i < n; ++i) {
    const int ia = ba.size() - n + i, ib = bb.size() - n + i;
    const index_t da = ia >= 0 ? ba[ia] : 1, db = ib >= 0 ? bb[ib] : 1;
    if (da != db && da != 1 && db != 1)
      throw shape_error(pre + "the batch axes of shapes " + to_string(sa) + " and " + to_string(sb) +
                        " do not broadcast: batch axis " + std::to_string(i - n) + " has sizes " + std::to_string(da) +
                        " and " + std::to_string(db) + " (expected equal sizes or 1)");
  }
  p.batch = broadcast_shapes(ba, bb);
  p.result = p.batch;
  p.full = p.batch;
  const index_t m = p.a[p.a.size() - 2], nn = p.b[p.b.size() - 1];
  if (sa.size() > 1) p.result.push_back(m);
  if (sb.size() > 1) p.result.push_back(nn);
  p.full.push_back(m);
  p.full.push_back(nn);
  return p;
}

/// A view with the promoted shape: 1-d operands as a row (a) or a column (b).
template <class T, class B>
strided<T, B> promote_view(const strided<T, B>& v, bool first) {
  if (v.ndim() != 1) return v;
  const index_t k = v.shape()[0], s = v.strides()[0];
  if (first) return {v.data(), extents{index_t(1), k}, extents{index_t(0), s}};
  return {v.data(), extents{k, index_t(1)}, extents{s, index_t(1)}};
}
/// out (NumPy's result shape) as batch + (M, N), inserting the axes a 1-d operand removed.
template <class T, class B>
strided<T, B> full_view(const strided<T, B>& out, const matmul_plan& p, bool a_vec, bool b_vec) {
  const int nb = p.batch.size();
  extents st;
  for (int d = 0; d < nb; ++d) st.push_back(out.strides()[d]);
  int k = nb;
  st.push_back(a_vec ? index_t(0) : out.strides()[k++]);
  st.push_back(b_vec ? index_t(0) : out.strides()[k]);
  return {out.data(), p.full, st};
}

}  // namespace detail::linalg

/// The matrix product of a and b with NumPy's rules (np.matmul, the @ operator); a new array of
/// promote_t<A, B>. Shapes: (M, K) @ (K, N) -> (M, N); (..., M, K) @ (..., K, N) with broadcast
/// batch axes; a 1-d first operand is a row, a 1-d second operand a column (then removed).
template <expression A, expression Bx>
auto matmul(const A& a, const Bx& b) {
  using args = detail::linalg::binary_args<A, Bx>;
  using B = typename args::B;
  using R = typename args::R;
  detail::linalg::require_blas<B>();
  const auto [na, nb, sa, sb] = args(a, b);
  const auto p = detail::linalg::plan_matmul(sa, sb, "matmul");
  array<R, B> out(p.result);
  if (out.size() == 0) return out;
  const auto oa = detail::linalg::materialize<R>(na);
  const auto ob = detail::linalg::materialize<R>(nb);
  detail::linalg::matmul_into(detail::linalg::promote_view(oa.view, true), detail::linalg::promote_view(ob.view, false),
                              detail::linalg::full_view(detail::linalg::strided<R, B>(out.view()), p, sa.size() == 1, sb.size() == 1));
  return out;
}

/// matmul on an explicit context (a context<B>, or on(stream) on cuda): the product runs as if
/// it were the thread's current context.
template <execution_context E, expression A, expression Bx>
auto matmul(const E& exec, const A& a, const Bx& b) {
  return with_context<backend_of_t<node_t<A>>>(exec, [&] { return matmul(a, b); });
}

/// matmul into an existing array or view of exactly the result's shape (np.matmul(a, b, out=c)):
/// nothing is allocated when out has the result's element type, is laid out row- or column-major
/// in its last two axes, and does not overlap a or b.
template <expression A, expression Bx, class O>
  requires requires(O& o) { o.as_leaf(); }
void matmul(const A& a, const Bx& b, O&& out) {
  using args = detail::linalg::binary_args<A, Bx>;
  using B = typename args::B;
  using R = typename args::R;
  using T = value_t<O>;
  detail::linalg::require_same_backend<B, backend_of_t<O>>();
  detail::linalg::require_blas<B>();
  static_assert(same_kind_castable_v<R, T>,
                "fusor: matmul's result type cannot be stored in this out array without losing information "
                "(complex to real, floating to integer, or number to bool)");
  const auto [na, nb, sa, sb] = args(a, b);
  const auto p = detail::linalg::plan_matmul(sa, sb, "matmul");
  const auto ol = out.as_leaf();
  const detail::linalg::strided<T, B> ov(ol.data, ol.shape, ol.strides);
  if (!(ov.shape() == p.result))
    throw shape_error("fusor: matmul: out has shape " + to_string(ov.shape()) + ", expected " + to_string(p.result) +
                      " for operands of shapes " + to_string(sa) + " and " + to_string(sb));
  if (ov.size() == 0) return;
  detail::note_write(ol);
  const auto oa = detail::linalg::materialize<R>(na);
  const auto ob = detail::linalg::materialize<R>(nb);
  if constexpr (std::is_same_v<T, R>) {
    if (!detail::linalg::overlaps(ov, oa.view) && !detail::linalg::overlaps(ov, ob.view)) {
      detail::linalg::matmul_into(detail::linalg::promote_view(oa.view, true),
                                  detail::linalg::promote_view(ob.view, false),
                                  detail::linalg::full_view(ov, p, sa.size() == 1, sb.size() == 1));
      return;
    }
  }
  array<R, B> tmp(p.result);
  detail::linalg::matmul_into(detail::linalg::promote_view(oa.view, true), detail::linalg::promote_view(ob.view, false),
                              detail::linalg::full_view(detail::linalg::strided<R, B>(tmp.view()), p, sa.size() == 1, sb.size() == 1));
  detail::assign_expr(ol, tmp.as_leaf(), false);
}

}  // namespace fusor
