#pragma once
// One generic functor per elementwise operation. Each is FUSOR_HD and written once for scalars;
// the cpu backend applies the same functor to xsimd batches (found by argument-dependent lookup,
// so core never includes xsimd). Which functors have a SIMD form on which lane types, and the few
// whose SIMD form differs, are the cpu backend's business (backend/cpu/packet.hpp), not core's.
//
// A functor's policy says what it computes in (NumPy's rules), and its flags say which element
// types it accepts, so misuse fails at compile time with a sentence (see operators.hpp).
#include <cmath>
#include <complex>
#include <limits>
#include <tuple>
#include <type_traits>

#include "config.hpp"
#include "dtype.hpp"

namespace fusor {

/// The element type of a scalar or of a SIMD batch (specialised for batches by the cpu backend).
template <class T>
struct lane_of {
  using type = T;
};
template <class T>
using lane_t = typename lane_of<T>::type;

namespace detail {
template <class L, class... T>
inline constexpr bool one_of = (std::is_same_v<L, T> || ...);
template <class T>
inline constexpr bool signed_int = std::is_integral_v<T> && std::is_signed_v<T>;

// Overflow wraps in NumPy and in SIMD registers, but is undefined in C++ for signed types and
// for the small unsigned ones (uint16 * uint16 is computed in int): compute in an unsigned type
// at least as wide as unsigned int, so scalar, SIMD and GPU agree bit for bit.
template <class T, class Op>
FUSOR_HD constexpr T wrapping(T a, T b, Op op) {
  using U = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
  return static_cast<T>(op(static_cast<U>(static_cast<std::make_unsigned_t<T>>(a)),
                           static_cast<U>(static_cast<std::make_unsigned_t<T>>(b))));
}
/// C's integer a % b (the dividend's sign), with NumPy's 0 for b = 0 and no INT_MIN % -1 trap.
template <class T>
FUSOR_HD constexpr T truncated_remainder(T a, T b) {
  if (b == 0) return T(0);
  if constexpr (std::is_signed_v<T>)
    if (b == T(-1)) return T(0);
  return static_cast<T>(a % b);
}
template <class T>
FUSOR_HD constexpr bool is_nan(const T& x) {
  if constexpr (std::is_floating_point_v<T>) return x != x;
  else if constexpr (is_complex_v<T>) return x.real() != x.real() || x.imag() != x.imag();
  else if constexpr (std::numeric_limits<T>::has_quiet_NaN) return !(x == x);  // float16, bfloat16
  else return false;
}
}  // namespace detail

// ---- policies: which type the operands are converted to before the functor runs ------------
struct same_type_policy {  // NumPy promotion between the operands
  template <class... V>
  using compute = promote_t<V...>;
  static constexpr bool condition_first = false;
  static constexpr bool real_only = false;       // rejects complex operands
  static constexpr bool integral_only = false;   // bitwise operations
  static constexpr bool integer_math_only = false;  // gcd, lcm: integers other than bool
  static constexpr bool bool_arithmetic_error = false;  // + - * / % on two bools
  template <std::size_t I>
  static constexpr bool accepts_mask = false;  // SIMD: argument I may be a comparison result
};
struct float_policy : same_type_policy {  // transcendental functions: integers go to float
  template <class... V>
  using compute = to_float_t<promote_t<V...>>;
};
struct true_divide_policy : same_type_policy {  // `/` is true division, as in NumPy
  template <class... V>
  using compute = std::conditional_t<std::is_integral_v<promote_t<V...>>, double, promote_t<V...>>;
  static constexpr bool bool_arithmetic_error = true;
};
struct arithmetic_policy : same_type_policy {
  static constexpr bool bool_arithmetic_error = true;
};
struct ordering_policy : same_type_policy {  // <, maximum, floor: undefined for complex
  static constexpr bool real_only = true;
};
struct logical_policy : same_type_policy {
  template <std::size_t I>
  static constexpr bool accepts_mask = true;
};
struct bitwise_policy : same_type_policy {
  static constexpr bool integral_only = true;
};
struct integer_policy : same_type_policy {
  static constexpr bool integer_math_only = true;
};

// ---- arithmetic ----------------------------------------------------------------------------
struct add_fn : arithmetic_policy {
  template <class T> FUSOR_HD T operator()(const T& a, const T& b) const {
    if constexpr (integer<T>) return detail::wrapping(a, b, [](auto x, auto y) { return x + y; });
    else return a + b;
  }
};
struct subtract_fn : arithmetic_policy {
  template <class T> FUSOR_HD T operator()(const T& a, const T& b) const {
    if constexpr (integer<T>) return detail::wrapping(a, b, [](auto x, auto y) { return x - y; });
    else return a - b;
  }
};
struct multiply_fn : arithmetic_policy {
  template <class T> FUSOR_HD T operator()(const T& a, const T& b) const {
    if constexpr (integer<T>) return detail::wrapping(a, b, [](auto x, auto y) { return x * y; });
    else return a * b;
  }
};
struct divide_fn : true_divide_policy {
  template <class T> FUSOR_HD T operator()(const T& a, const T& b) const { return a / b; }
};
/// NumPy's `%`: the result takes the sign of the divisor; x % 0 is 0 for integers (NumPy warns).
struct floor_divide_fn : arithmetic_policy {  // NumPy's //: rounds toward minus infinity
  static constexpr bool real_only = true;
  template <class T> FUSOR_HD T operator()(const T& a, const T& b) const {
    if constexpr (std::is_integral_v<T>) {
      if (b == 0) return T(0);  // NumPy also gives 0 (with a warning)
      if constexpr (std::is_signed_v<T>)
        if (b == T(-1)) return static_cast<T>(T(0) - a);  // wraps for the minimum value, like NumPy
      T q = static_cast<T>(a / b);
      if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
      return q;
    } else {
      // NumPy's npy_divmod: the quotient of a - fmod(a, b), so that inf // x is NaN (floor(inf / x)
      // would be inf) and -1 // inf is -1 (floor(-1 / inf) would be -0)
      if (b == T(0)) return a / b;
      using std::copysign;
      using std::floor;
      using std::fmod;
      const T mod = fmod(a, b);
      T div = (a - mod) / b;
      if (mod != T(0) && ((b < T(0)) != (mod < T(0)))) div -= T(1);
      if (div == T(0)) return copysign(T(0), a / b);
      T q = floor(div);
      if (div - q > T(0.5)) q += T(1);
      return q;
    }
  }
};
struct mod_fn : arithmetic_policy {
  static constexpr bool real_only = true;
  template <class T> FUSOR_HD T operator()(const T& a, const T& b) const {
    if constexpr (std::is_integral_v<T>) {
      T r = detail::truncated_remainder(a, b);
      if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
      return r;
    } else {
      using std::fmod;
      T r = fmod(a, b);
      if (r != T(0)) {
        if ((r < T(0)) != (b < T(0))) r += b;
      } else {
        r = std::copysign(T(0), b);
      }
      return r;
    }
  }
};
struct negate_fn : arithmetic_policy {
  template <class T> FUSOR_HD T operator()(const T& a) const {
    if constexpr (integer<T>) return detail::wrapping(T(0), a, [](auto x, auto y) { return x - y; });
    else return -a;
  }
};
struct square_fn : arithmetic_policy {
  static constexpr bool bool_arithmetic_error = false;  // square(bool) is bool in NumPy
  template <class T> FUSOR_HD T operator()(const T& a) const {
    if constexpr (std::is_same_v<T, bool>) return a;
    else return multiply_fn{}(a, a);
  }
};
// Functors whose result type differs from the argument's spell it out instead of deducing it:
// deducing would instantiate the body with std::complex while computing NumPy's result type on
// the host, and nvcc rejects that body's host-only calls in a __host__ __device__ function (on
// the device the body runs with cuda::std::complex).
struct abs_fn : same_type_policy {
  template <class T> FUSOR_HD real_t<T> operator()(const T& a) const {
    if constexpr (std::is_same_v<T, bool> || std::is_unsigned_v<T>) return a;
    else if constexpr (detail::signed_int<T>) return a < 0 ? negate_fn{}(a) : a;
    else { using std::abs; return abs(a); }
  }
};
/// -1, 0 or +1; NaN stays NaN (NumPy).
struct sign_fn : ordering_policy {
  static constexpr bool bool_arithmetic_error = true;
  template <class T> FUSOR_HD T operator()(const T& a) const {
    if (a > T(0)) return T(1);
    if (a < T(0)) return T(-1);
    return a;
  }
};
struct maximum_fn : ordering_policy {  // NaN-propagating, like np.maximum
  template <class T> FUSOR_HD T operator()(const T& a, const T& b) const {
    if constexpr (std::is_floating_point_v<T>)
      if (a != a || b != b) return a + b;
    return a < b ? b : a;
  }
};
struct minimum_fn : ordering_policy {
  template <class T> FUSOR_HD T operator()(const T& a, const T& b) const {
    if constexpr (std::is_floating_point_v<T>)
      if (a != a || b != b) return a + b;
    return b < a ? b : a;
  }
};
/// clip(x, lo, hi) = minimum(maximum(x, lo), hi), NaN-propagating like np.clip.
struct clip_fn : ordering_policy {
  template <class T> FUSOR_HD T operator()(const T& x, const T& lo, const T& hi) const {
    return minimum_fn{}(maximum_fn{}(x, lo), hi);
  }
};
struct fma_fn : arithmetic_policy {
  template <class T> FUSOR_HD T operator()(const T& a, const T& b, const T& c) const {
    if constexpr (std::is_floating_point_v<lane_t<T>>) { using std::fma; return fma(a, b, c); }
    else return add_fn{}(multiply_fn{}(a, b), c);
  }
};
/// Integer powers by squaring (pow() rejects negative integer exponents before a loop runs, as
/// NumPy does; the functor itself gives 0 for them unless the base is +-1); floating and complex
/// powers through pow.
struct power_fn : arithmetic_policy {
  template <class T> FUSOR_HD T operator()(const T& a, const T& b) const {
    if constexpr (std::is_integral_v<T>) {
      if (b < T(0)) return a == T(1) ? T(1) : (a == T(-1) ? ((b % 2) ? T(-1) : T(1)) : T(0));
      T r = 1, base = a;
      for (T e = b; e > 0; e /= 2) {
        if (e % 2) r = multiply_fn{}(r, base);
        base = multiply_fn{}(base, base);
      }
      return r;
    } else { using std::pow; return pow(a, b); }
  }
};

// ---- comparisons and logic (results are bool) ----------------------------------------------
#define FUSOR_COMPARISON(NAME, OP, POLICY)                                                  \
  struct NAME : POLICY {                                                                    \
    template <class T> FUSOR_HD auto operator()(const T& a, const T& b) const { return a OP b; } \
  };
FUSOR_COMPARISON(equal_fn, ==, same_type_policy)
FUSOR_COMPARISON(not_equal_fn, !=, same_type_policy)
FUSOR_COMPARISON(less_fn, <, ordering_policy)
FUSOR_COMPARISON(less_equal_fn, <=, ordering_policy)
FUSOR_COMPARISON(greater_fn, >, ordering_policy)
FUSOR_COMPARISON(greater_equal_fn, >=, ordering_policy)
#undef FUSOR_COMPARISON

/// A comparison with a C++ integer scalar that may not fit the array's integer type (NumPy 2:
/// `uint8 < 300` is all true, not an error). In range, it is F; out of range every element has
/// the same answer, fixed when the expression is built (verdict 0 or 1).
template <class F>
struct scalar_comparison_fn : F {
  signed char verdict = -1;  ///< -1: compare the values; 0 or 1: the answer for every element
  template <class T> FUSOR_HD bool operator()(const T& a, const T& b) const {
    return verdict < 0 ? bool(F::operator()(a, b)) : verdict != 0;
  }
};

struct logical_and_fn : logical_policy {
  template <class T> FUSOR_HD bool operator()(const T& a, const T& b) const { return a != T(0) && b != T(0); }
};
struct logical_or_fn : logical_policy {
  template <class T> FUSOR_HD bool operator()(const T& a, const T& b) const { return a != T(0) || b != T(0); }
};
struct logical_xor_fn : logical_policy {
  template <class T> FUSOR_HD bool operator()(const T& a, const T& b) const { return (a != T(0)) != (b != T(0)); }
};
struct logical_not_fn : logical_policy {
  template <class T> FUSOR_HD bool operator()(const T& a) const { return a == T(0); }
};

// ---- bitwise (integers and bool) ------------------------------------------------------------
struct bit_and_fn : bitwise_policy {
  template <class T> FUSOR_HD T operator()(const T& a, const T& b) const { return static_cast<T>(a & b); }
};
struct bit_or_fn : bitwise_policy {
  template <class T> FUSOR_HD T operator()(const T& a, const T& b) const { return static_cast<T>(a | b); }
};
struct bit_xor_fn : bitwise_policy {
  template <class T> FUSOR_HD T operator()(const T& a, const T& b) const { return static_cast<T>(a ^ b); }
};
/// ~x; on bool it is logical not, as in NumPy.
struct bit_not_fn : bitwise_policy {
  template <class T> FUSOR_HD T operator()(const T& a) const {
    if constexpr (std::is_same_v<T, bool>) return !a;
    else return static_cast<T>(~a);
  }
};
/// Shifts by a negative count or by at least the bit width give 0 (or -1 for a negative value
/// shifted right), as NumPy does, instead of C++'s undefined behaviour.
struct left_shift_fn : bitwise_policy {
  template <class T> FUSOR_HD T operator()(const T& a, const T& b) const {
    if constexpr (std::is_same_v<T, bool>) return static_cast<T>(b == 0 && a);
    else {
      if (b < 0 || b >= T(sizeof(T) * 8)) return T(0);
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(a) << b);
    }
  }
};
struct right_shift_fn : bitwise_policy {
  template <class T> FUSOR_HD T operator()(const T& a, const T& b) const {
    if constexpr (std::is_same_v<T, bool>) return static_cast<T>(b == 0 && a);
    else {
      if (b < 0 || b >= T(sizeof(T) * 8)) return a < 0 ? T(-1) : T(0);
      return static_cast<T>(a >> b);
    }
  }
};

