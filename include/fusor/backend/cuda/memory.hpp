#pragma once
// Device memory, streams and device selection for array<T, cuda> (host-safe: any host compiler
// with the CUDA runtime's headers; evaluation needs nvcc, see <fusor/cuda.cuh>).
//
// Memory comes from the device's stream-ordered pool (cudaMallocAsync/cudaFreeAsync) with its
// release threshold raised to "never": a freed block stays in the pool and the next allocation
// of a similar size is served from it without a driver call or a device synchronisation, which
// is what PyTorch's caching allocator does. cuda_free_cache() hands the cached blocks back.
//
// Streams: every array operation runs on the calling thread's current stream, by default
// cudaStreamPerThread (each host thread gets its own stream, so threads do not serialise on the
// legacy default stream). cuda_stream_scope switches it for a block; cuda_synchronize() waits
// for it. Transfers to the host wait for the work queued before them on that stream.
#include <cuda_runtime_api.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <mutex>
#include <string>
#include <utility>

#include "../../core/backend.hpp"
#include "../../core/config.hpp"
#include "context.hpp"
#include "error.hpp"
#include "traits.hpp"

namespace fusor {

// ---- devices ----------------------------------------------------------------------------------
/// Number of CUDA devices visible to this process (0 when there is no device or no driver).
inline int cuda_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}
/// The device this thread's arrays are allocated on and its kernels run on.
inline int cuda_device() {
  int d = 0;
  FUSOR_CUDA_CHECK(cudaGetDevice(&d));
  return d;
}
/// Selects the device for this thread (cudaSetDevice); arrays already made stay where they are.
inline void set_cuda_device(int device) {
  const int n = cuda_device_count();
  if (device < 0 || device >= n)
    throw cuda_error(int(cudaErrorInvalidDevice), "cudaSetDevice",
                     "fusor: set_cuda_device(" + std::to_string(device) + ") needs a device number in [0, " +
                         std::to_string(n) + "); this machine has " + std::to_string(n) + " CUDA device(s)");
  FUSOR_CUDA_CHECK(cudaSetDevice(device));
}
/// The current device's name, e.g. "NVIDIA H100 80GB HBM3".
inline std::string cuda_device_name() {
  cudaDeviceProp p{};
  FUSOR_CUDA_CHECK(cudaGetDeviceProperties(&p, cuda_device()));
  return p.name;
}

// ---- streams ----------------------------------------------------------------------------------
/// The stream this thread's array operations are queued on (its context<cuda>::stream).
inline cudaStream_t current_cuda_stream() { return current_context<cuda>().stream; }

/// Waits until the work queued on this thread's current stream has finished (and reports an
/// asynchronous kernel failure as cuda_error).
inline void cuda_synchronize() { FUSOR_CUDA_CHECK(cudaStreamSynchronize(current_cuda_stream())); }

