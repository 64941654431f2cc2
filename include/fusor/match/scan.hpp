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
//      on cpu two rotations share one complex transform pair instead (paired_forward), which
//      FFTW runs in about the time of one real pair;
//   4. one pass over the target's voxels computes the score from the correlation and the
//      precomputed maps and folds it into the running maximum: score and rotation as one 64-bit
//      key (scores.hpp), so the maximum and its argument are one max per voxel.
// On cpu the batches of rotations are dealt to threads (batch b to thread b mod T), each with its own
// buffers and key map; the key maps are merged by a max at the end, so the result does not depend
// on the thread count. On cuda each step is one kernel or cuFFT call on the device, and the
// rotations go in batches (scan_options::batch): every transform of steps 2 and 3 is one cuFFT
// call for the whole batch, the per-template steps and the score pass one kernel per rotation.
//
// Tiling: when the scan would not fit its memory budget, the target is cut into tiles, each
// scanned with a halo of the template's size around it (zero beyond the target, or the target
// repeated with edge_mode::wrap, as the whole target's scan reads it), so a tile's scores are the
// whole scan's scores on its voxels. A target mask skips the tiles it excludes.
#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "../core/create.hpp"
#include "../core/pad.hpp"
#include "../core/reduce.hpp"
#include "../core/slice.hpp"
#include "../fft/helpers.hpp"
#include "../fft/transforms.hpp"
#include "filters.hpp"
#include "masks.hpp"
#include "scores.hpp"
#include "transform.hpp"