// ---- transcendental and rounding -------------------------------------------------------------
// The unqualified call after `using std::f` picks std::f for scalars and xsimd::f for batches.
#define FUSOR_FLOAT_FUNCTION(NAME, FN, POLICY)                                     \
  struct NAME : POLICY {                                                           \
    template <class T> FUSOR_HD T operator()(const T& a) const { using std::FN; return FN(a); } \
  };
FUSOR_FLOAT_FUNCTION(sqrt_fn, sqrt, float_policy)
FUSOR_FLOAT_FUNCTION(exp_fn, exp, float_policy)
FUSOR_FLOAT_FUNCTION(log_fn, log, float_policy)
FUSOR_FLOAT_FUNCTION(log10_fn, log10, float_policy)
FUSOR_FLOAT_FUNCTION(sin_fn, sin, float_policy)
FUSOR_FLOAT_FUNCTION(cos_fn, cos, float_policy)
FUSOR_FLOAT_FUNCTION(tan_fn, tan, float_policy)
FUSOR_FLOAT_FUNCTION(asin_fn, asin, float_policy)
FUSOR_FLOAT_FUNCTION(acos_fn, acos, float_policy)
FUSOR_FLOAT_FUNCTION(atan_fn, atan, float_policy)
FUSOR_FLOAT_FUNCTION(sinh_fn, sinh, float_policy)
FUSOR_FLOAT_FUNCTION(cosh_fn, cosh, float_policy)
FUSOR_FLOAT_FUNCTION(tanh_fn, tanh, float_policy)
struct real_float_policy : float_policy {
  static constexpr bool real_only = true;
};
FUSOR_FLOAT_FUNCTION(cbrt_fn, cbrt, real_float_policy)
FUSOR_FLOAT_FUNCTION(exp2_fn, exp2, real_float_policy)
FUSOR_FLOAT_FUNCTION(expm1_fn, expm1, real_float_policy)
FUSOR_FLOAT_FUNCTION(log2_fn, log2, real_float_policy)
FUSOR_FLOAT_FUNCTION(log1p_fn, log1p, real_float_policy)
// SciPy's special functions (erf, expit) and NumPy's i0 compute integers and bools in float64,
// where the ufuncs of NumPy's own math (sin, exp, log2, ...) take float16, here float32, for the
// small ones: erf's first loop is d->d, np.i0 converts to float64 first.
struct special_float_policy : float_policy {
  static constexpr bool real_only = true;
  template <class... V>
  using compute = std::conditional_t<std::is_integral_v<promote_t<V...>>, double, to_float_t<promote_t<V...>>>;
};
FUSOR_FLOAT_FUNCTION(erf_fn, erf, special_float_policy)
#undef FUSOR_FLOAT_FUNCTION

