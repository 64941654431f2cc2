#pragma once
// Forward mode through the Fourier transforms and the FFT convolutions. A transform is linear, so
// the transform of a dual array is the transform of each of its planes (the values and every
// tangent); a convolution or correlation is bilinear, so its tangent is the product rule on planes,
//
//   conv(a, b)' = conv(a', b) + conv(a, b')     (2N + 1 convolutions for two dual operands with
//                                                N tangents, N + 1 when one is a constant).
//
// The planes are read where they lie (strided views into the interleaved duals, which the FFT
// backends take as they are) and each transform is written into the result's plane. A real dual
// array's spectrum is a dual array of complex numbers (complex_dual.hpp); irfft brings it back.
//
// Declared in namespace fusor::fft beside the array functions and the variables' (more
// constrained: they take arrays, views and expressions of duals), so fft::rfft(x) is one call for
// arrays, variables and the dual arrays jvp and jacfwd pass to the function.
#include <type_traits>

#include "../core/ext.hpp"
#include "../fft/convolve.hpp"
#include "../fft/transforms.hpp"
#include "complex_dual.hpp"
#include "ops.hpp"

namespace fusor::ad::detail {

/// An array, view or expression of dual numbers (not of variables: those record nodes).
template <class X>
concept dual_operand = expression<std::remove_cvref_t<X>> && !has_vars_v<std::remove_cvref_t<X>> &&
                       is_dual_v<value_t<std::remove_cvref_t<X>>>;

/// Plane k (0: the values, k: tangent k) of a view of duals, as a strided view of lanes.
template <class D, class B>
array_view<typename D::lane_type, B> dual_plane(const array_view<D, B>& v, int k) {
  using L = typename D::lane_type;
  extents st = v.strides();
  for (int d = 0; d < st.size(); ++d) st[d] *= D::tangents + 1;
  L* lanes = reinterpret_cast<L*>(v.data());
  return array_view<L, B>(lanes ? lanes + k : lanes, v.shape(), st);  // (an empty array has no buffer)
}

// How many tangents a settled operand (a view, or nullptr for a missing second operand) carries:
// 0 for plain numbers.
template <class V>
inline constexpr int tangents_of = 0;
template <class T, class B>
  requires is_dual_v<T>
inline constexpr int tangents_of<array_view<T, B>> = T::tangents;

/// Plane k of a settled operand: a dual view's plane, or a plain operand as it is (its only plane).
template <class V>
auto plane_or_self(const V& v, int k) {
  if constexpr (tangents_of<V> > 0) return dual_plane(v, k);
  else return v;
}

/// The duals whose planes are `op` of the operands' planes, where a plain operand is its own value
/// plane and has no tangents. One operand (a linear map): plane k of the result is op(plane k). Two
/// (a bilinear map): the product rule, op(x_k, y_0) + op(x_0, y_k).
template <class Op, class VX, class VY>
auto planes_of_map(Op& op, const VX& vx, const VY& vy) {
  constexpr bool binary = !std::is_same_v<VY, std::nullptr_t>;
  constexpr int nx = tangents_of<VX>, ny = tangents_of<VY>;
  constexpr int N = nx > 0 ? nx : ny;
  static_assert(nx == 0 || ny == 0 || nx == ny,
                "fusor: the two dual operands of a convolution carry different numbers of tangents");
  using B = backend_of_t<VX>;
  auto apply = [&](int kx, int ky) {
    if constexpr (binary) return op(plane_or_self(vx, kx), plane_or_self(vy, ky));
    else return op(plane_or_self(vx, kx));
  };
  const auto value = apply(0, 0);
  using O = value_t<decltype(value)>;
  array<dual<O, N>, B> out(value.shape());
  const array_view<dual<O, N>, B> ov = out.view();
  dual_plane(ov, 0) = value;
  for (int k = 1; k <= N; ++k) {
    if constexpr (nx > 0 && ny > 0) {
      const auto first = apply(k, 0), second = apply(0, k);
      dual_plane(ov, k) = first + second;
    } else if constexpr (nx > 0) {
      dual_plane(ov, k) = apply(k, 0);
    } else {
      dual_plane(ov, k) = apply(0, k);
    }
  }
  return out;
}

/// f(a view of x): of x itself for arrays and views, of x evaluated once for an expression.
template <class X, class F>
auto with_view(const X& x, F&& f) {
  if constexpr (fusor::ext::is_view_v<X>) {
    return f(x);
  } else if constexpr (fusor::ext::is_array_v<X>) {
    return f(x.view());
  } else {
    const auto settled = fusor::eval(x);
    return f(settled.view());
  }
}

/// planes_of_map on the operands' views.
template <class Op, class X>
auto on_planes(Op&& op, const X& x) {
  return with_view(x, [&](const auto& vx) { return planes_of_map(op, vx, nullptr); });
}
template <class Op, class X, class Y>
auto on_planes(Op&& op, const X& x, const Y& y) {
  return with_view(x, [&](const auto& vx) {
    return with_view(y, [&](const auto& vy) { return planes_of_map(op, vx, vy); });
  });
}

}  // namespace fusor::ad::detail

