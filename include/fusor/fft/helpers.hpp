#pragma once
// numpy.fft's helpers (fftshift, ifftshift, fftfreq, rfftfreq) and scipy.fft.next_fast_len.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "../core/array.hpp"
#include "../core/create.hpp"
#include "../core/operators.hpp"
#include "../core/pad.hpp"

namespace fusor::fft {

namespace detail {
/// The least n >= target whose prime factors are 2, 3 and 5, and 7 when `sevens`: each
/// 7^d 5^c 3^b up to the first one >= target, times the least power of two reaching target.
inline index_t next_smooth_len(index_t target, bool sevens) {
  index_t best = std::numeric_limits<index_t>::max();
  for (index_t p7 = 1;; p7 *= 7) {
    for (index_t p5 = p7;; p5 *= 5) {
      for (index_t p3 = p5;; p3 *= 3) {
        index_t v = p3;
        while (v < target) v *= 2;
        best = std::min(best, v);
        if (p3 >= target) break;
      }
      if (p5 >= target) break;
    }
    if (!sevens || p7 >= target) break;
  }
  return best;
}
}  // namespace detail

/// The smallest n >= target whose only prime factors are 2, 3, 5 and 7: the lengths FFTW
/// (and cuFFT) transform fastest. Pad to it before a transform whose length is free to choose.
inline index_t next_fast_len(index_t target) {
  if (target < 1) throw value_error("fusor: next_fast_len expects a positive length, got " + std::to_string(target));
  if (target <= 6) return target;
  const index_t limit = std::numeric_limits<index_t>::max() / 2;
  if (target > limit / 7)
    throw value_error("fusor: next_fast_len(" + std::to_string(target) + ") has no 7-smooth answer within index_t");
  return detail::next_smooth_len(target, true);
}

namespace detail {
/// A roll along `axes` (all when empty) by n / 2 (direction +1) or -(n / 2) (direction -1).
template <class X>
auto half_roll(const X& x, const extents& axes, int direction) {
  return fusor::detail::with_input(x, [&](const auto& v) {
    extents ax = axes, shifts;
    if (ax.empty())
      for (int j = 0; j < v.ndim(); ++j) ax.push_back(j);
    for (int k = 0; k < ax.size(); ++k) shifts.push_back(direction * (v.shape()[normalize_axis(int(ax[k]), v.ndim())] / 2));
    if (ax.empty()) return v.copy();
    return roll(v, shifts, ax);
  });
}
}  // namespace detail

/// np.fft.fftshift: the zero frequency moved to the centre of `axes` (default all): a roll by
/// n / 2 along each. Returns a new array.
template <class X>
auto fftshift(const X& x, const extents& axes = {}) {
  return detail::half_roll(x, axes, +1);
}
/// np.fft.ifftshift: the inverse of fftshift (they differ for odd lengths).
template <class X>
auto ifftshift(const X& x, const extents& axes = {}) {
  return detail::half_roll(x, axes, -1);
}

/// np.fft.fftfreq: the frequency of each output point of an n-point DFT with sample spacing d:
/// [0, 1, ..., (n-1)/2, -(n/2), ..., -1] / (d n), computed in double as NumPy does.
template <element T = double, backend B = default_backend>
array<T, B> fftfreq(index_t n, double d = 1.0) {
  if (n < 1) throw value_error("fusor: fftfreq expects a positive number of points, got " + std::to_string(n));
  const double val = 1.0 / (double(n) * d);
  const index_t half = (n - 1) / 2 + 1;  // points with non-negative frequency
  const array<double, B> i = arange<double, B>(double(n));
  return array<T, B>(cast<T>(where(i < double(half), i, i - double(n)) * val));
}
/// np.fft.rfftfreq: the n / 2 + 1 non-negative frequencies of rfft's output.
template <element T = double, backend B = default_backend>
array<T, B> rfftfreq(index_t n, double d = 1.0) {
  if (n < 1) throw value_error("fusor: rfftfreq expects a positive number of points, got " + std::to_string(n));
  const double val = 1.0 / (double(n) * d);
  const array<double, B> i = arange<double, B>(double(n / 2 + 1));
  return array<T, B>(cast<T>(i * val));
}

}  // namespace fusor::fft