namespace detail {
// The logistic function 1 / (1 + e^-x), for scalars and SIMD batches (0 for x -> -inf, 1 for
// +inf). Dual numbers have their own overload (fusor::ad), found by argument-dependent lookup,
// whose derivative s(1 - s) stays finite where e^-x overflows.
template <class T>
FUSOR_HD T logistic(const T& a) {
  using std::exp;
  return T(1) / (T(1) + exp(-a));
}
}  // namespace detail
struct sigmoid_fn : special_float_policy {  // scipy.special.expit
  template <class T> FUSOR_HD T operator()(const T& a) const { using detail::logistic; return logistic(a); }
};

struct atan2_fn : real_float_policy {
  template <class T> FUSOR_HD T operator()(const T& y, const T& x) const { using std::atan2; return atan2(y, x); }
};

// Rounding keeps integers as they are (NumPy >= 2.1); np.round rounds half to even, which is
// nearbyint under the default rounding mode, not std::round.
#define FUSOR_ROUNDING(NAME, FN)                                                     \
  struct NAME : ordering_policy {                                                    \
    template <class T> FUSOR_HD T operator()(const T& a) const {                     \
      if constexpr (std::is_integral_v<lane_t<T>>) return a;                         \
      else { using std::FN; return FN(a); }                                          \
    }                                                                                \
  };
