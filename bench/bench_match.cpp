// Template matching against its FFT floor, in the same run: a scan's cost per rotation beside the
// r2c + c2r pair of the same grid written directly against FFTW, which no scan that transforms
// one rotation at a time can beat (the cpu scan's default pairs of rotations, each pair in one
// complex transform pair, go below it; fusor_scan_singly is the scan one rotation at a time).
//   fusor_scan/<score>/<target>/<template>/<threads>:  match::scan over 8 rotations (uniform
//       rotations, the cubic spline, measured FFT plans: the scan's defaults), its setup included
//       (the target's spectra, the template's prefilter), its plans made by a warm-up scan
//       (counter plans_made: plans the timed scans had to make again, 0 when the cache kept them)
//   fusor_scan_singly/...:  the same with scan_options::batch 1: real transforms, a rotation at a time
//   fusor_scan_setup/...:  the same with one rotation per thread: bench/pairs.py prints the cost of
//       one more rotation, (fusor_scan - fusor_scan_setup) / (8 - threads), beside the floor's
//   fftw_floor/<score>/<target>/<template>/<threads>:   the transforms the score needs per rotation on
//       the scan's grid (1 r2c + 1 c2r for CC and FLCSphericalMask; 2 r2c + 3 c2r for FLC), 8 times,
//       as direct FFTW calls with plans made once with FFTW_MEASURE, rotations dealt to threads with
//       one single-threaded plan each, as the scan does
//   fusor_scan_box/<score>/<n0>/<n1>/<n2>/<template>/<threads>/<edges>:  the scan on a non-cubic
//       target whose sides are not 5-smooth (a factor 7; primes of 29 to 61; and tilted_recovery's
//       200 x 200 x 100), edges 0 zeros, 1 wrap;
//       counter grid: the FFT grid it picked (scan_options::grid fast), as d0*10^6 + d1*10^3 + d2
//   fftw_floor_box/...:     the floor on that grid;  fftw_floor_target/...: on the least grid
//       (grid_choice::target; with wrap the target's own shape)
//   fusor_rigid_transform/<n>/<method>:  a template rotated about its centre (prefiltered
//       coefficients for cubic, as the scan rotates them) into a caller's buffer
//   copy_floor/<n>/<method>:            the same bytes copied (std::copy): the memory floor
//   fusor_find_peaks/<n>/<min_distance>: match::find_peaks on an n^3 map of uniform noise (the worst
//       case: a local maximum every few voxels), at most 1000 peaks, one thread
//   hand_local_maxima/<n>/1:  the same for min_distance 1 by a plain loop: every voxel against its
//       26 neighbours, the maxima sorted, the top 1000 kept
//   fusor_read_mrc/<n>, raw_fread_mrc/<n>:  an n^3 float32 MRC file (in the page cache) read into a
//       volume indexed [x, y, z] (the transposition included), beside fread of its bytes
//   fusor_write_mrc/<n>, raw_fwrite_mrc/<n>:  the same volume written (statistics, transposition and
//       the temporary file's rename included), beside fwrite of its bytes
//   tilted_recovery/<weighting>/<threads>/<contrast 1e-4>: one search of a simulated tilt series' tomogram
//       (match::simulate_tilt_series: 200 x 200 x 100 voxels of 10 Å, ten copies of a 21^3 template,
//       ±60° in 3° steps, 2–5 µm defocus per tilt, 3 e/Å² per tilt, image contrast 0.01 or 0.006),
//       FLCSphericalMask over a 20°
//       set, the template weighted by nothing (0), a ±60° wedge (1) or the series (2); counters:
//       the copies found (a peak within 2 voxels) at the one-false-positive threshold, the other
//       peaks above it (false positives), and the time per rotation
// Scores: 0 CC, 4 FLCSphericalMask, 5 FLC (match::score's order).
#include <benchmark/benchmark.h>
#include <fftw3.h>

#include <algorithm>
#include <cmath>
#include <array>
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fusor/fusor.hpp>

