#pragma once
// Sampling a volume between its voxels: trilinear and cubic B-spline interpolation, and the cubic
// B-spline prefilter that turns voxel values into spline coefficients (so the spline passes
// through every voxel value). Written once as FUSOR_HD kernels: the generators of transform.hpp
// run them on every backend.
//
// Boundaries, as scipy.ndimage's mode "mirror" (which its mode "constant" uses inside the volume):
// a line of n samples continues as ... f2 f1 | f0 f1 ... f(n-1) | f(n-2) f(n-3) ..., the edge
// sample not repeated (period 2n - 2).
#include <cmath>
#include <string>
#include <type_traits>

#include "../core/create.hpp"
#include "../core/error.hpp"

namespace fusor::match {

/// How values between voxels are computed: trilinear (8 voxels, exact for linear functions) or
/// the cubic B-spline (64 coefficients, exact at the voxels once prefiltered, smooth between them;
/// pyTME's and scipy's default order 3).
enum class interpolation { linear, cubic };

inline std::string to_string(interpolation m) { return m == interpolation::linear ? "linear" : "cubic"; }

namespace detail {

/// Index i of the mirrored continuation of a line of n samples.
FUSOR_HD inline index_t mirror_index(index_t i, index_t n) {
  if (n == 1) return 0;
  const index_t period = 2 * n - 2;
  i %= period;
  if (i < 0) i += period;
  return i < n ? i : period - i;
}

/// The cubic B-spline prefilter as a symmetric FIR filter: the exact inverse of the sampled spline
/// (1/6, 4/6, 1/6) has the impulse response sqrt(3) z^|k|, z = sqrt(3) - 2; |z|^16 < 1e-9, so 16
/// taps each side leave an error far below float rounding. (A recursive filter needs one thread
/// per line; this one computes each coefficient on its own, which every backend runs in parallel.)
inline constexpr int prefilter_half_width = 16;

/// sqrt(3) z^k for k = 0..16, in float (computed in double and rounded).
inline constexpr float prefilter_taps[prefilter_half_width + 1] = {
      1.7320508075688772f, -0.46410161513775472f, 0.12435565298214114f, -0.033320996790809666f,
      0.0089283341810974855f, -0.0023923399335802615f, 0.00064102555322355695f, -0.00017176227931396584f,
      4.6023564032306093e-05f, -1.2331976815258487e-05f, 3.3043432287278414e-06f, -8.85396099652874e-07f,
      2.3724116988365352e-07f, -6.3568579881739778e-08f, 1.7033149643305495e-08f, -4.5640186914821744e-09f,
      1.2229251226231986e-09f
  };

/// One axis of the prefilter over a C-ordered 3-d array (n0, n1, n2): out = sum_k tap(|k|)
/// in[..., mirror(i + k), ...] along `axis`, the taps added from the outside in (the small ones
/// first) in the same order on every backend.
struct bspline_prefilter_axis {
  using value_type = float;
  const float* in;
  index_t n0, n1, n2;
  int axis;
  float tap[prefilter_half_width + 1];  // a copy of prefilter_taps (device code reads its own)
  FUSOR_HD void fill(index_t first, float* out, index_t count) const {
    const index_t n = axis == 0 ? n0 : axis == 1 ? n1 : n2;
    const index_t stride = axis == 0 ? n1 * n2 : axis == 1 ? n2 : 1;
    constexpr int h = prefilter_half_width;
    for (index_t e = 0; e < count; ++e) {
      const index_t p = first + e;
      const index_t i = axis == 0 ? p / (n1 * n2) : axis == 1 ? (p / n2) % n1 : p % n2;
      const float* line = in + (p - i * stride);
      float s = 0.0f;
      if (i >= h && i + h < n) {
        for (int k = h; k >= 1; --k) s += tap[k] * (line[(i - k) * stride] + line[(i + k) * stride]);
      } else {
        for (int k = h; k >= 1; --k)
          s += tap[k] * (line[mirror_index(i - k, n) * stride] + line[mirror_index(i + k, n) * stride]);
      }
      out[e] = s + tap[0] * line[i * stride];
    }
  }
};

/// The four cubic B-spline weights at fraction t in [0, 1) of the way from tap 1 to tap 2.
FUSOR_HD inline void bspline_weights(float t, float w[4]) {
  const float u = 1.0f - t, t2 = t * t, t3 = t2 * t;
  w[0] = u * u * u * (1.0f / 6.0f);
  w[1] = (4.0f - 6.0f * t2 + 3.0f * t3) * (1.0f / 6.0f);
  w[2] = (1.0f + 3.0f * (t + t2 - t3)) * (1.0f / 6.0f);
  w[3] = t3 * (1.0f / 6.0f);
}

/// The value of a C-ordered (n0, n1, n2) volume at the point (x0, x1, x2), in voxel units, or
/// `outside` where the point lies off the volume: below 0 or above n - 1 on some axis, by more
/// than a thousandth of a voxel (so rounding in the coordinates of a voxel that lands exactly on
/// the edge does not drop it). Cubic reads B-spline coefficients (bspline_coefficients).
struct volume_sampler {
  const float* v;
  index_t n0, n1, n2;
  interpolation method;
  float outside;

  FUSOR_HD float operator()(float x0, float x1, float x2) const {
    constexpr float slack = 1e-3f;
    if (!(x0 >= -slack && x0 <= float(n0 - 1) + slack && x1 >= -slack && x1 <= float(n1 - 1) + slack &&
          x2 >= -slack && x2 <= float(n2 - 1) + slack))
      return outside;  // NaN coordinates land here too
    const float f0 = ::floorf(x0), f1 = ::floorf(x1), f2 = ::floorf(x2);
    const index_t i0 = index_t(f0), i1 = index_t(f1), i2 = index_t(f2);
    const float t0 = x0 - f0, t1 = x1 - f1, t2 = x2 - f2;
    return method == interpolation::linear ? linear(i0, i1, i2, t0, t1, t2) : cubic(i0, i1, i2, t0, t1, t2);
  }

