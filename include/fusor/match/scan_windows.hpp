#pragma once
// The parts of the target one FFT grid covers: the whole target, or a tile with a halo of the
// template's reach around it, each on a grid on which its scores do not wrap: the cheapest by the
// transform cost model, or the least (scan_options::grid).
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "../core/extents.hpp"
#include "../fft/helpers.hpp"
#include "../fft/transform_cost.hpp"
#include "interpolation.hpp"
#include "scan_options.hpp"

namespace fusor::match {

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

/// The least length of a window's grid on which the correlation of the window (w long) with a
/// template of length m and centre c = m // 2 does not wrap into the scored box: its voxel j (at
/// grid offset + j) reads the window at offset + j + y - c for y in [0, m), so the grid must
/// reach past offset + core + m - 2 - c, and the reads below 0, which wrap to the grid's end,
/// must land past the window.
inline index_t least_grid_length(index_t w, index_t offset, index_t core, index_t m) {
  const index_t c = m / 2;
  return std::max(w + std::max<index_t>(0, c - offset), offset + core + m - 1 - c);
}

/// The grid lengths an axis that needs `least` may take: fast, every 7-smooth length from least
/// to half again as long (a longer one costs more than its cheaper elements save: the model's
/// weights differ by less than that); target, least itself.
inline std::vector<index_t> grid_lengths(index_t least, grid_choice g) {
  if (g == grid_choice::target) return {least};
  std::vector<index_t> out;
  for (index_t n = least; n <= least + least / 2; ++n)
    if (std::isfinite(fft::axis_cost(n))) out.push_back(n);
  if (out.empty()) out.push_back(fft::next_fast_len(least));
  return out;
}

/// One axis of a window: where it starts in the target, where its scored box sits on the grid,
/// its length, the scored length and the grid's.
struct window_axis {
  index_t start = 0, offset = 0, len = 0, core = 0, grid = 0;
};

/// The axis of a tile whose core starts at `first` and is `tile` long (cut at the target's end n),
/// once per grid length it may take: its window runs from first - c to first + tile + m - 1 - c,
/// so every score of the core reads the target (or, periodic, the target repeated), on a grid
/// that depends on the tile's length alone: every tile of a scan on the same grid.
inline std::vector<window_axis> tile_axes(index_t n, index_t m, index_t tile, index_t first, grid_choice g) {
  const index_t c = m / 2, len = tile + m - 1;
  std::vector<window_axis> out;
  for (const index_t f : grid_lengths(least_grid_length(len, c, tile, m), g)) out.push_back({first - c, c, len, std::min(tile, n - first), f});
  return out;
}

/// The window made of one choice per axis, among `options` the one whose grid costs least
/// (fft::transform_cost; the first of equals).
inline scan_window cheapest_window(const std::array<std::vector<window_axis>, 3>& options, bool periodic) {
  std::array<const window_axis*, 3> best{};
  double least = std::numeric_limits<double>::infinity();
  for (const window_axis& a : options[0])
    for (const window_axis& b : options[1])
      for (const window_axis& c : options[2]) {
        const double cost = fft::transform_cost(extents{a.grid, b.grid, c.grid});
        if (!best[0] || cost < least) {
          least = cost;
          best = {&a, &b, &c};
        }
      }
  scan_window w;
  w.periodic = periodic;
  for (std::size_t a = 0; a < 3; ++a) {
    w.start[a] = best[a]->start;
    w.offset[a] = best[a]->offset;
  }
  w.shape = {best[0]->len, best[1]->len, best[2]->len};
  w.core = {best[0]->core, best[1]->core, best[2]->core};
  w.grid = {best[0]->grid, best[1]->grid, best[2]->grid};
  return w;
}

/// The whole target. Zeros: the target on a grid padded past the template's reach. Wrap: per axis,
/// the target's own length (the correlation's own wrap-around is then the periodic target), or one
/// tile of the whole axis, whose halo reads the target periodically on a longer grid; `fast` takes
/// the cheaper of the two (the own length only where it is 7-smooth), `target` the own length.
inline scan_window whole_window(const extents& n, const extents& m, edge_mode edges = edge_mode::zeros,
                                grid_choice g = grid_choice::fast) {
  const bool periodic = edges == edge_mode::wrap;
  std::array<std::vector<window_axis>, 3> options;
  for (std::size_t a = 0; a < 3; ++a) {
    const index_t na = n[int(a)], ma = m[int(a)];
    auto& o = options[a];
    if (!periodic) {
      for (const index_t f : grid_lengths(least_grid_length(na, 0, na, ma), g)) o.push_back({0, 0, na, na, f});
      continue;
    }
    if (g == grid_choice::target || std::isfinite(fft::axis_cost(na))) o.push_back({0, 0, na, na, na});
    if (g == grid_choice::fast) {
      const auto padded = tile_axes(na, ma, na, 0, g);
      o.insert(o.end(), padded.begin(), padded.end());
    }
  }
  return cheapest_window(options, periodic);
}

/// The tile whose core starts at `first` and is `tile` long (tile_axes on each axis). With
/// edge_mode::wrap the window reads the target periodically where it leaves it.
inline scan_window tile_window(const extents& n, const extents& m, const extents& tile, const std::array<index_t, 3>& first,
                               edge_mode edges = edge_mode::zeros, grid_choice g = grid_choice::fast) {
  std::array<std::vector<window_axis>, 3> options;
  for (std::size_t a = 0; a < 3; ++a) options[a] = tile_axes(n[int(a)], m[int(a)], tile[int(a)], first[a], g);
  return cheapest_window(options, edges == edge_mode::wrap);
}

}  // namespace detail

/// The FFT grid of a whole-target scan. Zeros (the default): per axis at least the target's
/// length plus the template's half, so that no score reads the correlation where it wraps around
/// (the grid's end reads as zeros beyond the target). Wrap: the target's own length, or at least
/// the target's plus the template's less one where the halo is read from a padded grid. With
/// grid_choice::fast the cheapest such grid by fft::transform_cost, with target the least.
inline extents scan_fft_shape(const extents& target, const extents& templ, edge_mode edges = edge_mode::zeros,
                              grid_choice grid = grid_choice::fast) {
  detail::require_volume(target, "scan_fft_shape (the target)");
  detail::require_volume(templ, "scan_fft_shape (the template)");
  return detail::whole_window(target, templ, edges, grid).grid;
}

}  // namespace fusor::match
