#pragma once
// Products with NumPy's names and shape rules: dot, vdot, inner, outer, tensordot, and trace.
// Those whose result NumPy may give as an array return array<T, B> (0-d where NumPy returns a
// scalar; read it with .item()); vdot always reduces to one value and returns it.
#include <string>
#include <type_traits>
#include <utility>

#include "../core/create.hpp"
#include "../core/reduce.hpp"
#include "../core/shape_ops.hpp"
#include "detail/contract.hpp"

namespace fusor {

namespace detail::linalg {

// The products a sum of products adds: for 16-bit floats each product is kept in float32, so the
// sum is rounded once (NumPy's half dot, the half GEMM's float32 accumulation); else x * y.
template <class R, class X, class Y>
auto product_terms(const X& x, const Y& y) {
  if constexpr (small_float_v<R>) return cast<float>(x) * cast<float>(y);
  else return times(x, y);
}
// A 0-d array holding the sum of products of two 1-d expressions (one fused pass, no temporaries).
template <class R, class B, class NA, class NB>
array<R, B> vector_dot(const NA& na, const NB& nb) {
  return full<R, B>(extents{}, convert_element<R>(sum(product_terms<R>(na, nb))));
}
// An operand as a flat contiguous 1-d view (evaluated or copied once when it is not one).
template <class T, class N>
operand<T, backend_of_t<N>> flat(const N& node) {
  auto o = materialize<T>(node);
  if (!o.view.is_contiguous()) {
    o.keep = o.view.copy();
    o.view = o.keep.view();
  }
  o.view = strided<T, backend_of_t<N>>(o.view.data(), extents{o.view.size()});
  return o;
}
inline void normalize_into(const extents& axes, int rank, axis_list& out, const char* what, const char* which,
                           const extents& shape) {
  for (index_t x : axes) {
    if (x < -rank || x >= rank)
      throw index_error(std::string("fusor: ") + what + ": axis " + std::to_string(x) + " is out of range for the " +
                        which + " operand of shape " + to_string(shape) + " (expected " + std::to_string(-rank) +
                        " <= axis < " + std::to_string(rank) + ")");
    const int k = int(x < 0 ? x + rank : x);
    if (out.contains(k))
      throw value_error(std::string("fusor: ") + what + ": axis " + std::to_string(x) + " of the " + which +
                        " operand is listed twice (shape " + to_string(shape) + ")");
    out.push_back(k);
  }
}
// a's axes ca contracted with b's axes cb; result: a's other axes, then b's other axes.
template <class R, class NA, class NB>
auto contract_axes(const NA& na, const NB& nb, const axis_list& ca, const axis_list& cb, const char* what) {
  const extents sa = expr_shape(na), sb = expr_shape(nb);
  check_pairs(what, sa, sb, ca, cb);
  const auto oa = materialize<R>(na);
  const auto ob = materialize<R>(nb);
  return contract(oa.view, ob.view, axis_list{}, rest(sa.size(), ca), ca, axis_list{}, cb, rest(sb.size(), cb));
}

// tensordot's axes=n: a's last n axes paired with b's first n.
inline std::pair<extents, extents> last_first_axes(const extents& sa, const extents& sb, int n) {
  if (n < 0 || n > sa.size() || n > sb.size())
    throw value_error("fusor: tensordot: cannot contract " + std::to_string(n) + " axes of shapes " + to_string(sa) +
                      " and " + to_string(sb) + " (expected 0 <= n <= " + std::to_string(std::min(sa.size(), sb.size())) +
                      ")");
  extents xa, xb;
  for (int i = 0; i < n; ++i) {
    xa.push_back(sa.size() - n + i);
    xb.push_back(i);
  }
  return {xa, xb};
}

}  // namespace detail::linalg

/// np.tensordot(a, b, axes=(axes_a, axes_b)): sums the products over the paired axes; the result
/// has a's remaining axes, then b's. One GEMM (operands permuted, copied only when their memory
/// cannot be seen as a matrix).
template <expression A, expression Bx>
auto tensordot(const A& a, const Bx& b, const extents& axes_a, const extents& axes_b) {
  using args = detail::linalg::binary_args<A, Bx>;
  using B = typename args::B;
  using R = typename args::R;
  detail::linalg::require_blas<B>();
  const auto [na, nb, sa, sb] = args(a, b);
  if (axes_a.size() != axes_b.size())
    throw value_error("fusor: tensordot: the axis lists " + to_string(axes_a) + " and " + to_string(axes_b) +
                      " have different lengths (expected pairs of axes, for shapes " + to_string(sa) + " and " +
                      to_string(sb) + ")");
  detail::linalg::axis_list ca, cb;
  detail::linalg::normalize_into(axes_a, sa.size(), ca, "tensordot", "first", sa);
  detail::linalg::normalize_into(axes_b, sb.size(), cb, "tensordot", "second", sb);
  return detail::linalg::contract_axes<R>(na, nb, ca, cb, "tensordot");
}
/// np.tensordot(a, b, axes=n): the last n axes of a with the first n of b (n = 2 by default).
template <expression A, expression Bx>
auto tensordot(const A& a, const Bx& b, int n = 2) {
  const auto [xa, xb] = detail::linalg::last_first_axes(expr_shape(detail::to_node(a)), expr_shape(detail::to_node(b)), n);
  return tensordot(a, b, xa, xb);
}

/// np.dot: 1-d . 1-d is the inner product (a 0-d array; one fused pass, no temporaries); 2-d .
/// 2-d and n-d . 1-d are matmul; n-d . m-d sums over a's last axis and b's second-to-last, giving
/// a.shape[:-1] + b.shape[:-2] + b.shape[-1:]. A 0-d operand multiplies. No conjugation.
template <expression A, expression Bx>
auto dot(const A& a, const Bx& b) {
  using args = detail::linalg::binary_args<A, Bx>;
  using B = typename args::B;
  using R = typename args::R;
  const auto [na, nb, sa, sb] = args(a, b);
  if (sa.size() == 0 || sb.size() == 0) return array<R, B>(detail::linalg::times(na, nb));
  if (sa.size() == 1 && sb.size() == 1) {
    if (sa[0] != sb[0])
      throw shape_error("fusor: dot: shapes " + to_string(sa) + " and " + to_string(sb) +
                        " do not match: axis 0 of the first has size " + std::to_string(sa[0]) +
                        ", axis 0 of the second has size " + std::to_string(sb[0]) + " (expected equal sizes)");
    return detail::linalg::vector_dot<R, B>(na, nb);
  }
  const int kb = sb.size() == 1 ? 0 : sb.size() - 2;
  if (sa[sa.size() - 1] != sb[kb])
    throw shape_error("fusor: dot: shapes " + to_string(sa) + " and " + to_string(sb) + " do not match: axis " +
                      (sa.size() == 1 ? "0" : "-1") + " of the first has size " + std::to_string(sa[sa.size() - 1]) +
                      ", axis " + (sb.size() == 1 ? "0" : "-2") + " of the second has size " + std::to_string(sb[kb]) +
                      " (expected equal sizes)");
  // dot and matmul give the same result unless both operands have rank >= 2 and b has more than 2
  // (np.dot pairs every row of a with every matrix of b; matmul broadcasts the batches)
  if (sb.size() <= 2 || sa.size() == 1) return matmul(na, nb);
  detail::linalg::require_blas<B>();
  detail::linalg::axis_list ca, cb;
  ca.push_back(sa.size() - 1);
  cb.push_back(sb.size() - 2);
  return detail::linalg::contract_axes<R>(na, nb, ca, cb, "dot");
}

/// np.inner: sums over the last axis of both; the result has a.shape[:-1] + b.shape[:-1]
/// (1-d . 1-d: a 0-d array, one fused pass). A 0-d operand multiplies. No conjugation.
template <expression A, expression Bx>
auto inner(const A& a, const Bx& b) {
  using args = detail::linalg::binary_args<A, Bx>;
  using B = typename args::B;
  using R = typename args::R;
  const auto [na, nb, sa, sb] = args(a, b);
  if (sa.size() == 0 || sb.size() == 0) return array<R, B>(detail::linalg::times(na, nb));
  detail::linalg::axis_list ca, cb;
  ca.push_back(sa.size() - 1);
  cb.push_back(sb.size() - 1);
  detail::linalg::check_pairs("inner", sa, sb, ca, cb);
  if (sa.size() == 1 && sb.size() == 1) return detail::linalg::vector_dot<R, B>(na, nb);
  detail::linalg::require_blas<B>();
  return detail::linalg::contract_axes<R>(na, nb, ca, cb, "inner");
}

/// np.vdot: both operands flattened (sizes must agree), the first conjugated; returns one value.
template <expression A, expression Bx>
auto vdot(const A& a, const Bx& b) {
  using args = detail::linalg::binary_args<A, Bx>;
  using NA = typename args::NA;
  using NB = typename args::NB;
  using R = typename args::R;
  const auto [na, nb, sa, sb] = args(a, b);
  if (sa.numel() != sb.numel())
    throw shape_error("fusor: vdot: operands of shapes " + to_string(sa) + " and " + to_string(sb) +
                      " have different sizes (" + std::to_string(sa.numel()) + " and " + std::to_string(sb.numel()) +
                      "; expected equal sizes)");
  auto run = [](const auto& x, const auto& y) {
    if constexpr (is_complex_v<value_t<NA>>) return convert_element<R>(sum(detail::linalg::times(conj(x), y)));
    else return convert_element<R>(sum(detail::linalg::product_terms<R>(x, y)));
  };
  if (sa == sb) return run(na, nb);  // same layout of elements: one fused pass
  const auto fa = detail::linalg::flat<value_t<NA>>(na);
  const auto fb = detail::linalg::flat<value_t<NB>>(nb);
  return run(fa.view.as_leaf(), fb.view.as_leaf());
}

/// np.outer: a and b flattened; result[i, j] = a[i] * b[j] (one fused pass).
template <expression A, expression Bx>
auto outer(const A& a, const Bx& b) {
  using NA = node_t<A>;
  using NB = node_t<Bx>;
  using B = backend_of_t<NA>;
  detail::linalg::require_same_backend<B, backend_of_t<NB>>();
  const auto fa = detail::linalg::flat<value_t<NA>>(detail::to_node(a));
  const auto fb = detail::linalg::flat<value_t<NB>>(detail::to_node(b));
  const index_t m = fa.view.size(), n = fb.view.size();
  const detail::linalg::strided<value_t<NA>, B> col(fa.view.data(), extents{m, index_t(1)});
  const detail::linalg::strided<value_t<NB>, B> row(fb.view.data(), extents{index_t(1), n});
  return eval(detail::linalg::times(col.as_leaf(), row.as_leaf()));
}

/// np.trace: the sum of the diagonal (offset above, < 0 below) of the (axis1, axis2) planes; the
/// result has the other axes (a 0-d array for a matrix) and sum's element type (integers widen
/// to int64, as in NumPy).
template <expression A>
auto trace(const A& a, index_t offset = 0, int axis1 = 0, int axis2 = 1) {
  using N = node_t<A>;
  using T = value_t<N>;
  const N node = detail::to_node(a);
  const extents s = expr_shape(node);
  if (s.size() < 2)
    throw value_error("fusor: trace needs an array of rank >= 2, got shape " + to_string(s));
  const int ax1 = normalize_axis(axis1, s.size()), ax2 = normalize_axis(axis2, s.size());
  if (ax1 == ax2)
    throw value_error("fusor: trace needs two different axes, got " + std::to_string(axis1) + " and " +
                      std::to_string(axis2) + " for shape " + to_string(s));
  const auto o = detail::linalg::materialize<T>(node);  // a view of an array, else evaluated once
  return sum(diagonal(o.view.view(), offset, ax1, ax2), -1);
}

}  // namespace fusor
