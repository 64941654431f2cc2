#pragma once
// Gradients of gradients (reverse over reverse: grad of grad, jacrev of grad, a gradient penalty,
// a step of MAML): a gradient taken with respect to variables of an enclosing recording is itself
// recorded there, as one node whose outputs are the value and the gradients.
//
// The node's backward pass uses the symmetry of second derivatives rather than differentiating the
// operations of the inner backward pass. With u the cotangents of the gradient outputs ∇ₓf and c
// that of the value f, the cotangent of every argument z is
//     c ∇_z f + ∇_z ⟨∇ₓf, u⟩ = c ∇_z f + ∂/∂ε ∇_z f(x + εu, z)|ε=0,
// the primal and tangent parts of one reverse pass over dual numbers with x seeded along u (what
// ad::hvp runs). So the result is exact, a backward pass through the node costs one gradient on
// dual numbers (about two gradients), and it goes through every operation forward over reverse
// goes through (matmul, convolutions, softmax, the statistics, gathers), not only those whose
// adjoints are written as differentiable expressions.
#include <array>
#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "../core/array.hpp"
#include "../core/create.hpp"
#include "arg_trees.hpp"
#include "forward.hpp"
#include "ops.hpp"
#include "params.hpp"
#include "tape.hpp"
#include "../core/ext.hpp"

namespace fusor::ad::detail {

template <class F, bool Aux, std::size_t... I>
class value_and_grad_fn;  // transforms.hpp

/// The positions k with Mask[k] set, as an index sequence.
template <auto Mask>
struct mask_positions {
  static constexpr std::size_t count = [] {
    std::size_t n = 0;
    for (bool b : Mask) n += b ? 1 : 0;
    return n;
  }();
  static constexpr std::array<std::size_t, count> at = [] {
    std::array<std::size_t, count> p{};
    std::size_t j = 0;
    for (std::size_t k = 0; k < Mask.size(); ++k)
      if (Mask[k]) p[j++] = k;
    return p;
  }();
  template <std::size_t... J>
  static auto sequence(std::index_sequence<J...>) -> std::index_sequence<at[J]...>;
  using type = decltype(sequence(std::make_index_sequence<count>{}));
};

/// value_and_grad_fn differentiating the arguments an index sequence names.
template <class F, bool Aux, class Seq>
struct grad_over;
template <class F, bool Aux, std::size_t... S>
struct grad_over<F, Aux, std::index_sequence<S...>> {
  using type = value_and_grad_fn<F, Aux, S...>;
};

/// Where K is in I... (K must be there).
template <std::size_t K, std::size_t... I>
constexpr std::size_t position_of() {
  constexpr std::array<std::size_t, sizeof...(I)> is{I...};
  for (std::size_t j = 0; j < is.size(); ++j)
    if (is[j] == K) return j;
  return sizeof...(I);
}

/// The first leaf type of a tree type.
template <class X, int Kind = tree_kind_v<X>>
struct first_leaf {
  using type = X;
};
template <class E, class... R>
struct first_leaf<std::tuple<E, R...>, 2> : first_leaf<E> {};
template <class X>
struct first_leaf<X, 3> : first_leaf<typename X::first_type> {};
template <class X>
struct first_leaf<X, 4> : first_leaf<typename X::value_type> {};
template <class X>
struct first_leaf<X, 5> : first_leaf<typename X::value_type> {};
template <class X>
struct first_leaf<X, 6> : first_leaf<typename X::mapped_type> {};
template <class X>
struct first_leaf<X, 7> : first_leaf<typename X::mapped_type> {};

/// A kept leaf's value as an array of its own (a variable's value or a constant array, copied).
template <class S>
auto kept_value(const S& s) {
  using T = typename decltype(s.o)::value_type;
  using B = typename decltype(s.o)::backend_type;
  return array<T, B>(s.o.view());
}

/// Argument K of the call on arrays that gives the node's outputs: a tree holding variables as
/// arrays of their values, any other argument as given.
template <std::size_t K, class A, class Stored>
decltype(auto) value_argument(const Stored& stored, const A& a) {
  if constexpr (tree_holds_vars<A>()) {
    return map_tree(std::get<K>(stored), [](const auto& s) {
      using S = std::remove_cvref_t<decltype(s)>;
      if constexpr (is_kept_variable_v<S> || is_kept_constant_v<S>) return kept_value(s);
      else return s;
    });
  } else {
    return (a);
  }
}

template <class T>
constexpr void require_real_for_nesting() {
  static_assert(std::is_floating_point_v<T>,
                "fusor: a gradient of variables (reverse over reverse) takes float or double variables: its backward "
                "pass runs on dual numbers, which do not nest (no third derivatives) and have no complex form");
}

/// A kept leaf's value as dual numbers seeded along `direction` (a contiguous buffer of its
/// shape), or with zero tangents (nullptr): one pass reading the value where it lies (a strided
/// value is copied first for the seed, which reads contiguous buffers).
template <class S, class T = typename decltype(S::o)::value_type>
auto kept_dual(const S& s, const std::type_identity_t<T>* direction) {
  using B = typename decltype(s.o)::backend_type;
  require_real_for_nesting<T>();
  const extents& shape = s.o.shape();
  if (direction == nullptr) return array<dual<T>, B>(s.o.view());  // promoted: zero tangents
  const auto seed = [&](const T* x) {
    return array<dual<T>, B>(generator_expr<direction_seed<T>, B>{{x, direction}, shape, contiguous_strides(shape)});
  };
  if (s.o.value.strides == contiguous_strides(shape)) return seed(s.o.value.data);
  return seed(kept_value(s).data());
}

/// The backward pass of a gradient taken of variables (see the file comment).
template <class Dual, auto Holds, class Stored, class Outs, class R, class B, std::size_t... I>
struct nested_grad_back {
  Dual dual_grad;  // value_and_grad_fn over the argument trees that hold variables, run on duals
  Stored stored;   // the arguments, kept
  Outs outs;       // per selected argument, the tree of its gradient's output variables
  var<R, B> value; // f's value, an output too (value_and_grad)

