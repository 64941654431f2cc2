#pragma once
// Element types. One specialisable element_traits<T> carries everything fusor needs to know about
// an element type: NumPy's name and kind, the float type transcendental functions compute in, the
// accumulator and result types of sums, and (optionally, for types outside NumPy's table) how it
// promotes, absorbs C++ scalars, casts and converts. The promotion table, the weak-scalar rule,
// same-kind casting, conversions and reductions all read it, so a new element type (autodiff's
// dual numbers, a packed-bit word) plugs in by specialising it: see docs/extending.md.
#include <complex>
#include <cstdint>
#include <limits>
#include <string_view>
#include <type_traits>
#include <utility>

#include "config.hpp"

namespace fusor {

template <class T>
inline constexpr bool is_complex_v = false;
template <class T>
inline constexpr bool is_complex_v<std::complex<T>> = true;

/// NumPy's kinds in their casting order: a value keeps its meaning when converted to an equal or
/// later kind (bool < unsigned < signed < floating < complex). `other`: a type outside the table.
enum class element_kind { boolean, unsigned_integer, signed_integer, floating, complex, other };

/// What fusor knows about an element type. The primary template says "not an element"; every
/// built-in type has a specialisation, and a library adds its own. A specialisation provides
///   is_element = true, kind, name (NumPy's spelling, used in messages and printing),
///   float_type  (what sqrt, exp, ... compute in), accumulator (what a sum collects in),
///   sum_type    (what sum returns),
/// and, for kind `other`, optionally
///   template <class U> using promote_with = ...;   the result of an operation with an array of U
///   template <class S> using weak_with = ...;      the result with a C++ scalar S (default: T)
///   template <class From> static constexpr bool castable_from = ...;  same-kind assignment from From
///   template <class To> static constexpr bool castable_to = ...;      same-kind assignment into To
template <class T>
struct element_traits {
  static constexpr bool is_element = false;
};

namespace detail {
template <class T>
struct real_of {
  using type = T;
};
template <class T>
struct real_of<std::complex<T>> {
  using type = T;
};
// an element type with complex values that gives its parts as members (a dual number of complex
// values, ad/complex_dual.hpp): its real type is the type of those parts
template <class T>
  requires requires(const T& a) { a.real(); }
struct real_of<T> {
  using type = std::remove_cvref_t<decltype(std::declval<const T&>().real())>;
};

// The built-in types (NumPy's table) share one definition, parameterised by kind.
template <class T, element_kind K>
struct builtin_element {
  static constexpr bool is_element = true;
  static constexpr bool builtin = true;
  static constexpr element_kind kind = K;
  // NumPy computes transcendental functions of integers in float64 (of 8- and 16-bit ones in
  // float16/float32: fusor uses float32 for both)
  using float_type = std::conditional_t<K == element_kind::floating || K == element_kind::complex, T,
                                        std::conditional_t<(sizeof(T) <= 2), float, double>>;
  // sums: floats collect in double between SIMD blocks; integers in 64 bits, unsigned ones unsigned
  using accumulator = std::conditional_t<
      K == element_kind::complex, std::complex<double>,
      std::conditional_t<K == element_kind::floating, double,
                         std::conditional_t<K == element_kind::unsigned_integer, std::uint64_t, std::int64_t>>>;
  using sum_type = std::conditional_t<K == element_kind::floating || K == element_kind::complex, T, accumulator>;
};
}  // namespace detail

#define FUSOR_BUILTIN_ELEMENT(TYPE, KIND, NAME)                                              \
  template <>                                                                               \
  struct element_traits<TYPE> : detail::builtin_element<TYPE, element_kind::KIND> {         \
    static constexpr std::string_view name = NAME;                                          \
  };
FUSOR_BUILTIN_ELEMENT(bool, boolean, "bool")
FUSOR_BUILTIN_ELEMENT(std::int8_t, signed_integer, "int8")
FUSOR_BUILTIN_ELEMENT(std::int16_t, signed_integer, "int16")
FUSOR_BUILTIN_ELEMENT(std::int32_t, signed_integer, "int32")
FUSOR_BUILTIN_ELEMENT(std::int64_t, signed_integer, "int64")
FUSOR_BUILTIN_ELEMENT(std::uint8_t, unsigned_integer, "uint8")
FUSOR_BUILTIN_ELEMENT(std::uint16_t, unsigned_integer, "uint16")
FUSOR_BUILTIN_ELEMENT(std::uint32_t, unsigned_integer, "uint32")
FUSOR_BUILTIN_ELEMENT(std::uint64_t, unsigned_integer, "uint64")
FUSOR_BUILTIN_ELEMENT(float, floating, "float32")
FUSOR_BUILTIN_ELEMENT(double, floating, "float64")
FUSOR_BUILTIN_ELEMENT(std::complex<float>, complex, "complex64")
FUSOR_BUILTIN_ELEMENT(std::complex<double>, complex, "complex128")
#undef FUSOR_BUILTIN_ELEMENT

/// Element types an array can hold: those with an element_traits specialisation.
template <class T>
inline constexpr bool is_element_v = element_traits<T>::is_element;

template <class T>
concept element = is_element_v<T>;

namespace detail {
/// Whether T is one of the 16-bit floats (specialised in half.hpp).
template <class T>
inline constexpr bool small_float_v = false;
}  // namespace detail

/// A C++ value usable as a scalar operand of an expression: a built-in number, a complex, or a
/// float16/bfloat16 value.
template <class S>
concept scalar = std::is_arithmetic_v<S> || is_complex_v<S> || detail::small_float_v<S>;

/// An integer type, bool excluded (NumPy's np.integer): what indices, counts and integer-only
/// operations take.
template <class T>
concept integer = std::is_integral_v<T> && !std::is_same_v<T, bool>;

/// NumPy's name for an element type (used in messages and printing).
template <class T>
constexpr std::string_view dtype_name() {
  if constexpr (is_element_v<T>) return element_traits<T>::name;
  else return "unknown";
}

template <class T>
using real_t = typename detail::real_of<T>::type;

/// Element types whose values are complex numbers: std::complex, and an element type that gives
/// its real and imaginary parts as members (ad::dual of complex values). real, imag, conj, angle
/// and abs act on them as on complex numbers.
template <class T>
concept complex_valued = is_complex_v<T> || requires(const T& a) {
  a.real();
  a.imag();
};

namespace detail {
template <class T>
concept builtin_element_type = requires { requires element_traits<T>::builtin; };

template <class T>
inline constexpr element_kind kind_of = element_traits<T>::kind;

template <std::size_t Bytes>
using signed_of_size = std::conditional_t<
    Bytes == 1, std::int8_t,
    std::conditional_t<Bytes == 2, std::int16_t, std::conditional_t<Bytes == 4, std::int32_t, std::int64_t>>>;

// NumPy's table for the real types, written as rules: bool yields to anything; integers of one
// signedness give the wider; an unsigned with a signed integer gives the signed type if it is
// wider, else a signed type twice the unsigned one's width (uint64 with a signed one: float64);
// a float32 only absorbs integers of at most 16 bits.
template <class A, class B>
constexpr auto promote_real() {
  constexpr element_kind ka = kind_of<A>, kb = kind_of<B>;
  constexpr bool ia = ka == element_kind::signed_integer || ka == element_kind::unsigned_integer;
  constexpr bool ib = kb == element_kind::signed_integer || kb == element_kind::unsigned_integer;
  if constexpr (std::is_same_v<A, B>) return A{};
  else if constexpr (ka == element_kind::boolean) return B{};
  else if constexpr (kb == element_kind::boolean) return A{};
  else if constexpr (ia && ib) {
    if constexpr (ka == kb) return std::conditional_t<(sizeof(A) >= sizeof(B)), A, B>{};
    else {
      using U = std::conditional_t<ka == element_kind::unsigned_integer, A, B>;
      using S = std::conditional_t<ka == element_kind::unsigned_integer, B, A>;
      if constexpr (sizeof(U) < sizeof(S)) return S{};
      else if constexpr (sizeof(U) < 8) return signed_of_size<2 * sizeof(U)>{};
      else return double{};
    }
  } else if constexpr (!ia && !ib) {  // two floats
    return std::conditional_t<(sizeof(A) >= sizeof(B)), A, B>{};
  } else {
    using F = std::conditional_t<ia, B, A>;
    using I = std::conditional_t<ia, A, B>;
    if constexpr (sizeof(F) >= 8 || sizeof(I) <= 2) return F{};
    else return double{};
  }
}

template <class A, class B>
constexpr auto promote_builtin() {
  if constexpr (is_complex_v<A> || is_complex_v<B>) {
    // the real parts promote as reals: complex64 with int32 is complex128, with uint8 complex64
    using R = decltype(promote_real<real_t<A>, real_t<B>>());
    return std::complex<R>{};
  } else {
    return promote_real<A, B>();
  }
}

// (the type_identity_t wrapper: g++ 12 rejects a bare member alias template in a type requirement)
template <class T, class U>
concept promotes_with = requires { typename std::type_identity_t<typename element_traits<T>::template promote_with<U>>; };
template <class T, class S>
concept weak_with_scalar = requires { typename std::type_identity_t<typename element_traits<T>::template weak_with<S>>; };

template <class A, class B>
constexpr auto promote2() {
  if constexpr (std::is_same_v<A, B>) return A{};
  else if constexpr (builtin_element_type<A> && builtin_element_type<B>) return promote_builtin<A, B>();
  else if constexpr (promotes_with<A, B>) return typename element_traits<A>::template promote_with<B>{};
  else if constexpr (promotes_with<B, A>) return typename element_traits<B>::template promote_with<A>{};
  else {
    static_assert(promotes_with<A, B>,
                  "fusor: these two element types have no common type; give element_traits of the "
                  "user-defined one a promote_with<U> alias (docs/extending.md)");
    return A{};
  }
}
}  // namespace detail

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
// an element made of complex lanes (ad::dual<std::complex<R>, N>) computes in cuda::std::complex
// lanes, the same layout
template <template <class, int> class D, class R, int N>
struct compute_type<D<std::complex<R>, N>> {
  using type = D<::cuda::std::complex<R>, N>;
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
/// float64 (8- and 16-bit ones and bool to float32, standing in for NumPy's float16), floats stay.
template <class T>
using to_float_t = typename element_traits<T>::float_type;

/// The type of `array<T> op s` for a C++ scalar s of type S (NumPy's weak scalars): the scalar
/// adopts the array's type unless its kind is higher (an int array times 2.5 is float64). A
/// float16 or bfloat16 scalar is not weak: it promotes as its type does.
template <class T, class S>
constexpr auto weak_result() {
  if constexpr (detail::small_float_v<S> && (detail::builtin_element_type<T> || detail::small_float_v<T>)) {
    // a float16/bfloat16 value is typed, as NumPy 2's np.float16 scalar is (not a weak Python
    // float): it promotes as an array of its type would (int8 * float16 is float16, int32 * float16
    // float64, float32 * float16 float32)
    return promote_t<T, S>{};
  } else if constexpr (!detail::builtin_element_type<T>) {
    if constexpr (detail::weak_with_scalar<T, S>)
      return typename element_traits<T>::template weak_with<S>{};
    else return T{};
  } else if constexpr (std::is_same_v<S, bool>) return T{};
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

namespace detail {
template <class From, class To>
constexpr bool same_kind_castable() {
  if constexpr (std::is_same_v<From, To>) return true;
  else if constexpr (builtin_element_type<From> && builtin_element_type<To>)
    return static_cast<int>(kind_of<From>) <= static_cast<int>(kind_of<To>);
  else if constexpr (requires { element_traits<To>::template castable_from<From>; })
    return element_traits<To>::template castable_from<From>;
  else if constexpr (requires { element_traits<From>::template castable_to<To>; })
    return element_traits<From>::template castable_to<To>;
  else return !builtin_element_type<To> && std::is_convertible_v<From, To>;
}
}  // namespace detail

/// Whether assigning a value of type From into an array of type To keeps its meaning (NumPy's
/// "same_kind" casting): to an equal or later kind only (no complex to real, no floating to
/// integer, no signed to unsigned integer, nothing to bool); narrowing within a kind is allowed.
template <class From, class To>
inline constexpr bool same_kind_castable_v = detail::same_kind_castable<From, To>();

/// Converts one element to another type the way astype does (complex to real keeps the real
/// part; anything to bool is "non-zero"; floating to integer saturates, NaN gives 0).
template <class To, class From>
FUSOR_HD constexpr To convert_element(const From& x) {
  if constexpr (std::is_same_v<To, From>) return x;
  else if constexpr (requires { element_traits<To>::convert(x); }) return element_traits<To>::convert(x);
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
