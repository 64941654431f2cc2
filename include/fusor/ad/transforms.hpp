#pragma once
// Reverse-mode transforms with JAX's names: grad, value_and_grad (with argnums, and an aux
// output), vjp, jacrev, jacobian (forward or reverse by the shape), and hessian and hvp (forward
// over reverse). A gradient taken of variables is itself differentiable (grad of grad: reverse over
// reverse, nested_grad.hpp). Each returns a callable that owns a tape and reuses it: the second call with the
// same shapes records into the same buffers and allocates only the gradients it returns.
#include <cstddef>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>

#include "../core/array.hpp"
#include "../core/create.hpp"
#include "../core/slice.hpp"
#include "arg_trees.hpp"
#include "forward.hpp"
#include "nested_grad.hpp"
#include "params.hpp"
#include "record.hpp"
#include "../core/ext.hpp"

namespace fusor::ad {

/// Which arguments to differentiate (JAX's argnums): ad::grad(f, ad::argnums<0, 1>).
template <std::size_t... I>
struct argnums_t {};
template <std::size_t... I>
inline constexpr argnums_t<I...> argnums{};

/// f returns (value, aux): only the value is differentiated, aux is passed back (JAX's has_aux).
struct has_aux_t {};
inline constexpr has_aux_t has_aux{};

namespace detail {
template <std::size_t K, std::size_t... I>
inline constexpr bool selected = ((K == I) || ...);

template <class Y>
auto loss_var(Y&& y) {
  using X = std::remove_cvref_t<Y>;
  if constexpr (is_var_v<X>) return y;
  else {
    static_assert(expression<X> && has_vars_v<X>,
                  "fusor: the differentiated function must return a variable (its loss, e.g. ad's sum(...)) "
                  "computed from its parameters");
    return eval(y);
  }
}

template <class F, bool Aux, std::size_t... I>
class value_and_grad_fn {
 public:
  explicit value_and_grad_fn(F f) : f_(std::move(f)), tape_(std::make_shared<tape>()) {}

  /// (value, gradients): one gradient array per selected argument (a tuple when several), plus
  /// aux when has_aux was given: (value, aux, gradients). When an argument holds variables of an
  /// enclosing recording, the value and gradients are variables of it, and differentiable
  /// (reverse over reverse: nested_grad.hpp).
  template <class... A>
  auto operator()(const A&... args) const {
    if constexpr ((tree_holds_vars<A>() || ...)) return nested_value_and_grad<Aux, I...>(f_, *this, args...);
    else return on_arrays(args...);
  }

  /// The call on arrays (no argument holds variables).
  template <class... A>
  auto on_arrays(const A&... args) const {
    static_assert(((I < sizeof...(A)) && ...), "fusor: argnums names an argument the call does not have");
    const recording_on record;  // an enclosing no_grad stops the caller's recording, not this one
    tape& t = *tape_;
    t.reset();
    const use_tape active(t);  // ad::param inside f records here; an enclosing recording is untouched
    auto wrapped = wrap(t, std::index_sequence_for<A...>{}, args...);
    // the gradients handed back are the adjoint buffers the backward pass writes
    auto grads = std::make_tuple(detail::borrowed_gradient_tree(t, std::get<I>(wrapped))...);
    auto out = std::apply(f_, wrapped);
    auto y = [&] {
      if constexpr (Aux) return loss_var(std::get<0>(out));
      else return loss_var(out);
    }();
    if (y.owner() != &t)  // its backward pass would run an enclosing recording's
      throw tape_error("fusor: the differentiated function returned a variable of another tape (one it captured); "
                       "every variable it differentiates must come from its arguments (pass the captured one as an "
                       "argument, or use ad::stop_gradient(v) for its value as a constant)");
    backward(y);
    const auto value = y.item();
    (detail::finish_gradient_tree(std::get<I>(wrapped)), ...);
    t.stop_watching();  // the recording is done: writes into its arrays are no longer its concern
    auto g = [&] {
      if constexpr (sizeof...(I) == 1) return std::move(std::get<0>(grads));
      else return std::move(grads);
    }();
    if constexpr (Aux) return std::make_tuple(value, std::get<1>(out), std::move(g));
    else return std::make_pair(value, std::move(g));
  }

 private:
  template <std::size_t... K, class... A>
  static auto wrap(tape& t, std::index_sequence<K...>, const A&... args) {
    return std::tuple<decltype(wrap_one<K>(t, args))...>(wrap_one<K>(t, args)...);
  }
  template <std::size_t K, class A>
  static decltype(auto) wrap_one(tape& t, const A& a) {
    static_assert(!selected<K, I...> || parameter_tree<A>,
                  "fusor: a differentiated argument must be an array, or a tuple/pair/std::array/std::vector/"
                  "std::map of arrays (a parameter tree); pass other arguments as constants (leave them out of argnums)");
    if constexpr (selected<K, I...>) return param_tree(t, a);
    else return (a);  // passed through as a constant
  }

  F f_;
  std::shared_ptr<tape> tape_;
};

template <class F, std::size_t... I>
class grad_fn {
 public:
  explicit grad_fn(F f) : inner_(std::move(f)) {}
  template <class... A>
  auto operator()(const A&... args) const {
    return std::move(inner_(args...).second);
  }

