#pragma once
// The seeded scan: a constrained search about points already known (picks of an earlier search,
// a membrane's vertices, a coarse run's peaks), pyTME's --orientations with
// --orientations-uncertainty and --orientations-cone. Each seed is a voxel, an ellipsoid of
// translations about it and the subset of the rotation list its prior allows (rotations_in_cone
// picks pyTME's cone); the scan visits each seed's box alone, on an FFT grid the size of the box
// plus the template's reach, and scores only that seed's rotations there.
//
// One seed is one tile of the exhaustive scan (exhaustive_scan.hpp): the box's window read from
// the (prepared) target, its own plan, the seed's rotations dealt to the backend's team in batches,
// the key map merged by a max. So a seeded score is the exhaustive scan's score at that voxel
// under the same rotation (up to the last bits of how rotations share a transform pair), and the
// best over a seed's rotations is the whole scan's best wherever the whole scan's best rotation is
// among them. Where seeds' ellipsoids overlap the maps keep the better key, as tiles do.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "../core/create.hpp"
#include "exhaustive_scan.hpp"
#include "interpolation.hpp"

namespace fusor::match {

/// A point to search about: the voxel (x, y, z, rounded to the nearest) whose score would place the
/// template there, the semi-axes of the ellipsoid of voxels searched about it (voxels; 0 on an axis:
/// that axis is not searched; pyTME's --orientations-uncertainty), and the indices in the scan's
/// rotation list that it scores (empty: every rotation).
struct seed {
  vec3 position{};
  vec3 radius{};
  std::vector<std::uint32_t> rotations;
};

/// What a seed found: the voxel of its best score within its ellipsoid, that score, the index of
/// its rotation in the scan's list, how many rotations and voxels it scored.
struct seed_match {
  std::array<index_t, 3> position{};
  float score = std::numeric_limits<float>::quiet_NaN();
  std::int32_t rotation = -1;
  std::size_t rotations = 0;
  index_t voxels = 0;
};

template <class B>
struct seeded_scan_result {
  /// The target's shape: per voxel of any seed's ellipsoid the best score and the index of its
  /// rotation (best over the seeds whose ellipsoids hold it), elsewhere NaN and -1. fft_shape is
  /// the first seed's grid, tile the target's shape; statistics and mean maps are not kept.
  scan_result<B> maps;
  /// One per seed, in order.
  std::vector<seed_match> seeds;
  /// Rotations scored, summed over the seeds (what the exhaustive scan would spend
  /// rotations.size() on at every voxel).
  std::size_t rotations_scored = 0;
};

namespace detail {

/// The seed's centre voxel and integer semi-axes, or a value_error naming the seed.
inline void seed_box(const seed& s, std::size_t index, const extents& n, std::size_t rotations, std::array<index_t, 3>& centre,
                     std::array<index_t, 3>& half) {
  const std::string who = "fusor::match::seeded_scan: seed " + std::to_string(index) + " ";
  for (int a = 0; a < 3; ++a) {
    const double p = s.position[std::size_t(a)], r = s.radius[std::size_t(a)];
    if (!std::isfinite(p) || !(p > -0.5) || !(p < double(n[a]) - 0.5))
      throw value_error(who + "lies at " + std::to_string(p) + " on axis " + "xyz"[a] + ", outside the target's [0, " +
                        std::to_string(n[a]) + ") voxels");
    if (!std::isfinite(r) || !(r >= 0) || r > double(n[a]))
      throw value_error(who + "has a radius of " + std::to_string(r) + " voxels on axis " + "xyz"[a] +
                        "; expected a finite radius from 0 to the target's length " + std::to_string(n[a]));
    centre[std::size_t(a)] = index_t(std::llround(p));
    half[std::size_t(a)] = index_t(std::floor(r + 1e-9));
  }
  for (const std::uint32_t i : s.rotations)
    if (i >= rotations)
      throw value_error(who + "names rotation " + std::to_string(i) + "; expected an index below the list's " +
                        std::to_string(rotations));
}

/// Whether offset d from a seed's centre lies in its ellipsoid of semi-axes r (an axis of radius
/// 0 holds offset 0 only).
inline bool in_ellipsoid(const std::array<index_t, 3>& d, const vec3& r) {
  double q = 0;
  for (std::size_t a = 0; a < 3; ++a) {
    if (r[a] < 1) {
      if (d[a] != 0) return false;
      continue;
    }
    q += (double(d[a]) / r[a]) * (double(d[a]) / r[a]);
  }
  return q <= 1 + 1e-9;
}

}  // namespace detail

/// Scores each seed's rotations (all of `rotations` where a seed names none) at the voxels of its
/// ellipsoid, as `kind` with `mask`, and keeps per voxel the best score and its rotation's index
/// in `rotations`, and per seed its best. The options are the exhaustive scan's (interpolation,
/// rotation centre, edges, grid, threads, planning, batch, filters, progress over the seeds'
/// rotations); a seed's box is its own tile, so memory_budget is not consulted, and the options a
/// seeded scan does not keep (mean_map, statistics, tile, tile parts) are a value_error.
template <class B>
seeded_scan_result<B> seeded_scan(const array<float, B>& target, const array<float, B>& templ, const array<float, B>& mask,
                                  const std::vector<quaternion>& rotations, const std::vector<seed>& seeds, score kind,
                                  const scan_options& o = {}) {
  using H = detail::host_of_t<B>;
  detail::check_scan_call(target, templ, mask, rotations, o);
  if (o.mean_map || o.statistics || o.tile.size() != 0 || o.tile_parts != 1)
    throw value_error("fusor::match::seeded_scan: a seeded scan keeps no mean map or statistics and is tiled by its seeds; "
                      "expected mean_map and statistics false, no tile and one tile part");
  if (o.batch < 0) throw value_error("fusor::match::seeded_scan: expected a batch >= 0, got " + std::to_string(o.batch));
  const extents& n = target.shape();
  const extents& m = templ.shape();
  std::vector<std::array<index_t, 3>> centres(seeds.size()), halves(seeds.size());
  std::size_t total = 0;
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    detail::seed_box(seeds[i], i, n, rotations.size(), centres[i], halves[i]);
    total += seeds[i].rotations.empty() ? rotations.size() : seeds[i].rotations.size();
  }

