// matmul against a direct CBLAS call on the same buffers, in the same run: what the front end
// costs over BLAS (shape checks, layout decisions, the result's allocation). Square float
// matrices at 256 and 1024, double at 256; each reports GFLOP/s as the rate counter "GFLOP"
// (2 n^3 per product).
//   fusor_matmul:      c = matmul(a, b)     (allocates the result, as NumPy's a @ b)
//   fusor_matmul_out:  matmul(a, b, c)      (writes into c, as np.matmul(a, b, out=c))
//   cblas_gemm:        cblas_?gemm(...)     (the same product written by hand)
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <map>

#include <fusor/fusor.hpp>

namespace {

using fusor::array;
using fusor::index_t;

template <class T>
struct operands {
  array<T> a, b, c;
  explicit operands(index_t n) {
    fusor::random::generator g(1);
    a = fusor::random::uniform<T>(g, {n, n}, T(-1), T(1));
    b = fusor::random::uniform<T>(g, {n, n}, T(-1), T(1));
    c = fusor::zeros<T>({n, n});
  }
};
// built on first use, once per type and size (only the sizes registered below are ever built)
template <class T>
operands<T>& inputs(index_t n) {
  static std::map<index_t, operands<T>> by_size;
  return by_size.try_emplace(n, n).first->second;
}

void report(benchmark::State& st, index_t n) {
  st.counters["GFLOP"] = benchmark::Counter(2.0 * double(n) * double(n) * double(n) * 1e-9,
                                              benchmark::Counter::kIsIterationInvariantRate);
}

template <class T>
void fusor_matmul(benchmark::State& st) {
  const index_t n = st.range(0);
  auto& d = inputs<T>(n);
  for (auto _ : st) {
    array<T> c = fusor::matmul(d.a, d.b);
    benchmark::DoNotOptimize(c.data());
  }
  report(st, n);
}
template <class T>
void fusor_matmul_out(benchmark::State& st) {
  const index_t n = st.range(0);
  auto& d = inputs<T>(n);
  for (auto _ : st) {
    fusor::matmul(d.a, d.b, d.c);
    benchmark::DoNotOptimize(d.c.data());
  }
  report(st, n);
}
template <class T>
void cblas_gemm(benchmark::State& st) {
  const index_t n = st.range(0);
  auto& d = inputs<T>(n);
  const int m = int(n);
  for (auto _ : st) {
    if constexpr (std::is_same_v<T, float>)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, m, m, 1.0f, d.a.data(), m, d.b.data(), m, 0.0f,
                  d.c.data(), m);
    else
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, m, m, 1.0, d.a.data(), m, d.b.data(), m, 0.0,
                  d.c.data(), m);
    benchmark::DoNotOptimize(d.c.data());
  }
  report(st, n);
}

// each fusor/cblas pair side by side, per size
#define FUSOR_BENCH(T, N)                                                                                   \
  BENCHMARK(fusor_matmul<T>)->Name("fusor_matmul/" #T)->Arg(N)->UseRealTime()->Unit(benchmark::kMillisecond); \
  BENCHMARK(fusor_matmul_out<T>)->Name("fusor_matmul_out/" #T)->Arg(N)->UseRealTime()->Unit(benchmark::kMillisecond); \
  BENCHMARK(cblas_gemm<T>)->Name("cblas_gemm/" #T)->Arg(N)->UseRealTime()->Unit(benchmark::kMillisecond);
FUSOR_BENCH(float, 256)
FUSOR_BENCH(float, 1024)
FUSOR_BENCH(double, 256)

}  // namespace

BENCHMARK_MAIN();