namespace fusor::match {

/// What a score near the target's faces reads where the template reaches past them.
enum class edge_mode {
  /// Zeros beyond the target (fusor's default; pyTME's --pad-edges): the FFT grid is padded by
  /// half a template, so nothing wraps.
  zeros,
  /// The target repeated, as if periodic (pyTME's default, and what a correlation on the target's
  /// own grid gives): on axes whose length is 5-smooth the grid is the target's own, which is
  /// cheaper (80^3 against 90^3 for a 17^3 template: a transform pair 2.2 times cheaper); other
  /// axes read a periodic halo on a padded grid, with the same scores.
  wrap
};

inline std::string to_string(edge_mode e) { return e == edge_mode::wrap ? "wrap" : "zeros"; }

struct scan_options {
  /// How the template (and FLC's mask) is rotated.
  interpolation method = interpolation::cubic;
  /// The point of the template (x, y, z, in voxels of its box) the rotations turn about; empty:
  /// volume_center, m // 2 on every axis, which is RELION's box centre (RELION puts a box's origin
  /// on voxel m / 2, and fusor places the template there too). pyTME turns about
  /// index_center(m), (m - 1) / 2: the same point on an odd axis, half a voxel lower on an even
  /// one, where the two conventions' maps differ by more than rounding. Either way a score at
  /// voxel x places the template's voxel m // 2 on x, so the centre itself lands on
  /// x + (center - m // 2), whatever the rotation. Must lie in the box [0, m - 1].
  std::optional<vec3> rotation_center;
  /// What the target is beyond its faces: zeros, or itself repeated (edge_mode).
  edge_mode edges = edge_mode::zeros;
  /// cpu: the threads the scan uses (0: fusor's thread count). The rotations are dealt to them;
  /// with a single worker (threads 1, or one batch), its transforms and loops stay within them.
  /// Other backends: ignored.
  int threads = 0;
  /// The FFT planning effort of the scan's transforms (fft::planning_scope). FFTW's measured plans
  /// take about a second to make for a 160^3 grid and run its transform pairs 1.4 to 2.5 times
  /// faster than estimated ones, which pays from a few dozen rotations on; cuFFT ignores it.
  fft::planning planning = fft::planning::measure;
  /// Also keep the mean score over the rotations at every voxel (one more pass per rotation).
  bool mean_map = false;
  /// MCC: a voxel scores 0 where the rotated template mask overlaps the target mask by less than
  /// this fraction of the mask's sum (pyTME's overlap_ratio).
  double overlap_ratio = 0.3;
  /// Also keep the mean and standard deviation of every score the scan computes (each voxel under
  /// each rotation), summed in double: the distribution a false-positive threshold is drawn from
  /// (peaks.hpp). Two reductions per rotation.
  bool statistics = false;
  /// The most memory the scan may hold (bytes; 0: what the backend has available now, e.g. free
  /// device memory on cuda, MemAvailable on cpu). A scan that needs more is tiled
  /// (estimate_scan_memory tells how).
  std::size_t memory_budget = 0;
  /// The voxels (x, y, z) each tile scores, or empty to choose from the budget. A tile covering
  /// the target is no tiling.
  extents tile{};
  /// Score only part `tile_part` of `tile_parts`: the tiles whose index (x-major order) modulo
  /// tile_parts is tile_part. The other tiles' voxels hold score NaN and rotation -1 (mean NaN),
  /// count as done for progress, and are left out of the statistics, so the parts' maps merged by
  /// a max of their keys (score_key) and their statistics' sums are the whole scan's. For spreading
  /// the tiles of a large target over processes or devices; 0 of 1: every tile.
  index_t tile_part = 0, tile_parts = 1;
  /// Rotations scored together: their transforms are one batched FFT call (cuFFT's plan-many,
  /// FFTW's howmany) and their grids one buffer; on cpu, from two on, two rotations share one
  /// complex transform pair (the real parts one's correlation, the imaginary parts the other's).
  /// 0: the backend's choice (cpu 2: one pair, the threads being the parallelism; cuda up to 8),
  /// halved until the scan fits its memory budget before the target is tiled.
  index_t batch = 0;
  /// Applied to the target once, before the score's own preparation (pyTME's target filter).
  fourier_filter target_filter;
  /// Applied to every rotated template in its own box (periodic), before its standardisation:
  /// a missing wedge, a CTF, a bandpass. Costs an rfft pair of the template's size per rotation.
  /// CORR and CAM are not renormalised for it (as in pyTME).
  fourier_filter template_filter;
  /// Called after each batch of rotations with (rotations scored, rotations to score), counting
  /// over the tiles (a skipped tile counts as done): from the scan's threads, one call at a time.
  /// Returning false stops the scan: it throws scan_stopped once the running batches end. On a
  /// device a batch counts when it is launched.
  std::function<bool(std::size_t done, std::size_t total)> progress;
};

/// A scan that its progress callback stopped.
struct scan_stopped : error {
  using error::error;
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
  /// The voxels each tile scored (the target's shape when the scan was not tiled), and how many
  /// tiles a target mask skipped: their voxels hold score NaN and rotation -1.
  extents tile;
  index_t tiles_skipped = 0;
};

namespace detail {

/// The part of the target one FFT grid covers: the window [start, start + shape) of the target
/// (zero where it leaves the target) is transformed, and the box `core` of scores is read from
/// the grid at `offset`. The whole target: start 0, no halo; a tile: the core with a halo of the
/// template's reach on each side.
struct scan_window {
  std::array<index_t, 3> start{}, offset{};
  extents shape, core, grid;
  bool periodic = false;  // the window reads the target modulo its shape (edge_mode::wrap)
};

/// The grid of a window, per axis the least 5-smooth length on which the correlation of the
/// window with a template of length m and centre c = m // 2 does not wrap into the scored box:
/// its voxel j (at grid offset + j) reads the window at offset + j + y - c for y in [0, m), so
/// the grid must reach past offset + core + m - 2 - c, and the reads below 0, which wrap to the
/// grid's end, must land past the window.
inline index_t window_grid_length(index_t w, index_t offset, index_t core, index_t m) {
  const index_t c = m / 2;
  // 5-smooth (scipy.fft.next_fast_len's choice for real transforms), not fft::next_fast_len's
  // 7-smooth: FFTW's radix-7 passes are slow enough that a longer 5-smooth grid is faster (a
  // one-thread r2c + c2r pair of 140^3: 49 ms, of 144^3: 38 ms)
  return fft::detail::next_smooth_len(std::max(w + std::max<index_t>(0, c - offset), offset + core + m - 1 - c), false);
}

/// One axis of a window: where it starts in the target, where its scored box sits on the grid,
/// its length, the scored length and the grid's.
struct window_axis {
  index_t start = 0, offset = 0, len = 0, core = 0, grid = 0;
};

/// The axis of a tile whose core starts at `first` and is `tile` long (cut at the target's end n):
/// its window runs from first - c to first + tile + m - 1 - c, so every score of the core reads
/// the target (or, periodic, the target repeated), on a grid that depends on the tile's length
/// alone: every tile of a scan on the same grid.
inline window_axis tile_axis(index_t n, index_t m, index_t tile, index_t first) {
  const index_t c = m / 2, len = tile + m - 1;
  return {first - c, c, len, std::min(tile, n - first), window_grid_length(len, c, tile, m)};
}

inline scan_window window_of(const std::array<window_axis, 3>& ax, bool periodic) {
  scan_window w;
  w.periodic = periodic;
  for (std::size_t a = 0; a < 3; ++a) {
    w.start[a] = ax[a].start;
    w.offset[a] = ax[a].offset;
  }
  w.shape = {ax[0].len, ax[1].len, ax[2].len};
  w.core = {ax[0].core, ax[1].core, ax[2].core};
  w.grid = {ax[0].grid, ax[1].grid, ax[2].grid};
  return w;
}

/// The whole target. Zeros: the target on a grid padded past the template's reach. Wrap: per axis,
/// the target's own length when it is 5-smooth (the correlation's own wrap-around is then the
/// periodic target), else one tile of the whole axis, whose halo reads the target periodically.
inline scan_window whole_window(const extents& n, const extents& m, edge_mode edges = edge_mode::zeros) {
  const bool periodic = edges == edge_mode::wrap;
  std::array<window_axis, 3> ax;
  for (std::size_t a = 0; a < 3; ++a) {
    const index_t na = n[int(a)], ma = m[int(a)];
    if (!periodic) ax[a] = {0, 0, na, na, window_grid_length(na, 0, na, ma)};
    else if (fft::detail::next_smooth_len(na, false) == na) ax[a] = {0, 0, na, na, na};
    else ax[a] = tile_axis(na, ma, na, 0);
  }
  return window_of(ax, periodic);
}

/// The tile whose core starts at `first` and is `tile` long (tile_axis on each axis). With
/// edge_mode::wrap the window reads the target periodically where it leaves it.
inline scan_window tile_window(const extents& n, const extents& m, const extents& tile, const std::array<index_t, 3>& first,
                               edge_mode edges = edge_mode::zeros) {
  std::array<window_axis, 3> ax;
  for (std::size_t a = 0; a < 3; ++a) ax[a] = tile_axis(n[int(a)], m[int(a)], tile[int(a)], first[a]);
  return window_of(ax, edges == edge_mode::wrap);
}

}  // namespace detail

/// The FFT grid of a whole-target scan. Zeros (the default): per axis the least 5-smooth length
/// (2^a 3^b 5^c) of at least the target's length plus the template's half, so that no score reads
/// the correlation where it wraps around (the grid's end reads as zeros beyond the target). Wrap:
/// the target's own length where that is 5-smooth, else the least 5-smooth length of at least the
/// target's plus the template's less one.
inline extents scan_fft_shape(const extents& target, const extents& templ, edge_mode edges = edge_mode::zeros) {
  detail::require_volume(target, "scan_fft_shape (the target)");
  detail::require_volume(templ, "scan_fft_shape (the template)");
  return detail::whole_window(target, templ, edges).grid;
}

/// The first voxel (i, j, k) of a volume that is NaN or infinite, in row-major order, or nothing.
/// One reduction pass; an argmax pass more only when there is such a voxel.
template <class B>
std::optional<std::array<index_t, 3>> first_non_finite(const array<float, B>& volume) {
  const extents& s = volume.shape();
  if (s.size() != 3)
    throw shape_error("fusor::match::first_non_finite: expected a 3-d volume, got shape " + to_string(s));
  if (volume.size() == 0 || !any(!isfinite(volume))) return std::nullopt;
  const index_t i = index_t(argmax(cast<std::int8_t>(!isfinite(volume))));
  return std::array<index_t, 3>{i / (s[1] * s[2]), (i / s[2]) % s[1], i % s[2]};
}

namespace detail {

/// A scan input whose every voxel is finite, or a value_error naming it and its first bad voxel:
/// one NaN or inf would make every score it touches NaN or inf (and the statistics with them).
template <class B>
void require_finite(const array<float, B>& volume, const char* what) {
  if (const auto bad = first_non_finite(volume))
    throw value_error(std::string("fusor::match::scan: the ") + what + " holds a non-finite value (NaN or inf) at voxel (" +
                      std::to_string((*bad)[0]) + ", " + std::to_string((*bad)[1]) + ", " + std::to_string((*bad)[2]) +
                      "); expected finite values");
}

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
/// becoming (v - shift) scale w (w: weights of the template's shape, or none), or its square.
template <class B>
generator_expr<grid_placement, B> placed(const array<float, B>& v, const float* weights, float shift, float scale,
                                         const extents& grid, bool squared = false) {
  const extents& m = v.shape();
  return {grid_placement{placed_row{v.data(), weights, shift, scale, squared, m[2], grid[2], m[2] / 2}, m[0], m[1],
                         grid[0], grid[1], m[0] / 2, m[1] / 2},
          grid, contiguous_strides(grid)};
}

/// out = CC(target, template) on out's grid from the target's spectrum ft (scaled by 1/|grid|) and
/// the template's spectrum g: the product goes to `scratch` (which may be g itself), and the
/// unscaled inverse transform consumes it. out may be the grid g was taken from.
template <class B>
void correlate(const array<std::complex<float>, B>& ft, const array<std::complex<float>, B>& g,
               array<std::complex<float>, B>& scratch, array<float, B>& out) {
  const extents& h = g.shape();
  scratch = generator_expr<conj_product, B>{conj_product{ft.data(), g.data(), h.numel()}, h, contiguous_strides(h)};
  fft::irfftn_into(out, scratch, out.shape(), {}, fft::norm_mode::forward, fft::input_use::overwrite);
}

/// What every worker reads: the grid, the target's spectra (scaled by 1/|F|), the template (or its
/// B-spline coefficients) and mask ready to rotate, and the precomputed maps of the score.
template <class B>
struct scan_plan {
  score kind;
  scan_window window;  // its grid is the plan's FFT grid
  extents template_shape;
  array<std::complex<float>, B> ft_target, ft_target2;  // ft_target2: FLC and MCC
  array<std::complex<float>, B> ft_tmask;              // MCC: the target mask's spectrum
  array<float, B> source;                              // what is rotated
  array<float, B> mask;                                // as given
  array<float, B> mask_source;                         // FLC, MCC: the mask as rotated (its values as coefficients)
  array<float, B> numerator, inv_denominator;          // the FFT grid's shape, where the score has them
  array<float, B> box_filter;                          // the template filter on the template's box, / |box|
  double mask_sum = 0;
  transform_options rotate;
  double overlap_ratio = 0.3;  // MCC
  /// Whether the mask rotates with the template (FLC, MCC).
  bool rotates_mask() const { return kind == score::flc || kind == score::mcc; }
};

/// The pruned forward transforms' first two steps, from the touched rows of a placed template
/// (`rows`, m0 x m1 x f2, packed) to the touched planes of the grid: template row y1 lands on grid
/// row (y1 - c1) mod f1 and plane y0 on plane (y0 - c0) mod f0, so the last axis is transformed
/// on those rows only (`last(to, from)`, into `stage`, m0 x f1) and the middle axis on those
/// planes only (`middle(to, from)`, into `planes`, f0 planes). What is not written keeps its value.
template <class Rows, class Stage, class Planes, class Last, class Middle>
void pruned_last_axes(const extents& m, const extents& f, Rows& rows, Stage& stage, Planes&& planes, Last&& last,
                      Middle&& middle) {
  const index_t m0 = m[0], m1 = m[1], c0 = m0 / 2, c1 = m1 / 2, f0 = f[0], f1 = f[1];
  last(stage(fusor::all, fusor::range(0, m1 - c1), fusor::all), rows(fusor::all, fusor::range(c1, m1), fusor::all));
  if (c1 > 0) last(stage(fusor::all, fusor::range(f1 - c1, f1), fusor::all), rows(fusor::all, fusor::range(0, c1), fusor::all));
  middle(planes(fusor::range(0, m0 - c0), fusor::all, fusor::all), stage(fusor::range(c0, m0), fusor::all, fusor::all));
  if (c0 > 0) middle(planes(fusor::range(f0 - c0, f0), fusor::all, fusor::all), stage(fusor::range(0, c0), fusor::all, fusor::all));
}

/// The spectrum of a template-sized volume placed on the grid (as `placed` places it) with the
/// zeros skipped: the placed template touches m0 m1 of the grid's f0 f1 rows and m0 of its f0
/// planes, so the last axis is transformed on those rows only, the middle axis on those planes
/// only, and the first axis on everything (about 0.65 of a whole r2c for a 24^3 template on a
/// 140^3 grid; the other order, the middle axis last over every plane, measured slower: 66 ms
/// per rotation against 54 on 144^3). Rows and planes the template never touches stay zero in
/// the staging buffers between calls, so nothing is cleared per call. cpu only: cuda transforms
/// the whole grid.
template <class B>
struct pruned_forward {
  extents grid, templ;
  array<float, B> rows;                 // (m0, m1, f2): the touched rows, packed
  array<std::complex<float>, B> stage;  // (m0, f1, f2/2+1): after the last axis, untouched rows 0
  array<std::complex<float>, B> planes; // (f0, f1, f2/2+1): after the middle axis, untouched planes 0

