// save_npy and load_npy of a 64 MiB float32 array, beside raw std::fwrite / std::fread of the same
// bytes to and from a file in the same temporary directory, in the same run. The files stay in the
// page cache, so the figures measure the copies and system calls of each path, not the disk.
// raw_fread reads into a buffer allocated once; raw_fread_alloc allocates a fresh array each time,
// as load_npy must (its first touch of new pages is part of the cost of returning a new array).
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include <fusor/fusor.hpp>

namespace {

namespace fs = std::filesystem;
using fusor::array;
using fusor::index_t;

constexpr std::size_t bytes = std::size_t(64) << 20;
constexpr index_t n = index_t(bytes / sizeof(float));

/// Writes `bytes` bytes from data to the file at p; false if opening, writing or closing fails.
/// The file is closed whatever happens.
bool write_all(const std::string& p, const void* data) {
  std::FILE* f = std::fopen(p.c_str(), "wb");
  if (!f) return false;
  const bool wrote = std::fwrite(data, 1, bytes, f) == bytes;
  return std::fclose(f) == 0 && wrote;
}
/// Reads `bytes` bytes of the file at p into data; false if opening or reading fails. The file
/// is closed whatever happens.
bool read_all(const std::string& p, void* data) {
  std::FILE* f = std::fopen(p.c_str(), "rb");
  if (!f) return false;
  const bool read = std::fread(data, 1, bytes, f) == bytes;
  std::fclose(f);
  return read;
}

struct workspace {
  fs::path dir;
  array<float> x;
  workspace() : x(fusor::extents{n}) {
    dir = fs::temp_directory_path() /
          ("fusor_bench_npy_" + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
    fs::create_directories(dir);
    for (index_t i = 0; i < n; ++i) x.data()[i] = float(i % 1000) * 0.25f;
    fusor::save_npy(dir / "load.npy", x);
    if (!write_all((dir / "load.bin").string(), x.data())) std::abort();
  }
  ~workspace() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};
workspace& ws() {
  static workspace w;
  return w;
}

void report(benchmark::State& st) {
  st.SetBytesProcessed(std::int64_t(st.iterations()) * std::int64_t(bytes));
  st.counters["GB/s"] = benchmark::Counter(double(bytes), benchmark::Counter::kIsIterationInvariantRate,
                                           benchmark::Counter::OneK::kIs1000);
}

void save_npy(benchmark::State& st) {
  auto& w = ws();
  const fs::path p = w.dir / "save.npy";
  for (auto _ : st) fusor::save_npy(p, w.x);
  report(st);
}

void raw_fwrite(benchmark::State& st) {
  auto& w = ws();
  const std::string p = (w.dir / "save.bin").string();
  for (auto _ : st) {
    if (!write_all(p, w.x.data())) {
      st.SkipWithError("fwrite failed");
      break;
    }
  }
  report(st);
}

void load_npy(benchmark::State& st) {
  auto& w = ws();
  const fs::path p = w.dir / "load.npy";
  for (auto _ : st) {
    array<float> a = fusor::load_npy<float>(p);
    benchmark::DoNotOptimize(a.data());
    benchmark::ClobberMemory();
  }
  report(st);
}

void raw_fread(benchmark::State& st) {
  auto& w = ws();
  const std::string p = (w.dir / "load.bin").string();
  array<float> buf(fusor::extents{n});
  buf.fill(0.0f);
  for (auto _ : st) {
    if (!read_all(p, buf.data())) {
      st.SkipWithError("fread failed");
      break;
    }
    benchmark::DoNotOptimize(buf.data());
    benchmark::ClobberMemory();
  }
  report(st);
}

void raw_fread_alloc(benchmark::State& st) {
  auto& w = ws();
  const std::string p = (w.dir / "load.bin").string();
  for (auto _ : st) {
    array<float> buf(fusor::extents{n});
    if (!read_all(p, buf.data())) {
      st.SkipWithError("fread failed");
      break;
    }
    benchmark::DoNotOptimize(buf.data());
    benchmark::ClobberMemory();
  }
  report(st);
}

}  // namespace

BENCHMARK(save_npy)->Name("save_npy/float/64MiB")->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(raw_fwrite)->Name("raw_fwrite/float/64MiB")->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(load_npy)->Name("load_npy/float/64MiB")->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(raw_fread)->Name("raw_fread/float/64MiB")->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(raw_fread_alloc)->Name("raw_fread_alloc/float/64MiB")->UseRealTime()->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
