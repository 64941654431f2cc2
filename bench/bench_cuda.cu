// The cuda backend against the device's copy bandwidth, measured in the same run: fused
// statements (one kernel each), the same statement op by op (one kernel per operation, as eager
// frameworks run it), and a whole-array sum. Timed with CUDA events after a warm-up; Google
// Benchmark reports the median of the repetitions. Counters:
//   GB/s          bytes read + written by the statement per second
//   of_memcpy     GB/s over a device-to-device cudaMemcpy's GB/s (bytes read + written), timed in
//                 the same process just before (target >= 0.85)
// Template matching (fusor/match) on the device, time per rotation beside its floor:
//   match_scan/<score>/<n>/<m>/<batch>:  match::scan of an n^3 target with an m^3 template over 64
//       rotations, one rotation at a time (batch 1) or in batches of 8 per cuFFT call, setup
//       included; counter ms_per_rotation
//   cufft_floor/<score>/<n>/<m>/<batch>: the transforms the score needs per rotation (1 r2c + 1 c2r
//       for FLCSphericalMask, 2 r2c + 3 c2r for FLC) on the scan's grid, 64 times, as direct cuFFT
//       calls batched the same way
// Scores: 4 FLCSphericalMask, 5 FLC.
// A training step on the device: bench_learn's MLP (784-128-10, float32, cross-entropy) on a
// batch of <b> rows, then optim::sgd's step, the loss read to the host each step (as a training
// loop's progress line does); real time per step in microseconds (the step waits for its loss):
//   learn_step_tape/<b>:   ad::value_and_grad, the tape recorded every step
//   learn_step_replay/<b>: the same step through ad::compile, each replay one CUDA graph launch
// bench/peers/cuda_peers.py runs the same step in PyTorch, eager and captured as a CUDA graph.
// Run: build/release/bench/bench_cuda --benchmark_repetitions=9 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cufft.h>

#include <algorithm>
#include <vector>

#include <fusor/cuda.cuh>
#include <fusor/match.hpp>

using fusor::array;
using fusor::index_t;
using gpu = fusor::cuda;

namespace {

constexpr index_t n_default = 100'000'000;

/// Milliseconds of `work` on the current stream, by CUDA events.
template <class F>
float time_ms(F&& work) {
  cudaEvent_t start, stop;
  FUSOR_CUDA_CHECK(cudaEventCreate(&start));
  FUSOR_CUDA_CHECK(cudaEventCreate(&stop));
  const cudaStream_t s = fusor::current_cuda_stream();
  FUSOR_CUDA_CHECK(cudaEventRecord(start, s));
  work();
  FUSOR_CUDA_CHECK(cudaEventRecord(stop, s));
  FUSOR_CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  FUSOR_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms;
}

/// Device-to-device copy bandwidth (read + write bytes per second), median of 7 after a warm-up.
double memcpy_gbps(index_t n_floats) {
  array<float, gpu> a = fusor::zeros<float, gpu>({n_floats}), b(fusor::extents{n_floats});
  const std::size_t bytes = std::size_t(n_floats) * sizeof(float);
  auto copy = [&] {
    FUSOR_CUDA_CHECK(cudaMemcpyAsync(b.data(), a.data(), bytes, cudaMemcpyDeviceToDevice, fusor::current_cuda_stream()));
  };
  copy();
  std::vector<float> ms;
  for (int k = 0; k < 7; ++k) ms.push_back(time_ms(copy));
  std::sort(ms.begin(), ms.end());
  return 2.0 * double(bytes) / (double(ms[3]) * 1e6);
}

array<float, gpu> input(index_t n, std::uint64_t seed) {
  fusor::random::generator g(seed);
  return fusor::random::uniform<float, gpu>(g, {n}, -1.0f, 1.0f);
}

template <class F>
void run(benchmark::State& state, double bytes, F&& statement) {
  const double copy_gbps = memcpy_gbps(index_t(bytes / 8));  // the same bytes moved by a copy
  statement();  // warm-up
  fusor::cuda_synchronize();
  for (auto _ : state) state.SetIterationTime(double(time_ms(statement)) / 1e3);
  state.counters["GB/s"] = benchmark::Counter(bytes / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["copy_GB/s"] = copy_gbps;
  state.counters["of_memcpy"] = benchmark::Counter(bytes / 1e9 / copy_gbps, benchmark::Counter::kIsIterationInvariantRate);
}

void cudaMemcpy_d2d(benchmark::State& state) {
  const index_t n = state.range(0);
  array<float, gpu> a = input(n, 1), b(fusor::extents{n});
  run(state, 2.0 * double(n) * 4, [&] {
    FUSOR_CUDA_CHECK(cudaMemcpyAsync(b.data(), a.data(), std::size_t(n) * 4, cudaMemcpyDeviceToDevice,
                                     fusor::current_cuda_stream()));
  });
}

void fused_2x_plus_yz_minus_sin_w(benchmark::State& state) {
  const index_t n = state.range(0);
  auto x = input(n, 1), y = input(n, 2), z = input(n, 3), w = input(n, 4);
  array<float, gpu> r(fusor::extents{n});
  run(state, 5.0 * double(n) * 4, [&] { r = 2.0f * x + y * z - sin(w); });
}

void op_by_op_2x_plus_yz_minus_sin_w(benchmark::State& state) {
  const index_t n = state.range(0);
  auto x = input(n, 1), y = input(n, 2), z = input(n, 3), w = input(n, 4);
  array<float, gpu> t1(fusor::extents{n}), t2(fusor::extents{n}), t3(fusor::extents{n}), t4(fusor::extents{n}),
      r(fusor::extents{n});
  // the bytes the fused statement needs, so GB/s compares the two directly (eager moves 14 n floats)
  run(state, 5.0 * double(n) * 4, [&] {
    t1 = 2.0f * x;
    t2 = y * z;
    t3 = t1 + t2;
    t4 = sin(w);
    r = t3 - t4;
  });
}

void fused_ab_plus_c(benchmark::State& state) {
  const index_t n = state.range(0);
  auto a = input(n, 1), b = input(n, 2), c = input(n, 3);
  array<float, gpu> r(fusor::extents{n});
  run(state, 4.0 * double(n) * 4, [&] { r = a * b + c; });
}

void sum_float(benchmark::State& state) {
  const index_t n = state.range(0);
  auto x = input(n, 1);
  float s = 0;
  run(state, double(n) * 4, [&] { s = fusor::sum(x); });
  benchmark::DoNotOptimize(s);
}

void sum_of_product(benchmark::State& state) {
  const index_t n = state.range(0);
  auto x = input(n, 1), y = input(n, 2);
  float s = 0;
  run(state, 2.0 * double(n) * 4, [&] { s = fusor::sum(x * y); });
  benchmark::DoNotOptimize(s);
}

/// matmul through fusor (blas<cuda>) beside the same cublasSgemm called directly; GFLOP/s.
void matmul_fusor(benchmark::State& state) {
  const index_t n = state.range(0);
  auto a = input(n * n, 1).reshape({n, n}), b = input(n * n, 2).reshape({n, n});
  array<float, gpu> c(fusor::extents{n, n});
  fusor::matmul(a, b, c);
  fusor::cuda_synchronize();
  for (auto _ : state) state.SetIterationTime(double(time_ms([&] { fusor::matmul(a, b, c); })) / 1e3);
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * double(n) * n * n / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}
void matmul_cublas(benchmark::State& state) {
  const index_t n = state.range(0);
  auto a = input(n * n, 1), b = input(n * n, 2);
  array<float, gpu> c(fusor::extents{n * n});
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) state.SkipWithError("cublasCreate failed");
  cublasSetStream(h, fusor::current_cuda_stream());
  const float one = 1, zero = 0;
  const int N = int(n);
  auto gemm = [&] { cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &one, b.data(), N, a.data(), N, &zero, c.data(), N); };
  gemm();
  fusor::cuda_synchronize();
  for (auto _ : state) state.SetIterationTime(double(time_ms(gemm)) / 1e3);
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * double(n) * n * n / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  cublasDestroy(h);
}

