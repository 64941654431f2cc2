#pragma once
// Peak calling: the template's places and orientations read off a scan's best-score map.
//
// A peak is a voxel whose score is the largest in the cube of half-width r = max(1,
// floor(min_distance)) around it (ties all count; the cube is cut at the volume's faces), that lies
// at least `margin` voxels inside every face, that passes the threshold, and that no higher peak
// already taken lies closer to than min_distance (Euclidean, in voxels). Candidates are taken
// from the highest score down (equal scores: the lower linear index first), up to max_peaks.
// The cube maximum is a separable max filter (van Herk / Gil-Werman: three comparisons per voxel
// and axis, whatever r), run on the host over threads: peak calling reads the whole map once, so
// a cuda map is copied to the host in one transfer.
//
// The threshold is absolute (min_score), or drawn from the distribution of every score of the
// scan as Rickgauer et al. (eLife 2017) and pytom-match-pick do: over a search of N scores (voxels
// times rotations) of Gaussian noise with mean mu and spread sigma, a threshold
//   t = mu + sigma sqrt(2) erfc^-1(2 k / N)
// is crossed by k scores on average (false_positive_threshold), so asking for k = 1 false
// positive keeps what noise alone would almost never reach.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <numbers>
#include <string>
#include <unordered_map>
#include <vector>

#include "../core/error.hpp"
#include "../core/transfer.hpp"
#include "rotations.hpp"
#include "exhaustive_scan.hpp"
#include "../core/ext.hpp"

