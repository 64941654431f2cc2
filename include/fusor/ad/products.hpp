#pragma once
// Matrix products of variables: matmul (NumPy's rules: 1-d operands promoted, batch axes
// broadcast), dot and tensordot. matmul is one node; its adjoints are GEMMs through the backend's
// BLAS (cuBLAS on cuda): dA = G·Bᵀ and dB = Aᵀ·G, summed over broadcast batch axes. The first
// adjoint of a whole variable is written by the GEMM itself; later ones are added. dot and
// tensordot are compositions of views, copies and matmul, so their adjoints follow.
#include <cstdint>
#include <string>
#include <type_traits>

#include "../core/ext.hpp"
#include "../linalg/ext.hpp"
#include "../linalg/matmul.hpp"
#include "../linalg/products.hpp"
#include "ops.hpp"
#include "views.hpp"

namespace fusor::ad {

namespace detail {

template <class T, class B>
using strided_t = fusor::ext::linalg::strided<T, B>;

/// v with its last two axes exchanged (a transposed stack of matrices; no copy).
template <class T, class B>
strided_t<T, B> swap_last(const strided_t<T, B>& v) {
  extents s = v.shape(), st = v.strides();
  const int n = s.size();
  std::swap(s[n - 1], s[n - 2]);
  std::swap(st[n - 1], st[n - 2]);
  return {v.data(), s, st};
}

/// The tape scratch buffer a matmul adjoint's product passes through when it adds to an adjoint
/// already written.
inline constexpr std::size_t product_scratch = 2;

template <class T, class B>
struct matmul_back {
  operand<T, B> a, b;
  extents result;  // NumPy's result shape (the output slot may be seen in another, by tensordot)