  pruned_forward(const extents& f, const extents& m)
      : grid(f),
        templ(m),
        rows(extents{m[0], m[1], f[2]}),
        stage(zeros<std::complex<float>, B>(extents{m[0], f[1], f[2] / 2 + 1})),
        planes(zeros<std::complex<float>, B>(extents{f[0], f[1], f[2] / 2 + 1})) {}

  template <class Out>
  void operator()(Out&& out, const array<float, B>& v, const float* weights, float shift, float scale, bool squared) {
    const extents& rs = rows.shape();
    rows = generator_expr<row_placement, B>{
        row_placement{placed_row{v.data(), weights, shift, scale, squared, templ[2], grid[2], templ[2] / 2}}, rs,
        contiguous_strides(rs)};
    pruned_last_axes(templ, grid, rows, stage, planes, [](auto&& to, auto&& from) { fft::rfftn_into(to, from, {}, {2}); },
                     [](auto&& to, auto&& from) { fft::fftn_into(to, from, {}, {1}); });
    fft::fftn_into(out, planes, {}, {0});
  }
};

/// cpu, two rotations at a time (scores.hpp's paired transforms): out = the backward-sign DFT of
/// a + i b on the grid (a, b template-sized volumes placed as `placed` places them; b may be
/// absent), with the zeros skipped as pruned_forward skips them: the last axis on the touched
/// rows, the middle axis on the touched planes (written into out, its other planes zeroed), the
/// first axis in place over everything. In place, because FFTW's out-of-place plan for the first
/// axis alone copies through buffers: 20 ms on 128^3 against 7 ms in place (and 13 to 17 ms for
/// a whole 3-d transform).
template <class B>
struct paired_forward {
  extents grid, templ;
  array<std::complex<float>, B> rows;   // (m0, m1, f2): the touched rows, packed
  array<std::complex<float>, B> stage;  // (m0, f1, f2): after the last axis, untouched rows 0

  paired_forward(const extents& f, const extents& m)
      : grid(f), templ(m), rows(extents{m[0], m[1], f[2]}), stage(zeros<std::complex<float>, B>(extents{m[0], f[1], f[2]})) {}

  template <class Out>
  void operator()(Out&& out, const placed_row& a, const placed_row* b) {
    const index_t m0 = templ[0], c0 = m0 / 2, f0 = grid[0];
    const extents& rs = rows.shape();
    rows = generator_expr<pair_row_placement, B>{pair_row_placement{a, b ? *b : a, b != nullptr}, rs, contiguous_strides(rs)};
    const auto backward = [](index_t axis) {  // unscaled
      return [axis](auto&& to, auto&& from) { fft::ifftn_into(to, from, {}, {axis}, fft::norm_mode::forward); };
    };
    pruned_last_axes(templ, grid, rows, stage, out, backward(2), backward(1));
    if (f0 > m0) out(fusor::range(m0 - c0, f0 - c0), fusor::all, fusor::all) = std::complex<float>{};
    backward(0)(out, out);
  }
};

/// Per-thread buffers and the running key map. The grid-sized buffers hold `lanes` rotations
/// (lane i at [i, ...]) so that a batch of rotations is transformed by one library call; a batch
/// may use fewer lanes (the last one of a scan).
template <class B>
struct scan_worker {
  /// What one rotation of the batch carries from its template step to its grid steps.
  struct lane {
    std::uint32_t index = 0;  // in the rotation list
    float shift = 0.0f, scale = 1.0f;
    const float* weights = nullptr;  // the standardisation's weights, or none
    double n = 0.0;                  // the mask's sum under this rotation
  };

  const scan_plan<B>& p;
  index_t lanes;
  std::vector<lane> lane_of;
  std::vector<array<float, B>> rot, rot_mask;  // per lane, template-sized
  array<float, B> grid, cc_mask, cc_mask2;     // (lanes, grid); grid unused when scores_in_pairs
  array<float, B> cc_tg, overlap, cc_tg2;      // MCC: CC(t, g'), CC(t, m), CC(t, g'^2)
  // the lanes' spectra: r2c halves, or on cpu with two lanes or more, a whole grid per pair of lanes
  array<std::complex<float>, B> spec, spec_mask, spec_box;
  std::unique_ptr<pruned_forward<B>> pruned;  // cpu: the template's transforms skip its zeros
  std::unique_ptr<paired_forward<B>> paired;  // cpu, two lanes or more: two rotations per transform pair
  array<std::uint64_t, B> keys;
  array<double, B> sums;  // the mean map's running sums, in double over many rotations
  bool statistics;
  double score_sum = 0.0, score_sum2 = 0.0;  // over every voxel and rotation this worker scored

  scan_worker(const scan_plan<B>& plan, index_t batch, bool mean_map, bool stats)
      : p(plan),
        lanes(batch),
        lane_of(std::size_t(batch)),
        grid(scores_in_pairs(plan.kind, batch) ? extents{0} : lanes_shape(plan.window.grid)),
        cc_mask(plan.rotates_mask() ? lanes_shape(plan.window.grid) : extents{0}),
        cc_mask2(plan.rotates_mask() ? lanes_shape(plan.window.grid) : extents{0}),
        cc_tg(plan.kind == score::mcc ? lanes_shape(plan.window.grid) : extents{0}),
        overlap(plan.kind == score::mcc ? lanes_shape(plan.window.grid) : extents{0}),
        cc_tg2(plan.kind == score::mcc ? lanes_shape(plan.window.grid) : extents{0}),
        spec(spectra_shape(plan.window.grid, batch)),
        spec_mask(plan.rotates_mask() ? spectra_shape(plan.window.grid, batch) : extents{0}),
        spec_box(plan.box_filter.size() ? half_grid(plan.template_shape) : extents{0}),
        keys(zeros<std::uint64_t, B>(plan.window.core)),
        sums(mean_map ? zeros<double, B>(plan.window.core) : array<double, B>(extents{0})),
        statistics(stats) {
    for (index_t i = 0; i < lanes; ++i) {
      rot.emplace_back(plan.template_shape);
      if (plan.rotates_mask()) rot_mask.emplace_back(plan.template_shape);
    }
    if constexpr (std::is_same_v<B, cpu>) {
      if (pairs_lanes(batch)) paired = std::make_unique<paired_forward<B>>(plan.window.grid, plan.template_shape);
      else pruned = std::make_unique<pruned_forward<B>>(plan.window.grid, plan.template_shape);
    }
  }

