#pragma once
// Variables: array handles on a tape. Arithmetic on variables builds the same lazy expression
// trees as arithmetic on arrays (a variable's node is a var_leaf: its value's leaf plus the slot
// it came from), so `sin(x) * w + b` is one tree; the tree is evaluated, and recorded as one tape
// node, when it is materialised: a variable made from it (`var y = expr`, ad::eval), or a
// reduction (ad's sum, mean, ... found by argument-dependent lookup).
//
// The engine never sees a var_leaf: recording evaluates the tree with its variables replaced by
// their plain leaves (strip), and the engine's walk rejects a var_leaf with a sentence, so an
// expression of variables cannot be evaluated by a path that would drop its gradient.
#include <complex>
#include <cstdint>
#include <string>
#include <type_traits>

#include "../core/array.hpp"
#include "../core/expr/nodes.hpp"
#include "../core/slice.hpp"
#include "../core/view.hpp"
#include "dual.hpp"
#include "tape.hpp"
#include "../core/ext.hpp"

namespace fusor::ad {

/// The element types reverse mode differentiates: float and double, float16 and bfloat16 (computed
/// in float32 and rounded on store, as the engine does; mixed precision: ad::autocast), complex
/// numbers of float and double, and dual numbers of float and double (a tape of duals is forward
/// over reverse: hessian and hvp).
///
/// A complex variable's adjoint is dL/d(Re z) + i dL/d(Im z) for the real loss L (PyTorch's
/// convention): the direction of steepest ascent, so z -= lr * grad descends as for reals. Through
/// a holomorphic step w = f(z) it is g_w times the conjugate of f'(z).
template <class T>
inline constexpr bool differentiable_v = std::is_floating_point_v<T> || fusor::ext::small_float_v<T>;
template <class T, int N>
inline constexpr bool differentiable_v<dual<T, N>> = std::is_floating_point_v<T>;
template <class T>
inline constexpr bool differentiable_v<std::complex<T>> = std::is_floating_point_v<T>;

/// The real element types among them (float, double and their dual numbers): what operations
/// that compare or order values (max, softmax, ...) differentiate.
template <class T>
inline constexpr bool real_differentiable_v = differentiable_v<T> && !is_complex_v<T>;

namespace detail {
/// The real number type of R: R itself, or a dual number's lane type.
template <class R>
struct lane_of {
  using type = R;
};
template <class T, int N>
struct lane_of<dual<T, N>> {
  using type = T;
};
template <class R>
using lane_t = typename lane_of<R>::type;

/// x as a constant of element type V (a dual's value, with zero tangents).
template <class V>
constexpr V real_constant(double x) {
  if constexpr (std::is_floating_point_v<V> || is_complex_v<V> || fusor::ext::small_float_v<V>) {
    return V(x);
  } else {
    V v{};
    v.value = decltype(v.value)(x);
    return v;
  }
}
}  // namespace detail

/// A variable inside an expression: where its values are (possibly a view: a slice of the
/// variable) and which slot of which tape they belong to.
template <class T, class B>
struct var_leaf {
  using value_type = T;
  using backend_type = B;
  leaf<T, B> value;
  tape* owner;
  std::uint32_t id;
  std::uint64_t generation;
  const detail::tape_identity* identity;  // checked before owner is used: it outlives the tape
};

template <class T, class B>
const extents& expr_shape(const var_leaf<T, B>& l) {
  return l.value.shape;
}

namespace detail {
// A variable's recording is its tape's current one, or a tape_error: read from the tape's identity
// cell, never from the tape, which may be gone.
inline void check_recording(const tape_identity* identity, std::uint64_t generation, const char* what) {
  const std::uint64_t now = identity->epoch.load(std::memory_order_relaxed);
  if (now == generation) return;
  throw tape_error(std::string("fusor: ") + what +
                   (now == 0 ? " of a variable whose tape no longer exists (expected the tape to outlive its variables)"
                             : " of a variable from an earlier recording: its tape was reset() since, or it no longer "
                               "exists (record it again)"));
}
}  // namespace detail

/// A variable on a tape: a handle (tape, slot, generation), cheap to copy. Its value is read-only;
/// it takes part in expressions like an array, and is made from an expression (recorded as one
/// node) or by tape.param(array).
template <class T, class B = default_backend>
class var {
  static_assert(differentiable_v<T>,
                "fusor: reverse-mode variables hold float, double, float16 or bfloat16, complex or dual numbers of float or double (convert with astype<double>())");

 public:
  using value_type = T;
  using backend_type = B;

  var() = default;
  var(tape* t, std::uint32_t id) : tape_(t), identity_(t->identity()), id_(id), generation_(t->generation()) {}
  /// Evaluates an expression of variables (and arrays) into a new variable: one tape node.
  template <expression E>
    requires(!std::is_same_v<std::remove_cvref_t<E>, var>)
  var(const E& e);  // defined in record.hpp