// ---- a training step ------------------------------------------------------------------------------
namespace nn = fusor::ad::nn;
auto learn_mlp() { return nn::sequential<float, gpu>(nn::linear(784, 128), nn::relu, nn::linear(128, 10)); }
struct learn_batch {
  array<float, gpu> x;
  array<std::int64_t, gpu> y;
  explicit learn_batch(index_t b) {
    fusor::random::generator g(1);
    x = fusor::random::uniform<float, gpu>(g, {b, 784}, 0.0f, 1.0f);
    y = fusor::random::integers<std::int64_t, gpu>(g, {b}, 0, 10);
  }
};
template <class Step>
void time_steps(benchmark::State& state, Step&& step) {
  for (int k = 0; k < 3; ++k) step();  // warm-up: buffers, plans, the graph's capture
  for (auto _ : state) step();  // (the time per iteration is the time per step, in microseconds)
}
void learn_step_tape(benchmark::State& state) {
  const learn_batch d(state.range(0));
  const auto model = learn_mlp();
  auto params = model.init(0);
  fusor::ad::optim::sgd<float, gpu> opt({.lr = 1e-3});
  auto vg = fusor::ad::value_and_grad([&](const auto& p) { return nn::cross_entropy(model(p, d.x), d.y); });
  float loss = 0;
  time_steps(state, [&] {
    auto [value, grads] = vg(params);
    opt.step(params, grads);
    loss = value;
  });
  benchmark::DoNotOptimize(loss);
}
void learn_step_replay(benchmark::State& state) {
  const learn_batch d(state.range(0));
  const auto model = learn_mlp();
  auto params = model.init(0);
  fusor::ad::optim::sgd<float, gpu> opt({.lr = 1e-3});
  auto step = fusor::ad::compile(
      [&](const auto& p, const auto& x, const auto& y) { return nn::cross_entropy(model(p, x), y); }, params, d.x, d.y);
  float loss = 0;
  time_steps(state, [&] {
    auto [value, grads] = step(params, d.x, d.y);
    opt.step(params, grads);
    loss = value;
  });
  benchmark::DoNotOptimize(loss);
  if (!step.replays_as_graph()) state.SkipWithError(("the replay is not one CUDA graph: " + step.why_not_graph()).c_str());
  if (step.recordings() != 1) state.SkipWithError("the step was recorded again: it should only replay");
}

