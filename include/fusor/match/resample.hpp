#pragma once
// Fourier resampling: a volume evaluated on another grid over the same box, through its discrete
// Fourier series. A map made at one voxel size becomes a template at the tomogram's; a model's
// density, spread on a fine grid, comes down to the voxel size asked for (model_density.hpp).
//
// The model: a real volume of n voxels along an axis is the trigonometric series whose
// coefficients c(f), f = -n/2 .. n/2, are its DFT divided by n, with an even axis's Nyquist
// coefficient split in halves between +n/2 and -n/2 (so the series is real and even in its
// Nyquist term, and sampling it back on n points gives the volume exactly). A grid of m points
// samples the series cut to |f| <= m/2; its Nyquist index (m even) collects both c(+m/2) and
// c(-m/2). Resampling up to a finer grid is then exact interpolation; down to a coarser one it is
// an ideal low-pass at the coarse grid's Nyquist frequency, then exact sampling.
#include <complex>
#include <cstdint>
#include <string>

#include "../fft/transforms.hpp"
#include "interpolation.hpp"

namespace fusor::match {

namespace detail {

/// The signed frequencies the index j of an m-point axis stands for: j or j - m; the Nyquist
/// index of an even m stands for +m/2 and -m/2 both. half_axis: the last axis of a half spectrum
/// (j in [0, m/2]).
struct axis_frequencies {
  index_t f[2];
  int count;
};

inline axis_frequencies frequencies_of(index_t j, index_t m, bool half_axis) {
  if (m % 2 == 0 && 2 * j == m) return {{j, -j}, 2};
  if (half_axis || j <= (m - 1) / 2) return {{j, 0}, 1};
  return {{j - m, 0}, 1};
}

/// c(f) * n0 n1 n2 of the series a half spectrum `spec` (the rfftn of a real volume of shape n)
/// stands for (see above): 0 beyond the Nyquist frequency, half the Nyquist coefficient at
/// +-n/2 of an even axis, a negative last frequency by Hermitian symmetry.
inline std::complex<double> series_coefficient(const std::complex<float>* spec, const extents& n, index_t f0, index_t f1,
                                               index_t f2) {
  const index_t f[3] = {f0, f1, f2};
  double w = 1;
  for (int k = 0; k < 3; ++k) {
    const index_t a = f[k] < 0 ? -f[k] : f[k];
    if (2 * a > n[k]) return 0.0;
    if (2 * a == n[k]) w *= 0.5;
  }
  const bool mirrored = f2 < 0;
  if (mirrored) f0 = -f0, f1 = -f1, f2 = -f2;
  const index_t i0 = ((f0 % n[0]) + n[0]) % n[0], i1 = ((f1 % n[1]) + n[1]) % n[1];
  const std::complex<double> v(spec[(i0 * n[1] + i1) * (n[2] / 2 + 1) + f2]);
  return w * (mirrored ? std::conj(v) : v);
}

/// The half spectrum of shape m (rfft layout) whose grid samples the series of `spec` (shape n),
/// each coefficient times factor(f0, f1, f2) (signed frequencies of the old grid's box: a phase
/// ramp, a filter) and `scale`. factor must be Hermitian: factor(-f) = conj(factor(f)).
template <class Spectrum, class Factor>
Spectrum window_spectrum(const Spectrum& spec, const extents& n, const extents& m, double scale, const Factor& factor) {
  const index_t h = m[2] / 2 + 1;
  Spectrum out(extents{m[0], m[1], h});
  std::complex<float>* o = out.data();
  const std::complex<float>* s = spec.data();
  for (index_t j0 = 0; j0 < m[0]; ++j0) {
    const axis_frequencies a0 = frequencies_of(j0, m[0], false);
    for (index_t j1 = 0; j1 < m[1]; ++j1) {
      const axis_frequencies a1 = frequencies_of(j1, m[1], false);
      for (index_t j2 = 0; j2 < h; ++j2) {
        const axis_frequencies a2 = frequencies_of(j2, m[2], true);
        std::complex<double> v = 0;
        for (int p = 0; p < a0.count; ++p)
          for (int q = 0; q < a1.count; ++q)
            for (int r = 0; r < a2.count; ++r) {
              const index_t f0 = a0.f[p], f1 = a1.f[q], f2 = a2.f[r];
              const std::complex<double> c = series_coefficient(s, n, f0, f1, f2);
              if (c != 0.0) v += c * std::complex<double>(factor(f0, f1, f2));
            }
        o[(j0 * m[1] + j1) * h + j2] = std::complex<float>(v * scale);
      }
    }
  }
  return out;
}

inline void require_shape(const extents& m, const char* what) {
  if (m.size() != 3 || m[0] < 1 || m[1] < 1 || m[2] < 1)
    throw shape_error(std::string("fusor::match::") + what + ": expected a 3-d shape of at least one voxel a side, got " +
                      to_string(m));
}

}  // namespace detail

/// The volume's Fourier series sampled on a grid of `shape` over the same box: every voxel of
/// the result is (shape / volume.shape()) times as large along each axis. Values are kept (a
/// constant stays that constant), so the sum times the voxel volume is kept too. Computed on the
/// host (a one-off edit of a template), returned on B.
template <class B>
array<float, B> fourier_resample(const array<float, B>& volume, const extents& shape) {
  detail::require_volume(volume.shape(), "fourier_resample");
  detail::require_shape(shape, "fourier_resample");
  const extents n = volume.shape();
  if (volume.size() == 0)
    throw shape_error("fusor::match::fourier_resample: expected a non-empty volume, got shape " + to_string(n));
  const auto spec = to<cpu>(fft::rfftn(volume));
  const double scale = double(shape.numel()) / double(n.numel());
  auto out = detail::window_spectrum(spec, n, shape, scale, [](index_t, index_t, index_t) { return 1.0; });
  return to<B>(fft::irfftn(std::move(out), shape));
}

/// The volume mirrored along `axis` about its centre voxel n // 2 (a change of handedness): the
/// voxel i takes the value at 2 (n // 2) - i, which for an even n leaves index 0 without a
/// partner; it takes 0 there.
template <class B>
array<float, B> mirror(const array<float, B>& volume, int axis) {
  detail::require_volume(volume.shape(), "mirror");
  if (axis < 0 || axis > 2) throw value_error("fusor::match::mirror: expected an axis 0, 1 or 2, got " + std::to_string(axis));
  const extents n = volume.shape();
  const auto in = to<cpu>(volume);
  array<float, detail::host_of_t<B>> out(n);
  const index_t c2 = 2 * (n[axis] / 2);
  const index_t stride = axis == 0 ? n[1] * n[2] : axis == 1 ? n[2] : 1;
  for (index_t q = 0; q < n.numel(); ++q) {
    const index_t i = (q / stride) % n[axis];
    const index_t src = c2 - i;
    out.data()[q] = src < n[axis] ? in.data()[q + (src - i) * stride] : 0.0f;
  }
  return to<B>(out);
}

}  // namespace fusor::match
