#pragma once
// fftconvolve and correlate of real variables (scipy.signal's, through FFTs): one node each. The
// adjoint of a convolution is a correlation, computed through the same transforms:
//
//   z = crop(x ∗ k)  ⇒  dL/dx = (g̃ ⋆ k)[0, nx),  dL/dk = (g̃ ⋆ x)[0, nk)
//
// where g̃ is the output's adjoint placed where the mode's part lies in the full result (zero
// elsewhere) and ⋆ is the circular correlation at the forward pass's transform lengths (at least
// the full length, so nothing wraps into the part kept). The forward pass keeps the operands'
// spectra (only those an adjoint needs), so the backward pass is one rfftn of g̃ and one irfftn
// per input that needs an adjoint, with the spectrum product (and 1/N) fused into one pass.
// correlate(x, k) is fftconvolve(x, k reversed along the correlated axes): a view, no copy.
#include <complex>
#include <type_traits>
#include <utility>

#include "../core/pad.hpp"
#include "../fft/convolve.hpp"
#include "fft_duals.hpp"  // forward mode: the transforms and convolutions of dual arrays
#include "ops.hpp"
#include "../core/ext.hpp"

namespace fusor::ad {

namespace detail {

template <class T, class B>
struct convolve_back {
  operand<T, B> x[2];
  fft::detail::conv_plan plan;
  const array<std::complex<T>, B>* spectrum[2];  // of x[0] and x[1]; only those the other's adjoint needs
  const array<T, B>* scalars[2];                 // rank 0: copies of the two numbers

