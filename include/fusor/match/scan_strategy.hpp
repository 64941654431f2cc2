#pragma once
// scan_strategy<B>: how backend B runs the exhaustive scan best (exhaustive_scan.hpp), one
// specialisation per backend (backend/cpu/scan_strategy.hpp, backend/cuda/scan_strategy.hpp).
// Declared only here, as fft_backend<B> is, so the scan names no backend and a backend states its
// choices without touching the scan; a backend that has not stated them cannot instantiate the
// scan (an incomplete type), rather than silently taking another backend's.
//
// Every specialisation provides:
//
//   static constexpr bool pairs_lanes;
//       two rotations share one complex transform pair (the real parts one correlation, the
//       imaginary parts the other's) from a batch of two on: what FFTW runs in about the time of
//       one real pair. The pairs' forward transforms skip the template's zero rows.
//   static constexpr bool prunes_template_zeros;
//       a single rotation's forward transform skips the rows and planes the placed template does
//       not touch (three one-axis transforms instead of one 3-d one): pays where one-axis
//       transforms are cheap library calls (FFTW), not where each call is a kernel launch.
//   static constexpr bool fuses_statistics;
//       the key map and the statistics' sums are updated by one pass a row at a time (a host loop
//       reads the maps once), instead of one thread per voxel for the keys and a reduction after.
//   static constexpr index_t default_batch;
//       the rotations scored together when scan_options::batch is 0.
//   static int workers(int threads, std::size_t batches);
//       how many host threads the batches are dealt to (threads: scan_options::threads, 0 for
//       the backend's own count), at least 1 and at most `batches`.
//   template <class Body> static void run_team(int workers, Body&& body);
//       calls body(thread, team) once on each of `team` threads (team <= workers: the threads
//       that actually started), and returns when every call has; body does not throw.
//
// scan_strategy_defaults is what a backend whose parallelism lies inside each call would state;
// a new backend may derive its specialisation from it.
#include <cstddef>

#include "../core/config.hpp"

namespace fusor::match {

template <class B>
struct scan_strategy;

/// One worker on the calling thread, real transforms of whole grids, a batch of one rotation.
struct scan_strategy_defaults {
  static constexpr bool pairs_lanes = false;
  static constexpr bool prunes_template_zeros = false;
  static constexpr bool fuses_statistics = false;
  static constexpr index_t default_batch = 1;
  static int workers(int /*threads*/, std::size_t /*batches*/) { return 1; }
  template <class Body>
  static void run_team(int /*workers*/, Body&& body) {
    body(0, 1);
  }
};

}  // namespace fusor::match
