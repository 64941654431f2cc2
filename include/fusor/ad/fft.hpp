#pragma once
// The Fourier transforms of variables: fft ifft rfft irfft, their 2-d and n-d forms, with NumPy's
// `s`, axes and norm. Each is one node whose adjoint is a transform too (the adjoint convention of
// var.hpp: a complex adjoint is dL/dRe + i dL/dIm):
//
//   fftn  (y = S·F·P x):  dx = Pᵀ ifftn(g) with the dual normalisation (backward <-> forward,
//                          ortho <-> ortho): Fᴴ is the unscaled inverse transform;
//   ifftn:                dx = Pᵀ fftn(g), dual normalisation;
//   rfftn (x real):       dx = Pᵀ Re(Fᴴ (g on the half spectrum, 0 on the rest)), computed as one
//                          irfftn of g with its interior (mirrored) entries halved and the planes
//                          the halving leaves alone (0 and n/2 on the last axis) made Hermitian;
//   irfftn (y real):      dx = Pᵀ (rfftn(g) with the mirrored entries doubled), dual normalisation.
//
// P crops or zero-pads the input to `s`; its adjoint Pᵀ is the overlap (added to the input's
// adjoint, the rest of which stays untouched). A real input to fftn gets the real part.
//
// They are declared in namespace fusor::fft beside the array functions (more constrained: they
// take variables), so fft::rfftn(x) is one call for arrays and variables.
#include <algorithm>
#include <complex>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "../core/create.hpp"
#include "../core/join.hpp"
#include "../core/pad.hpp"
#include "../core/shape_ops.hpp"
#include "../fft/transforms.hpp"
#include "fft_duals.hpp"  // forward mode: the transforms and convolutions of dual arrays
#include "ops.hpp"
#include "../core/ext.hpp"

namespace fusor::ad::detail {

enum class fft_kind { forward, inverse, r2c, c2r };

/// The normalisation of the adjoint transform: the scale a norm puts on one direction moves to
/// the other (fftn's adjoint is an unscaled-by-default inverse).
inline fft::norm_mode dual_norm(fft::norm_mode m) {
  switch (m) {
    case fft::norm_mode::backward: return fft::norm_mode::forward;
    case fft::norm_mode::forward: return fft::norm_mode::backward;
    default: return fft::norm_mode::ortho;
  }
}

/// v along the last transformed axis scaled by `w` at positions 1 .. count (the entries whose
/// mirror image is not in the half spectrum), into a new array.
template <class C, class B>
array<C, B> scale_mirrored(const leaf<C, B>& v, int axis, index_t count, double w) {
  using R = real_t<C>;
  const index_t m = v.shape[axis];
  std::vector<R> host(std::size_t(m), R(1));
  for (index_t k = 1; k <= count && k < m; ++k) host[std::size_t(k)] = R(w);
  const array<R, B> weights(std::span<const R>(host.data(), host.size()), extents{m});
  extents strides;  // the weights along `axis`, repeated (stride 0) along the others
  for (int k = 0; k < v.shape.size(); ++k) strides.push_back(k == axis ? 1 : 0);
  const leaf<R, B> wl{const_cast<R*>(weights.data()), v.shape, strides};
  array<C, B> out(v.shape);
  fusor::ext::assign_expr(out.as_leaf(), v * wl, false);
  return out;
}

/// Makes the plane `index` of axis `last` Hermitian over the other transformed axes:
/// P <- (P + conj(P reversed)) / 2, where "reversed" reads index (-k) mod n on each of them.
template <class C, class B>
void hermitian_plane(array<C, B>& h, const fft::detail::axes_spec& a, index_t index) {
  const int last = a.axis[a.count - 1];
  if (a.count == 1) {  // a 1-d transform: the plane is one number per batch, which must be real
    auto p = fusor::ext::slice_leaf(h.as_leaf(), last, index, index + 1);
    fusor::ext::assign_expr(p, fusor::real(p), false);
    return;
  }
  const leaf<C, B> p = fusor::ext::slice_leaf(h.as_leaf(), last, index, index + 1);
  array<C, B> rev(array_view<C, B>(p.data, p.shape, p.strides));
  for (int k = 0; k + 1 < a.count; ++k) {
    const int j = a.axis[k];
    if (p.shape[j] > 1) rev = fusor::roll(fusor::flip(rev, j), 1, j);
  }
  fusor::ext::assign_expr(p, (p + fusor::conj(rev.as_leaf())) * real_t<C>(0.5), false);
}

/// adjoint(o) += h where they overlap along the transformed axes (Pᵀ: a crop or zero-pad of the
/// input has the overlap as its adjoint); the real part for a real operand.
template <class T, class B, class H>
void overlap_into(tape& t, const operand<T, B>& o, const leaf<H, B>& h, const fft::detail::axes_spec& a) {
  leaf<T, B> part = o.value;
  leaf<H, B> hp = h;
  for (int k = 0; k < a.count; ++k) {
    const int j = a.axis[k];
    const index_t n = std::min(part.shape[j], hp.shape[j]);
    part = fusor::ext::slice_leaf(part, j, 0, n);
    hp = fusor::ext::slice_leaf(hp, j, 0, n);
  }
  var_leaf<T, B> target = o.as_var(t);
  target.value = part;
  if constexpr (is_complex_v<H> && !is_complex_v<T>) accumulate(t, target, fusor::real(hp), part.shape);
  else accumulate(t, target, hp, part.shape);
}

template <class T, class Out, class B>
struct fft_back {
  operand<T, B> x;
  fft_kind kind;
  fft::norm_mode norm;
  fft::detail::axes_spec a;  // the transform's axes (in order) and lengths