/// An owned, non-blocking CUDA stream.
class cuda_stream {
 public:
  cuda_stream() { FUSOR_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  cuda_stream(cuda_stream&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  cuda_stream& operator=(cuda_stream&& o) noexcept {
    if (this != &o) {
      reset();
      s_ = std::exchange(o.s_, nullptr);
    }
    return *this;
  }
  cuda_stream(const cuda_stream&) = delete;
  cuda_stream& operator=(const cuda_stream&) = delete;
  ~cuda_stream() { reset(); }
  cudaStream_t get() const { return s_; }
  void synchronize() const { FUSOR_CUDA_CHECK(cudaStreamSynchronize(s_)); }

 private:
  void reset() noexcept {
    if (s_) cudaStreamDestroy(s_);  // pending work still completes; the handle is released after it
    s_ = nullptr;
  }
  cudaStream_t s_ = nullptr;
};

/// While alive, this thread's array operations (allocations, kernels, copies) go to `s`: a
/// setter of this thread's context<cuda>::stream. Arrays made inside the scope are freed in
/// stream order on whatever stream is current when they die; synchronise before letting one
/// outlive its stream's work on another stream.
class cuda_stream_scope {
 public:
  explicit cuda_stream_scope(cudaStream_t s) : prev_(std::exchange(current_context<cuda>().stream, s)) {}
  explicit cuda_stream_scope(const cuda_stream& s) : cuda_stream_scope(s.get()) {}
  cuda_stream_scope(const cuda_stream_scope&) = delete;
  cuda_stream_scope& operator=(const cuda_stream_scope&) = delete;
  ~cuda_stream_scope() { current_context<cuda>().stream = prev_; }

 private:
  cudaStream_t prev_;
};

/// This thread's context with its stream replaced by `s`, for the calls that take a context
/// explicitly: `fft::rfftn_into(on(stream), out, x)`.
inline context<cuda> on(cudaStream_t s) {
  context<cuda> c = current_context<cuda>();
  c.stream = s;
  return c;
}
inline context<cuda> on(const cuda_stream& s) { return on(s.get()); }

namespace detail {
/// Counts the times a backend workspace that kernels are launched with (the whole-array
/// reductions') was replaced: a CUDA graph captured before that points into freed memory.
inline std::atomic<std::uint64_t>& cuda_workspace_generation() {
  static std::atomic<std::uint64_t> g{0};
  return g;
}
}  // namespace detail

// ---- memory -----------------------------------------------------------------------------------
/// Device memory of fusor's arrays, in bytes (all devices together for allocated and peak; the
/// current device's pool for reserved).
struct cuda_memory_info {
  std::size_t allocated = 0;  ///< bytes in live cuda arrays
  std::size_t reserved = 0;   ///< bytes the current device's pool holds (live + cached)
  std::size_t peak = 0;       ///< the most `allocated` has been since the last reset
};

namespace detail {
struct cuda_counters {
  std::atomic<std::size_t> allocated{0}, peak{0};
  static cuda_counters& instance() {
    static cuda_counters c;
    return c;
  }
  void add(std::size_t bytes) {
    const std::size_t now = allocated += bytes;
    std::size_t p = peak.load(std::memory_order_relaxed);
    while (now > p && !peak.compare_exchange_weak(p, now, std::memory_order_relaxed)) {
    }
  }
};

/// The current device's default pool, looked up and configured (to keep freed blocks) once per
/// device; every allocation asks for it, so the handle is cached.
inline cudaMemPool_t device_pool() {
  constexpr int max_devices = 64;
  static std::once_flag once[max_devices];
  static cudaMemPool_t pools[max_devices] = {};
  const int dev = cuda_device();
  if (dev >= max_devices)
    throw backend_error("fusor: device pools are kept for devices 0.." + std::to_string(max_devices - 1) +
                        ", got device " + std::to_string(dev));
  std::call_once(once[dev], [dev] {
    cudaMemPool_t pool{};
    FUSOR_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, dev));
    std::uint64_t keep = std::numeric_limits<std::uint64_t>::max();
    FUSOR_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
    pools[dev] = pool;
  });
  return pools[dev];
}

inline std::size_t pool_reserved(cudaMemPool_t pool) {
  std::uint64_t v = 0;
  FUSOR_CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &v));
  return std::size_t(v);
}

inline void* device_allocate(std::size_t bytes) {
  cudaMemPool_t pool = device_pool();
  const cudaStream_t s = current_cuda_stream();
  void* p = nullptr;
  cudaError_t st = cudaMallocAsync(&p, bytes, s);
  if (st == cudaErrorMemoryAllocation) {
    // the pool may hold freed blocks of other sizes: hand them back and try once more
    cudaGetLastError();
    cudaDeviceSynchronize();
    cudaMemPoolTrimTo(pool, 0);
    st = cudaMallocAsync(&p, bytes, s);
  }
  if (st == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    std::size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    throw_cuda(st, "cudaMallocAsync",
               "out of device memory: requested " + std::to_string(bytes) + " bytes, " + std::to_string(free_b) +
                   " bytes free of " + std::to_string(total_b) + " on device " + std::to_string(cuda_device()) +
                   " (fusor's live arrays hold " + std::to_string(cuda_counters::instance().allocated.load()) +
                   " bytes)");
  }
  if (st != cudaSuccess) throw_cuda(st, "cudaMallocAsync", "requested " + std::to_string(bytes) + " bytes");
  cuda_counters::instance().add(bytes);
  return p;
}