constexpr int scan_rotations = 64;

/// Times `work` (scan_rotations rotations' worth) after a warm-up that makes its plans; counter
/// ms_per_rotation.
template <class F>
void time_rotations(benchmark::State& state, F&& work) {
  work();
  fusor::cuda_synchronize();
  double total = 0;
  for (auto _ : state) {
    const double s = double(time_ms(work)) / 1e3;
    total += s;
    state.SetIterationTime(s);
  }
  state.counters["ms_per_rotation"] = 1e3 * total / double(state.iterations()) / scan_rotations;
}

void match_scan(benchmark::State& state) {
  const auto kind = fusor::match::score(int(state.range(0)));
  const index_t n = state.range(1), m = state.range(2);
  fusor::random::generator g(5);
  const auto target = fusor::random::uniform<float, gpu>(g, {n, n, n}, -1.0f, 1.0f);
  const auto templ = fusor::random::uniform<float, gpu>(g, {m, m, m}, -1.0f, 1.0f);
  const auto mask = fusor::match::sphere_mask<gpu>({m, m, m}, double(m) / 2 - 1);
  auto rots = fusor::match::uniform_rotations(20.0);
  rots.resize(scan_rotations);
  fusor::match::scan_options o;
  o.batch = state.range(3);
  time_rotations(state, [&] {
    const auto r = fusor::match::scan(target, templ, mask, rots, kind, o);
    benchmark::DoNotOptimize(r.best_score.data());
  });
}

void cufft_floor(benchmark::State& state) {
  const auto kind = fusor::match::score(int(state.range(0)));
  const index_t n = state.range(1), m = state.range(2);
  const int batch = int(state.range(3));
  const int r2c = kind == fusor::match::score::flc ? 2 : 1, c2r = kind == fusor::match::score::flc ? 3 : 1;
  const fusor::extents f = fusor::match::scan_fft_shape({n, n, n}, {m, m, m});
  const index_t half = f[0] * f[1] * (f[2] / 2 + 1);
  array<float, gpu> real = input(batch * f.numel(), 6);
  array<std::complex<float>, gpu> spec(fusor::extents{batch * half});
  int dims[3] = {int(f[0]), int(f[1]), int(f[2])};
  cufftHandle fwd, inv;
  if (cufftPlanMany(&fwd, 3, dims, nullptr, 1, int(f.numel()), nullptr, 1, int(half), CUFFT_R2C, batch) != CUFFT_SUCCESS ||
      cufftPlanMany(&inv, 3, dims, nullptr, 1, int(half), nullptr, 1, int(f.numel()), CUFFT_C2R, batch) != CUFFT_SUCCESS) {
    state.SkipWithError("cufftPlanMany failed");
    return;
  }
  cufftSetStream(fwd, fusor::current_cuda_stream());
  cufftSetStream(inv, fusor::current_cuda_stream());
  auto* re = real.data();
  auto* sp = reinterpret_cast<cufftComplex*>(spec.data());
  time_rotations(state, [&] {
    for (int r = 0; r < scan_rotations; r += batch) {
      for (int k = 0; k < r2c; ++k) cufftExecR2C(fwd, re, sp);
      for (int k = 0; k < c2r; ++k) cufftExecC2R(inv, sp, re);
    }
  });
  cufftDestroy(fwd);
  cufftDestroy(inv);
}

void scan_args(benchmark::internal::Benchmark* b) {  // bench_match's sizes
  for (int kind : {4, 5})
    for (const auto& [n, m] : {std::pair{128, 24}, std::pair{256, 32}})
      for (int batch : {1, 8}) b->Args({kind, n, m, batch});
  b->UseManualTime()->Unit(benchmark::kMillisecond);
}

}  // namespace

BENCHMARK(match_scan)->Apply(scan_args);
BENCHMARK(cufft_floor)->Apply(scan_args);
BENCHMARK(matmul_fusor)->Arg(4096)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(matmul_cublas)->Arg(4096)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(learn_step_tape)->Arg(64)->Arg(1024)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(learn_step_replay)->Arg(64)->Arg(1024)->UseRealTime()->Unit(benchmark::kMicrosecond);
#define FUSOR_CUDA_BENCH(fn) BENCHMARK(fn)->Arg(n_default)->UseManualTime()->Unit(benchmark::kMillisecond)
FUSOR_CUDA_BENCH(cudaMemcpy_d2d);
FUSOR_CUDA_BENCH(fused_2x_plus_yz_minus_sin_w);
FUSOR_CUDA_BENCH(op_by_op_2x_plus_yz_minus_sin_w);
FUSOR_CUDA_BENCH(fused_ab_plus_c);
FUSOR_CUDA_BENCH(sum_float);
FUSOR_CUDA_BENCH(sum_of_product);

int main(int argc, char** argv) {
  if (fusor::cuda_device_count() == 0) {
    std::puts("bench_cuda: skipped: no CUDA device");
    return 77;
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