  void operator()(tape& t, const leaf<Out, B>& g) const {
    extents axes, lengths;
    for (int k = 0; k < a.count; ++k) {
      axes.push_back(a.axis[k]);
      lengths.push_back(a.n[k]);
    }
    const array_view<Out, B> gv{g.data, g.shape, g.strides};
    const fft::norm_mode dn = dual_norm(norm);
    const int last = a.axis[a.count - 1];
    const index_t n_last = a.n[a.count - 1];
    const index_t mirrored = (n_last - 1) / 2;  // half-spectrum entries 1 .. mirrored have a mirror image
    if (kind == fft_kind::forward) {
      const auto h = fft::ifftn(gv, extents{}, axes, dn);
      overlap_into(t, x, h.as_leaf(), a);
    } else if (kind == fft_kind::inverse) {
      const auto h = fft::fftn(gv, extents{}, axes, dn);
      overlap_into(t, x, h.as_leaf(), a);
    } else if constexpr (is_complex_v<Out>) {  // r2c: g is complex, x real
      array<Out, B> h = scale_mirrored(g, last, mirrored, 0.5);
      hermitian_plane(h, a, 0);
      if (n_last % 2 == 0) hermitian_plane(h, a, n_last / 2);
      const auto r = fft::irfftn(std::move(h), lengths, axes, dn);
      overlap_into(t, x, r.as_leaf(), a);
    } else {  // c2r: g is real, x complex
      const auto spec = fft::rfftn(gv, extents{}, axes, dn);
      const array<T, B> h = scale_mirrored(spec.as_leaf(), last, mirrored, 2.0);
      overlap_into(t, x, h.as_leaf(), a);
    }
  }
};

template <class X>
using fft_operand_t = value_t<node_t<X>>;

/// One transform of a variable: the array function's value, kept by the tape, and its node.
template <fft_kind Kind, class X, class Run>
auto fft_op(const char* fn, const X& x, const extents& s, const extents& axes, fft::norm_mode norm, Run run) {
  using T = fft_operand_t<X>;
  using B = backend_of_t<node_t<X>>;
  static_assert(differentiable_v<T> && !is_dual_v<T>,
                "fusor: Fourier transforms of variables need float, double or complex values (forward over reverse, i.e. hessian or hvp, does not go through FFTs yet)");
  tape& t = *common_tape(fn, x);
  const operand<T, B> o = make_operand<T>(t, x);
  constexpr bool real_kind = Kind == fft_kind::r2c || Kind == fft_kind::c2r;
  const fft::detail::axes_spec a = fft::detail::resolve_axes(fn, o.shape(), s, axes, real_kind, Kind == fft_kind::c2r);
  using Out = value_t<decltype(run(o.view()))>;
  if constexpr (!real_kind) {
    if (a.count == 0)  // no axes (a 0-d input): NumPy returns the input as complex, whose adjoint is the identity
      return materialise(fusor::ext::to_node(fusor::cast<Out>(o.as_var(t))));
  }
  auto result = run(o.view());
  auto [out, grad] = kept_output(t, std::move(result), o.grad);
  if (grad) record_op<Out, B>(t, out.id(), fft_back<T, Out, B>{o, Kind, norm, a});
  return out;
}

}  // namespace fusor::ad::detail