namespace fusor::fft {

// ---- n-d ---------------------------------------------------------------------------------------
/// np.fft.fftn of an array or expression of duals (real or complex): each plane transformed.
template <class X>
  requires ad::detail::dual_operand<X>
auto fftn(X&& x, const extents& s = {}, const extents& axes = {}, norm_mode norm = norm_mode::backward) {
  return ad::detail::on_planes([&](const auto& p) { return fft::fftn(p, s, axes, norm); }, x);
}
template <class X>
  requires ad::detail::dual_operand<X>
auto ifftn(X&& x, const extents& s = {}, const extents& axes = {}, norm_mode norm = norm_mode::backward) {
  return ad::detail::on_planes([&](const auto& p) { return fft::ifftn(p, s, axes, norm); }, x);
}
template <class X>
  requires ad::detail::dual_operand<X>
auto rfftn(X&& x, const extents& s = {}, const extents& axes = {}, norm_mode norm = norm_mode::backward) {
  static_assert(!is_complex_v<typename value_t<std::remove_cvref_t<X>>::lane_type>,
                "fusor: rfft/rfft2/rfftn take real input; use fft/fftn for dual numbers of complex values");
  return ad::detail::on_planes([&](const auto& p) { return fft::rfftn(p, s, axes, norm); }, x);
}
template <class X>
  requires ad::detail::dual_operand<X>
auto irfftn(X&& x, const extents& s = {}, const extents& axes = {}, norm_mode norm = norm_mode::backward) {
  return ad::detail::on_planes([&](const auto& p) { return fft::irfftn(p, s, axes, norm); }, x);
}

// ---- 2-d ---------------------------------------------------------------------------------------
template <class X>
  requires ad::detail::dual_operand<X>
auto fft2(X&& x, const extents& s = {}, const extents& axes = {-2, -1}, norm_mode norm = norm_mode::backward) {
  return fft::fftn(x, s, axes, norm);
}
template <class X>
  requires ad::detail::dual_operand<X>
auto ifft2(X&& x, const extents& s = {}, const extents& axes = {-2, -1}, norm_mode norm = norm_mode::backward) {
  return fft::ifftn(x, s, axes, norm);
}
template <class X>
  requires ad::detail::dual_operand<X>
auto rfft2(X&& x, const extents& s = {}, const extents& axes = {-2, -1}, norm_mode norm = norm_mode::backward) {
  return fft::rfftn(x, s, axes, norm);
}
template <class X>
  requires ad::detail::dual_operand<X>
auto irfft2(X&& x, const extents& s = {}, const extents& axes = {-2, -1}, norm_mode norm = norm_mode::backward) {
  return fft::irfftn(x, s, axes, norm);
}

// ---- 1-d ---------------------------------------------------------------------------------------
template <class X>
  requires ad::detail::dual_operand<X>
auto fft(X&& x, index_t n = -1, int axis = -1, norm_mode norm = norm_mode::backward) {
  return fft::fftn(x, detail::one_axis(n), extents{axis}, norm);
}
template <class X>
  requires ad::detail::dual_operand<X>
auto ifft(X&& x, index_t n = -1, int axis = -1, norm_mode norm = norm_mode::backward) {
  return fft::ifftn(x, detail::one_axis(n), extents{axis}, norm);
}
template <class X>
  requires ad::detail::dual_operand<X>
auto rfft(X&& x, index_t n = -1, int axis = -1, norm_mode norm = norm_mode::backward) {
  return fft::rfftn(x, detail::one_axis(n), extents{axis}, norm);
}
template <class X>
  requires ad::detail::dual_operand<X>
auto irfft(X&& x, index_t n = -1, int axis = -1, norm_mode norm = norm_mode::backward) {
  return fft::irfftn(x, detail::one_axis(n), extents{axis}, norm);
}

// ---- convolutions --------------------------------------------------------------------------------
/// scipy.signal.fftconvolve with a dual operand (or two): the product rule on planes.
template <class X, class Y>
  requires(ad::detail::dual_operand<X> || ad::detail::dual_operand<Y>) &&
          (!ad::detail::holds_vars_v<X> && !ad::detail::holds_vars_v<Y>)
auto fftconvolve(const X& in1, const Y& in2, conv_mode mode = conv_mode::full, const extents& axes = {}) {
  return ad::detail::on_planes([&](const auto& p, const auto& q) { return fft::fftconvolve(p, q, mode, axes); }, in1,
                               in2);
}
/// scipy.signal.correlate with a dual operand (or two): bilinear over the reals (the conjugate of a
/// complex in2 is real-linear), so the same product rule.
template <class X, class Y>
  requires(ad::detail::dual_operand<X> || ad::detail::dual_operand<Y>) &&
          (!ad::detail::holds_vars_v<X> && !ad::detail::holds_vars_v<Y>)
auto correlate(const X& in1, const Y& in2, conv_mode mode = conv_mode::full, const extents& axes = {}) {
  return ad::detail::on_planes([&](const auto& p, const auto& q) { return fft::correlate(p, q, mode, axes); }, in1,
                               in2);
}

}  // namespace fusor::fft
