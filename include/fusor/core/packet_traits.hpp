#pragma once
// The hooks through which element types and functors meet a SIMD backend, declared here so that
// a layer above core (autodiff's dual numbers, a new functor) extends them without including a
// backend; the cpu backend (backend/cpu/packet.hpp) specialises them for the plain numbers and
// xsimd. Each primary says "no SIMD form", so the scalar loop, which is always correct, runs.
//   packet_traits<T>      the packet type of element type T, its width, loads, stores, broadcast;
//   simd_op_v<F, L>       whether functor F has a SIMD form on lanes of type L (one table, in the
//                         backend, instead of a member of every functor in core);
//   simd_reduce_v<Op, L>  the same for reduction operators.
// An element made of planes of one number type (a dual number) gets its packet form from its
// planar_traits (core/planar.hpp) instead: it never names a packet type.
#include <cstddef>

namespace fusor {

/// The packet form of element type T on a SIMD backend. The primary template says "none": such
/// arrays are evaluated by the scalar loop. A specialisation provides
///   available = true, type, size (elements per packet), alignment (bytes for aligned stores),
///   load(const T*) (unaligned), broadcast(const T&), store_aligned(T*, type),
///   supports<F> (whether functor F has a SIMD form on this element type),
/// and optionally lift(packet of another element type) (a plain operand in a statement of T),
/// extracts<F, L> (F takes a T packet to an L packet) and horizontal<Op, W>(packet) (the lanes
/// reduced into one W, where the element type knows a better way than a lane buffer).
template <class T>
struct packet_traits {
  static constexpr bool available = false;
  template <class F>
  static constexpr bool supports = false;
};

template <class T>
using packet_t = typename packet_traits<T>::type;

/// Whether functor F has a SIMD form on lanes of type L. false by default: the scalar loop is
/// always correct. Specialise (partially, on F) for a new functor.
template <class F, class L>
inline constexpr bool simd_op_v = false;

/// Whether reduction operator Op accumulates elements of type L in SIMD registers.
template <class Op, class L>
inline constexpr bool simd_reduce_v = false;

}  // namespace fusor