  void operator()(tape& t) const {
    bool used = t.slot_at(value.id()).adjoint_written;
    map_tree(outs, [&](const auto& v) {
      used = used || t.slot_at(v.id()).adjoint_written;
      return 0;
    });
    if (!used) return;  // nothing downstream read the value or a gradient
    const recording_on record;
    auto args = [&]<std::size_t... K>(std::index_sequence<K...>) {
      return std::make_tuple(dual_argument<K>()...);
    }(std::make_index_sequence<std::tuple_size_v<Stored>>{});
    auto result = std::apply(dual_grad, args);
    constexpr std::size_t last = std::tuple_size_v<decltype(result)> - 1;
    accumulate_all(t, std::get<last>(result), typename mask_positions<Holds>::type{});
  }

 private:
  // argument K on dual numbers: a selected one seeded along its gradient's cotangent, another that
  // holds variables unseeded (its gradient's tangent is the mixed second derivative), any other
  // argument as it was given
  template <std::size_t K>
  auto dual_argument() const {
    const auto& s = std::get<K>(stored);
    if constexpr (((K == I) || ...)) {
      return map_tree2(s, std::get<position_of<K, I...>()>(outs), [](const auto& kept, const auto& out) {
        using T = typename std::remove_cvref_t<decltype(kept.o)>::value_type;
        const auto& slot = out.owner()->slot_at(out.id());
        return kept_dual(kept, slot.adjoint_written ? static_cast<const T*>(slot.adjoint) : nullptr);
      });
    } else if constexpr (Holds[K]) {
      return map_tree(s, [](const auto& kept) {
        using S = std::remove_cvref_t<decltype(kept)>;
        if constexpr (is_kept_variable_v<S> || is_kept_constant_v<S>) return kept_dual(kept, nullptr);
        else return kept;
      });
    } else {
      return map_tree(s, [](const auto& kept) {
        using S = std::remove_cvref_t<decltype(kept)>;
        if constexpr (is_kept_constant_v<S>) return kept.o.view();
        else return kept;
      });
    }
  }

