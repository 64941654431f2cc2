#pragma once
// Recording and backward: materialising an expression of variables (one tape node), reductions
// of such expressions (one node each), parameters, and the backward pass that runs each node's
// adjoint as fused expressions accumulated into its inputs' adjoint buffers.
#include <array>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "../core/array.hpp"
#include "../core/assign.hpp"
#include "../core/create.hpp"
#include "../core/reduce.hpp"
#include "../core/reduce_ops.hpp"
#include "adjoint.hpp"
#include "tape.hpp"
#include "var.hpp"
#include "../core/ext.hpp"

namespace fusor::ad {

namespace detail {

template <class E>
inline constexpr bool has_vars_v = var_count<node_t<E>> > 0;

// The tape every variable of tree e belongs to; misuse (none, a reset tape, two tapes) throws.
template <class N>
tape& tape_of(const N& e, const char* what) {
  tape* t = nullptr;
  for_each_var(e, [&](const auto& v) {
    if (v.owner == nullptr) throw tape_error(std::string("fusor: ") + what + " of a variable that was never made");
    detail::check_recording(v.identity, v.generation, what);
    if (t != nullptr && t != v.owner)
      throw tape_error(std::string("fusor: ") + what +
                       " of variables from two different tapes (expected every variable of one expression on one "
                       "tape; use ad::stop_gradient on the other tape's values to use them as constants)");
    t = v.owner;
  });
  if (t == nullptr) throw tape_error(std::string("fusor: ") + what + " needs at least one variable");
  return *t;
}
template <class N>
bool any_requires_grad(const tape& t, const N& e) {
  bool any = false;
  for_each_var(e, [&](const auto& v) { any = any || t.slot_at(v.id).requires_grad; });
  return any;
}

/// Records a node whose payload keeps expression tree `e`: the constant arrays the tree reads are
/// watched (the backward pass reads them again; a write in between is a tape_error there).
template <class P, class E>
void record_tree(tape& t, void (*backward)(tape&, const void*), const P& payload, const E& e) {
  for_each_constant(e, [&](const auto& l) { t.watch(l, false); });
  t.record(backward, payload);
}
/// While ad::compile captures: registers the forward step that computes slot `out` from tree e,
/// and watches e's constant arrays (replays read them) unless a backward node already watches them.
template <class P, class E>
void capture_tree(tape& t, void (*forward)(tape&, const void*), const P& payload, std::uint32_t out, const E& e,
                  bool watched) {
  if (!t.capturing()) return;
  if (!watched) for_each_constant(e, [&](const auto& l) { t.watch(l, false); });
  if (draws_random(e))
    t.not_replayable("a lazy random draw (a replay would draw the recorded numbers again: draw into an array "
                     "argument before each call instead)");
  t.record_forward(forward, payload, out);
}

template <class T, class B>
leaf<T, B> value_leaf(tape& t, std::uint32_t id) {
  const auto& s = t.slot_at(id);
  return {static_cast<T*>(s.value), s.shape, contiguous_strides(s.shape)};
}
template <class T, class B>
leaf<T, B> adjoint_leaf(tape& t, std::uint32_t id) {
  const auto& s = t.slot_at(id);
  return {t.adjoint_buffer<T, B>(id), s.shape, contiguous_strides(s.shape)};
}

/// A leaf that reads the one element at p at every position of `shape` (stride 0 on every axis):
/// a 0-d value (an adjoint, a constant) broadcast where it lies, with nothing read to the host.
template <class T, class B>
leaf<T, B> spread_scalar(T* p, const extents& shape) {
  extents strides = shape;
  for (int k = 0; k < strides.size(); ++k) strides[k] = 0;
  return {p, shape, strides};
}

/// A replay's deferred check (tape::add_check): flag `check` becomes 1 where any element of the
/// boolean expression `bad` is true, else 0, on the device (the replay reads the flags after it).
template <class B, class E>
void raise_flag_if(tape& t, std::int32_t check, const E& bad) {
  executor<B>::template reduce_into<fusor::ext::max_op>(t.check_flag(std::uint32_t(check)),
                                                        where(bad, std::int64_t(1), std::int64_t(0)),
                                                        fusor::ext::finish_as<std::int64_t>{});
}

/// The additive identity of T: -0, since -0 + x is x bit for bit (+0 + -0 would be +0).
template <class T>
T additive_identity() {
  if constexpr (std::is_floating_point_v<T>) return -T(0);
  else if constexpr (is_complex_v<T>) return T(-real_t<T>(0), -real_t<T>(0));
  else return T{};
}
template <class T>
inline constexpr char identity_key = 0;

/// additive_identity<T>() seen as an array of `shape`: one element kept by the tape, with strides
/// 0. A first write to an adjoint adds its contribution to this leaf and later writes add to the
/// adjoint itself: the same statement type either way, so each adjoint expression compiles to one
/// kernel. The loops read a zero-stride operand as a broadcast (the cpu's packet loop and the
/// cuda vector kernel alike), so the first write reads no more memory than an assignment.
template <class T, class B>
leaf<T, B> identity_leaf(tape& t, const extents& shape) {
  const T id = additive_identity<T>();
  T* p = static_cast<T*>(t.constant<B>(&identity_key<T>, sizeof(T), [id](void* d, std::size_t) {
    backend_memory<B>::copy_from_host(static_cast<T*>(d), &id, 1);
  }));
  return spread_scalar<T, B>(p, shape);
}

/// Sums x (of shape `out`) down to `target` (which broadcasts to `out`): the adjoint of a
/// broadcast. One fused pass writes x, then one pass per run of summed axes (merged by a reshape)
/// reads the partial sums of the pass before, all
/// in the tape's two scratch buffers (a second backward pass of the same shapes allocates nothing).
/// The result lives until the next reduce_to on the same tape.
template <class B, class X>
leaf<value_t<X>, B> reduce_to(tape& t, const X& x, const extents& target, const extents& out) {
  using V = value_t<X>;
  const int lead = out.size() - target.size();
  // two scratch buffers in alternation: each pass reads one and writes the other, and the
  // result is consumed (accumulate) before the next reduce_to
  std::size_t next = 0;
  auto buffer = [&](const extents& s) {
    void* p = t.scratch<B>(next, std::size_t(s.numel()) * sizeof(V));
    next ^= 1;
    return leaf<V, B>{static_cast<V*>(p), s, contiguous_strides(s)};
  };
  leaf<V, B> r{};
  if constexpr (std::is_same_v<X, leaf<V, B>>) {
    if (x.shape == out && x.strides == contiguous_strides(out)) r = x;  // summed where it lies
  }
  if (r.data == nullptr) {
    r = buffer(out);  // (x may be a lone scalar: the adjoint of a + b for a broadcast b)
    // written as accumulate's statement (identity + x), which the same x then shares
    fusor::ext::assign_expr(r, identity_leaf<V, B>(t, out) + x, false);
  }
  // sums r along axis k (dropped) into the other buffer
  auto sum_axis = [&](int k) {
    const extents to = fusor::ext::drop_axis(r.shape, k);
    const leaf<V, B> dst = buffer(to);
    if (r.shape[k] == 0) fusor::ext::assign_expr(dst, scalar_expr<V>{V{}}, false);
    else executor<B>::template reduce_axis<fusor::ext::sum_op>(dst, r, k);
    r = dst;
  };
  // r is contiguous, so adjacent axes of one kind (summed, or kept) merge into one by a reshape, and
  // unit axes drop: an NCHW adjoint summed to per-channel (1, C, 1, 1) is (N, C, H·W), two passes
  // over long rows instead of three over short ones
  extents merged;
  bool summed[max_rank] = {};  // per merged axis (no allocation: this runs in every backward pass)
  int groups = 0;
  for (int k = 0; k < out.size(); ++k) {
    if (out[k] == 1) continue;
    const bool sum = k < lead || target[k - lead] == 1;
    if (groups > 0 && summed[groups - 1] == sum) merged[merged.size() - 1] *= out[k];
    else {
      merged.push_back(out[k]);
      summed[groups++] = sum;
    }
  }
  r = leaf<V, B>{r.data, merged, contiguous_strides(merged)};
  // the outermost group first when it is summed (whole rows added: the pass that reads the most),
  // then the rest from the innermost, so that dropping an axis never moves one still to be summed
  const int first = groups > 0 && summed[0] ? 1 : 0;
  if (first == 1) sum_axis(0);
  for (int k = groups - 1; k >= first; --k)
    if (summed[k]) sum_axis(k - first);
  return leaf<V, B>{r.data, target, contiguous_strides(target)};
}

/// When `dst` is a box of the contiguous buffer `whole` (a slice with unit steps, of the same
/// rank), zeroes the rest of `whole` (at most two slabs per axis) and returns true: the box's
/// first write can then assign, with no zero-fill pass over the whole buffer and no re-read.
template <class T, class B>
bool zero_outside_box(const leaf<T, B>& whole, const leaf<T, B>& dst) {
  const int r = whole.shape.size();
  if (whole.shape.numel() == 0) return true;  // nothing to write
  if (dst.shape.size() != r || dst.data < whole.data) return false;
  index_t off = dst.data - whole.data, lo[max_rank] = {}, hi[max_rank] = {};
  for (int k = 0; k < r; ++k) {
    if (dst.shape[k] > 1 && dst.strides[k] != whole.strides[k]) return false;
    lo[k] = off / whole.strides[k];
    off -= lo[k] * whole.strides[k];
    hi[k] = lo[k] + dst.shape[k];
    if (hi[k] > whole.shape[k]) return false;
  }
  if (off != 0) return false;
  for (int k = 0; k < r; ++k) {  // the slabs along axis k: axes before k inside the box, after k whole
    leaf<T, B> slab = whole;
    for (int j = 0; j < k; ++j) {
      slab.data += lo[j] * whole.strides[j];
      slab.shape[j] = hi[j] - lo[j];
    }
    T* const start = slab.data;
    if (lo[k] > 0) {
      slab.shape[k] = lo[k];
      fusor::ext::assign_expr(slab, scalar_expr<T>{T{}}, false);
    }
    if (hi[k] < whole.shape[k]) {
      slab.data = start + hi[k] * whole.strides[k];
      slab.shape[k] = whole.shape[k] - hi[k];
      fusor::ext::assign_expr(slab, scalar_expr<T>{T{}}, false);
    }
  }
  return true;
}

/// adjoint(v) += total, where total has the node's shape `out` and v is a view of a variable.
/// Every write is one statement, base + total: the first takes the identity as its base (to the
/// whole buffer, or to a box of it with the rest zeroed; any other partial first write, a strided
/// or flipped view, zero-fills first and adds), later ones the adjoint itself. One statement type
/// per adjoint expression, not one to assign and another to add: the autodiff layer's compile
/// time is mostly these kernels.
template <class T, class B, class X>
void accumulate(tape& t, const var_leaf<T, B>& v, const X& total, const extents& out) {
  auto& s = t.slot_at(v.id);
  T* adj = t.adjoint_buffer<T, B>(v.id);
  const T* base = static_cast<const T*>(s.value);
  leaf<T, B> dst{adj + (v.value.data - base), v.value.shape, v.value.strides};
  for (int k = 0; k < dst.shape.size(); ++k)
    if (dst.strides[k] == 0) dst.shape[k] = 1;
  const leaf<T, B> whole{adj, s.shape, contiguous_strides(s.shape)};
  // the whole buffer, in the slot's shape or another one (a reshape)
  const bool full = dst.data == adj && dst.shape.numel() == s.shape.numel() &&
                    (dst.strides == contiguous_strides(dst.shape) || (dst.shape == s.shape && dst.strides == whole.strides));
  auto add = [&](const auto& contribution) {
    leaf<T, B> base = dst;
    if (!s.adjoint_written) {
      s.adjoint_written = true;
      if (full || zero_outside_box(whole, dst)) base = identity_leaf<T, B>(t, dst.shape);
      else fusor::ext::assign_expr(whole, scalar_expr<T>{T{}}, false);
    }
    fusor::ext::assign_expr(dst, base + contribution, false);
  };
  // a broadcast view (stride 0 along an axis of extent > 1, from broadcast_to) reads one element
  // many times: that element receives the sum over the axis
  extents target = v.value.shape;
  bool repeated = false;
  for (int k = 0; k < target.size(); ++k)
    if (v.value.strides[k] == 0 && target[k] > 1) {
      target[k] = 1;
      repeated = true;
    }
  if (!repeated && v.value.shape == out) {
    add(total);
  } else {
    const auto r = reduce_to<B>(t, total, target, out);
    add(r);
  }
}

/// adjoint.hpp's linear paths of tree E where propagate uses them (its dual-form trees), else none.
template <class E, bool Wanted>
constexpr linear_paths<var_count<E>> linear_paths_when() {
  if constexpr (Wanted) return linear_paths_of<E>();
  else return {};
}

/// Runs the adjoint of tree e seeded with `seed` (an expression of e's shape `out`) into the
/// adjoints of e's variables: one fused pass per distinct variable view.
template <class E, class S>
void propagate(tape& t, const E& e, const S& seed, const extents& out) {
  constexpr int n = var_count<E>;
  if constexpr (n > 0) {
    std::array<const void*, n> data{};
    std::array<const extents*, n> shapes{}, strides{};
    std::array<std::uint32_t, n> ids{};
    std::array<bool, n> live{};
    int k = 0;
    for_each_var(e, [&](const auto& v) {
      data[k] = v.value.data;
      shapes[k] = &v.value.shape;
      strides[k] = &v.value.strides;
      ids[k] = v.id;
      live[k] = t.slot_at(v.id).requires_grad;
      ++k;
    });
    // positions reading the same elements of the same variable (one view) share one pass
    auto same_view = [&](int a, int b) {
      return ids[a] == ids[b] && data[a] == data[b] && *shapes[a] == *shapes[b] && *strides[a] == *strides[b];
    };
    std::array<int, n> group{};
    for (int p = 0; p < n; ++p) {
      group[p] = p;
      for (int q = 0; q < p; ++q)
        if (live[q] && same_view(p, q)) {
          group[p] = group[q];
          break;
        }
    }
    bool single = true;
    for (int p = 0; p < n; ++p) single = single && live[p] && group[p] == 0;
    using seed_value = value_t<node_t<S>>;
    constexpr bool dual_form = dual_capable<E>::value && std::is_floating_point_v<value_t<E>>;
    // the variable views (groups) whose adjoint is read from their partner group's (adjoint.hpp's
    // linear paths), after it: every position of the one is paired with a position of the other
    // in an a ± b (GELU(x·w + b) reads x·w + b twice: two pairs)
    std::array<int, n> partner_group{};
    partner_group.fill(-1);
    // (evaluated once per tree type: the walk is compile-time work in every instantiation)
    constexpr linear_paths<n> paths = linear_paths_when<E, dual_form>();
    std::array<int, n> members{};  // live positions per group (dual-form trees)
    if constexpr (dual_form) {
      std::array<int, n> uses{};
      for (int p = 0; p < n; ++p) {
        if (live[p]) ++members[group[p]];
        for (int q = 0; q < n; ++q) uses[p] += ids[q] == ids[p];
      }
      for (int p = 0; p < n; ++p) {
        const int first = paths.partner[p];
        if (first < 0 || !live[p] || group[p] != p || !live[first]) continue;
        const int q = group[first];
        bool paired = ids[p] != ids[q] && uses[q] == members[q] && partner_group[q] != p;
        for (int r = 0; r < n && paired; ++r) {
          const int rp = paths.partner[r];
          if (live[r] && group[r] == p)
            paired = rp >= 0 && group[rp] == q && paths.partner_sign[r] == paths.partner_sign[p];
          else if (live[r] && group[r] == q)
            paired = rp >= 0 && group[rp] == p;
        }
        // a first write of the whole buffer leaves exactly the contribution there
        const auto& s = t.slot_at(ids[q]);
        if (paired && !s.adjoint_written && *shapes[q] == out && out == s.shape && data[q] == s.value &&
            *strides[q] == contiguous_strides(out))
          partner_group[p] = q;
      }
    }
    int pos = 0;
    for_each_var(e, [&](const auto& v) {
      const int p = pos++;
      if (!live[p] || group[p] != p || partner_group[p] >= 0) return;
      using positions = std::make_integer_sequence<int, n>;
      if constexpr (dual_form) {
        using V = value_t<std::remove_cvref_t<decltype(v)>>;
        if constexpr (std::is_same_v<V, seed_value>) {
          if (members[p] == 1 && paths.sign[p] == 1) return accumulate(t, v, seed, out);
          if (members[p] == 1 && paths.sign[p] == -1) return accumulate(t, v, -seed, out);
        }
        std::array<bool, n> on{};
        for (int q = 0; q < n; ++q) on[q] = live[q] && group[q] == p;
        accumulate(t, v, dual_adjoint(e, seed, on.data()), out);
      } else if (single) {
        auto total = adjoint_sum(e, seed, positions{});
        if constexpr (!is_none_v<decltype(total)>) accumulate(t, v, total, out);
      } else {
        std::array<bool, n> on{};
        for (int q = 0; q < n; ++q) on[q] = live[q] && group[q] == p;
        auto total = adjoint_gated_sum<value_t<std::remove_cvref_t<decltype(v)>>>(e, seed, on.data(), positions{});
        if constexpr (!is_none_v<decltype(total)>) accumulate(t, v, total, out);
      }
    });
    if constexpr (dual_form) {
      pos = 0;
      for_each_var(e, [&](const auto& v) {
        const int p = pos++;
        const int q = partner_group[p];
        if (q < 0) return;
        using V = value_t<std::remove_cvref_t<decltype(v)>>;
        const leaf<V, backend_of_t<E>> partner{t.adjoint_buffer<V, backend_of_t<E>>(ids[q]), out, contiguous_strides(out)};
        if (paths.partner_sign[p] == 1) accumulate(t, v, partner, out);
        else accumulate(t, v, -partner, out);
      });
    }
  }
}

// ---- nodes ------------------------------------------------------------------------------------------
template <class E>
struct map_node {  // out = e
  E tree;
  std::uint32_t out;
};
// out = e again (a capture's forward step; materialise computes through it too, so a replay
// gives the recording's bits)
template <class E>
void map_forward(tape& t, const void* p) {
  const auto& n = *static_cast<const map_node<E>*>(p);
  using T = value_t<E>;
  using B = backend_of_t<E>;
  fusor::ext::assign_expr(value_leaf<T, B>(t, n.out), strip(n.tree), false);
}
template <class E>
void map_backward(tape& t, const void* p) {
  const auto& n = *static_cast<const map_node<E>*>(p);
  const auto& s = t.slot_at(n.out);
  if (!s.adjoint_written) return;  // nothing downstream used it
  using T = value_t<E>;
  using B = backend_of_t<E>;
  const leaf<T, B> seed{static_cast<T*>(s.adjoint), s.shape, contiguous_strides(s.shape)};
  propagate(t, n.tree, seed, expr_shape(n.tree));
}

enum class reduction { sum, mean };
template <class E, class R>
struct reduce_node {  // out = sum or mean of e, whole (axis < 0) or along axis
  E tree;
  std::uint32_t out;
  int axis;
  R scale;  // 1, or 1/count for a mean
};
template <class E, class R>
void reduce_backward(tape& t, const void* p) {
  const auto& n = *static_cast<const reduce_node<E, R>*>(p);
  const auto& s = t.slot_at(n.out);
  if (!s.adjoint_written) return;
  using B = backend_of_t<E>;
  const extents shape = expr_shape(n.tree);
  if (n.axis < 0) {
    if constexpr (std::is_floating_point_v<R> || fusor::ext::small_float_v<R>) {
      // the adjoint where it lies, seen at every element: nothing read back to the host
      const leaf<R, B> g = spread_scalar<R, B>(static_cast<R*>(s.adjoint), shape);
      if (n.scale == R{1}) propagate(t, n.tree, g, shape);
      else propagate(t, n.tree, g * scalar_expr<R>{n.scale}, shape);
    } else {
      R g;
      backend_memory<B>::copy_to_host(&g, static_cast<const R*>(s.adjoint), 1);
      propagate(t, n.tree, scalar_expr<R>{R(g * n.scale)}, shape);
    }
  } else {
    // the output's adjoint, repeated along the reduced axis (stride 0)
    extents st = contiguous_strides(fusor::ext::drop_axis(shape, n.axis));
    extents strides;
    for (int k = 0, j = 0; k < shape.size(); ++k) strides.push_back(k == n.axis ? 0 : st[j++]);
    const leaf<R, B> g{static_cast<R*>(s.adjoint), shape, strides};
    if (n.scale == R{1}) propagate(t, n.tree, g, shape);
    else propagate(t, n.tree, g * scalar_expr<R>{n.scale}, shape);
  }
}

template <class N>
auto materialise(const N& node) {
  using T = value_t<N>;
  using B = backend_of_t<N>;
  static_assert(differentiable_v<T>,
                "fusor: a variable holds a floating type (float, double, float16, bfloat16, complex or dual); this expression's type is not (cast it first)");
  tape& t = tape_of(node, "evaluating an expression");
  const bool grad = recording() && any_requires_grad(t, node);
  const extents shape = expr_shape(node);
  const std::uint32_t id = t.new_slot<T, B>(shape, grad);
  const map_node<N> n{node, id};
  map_forward<N>(t, &n);
  capture_tree(t, &map_forward<N>, n, id, node, grad);
  if (grad) record_tree(t, &map_backward<N>, n, node);
  return var<T, B>(&t, id);
}

/// The axis argument of a whole reduction (any real axis is > -max_rank).
inline constexpr int whole = -1000;

// out = sum or mean of e, whole (axis == whole) or along axis (a capture's forward step; reduce
// computes through it)
template <reduction Kind, class E>
struct reduce_step {
  E tree;
  std::uint32_t out;
  int axis;
};
template <reduction Kind, class E>
void reduce_forward(tape& t, const void* p) {
  const auto& n = *static_cast<const reduce_step<Kind, E>*>(p);
  using V = value_t<E>;
  using B = backend_of_t<E>;
  const auto plain = strip(n.tree);
  if (n.axis == whole) {
    if constexpr (std::is_floating_point_v<V> || fusor::ext::small_float_v<V>) {
      // fusor::sum's (or mean's) value, computed and kept on the device: a replay reads nothing
      // back (a CUDA graph cannot)
      // (a mean of nothing: 0/0, NaN, as fusor::mean gives)
      using Op = std::conditional_t<Kind == reduction::sum, fusor::ext::sum_op, fusor::ext::mean_sum_op>;
      const double count = Kind == reduction::mean ? double(expr_shape(n.tree).numel()) : 1.0;
      executor<B>::template reduce_into<Op>(static_cast<V*>(t.slot_at(n.out).value), plain,
                                            fusor::ext::finish_as<V>{count});
    } else {
      const V value = Kind == reduction::sum ? V(fusor::sum(plain)) : V(fusor::mean(plain));
      backend_memory<B>::copy_from_host(static_cast<V*>(t.slot_at(n.out).value), &value, 1);
    }
    return;
  }
  const extents shape = expr_shape(n.tree);
  const extents out_shape = fusor::ext::drop_axis(shape, n.axis);
  const leaf<V, B> dst{static_cast<V*>(t.slot_at(n.out).value), out_shape, contiguous_strides(out_shape)};
  if (shape[n.axis] == 0) fusor::ext::assign_expr(dst, scalar_expr<V>{V{}}, false);
  else executor<B>::template reduce_axis<fusor::ext::sum_op>(dst, plain, n.axis);
  if (Kind == reduction::mean)
    fusor::ext::assign_expr(dst, dst * scalar_expr<V>{V{1} / real_constant<V>(double(shape[n.axis]))}, false);
}

template <reduction Kind, class N>
auto reduce(const N& node, int axis, bool keepdims) {
  using V = value_t<N>;
  using B = backend_of_t<N>;
  static_assert(differentiable_v<V>,
                "fusor: reductions of variables need floating values (float, double, float16, bfloat16; cast the expression first)");
  tape& t = tape_of(node, "reducing an expression");
  const bool grad = recording() && any_requires_grad(t, node);
  const extents shape = expr_shape(node);
  if (axis == whole) {
    const index_t count = shape.numel();
    const std::uint32_t id = t.new_slot<V, B>(extents{}, grad);
    const reduce_step<Kind, N> step{node, id, whole};
    reduce_forward<Kind, N>(t, &step);
    capture_tree(t, &reduce_forward<Kind, N>, step, id, node, grad);
    if (grad)
      record_tree(t, &reduce_backward<N, V>,
                  reduce_node<N, V>{node, id, -1,
                                    Kind == reduction::mean && count > 0 ? V{1} / real_constant<V>(double(count)) : V{1}},
                  node);
    return var<V, B>(&t, id);
  }
  if (shape.size() == 0)
    throw index_error("fusor: cannot reduce a 0-dimensional expression along axis " + std::to_string(axis) +
                      " (expected an expression of rank >= 1)");
  const int ax = normalize_axis(axis, shape.size());
  const extents out_shape = fusor::ext::drop_axis(shape, ax);
  const std::uint32_t id = t.new_slot<V, B>(keepdims ? fusor::ext::keep_axis(shape, ax) : out_shape, grad);
  const reduce_step<Kind, N> step{node, id, ax};
  reduce_forward<Kind, N>(t, &step);
  capture_tree(t, &reduce_forward<Kind, N>, step, id, node, grad);
  const V scale = Kind == reduction::mean ? V{1} / real_constant<V>(double(shape[ax])) : V{1};
  if (grad) record_tree(t, &reduce_backward<N, V>, reduce_node<N, V>{node, id, ax, scale}, node);
  return var<V, B>(&t, id);
}
}  // namespace detail

template <class T, class B>
template <expression E>
  requires(!std::is_same_v<std::remove_cvref_t<E>, var<T, B>>)
var<T, B>::var(const E& e) {
  auto node = fusor::ext::to_node(e);
  static_assert(detail::var_count<decltype(node)> > 0,
                "fusor: a variable is made from an expression of variables (for an array, use tape.param or "
                "ad::param; for a constant, use the array itself)");
  static_assert(std::is_same_v<value_t<decltype(node)>, T>,
                "fusor: the expression's element type differs from the variable's (use ad::eval, or cast)");
  *this = detail::materialise(node);
}

/// Evaluates an expression of variables into a new variable: one tape node.
template <expression E>
  requires detail::has_vars_v<E>
auto eval(const E& e) {
  return detail::materialise(fusor::ext::to_node(e));
}

// Reductions of expressions of variables: found by argument-dependent lookup from `sum(x * x)`
// (more constrained than fusor::sum, which the engine would run without recording).
template <expression E>
  requires detail::has_vars_v<E>
auto sum(const E& e) {
  return detail::reduce<detail::reduction::sum>(fusor::ext::to_node(e), detail::whole, false);
}
template <expression E>
  requires detail::has_vars_v<E>
auto sum(const E& e, int axis, bool keepdims = false) {
  return detail::reduce<detail::reduction::sum>(fusor::ext::to_node(e), axis, keepdims);
}
template <expression E>
  requires detail::has_vars_v<E>
auto mean(const E& e) {
  return detail::reduce<detail::reduction::mean>(fusor::ext::to_node(e), detail::whole, false);
}
template <expression E>
  requires detail::has_vars_v<E>
auto mean(const E& e, int axis, bool keepdims = false) {
  return detail::reduce<detail::reduction::mean>(fusor::ext::to_node(e), axis, keepdims);
}

/// A parameter: a variable whose value is the caller's array (not copied). Keep it unchanged until
/// the backward pass: an engine write into it before then makes backward throw a tape_error. If the
/// array is destroyed first, the tape keeps its buffer until reset().
template <class T, class B>
var<T, B> param(tape& t, const array<T, B>& x) {
  t.watch(x.as_leaf(), true);  // written before the backward pass: a tape_error there
  const std::uint32_t id = t.borrowed_slot<T, B>(const_cast<T*>(x.data()), x.shape());
  t.mark_produced(id);  // a replay reads it where it lies
  return var<T, B>(&t, id);
}
/// A parameter on this thread's active tape (ad::use_tape, or the tape of the transform calling
/// the function).
template <class T, class B>
var<T, B> param(const array<T, B>& x) {
  return param(active_tape(), x);
}

/// Runs the backward pass of y's tape from y (a single number: a loss).
template <class T, class B>
void backward(const var<T, B>& y) {
  static_assert(!is_complex_v<T>,
                "fusor: the gradient needs a real loss; take abs, real or imag of a complex result first");
  y.check("backward");
  if (y.size() != 1)
    throw tape_error("fusor: the gradient needs a function with one number as output (a 0-d variable, e.g. a sum), "
                     "got shape " + to_string(y.shape()) + " (use vjp or jacrev for a vector output)");
  tape& t = *y.owner();
  auto& s = t.slot_at(y.id());
  const T one{1};
  backend_memory<B>::copy_from_host(t.adjoint_buffer<T, B>(y.id()), &one, 1);
  s.adjoint_written = true;
  t.run_backward();
}

/// The adjoint of x after backward(): a view into the tape (valid until its next reset); zeros
/// for a variable the output does not depend on.
template <class T, class B>
array_view<T, B> gradient(const var<T, B>& x) {
  x.check("gradient");
  tape& t = *x.owner();
  auto& s = t.slot_at(x.id());
  const leaf<T, B> a = detail::adjoint_leaf<T, B>(t, x.id());
  if (!s.adjoint_written) {
    fusor::ext::assign_expr(a, scalar_expr<T>{T{}}, false);
    s.adjoint_written = true;
  }
  return {a.data, a.shape, a.strides};
}

}  // namespace fusor::ad
