#pragma once
// Dual numbers on the cpu's SIMD path: an array of dual<T, N> is evaluated W elements at a time as
// one dual<xsimd::batch<T>, N>, and core's functors run on it unchanged (they are generic), so
// sin of a dual array is xsimd's sincos plus a multiply per tangent, never a scalar libm call.
//
// Storage stays interleaved (value, tangents, value, tangents, ...): array<dual<T, N>> is an
// ordinary array of an aggregate, its value plane is a strided view (ad::primal), and the packet
// load and store move between that and one register per plane.
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "../backend/cpu/diagnostics.hpp"
#include "../backend/cpu/packet.hpp"
#include "dual.hpp"
#include "functors.hpp"

FUSOR_SIMD_DIAGNOSTICS_BEGIN

namespace fusor {


template <class T, int N>
  requires detail::simd::floating<T>
struct packet_traits<ad::dual<T, N>> {
  using element = ad::dual<T, N>;
  using batch = detail::simd::batch<T>;
  static constexpr bool available = true;
  using type = ad::dual<batch, N>;
  static constexpr std::size_t size = batch::size;
  // the stores below go through a lane buffer: no alignment of the destination is needed
  static constexpr std::size_t alignment = alignof(element);
  template <class F>
  static constexpr bool supports = ad::forward_simd_v<F> && simd_op_v<F, T>;
  /// The parts (value, tangent k) come out as packets of T.
  template <class F, class L>
  static constexpr bool extracts = (std::is_same_v<F, ad::primal_fn> || std::is_same_v<F, ad::tangent_fn>) &&
                                   std::is_same_v<L, T>;

  // Loads and stores transpose between W interleaved elements and N + 1 planes through a lane
  // buffer, element by element (g++ turns that into shuffles for small N). The AVX-512 gather and
  // scatter instructions measured 2x and 10x slower for dual<float> on this machine's AMD EPYC.
  // Packets are built whole, as aggregates: a default-constructed dual packet is zero-filled first.
  static_assert(sizeof(element) == (N + 1) * sizeof(T), "fusor: dual<T, N> must be N + 1 packed values");
  template <std::size_t... K>
  static type load_planes(const T (&planes)[N + 1][size], std::index_sequence<K...>) {
    return type{batch::load_aligned(planes[0]), {batch::load_aligned(planes[K + 1])...}};
  }
  static type load(const element* p) {
    alignas(64) T planes[N + 1][size];
    for (std::size_t j = 0; j < size; ++j) {
      planes[0][j] = p[j].value;
      for (int k = 0; k < N; ++k) planes[k + 1][j] = p[j].tangent[k];
    }
    return load_planes(planes, std::make_index_sequence<std::size_t(N)>{});
  }
  template <std::size_t... K>
  static type splat(const element& v, std::index_sequence<K...>) {
    return type{batch(v.value), {batch(v.tangent[K])...}};
  }
  static type broadcast(const element& v) { return splat(v, std::make_index_sequence<std::size_t(N)>{}); }
  /// The lanes of a packet combined into one W (reductions): plane by plane in W's lane type, for
  /// the operators that act on value and tangents independently (sums and means, the only ones
  /// simd_reduce_v enables for duals). Through a lane buffer of duals instead, the compiler's
  /// mismatched stores and loads cost 30x more.
  template <class Op, class W>
  static W horizontal(const type& v) {
    static_assert(std::is_same_v<Op, detail::sum_op> || std::is_same_v<Op, detail::mean_sum_op>,
                  "fusor: dual packets reduce plane by plane only for sums");
    using WL = std::remove_cvref_t<decltype(W{}.value)>;
    W r = Op::template identity<W>();
    alignas(64) T lanes[size];
    v.value.store_aligned(lanes);
    for (std::size_t j = 0; j < size; ++j) r.value = Op::combine(r.value, WL(lanes[j]));
    for (int k = 0; k < N; ++k) {
      v.tangent[k].store_aligned(lanes);
      for (std::size_t j = 0; j < size; ++j) r.tangent[k] = Op::combine(r.tangent[k], WL(lanes[j]));
    }
    return r;
  }
  /// A plain operand in a dual statement: its values with zero tangents (a constant).
  template <std::size_t... K>
  static type lift_planes(const batch& v, std::index_sequence<K...>) {
    return type{v, {(void(K), batch(T(0)))...}};
  }
  static type lift(const batch& v) { return lift_planes(v, std::make_index_sequence<std::size_t(N)>{}); }
  static void store_aligned(element* p, const type& v) {
    alignas(64) T planes[N + 1][size];
    v.value.store_aligned(planes[0]);
    for (int k = 0; k < N; ++k) v.tangent[k].store_aligned(planes[k + 1]);
    for (std::size_t j = 0; j < size; ++j) {
      p[j].value = planes[0][j];
      for (int k = 0; k < N; ++k) p[j].tangent[k] = planes[k + 1][j];
    }
  }
};

// the gate of a reverse-mode adjoint sum (a select on a loop-invariant flag)
template <class L>
inline constexpr bool simd_op_v<ad::gate_fn, L> = detail::simd::number<L>;

// sums and means of duals accumulate dual packets (value and tangents in SIMD registers)
template <class T, int N>
inline constexpr bool simd_reduce_v<detail::sum_op, ad::dual<T, N>> = detail::simd::floating<T>;
template <class T, int N>
inline constexpr bool simd_reduce_v<detail::mean_sum_op, ad::dual<T, N>> = detail::simd::floating<T>;

}  // namespace fusor

FUSOR_SIMD_DIAGNOSTICS_END
