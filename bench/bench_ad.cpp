// Autodiff against hand-written derivatives, in the same run (scripts/bench ad prints the ratios).
//   fusor_primal_sinexp:  s = Σ sin(x)·exp(−x²) + x²/2 (the function alone, fused and SIMD)
//   fusor_jvp_sinexp:     ad::jvp of the same function along v: value and directional derivative
//   hand_jvp_sinexp:      one hand loop computing both with the closed-form derivative
//   fusor_jacfwd_tanh:    ad::jacfwd of y = Σ_j A_ij tanh(x_j) (100 -> 100, 13 passes of 8 columns)
//   fusor_jacrev_tanh:    ad::jacrev of the same map (one recording, one backward pass per output row)
//   hand_jacobian_tanh:   J_ij = A_ij (1 − tanh²(x_j)) by hand
//   fusor_vg_<f>:         ad::value_and_grad of f (reverse mode: the callable keeps its tape), for
//                         square = Σ(2(x+1))², sinexp as above, rosen = Σ 100(x₁−x₀²)² + (1−x₀)²
//   hand_vg_<f>:          one hand loop computing the value and writing the gradient
//   fusor_vg_dense:       ad::value_and_grad of L(W) = Σ tanh(X·W)² (X: n×n data, W: n×n): one
//                         matmul node and one reduction node; the adjoint is a GEMM (Xᵀ·G)
//   hand_vg_dense:        the same with cblas: H = X·W, one loop for L and G = 2 tanh(H)(1 − tanh²(H)),
//                         dW = Xᵀ·G
//   gemm_floor_dense:     the two GEMMs alone (X·W and Xᵀ·G): the BLAS floor of the dense gradient
//   fusor_vg_conv:        ad::value_and_grad of L(k) = Σ fftconvolve(I, k, same)² with respect to the
//                         kernel k (16×16) of an n×n image I: one convolution node, one reduction
//   hand_vg_conv:         the same written with fft::rfftn/irfftn calls by hand (3 forward transforms,
//                         2 inverse, at the same lengths): the FFT floor of the gradient
//   fusor_jvp_conv:       ad::jvp of the same L(k) along a kernel direction dk (forward mode: the dual
//                         kernel's two planes each convolved, 4 forward and 2 inverse transforms)
//   hand_jvp_conv:        the same by hand (rfftn of I, k and dk, irfftn of z and dz, one loop for L
//                         and 2 Σ z·dz): the FFT floor of the directional derivative
// Arguments: n (and the thread count, fusor's loops and OpenBLAS: the hand loops are one thread).
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <cmath>
#include <vector>

#include <fusor/fusor.hpp>

