#pragma once
// Forward mode through the Fourier transforms and the FFT convolutions. A transform is linear, so
// the transform of a dual array is the transform of each of its planes (the values and every
// tangent); a convolution or correlation is bilinear, so its tangent is the product rule on planes,
//
//   conv(a, b)' = conv(a', b) + conv(a, b')     (for two dual operands with N tangents, two
//                                                batched convolutions: a's planes with b's values,
//                                                a's values with b's tangents).
//
// The planes are read where they lie: one strided view of lanes with a leading plane axis (the
// interleaved duals, which the FFT backends take as they are), so all N + 1 planes go through one
// batched transform (one plan), and a constant operand of a convolution broadcasts over that axis
// (its spectrum taken once). A real dual array's spectrum is a dual array of complex numbers
// (complex_dual.hpp); irfft brings it back.
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

/// Planes first .. N of a view of duals as one view of lanes with a leading plane axis
/// (N + 1 - first, shape...): a batch the FFT backends transform with one plan.
template <class D, class B>
array_view<typename D::lane_type, B> stacked_planes(const array_view<D, B>& v, int first = 0) {
  using L = typename D::lane_type;
  extents shape{index_t(D::tangents + 1 - first)}, strides{1};
  for (int d = 0; d < v.shape().size(); ++d) {
    shape.push_back(v.shape()[d]);
    strides.push_back(v.strides()[d] * (D::tangents + 1));
  }
  L* lanes = reinterpret_cast<L*>(v.data());
  return array_view<L, B>(lanes ? lanes + first : lanes, shape, strides);
}
/// A plain view with a leading axis of 1 (it broadcasts over the other operand's planes).
template <class T, class B>
array_view<T, B> with_unit_axis(const array_view<T, B>& v) {
  extents shape{1}, strides{0};
  for (int d = 0; d < v.shape().size(); ++d) {
    shape.push_back(v.shape()[d]);
    strides.push_back(v.strides()[d]);
  }
  return array_view<T, B>(v.data(), shape, strides);
}

/// The transform axes of a rank-`rank` operand as NumPy takes them (none given: all, or the last
/// `given_lengths` when s is given) named for the operand with a leading plane axis. False when
/// they are not valid axes: the per-plane path then raises the array function's own error.
inline bool shifted_axes(int rank, int given_lengths, const extents& axes, extents& out) {
  out = extents{};
  if (rank < 1) return false;  // a 0-d input: its planes are transformed one by one
  if (axes.size() == 0) {
    if (given_lengths > rank) return false;
    for (int k = rank - (given_lengths == 0 ? rank : given_lengths); k < rank; ++k) out.push_back(k + 1);
    return true;
  }
  for (int i = 0; i < axes.size(); ++i) {
    const index_t a = axes[i];
    if (a < -rank || a >= rank) return false;
    out.push_back(a < 0 ? a + rank + 1 : a + 1);
  }
  return true;
}

/// The duals whose planes are a stacked result's (N + 1, shape...) slices.
template <int N, class T, class B>
array<dual<T, N>, B> duals_of_stack(const array<T, B>& stack) {
  extents shape;
  for (int d = 1; d < stack.shape().size(); ++d) shape.push_back(stack.shape()[d]);
  array<dual<T, N>, B> out(shape);
  stacked_planes(out.view()) = stack;
  return out;
}

/// A transform of the dual view v: `op(view, axes)` on all its planes at once (one batched call
/// over a leading plane axis), or plane by plane where the axes are not valid.
template <class Op, class D, class B>
auto transform_planes(Op& op, const array_view<D, B>& v, int given_lengths, const extents& axes) {
  extents shifted;
  if (!shifted_axes(v.shape().size(), given_lengths, axes, shifted)) {
    auto each = [&](const auto& p) { return op(p, axes); };
    return planes_of_map(each, v, nullptr);
  }
  return duals_of_stack<D::tangents>(op(stacked_planes(v), shifted));
}

