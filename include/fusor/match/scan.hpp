#pragma once
// The exhaustive scan: every rotation of a template scored against a whole target by FFT
// correlation (scores.hpp), keeping per voxel the best score and the index of the rotation that
// gave it.
//
// Per rotation, with the FFT grid F fixed and its plans cached, nothing is allocated:
//   1. the template's B-spline coefficients (computed once) are rotated into a template-sized
//      buffer (FLC: its mask too);
//   2. one pass places it on the grid, centred on the origin, standardised under the mask where
//      the score wants it (FLC, FLCSphericalMask);
//   3. rfft, one pass multiplying by the target's spectrum (conjugated, with the 1/|F| of the
//      inverse folded in), an unscaled inverse rfft (FLC: two more for the mask's local moments);
//   4. one pass over the target's voxels computes the score from the correlation and the
//      precomputed maps and folds it into the running maximum: score and rotation as one 64-bit
//      key (scores.hpp), so the maximum and its argument are one max per voxel.
// On cpu the rotations are dealt to threads (rotation r to thread r mod T), each with its own
// buffers and key map; the key maps are merged by a max at the end, so the result does not depend
// on the thread count. On cuda each step is one kernel or cuFFT call on the device.
#include <atomic>
#include <cmath>
#include <complex>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "../core/create.hpp"
#include "../core/pad.hpp"
#include "../core/reduce.hpp"
#include "../fft/helpers.hpp"
#include "../fft/transforms.hpp"
#include "filters.hpp"
#include "masks.hpp"
#include "scores.hpp"
#include "transform.hpp"

