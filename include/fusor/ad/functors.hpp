#pragma once
// Autodiff's own functors (core-level: no SIMD, no backend), shared by forward and reverse mode:
// the parts of a dual number, the gate of an adjoint sum, and which of core's functors have a
// dual-number form that runs on SIMD packets.
#include "../core/config.hpp"
#include "../core/ext.hpp"
#include "../core/functors.hpp"
#include "dual.hpp"

namespace fusor::ad {

/// The value of a dual number (lazy: ad::primal).
struct primal_fn : same_type_policy {
  template <class D>
  FUSOR_HD auto operator()(const D& d) const {
    return primal_of(d);
  }
};
/// Tangent k of a dual number (lazy: ad::tangent).
struct tangent_fn : same_type_policy {
  int k = 0;
  template <class D>
  FUSOR_HD auto operator()(const D& d) const {
    return tangent_of(d, k);
  }
};

/// Passes its operand through or gives 0 (a variable's share of an adjoint sum; a selection,
/// not a multiplication by 0, so an infinite path elsewhere cannot poison it with NaN).
struct gate_fn : same_type_policy {
  bool on = true;
  template <class T>
  FUSOR_HD T operator()(const T& x) const {
    return on ? x : T(0);
  }
};

/// Whether functor F evaluates on dual packets: the functors whose SIMD form is the generic
/// scalar code (their cpu packet_impl is not specialised) and whose dual overloads exist.
/// Selections and comparisons (where, maximum, minimum, clip, sign, fma, ==, <, ...) take the
/// scalar loop on duals: same pass, same numbers, without SIMD.
template <class F>
inline constexpr bool forward_simd_v = fusor::ext::one_of<
    F, add_fn, subtract_fn, multiply_fn, divide_fn, negate_fn, square_fn, abs_fn, power_fn, atan2_fn, sqrt_fn,
    cbrt_fn, exp_fn, exp2_fn, expm1_fn, log_fn, log2_fn, log10_fn, log1p_fn, erf_fn, sigmoid_fn, sin_fn, cos_fn, tan_fn, asin_fn,
    acos_fn, atan_fn, sinh_fn, cosh_fn, tanh_fn, floor_fn, ceil_fn, trunc_fn, round_fn>;

}  // namespace fusor::ad
