#pragma once
// The parts of the target one FFT grid covers: the whole target, or a tile with a halo of the
// template's reach around it, each on the least 5-smooth grid on which its scores do not wrap.
#include <algorithm>
#include <array>

#include "../core/extents.hpp"
#include "../fft/helpers.hpp"
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

}  // namespace fusor::match