namespace {

using fusor::array;
using fusor::index_t;

// the thread count of the run (its second argument) for fusor's loops, FFTW and OpenBLAS alike
void use_threads(const benchmark::State& st) {
  fusor::set_num_threads(int(st.range(1)));
  fusor::set_blas_num_threads(int(st.range(1)));
}

template <class T>
array<T> inputs(index_t n, std::uint64_t seed) {
  fusor::random::generator g(seed);
  return fusor::random::uniform<T>(g, {n}, T(-1), T(1));
}

// written once for arrays and arrays of duals
auto sinexp = [](const auto& x) { return sum(sin(x) * exp(-x * x) + x * x / 2); };  // sum: unqualified, so ad::sum records on variables

template <class T>
void fusor_primal_sinexp(benchmark::State& st) {
  use_threads(st);
  const auto x = inputs<T>(st.range(0), 1);
  for (auto _ : st) benchmark::DoNotOptimize(sinexp(x));
  st.SetItemsProcessed(st.iterations() * st.range(0));
}

template <class T>
void fusor_jvp_sinexp(benchmark::State& st) {
  use_threads(st);
  const auto x = inputs<T>(st.range(0), 1), v = inputs<T>(st.range(0), 2);
  for (auto _ : st) benchmark::DoNotOptimize(fusor::ad::jvp(sinexp, x, v));
  st.SetItemsProcessed(st.iterations() * st.range(0));
}

template <class T>
void hand_jvp_sinexp(benchmark::State& st) {
  const auto x = inputs<T>(st.range(0), 1), v = inputs<T>(st.range(0), 2);
  const T* px = x.data();
  const T* pv = v.data();
  const index_t n = x.size();
  for (auto _ : st) {
    T s = 0, d = 0;
    for (index_t i = 0; i < n; ++i) {
      const T t = px[i], e = std::exp(-t * t), sn = std::sin(t);
      s += sn * e + t * t / 2;
      d += (std::cos(t) * e - 2 * t * sn * e + t) * pv[i];
    }
    benchmark::DoNotOptimize(s);
    benchmark::DoNotOptimize(d);
  }
  st.SetItemsProcessed(st.iterations() * st.range(0));
}

// the Jacobian of y = Σ_j A_ij tanh(x_j) by jac (ad::jacfwd or ad::jacrev)
template <class T, class Jac>
void jacobian_tanh(benchmark::State& st, Jac jac) {
  const index_t n = st.range(0);
  use_threads(st);
  fusor::random::generator g(3);
  const array<T> A = fusor::random::uniform<T>(g, {n, n}, T(-1), T(1));
  const auto x = inputs<T>(n, 4);
  auto f = [&](const auto& t) { return sum(A * tanh(t), 1); };  // unqualified: ad::sum on variables
  for (auto _ : st) {
    auto J = jac(f, x);
    benchmark::DoNotOptimize(J.data());
  }
}
template <class T>
void fusor_jacfwd_tanh(benchmark::State& st) {
  jacobian_tanh<T>(st, [](const auto& f, const auto& x) { return fusor::ad::jacfwd(f, x); });
}
template <class T>
void fusor_jacrev_tanh(benchmark::State& st) {
  jacobian_tanh<T>(st, [](const auto& f, const auto& x) { return fusor::ad::jacrev(f, x); });
}

template <class T>
void hand_jacobian_tanh(benchmark::State& st) {
  const index_t n = st.range(0);
  fusor::random::generator g(3);
  const array<T> A = fusor::random::uniform<T>(g, {n, n}, T(-1), T(1));
  const auto x = inputs<T>(n, 4);
  std::vector<T> slope(static_cast<std::size_t>(n));
  for (auto _ : st) {
    array<T> J(fusor::extents{n, n});
    for (index_t j = 0; j < n; ++j) {
      const T th = std::tanh(x.data()[j]);
      slope[std::size_t(j)] = 1 - th * th;
    }
    for (index_t i = 0; i < n; ++i)
      for (index_t j = 0; j < n; ++j) J.data()[i * n + j] = A.data()[i * n + j] * slope[std::size_t(j)];
    benchmark::DoNotOptimize(J.data());
  }
}

// ---- reverse mode: value and gradient --------------------------------------------------------------
auto square_loss = [](const auto& x) { return sum(square(2 * (x + 1))); };
auto rosen_loss = [](const auto& x) {
  const index_t n = x.size();
  const auto a = x(fusor::range(1, n)), c = x(fusor::range(0, n - 1));
  return sum(100 * square(a - square(c)) + square(1 - c));
};

template <class T, class F>
void fusor_vg(benchmark::State& st, F f) {
  use_threads(st);
  const auto x = inputs<T>(st.range(0), 1);
  auto vg = fusor::ad::value_and_grad(f);
  for (auto _ : st) {
    auto [v, g] = vg(x);
    benchmark::DoNotOptimize(v);
    benchmark::DoNotOptimize(g.data());
  }
  st.SetItemsProcessed(st.iterations() * st.range(0));
}
template <class T>
void fusor_vg_square(benchmark::State& st) { fusor_vg<T>(st, square_loss); }
template <class T>
void fusor_vg_sinexp(benchmark::State& st) { fusor_vg<T>(st, sinexp); }
template <class T>
void fusor_vg_rosen(benchmark::State& st) { fusor_vg<T>(st, rosen_loss); }

// The hand-written gradients allocate their result, as the fusor ones return a new array; `loop`
// is the one pass over x that accumulates the value and writes the gradient g.
template <class T, class Loop>
void hand_vg(benchmark::State& st, Loop loop) {
  const auto x = inputs<T>(st.range(0), 1);
  const index_t n = x.size();
  for (auto _ : st) {
    array<T> g(fusor::extents{n});
    const T v = loop(x.data(), g.data(), n);
    benchmark::DoNotOptimize(v);
    benchmark::DoNotOptimize(g.data());
  }
  st.SetItemsProcessed(st.iterations() * st.range(0));
}
template <class T>
void hand_vg_square(benchmark::State& st) {
  hand_vg<T>(st, [](const T* px, T* pg, index_t n) {
    T v = 0;
    for (index_t i = 0; i < n; ++i) {
      const T u = 2 * (px[i] + 1);
      v += u * u;
      pg[i] = 4 * u;
    }
    return v;
  });
}
template <class T>
void hand_vg_sinexp(benchmark::State& st) {
  hand_vg<T>(st, [](const T* px, T* pg, index_t n) {
    T v = 0;
    for (index_t i = 0; i < n; ++i) {
      const T t = px[i], e = std::exp(-t * t), sn = std::sin(t);
      v += sn * e + t * t / 2;
      pg[i] = std::cos(t) * e - 2 * t * sn * e + t;
    }
    return v;
  });
}
template <class T>
void hand_vg_rosen(benchmark::State& st) {
  hand_vg<T>(st, [](const T* px, T* pg, index_t n) {
    T v = 0;
    pg[0] = 0;
    for (index_t i = 0; i + 1 < n; ++i) {
      const T d = px[i + 1] - px[i] * px[i], e = 1 - px[i];
      v += 100 * d * d + e * e;
      pg[i] += -400 * px[i] * d - 2 * e;
      pg[i + 1] = 200 * d;
    }
    return v;
  });
}

// ---- a dense layer: matmul adjoints are GEMMs -----------------------------------------------------
template <class T>
void fusor_vg_dense(benchmark::State& st) {
  use_threads(st);
  const index_t n = st.range(0);
  const array<T> X = inputs<T>(n * n, 2).reshape({n, n}), W = inputs<T>(n * n, 3).reshape({n, n});
  auto vg = fusor::ad::value_and_grad([&](const auto& w) { return sum(square(tanh(matmul(X, w)))); });
  for (auto _ : st) {
    auto [v, g] = vg(W);
    benchmark::DoNotOptimize(v);
    benchmark::DoNotOptimize(g.data());
  }
  st.SetItemsProcessed(st.iterations() * n * n);
}
template <class T>
void gemm(CBLAS_TRANSPOSE ta, index_t n, const T* a, const T* b, T* c) {
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, ta, CblasNoTrans, int(n), int(n), int(n), 1.0f, a, int(n), b, int(n), 0.0f, c, int(n));
  else
    cblas_dgemm(CblasRowMajor, ta, CblasNoTrans, int(n), int(n), int(n), 1.0, a, int(n), b, int(n), 0.0, c, int(n));
}
template <class T>
void hand_vg_dense(benchmark::State& st) {
  use_threads(st);  // OpenBLAS's threads; the loop is one thread
  const index_t n = st.range(0);
  const array<T> X = inputs<T>(n * n, 2).reshape({n, n}), W = inputs<T>(n * n, 3).reshape({n, n});
  for (auto _ : st) {
    array<T> H(fusor::extents{n, n}), dW(fusor::extents{n, n});
    gemm<T>(CblasNoTrans, n, X.data(), W.data(), H.data());
    T v = 0;
    T* h = H.data();
    for (index_t i = 0; i < n * n; ++i) {
      const T y = std::tanh(h[i]);
      v += y * y;
      h[i] = 2 * y * (1 - y * y);  // H now holds G = dL/dH
    }
    gemm<T>(CblasTrans, n, X.data(), H.data(), dW.data());
    benchmark::DoNotOptimize(v);
    benchmark::DoNotOptimize(dW.data());
  }
  st.SetItemsProcessed(st.iterations() * n * n);
}

