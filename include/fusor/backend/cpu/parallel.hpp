#pragma once
// Threading for the cpu executor: OpenMP when the build enables it, a runtime setting (never a
// type-changing macro). Work below the threshold stays on the calling thread, where starting a
// team costs more than it saves.
#include <algorithm>
#include <atomic>

#include "../../core/config.hpp"
#include "context.hpp"

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace fusor {

namespace detail {
inline std::atomic<int> cpu_threads{0};  // 0: OpenMP's default (OMP_NUM_THREADS or all cores)
inline std::atomic<index_t> cpu_parallel_threshold{index_t(1) << 17};
}  // namespace detail

/// Threads used by cpu loops above the size threshold, for the whole process (0 restores the
/// default); a thread's context<cpu>::threads caps it for the loops that thread starts.
inline void set_num_threads(int n) { detail::cpu_threads = std::max(0, n); }
/// The threads a loop started on this thread uses: the process-wide setting, capped by this
/// thread's context<cpu>::threads.
inline int num_threads() {
#if defined(_OPENMP)
  const int set = detail::cpu_threads.load();
  const int n = set > 0 ? set : omp_get_max_threads();
  const int cap = current_context<cpu>().threads;
  return cap > 0 && cap < n ? cap : n;
#else
  return 1;
#endif
}
/// Element count from which a statement is split over threads.
inline void set_parallel_threshold(index_t elements) { detail::cpu_parallel_threshold = std::max<index_t>(1, elements); }
inline index_t parallel_threshold() { return detail::cpu_parallel_threshold.load(); }

namespace detail {
/// Runs body(thread, nthreads) on `threads` threads (inline when 1).
template <class Body>
void run_team(int threads, Body&& body) {
#if defined(_OPENMP)
  if (threads > 1) {
#pragma omp parallel num_threads(threads)
    body(omp_get_thread_num(), omp_get_num_threads());
    return;
  }
#endif
  body(0, 1);
}
/// How many threads a statement over `work` elements deserves.
inline int threads_for(index_t work) { return work >= parallel_threshold() ? num_threads() : 1; }

/// The part [begin, end) of [0, n) that thread t of nt handles, cut at multiples of `grain`.
inline std::pair<index_t, index_t> split_range(index_t n, int t, int nt, index_t grain = 1) {
  const index_t units = (n + grain - 1) / grain;
  const index_t b = units * t / nt * grain, e = units * (t + 1) / nt * grain;
  return {std::min(b, n), std::min(e, n)};
}
}  // namespace detail

}  // namespace fusor
