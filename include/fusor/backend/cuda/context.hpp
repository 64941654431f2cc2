#pragma once
// context<cuda>: what the cuda backend's work on one thread runs with (see core/context.hpp):
// the stream its kernels, copies and stream-ordered allocations are queued on, besides the
// settings every context has. Host-safe (the CUDA runtime's headers only).
#include <cuda_runtime_api.h>

#include "../../core/backend.hpp"
#include "../../core/context.hpp"

namespace fusor {

/// deterministic (from context_settings) on cuda changes nothing: fusor's kernels already give
/// the same bits from run to run (a reduction's partial results are combined in a fixed order,
/// no floating-point atomics), and so do cuFFT's and cuBLAS's default modes. It is kept so that
/// code generic over the backend can set it.
template <>
struct context<cuda> : context_settings<cuda> {
  /// The stream array operations are queued on (the default: cudaStreamPerThread, a stream of
  /// this host thread's own).
  cudaStream_t stream = cudaStreamPerThread;
};

}  // namespace fusor
