#pragma once
// Losses: mse, l1, binary cross-entropy (of probabilities, and of logits), and categorical
// cross-entropy with the softmax fused in. Called on variables each returns a one-element
// variable (the loss to differentiate); called on arrays, the number.
//
// mse, l1 and binary_cross_entropy are expressions reduced by ad's mean or sum: one node, whose
// adjoint is one fused pass. The two losses of logits are one node each with a hand-written
// adjoint, because their good adjoints are simpler than their expressions' and stay finite where
// the expressions' would overflow: softmax(z) − onehot for cross_entropy, sigmoid(z) − y for
// binary_cross_entropy_with_logits, each one fused pass.
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "../../core/array.hpp"
#include "../../core/create.hpp"
#include "../autocast.hpp"
#include "../ops.hpp"
#include "../reductions.hpp"
#include "activations.hpp"
#include "../../core/ext.hpp"

namespace fusor::ad::nn {

/// How a loss combines the per-element losses (PyTorch's reduction="mean" and "sum").
enum class reduction { mean, sum };

namespace detail {

/// An array's or a view's elements as a view.
template <class X>
auto view_of(const X& x) {
  const auto l = x.as_leaf();
  return array_view<value_t<node_t<X>>, backend_of_t<node_t<X>>>(l.data, l.shape, l.strides);
}

inline void check_same_shape(const char* what, const extents& input, const extents& target) {
  if (!(input == target))
    throw shape_error(std::string("fusor: ") + what + " needs the target's shape to equal the input's, got input " +
                      to_string(input) + " and target " + to_string(target));
}

template <class E>
auto reduce_loss(const E& e, reduction r) {
  // mean and sum of an expression of variables are ad's (found by argument-dependent lookup);
  // of arrays, the engine's. Both branches have one type.
  if (r == reduction::sum) return sum(e);
  return mean(e);
}

/// The plain values of x (a variable, an expression, an array): an array view, valid while x's tape
/// or array is. An expression of variables becomes a variable first (one node).
template <class X>
auto plain_values(const X& x) {
  using T = value_t<node_t<X>>;
  using B = backend_of_t<node_t<X>>;
  if constexpr (has_vars<X>()) {
    const var<T, B> v = ad::eval(x);
    const leaf<T, B> l = v.as_leaf().value;
    return std::make_pair(v, array_view<T, B>(l.data, l.shape, l.strides));
  } else if constexpr (fusor::ext::is_array_v<X> || fusor::ext::is_view_v<X>) {
    return std::make_pair(0, view_of(x));
  } else {
    array<T, B> a(x);
    const array_view<T, B> v = view_of(a);
    return std::make_pair(std::move(a), v);  // the buffer moves with the array: the view stays valid
  }
}

/// A leaf of the 0-d adjoint g read at every position of `shape` (stride 0 on every axis).
template <class T, class B>
leaf<T, B> spread_scalar(const leaf<T, B>& g, const extents& shape) {
  return ad::detail::spread_scalar<T, B>(g.data, shape);
}

/// A leaf that reads the (rows..., 1) array `a` at every class of shape (rows..., C).
template <class T, class B>
leaf<T, B> spread_last(const T* a, const extents& shape) {
  extents s = shape;
  s[s.size() - 1] = 1;
  extents strides = contiguous_strides(s);
  strides[s.size() - 1] = 0;
  return {const_cast<T*>(a), shape, strides};
}

/// binary_cross_entropy's check: probabilities in [0, 1] (a value_error naming the range found).
template <class V>
void check_probabilities(const V& values) {
  using T = value_t<V>;
  if (values.size() == 0) return;
  const T lo = fusor::min(values), hi = fusor::max(values);
  if (!(lo >= T(0) && hi <= T(1)))
    throw value_error("fusor: binary_cross_entropy needs probabilities in [0, 1], got values in [" + std::to_string(lo) +
                      ", " + std::to_string(hi) + "] (for scores use binary_cross_entropy_with_logits)");
}
/// The same check in a replay (a capture's step that computes no value): its verdict into a flag;
/// eagerly (a raised flag) the value_error.
template <class T, class B>
struct probability_check {
  leaf<T, B> p;
  std::int32_t check;
};
template <class T, class B>
void probability_check_forward(tape& t, const void* p) {
  const auto& n = *static_cast<const probability_check<T, B>*>(p);
  if (!t.deferring_checks()) return;  // (checked eagerly when recorded)
  const array_view<T, B> v(n.p.data, n.p.shape, n.p.strides);
  ad::detail::raise_flag_if<B>(t, n.check, !((v >= T(0)) && (v <= T(1))));
}
template <class T, class B>
void probability_check_eager(tape&, const void* p) {
  const auto& n = *static_cast<const probability_check<T, B>*>(p);
  check_probabilities(array_view<T, B>(n.p.data, n.p.shape, n.p.strides));
}

/// cross_entropy's node: z the logits, lse their logsumexp per row (kept by the tape), the labels
/// (class indices, broadcast along the class axis) or the target probabilities q with their row sums.
template <class T, class B, class L>
struct ce_back {
  ad::detail::operand<T, B> z;
  const T* lse;
  leaf<L, B> labels;               // class indices (when L is integral)
  ad::detail::operand<T, B> q;     // probabilities (when L is T)
  const T* qsum;
  T scale;

