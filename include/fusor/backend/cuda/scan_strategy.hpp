#pragma once
// scan_strategy<cuda> (match/scan_strategy.hpp): one host thread drives the device, a batch of
// rotations goes through each cuFFT call (plan-many): the parallelism is inside every call.
//
// Why: a cuFFT call is one kernel launch or more, so the pruned one-axis transforms (three calls
// for what one 3-d plan does) and the paired complex transforms (FFTW's trick) are not taken; a
// thread per voxel updates the key map with coalesced reads, the statistics are one reduction
// after it. The batch of 8 is a choice, not a measurement: the cuda scan has not been timed yet.
#include "../../match/scan_strategy.hpp"
#include "traits.hpp"

namespace fusor::match {

template <>
struct scan_strategy<cuda> : scan_strategy_defaults {
  static constexpr index_t default_batch = 8;
};

}  // namespace fusor::match
