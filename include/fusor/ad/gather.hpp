#pragma once
// Gathers of variables: take (integer indices along an axis, or into the flattened variable) and
// mask_select (boolean indexing). Each is one node made by the array function; the adjoint of a
// gather is a scatter-add (np.add.at) of the output's adjoint into the positions read, so an index
// repeated k times receives k contributions. The checked indices (or the mask) are kept by the tape.
// take replays under ad::compile (its index array is read again); mask_select does not.
#include <cstdint>
#include <type_traits>

#include "../core/indexing.hpp"
#include "ops.hpp"
#include "views.hpp"
#include "../core/ext.hpp"

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
      fusor::ext::assign_expr(leaf<T, B>{adj, s.shape, contiguous_strides(s.shape)}, scalar_expr<T>{T{}}, false);
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
    fusor::ext::split_around(x.shape(), axis, outer, inner);
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

namespace detail {
// out = x gathered along `axis` at the indices `source` holds (a capture's forward step, and the
// first computation too): the caller's index array is read again, checked and copied into the
// kept int64 buffer the backward pass reads, so a replay with new indices in the same array
// gathers those. `table` names a lookup table (an embedding), whose indices must lie in [0, n):
// no negative index counts from the end there.
template <class T, class B, class I>
struct take_step {
  operand<T, B> x;  // contiguous
  leaf<I, B> source;
  std::int64_t* idx;
  int axis;
  const char* table;
  std::uint32_t out;
  std::int32_t check;  // its flag in a replay (tape::add_check), or -1
};
// The indices' eager check (a replay whose flag was raised runs it: it throws).
template <class T, class B, class I>
void take_check(tape&, const void* p) {
  const auto& n = *static_cast<const take_step<T, B, I>*>(p);
  const array_view<I, B> source(n.source.data, n.source.shape, n.source.strides);
  const index_t len = n.x.shape()[n.axis];
  if (n.table != nullptr) fusor::ext::check_indices(n.table, "indices", "indices", source, len);
  (void)fusor::ext::checked_indices<B>(source, len, n.axis, n.x.shape());
}
template <class T, class B, class I>
void take_forward(tape& t, const void* p) {
  const auto& n = *static_cast<const take_step<T, B, I>*>(p);
  const extents& xs = n.x.shape();
  const index_t count = n.source.shape.numel(), len = xs[n.axis];
  array_view<std::int64_t, B> idx(n.idx, n.source.shape, contiguous_strides(n.source.shape));
  const array_view<I, B> source(n.source.data, n.source.shape, n.source.strides);
  if (t.deferring_checks() && n.check >= 0) {
    // a replay: the verdict into the step's flag, read after the replay; a bad index gathers
    // element 0 meanwhile (never memory outside x)
    const auto i = fusor::cast<std::int64_t>(source);
    const auto bad = (i < (n.table != nullptr ? std::int64_t(0) : std::int64_t(-len))) || (i >= std::int64_t(len));
    raise_flag_if<B>(t, n.check, bad);
    idx = where(bad, std::int64_t(0), where(i < std::int64_t(0), i + std::int64_t(len), i));
  } else {
    idx = source;
    if (n.table != nullptr) fusor::ext::check_indices(n.table, "indices", "indices", idx, len);
    fusor::ext::wrap_checked<B>(n.idx, count, len, n.axis, xs);
  }
  index_t outer, inner;
  fusor::ext::split_around(xs, n.axis, outer, inner);
  if (outer * inner * count > 0)
    algorithms<B>::gather(n.x.value.data, outer, len, inner, n.idx, count, value_leaf<T, B>(t, n.out).data);
}

template <class X, class I>
auto take_of(const X& x, const I& indices, int axis, const char* table) {
  using T = value_t<node_t<X>>;
  using B = backend_of_t<node_t<X>>;
  static_assert(integer<value_t<I>>,
                "fusor: index arrays must hold integers (use a bool array as a mask instead)");
  tape& t = *common_tape(table != nullptr ? table : "take", x);
  const auto o0 = make_operand<T>(t, x);
  if (o0.shape().size() == 0)
    throw index_error("fusor: take along an axis needs a variable of rank >= 1, got a 0-dimensional one");
  // the variable as contiguous elements (a view that is not is copied: one node)
  const auto o = o0.value.strides == contiguous_strides(o0.shape())
                     ? o0
                     : make_operand<T>(t, materialise(o0.as_var(t)));
  const int ax = normalize_axis(axis, o.shape().size());
  const extents ishape = expr_shape(fusor::ext::to_node(indices));
  auto* idx = t.keep(array<std::int64_t, B>(ishape));
  auto [out, grad] = new_output<T, B>(t, fusor::ext::take_shape(o.shape(), ax, ishape), o.grad);
  if constexpr (fusor::ext::is_array_v<I> || fusor::ext::is_view_v<I>) {
    // an array is read where it lies, in a replay too
    if (t.capturing()) t.watch(indices.as_leaf(), false);
    take_step<T, B, value_t<I>> step{o, indices.as_leaf(), idx->data(), ax, table, out.id(), -1};
    take_forward<T, B, value_t<I>>(t, &step);
    if (t.capturing() && ishape.numel() > 0) step.check = std::int32_t(t.add_check(&take_check<T, B, value_t<I>>, step));
    t.record_forward(&take_forward<T, B, value_t<I>>, step, out.id());
  } else {
    // an expression is evaluated once here: its values could not be read again
    t.not_replayable("take of indices given as an expression (pass an integer array: a replay reads its values again)");
    const array<value_t<I>, B> values(indices);
    const take_step<T, B, value_t<I>> step{o, values.as_leaf(), idx->data(), ax, table, out.id(), -1};
    take_forward<T, B, value_t<I>>(t, &step);
  }
  if (grad) record_op<T, B>(t, out.id(), take_back<T, B>{o, idx, ax});
  return out;
}
}  // namespace detail

/// np.take of a variable: the elements at integer `indices` along `axis` (negative indices count
/// from the end). One node; the adjoint scatter-adds the output's adjoint back. Under ad::compile
/// an index array is read again by every replay.
template <class X, expression I>
  requires detail::holds_vars_v<X>
auto take(const X& x, const I& indices, int axis) {
  return detail::take_of(x, indices, axis, nullptr);
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
  const auto* m = t.keep(array<bool, B>(fusor::ext::mask_of<B>(mask, o.shape()).view().copy()));
  array<T, B> result = fusor::mask_select(o.view(), *m);
  auto [out, grad] = detail::kept_output(t, std::move(result), o.grad);
  if (grad) detail::record_op<T, B>(t, out.id(), detail::mask_back<T, B>{o, m});
  return out;
}

}  // namespace fusor::ad
