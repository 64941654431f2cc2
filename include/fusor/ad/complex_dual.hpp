#pragma once
// Dual numbers of complex values: dual<std::complex<T>, N> is a complex value with N complex
// tangents, the element type forward mode needs through the Fourier transforms (rfft of a dual
// array is a dual array of complex numbers). Arithmetic, exp, log and sqrt are dual.hpp's generic
// code (complex-differentiable: the chain rule with the complex derivative). The functions that
// are not complex-differentiable take a tangent dz = dx + i dy through their real-linear
// derivative:
//
//   real(z), imag(z):  Re dz, Im dz                 (dual::real / dual::imag, members)
//   conj(z):           conj(dz)
//   abs(z):            Re(conj(z) dz) / |z|         (0 at z = 0, the subgradient JAX picks)
//   angle(z):          Im(conj(z) dz) / |z|^2       (0 at z = 0)
//
// The element is of kind `other`: it promotes like its value (dual<float> with complex128 is
// dual<complex128>), takes plain and dual real numbers as constants and tangents, and is never
// narrowed to a real dual silently (real, imag or abs say which part).
#include <cmath>
#include <complex>
#include <type_traits>

#include "../core/dtype.hpp"
#include "dual.hpp"

namespace fusor::ad {

template <class T, int N>
  requires is_complex_v<T>
FUSOR_HD constexpr dual<T, N> conj(const dual<T, N>& z) {
  using std::conj;
  dual<T, N> r{conj(z.value), {}};
  for (int k = 0; k < N; ++k) r.tangent[k] = conj(z.tangent[k]);
  return r;
}

/// |z| and its real-linear derivative: d|z| = Re(conj(z) dz) / |z| = (x dx + y dy) / |z|.
template <class T, int N>
  requires is_complex_v<T>
FUSOR_HD dual<real_t<T>, N> abs(const dual<T, N>& z) {
  using R = real_t<T>;
  using std::abs;
  const R m = abs(z.value);
  const R inv = m > R(0) ? R(1) / m : R(0);
  const R x = z.value.real() * inv, y = z.value.imag() * inv;
  dual<R, N> r{m, {}};
  for (int k = 0; k < N; ++k) r.tangent[k] = x * z.tangent[k].real() + y * z.tangent[k].imag();
  return r;
}

/// The angle of z (np.angle) and its derivative Im(conj(z) dz) / |z|^2 = (x dy - y dx) / |z|^2.
template <class T, int N>
  requires is_complex_v<T>
FUSOR_HD dual<real_t<T>, N> arg(const dual<T, N>& z) {
  using R = real_t<T>;
  using std::arg;
  const R x = z.value.real(), y = z.value.imag();
  const R m2 = x * x + y * y;
  const R inv = m2 > R(0) ? R(1) / m2 : R(0);
  dual<R, N> r{arg(z.value), {}};
  for (int k = 0; k < N; ++k) r.tangent[k] = (x * z.tangent[k].imag() - y * z.tangent[k].real()) * inv;
  return r;
}

}  // namespace fusor::ad

namespace fusor {

/// dual<complex<T>, N> is an element type: it promotes like its complex value and keeps its
/// tangents; plain numbers (real or complex) and dual numbers (real or complex) assign into it,
/// a real dual's tangents becoming the real parts.
template <class T, int N>
  requires is_complex_v<T>
struct element_traits<ad::dual<T, N>> {
  static constexpr bool is_element = true;
  static constexpr element_kind kind = element_kind::other;
  // (T is std::complex, or cuda::std::complex where nvcc computes: named and summed as std::complex)
  static constexpr std::string_view name = ad::detail::dual_name<std::complex<real_t<T>>, N>::value;
  using float_type = ad::dual<T, N>;
  using accumulator = ad::dual<typename element_traits<std::complex<real_t<T>>>::accumulator, N>;
  using sum_type = ad::dual<T, N>;
  template <class U>
  using promote_with = ad::dual<promote_t<T, std::conditional_t<ad::is_dual_v<U>, decltype(ad::primal_of(U{})), U>>, N>;
  template <class S>
  using weak_with = ad::dual<T, N>;
  template <class From>
  static constexpr bool dual_of_width = [] {
    if constexpr (ad::is_dual_v<From>) return From::tangents == N;
    else return false;
  }();
  template <class From>
  static constexpr bool castable_from = (std::is_arithmetic_v<From> && !std::is_same_v<From, bool>) ||
                                        is_complex_v<From> || dual_of_width<From>;
  template <class From>
  FUSOR_HD static constexpr ad::dual<T, N> convert(const From& x) {
    if constexpr (ad::is_dual_v<From>) {
      ad::dual<T, N> r{convert_element<T>(x.value), {}};
      for (int k = 0; k < N; ++k) r.tangent[k] = convert_element<T>(x.tangent[k]);
      return r;
    } else {
      return ad::dual<T, N>{convert_element<T>(x), {}};
    }
  }
};

}  // namespace fusor
