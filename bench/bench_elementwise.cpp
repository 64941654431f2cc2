// Fused elementwise statements and reductions vs a hand-written loop vs the STREAM triad, all in
// one run, on 10^7 floats and doubles with 1 and 2 threads. Every benchmark reports GB/s
// counting the bytes it must move (reads + writes, no write-allocate), so the ratios to the
// triad say how close each gets to the memory bandwidth. scripts/bench prints the ratios.
#include <benchmark/benchmark.h>
#include <omp.h>

#include <cmath>
#include <cstdint>

#include <fusor/fusor.hpp>

namespace {

using fusor::array;
using fusor::index_t;
constexpr index_t n = 10'000'000;

template <class T>
struct data {
  array<T> x, y, z, w;
  data() {
    fusor::random::generator g(1);
    x = fusor::random::uniform<T>(g, {n}, T(-1), T(1));
    y = fusor::random::uniform<T>(g, {n}, T(-1), T(1));
    z = fusor::random::uniform<T>(g, {n}, T(-1), T(1));
    w = fusor::random::uniform<T>(g, {n}, T(-1), T(1));
  }
};
template <class T>
data<T>& inputs() {
  static data<T> d;
  return d;
}

void report(benchmark::State& st, double bytes_per_iteration) {
  st.counters["GB/s"] = benchmark::Counter(bytes_per_iteration, benchmark::Counter::kIsIterationInvariantRate,
                                           benchmark::Counter::OneK::kIs1000);
  st.counters["threads"] = double(st.range(0));
}

// STREAM triad: a = b + q * c (2 reads, 1 write).
template <class T>
void triad(benchmark::State& st) {
  auto& d = inputs<T>();
  const int t = int(st.range(0));
  T* a = d.y.data();
  const T *b = d.x.data(), *c = d.z.data();
  const T q = T(0.5);
  for (auto _ : st) {
#pragma omp parallel for simd num_threads(t) schedule(static)
    for (index_t i = 0; i < n; ++i) a[i] = b[i] + q * c[i];
    benchmark::ClobberMemory();
  }
  report(st, 3.0 * n * sizeof(T));
}

// y = 2*x + y*z - sin(w): 4 reads, 1 write.
template <class T>
void fused_sin(benchmark::State& st) {
  auto& d = inputs<T>();
  fusor::set_num_threads(int(st.range(0)));
  for (auto _ : st) {
    d.y = 2 * d.x + d.y * d.z - sin(d.w);
    benchmark::ClobberMemory();
  }
  report(st, 5.0 * n * sizeof(T));
}
template <class T>
void hand_sin(benchmark::State& st) {
  auto& d = inputs<T>();
  const int t = int(st.range(0));
  T* y = d.y.data();
  const T *x = d.x.data(), *z = d.z.data(), *w = d.w.data();
  for (auto _ : st) {
#pragma omp parallel for simd num_threads(t) schedule(static)
    for (index_t i = 0; i < n; ++i) y[i] = 2 * x[i] + y[i] * z[i] - std::sin(w[i]);
    benchmark::ClobberMemory();
  }
  report(st, 5.0 * n * sizeof(T));
}
// The best a hand-written loop can do here: explicit xsimd batches.
template <class T>
void hand_xsimd_sin(benchmark::State& st) {
  auto& d = inputs<T>();
  const int t = int(st.range(0));
  T* y = d.y.data();
  const T *x = d.x.data(), *z = d.z.data(), *w = d.w.data();
  using batch = xsimd::batch<T>;
  constexpr index_t W = index_t(batch::size);
  for (auto _ : st) {
#pragma omp parallel for num_threads(t) schedule(static)
    for (index_t i = 0; i < n; i += W) {
      const auto r = T(2) * batch::load_aligned(x + i) + batch::load_aligned(y + i) * batch::load_aligned(z + i) -
                     xsimd::sin(batch::load_aligned(w + i));
      r.store_aligned(y + i);
    }
    benchmark::ClobberMemory();
  }
  report(st, 5.0 * n * sizeof(T));
}

// d = a*b + c: 3 reads, 1 write.
template <class T>
void fused_fma(benchmark::State& st) {
  auto& d = inputs<T>();
  fusor::set_num_threads(int(st.range(0)));
  for (auto _ : st) {
    d.y = d.x * d.z + d.w;
    benchmark::ClobberMemory();
  }
  report(st, 4.0 * n * sizeof(T));
}
template <class T>
void hand_fma(benchmark::State& st) {
  auto& d = inputs<T>();
  const int t = int(st.range(0));
  T* y = d.y.data();
  const T *x = d.x.data(), *z = d.z.data(), *w = d.w.data();
  for (auto _ : st) {
#pragma omp parallel for simd num_threads(t) schedule(static)
    for (index_t i = 0; i < n; ++i) y[i] = x[i] * z[i] + w[i];
    benchmark::ClobberMemory();
  }
  report(st, 4.0 * n * sizeof(T));
}

// sum(x*y): 2 reads, nothing written.
template <class T>
void fused_dot(benchmark::State& st) {
  auto& d = inputs<T>();
  fusor::set_num_threads(int(st.range(0)));
  for (auto _ : st) benchmark::DoNotOptimize(fusor::sum(d.x * d.z));
  report(st, 2.0 * n * sizeof(T));
}
// the same in a deterministic context (64 fixed parts whatever the thread count, not one per
// thread): what the bit-for-bit guarantee costs
template <class T>
void deterministic_dot(benchmark::State& st) {
  auto& d = inputs<T>();
  fusor::set_num_threads(int(st.range(0)));
  fusor::context<fusor::cpu> fixed;
  fixed.deterministic = true;
  const auto scope = fixed.enter();
  for (auto _ : st) benchmark::DoNotOptimize(fusor::sum(d.x * d.z));
  report(st, 2.0 * n * sizeof(T));
}
template <class T>
void hand_dot(benchmark::State& st) {
  auto& d = inputs<T>();
  const int t = int(st.range(0));
  const T *x = d.x.data(), *z = d.z.data();
  for (auto _ : st) {
    T s = 0;
#pragma omp parallel for simd num_threads(t) schedule(static) reduction(+ : s)
    for (index_t i = 0; i < n; ++i) s += x[i] * z[i];
    benchmark::DoNotOptimize(s);
  }
  report(st, 2.0 * n * sizeof(T));
}

// y = x + N(0, 1) noise: 1 read, 1 write, and the Philox + Box-Muller work. The lazy draw is
// generated inside the one pass; the eager draw writes an array of noise first and reads it back;
// the hand loop is the block algorithm written out (one Philox block, one log, sqrt, sin and cos
// per pair of elements).
template <class T>
void fused_noise(benchmark::State& st) {
  auto& d = inputs<T>();
  fusor::set_num_threads(int(st.range(0)));
  fusor::random::generator g(9);
  const auto noise = fusor::lazy::random::normal<T>(g, {n});
  for (auto _ : st) {
    d.y = d.x + noise;
    benchmark::ClobberMemory();
  }
  report(st, 2.0 * n * sizeof(T));
}
template <class T>
void eager_noise(benchmark::State& st) {
  auto& d = inputs<T>();
  fusor::set_num_threads(int(st.range(0)));
  fusor::random::generator g(9);
  for (auto _ : st) {
    d.y = d.x + fusor::random::normal<T>(g, {n});
    benchmark::ClobberMemory();
  }
  report(st, 2.0 * n * sizeof(T));
}
template <class T>
void hand_noise(benchmark::State& st) {
  auto& d = inputs<T>();
  const int t = int(st.range(0));
  T* y = d.y.data();
  const T* x = d.x.data();
  for (auto _ : st) {
#pragma omp parallel for num_threads(t) schedule(static)
    for (index_t b = 0; b < n / 2; ++b) {
      const auto w = fusor::random::block_words(9, 0, std::uint64_t(b));
      const double u0 = (double(((std::uint64_t(w[0]) << 32) | w[1]) >> 11) + 1.0) * 0x1.0p-53;
      const double u1 = double(((std::uint64_t(w[2]) << 32) | w[3]) >> 11) * 0x1.0p-53;
      const double r = std::sqrt(-2.0 * std::log(u0)), a = 2.0 * 3.14159265358979323846 * u1;
      y[2 * b] = x[2 * b] + T(r * std::cos(a));
      y[2 * b + 1] = x[2 * b + 1] + T(r * std::sin(a));
    }
    benchmark::ClobberMemory();
  }
  report(st, 2.0 * n * sizeof(T));
}

// float16 and bfloat16 (each operation computed in float32 and rounded, loads and stores
// converted in registers: F16C / AVX-512), GB/s counting their 2 bytes per element: fused_fma on
// them beside float32's and the triad in the same run, the conversion from float32 (astype) and
// the float32-accumulated sum. Their inputs are float32's draws of the same seed, rounded.
template <class H>
void astype_half(benchmark::State& st) {
  auto& d = inputs<H>();
  const array<float>& x = inputs<float>().x;
  fusor::set_num_threads(int(st.range(0)));
  for (auto _ : st) {
    d.y = fusor::cast<H>(x);
    benchmark::ClobberMemory();
  }
  report(st, double(n) * (sizeof(float) + sizeof(H)));
}
template <class H>
void sum_half(benchmark::State& st) {
  auto& d = inputs<H>();
  fusor::set_num_threads(int(st.range(0)));
  for (auto _ : st) benchmark::DoNotOptimize(fusor::sum(d.x));
  report(st, double(n) * sizeof(H));
}
BENCHMARK(astype_half<fusor::float16>)->Name("astype/float32_to_float16")->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(astype_half<fusor::bfloat16>)->Name("astype/float32_to_bfloat16")->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(sum_half<fusor::float16>)->Name("sum/float16")->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(sum_half<fusor::bfloat16>)->Name("sum/bfloat16")->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(fused_fma<fusor::float16>)->Name("fused_fma/float16")->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(fused_fma<fusor::bfloat16>)->Name("fused_fma/bfloat16")->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);

#define FUSOR_BENCH(fn)                                                       \
  BENCHMARK(fn<float>)->Name(#fn "/float")->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond); \
  BENCHMARK(fn<double>)->Name(#fn "/double")->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
FUSOR_BENCH(triad)
FUSOR_BENCH(fused_sin)
FUSOR_BENCH(hand_sin)
FUSOR_BENCH(hand_xsimd_sin)
FUSOR_BENCH(fused_fma)
FUSOR_BENCH(hand_fma)
FUSOR_BENCH(fused_dot)
FUSOR_BENCH(deterministic_dot)
FUSOR_BENCH(hand_dot)
FUSOR_BENCH(fused_noise)
FUSOR_BENCH(eager_noise)
FUSOR_BENCH(hand_noise)

}  // namespace

BENCHMARK_MAIN();