  const fft::planning_scope<B> effort(o.planning);
  const bool prepare = detail::prepares_target(kind, o, false);
  const array<float, B> prepared = prepare ? detail::prepared_target<B>(target, kind, o, nullptr) : array<float, B>(extents{0});
  const array<float, B>& t = prepare ? prepared : target;
  const index_t batch = o.batch > 0 ? o.batch : scan_strategy<B>::default_batch;
  detail::scan_progress progress{o, total};

  array<std::uint64_t, H> keys = zeros<std::uint64_t, H>(n);  // key 0: score NaN, rotation -1
  seeded_scan_result<B> res;
  res.seeds.resize(seeds.size());
  res.rotations_scored = total;
  extents first_grid{};
  std::vector<quaternion> own;
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    const seed& s = seeds[i];
    const auto& c = centres[i];
    const auto& h = halves[i];
    // the box [c - h, c + h] cut at the target's low faces by moving it up, so that every seed with
    // the same radius has the same window length and grid (and the transforms' plans are shared);
    // the ellipsoid picks its voxels from the box
    const extents box{2 * h[0] + 1, 2 * h[1] + 1, 2 * h[2] + 1};
    std::array<index_t, 3> low{};
    for (std::size_t a = 0; a < 3; ++a) low[a] = std::max<index_t>(0, c[a] - h[a]);
    const detail::scan_window w = detail::tile_window(n, m, box, low, o.edges, o.grid);
    if (i == 0) first_grid = w.grid;
    const std::vector<quaternion>* list = &rotations;
    const std::uint32_t* indices = nullptr;
    if (!s.rotations.empty()) {
      own.clear();
      for (const std::uint32_t r : s.rotations) own.push_back(rotations[r]);
      list = &own;
      indices = s.rotations.data();
    }
    array<std::uint64_t, B> box_keys(extents{0});
    array<double, B> sums(extents{0});
    double unused_sum = 0, unused_sum2 = 0;
    {
      const detail::scan_plan<B> plan = detail::plan_scan<B>(t, templ, mask, kind, o, w, nullptr);
      const int workers = detail::scan_workers<B>(o, detail::batches_of(list->size(), batch));
      detail::scan_rotations(plan, *list, o, workers, batch, box_keys, sums, unused_sum, unused_sum2, progress, indices);
    }
    const array<std::uint64_t, H> got = to<H>(box_keys);
    const extents& core = w.core;
    seed_match& best = res.seeds[i];
    best.rotations = list->size();
    std::uint64_t best_key = 0;
    for (index_t x = 0; x < core[0]; ++x)
      for (index_t y = 0; y < core[1]; ++y)
        for (index_t z = 0; z < core[2]; ++z) {
          const std::array<index_t, 3> v{low[0] + x, low[1] + y, low[2] + z};
          if (!detail::in_ellipsoid({v[0] - c[0], v[1] - c[1], v[2] - c[2]}, s.radius)) continue;
          const std::uint64_t k = got.data()[(x * core[1] + y) * core[2] + z];
          ++best.voxels;
          std::uint64_t& whole = keys.data()[(v[0] * n[1] + v[1]) * n[2] + v[2]];
          whole = std::max(whole, k);
          if (k > best_key) {
            best_key = k;
            best.position = v;
          }
        }
    if (best_key != 0) {
      best.score = detail::key_score(best_key);
      best.rotation = std::int32_t(detail::key_rotation(best_key));
    }
  }
  res.maps.best_score = to<B>(array<float, H>(
      generator_expr<detail::key_scores, H>{detail::key_scores{keys.data()}, n, contiguous_strides(n)}));
  res.maps.best_rotation = to<B>(array<std::int32_t, H>(
      generator_expr<detail::key_rotations, H>{detail::key_rotations{keys.data()}, n, contiguous_strides(n)}));
  res.maps.mean_score = array<float, B>(extents{0});
  res.maps.fft_shape = first_grid;
  res.maps.tile = n;
  return res;
}

/// The same on an explicit context (a context<B>, or on(stream) on cuda).
template <execution_context E, class B>
seeded_scan_result<B> seeded_scan(const E& exec, const array<float, B>& target, const array<float, B>& templ,
                                  const array<float, B>& mask, const std::vector<quaternion>& rotations,
                                  const std::vector<seed>& seeds, score kind, const scan_options& o = {}) {
  return with_context<B>(exec, [&] { return seeded_scan(target, templ, mask, rotations, seeds, kind, o); });
}

}  // namespace fusor::match