  void operator()(tape& t, const leaf<T, B>& g) const {
    if (plan.a.count == 0) {  // rank 0: a product
      if (x[0].grad) accumulate_into(t, x[0], g * scalars[1]->as_leaf(), g.shape);
      if (x[1].grad) accumulate_into(t, x[1], g * scalars[0]->as_leaf(), g.shape);
      return;
    }
    // g placed at the mode's start within the transform lengths
    pad_widths widths(std::size_t(g.shape.size()), {0, 0});
    for (int k = 0; k < plan.a.count; ++k) {
      const int j = plan.a.axis[k];
      widths[std::size_t(j)] = {plan.start[k], plan.a.n[k] - plan.start[k] - plan.len[k]};
    }
    const array<T, B> placed = fusor::pad(array_view<T, B>(g.data, g.shape, g.strides), widths);
    array<std::complex<T>, B> spec = fft::rfftn(placed, extents{}, plan.axes);
    const T scale = T(1.0 / double(plan.a.transform_size()));
    for (int i = 0; i < 2; ++i) {
      if (!x[i].grad) continue;
      const array<std::complex<T>, B>& other = *spectrum[1 - i];
      const bool last = i == 1 || !x[1].grad;
      array<T, B> corr = last ? [&] {
        spec *= fusor::conj(other) * scale;  // the last user transforms the spectrum where it lies
        return fft::irfftn(std::move(spec), plan.fshape, plan.axes, fft::norm_mode::forward);
      }()
                              : fft::irfftn(spec * (fusor::conj(other) * scale), plan.fshape, plan.axes,
                                            fft::norm_mode::forward);
      leaf<T, B> part = corr.as_leaf();
      for (int k = 0; k < plan.a.count; ++k) {
        const int j = plan.a.axis[k];
        part = fusor::ext::slice_leaf(part, j, 0, x[i].shape()[j]);
      }
      accumulate_into(t, x[i], part, part.shape);  // summed over batch axes x[i] broadcasts along
    }
  }
};

template <class T, class B>
var<T, B> convolve_op(tape& t, const char* fn, const operand<T, B>& x0, const operand<T, B>& x1, fft::conv_mode mode,
                      const extents& axes) {
  const fft::detail::conv_plan plan = fft::detail::plan_convolution(fn, x0.shape(), x1.shape(), mode, axes);
  const bool any = x0.grad || x1.grad;
  convolve_back<T, B> back{{x0, x1}, plan, {nullptr, nullptr}, {nullptr, nullptr}};
  const bool keep = recording() && any;
  array<T, B> result = [&] {
    if (plan.empty) return array<T, B>(plan.shape);
    if (plan.a.count == 0) {
      if (keep) {
        back.scalars[0] = t.keep(x0.view().copy());
        back.scalars[1] = t.keep(x1.view().copy());
      }
      return array<T, B>(x0.view() * x1.view());
    }
    array<std::complex<T>, B> s0 = fft::rfftn(x0.view(), plan.fshape, plan.axes);
    array<std::complex<T>, B> s1 = fft::rfftn(x1.view(), plan.fshape, plan.axes);
    const T scale = T(1.0 / double(plan.a.transform_size()));
    // x[i]'s adjoint needs the other's spectrum: those are kept, and the product is written over
    // a spectrum nobody needs (and of the product's shape) when there is one
    const bool keep0 = keep && x1.grad, keep1 = keep && x0.grad;
    const extents product = broadcast_shapes(s0.shape(), s1.shape());
    array<T, B> full = [&] {
      if (!keep0 && s0.shape() == product) {
        s0 *= s1 * scale;
        return fft::irfftn(std::move(s0), plan.fshape, plan.axes, fft::norm_mode::forward);
      }
      if (!keep1 && s1.shape() == product) {
        s1 *= s0 * scale;
        return fft::irfftn(std::move(s1), plan.fshape, plan.axes, fft::norm_mode::forward);
      }
      return fft::irfftn(s0 * s1 * scale, plan.fshape, plan.axes, fft::norm_mode::forward);
    }();
    if (keep0) back.spectrum[0] = t.keep(std::move(s0));
    if (keep1) back.spectrum[1] = t.keep(std::move(s1));
    leaf<T, B> part = full.as_leaf();
    bool whole = true;
    for (int k = 0; k < plan.a.count; ++k) {
      part = fusor::ext::slice_leaf(part, plan.a.axis[k], plan.start[k], plan.start[k] + plan.len[k]);
      whole = whole && plan.len[k] == plan.a.n[k];
    }
    if (whole) return full;
    return array<T, B>(array_view<T, B>(part.data, part.shape, part.strides));
  }();
  auto [out, grad] = kept_output(t, std::move(result), any && !plan.empty);
  if (grad) record_op<T, B>(t, out.id(), back);
  return out;
}

template <class X, class Y>
using conv_value_t = value_t<node_t<std::conditional_t<holds_vars_v<X>, X, Y>>>;
template <class X, class Y>
using conv_backend_t = backend_of_t<node_t<std::conditional_t<holds_vars_v<X>, X, Y>>>;

}  // namespace detail

/// scipy.signal.fftconvolve of real variables (or a variable and a constant): one node whose
/// adjoints are correlations through the same FFTs (see the file comment). Modes and axes as
/// fft::fftconvolve.
template <class X, class Y>
  requires(detail::holds_vars_v<X> || detail::holds_vars_v<Y>)
auto fftconvolve(const X& in1, const Y& in2, fft::conv_mode mode = fft::conv_mode::full, const extents& axes = {}) {
  using T = detail::conv_value_t<X, Y>;
  static_assert(std::is_floating_point_v<T>,
                "fusor: fftconvolve of variables needs float or double values (complex variables, and forward over reverse, i.e. hessian or hvp, are not supported)");
  tape& t = *detail::common_tape("fftconvolve", in1, in2);
  return detail::convolve_op(t, "fftconvolve", detail::make_operand<T>(t, in1), detail::make_operand<T>(t, in2), mode,
                             axes);
}

/// scipy.signal.correlate (FFT method) of real variables: fftconvolve with in2 reversed along the
/// correlated axes (a view, so its adjoint lands back in place).
template <class X, class Y>
  requires(detail::holds_vars_v<X> || detail::holds_vars_v<Y>)
auto correlate(const X& in1, const Y& in2, fft::conv_mode mode = fft::conv_mode::full, const extents& axes = {}) {
  using T = detail::conv_value_t<X, Y>;
  static_assert(std::is_floating_point_v<T>,
                "fusor: correlate of variables needs float or double values (complex variables, and forward over reverse, i.e. hessian or hvp, are not supported)");
  tape& t = *detail::common_tape("correlate", in1, in2);
  const auto o2 = detail::make_operand<T>(t, in2);
  if (o2.shape().size() != expr_shape(fusor::ext::to_node(in1)).size())  // the plan names the ranks
    return detail::convolve_op(t, "correlate", detail::make_operand<T>(t, in1), o2, mode, axes);
  return detail::convolve_op(t, "correlate", detail::make_operand<T>(t, in1), [&] {
    auto r = o2;
    r.value = fft::detail::reversed_leaf(o2.value, axes);
    return r;
  }(), mode, axes);
}

}  // namespace fusor::ad
