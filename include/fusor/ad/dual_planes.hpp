#pragma once
// Dual numbers as elements made of planes (core/planar.hpp): dual<T, N> is its value and N
// tangents, packed, so a SIMD backend evaluates an array of it one plane per register (on the
// cpu, dual<batch<T>, N>: backend/cpu/planar_packet.hpp) and core's functors run on that
// unchanged. This layer says only what the planes are and which operations act on them; it names
// no backend and no packet type.
//
// Storage stays interleaved (value, tangents, value, tangents, ...): array<dual<T, N>> is an
// ordinary array of an aggregate, and its value plane is a strided view (ad::primal).
#include <array>

#include "../core/packet_traits.hpp"
#include "../core/planar.hpp"
#include "../core/reduce_ops.hpp"
#include "dual.hpp"
#include "functors.hpp"

namespace fusor {

template <class T, int N>
struct planar_traits<ad::dual<T, N>> {
  using lane = T;
  static constexpr int planes = N + 1;
  template <class X>
  using rebind = ad::dual<X, N>;
  template <class X>
  static X& plane(ad::dual<X, N>& e, int k) {
    return k == 0 ? e.value : e.tangent[k - 1];
  }
  template <class X>
  static const X& plane(const ad::dual<X, N>& e, int k) {
    return k == 0 ? e.value : e.tangent[k - 1];
  }
  template <class X, class... Xs>
  static ad::dual<X, N> assemble(const X& value, const Xs&... tangents) {
    static_assert(sizeof...(Xs) == N, "fusor: a dual<T, N> is assembled from N + 1 planes");
    return ad::dual<X, N>{value, {tangents...}};
  }
  /// The functors whose generic code on duals (ad/dual.hpp) also runs on dual packets.
  template <class F>
  static constexpr bool packet_functor = ad::forward_simd_v<F>;
  /// The value and one tangent come out as plain numbers.
  template <class F>
  static constexpr bool extracts = std::is_same_v<F, ad::primal_fn> || std::is_same_v<F, ad::tangent_fn>;
  /// Sums and means act on value and tangents independently.
  template <class Op>
  static constexpr bool plane_reduction = std::is_same_v<Op, detail::sum_op> || std::is_same_v<Op, detail::mean_sum_op>;
  /// The product rule: (a.v + a.t ε)(b.v + b.t ε) = a.v b.v + (a.t b.v + a.v b.t) ε, so a matrix
  /// product of duals is 2N + 1 GEMMs on the planes (BLAS has no dual numbers).
  static constexpr std::array<plane_term, 2 * N + 1> product = [] {
    std::array<plane_term, 2 * N + 1> t{};
    t[0] = plane_term{0, 0, 0};
    for (int k = 1; k <= N; ++k) {
      t[2 * k - 1] = plane_term{k, k, 0};
      t[2 * k] = plane_term{k, 0, k};
    }
    return t;
  }();
};

// the gate of a reverse-mode adjoint sum is a select on a loop-invariant flag: SIMD wherever
// where() is
template <class L>
inline constexpr bool simd_op_v<ad::gate_fn, L> = simd_op_v<where_fn, L>;

// sums and means of duals accumulate dual packets (value and tangents in SIMD registers) wherever
// the backend has them
template <class T, int N>
inline constexpr bool simd_reduce_v<detail::sum_op, ad::dual<T, N>> = packet_traits<ad::dual<T, N>>::available;
template <class T, int N>
inline constexpr bool simd_reduce_v<detail::mean_sum_op, ad::dual<T, N>> = packet_traits<ad::dual<T, N>>::available;

}  // namespace fusor
