// The FFT front end against direct FFTW calls on the same data, in the same run: what fusor adds
// over the library (argument checks, the plan-cache lookup, allocating results).
//   fusor_rfft_roundtrip:      X = rfftn(x); y = irfftn(std::move(X), shape, {}, norm_mode::forward)
//                              (both directions unscaled, as the direct calls)
//   fftw_roundtrip:            fftwf_execute_dft_r2c + fftwf_execute_dft_c2r with plans made once,
//                              buffers allocated once (FFTW_ESTIMATE, fusor's default effort), in
//                              memory from fusor's allocator: the ratio is the front end's cost
//   fftw_malloc_roundtrip:     the same in fftwf_malloc's memory (4 KiB pages, where fusor's large
//                              arrays get 2 MiB pages): what a hand-written FFTW program gets
//   fusor_rfft_roundtrip_norm: the same with NumPy's default norms (the inverse scaled by 1/N)
//   fftw_roundtrip_norm:       the direct calls plus a hand loop scaling the result
//   fusor_fftconvolve:         fftconvolve(image, kernel, conv_mode::same)
//   fftw_fftconvolve:          the same written by hand: zero-padded copies into FFTW buffers of
//                              next_fast_len size, two r2c, the product loop (with 1/N), one c2r,
//                              the centred block copied out
//   fftw_measured_pair/<n0>/<n1>/<n2>: a one-thread FFTW_MEASURE r2c + c2r pair, the data of
//                              fft::transform_cost's fit (bench/fit_transform_cost.py refits it)
// Arguments: the shape, then the thread count (FFTW threads and fusor's loops alike).
#include <benchmark/benchmark.h>
#include <fftw3.h>

#include <cmath>
#include <complex>
#include <cstring>

#include <fusor/fusor.hpp>