  template <class G, std::size_t... S>
  void accumulate_all(tape& t, const G& grads, std::index_sequence<S...>) const {
    const auto& vs = t.slot_at(value.id());
    const bool with_value = vs.adjoint_written;
    const R* c = static_cast<const R*>(vs.adjoint);
    auto tuple_of = [&]() -> decltype(auto) {
      if constexpr (sizeof...(S) == 1) return std::forward_as_tuple(grads);
      else return (grads);
    };
    const auto& gs = tuple_of();
    (zip_tree(std::get<S>(stored), std::get<position_of<S, S...>()>(gs),
              [&](const auto& kept, const auto& g) {
                using K = std::remove_cvref_t<decltype(kept)>;
                if constexpr (is_kept_variable_v<K>) {
                  if (!kept.o.grad) return;
                  const extents& shape = kept.o.shape();
                  if (with_value)
                    accumulate_into(t, kept.o, tangent(g, 0) + primal(g) * spread_scalar<R, B>(const_cast<R*>(c), shape),
                                    shape);
                  else
                    accumulate_into(t, kept.o, tangent(g, 0), shape);
                }
              }),
     ...);
  }

};

template <class Back>
struct nested_grad_node {
  Back* back;
};
template <class Back>
void nested_grad_backward(tape& t, const void* p) {
  (*static_cast<const nested_grad_node<Back>*>(p)->back)(t);
}

/// value_and_grad's call when an argument holds variables: the value and gradients computed on
/// arrays (self's recording), made output variables of the enclosing tape, with one node for the
/// backward pass through them. Returns what the call on arrays does, with variables for arrays.
template <bool Aux, std::size_t... I, class F, class Self, class... A>
auto nested_value_and_grad(const F& f, const Self& self, const A&... args) {
  tape* outer = tape_of_trees("taking a gradient", args...);
  if (outer == nullptr) {  // containers of variables, all empty: the outputs are constants
    if (!has_active_tape())
      throw tape_error("fusor: a gradient of empty containers of variables has no tape to record its outputs on "
                       "(expected a variable in an argument, or an active tape)");
    outer = &active_tape();
  }
  tape& t = *outer;
  t.not_replayable("a gradient of variables (reverse over reverse: its backward pass runs a reverse pass over dual "
                   "numbers, which a replay cannot)");
  using stored_t = std::tuple<decltype(kept_tree(t, args))...>;
  stored_t stored{kept_tree(t, args)...};
  bool needs = false;
  [&]<std::size_t... K>(std::index_sequence<K...>) {
    (map_tree(std::get<K>(stored),
              [&](const auto& s) {
                if constexpr (is_kept_variable_v<std::remove_cvref_t<decltype(s)>>) needs = needs || s.o.grad;
                return 0;
              }),
     ...);
  }(std::index_sequence_for<A...>{});

  auto result = [&]<std::size_t... K>(std::index_sequence<K...>) {
    return self.on_arrays(value_argument<K, A>(stored, args)...);
  }(std::index_sequence_for<A...>{});
  constexpr std::size_t last = std::tuple_size_v<decltype(result)> - 1;
  auto grads = [&] {
    if constexpr (sizeof...(I) == 1) return std::make_tuple(std::move(std::get<last>(result)));
    else return std::move(std::get<last>(result));
  }();
  using R = std::remove_cvref_t<decltype(std::get<0>(result))>;
  using B = typename first_leaf<std::remove_cvref_t<decltype(std::get<0>(grads))>>::type::backend_type;
  auto outs = map_tree(grads, [&](const auto& g) {
    using G = std::remove_cvref_t<decltype(g)>;
    auto [v, grad] = new_output<typename G::value_type, B>(t, g.shape(), needs);
    fusor::ext::assign_expr(output_leaf(v), g.as_leaf(), false);
    return v;
  });
  auto [value, grad] = new_output<R, B>(t, extents{}, needs);
  const R host_value = std::get<0>(result);
  backend_memory<B>::copy_from_host(output_leaf(value).data, &host_value, 1);
  if (grad) {
    constexpr std::array<bool, sizeof...(A)> holds{tree_holds_vars<A>()...};
    using dual_fn = typename grad_over<F, Aux, typename mask_positions<holds>::type>::type;
    using back_t = nested_grad_back<dual_fn, holds, stored_t, decltype(outs), R, B, I...>;
    back_t* kept = t.keep(back_t{dual_fn(f), std::move(stored), outs, value});
    t.record(&nested_grad_backward<back_t>, nested_grad_node<back_t>{kept});
  }
  auto returned = [&] {
    if constexpr (sizeof...(I) == 1) return std::get<0>(outs);
    else return outs;
  }();
  if constexpr (Aux) return std::make_tuple(value, std::move(std::get<1>(result)), std::move(returned));
  else return std::make_pair(value, std::move(returned));
}

}  // namespace fusor::ad::detail