FUSOR_ROUNDING(floor_fn, floor)
FUSOR_ROUNDING(ceil_fn, ceil)
FUSOR_ROUNDING(trunc_fn, trunc)
FUSOR_ROUNDING(round_fn, nearbyint)
#undef FUSOR_ROUNDING

// ---- classification --------------------------------------------------------------------------
struct isnan_fn : same_type_policy {
  template <class T> FUSOR_HD auto operator()(const T& a) const {
    if constexpr (std::is_floating_point_v<T> || is_complex_v<T>) return detail::is_nan(a);
    else if constexpr (std::is_integral_v<T>) return false;
    else { using std::isnan; return isnan(a); }
  }
};
struct isinf_fn : same_type_policy {
  template <class T> FUSOR_HD auto operator()(const T& a) const {
    if constexpr (is_complex_v<T>) return std::isinf(a.real()) || std::isinf(a.imag());
    else if constexpr (std::is_integral_v<T>) return false;
    else { using std::isinf; return isinf(a); }
  }
};
struct isfinite_fn : same_type_policy {
  template <class T> FUSOR_HD auto operator()(const T& a) const {
    if constexpr (is_complex_v<T>) return std::isfinite(a.real()) && std::isfinite(a.imag());
    else if constexpr (std::is_integral_v<T>) return true;
    else { using std::isfinite; return isfinite(a); }
  }
};