 private:
  value_and_grad_fn<F, false, I...> inner_;
};
}  // namespace detail

/// The pullback of vjp: cotangent of f's output -> cotangent of its input. Holds the recording
/// (and reads the input array, which must stay alive and unchanged); call it as often as needed.
template <class T, class R, class B>
class pullback {
 public:
  pullback(std::shared_ptr<tape> t, var<T, B> x, var<R, B> y) : tape_(std::move(t)), x_(x), y_(y) {}
  array<T, B> operator()(const array<R, B>& cotangent) const {
    if (cotangent.shape() != y_.shape())
      throw tape_error("fusor: the cotangent must have the output's shape " + to_string(y_.shape()) + ", got " +
                       to_string(cotangent.shape()));
    tape_->clear_adjoints();
    fusor::ext::assign_expr(detail::adjoint_leaf<R, B>(*tape_, y_.id()), cotangent.as_leaf(), false);
    tape_->slot_at(y_.id()).adjoint_written = true;
    tape_->run_backward();
    return array<T, B>(gradient(x_));
  }
  /// The shape of f's output (what a cotangent must have).
  const extents& output_shape() const { return y_.shape(); }

 private:
  std::shared_ptr<tape> tape_;
  var<T, B> x_;
  var<R, B> y_;
};

/// f(x) and its pullback (JAX's vjp): pullback(c) is cᵀ·∂f/∂x, by one backward pass over the
/// recording made here. f returns a variable or an expression of variables (any shape).
template <class F, class T, class B>
auto vjp(F f, const array<T, B>& x) {
  auto t = std::make_shared<tape>();
  const use_tape active(*t);
  const var<T, B> xv = param(*t, x);
  const auto y = detail::loss_var(f(xv));
  using R = value_t<decltype(y)>;
  array<R, B> value(y.shape());
  fusor::ext::assign_expr(value.as_leaf(), y.as_leaf().value, false);
  return std::make_pair(std::move(value), pullback<T, R, B>(t, xv, y));
}

namespace detail {
// The rows of the Jacobian from a recording: one pullback per output element.
template <class T, class R, class B>
array<T, B> jacobian_rows(const array<R, B>& y, const pullback<T, R, B>& pb, const array<T, B>& x) {
  const index_t m = y.size(), n = x.size();
  extents s = y.shape();
  for (int k = 0; k < x.ndim(); ++k) s.push_back(x.shape()[k]);
  array<T, B> jac(s);
  if (m == 0 || n == 0) return jac;
  auto rows = jac.reshape(extents{m, n});
  array<R, B> basis = zeros<R, B>(y.shape());
  auto flat = basis.reshape(extents{m});
  for (index_t i = 0; i < m; ++i) {
    flat(range(i, i + 1)) = R(1);
    const array<T, B> row = pb(basis);
    rows(i, all) = row.reshape(extents{n});
    flat(range(i, i + 1)) = R(0);
  }
  return jac;
}
}  // namespace detail

/// The Jacobian by reverse mode (JAX's jacrev): shape f(x).shape + x.shape, one backward pass per
/// output element over one recording. Suits functions with fewer outputs than inputs.
template <class F, class T, class B>
array<T, B> jacrev(F f, const array<T, B>& x) {
  const auto [y, pb] = vjp(std::move(f), x);
  return detail::jacobian_rows(y, pb, x);
}

/// The Jacobian, by forward mode when f has at least as many outputs as inputs, else by reverse
/// mode (JAX's advice, made automatic: the cheaper of jacfwd and jacrev for the shape). The
/// recording that tells the output's size is the one reverse mode uses.
template <class F, class T, class B>
array<T, B> jacobian(F f, const array<T, B>& x) {
  const auto [y, pb] = vjp(f, x);
  if (y.size() >= x.size()) return jacfwd(std::move(f), x);
  return detail::jacobian_rows(y, pb, x);
}

/// The gradient of f (a function of arrays returning one number) with respect to its first
/// argument: ad::grad(f)(x) is an array of x's shape (JAX's grad).
template <class F>
auto grad(F f) {
  return detail::grad_fn<F, 0>(std::move(f));
}
/// The gradients with respect to the arguments argnums selects: a tuple of arrays.
template <class F, std::size_t... I>
auto grad(F f, argnums_t<I...>) {
  return detail::grad_fn<F, I...>(std::move(f));
}
/// (f(x), grad f(x)) from one recording (JAX's value_and_grad).
template <class F>
auto value_and_grad(F f) {
  return detail::value_and_grad_fn<F, false, 0>(std::move(f));
}
template <class F, std::size_t... I>
auto value_and_grad(F f, argnums_t<I...>) {
  return detail::value_and_grad_fn<F, false, I...>(std::move(f));
}
/// f returns (loss, aux): the call gives (value, aux, gradient).
template <class F>
auto value_and_grad(F f, has_aux_t) {
  return detail::value_and_grad_fn<F, true, 0>(std::move(f));
}
template <class F, std::size_t... I>
auto value_and_grad(F f, has_aux_t, argnums_t<I...>) {
  return detail::value_and_grad_fn<F, true, I...>(std::move(f));
}

/// The Hessian-vector product H(x)·v of f (a function returning one number) without forming H:
/// forward over reverse, i.e. one reverse pass over a recording on dual numbers seeded with v
/// (JAX's jvp of grad). Costs about two gradients.
template <class F, class T, class B>
array<T, B> hvp(F f, const array<T, B>& x, const array<T, B>& v) {
  const array<dual<T>, B> xd = make_dual(x, v);
  const auto g = grad(std::move(f))(xd);
  return array<T, B>(tangent(g, 0));
}

/// The Hessian of f (a function returning one number): shape x.shape + x.shape, by forward over
/// reverse (jacfwd of grad: ceil(n / 8) reverse passes over dual numbers of 8 tangents).
template <class F, class T, class B>
array<T, B> hessian(F f, const array<T, B>& x) {
  auto g = grad(std::move(f));
  return jacfwd([&g](const auto& seeded) { return g(array<value_t<std::remove_cvref_t<decltype(seeded)>>, B>(seeded)); },
                x);
}

}  // namespace fusor::ad
