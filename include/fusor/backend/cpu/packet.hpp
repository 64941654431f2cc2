#pragma once
// The xsimd side of the functors: which lane type a batch has, and the few operations whose SIMD
// form differs from the scalar one (selections, NaN-propagating min/max, NumPy's mod).
#include <xsimd/xsimd.hpp>

#include "../../core/functors.hpp"

namespace fusor {

template <class T, class A>
struct lane_of<xsimd::batch<T, A>> {
  using type = T;
};

namespace detail::simd {

template <class L>
using batch = xsimd::batch<L>;

template <class X>
inline constexpr bool is_mask = false;
template <class T, class A>
inline constexpr bool is_mask<xsimd::batch_bool<T, A>> = true;

template <class X>
auto to_mask(const X& x) {
  if constexpr (is_mask<X>) return x;
  else return x != X(0);
}

template <class B>
B nan_max(const B& a, const B& b) {
  if constexpr (std::is_floating_point_v<lane_t<B>>) return xsimd::select(xsimd::isnan(a) | xsimd::isnan(b), a + b, xsimd::max(a, b));
  else return xsimd::max(a, b);
}
template <class B>
B nan_min(const B& a, const B& b) {
  if constexpr (std::is_floating_point_v<lane_t<B>>) return xsimd::select(xsimd::isnan(a) | xsimd::isnan(b), a + b, xsimd::min(a, b));
  else return xsimd::min(a, b);
}

/// Applies a functor to batches; specialised where the scalar code does not carry over.
template <class F>
struct packet_impl {
  template <class... A>
  static auto apply(const F& f, const A&... a) {
    return f(a...);
  }
};
template <>
struct packet_impl<where_fn> {
  template <class C, class B>
  static B apply(const where_fn&, const C& c, const B& a, const B& b) {
    return xsimd::select(to_mask(c), a, b);
  }
};
template <>
struct packet_impl<logical_and_fn> {
  template <class A, class B>
  static auto apply(const logical_and_fn&, const A& a, const B& b) { return to_mask(a) & to_mask(b); }
};
template <>
struct packet_impl<logical_or_fn> {
  template <class A, class B>
  static auto apply(const logical_or_fn&, const A& a, const B& b) { return to_mask(a) | to_mask(b); }
};
template <>
struct packet_impl<logical_xor_fn> {
  template <class A, class B>
  static auto apply(const logical_xor_fn&, const A& a, const B& b) { return to_mask(a) ^ to_mask(b); }
};
template <>
struct packet_impl<logical_not_fn> {
  template <class A>
  static auto apply(const logical_not_fn&, const A& a) { return ~to_mask(a); }
};
template <>
struct packet_impl<maximum_fn> {
  template <class B>
  static B apply(const maximum_fn&, const B& a, const B& b) { return nan_max(a, b); }
};
template <>
struct packet_impl<minimum_fn> {
  template <class B>
  static B apply(const minimum_fn&, const B& a, const B& b) { return nan_min(a, b); }
};
template <>
struct packet_impl<clip_fn> {
  template <class B>
  static B apply(const clip_fn&, const B& x, const B& lo, const B& hi) { return nan_min(nan_max(x, lo), hi); }
};
template <>
struct packet_impl<sign_fn> {
  template <class B>
  static B apply(const sign_fn&, const B& x) {
    return xsimd::select(x > B(0), B(1), xsimd::select(x < B(0), B(-1), x));
  }
};
}  // namespace detail::simd
}  // namespace fusor
