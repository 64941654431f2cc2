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

namespace detail {
/// The same structure as tree a, with fn applied to each leaf (anything that is not a tuple, pair,
/// std::array, std::vector or map: an array, a variable). One walk for param_tree and gradient_tree.
template <class A, class F>
auto map_tree(const A& a, const F& fn) {
  using X = std::remove_cvref_t<A>;
  constexpr int k = tree_kind_v<X>;
  if constexpr (k <= 1) {
    return fn(a);
  } else if constexpr (k == 2) {
    return std::apply([&](const auto&... e) { return std::make_tuple(map_tree(e, fn)...); }, a);
  } else if constexpr (k == 3) {
    return std::make_pair(map_tree(a.first, fn), map_tree(a.second, fn));
  } else if constexpr (k == 4) {
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return std::array<decltype(map_tree(a[0], fn)), sizeof...(I)>{map_tree(a[I], fn)...};
    }(std::make_index_sequence<std::tuple_size_v<X>>{});
  } else if constexpr (k == 5) {
    std::vector<decltype(map_tree(*a.begin(), fn))> out;
    out.reserve(a.size());
    for (const auto& e : a) out.push_back(map_tree(e, fn));
    return out;
  } else {
    using V = decltype(map_tree(a.begin()->second, fn));
    std::conditional_t<k == 6, std::map<typename X::key_type, V>, std::unordered_map<typename X::key_type, V>> out;
    for (const auto& [key, e] : a) out.emplace(key, map_tree(e, fn));
    return out;
  }
}
}  // namespace detail

/// The tree with every array made a parameter on t (the arrays are borrowed, not copied: keep them
/// unchanged until the backward pass). Keys and order are kept.
template <parameter_tree A>
auto param_tree(tape& t, const A& a) {
  return detail::map_tree(a, [&t](const auto& x) { return param(t, x); });
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
  return detail::map_tree(v, [](const auto& x) {
    static_assert(is_var_v<std::remove_cvref_t<decltype(x)>>,
                  "fusor: gradient_tree takes a variable or a tuple/pair/std::array/std::vector/map of variables");
    return gradient(x).copy();
  });
}

namespace detail {
/// Arrays in the structure of v's tree, one per variable, each made its variable's adjoint buffer
/// (tape::borrow_adjoint): a backward pass writes the gradients straight into the arrays handed
/// back, with no copy out of the tape. Call finish_gradient_tree after the backward pass.
template <class V>
auto borrowed_gradient_tree(tape& t, const V& v) {
  return map_tree(v, [&t](const auto& x) {
    using X = std::remove_cvref_t<decltype(x)>;
    array<typename X::value_type, typename X::backend_type> g(x.shape());
    t.borrow_adjoint<typename X::value_type, typename X::backend_type>(x.id(), g.data());
    return g;
  });
}
/// Zero-fills the gradients of v's tree that no backward pass wrote (an unused parameter).
template <class V>
void finish_gradient_tree(const V& v) {
  map_tree(v, [](const auto& x) {
    (void)gradient(x);
    return 0;
  });
}
}  // namespace detail

}  // namespace fusor::ad