/// A convolution of the views vx and vy (either or both dual): `op(p, q, axes)` with the dual
/// operand's planes as one batch against the other operand (its spectrum taken once); for two
/// dual operands the product rule as two batched calls, values·y₀ over every plane of x, then
/// x₀·tangents of y added to the tangents.
template <class Op, class VX, class VY>
auto convolve_planes(Op& op, const VX& vx, const VY& vy, const extents& axes) {
  constexpr int nx = tangents_of<VX>, ny = tangents_of<VY>;
  constexpr int N = nx > 0 ? nx : ny;
  extents shifted;
  if (vx.shape().size() != vy.shape().size() || !shifted_axes(vx.shape().size(), 0, axes, shifted)) {
    auto each = [&](const auto& p, const auto& q) { return op(p, q, axes); };
    return planes_of_map(each, vx, vy);
  }
  auto batch = [](const auto& v) {
    if constexpr (tangents_of<std::remove_cvref_t<decltype(v)>> > 0) return stacked_planes(v);
    else return with_unit_axis(v);
  };
  if constexpr (nx > 0 && ny > 0) {
    auto out = duals_of_stack<N>(op(stacked_planes(vx), with_unit_axis(dual_plane(vy, 0)), shifted));
    const auto second = op(with_unit_axis(dual_plane(vx, 0)), stacked_planes(vy, 1), shifted);
    auto tangents = stacked_planes(out.view(), 1);
    tangents = tangents + second;
    return out;
  } else {
    return duals_of_stack<N>(op(batch(vx), batch(vy), shifted));
  }
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

/// A transform of x's planes (transform_planes on x's view).
template <class Op, class X>
auto on_planes(Op&& op, const X& x, int given_lengths, const extents& axes) {
  return with_view(x, [&](const auto& vx) { return transform_planes(op, vx, given_lengths, axes); });
}
/// A convolution with a dual operand (convolve_planes on the operands' views).
template <class Op, class X, class Y>
auto on_planes(Op&& op, const X& x, const Y& y, const extents& axes) {
  return with_view(x, [&](const auto& vx) {
    return with_view(y, [&](const auto& vy) { return convolve_planes(op, vx, vy, axes); });
  });
}

}  // namespace fusor::ad::detail

namespace fusor::fft {

// ---- n-d ---------------------------------------------------------------------------------------
/// np.fft.fftn of an array or expression of duals (real or complex): its planes transformed.
template <class X>
  requires ad::detail::dual_operand<X>
auto fftn(X&& x, const extents& s = {}, const extents& axes = {}, norm_mode norm = norm_mode::backward) {
  return ad::detail::on_planes([&](const auto& p, const extents& a) { return fft::fftn(p, s, a, norm); }, x, s.size(), axes);
}
template <class X>
  requires ad::detail::dual_operand<X>
auto ifftn(X&& x, const extents& s = {}, const extents& axes = {}, norm_mode norm = norm_mode::backward) {
  return ad::detail::on_planes([&](const auto& p, const extents& a) { return fft::ifftn(p, s, a, norm); }, x, s.size(), axes);
}
template <class X>
  requires ad::detail::dual_operand<X>
auto rfftn(X&& x, const extents& s = {}, const extents& axes = {}, norm_mode norm = norm_mode::backward) {
  static_assert(!is_complex_v<typename value_t<std::remove_cvref_t<X>>::lane_type>,
                "fusor: rfft/rfft2/rfftn take real input; use fft/fftn for dual numbers of complex values");
  return ad::detail::on_planes([&](const auto& p, const extents& a) { return fft::rfftn(p, s, a, norm); }, x, s.size(), axes);
}
template <class X>
  requires ad::detail::dual_operand<X>
auto irfftn(X&& x, const extents& s = {}, const extents& axes = {}, norm_mode norm = norm_mode::backward) {
  return ad::detail::on_planes([&](const auto& p, const extents& a) { return fft::irfftn(p, s, a, norm); }, x, s.size(), axes);
}

// (the 2-d and 1-d forms are ad/fft.hpp's, which take variables and duals alike)

// ---- convolutions --------------------------------------------------------------------------------
/// scipy.signal.fftconvolve with a dual operand (or two): the product rule on planes.
template <class X, class Y>
  requires(ad::detail::dual_operand<X> || ad::detail::dual_operand<Y>) &&
          (!ad::detail::holds_vars_v<X> && !ad::detail::holds_vars_v<Y>)
auto fftconvolve(const X& in1, const Y& in2, conv_mode mode = conv_mode::full, const extents& axes = {}) {
  return ad::detail::on_planes([&](const auto& p, const auto& q, const extents& a) { return fft::fftconvolve(p, q, mode, a); },
                               in1, in2, axes);
}
/// scipy.signal.correlate with a dual operand (or two): bilinear over the reals (the conjugate of a
/// complex in2 is real-linear), so the same product rule.
template <class X, class Y>
  requires(ad::detail::dual_operand<X> || ad::detail::dual_operand<Y>) &&
          (!ad::detail::holds_vars_v<X> && !ad::detail::holds_vars_v<Y>)
auto correlate(const X& in1, const Y& in2, conv_mode mode = conv_mode::full, const extents& axes = {}) {
  return ad::detail::on_planes([&](const auto& p, const auto& q, const extents& a) { return fft::correlate(p, q, mode, a); },
                               in1, in2, axes);
}

}  // namespace fusor::fft
