// Operations that move data rather than compute: transpose copy, roll and tile in GB/s beside the
// STREAM copy/triad of the same size; sort/argsort beside std::sort / std::stable_sort on the
// same values; topk (k = 10 of 10^6) beside std::partial_sort; median, three percentiles and
// partition (selection) beside std::nth_element by hand and a median by std::sort. Single thread
// for the sort family (the baselines are single-threaded); the copies report their thread count.
#include <benchmark/benchmark.h>
#include <omp.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include <fusor/fusor.hpp>

namespace {

using fusor::array;
using fusor::index_t;

void gbs(benchmark::State& st, double bytes) {
  st.counters["GB/s"] = benchmark::Counter(bytes, benchmark::Counter::kIsIterationInvariantRate,
                                           benchmark::Counter::OneK::kIs1000);
}

constexpr index_t side = 4096;  // 4096^2 floats = 64 MiB per array
array<float>& square() {
  static array<float> a = [] {
    fusor::random::generator g(3);
    return fusor::random::uniform<float>(g, {side, side}, -1.0f, 1.0f);
  }();
  return a;
}
array<float>& third_square() {
  static array<float> c = fusor::ones<float>({side, side});
  return c;
}
array<float>& out_square() {
  static array<float> b = fusor::zeros<float>({side, side});
  return b;
}

// a = b + q c (2 reads + 1 write of n floats)
void stream_triad(benchmark::State& st) {
  const index_t n = side * side;
  float* a = out_square().data();
  const float* b = square().data();
  const float* c = third_square().data();
  for (auto _ : st) {
#pragma omp parallel for simd num_threads(int(st.range(0))) schedule(static)
    for (index_t i = 0; i < n; ++i) a[i] = b[i] + 0.5f * c[i];
    benchmark::ClobberMemory();
  }
  gbs(st, 3.0 * n * sizeof(float));
}
// a = b (1 read + 1 write)
void stream_copy(benchmark::State& st) {
  const index_t n = side * side;
  float* a = out_square().data();
  const float* b = square().data();
  for (auto _ : st) {
#pragma omp parallel for simd num_threads(int(st.range(0))) schedule(static)
    for (index_t i = 0; i < n; ++i) a[i] = b[i];
    benchmark::ClobberMemory();
  }
  gbs(st, 2.0 * n * sizeof(float));
}
// out = transpose(a): the strided (gather) read path of the executor
void transpose_copy(benchmark::State& st) {
  fusor::set_num_threads(int(st.range(0)));
  auto& a = square();
  auto& b = out_square();
  for (auto _ : st) {
    b.view() = fusor::transpose(a);
    benchmark::ClobberMemory();
  }
  gbs(st, 2.0 * double(a.size()) * sizeof(float));
}
// hand-written blocked transpose (the baseline for transpose_copy)
void hand_transpose(benchmark::State& st) {
  const float* a = square().data();
  float* b = out_square().data();
  constexpr index_t blk = 32;
  for (auto _ : st) {
#pragma omp parallel for num_threads(int(st.range(0))) schedule(static)
    for (index_t i0 = 0; i0 < side; i0 += blk)
      for (index_t j0 = 0; j0 < side; j0 += blk)
        for (index_t i = i0; i < i0 + blk; ++i)
          for (index_t j = j0; j < j0 + blk; ++j) b[j * side + i] = a[i * side + j];
    benchmark::ClobberMemory();
  }
  gbs(st, 2.0 * double(side * side) * sizeof(float));
}
void roll_2d(benchmark::State& st) {
  fusor::set_num_threads(int(st.range(0)));
  auto& a = square();
  for (auto _ : st) {
    auto r = fusor::roll(a, {17, -33}, {0, 1});
    benchmark::DoNotOptimize(r.data());
  }
  gbs(st, 2.0 * double(a.size()) * sizeof(float));
}

// what roll must do at least: a new array and the four shifted blocks copied into it
void hand_roll_alloc(benchmark::State& st) {
  const float* a = square().data();
  const index_t s0 = 17, s1 = side - 33;  // the same shifts as roll_2d: (17, -33)
  for (auto _ : st) {
    array<float> r(fusor::extents{side, side});
    float* o = r.data();
#pragma omp parallel for num_threads(int(st.range(0))) schedule(static)
    for (index_t i = 0; i < side; ++i) {
      const float* src = a + ((i - s0 + side) % side) * side;
      float* dst = o + i * side;
      std::copy(src, src + (side - s1), dst + s1);
      std::copy(src + (side - s1), src + side, dst);
    }
    benchmark::DoNotOptimize(r.data());
  }
  gbs(st, 2.0 * double(side * side) * sizeof(float));
}

constexpr index_t sort_n = 1'000'000;
// the same 10^6 uniform values for every sort benchmark, as a vector (baselines) and an array
const std::vector<float>& sort_values() {
  static const std::vector<float> v = [] {
    fusor::random::generator g(5);
    const auto a = fusor::random::uniform<float>(g, {sort_n}, -1.0f, 1.0f);
    return std::vector<float>(a.begin(), a.end());
  }();
  return v;
}
const array<float>& sort_array() {
  static const array<float> a(std::span<const float>(sort_values()), {sort_n});
  return a;
}
void fusor_sort(benchmark::State& st) {
  const auto& a = sort_array();
  for (auto _ : st) {
    auto s = fusor::sort(a);
    benchmark::DoNotOptimize(s.data());
  }
  st.SetItemsProcessed(st.iterations() * sort_n);
}
void std_sort(benchmark::State& st) {
  const auto& v = sort_values();
  for (auto _ : st) {
    auto w = v;
    std::sort(w.begin(), w.end());
    benchmark::DoNotOptimize(w.data());
  }
  st.SetItemsProcessed(st.iterations() * sort_n);
}
void std_stable_sort(benchmark::State& st) {
  const auto& v = sort_values();
  for (auto _ : st) {
    auto w = v;
    std::stable_sort(w.begin(), w.end());
    benchmark::DoNotOptimize(w.data());
  }
  st.SetItemsProcessed(st.iterations() * sort_n);
}
void fusor_argsort(benchmark::State& st) {
  const auto& a = sort_array();
  for (auto _ : st) {
    auto p = fusor::argsort(a);
    benchmark::DoNotOptimize(p.data());
  }
  st.SetItemsProcessed(st.iterations() * sort_n);
}
void std_argsort(benchmark::State& st) {  // iota + stable_sort by key: what argsort must do
  const auto& v = sort_values();
  std::vector<std::int64_t> p(static_cast<std::size_t>(sort_n));
  for (auto _ : st) {
    std::iota(p.begin(), p.end(), std::int64_t{0});
    std::stable_sort(p.begin(), p.end(), [&](std::int64_t i, std::int64_t j) { return v[std::size_t(i)] < v[std::size_t(j)]; });
    benchmark::DoNotOptimize(p.data());
  }
  st.SetItemsProcessed(st.iterations() * sort_n);
}
void fusor_topk(benchmark::State& st) {
  const auto& a = sort_array();
  for (auto _ : st) {
    auto r = fusor::topk(a, 10);
    benchmark::DoNotOptimize(r.values.data());
  }
  st.SetItemsProcessed(st.iterations() * sort_n);
}
void std_partial_sort_topk(benchmark::State& st) {  // indices by value, largest 10 first
  const auto& v = sort_values();
  std::vector<std::int64_t> p(static_cast<std::size_t>(sort_n));
  for (auto _ : st) {
    std::iota(p.begin(), p.end(), std::int64_t{0});
    std::partial_sort(p.begin(), p.begin() + 10, p.end(),
                      [&](std::int64_t i, std::int64_t j) { return v[std::size_t(i)] > v[std::size_t(j)]; });
    benchmark::DoNotOptimize(p.data());
  }
  st.SetItemsProcessed(st.iterations() * sort_n);
}

// Order statistics by selection, against the same selection by hand and against a full sort:
// median of 10^6 floats (copy + nth_element + the upper neighbour's minimum, what NumPy's
// partition-based median does), three percentiles in one pass, and partition at the middle.
void fusor_median(benchmark::State& st) {
  fusor::set_num_threads(1);  // the baseline is one thread
  const auto& a = sort_array();
  for (auto _ : st) benchmark::DoNotOptimize(fusor::median(a));
  st.SetItemsProcessed(st.iterations() * sort_n);
}
void std_nth_element_median(benchmark::State& st) {
  const auto& v = sort_values();
  for (auto _ : st) {
    auto w = v;
    const auto mid = w.begin() + std::ptrdiff_t(w.size() / 2);
    std::nth_element(w.begin(), mid, w.end());
    float m = *mid;
    if (w.size() % 2 == 0) m = 0.5f * (*std::max_element(w.begin(), mid) + m);
    benchmark::DoNotOptimize(m);
  }
  st.SetItemsProcessed(st.iterations() * sort_n);
}
void std_sort_median(benchmark::State& st) {  // what a median costs by a full sort
  const auto& v = sort_values();
  for (auto _ : st) {
    auto w = v;
    std::sort(w.begin(), w.end());
    benchmark::DoNotOptimize(w[w.size() / 2]);
  }
  st.SetItemsProcessed(st.iterations() * sort_n);
}
void fusor_percentiles(benchmark::State& st) {  // 10th, 50th and 90th in one call
  fusor::set_num_threads(1);  // the baseline is one thread
  const auto& a = sort_array();
  for (auto _ : st) {
    auto p = fusor::percentile(a, std::vector<double>{10, 50, 90});
    benchmark::DoNotOptimize(p.data());
  }
  st.SetItemsProcessed(st.iterations() * sort_n);
}
void std_nth_element_percentiles(benchmark::State& st) {  // the same three by hand (lower neighbours)
  const auto& v = sort_values();
  for (auto _ : st) {
    auto w = v;
    std::size_t from = 0;
    for (double q : {0.1, 0.5, 0.9}) {
      const std::size_t k = std::size_t(q * double(w.size() - 1));
      std::nth_element(w.begin() + std::ptrdiff_t(from), w.begin() + std::ptrdiff_t(k), w.end());
      benchmark::DoNotOptimize(*std::min_element(w.begin() + std::ptrdiff_t(k + 1), w.end()));
      from = k + 1;
    }
  }
  st.SetItemsProcessed(st.iterations() * sort_n);
}
void fusor_partition(benchmark::State& st) {
  fusor::set_num_threads(1);  // the baseline is one thread
  const auto& a = sort_array();
  for (auto _ : st) {
    auto p = fusor::partition(a, sort_n / 2);
    benchmark::DoNotOptimize(p.data());
  }
  st.SetItemsProcessed(st.iterations() * sort_n);
}
void std_nth_element(benchmark::State& st) {
  const auto& v = sort_values();
  for (auto _ : st) {
    auto w = v;
    std::nth_element(w.begin(), w.begin() + sort_n / 2, w.end());
    benchmark::DoNotOptimize(w.data());
  }
  st.SetItemsProcessed(st.iterations() * sort_n);
}

}  // namespace

BENCHMARK(stream_copy)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(stream_triad)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(transpose_copy)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(hand_transpose)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(roll_2d)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(hand_roll_alloc)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(fusor_sort)->Unit(benchmark::kMillisecond);
BENCHMARK(std_sort)->Unit(benchmark::kMillisecond);
BENCHMARK(std_stable_sort)->Unit(benchmark::kMillisecond);
BENCHMARK(fusor_argsort)->Unit(benchmark::kMillisecond);
BENCHMARK(std_argsort)->Unit(benchmark::kMillisecond);
BENCHMARK(fusor_topk)->Unit(benchmark::kMillisecond);
BENCHMARK(std_partial_sort_topk)->Unit(benchmark::kMillisecond);
BENCHMARK(fusor_median)->Unit(benchmark::kMillisecond);
BENCHMARK(std_nth_element_median)->Unit(benchmark::kMillisecond);
BENCHMARK(std_sort_median)->Unit(benchmark::kMillisecond);
BENCHMARK(fusor_percentiles)->Unit(benchmark::kMillisecond);
BENCHMARK(std_nth_element_percentiles)->Unit(benchmark::kMillisecond);
BENCHMARK(fusor_partition)->Unit(benchmark::kMillisecond);
BENCHMARK(std_nth_element)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
