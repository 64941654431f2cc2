#pragma once
// scipy.signal.fftconvolve and scipy.signal.correlate (the FFT method): n-d, modes full / same /
// valid, over all axes or a chosen set (the other axes broadcast), for real and complex input.
//
// Real inputs take two rfftn, one fused pass for the spectrum product (the 1/N normalisation
// folded into it, written over the first spectrum), and one irfftn that consumes that product
// where it lies; complex inputs the same with fftn/ifftn. Each axis is padded to next_fast_len
// of the full length, so no length with a large prime factor reaches the transform.
#include <algorithm>
#include <complex>
#include <string>
#include <type_traits>
#include <utility>

#include "../core/shape_ops.hpp"
#include "helpers.hpp"
#include "transforms.hpp"

namespace fusor::fft {

/// The part of the full convolution returned (scipy's `mode`): full: every overlap, length
/// n1 + n2 - 1 per axis; same: in1's shape, centred; valid: only where one input covers the
/// other entirely, |n1 - n2| + 1 per axis.
enum class conv_mode { full, same, valid };

namespace detail {

/// The result type of convolving V1 with V2: promoted, integers and bool as double.
template <class V1, class V2>
using conv_result_t = std::conditional_t<is_complex_v<promote_t<V1, V2>>, std::complex<fft_real_t<promote_t<V1, V2>>>,
                                         fft_real_t<promote_t<V1, V2>>>;

/// Where a convolution of two shapes lies: the convolved axes with their transform lengths (the
/// full length n1 + n2 - 1 raised to next_fast_len), and per axis where the mode's part starts in
/// the full result and how long it is. Shared by fftconvolve and its adjoint (fusor/ad).
struct conv_plan {
  axes_spec a;           // the convolved axes (sorted), a.n: the transform lengths
  extents fshape, axes;  // the same as extents, for the transforms
  index_t full[max_rank]{}, start[max_rank]{}, len[max_rank]{};
  extents shape;         // the result's shape (the other axes broadcast)
  bool empty = false;    // an input has no elements: scipy returns an empty array
};

/// Checks two shapes for a convolution in `mode` over `axes_in` (default all) and plans it.
inline conv_plan plan_convolution(const char* fn, const extents& s1_in, const extents& s2_in, conv_mode mode,
                                  const extents& axes_in) {
  conv_plan p;
  const int r = s1_in.size();
  if (s2_in.size() != r)
    throw value_error(std::string("fusor: ") + fn + " expects inputs of the same rank, got shapes " + to_string(s1_in) +
                      " and " + to_string(s2_in));
  if (s1_in.numel() == 0 || s2_in.numel() == 0) {
    p.empty = true;
    p.shape = extents{0};
    return p;
  }
  axes_spec& a = p.a;
  if (axes_in.empty()) {
    a.count = r;
    for (int j = 0; j < r; ++j) a.axis[j] = j;
  } else {
    a.count = axes_in.size();
    for (int k = 0; k < a.count; ++k) {
      a.axis[k] = normalize_axis(int(axes_in[k]), r);
      for (int j = 0; j < k; ++j)
        if (a.axis[j] == a.axis[k])
          throw value_error(std::string("fusor: ") + fn + " expects each axis once, got axes = " + to_string(axes_in));
    }
    std::sort(a.axis, a.axis + a.count);
  }
  for (int j = 0; j < r; ++j)
    if (!a.has(j) && s1_in[j] != s2_in[j] && s1_in[j] != 1 && s2_in[j] != 1)
      throw shape_error(std::string("fusor: ") + fn + " needs equal lengths (or 1) on the axes it does not convolve; axis " +
                        std::to_string(j) + " has " + std::to_string(s1_in[j]) + " and " + std::to_string(s2_in[j]) +
                        " (shapes " + to_string(s1_in) + " and " + to_string(s2_in) + ")");

  // valid mode: one input must cover the other on every convolved axis (scipy swaps them so the
  // first is the larger; convolution commutes)
  bool swap = false;
  if (mode == conv_mode::valid) {
    bool ge = true, le = true;
    for (int k = 0; k < a.count; ++k) {
      const int j = a.axis[k];
      ge = ge && s1_in[j] >= s2_in[j];
      le = le && s1_in[j] <= s2_in[j];
    }
    if (!ge && !le)
      throw value_error(std::string("fusor: ") + fn + " in valid mode needs one input at least as large as the other " +
                        "on every convolved axis, got shapes " + to_string(s1_in) + " and " + to_string(s2_in));
    swap = !ge;
  }
  const extents& s1 = swap ? s2_in : s1_in;
  const extents& s2 = swap ? s1_in : s2_in;
  for (int j = 0; j < r; ++j) p.shape.push_back(std::max(s1[j], s2[j]));
  for (int k = 0; k < a.count; ++k) {
    const int j = a.axis[k];
    p.full[k] = s1[j] + s2[j] - 1;
    a.n[k] = next_fast_len(p.full[k]);
    p.fshape.push_back(a.n[k]);
    p.axes.push_back(j);
    // the mode's part starts (L - m) / 2 into the full length L, as scipy's _centered
    p.len[k] = mode == conv_mode::full ? p.full[k] : mode == conv_mode::same ? s1_in[j] : s1[j] - s2[j] + 1;
    p.start[k] = (p.full[k] - p.len[k]) / 2;
    p.shape[j] = p.len[k];
  }
  return p;
}

template <class T, class B, class W, class Bw>
auto convolve_views(const char* fn, array_view<T, B> v1, array_view<W, Bw> v2, conv_mode mode, const extents& axes_in) {
  static_assert(std::is_same_v<B, Bw>,
                "fusor: cannot combine arrays on different backends; transfer explicitly with to<cpu>(x) or to<cuda>(x)");
  using P = conv_result_t<T, W>;
  using R = fft_real_t<P>;
  const conv_plan plan = plan_convolution(fn, v1.shape(), v2.shape(), mode, axes_in);
  if (plan.empty) return array<P, B>(extents{0});  // scipy returns an empty array
  const axes_spec& a = plan.a;
  if (a.count == 0) return array<P, B>(cast<P>(v1) * cast<P>(v2));
  const extents& fshape = plan.fshape;
  const extents& ax = plan.axes;
  const R scale = R(1.0 / double(a.transform_size()));

  auto product_inverse = [&](auto f1, auto f2, auto inverse) {
    const extents bs = broadcast_shapes(f1.shape(), f2.shape());
    if (f1.shape() == bs) {
      f1 *= f2 * scale;
      return inverse(std::move(f1));
    }
    if (f2.shape() == bs) {
      f2 *= f1 * scale;
      return inverse(std::move(f2));
    }
    return inverse(f1 * f2 * scale);
  };
  // an input whose precision is P's goes in as it is (the transform's padding copy converts
  // integers or real to complex); a lower precision is raised first
  auto in = [](const auto& v) {
    using V = typename std::remove_cvref_t<decltype(v)>::value_type;
    if constexpr (std::is_same_v<fft_real_t<V>, R>) return v;
    else return cast<P>(v);
  };
  array<P, B> ret = [&] {
    if constexpr (is_complex_v<P>)
      return product_inverse(fftn(in(v1), fshape, ax), fftn(in(v2), fshape, ax), [&](auto&& spec) {
        return ifftn(std::forward<decltype(spec)>(spec), fshape, ax, norm_mode::forward);
      });
    else
      return product_inverse(rfftn(in(v1), fshape, ax), rfftn(in(v2), fshape, ax), [&](auto&& spec) {
        return irfftn(std::forward<decltype(spec)>(spec), fshape, ax, norm_mode::forward);
      });
  }();

  // the requested part
  auto part = ret.as_leaf();
  bool whole = true;
  for (int k = 0; k < a.count; ++k) {
    part = fusor::detail::slice_leaf(part, a.axis[k], plan.start[k], plan.start[k] + plan.len[k]);
    whole = whole && plan.len[k] == a.n[k];
  }
  if (whole) return ret;
  return as_view(part).copy();
}

/// l reversed (a view: negative strides) along the axes `axes` names, all when it is empty:
/// correlate's second operand, for arrays and for variables (fusor/ad).
template <class L>
L reversed_leaf(L l, const extents& axes) {
  const int r = l.shape.size();
  for (int j = 0; j < r; ++j) {
    bool on = axes.empty();
    for (int k = 0; k < axes.size() && !on; ++k) on = normalize_axis(int(axes[k]), r) == j;
    if (on && l.shape[j] > 1) {
      l.data += (l.shape[j] - 1) * l.strides[j];
      l.strides[j] = -l.strides[j];
    }
  }
  return l;
}

}  // namespace detail

/// scipy.signal.fftconvolve: the n-d convolution of in1 and in2 through FFTs. Both inputs have the
/// same rank; `axes` (default all) are convolved, the others must have equal lengths or 1 and
/// broadcast. Real inputs give a real result (float stays float; integers give double).
template <class X, class Y>
auto fftconvolve(const X& in1, const Y& in2, conv_mode mode = conv_mode::full, const extents& axes = {}) {
  return fusor::detail::with_input(in1, [&](const auto& v1) {
    return fusor::detail::with_input(in2, [&](const auto& v2) {
      return detail::convolve_views("fftconvolve", v1, v2, mode, axes);
    });
  });
}

/// scipy.signal.correlate (FFT method): the cross-correlation z[k] = sum_n in1[n + k - o] conj(in2[n]),
/// computed as the convolution of in1 with in2 reversed (and conjugated, when complex) along the
/// correlated axes. Same modes and axes as fftconvolve.
template <class X, class Y>
auto correlate(const X& in1, const Y& in2, conv_mode mode = conv_mode::full, const extents& axes = {}) {
  return fusor::detail::with_input(in1, [&](const auto& v1) {
    return fusor::detail::with_input(in2, [&](const auto& v2) {
      const auto rev = detail::reversed_leaf(v2.as_leaf(), axes);
      using W = typename std::remove_cvref_t<decltype(v2)>::value_type;
      if constexpr (is_complex_v<W>) {
        const auto conj_rev = eval(conj(fusor::detail::as_view(rev)));
        return detail::convolve_views("correlate", v1, conj_rev.view(), mode, axes);
      } else {
        return detail::convolve_views("correlate", v1, fusor::detail::as_view(rev), mode, axes);
      }
    });
  });
}

}  // namespace fusor::fft
