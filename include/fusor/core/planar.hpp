#pragma once
// Elements made of planes: an element type stored as P packed values of one number type (a dual
// number is its value and N tangents). The layer that defines such a type describes its planes
// by specialising planar_traits, and a SIMD backend evaluates arrays of it one plane per register:
// on the cpu, ad::dual<float, 2> runs as dual<batch<float>, 2> (backend/cpu/planar_packet.hpp),
// so core's generic functors work on it unchanged and the element's layer names no backend.
#include <concepts>

namespace fusor {

/// The planes of element type E; undefined for a type that is not made of planes. A
/// specialisation provides
///   using lane = L;                         the number type of every plane
///   static constexpr int planes = P;        how many (sizeof(E) == P * sizeof(L))
///   template <class X> using rebind = ...;  E with planes of type X (the packet form: X a packet)
///   template <class X> static X& plane(rebind<X>& e, int k);   plane k (and a const overload);
///                                           plane 0 is the one a plain number lifts into
///   template <class X, class... Xs> static rebind<X> assemble(X p0, Xs... rest);  from P planes
///   template <class F> static constexpr bool packet_functor;   F runs on rebind<packet> as it is
///   template <class F> static constexpr bool extracts;         F takes an E to its plane type
///   template <class Op> static constexpr bool plane_reduction; Op reduces each plane on its own
///   static constexpr std::array<plane_term, K> product;       (optional) a * b plane by plane:
///                                           plane t.out of the product is the sum, over the terms
///                                           t naming it, of a's plane t.a times b's plane t.b
///                                           (a dual number's product rule). With it, matrix
///                                           products of E are GEMMs on the planes (linalg).
template <class E>
struct planar_traits;

/// One term of a planar product: a's plane `a` times b's plane `b`, summed into plane `out`.
struct plane_term {
  int out, a, b;
};

/// E has visible planar_traits.
template <class E>
concept planar = requires {
  typename planar_traits<E>::lane;
  { planar_traits<E>::planes } -> std::convertible_to<int>;
};

/// E is made of planes and its product is bilinear in them (planar_traits<E>::product).
template <class E>
concept planar_product = planar<E> && requires { planar_traits<E>::product.size(); };

}  // namespace fusor
