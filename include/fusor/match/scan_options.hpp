#pragma once
// What a caller says about an exhaustive scan (exhaustive_scan.hpp) and what it gets back: the
// options, the result's maps and statistics, and the memory estimate that decides the tiling.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "../core/array.hpp"
#include "../core/error.hpp"
#include "../fft/backend_fwd.hpp"
#include "filters.hpp"
#include "transform.hpp"

namespace fusor::match {

/// What a score near the target's faces reads where the template reaches past them.
enum class edge_mode {
  /// Zeros beyond the target (fusor's default; pyTME's --pad-edges): the FFT grid is padded by
  /// half a template, so nothing wraps.
  zeros,
  /// The target repeated, as if periodic (pyTME's default on 5-smooth targets, and what a
  /// correlation on the target's own grid gives): an axis may keep the target's own length, which
  /// is cheaper (80^3 against 90^3 for a 17^3 template: a transform pair 2.2 times cheaper), or
  /// read a periodic halo on a padded grid, with the same scores (grid_choice says which).
  wrap
};

inline std::string to_string(edge_mode e) { return e == edge_mode::wrap ? "wrap" : "zeros"; }

/// How the scan picks the lengths of its FFT grid, each at least what keeps every score from
/// reading a wrapped value (scan_windows.hpp).
enum class grid_choice {
  /// The cheapest such grid by fft::transform_cost, among lengths whose factors are 2, 3, 5 and 7
  /// (up to half again the least length) and, with edge_mode::wrap, the target's own length where
  /// that is 7-smooth: a 112-long wrap axis stays 112 rather than a padded 135, whose odd length
  /// costs 2.6 times as much per element.
  fast,
  /// The least lengths, whatever their factors: with edge_mode::wrap the target's own shape (the
  /// exactly circular correlation), with zeros the target plus half a template, a tile's window
  /// as it is.
  /// Slower where a length has a large prime factor; for comparing maps with a program that
  /// transforms exactly that grid.
  target
};

inline std::string to_string(grid_choice g) { return g == grid_choice::target ? "target" : "fast"; }

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
  /// How the FFT grid's lengths are picked (grid_choice): the cheapest, or the least.
  grid_choice grid = grid_choice::fast;
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

/// What a scan holds in memory and how it is cut into tiles to fit its budget.
struct scan_memory_estimate {
  std::size_t bytes = 0;   ///< the estimated peak: buffers, spectra, maps of the workers and the result
  std::size_t budget = 0;  ///< the budget it was fitted to (scan_options::memory_budget, or what was available)
  extents tile;            ///< the voxels each tile scores: the target's shape when the whole fits
  extents tiles;           ///< tiles along each axis
  extents grid;            ///< each tile's FFT grid
  index_t batch = 1;       ///< rotations per batch (scan_options::batch, or the backend's choice)
};

}  // namespace fusor::match