namespace fusor::match {

/// One peak: where, how high, and (for a scan's peaks) which rotation of the list gave it.
struct peak {
  std::array<index_t, 3> position{};  ///< the voxel (x, y, z): the template's centre there
  float score = 0.0f;
  std::int32_t rotation = -1;         ///< index in the scan's rotation list (-1: a bare score map)
  quaternion orientation{};           ///< that rotation (the one applied to the template)
  euler_angles euler{};               ///< the same in peak_options::convention, in degrees
};

struct peak_options {
  /// At most this many peaks, the highest first.
  index_t max_peaks = 1000;
  /// Two peaks lie at least this far apart (voxels, Euclidean); also sets the half-width of the
  /// cube a peak must be the maximum of: max(1, floor(min_distance)). Typically the template's
  /// radius.
  double min_distance = 1.0;
  /// A peak lies at least this many voxels inside each face (per axis x, y, z), e.g. the
  /// template's half-size where a partial template is not wanted.
  std::array<index_t, 3> margin{0, 0, 0};
  /// Keep only scores >= min_score.
  std::optional<double> min_score;
  /// Keep only scores that noise would cross this many times over the whole search (a scan's
  /// statistics needed: scan_options::statistics). With min_score too, the higher threshold wins.
  std::optional<double> false_positives;
  /// The convention of peak::euler.
  euler_convention convention = euler_convention::zyz_intrinsic;
};

/// erfc^-1(y) for y in (0, 2), to double precision (Newton steps on std::erfc from a rational
/// start; Halley's correction makes it converge in two or three).
inline double erfc_inverse(double y) {
  if (!(y > 0.0 && y < 2.0))
    throw value_error("fusor::match::erfc_inverse: expected an argument in (0, 2), got " + std::to_string(y));
  if (y == 1.0) return 0.0;
  const bool upper = y > 1.0;  // erfc^-1(2 - y) = -erfc^-1(y)
  const double p = upper ? 2.0 - y : y;
  // start: the inverse of erfc's asymptotic tail for small p, a Taylor step near 1
  const double t = std::sqrt(-2.0 * std::log(p / 2.0));
  double x = p < 0.5 ? (t - (2.515517 + 0.802853 * t + 0.010328 * t * t) /
                                (1.0 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t * t * t)) /
                           std::sqrt(2.0)
                     : (1.0 - p) * std::sqrt(std::numbers::pi) / 2.0;
  for (int it = 0; it < 8; ++it) {
    const double f = std::erfc(x) - p;
    const double d = -2.0 / std::sqrt(std::numbers::pi) * std::exp(-x * x);  // erfc'(x)
    const double step = f / d;
    const double halley = step / (1.0 + x * step);  // f'' / f' = -2 x
    x -= halley;
    if (std::abs(halley) <= 1e-16 * std::max(1.0, std::abs(x))) break;
  }
  return upper ? -x : x;
}

/// The score that noise crosses `false_positives` times on average over a search with these
/// statistics: mean + stddev sqrt(2) erfc^-1(2 false_positives / count).
inline double false_positive_threshold(const score_statistics& s, double false_positives) {
  if (s.count <= 0)
    throw value_error("fusor::match::false_positive_threshold: the scan kept no score statistics (count 0); "
                      "scan with scan_options::statistics = true");
  if (!(false_positives > 0.0 && 2.0 * false_positives < double(s.count)))
    throw value_error("fusor::match::false_positive_threshold: expected a number of false positives in (0, " +
                      std::to_string(double(s.count) / 2.0) + ") for a search of " + std::to_string(s.count) +
                      " scores, got " + std::to_string(false_positives));
  return s.mean + s.stddev * std::sqrt(2.0) * erfc_inverse(2.0 * false_positives / double(s.count));
}

namespace detail {

/// out = the maximum of `in` over a window of half-width r along one axis of a C-ordered block of
/// shape (outer, n, inner), the window cut at the ends. van Herk / Gil-Werman: on the line padded
/// with r lowest values at each end and cut into blocks of w = 2r + 1, the window starting at
/// padded position i is the suffix maximum of i's block up to its end together with the prefix
/// maximum of the next block up to i + 2r. The inner axis is walked in chunks, so the lines along
/// a slow axis are read a cache-friendly row at a time.
inline void max_filter_axis(const float* in, float* out, index_t outer, index_t n, index_t inner, index_t r, int threads) {
  const index_t w = 2 * r + 1, padded = n + 2 * r;
  const index_t chunk = std::min<index_t>(inner, 512), chunks = (inner + chunk - 1) / chunk;
  const float lowest = -std::numeric_limits<float>::infinity();
#if defined(_OPENMP)
#pragma omp parallel num_threads(threads)
#endif
  {
    std::vector<float> g(static_cast<std::size_t>(padded * chunk)), h(static_cast<std::size_t>(padded * chunk));
#if defined(_OPENMP)
#pragma omp for schedule(static)
#endif
    for (index_t task = 0; task < outer * chunks; ++task) {
      const index_t o = task / chunks, c0 = (task % chunks) * chunk, len = std::min(chunk, inner - c0);
      const float* src = in + o * n * inner + c0;
      float* dst = out + o * n * inner + c0;
      const auto value = [&](index_t j, index_t c) {  // the padding and NaN read as the lowest value
        if (j < r || j >= r + n) return lowest;
        const float x = src[(j - r) * inner + c];
        return x == x ? x : lowest;
      };
      for (index_t j = 0; j < padded; ++j) {
        float* gj = g.data() + j * chunk;
        if (j % w == 0) {
          for (index_t c = 0; c < len; ++c) gj[c] = value(j, c);
        } else {
          const float* prev = gj - chunk;
          for (index_t c = 0; c < len; ++c) {
            const float v = value(j, c);
            gj[c] = v > prev[c] ? v : prev[c];
          }
        }
      }
      for (index_t j = padded - 1; j >= 0; --j) {
        float* hj = h.data() + j * chunk;
        if (j % w == w - 1 || j == padded - 1) {
          for (index_t c = 0; c < len; ++c) hj[c] = value(j, c);
        } else {
          const float* next = hj + chunk;
          for (index_t c = 0; c < len; ++c) {
            const float v = value(j, c);
            hj[c] = v > next[c] ? v : next[c];
          }
        }
      }
      for (index_t i = 0; i < n; ++i) {
        const float* hi = h.data() + i * chunk;
        const float* gi = g.data() + (i + 2 * r) * chunk;
        float* d = dst + i * inner;
        for (index_t c = 0; c < len; ++c) d[c] = hi[c] > gi[c] ? hi[c] : gi[c];
      }
    }
  }
}

/// The maximum over the cube of half-width r around each voxel of a (n0, n1, n2) volume.
inline std::vector<float> cube_maximum(const float* v, const extents& s, index_t r, int threads) {
  std::vector<float> a(std::size_t(s.numel())), b(std::size_t(s.numel()));
  max_filter_axis(v, a.data(), 1, s[0], s[1] * s[2], r, threads);
  max_filter_axis(a.data(), b.data(), s[0], s[1], s[2], r, threads);
  max_filter_axis(b.data(), a.data(), s[0] * s[1], s[2], 1, r, threads);
  return a;
}

inline void check_peak_options(const peak_options& o) {
  const std::string fn = "fusor::match::find_peaks: ";
  if (o.max_peaks < 0) throw value_error(fn + "expected max_peaks >= 0, got " + std::to_string(o.max_peaks));
  if (!(o.min_distance >= 0.0) || !std::isfinite(o.min_distance) || o.min_distance > 1e6)
    throw value_error(fn + "expected a finite min_distance in [0, 1e6] voxels, got " + std::to_string(o.min_distance));
  for (int a = 0; a < 3; ++a)
    if (o.margin[std::size_t(a)] < 0)
      throw value_error(fn + "expected margins >= 0, got " + std::to_string(o.margin[std::size_t(a)]) + " on axis " +
                        std::to_string(a));
  if (o.min_score && std::isnan(*o.min_score)) throw value_error(fn + "min_score is NaN");
}

/// The peaks of a score map in host memory (NaN never makes a peak: it is no cube's maximum).
inline std::vector<peak> call_peaks(const float* v, const extents& s, const peak_options& o, double threshold, int threads) {
  std::vector<peak> found;
  if (s.numel() == 0 || o.max_peaks == 0) return found;
  const index_t r = std::max<index_t>(1, index_t(std::floor(o.min_distance)));
  const std::vector<float> top = cube_maximum(v, s, r, threads);
  struct candidate {
    float score;
    index_t index;
  };
  std::vector<candidate> c;
  const index_t lo0 = o.margin[0], hi0 = s[0] - o.margin[0], lo1 = o.margin[1], hi1 = s[1] - o.margin[1],
                lo2 = o.margin[2], hi2 = s[2] - o.margin[2];
  for (index_t i = lo0; i < hi0; ++i)
    for (index_t j = lo1; j < hi1; ++j)
      for (index_t k = lo2; k < hi2; ++k) {
        const index_t p = (i * s[1] + j) * s[2] + k;
        const float x = v[p];
        if (x == top[std::size_t(p)] && x > -std::numeric_limits<float>::infinity() && double(x) >= threshold)
          c.push_back({x, p});
      }
  std::sort(c.begin(), c.end(), [](const candidate& a, const candidate& b) {
    return a.score > b.score || (a.score == b.score && a.index < b.index);
  });
  // the peaks taken so far, hashed by cells of side >= min_distance: a candidate only looks at
  // the peaks in its cell and the 26 around it
  const double d2 = o.min_distance * o.min_distance;
  const index_t side = std::max<index_t>(1, index_t(std::ceil(o.min_distance)));
  const index_t c1 = s[1] / side + 3, c2 = s[2] / side + 3;  // cells shifted by one: no key aliases
  std::unordered_map<index_t, std::vector<std::size_t>> cells;
  for (const candidate& k : c) {
    const std::array<index_t, 3> x{k.index / (s[1] * s[2]), k.index / s[2] % s[1], k.index % s[2]};
    const std::array<index_t, 3> cell{x[0] / side + 1, x[1] / side + 1, x[2] / side + 1};
    bool apart = true;
    for (index_t a = cell[0] - 1; a <= cell[0] + 1 && apart; ++a)
      for (index_t b = cell[1] - 1; b <= cell[1] + 1 && apart; ++b)
        for (index_t e = cell[2] - 1; e <= cell[2] + 1 && apart; ++e) {
          const auto it = cells.find((a * c1 + b) * c2 + e);
          if (it == cells.end()) continue;
          for (std::size_t q : it->second) {
            double d = 0.0;
            for (std::size_t u = 0; u < 3; ++u) {
              const double t = double(x[u] - found[q].position[u]);
              d += t * t;
            }
            if (d < d2) {
              apart = false;
              break;
            }
          }
        }
    if (!apart) continue;
    peak p;
    p.position = x;
    p.score = k.score;
    cells[(cell[0] * c1 + cell[1]) * c2 + cell[2]].push_back(found.size());
    found.push_back(p);
    if (index_t(found.size()) == o.max_peaks) break;
  }
  return found;
}

/// The peaks of a score map on any backend: read where it lies on the host, else from one copy.
template <class B>
std::vector<peak> call_peaks(const array<float, B>& scores, const peak_options& o, double threshold) {
  if constexpr (backend_traits<B>::host_accessible) {
    return call_peaks(scores.data(), scores.shape(), o, threshold, host_threads<B>());
  } else {
    std::vector<float> v(static_cast<std::size_t>(scores.size()));
    if (scores.size()) fusor::ext::copy_contiguous<cpu, B>(v.data(), scores.data(), scores.size());
    return call_peaks(v.data(), scores.shape(), o, threshold, host_threads<B>());
  }
}

}  // namespace detail

/// The peaks of a bare score map (any volume): rotation -1, identity orientation. A
/// false-positive threshold needs a scan's statistics: use the scan_result overload.
template <class B>
std::vector<peak> find_peaks(const array<float, B>& scores, const peak_options& o = {}) {
  detail::require_volume(scores.shape(), "find_peaks (the score map)");
  detail::check_peak_options(o);
  if (o.false_positives)
    throw value_error("fusor::match::find_peaks: a false-positive threshold needs the scan's score statistics; "
                      "pass the scan_result (scanned with scan_options::statistics = true), or use min_score");
  auto found = detail::call_peaks(scores, o, o.min_score ? *o.min_score : -std::numeric_limits<double>::infinity());
  for (peak& p : found) p.euler = to_euler(p.orientation, o.convention);
  return found;
}

/// The peaks of a scan, each with the rotation that gave its score (from result.best_rotation),
/// as an index into `rotations` (the list the scan ran over), a quaternion and Euler angles.
template <class B>
std::vector<peak> find_peaks(const scan_result<B>& result, const std::vector<quaternion>& rotations,
                             const peak_options& o = {}) {
  const extents& s = result.best_score.shape();
  detail::require_volume(s, "find_peaks (the scan's best-score map)");
  if (result.best_rotation.shape() != s)
    throw shape_error("fusor::match::find_peaks: expected a best-rotation map of the score map's shape " + to_string(s) +
                      ", got " + to_string(result.best_rotation.shape()));
  detail::check_peak_options(o);
  double threshold = o.min_score ? *o.min_score : -std::numeric_limits<double>::infinity();
  if (o.false_positives) threshold = std::max(threshold, false_positive_threshold(result.statistics, *o.false_positives));
  auto found = detail::call_peaks(result.best_score, o, threshold);
  for (peak& p : found) {
    // each peak's rotation read alone: a few elements, not the whole map, cross to the host
    std::int32_t q = -1;
    fusor::ext::copy_contiguous<cpu, B>(&q, result.best_rotation.data() + (p.position[0] * s[1] + p.position[1]) * s[2] + p.position[2],
                                        index_t(1));
    if (q < 0 || std::size_t(q) >= rotations.size())
      throw value_error("fusor::match::find_peaks: the best-rotation map holds index " + std::to_string(q) +
                        " at a peak, but the rotation list has " + std::to_string(rotations.size()) +
                        " rotations (pass the list the scan ran over)");
    p.rotation = q;
    p.orientation = normalized(rotations[std::size_t(q)]);
    p.euler = to_euler(p.orientation, o.convention);
  }
  return found;
}

}  // namespace fusor::match
