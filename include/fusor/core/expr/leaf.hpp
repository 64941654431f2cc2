#pragma once
// The expression vocabulary shared by every node: the opt-in `expression` concept and `leaf`,
// the trivially copyable (pointer, shape, strides) that stands for an array inside a tree.
#include <type_traits>

#include "../backend.hpp"
#include "../dtype.hpp"
#include "../extents.hpp"

namespace fusor {

/// Opt-in trait: a type takes part in lazy expressions when this is specialised true.
template <class E>
inline constexpr bool is_expression_v = false;

/// Arrays, views and expression nodes: anything with an element type, a backend, and a shape
/// known at run time.
template <class E>
concept expression = is_expression_v<std::remove_cvref_t<E>>;

template <class E>
using value_t = typename std::remove_cvref_t<E>::value_type;
template <class E>
using backend_of_t = typename std::remove_cvref_t<E>::backend_type;

/// An array inside an expression: pointer, shape and strides in elements. Plain data, so a
/// whole tree of nodes can be copied into a kernel or a thread as is. Never owns memory.
template <class T, class B>
struct leaf {
  using value_type = T;
  using backend_type = B;
  T* data;
  extents shape;
  extents strides;
};
template <class T, class B>
inline constexpr bool is_expression_v<leaf<T, B>> = true;

template <class T, class B>
const extents& expr_shape(const leaf<T, B>& l) {
  return l.shape;
}

namespace detail {
/// Evaluates `e` into `dst` (shapes already broadcast-compatible); defined in assign.hpp.
template <class T, class B, class E>
void assign_expr(const leaf<T, B>& dst, const E& e, bool check_alias);
}  // namespace detail

}  // namespace fusor