// ---- complex parts ---------------------------------------------------------------------------
struct conj_fn : same_type_policy {
  template <class T> FUSOR_HD T operator()(const T& a) const {
    if constexpr (complex_valued<T>) { using std::conj; return conj(a); }  // ADL: cuda::std::conj on the device
    else return a;
  }
};
struct real_fn : same_type_policy {
  template <class T> FUSOR_HD auto operator()(const T& a) const {
    if constexpr (complex_valued<T>) return a.real();
    else return a;
  }
};
struct imag_fn : same_type_policy {
  template <class T> FUSOR_HD auto operator()(const T& a) const {
    if constexpr (complex_valued<T>) return a.imag();
    else return T(0);
  }
};
/// The angle of a complex number (np.angle); for reals 0 or pi.
struct arg_fn : float_policy {
  template <class T> FUSOR_HD real_t<T> operator()(const T& a) const {
    if constexpr (complex_valued<T>) { using std::arg; return arg(a); }
    else return std::atan2(T(0), a);
  }
};
/// cis(theta) = cos(theta) + i sin(theta).
struct cis_fn : real_float_policy {
  template <class T> FUSOR_HD std::complex<T> operator()(const T& t) const {
    return std::complex<T>(std::cos(t), std::sin(t));
  }
};

// ---- more of NumPy's elementwise functions ----------------------------------------------------
namespace detail {
inline constexpr double pi_v = 3.141592653589793238462643383279502884;
inline constexpr double ln2_v = 0.693147180559945309417232121458176568;
}  // namespace detail

