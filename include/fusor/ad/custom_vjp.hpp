#pragma once
// custom_vjp (JAX's name): a function with a user-written adjoint. fwd(args...) computes the
// output and whatever the backward pass needs (the residuals) from plain arrays; bwd(residuals, g)
// returns the cotangent of each argument given the output's cotangent g. Called on variables, the
// function records one node through record_op, the registration point of the library's own
// operations; called on arrays, it is just fwd's output.
#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "../core/array.hpp"
#include "ops.hpp"
#include "../core/ext.hpp"

namespace fusor::ad {

namespace detail {
template <class X>
struct is_tuple : std::false_type {};
template <class... X>
struct is_tuple<std::tuple<X...>> : std::true_type {};

template <class C>
auto as_tuple(C&& c) {
  if constexpr (is_tuple<std::remove_cvref_t<C>>::value) return std::forward<C>(c);
  else return std::tuple<std::remove_cvref_t<C>>(std::forward<C>(c));
}

// The element type of an argument (variables, views, arrays, expressions).
template <class X>
using arg_value_t = value_t<node_t<std::remove_cvref_t<X>>>;
template <class X>
using arg_backend_t = backend_of_t<node_t<std::remove_cvref_t<X>>>;

template <class Bwd, class Res, class R, class B, class... Ops>
struct custom_back {
  Bwd bwd;
  Res residuals;
  std::tuple<Ops...> inputs;

  void operator()(tape& t, const leaf<R, B>& g) const {
    auto cts = as_tuple(bwd(residuals, array_view<R, B>(g.data, g.shape, g.strides)));
    static_assert(std::tuple_size_v<decltype(cts)> == sizeof...(Ops),
                  "fusor: custom_vjp's bwd must return one cotangent per argument (a std::tuple when several)");
    apply_each(t, cts, std::index_sequence_for<Ops...>{});
  }
  template <class C, std::size_t... I>
  void apply_each(tape& t, const C& cts, std::index_sequence<I...>) const {
    (one(t, std::get<I>(cts), std::get<I>(inputs), I), ...);
  }
  template <class Ct, class T>
  static void one(tape& t, const Ct& ct, const operand<T, B>& in, std::size_t index) {
    const auto node = fusor::ext::to_node(ct);
    const extents s = expr_shape(node);
    if (!(s == in.shape()))
      throw tape_error("fusor: custom_vjp's bwd returned a cotangent of shape " + to_string(s) + " for argument " +
                       std::to_string(index) + ", expected the argument's shape " + to_string(in.shape()));
    static_assert(std::is_same_v<value_t<decltype(node)>, T>,
                  "fusor: a cotangent from custom_vjp's bwd must have its argument's element type");
    accumulate_into(t, in, node, s);
  }
};

template <class Fwd, class Bwd>
class custom_vjp_fn {
 public:
  custom_vjp_fn(Fwd fwd, Bwd bwd) : fwd_(std::move(fwd)), bwd_(std::move(bwd)) {}

  template <class... A>
  auto operator()(const A&... args) const {
    if constexpr (!(holds_vars_v<A> || ...)) {
      return array_of(std::get<0>(fwd_(args...)));  // no variable: nothing to record
    } else {
      return record(*common_tape("calling a custom_vjp function", args...), args...);
    }
  }

 private:
  template <class... A>
  auto record(tape& t0, const A&... args) const {
    tape* t = &t0;
    auto ops = std::make_tuple(make_operand<arg_value_t<A>>(*t, args)...);
    auto [y, residuals] = std::apply([&](const auto&... o) { return fwd_(o.view()...); }, ops);
    const auto out = array_of(std::move(y));
    using R = value_t<decltype(out)>;
    using B = backend_of_t<decltype(out)>;
    static_assert(std::is_floating_point_v<R>, "fusor: custom_vjp's fwd must return a float or double array");
    const bool any = std::apply([](const auto&... o) { return (o.grad || ...); }, ops);
    auto [v, grad] = new_output<R, B>(*t, out.shape(), any);
    fusor::ext::assign_expr(output_leaf(v), out.as_leaf(), false);
    if (grad)
      record_op<R, B>(*t, v.id(),
                      custom_back<Bwd, std::remove_cvref_t<decltype(residuals)>, R, B, arg_operand_t<A>...>{
                          bwd_, std::move(residuals), std::move(ops)});
    return v;
  }

  template <class A>
  using arg_operand_t = operand<arg_value_t<A>, arg_backend_t<A>>;
  template <class Y>
  static auto array_of(Y&& y) {
    using N = std::remove_cvref_t<Y>;
    if constexpr (fusor::ext::is_array_v<N>) return N(std::forward<Y>(y));
    else return fusor::eval(y);
  }

  Fwd fwd_;
  Bwd bwd_;
};
}  // namespace detail

/// A function with a hand-written adjoint (JAX's custom_vjp). fwd(args...) receives array views and
/// returns (output, residuals) as a pair or tuple; bwd(residuals, g) receives them and the output's
/// cotangent g and returns one cotangent per argument (a std::tuple when several; arrays or
/// expressions, each of its argument's shape and type: a tape_error otherwise). Called with
/// variables the function records one node; the residuals are kept by the tape until its reset.
template <class Fwd, class Bwd>
auto custom_vjp(Fwd fwd, Bwd bwd) {
  return detail::custom_vjp_fn<Fwd, Bwd>(std::move(fwd), std::move(bwd));
}

}  // namespace fusor::ad
