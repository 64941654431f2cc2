#pragma once
// Reductions on the device, consuming an expression in the same pass (sum(a * b) reads a and b
// once and writes nothing but one partial per block). Whole-array: one kernel; each block folds
// a grid-stride range into Op's wide accumulator (float sums in double, as on the cpu), writes
// its partial, and the last block to finish folds the partials (a ticket counter, so no second
// launch). Along an axis: one kernel; a warp per output element when the axis is innermost
// (the warp reads the row coalesced), a thread per output element otherwise (neighbouring
// threads read neighbouring columns).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "../../core/reduce_ops.hpp"

namespace fusor::detail::cuda_exec {

/// Op folded over a block's values in shared memory (any accumulator type, complex included).
template <class Op, class W>
__device__ W block_reduce(W v) {
  __shared__ __align__(16) unsigned char raw[block_threads * sizeof(W)];
  W* s = reinterpret_cast<W*>(raw);
  s[threadIdx.x] = v;
  __syncthreads();
  for (unsigned off = blockDim.x / 2; off > 0; off >>= 1) {
    if (threadIdx.x < off) s[threadIdx.x] = Op::combine(s[threadIdx.x], s[threadIdx.x + off]);
    __syncthreads();
  }
  const W r = s[0];
  __syncthreads();
  return r;
}

/// (value, flat index) for argmax/argmin: NaN wins (the first one), then the extreme value,
/// then the lower index, so the result does not depend on the order partials meet.
template <class V>
struct arg_pair {
  V v;
  index_t i;
};
template <class W>
inline constexpr bool is_arg_pair = false;
template <class V>
inline constexpr bool is_arg_pair<arg_pair<V>> = true;
template <bool Max>
struct arg_op {
  template <class W>
  FUSOR_HD static W identity() {
    return W{{}, -1};
  }
  template <class W>
  FUSOR_HD static W combine(const W& a, const W& b) {
    if (b.i < 0) return a;
    if (a.i < 0) return b;
    const bool an = is_nan(a.v), bn = is_nan(b.v);
    if (an || bn) return (an && bn) ? (b.i < a.i ? b : a) : (bn ? b : a);
    if (Max ? b.v > a.v : b.v < a.v) return b;
    if (b.v == a.v && b.i < a.i) return b;
    return a;
  }
};

/// Element value v at position i as Op's accumulator: converted, or paired with i for arg ops.
template <class W, class V>
__device__ W accumulator(const V& v, index_t i) {
  if constexpr (is_arg_pair<W>) return W{decltype(W::v)(v), i};
  else return convert_element<W>(v);
}

/// Element i (C order over the coalesced space) of an evaluator, as Op's accumulator type.
template <class W, class Ev>
struct fetch_flat {
  Ev ev;
  __device__ W operator()(index_t i) const { return accumulator<W>(ev.get(flat_pos{i}), i); }
};
template <class W, class Ev>
struct fetch_nd {
  Ev ev;
  index_t dims[max_rank];
  int rank;
  __device__ W operator()(index_t i) const {
    index_t idx[max_rank];
    unravel(i, idx, dims, rank);
    return accumulator<W>(ev.get(nd_pos{idx, rank}), i);
  }
};

/// Writes a whole reduction's value (the accumulator, as it is).
template <class W>
struct store_to {
  W* p;
  __device__ void operator()(const W& v) const { *p = v; }
};
/// Writes a whole reduction's value finished (converted, scaled: executor::reduce_into).
template <class R, class Finish>
struct store_finished {
  R* p;
  Finish finish;
  template <class W>
  __device__ void operator()(const W& v) const {
    *p = finish(v);
  }
};

template <class Op, class W, class Fetch, class Store>
__global__ void __launch_bounds__(block_threads)
    reduce_all_kernel(Fetch fetch, index_t n, W* partials, unsigned* ticket, Store result) {
  W acc = Op::template identity<W>();
  for (index_t i = global_thread(); i < n; i += grid_threads()) acc = Op::combine(acc, fetch(i));
  acc = block_reduce<Op>(acc);
  __shared__ bool last;
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = acc;
    __threadfence();  // the partial is visible device-wide before the ticket says so
    last = atomicAdd(ticket, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();  // acquire side: the other blocks' partials are read after their fences
  W total = Op::template identity<W>();
  for (unsigned k = threadIdx.x; k < gridDim.x; k += blockDim.x) total = Op::combine(total, partials[k]);
  total = block_reduce<Op>(total);
  if (threadIdx.x == 0) {
    result(total);
    *ticket = 0;
  }
}

/// The whole-array reductions' workspace (block partials, the result, the ticket; also the flag
/// of algorithms<cuda>::wrap_indices): one device block per host thread and device, made on first
/// use and grown when a wider accumulator needs more, so that a reduction allocates nothing once
/// warm (ad::compile's replays promise that).
/// Like cuBLAS's workspace it is the backend's own, outside the arrays' accounting
/// (cuda_memory_stats). Each reduction returns after its result has reached the host, so the
/// thread's next one may reuse the block on any stream.
inline unsigned char* reduce_workspace(std::size_t bytes) {
  struct slot {
    int device = -1;
    void* p = nullptr;
    std::size_t bytes = 0;
  };
  struct slots {
    std::vector<slot> v;
    slots() = default;
    slots(const slots&) = delete;
    slots& operator=(const slots&) = delete;
    ~slots() {
      for (slot& s : v) cudaFree(s.p);  // at thread exit; an error while the process ends is moot
    }
  };
  thread_local slots mine;
  const int dev = cuda_device();
  slot* s = nullptr;
  for (slot& x : mine.v)
    if (x.device == dev) s = &x;
  if (s == nullptr) s = &mine.v.emplace_back(slot{dev, nullptr, 0});
  if (s->bytes < bytes) {
    ++cuda_workspace_generation();  // (a captured CUDA graph that points into the old block is stale)
    if (s->p != nullptr) {
      FUSOR_CUDA_CHECK(cudaFree(s->p));  // waits for the device
      s->p = nullptr;
      s->bytes = 0;
    }
    const std::size_t want = (bytes + 4095) & ~std::size_t(4095);
    FUSOR_CUDA_CHECK(cudaMalloc(&s->p, want));
    s->bytes = want;
  }
  return static_cast<unsigned char*>(s->p);
}

/// Runs reduce_all_kernel over n elements and returns the result on the host, or, given a
/// store (a device-memory writer), has the kernel write it and returns without waiting (W{}).
template <class Op, class W, class Fetch, class Store = std::nullptr_t>
W launch_reduce_all(const Fetch& fetch, index_t n, Store store = nullptr) {
  check_parameter_size<Fetch>();
  const unsigned grid = grid_for(n);
  // the partials, the result and the ticket in the thread's workspace
  // (the ticket's offset rounded up to 16: W may be a 1-byte bool, and atomics need alignment)
  const std::size_t partial_bytes = (std::size_t(grid + 1) * sizeof(W) + 15) & ~std::size_t(15);
  unsigned char* scratch = reduce_workspace(partial_bytes + sizeof(unsigned));
  W* partials = reinterpret_cast<W*>(scratch);
  unsigned* ticket = reinterpret_cast<unsigned*>(scratch + partial_bytes);
  const cudaStream_t stream = current_cuda_stream();
  FUSOR_CUDA_CHECK(cudaMemsetAsync(ticket, 0, sizeof(unsigned), stream));
  FUSOR_COUNT_PASS();
  if constexpr (!std::is_same_v<Store, std::nullptr_t>) {
    reduce_all_kernel<Op, W><<<grid, block_threads, 0, stream>>>(fetch, n, partials, ticket, store);
    check_launch("fusor reduction kernel launch");
    return W{};
  }
  reduce_all_kernel<Op, W><<<grid, block_threads, 0, stream>>>(fetch, n, partials, ticket, store_to<W>{partials + grid});
  check_launch("fusor reduction kernel launch");
  W r;
  backend_memory<cuda>::copy_to_host(reinterpret_cast<unsigned char*>(&r),
                                     reinterpret_cast<const unsigned char*>(partials + grid), index_t(sizeof(W)));
  return r;
}

/// Calls f(fetch) with the flat fetch when the expression coalesces to one dimension, else with
/// the multi-index fetch.
template <class W, class E, class F>
auto with_fetch(const E& e, F&& f) {
  const extents shape = expr_shape(e);
  auto ev = make_evaluator(e, shape);
  using Ev = decltype(ev);
  auto ops = stride_table<0>(ev);
  const loop_space sp = coalesce(shape.data(), shape.size(), ops);
  if (sp.rank == 1) return f(fetch_flat<W, Ev>{ev}, shape.numel());
  fetch_nd<W, Ev> nd{ev, {}, sp.rank};
  for (int k = 0; k < sp.rank; ++k) nd.dims[k] = sp.dims[k];
  return f(nd, shape.numel());
}

template <class Op, class E>
auto reduce_all(const E& e) {
  using V = value_t<E>;
  using HW = typename Op::template wide<V>;  // the host's accumulator type (returned)
  using W = dev_t<HW>;
  if (expr_shape(e).numel() == 0) return Op::template identity<HW>();
  const W r = with_fetch<W>(
      e, [](const auto& fetch, index_t n) { return launch_reduce_all<Op, W>(fetch, n); });
  HW h;
  static_assert(sizeof(HW) == sizeof(W), "fusor: device and host accumulators must share a layout");
  std::memcpy(&h, &r, sizeof(W));
  return h;
}

/// finish(reduce_all's value) written to device memory at dst (e not empty), nothing read back.
template <class Op, class R, class E, class Finish>
void reduce_all_into(R* dst, const E& e, const Finish& finish) {
  using W = dev_t<typename Op::template wide<value_t<E>>>;
  with_fetch<W>(e, [dst, finish](const auto& fetch, index_t n) {
    return launch_reduce_all<Op, W>(fetch, n, store_finished<R, Finish>{dst, finish});
  });
}

template <bool Max, class E>
index_t arg_extreme_all(const E& e) {
  using V = dev_t<value_t<E>>;
  const arg_pair<V> r = with_fetch<arg_pair<V>>(
      e, [](const auto& fetch, index_t n) { return launch_reduce_all<arg_op<Max>, arg_pair<V>>(fetch, n); });
  return r.i;
}

/// The expression's dimensions with the reduced axis moved last, and where each output lands.
struct axis_space {
  index_t dims[max_rank];  // the output dimensions, then the axis
  index_t out_strides[max_rank];
  int m;  // output dimensions
  index_t K;
};

template <class Ev>
void move_axis_last(Ev& ev, int axis, int n) {
  ev.visit_strides([&](index_t* s) {
    const index_t a = s[axis];
    for (int k = axis; k + 1 < n; ++k) s[k] = s[k + 1];
    s[n - 1] = a;
  });
}

/// Fold of output element o's row (lanes `lane`, `lane + step`, ...).
template <class Op, class W, class Ev>
__device__ W fold_row(const Ev& ev, const axis_space& s, index_t o, index_t first, index_t step) {
  index_t idx[max_rank];
  unravel(o, idx, s.dims, s.m);
  W acc = Op::template identity<W>();
  for (index_t k = first; k < s.K; k += step) {
    idx[s.m] = k;
    acc = Op::combine(acc, accumulator<W>(ev.get(nd_pos{idx, s.m + 1}), k));
  }
  return acc;
}
template <class W>
__device__ auto output_value(const W& w) {
  if constexpr (is_arg_pair<W>) return std::int64_t(w.i);
  else return w;
}

/// One output element per thread.
template <class Op, class W, class D, class Ev>
__global__ void __launch_bounds__(block_threads) reduce_columns_kernel(D* out, axis_space s, Ev ev, index_t outputs) {
  for (index_t o = global_thread(); o < outputs; o += grid_threads()) {
    index_t idx[max_rank], off = 0;
    unravel(o, idx, s.dims, s.m);
    for (int k = 0; k < s.m; ++k) off += idx[k] * s.out_strides[k];
    out[off] = convert_element<D>(output_value(fold_row<Op, W>(ev, s, o, 0, 1)));
  }
}
/// One output element per warp: the lanes read the row together.
template <class Op, class W, class D, class Ev>
__global__ void __launch_bounds__(block_threads) reduce_rows_kernel(D* out, axis_space s, Ev ev, index_t outputs) {
  __shared__ __align__(16) unsigned char raw[block_threads * sizeof(W)];
  W* lanes = reinterpret_cast<W*>(raw);
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps_per_block = blockDim.x / 32;
  const index_t warps = index_t(gridDim.x) * warps_per_block;
  for (index_t o = index_t(blockIdx.x) * warps_per_block + warp; o < outputs; o += warps) {
    lanes[threadIdx.x] = fold_row<Op, W>(ev, s, o, lane, 32);
    __syncwarp();
    if (lane == 0) {
      W acc = lanes[threadIdx.x];
      for (unsigned l = 1; l < 32; ++l) acc = Op::combine(acc, lanes[threadIdx.x + l]);
      index_t idx[max_rank], off = 0;
      unravel(o, idx, s.dims, s.m);
      for (int k = 0; k < s.m; ++k) off += idx[k] * s.out_strides[k];
      out[off] = convert_element<D>(output_value(acc));
    }
    __syncwarp();
  }
}

template <class Op, class W, class T, class E>
void launch_reduce_axis(const leaf<T, cuda>& out, const E& e, int axis) {
  using D = dev_t<T>;
  const extents shape = expr_shape(e);
  const int n = shape.size();
  auto ev = make_evaluator(e, shape);
  using Ev = decltype(ev);
  check_parameter_size<Ev>();
  const index_t outputs = out.shape.numel();
  if (outputs == 0) return;
  move_axis_last(ev, axis, n);
  axis_space s{};
  s.m = n - 1;
  s.K = shape[axis];
  for (int d = 0, k = 0; d < n; ++d) {
    if (d == axis) continue;
    s.dims[k] = shape[d];
    s.out_strides[k] = out.strides[k];
    ++k;
  }
  s.dims[n - 1] = s.K;
  D* o = reinterpret_cast<D*>(out.data);
  const cudaStream_t stream = current_cuda_stream();
  FUSOR_COUNT_PASS();
  if (axis == n - 1 && s.K >= 16) {
    const index_t blocks = (outputs + block_threads / 32 - 1) / (block_threads / 32);
    reduce_rows_kernel<Op, W><<<grid_for(blocks * block_threads), block_threads, 0, stream>>>(o, s, ev, outputs);
  } else {
    reduce_columns_kernel<Op, W><<<grid_for(outputs), block_threads, 0, stream>>>(o, s, ev, outputs);
  }
  check_launch("fusor axis reduction kernel launch");
}

template <class Op, class T, class E>
void reduce_axis(const leaf<T, cuda>& out, const E& e, int axis) {
  using W = dev_t<typename Op::template wide<value_t<E>>>;
  launch_reduce_axis<Op, W>(out, e, axis);
}

template <bool Max, class E>
void arg_extreme_axis(const leaf<std::int64_t, cuda>& out, const E& e, int axis) {
  using V = dev_t<value_t<E>>;
  launch_reduce_axis<arg_op<Max>, arg_pair<V>>(out, e, axis);
}

}  // namespace fusor::detail::cuda_exec