template <class T>
void gemm_floor_dense(benchmark::State& st) {
  use_threads(st);
  const index_t n = st.range(0);
  const array<T> X = inputs<T>(n * n, 2).reshape({n, n}), W = inputs<T>(n * n, 3).reshape({n, n});
  for (auto _ : st) {
    array<T> H(fusor::extents{n, n}), dW(fusor::extents{n, n});
    gemm<T>(CblasNoTrans, n, X.data(), W.data(), H.data());
    gemm<T>(CblasTrans, n, X.data(), H.data(), dW.data());
    benchmark::DoNotOptimize(dW.data());
  }
  st.SetItemsProcessed(st.iterations() * n * n);
}

// ---- a convolution: the adjoint is a correlation through the same FFTs --------------------------------
constexpr index_t conv_kernel = 16;
// The convolution rows' problem: an n x n image, a 16 x 16 kernel and a kernel direction, and the
// FFT lengths the hand-written versions use (the full convolution, padded to a fast length).
template <class T>
struct conv_problem {
  index_t n, full, f, start;  // start: where "same" begins in the full convolution
  array<T> image, k, dk;
  explicit conv_problem(index_t side)
      : n(side), full(side + conv_kernel - 1), f(fusor::fft::next_fast_len(full)), start((full - side) / 2),
        image(inputs<T>(side * side, 4).reshape({side, side})),
        k(inputs<T>(conv_kernel * conv_kernel, 5).reshape({conv_kernel, conv_kernel})),
        dk(inputs<T>(conv_kernel * conv_kernel, 6).reshape({conv_kernel, conv_kernel})) {}
  fusor::extents lengths() const { return {f, f}; }
  T scale() const { return T(1) / T(f * f); }
  /// L(w) = Σ fftconvolve(image, w, same)², for arrays, variables and duals.
  auto loss() const {
    return [this](const auto& w) {
      using fusor::fft::fftconvolve;
      return sum(square(fftconvolve(image, w, fusor::fft::conv_mode::same)));
    };
  }
};
template <class T>
void fusor_vg_conv(benchmark::State& st) {
  use_threads(st);
  const conv_problem<T> p(st.range(0));
  const index_t n = p.n;
  auto vg = fusor::ad::value_and_grad(p.loss());
  for (auto _ : st) {
    auto [v, g] = vg(p.k);
    benchmark::DoNotOptimize(v);
    benchmark::DoNotOptimize(g.data());
  }
  st.SetItemsProcessed(st.iterations() * n * n);
}
template <class T>
void hand_vg_conv(benchmark::State& st) {
  namespace fft = fusor::fft;
  using fusor::extents;
  use_threads(st);
  const conv_problem<T> p(st.range(0));
  const index_t n = p.n, m = conv_kernel, f = p.f, start = p.start;
  const array<T>& image = p.image;
  const array<T>& k = p.k;
  const extents fs = p.lengths();
  const T scale = p.scale();
  for (auto _ : st) {
    const auto si = fft::rfftn(image, fs), sk = fft::rfftn(k, fs);
    const array<T> z = fft::irfftn(si * sk * scale, fs, {}, fft::norm_mode::forward);
    // L = Σ z² over the "same" part; dL/dz = 2z there, 0 elsewhere
    array<T> g = fusor::zeros<T>(fs);
    T v = 0;
    for (index_t i = start; i < start + n; ++i)
      for (index_t j = start; j < start + n; ++j) {
        const T zij = z.data()[i * f + j];
        v += zij * zij;
        g.data()[i * f + j] = 2 * zij;
      }
    const array<T> corr = fft::irfftn(fft::rfftn(g) * (conj(si) * scale), fs, {}, fft::norm_mode::forward);
    const array<T> dk = corr(fusor::range(0, m), fusor::range(0, m));
    benchmark::DoNotOptimize(v);
    benchmark::DoNotOptimize(dk.data());
  }
  st.SetItemsProcessed(st.iterations() * n * n);
}