namespace {

using fusor::array;
using fusor::extents;
using fusor::index_t;
namespace fft = fusor::fft;

array<float> random_volume(const extents& shape, std::uint64_t seed) {
  fusor::random::generator g(seed);
  return fusor::random::uniform<float>(g, shape, -1.0f, 1.0f);
}

extents shape_of(const benchmark::State& st) { return {st.range(0), st.range(1), st.range(2)}; }

void set_threads(int t) {
  fusor::set_num_threads(t);
  fft::set_threads(t);
}

void report(benchmark::State& st, const extents& s) {
  st.counters["points"] = double(s.numel());
}

void fusor_rfft_roundtrip(benchmark::State& st) {
  const extents s = shape_of(st);
  set_threads(int(st.range(3)));
  const array<float> x = random_volume(s, 1);
  for (auto _ : st) {
    auto X = fft::rfftn(x);
    array<float> y = fft::irfftn(std::move(X), s, {}, fft::norm_mode::forward);
    benchmark::DoNotOptimize(y.data());
  }
  report(st, s);
}

void fusor_rfft_roundtrip_norm(benchmark::State& st) {
  const extents s = shape_of(st);
  set_threads(int(st.range(3)));
  const array<float> x = random_volume(s, 1);
  for (auto _ : st) {
    auto X = fft::rfftn(x);
    array<float> y = fft::irfftn(std::move(X), s);
    benchmark::DoNotOptimize(y.data());
  }
  report(st, s);
}

struct fftw_roundtrip_state {
  // fusor_memory: buffers from fusor arrays (2 MiB-aligned huge pages from 4 MiB up), so that the
  // comparison with fusor measures the front end alone; otherwise fftwf_malloc's (4 KiB pages)
  array<float> in_a, out_a;
  array<std::complex<float>> spec_a;
  float* in;
  fftwf_complex* spec;
  float* out;
  bool own;
  fftwf_plan fwd, inv;
  index_t n, nc;
  fftw_roundtrip_state(const extents& s, int threads, bool fusor_memory) : own(!fusor_memory) {
    n = s.numel();
    nc = s[0] * s[1] * (s[2] / 2 + 1);
    if (fusor_memory) {
      in_a = array<float>(s);
      out_a = array<float>(s);
      spec_a = array<std::complex<float>>(extents{s[0], s[1], s[2] / 2 + 1});
      in = in_a.data();
      out = out_a.data();
      spec = reinterpret_cast<fftwf_complex*>(spec_a.data());
    } else {
      in = fftwf_alloc_real(std::size_t(n));
      out = fftwf_alloc_real(std::size_t(n));
      spec = fftwf_alloc_complex(std::size_t(nc));
    }
    fftwf_init_threads();
    fftwf_plan_with_nthreads(threads);
    fwd = fftwf_plan_dft_r2c_3d(int(s[0]), int(s[1]), int(s[2]), in, spec, FFTW_ESTIMATE);
    inv = fftwf_plan_dft_c2r_3d(int(s[0]), int(s[1]), int(s[2]), spec, out, FFTW_ESTIMATE);
    const array<float> x = random_volume(s, 1);
    std::memcpy(in, x.data(), std::size_t(n) * sizeof(float));
  }
  ~fftw_roundtrip_state() {
    fftwf_destroy_plan(fwd);
    fftwf_destroy_plan(inv);
    if (own) {
      fftwf_free(in);
      fftwf_free(out);
      fftwf_free(spec);
    }
  }
};

void roundtrip(benchmark::State& st, bool fusor_memory) {
  const extents s = shape_of(st);
  set_threads(int(st.range(3)));
  fftw_roundtrip_state d(s, int(st.range(3)), fusor_memory);
  for (auto _ : st) {
    fftwf_execute_dft_r2c(d.fwd, d.in, d.spec);
    fftwf_execute_dft_c2r(d.inv, d.spec, d.out);
    benchmark::DoNotOptimize(d.out);
  }
  report(st, s);
}
void fftw_roundtrip(benchmark::State& st) { roundtrip(st, true); }
void fftw_malloc_roundtrip(benchmark::State& st) { roundtrip(st, false); }

void fftw_roundtrip_norm(benchmark::State& st) {
  const extents s = shape_of(st);
  const int t = int(st.range(3));
  set_threads(t);
  fftw_roundtrip_state d(s, t, true);
  const float f = 1.0f / float(d.n);
  for (auto _ : st) {
    fftwf_execute_dft_r2c(d.fwd, d.in, d.spec);
    fftwf_execute_dft_c2r(d.inv, d.spec, d.out);
#pragma omp parallel for num_threads(t) schedule(static)
    for (index_t i = 0; i < d.n; ++i) d.out[i] *= f;
    benchmark::DoNotOptimize(d.out);
  }
  report(st, s);
}

void fusor_fftconvolve(benchmark::State& st) {
  const index_t n = st.range(0), k = st.range(1);
  set_threads(int(st.range(2)));
  const array<float> img = random_volume({1, n, n}, 2).reshape({n, n}), ker = random_volume({1, k, k}, 3).reshape({k, k});
  for (auto _ : st) {
    array<float> r = fft::fftconvolve(img, ker, fft::conv_mode::same);
    benchmark::DoNotOptimize(r.data());
  }
}

void fftw_fftconvolve(benchmark::State& st) {
  const index_t n = st.range(0), k = st.range(1);
  const int t = int(st.range(2));
  set_threads(t);
  const array<float> img = random_volume({1, n, n}, 2).reshape({n, n}), ker = random_volume({1, k, k}, 3).reshape({k, k});
  const index_t f = fft::next_fast_len(n + k - 1), fc = f / 2 + 1;
  array<float> a_mem(extents{f, f}), b_mem(extents{f, f});  // fusor's allocator, as fusor_fftconvolve's
  array<std::complex<float>> A_mem(extents{f, fc}), B_mem(extents{f, fc});
  float* a = a_mem.data();
  float* b = b_mem.data();
  fftwf_complex* A = reinterpret_cast<fftwf_complex*>(A_mem.data());
  fftwf_complex* Bs = reinterpret_cast<fftwf_complex*>(B_mem.data());
  fftwf_init_threads();
  fftwf_plan_with_nthreads(t);
  fftwf_plan pa = fftwf_plan_dft_r2c_2d(int(f), int(f), a, A, FFTW_ESTIMATE);
  fftwf_plan pb = fftwf_plan_dft_r2c_2d(int(f), int(f), b, Bs, FFTW_ESTIMATE);
  fftwf_plan pi = fftwf_plan_dft_c2r_2d(int(f), int(f), A, a, FFTW_ESTIMATE);
  array<float> out(extents{n, n});
  const float scale = 1.0f / float(f * f);
  const index_t start = (n + k - 1 - n) / 2;
  for (auto _ : st) {
    std::memset(a, 0, sizeof(float) * std::size_t(f * f));
    std::memset(b, 0, sizeof(float) * std::size_t(f * f));
    for (index_t i = 0; i < n; ++i) std::memcpy(a + i * f, img.data() + i * n, sizeof(float) * std::size_t(n));
    for (index_t i = 0; i < k; ++i) std::memcpy(b + i * f, ker.data() + i * k, sizeof(float) * std::size_t(k));
    fftwf_execute(pa);
    fftwf_execute(pb);
    for (index_t i = 0; i < f * fc; ++i) {
      const float re = A[i][0] * Bs[i][0] - A[i][1] * Bs[i][1], im = A[i][0] * Bs[i][1] + A[i][1] * Bs[i][0];
      A[i][0] = re * scale;
      A[i][1] = im * scale;
    }
    fftwf_execute(pi);
    for (index_t i = 0; i < n; ++i) std::memcpy(out.data() + i * n, a + (i + start) * f + start, sizeof(float) * std::size_t(n));
    benchmark::DoNotOptimize(out.data());
  }
  fftwf_destroy_plan(pa);
  fftwf_destroy_plan(pb);
  fftwf_destroy_plan(pi);
}

// One-thread FFTW_MEASURE r2c + c2r pairs of the grids fft::transform_cost was fitted to (7-smooth
// axes of 60 to 200 beside 128^2, on each axis, and cubes of 64 to 192), counter model: the
// model's cost of the grid. bench/fit_transform_cost.py refits the model's weights from them.
void fftw_measured_pair(benchmark::State& st) {
  const int n0 = int(st.range(0)), n1 = int(st.range(1)), n2 = int(st.range(2));
  const extents f{n0, n1, n2};
  array<float> real(f);
  array<std::complex<float>> spec(extents{n0, n1, n2 / 2 + 1});
  fftwf_plan_with_nthreads(1);
  auto* c = reinterpret_cast<fftwf_complex*>(spec.data());
  fftwf_plan fwd = fftwf_plan_dft_r2c_3d(n0, n1, n2, real.data(), c, FFTW_MEASURE);
  fftwf_plan inv = fftwf_plan_dft_c2r_3d(n0, n1, n2, c, real.data(), FFTW_MEASURE | FFTW_DESTROY_INPUT);
  for (index_t i = 0; i < real.size(); ++i) real.data()[i] = float(i % 17) - 8.0f;
  for (auto _ : st) {
    fftwf_execute(fwd);
    fftwf_execute(inv);
    benchmark::DoNotOptimize(real.data());
  }
  fftwf_destroy_plan(fwd);
  fftwf_destroy_plan(inv);
  st.counters["model"] = fft::transform_cost(f);
  st.counters["ns_per_cell"] = benchmark::Counter(double(f.numel()), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
void fit_grids(benchmark::internal::Benchmark* b) {
  for (int n = 60; n <= 200; ++n) {
    if (!std::isfinite(fft::axis_cost(n))) continue;
    b->Args({128, 128, n});
    if (n != 128) {
      b->Args({128, n, 128});
      b->Args({n, 128, 128});
    }
  }
  for (int n : {64, 72, 80, 84, 96, 100, 112, 120, 126, 140, 144, 150, 160, 168, 180, 192}) b->Args({n, n, n});
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}

void volumes(benchmark::internal::Benchmark* b) {
  for (int t : {1, 2}) {
    b->Args({128, 128, 128, t});
    b->Args({256, 256, 256, t});
    b->Args({512, 512, 200, t});
  }
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}

}  // namespace

BENCHMARK(fusor_rfft_roundtrip)->Apply(volumes);
BENCHMARK(fftw_roundtrip)->Apply(volumes);
BENCHMARK(fftw_malloc_roundtrip)->Apply(volumes);
BENCHMARK(fusor_rfft_roundtrip_norm)->Apply(volumes);
BENCHMARK(fftw_roundtrip_norm)->Apply(volumes);
BENCHMARK(fftw_measured_pair)->Apply(fit_grids);
BENCHMARK(fusor_fftconvolve)->Args({512, 31, 1})->Args({512, 31, 2})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(fftw_fftconvolve)->Args({512, 31, 1})->Args({512, 31, 2})->Unit(benchmark::kMillisecond)->UseRealTime();

BENCHMARK_MAIN();
