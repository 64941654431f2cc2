#pragma once
// Dual numbers on the cpu's SIMD path: an array of dual<T, N> is evaluated W elements at a time as
// one dual<xsimd::batch<T>, N>, and core's functors run on it unchanged (they are generic), so
// sin of a dual array is xsimd's sincos plus a multiply per tangent, never a scalar libm call.
//
// Storage stays interleaved (value, tangents, value, tangents, ...): array<dual<T, N>> is an
// ordinary array of an aggregate, its value plane is a strided view (ad::primal), and the packet
// load and store move between that and one register per plane.
#include <cstddef>
#include <type_traits>

#include "../backend/cpu/diagnostics.hpp"
#include "../backend/cpu/packet.hpp"
#include "dual.hpp"

FUSOR_SIMD_DIAGNOSTICS_BEGIN

namespace fusor {

namespace ad {
/// Whether functor F evaluates on dual packets: the functors whose SIMD form is the generic
/// scalar code (their cpu packet_impl is not specialised) and whose dual overloads above exist.
/// Selections and comparisons (where, maximum, minimum, clip, sign, fma, ==, <, ...) take the
/// scalar loop on duals: same pass, same numbers, without SIMD.
template <class F>
inline constexpr bool forward_simd_v = fusor::detail::one_of<
    F, add_fn, subtract_fn, multiply_fn, divide_fn, negate_fn, square_fn, abs_fn, power_fn, atan2_fn, sqrt_fn,
    cbrt_fn, exp_fn, exp2_fn, expm1_fn, log_fn, log2_fn, log10_fn, log1p_fn, sin_fn, cos_fn, tan_fn, asin_fn,
    acos_fn, atan_fn, sinh_fn, cosh_fn, tanh_fn, floor_fn, ceil_fn, trunc_fn, round_fn>;
}  // namespace ad

template <class T, class A, int N>
struct lane_of<ad::dual<xsimd::batch<T, A>, N>> {
  using type = ad::dual<T, N>;
};

template <class T, int N>
  requires detail::simd::floating<T>
struct packet_traits<ad::dual<T, N>> {
  using element = ad::dual<T, N>;
  using batch = xsimd::batch<T>;
  static constexpr bool available = true;
  using type = ad::dual<batch, N>;
  static constexpr std::size_t size = batch::size;
  // the stores below go through a lane buffer: no alignment of the destination is needed
  static constexpr std::size_t alignment = alignof(element);
  template <class F>
  static constexpr bool supports = ad::forward_simd_v<F> && simd_op_v<F, T>;

  static type load(const element* p) {
    alignas(64) T planes[N + 1][size];
    for (std::size_t j = 0; j < size; ++j) {
      planes[0][j] = p[j].value;
      for (int k = 0; k < N; ++k) planes[k + 1][j] = p[j].tangent[k];
    }
    type r;
    r.value = batch::load_aligned(planes[0]);
    for (int k = 0; k < N; ++k) r.tangent[k] = batch::load_aligned(planes[k + 1]);
    return r;
  }
  static type broadcast(const element& v) {
    type r;
    r.value = batch(v.value);
    for (int k = 0; k < N; ++k) r.tangent[k] = batch(v.tangent[k]);
    return r;
  }
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

// sums and means of duals accumulate dual packets (value and tangents in SIMD registers)
template <class T, int N>
inline constexpr bool simd_reduce_v<detail::sum_op, ad::dual<T, N>> = detail::simd::floating<T>;
template <class T, int N>
inline constexpr bool simd_reduce_v<detail::mean_sum_op, ad::dual<T, N>> = detail::simd::floating<T>;

}  // namespace fusor

FUSOR_SIMD_DIAGNOSTICS_END