/// np.hypot: sqrt(a^2 + b^2) without undue overflow or underflow.
struct hypot_fn : real_float_policy {
  template <class T> FUSOR_HD T operator()(const T& a, const T& b) const { using std::hypot; return hypot(a, b); }
};
/// np.copysign: the magnitude of a with the sign of b (integers go to float, as in NumPy).
struct copysign_fn : real_float_policy {
  template <class T> FUSOR_HD T operator()(const T& a, const T& b) const { using std::copysign; return copysign(a, b); }
};
/// np.fmod: C's remainder, with the sign of the dividend (np.remainder / % take the divisor's);
/// an integer x fmod 0 is 0, as NumPy gives (with a warning).
struct fmod_fn : arithmetic_policy {
  static constexpr bool real_only = true;
  template <class T> FUSOR_HD T operator()(const T& a, const T& b) const {
    if constexpr (std::is_integral_v<T>) return detail::truncated_remainder(a, b);
    else { using std::fmod; return fmod(a, b); }
  }
};
/// np.reciprocal: 1 / x in the input's type; for integers truncated (0 unless |x| = 1) and 0 for
/// x = 0, where NumPy gives the type's minimum with a warning.
struct reciprocal_fn : arithmetic_policy {
  template <class T> FUSOR_HD T operator()(const T& a) const {
    if constexpr (std::is_integral_v<lane_t<T>>) {
      if (a == T(0)) return T(0);
      return static_cast<T>(T(1) / a);
    } else return T(1) / a;
  }
};
/// np.signbit: whether the sign bit is set (true for -0.0 and negative NaNs).
struct signbit_fn : ordering_policy {
  template <class T> FUSOR_HD bool operator()(const T& a) const {
    if constexpr (std::is_floating_point_v<T>) { using std::signbit; return signbit(a); }
    else if constexpr (std::is_signed_v<T>) return a < T(0);
    else return false;
  }
};
/// np.rint: round half to even; integers go to float64 (rint has only floating loops in NumPy).
struct rint_fn : real_float_policy {
  template <class T> FUSOR_HD T operator()(const T& a) const { using std::nearbyint; return nearbyint(a); }
};
namespace detail {
template <class T>
FUSOR_HD T unsigned_magnitude_gcd(T a, T b) {
  while (b != T(0)) {
    const T t = static_cast<T>(a % b);
    a = b;
    b = t;
  }
  return a;
}
/// |a| for gcd and lcm, wrapping for the minimum value as NumPy does.
template <class T>
FUSOR_HD std::make_unsigned_t<T> magnitude_bits(T a) {
  using U = std::make_unsigned_t<T>;
  if constexpr (std::is_signed_v<T>) return a < T(0) ? static_cast<U>(U(0) - static_cast<U>(a)) : static_cast<U>(a);
  else return static_cast<U>(a);
}
}  // namespace detail
/// np.gcd: the greatest common divisor of |a| and |b| (gcd(0, 0) = 0).
struct gcd_fn : integer_policy {
  template <class T> FUSOR_HD T operator()(const T& a, const T& b) const {
    return static_cast<T>(detail::unsigned_magnitude_gcd(detail::magnitude_bits(a), detail::magnitude_bits(b)));
  }
};
/// np.lcm: the least common multiple of |a| and |b| (0 when either is 0), wrapping on overflow.
struct lcm_fn : integer_policy {
  template <class T> FUSOR_HD T operator()(const T& a, const T& b) const {
    const auto x = detail::magnitude_bits(a), y = detail::magnitude_bits(b);
    if (x == 0 || y == 0) return T(0);
    return multiply_fn{}(static_cast<T>(x / detail::unsigned_magnitude_gcd(x, y)), static_cast<T>(y));  // wraps, as NumPy
  }
};
/// np.nan_to_num: NaN to `nan`, +inf to `posinf`, -inf to `neginf` (by default 0 and the type's
/// largest and lowest finite values); complex numbers part by part; integers unchanged.
struct nan_to_num_fn : same_type_policy {
  double nan = 0.0, posinf = 0.0, neginf = 0.0;
  bool has_posinf = false, has_neginf = false;
  template <class R>
  FUSOR_HD R fix(const R& x) const {
    if (x != x) return static_cast<R>(nan);
    if (x > std::numeric_limits<R>::max()) return has_posinf ? static_cast<R>(posinf) : std::numeric_limits<R>::max();
    if (x < std::numeric_limits<R>::lowest()) return has_neginf ? static_cast<R>(neginf) : std::numeric_limits<R>::lowest();
    return x;
  }
  template <class T> FUSOR_HD T operator()(const T& a) const {
    if constexpr (is_complex_v<T>) return T(fix(a.real()), fix(a.imag()));
    else if constexpr (std::is_floating_point_v<T>) return fix(a);
    else return a;
  }
};
/// np.heaviside(x, h0): 0 for x < 0, h0 at x = 0, 1 for x > 0, NaN for NaN.
struct heaviside_fn : real_float_policy {
  template <class T> FUSOR_HD T operator()(const T& x, const T& h0) const {
    if (x < T(0)) return T(0);
    if (x > T(0)) return T(1);
    if (x == T(0)) return h0;
    return x;  // NaN
  }
};
/// np.logaddexp: log(exp(a) + exp(b)) without overflow: max + log1p(exp(-|a - b|)).
struct logaddexp_fn : real_float_policy {
  template <class T> FUSOR_HD T operator()(const T& a, const T& b) const {
    using std::exp;
    using std::log1p;
    if (a == b) return a + T(detail::ln2_v);  // also inf + inf, where a - b would be NaN
    const T d = a - b;
    if (d > T(0)) return a + log1p(exp(-d));
    if (d <= T(0)) return b + log1p(exp(d));
    return d;  // NaN
  }
};
/// np.logaddexp2: log2(2^a + 2^b) without overflow.
struct logaddexp2_fn : real_float_policy {
  template <class T> FUSOR_HD T operator()(const T& a, const T& b) const {
    using std::exp2;
    using std::log1p;
    if (a == b) return a + T(1);
    const T d = a - b;
    if (d > T(0)) return a + log1p(exp2(-d)) / T(detail::ln2_v);
    if (d <= T(0)) return b + log1p(exp2(d)) / T(detail::ln2_v);
    return d;  // NaN
  }
};
/// np.deg2rad and np.rad2deg (np.radians and np.degrees).
struct deg2rad_fn : real_float_policy {
  template <class T> FUSOR_HD T operator()(const T& a) const { return a * T(detail::pi_v / 180.0); }
};
struct rad2deg_fn : real_float_policy {
  template <class T> FUSOR_HD T operator()(const T& a) const { return a * T(180.0 / detail::pi_v); }
};
/// np.sinc: sin(pi x) / (pi x), 1 at x = 0 (the normalised sinc).
struct sinc_fn : float_policy {
  template <class T> FUSOR_HD T operator()(const T& x) const {
    using std::sin;
    if (x == T(0)) return T(1);
    const T y = x * real_t<T>(detail::pi_v);
    return sin(y) / y;
  }
};
/// np.i0: the modified Bessel function of the first kind, order 0. Computed in double: its power
/// series (all terms positive) up to |x| = 30, beyond it the asymptotic series of e^x / sqrt(2 pi x),
/// whose terms fall to about e^-2|x| before they grow.
struct i0_fn : special_float_policy {
  template <class T> FUSOR_HD T operator()(const T& a) const {
    using std::abs;
    using std::exp;
    using std::sqrt;
    const double x = abs(double(a));
    if (x != x) return a;
    if (x > 1500.0) return std::numeric_limits<T>::infinity();  // e^x overflows double from 710 on
    if (x <= 30.0) {
      const double h = 0.25 * x * x;
      double term = 1.0, total = 1.0;
      for (int k = 1; k < 500 && term > 1e-17 * total; ++k) {
        term *= h / (double(k) * double(k));
        total += term;
      }
      return static_cast<T>(total);
    }
    // e^x / sqrt(2 pi x) * sum_k prod_{j<=k} (2j - 1)^2 / (k! (8x)^k); exp(x/2) twice keeps 710 < x < 1420 finite
    double term = 1.0, total = 1.0;
    for (int k = 1; k < 60; ++k) {
      term *= double(2 * k - 1) * double(2 * k - 1) / (double(k) * 8.0 * x);
      total += term;
      if (term < 1e-17 * total) break;
    }
    const double half = exp(0.5 * x);
    return static_cast<T>(half * (total / sqrt(2.0 * detail::pi_v * x)) * half);
  }
};

