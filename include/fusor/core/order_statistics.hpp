#pragma once
// Where NumPy's quantile methods read a sorted row: shared by the quantile front end
// (core/statistics.hpp), which interpolates, and the backends' selection kernels, which put just
// those order statistics in place.
#include <cmath>

#include "config.hpp"
#include "extents.hpp"

namespace fusor {

/// NumPy's quantile methods (np.quantile(..., method=)) for the continuous and discrete cases.
enum class quantile_method { linear, lower, higher, nearest, midpoint };

namespace detail {
/// The order statistics a quantile reads and the weight of the upper one.
struct quantile_position {
  index_t lo, hi;
  double gamma;
};
/// Where quantile q in [0, 1] of m >= 1 sorted values lies: NumPy's virtual index q (m - 1),
/// floored (lower), raised (higher), rounded half to even (nearest), or interpolated between its
/// neighbours with the fraction (linear) or one half (midpoint; none at an integral index).
FUSOR_HD inline quantile_position quantile_at(double q, index_t m, quantile_method method) {
  using std::floor;
  using std::nearbyint;
  const double v = q * double(m - 1);
  const double f = floor(v);
  index_t lo = index_t(f);
  if (lo < 0) lo = 0;
  if (lo > m - 1) lo = m - 1;
  const index_t hi = lo + 1 < m ? lo + 1 : m - 1;
  const double g = v - f;
  switch (method) {
    case quantile_method::lower: return {lo, lo, 0.0};
    case quantile_method::higher: return g > 0 ? quantile_position{hi, hi, 0.0} : quantile_position{lo, lo, 0.0};
    case quantile_method::nearest: {
      index_t r = index_t(nearbyint(v));
      if (r > m - 1) r = m - 1;
      return {r, r, 0.0};
    }
    case quantile_method::midpoint: return {lo, hi, g > 0 ? 0.5 : 0.0};
    default: return {lo, hi, g};
  }
}
/// NumPy's _lerp: a + (b - a) t below one half, b - (b - a)(1 - t) from it (exact at both ends).
template <class R>
FUSOR_HD R quantile_lerp(R a, R b, double gamma) {
  if (gamma == 0) return a;
  const R d = b - a, t = static_cast<R>(gamma);
  return gamma >= 0.5 ? b - d * (R(1) - t) : a + d * t;
}
}  // namespace detail

}  // namespace fusor
