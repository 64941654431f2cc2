#pragma once
// How much memory an exhaustive scan holds, and the tiles and batch that keep it within a budget
// (estimate_scan_memory): every array the scan, its plans and its workers make, counted at its
// size, with the backend's batch and worker count (scan_strategy).
#include <algorithm>
#include <array>
#include <cstddef>
#include <limits>
#include <string>

#include "scan_options.hpp"
#include "scan_plan.hpp"
#include "scan_strategy.hpp"
#include "scan_windows.hpp"

namespace fusor::match {

namespace detail {

/// The threads a scan deals its batches of rotations to (scan_strategy<B>::workers): on cpu the
/// thread count, at most one per batch; on cuda one (its parallelism is inside each call).
template <class B>
int scan_workers(const scan_options& o, std::size_t batches) {
  return scan_strategy<B>::workers(o.threads, batches);  // in [1, batches] by the hook's contract
}

inline std::size_t batches_of(std::size_t rotations, index_t batch) {
  return (rotations + std::size_t(batch) - 1) / std::size_t(batch);
}

/// The peak bytes of a scan of a target n with a template m on windows like w: what the whole
/// scan keeps (the prepared target, the key map, the sums), the larger of a tile's planning and
/// its workers (each its grids, spectra and rotated templates for `lanes` rotations, its key
/// map, and a grid's worth of scratch per lane for its transforms), and the result's maps. Every
/// array is counted at its size; the FFT libraries' plans are not. On cpu the peak the arrays
/// reach is within 10% of it (tested). paired, pruned: the backend's strategy (scan_strategy).
inline double scan_bytes(const extents& n, const extents& m, const scan_window& w, score kind, const scan_options& o,
                         int workers, index_t lanes, bool tiled, bool paired, bool pruned) {
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
  // paired, two lanes or more: whole-grid spectra per pair of lanes (scan_worker::spectra_shape)
  const bool pairs = paired && lanes >= 2;
  const double rows = double(m[0] * m[1] * w.grid[2]), stage = double(m[0] * w.grid[1] * w.grid[2]);
  const double pruning = pairs ? 8.0 * stage + 8.0 * rows : pruned ? 8.0 * H + 4.0 * rows : 0.0;
  // FLC in pairs keeps its mask correlations as a third paired spectrum and its scores on the
  // scored box, not as two grids per lane
  const bool local_pairs = pairs && kind == score::flc;
  const double spectra = (local_pairs ? 3.0 : flc ? 2.0 : 1.0) * (pairs ? double((lanes + 1) / 2) * 8.0 * F : double(lanes) * 8.0 * H);
  const double lane = 16.0 * F + (flc ? (local_pairs ? 4.0 * C : 8.0 * F) + 4.0 * M : 0.0) + (mcc ? 12.0 * F : 0.0) + 4.0 * M;
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
  index_t batch = std::min<index_t>(chosen ? scan_strategy<B>::default_batch : o.batch, index_t(std::min<std::size_t>(count, INT32_MAX)));
  int workers = detail::scan_workers<B>(o, detail::batches_of(count, batch));
  const auto bytes = [&](const detail::scan_window& w, bool tiled) {
    using strategy = scan_strategy<B>;
    return detail::scan_bytes(target, templ, w, kind, o, workers, batch, tiled, strategy::pairs_lanes,
                              strategy::prunes_template_zeros);
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
    const auto w = whole ? detail::whole_window(target, templ, o.edges, o.grid) : detail::tile_window(target, templ, t, {0, 0, 0}, o.edges, o.grid);
    while (chosen && batch > 1 && !fits(bytes(w, !whole))) halve_batch();
    set(t, w, bytes(w, !whole));
    return e;
  }
  const auto whole = detail::whole_window(target, templ, o.edges, o.grid);
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
      const auto w = detail::tile_window(target, templ, t, {0, 0, 0}, o.edges, o.grid);
      throw value_error("fusor::match::scan: a memory budget of " + std::to_string(e.budget) +
                        " bytes does not hold even a one-voxel tile, which needs " + std::to_string(std::size_t(bytes(w, true))) +
                        " bytes with a template of shape " + to_string(templ) + ", " + std::to_string(workers) +
                        " worker(s) and batches of " + std::to_string(batch) +
                        " rotation(s); raise the budget, use fewer threads or a smaller batch");
    }
    ++parts[std::size_t(a)];
    t[a] = (target[a] + parts[std::size_t(a)] - 1) / parts[std::size_t(a)];
    const auto w = detail::tile_window(target, templ, t, {0, 0, 0}, o.edges, o.grid);
    const double b = bytes(w, true);
    if (fits(b)) {
      set(t, w, b);
      return e;
    }
  }
}

}  // namespace fusor::match
