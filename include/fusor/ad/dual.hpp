#pragma once
// Forward-mode automatic differentiation: dual numbers. dual<T, N> carries a value and N
// tangents (N > 1 is vector mode: N Jacobian columns in one evaluation). It is an element type
// (element_traits below), so array<dual<float>> evaluates core's functors on duals in the same
// fused pass as any array; the cpu backend evaluates the same functors on dual<xsimd::batch<T>>
// (ad/dual_planes.hpp), and device code on dual<T>.
//
// The functions below are found by argument-dependent lookup from core's functors (`using
// std::sin; return sin(a);`), so each computes value and derivative together: sin and cos share
// one sincos, exp and tanh reuse their own result. They are written once for any lane type L
// (float, double, or a SIMD batch of them): what differs between a scalar and a batch (a
// selection, sincos) goes through the helpers in detail.
#include <cmath>
#include <limits>
#include <string_view>
#include <type_traits>

#include "../core/config.hpp"
#include "../core/dtype.hpp"

namespace fusor::ad {

/// A value and N tangents. An aggregate: dual<float>{3.0f, {1.0f}} is x = 3 seeded with dx = 1;
/// dual<float>(2.0f) (or dual<float>{2.0f}) is the constant 2 (tangents zero).
template <class T, int N = 1>
struct dual {
  static_assert(N >= 1, "fusor: a dual number has at least one tangent (N >= 1)");
  using lane_type = T;
  static constexpr int tangents = N;
  // (the initialisers make dual<T>(2.0) and dual<T>{2.0} constants without a missing-initialiser
  // warning; the type stays an aggregate and trivially copyable)
  T value{};
  T tangent[N]{};

