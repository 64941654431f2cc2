#pragma once
// algorithms<cuda>: the kernels behind indexing, sorting and scans on device memory, with the
// cpu's orderings (NaN last, complex by (real, imag), stable sorts, ties to the lower index).
//
// On the device: gather and scatter (kernels), index wrapping, count_nonzero (a fused
// reduction), compress (Thrust copy_if), sort/argsort/topk (Thrust's radix/merge sorts per
// row; partition, argpartition and the quantiles' selection sort their rows too), cumulative sums and products (Thrust scans per row).
// Through one host round trip (backend/host/algorithms.hpp, the cpu's code: the same results): nonzero's flat
// positions, unique's run counting, searchsorted, bincount, histogram and masked expand. These
// copy their inputs to the host and their outputs back; a device version of each is future work.
#include <thrust/execution_policy.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/copy.h>
#include <thrust/scan.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "../../core/algorithms_fwd.hpp"
#include "../host/algorithms.hpp"
#include "executor.cuh"

namespace fusor::detail::cuda_algo {

/// The host loops the round trips below run (nonzero, unique, searchsorted, bincount, histogram),
/// on OpenMP's default team: the cuda backend has no host thread setting.
using host_loops = host::algorithms<host::openmp_default_team>;

inline auto policy() { return thrust::cuda::par.on(current_cuda_stream()); }

/// NumPy's sort order on device values: NaN after every number, complex by (real, imag).
template <class D>
__host__ __device__ bool dev_less(const D& a, const D& b) {
  if constexpr (is_complex_v<D>) {
    const bool na = is_nan(a), nb = is_nan(b);
    if (na || nb) return !na && nb;
    return a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag());
  } else if constexpr (std::is_floating_point_v<D>) {
    return a < b || (!(a != a) && b != b);
  } else {
    return a < b;
  }
}
template <class D>
struct less_fn {
  __host__ __device__ bool operator()(const D& a, const D& b) const { return dev_less(a, b); }
};
template <class D>
struct greater_fn {
  __host__ __device__ bool operator()(const D& a, const D& b) const { return dev_less(b, a); }
};

struct is_set {
  __host__ __device__ bool operator()(bool b) const { return b; }
};

/// n elements in host memory for a round trip (a std::vector, but of bool too).
template <class T>
struct host_buffer {
  std::unique_ptr<T[]> p;
  explicit host_buffer(index_t n = 0) : p(n > 0 ? new T[std::size_t(n)]() : nullptr) {}
  T* data() { return p.get(); }
  const T* data() const { return p.get(); }
};

template <class T>
host_buffer<T> to_host(const T* p, index_t n) {
  host_buffer<T> h(n);
  if (n > 0) backend_memory<cuda>::copy_to_host(h.data(), p, n);
  return h;
}
template <class T>
void to_device(T* d, const T* h, index_t n) {
  if (n > 0) backend_memory<cuda>::copy_from_host(d, h, n);
}

template <class T>
__global__ void __launch_bounds__(cuda_exec::block_threads)
    gather_kernel(const T* src, index_t outer, index_t n, index_t inner, const std::int64_t* idx, index_t m, T* out) {
  const index_t total = outer * m * inner;
  for (index_t e = cuda_exec::global_thread(); e < total; e += cuda_exec::grid_threads()) {
    const index_t i = e % inner, j = (e / inner) % m, o = e / (inner * m);
    out[e] = src[(o * n + idx[j]) * inner + i];
  }
}
/// One thread per (outer, inner) position walks the indices in order: repeated indices keep
/// the last write (or add in order), exactly as the cpu loop does.
template <class T>
__global__ void __launch_bounds__(cuda_exec::block_threads)
    scatter_kernel(T* dst, index_t outer, index_t n, index_t inner, const std::int64_t* idx, index_t m, const T* vals,
                   bool add) {
  using D = compute_t<T>;
  for (index_t e = cuda_exec::global_thread(); e < outer * inner; e += cuda_exec::grid_threads()) {
    const index_t i = e % inner, o = e / inner;
    for (index_t j = 0; j < m; ++j) {
      T& d = dst[(o * n + idx[j]) * inner + i];
      const T v = vals[(o * m + j) * inner + i];
      if (add) d = convert_element<T>(add_fn{}(convert_element<D>(d), convert_element<D>(v)));
      else d = v;
    }
  }
}
/// One thread per (run, column) adds the run's rows in order of k, rounding each step to T as
/// the cpu loop does: the same sums on both backends.
template <class T>
__global__ void __launch_bounds__(cuda_exec::block_threads)
    add_row_runs_kernel(T* dst, index_t inner, const std::int64_t* to, const std::int64_t* starts, index_t runs,
                        index_t m, const T* src, const std::int64_t* from) {
  using D = compute_t<T>;
  for (index_t e = cuda_exec::global_thread(); e < runs * inner; e += cuda_exec::grid_threads()) {
    const index_t i = e % inner, r = e / inner;
    const index_t k1 = r + 1 < runs ? index_t(starts[r + 1]) : m;
    T& d = dst[to[starts[r]] * inner + i];
    T acc = d;
    for (index_t k = index_t(starts[r]); k < k1; ++k)
      acc = convert_element<T>(add_fn{}(convert_element<D>(acc), convert_element<D>(src[from[k] * inner + i])));
    d = acc;
  }
}
__global__ inline void wrap_kernel(std::int64_t* idx, index_t m, index_t n, unsigned long long* first_bad) {
  for (index_t e = cuda_exec::global_thread(); e < m; e += cuda_exec::grid_threads()) {
    std::int64_t v = idx[e];
    if (v < -n || v >= n) atomicMin(first_bad, (unsigned long long)e);
    else idx[e] = v < 0 ? v + n : v;
  }
}

