#pragma once
// Copies of variables into new layouts: concatenate, stack, pad (constant mode) and roll. Each is
// one node made by the array function (its result array is kept by the tape, not copied again);
// the adjoint of each input is the matching part of the output's adjoint: a slice for
// concatenate, stack and pad, the adjoint rolled back for roll. split is a view (views.hpp).
#include <cstdint>
#include <initializer_list>
#include <ranges>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "../core/join.hpp"
#include "../core/pad.hpp"
#include "gather.hpp"
#include "ops.hpp"
#include "views.hpp"
#include "../core/ext.hpp"

namespace fusor::ad {

namespace detail {

template <class T, class B>
struct concatenate_back {
  const operand<T, B>* parts;
  std::size_t count;
  int axis;
  void operator()(tape& t, const leaf<T, B>& g) const {
    index_t off = 0;
    for (std::size_t i = 0; i < count; ++i) {
      const operand<T, B>& p = parts[i];
      const index_t len = p.shape()[axis];
      if (p.grad) accumulate_into(t, p, fusor::ext::slice_leaf(g, axis, off, off + len), p.shape());
      off += len;
    }
  }
};

template <class T, class B>
var<T, B> concatenate_ops(tape& t, const std::vector<operand<T, B>>& ops, int axis) {
  std::vector<array_view<T, B>> views;
  bool any = false;
  for (const auto& o : ops) {
    views.push_back(o.view());
    any = any || o.grad;
  }
  array<T, B> result = fusor::concatenate(views, axis);
  const int ax = normalize_axis(axis, ops[0].shape().size());
  auto [out, grad] = kept_output(t, std::move(result), any);
  if (grad) record_op<T, B>(t, out.id(), concatenate_back<T, B>{t.store(ops.data(), ops.size()), ops.size(), ax});
  return out;
}

template <class R>
auto operands_of(const R& parts, const char* what) {
  using P = std::remove_cvref_t<std::ranges::range_value_t<R>>;
  using T = value_t<node_t<P>>;
  using B = backend_of_t<node_t<P>>;
  std::vector<operand<T, B>> ops;
  tape* t = nullptr;
  for (const auto& p : parts) {
    tape* u = common_tape(what, p);
    if (t != nullptr && u != t)
      throw tape_error(std::string("fusor: ") + what +
                       " of variables from two different tapes (expected every variable of one operation on one tape)");
    t = u;
    ops.push_back(make_operand<T>(*t, p));
  }
  if (t == nullptr) throw value_error(std::string("fusor: ") + what + " needs at least one variable, got none");
  return std::make_pair(t, std::move(ops));
}

template <class T, class B>
struct pad_back {
  operand<T, B> x;
  extents before;
  void operator()(tape& t, const leaf<T, B>& g) const {
    leaf<T, B> inner = g;
    for (int k = 0; k < before.size(); ++k)
      inner = fusor::ext::slice_leaf(inner, k, before[k], before[k] + x.shape()[k]);
    accumulate_into(t, x, inner, x.shape());
  }
};

template <class T, class B>
struct roll_back {
  operand<T, B> x;
  extents shifts, axes;
  void operator()(tape& t, const leaf<T, B>& g) const {
    extents back;
    for (index_t s : shifts) back.push_back(-s);
    const array<T, B> r = fusor::roll(array_view<T, B>(g.data, g.shape, g.strides), back, axes);
    accumulate_into(t, x, r.as_leaf(), x.shape());
  }
};
}  // namespace detail

/// Joins variables (or views of them) along an existing axis: one node.
template <std::ranges::input_range R>
  requires detail::holds_vars_v<std::ranges::range_value_t<R>>
auto concatenate(const R& parts, int axis = 0) {
  auto [t, ops] = detail::operands_of(parts, "concatenate");
  return detail::concatenate_ops(*t, ops, axis);
}
template <class T, class B>
var<T, B> concatenate(std::initializer_list<var<T, B>> parts, int axis = 0) {
  return ad::concatenate(std::vector<var<T, B>>(parts), axis);
}
template <class T, class B>
var<T, B> concatenate(std::initializer_list<var_leaf<T, B>> parts, int axis = 0) {
  return ad::concatenate(std::vector<var_leaf<T, B>>(parts), axis);
}

/// Joins variables of one shape along a new axis: one node.
template <std::ranges::input_range R>
  requires detail::holds_vars_v<std::ranges::range_value_t<R>>
auto stack(const R& parts, int axis = 0) {
  using P = std::remove_cvref_t<std::ranges::range_value_t<R>>;
  using L = decltype(detail::var_view_of(std::declval<const P&>()));
  std::vector<L> expanded;
  for (const auto& p : parts) {
    const auto l = detail::var_view_of(p);
    if (!expanded.empty() && !(l.value.shape == expanded[0].value.shape))
      throw shape_error("fusor: stack expects variables of one shape: variable 0 has shape " +
                        to_string(expanded[0].value.shape) + ", variable " + std::to_string(expanded.size()) +
                        " has shape " + to_string(l.value.shape));
    expanded.push_back(l);
  }
  if (expanded.empty()) throw value_error("fusor: stack needs at least one variable, got none");
  const int ax = normalize_axis(axis, expanded[0].value.shape.size() + 1);
  for (auto& l : expanded) l = ad::expand_dims(l, ax);
  return ad::concatenate(expanded, ax);
}
template <class T, class B>
var<T, B> stack(std::initializer_list<var<T, B>> parts, int axis = 0) {
  return ad::stack(std::vector<var<T, B>>(parts), axis);
}
template <class T, class B>
var<T, B> stack(std::initializer_list<var_leaf<T, B>> parts, int axis = 0) {
  return ad::stack(std::vector<var_leaf<T, B>>(parts), axis);
}

/// np.pad of a variable. Constant mode is one node whose adjoint is the interior of the output's.
/// The other modes (edge, wrap, reflect, symmetric) read the input itself: along each padded axis,
/// a take of the source of every padded position, whose adjoint scatter-adds (NumPy pads axis
/// after axis, so this composition is its result, corners included).
template <class X, class V = int>
  requires detail::holds_vars_v<X>
auto pad(const X& x, const pad_widths& widths, pad_mode mode = pad_mode::constant, V value = 0) {
  using T = value_t<node_t<X>>;
  using B = backend_of_t<node_t<X>>;
  if (mode != pad_mode::constant) {
    const extents shape = expr_shape(fusor::ext::to_node(x));
    (void)fusor::ext::padded_shape(shape, widths, mode);  // checks the widths, as the array function
    var<T, B> r;
    bool padded = false;
    for (int k = 0; k < shape.size(); ++k) {
      const auto [b, a] = fusor::ext::pad_width(widths, k);
      if (b == 0 && a == 0) continue;
      std::vector<std::int64_t> source(std::size_t(shape[k] + b + a));
      for (index_t i = 0; i < index_t(source.size()); ++i)
        source[std::size_t(i)] = fusor::ext::pad_source(i - b, shape[k], mode);
      const array<std::int64_t, B> idx(std::span<const std::int64_t>(source), extents{index_t(source.size())});
      r = padded ? ad::take(r, idx, k) : ad::take(x, idx, k);
      padded = true;
    }
    return padded ? r : var<T, B>(ad::eval(x * 1));
  }
  tape& t = *detail::common_tape("pad", x);
  const auto o = detail::make_operand<T>(t, x);
  array<T, B> result = fusor::pad(o.view(), widths, mode, value);
  extents before;
  for (int k = 0; k < o.shape().size(); ++k) before.push_back(widths.size() == 1 ? widths[0].first : widths[std::size_t(k)].first);
  auto [out, grad] = detail::kept_output(t, std::move(result), o.grad);
  if (grad) detail::record_op<T, B>(t, out.id(), detail::pad_back<T, B>{o, before});
  return out;
}
template <class X, class V = int>
  requires detail::holds_vars_v<X>
auto pad(const X& x, index_t width, pad_mode mode = pad_mode::constant, V value = 0) {
  return ad::pad(x, pad_widths{{width, width}}, mode, value);
}

/// np.roll of a variable: one node whose adjoint is the output's rolled back.
template <class X>
  requires detail::holds_vars_v<X>
auto roll(const X& x, const extents& shifts, const extents& axes) {
  using T = value_t<node_t<X>>;
  using B = backend_of_t<node_t<X>>;
  tape& t = *detail::common_tape("roll", x);
  const auto o = detail::make_operand<T>(t, x);
  array<T, B> result = fusor::roll(o.view(), shifts, axes);
  auto [out, grad] = detail::kept_output(t, std::move(result), o.grad);
  if (grad) detail::record_op<T, B>(t, out.id(), detail::roll_back<T, B>{o, shifts, axes});
  return out;
}
template <class X>
  requires detail::holds_vars_v<X>
auto roll(const X& x, index_t shift, int axis) {
  return ad::roll(x, extents{shift}, extents{axis});
}
template <class X>
  requires detail::holds_vars_v<X>
auto roll(const X& x, index_t shift) {
  return ad::roll(x, extents{shift}, extents{});
}

}  // namespace fusor::ad