  /// Whether a worker of `batch` lanes transforms them in pairs (cpu, two lanes or more).
  static bool pairs_lanes(index_t batch) { return std::is_same_v<B, cpu> && batch >= 2; }
  /// Whether it also scores the pairs' correlations where the inverse transform leaves them, in
  /// spec: the scores read as they are (FLC and MCC compute theirs on a lane's grid first).
  static bool scores_in_pairs(score kind, index_t batch) {
    return pairs_lanes(batch) && kind != score::flc && kind != score::mcc;
  }
  static extents half_grid(const extents& f) { return {f[0], f[1], f[2] / 2 + 1}; }
  static extents spectra_shape(const extents& f, index_t batch) {
    if (pairs_lanes(batch)) return {(batch + 1) / 2, f[0], f[1], f[2]};
    return {batch, f[0], f[1], f[2] / 2 + 1};
  }
  /// Lane i's volume vol[i] as placed_row lays its rows on the grid.
  placed_row lane_row(index_t i, const std::vector<array<float, B>>& vol, bool standardised, bool squared) const {
    const lane& l = lane_of[std::size_t(i)];
    const extents& m = p.template_shape;
    return {vol[std::size_t(i)].data(), standardised ? l.weights : nullptr, standardised ? l.shift : 0.0f,
            standardised ? l.scale : 1.0f, squared, m[2], p.window.grid[2], m[2] / 2};
  }
  extents lanes_shape(const extents& f) const { return {lanes, f[0], f[1], f[2]}; }
  /// The first `used` lanes of a batched buffer.
  template <class T>
  static array_view<T, B> first(array<T, B>& a, index_t used) {
    return a(fusor::range(0, used), fusor::all, fusor::all, fusor::all);
  }

  /// Lane i of `out` = rfft of the lane's volume vol[i] placed on the grid, standardised by the
  /// lane's moments or not, squared or not; `scratch` is a batched grid buffer the plain path
  /// places into (one batched transform for every lane).
  void forward(array<std::complex<float>, B>& out, index_t used, const std::vector<array<float, B>>& vol,
               bool standardised, bool squared, array<float, B>& scratch) {
    if constexpr (std::is_same_v<B, cpu>) {
      if (paired) {  // pair j: lanes 2j and 2j + 1 (the last pair of an odd batch holds one)
        for (index_t j = 0; 2 * j < used; ++j) {
          const placed_row a = lane_row(2 * j, vol, standardised, squared);
          const placed_row b = 2 * j + 1 < used ? lane_row(2 * j + 1, vol, standardised, squared) : a;
          (*paired)(out(j, fusor::all, fusor::all, fusor::all), a, 2 * j + 1 < used ? &b : nullptr);
        }
        return;
      }
    }
    for (index_t i = 0; i < used; ++i) {
      const lane& l = lane_of[std::size_t(i)];
      const float* w = standardised ? l.weights : nullptr;
      const float shift = standardised ? l.shift : 0.0f, scale = standardised ? l.scale : 1.0f;
      if constexpr (std::is_same_v<B, cpu>) {
        (*pruned)(out(i, fusor::all, fusor::all, fusor::all), vol[std::size_t(i)], w, shift, scale, squared);
      } else {
        scratch(i, fusor::all, fusor::all, fusor::all) = placed(vol[std::size_t(i)], w, shift, scale, p.window.grid, squared);
      }
    }
    if constexpr (!std::is_same_v<B, cpu>) fft::rfftn_into(first(out, used), first(scratch, used), {}, {1, 2, 3});
  }

  /// Every used lane of out = CC(target, lane's template) from a target spectrum ft (one grid,
  /// broadcast over the lanes) and the lanes' spectra g, through `scratch` (which may be g).
  void correlate_lanes(const array<std::complex<float>, B>& ft, array<std::complex<float>, B>& g,
                       array<std::complex<float>, B>& scratch, array<float, B>& out, index_t used, bool leave_paired = false) {
    if constexpr (std::is_same_v<B, cpu>) {
      if (paired) {
        const extents& f = p.window.grid;
        const index_t pairs = (used + 1) / 2, cells = f.numel();
        for (index_t j = 0; j < pairs; ++j)
          scratch(j, fusor::all, fusor::all, fusor::all) = generator_expr<paired_product, B>{
              paired_product{ft.data(), g.data() + j * cells, f[0], f[1], f[2]}, f, contiguous_strides(f)};
        auto s = first(scratch, pairs);
        fft::ifftn_into(s, s, {}, {1, 2, 3}, fft::norm_mode::forward);  // in place, unscaled
        if (leave_paired) return;  // the score reads each part where it lies (score_map::step)
        for (index_t i = 0; i < used; ++i) {  // pair j's real parts are lane 2j's correlation, its imaginary 2j + 1's
          const auto pair = scratch(i / 2, fusor::all, fusor::all, fusor::all);
          if (i % 2) out(i, fusor::all, fusor::all, fusor::all) = imag(pair);
          else out(i, fusor::all, fusor::all, fusor::all) = real(pair);
        }
        return;
      }
    }
    auto s = first(scratch, used);
    const extents lanes = s.shape();
    s = generator_expr<conj_product, B>{conj_product{ft.data(), g.data(), index_t(ft.size())}, lanes, contiguous_strides(lanes)};
    fft::irfftn_into(first(out, used), s, p.window.grid, {1, 2, 3}, fft::norm_mode::forward, fft::input_use::overwrite);
  }

  /// The template steps of one rotation: rotated (and filtered) into its lane, its moments taken.
  void prepare(index_t i, const quaternion& q, std::uint32_t index) {
    lane& l = lane_of[std::size_t(i)];
    array<float, B>& g = rot[std::size_t(i)];
    const matrix3 r = to_matrix(q);
    rigid_transform(p.source, r, {}, g, p.rotate);
    if (p.box_filter.size()) {
      fft::rfftn_into(spec_box, g);
      spec_box = spec_box * p.box_filter;
      fft::irfftn_into(g, spec_box, p.template_shape, {}, fft::norm_mode::forward, fft::input_use::overwrite);
    }
    l = lane{};
    l.index = index;
    l.n = p.mask_sum;
    if (p.rotates_mask()) {
      array<float, B>& gm = rot_mask[std::size_t(i)];
      rigid_transform(p.mask_source, r, {}, gm, p.rotate);
      l.n = double(sum(cast<double>(gm)));
      std::tie(l.shift, l.scale) = weighted_standardisation(g, gm, l.n);
      l.weights = gm.data();
    } else if (p.kind == score::flc_spherical_mask) {
      std::tie(l.shift, l.scale) = weighted_standardisation(g, p.mask, l.n);
      l.weights = p.mask.data();
    }
  }

  /// Scores rotations q[0, used) (indices first, first + 1, ...) as one batch.
  void run(const quaternion* q, std::uint32_t first_index, index_t used) {
    for (index_t i = 0; i < used; ++i) prepare(i, q[i], first_index + std::uint32_t(i));
    forward(spec, used, rot, true, false, grid);
    if (p.kind == score::mcc) correlate_lanes(p.ft_tmask, spec, spec_mask, cc_tg, used);  // spec kept for the next
    const bool in_pairs = scores_in_pairs(p.kind, lanes);
    correlate_lanes(p.ft_target, spec, spec, grid, used, in_pairs);
    if (p.kind == score::mcc) {
      // the rotated mask's correlations with the target mask, the target and its square
      forward(spec, used, rot_mask, false, false, cc_mask);
      correlate_lanes(p.ft_tmask, spec, spec_mask, overlap, used);
      correlate_lanes(p.ft_target, spec, spec_mask, cc_mask, used);
      correlate_lanes(p.ft_target2, spec, spec, cc_mask2, used);
      // the standardised template's square against the target mask
      forward(spec, used, rot, true, true, cc_tg2);
      correlate_lanes(p.ft_tmask, spec, spec, cc_tg2, used);
    } else if (p.kind == score::flc) {
      forward(spec_mask, used, rot_mask, false, false, cc_mask);
      correlate_lanes(p.ft_target, spec_mask, spec, cc_mask, used);
      correlate_lanes(p.ft_target2, spec_mask, spec, cc_mask2, used);
    }
    for (index_t i = 0; i < used; ++i) score(i, in_pairs, key_parts(i, in_pairs, used));
  }