  /// The real and imaginary parts of a dual number of complex values (ad/complex_dual.hpp), each a
  /// dual number of reals: both parts are R-linear, so a tangent's part is the part's tangent.
  FUSOR_HD constexpr auto real() const
    requires is_complex_v<T>
  {
    dual<real_t<T>, N> r{value.real(), {}};
    for (int k = 0; k < N; ++k) r.tangent[k] = tangent[k].real();
    return r;
  }
  FUSOR_HD constexpr auto imag() const
    requires is_complex_v<T>
  {
    dual<real_t<T>, N> r{value.imag(), {}};
    for (int k = 0; k < N; ++k) r.tangent[k] = tangent[k].imag();
    return r;
  }
};

template <class X>
inline constexpr bool is_dual_v = false;
template <class T, int N>
inline constexpr bool is_dual_v<dual<T, N>> = true;

namespace detail {
// A selection that works for a bool and for a SIMD mask (xsimd::select, found by ADL).
template <class M, class L>
FUSOR_HD constexpr L pick(const M& m, const L& a, const L& b) {
  if constexpr (std::is_same_v<M, bool>) return m ? a : b;
  else return select(m, a, b);
}
template <class L>
struct sin_cos {
  L s, c;
};
// One sincos for both functions: xsimd's for batches, the CUDA math library's on the device,
// and the compiler's merge of sin and cos of one argument (one libm sincos call) on the host.
template <class L>
FUSOR_HD sin_cos<L> sincos_of(const L& x) {
  if constexpr (std::is_floating_point_v<L>) {
#if defined(__CUDA_ARCH__)
    L s, c;
    ::sincos(x, &s, &c);
    return {s, c};
#else
    return {std::sin(x), std::cos(x)};
#endif
  } else {
    auto [s, c] = sincos(x);  // ADL: xsimd::sincos
    return {s, c};
  }
}
template <class L>
FUSOR_HD constexpr L sign_of(const L& x) {
  return pick(x > L(0), L(1), pick(x < L(0), L(-1), L(0)));
}
}  // namespace detail

// ---- arithmetic ---------------------------------------------------------------------------------
// dual (op) dual, and dual (op) a plain number (a lane value or a C++ arithmetic type, converted to
// the lane type: 2.0 * x stays float for dual<float>).
template <class S, class T>
concept plain_operand = std::is_arithmetic_v<S> || std::is_same_v<S, T>;

template <class T, int N>
FUSOR_HD constexpr dual<T, N> operator+(const dual<T, N>& a) { return a; }
template <class T, int N>
FUSOR_HD constexpr dual<T, N> operator-(const dual<T, N>& a) {
  dual<T, N> r{-a.value, {}};
  for (int k = 0; k < N; ++k) r.tangent[k] = -a.tangent[k];
  return r;
}
template <class T, int N>
FUSOR_HD constexpr dual<T, N> operator+(const dual<T, N>& a, const dual<T, N>& b) {
  dual<T, N> r{a.value + b.value, {}};
  for (int k = 0; k < N; ++k) r.tangent[k] = a.tangent[k] + b.tangent[k];
  return r;
}
template <class T, int N>
FUSOR_HD constexpr dual<T, N> operator-(const dual<T, N>& a, const dual<T, N>& b) {
  dual<T, N> r{a.value - b.value, {}};
  for (int k = 0; k < N; ++k) r.tangent[k] = a.tangent[k] - b.tangent[k];
  return r;
}
template <class T, int N>
FUSOR_HD constexpr dual<T, N> operator*(const dual<T, N>& a, const dual<T, N>& b) {
  dual<T, N> r{a.value * b.value, {}};
  for (int k = 0; k < N; ++k) r.tangent[k] = a.tangent[k] * b.value + a.value * b.tangent[k];
  return r;
}
template <class T, int N>
FUSOR_HD constexpr dual<T, N> operator/(const dual<T, N>& a, const dual<T, N>& b) {
  // d(a/b) = (da - (a/b) db) / b: one division for the value, one reciprocal for the tangents
  const T q = a.value / b.value;
  const T inv = T(1) / b.value;
  dual<T, N> r{q, {}};
  for (int k = 0; k < N; ++k) r.tangent[k] = (a.tangent[k] - q * b.tangent[k]) * inv;
  return r;
}
template <class T, int N, plain_operand<T> S>
FUSOR_HD constexpr dual<T, N> operator+(const dual<T, N>& a, const S& s) {
  dual<T, N> r = a;
  r.value = r.value + T(s);
  return r;
}
template <class T, int N, plain_operand<T> S>
FUSOR_HD constexpr dual<T, N> operator+(const S& s, const dual<T, N>& a) { return a + s; }
template <class T, int N, plain_operand<T> S>
FUSOR_HD constexpr dual<T, N> operator-(const dual<T, N>& a, const S& s) {
  dual<T, N> r = a;
  r.value = r.value - T(s);
  return r;
}
template <class T, int N, plain_operand<T> S>
FUSOR_HD constexpr dual<T, N> operator-(const S& s, const dual<T, N>& a) {
  dual<T, N> r = -a;
  r.value = T(s) + r.value;
  return r;
}
template <class T, int N, plain_operand<T> S>
FUSOR_HD constexpr dual<T, N> operator*(const dual<T, N>& a, const S& s) {
  const T c(s);
  dual<T, N> r{a.value * c, {}};
  for (int k = 0; k < N; ++k) r.tangent[k] = a.tangent[k] * c;
  return r;
}
template <class T, int N, plain_operand<T> S>
FUSOR_HD constexpr dual<T, N> operator*(const S& s, const dual<T, N>& a) { return a * s; }
template <class T, int N, plain_operand<T> S>
FUSOR_HD constexpr dual<T, N> operator/(const dual<T, N>& a, const S& s) {
  const T c(s);
  dual<T, N> r{a.value / c, {}};
  for (int k = 0; k < N; ++k) r.tangent[k] = a.tangent[k] / c;
  return r;
}
template <class T, int N, plain_operand<T> S>
FUSOR_HD constexpr dual<T, N> operator/(const S& s, const dual<T, N>& b) { return dual<T, N>{T(s), {}} / b; }

template <class T, int N, class S>
FUSOR_HD constexpr dual<T, N>& operator+=(dual<T, N>& a, const S& b) { return a = a + b; }
template <class T, int N, class S>
FUSOR_HD constexpr dual<T, N>& operator-=(dual<T, N>& a, const S& b) { return a = a - b; }
template <class T, int N, class S>
FUSOR_HD constexpr dual<T, N>& operator*=(dual<T, N>& a, const S& b) { return a = a * b; }
template <class T, int N, class S>
FUSOR_HD constexpr dual<T, N>& operator/=(dual<T, N>& a, const S& b) { return a = a / b; }

// ---- comparisons: on the values (a dual is a point with a direction; ordering is the point's) ---
#define FUSOR_DUAL_COMPARISON(OP)                                                                 \
  template <class T, int N>                                                                       \
  FUSOR_HD constexpr auto operator OP(const dual<T, N>& a, const dual<T, N>& b) {                 \
    return a.value OP b.value;                                                                    \
  }                                                                                               \
  template <class T, int N, plain_operand<T> S>                                                   \
  FUSOR_HD constexpr auto operator OP(const dual<T, N>& a, const S& s) { return a.value OP T(s); } \
  template <class T, int N, plain_operand<T> S>                                                   \
  FUSOR_HD constexpr auto operator OP(const S& s, const dual<T, N>& a) { return T(s) OP a.value; }
FUSOR_DUAL_COMPARISON(==)
FUSOR_DUAL_COMPARISON(!=)
FUSOR_DUAL_COMPARISON(<)
FUSOR_DUAL_COMPARISON(<=)
FUSOR_DUAL_COMPARISON(>)
FUSOR_DUAL_COMPARISON(>=)
#undef FUSOR_DUAL_COMPARISON

// ---- elementary functions ----------------------------------------------------------------------
namespace detail {
// f(x) with f'(x) given: the chain rule on every tangent.
template <class T, int N>
FUSOR_HD constexpr dual<T, N> chain(const T& value, const T& derivative, const dual<T, N>& x) {
  dual<T, N> r{value, {}};
  for (int k = 0; k < N; ++k) r.tangent[k] = derivative * x.tangent[k];
  return r;
}
template <class T>
inline constexpr double ln2 = 0.693147180559945309417232121458176568;
template <class T>
inline constexpr double ln10 = 2.302585092994045684017360959213684420;
}  // namespace detail

template <class T, int N>
FUSOR_HD dual<T, N> sqrt(const dual<T, N>& x) {
  using std::sqrt;
  const T s = sqrt(x.value);
  return detail::chain(s, T(0.5) / s, x);
}
template <class T, int N>
FUSOR_HD dual<T, N> cbrt(const dual<T, N>& x) {
  using std::cbrt;
  const T c = cbrt(x.value);
  return detail::chain(c, T(1) / (T(3) * c * c), x);
}
template <class T, int N>
FUSOR_HD dual<T, N> exp(const dual<T, N>& x) {
  using std::exp;
  const T e = exp(x.value);
  return detail::chain(e, e, x);
}
template <class T, int N>
FUSOR_HD dual<T, N> exp2(const dual<T, N>& x) {
  using std::exp2;
  const T e = exp2(x.value);
  return detail::chain(e, e * T(detail::ln2<T>), x);
}
template <class T, int N>
FUSOR_HD dual<T, N> expm1(const dual<T, N>& x) {
  using std::expm1;
  const T e = expm1(x.value);
  return detail::chain(e, e + T(1), x);
}
template <class T, int N>
FUSOR_HD dual<T, N> log(const dual<T, N>& x) {
  using std::log;
  return detail::chain(log(x.value), T(1) / x.value, x);
}
template <class T, int N>
FUSOR_HD dual<T, N> log2(const dual<T, N>& x) {
  using std::log2;
  return detail::chain(log2(x.value), T(1) / (x.value * T(detail::ln2<T>)), x);
}
template <class T, int N>
FUSOR_HD dual<T, N> log10(const dual<T, N>& x) {
  using std::log10;
  return detail::chain(log10(x.value), T(1) / (x.value * T(detail::ln10<T>)), x);
}
template <class T, int N>
FUSOR_HD dual<T, N> log1p(const dual<T, N>& x) {
  using std::log1p;
  return detail::chain(log1p(x.value), T(1) / (T(1) + x.value), x);
}
template <class T, int N>
FUSOR_HD dual<T, N> sin(const dual<T, N>& x) {
  const auto sc = detail::sincos_of(x.value);
  return detail::chain(sc.s, sc.c, x);
}
template <class T, int N>
FUSOR_HD dual<T, N> cos(const dual<T, N>& x) {
  const auto sc = detail::sincos_of(x.value);
  return detail::chain(sc.c, -sc.s, x);
}
template <class T, int N>
FUSOR_HD dual<T, N> tan(const dual<T, N>& x) {
  using std::tan;
  const T t = tan(x.value);
  return detail::chain(t, T(1) + t * t, x);
}
template <class T, int N>
FUSOR_HD dual<T, N> asin(const dual<T, N>& x) {
  using std::asin;
  using std::sqrt;
  return detail::chain(asin(x.value), T(1) / sqrt(T(1) - x.value * x.value), x);
}
template <class T, int N>
FUSOR_HD dual<T, N> acos(const dual<T, N>& x) {
  using std::acos;
  using std::sqrt;
  return detail::chain(acos(x.value), T(-1) / sqrt(T(1) - x.value * x.value), x);
}
template <class T, int N>
FUSOR_HD dual<T, N> atan(const dual<T, N>& x) {
  using std::atan;
  return detail::chain(atan(x.value), T(1) / (T(1) + x.value * x.value), x);
}
template <class T, int N>
FUSOR_HD dual<T, N> sinh(const dual<T, N>& x) {
  using std::cosh;
  using std::sinh;
  return detail::chain(sinh(x.value), cosh(x.value), x);
}
template <class T, int N>
FUSOR_HD dual<T, N> cosh(const dual<T, N>& x) {
  using std::cosh;
  using std::sinh;
  return detail::chain(cosh(x.value), sinh(x.value), x);
}
/// erf: the derivative is 2/sqrt(pi) e^(-x^2).
template <class T, int N>
FUSOR_HD dual<T, N> erf(const dual<T, N>& x) {
  using std::erf;
  using std::exp;
  return detail::chain(erf(x.value), T(1.128379167095512573896158903121545172) * exp(-(x.value * x.value)), x);
}
/// The logistic function (fusor::sigmoid on duals): its derivative s(1 - s) from its own value,
/// finite where e^-x overflows.
template <class T, int N>
FUSOR_HD dual<T, N> logistic(const dual<T, N>& x) {
  using std::exp;
  const T s = T(1) / (T(1) + exp(-x.value));
  return detail::chain(s, s * (T(1) - s), x);
}
template <class T, int N>
FUSOR_HD dual<T, N> tanh(const dual<T, N>& x) {
  using std::tanh;
  const T t = tanh(x.value);
  return detail::chain(t, T(1) - t * t, x);
}
/// |x|: the derivative is sign(x) (0 at 0, the subgradient PyTorch and JAX also pick).
template <class T, int N>
FUSOR_HD dual<T, N> abs(const dual<T, N>& x) {
  using std::abs;
  return detail::chain(T(abs(x.value)), detail::sign_of(x.value), x);
}
template <class T, int N>
FUSOR_HD dual<T, N> atan2(const dual<T, N>& y, const dual<T, N>& x) {
  using std::atan2;
  const T inv = T(1) / (x.value * x.value + y.value * y.value);
  dual<T, N> r{atan2(y.value, x.value), {}};
  for (int k = 0; k < N; ++k) r.tangent[k] = (x.value * y.tangent[k] - y.value * x.tangent[k]) * inv;
  return r;
}
/// a^b. The exponent's term, a^b log(a) db, is taken only where db is non-zero, so a constant
/// exponent (x ** 2 at x <= 0) gives b a^(b-1) da and no NaN from log of a negative base.
template <class T, int N>
FUSOR_HD dual<T, N> pow(const dual<T, N>& a, const dual<T, N>& b) {
  using std::log;
  using std::pow;
  const T p = pow(a.value, b.value);
  const T da = b.value * pow(a.value, b.value - T(1));
  const T lg = log(a.value);
  dual<T, N> r{p, {}};
  for (int k = 0; k < N; ++k)
    r.tangent[k] = da * a.tangent[k] + detail::pick(b.tangent[k] != T(0), p * lg * b.tangent[k], T(0));
  return r;
}
/// a*b + c with the value rounded once.
template <class T, int N>
FUSOR_HD dual<T, N> fma(const dual<T, N>& a, const dual<T, N>& b, const dual<T, N>& c) {
  using std::fma;
  dual<T, N> r{fma(a.value, b.value, c.value), {}};
  for (int k = 0; k < N; ++k) r.tangent[k] = a.tangent[k] * b.value + a.value * b.tangent[k] + c.tangent[k];
  return r;
}
// Rounding is piecewise constant: the derivative is 0 (as in JAX and PyTorch).
#define FUSOR_DUAL_STEP(FN)                                                       \
  template <class T, int N>                                                       \
  FUSOR_HD dual<T, N> FN(const dual<T, N>& x) {                                   \
    using std::FN;                                                                \
    return dual<T, N>{T(FN(x.value)), {}};                                        \
  }
FUSOR_DUAL_STEP(floor)
FUSOR_DUAL_STEP(ceil)
FUSOR_DUAL_STEP(trunc)
FUSOR_DUAL_STEP(nearbyint)
#undef FUSOR_DUAL_STEP
template <class T, int N>
FUSOR_HD auto isnan(const dual<T, N>& x) {
  using std::isnan;
  return isnan(x.value);
}
template <class T, int N>
FUSOR_HD auto isinf(const dual<T, N>& x) {
  using std::isinf;
  return isinf(x.value);
}
template <class T, int N>
FUSOR_HD auto isfinite(const dual<T, N>& x) {
  using std::isfinite;
  return isfinite(x.value);
}

// ---- parts -------------------------------------------------------------------------------------
/// The value of a dual (the number itself for a plain number).
template <class X>
FUSOR_HD constexpr auto primal_of(const X& x) {
  if constexpr (is_dual_v<X>) return x.value;
  else return x;
}
/// Tangent k of a dual (0 for a plain number).
template <class X>
FUSOR_HD constexpr auto tangent_of(const X& x, int k = 0) {
  if constexpr (is_dual_v<X>) return x.tangent[k];
  else return X(0);
}

namespace detail {
// "dual<float32>", "dual<float64, 4>": built at compile time for element_traits::name.
template <class T, int N>
struct dual_name {
  static constexpr auto make() {
    struct buf {
      char s[40]{};
      int n = 0;
    } b;
    auto put = [&](std::string_view v) {
      for (char c : v) b.s[b.n++] = c;
    };
    put("dual<");
    put(element_traits<T>::name);
    if constexpr (N > 1) {
      put(", ");
      char digits[12]{};
      int d = 0;
      for (int v = N; v > 0; v /= 10) digits[d++] = char('0' + v % 10);
      while (d > 0) b.s[b.n++] = digits[--d];
    }
    put(">");
    return b;
  }
  static constexpr auto storage = make();
  static constexpr std::string_view value{storage.s, std::size_t(storage.n)};
};
}  // namespace detail

}  // namespace fusor::ad