  FUSOR_HD static index_t clamp(index_t i, index_t n) { return i < 0 ? 0 : i < n ? i : n - 1; }

  FUSOR_HD float linear(index_t i0, index_t i1, index_t i2, float t0, float t1, float t2) const {
    // a tap off the volume (within the slack of an edge) carries weight 0 or nearly: clamp it
    const index_t a0 = clamp(i0, n0), a1 = clamp(i1, n1), a2 = clamp(i2, n2);
    const index_t b0 = clamp(i0 + 1, n0), b1 = clamp(i1 + 1, n1), b2 = clamp(i2 + 1, n2);
    const float* p00 = v + (a0 * n1 + a1) * n2;
    const float* p01 = v + (a0 * n1 + b1) * n2;
    const float* p10 = v + (b0 * n1 + a1) * n2;
    const float* p11 = v + (b0 * n1 + b1) * n2;
    const float c00 = p00[a2] + t2 * (p00[b2] - p00[a2]);
    const float c01 = p01[a2] + t2 * (p01[b2] - p01[a2]);
    const float c10 = p10[a2] + t2 * (p10[b2] - p10[a2]);
    const float c11 = p11[a2] + t2 * (p11[b2] - p11[a2]);
    const float c0 = c00 + t1 * (c01 - c00);
    const float c1 = c10 + t1 * (c11 - c10);
    return c0 + t0 * (c1 - c0);
  }

  FUSOR_HD float cubic(index_t i0, index_t i1, index_t i2, float t0, float t1, float t2) const {
    float w0[4], w1[4], w2[4];
    bspline_weights(t0, w0);
    bspline_weights(t1, w1);
    bspline_weights(t2, w2);
    index_t j0[4], j1[4], j2[4];
    if (i0 >= 1 && i0 + 2 < n0 && i1 >= 1 && i1 + 2 < n1 && i2 >= 1 && i2 + 2 < n2) {
      for (int k = 0; k < 4; ++k) {  // inside: no mirroring (and none of its divisions)
        j0[k] = (i0 - 1 + k) * n1;
        j1[k] = i1 - 1 + k;
        j2[k] = i2 - 1 + k;
      }
    } else {
      for (int k = 0; k < 4; ++k) {
        j0[k] = mirror_index(i0 - 1 + k, n0) * n1;
        j1[k] = mirror_index(i1 - 1 + k, n1);
        j2[k] = mirror_index(i2 - 1 + k, n2);
      }
    }
    float s = 0.0f;
    for (int a = 0; a < 4; ++a) {
      float sa = 0.0f;
      for (int b = 0; b < 4; ++b) {
        const float* row = v + (j0[a] + j1[b]) * n2;
        const float sb = w2[0] * row[j2[0]] + w2[1] * row[j2[1]] + w2[2] * row[j2[2]] + w2[3] * row[j2[3]];
        sa += w1[b] * sb;
      }
      s += w0[a] * sa;
    }
    return s;
  }
};

/// A length or a physical parameter: finite and > 0 (>= 0 when zero_ok), else a value_error
/// "fusor::match::<fn>: expected a finite <name> > 0 <unit>, got v".
inline void check_length(double v, const char* fn, const char* name, const char* unit, bool zero_ok = false) {
  if (!std::isfinite(v) || v < 0 || (!zero_ok && v == 0))
    throw value_error(std::string("fusor::match::") + fn + ": expected a finite " + name + (zero_ok ? " >= 0 " : " > 0 ") +
                      unit + ", got " + std::to_string(v));
}

/// Threads for host-side loops of the match layer (peak calling, MRC conversion): fusor's cpu
/// thread count (set_num_threads), also beside another backend, whose arrays these loops read
/// through host copies.
template <class B>
int host_threads() {
  return executor<host_backend_t<B>>::threads();
}

/// The host backend, named through B: host work inside a template over B names its arrays
/// array<T, host_of_t<B>>, a dependent type, so that a header stays whole on its own (the cpu
/// backend's memory support is only needed where the template is instantiated).
template <class B>
struct host_of {
  using type = cpu;
};
template <class B>
using host_of_t = typename host_of<B>::type;

inline void require_volume(const extents& s, const char* what) {
  if (s.size() != 3)
    throw shape_error(std::string("fusor::match::") + what + ": expected a 3-d volume, got shape " + to_string(s));
}

}  // namespace detail

/// The cubic B-spline coefficients of a 3-d volume (scipy.ndimage.spline_filter with order 3 and
/// mode "mirror", to float rounding): interpolating them with interpolation::cubic passes through
/// every voxel value. Compute them once and pass `prefiltered = true` to rigid_transform when one
/// volume is rotated many times.
template <class B>
array<float, B> bspline_coefficients(const array<float, B>& volume) {
  detail::require_volume(volume.shape(), "bspline_coefficients");
  const extents& s = volume.shape();
  const auto pass = [&](const float* in, int axis) {
    detail::bspline_prefilter_axis g{in, s[0], s[1], s[2], axis, {}};
    for (int k = 0; k <= detail::prefilter_half_width; ++k) g.tap[k] = detail::prefilter_taps[k];
    return generator_expr<detail::bspline_prefilter_axis, B>{g, s, contiguous_strides(s)};
  };
  array<float, B> a(pass(volume.data(), 0));
  array<float, B> b(pass(a.data(), 1));
  a = pass(b.data(), 2);  // a's own buffer: pass 2 reads only b
  return a;
}

}  // namespace fusor::match