// ---- forward mode through the same convolution: each plane of the dual kernel convolved ------------
template <class T>
void fusor_jvp_conv(benchmark::State& st) {
  use_threads(st);
  const conv_problem<T> p(st.range(0));
  const index_t n = p.n;
  for (auto _ : st) {
    const auto [v, d] = fusor::ad::jvp(p.loss(), p.k, p.dk);
    benchmark::DoNotOptimize(v);
    benchmark::DoNotOptimize(d);
  }
  st.SetItemsProcessed(st.iterations() * n * n);
}
template <class T>
void hand_jvp_conv(benchmark::State& st) {
  namespace fft = fusor::fft;
  using fusor::extents;
  use_threads(st);
  const conv_problem<T> p(st.range(0));
  const index_t n = p.n, f = p.f, start = p.start;
  const extents fs = p.lengths();
  const T scale = p.scale();
  for (auto _ : st) {
    const auto si = fft::rfftn(p.image, fs), sk = fft::rfftn(p.k, fs), sd = fft::rfftn(p.dk, fs);
    const array<T> z = fft::irfftn(si * sk * scale, fs, {}, fft::norm_mode::forward);
    const array<T> dz = fft::irfftn(si * sd * scale, fs, {}, fft::norm_mode::forward);
    // L = Σ z² over the "same" part, dL = Σ 2 z dz
    T v = 0, d = 0;
    for (index_t i = start; i < start + n; ++i)
      for (index_t j = start; j < start + n; ++j) {
        const T zij = z.data()[i * f + j];
        v += zij * zij;
        d += 2 * zij * dz.data()[i * f + j];
      }
    benchmark::DoNotOptimize(v);
    benchmark::DoNotOptimize(d);
  }
  st.SetItemsProcessed(st.iterations() * n * n);
}

