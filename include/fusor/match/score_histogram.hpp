#pragma once
// The distribution of a score map: its histogram, the Gaussian its noise follows fitted to it,
// and what that fit says about a threshold: how many noise voxels pass it, and the threshold that
// noise passes a given number of times (pytom-match-pick's ROC estimate, and Rickgauer et al.'s
// (2017) false-positive cut-off taken from a fit instead of from the scan's moments).
//
// The fit: a search's scores are nearly all noise, a Gaussian whose log is a parabola; the true
// copies make a tail on the right. A least-squares parabola through the log counts, each bin
// weighted by its count (the variance of log n is about 1/n), over the bins from the first with 5
// counts or more to the last before the right tail, where the log's second difference (over a
// twentieth of the bins each side) stops being negative, or counts fall under 5. The fitted Gaussian's area is the
// number of noise samples; a threshold t is passed by samples erfc((t - mean) / (sigma sqrt 2)) / 2
// of them.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "interpolation.hpp"
#include "peaks.hpp"

namespace fusor::match {

/// Counts of values in `bins` equal bins from `low` to `low + bins * width`.
struct histogram {
  double low = 0, width = 1;
  std::vector<double> count;
  double center(std::size_t i) const { return low + (double(i) + 0.5) * width; }
  double total() const {
    double t = 0;
    for (double c : count) t += c;
    return t;
  }
};

/// The histogram of a map's finite values (where `mask` > 0, when given: the same shape), over
/// their range. On the host (a map on the device is copied once).
template <class B>
histogram score_histogram(const array<float, B>& map, int bins, const array<float, B>* mask = nullptr) {
  if (bins < 3 || bins > 100000)
    throw value_error("fusor::match::score_histogram: expected 3 to 100000 bins, got " + std::to_string(bins));
  if (mask && mask->shape() != map.shape())
    throw shape_error("fusor::match::score_histogram: the mask's shape " + to_string(mask->shape()) + " is not the map's " +
                      to_string(map.shape()));
  using H = detail::host_of_t<B>;
  const array<float, H> v = to<H>(map);
  std::optional<array<float, H>> m;
  if (mask) m = to<H>(*mask);
  const auto keep = [&](index_t q) { return std::isfinite(v.data()[q]) && (!m || m->data()[q] > 0); };
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (index_t q = 0; q < v.size(); ++q)
    if (keep(q)) lo = std::min(lo, double(v.data()[q])), hi = std::max(hi, double(v.data()[q]));
  if (!(lo <= hi)) throw value_error("fusor::match::score_histogram: the map has no finite value (inside the mask)");
  histogram h;
  h.low = lo;
  h.width = hi > lo ? (hi - lo) / bins * (1 + 1e-12) : 1.0;
  h.count.assign(std::size_t(bins), 0.0);
  for (index_t q = 0; q < v.size(); ++q)
    if (keep(q)) h.count[std::min(std::size_t(bins - 1), std::size_t((double(v.data()[q]) - lo) / h.width))] += 1;
  return h;
}

/// The noise's Gaussian: `amplitude` counts per bin at its `mean`, its `sigma`, and `samples`, its
/// area in values; the bins [first, last] it was fitted over.
struct noise_fit {
  double amplitude = 0, mean = 0, sigma = 0, samples = 0;
  std::size_t first = 0, last = 0;
  double density(double x) const { return amplitude * std::exp(-(x - mean) * (x - mean) / (2 * sigma * sigma)); }
};

/// The Gaussian fitted to a histogram's noise (see the top of this header); a value_error when the
/// histogram holds no bell (fewer than 4 bins in the region, or a log that is not concave).
inline noise_fit fit_noise(const histogram& h) {
  const std::size_t n = h.count.size();
  const auto enough = [&](std::size_t i) { return h.count[i] >= 5; };
  std::size_t first = 0;
  while (first < n && !enough(first)) ++first;
  const std::size_t mode = std::size_t(std::max_element(h.count.begin(), h.count.end()) - h.count.begin());
  if (first > mode) first = mode;
  std::vector<double> lg(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) lg[i] = h.count[i] > 0 ? std::log(h.count[i]) : 0.0;
  // the right end: past the mode, the last bin before counts fall under 5 or the log's second
  // difference over +-w bins (w: a twentieth of the bins, 3 at least, so that counting noise
  // does not end it early) turns non-negative (the tail of the true copies)
  const std::size_t w = std::max<std::size_t>(3, n / 20);
  std::size_t last = mode;
  while (last + 1 < n && enough(last + 1)) {
    const std::size_t i = last + 1;
    if (i >= mode + w && i + w < n && enough(i + w)) {
      const double second = lg[i + w] - 2 * lg[i] + lg[i - w];
      if (second >= 0) break;
    }
    ++last;
  }
  if (last < first + 3)
    throw value_error("fusor::match::fit_noise: the histogram holds no Gaussian bell to fit (" + std::to_string(last + 1 - first) +
                      " bins with 5 or more counts about its mode; expected 4 or more)");
  // weighted least squares: log n = a + b u + c u^2 over u = (x - x_mode) / width, weights n
  double s[5] = {0, 0, 0, 0, 0}, t[3] = {0, 0, 0};
  for (std::size_t i = first; i <= last; ++i) {
    const double w = h.count[i], u = double(i) - double(mode), y = lg[i];
    double p = w;
    for (int k = 0; k < 5; ++k, p *= u) s[k] += p;
    t[0] += w * y, t[1] += w * y * u, t[2] += w * y * u * u;
  }
  // the normal equations [[s0 s1 s2] [s1 s2 s3] [s2 s3 s4]] (a b c) = t, by Cramer's rule
  const auto det3 = [](double a, double b, double c, double d, double e, double f, double g, double hh, double i) {
    return a * (e * i - f * hh) - b * (d * i - f * g) + c * (d * hh - e * g);
  };
  const double d = det3(s[0], s[1], s[2], s[1], s[2], s[3], s[2], s[3], s[4]);
  const double a = det3(t[0], s[1], s[2], t[1], s[2], s[3], t[2], s[3], s[4]) / d;
  const double b = det3(s[0], t[0], s[2], s[1], t[1], s[3], s[2], t[2], s[4]) / d;
  const double c = det3(s[0], s[1], t[0], s[1], s[2], t[1], s[2], s[3], t[2]) / d;
  if (!(c < 0) || !std::isfinite(a) || !std::isfinite(b))
    throw value_error("fusor::match::fit_noise: the log of the histogram is not concave over its bell; no Gaussian fits it");
  noise_fit f;
  const double u0 = -b / (2 * c);
  f.mean = h.center(mode) + u0 * h.width;
  f.sigma = std::sqrt(-1 / (2 * c)) * h.width;
  f.amplitude = std::exp(a - b * b / (4 * c));
  f.samples = f.amplitude * f.sigma * std::sqrt(2 * 3.14159265358979323846) / h.width;
  f.first = first, f.last = last;
  return f;
}

/// How many noise values the fit expects above `threshold`.
inline double expected_false_positives(const noise_fit& f, double threshold) {
  return f.samples * 0.5 * std::erfc((threshold - f.mean) / (f.sigma * std::sqrt(2.0)));
}

/// The threshold that noise passes `false_positives` times by the fit (the inverse of the above).
inline double noise_cutoff(const noise_fit& f, double false_positives) {
  if (!(false_positives > 0) || !(false_positives < f.samples))
    throw value_error("fusor::match::noise_cutoff: expected false positives in (0, " + std::to_string(f.samples) +
                      ") (the fit's noise samples), got " + std::to_string(false_positives));
  return f.mean + f.sigma * std::sqrt(2.0) * erfc_inverse(2 * false_positives / f.samples);
}

}  // namespace fusor::match
