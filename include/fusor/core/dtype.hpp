#pragma once
// Element types, NumPy's type promotion between arrays, and the "weak scalar" rule for C++
// scalars (array<float> * 2.0 stays float, as NumPy 2 does for Python scalars).
#include <complex>
#include <cstdint>
#include <limits>
#include <string_view>
#include <type_traits>

#include "config.hpp"

namespace fusor {

template <class T>
inline constexpr bool is_complex_v = false;
template <class T>
inline constexpr bool is_complex_v<std::complex<T>> = true;

/// Element types an array can hold. Extended by specialising (ad::dual does).
template <class T>
inline constexpr bool is_element_v =
    std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, std::int32_t> ||
    std::is_same_v<T, std::int64_t> || std::is_same_v<T, std::uint8_t> || std::is_same_v<T, bool> ||
    std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;

template <class T>
concept element = is_element_v<T>;

/// A C++ value usable as a scalar operand of an expression.
template <class S>
concept scalar = std::is_arithmetic_v<S> || is_complex_v<S>;

/// NumPy's name for an element type (used in messages and printing).
template <class T>
constexpr std::string_view dtype_name() {
  if constexpr (std::is_same_v<T, float>) return "float32";
  else if constexpr (std::is_same_v<T, double>) return "float64";
  else if constexpr (std::is_same_v<T, std::int32_t>) return "int32";
  else if constexpr (std::is_same_v<T, std::int64_t>) return "int64";
  else if constexpr (std::is_same_v<T, std::uint8_t>) return "uint8";
  else if constexpr (std::is_same_v<T, bool>) return "bool";
  else if constexpr (std::is_same_v<T, std::complex<float>>) return "complex64";
  else if constexpr (std::is_same_v<T, std::complex<double>>) return "complex128";
  else return "unknown";
}

namespace detail {
template <class T>
struct real_of {
  using type = T;
};
template <class T>
struct real_of<std::complex<T>> {
  using type = T;
};

// NumPy's table for the real types, written as rules: bool yields to anything; unsigned 8-bit
// with a signed type gives the signed type; a float32 only absorbs integers of at most 16 bits.
template <class A, class B>
constexpr auto promote_real() {
  if constexpr (std::is_same_v<A, B>) return A{};
  else if constexpr (std::is_same_v<A, bool>) return B{};
  else if constexpr (std::is_same_v<B, bool>) return A{};
  else if constexpr (std::is_integral_v<A> && std::is_integral_v<B>) {
    if constexpr (sizeof(A) >= sizeof(B)) return std::conditional_t<std::is_signed_v<A> || !std::is_signed_v<B>, A, B>{};
    else return B{};
  } else if constexpr (std::is_floating_point_v<A> && std::is_floating_point_v<B>) {
    return std::conditional_t<(sizeof(A) >= sizeof(B)), A, B>{};
  } else {
    using F = std::conditional_t<std::is_floating_point_v<A>, A, B>;
    using I = std::conditional_t<std::is_floating_point_v<A>, B, A>;
    if constexpr (sizeof(F) >= 8 || sizeof(I) <= 2) return F{};
    else return double{};
  }
}

template <class A, class B>
constexpr auto promote2() {
  if constexpr (is_complex_v<A> || is_complex_v<B>) {
    // the real parts promote as reals: complex64 with int32 is complex128, with uint8 complex64
    using R = decltype(promote_real<typename real_of<A>::type, typename real_of<B>::type>());
    return std::complex<R>{};
  } else {
    return promote_real<A, B>();
  }
}
}  // namespace detail

template <class T>
using real_t = typename detail::real_of<T>::type;

// In translation units compiled by nvcc, complex numbers are computed as cuda::std::complex (the
// same layout as std::complex) on the host as well as on the device: the functors are
// __host__ __device__, and std::complex's non-constexpr functions (abs, exp, ...) are host-only.
#if defined(__CUDACC__)
}  // namespace fusor
#include <cuda/std/complex>
namespace fusor {
template <class T>
inline constexpr bool is_complex_v<::cuda::std::complex<T>> = true;
namespace detail {
template <class T>
struct real_of<::cuda::std::complex<T>> {
  using type = T;
};
template <class T>
struct compute_type {
  using type = T;
};
template <class R>
struct compute_type<std::complex<R>> {
  using type = ::cuda::std::complex<R>;
};
}  // namespace detail
#else
namespace detail {
template <class T>
struct compute_type {
  using type = T;
};
}  // namespace detail
#endif
/// The type an element type is computed in by the functors (itself, except complex under nvcc).
template <class T>
using compute_t = typename detail::compute_type<T>::type;

/// NumPy's result type for an operation between arrays of types A and B.
template <class A, class... Rest>
struct promote {
  using type = A;
};
template <class A, class B, class... Rest>
struct promote<A, B, Rest...> {
  using type = typename promote<decltype(detail::promote2<A, B>()), Rest...>::type;
};
template <class... T>
using promote_t = typename promote<T...>::type;

/// The floating type NumPy computes transcendental functions in: integers and bool go to
/// float64 (uint8 and bool to float32, standing in for NumPy's float16), floats stay.
template <class T>
using to_float_t =
    std::conditional_t<is_complex_v<T> || std::is_floating_point_v<T>, T,
                       std::conditional_t<(sizeof(T) <= 2), float, double>>;

/// The type of `array<T> op s` for a C++ scalar s of type S (NumPy's weak scalars): the scalar
/// adopts the array's type unless its kind is higher (an int array times 2.5 is float64).
template <class T, class S>
constexpr auto weak_result() {
  if constexpr (std::is_same_v<S, bool>) return T{};
  else if constexpr (std::is_integral_v<S>) {
    if constexpr (std::is_same_v<T, bool>) return std::int64_t{};
    else return T{};
  } else if constexpr (std::is_floating_point_v<S>) {
    if constexpr (std::is_floating_point_v<T> || is_complex_v<T>) return T{};
    else return double{};
  } else {  // complex scalar
    if constexpr (is_complex_v<T>) return T{};
    else if constexpr (std::is_same_v<T, float>) return std::complex<float>{};
    else return std::complex<double>{};
  }
}
template <class T, class S>
using weak_result_t = decltype(weak_result<T, S>());

/// Whether assigning a value of type From into an array of type To keeps its meaning
/// (NumPy's "same_kind" casting): no complex to real, no floating to integer, no signed to
/// unsigned integer, nothing to bool.
template <class From, class To>
inline constexpr bool same_kind_castable_v =
    std::is_same_v<From, To> ||
    (is_complex_v<To>) ||
    (std::is_floating_point_v<To> && !is_complex_v<From>) ||
    (std::is_integral_v<To> && !std::is_same_v<To, bool> && std::is_integral_v<From> &&
     (std::is_same_v<From, bool> || std::is_signed_v<To> || !std::is_signed_v<From>));

/// Converts one element to another type the way astype does (complex to real keeps the real
/// part; anything to bool is "non-zero").
template <class To, class From>
FUSOR_HD constexpr To convert_element(const From& x) {
  if constexpr (std::is_same_v<To, From>) return x;
  else if constexpr (std::is_same_v<To, bool>) return x != From(0);
  else if constexpr (is_complex_v<From> && !is_complex_v<To>) return convert_element<To>(x.real());
  else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    // C++ leaves NaN and out-of-range conversions undefined; fusor saturates (NaN gives 0)
    if (!(x == x)) return To(0);
    if (x <= From(std::numeric_limits<To>::lowest())) return std::numeric_limits<To>::lowest();
    if (x >= From(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
    return static_cast<To>(x);
  }
  else if constexpr (is_complex_v<To> && !is_complex_v<From>) return To(static_cast<real_t<To>>(x));
  else if constexpr (is_complex_v<To> && is_complex_v<From>)  // also between std:: and cuda::std::complex
    return To(static_cast<real_t<To>>(x.real()), static_cast<real_t<To>>(x.imag()));
  else return static_cast<To>(x);
}

}  // namespace fusor
