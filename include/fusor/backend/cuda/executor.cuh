#pragma once
// executor<cuda>: one kernel per assignment. The iteration space is coalesced as on the cpu; a
// statement that collapses to one dimension runs a flat grid-stride kernel, which reads and
// writes 4 consecutive elements per step with aligned vector loads when every operand is
// contiguous and aligned; anything else (broadcasts, transposes, slices) runs a kernel that
// walks the multi-index. Reductions live in reduce.cuh. Needs nvcc (this is a .cuh).
#if !defined(__CUDACC__)
#error "fusor/backend/cuda/executor.cuh needs nvcc: compile this translation unit as CUDA (a .cu file)"
#endif

#include <algorithm>
#include <cstdint>
#include <string>

#include "../../core/assign.hpp"
#include "evaluator.cuh"
#include "memory.hpp"

#if defined(FUSOR_INSTRUMENT)
namespace fusor::instrument {
inline std::atomic<long> kernel_launches{0};  ///< kernels fusor launched (test builds)
}  // namespace fusor::instrument
#define FUSOR_COUNT_LAUNCH() (++::fusor::instrument::kernel_launches)
#else
#define FUSOR_COUNT_LAUNCH() ((void)0)
#endif

namespace fusor::detail::cuda_exec {

using namespace cuda_eval;

inline constexpr int block_threads = 256;
/// Kernel parameters may take 32764 bytes (CUDA >= 12.1 on Volta and later); fusor keeps a margin
/// for the other arguments.
inline constexpr std::size_t max_expression_bytes = 32000;

template <class Ev>
constexpr void check_parameter_size() {
  static_assert(sizeof(Ev) <= max_expression_bytes,
                "fusor: this expression has too many operands to pass to one CUDA kernel (its tree exceeds "
                "the 32 KiB kernel-parameter limit); evaluate part of it first with eval()");
}

inline int sm_count() {
  constexpr int max_devices = 64;
  static std::atomic<int> cached[max_devices] = {};
  const int dev = cuda_device();
  if (dev < max_devices && cached[dev].load() > 0) return cached[dev].load();
  int n = 0;
  FUSOR_CUDA_CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev));
  if (dev < max_devices) cached[dev] = n;
  return n;
}

/// Blocks for a grid-stride loop over `work` items: enough to fill every SM (8 blocks of 256
/// threads each = full occupancy on Hopper), never more than the work needs.
inline unsigned grid_for(index_t work) {
  const index_t need = (work + block_threads - 1) / block_threads;
  const index_t cap = index_t(sm_count()) * 8;
  return unsigned(std::max<index_t>(1, std::min(need, cap)));
}

inline void check_launch(const char* what) {
  const cudaError_t st = cudaGetLastError();
  if (st != cudaSuccess) throw_cuda(st, what);
  FUSOR_COUNT_LAUNCH();
}

