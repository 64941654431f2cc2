#pragma once
// The two 16-bit floating element types: float16 (IEEE 754 binary16: 1 sign, 5 exponent and 10
// mantissa bits, NumPy's float16) and bfloat16 (1, 8 and 7: float32's upper half, ml_dtypes' and
// JAX's bfloat16). Each is two bytes of storage; arithmetic computes in float32 and rounds the
// result back to the nearest value, ties to even (NumPy's float16 semantics: float16 + float16 is
// float16). Conversions from float and double round once, directly from the source's bits (a
// double is not rounded to float first, which could round twice); NaN (its payload kept, made
// quiet), infinities, signed zeros and subnormals are preserved; a value beyond the largest
// finite one rounds to infinity as IEEE 754 says.
//
// They plug into the engine through element_traits (dtype.hpp): NumPy 2's promotion for float16
// (float16 with int8 or uint8 stays float16, with int16 or uint16 is float32, with a 32- or 64-bit
// integer float64, with float32 float32), ml_dtypes' for bfloat16 (bfloat16 with float16 is
// float32), C++ scalars weak (an array of float16 times 2.5 stays float16), sums accumulated in
// float32 as NumPy's are. Their elementwise functions are found by argument-dependent lookup
// (sqrt, exp, ...: computed in float32, rounded once).
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <ostream>
#include <string_view>
#include <type_traits>

#include "config.hpp"
#include "dtype.hpp"

// F16C's scalar conversions (x86-64-v3 and later), for the host's scalar loops: the same bits as
// the integer rounding below, in one instruction
#if defined(__F16C__) && !defined(__CUDA_ARCH__)
#include <immintrin.h>
#define FUSOR_HOST_F16C 1
#endif

namespace fusor {

namespace detail {

FUSOR_HD inline std::uint32_t f32_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  return __builtin_bit_cast(std::uint32_t, f);
#endif
}
FUSOR_HD inline float f32_from_bits(std::uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  return __builtin_bit_cast(float, u);
#endif
}
FUSOR_HD inline std::uint64_t f64_bits(double d) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint64_t>(__double_as_longlong(d));
#else
  return __builtin_bit_cast(std::uint64_t, d);
#endif
}

/// The bits of a binary floating format with M mantissa and E exponent bits nearest to a finite
/// or infinite or NaN source given as its sign, its biased exponent field and mantissa field, with
/// SM mantissa and SE exponent bits (float: 23, 8; double: 52, 11). Round to nearest, ties to
/// even, in integer arithmetic.
template <int M, int E, int SM, int SE>
FUSOR_HD inline std::uint16_t round_to_small(bool negative, std::uint32_t exponent_field, std::uint64_t mantissa) {
  constexpr std::uint32_t all_ones = (1u << E) - 1;
  const std::uint16_t sign = negative ? std::uint16_t(1u << (M + E)) : std::uint16_t(0);
  const std::uint16_t infinity = std::uint16_t(all_ones << M);
  if (exponent_field == (1u << SE) - 1) {  // inf or NaN: a NaN stays a NaN, quiet, its payload's top bits kept
    if (mantissa == 0) return std::uint16_t(sign | infinity);
    return std::uint16_t(sign | infinity | (1u << (M - 1)) | std::uint16_t(mantissa >> (SM - M)));
  }
  if (exponent_field == 0 && mantissa == 0) return sign;
  // |x| = sig * 2^(e - SM), sig in [2^SM, 2^(SM + 1)): a subnormal source normalised first
  constexpr int source_bias = (1 << (SE - 1)) - 1, bias = (1 << (E - 1)) - 1;
  std::uint64_t sig = mantissa;
  int e = int(exponent_field) - source_bias;
  if (exponent_field == 0) {
    e = 1 - source_bias;
    while (!(sig >> SM)) {
      sig <<= 1;
      --e;
    }
  } else {
    sig |= std::uint64_t(1) << SM;
  }
  if (e > bias) return std::uint16_t(sign | infinity);
  // the units of the result's last place: 2^(e - M) for a normal result, 2^(1 - bias - M) below
  const int emin = 1 - bias;
  const int shift = e >= emin ? SM - M : SM - M + (emin - e);
  if (shift > 63) return sign;  // below half the smallest subnormal
  std::uint64_t q = sig >> shift;
  const std::uint64_t rest = sig & ((std::uint64_t(1) << shift) - 1), half = std::uint64_t(1) << (shift - 1);
  if (rest > half || (rest == half && (q & 1))) ++q;
  // a normal result: the exponent field above the mantissa (the implicit bit adds 1 to it); a
  // subnormal: q itself (a carry into 2^M is the smallest normal, correctly encoded)
  std::uint64_t bits = e >= emin ? (std::uint64_t(e + bias - 1) << M) + q : q;
  if (bits >= infinity) bits = infinity;
  return std::uint16_t(sign | bits);
}