  /// How many lanes lane i's key and statistics pass covers: both of a pair read together (their
  /// map read once), from the pair's first lane.
  index_t key_parts(index_t i, bool in_pairs, index_t used) const {
    if (!in_pairs) return 1;
    return i % 2 ? 0 : i + 1 < used ? 2 : 1;
  }

  /// The score of lane i from its correlations, folded into the running maps.
  /// in_pairs: the correlation is part i % 2 of pair i / 2 in spec, not lane i of grid. parts:
  /// the lanes from i on whose keys and statistics the cpu's one pass updates (0: done with i - 1).
  void score(index_t i, bool in_pairs, index_t parts) {
    const lane& l = lane_of[std::size_t(i)];
    const extents& t = p.window.core;
    const extents& f = p.window.grid;
    const float* cc = in_pairs ? reinterpret_cast<const float*>(spec.data() + (i / 2) * f.numel()) + i % 2
                               : grid.data() + i * f.numel();
    score_map m{score_map::form::plain, cc, nullptr, nullptr, t[1], t[2], f[1], f[2],
                p.window.offset[0], p.window.offset[1], p.window.offset[2], in_pairs ? 2 : 1};
    // FLC and MCC: the score is computed on the scored box of the grid, in place of the correlation,
    // by one fused elementwise pass (SIMD square roots and divisions on cpu); the key pass then
    // reads it as a plain map
    const auto box = [&](array<float, B>& a) {
      const auto& o = p.window.offset;
      return a(i, fusor::range(o[0], o[0] + t[0]), fusor::range(o[1], o[1] + t[1]), fusor::range(o[2], o[2] + t[2]));
    };
    const float nf = float(l.n), eps = float_eps;
    if (p.kind == score::mcc) {
      // Padfield's score (scores.hpp), 0 where the overlap or either variance term is too small
      auto g = box(grid);
      const auto o = maximum(box(overlap), eps);
      const auto d = box(cc_mask), b = box(cc_tg), e = box(cc_mask2), h = box(cc_tg2);
      const auto fixed = e - d * d / o;
      const auto moving = h - b * b / o;
      const float tol = 1e3f * eps, min_overlap = float(p.overlap_ratio * l.n);
      g = where(o >= min_overlap && fixed > tol * e && moving > tol * h,
                clip((g - d * b / o) / sqrt(fixed * moving), -1.0f, 1.0f), 0.0f);
    } else if (p.kind == score::flc) {
      // cc / (N sigma), sigma^2 = CC(f^2, m) / N - (CC(f, m) / N)^2, sigma = 1 where below eps
      auto g = box(grid);
      const auto mean = box(cc_mask) / nf;
      const auto sigma = sqrt(maximum(box(cc_mask2) / nf - mean * mean, 0.0f));
      g = g / (where(sigma < eps, 1.0f, sigma) * nf);
    } else if (p.kind != score::cc && p.kind != score::lcc) {
      m.kind = score_map::form::shifted;
      m.numerator = p.numerator.size() ? p.numerator.data() : nullptr;
      m.inv_denominator = p.inv_denominator.data();
    }
    if (sums.size()) sums = generator_expr<sum_update, B>{sum_update{m, sums.data()}, t, contiguous_strides(t)};
    if (statistics && std::is_same_v<B, cpu>) {
      // one pass: the keys and the statistics' sums together, a row at a time
      if (parts == 0) return;
      const extents rows{t[0] * t[1]};
      const std::complex<double> moments = sum(generator_expr<best_update_moments, B>{
          best_update_moments{m, keys.data(), l.index, int(parts)}, rows, contiguous_strides(rows)});
      score_sum += moments.real();
      score_sum2 += moments.imag();
      return;
    }
    // a device: a thread per voxel for the keys, whose reads and writes then coalesce
    keys = generator_expr<best_update, B>{best_update{m, keys.data(), l.index}, t, contiguous_strides(t)};
    if (statistics) {
      const std::complex<double> moments = sum(generator_expr<score_moments, B>{score_moments{m}, t, contiguous_strides(t)});
      score_sum += moments.real();
      score_sum2 += moments.imag();
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

/// Whether the score reads the target through a whole-target preparation (prepared_target).
inline bool prepares_target(score kind, const scan_options& o, bool target_mask) {
  return !o.target_filter.empty() || kind == score::lcc || kind == score::cam || (kind == score::mcc && target_mask);
}

/// The target as every tile reads it: filtered, then the score's whole-target step (LCC's
/// periodic Laplacian, CAM's standardisation, MCC's product with the target mask), done once over
/// the whole target so that tiles see exactly what the whole scan sees.
template <class B>
array<float, B> prepared_target(const array<float, B>& target0, score kind, const scan_options& o,
                                const array<float, B>* target_mask) {
  const fft::planning_scope<B> once(fft::planning::estimate);  // one transform pair: not worth measuring
  const array<float, B> filtered = o.target_filter.empty() ? array<float, B>(extents{0}) : apply_filter(target0, o.target_filter);
  const array<float, B>& target1 = o.target_filter.empty() ? target0 : filtered;
  if (kind == score::mcc && target_mask) return array<float, B>(target1 * *target_mask);
  return kind == score::lcc   ? periodic_laplacian_of(target1)
         : kind == score::cam ? standardised(target1, "target")
                              : target1.copy();
}

/// The window w of the (prepared) target on w's grid, squared or not; of a volume of ones of
/// shape n where `target` is null (MCC's target mask when none is given).
template <class B>
generator_expr<window_grid, B> window_on_grid(const array<float, B>* target, const extents& n, const scan_window& w,
                                              bool squared) {
  return {window_grid{target ? target->data() : nullptr, n[0], n[1], n[2], w.start[0], w.start[1], w.start[2], w.shape[0], w.shape[1],
                      w.shape[2], w.grid[1], w.grid[2], squared, w.periodic},
          w.grid, contiguous_strides(w.grid)};
}

template <class B>
scan_plan<B> plan_scan(const array<float, B>& target, const array<float, B>& templ0, const array<float, B>& mask, score kind,
                       const scan_options& o, const scan_window& w, const array<float, B>* target_mask) {
  // the plan's transforms run once per plan (a few per tile): FFTW's measuring planner would take
  // longer than it saves (0.4 s for each of a 128^3 r2c and c2r, against a few ms per call); the
  // workers' per-rotation transforms keep scan_options::planning
  const fft::planning_scope<B> once(fft::planning::estimate);
  scan_plan<B> p{kind, w, templ0.shape(),
                 array<std::complex<float>, B>(extents{0}), array<std::complex<float>, B>(extents{0}),
                 array<std::complex<float>, B>(extents{0}), array<float, B>(extents{0}), mask.copy(), array<float, B>(extents{0}), array<float, B>(extents{0}),
                 array<float, B>(extents{0}), array<float, B>(extents{0}), 0.0, {}};
  if (!o.template_filter.empty())
    p.box_filter = filter_array<B>(o.template_filter, templ0.shape(), 1.0 / double(templ0.size()));
  const bool masked = kind != score::cc && kind != score::lcc;
  p.mask_sum = double(sum(cast<double>(mask)));
  if (masked && !(p.mask_sum > 0))
    throw value_error("fusor::match::scan: " + to_string(kind) + " needs a mask with a positive sum, got " +
                      std::to_string(p.mask_sum));

  array<float, B> templ = kind == score::lcc   ? periodic_laplacian_of(templ0)
                          : kind == score::cam ? standardised(templ0, "template")
                                               : templ0.copy();
  p.overlap_ratio = o.overlap_ratio;
  if (kind == score::flc_spherical_mask || kind == score::flc || kind == score::mcc) {
    // the unrotated template must be standardisable: a constant one scores nothing
    const auto [mean, inv] = weighted_standardisation(templ, mask, p.mask_sum);
    (void)mean;
    if (inv == 0.0f)
      throw value_error("fusor::match::scan: the template is constant under the mask; " + to_string(kind) +
                        " has nothing to normalise");
  }

  const extents& f = p.window.grid;
  const float inv_cells = float(1.0 / double(f.numel()));
  p.ft_target = fft::rfftn(array<float, B>(window_on_grid(&target, target.shape(), w, false)));
  p.ft_target = p.ft_target * inv_cells;
  const bool needs_squares = kind != score::cc && kind != score::lcc;
  array<std::complex<float>, B> ft_target2(extents{0});
  if (needs_squares) {
    ft_target2 = fft::rfftn(array<float, B>(window_on_grid(&target, target.shape(), w, true)));
    ft_target2 = ft_target2 * inv_cells;
  }
  if (kind == score::mcc) {
    p.ft_tmask = fft::rfftn(array<float, B>(window_on_grid(target_mask, target.shape(), w, false)));
    p.ft_tmask = p.ft_tmask * inv_cells;
  }

  // the mask's local moments of the target, where the mask does not rotate
  if (kind == score::corr || kind == score::cam || kind == score::flc_spherical_mask) {
    array<std::complex<float>, B> ft_mask = fft::rfftn(array<float, B>(placed(mask, nullptr, 0.0f, 1.0f, f)));
    array<std::complex<float>, B> spec(ft_mask.shape());
    array<float, B> window(f), window2(f);
    correlate(p.ft_target, ft_mask, spec, window);  // CC(f, m)
    correlate(ft_target2, ft_mask, spec, window2);  // CC(f^2, m)
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
  if (kind == score::flc || kind == score::mcc) {
    p.ft_target2 = std::move(ft_target2);
    p.mask_source = mask.copy();  // rotated as coefficients: a smooth mask, no prefilter ringing (pyTME)
  }

  p.rotate.method = o.method;
  p.rotate.prefiltered = true;
  p.rotate.center = o.rotation_center;  // (empty: the template's volume_center)
  p.source = o.method == interpolation::cubic ? bspline_coefficients(templ) : std::move(templ);
  return p;
}

}  // namespace detail

/// What a scan holds in memory and how it is cut into tiles to fit its budget.
struct scan_memory_estimate {
  std::size_t bytes = 0;   ///< the estimated peak: buffers, spectra, maps of the workers and the result
  std::size_t budget = 0;  ///< the budget it was fitted to (scan_options::memory_budget, or what was available)
  extents tile;            ///< the voxels each tile scores: the target's shape when the whole fits
  extents tiles;           ///< tiles along each axis
  extents grid;            ///< each tile's FFT grid
  index_t batch = 1;       ///< rotations per batch (scan_options::batch, or the backend's choice)
};

namespace detail {

/// The threads a scan deals its batches of rotations to: cpu the thread count, at most one per
/// batch; other backends one (their parallelism is inside each call).
template <class B>
int scan_workers(const scan_options& o, std::size_t batches) {
  int workers = 1;
#if defined(_OPENMP)
  if constexpr (std::is_same_v<B, cpu>) {
    workers = o.threads > 0 ? o.threads : executor<B>::threads();
    if (std::size_t(workers) > batches) workers = int(batches);
  }
#else
  (void)o;
  (void)batches;
#endif
  return workers < 1 ? 1 : workers;
}

/// The batch the backend scores at most at once when scan_options::batch is 0: on cpu two, one
/// complex transform pair (the threads are the parallelism); on a device enough rotations that
/// each transform call fills it.
template <class B>
index_t default_scan_batch() {
  return std::is_same_v<B, cpu> ? 2 : 8;
}

inline std::size_t batches_of(std::size_t rotations, index_t batch) {
  return (rotations + std::size_t(batch) - 1) / std::size_t(batch);
}

/// The peak bytes of a scan of a target n with a template m on windows like w: what the whole
/// scan keeps (the prepared target, the key map, the sums), the larger of a tile's planning and
/// its workers (each its grids, spectra and rotated templates for `lanes` rotations, its key
/// map, and a grid's worth of scratch per lane for its transforms), and the result's maps. Every
/// array is counted at its size; the FFT libraries' plans are not. On cpu the peak the arrays
/// reach is within 10% of it (tested).
inline double scan_bytes(const extents& n, const extents& m, const scan_window& w, score kind, const scan_options& o,
                         int workers, index_t lanes, bool tiled, bool pruned) {
  const double F = double(w.grid.numel()), H = double(w.grid[0] * w.grid[1] * (w.grid[2] / 2 + 1));
  const double N = double(n.numel()), M = double(m.numel()), C = double(w.core.numel());
  const bool mcc = kind == score::mcc, flc = kind == score::flc || mcc;
  const bool windows = kind == score::corr || kind == score::cam || kind == score::flc_spherical_mask;
  const bool squares = windows || flc, shifted = kind == score::corr || kind == score::cam;
  const double box = o.template_filter.empty() ? 0.0 : 8.0 * M;
  // tiled: the whole key map and sums beside the tile's; whole: the worker's maps are the scan's
  double whole = tiled ? 8.0 * N + (o.mean_map ? 8.0 * N : 0.0) : 0.0;
  if (prepares_target(kind, o, true)) whole += 4.0 * N;
  const double plan = 8.0 * H + (flc ? 8.0 * H : 0.0) + (mcc ? 8.0 * H : 0.0) + (shifted ? 4.0 * F : 0.0) + (windows ? 4.0 * F : 0.0) + 16.0 * M + box;
  const double planning = 4.0 * F + (squares ? 8.0 * H : 0.0) + (windows ? 16.0 * H + 12.0 * F : 0.0);
  // cpu with two lanes or more: whole-grid spectra per pair of lanes (scan_worker::spectra_shape)
  const bool pairs = pruned && lanes >= 2;
  const double rows = double(m[0] * m[1] * w.grid[2]), stage = double(m[0] * w.grid[1] * w.grid[2]);
  const double pruning = !pruned ? 0.0 : pairs ? 8.0 * stage + 8.0 * rows : 8.0 * H + 4.0 * rows;
  const double spectra = (flc ? 2.0 : 1.0) * (pairs ? double((lanes + 1) / 2) * 8.0 * F : double(lanes) * 8.0 * H);
  const double lane = 16.0 * F + (flc ? 8.0 * F + 4.0 * M : 0.0) + (mcc ? 12.0 * F : 0.0) + 4.0 * M;
  const double worker = double(lanes) * lane + spectra + pruning + box + 8.0 * C + (o.mean_map ? 8.0 * C : 0.0);
  const double merge = workers > 1 ? 8.0 * C : 0.0;  // the max of two workers' key maps
  const double results = 16.0 * N + (o.mean_map ? 12.0 * N : 0.0);  // the keys (and sums) with the maps made from them
  return whole + std::max({plan + planning, plan + double(workers) * worker + merge, results});
}

}  // namespace detail

/// How a scan of a target with a template will use memory, and the tiles it will be cut into to
/// stay within options.memory_budget (or within what backend B has available now): the largest
/// tiles that fit, each axis cut into equal parts, the longest tile axis cut first. The backend's
/// batch of rotations (scan_options::batch 0) is halved until the whole target fits before any
/// tiling (so a tiled scan takes one rotation at a time unless options.batch or a fitting
/// options.tile says otherwise). A budget that not even a single-voxel
/// tile fits is a value_error naming what that tile needs.
template <class B>
scan_memory_estimate estimate_scan_memory(const extents& target, const extents& templ, score kind, const scan_options& o = {},
                                          std::size_t rotations = std::size_t(1) << 20) {
  detail::require_volume(target, "estimate_scan_memory (the target)");
  detail::require_volume(templ, "estimate_scan_memory (the template)");
  if (o.batch < 0)
    throw value_error("fusor::match::scan: expected a batch of 0 (the backend's choice) or more rotations, got " +
                      std::to_string(o.batch));
  const std::size_t count = rotations == 0 ? 1 : rotations;
  const bool chosen = o.batch == 0;
  index_t batch = std::min<index_t>(chosen ? detail::default_scan_batch<B>() : o.batch, index_t(std::min<std::size_t>(count, INT32_MAX)));
  int workers = detail::scan_workers<B>(o, detail::batches_of(count, batch));
  const auto bytes = [&](const detail::scan_window& w, bool tiled) {
    return detail::scan_bytes(target, templ, w, kind, o, workers, batch, tiled, std::is_same_v<B, cpu>);
  };
  const auto halve_batch = [&] {
    batch = (batch + 1) / 2;
    workers = detail::scan_workers<B>(o, detail::batches_of(count, batch));
  };
  scan_memory_estimate e;
  const std::size_t available = backend_memory<B>::available();  // 0: the backend cannot tell
  e.budget = o.memory_budget       ? o.memory_budget
             : available > 0 ? std::size_t(0.9 * double(available))
                             : std::numeric_limits<std::size_t>::max();
  const auto fits = [&](double b) { return b <= double(e.budget); };
  const auto set = [&](const extents& tile, const detail::scan_window& w, double b) {
    e.tile = tile;
    e.grid = w.grid;
    e.bytes = std::size_t(b);
    e.batch = batch;
    e.tiles = {(target[0] + tile[0] - 1) / tile[0], (target[1] + tile[1] - 1) / tile[1], (target[2] + tile[2] - 1) / tile[2]};
  };
  if (o.tile.size() != 0) {
    if (o.tile.size() != 3 || o.tile[0] < 1 || o.tile[1] < 1 || o.tile[2] < 1)
      throw value_error("fusor::match::scan: expected a tile of three positive lengths (x, y, z), got " + to_string(o.tile));
    const extents t{std::min(o.tile[0], target[0]), std::min(o.tile[1], target[1]), std::min(o.tile[2], target[2])};
    const bool whole = t == target;
    const auto w = whole ? detail::whole_window(target, templ, o.edges) : detail::tile_window(target, templ, t, {0, 0, 0}, o.edges);
    while (chosen && batch > 1 && !fits(bytes(w, !whole))) halve_batch();
    set(t, w, bytes(w, !whole));
    return e;
  }
  const auto whole = detail::whole_window(target, templ, o.edges);
  for (;;) {
    const double all = bytes(whole, false);
    if (fits(all)) {
      set(target, whole, all);
      return e;
    }
    if (!chosen || batch == 1) break;
    halve_batch();
  }
  std::array<index_t, 3> parts{1, 1, 1};
  extents t = target;
  for (;;) {
    int a = 0;
    for (int i = 1; i < 3; ++i)
      if (t[i] > t[a]) a = i;
    if (t[a] == 1) {
      const auto w = detail::tile_window(target, templ, t, {0, 0, 0}, o.edges);
      throw value_error("fusor::match::scan: a memory budget of " + std::to_string(e.budget) +
                        " bytes does not hold even a one-voxel tile, which needs " + std::to_string(std::size_t(bytes(w, true))) +
                        " bytes with a template of shape " + to_string(templ) + ", " + std::to_string(workers) +
                        " worker(s) and batches of " + std::to_string(batch) +
                        " rotation(s); raise the budget, use fewer threads or a smaller batch");
    }
    ++parts[std::size_t(a)];
    t[a] = (target[a] + parts[std::size_t(a)] - 1) / parts[std::size_t(a)];
    const auto w = detail::tile_window(target, templ, t, {0, 0, 0}, o.edges);
    const double b = bytes(w, true);
    if (fits(b)) {
      set(t, w, b);
      return e;
    }
  }
}

namespace detail {

/// The count scan_options::progress is told, shared by the threads and the tiles of one scan.
struct scan_progress {
  scan_progress(const scan_options& options, std::size_t rotations) : o(options), total(rotations) {}
  const scan_options& o;
  std::size_t total;
  std::size_t done = 0;
  bool stopped = false;  // once told to stop, the callback is not called again
  std::mutex m;
  /// Counts k rotations scored; throws scan_stopped when the callback says stop.
  void add(std::size_t k) {
    if (!o.progress) return;
    const std::lock_guard<std::mutex> lock(m);
    if (!stopped) {
      done += k;
      stopped = !o.progress(done, total);
    }
    if (stopped)
      throw scan_stopped("fusor::match::scan: stopped by its progress callback after " + std::to_string(done) + " of " +
                         std::to_string(total) + " rotations");
  }
};

/// Every rotation scored on one plan (a whole target or a tile), in batches of `batch`: the
/// merged key map of the plan's scored box, its sums for the mean, and the sums for the
/// statistics.
/// While it lives, the loops backend B starts on this thread use at most n threads (n >= 1; 0:
/// no cap): with fft::threads_scope, scan_options::threads bounds the whole scan, not only how
/// its rotations are dealt. A backend without the setting ignores it.
template <class B>
class loop_threads_scope {
 public:
  explicit loop_threads_scope(int n) {
    if constexpr (requires { executor<B>::thread_cap(); }) {
      previous_ = executor<B>::thread_cap();
      executor<B>::set_thread_cap(n);
    }
  }
  ~loop_threads_scope() {
    if constexpr (requires { executor<B>::thread_cap(); }) executor<B>::set_thread_cap(previous_);
  }
  loop_threads_scope(const loop_threads_scope&) = delete;
  loop_threads_scope& operator=(const loop_threads_scope&) = delete;

 private:
  int previous_ = 0;
};

template <class B>
void scan_rotations(const scan_plan<B>& plan, const std::vector<quaternion>& rotations, const scan_options& o, int workers,
                    index_t batch, array<std::uint64_t, B>& keys, array<double, B>& sums, double& score_sum,
                    double& score_sum2, scan_progress& progress) {
  const std::size_t n = rotations.size(), k = std::size_t(batch), batches = batches_of(n, batch);
  const auto run_batch = [&](scan_worker<B>& w, std::size_t b) {
    const std::size_t first = b * k, count = std::min(k, n - first);
    w.run(rotations.data() + first, std::uint32_t(first), index_t(count));
    progress.add(count);
  };
  keys = array<std::uint64_t, B>(extents{0});
  sums = array<double, B>(extents{0});
  const auto merge = [&](scan_worker<B>& w) {
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
    // one worker on this thread: its transforms and loops use the threads asked for (all: 0)
    const loop_threads_scope<B> loops(o.threads);
    std::optional<fft::threads_scope<B>> transforms;
    if (o.threads > 0) transforms.emplace(o.threads);
    scan_worker<B> w(plan, batch, o.mean_map, o.statistics);
    for (std::size_t b = 0; b < batches; ++b) run_batch(w, b);
    merge(w);
    return;
  }
  // OpenMP may start fewer threads than asked (scan called inside a parallel region, a thread
  // limit, dynamic teams): the batches are dealt to the team that actually runs
  std::vector<std::unique_ptr<scan_worker<B>>> done(static_cast<std::size_t>(workers));
  std::atomic<bool> stop{false};
  std::exception_ptr failure;
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
      // the team is the parallelism: each transform and loop on its own thread
      const fft::threads_scope<B> one_thread(1);
      const loop_threads_scope<B> one_loop_thread(1);
      auto w = std::make_unique<scan_worker<B>>(plan, batch, o.mean_map, o.statistics);
      for (std::size_t b = std::size_t(t); b < batches && !stop.load(std::memory_order_relaxed); b += std::size_t(team))
        run_batch(*w, b);
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

/// A rotation centre inside the template's box [0, m - 1] on every axis, or a value_error saying
/// where it lies.
inline void check_rotation_center(const std::optional<vec3>& c, const extents& m) {
  if (!c) return;
  for (std::size_t a = 0; a < 3; ++a)
    if (!(std::isfinite((*c)[a]) && (*c)[a] >= 0.0 && (*c)[a] <= double(m[a] - 1))) {
      char where[160];
      std::snprintf(where, sizeof where, "(%.6g, %.6g, %.6g)", (*c)[0], (*c)[1], (*c)[2]);
      throw value_error(std::string("fusor::match::scan: expected a rotation centre inside the template's box [0, m - 1] "
                                    "for the template of shape ") + to_string(m) + ", got " + where);
    }
}

template <class B>
scan_result<B> scan_tiles(const array<float, B>& target, const array<float, B>& templ, const array<float, B>& mask,
                          const std::vector<quaternion>& rotations, score kind, const scan_options& o,
                          const array<float, B>* target_mask) {
  check_scan_input(target.shape(), templ.shape(), mask.shape(), rotations.size());
  if (target_mask && target_mask->shape() != target.shape())
    throw shape_error("fusor::match::scan: expected a target mask of the target's shape " + to_string(target.shape()) +
                      ", got " + to_string(target_mask->shape()));
  for (const quaternion& q : rotations) to_matrix(q);  // a zero or non-finite quaternion fails before any work
  require_finite(target, "target");
  require_finite(templ, "template");
  require_finite(mask, "mask");
  if (target_mask) require_finite(*target_mask, "target mask");
  if (!(o.overlap_ratio >= 0.0 && o.overlap_ratio <= 1.0))
    throw value_error("fusor::match::scan: expected an overlap_ratio in [0, 1], got " + std::to_string(o.overlap_ratio));
  check_rotation_center(o.rotation_center, templ.shape());
  if (o.tile_parts < 1 || o.tile_part < 0 || o.tile_part >= o.tile_parts)
    throw value_error("fusor::match::scan: expected a tile part in [0, tile_parts) and tile_parts >= 1, got part " +
                      std::to_string(o.tile_part) + " of " + std::to_string(o.tile_parts));
  const fft::planning_scope<B> effort(o.planning);
  const std::size_t n = rotations.size();
  const scan_memory_estimate est = estimate_scan_memory<B>(target.shape(), templ.shape(), kind, o, n);
  const extents& s = target.shape();
  const bool parted = o.tile_parts > 1;
  const bool whole = est.tile == s && !parted;
  const int workers = scan_workers<B>(o, batches_of(n, est.batch));

  const bool prepare = prepares_target(kind, o, target_mask != nullptr);
  const array<float, B> prepared = prepare ? prepared_target(target, kind, o, target_mask) : array<float, B>(extents{0});
  const array<float, B>& t = prepare ? prepared : target;
  array<std::uint64_t, B> keys(extents{0});
  array<double, B> sums(extents{0});
  double score_sum = 0.0, score_sum2 = 0.0;
  index_t scored = 0, skipped = 0;
  scan_progress progress{o, std::size_t(est.tiles.numel()) * n};
  const auto excluded = [&](const std::array<index_t, 3>& a, const extents& core) {
    if (!target_mask) return false;
    const auto box = (*target_mask)(fusor::range(a[0], a[0] + core[0]), fusor::range(a[1], a[1] + core[1]),
                                    fusor::range(a[2], a[2] + core[2]));
    return !(double(sum(cast<double>(box != 0.0f))) > 0.0);
  };
  if (whole && !excluded({0, 0, 0}, s)) {
    const scan_plan<B> plan = plan_scan(t, templ, mask, kind, o, whole_window(s, templ.shape(), o.edges), target_mask);
    scan_rotations(plan, rotations, o, workers, est.batch, keys, sums, score_sum, score_sum2, progress);
    scored = s.numel();
  } else {
    keys = zeros<std::uint64_t, B>(s);  // key 0: score NaN, rotation -1 where no tile scored
    if (o.mean_map) sums = full<double, B>(s, std::numeric_limits<double>::quiet_NaN());
    const extents& T = est.tile;
    index_t index = -1;
    for (index_t a0 = 0; a0 < s[0]; a0 += T[0])
      for (index_t a1 = 0; a1 < s[1]; a1 += T[1])
        for (index_t a2 = 0; a2 < s[2]; a2 += T[2]) {
          if (++index % o.tile_parts != o.tile_part) {  // another part's tile
            progress.add(n);
            continue;
          }
          const scan_window w = est.tile == s ? whole_window(s, templ.shape(), o.edges)  // one tile, one part
                                              : tile_window(s, templ.shape(), T, {a0, a1, a2}, o.edges);
          if (excluded({a0, a1, a2}, w.core)) {
            ++skipped;
            progress.add(n);
            continue;
          }
          array<std::uint64_t, B> tile_keys(extents{0});
          array<double, B> tile_sums(extents{0});
          {
            const scan_plan<B> plan = plan_scan(t, templ, mask, kind, o, w, target_mask);
            scan_rotations(plan, rotations, o, workers, est.batch, tile_keys, tile_sums, score_sum, score_sum2,
                           progress);
          }
          const extents& c = w.core;
          const fusor::range r0(a0, a0 + c[0]), r1(a1, a1 + c[1]), r2(a2, a2 + c[2]);
          keys(r0, r1, r2) = tile_keys;
          if (o.mean_map) sums(r0, r1, r2) = tile_sums;
          scored += c.numel();
        }
  }

  scan_result<B> res{array<float, B>(generator_expr<key_scores, B>{key_scores{keys.data()}, s, contiguous_strides(s)}),
                     array<std::int32_t, B>(generator_expr<key_rotations, B>{key_rotations{keys.data()}, s,
                                                                             contiguous_strides(s)}),
                     array<float, B>(extents{0}), est.grid, score_statistics{}, est.tile, skipped};
  if (o.mean_map) res.mean_score = array<float, B>(cast<float>(sums / double(n)));
  if (o.statistics && scored > 0) {
    const std::int64_t count = scored * std::int64_t(n);
    const double mean = score_sum / double(count), var = score_sum2 / double(count) - mean * mean;
    res.statistics = {count, mean, var > 0.0 ? std::sqrt(var) : 0.0};
  }
  return res;
}

}  // namespace detail

/// Scores every rotation of `templ` (rotated about options.rotation_center, by default its centre
/// templ.shape() // 2) against
/// `target`, as `kind` (scores.hpp) with `mask` (the template's shape; CC and LCC ignore its
/// values), and keeps per target voxel the best score and its rotation's index in `rotations`.
/// Tiled when the whole does not fit options.memory_budget (or options.tile says so); the tiles'
/// scores are the whole scan's.
template <class B>
scan_result<B> scan(const array<float, B>& target, const array<float, B>& templ, const array<float, B>& mask,
                    const std::vector<quaternion>& rotations, score kind, const scan_options& o = {}) {
  return detail::scan_tiles(target, templ, mask, rotations, kind, o, static_cast<const array<float, B>*>(nullptr));
}

/// The same, skipping the tiles in which `target_mask` (the target's shape) is 0 everywhere: their
/// voxels hold score NaN and rotation -1 (and mean NaN). Tiles come from the budget or options.tile;
/// voxels of a scanned tile are scored whatever the mask says there, except by MCC, whose score
/// reads the mask (Padfield's t).
template <class B>
scan_result<B> scan(const array<float, B>& target, const array<float, B>& templ, const array<float, B>& mask,
                    const std::vector<quaternion>& rotations, score kind, const scan_options& o,
                    const array<float, B>& target_mask) {
  return detail::scan_tiles(target, templ, mask, rotations, kind, o, &target_mask);
}

}  // namespace fusor::match