__device__ inline index_t global_thread() { return index_t(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ inline index_t grid_threads() { return index_t(gridDim.x) * blockDim.x; }

/// The coalesced dimensions and the destination's strides in them.
struct nd_space {
  index_t dims[max_rank];
  index_t dst[max_rank];
  int rank;
};

template <int N, class D, class Ev>
__global__ void __launch_bounds__(block_threads) flat_vector_kernel(D* out, Ev ev, index_t n) {
  const index_t stride = grid_threads(), chunks = n / N;
  for (index_t c = global_thread(); c < chunks; c += stride) {
    const auto in = ev.template load<N>(c * N);
    chunk<D, N> o;
    for (int k = 0; k < N; ++k) o.v[k] = convert_element<D>(in.v[k]);
    *reinterpret_cast<chunk<D, N>*>(out + c * N) = o;
  }
  for (index_t i = chunks * N + global_thread(); i < n; i += stride) out[i] = convert_element<D>(ev.get(flat_pos{i}));
}

template <class D, class Ev>
__global__ void __launch_bounds__(block_threads) flat_kernel(D* out, index_t ds, Ev ev, index_t n) {
  for (index_t i = global_thread(); i < n; i += grid_threads()) out[i * ds] = convert_element<D>(ev.get(flat_pos{i}));
}

template <class D, class Ev>
__global__ void __launch_bounds__(block_threads) nd_kernel(D* out, nd_space s, Ev ev, index_t n) {
  index_t idx[max_rank];
  for (index_t i = global_thread(); i < n; i += grid_threads()) {
    unravel(i, idx, s.dims, s.rank);
    index_t off = 0;
    for (int k = 0; k < s.rank; ++k) off += idx[k] * s.dst[k];
    out[off] = convert_element<D>(ev.get(nd_pos{idx, s.rank}));
  }
}

template <class T, class E>
void assign(const leaf<T, cuda>& dst, const E& e) {
  using D = dev_t<T>;
  auto ev = make_evaluator(e, dst.shape);
  using Ev = decltype(ev);
  check_parameter_size<Ev>();
  nd_space s{};
  for (int k = 0; k < dst.shape.size(); ++k) s.dst[k] = dst.strides[k];
  auto ops = stride_table<1>(ev);
  ops[0] = s.dst;
  const loop_space sp = coalesce(dst.shape.data(), dst.shape.size(), ops);
  const index_t n = dst.shape.numel();
  D* out = reinterpret_cast<D*>(dst.data);
  const cudaStream_t stream = current_cuda_stream();
  FUSOR_COUNT_PASS();
  if (sp.rank == 1) {
    constexpr int N = 4;
    bool vec = s.dst[0] == 1 && reinterpret_cast<std::uintptr_t>(out) % alignof(chunk<D, N>) == 0;
    ev.visit_leaves([&](const void* p, index_t s0, std::size_t align) {
      vec = vec && (s0 == 0 || (s0 == 1 && reinterpret_cast<std::uintptr_t>(p) % align == 0));
    });
    if (vec) flat_vector_kernel<N><<<grid_for((n + N - 1) / N), block_threads, 0, stream>>>(out, ev, n);
    else flat_kernel<<<grid_for(n), block_threads, 0, stream>>>(out, s.dst[0], ev, n);
  } else {
    s.rank = sp.rank;
    for (int k = 0; k < sp.rank; ++k) s.dims[k] = sp.dims[k];
    nd_kernel<<<grid_for(n), block_threads, 0, stream>>>(out, s, ev, n);
  }
  check_launch("fusor elementwise kernel launch");
}

}  // namespace fusor::detail::cuda_exec

#include "reduce.cuh"

namespace fusor {

template <>
inline constexpr bool has_executor<cuda> = true;

template <>
struct executor<cuda> {
  /// dst = e in one kernel, where e's shape broadcasts to dst's (checked by the caller).
  template <class T, class E>
  static void assign(const leaf<T, cuda>& dst, const E& e) {
    detail::cuda_exec::assign(dst, e);
  }
  /// Reduces all elements of e with Op in one kernel; returns Op's wide accumulator (waits for it).
  template <class Op, class E>
  static auto reduce(const E& e) {
    return detail::cuda_exec::reduce_all<Op>(e);
  }
  /// *dst (device memory) = finish(reduce<Op>(e)), queued on the current stream and never read
  /// back (the reduction's own kernel writes it): for work that must stay on the device, such as
  /// a captured CUDA graph. reduce's value bit for bit; of nothing, finish of Op's identity (as on
  /// cpu), written by one assignment.
  template <class Op, class R, class E, class Finish>
  static void reduce_into(R* dst, const E& e, const Finish& finish) {
    if (expr_shape(e).numel() == 0) {
      using W = typename Op::template wide<value_t<E>>;
      assign(leaf<R, cuda>{dst, extents{}, extents{}}, scalar_expr<R>{finish(Op::template identity<W>())});
      return;
    }
    detail::cuda_exec::reduce_all_into<Op>(dst, e, finish);
  }
  template <class Op, class T, class E>
  static void reduce_axis(const leaf<T, cuda>& out, const E& e, int axis) {
    detail::cuda_exec::reduce_axis<Op>(out, e, axis);
  }
  template <bool Max, class E>
  static index_t arg_extreme(const E& e) {
    return detail::cuda_exec::arg_extreme_all<Max>(e);
  }
  template <bool Max, class E>
  static void arg_extreme_axis(const leaf<std::int64_t, cuda>& out, const E& e, int axis) {
    detail::cuda_exec::arg_extreme_axis<Max>(out, e, axis);
  }
};

}  // namespace fusor
