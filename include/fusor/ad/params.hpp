#pragma once
// Several parameters as one argument: KlongPy's loss:>[w b], JAX's pytrees, Mithril's parameter
// dict. A parameter tree is an array, or a std::tuple / std::pair / std::array / std::vector of
// parameter trees, or a std::map / std::unordered_map from keys to parameter trees, nested as
// deep as wanted. ad::grad(f)(tree) calls f with the same structure holding variables and returns
// the gradients in that structure (arrays where the tree had arrays), from one recording.
#include <array>
#include <cstddef>
#include <map>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../core/array.hpp"
#include "../core/shape_ops.hpp"
#include "record.hpp"

namespace fusor::ad {

namespace detail {
template <class A>
struct tree_kind {
  static constexpr int value = 0;  // not a tree
};
template <class T, class B>
struct tree_kind<array<T, B>> {
  static constexpr int value = 1;  // a leaf
};
template <class... A>
struct tree_kind<std::tuple<A...>> {
  static constexpr int value = 2;
};
template <class A, class C>
struct tree_kind<std::pair<A, C>> {
  static constexpr int value = 3;
};
template <class A, std::size_t N>
struct tree_kind<std::array<A, N>> {
  static constexpr int value = 4;
};
template <class A, class Alloc>
struct tree_kind<std::vector<A, Alloc>> {
  static constexpr int value = 5;
};
template <class K, class A, class C, class Alloc>
struct tree_kind<std::map<K, A, C, Alloc>> {
  static constexpr int value = 6;
};
template <class K, class A, class H, class E, class Alloc>
struct tree_kind<std::unordered_map<K, A, H, E, Alloc>> {
  static constexpr int value = 7;
};
template <class A>
inline constexpr int tree_kind_v = tree_kind<std::remove_cvref_t<A>>::value;

template <class A>
constexpr bool is_parameter_tree() {
  using X = std::remove_cvref_t<A>;
  constexpr int k = tree_kind_v<X>;
  if constexpr (k == 1) return true;
  else if constexpr (k == 2)
    return []<class... E>(std::type_identity<std::tuple<E...>>) {
      return (is_parameter_tree<E>() && ...);
    }(std::type_identity<X>{});
  else if constexpr (k == 3) return is_parameter_tree<typename X::first_type>() && is_parameter_tree<typename X::second_type>();
  else if constexpr (k == 4 || k == 5) return is_parameter_tree<typename X::value_type>();
  else if constexpr (k == 6 || k == 7) return is_parameter_tree<typename X::mapped_type>();
  else return false;
}
}  // namespace detail

/// An array, or a tuple/pair/std::array/std::vector/std::map/std::unordered_map of parameter
/// trees: what grad, value_and_grad and param_tree differentiate with respect to.
template <class A>
concept parameter_tree = detail::is_parameter_tree<A>();

/// The tree with every array made a parameter on t (the arrays are borrowed, not copied: keep them
/// unchanged until the backward pass). Keys and order are kept.
template <parameter_tree A>
auto param_tree(tape& t, const A& a) {
  using X = std::remove_cvref_t<A>;
  constexpr int k = detail::tree_kind_v<X>;
  if constexpr (k == 1) {
    return param(t, a);
  } else if constexpr (k == 2) {
    return std::apply([&](const auto&... e) { return std::make_tuple(param_tree(t, e)...); }, a);
  } else if constexpr (k == 3) {
    return std::make_pair(param_tree(t, a.first), param_tree(t, a.second));
  } else if constexpr (k == 4) {
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      using V = decltype(param_tree(t, a[0]));
      return std::array<V, sizeof...(I)>{param_tree(t, a[I])...};
    }(std::make_index_sequence<std::tuple_size_v<X>>{});
  } else if constexpr (k == 5) {
    std::vector<decltype(param_tree(t, *a.begin()))> out;
    out.reserve(a.size());
    for (const auto& e : a) out.push_back(param_tree(t, e));
    return out;
  } else {
    using V = decltype(param_tree(t, a.begin()->second));
    std::conditional_t<k == 6, std::map<typename X::key_type, V>, std::unordered_map<typename X::key_type, V>> out;
    for (const auto& [key, e] : a) out.emplace(key, param_tree(t, e));
    return out;
  }
}

/// The same on this thread's active tape (ad::use_tape, or the transform calling the function).
template <parameter_tree A>
auto param_tree(const A& a) {
  return param_tree(active_tape(), a);
}

/// The gradients of a tree of variables after backward(), copied out of the tape into arrays, in
/// the tree's structure (they outlive the tape's next reset).
template <class V>
auto gradient_tree(const V& v) {
  if constexpr (is_var_v<V>) {
    return gradient(v).copy();
  } else if constexpr (detail::tree_kind_v<V> == 2) {
    return std::apply([](const auto&... e) { return std::make_tuple(gradient_tree(e)...); }, v);
  } else if constexpr (detail::tree_kind_v<V> == 3) {
    return std::make_pair(gradient_tree(v.first), gradient_tree(v.second));
  } else if constexpr (detail::tree_kind_v<V> == 4) {
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      using G = decltype(gradient_tree(v[0]));
      return std::array<G, sizeof...(I)>{gradient_tree(v[I])...};
    }(std::make_index_sequence<std::tuple_size_v<V>>{});
  } else if constexpr (detail::tree_kind_v<V> == 5) {
    std::vector<decltype(gradient_tree(*v.begin()))> out;
    out.reserve(v.size());
    for (const auto& e : v) out.push_back(gradient_tree(e));
    return out;
  } else {
    static_assert(detail::tree_kind_v<V> == 6 || detail::tree_kind_v<V> == 7,
                  "fusor: gradient_tree takes a variable or a tuple/pair/std::array/std::vector/map of variables");
    using G = decltype(gradient_tree(v.begin()->second));
    std::conditional_t<detail::tree_kind_v<V> == 6, std::map<typename V::key_type, G>,
                       std::unordered_map<typename V::key_type, G>>
        out;
    for (const auto& [key, e] : v) out.emplace(key, gradient_tree(e));
    return out;
  }
}

}  // namespace fusor::ad
