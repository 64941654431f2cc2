#pragma once
// A model of what a real transform pair costs on a grid, for callers free to choose the grid's
// lengths (a template-matching scan pads its target to any length past the template's reach):
// the smallest length is not always the cheapest, and next_fast_len's 7-smooth rule does not say
// which of two smooth lengths is faster.
#include <limits>
#include <string>

#include "../core/error.hpp"
#include "../core/extents.hpp"

namespace fusor::fft {

/// The cost, per element, of one axis of length n in a multi-dimensional r2c + c2r pair, in the
/// model's units (about nanoseconds per element on the machine it was fitted on): each factor 2,
/// 3, 5 and 7 of n its weight, and an odd n a penalty (FFTW's real transforms of an odd length
/// lose the half-length complex transform an even one runs). The weights are a least-squares fit
/// of 120 measured one-thread FFTW 3.3.10 r2c + c2r pairs (FFTW_MEASURE plans; 7-smooth axes of
/// 60 to 200 beside 128^2, and cubes of 64 to 192, within 14% rms): 2: 0.215, 3: 0.523,
/// 5: 0.773, 7: 1.198, odd: 1.718. bench_fft's fftw_measured_pair rows are those grids, and
/// bench/fit_transform_cost.py refits the weights from them (a second run on the same machine:
/// 0.198, 0.541, 0.741, 1.124, 1.541, 12% rms). A length with a larger prime factor has no
/// codelet and is infinitely costly here: lengths to choose from are 7-smooth.
inline double axis_cost(index_t n) {
  if (n < 1) throw value_error("fusor: axis_cost expects a positive length, got " + std::to_string(n));
  if (n == 1) return 0.0;  // nothing to transform
  double w = n % 2 ? 1.718 : 0.0;
  constexpr struct {
    index_t p;
    double weight;
  } radices[] = {{2, 0.215}, {3, 0.523}, {5, 0.773}, {7, 1.198}};
  for (const auto& r : radices)
    for (; n % r.p == 0; n /= r.p) w += r.weight;
  return n == 1 ? w : std::numeric_limits<double>::infinity();
}

/// The modelled cost of an r2c + c2r pair on a grid of this shape: its elements times the sum of
/// its axes' axis_cost. Comparable between grids (the cheaper of two grids is the one to pad to),
/// not a time to quote. FFTW's multi-threaded plans and cuFFT were not fitted; their ranking of
/// 7-smooth lengths is assumed the same (both are mixed-radix with codelets for 2, 3, 5 and 7).
inline double transform_cost(const extents& shape) {
  double cells = 1.0, per_cell = 0.0;
  for (int a = 0; a < shape.size(); ++a) {
    cells *= double(shape[a]);
    per_cell += axis_cost(shape[a]);
  }
  return cells * per_cell;
}

}  // namespace fusor::fft