  /// The value, as a view (valid while the tape keeps this recording; do not write through it).
  array_view<T, B> value() const {
    check("value");
    const auto& s = tape_->slot_at(id_);
    return {static_cast<T*>(s.value), s.shape, contiguous_strides(s.shape)};
  }
  const extents& shape() const {
    check("shape");
    return tape_->slot_at(id_).shape;
  }
  index_t size() const { return shape().numel(); }
  int ndim() const { return shape().size(); }
  /// The one value of a 0-d or one-element variable (a loss).
  T item() const {
    const auto v = value();
    if (v.size() != 1)
      throw shape_error("fusor: item() needs a variable of one element, got shape " + to_string(v.shape()));
    T x;
    backend_memory<B>::copy_to_host(&x, v.data(), 1);
    // a value read to the host while ad::compile records would be the recorded one in every replay
    tape_->not_replayable("item() (a value read to the host while recording: replays would reuse it)");
    return x;
  }
  /// Whether this variable depends on a parameter (has a gradient).
  bool requires_grad() const {
    check("requires_grad");
    return tape_->slot_at(id_).requires_grad;
  }
  tape* owner() const { return tape_; }
  std::uint32_t id() const { return id_; }

  var_leaf<T, B> as_leaf() const {
    check("use");
    const auto& s = tape_->slot_at(id_);
    return {leaf<T, B>{static_cast<T*>(s.value), s.shape, contiguous_strides(s.shape)}, tape_, id_, generation_, identity_};
  }
  /// A view of the variable (slicing, as for arrays): an expression whose adjoint goes to the
  /// viewed elements.
  template <class... S>
    requires view_subscripts<S...>
  var_leaf<T, B> operator()(const S&... s) const {
    var_leaf<T, B> l = as_leaf();
    const auto w = fusor::ext::subscript_window(l.value.shape, l.value.strides, s...);
    l.value.data += w.offset;
    l.value.shape = w.shape;
    l.value.strides = w.strides;
    return l;
  }

  void check(const char* what) const {
    if (tape_ == nullptr)
      throw tape_error(std::string("fusor: ") + what + " of a variable that was never made (default-constructed var)");
    detail::check_recording(identity_, generation_, what);
  }

 private:
  tape* tape_ = nullptr;
  const detail::tape_identity* identity_ = nullptr;
  std::uint32_t id_ = 0;
  std::uint64_t generation_ = 0;
};

template <class X>
inline constexpr bool is_var_v = false;
template <class T, class B>
inline constexpr bool is_var_v<var<T, B>> = true;

}  // namespace fusor::ad

namespace fusor {
template <class T, class B>
inline constexpr bool is_expression_v<ad::var_leaf<T, B>> = true;
template <class T, class B>
inline constexpr bool is_expression_v<ad::var<T, B>> = true;
}  // namespace fusor

namespace fusor::ad {

namespace detail {
// Every walk below is one of core's generic traversals (core/expr/traverse.hpp) with what it
// does at a terminal: a variable is a terminal of its own kind.
template <class E>
struct is_var_leaf : std::false_type {};
template <class T, class B>
struct is_var_leaf<var_leaf<T, B>> : std::true_type {};
template <class E>
inline constexpr bool is_var_leaf_v = is_var_leaf<std::remove_cvref_t<E>>::value;

/// How many variable leaves tree E has (positions 0 ... n-1 in tree order).
template <class E>
inline constexpr int var_count = terminal_count<is_var_leaf, E>();

/// The tree with its variables as plain leaves: what the engine evaluates.
template <class E>
auto strip(const E& e) {
  return map_terminals(e, [](const auto& t) {
    if constexpr (is_var_leaf_v<decltype(t)>) return t.value;
    else return t;  // leaves, scalars, generators
  });
}
/// Calls fn on the variable leaves, in tree order.
template <class E, class Fn>
void for_each_var(const E& e, Fn&& fn) {
  for_each_terminal(e, [&](const auto& t) {
    if constexpr (is_var_leaf_v<decltype(t)>) fn(t);
  });
}
/// Calls fn on the constant arrays a tree reads (its array leaves: variables are not).
template <class E, class Fn>
void for_each_constant(const E& e, Fn&& fn) {
  for_each_leaf(e, fn);
}
/// Whether tree e draws random numbers lazily (a Philox draw of fusor::lazy::random: its numbers
/// are fixed by the stream it took when it was made, so a replay would draw them again).
template <class E>
bool draws_random(const E& e) {
  bool any = false;
  for_each_terminal(e, [&](const auto& t) {
    if constexpr (requires { t.gen.seed; t.gen.stream; }) any = true;
  });
  return any;
}
}  // namespace detail

/// The expression with its variables as constants: no gradient flows through it (JAX's
/// stop_gradient, PyTorch's detach).
template <class E>
  requires expression<E>
auto stop_gradient(const E& e) {
  return detail::strip(fusor::ext::to_node(e));
}

}  // namespace fusor::ad