namespace fusor::fft {

// ---- n-d ---------------------------------------------------------------------------------------
/// np.fft.fftn of a variable (real or complex): one node; the adjoint is ifftn (ad/fft.hpp).
template <class X>
  requires ad::detail::holds_vars_v<X>
auto fftn(X&& x, const extents& s = {}, const extents& axes = {}, norm_mode norm = norm_mode::backward) {
  return ad::detail::fft_op<ad::detail::fft_kind::forward>("fftn", x, s, axes, norm,
                                                            [&](const auto& v) { return fft::fftn(v, s, axes, norm); });
}
template <class X>
  requires ad::detail::holds_vars_v<X>
auto ifftn(X&& x, const extents& s = {}, const extents& axes = {}, norm_mode norm = norm_mode::backward) {
  return ad::detail::fft_op<ad::detail::fft_kind::inverse>("ifftn", x, s, axes, norm,
                                                            [&](const auto& v) { return fft::ifftn(v, s, axes, norm); });
}
template <class X>
  requires ad::detail::holds_vars_v<X>
auto rfftn(X&& x, const extents& s = {}, const extents& axes = {}, norm_mode norm = norm_mode::backward) {
  return ad::detail::fft_op<ad::detail::fft_kind::r2c>("rfftn", x, s, axes, norm,
                                                        [&](const auto& v) { return fft::rfftn(v, s, axes, norm); });
}
template <class X>
  requires ad::detail::holds_vars_v<X>
auto irfftn(X&& x, const extents& s = {}, const extents& axes = {}, norm_mode norm = norm_mode::backward) {
  return ad::detail::fft_op<ad::detail::fft_kind::c2r>("irfftn", x, s, axes, norm,
                                                        [&](const auto& v) { return fft::irfftn(v, s, axes, norm); });
}

// ---- 2-d ---------------------------------------------------------------------------------------
// (these and the 1-d forms take variables, through the n-d nodes above, and arrays of duals,
// through fft_duals.hpp's n-d forms)
template <class X>
  requires(ad::detail::holds_vars_v<X> || ad::detail::dual_operand<X>)
auto fft2(X&& x, const extents& s = {}, const extents& axes = {-2, -1}, norm_mode norm = norm_mode::backward) {
  return fft::fftn(x, s, axes, norm);
}
template <class X>
  requires(ad::detail::holds_vars_v<X> || ad::detail::dual_operand<X>)
auto ifft2(X&& x, const extents& s = {}, const extents& axes = {-2, -1}, norm_mode norm = norm_mode::backward) {
  return fft::ifftn(x, s, axes, norm);
}
template <class X>
  requires(ad::detail::holds_vars_v<X> || ad::detail::dual_operand<X>)
auto rfft2(X&& x, const extents& s = {}, const extents& axes = {-2, -1}, norm_mode norm = norm_mode::backward) {
  return fft::rfftn(x, s, axes, norm);
}
template <class X>
  requires(ad::detail::holds_vars_v<X> || ad::detail::dual_operand<X>)
auto irfft2(X&& x, const extents& s = {}, const extents& axes = {-2, -1}, norm_mode norm = norm_mode::backward) {
  return fft::irfftn(x, s, axes, norm);
}

// ---- 1-d ---------------------------------------------------------------------------------------
template <class X>
  requires(ad::detail::holds_vars_v<X> || ad::detail::dual_operand<X>)
auto fft(X&& x, index_t n = -1, int axis = -1, norm_mode norm = norm_mode::backward) {
  return fft::fftn(x, detail::one_axis(n), extents{axis}, norm);
}
template <class X>
  requires(ad::detail::holds_vars_v<X> || ad::detail::dual_operand<X>)
auto ifft(X&& x, index_t n = -1, int axis = -1, norm_mode norm = norm_mode::backward) {
  return fft::ifftn(x, detail::one_axis(n), extents{axis}, norm);
}
template <class X>
  requires(ad::detail::holds_vars_v<X> || ad::detail::dual_operand<X>)
auto rfft(X&& x, index_t n = -1, int axis = -1, norm_mode norm = norm_mode::backward) {
  return fft::rfftn(x, detail::one_axis(n), extents{axis}, norm);
}
template <class X>
  requires(ad::detail::holds_vars_v<X> || ad::detail::dual_operand<X>)
auto irfft(X&& x, index_t n = -1, int axis = -1, norm_mode norm = norm_mode::backward) {
  return fft::irfftn(x, detail::one_axis(n), extents{axis}, norm);
}

}  // namespace fusor::fft
