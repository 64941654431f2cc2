#pragma once
// context<cuda>: what the cuda backend's work on one thread runs with (see core/context.hpp):
// the stream its kernels, copies and stream-ordered allocations are queued on, a memory budget
// and a memory hook. Host-safe (the CUDA runtime's headers only).
#include <cuda_runtime_api.h>

#include <cstddef>

#include "../../core/backend.hpp"
#include "../../core/context.hpp"

namespace fusor {

template <>
struct context<cuda> {
  using backend_type = cuda;
  /// The stream array operations are queued on (the default: cudaStreamPerThread, a stream of
  /// this host thread's own).
  cudaStream_t stream = cudaStreamPerThread;
  /// Results the same bit for bit from run to run. fusor's kernels already are (a reduction's
  /// partial results are combined in a fixed order, no floating-point atomics) and cuFFT's and
  /// cuBLAS's default modes too, so on cuda the switch changes nothing; it is kept so that code
  /// generic over the backend can set it.
  bool deterministic = false;
  /// The most bytes live cuda arrays (of the whole process, all devices) may hold after an
  /// allocation made under this context; beyond it the allocation throws memory_limit_error
  /// before any memory is taken (0: no limit).
  std::size_t memory_limit = 0;
  /// Told of every cuda allocation and release this thread makes (see memory_hook).
  memory_hook on_memory{};

  /// This context as the thread's current one for as long as the returned scope lives.
  context_scope<cuda> enter() const;
};

inline context_scope<cuda> context<cuda>::enter() const { return context_scope<cuda>(*this); }

}  // namespace fusor