namespace fusor::match {

struct scan_options {
  /// How the template (and FLC's mask) is rotated.
  interpolation method = interpolation::cubic;
  /// cpu: threads the rotations are dealt to (0: fusor's thread count); other backends: ignored.
  int threads = 0;
  /// The FFT planning effort of the scan's transforms (fft::planning_scope). FFTW's measured plans
  /// take about a second to make for a 160^3 grid and run its transform pairs 1.4 to 2.5 times
  /// faster than estimated ones, which pays from a few dozen rotations on; cuFFT ignores it.
  fft::planning planning = fft::planning::measure;
  /// Also keep the mean score over the rotations at every voxel (one more pass per rotation).
  bool mean_map = false;
  /// Also keep the mean and standard deviation of every score the scan computes (each voxel under
  /// each rotation), summed in double: the distribution a false-positive threshold is drawn from
  /// (peaks.hpp). Two reductions per rotation.
  bool statistics = false;
  /// Applied to the target once, before the score's own preparation (pyTME's target filter).
  fourier_filter target_filter;
  /// Applied to every rotated template in its own box (periodic), before its standardisation:
  /// a missing wedge, a CTF, a bandpass. Costs an rfft pair of the template's size per rotation.
  /// CORR and CAM are not renormalised for it (as in pyTME).
  fourier_filter template_filter;
};

/// The distribution of all the scores of a scan (scan_options::statistics): count = voxels times
/// rotations, mean and population standard deviation.
struct score_statistics {
  std::int64_t count = 0;
  double mean = 0.0;
  double stddev = 0.0;
};

template <class B>
struct scan_result {
  /// The best score at every target voxel (the template's centre there), the target's shape.
  array<float, B> best_score;
  /// The index in the rotation list of the rotation that gave it (the lowest index on a tie).
  array<std::int32_t, B> best_rotation;
  /// The mean score over the rotations (scan_options::mean_map), else empty.
  array<float, B> mean_score;
  /// The FFT grid the scan ran on.
  extents fft_shape;
  /// Every score's mean and spread (scan_options::statistics), else count 0.
  score_statistics statistics;
};

/// The FFT grid of a scan: per axis the target's length plus the template's minus 1 (so that the
/// correlation does not wrap around), raised to a 7-smooth length (fft::next_fast_len).
inline extents scan_fft_shape(const extents& target, const extents& templ) {
  detail::require_volume(target, "scan_fft_shape (the target)");
  detail::require_volume(templ, "scan_fft_shape (the template)");
  return {fft::next_fast_len(target[0] + templ[0] - 1), fft::next_fast_len(target[1] + templ[1] - 1),
          fft::next_fast_len(target[2] + templ[2] - 1)};
}

namespace detail {

inline void check_scan_input(const extents& t, const extents& g, const extents& m, std::size_t rotations) {
  require_volume(t, "scan (the target)");
  require_volume(g, "scan (the template)");
  for (int a = 0; a < 3; ++a)
    if (g[a] < 1 || g[a] > t[a])
      throw shape_error("fusor::match::scan: expected a non-empty template no larger than the target on every axis, got "
                        "template " + to_string(g) + " and target " + to_string(t));
  if (m != g)
    throw shape_error("fusor::match::scan: expected a mask of the template's shape " + to_string(g) + ", got " +
                      to_string(m));
  if (rotations == 0) throw value_error("fusor::match::scan: expected at least one rotation, got none");
  if (rotations > std::size_t(INT32_MAX))
    throw value_error("fusor::match::scan: at most 2^31 - 1 rotations, got " + std::to_string(rotations));
}

/// A template-sized volume v placed on the grid `grid`, centred on the origin, each value
/// becoming (v - shift) scale w (w: weights of the template's shape, or none).
template <class B>
generator_expr<grid_placement, B> placed(const array<float, B>& v, const float* weights, float shift, float scale,
                                         const extents& grid) {
  const extents& m = v.shape();
  return {grid_placement{v.data(), weights, shift, scale, m[0], m[1], m[2], grid[0], grid[1], grid[2], m[0] / 2,
                         m[1] / 2, m[2] / 2},
          grid, contiguous_strides(grid)};
}

/// out = CC(target, template) from the target's spectrum ft (scaled by 1/|grid|) and the
/// template's spectrum g: the product goes to `scratch` (which may be g itself), and the unscaled
/// inverse transform consumes it. out may be the grid g was taken from.
template <class B>
void correlate(const array<std::complex<float>, B>& ft, const array<std::complex<float>, B>& g,
               array<std::complex<float>, B>& scratch, array<float, B>& out, const extents& grid) {
  scratch = ft * conj(g);
  fft::irfftn_into(out, scratch, grid, {}, fft::norm_mode::forward, fft::input_use::overwrite);
}

/// What every worker reads: the grid, the target's spectra (scaled by 1/|F|), the template (or its
/// B-spline coefficients) and mask ready to rotate, and the precomputed maps of the score.
template <class B>
struct scan_plan {
  score kind;
  extents target_shape, template_shape, grid;
  array<std::complex<float>, B> ft_target, ft_target2;  // ft_target2: FLC only
  array<float, B> source;                              // what is rotated
  array<float, B> mask;                                // as given
  array<float, B> mask_source;                         // FLC: the mask as rotated (its values as coefficients)
  array<float, B> numerator, inv_denominator;          // the FFT grid's shape, where the score has them
  array<float, B> box_filter;                          // the template filter on the template's box, / |box|
  double mask_sum = 0;
  transform_options rotate;
};

/// Per-thread buffers and the running key map.
template <class B>
struct scan_worker {
  const scan_plan<B>& p;
  array<float, B> rot, rot_mask, grid, cc_mask, cc_mask2;
  array<std::complex<float>, B> spec, spec_mask, spec_box;
  array<std::uint64_t, B> keys;
  array<double, B> sums;  // the mean map's running sums, in double over many rotations
  bool statistics;
  double score_sum = 0.0, score_sum2 = 0.0;  // over every voxel and rotation this worker scored

  scan_worker(const scan_plan<B>& plan, bool mean_map, bool stats)
      : p(plan),
        rot(plan.template_shape),
        rot_mask(plan.kind == score::flc ? plan.template_shape : extents{0}),
        grid(plan.grid),
        cc_mask(plan.kind == score::flc ? plan.grid : extents{0}),
        cc_mask2(plan.kind == score::flc ? plan.grid : extents{0}),
        spec(half_grid(plan.grid)),
        spec_mask(plan.kind == score::flc ? half_grid(plan.grid) : extents{0}),
        spec_box(plan.box_filter.size() ? half_grid(plan.template_shape) : extents{0}),
        keys(zeros<std::uint64_t, B>(plan.target_shape)),
        sums(mean_map ? zeros<double, B>(plan.target_shape) : array<double, B>(extents{0})),
        statistics(stats) {}

  static extents half_grid(const extents& f) { return {f[0], f[1], f[2] / 2 + 1}; }