template <int M, int E>
FUSOR_HD inline std::uint16_t small_from_float(float f) {
  const std::uint32_t u = f32_bits(f);
  if constexpr (E == 8) {
    // bfloat16 is float's upper half: round the lower 16 bits away in integer arithmetic (a
    // carry into the exponent rounds up, to infinity past the largest finite value); a NaN keeps
    // its upper payload, quiet
    if ((u & 0x7fffffffu) > 0x7f800000u) return std::uint16_t((u >> 16) | 0x40u);
    return std::uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  } else {
#if defined(FUSOR_HOST_F16C)
    return std::uint16_t(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT));
#else
    return round_to_small<M, E, 23, 8>(u >> 31, (u >> 23) & 0xff, u & 0x7fffff);
#endif
  }
}
template <int M, int E>
FUSOR_HD inline std::uint16_t small_from_double(double d) {
  const std::uint64_t u = f64_bits(d);
  return round_to_small<M, E, 52, 11>(u >> 63, std::uint32_t((u >> 52) & 0x7ff), u & 0xfffffffffffffull);
}
/// The float a 16-bit value is exactly (float has room for every value of both formats).
template <int M, int E>
FUSOR_HD inline float small_to_float(std::uint16_t h) {
  // bfloat16 is float32's upper half (the same exponent field): every value, NaN and subnormal
  // included, widens by a shift
  if constexpr (E == 8 && M == 7) return f32_from_bits(std::uint32_t(h) << 16);
#if defined(FUSOR_HOST_F16C)
  if constexpr (E == 5) return _cvtsh_ss(h);
#endif
  constexpr int bias = (1 << (E - 1)) - 1;
  const std::uint32_t sign = std::uint32_t(h >> (M + E)) << 31;
  const std::uint32_t e = (h >> M) & ((1u << E) - 1), m = h & ((1u << M) - 1);
  if (e == (1u << E) - 1) return f32_from_bits(sign | 0x7f800000u | (m << (23 - M)));
  if (e == 0) {
    // zero or subnormal: bfloat16's are float's own (the same exponent range); float16's are m
    // units of 2^-24, a normal float, so the product is exact
    if constexpr (E == 8) {
      return f32_from_bits(sign | (m << (23 - M)));
    } else {
      const float magnitude = float(m) * f32_from_bits(std::uint32_t(127 + 1 - bias - M) << 23);
      return sign ? -magnitude : magnitude;
    }
  }
  return f32_from_bits(sign | ((e - bias + 127) << 23) | (m << (23 - M)));
}

}  // namespace detail

/// A 16-bit binary floating-point number with M mantissa and E exponent bits: float16 and
/// bfloat16 below. Two bytes, trivially copyable; converts exactly to float (implicitly) and from
/// any arithmetic value by rounding to nearest, ties to even (explicitly).
template <int M, int E>
struct small_float {
  static_assert(M + E == 15, "fusor: a 16-bit float has 15 bits of exponent and mantissa");
  std::uint16_t bits = 0;

