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
//
// The pieces, a file each: scan_options.hpp (what the caller says and gets back), scan_windows.hpp
// (whole target and tiles), scan_plan.hpp (what every worker reads), scan_worker.hpp (a batch of
// rotations scored), scan_memory.hpp (the estimate that decides tiles and batch) and
// scan_strategy.hpp (the backend's choices: pairing, pruning, batch, workers, the team).
#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "../core/context.hpp"
#include "../core/create.hpp"
#include "../core/reduce.hpp"
#include "../core/slice.hpp"
#include "../fft/backend_fwd.hpp"
#include "scan_memory.hpp"
#include "scan_options.hpp"
#include "scan_plan.hpp"
#include "scan_strategy.hpp"
#include "scan_windows.hpp"
#include "scan_worker.hpp"

namespace fusor::match {

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

/// While it lives, the loops backend B starts on this thread use at most n threads (n >= 1; 0:
/// the cap already there): with fft::threads_scope, scan_options::threads bounds the whole scan,
/// not only how its rotations are dealt. A setter of this thread's context<B>::threads that only
/// lowers it: a caller's context that caps the threads keeps its cap; a backend without the
/// setting ignores it.
template <class B>
class loop_threads_scope {
 public:
  explicit loop_threads_scope(int n) {
    if constexpr (requires { current_context<B>().threads; }) {
      int& cap = current_context<B>().threads;
      previous_ = cap;
      if (n > 0) cap = cap > 0 ? std::min(cap, n) : n;
    }
  }
  ~loop_threads_scope() {
    if constexpr (requires { current_context<B>().threads; }) current_context<B>().threads = previous_;
  }
  loop_threads_scope(const loop_threads_scope&) = delete;
  loop_threads_scope& operator=(const loop_threads_scope&) = delete;

 private:
  int previous_ = 0;
};

/// Every rotation scored on one plan (a whole target or a tile), in batches of `batch`: the
/// merged key map of the plan's scored box, its sums for the mean, and the sums for the
/// statistics. More than one worker: the batches are dealt to the backend's team
/// (scan_strategy<B>::run_team), batch b to thread b mod team. The keys record rotation i as
/// index i, or as indices[i] where given (a seed's rotations, seeded_scan.hpp).
template <class B>
void scan_rotations(const scan_plan<B>& plan, const std::vector<quaternion>& rotations, const scan_options& o, int workers,
                    index_t batch, array<std::uint64_t, B>& keys, array<double, B>& sums, double& score_sum,
                    double& score_sum2, scan_progress& progress, const std::uint32_t* indices = nullptr) {
  const std::size_t n = rotations.size(), k = std::size_t(batch), batches = batches_of(n, batch);
  const auto run_batch = [&](scan_worker<B>& w, std::size_t b) {
    const std::size_t first = b * k, count = std::min(k, n - first);
    w.run(rotations.data() + first, std::uint32_t(first), index_t(count), indices ? indices + first : nullptr);
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
  // the team may be smaller than asked (a scan inside a parallel region, a thread limit): the
  // batches are dealt to the team that actually runs
  std::vector<std::unique_ptr<scan_worker<B>>> done(static_cast<std::size_t>(workers));
  std::atomic<bool> stop{false};
  std::exception_ptr failure;
  std::mutex failure_lock;
  // the team's threads run with the caller's context (its memory hook, its budget, its stream)
  const context<B> caller = current_context<B>();
  scan_strategy<B>::run_team(workers, [&](int t, int team) {
    try {
      const context_scope<B> as_caller(caller);
      const fft::planning_scope<B> thread_effort(o.planning);
      // the team is the parallelism: each transform and loop on its own thread
      const fft::threads_scope<B> one_thread(1);
      const loop_threads_scope<B> one_loop_thread(1);
      auto w = std::make_unique<scan_worker<B>>(plan, batch, o.mean_map, o.statistics);
      for (std::size_t b = std::size_t(t); b < batches && !stop.load(std::memory_order_relaxed); b += std::size_t(team))
        run_batch(*w, b);
      done[std::size_t(t)] = std::move(w);
    } catch (...) {
      stop = true;  // the other threads stop at their next batch
      const std::lock_guard<std::mutex> lock(failure_lock);
      if (!failure) failure = std::current_exception();
    }
  });
  if (failure) std::rethrow_exception(failure);
  for (auto& w : done)  // in thread order: the mean's sums add up the same way for a given team
    if (w) merge(*w);
}

/// The checks every scan makes before any work: shapes, finite volumes, rotations, options.
template <class B>
void check_scan_call(const array<float, B>& target, const array<float, B>& templ, const array<float, B>& mask,
                     const std::vector<quaternion>& rotations, const scan_options& o) {
  check_scan_input(target.shape(), templ.shape(), mask.shape(), rotations.size());
  for (const quaternion& q : rotations) to_matrix(q);  // a zero or non-finite quaternion fails before any work
  require_finite(target, "target");
  require_finite(templ, "template");
  require_finite(mask, "mask");
  if (!(o.overlap_ratio >= 0.0 && o.overlap_ratio <= 1.0))
    throw value_error("fusor::match::scan: expected an overlap_ratio in [0, 1], got " + std::to_string(o.overlap_ratio));
  check_rotation_center(o.rotation_center, templ.shape());
}

template <class B>
scan_result<B> scan_tiles(const array<float, B>& target, const array<float, B>& templ, const array<float, B>& mask,
                          const std::vector<quaternion>& rotations, score kind, const scan_options& o,
                          const array<float, B>* target_mask) {
  check_scan_call(target, templ, mask, rotations, o);
  if (target_mask && target_mask->shape() != target.shape())
    throw shape_error("fusor::match::scan: expected a target mask of the target's shape " + to_string(target.shape()) +
                      ", got " + to_string(target_mask->shape()));
  if (target_mask) require_finite(*target_mask, "target mask");
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
    const scan_plan<B> plan = plan_scan(t, templ, mask, kind, o, whole_window(s, templ.shape(), o.edges, o.grid), target_mask);
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
          const scan_window w = est.tile == s ? whole_window(s, templ.shape(), o.edges, o.grid)  // one tile, one part
                                              : tile_window(s, templ.shape(), T, {a0, a1, a2}, o.edges, o.grid);
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

/// Both on an explicit context (a context<B>, or on(stream) on cuda): the scan runs as if it
/// were the thread's current context, and its team of threads runs with it too.
template <execution_context E, class B>
scan_result<B> scan(const E& exec, const array<float, B>& target, const array<float, B>& templ,
                    const array<float, B>& mask, const std::vector<quaternion>& rotations, score kind,
                    const scan_options& o = {}) {
  return with_context<B>(exec, [&] { return scan(target, templ, mask, rotations, kind, o); });
}
template <execution_context E, class B>
scan_result<B> scan(const E& exec, const array<float, B>& target, const array<float, B>& templ,
                    const array<float, B>& mask, const std::vector<quaternion>& rotations, score kind,
                    const scan_options& o, const array<float, B>& target_mask) {
  return with_context<B>(exec, [&] { return scan(target, templ, mask, rotations, kind, o, target_mask); });
}

}  // namespace fusor::match