template <class Acc, class T>
struct to_acc {
  __host__ __device__ Acc operator()(const T& x) const { return convert_element<Acc>(x); }
};
template <class Acc>
struct acc_multiply {
  __host__ __device__ Acc operator()(const Acc& a, const Acc& b) const { return multiply_fn{}(a, b); }
};
template <class Acc>
struct acc_add {
  __host__ __device__ Acc operator()(const Acc& a, const Acc& b) const { return add_fn{}(a, b); }
};

}  // namespace fusor::detail::cuda_algo

namespace fusor {

template <>
struct algorithms<cuda> {
  template <class T>
  static void gather(const T* src, index_t outer, index_t n, index_t inner, const std::int64_t* idx, index_t m, T* out) {
    using namespace detail;
    const index_t total = outer * m * inner;
    if (total == 0) return;
    cuda_algo::gather_kernel<<<cuda_exec::grid_for(total), cuda_exec::block_threads, 0, current_cuda_stream()>>>(
        src, outer, n, inner, idx, m, out);
    cuda_exec::check_launch("fusor gather kernel launch");
  }
  template <class T>
  static void scatter(T* dst, index_t outer, index_t n, index_t inner, const std::int64_t* idx, index_t m, const T* vals,
                      bool add) {
    using namespace detail;
    if (outer * inner == 0 || m == 0) return;
    cuda_algo::scatter_kernel<<<cuda_exec::grid_for(outer * inner), cuda_exec::block_threads, 0, current_cuda_stream()>>>(
        dst, outer, n, inner, idx, m, vals, add);
    cuda_exec::check_launch("fusor scatter kernel launch");
  }
  template <class T>
  static void add_row_runs(T* dst, index_t inner, const std::int64_t* to, const std::int64_t* starts, index_t runs,
                           index_t m, const T* src, const std::int64_t* from) {
    using namespace detail;
    if (runs * inner == 0) return;
    cuda_algo::add_row_runs_kernel<<<cuda_exec::grid_for(runs * inner), cuda_exec::block_threads, 0,
                                     current_cuda_stream()>>>(dst, inner, to, starts, runs, m, src, from);
    cuda_exec::check_launch("fusor add_row_runs kernel launch");
  }
  /// Wraps negative indices in place; returns the position of the first out-of-range index, or m.
  static index_t wrap_indices(std::int64_t* idx, index_t m, index_t n) {
    using namespace detail;
    if (m == 0) return 0;
    // the flag lives in the thread's reduction workspace: a replayed gather allocates nothing
    auto* first = reinterpret_cast<unsigned long long*>(cuda_exec::reduce_workspace(sizeof(unsigned long long)));
    const unsigned long long none = (unsigned long long)m;
    FUSOR_CUDA_CHECK(cudaMemcpyAsync(first, &none, sizeof none, cudaMemcpyHostToDevice, current_cuda_stream()));
    cuda_algo::wrap_kernel<<<cuda_exec::grid_for(m), cuda_exec::block_threads, 0, current_cuda_stream()>>>(idx, m, n, first);
    cuda_exec::check_launch("fusor index wrap kernel launch");
    unsigned long long r = 0;
    backend_memory<cuda>::copy_to_host(reinterpret_cast<std::uint8_t*>(&r), reinterpret_cast<const std::uint8_t*>(first),
                                       index_t(sizeof r));
    return index_t(r);
  }
  template <class T>
  static std::vector<std::int64_t> flat_nonzero(const T* x, index_t n) {
    const auto h = detail::cuda_algo::to_host(x, n);
    return detail::cuda_algo::host_loops::flat_nonzero(h.data(), n);
  }
  template <class T>
  static index_t count_nonzero(const T* x, index_t n) {
    if (n == 0) return 0;
    const leaf<T, cuda> l{const_cast<T*>(x), extents{n}, extents{1}};
    return index_t(executor<cuda>::reduce<detail::sum_op>(cast_expr<bool, leaf<T, cuda>>{l}));
  }
  template <class T>
  static index_t compress(const T* x, const bool* mask, index_t n, T* dst) {
    if (n == 0) return 0;
    const T* end = thrust::copy_if(detail::cuda_algo::policy(), x, x + n, mask, dst, detail::cuda_algo::is_set{});
    return index_t(end - dst);
  }
  template <class T>
  static void expand(T* x, const bool* mask, index_t n, const T* values) {
    auto hx = detail::cuda_algo::to_host(x, n);
    const auto hm = detail::cuda_algo::to_host(mask, n);
    const index_t count = detail::cuda_algo::host_loops::count_nonzero(hm.data(), n);
    const auto hv = detail::cuda_algo::to_host(values, count);
    detail::cuda_algo::host_loops::expand(hx.data(), hm.data(), n, hv.data());
    detail::cuda_algo::to_device(x, hx.data(), n);
  }
  template <class T>
  static void sort_rows(T* x, index_t rows, index_t n) {
    using D = compute_t<T>;
    D* d = reinterpret_cast<D*>(x);
    for (index_t r = 0; r < rows; ++r)
      thrust::sort(detail::cuda_algo::policy(), d + r * n, d + (r + 1) * n, detail::cuda_algo::less_fn<D>{});
  }
  /// Partitions, argpartitions and the quantiles' order statistics: a sort is all three (the
  /// rows sorted with NaN last satisfy each contract); a device selection is future work.
  template <class T>
  static void partition_rows(T* x, index_t rows, index_t n, const index_t*, index_t) {
    sort_rows(x, rows, n);
  }
  template <class T>
  static void argpartition_rows(const T* x, index_t rows, index_t n, const index_t*, index_t, std::int64_t* out) {
    argsort_rows(x, rows, n, out);
  }
  template <class T>
  static void select_quantiles(T* x, index_t rows, index_t n, const std::int64_t*, const double*, index_t,
                               quantile_method, bool) {
    sort_rows(x, rows, n);
  }
  /// Stable: a stable sort of (value copy, position) pairs per row.
  template <class T>
  static void argsort_rows(const T* x, index_t rows, index_t n, std::int64_t* out) {
    using D = compute_t<T>;
    array<T, cuda> keys(extents{n});
    D* k = reinterpret_cast<D*>(keys.data());
    for (index_t r = 0; r < rows; ++r) {
      backend_memory<cuda>::copy_within(keys.data(), x + r * n, n);
      thrust::sequence(detail::cuda_algo::policy(), out + r * n, out + (r + 1) * n, std::int64_t(0));
      thrust::stable_sort_by_key(detail::cuda_algo::policy(), k, k + n, out + r * n, detail::cuda_algo::less_fn<D>{});
    }
  }
  /// The k best of each row, best first, ties to the lower index: a stable sort by rank per row.
  template <class T>
  static void topk_rows(const T* x, index_t rows, index_t n, index_t k, bool largest, T* values, std::int64_t* indices) {
    using D = compute_t<T>;
    array<T, cuda> keys(extents{n});
    array<std::int64_t, cuda> order(extents{n});
    D* kd = reinterpret_cast<D*>(keys.data());
    for (index_t r = 0; r < rows; ++r) {
      backend_memory<cuda>::copy_within(keys.data(), x + r * n, n);
      thrust::sequence(detail::cuda_algo::policy(), order.data(), order.data() + n, std::int64_t(0));
      if (largest)
        thrust::stable_sort_by_key(detail::cuda_algo::policy(), kd, kd + n, order.data(), detail::cuda_algo::greater_fn<D>{});
      else
        thrust::stable_sort_by_key(detail::cuda_algo::policy(), kd, kd + n, order.data(), detail::cuda_algo::less_fn<D>{});
      backend_memory<cuda>::copy_within(values + r * k, keys.data(), k);
      backend_memory<cuda>::copy_within(indices + r * k, order.data(), k);
    }
  }
  template <class T>
  static index_t count_runs(const T* x, const std::int64_t* order, index_t n) {
    const auto hx = detail::cuda_algo::to_host(x, n);
    const auto ho = detail::cuda_algo::to_host(order, n);
    return detail::cuda_algo::host_loops::count_runs(hx.data(), ho.data(), n);
  }
  template <class T>
  static void fill_unique(const T* x, const std::int64_t* order, index_t n, T* values, std::int64_t* counts,
                          std::int64_t* first, std::int64_t* inverse) {
    const auto hx = detail::cuda_algo::to_host(x, n);
    const auto ho = detail::cuda_algo::to_host(order, n);
    const index_t u = detail::cuda_algo::host_loops::count_runs(hx.data(), ho.data(), n);
    detail::cuda_algo::host_buffer<T> hv(u);
    detail::cuda_algo::host_buffer<std::int64_t> hc(u), hf(u), hi(n);
    detail::cuda_algo::host_loops::fill_unique(hx.data(), ho.data(), n, hv.data(), hc.data(), hf.data(), hi.data());
    detail::cuda_algo::to_device(values, hv.data(), u);
    detail::cuda_algo::to_device(counts, hc.data(), u);
    detail::cuda_algo::to_device(first, hf.data(), u);
    detail::cuda_algo::to_device(inverse, hi.data(), n);
  }
  /// Cumulative sum or product of each row, accumulated in Acc and rounded to U per element.
  template <class Acc, class T, class U>
  static void scan_rows(const T* x, index_t rows, index_t n, bool product, U* out) {
    using namespace detail::cuda_algo;
    using A = compute_t<Acc>;
    using DT = compute_t<T>;
    array<Acc, cuda> acc(extents{n});
    A* a = reinterpret_cast<A*>(acc.data());
    const DT* dx = reinterpret_cast<const DT*>(x);
    for (index_t r = 0; r < rows; ++r) {
      auto in = thrust::make_transform_iterator(dx + r * n, to_acc<A, DT>{});
      if (product) thrust::inclusive_scan(policy(), in, in + n, a, acc_multiply<A>{});
      else thrust::inclusive_scan(policy(), in, in + n, a, acc_add<A>{});
      executor<cuda>::assign(leaf<U, cuda>{out + r * n, extents{n}, extents{1}}, acc.as_leaf());
    }
  }
  template <class T, class V>
  static void searchsorted(const T* a, index_t n, const V* v, index_t m, bool right, std::int64_t* out) {
    const auto ha = detail::cuda_algo::to_host(a, n);
    const auto hv = detail::cuda_algo::to_host(v, m);
    detail::cuda_algo::host_buffer<std::int64_t> ho(m);
    detail::cuda_algo::host_loops::searchsorted(ha.data(), n, hv.data(), m, right, ho.data());
    detail::cuda_algo::to_device(out, ho.data(), m);
  }
  template <class I, class W, class C>
  static void bincount(const I* x, index_t n, const W* w, C* counts) {
    const auto hx = detail::cuda_algo::to_host(x, n);
    detail::cuda_algo::host_buffer<W> hw = w ? detail::cuda_algo::to_host(w, n) : detail::cuda_algo::host_buffer<W>();
    index_t bins = 0;
    for (index_t i = 0; i < n; ++i) bins = std::max<index_t>(bins, index_t(hx.data()[i]) + 1);
    auto hc = detail::cuda_algo::to_host(counts, bins);
    detail::cuda_algo::host_loops::bincount(hx.data(), n, w ? hw.data() : static_cast<const W*>(nullptr), hc.data());
    detail::cuda_algo::to_device(counts, hc.data(), bins);
  }
  template <class T, class E, class W, class C>
  static void histogram(const T* x, index_t n, const E* edges, index_t bins, const W* w, C* counts) {
    const auto hx = detail::cuda_algo::to_host(x, n);
    const auto he = detail::cuda_algo::to_host(edges, bins + 1);
    detail::cuda_algo::host_buffer<W> hw = w ? detail::cuda_algo::to_host(w, n) : detail::cuda_algo::host_buffer<W>();
    auto hc = detail::cuda_algo::to_host(counts, bins);
    detail::cuda_algo::host_loops::histogram(hx.data(), n, he.data(), bins, w ? hw.data() : static_cast<const W*>(nullptr), hc.data());
    detail::cuda_algo::to_device(counts, hc.data(), bins);
  }
};

}  // namespace fusor
