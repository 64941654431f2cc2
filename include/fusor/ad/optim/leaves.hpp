#pragma once
// The parameters an optimizer updates and the gradients it reads, paired leaf by leaf: both are
// parameter trees (params.hpp) of the same structure, walked together. Maps are matched by key,
// not by position, so two unordered_maps with the same keys pair up whatever their order; every
// mismatch (a missing or extra key, a vector of another length, an array of another shape) is an
// error that names where in the tree it is.
#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "../../core/array.hpp"
#include "../../core/error.hpp"
#include "../params.hpp"

namespace fusor::ad::optim {

namespace detail {

using fusor::ad::detail::tree_kind_v;

/// Where a leaf sits in a tree, as a chain of stack frames: rendered only for an error message.
struct tree_path {
  const tree_path* parent = nullptr;
  std::size_t index = 0;
  const std::string* key = nullptr;  // a string key of a map, else the index is shown

  std::string str() const {
    if (!parent) return "the parameters";
    return parent->str() + (key ? "[\"" + *key + "\"]" : "[" + std::to_string(index) + "]");
  }
};

template <class K>
const std::string* key_name(const K& k) {
  if constexpr (std::is_convertible_v<const K&, const std::string&>) return &static_cast<const std::string&>(k);
  else return nullptr;
}

/// The type of a tree's first array (a std::vector or map of none reads its element type).
template <class P>
auto leaf_type() {
  using X = std::remove_cvref_t<P>;
  constexpr int k = tree_kind_v<X>;
  if constexpr (k == 1) return std::type_identity<X>{};
  else if constexpr (k == 2) return leaf_type<std::tuple_element_t<0, X>>();
  else if constexpr (k == 3) return leaf_type<typename X::first_type>();
  else if constexpr (k == 4 || k == 5) return leaf_type<typename X::value_type>();
  else return leaf_type<typename X::mapped_type>();
}
template <class P>
using leaf_t = typename decltype(leaf_type<P>())::type;

/// One parameter and its gradient.
template <class T, class B>
struct leaf_pair {
  array<T, B>* param;
  const array<T, B>* grad;
};

template <class T, class B, class P, class G>
void zip(P& p, const G& g, std::vector<leaf_pair<T, B>>& out, const tree_path& at) {
  using X = std::remove_cvref_t<P>;
  using Y = std::remove_cvref_t<G>;
  constexpr int k = tree_kind_v<X>;
  static_assert(k >= 1, "fusor::ad::optim: parameters must be a parameter tree (an array, or a tuple, pair, std::array, "
                        "std::vector or map of parameter trees)");
  static_assert(k == tree_kind_v<Y> || (k == 6 && tree_kind_v<Y> == 7) || (k == 7 && tree_kind_v<Y> == 6),
                "fusor::ad::optim: the gradients must have the parameters' structure (ad::grad returns it)");
  if constexpr (k == 1) {
    static_assert(std::is_same_v<X, array<T, B>> && std::is_same_v<Y, array<T, B>>,
                  "fusor::ad::optim: every parameter and gradient of one optimizer has its element type and backend");
    if (p.shape() != g.shape())
      throw shape_error("fusor::ad::optim: " + at.str() + " has shape " + to_string(p.shape()) +
                        " but its gradient has shape " + to_string(g.shape()));
    out.push_back({&p, &g});
  } else if constexpr (k == 2 || k == 3 || k == 4) {
    static_assert(std::tuple_size_v<X> == std::tuple_size_v<Y>,
                  "fusor::ad::optim: the gradients must have the parameters' structure (ad::grad returns it)");
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (zip<T, B>(std::get<I>(p), std::get<I>(g), out, tree_path{&at, I, nullptr}), ...);
    }(std::make_index_sequence<std::tuple_size_v<X>>{});
  } else if constexpr (k == 5) {
    if (p.size() != g.size())
      throw shape_error("fusor::ad::optim: " + at.str() + " holds " + std::to_string(p.size()) +
                        " parameters but its gradients " + std::to_string(g.size()));
    for (std::size_t i = 0; i < p.size(); ++i) zip<T, B>(p[i], g[i], out, tree_path{&at, i, nullptr});
  } else {
    if (p.size() != g.size())
      throw value_error("fusor::ad::optim: " + at.str() + " has " + std::to_string(p.size()) + " keys but its gradients " +
                        std::to_string(g.size()));
    std::size_t i = 0;
    for (auto& [key, value] : p) {
      const tree_path here{&at, i++, key_name(key)};
      const auto it = g.find(key);
      if (it == g.end()) throw value_error("fusor::ad::optim: no gradient for " + here.str());
      zip<T, B>(value, it->second, out, here);
    }
  }
}

/// The (parameter, gradient) pairs of two trees, in the parameters' order.
template <class T, class B, class P, class G>
void leaf_pairs(P& params, const G& grads, std::vector<leaf_pair<T, B>>& out) {
  out.clear();
  zip<T, B>(params, grads, out, tree_path{});
}

}  // namespace detail

}  // namespace fusor::ad::optim