  small_float() = default;
  template <class T>
    requires std::is_arithmetic_v<T>
  FUSOR_HD explicit small_float(T x) : bits(from(x)) {}
  /// The value whose bit pattern is `b`.
  FUSOR_HD static constexpr small_float from_bits(std::uint16_t b) {
    small_float h;
    h.bits = b;
    return h;
  }
  FUSOR_HD operator float() const { return detail::small_to_float<M, E>(bits); }
  /// To an integer as astype converts a float: truncated, saturating, NaN to 0.
  template <class T>
    requires(std::is_integral_v<T> && !std::is_same_v<T, bool>)
  FUSOR_HD explicit operator T() const {
    const float f = float(*this);
    if (!(f == f)) return T(0);
    if (f <= float(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
    if (f >= float(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(f);
  }

  FUSOR_HD constexpr small_float operator-() const { return from_bits(std::uint16_t(bits ^ 0x8000u)); }
  FUSOR_HD small_float operator+() const { return *this; }
  FUSOR_HD friend small_float operator+(small_float a, small_float b) { return small_float(float(a) + float(b)); }
  FUSOR_HD friend small_float operator-(small_float a, small_float b) { return small_float(float(a) - float(b)); }
  FUSOR_HD friend small_float operator*(small_float a, small_float b) { return small_float(float(a) * float(b)); }
  FUSOR_HD friend small_float operator/(small_float a, small_float b) { return small_float(float(a) / float(b)); }
  FUSOR_HD small_float& operator+=(small_float b) { return *this = *this + b; }
  FUSOR_HD small_float& operator-=(small_float b) { return *this = *this - b; }
  FUSOR_HD small_float& operator*=(small_float b) { return *this = *this * b; }
  FUSOR_HD small_float& operator/=(small_float b) { return *this = *this / b; }
  // comparisons between two of them (others go through float): IEEE's, NaN unordered
  FUSOR_HD friend bool operator==(small_float a, small_float b) { return float(a) == float(b); }
  FUSOR_HD friend bool operator<(small_float a, small_float b) { return float(a) < float(b); }
  FUSOR_HD friend bool operator<=(small_float a, small_float b) { return float(a) <= float(b); }
  FUSOR_HD friend bool operator>(small_float a, small_float b) { return float(a) > float(b); }
  FUSOR_HD friend bool operator>=(small_float a, small_float b) { return float(a) >= float(b); }

 private:
  template <class T>
  FUSOR_HD static std::uint16_t from(T x) {
    // (double and wider: a long double is rounded to double first, the one double rounding left)
    if constexpr (std::is_floating_point_v<T> && sizeof(T) >= sizeof(double)) return detail::small_from_double<M, E>(double(x));
    else if constexpr (std::is_same_v<T, float>) return detail::small_from_float<M, E>(x);
    else if constexpr (std::is_same_v<T, bool>) return x ? detail::small_from_float<M, E>(1.0f) : std::uint16_t(0);
    // integers: through double, exact below 2^53 and far beyond either format's range above it
    else return detail::small_from_double<M, E>(static_cast<double>(x));
  }
};

namespace detail {
template <int M, int E>
inline constexpr bool small_float_v<small_float<M, E>> = true;
}  // namespace detail

/// IEEE 754 binary16 (NumPy's float16): 5 exponent and 10 mantissa bits, largest finite 65504,
/// smallest normal 2^-14, smallest subnormal 2^-24.
using float16 = small_float<10, 5>;
/// Brain floating point (ml_dtypes' and JAX's bfloat16): float32's 8 exponent bits and 7 mantissa
/// bits, the same range as float32 with 3 significant digits.
using bfloat16 = small_float<7, 8>;

// ---- functions, found by argument-dependent lookup from the functors: computed in float32,
// rounded once ----
#define FUSOR_SMALL_FLOAT_UNARY(FN)                                              \
  template <int M, int E>                                                        \
  FUSOR_HD small_float<M, E> FN(small_float<M, E> x) {                           \
    using std::FN;                                                               \
    return small_float<M, E>(FN(float(x)));                                      \
  }
FUSOR_SMALL_FLOAT_UNARY(sqrt)
FUSOR_SMALL_FLOAT_UNARY(cbrt)
FUSOR_SMALL_FLOAT_UNARY(exp)
FUSOR_SMALL_FLOAT_UNARY(exp2)
FUSOR_SMALL_FLOAT_UNARY(expm1)
FUSOR_SMALL_FLOAT_UNARY(log)
FUSOR_SMALL_FLOAT_UNARY(log2)
FUSOR_SMALL_FLOAT_UNARY(log10)
FUSOR_SMALL_FLOAT_UNARY(log1p)
FUSOR_SMALL_FLOAT_UNARY(sin)
FUSOR_SMALL_FLOAT_UNARY(cos)
FUSOR_SMALL_FLOAT_UNARY(tan)
FUSOR_SMALL_FLOAT_UNARY(asin)
FUSOR_SMALL_FLOAT_UNARY(acos)
FUSOR_SMALL_FLOAT_UNARY(atan)
FUSOR_SMALL_FLOAT_UNARY(sinh)
FUSOR_SMALL_FLOAT_UNARY(cosh)
FUSOR_SMALL_FLOAT_UNARY(tanh)
FUSOR_SMALL_FLOAT_UNARY(erf)
FUSOR_SMALL_FLOAT_UNARY(floor)
FUSOR_SMALL_FLOAT_UNARY(ceil)
FUSOR_SMALL_FLOAT_UNARY(trunc)
FUSOR_SMALL_FLOAT_UNARY(nearbyint)
#undef FUSOR_SMALL_FLOAT_UNARY
#define FUSOR_SMALL_FLOAT_BINARY(FN)                                             \
  template <int M, int E>                                                        \
  FUSOR_HD small_float<M, E> FN(small_float<M, E> a, small_float<M, E> b) {      \
    using std::FN;                                                               \
    return small_float<M, E>(FN(float(a), float(b)));                            \
  }
FUSOR_SMALL_FLOAT_BINARY(pow)
FUSOR_SMALL_FLOAT_BINARY(atan2)
FUSOR_SMALL_FLOAT_BINARY(hypot)
FUSOR_SMALL_FLOAT_BINARY(fmod)
FUSOR_SMALL_FLOAT_BINARY(copysign)
#undef FUSOR_SMALL_FLOAT_BINARY
/// |x|: the sign bit cleared (exact, NaN included).
template <int M, int E>
FUSOR_HD small_float<M, E> abs(small_float<M, E> x) {
  return small_float<M, E>::from_bits(std::uint16_t(x.bits & 0x7fffu));
}
template <int M, int E>
FUSOR_HD bool isnan(small_float<M, E> x) {
  return (x.bits & 0x7fffu) > (((1u << E) - 1) << M);
}
template <int M, int E>
FUSOR_HD bool isinf(small_float<M, E> x) {
  return (x.bits & 0x7fffu) == (((1u << E) - 1) << M);
}
template <int M, int E>
FUSOR_HD bool isfinite(small_float<M, E> x) {
  return (x.bits & 0x7fffu) < (((1u << E) - 1) << M);
}
template <int M, int E>
FUSOR_HD bool signbit(small_float<M, E> x) {
  return (x.bits & 0x8000u) != 0;
}

/// Printed as the float it is exactly, with the shortest digits that read back to it.
template <int M, int E>
std::ostream& operator<<(std::ostream& os, small_float<M, E> x) {
  return os << float(x);
}

// ---- element traits -------------------------------------------------------------------------

namespace detail {
/// NumPy 2's result of float16 (or, as ml_dtypes gives it, bfloat16) with a built-in type U:
/// bool and 8-bit integers keep the 16-bit type, 16-bit integers and float32 give float32, wider
/// integers and float64 give float64, complex types complex64 or complex128 by the real rule.
template <class H, class U>
constexpr auto promote_small_with() {
  if constexpr (is_complex_v<U>) {
    using R = decltype(promote_small_with<H, real_t<U>>());
    if constexpr (std::is_same_v<R, H>) return std::complex<float>{};
    else return std::complex<R>{};
  } else if constexpr (std::is_same_v<U, bool> || (std::is_integral_v<U> && sizeof(U) == 1)) {
    return H{};
  } else if constexpr ((std::is_integral_v<U> && sizeof(U) == 2) || std::is_same_v<U, float>) {
    return float{};
  } else if constexpr (std::is_integral_v<U> || std::is_same_v<U, double>) {
    return double{};
  } else if constexpr (std::is_same_v<U, float16> || std::is_same_v<U, bfloat16>) {
    return float{};  // the other 16-bit type: ml_dtypes' bfloat16 with float16 is float32
  }
}

/// The promotion of H with U, where U is a built-in element or the other 16-bit type (no `type`
/// otherwise: no common type).
template <class H, class U>
struct small_promotion {};
template <class H, class U>
  requires(builtin_element_type<U> || std::is_same_v<U, float16> || std::is_same_v<U, bfloat16>)
struct small_promotion<H, U> {
  using type = decltype(promote_small_with<H, U>());
};

template <class H>
struct small_float_element {
  static constexpr bool is_element = true;
  static constexpr element_kind kind = element_kind::floating;
  using float_type = H;       // sqrt, exp, ... of a float16 array are float16, computed in float32
  using accumulator = float;  // sums collect in float32, as NumPy's pairwise sum of float16 does
  using sum_type = H;
  template <class U>
  using promote_with = typename small_promotion<H, U>::type;
  /// A C++ scalar is weak: integers, bool and real floats keep the 16-bit type, a complex scalar
  /// gives complex64 (NumPy 2's rule for Python scalars).
  template <class S>
  using weak_with = std::conditional_t<is_complex_v<S>, std::complex<float>, H>;
  /// Same-kind casting (NumPy's "same_kind"): from bool, integers and floats, to floats and complex.
  template <class From>
  static constexpr bool castable_from = !is_complex_v<From>;
  template <class To>
  static constexpr bool castable_to = std::is_floating_point_v<To> || is_complex_v<To> || std::is_same_v<To, float16> ||
                                      std::is_same_v<To, bfloat16>;
  /// astype from any element: complex keeps its real part, the other 16-bit type goes through its
  /// exact float.
  template <class From>
  FUSOR_HD static H convert(const From& x) {
    if constexpr (is_complex_v<From>) return H(x.real());
    else if constexpr (std::is_same_v<From, float16> || std::is_same_v<From, bfloat16>) return H(float(x));
    else return H(x);
  }
};
}  // namespace detail

template <>
struct element_traits<float16> : detail::small_float_element<float16> {
  static constexpr std::string_view name = "float16";
};
template <>
struct element_traits<bfloat16> : detail::small_float_element<bfloat16> {
  static constexpr std::string_view name = "bfloat16";
};

}  // namespace fusor

namespace std {
/// The formats' limits, as std::numeric_limits<float> describes float.
template <int M, int E>
struct numeric_limits<fusor::small_float<M, E>> {
 private:
  using H = fusor::small_float<M, E>;
  static constexpr std::uint16_t exponent_ones = std::uint16_t(((1u << E) - 1) << M);

 public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = false;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr bool is_iec559 = E == 5;
  static constexpr int digits = M + 1;
  static constexpr int radix = 2;
  static constexpr int min_exponent = 3 - (1 << (E - 1));
  static constexpr int max_exponent = 1 << (E - 1);
  static constexpr H min() noexcept { return H::from_bits(std::uint16_t(1u << M)); }
  static constexpr H lowest() noexcept { return H::from_bits(std::uint16_t(0x8000u | (exponent_ones - 1))); }
  static constexpr H max() noexcept { return H::from_bits(std::uint16_t(exponent_ones - 1)); }
  static constexpr H epsilon() noexcept { return H::from_bits(std::uint16_t((((1u << (E - 1)) - 1 - M) << M))); }
  static constexpr H infinity() noexcept { return H::from_bits(exponent_ones); }
  static constexpr H quiet_NaN() noexcept { return H::from_bits(std::uint16_t(exponent_ones | (1u << (M - 1)))); }
  static constexpr H denorm_min() noexcept { return H::from_bits(1); }
};
}  // namespace std