void sizes(benchmark::internal::Benchmark* b) {
  for (index_t n : {1000, 1000000})
    for (int t : {1, 2}) b->Args({n, t});
  b->UseRealTime();
}
void one_thread_sizes(benchmark::internal::Benchmark* b) {
  for (index_t n : {1000, 1000000}) b->Args({n, 1});
  b->UseRealTime();
}
void dense_sizes(benchmark::internal::Benchmark* b) {
  for (int t : {1, 2})
    for (index_t n : {64, 256}) b->Args({n, t});
}
void conv_sizes(benchmark::internal::Benchmark* b) {
  for (int t : {1, 2}) b->Args({256, t});
  b->UseRealTime();
}
void jacobian_size(benchmark::internal::Benchmark* b) {
  b->Args({100, 1})->UseRealTime();
}

}  // namespace

BENCHMARK(fusor_primal_sinexp<float>)->Apply(sizes);
BENCHMARK(fusor_primal_sinexp<double>)->Apply(sizes);
BENCHMARK(fusor_jvp_sinexp<float>)->Apply(sizes);
BENCHMARK(fusor_jvp_sinexp<double>)->Apply(sizes);
BENCHMARK(hand_jvp_sinexp<float>)->Apply(one_thread_sizes);
BENCHMARK(hand_jvp_sinexp<double>)->Apply(one_thread_sizes);
BENCHMARK(fusor_jacfwd_tanh<float>)->Apply(jacobian_size);
BENCHMARK(fusor_jacfwd_tanh<double>)->Apply(jacobian_size);
BENCHMARK(fusor_jacrev_tanh<float>)->Apply(jacobian_size);
BENCHMARK(fusor_jacrev_tanh<double>)->Apply(jacobian_size);
BENCHMARK(hand_jacobian_tanh<float>)->Apply(jacobian_size);
BENCHMARK(hand_jacobian_tanh<double>)->Apply(jacobian_size);

BENCHMARK(fusor_vg_square<float>)->Apply(sizes);
BENCHMARK(fusor_vg_square<double>)->Apply(sizes);
BENCHMARK(hand_vg_square<float>)->Apply(one_thread_sizes);
BENCHMARK(hand_vg_square<double>)->Apply(one_thread_sizes);
BENCHMARK(fusor_vg_sinexp<float>)->Apply(sizes);
BENCHMARK(fusor_vg_sinexp<double>)->Apply(sizes);
BENCHMARK(hand_vg_sinexp<float>)->Apply(one_thread_sizes);
BENCHMARK(hand_vg_sinexp<double>)->Apply(one_thread_sizes);
BENCHMARK(fusor_vg_rosen<float>)->Apply(sizes);
BENCHMARK(fusor_vg_rosen<double>)->Apply(sizes);
BENCHMARK(fusor_vg_dense<float>)->Apply(dense_sizes);
BENCHMARK(fusor_vg_dense<double>)->Apply(dense_sizes);
BENCHMARK(hand_vg_dense<float>)->Apply(dense_sizes);
BENCHMARK(hand_vg_dense<double>)->Apply(dense_sizes);
BENCHMARK(gemm_floor_dense<float>)->Apply(dense_sizes);
BENCHMARK(gemm_floor_dense<double>)->Apply(dense_sizes);
BENCHMARK(fusor_vg_conv<float>)->Apply(conv_sizes);
BENCHMARK(fusor_vg_conv<double>)->Apply(conv_sizes);
BENCHMARK(hand_vg_conv<float>)->Apply(conv_sizes);
BENCHMARK(hand_vg_conv<double>)->Apply(conv_sizes);
BENCHMARK(fusor_jvp_conv<float>)->Apply(conv_sizes);
BENCHMARK(fusor_jvp_conv<double>)->Apply(conv_sizes);
BENCHMARK(hand_jvp_conv<float>)->Apply(conv_sizes);
BENCHMARK(hand_jvp_conv<double>)->Apply(conv_sizes);
BENCHMARK(hand_vg_rosen<float>)->Apply(one_thread_sizes);
BENCHMARK(hand_vg_rosen<double>)->Apply(one_thread_sizes);

BENCHMARK_MAIN();