  void operator()(tape& t, const leaf<T, B>& g) const {
    namespace la = fusor::ext::linalg;
    const auto p = la::plan_matmul(a.shape(), b.shape(), "matmul");
    const bool a_vec = a.shape().size() == 1, b_vec = b.shape().size() == 1;
    const strided_t<T, B> gf = la::full_view(strided_t<T, B>(g.data, result), p, a_vec, b_vec);
    const strided_t<T, B> ap = la::promote_view(strided_t<T, B>(a.view()), true);
    const strided_t<T, B> bp = la::promote_view(strided_t<T, B>(b.view()), false);
    if (a.grad) product_into(t, a, gf, swap_last(bp), p.a, false);
    if (b.grad) product_into(t, b, swap_last(ap), gf, p.b, b_vec);
  }
  // adjoint(o) += x @ y, where x @ y has batch + the promoted operand's matrix shape
  static void product_into(tape& t, const operand<T, B>& o, strided_t<T, B> x, strided_t<T, B> y,
                           const extents& promoted, bool column) {
    namespace la = fusor::ext::linalg;
    extents full = broadcast_batch(x.shape(), y.shape());
    full.push_back(x.shape()[x.ndim() - 2]);
    full.push_back(y.shape()[y.ndim() - 1]);
    // a matrix applied to a whole stack (a layer's weight to every sample): its adjoint sums the
    // products over the stack, which is one GEMM with the stack folded into the summed axis
    // (Σ_b x_b y_b = [x_0 … x_n] [y_0; …; y_n]), not one product per sample summed after
    if (promoted.size() == 2 && full.size() > 2 && fold_stack(x, y)) full = promoted;
    auto& s = t.slot_at(o.id);
    T* adj = t.adjoint_buffer<T, B>(o.id);
    // the GEMM writes the adjoint itself when this is its first write and covers the whole buffer,
    // contiguous or transposed (a linear layer's weight seen as weightᵀ)
    const bool at_base = o.value.data == static_cast<const T*>(s.value) && o.shape().numel() == s.shape.numel();
    const bool whole = at_base && ((o.shape() == s.shape && o.value.strides == contiguous_strides(s.shape)) ||
                                   (o.shape().size() == 2 && s.shape.size() == 2 && o.shape()[0] == s.shape[1] &&
                                    o.value.strides == extents{1, s.shape[1]}));
    if (!s.adjoint_written && whole && full == promoted) {
      const extents strides = o.shape().size() == 2 ? o.value.strides : contiguous_strides(promoted);
      fusor::ext::linalg::matmul_into(x, y, strided_t<T, B>(adj, promoted, strides));
      s.adjoint_written = true;
      return;
    }
    // the product in a scratch buffer the tape keeps (reduce_to, which accumulate_into may call,
    // has 0 and 1): a parameter used twice costs a replay no allocation
    T* prod = static_cast<T*>(t.scratch<B>(product_scratch, std::size_t(full.numel()) * sizeof(T)));
    fusor::ext::linalg::matmul_into(x, y, strided_t<T, B>(prod, full));
    extents shape = full;
    if (column) shape = fusor::ext::drop_axis(full, full.size() - 1);  // (..., K, 1) -> (..., K)
    accumulate_into(t, o, leaf<T, B>{prod, shape, contiguous_strides(shape)}, shape);
  }
  /// x (batch..., M, K) and y (batch..., K, N) of one batch shape as x' (M, batch·K) and
  /// y' (batch·K, N) when both are views of their elements without a copy; false otherwise.
  static bool fold_stack(strided_t<T, B>& x, strided_t<T, B>& y) {
    const int n = x.ndim();
    if (y.ndim() != n) return false;
    extents xs, xst, ys = y.shape(), yst = y.strides();
    index_t stack = 1;
    for (int d = 0; d + 2 < n; ++d) {
      if (x.shape()[d] != y.shape()[d]) return false;  // a broadcast stack axis
      stack *= x.shape()[d];
    }
    // x with its row axis first: (M, batch..., K), whose last n - 1 axes merge into one
    xs.push_back(x.shape()[n - 2]);
    xst.push_back(x.strides()[n - 2]);
    for (int d = 0; d < n; ++d)
      if (d != n - 2) {
        xs.push_back(x.shape()[d]);
        xst.push_back(x.strides()[d]);
      }
    const index_t k = x.shape()[n - 1], rows = x.shape()[n - 2], cols = y.shape()[n - 1];
    extents xf, yf;
    if (!fusor::ext::reshape_strides(xs, xst, extents{rows, stack * k}, xf)) return false;
    if (!fusor::ext::reshape_strides(ys, yst, extents{stack * k, cols}, yf)) return false;
    x = strided_t<T, B>(x.data(), extents{rows, stack * k}, xf);
    y = strided_t<T, B>(y.data(), extents{stack * k, cols}, yf);
    return true;
  }
  static extents broadcast_batch(const extents& x, const extents& y) {
    extents bx, by;
    for (int d = 0; d + 2 < x.size(); ++d) bx.push_back(x[d]);
    for (int d = 0; d + 2 < y.size(); ++d) by.push_back(y[d]);
    return broadcast_shapes(bx, by);
  }
};

// out = a @ b (a capture's forward step; matmul_op computes through it)
template <class T, class B>
struct matmul_step {
  operand<T, B> a, b;
  std::uint32_t out;
};
template <class T, class B>
void matmul_forward(tape& t, const void* payload) {
  namespace la = fusor::ext::linalg;
  const auto& n = *static_cast<const matmul_step<T, B>*>(payload);
  const auto p = la::plan_matmul(n.a.shape(), n.b.shape(), "matmul");
  const leaf<T, B> o = value_leaf<T, B>(t, n.out);
  fusor::ext::linalg::matmul_into(la::promote_view(strided_t<T, B>(n.a.view()), true),
                    la::promote_view(strided_t<T, B>(n.b.view()), false),
                    la::full_view(strided_t<T, B>(o.data, p.result, contiguous_strides(p.result)), p,
                                  n.a.shape().size() == 1, n.b.shape().size() == 1));
}

template <class T, class B>
var<T, B> matmul_op(tape& t, const operand<T, B>& a, const operand<T, B>& b) {
  namespace la = fusor::ext::linalg;
  la::require_blas<B>();
  const auto p = la::plan_matmul(a.shape(), b.shape(), "matmul");
  auto [out, grad] = new_output<T, B>(t, p.result, a.grad || b.grad);
  const matmul_step<T, B> step{a, b, out.id()};
  matmul_forward<T, B>(t, &step);
  t.record_forward(&matmul_forward<T, B>, step, out.id());
  if (grad) record_op<T, B>(t, out.id(), matmul_back<T, B>{a, b, p.result});
  return out;
}

template <class A, class Bx>
using product_value_t = value_t<node_t<std::conditional_t<holds_vars_v<A>, A, Bx>>>;
}  // namespace detail

/// The matrix product (np.matmul, the @ operator) of variables, or of a variable and a constant:
/// one node, whose adjoints are GEMMs.
template <expression A, expression Bx>
  requires(detail::holds_vars_v<A> || detail::holds_vars_v<Bx>)
auto matmul(const A& a, const Bx& b) {
  using T = detail::product_value_t<A, Bx>;
  static_assert(differentiable_v<T> && !is_complex_v<T>,
                "fusor: matmul of variables needs float or double values (or their dual numbers)");
  tape& t = *detail::common_tape("matmul", a, b);
  return detail::matmul_op(t, detail::make_operand<T>(t, a), detail::make_operand<T>(t, b));
}

/// np.tensordot of variables: a's axes `axes_a` summed against b's `axes_b`; the result has a's
/// other axes, then b's. Permuted views, a copy only where a layout cannot be seen as a matrix,
/// and one matmul node.
template <expression A, expression Bx>
  requires(detail::holds_vars_v<A> || detail::holds_vars_v<Bx>)
auto tensordot(const A& a, const Bx& b, const extents& axes_a, const extents& axes_b) {
  using T = detail::product_value_t<A, Bx>;
  static_assert(differentiable_v<T> && !is_complex_v<T>,
                "fusor: tensordot of variables needs float or double values (or their dual numbers)");
  namespace la = fusor::ext::linalg;
  tape& t = *detail::common_tape("tensordot", a, b);
  const auto oa = detail::make_operand<T>(t, a);
  const auto ob = detail::make_operand<T>(t, b);
  const extents sa = oa.shape(), sb = ob.shape();
  if (axes_a.size() != axes_b.size())
    throw value_error("fusor: tensordot: the axis lists " + to_string(axes_a) + " and " + to_string(axes_b) +
                      " have different lengths (expected pairs of axes, for shapes " + to_string(sa) + " and " +
                      to_string(sb) + ")");
  la::axis_list ca, cb;
  la::normalize_into(axes_a, sa.size(), ca, "tensordot", "first", sa);
  la::normalize_into(axes_b, sb.size(), cb, "tensordot", "second", sb);
  index_t k = 1, m = 1, n = 1;
  extents pa, pb, result;
  for (int d = 0; d < sa.size(); ++d)
    if (!ca.contains(d)) {
      pa.push_back(d);
      m *= sa[d];
      result.push_back(sa[d]);
    }
  for (int i = 0; i < ca.n; ++i) {
    if (sa[ca.v[i]] != sb[cb.v[i]])
      throw shape_error("fusor: tensordot: axis " + std::to_string(ca.v[i]) + " of shape " + to_string(sa) + " has size " +
                        std::to_string(sa[ca.v[i]]) + " but axis " + std::to_string(cb.v[i]) + " of shape " + to_string(sb) +
                        " has size " + std::to_string(sb[cb.v[i]]) + " (expected equal sizes)");
    pa.push_back(ca.v[i]);
    pb.push_back(cb.v[i]);
    k *= sa[ca.v[i]];
  }
  for (int d = 0; d < sb.size(); ++d)
    if (!cb.contains(d)) {
      pb.push_back(d);
      n *= sb[d];
      result.push_back(sb[d]);
    }
  // each operand as a matrix: a (M, K), b (K, N); a variable is viewed (copied when it must be)
  auto as_matrix = [&](const auto& o, const extents& perm, index_t rows, index_t cols) {
    using O = std::remove_cvref_t<decltype(o)>;
    if (o.grad) {
      const auto l = ad::reshape(ad::permute_dims(o.as_var(t), perm), extents{rows, cols});
      return O{l.value, l.id, l.generation, true};
    }
    const auto v = fusor::permute_dims(o.view(), perm);
    const extents shape{rows, cols};
    extents strides;
    if (fusor::ext::reshape_strides(v.shape(), v.strides(), shape, strides))
      return O{{const_cast<T*>(v.data()), shape, strides}, 0, 0, false};
    const std::uint32_t id = t.new_slot<T, backend_of_t<O>>(shape, false);  // a constant copied once
    const auto dst = detail::value_leaf<T, backend_of_t<O>>(t, id);
    fusor::ext::assign_expr(decltype(dst){dst.data, v.shape(), contiguous_strides(v.shape())}, v.as_leaf(), false);
    return O{dst, 0, 0, false};
  };
  auto out = detail::matmul_op(t, as_matrix(oa, pa, m, k), as_matrix(ob, pb, k, n));
  t.slot_at(out.id()).shape = result;  // the (M, N) product seen in the result's shape (contiguous)
  return out;
}
/// np.tensordot(a, b, n): a's last n axes against b's first n.
template <expression A, expression Bx>
  requires(detail::holds_vars_v<A> || detail::holds_vars_v<Bx>)
auto tensordot(const A& a, const Bx& b, int n = 2) {
  const auto [xa, xb] = fusor::ext::linalg::last_first_axes(expr_shape(fusor::ext::to_node(a)),
                                                            expr_shape(fusor::ext::to_node(b)), n);
  return ad::tensordot(a, b, xa, xb);
}

/// np.dot of variables: 1-d · 1-d is Σ a·b (one fused node), a 0-d operand multiplies, b of rank
/// 1 or 2 is matmul, and otherwise a's last axis is summed against b's second-to-last.
template <expression A, expression Bx>
  requires(detail::holds_vars_v<A> || detail::holds_vars_v<Bx>)
auto dot(const A& a, const Bx& b) {
  const extents sa = expr_shape(fusor::ext::to_node(a)), sb = expr_shape(fusor::ext::to_node(b));
  using T = detail::product_value_t<A, Bx>;
  using Bk = backend_of_t<node_t<std::conditional_t<detail::holds_vars_v<A>, A, Bx>>>;
  if (sa.size() == 0 || sb.size() == 0) return var<T, Bk>(eval(a * b));
  if (sa.size() == 1 && sb.size() == 1) {
    if (sa[0] != sb[0])
      throw shape_error("fusor: dot: shapes " + to_string(sa) + " and " + to_string(sb) +
                        " do not match: axis 0 of the first has size " + std::to_string(sa[0]) +
                        ", axis 0 of the second has size " + std::to_string(sb[0]) + " (expected equal sizes)");
    return var<T, Bk>(ad::sum(a * b));
  }
  if (sb.size() <= 2 || sa.size() == 1) return var<T, Bk>(ad::matmul(a, b));
  return var<T, Bk>(ad::tensordot(a, b, extents{index_t(sa.size() - 1)}, extents{index_t(sb.size() - 2)}));
}

// On arrays (no variable) the products are fusor's: one function written with ad::matmul then
// serves reverse mode (variables), forward mode (arrays of dual numbers: GEMMs on their planes,
// jvp, jacfwd, and the jacobian that picks forward mode) and plain evaluation.
/// fusor::matmul, for arrays and expressions without variables.
template <expression A, expression Bx>
  requires(!detail::holds_vars_v<A> && !detail::holds_vars_v<Bx>)
auto matmul(const A& a, const Bx& b) {
  return fusor::matmul(a, b);
}
/// fusor::tensordot, for arrays and expressions without variables.
template <expression A, expression Bx>
  requires(!detail::holds_vars_v<A> && !detail::holds_vars_v<Bx>)
auto tensordot(const A& a, const Bx& b, const extents& axes_a, const extents& axes_b) {
  return fusor::tensordot(a, b, axes_a, axes_b);
}
/// fusor::tensordot(a, b, n), for arrays and expressions without variables.
template <expression A, expression Bx>
  requires(!detail::holds_vars_v<A> && !detail::holds_vars_v<Bx>)
auto tensordot(const A& a, const Bx& b, int n = 2) {
  return fusor::tensordot(a, b, n);
}
/// fusor::dot, for arrays and expressions without variables.
template <expression A, expression Bx>
  requires(!detail::holds_vars_v<A> && !detail::holds_vars_v<Bx>)
auto dot(const A& a, const Bx& b) {
  return fusor::dot(a, b);
}

}  // namespace fusor::ad
