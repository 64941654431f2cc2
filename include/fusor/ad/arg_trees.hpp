#pragma once
// The arguments of a function that a node calls again in the backward pass (ad::checkpoint, a
// gradient taken of variables), as the node keeps them: each argument a parameter tree (an array, a
// variable, or a tuple/pair/std::array/std::vector/map of them) or a plain value, its variables
// kept as operands of the enclosing tape and its constant arrays read where they lie.
#include <array>
#include <cstddef>
#include <map>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ops.hpp"
#include "params.hpp"
#include "tape.hpp"

namespace fusor::ad::detail {

// An argument leaf as the node keeps it: a variable (an expression of variables is evaluated
// first) as an operand of the enclosing tape; a constant array or expression as an operand read
// where it lies; anything else by value.
template <class T, class B>
struct kept_variable {
  operand<T, B> o;
};
template <class T, class B>
struct kept_constant {
  operand<T, B> o;
};
template <class X>
inline constexpr bool is_kept_variable_v = false;
template <class T, class B>
inline constexpr bool is_kept_variable_v<kept_variable<T, B>> = true;
template <class X>
inline constexpr bool is_kept_constant_v = false;
template <class T, class B>
inline constexpr bool is_kept_constant_v<kept_constant<T, B>> = true;

/// Argument tree a with each leaf kept for a node of tape t (kept_variable, kept_constant, or the
/// value itself).
template <class A>
auto kept_tree(tape& t, const A& a) {
  return map_tree(a, [&t](const auto& x) {
    using X = std::remove_cvref_t<decltype(x)>;
    if constexpr (expression<X>) {
      using T = value_t<node_t<X>>;
      using B = backend_of_t<node_t<X>>;
      if constexpr (holds_vars_v<X>) return kept_variable<T, B>{make_operand<T>(t, x)};
      else return kept_constant<T, B>{make_operand<T>(t, x)};
    } else {
      return x;
    }
  });
}

/// Whether parameter-tree-shaped argument A holds variables anywhere.
template <class A>
constexpr bool tree_holds_vars() {
  using X = std::remove_cvref_t<A>;
  constexpr int k = tree_kind_v<X>;
  if constexpr (k <= 1) return holds_vars_v<X>;
  else if constexpr (k == 2)
    return []<class... E>(std::type_identity<std::tuple<E...>>) {
      return (tree_holds_vars<E>() || ...);
    }(std::type_identity<X>{});
  else if constexpr (k == 3) return tree_holds_vars<typename X::first_type>() || tree_holds_vars<typename X::second_type>();
  else if constexpr (k == 4 || k == 5) return tree_holds_vars<typename X::value_type>();
  else return tree_holds_vars<typename X::mapped_type>();
}

/// fn(a leaf of s, the leaf at the same place in i) over two trees of one structure, in order.
template <class S, class I, class F>
void zip_tree(const S& s, const I& i, const F& fn) {
  constexpr int k = tree_kind_v<S>;
  if constexpr (k <= 1) {
    fn(s, i);
  } else if constexpr (k == 2) {
    [&]<std::size_t... J>(std::index_sequence<J...>) {
      (zip_tree(std::get<J>(s), std::get<J>(i), fn), ...);
    }(std::make_index_sequence<std::tuple_size_v<S>>{});
  } else if constexpr (k == 3) {
    zip_tree(s.first, i.first, fn);
    zip_tree(s.second, i.second, fn);
  } else if constexpr (k == 4 || k == 5) {
    for (std::size_t j = 0; j < s.size(); ++j) zip_tree(s[j], i[j], fn);
  } else {
    for (const auto& [key, e] : s) zip_tree(e, i.at(key), fn);
  }
}

/// A tree of s's structure with fn(a leaf of s, the leaf at the same place in i) at each leaf.
template <class S, class I, class F>
auto map_tree2(const S& s, const I& i, const F& fn) {
  using X = std::remove_cvref_t<S>;
  constexpr int k = tree_kind_v<X>;
  if constexpr (k <= 1) {
    return fn(s, i);
  } else if constexpr (k == 2) {
    return [&]<std::size_t... J>(std::index_sequence<J...>) {
      return std::make_tuple(map_tree2(std::get<J>(s), std::get<J>(i), fn)...);
    }(std::make_index_sequence<std::tuple_size_v<X>>{});
  } else if constexpr (k == 3) {
    return std::make_pair(map_tree2(s.first, i.first, fn), map_tree2(s.second, i.second, fn));
  } else if constexpr (k == 4) {
    return [&]<std::size_t... J>(std::index_sequence<J...>) {
      return std::array<decltype(map_tree2(s[0], i[0], fn)), sizeof...(J)>{map_tree2(s[J], i[J], fn)...};
    }(std::make_index_sequence<std::tuple_size_v<X>>{});
  } else if constexpr (k == 5) {
    std::vector<decltype(map_tree2(s[0], i[0], fn))> out;
    out.reserve(s.size());
    for (std::size_t j = 0; j < s.size(); ++j) out.push_back(map_tree2(s[j], i[j], fn));
    return out;
  } else {
    using V = decltype(map_tree2(s.begin()->second, i.at(s.begin()->first), fn));
    std::conditional_t<k == 6, std::map<typename X::key_type, V>, std::unordered_map<typename X::key_type, V>> out;
    for (const auto& [key, e] : s) out.emplace(key, map_tree2(e, i.at(key), fn));
    return out;
  }
}

/// The tape of the variables in argument trees (one tape, or a tape_error naming `what`); nullptr
/// when the containers that could hold variables are empty.
template <class... A>
tape* tape_of_trees(const char* what, const A&... args) {
  tape* t = nullptr;
  auto visit = [&](const auto& leaf_arg) {
    if constexpr (holds_vars_v<std::remove_cvref_t<decltype(leaf_arg)>>) {
      tape* u = common_tape(what, leaf_arg);
      if (t != nullptr && u != t)
        throw tape_error(std::string("fusor: ") + what +
                         " with variables from two different tapes (expected every argument on one tape)");
      t = u;
    }
    return 0;
  };
  (map_tree(args, visit), ...);
  return t;
}

/// Records on this thread whatever an enclosing no_grad says (a function called again in a
/// backward pass must record, whatever scope the backward pass was started in).
class recording_on {
 public:
  recording_on() : saved_(no_grad_depth) { no_grad_depth = 0; }
  ~recording_on() { no_grad_depth = saved_; }
  recording_on(const recording_on&) = delete;
  recording_on& operator=(const recording_on&) = delete;

 private:
  int saved_;
};

}  // namespace fusor::ad::detail
