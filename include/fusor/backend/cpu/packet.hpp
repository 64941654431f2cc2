#pragma once
// The SIMD side of the cpu backend: core's packet hooks (core/packet_traits.hpp) specialised for
// the plain numbers on xsimd:
//   packet_traits<T>     xsimd::batch<T> for float, double, int32 and int64 (elements made of
//                        planes, such as ad::dual<float>, in planar_packet.hpp);
//   simd_op_v<F, L>      which of core's functors have a SIMD form on lanes of type L;
//   simd_reduce_v<Op, L> the same for reduction operators.
// Plus the few functors whose SIMD form differs from their scalar code (selections,
// NaN-propagating min/max, single-rounded fma).
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "diagnostics.hpp"

FUSOR_SIMD_DIAGNOSTICS_BEGIN
#include <xsimd/xsimd.hpp>

#include "../../core/functors.hpp"
#include "../../core/packet_traits.hpp"
#include "../../core/reduce_ops.hpp"

#if defined(__AVX512F__) || defined(__FMA__)
#include <immintrin.h>
#endif
#if defined(__aarch64__)
#include <arm_neon.h>
#endif


namespace fusor {

template <class T, class A>
struct lane_of<xsimd::batch<T, A>> {
  using type = T;
};

namespace detail::simd {
template <class L>
inline constexpr bool number = one_of<L, float, double, std::int32_t, std::int64_t>;
template <class L>
inline constexpr bool floating = one_of<L, float, double>;
template <class L>
inline constexpr bool integer = one_of<L, std::int32_t, std::int64_t>;

// The xsimd architecture of fusor's packets: this translation unit's best, except under g++
// without optimisation on an AVX-512BW host. There g++ defines the BW intrinsics as macros that
// cast their arguments, and xsimd 8's avx512bw kernels pass them batches (its select instantiates
// every lane width's branch), so every -O0 -march=native build failed to compile ("invalid cast
// from type 'const xsimd::batch<long int, xsimd::avx512bw>' to type '__v64qi'"). avx512dq has the
// same 512-bit registers; only byte and word lanes, which fusor's packets do not use, lose BW.
#if defined(__GNUC__) && !defined(__clang__) && !defined(__OPTIMIZE__) && defined(__AVX512BW__)
using arch = xsimd::avx512dq;
#else
using arch = xsimd::default_arch;
#endif

template <class L>
using batch = xsimd::batch<L, arch>;

/// Whether this translation unit's SIMD registers for L have a single-rounded multiply-add.
/// xsimd 8.1 fuses only on its fma3/fma4 architectures: on avx512 (and neon64) its fma is
/// x*y + z with two roundings, so fusor issues the instructions itself (fused_multiply_add).
/// Without one (SSE2, AVX without FMA) fma runs the scalar std::fma loop: slower, never wrong.
template <class L>
constexpr bool has_fused_fma() {
  if constexpr (!floating<L>) {
    return false;
  } else {
    [[maybe_unused]] constexpr std::size_t bytes = sizeof(batch<L>);
#if defined(__AVX512F__)
    if (bytes == 64) return true;
#endif
#if defined(__FMA__)
    if (bytes == 32 || bytes == 16) return true;
#endif
#if defined(__aarch64__)
    if (bytes == 16) return true;
#endif
    return false;
  }
}

template <class L>
batch<L> fused_multiply_add([[maybe_unused]] const batch<L>& x, [[maybe_unused]] const batch<L>& y,
                           [[maybe_unused]] const batch<L>& z) {
  static_assert(has_fused_fma<L>(), "fusor: no fused multiply-add instruction for this packet type");
  [[maybe_unused]] constexpr std::size_t bytes = sizeof(batch<L>);
  [[maybe_unused]] constexpr bool f32 = std::is_same_v<L, float>;
#if defined(__AVX512F__)
  if constexpr (bytes == 64) {
    if constexpr (f32) return batch<L>(_mm512_fmadd_ps(x, y, z));
    else return batch<L>(_mm512_fmadd_pd(x, y, z));
  }
#endif
#if defined(__FMA__)
  if constexpr (bytes == 32) {
    if constexpr (f32) return batch<L>(_mm256_fmadd_ps(x, y, z));
    else return batch<L>(_mm256_fmadd_pd(x, y, z));
  }
  if constexpr (bytes == 16) {
    if constexpr (f32) return batch<L>(_mm_fmadd_ps(x, y, z));
    else return batch<L>(_mm_fmadd_pd(x, y, z));
  }
#endif
#if defined(__aarch64__)
  if constexpr (bytes == 16) {
    if constexpr (f32) return batch<L>(vfmaq_f32(z, x, y));
    else return batch<L>(vfmaq_f64(z, x, y));
  }
#endif
  return z;  // unreachable: the static_assert above
}
}  // namespace detail::simd

// Which functors have a SIMD form on the cpu (core/packet_traits.hpp's simd_op_v; false for
// every functor not named here).
// clang-format off
// arithmetic and selections: every SIMD number type
template <class L> inline constexpr bool simd_op_v<add_fn, L> = detail::simd::number<L>;
template <class L> inline constexpr bool simd_op_v<subtract_fn, L> = detail::simd::number<L>;
template <class L> inline constexpr bool simd_op_v<multiply_fn, L> = detail::simd::number<L>;
template <class L> inline constexpr bool simd_op_v<negate_fn, L> = detail::simd::number<L>;
template <class L> inline constexpr bool simd_op_v<square_fn, L> = detail::simd::number<L>;
template <class L> inline constexpr bool simd_op_v<abs_fn, L> = detail::simd::number<L>;
template <class L> inline constexpr bool simd_op_v<maximum_fn, L> = detail::simd::number<L>;
template <class L> inline constexpr bool simd_op_v<minimum_fn, L> = detail::simd::number<L>;
template <class L> inline constexpr bool simd_op_v<clip_fn, L> = detail::simd::number<L>;
template <class L> inline constexpr bool simd_op_v<where_fn, L> = detail::simd::number<L>;
template <class L> inline constexpr bool simd_op_v<conj_fn, L> = detail::simd::number<L>;
template <class L> inline constexpr bool simd_op_v<real_fn, L> = detail::simd::number<L>;
template <class L> inline constexpr bool simd_op_v<floor_fn, L> = detail::simd::number<L>;
template <class L> inline constexpr bool simd_op_v<ceil_fn, L> = detail::simd::number<L>;
template <class L> inline constexpr bool simd_op_v<trunc_fn, L> = detail::simd::number<L>;
template <class L> inline constexpr bool simd_op_v<round_fn, L> = detail::simd::number<L>;
template <class L> inline constexpr bool simd_op_v<equal_fn, L> = detail::simd::number<L>;
template <class L> inline constexpr bool simd_op_v<not_equal_fn, L> = detail::simd::number<L>;
template <class L> inline constexpr bool simd_op_v<less_fn, L> = detail::simd::number<L>;
template <class L> inline constexpr bool simd_op_v<less_equal_fn, L> = detail::simd::number<L>;
template <class L> inline constexpr bool simd_op_v<greater_fn, L> = detail::simd::number<L>;
template <class L> inline constexpr bool simd_op_v<greater_equal_fn, L> = detail::simd::number<L>;
template <class L> inline constexpr bool simd_op_v<logical_and_fn, L> = detail::simd::number<L>;
template <class L> inline constexpr bool simd_op_v<logical_or_fn, L> = detail::simd::number<L>;
template <class L> inline constexpr bool simd_op_v<logical_xor_fn, L> = detail::simd::number<L>;
template <class L> inline constexpr bool simd_op_v<logical_not_fn, L> = detail::simd::number<L>;
// bitwise: integer lanes
template <class L> inline constexpr bool simd_op_v<bit_and_fn, L> = detail::simd::integer<L>;
template <class L> inline constexpr bool simd_op_v<bit_or_fn, L> = detail::simd::integer<L>;
template <class L> inline constexpr bool simd_op_v<bit_xor_fn, L> = detail::simd::integer<L>;
template <class L> inline constexpr bool simd_op_v<bit_not_fn, L> = detail::simd::integer<L>;
// floating only: true division, sign, powers, the transcendental functions, classification
template <class L> inline constexpr bool simd_op_v<divide_fn, L> = detail::simd::floating<L>;
template <class L> inline constexpr bool simd_op_v<sign_fn, L> = detail::simd::floating<L>;
template <class L> inline constexpr bool simd_op_v<power_fn, L> = detail::simd::floating<L>;
template <class L> inline constexpr bool simd_op_v<atan2_fn, L> = detail::simd::floating<L>;
template <class L> inline constexpr bool simd_op_v<sqrt_fn, L> = detail::simd::floating<L>;
template <class L> inline constexpr bool simd_op_v<cbrt_fn, L> = detail::simd::floating<L>;
template <class L> inline constexpr bool simd_op_v<exp_fn, L> = detail::simd::floating<L>;
template <class L> inline constexpr bool simd_op_v<exp2_fn, L> = detail::simd::floating<L>;
template <class L> inline constexpr bool simd_op_v<expm1_fn, L> = detail::simd::floating<L>;
template <class L> inline constexpr bool simd_op_v<log_fn, L> = detail::simd::floating<L>;
template <class L> inline constexpr bool simd_op_v<log2_fn, L> = detail::simd::floating<L>;
template <class L> inline constexpr bool simd_op_v<log10_fn, L> = detail::simd::floating<L>;
template <class L> inline constexpr bool simd_op_v<log1p_fn, L> = detail::simd::floating<L>;
// xsimd 8.1's double erf is off by up to 68 ulps near |x| = 2.2 (its float erf by 2): double runs libm's
template <class L> inline constexpr bool simd_op_v<erf_fn, L> = std::is_same_v<L, float>;
template <class L> inline constexpr bool simd_op_v<sigmoid_fn, L> = detail::simd::floating<L>;
template <class L> inline constexpr bool simd_op_v<sin_fn, L> = detail::simd::floating<L>;
template <class L> inline constexpr bool simd_op_v<cos_fn, L> = detail::simd::floating<L>;
template <class L> inline constexpr bool simd_op_v<tan_fn, L> = detail::simd::floating<L>;
template <class L> inline constexpr bool simd_op_v<asin_fn, L> = detail::simd::floating<L>;
template <class L> inline constexpr bool simd_op_v<acos_fn, L> = detail::simd::floating<L>;
template <class L> inline constexpr bool simd_op_v<atan_fn, L> = detail::simd::floating<L>;
template <class L> inline constexpr bool simd_op_v<sinh_fn, L> = detail::simd::floating<L>;
template <class L> inline constexpr bool simd_op_v<cosh_fn, L> = detail::simd::floating<L>;
template <class L> inline constexpr bool simd_op_v<tanh_fn, L> = detail::simd::floating<L>;
template <class L> inline constexpr bool simd_op_v<isnan_fn, L> = detail::simd::floating<L>;
template <class L> inline constexpr bool simd_op_v<isinf_fn, L> = detail::simd::floating<L>;
template <class L> inline constexpr bool simd_op_v<isfinite_fn, L> = detail::simd::floating<L>;
// fma must round once: integers are exact anyway; floating lanes need the instruction
template <class L> inline constexpr bool simd_op_v<fma_fn, L> =
    detail::simd::integer<L> || detail::simd::has_fused_fma<L>();
template <class F, class L> inline constexpr bool simd_op_v<scalar_comparison_fn<F>, L> = simd_op_v<F, L>;
// No SIMD form: floor_divide and mod (xsimd's fmod is a - trunc(a/b)*b, inexact when a/b is
// large), shifts (NumPy's out-of-range counts), imag, arg and cis (complex results).
// clang-format on

namespace detail::simd {
/// Element types whose packets are reduced in wider lanes (float16 and bfloat16: their float32
/// lanes; set in small_float_packet.hpp).
template <class L>
inline constexpr bool reduces_widened = false;
}  // namespace detail::simd

// Which reductions accumulate lanes of type L in SIMD registers on the cpu.
template <class L>
inline constexpr bool simd_reduce_v<detail::sum_op, L> =
    detail::one_of<L, float, double, std::int64_t> || detail::simd::reduces_widened<L>;
template <class L>  // integers are summed in float64 for means: the scalar loop converts
inline constexpr bool simd_reduce_v<detail::mean_sum_op, L> =
    detail::simd::floating<L> || detail::simd::reduces_widened<L>;
template <class L>
inline constexpr bool simd_reduce_v<detail::prod_op, L> = detail::simd::floating<L>;
template <class L>
inline constexpr bool simd_reduce_v<detail::max_op, L> = detail::simd::number<L> || detail::simd::reduces_widened<L>;
template <class L>
inline constexpr bool simd_reduce_v<detail::min_op, L> = detail::simd::number<L> || detail::simd::reduces_widened<L>;

/// The plain numbers' packets: one xsimd batch.
template <class T>
  requires detail::simd::number<T>
struct packet_traits<T> {
  static constexpr bool available = true;
  using type = detail::simd::batch<T>;
  static constexpr std::size_t size = type::size;
  static constexpr std::size_t alignment = type::arch_type::alignment();
  template <class F>
  static constexpr bool supports = simd_op_v<F, T>;
  static type load(const T* p) { return type::load_unaligned(p); }
  static type broadcast(const T& v) { return type(v); }
  static void store_aligned(T* p, const type& v) { v.store_aligned(p); }
  /// A float16 or bfloat16 operand in a float32 statement (a packet or a result still to be
  /// rounded): its float32 lanes.
  template <class Q>
    requires std::is_same_v<T, float> && requires(const Q& q) {
      { q.lanes() } -> std::convertible_to<type>;
    }
  static type lift(const Q& q) {
    return q.lanes();
  }
};

namespace detail::simd {

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

/// Applies a functor to packets; specialised where the scalar code does not carry over.
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
// xsimd 8.1's exp converts x·log2(e) to a 64-bit integer before it selects 0 or inf for the
// out-of-range arguments: for x = ±inf that conversion is undefined behaviour (UBSan's
// float-cast-overflow; a masked score of -inf in a softmax is the common case). Arguments beyond
// ±1e4 are brought to ±1e4 first, whose exp is already 0 or inf in float and double; NaN stays NaN.
template <>
struct packet_impl<exp_fn> {
  template <class B>
  static B apply(const exp_fn& f, const B& x) {
    if constexpr (xsimd::is_batch<B>::value) {
      const B limit(lane_t<B>(1e4));
      return f(xsimd::select(x < -limit, -limit, xsimd::select(x > limit, limit, x)));
    } else {
      return f(x);
    }
  }
};
// -x flips the sign bit, as NumPy's negative does (-(+0) is -0): xsimd 8.1's avx512 neg is 0 - x,
// which gives +0
template <>
struct packet_impl<negate_fn> {
  template <class B>
  static B apply(const negate_fn& f, const B& x) {
    if constexpr (xsimd::is_batch<B>::value && std::is_floating_point_v<lane_t<B>>) return x ^ B(lane_t<B>(-0.0));
    else return f(x);
  }
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
// pow as exp(y log|x|), as xsimd 8.1's, but with C's (and NumPy's) special values and every lane
// defined. xsimd's pow gives 0 for every power of +-0 (x^0 included), NaN for x^0 and 1^y beside
// a NaN or an infinity and for (-inf)^0.5; and its exp and trunc convert lanes to integers, which
// is undefined behaviour (UBSan stops there) for an infinite, NaN or huge lane. So only finite,
// clamped lanes reach exp, log and trunc, and the special cases are selected afterwards.
template <>
struct packet_impl<power_fn> {
  template <class B>
  static B apply(const power_fn& f, const B& x, const B& y) {
    if constexpr (!xsimd::is_batch<B>::value) return f(x, y);  // a dual number's packet: its own pow
    else return ieee(x, y);
  }
  template <class B>
  static B ieee(const B& x, const B& y) {
    using L = lane_t<B>;
    const B one(1), zero(0), inf(std::numeric_limits<L>::infinity()), nan(std::numeric_limits<L>::quiet_NaN());
    // |x|^y for a finite non-zero x: exp of y log|x|, clamped beyond exp's range either way
    // (e^1536 overflows and e^-1536 underflows a double; 192 a float)
    const B ax = xsimd::abs(x), limit(L(1.5) * L(std::numeric_limits<L>::max_exponent));
    const B t = y * xsimd::log(xsimd::select(ax > zero && ax < inf, ax, one));
    const auto number = !xsimd::isnan(t);
    B z = xsimd::exp(xsimd::select(number, xsimd::select(t > limit, limit, xsimd::select(t < -limit, -limit, t)), zero));
    z = xsimd::select(number, z, nan);
    // the exponent's parity, from lanes below 2 / eps (above, every float is an even integer)
    const B ys = xsimd::select(xsimd::abs(y) < B(L(2) / std::numeric_limits<L>::epsilon()), y, zero);
    const auto odd = xsimd::is_odd(ys), whole = xsimd::is_flint(ys) && (ys == y || xsimd::isfinite(y));
    // a negative base: the sign of an odd power, NaN for a finite power that is not an integer
    z = xsimd::select(x < zero && odd, -z, z);
    z = xsimd::select(x < zero && !whole && xsimd::isfinite(y), nan, z);
    // +-0 and +-inf: 0 or inf by the exponent's sign, negative only for an odd integer exponent
    const B at_zero = xsimd::select(y < zero, inf, xsimd::select(y > zero, zero, y));  // (NaN stays)
    z = xsimd::select(x == zero, xsimd::select(odd, xsimd::copysign(at_zero, x), at_zero), z);
    const B at_inf = xsimd::select(y < zero, zero, xsimd::select(y > zero, inf, y));
    z = xsimd::select(ax == inf, xsimd::select(x < zero && odd, -at_inf, at_inf), z);
    z = xsimd::select(xsimd::isnan(x), nan, z);
    return xsimd::select(y == zero || x == one || (x == -one && xsimd::isinf(y)), one, z);
  }
};
/// A functor applied to packets: packet_impl's form (small_float_packet.hpp adds the overload
/// for float16 and bfloat16 packets, which computes on their float32 lanes).
template <class F, class... A>
auto apply_packet(const F& f, const A&... a) {
  return packet_impl<F>::apply(f, a...);
}
template <class F>
struct packet_impl<scalar_comparison_fn<F>> {
  template <class A, class B>
  static auto apply(const scalar_comparison_fn<F>& f, const A& a, const B& b) {
    using mask = decltype(packet_impl<F>::apply(F{}, a, b));
    return f.verdict < 0 ? packet_impl<F>::apply(F{}, a, b) : mask(f.verdict != 0);
  }
};
template <>
struct packet_impl<fma_fn> {
  template <class B>
  static B apply(const fma_fn& f, const B& x, const B& y, const B& z) {
    if constexpr (floating<lane_t<B>>) return fused_multiply_add<lane_t<B>>(x, y, z);
    else return f(x, y, z);
  }
};
}  // namespace detail::simd
}  // namespace fusor

FUSOR_SIMD_DIAGNOSTICS_END
