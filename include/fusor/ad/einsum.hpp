#pragma once
// einsum of variables (one or two operands, the patterns fusor::einsum takes): one node whose
// adjoints are einsums too. For operand a with indices ia, the other operand b (ib) and the output
// io, dL/da = einsum("io,ib->ia", g, b): the same batched GEMM as the forward pass. Two cases the
// pattern alone cannot say are handled by views of the adjoint, with no extra pass:
// - an index only a has and the output lacks (summed out of a): dL/da is the same along it, a
//   stride-0 view of the smaller adjoint;
// - an index repeated within a (a diagonal): the adjoint is added to that diagonal of a's adjoint
//   (a strided view), and is zero off it.
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "../linalg/einsum.hpp"
#include "../linalg/ext.hpp"
#include "ops.hpp"
#include "products.hpp"

namespace fusor::ad {

namespace detail {

/// The unique indices of `idx`, in order of first appearance.
inline std::string unique_indices(const std::string& idx) {
  std::string u;
  for (char c : idx)
    if (u.find(c) == std::string::npos) u += c;
  return u;
}

template <class T, class B, int Count>
struct einsum_back {
  fusor::ext::linalg::einsum_spec spec;  // parsed, with every index's size
  operand<T, B> x[Count];

  void operator()(tape& t, const leaf<T, B>& g) const {
    for (int k = 0; k < Count; ++k)
      if (x[k].grad) into(t, k, g);
  }

  // adjoint(x[k]) += einsum("out,other->kept", g, other), seen along x[k]'s own indices
  void into(tape& t, int k, const leaf<T, B>& g) const {
    const std::string& idx = spec.in[k];
    const std::string other = Count == 2 ? spec.in[1 - k] : std::string();
    const std::string own = unique_indices(idx);
    std::string kept;  // own indices the output or the other operand has (the others are summed in x[k] alone)
    for (char c : own)
      if (spec.out.find(c) != std::string::npos || other.find(c) != std::string::npos) kept += c;
    const array_view<T, B> gv{g.data, g.shape, g.strides};
    array<T, B> h;
    leaf<T, B> hl{};  // dL/dx[k] along `kept`: g itself when that is the output's order
    if constexpr (Count == 2) {
      h = fusor::einsum(spec.out + "," + other + "->" + kept, gv, x[1 - k].view());
      hl = h.as_leaf();
    } else if (kept == spec.out) {
      hl = g;
    } else {
      h = fusor::einsum(spec.out + "->" + kept, gv);
      hl = h.as_leaf();
    }
    // h along x[k]'s unique indices (stride 0 on the summed ones), and x[k] along the same
    // (a repeated index walks the diagonal: its strides add)
    extents shape, h_strides, x_strides;
    const extents& hs = hl.strides;
    const leaf<T, B>& xv = x[k].value;
    for (char c : own) {
      shape.push_back(spec.size[static_cast<unsigned char>(c)]);
      const auto p = kept.find(c);
      h_strides.push_back(p == std::string::npos ? 0 : hs[int(p)]);
      index_t st = 0;
      for (std::size_t d = 0; d < idx.size(); ++d)
        if (idx[d] == c) st += xv.strides[int(d)];
      x_strides.push_back(st);
    }
    var_leaf<T, B> target = x[k].as_var(t);
    target.value = leaf<T, B>{xv.data, shape, x_strides};
    accumulate(t, target, leaf<T, B>{hl.data, shape, h_strides}, shape);
  }
};

template <int Count, class T, class B>
var<T, B> einsum_op(tape& t, std::string_view pattern, const operand<T, B>* x) {
  einsum_back<T, B, Count> back{fusor::ext::linalg::parse_einsum(pattern, Count), {}};
  for (int k = 0; k < Count; ++k) back.x[k] = x[k];
  array<T, B> r = [&] {
    if constexpr (Count == 2) return fusor::einsum(pattern, x[0].view(), x[1].view());
    else return fusor::einsum(pattern, x[0].view());
  }();
  // record every index's size (the same checks the forward pass made)
  for (int k = 0; k < Count; ++k) {
    std::string labels;
    fusor::ext::linalg::einsum_operand(back.spec, k, fusor::ext::linalg::strided<T, B>(x[k].view()), labels);
  }
  bool any = false;
  for (int k = 0; k < Count; ++k) any = any || x[k].grad;
  auto [out, grad] = kept_output(t, std::move(r), any);
  if (grad) record_op<T, B>(t, out.id(), std::move(back));
  return out;
}

}  // namespace detail

/// np.einsum of one variable: transposes, diagonals, traces, sums (see fusor::einsum).
template <expression A>
  requires detail::holds_vars_v<A>
auto einsum(std::string_view pattern, const A& a) {
  using T = value_t<node_t<A>>;
  static_assert(std::is_floating_point_v<detail::lane_t<T>> || fusor::ext::small_float_v<T>, "fusor: einsum of variables needs float, double, float16 or bfloat16 values or their dual numbers");
  tape& t = *detail::common_tape("einsum", a);
  const detail::operand<T, backend_of_t<node_t<A>>> x[1] = {detail::make_operand<T>(t, a)};
  return detail::einsum_op<1>(t, pattern, x);
}

/// np.einsum of two operands, at least one of them a variable: one node; its adjoints are einsums
/// (batched GEMMs through BLAS or cuBLAS).
template <expression A, expression Bx>
  requires(detail::holds_vars_v<A> || detail::holds_vars_v<Bx>)
auto einsum(std::string_view pattern, const A& a, const Bx& b) {
  using T = detail::product_value_t<A, Bx>;
  static_assert(std::is_floating_point_v<detail::lane_t<T>> || fusor::ext::small_float_v<T>, "fusor: einsum of variables needs float, double, float16 or bfloat16 values or their dual numbers");
  tape& t = *detail::common_tape("einsum", a, b);
  using Bk = backend_of_t<node_t<std::conditional_t<detail::holds_vars_v<A>, A, Bx>>>;
  const detail::operand<T, Bk> x[2] = {detail::make_operand<T>(t, a), detail::make_operand<T>(t, b)};
  return detail::einsum_op<2>(t, pattern, x);
}

/// fusor::einsum, for arrays and expressions without variables (one function then serves reverse
/// mode, forward mode on arrays of dual numbers, and plain evaluation).
template <expression A>
  requires(!detail::holds_vars_v<A>)
auto einsum(std::string_view pattern, const A& a) {
  return fusor::einsum(pattern, a);
}
/// fusor::einsum of two operands without variables.
template <expression A, expression Bx>
  requires(!detail::holds_vars_v<A> && !detail::holds_vars_v<Bx>)
auto einsum(std::string_view pattern, const A& a, const Bx& b) {
  return fusor::einsum(pattern, a, b);
}

}  // namespace fusor::ad