  void run(const quaternion& q, std::uint32_t index) {
    const matrix3 r = to_matrix(q);
    rigid_transform(p.source, r, {}, rot, p.rotate);
    if (p.box_filter.size()) {
      fft::rfftn_into(spec_box, rot);
      spec_box = spec_box * p.box_filter;
      fft::irfftn_into(rot, spec_box, p.template_shape, {}, fft::norm_mode::forward, fft::input_use::overwrite);
    }
    float shift = 0.0f, scale = 1.0f;
    const float* weights = nullptr;
    double n = p.mask_sum;
    if (p.kind == score::flc) {
      rigid_transform(p.mask_source, r, {}, rot_mask, p.rotate);
      n = double(sum(cast<double>(rot_mask)));
      std::tie(shift, scale) = weighted_standardisation(rot, rot_mask, n);
      weights = rot_mask.data();
    } else if (p.kind == score::flc_spherical_mask) {
      std::tie(shift, scale) = weighted_standardisation(rot, p.mask, n);
      weights = p.mask.data();
    }
    grid = placed(rot, weights, shift, scale, p.grid);
    fft::rfftn_into(spec, grid);
    correlate(p.ft_target, spec, spec, grid, p.grid);

    score_map m{score_map::form::plain, grid.data(), nullptr, nullptr, nullptr, nullptr, float(n),
                p.target_shape[1], p.target_shape[2], p.grid[1], p.grid[2]};
    if (p.kind == score::flc) {
      cc_mask = placed(rot_mask, nullptr, 0.0f, 1.0f, p.grid);
      fft::rfftn_into(spec_mask, cc_mask);
      correlate(p.ft_target, spec_mask, spec, cc_mask, p.grid);
      correlate(p.ft_target2, spec_mask, spec, cc_mask2, p.grid);
      m.kind = score_map::form::local;
      m.cc_mask = cc_mask.data();
      m.cc_mask2 = cc_mask2.data();
    } else if (p.kind != score::cc && p.kind != score::lcc) {
      m.kind = score_map::form::shifted;
      m.numerator = p.numerator.size() ? p.numerator.data() : nullptr;
      m.inv_denominator = p.inv_denominator.data();
    }
    const extents& t = p.target_shape;
    keys = generator_expr<best_update, B>{best_update{m, keys.data(), index}, t, contiguous_strides(t)};
    if (sums.size()) sums = generator_expr<sum_update, B>{sum_update{m, sums.data()}, t, contiguous_strides(t)};
    if (statistics) {
      const generator_expr<score_values, B> v{score_values{m}, t, contiguous_strides(t)};
      score_sum += double(sum(v));
      score_sum2 += double(sum(square(v)));
    }
  }
};

template <class B>
array<float, B> periodic_laplacian_of(const array<float, B>& v) {
  const extents& s = v.shape();
  return array<float, B>(generator_expr<periodic_laplacian, B>{periodic_laplacian{v.data(), s[0], s[1], s[2]}, s,
                                                               contiguous_strides(s)});
}

/// (v - mean) / std over the whole volume (np.std, population), as pyTME's CAM.
template <class B>
array<float, B> standardised(const array<float, B>& v, const char* what) {
  const double n = double(v.size());
  const double mean = double(sum(cast<double>(v))) / n;
  const double var = double(sum(cast<double>(v) * cast<double>(v))) / n - mean * mean;
  if (!(var > 0))
    throw value_error(std::string("fusor::match::scan: CAM standardises the ") + what + ", which is constant");
  return array<float, B>((v - float(mean)) * float(1.0 / std::sqrt(var)));
}

template <class B>
scan_plan<B> plan_scan(const array<float, B>& target0, const array<float, B>& templ0, const array<float, B>& mask, score kind,
                       const scan_options& o) {
  scan_plan<B> p{kind, target0.shape(), templ0.shape(), scan_fft_shape(target0.shape(), templ0.shape()),
                 array<std::complex<float>, B>(extents{0}), array<std::complex<float>, B>(extents{0}),
                 array<float, B>(extents{0}), mask.copy(), array<float, B>(extents{0}), array<float, B>(extents{0}),
                 array<float, B>(extents{0}), array<float, B>(extents{0}), 0.0, {}};
  if (!o.template_filter.empty())
    p.box_filter = filter_array<B>(o.template_filter, templ0.shape(), 1.0 / double(templ0.size()));
  const array<float, B> filtered = o.target_filter.empty() ? array<float, B>(extents{0}) : apply_filter(target0, o.target_filter);
  const array<float, B>& target1 = o.target_filter.empty() ? target0 : filtered;
  const bool masked = kind != score::cc && kind != score::lcc;
  p.mask_sum = double(sum(cast<double>(mask)));
  if (masked && !(p.mask_sum > 0))
    throw value_error("fusor::match::scan: " + to_string(kind) + " needs a mask with a positive sum, got " +
                      std::to_string(p.mask_sum));

  array<float, B> target = kind == score::lcc   ? periodic_laplacian_of(target1)
                           : kind == score::cam ? standardised(target1, "target")
                                                : target1.copy();
  array<float, B> templ = kind == score::lcc   ? periodic_laplacian_of(templ0)
                          : kind == score::cam ? standardised(templ0, "template")
                                               : templ0.copy();
  if (kind == score::flc_spherical_mask || kind == score::flc) {
    // the unrotated template must be standardisable: a constant one scores nothing
    const auto [mean, inv] = weighted_standardisation(templ, mask, p.mask_sum);
    (void)mean;
    if (inv == 0.0f)
      throw value_error("fusor::match::scan: the template is constant under the mask; " + to_string(kind) +
                        " has nothing to normalise");
  }

  const extents& f = p.grid;
  const float inv_cells = float(1.0 / double(f.numel()));
  p.ft_target = fft::rfftn(topleft_pad(target, f));
  p.ft_target = p.ft_target * inv_cells;
  const bool needs_squares = kind == score::corr || kind == score::cam || kind == score::flc_spherical_mask || kind == score::flc;
  array<std::complex<float>, B> ft_target2(extents{0});
  if (needs_squares) {
    ft_target2 = fft::rfftn(topleft_pad(target * target, f));
    ft_target2 = ft_target2 * inv_cells;
  }

  // the mask's local moments of the target, where the mask does not rotate
  if (kind == score::corr || kind == score::cam || kind == score::flc_spherical_mask) {
    array<std::complex<float>, B> ft_mask = fft::rfftn(array<float, B>(placed(mask, nullptr, 0.0f, 1.0f, f)));
    array<std::complex<float>, B> spec(ft_mask.shape());
    array<float, B> window(f), window2(f);
    correlate(p.ft_target, ft_mask, spec, window, f);  // CC(f, m)
    correlate(ft_target2, ft_mask, spec, window2, f);  // CC(f^2, m)
    const float eps = float_eps;
    if (kind == score::flc_spherical_mask) {
      const float n = float(p.mask_sum);
      // pyTME's norm_scores: sigma = sqrt(max(E[f^2] - E[f]^2, 0)), 1 where below eps; 1 / (sigma N)
      array<float, B> sigma(sqrt(maximum(window2 / n - (window / n) * (window / n), 0.0f)));
      p.inv_denominator = array<float, B>(1.0f / (where(sigma < eps, 1.0f, sigma) * n));
    } else {
      const double n = p.mask_sum;
      const double mean_g = double(sum(cast<double>(templ) * cast<double>(mask))) / n;
      const double ssd = double(sum((cast<double>(templ) - mean_g) * (cast<double>(templ) - mean_g) * cast<double>(mask)));
      const float volume = float(templ.size());  // pyTME divides by the template's voxel count, not N
      p.numerator = array<float, B>(window * float(mean_g));
      array<float, B> den(sqrt(maximum((window2 - window * window / volume) * float(ssd), 0.0f)));
      p.inv_denominator = array<float, B>(where(den > eps, 1.0f / where(den > eps, den, 1.0f), 0.0f));
      templ = array<float, B>(templ * mask);  // CORR rotates the masked template
    }
  }
  if (kind == score::flc) {
    p.ft_target2 = std::move(ft_target2);
    p.mask_source = mask.copy();  // rotated as coefficients: a smooth mask, no prefilter ringing (pyTME)
  }

  p.rotate.method = o.method;
  p.rotate.prefiltered = true;
  p.source = o.method == interpolation::cubic ? bspline_coefficients(templ) : std::move(templ);
  return p;
}

}  // namespace detail

/// Scores every rotation of `templ` (rotated about its centre, templ.shape() // 2) against
/// `target`, as `kind` (scores.hpp) with `mask` (the template's shape; CC and LCC ignore its
/// values), and keeps per target voxel the best score and its rotation's index in `rotations`.
template <class B>
scan_result<B> scan(const array<float, B>& target, const array<float, B>& templ, const array<float, B>& mask,
                    const std::vector<quaternion>& rotations, score kind, const scan_options& o = {}) {
  detail::check_scan_input(target.shape(), templ.shape(), mask.shape(), rotations.size());
  for (const quaternion& q : rotations) to_matrix(q);  // a zero or non-finite quaternion fails before any work
  const fft::planning_scope<B> effort(o.planning);
  const detail::scan_plan<B> plan = detail::plan_scan(target, templ, mask, kind, o);
  const std::size_t n = rotations.size();

  int workers = 1;
#if defined(_OPENMP)
  if constexpr (std::is_same_v<B, cpu>) {
    workers = o.threads > 0 ? o.threads : executor<B>::threads();
    if (std::size_t(workers) > n) workers = int(n);
  }
#endif
  array<std::uint64_t, B> keys(extents{0});
  array<double, B> sums(extents{0});
  std::exception_ptr failure;
  double score_sum = 0.0, score_sum2 = 0.0;
  const auto merge = [&](detail::scan_worker<B>& w) {
    score_sum += w.score_sum;
    score_sum2 += w.score_sum2;
    if (keys.size() == 0) {
      keys = std::move(w.keys);
      sums = std::move(w.sums);
    } else {
      keys = maximum(keys, w.keys);
      if (sums.size()) sums = sums + w.sums;
    }
  };
  if (workers <= 1) {
    detail::scan_worker<B> w(plan, o.mean_map, o.statistics);
    for (std::size_t r = 0; r < n; ++r) w.run(rotations[r], std::uint32_t(r));
    merge(w);
  } else {
    // OpenMP may start fewer threads than asked (scan called inside a parallel region, a thread
    // limit, dynamic teams): the rotations are dealt to the team that actually runs
    std::vector<std::unique_ptr<detail::scan_worker<B>>> done(static_cast<std::size_t>(workers));
    std::atomic<bool> stop{false};
#if defined(_OPENMP)
#pragma omp parallel num_threads(workers)
#endif
    {
      int t = 0, team = 1;
#if defined(_OPENMP)
      t = omp_get_thread_num();
      team = omp_get_num_threads();
#endif
      try {
        const fft::planning_scope<B> thread_effort(o.planning);
        const fft::threads_scope<B> one_thread(1);  // the team is the parallelism: each transform on its thread
        auto w = std::make_unique<detail::scan_worker<B>>(plan, o.mean_map, o.statistics);
        for (std::size_t r = std::size_t(t); r < n && !stop.load(std::memory_order_relaxed); r += std::size_t(team))
          w->run(rotations[r], std::uint32_t(r));
        done[std::size_t(t)] = std::move(w);
      } catch (...) {
        stop = true;  // the other threads stop at their next rotation
#if defined(_OPENMP)
#pragma omp critical(fusor_match_scan_failure)
#endif
        if (!failure) failure = std::current_exception();
      }
    }
    if (failure) std::rethrow_exception(failure);
    for (auto& w : done)  // in thread order: the mean's sums add up the same way for a given team
      if (w) merge(*w);
  }

  const extents& t = target.shape();
  scan_result<B> res{array<float, B>(generator_expr<detail::key_scores, B>{detail::key_scores{keys.data()}, t, contiguous_strides(t)}),
                     array<std::int32_t, B>(generator_expr<detail::key_rotations, B>{detail::key_rotations{keys.data()}, t,
                                                                                      contiguous_strides(t)}),
                     array<float, B>(extents{0}), plan.grid, score_statistics{}};
  if (o.mean_map) res.mean_score = array<float, B>(cast<float>(sums / double(n)));
  if (o.statistics) {
    const std::int64_t count = t.numel() * std::int64_t(n);
    const double mean = score_sum / double(count), var = score_sum2 / double(count) - mean * mean;
    res.statistics = {count, mean, var > 0.0 ? std::sqrt(var) : 0.0};
  }
  return res;
}

}  // namespace fusor::match
