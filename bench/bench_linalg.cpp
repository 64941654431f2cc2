// matmul against a direct CBLAS call on the same buffers, in the same run: what the front end
// costs over BLAS (shape checks, layout decisions, the result's allocation). Square float
// matrices at 256 and 1024, double at 256, float16 and bfloat16 at both (beside float), and a
// layer-shaped product in all three; each reports GFLOP/s as the rate counter "GFLOP"
// (2 n^3 per product).
//   fusor_matmul:      c = matmul(a, b)     (allocates the result, as NumPy's a @ b)
//   fusor_matmul_out:  matmul(a, b, c)      (writes into c, as np.matmul(a, b, out=c))
//   cblas_gemm:        cblas_?gemm(...)     (the same product written by hand)
// Then linalg::solve / svd / eigh on a stack of 256 small matrices beside the same LAPACK
// routines called directly (see below).
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <algorithm>
#include <map>
#include <vector>

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

// float16 and bfloat16 products (float32 accumulation: K panels widened for sgemm, the result
// rounded once), beside cblas_gemm/float above at the same sizes: the ratio is the cost of the
// conversions. Then a layer's shape (1029 = 3 * 7^3 rows, K = 784, N = 448) in all three types.
using fusor::bfloat16;
using fusor::float16;
#define FUSOR_HALF_BENCH(T, N)                                                                              \
  BENCHMARK(fusor_matmul<T>)->Name("fusor_matmul/" #T)->Arg(N)->UseRealTime()->Unit(benchmark::kMillisecond); \
  BENCHMARK(fusor_matmul_out<T>)->Name("fusor_matmul_out/" #T)->Arg(N)->UseRealTime()->Unit(benchmark::kMillisecond);
FUSOR_HALF_BENCH(float16, 256)
FUSOR_HALF_BENCH(float16, 1024)
FUSOR_HALF_BENCH(bfloat16, 256)
FUSOR_HALF_BENCH(bfloat16, 1024)

template <class T>
void fusor_matmul_layer(benchmark::State& st) {
  const index_t m = 1029, k = 784, n = 448;
  fusor::random::generator g(3);
  const array<T> x = fusor::random::uniform<T>(g, {m, k}, T(-1), T(1));
  const array<T> w = fusor::random::uniform<T>(g, {k, n}, T(-1), T(1));
  array<T> y = fusor::zeros<T>({m, n});
  for (auto _ : st) {
    fusor::matmul(x, w, y);
    benchmark::DoNotOptimize(y.data());
  }
  st.counters["GFLOP"] = benchmark::Counter(2.0 * double(m) * double(k) * double(n) * 1e-9,
                                              benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(fusor_matmul_layer<float>)->Name("fusor_matmul_layer/float")->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(fusor_matmul_layer<float16>)->Name("fusor_matmul_layer/float16")->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(fusor_matmul_layer<bfloat16>)->Name("fusor_matmul_layer/bfloat16")->UseRealTime()->Unit(benchmark::kMillisecond);

// The decompositions on a batch of small matrices beside the same LAPACK routines called directly
// on copies of the same buffers (what fusor must do too: LAPACK factorises in place): solve
// (getrf + getrs, one right-hand side), svd (gesdd, full vectors) and eigh (syevd, vectors), 256
// matrices of 32 x 32 and 64 x 64, double, one BLAS thread.
template <char Op>
struct stack_inputs {
  array<double> a, b;
  explicit stack_inputs(index_t n) {
    fusor::random::generator g(7);
    a = fusor::random::uniform<double>(g, {batch_count, n, n}, -1.0, 1.0);
    if (Op == 'h') a = a + fusor::swapaxes(a, -1, -2);  // symmetric
    a = a + double(n) * fusor::eye<double>(n);
    b = fusor::random::uniform<double>(g, {batch_count, n, 1}, -1.0, 1.0);
  }
  static constexpr index_t batch_count = 256;
};
template <char Op>
stack_inputs<Op>& stack(index_t n) {
  static std::map<index_t, stack_inputs<Op>> by_size;
  return by_size.try_emplace(n, n).first->second;
}
void fusor_solve(benchmark::State& st) {
  fusor::set_blas_num_threads(1);
  auto& in = stack<'s'>(st.range(0));
  for (auto _ : st) {
    auto x = fusor::linalg::solve(in.a, in.b);
    benchmark::DoNotOptimize(x.data());
  }
}
void lapack_solve(benchmark::State& st) {
  fusor::set_blas_num_threads(1);
  auto& in = stack<'s'>(st.range(0));
  const int n = int(st.range(0)), one = 1;
  const index_t nb = stack_inputs<'s'>::batch_count;
  std::vector<double> a(std::size_t(nb * n * n)), b(std::size_t(nb * n));
  std::vector<int> piv(static_cast<std::size_t>(n));
  const char t = 'T';
  for (auto _ : st) {
    std::copy(in.a.data(), in.a.data() + a.size(), a.data());
    std::copy(in.b.data(), in.b.data() + b.size(), b.data());
    for (index_t k = 0; k < nb; ++k) {
      int info = 0;
      dgetrf_(&n, &n, a.data() + k * n * n, &n, piv.data(), &info);
      dgetrs_(&t, &n, &one, a.data() + k * n * n, &n, piv.data(), b.data() + k * n, &n, &info, 1);
    }
    benchmark::DoNotOptimize(b.data());
  }
}
void fusor_svd(benchmark::State& st) {
  fusor::set_blas_num_threads(1);
  auto& in = stack<'s'>(st.range(0));
  for (auto _ : st) {
    auto f = fusor::linalg::svd(in.a);
    benchmark::DoNotOptimize(f.s.data());
  }
}
void lapack_svd(benchmark::State& st) {
  fusor::set_blas_num_threads(1);
  auto& in = stack<'s'>(st.range(0));
  const int n = int(st.range(0));
  const index_t nb = stack_inputs<'s'>::batch_count;
  std::vector<double> a(std::size_t(nb * n * n)), s(std::size_t(nb * n)), u(a.size()), vt(a.size());
  std::vector<int> iwork(std::size_t(8 * n));
  const char job = 'A';
  int lw = -1, info = 0;
  double ws = 0;
  dgesdd_(&job, &n, &n, a.data(), &n, s.data(), u.data(), &n, vt.data(), &n, &ws, &lw, iwork.data(), &info, 1);
  lw = int(ws);
  std::vector<double> work(static_cast<std::size_t>(lw));
  for (auto _ : st) {
    std::copy(in.a.data(), in.a.data() + a.size(), a.data());
    for (index_t k = 0; k < nb; ++k)
      dgesdd_(&job, &n, &n, a.data() + k * n * n, &n, s.data() + k * n, u.data() + k * n * n, &n, vt.data() + k * n * n,
              &n, work.data(), &lw, iwork.data(), &info, 1);
    benchmark::DoNotOptimize(s.data());
  }
}
void fusor_eigh(benchmark::State& st) {
  fusor::set_blas_num_threads(1);
  auto& in = stack<'h'>(st.range(0));
  for (auto _ : st) {
    auto e = fusor::linalg::eigh(in.a);
    benchmark::DoNotOptimize(e.eigenvalues.data());
  }
}
void lapack_eigh(benchmark::State& st) {
  fusor::set_blas_num_threads(1);
  auto& in = stack<'h'>(st.range(0));
  const int n = int(st.range(0));
  const index_t nb = stack_inputs<'h'>::batch_count;
  std::vector<double> a(std::size_t(nb * n * n)), w(std::size_t(nb * n));
  const char job = 'V', up = 'U';
  int lw = -1, li = -1, info = 0, is = 0;
  double ws = 0;
  dsyevd_(&job, &up, &n, a.data(), &n, w.data(), &ws, &lw, &is, &li, &info, 1, 1);
  lw = int(ws);
  li = is;
  std::vector<double> work(static_cast<std::size_t>(lw));
  std::vector<int> iwork(static_cast<std::size_t>(li));
  for (auto _ : st) {
    std::copy(in.a.data(), in.a.data() + a.size(), a.data());
    for (index_t k = 0; k < nb; ++k)
      dsyevd_(&job, &up, &n, a.data() + k * n * n, &n, w.data() + k * n, work.data(), &lw, iwork.data(), &li, &info, 1, 1);
    benchmark::DoNotOptimize(w.data());
  }
}

}  // namespace

#define FUSOR_DECOMPOSITION_BENCH(NAME) \
  BENCHMARK(NAME)->Arg(32)->Arg(64)->UseRealTime()->Unit(benchmark::kMillisecond);
FUSOR_DECOMPOSITION_BENCH(fusor_solve)
FUSOR_DECOMPOSITION_BENCH(lapack_solve)
FUSOR_DECOMPOSITION_BENCH(fusor_svd)
FUSOR_DECOMPOSITION_BENCH(lapack_svd)
FUSOR_DECOMPOSITION_BENCH(fusor_eigh)
FUSOR_DECOMPOSITION_BENCH(lapack_eigh)
#undef FUSOR_DECOMPOSITION_BENCH
BENCHMARK_MAIN();