  void operator()(tape& t, const leaf<T, B>& g) const {
    const extents& shape = z.shape();
    const index_t classes = shape[shape.size() - 1];
    const auto gs = spread_scalar(g, shape) * scalar_expr<T>{scale};
    const leaf<T, B> m = spread_last<T, B>(lse, shape);
    if constexpr (std::is_integral_v<L>) {
      const auto cls = lazy::arange<L, B>(L(0), L(classes));
      ad::detail::accumulate_into(t, z, gs * (exp(z.value - m) - where(cls == labels, T(1), T(0))), shape);
    } else {
      const leaf<T, B> s = spread_last<T, B>(qsum, shape);
      ad::detail::accumulate_into(t, z, gs * (exp(z.value - m) * s - q.value), shape);
      ad::detail::accumulate_into(t, q, gs * (m - z.value), shape);
    }
  }
};

/// cross_entropy with class labels as a capture's forward step (cross_entropy computes through
/// it): the row maxima m and lse = log Σ exp(z − m) + m into buffers the tape keeps (so the node
/// reads them where they lie, and a replay allocates nothing), then the loss into slot `out`.
template <class T, class B, class L>
struct ce_step {
  ad::detail::operand<T, B> z;
  T* lse;
  T* m;
  leaf<L, B> labels;  // (rows...) as given
  index_t classes;
  T factor;  // 1, or 1/rows for a mean
  std::uint32_t out;
  std::int32_t check;  // its flag in a replay (tape::add_check), or -1
};
// The labels' eager check (a replay whose flag was raised runs it: it throws).
template <class T, class B, class L>
void ce_check(tape&, const void* p) {
  const auto& n = *static_cast<const ce_step<T, B, L>*>(p);
  check_indices("cross_entropy", "class indices", "labels", array_view<L, B>(n.labels.data, n.labels.shape, n.labels.strides),
                n.classes);
}
/// The row maxima m and lse = log Σ exp(z − m) + m of logits z along the last axis, into buffers
/// of z's row count (what cross_entropy's forward steps and its node read).
template <class T, class B>
void ce_logsumexp(const ad::detail::operand<T, B>& z, T* m_data, T* lse_data) {
  const extents& shape = z.shape();
  const int ax = shape.size() - 1;
  const extents rows = fusor::ext::drop_axis(shape, ax);
  const leaf<T, B> m{m_data, rows, contiguous_strides(rows)}, lse{lse_data, rows, contiguous_strides(rows)};
  executor<B>::template reduce_axis<fusor::ext::max_op>(m, z.value, ax);
  fusor::ext::assign_expr(m, where(isfinite(m), m, T(0)), false);  // all −inf: the shift changes nothing
  executor<B>::template reduce_axis<fusor::ext::sum_op>(lse, exp(z.value - spread_last<T, B>(m_data, shape)), ax);
  fusor::ext::assign_expr(lse, log(lse) + m, false);
}

template <class T, class B, class L>
void ce_forward(tape& t, const void* p) {
  const auto& n = *static_cast<const ce_step<T, B, L>*>(p);
  const extents& shape = n.z.shape();
  ce_logsumexp<T, B>(n.z, n.m, n.lse);
  const array_view<L, B> labels(n.labels.data, n.labels.shape, n.labels.strides);
  if (t.deferring_checks() && n.check >= 0) {
    // a replay: the verdict into the step's flag, read after the replay (a label out of range
    // matches no class meanwhile)
    const auto l = fusor::cast<std::int64_t>(labels);
    ad::detail::raise_flag_if<B>(t, n.check, (l < std::int64_t(0)) || (l >= std::int64_t(n.classes)));
  } else {
    check_indices("cross_entropy", "class indices", "labels", labels, n.classes);
  }
  extents lab_strides = n.labels.strides;
  lab_strides.push_back(0);
  const leaf<L, B> lab{n.labels.data, shape, lab_strides};  // each row's label along the class axis
  const auto cls = lazy::arange<L, B>(L(0), L(n.classes));
  // the loss computed and kept on the device (a replay reads nothing back): fusor::sum's value
  executor<B>::template reduce_into<fusor::ext::sum_op>(
      static_cast<T*>(t.slot_at(n.out).value), where(cls == lab, spread_last<T, B>(n.lse, shape) - n.z.value, T(0)),
      fusor::ext::finish_as<T>{.factor = n.factor});
}

/// cross_entropy with target probabilities q as a capture's forward step (cross_entropy computes
/// through it): m and lse as with labels, q's row sums, then Σ q·(lse − z) times `factor` into
/// slot `out`, all into buffers the tape keeps and on the device.
template <class T, class B>
struct ce_prob_step {
  ad::detail::operand<T, B> z, q;
  T* lse;
  T* m;
  T* qsum;
  T factor;
  std::uint32_t out;
};
template <class T, class B>
void ce_prob_forward(tape& t, const void* p) {
  const auto& n = *static_cast<const ce_prob_step<T, B>*>(p);
  const extents& shape = n.z.shape();
  const int ax = shape.size() - 1;
  const extents rows = fusor::ext::drop_axis(shape, ax);
  ce_logsumexp<T, B>(n.z, n.m, n.lse);
  executor<B>::template reduce_axis<fusor::ext::sum_op>(leaf<T, B>{n.qsum, rows, contiguous_strides(rows)}, n.q.value, ax);
  executor<B>::template reduce_into<fusor::ext::sum_op>(static_cast<T*>(t.slot_at(n.out).value),
                                                        n.q.value * (spread_last<T, B>(n.lse, shape) - n.z.value),
                                                        fusor::ext::finish_as<T>{.factor = n.factor});
}

/// binary_cross_entropy_with_logits' node: dz = g·scale·(sigmoid(z) − y), dy = −g·scale·z.
template <class T, class B>
struct bce_logits_back {
  ad::detail::operand<T, B> z, y;
  T scale;
  void operator()(tape& t, const leaf<T, B>& g) const {
    const auto gs = spread_scalar(g, z.shape()) * scalar_expr<T>{scale};
    ad::detail::accumulate_into(t, z, gs * (fusor::sigmoid(z.value) - y.value), z.shape());
    ad::detail::accumulate_into(t, y, gs * (T(0) - z.value), z.shape());
  }
};

/// binary_cross_entropy_with_logits as a capture's forward step (the loss computes through it): Σ
/// max(z, 0) − z·y + log(1 + e^−|z|), times `factor` (1, or 1/n for a mean), kept on the device.
template <class T, class B>
struct bce_logits_step {
  ad::detail::operand<T, B> z, y;
  T factor;
  std::uint32_t out;
};
template <class T, class B>
void bce_logits_forward(tape& t, const void* p) {
  const auto& n = *static_cast<const bce_logits_step<T, B>*>(p);
  const auto z = n.z.view(), y = n.y.view();
  executor<B>::template reduce_into<fusor::ext::sum_op>(
      static_cast<T*>(t.slot_at(n.out).value), fusor::ext::to_node(maximum(z, T(0)) - z * y + log1p(exp(T(0) - abs(z)))),
      fusor::ext::finish_as<T>{.factor = n.factor});
}

/// Whether either operand of a loss holds float16 or bfloat16 (then it is computed in float32).
template <class X, class Y>
inline constexpr bool any_small_float =
    fusor::ext::small_float_v<value_t<node_t<X>>> || fusor::ext::small_float_v<value_t<node_t<Y>>>;

template <class T>
T scale_of(reduction r, index_t count) {
  return r == reduction::sum ? T(1) : T(1) / T(count);  // a mean of nothing is 0/0: NaN, as in NumPy
}

}  // namespace detail

/// Mean (or sum) of (input − target)²; input and target of one shape. 16-bit operands are
/// computed in float32 (a difference past 256 would overflow float16 when squared), and the loss
/// is float32, as PyTorch's autocast runs its losses.
template <expression X, expression Y>
auto mse_loss(const X& input, const Y& target, reduction r = reduction::mean) {
  detail::check_same_shape("mse_loss", expr_shape(fusor::ext::to_node(input)),
                           expr_shape(fusor::ext::to_node(target)));
  if constexpr (detail::any_small_float<X, Y>)
    return mse_loss(ad::detail::in_type<float>(input), ad::detail::in_type<float>(target), r);
  else
    return detail::reduce_loss(square(input - target), r);
}

/// Mean (or sum) of |input − target|; the gradient at a tie is 0. 16-bit operands as mse_loss.
template <expression X, expression Y>
auto l1_loss(const X& input, const Y& target, reduction r = reduction::mean) {
  detail::check_same_shape("l1_loss", expr_shape(fusor::ext::to_node(input)),
                           expr_shape(fusor::ext::to_node(target)));
  if constexpr (detail::any_small_float<X, Y>)
    return l1_loss(ad::detail::in_type<float>(input), ad::detail::in_type<float>(target), r);
  else
    return detail::reduce_loss(abs(input - target), r);
}

/// −(y log p + (1 − y) log(1 − p)), each log clamped at −100 (PyTorch's), for probabilities p in
/// [0, 1] (a value_error otherwise) and targets y. For raw scores use
/// binary_cross_entropy_with_logits: it is exact where p rounds to 0 or 1.
template <expression X, expression Y>
auto binary_cross_entropy(const X& p, const Y& y, reduction r = reduction::mean) {
  using T = value_t<node_t<X>>;
  using B = backend_of_t<node_t<X>>;
  const auto [keep, values] = detail::plain_values(p);
  (void)keep;
  detail::check_same_shape("binary_cross_entropy", values.shape(), expr_shape(fusor::ext::to_node(y)));
  detail::check_probabilities(values);
  if constexpr (detail::has_vars<X>()) {
    // a replay checks its probabilities again (after its work: see tape::add_check)
    tape& t = *keep.owner();
    if (t.capturing() && values.size() > 0) {
      detail::probability_check<T, B> step{values.as_leaf(), -1};
      step.check = std::int32_t(t.add_check(&detail::probability_check_eager<T, B>, step));
      t.record_forward(&detail::probability_check_forward<T, B>, step, keep.id());
    }
  }
  const T floor = T(-100);
  auto loss_of = [&](const auto& q) {
    return detail::reduce_loss(T(0) - (y * maximum(log(q), floor) + (T(1) - y) * maximum(log(T(1) - q), floor)), r);
  };
  // on variables, the checked values (one evaluation of p); on arrays, p itself
  if constexpr (detail::has_vars<X>()) return loss_of(keep);
  else return loss_of(p);
}

/// binary_cross_entropy_with_logits of 16-bit logits or targets: computed in float32 (a float32
/// loss, as under PyTorch's autocast).
template <expression X, expression Y>
  requires detail::any_small_float<X, Y>
auto binary_cross_entropy_with_logits(const X& z, const Y& y, reduction r = reduction::mean) {
  return binary_cross_entropy_with_logits(ad::detail::in_type<float>(z), ad::detail::in_type<float>(y), r);
}

/// Binary cross-entropy of logits z against targets y: mean (or sum) of
/// max(z, 0) − z·y + log(1 + e^−|z|), exact for any z. Adjoints: (sigmoid(z) − y) and −z.
template <expression X, expression Y>
auto binary_cross_entropy_with_logits(const X& z, const Y& y, reduction r = reduction::mean) {
  using T = value_t<node_t<X>>;
  using B = backend_of_t<node_t<X>>;
  static_assert(std::is_floating_point_v<T> && std::is_same_v<T, value_t<node_t<Y>>>,
                "fusor: binary_cross_entropy_with_logits takes float or double logits and targets of their type");
  const extents shape = expr_shape(fusor::ext::to_node(z));
  detail::check_same_shape("binary_cross_entropy_with_logits", shape, expr_shape(fusor::ext::to_node(y)));
  const T scale = detail::scale_of<T>(r, shape.numel());
  auto value_of = [&](const auto& zv, const auto& yv) {
    const T total = T(fusor::sum(maximum(zv, T(0)) - zv * yv + log1p(exp(T(0) - abs(zv)))));
    return r == reduction::sum ? total : total * scale;
  };
  if constexpr (!detail::has_vars<X>() && !detail::has_vars<Y>()) {
    return value_of(z, y);
  } else {
    tape& t = *ad::detail::common_tape("binary_cross_entropy_with_logits", z, y);
    const auto zo = ad::detail::make_operand<T>(t, z);
    const auto yo = ad::detail::make_operand<T>(t, y);
    auto [out, grad] = ad::detail::new_output<T, B>(t, extents{}, zo.grad || yo.grad);
    const detail::bce_logits_step<T, B> step{zo, yo, r == reduction::sum ? T(1) : scale, out.id()};
    detail::bce_logits_forward<T, B>(t, &step);
    t.record_forward(&detail::bce_logits_forward<T, B>, step, out.id());
    if (grad) ad::detail::record_op<T, B>(t, out.id(), detail::bce_logits_back<T, B>{zo, yo, scale});
    return out;
  }
}

/// cross_entropy of 16-bit logits: computed in float32 (a float32 loss, as under PyTorch's
/// autocast); probabilities as targets are widened with them.
template <expression X, expression L>
  requires fusor::ext::small_float_v<value_t<node_t<X>>>
auto cross_entropy(const X& logits, const L& target, reduction r = reduction::mean) {
  if constexpr (std::is_integral_v<value_t<node_t<L>>>) return cross_entropy(fusor::cast<float>(logits), target, r);
  else return cross_entropy(fusor::cast<float>(logits), ad::detail::in_type<float>(target), r);
}

/// Categorical cross-entropy of logits (classes along the last axis) with the softmax fused in:
/// the mean (or sum) over rows of logsumexp(z) − z[label]. The target is either class indices
/// (an integer array of the logits' shape without the last axis, each in [0, classes): an
/// index_error otherwise) or probabilities of the logits' shape (−Σ q · log_softmax(z) per row).
/// One node; its adjoint is softmax(z) − onehot (softmax(z)·Σq − q), one fused pass.
/// The labels are read again by the backward pass: keep them alive and unchanged until then.
template <expression X, expression L>
auto cross_entropy(const X& logits, const L& target, reduction r = reduction::mean) {
  using T = value_t<node_t<X>>;
  using B = backend_of_t<node_t<X>>;
  using LT = value_t<node_t<L>>;
  static_assert(std::is_floating_point_v<T>, "fusor: cross_entropy takes float or double logits");
  static_assert(std::is_integral_v<LT> || std::is_same_v<LT, T>,
                "fusor: cross_entropy's target is class indices (an integer array) or probabilities of the "
                "logits' type");
  static_assert(std::is_same_v<backend_of_t<node_t<L>>, B>, "fusor: cross_entropy's target must be on the logits' backend");
  const extents shape = expr_shape(fusor::ext::to_node(logits));
  if (shape.size() == 0 || shape[shape.size() - 1] == 0)
    throw shape_error("fusor: cross_entropy needs logits with a class axis (the last) of at least one class, got shape " +
                      to_string(shape));
  const index_t classes = shape[shape.size() - 1];
  const extents rows_shape = fusor::ext::drop_axis(shape, shape.size() - 1);
  const extents target_shape = expr_shape(fusor::ext::to_node(target));
  if constexpr (std::is_integral_v<LT>) {
    if (!(target_shape == rows_shape))
      throw shape_error("fusor: cross_entropy's class labels must have the logits' shape without the class axis, " +
                        to_string(rows_shape) + ", got " + to_string(target_shape));
    detail::check_indices("cross_entropy", "class indices", "labels", target, classes);
  } else {
    detail::check_same_shape("cross_entropy with probabilities", shape, target_shape);
  }
  const T scale = detail::scale_of<T>(r, rows_shape.numel());
  // the value from plain views: lse per row (keepdims), then Σ over rows of lse·Σq − Σ q·z
  auto value_of = [&](const auto& zv, const auto& tv, array<T, B>& lse, array<T, B>& qsum) {
    lse = ad::detail::plain_logsumexp(fusor::ext::to_node(zv), shape.size() - 1);
    const leaf<T, B> m = detail::spread_last<T, B>(lse.data(), shape);
    T total;
    if constexpr (std::is_integral_v<LT>) {
      const auto cls = lazy::arange<LT, B>(LT(0), LT(classes));
      const auto lab = fusor::expand_dims(tv, -1);
      total = T(fusor::sum(where(cls == lab, m - zv, T(0))));
    } else {
      qsum = fusor::sum(tv, -1, true);
      total = T(fusor::sum(tv * (m - zv)));
    }
    return r == reduction::sum ? total : total * scale;
  };
  if constexpr (!detail::has_vars<X>() && !detail::has_vars<L>()) {
    array<T, B> lse, qsum;
    return value_of(logits, target, lse, qsum);
  } else {
    tape& t = *ad::detail::common_tape("cross_entropy", logits, target);
    const auto zo = ad::detail::make_operand<T>(t, logits);
    array<T, B>* lse = t.keep(array<T, B>());
    if constexpr (std::is_integral_v<LT>) {
      static_assert(!detail::has_vars<L>(), "fusor: class labels are constants");
      // the labels as they lie (watched like any constant), or evaluated once into the tape
      const array_view<LT, B> lab = [&] {
        if constexpr (fusor::ext::is_array_v<L> || fusor::ext::is_view_v<L>) {
          if (ad::recording() || t.capturing()) t.watch(target.as_leaf(), false);
          return detail::view_of(target);
        } else {
          t.not_replayable("cross_entropy of labels given as an expression (pass an array: its values are read again)");
          return detail::view_of(*t.keep(array<LT, B>(target)));
        }
      }();
      const extents kept_rows = fusor::ext::keep_axis(shape, shape.size() - 1);
      *lse = array<T, B>(kept_rows);
      array<T, B>* m = t.keep(array<T, B>(kept_rows));
      auto [out, grad] = ad::detail::new_output<T, B>(t, extents{}, zo.grad);
      detail::ce_step<T, B, LT> step{zo,      lse->data(), m->data(), lab.as_leaf(), classes,
                                     r == reduction::sum ? T(1) : scale, out.id(), -1};
      detail::ce_forward<T, B, LT>(t, &step);
      if (t.capturing() && rows_shape.numel() > 0) step.check = std::int32_t(t.add_check(&detail::ce_check<T, B, LT>, step));
      t.record_forward(&detail::ce_forward<T, B, LT>, step, out.id());
      const leaf<LT, B> lab_rows = fusor::expand_dims(lab, -1).as_leaf();
      if (grad)
        ad::detail::record_op<T, B>(
            t, out.id(),
            detail::ce_back<T, B, LT>{zo, lse->data(), {lab_rows.data, shape, lab_rows.strides}, {}, nullptr, scale});
      return out;
    } else {
      const auto qo = ad::detail::make_operand<T>(t, target);
      const extents kept_rows = fusor::ext::keep_axis(shape, shape.size() - 1);
      *lse = array<T, B>(kept_rows);
      array<T, B>* m = t.keep(array<T, B>(kept_rows));
      array<T, B>* qsum = t.keep(array<T, B>(kept_rows));
      auto [out, grad] = ad::detail::new_output<T, B>(t, extents{}, zo.grad || qo.grad);
      const detail::ce_prob_step<T, B> step{zo,        qo, lse->data(), m->data(), qsum->data(),
                                            r == reduction::sum ? T(1) : scale, out.id()};
      detail::ce_prob_forward<T, B>(t, &step);
      t.record_forward(&detail::ce_prob_forward<T, B>, step, out.id());
      if (grad)
        ad::detail::record_op<T, B>(t, out.id(),
                                    detail::ce_back<T, B, T>{zo, lse->data(), {}, qo, qsum->data(), scale});
      return out;
    }
  }
}

}  // namespace fusor::ad::nn
