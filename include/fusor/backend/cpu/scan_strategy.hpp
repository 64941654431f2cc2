#pragma once
// scan_strategy<cpu> (match/scan_strategy.hpp): the rotations dealt to an OpenMP team, two
// rotations per complex transform pair, the template's zero rows skipped, keys and statistics in
// one row pass.
//
// Why each: FFTW's complex transform of a grid costs about what its real inverse alone does (the
// r2c/c2r codelets' extra passes), so a pair of rotations in one complex pair halves the scan's
// transforms; a one-axis FFTW call over the touched rows is a cheap loop where a whole 3-d r2c
// would transform zeros (0.65 of the r2c's time, 24^3 on 140^3); the threads are the
// parallelism, each worker's transforms and loops single-threaded, so the default batch is one
// pair.
#include <algorithm>
#include <cstddef>

#include "../../core/backend.hpp"
#include "../../match/scan_strategy.hpp"
#include "parallel.hpp"

namespace fusor::match {

template <>
struct scan_strategy<cpu> {
  static constexpr bool pairs_lanes = true;
  static constexpr bool prunes_template_zeros = true;
  static constexpr bool fuses_statistics = true;
  static constexpr index_t default_batch = 2;
  /// fusor's thread count (set_num_threads) unless the scan asks for its own, one per batch at most.
  static int workers(int threads, std::size_t batches) {
#if defined(_OPENMP)
    const int n = threads > 0 ? threads : num_threads();
    return int(std::max<std::size_t>(1, std::min<std::size_t>(std::size_t(std::max(n, 1)), batches)));
#else
    (void)threads;
    (void)batches;
    return 1;
#endif
  }
  /// An OpenMP team; it may be smaller than asked (a scan inside a parallel region, a thread limit,
  /// dynamic teams), and body is told the team that runs.
  template <class Body>
  static void run_team(int workers, Body&& body) {
    fusor::detail::run_team(workers, body);
  }
};

}  // namespace fusor::match