namespace fusor {

/// dual<T, N> is an element type. It promotes like its value type and keeps its tangents:
/// dual<float> with a float64 array is dual<double>; with a C++ scalar it stays dual<float>.
/// Plain numbers assign into duals (as constants); a dual assigns into a plain array only through
/// ad::primal or ad::tangent, never silently.
template <class T, int N>
  requires std::is_floating_point_v<T>
struct element_traits<ad::dual<T, N>> {
  static constexpr bool is_element = true;
  static constexpr element_kind kind = element_kind::other;
  static constexpr std::string_view name = ad::detail::dual_name<T, N>::value;
  using float_type = ad::dual<T, N>;
  using accumulator = ad::dual<typename element_traits<T>::accumulator, N>;
  using sum_type = ad::dual<T, N>;
  template <class U>
  using promote_with = ad::dual<promote_t<T, std::conditional_t<ad::is_dual_v<U>, decltype(ad::primal_of(U{})), U>>, N>;
  template <class S>
  using weak_with = ad::dual<T, N>;
  template <class From>
  static constexpr bool castable_from =
      (std::is_arithmetic_v<From> && !std::is_same_v<From, bool>) || std::is_same_v<From, ad::dual<float, N>> ||
      std::is_same_v<From, ad::dual<double, N>>;
  template <class From>
  FUSOR_HD static constexpr ad::dual<T, N> convert(const From& x) {
    if constexpr (ad::is_dual_v<From>) {
      ad::dual<T, N> r{T(x.value), {}};
      for (int k = 0; k < N; ++k) r.tangent[k] = T(x.tangent[k]);
      return r;
    } else {
      return ad::dual<T, N>{convert_element<T>(x), {}};
    }
  }
};

}  // namespace fusor

/// Limits of the value (what max/min reductions start from).
template <class T, int N>
  requires std::is_floating_point_v<T>
class std::numeric_limits<fusor::ad::dual<T, N>> {
  using D = fusor::ad::dual<T, N>;
  using L = std::numeric_limits<T>;

 public:
  static constexpr bool is_specialized = true;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr D min() noexcept { return D{L::min(), {}}; }
  static constexpr D max() noexcept { return D{L::max(), {}}; }
  static constexpr D lowest() noexcept { return D{L::lowest(), {}}; }
  static constexpr D epsilon() noexcept { return D{L::epsilon(), {}}; }
  static constexpr D infinity() noexcept { return D{L::infinity(), {}}; }
  static constexpr D quiet_NaN() noexcept { return D{L::quiet_NaN(), {}}; }
};

#include "complex_dual.hpp"  // dual numbers of complex values: their element traits and functions