template <class T>
std::size_t device_bytes(index_t n) {
  if (n < 0 || std::size_t(n) > (std::numeric_limits<std::size_t>::max() / 2) / sizeof(T))
    throw backend_error("fusor: cannot allocate " + std::to_string(n) + " elements of " + std::to_string(sizeof(T)) +
                        " bytes on the cuda device (size overflows)");
  return std::size_t(n) * sizeof(T);
}

// Copies queued on the current stream; a copy that ends in host memory (or reads pageable host
// memory the caller may free next) waits for the stream.
inline void device_copy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind) {
  const cudaStream_t s = current_cuda_stream();
  FUSOR_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, s));
  if (kind != cudaMemcpyDeviceToDevice) FUSOR_CUDA_CHECK(cudaStreamSynchronize(s));
}
}  // namespace detail

/// Bytes in live cuda arrays, the current device pool's reservation, and the peak.
inline cuda_memory_info cuda_memory_stats() {
  auto& c = detail::cuda_counters::instance();
  return {c.allocated.load(), detail::pool_reserved(detail::device_pool()), c.peak.load()};
}
/// Returns the current device pool's cached (freed) blocks to the driver; waits for the device
/// first so that blocks freed by queued work are included. Live arrays are not affected.
inline void cuda_free_cache() {
  FUSOR_CUDA_CHECK(cudaDeviceSynchronize());
  FUSOR_CUDA_CHECK(cudaMemPoolTrimTo(detail::device_pool(), 0));
}
/// Starts measuring the peak again from the bytes live now.
inline void reset_cuda_peak_memory() {
  auto& c = detail::cuda_counters::instance();
  c.peak = c.allocated.load();
}

template <>
struct backend_memory<cuda> {
  /// Bytes new arrays could still get on the current device: its free memory (cudaMemGetInfo),
  /// which counts the pool's released blocks as free once trimmed.
  static std::size_t available() {
    std::size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
      cudaGetLastError();
      return 0;
    }
    return free_b;
  }
  template <class T>
  static T* allocate(index_t n) {
    const std::size_t bytes = detail::device_bytes<T>(n);
    const context<cuda>& ctx = current_context<cuda>();
    if (ctx.memory_limit > 0)
      detail::check_memory_limit(ctx.memory_limit, bytes, detail::cuda_counters::instance().allocated.load(), "cuda");
    void* p = detail::device_allocate(bytes);
    FUSOR_COUNT_ALLOCATION();
    ctx.on_memory({memory_event::allocation, bytes, p});
    return static_cast<T*>(p);
  }
  template <class T>
  static void deallocate(T* p, index_t n) noexcept {
    const std::size_t bytes = std::size_t(n) * sizeof(T);
    current_context<cuda>().on_memory({memory_event::release, bytes, p});
    // stream-ordered: the block returns to the pool once the work queued before it is done
    if (cudaFreeAsync(p, current_cuda_stream()) == cudaSuccess)
      detail::cuda_counters::instance().allocated -= bytes;
    else
      cudaGetLastError();  // e.g. the runtime is already shutting down at exit
  }
  template <class T>
  static void copy_to_host(T* dst, const T* src, index_t n) {
    detail::device_copy(dst, src, std::size_t(n) * sizeof(T), cudaMemcpyDeviceToHost);
  }
  template <class T>
  static void copy_from_host(T* dst, const T* src, index_t n) {
    detail::device_copy(dst, src, std::size_t(n) * sizeof(T), cudaMemcpyHostToDevice);
  }
  template <class T>
  static void copy_within(T* dst, const T* src, index_t n) {
    detail::device_copy(dst, src, std::size_t(n) * sizeof(T), cudaMemcpyDeviceToDevice);
  }
};

}  // namespace fusor

#include "graph.hpp"  // (work_graph<cuda>: wherever cuda arrays are, ad::compile replays them as a graph)