namespace {

using fusor::array;
using fusor::extents;
using fusor::index_t;
namespace match = fusor::match;
namespace fft = fusor::fft;

constexpr int rotations_per_run = 8;

array<float> random_volume(const extents& shape, std::uint64_t seed) {
  fusor::random::generator g(seed);
  return fusor::random::uniform<float>(g, shape, -1.0f, 1.0f);
}

match::score score_of(std::int64_t i) { return match::score(int(i)); }

void count_rotations(benchmark::State& st, int rotations) {
  st.counters["rotations"] = rotations;
}

// a scan of `rotations` rotations of an m^3 template over a target of shape n, timed as the scan's
// defaults run it
void scan_run(benchmark::State& st, match::score kind, const extents& n, index_t m, int threads, match::edge_mode edges,
              int rotations, index_t batch = 0) {
  fusor::set_num_threads(threads);
  fft::set_threads(threads);
  const auto target = random_volume(n, 1), templ = random_volume({m, m, m}, 2);
  const auto mask = match::sphere_mask<fusor::cpu>({m, m, m}, double(m) / 2 - 1);
  auto rots = match::uniform_rotations(30.0);
  rots.resize(std::size_t(rotations));
  match::scan_options o;
  o.threads = threads;
  o.batch = batch;
  o.edges = edges;
  const auto run = [&] {
    auto r = match::scan(target, templ, mask, rots, kind, o);
    benchmark::DoNotOptimize(r.best_score.data());
  };
  // a warm-up scan (once per shape and thread count: the repetitions share it) makes the
  // measured FFTW plans, a second or more each at 256^3, which the plan cache then keeps: the
  // timed scans are what every scan after the first costs, as the floor's plans are made outside
  // its loop too
  static std::set<std::array<std::int64_t, 9>> warm;
  if (warm.insert({std::int64_t(kind), n[0], n[1], n[2], m, threads, std::int64_t(edges), rotations, batch}).second) run();
  const auto misses = fft::plan_cache_info<fusor::cpu>().misses;
  for (auto _ : st) run();
  // plans made inside the timed loop (the plan cache evicted some): a second or more each at 256^3
  st.counters["plans_made"] = double(fft::plan_cache_info<fusor::cpu>().misses - misses);
  const extents f = match::scan_fft_shape(n, {m, m, m}, edges);
  st.counters["grid"] = double(f[0] * 1000000 + f[1] * 1000 + f[2]);  // the lengths as ddd,ddd,ddd
  count_rotations(st, rotations);
}
void scan_run(benchmark::State& st, int rotations, index_t batch = 0) {
  const index_t n = st.range(1);
  scan_run(st, score_of(st.range(0)), {n, n, n}, st.range(2), int(st.range(3)), match::edge_mode::zeros, rotations, batch);
}
void fusor_scan(benchmark::State& st) { scan_run(st, rotations_per_run); }
void fusor_scan_singly(benchmark::State& st) { scan_run(st, rotations_per_run, 1); }
// the same with as many rotations as threads: the setup and one round of rotations, so that
// (fusor_scan - fusor_scan_setup) / (rotations - threads) is the cost of one more rotation
void fusor_scan_setup(benchmark::State& st) { scan_run(st, int(st.range(3))); }

// the transforms a score needs per rotation on the grid f (FLC: 2 r2c + 3 c2r; else 1 + 1), for
// rotations_per_run rotations dealt to `threads` threads, as direct FFTW calls
void floor_run(benchmark::State& st, match::score kind, const extents& f, int threads) {
  const index_t fc = f[2] / 2 + 1;
  const int r2c = kind == match::score::flc ? 2 : 1, c2r = kind == match::score::flc ? 3 : 1;
  struct buffers {
    array<float> real;
    array<std::complex<float>> spec;
  };
  std::vector<buffers> b;
  for (int t = 0; t < threads; ++t) b.push_back({random_volume(f, 3 + std::uint64_t(t)), array<std::complex<float>>(extents{f[0], f[1], fc})});
  fftwf_plan_with_nthreads(1);
  // measuring overwrites the arrays: plan on scratch copies of the same alignment, then refill
  array<float> scratch_real(f);
  array<std::complex<float>> scratch_spec(extents{f[0], f[1], fc});
  fftwf_plan fwd = fftwf_plan_dft_r2c_3d(int(f[0]), int(f[1]), int(f[2]), scratch_real.data(),
                                         reinterpret_cast<fftwf_complex*>(scratch_spec.data()), FFTW_MEASURE);
  fftwf_plan inv = fftwf_plan_dft_c2r_3d(int(f[0]), int(f[1]), int(f[2]), reinterpret_cast<fftwf_complex*>(scratch_spec.data()),
                                         scratch_real.data(), FFTW_MEASURE | FFTW_DESTROY_INPUT);
  for (auto _ : st) {
#pragma omp parallel for num_threads(threads) schedule(static, 1)
    for (int t = 0; t < threads; ++t) {
      auto* re = b[std::size_t(t)].real.data();
      auto* sp = reinterpret_cast<fftwf_complex*>(b[std::size_t(t)].spec.data());
      for (int r = t; r < rotations_per_run; r += threads) {
        for (int k = 0; k < r2c; ++k) fftwf_execute_dft_r2c(fwd, re, sp);
        for (int k = 0; k < c2r; ++k) fftwf_execute_dft_c2r(inv, sp, re);
      }
    }
    benchmark::DoNotOptimize(b[0].real.data());
  }
  fftwf_destroy_plan(fwd);
  fftwf_destroy_plan(inv);
  count_rotations(st, rotations_per_run);
}
void fftw_floor(benchmark::State& st) {
  const index_t n = st.range(1), m = st.range(2);
  floor_run(st, score_of(st.range(0)), match::scan_fft_shape({n, n, n}, {m, m, m}), int(st.range(3)));
}

// the shapes tomograms have: fusor_scan_box/<score>/<n0>/<n1>/<n2>/<template>/<threads>/<edges
// 0 zeros, 1 wrap>, the scan on the grid it picks (counter grid); fftw_floor_box/... the floor on
// that grid; fftw_floor_target/... the floor on the least grid (grid_choice::target: with wrap
// the target's own shape, which pyTME transforms)
match::edge_mode box_edges(const benchmark::State& st) { return st.range(6) ? match::edge_mode::wrap : match::edge_mode::zeros; }
extents box_target(const benchmark::State& st) { return {st.range(1), st.range(2), st.range(3)}; }
void fusor_scan_box(benchmark::State& st) {
  scan_run(st, score_of(st.range(0)), box_target(st), st.range(4), int(st.range(5)), box_edges(st), rotations_per_run);
}
void fftw_floor_box(benchmark::State& st) {
  const index_t m = st.range(4);
  floor_run(st, score_of(st.range(0)), match::scan_fft_shape(box_target(st), {m, m, m}, box_edges(st)), int(st.range(5)));
}
void fftw_floor_target(benchmark::State& st) {
  const index_t m = st.range(4);
  floor_run(st, score_of(st.range(0)), match::scan_fft_shape(box_target(st), {m, m, m}, box_edges(st), match::grid_choice::target),
            int(st.range(5)));
}

void tilted_recovery(benchmark::State& st) {
  const int weighting = int(st.range(0)), threads = int(st.range(1));
  const double contrast = double(st.range(2)) * 1e-4;
  fusor::set_num_threads(threads);
  fft::set_threads(threads);
  const index_t t = 21;
  const extents ms{t, t, t};
  match::mask_options body, lobe, other;
  body.edge = lobe.edge = other.edge = match::mask_edge::gaussian(1.0);
  lobe.center = match::vec3{10, 15, 11};
  other.center = match::vec3{14, 7, 7};
  const array<float> templ(match::ellipsoid_mask<fusor::cpu>(ms, {6, 3.6, 2.4}, body) + 0.6f * match::sphere_mask<fusor::cpu>(ms, 1.8, lobe) +
                           0.8f * match::sphere_mask<fusor::cpu>(ms, 1.4, other));
  match::tilt_simulation s;
  s.shape = {200, 200, 100};
  s.copies = 10;
  s.contrast = contrast;  // 0.01: every copy found by every weighting; 0.006: near the noise
  const auto sim = match::simulate_tilt_series(templ, s);
  const auto mask = match::sphere_mask<fusor::cpu>(ms, 9.0, body);
  const auto rots = match::uniform_rotations(20);
  match::scan_options o;
  o.threads = threads;
  o.statistics = true;
  o.template_filter.voxel_size = s.voxel_size;
  if (weighting == 1) o.template_filter.wedge = match::missing_wedge{-60, 60, 1, 2};
  if (weighting == 2) o.template_filter.tilts = match::tilt_weighting{sim.series};
  double found = 0, false_positives = 0;
  for (auto _ : st) {
    const auto res = match::scan(sim.tomogram, templ, mask, rots, match::score::flc_spherical_mask, o);
    match::peak_options po;
    po.min_distance = double(t / 2);
    po.margin = {t / 2, t / 2, t / 2};
    po.false_positives = 1.0;
    const auto peaks = match::find_peaks(res, rots, po);
    found = false_positives = 0;
    for (const auto& p : peaks) {
      bool near = false;
      for (const auto& c : sim.positions)
        near = near || std::hypot(double(p.position[0] - c[0]), double(p.position[1] - c[1]), double(p.position[2] - c[2])) <= 2.0;
      (near ? found : false_positives) += 1;
    }
  }
  st.counters["found"] = found;
  st.counters["false_positives"] = false_positives;
  st.counters["copies"] = double(sim.positions.size());
  st.counters["rotations"] = double(rots.size());
  st.counters["s_per_rotation"] = benchmark::Counter(double(rots.size()), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void fusor_rigid_transform(benchmark::State& st) {
  const index_t n = st.range(0);
  const bool cubic = st.range(1) != 0;
  fusor::set_num_threads(1);
  const auto v = random_volume({n, n, n}, 4);
  const auto source = cubic ? match::bspline_coefficients(v) : v.copy();
  array<float> out(extents{n, n, n});
  match::transform_options o;
  o.method = cubic ? match::interpolation::cubic : match::interpolation::linear;
  o.prefiltered = true;
  const auto r = match::to_matrix(match::axis_angle({1, 2, 3}, 40));
  for (auto _ : st) {
    match::rigid_transform(source, r, {}, out, o);
    benchmark::DoNotOptimize(out.data());
  }
  st.counters["voxels"] = double(v.size());
}

void copy_floor(benchmark::State& st) {
  const index_t n = st.range(0);
  const auto v = random_volume({n, n, n}, 4);
  array<float> out(extents{n, n, n});
  for (auto _ : st) {
    std::copy(v.data(), v.data() + v.size(), out.data());
    benchmark::DoNotOptimize(out.data());
  }
}

void fusor_find_peaks(benchmark::State& st) {
  const index_t n = st.range(0);
  fusor::set_num_threads(1);
  const auto map = random_volume({n, n, n}, 5);
  match::peak_options o;
  o.min_distance = double(st.range(1));
  std::size_t found = 0;
  for (auto _ : st) {
    const auto p = match::find_peaks(map, o);
    found = p.size();
    benchmark::DoNotOptimize(p.data());
  }
  st.counters["peaks"] = double(found);
}

void hand_local_maxima(benchmark::State& st) {
  const index_t n = st.range(0);
  const auto map = random_volume({n, n, n}, 5);
  const float* v = map.data();
  struct cand {
    float s;
    index_t i;
  };
  std::vector<cand> c;
  for (auto _ : st) {
    c.clear();
    for (index_t i = 0; i < n; ++i)
      for (index_t j = 0; j < n; ++j)
        for (index_t k = 0; k < n; ++k) {
          const float x = v[(i * n + j) * n + k];
          bool top = true;
          for (index_t a = std::max<index_t>(0, i - 1); a <= std::min(n - 1, i + 1) && top; ++a)
            for (index_t b = std::max<index_t>(0, j - 1); b <= std::min(n - 1, j + 1) && top; ++b)
              for (index_t e = std::max<index_t>(0, k - 1); e <= std::min(n - 1, k + 1); ++e)
                if (v[(a * n + b) * n + e] > x) {
                  top = false;
                  break;
                }
          if (top) c.push_back({x, (i * n + j) * n + k});
        }
    std::sort(c.begin(), c.end(), [](const cand& a, const cand& b) { return a.s > b.s || (a.s == b.s && a.i < b.i); });
    if (c.size() > 1000) c.resize(1000);
    benchmark::DoNotOptimize(c.data());
  }
  st.counters["peaks"] = double(c.size());
}

std::filesystem::path mrc_path(index_t n) {
  return std::filesystem::temp_directory_path() / ("fusor_bench_" + std::to_string(n) + ".mrc");
}
void fusor_read_mrc(benchmark::State& st) {
  const index_t n = st.range(0);
  fusor::set_num_threads(1);
  match::write_mrc(mrc_path(n), random_volume({n, n, n}, 6));
  for (auto _ : st) {
    const auto v = match::read_mrc(mrc_path(n));
    benchmark::DoNotOptimize(v.data.data());
  }
  st.SetBytesProcessed(std::int64_t(st.iterations()) * n * n * n * 4);
}
void raw_fread_mrc(benchmark::State& st) {
  const index_t n = st.range(0);
  match::write_mrc(mrc_path(n), random_volume({n, n, n}, 6));
  std::vector<float> buffer(std::size_t(n * n * n));
  for (auto _ : st) {
    std::FILE* f = std::fopen(mrc_path(n).c_str(), "rb");
    std::fseek(f, 1024, SEEK_SET);
    const std::size_t got = std::fread(buffer.data(), 4, buffer.size(), f);
    std::fclose(f);
    benchmark::DoNotOptimize(got);
    benchmark::DoNotOptimize(buffer.data());
  }
  st.SetBytesProcessed(std::int64_t(st.iterations()) * n * n * n * 4);
}
void fusor_write_mrc(benchmark::State& st) {
  const index_t n = st.range(0);
  fusor::set_num_threads(1);
  const auto v = random_volume({n, n, n}, 6);
  for (auto _ : st) match::write_mrc(mrc_path(n), v);
  st.SetBytesProcessed(std::int64_t(st.iterations()) * n * n * n * 4);
}
void raw_fwrite_mrc(benchmark::State& st) {
  const index_t n = st.range(0);
  const auto v = random_volume({n, n, n}, 6);
  const std::vector<unsigned char> header(1024, 0);
  for (auto _ : st) {
    std::FILE* f = std::fopen(mrc_path(n).c_str(), "wb");
    std::fwrite(header.data(), 1, header.size(), f);
    std::fwrite(v.data(), 4, std::size_t(v.size()), f);
    std::fclose(f);
  }
  st.SetBytesProcessed(std::int64_t(st.iterations()) * n * n * n * 4);
}

void peak_args(benchmark::internal::Benchmark* b) {
  for (int n : {128, 256}) {
    b->Args({n, 1});
    b->Args({n, 8});
  }
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}
void local_max_args(benchmark::internal::Benchmark* b) {
  for (int n : {128, 256}) b->Args({n, 1});
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}
void mrc_args(benchmark::internal::Benchmark* b) {
  for (int n : {128, 256}) b->Arg(n);
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}

void scan_args(benchmark::internal::Benchmark* b) {  // the sizes: 128^3 / 24^3 and 256^3 / 32^3
  for (int kind : {4, 5})
    for (const auto& [n, m] : {std::pair{128, 24}, std::pair{256, 32}})
      for (int threads : {1, 2}) b->Args({kind, n, m, threads});
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}
void box_args(benchmark::internal::Benchmark* b) {
  // sides with a factor 7 and a 20^3 template; sides with primes 29, 61 and 31; tilted_recovery's
  // 200 x 200 x 100 tomogram with its 21^3 template. CC, FLCSphericalMask and FLC
  for (int kind : {0, 4, 5})
    for (const auto& n : {std::array<int, 4>{112, 126, 70, 20}, std::array<int, 4>{116, 122, 62, 20}, std::array<int, 4>{200, 200, 100, 21}})
      for (int threads : {1, 2})
        for (int wrap : {0, 1}) b->Args({kind, n[0], n[1], n[2], n[3], threads, wrap});
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}
void transform_args(benchmark::internal::Benchmark* b) {
  for (int n : {32, 64})
    for (int cubic : {0, 1}) b->Args({n, cubic});
  b->Unit(benchmark::kMicrosecond)->UseRealTime();
}

}  // namespace

BENCHMARK(fusor_scan)->Apply(scan_args);
BENCHMARK(fusor_scan_singly)->Apply(scan_args);
BENCHMARK(fusor_scan_setup)->Apply(scan_args);
BENCHMARK(fftw_floor)->Apply(scan_args);
BENCHMARK(fusor_scan_box)->Apply(box_args);
BENCHMARK(fftw_floor_box)->Apply(box_args);
BENCHMARK(fftw_floor_target)->Apply(box_args);
BENCHMARK(fusor_rigid_transform)->Apply(transform_args);
void recovery_args(benchmark::internal::Benchmark* b) {
  for (int contrast : {100, 60})
    for (int weighting : {0, 1, 2}) b->Args({weighting, 2, contrast});
}
BENCHMARK(tilted_recovery)->Apply(recovery_args)->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK(copy_floor)->Apply(transform_args);
BENCHMARK(fusor_find_peaks)->Apply(peak_args);
BENCHMARK(hand_local_maxima)->Apply(local_max_args);
BENCHMARK(fusor_read_mrc)->Apply(mrc_args);
BENCHMARK(raw_fread_mrc)->Apply(mrc_args);
BENCHMARK(fusor_write_mrc)->Apply(mrc_args);
BENCHMARK(raw_fwrite_mrc)->Apply(mrc_args);

BENCHMARK_MAIN();
