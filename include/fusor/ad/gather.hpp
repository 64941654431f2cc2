#pragma once
// Gathers of variables: take (integer indices along an axis, or into the flattened variable) and
// mask_select (boolean indexing). Each is one node made by the array function; the adjoint of a
// gather is a scatter-add (np.add.at) of the output's adjoint into the positions read, so an index
// repeated k times receives k contributions. The checked indices (or the mask) are kept by the tape.
#include <cstdint>
#include <type_traits>

#include "../core/indexing.hpp"
#include "ops.hpp"
#include "views.hpp"

namespace fusor::ad {

namespace detail {

/// adjoint(o) += scatter(g) where `scatter(dst)` writes g's contributions into a zeroed
/// contiguous buffer of o's shape: into the adjoint itself when o is the whole variable and the
/// scatter adds (or the adjoint is still unwritten, so that it can be zeroed first).
template <class T, class B, class Scatter>
void scatter_into(tape& t, const operand<T, B>& o, bool adds, Scatter&& scatter) {
  if (!o.grad) return;
  auto& s = t.slot_at(o.id);
  const bool whole = o.value.data == static_cast<const T*>(s.value) && o.shape() == s.shape &&
                     o.value.strides == contiguous_strides(s.shape);
  if (whole && (adds || !s.adjoint_written)) {
    T* adj = t.adjoint_buffer<T, B>(o.id);
    if (!s.adjoint_written) {
      fusor::detail::assign_expr(leaf<T, B>{adj, s.shape, contiguous_strides(s.shape)}, scalar_expr<T>{T{}}, false);
      s.adjoint_written = true;
    }
    scatter(adj);
    return;
  }
  array<T, B> tmp = zeros<T, B>(o.shape());
  scatter(tmp.data());
  accumulate_into(t, o, tmp.as_leaf(), o.shape());
}

template <class T, class B>
struct take_back {
  operand<T, B> x;
  const array<std::int64_t, B>* idx;
  int axis;
  void operator()(tape& t, const leaf<T, B>& g) const {
    index_t outer, inner;
    fusor::detail::split_around(x.shape(), axis, outer, inner);
    const index_t n = x.shape()[axis], m = idx->size();
    scatter_into(t, x, true, [&](T* dst) { algorithms<B>::scatter(dst, outer, n, inner, idx->data(), m, g.data, true); });
  }
};

template <class T, class B>
struct mask_back {
  operand<T, B> x;
  const array<bool, B>* mask;
  void operator()(tape& t, const leaf<T, B>& g) const {
    scatter_into(t, x, false, [&](T* dst) { algorithms<B>::expand(dst, mask->data(), x.value.shape.numel(), g.data); });
  }
};
}  // namespace detail

/// np.take of a variable: the elements at integer `indices` along `axis` (negative indices count
/// from the end). One node; the adjoint scatter-adds the output's adjoint back.
template <class X, expression I>
  requires detail::holds_vars_v<X>
auto take(const X& x, const I& indices, int axis) {
  using T = value_t<node_t<X>>;
  using B = backend_of_t<node_t<X>>;
  tape& t = *detail::common_tape("take", x);
  const auto o = detail::make_operand<T>(t, x);
  if (o.shape().size() == 0)
    throw index_error("fusor: take along an axis needs a variable of rank >= 1, got a 0-dimensional one");
  const int ax = normalize_axis(axis, o.shape().size());
  const auto* idx = t.keep(fusor::detail::checked_indices<B>(indices, o.shape()[ax], ax, o.shape()));
  array<T, B> result = fusor::take(o.view(), *idx, ax);
  auto [out, grad] = detail::kept_output(t, std::move(result), o.grad);
  if (grad) detail::record_op<T, B>(t, out.id(), detail::take_back<T, B>{o, idx, ax});
  return out;
}
/// np.take without an axis: indices into the flattened variable.
template <class X, expression I>
  requires detail::holds_vars_v<X>
auto take(const X& x, const I& indices) {
  return ad::take(ad::ravel(x), indices, 0);
}

/// x[mask] of a variable (boolean indexing): the selected elements in C order, 1-d. One node; the
/// adjoint goes back to the selected positions.
template <class X, expression M>
  requires detail::holds_vars_v<X>
auto mask_select(const X& x, const M& mask) {
  using T = value_t<node_t<X>>;
  using B = backend_of_t<node_t<X>>;
  tape& t = *detail::common_tape("mask_select", x);
  const auto o0 = detail::make_operand<T>(t, x);
  // the variable as contiguous elements (a view that is not is copied: one node)
  const auto o = o0.value.strides == contiguous_strides(o0.shape())
                     ? o0
                     : detail::make_operand<T>(t, detail::materialise(o0.as_var(t)));
  const auto* m = t.keep(array<bool, B>(fusor::detail::mask_of<B>(mask, o.shape()).view().copy()));
  array<T, B> result = fusor::mask_select(o.view(), *m);
  auto [out, grad] = detail::kept_output(t, std::move(result), o.grad);
  if (grad) detail::record_op<T, B>(t, out.id(), detail::mask_back<T, B>{o, m});
  return out;
}

}  // namespace fusor::ad