/// isclose(a, b): |a - b| <= atol + rtol |b| for finite values; infinities equal only to
/// themselves; NaN equal to NaN only when equal_nan (np.isclose). Computed in floating point.
struct isclose_fn : float_policy {
  double rtol = 1e-5, atol = 1e-8;
  bool equal_nan = false;
  template <class T> FUSOR_HD bool operator()(const T& a, const T& b) const {
    using std::abs;
    if (detail::is_nan(a) || detail::is_nan(b)) return equal_nan && detail::is_nan(a) && detail::is_nan(b);
    if (a == b) return true;  // also equal infinities
    using R = real_t<T>;  // in the operands' precision, as NumPy does with Python float tolerances
    const R d = abs(a - b), mb = abs(b);
    if (!(mb < std::numeric_limits<R>::infinity()) || !(R(abs(a)) < std::numeric_limits<R>::infinity())) return false;
    return d <= R(atol) + R(rtol) * mb;
  }
};

// ---- selection -------------------------------------------------------------------------------
/// where(c, a, b): the condition keeps its own type (non-zero is true); a and b are promoted.
struct where_fn : same_type_policy {
  static constexpr bool condition_first = true;
  template <std::size_t I>
  static constexpr bool accepts_mask = (I == 0);
  template <class... V>
  using compute = promote_t<std::tuple_element_t<1, std::tuple<V...>>, std::tuple_element_t<2, std::tuple<V...>>>;
  template <class C, class T> FUSOR_HD T operator()(const C& c, const T& a, const T& b) const {
    return c != C(0) ? a : b;
  }
};

}  // namespace fusor
