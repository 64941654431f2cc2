// One training step of a 784-128-10 ReLU MLP with softmax cross-entropy at batch 64 (the issue's
// benchmark), float32 and float64, on 1 and 2 threads:
//   fusor_step:   ad::value_and_grad of nn::cross_entropy(model(params, x), y) (the tape recorded
//                 again every step, into its kept buffers), then optim::sgd's step
//   fusor_replay: the same step through ad::compile: recorded once, then replayed (forward steps,
//                 backward nodes, gradients written into the compiled object's arrays; no tape
//                 built, nothing allocated), then optim::sgd's step
//   fusor_step<float16 | bfloat16>, fusor_replay<...>: the float32 step under
//                 ad::autocast<float16 | bfloat16> (products in 16 bits with float32 accumulation,
//                 float32 master parameters) with a grad_scaler: what mixed precision costs on the
//                 cpu, which has no 16-bit arithmetic (learn_peers.py sets it beside PyTorch's CPU
//                 autocast in bfloat16)
//   fusor_infer:  the model's forward pass on arrays (inference)
//   hand_step:    the same step by hand: four GEMMs and two more for the backward pass (direct
//                 cblas calls on preallocated buffers), the bias, ReLU, softmax–cross-entropy and
//                 SGD loops written out; the floor a library step is measured against
//   gemm_floor:   the step's six GEMMs alone
// Args: {batch, threads}. bench/pairs.py prints fusor/hand; bench/peers/learn_peers.py runs the
// same step in PyTorch and JAX.
//
// A convolution (issue 53's shape: batch 32, 32 -> 64 channels, 32 x 32, 3 x 3, padding 1), float32:
//   fusor_conv2d_forward: nn::functional::conv2d on arrays (oneDNN where the build has it, else
//                         im2col, one GEMM, the copy to NCHW)
//   fusor_conv2d_step:    the forward pass and both adjoints (input and weight) of
//                         sum(conv2d(x, w) * r), recorded once and replayed (ad::compile)
//   conv2d_gemm_floor:    the three GEMMs of that step alone (the forward product, dW = G colsᵀ,
//                         dcols = Wᵀ G), direct cblas calls on preallocated buffers: the floor of
//                         the im2col path (double, the 16-bit types, a build without oneDNN)
//   conv2d_onednn_floor:  (a build with oneDNN) its three passes called directly on operands
//                         already in the layouts its kernels chose: no reorders, no fusor
//   conv2d_flops_sgemm:   the step's floating-point work (3 x 2 N O L C taps = 3.62 GFLOP) as one
//                         square sgemm (n = 1219): the machine's dense-product rate, the floor any
//                         convolution algorithm is measured against
// Args: {threads}. learn_peers.py runs PyTorch's conv2d forward and backward on the same shapes.
//
// A transformer block (issue 53: nn::transformer_encoder_layer(128, 4, 512, causal), pre-norm,
// GELU, batch 32 x context 64), float32:
//   fusor_transformer_step:   value_and_grad of sum(block(x) * r) with respect to the block's 12
//                             parameters and x, the tape recorded every step
//   fusor_transformer_replay: the same recorded once and replayed (ad::compile)
//   transformer_gemm_floor:   the step's GEMMs alone (the four projections' forward products and
//                             their two adjoints each, and the two attention products per (batch,
//                             head) with theirs: 30 + 6 x 128 calls), direct cblas calls on
//                             preallocated buffers
// Args: {threads}. learn_peers.py runs PyTorch's nn.TransformerEncoderLayer (the same options,
// batch_first, a causal mask) forward and backward on the same shapes.
//
// Gradient checkpointing (issue 53), four such blocks stacked:
//   fusor_transformer_stack_step: value_and_grad as above, each block plain (arg 0) or wrapped
//                                 in nn::checkpointed (arg 1: its intermediates recomputed in the
//                                 backward pass); counter tape_MiB is the most memory the tapes
//                                 held during one step (ad::tape_memory, measured on a fresh
//                                 thread: the checkpoint workspace included)
// Args: {checkpointed, threads}.
//
// A gradient penalty (reverse over reverse, issue 53): WGAN-GP's critic step, a 784-128-1 tanh
// critic D at batch 64, float32, loss mean(D(x)) + 10 mean((‖∇ₓD(x)ᵢ‖ − 1)²), its gradient with
// respect to the critic's four parameters:
//   fusor_gradient_penalty_step/1: ad::value_and_grad of that loss; D(x) and ∇ₓD(x) come from one
//                                  ad::value_and_grad inside it, taken of the critic's variables
//   fusor_gradient_penalty_step/0: the step without the penalty (the gradient of mean(D(x))), what
//                                  the penalised step costs a multiple of
// Args: {penalised, threads}. learn_peers.py runs the same in PyTorch (autograd.grad with
// create_graph=True).
//
// The CNN of examples/train_cnn_digits (issue 53): conv 1 -> 16 (3 x 3, padding 1), batch norm,
// ReLU, 2 x 2 max pooling, conv 16 -> 32, batch norm, ReLU, max pooling, flatten, linear 128 -> 10,
// softmax cross-entropy, on a batch of 32 images 1 x 8 x 8 (the digits' shape, U(0, 1) pixels),
// float32, in training mode (batch statistics, running statistics updated), then one Adam step:
//   fusor_cnn_step/0: ad::value_and_grad, the tape recorded every step
//   fusor_cnn_step/1: the same recorded once and replayed (ad::compile)
// Args: {replayed, threads}. learn_peers.py runs the same model in PyTorch (eager) and JAX (jit).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <thread>
#include <vector>

#include <fusor/fusor.hpp>

#include <cblas.h>  // after fusor, which reads it without OpenBLAS's global `bfloat16` typedef

namespace {

using fusor::index_t;
namespace nn = fusor::ad::nn;
namespace optim = fusor::ad::optim;
constexpr index_t in_f = 784, hid = 128, out_f = 10;

void use_threads(const benchmark::State& st) {
  fusor::set_num_threads(int(st.range(1)));
  fusor::set_blas_num_threads(int(st.range(1)));
}

template <class T>
struct data {
  fusor::array<T> x;
  fusor::array<std::int64_t> y;
  explicit data(index_t batch) {
    fusor::random::generator rng(1);
    x = fusor::random::uniform<T>(rng, {batch, in_f}, T(0), T(1));
    y = fusor::random::integers<std::int64_t>(rng, {batch}, 0, out_f);
  }
};

/// The benchmark's model: 784-128-10 with ReLU.
template <class T>
auto mlp() {
  return nn::sequential<T>(nn::linear(in_f, hid), nn::relu, nn::linear(hid, out_f));
}

/// What a step computes in: T throughout, or for float16 and bfloat16 float32 parameters under
/// ad::autocast<T> with a grad_scaler (mixed precision).
template <class T>
struct precision {
  static constexpr bool amp = fusor::ext::small_float_v<T>;
  using param = std::conditional_t<amp, float, T>;
  optim::grad_scaler<param, fusor::cpu> scaler{{.enabled = amp}};
  int skipped = 0;

  template <class M, class P, class X, class Y>
  auto loss(const M& model, const P& p, const X& x, const Y& y) const {
    if constexpr (amp) return scaler.scale(nn::cross_entropy(model(p, x, fusor::ad::autocast<T>), y));
    else return nn::cross_entropy(model(p, x), y);
  }
  template <class P, class G>
  void update(optim::sgd<param, fusor::cpu>& opt, P& params, G& grads) {
    if constexpr (amp) skipped += !scaler.step(opt, params, grads);
    else opt.step(params, grads);
  }
  void report(benchmark::State& st, index_t batch) const {
    if (skipped) st.SkipWithError("the scaler skipped steps: the timing would not be of whole steps");
    st.counters["samples/s"] = benchmark::Counter(double(batch), benchmark::Counter::kIsIterationInvariantRate);
  }
};

template <class T>
void fusor_step(benchmark::State& st) {
  use_threads(st);
  using R = typename precision<T>::param;
  const index_t batch = st.range(0);
  const data<R> d(batch);
  const auto model = mlp<R>();
  nn::parameters<R> params = model.init(0);
  optim::sgd<R, fusor::cpu> opt({.lr = 1e-3});
  precision<T> mode;
  auto step = fusor::ad::value_and_grad([&](const auto& p) { return mode.loss(model, p, d.x, d.y); });
  R loss{};
  for (auto _ : st) {
    auto [value, grads] = step(params);
    mode.update(opt, params, grads);
    loss = value;
  }
  benchmark::DoNotOptimize(loss);
  mode.report(st, batch);
}

template <class T>
void fusor_replay(benchmark::State& st) {
  use_threads(st);
  using R = typename precision<T>::param;
  const index_t batch = st.range(0);
  const data<R> d(batch);
  const auto model = mlp<R>();
  nn::parameters<R> params = model.init(0);
  optim::sgd<R, fusor::cpu> opt({.lr = 1e-3});
  precision<T> mode;
  auto step = fusor::ad::compile([&](const auto& p, const auto& x, const auto& y) { return mode.loss(model, p, x, y); },
                                 params, d.x, d.y);
  R loss{};
  for (auto _ : st) {
    auto [value, grads] = step(params, d.x, d.y);
    mode.update(opt, params, grads);
    loss = value;
  }
  benchmark::DoNotOptimize(loss);
  if (step.recordings() != 1) st.SkipWithError("the step was recorded again: it should only replay");
  mode.report(st, batch);
}

using fusor::bfloat16;
using fusor::float16;

template <class T>
void fusor_infer(benchmark::State& st) {
  use_threads(st);
  const data<T> d(st.range(0));
  const auto model = mlp<T>();
  const nn::parameters<T> params = model.init(0);
  for (auto _ : st) {
    fusor::array<T> z = model(params, d.x);
    benchmark::DoNotOptimize(z.data());
  }
}

template <class T>
void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, index_t m, index_t n, index_t k, const T* a, index_t lda, const T* b,
          index_t ldb, T* c, index_t ldc) {
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, ta, tb, int(m), int(n), int(k), 1.0f, a, int(lda), b, int(ldb), 0.0f, c, int(ldc));
  else
    cblas_dgemm(CblasRowMajor, ta, tb, int(m), int(n), int(k), 1.0, a, int(lda), b, int(ldb), 0.0, c, int(ldc));
}

/// The step by hand on preallocated buffers: forward, loss, backward, SGD.
template <class T>
struct hand_mlp {
  index_t n;
  std::vector<T> w1, b1, w2, b2, h, z, dz, dh, gw1, gb1, gw2, gb2;
  explicit hand_mlp(index_t batch)
      : n(batch), w1(in_f * hid), b1(hid), w2(hid * out_f), b2(out_f), h(batch * hid), z(batch * out_f),
        dz(batch * out_f), dh(batch * hid), gw1(in_f * hid), gb1(hid), gw2(hid * out_f), gb2(out_f) {
    for (std::size_t i = 0; i < w1.size(); ++i) w1[i] = T(0.03) * T(std::sin(double(i)));
    for (std::size_t i = 0; i < w2.size(); ++i) w2[i] = T(0.08) * T(std::cos(double(i)));
  }
  T step(const T* x, const std::int64_t* y, T lr, bool gemms_only) {
    gemm<T>(CblasNoTrans, CblasNoTrans, n, hid, in_f, x, in_f, w1.data(), hid, h.data(), hid);
    if (!gemms_only)
      for (index_t i = 0; i < n; ++i)
        for (index_t j = 0; j < hid; ++j) h[i * hid + j] = std::max(h[i * hid + j] + b1[j], T(0));
    gemm<T>(CblasNoTrans, CblasNoTrans, n, out_f, hid, h.data(), hid, w2.data(), out_f, z.data(), out_f);
    T loss = 0;
    if (!gemms_only) {
      for (index_t i = 0; i < n; ++i) {  // softmax cross-entropy and its adjoint (softmax − onehot)/n
        T* zi = &z[i * out_f];
        T m = -INFINITY;
        for (index_t c = 0; c < out_f; ++c) m = std::max(m, zi[c] += b2[c]);
        T s = 0;
        for (index_t c = 0; c < out_f; ++c) s += std::exp(zi[c] - m);
        const T lse = m + std::log(s);
        loss += lse - zi[y[i]];
        for (index_t c = 0; c < out_f; ++c) dz[i * out_f + c] = (std::exp(zi[c] - lse) - (c == y[i] ? T(1) : T(0))) / T(n);
      }
      std::fill(gb2.begin(), gb2.end(), T(0));
      for (index_t i = 0; i < n; ++i)
        for (index_t c = 0; c < out_f; ++c) gb2[c] += dz[i * out_f + c];
    }
    gemm<T>(CblasTrans, CblasNoTrans, hid, out_f, n, h.data(), hid, dz.data(), out_f, gw2.data(), out_f);
    gemm<T>(CblasNoTrans, CblasTrans, n, hid, out_f, dz.data(), out_f, w2.data(), out_f, dh.data(), hid);
    if (!gemms_only) {
      std::fill(gb1.begin(), gb1.end(), T(0));
      for (index_t i = 0; i < n; ++i)
        for (index_t j = 0; j < hid; ++j) {
          T& g = dh[i * hid + j];
          g = h[i * hid + j] > 0 ? g : T(0);
          gb1[j] += g;
        }
    }
    gemm<T>(CblasTrans, CblasNoTrans, in_f, hid, n, x, in_f, dh.data(), hid, gw1.data(), hid);
    if (!gemms_only) {
      for (std::size_t i = 0; i < w1.size(); ++i) w1[i] -= lr * gw1[i];
      for (std::size_t i = 0; i < b1.size(); ++i) b1[i] -= lr * gb1[i];
      for (std::size_t i = 0; i < w2.size(); ++i) w2[i] -= lr * gw2[i];
      for (std::size_t i = 0; i < b2.size(); ++i) b2[i] -= lr * gb2[i];
    }
    return loss / T(n);
  }
};

template <class T>
void hand_step(benchmark::State& st) {
  use_threads(st);  // OpenBLAS's threads; the loops are one thread
  const data<T> d(st.range(0));
  hand_mlp<T> m(st.range(0));
  T loss{};
  for (auto _ : st) loss = m.step(d.x.data(), d.y.data(), T(1e-3), false);
  benchmark::DoNotOptimize(loss);
}

template <class T>
void gemm_floor(benchmark::State& st) {
  use_threads(st);
  const data<T> d(st.range(0));
  hand_mlp<T> m(st.range(0));
  for (auto _ : st) benchmark::DoNotOptimize(m.step(d.x.data(), d.y.data(), T(1e-3), true));
}

namespace conv {
constexpr index_t batch = 32, cin = 32, cout = 64, side = 32, k = 3, taps = k * k, rows = cin * taps,
                  points = batch * side * side;
const nn::conv_options options{.padding = {1}};
struct problem {
  fusor::array<float> x, w, r;
  problem() {
    fusor::random::generator rng(2);
    x = fusor::random::normal<float>(rng, {batch, cin, side, side});
    w = fusor::random::normal<float>(rng, {cout, cin, k, k}, 0.0f, 0.05f);
    r = fusor::random::normal<float>(rng, {batch, cout, side, side});
  }
};
}  // namespace conv

void fusor_conv2d_forward(benchmark::State& st) {
  fusor::set_num_threads(int(st.range(0)));
  fusor::set_blas_num_threads(int(st.range(0)));
  const conv::problem p;
  for (auto _ : st) {
    fusor::array<float> y = nn::functional::conv2d(p.x, p.w, conv::options);
    benchmark::DoNotOptimize(y.data());
  }
}

void fusor_conv2d_step(benchmark::State& st) {
  fusor::set_num_threads(int(st.range(0)));
  fusor::set_blas_num_threads(int(st.range(0)));
  const conv::problem p;
  nn::parameters<float> params;
  params.emplace("x", p.x.copy());
  params.emplace("w", p.w.copy());
  auto step = fusor::ad::compile(
      [&](const auto& q) { return sum(nn::functional::conv2d(q.at("x"), q.at("w"), conv::options) * p.r); }, params);
  for (auto _ : st) {
    auto [value, grads] = step(params);
    benchmark::DoNotOptimize(grads.at("w").data());
  }
}

void conv2d_gemm_floor(benchmark::State& st) {
  fusor::set_blas_num_threads(int(st.range(0)));
  using namespace conv;
  std::vector<float> w(cout * rows, 0.01f), cols(rows * points, 0.5f), y(cout * points), g(cout * points, 0.1f),
      dw(cout * rows), dcols(rows * points);
  for (auto _ : st) {
    gemm<float>(CblasNoTrans, CblasNoTrans, cout, points, rows, w.data(), rows, cols.data(), points, y.data(), points);
    gemm<float>(CblasNoTrans, CblasTrans, cout, rows, points, g.data(), points, cols.data(), points, dw.data(), rows);
    gemm<float>(CblasTrans, CblasNoTrans, rows, points, cout, w.data(), rows, g.data(), points, dcols.data(), points);
    benchmark::DoNotOptimize(dcols.data());
  }
}

#if defined(FUSOR_HAS_ONEDNN)
/// oneDNN's forward pass and both adjoints on the conv problem, its operands made once in the
/// layouts the kernels chose (what fusor's glue adds on top is the reorders from and to NCHW).
void conv2d_onednn_floor(benchmark::State& st) {
  fusor::set_num_threads(int(st.range(0)));
  using namespace conv;
  const fusor::conv_problem p = nn::detail::plan_conv("conv2d", {batch, cin, side, side}, {cout, cin, k, k}, options, 2).problem();
  const fusor::detail::onednn::threads_scope threads;
  fusor::detail::onednn::state& s = fusor::detail::onednn::this_thread();
  fusor::detail::onednn::entry& e = *fusor::detail::onednn::entry_of(p);
  std::vector<std::vector<float>> buffers;
  auto memory_of = [&](const fusor::detail::onednn::port& port) {
    const dnnl_memory_desc_t& md = port.kernel;
    buffers.emplace_back(dnnl_memory_desc_get_size(&md) / sizeof(float), 0.01f);
    dnnl_memory_t m = nullptr;
    dnnl_memory_create(&m, &md, s.rt.engine, buffers.back().data());
    return fusor::detail::onednn::memory(m);
  };
  buffers.reserve(9);
  auto& f = e.forward;
  auto& d = e.input_adjoint;
  auto& g = e.weight_adjoint;
  const auto x = memory_of(*f.a), w = memory_of(*f.b), y = memory_of(*f.c), dy = memory_of(*d.a), wd = memory_of(*d.b),
             dx = memory_of(*d.c), dyw = memory_of(*g.a), xw = memory_of(*g.b), dw = memory_of(*g.c);
  for (auto _ : st) {
    fusor::detail::onednn::execute(f.kernel.get(), s.rt.stream, {{DNNL_ARG_SRC, x.get()}, {DNNL_ARG_WEIGHTS, w.get()}, {DNNL_ARG_DST, y.get()}});
    fusor::detail::onednn::execute(d.kernel.get(), s.rt.stream,
                                   {{DNNL_ARG_DIFF_DST, dy.get()}, {DNNL_ARG_WEIGHTS, wd.get()}, {DNNL_ARG_DIFF_SRC, dx.get()}});
    fusor::detail::onednn::execute(g.kernel.get(), s.rt.stream,
                                   {{DNNL_ARG_DIFF_DST, dyw.get()}, {DNNL_ARG_SRC, xw.get()}, {DNNL_ARG_DIFF_WEIGHTS, dw.get()}});
    dnnl_stream_wait(s.rt.stream);
  }
}
#endif

void conv2d_flops_sgemm(benchmark::State& st) {
  fusor::set_blas_num_threads(int(st.range(0)));
  using namespace conv;
  const index_t n = 1219;  // 2 n^3 = 3.62e9: the step's three convolutions, 2 N O L C taps each
  std::vector<float> a(n * n, 0.01f), b(n * n, 0.5f), c(n * n);
  for (auto _ : st) {
    gemm<float>(CblasNoTrans, CblasNoTrans, n, n, n, a.data(), n, b.data(), n, c.data(), n);
    benchmark::DoNotOptimize(c.data());
  }
}

void conv_threads(benchmark::internal::Benchmark* b) {
  for (int t : {1, 2}) b->Args({t});
  b->UseRealTime()->Unit(benchmark::kMillisecond);
}
BENCHMARK(fusor_conv2d_forward)->Apply(conv_threads);
BENCHMARK(fusor_conv2d_step)->Apply(conv_threads);
BENCHMARK(conv2d_gemm_floor)->Apply(conv_threads);
#if defined(FUSOR_HAS_ONEDNN)
BENCHMARK(conv2d_onednn_floor)->Apply(conv_threads);
#endif
BENCHMARK(conv2d_flops_sgemm)->Apply(conv_threads);

namespace block {
constexpr index_t batch = 32, length = 64, d = 128, heads = 4, ff = 512, head_dim = d / heads, tokens = batch * length;
struct problem {
  nn::parameters<float> params;
  fusor::array<float> r;
  nn::sequential_model<float, fusor::cpu, nn::transformer_encoder_layer> model{nn::transformer_encoder_layer(d, heads, ff, {.causal = true})};
  problem() {
    params = model.init(3);
    fusor::random::generator rng(4);
    params.emplace("x", fusor::random::normal<float>(rng, {batch, length, d}));
    r = fusor::random::normal<float>(rng, {batch, length, d});
  }
  auto loss() {
    return [this](const auto& p) { return sum(model(p, p.at("x")) * r); };
  }
};
}  // namespace block

void fusor_transformer_step(benchmark::State& st) {
  fusor::set_num_threads(int(st.range(0)));
  fusor::set_blas_num_threads(int(st.range(0)));
  block::problem p;
  auto step = fusor::ad::value_and_grad(p.loss());
  for (auto _ : st) {
    auto [value, grads] = step(p.params);
    benchmark::DoNotOptimize(grads.at("x").data());
  }
}

void fusor_transformer_replay(benchmark::State& st) {
  fusor::set_num_threads(int(st.range(0)));
  fusor::set_blas_num_threads(int(st.range(0)));
  block::problem p;
  auto step = fusor::ad::compile(p.loss(), p.params);
  for (auto _ : st) {
    auto [value, grads] = step(p.params);
    benchmark::DoNotOptimize(grads.at("x").data());
  }
}

void transformer_gemm_floor(benchmark::State& st) {
  fusor::set_blas_num_threads(int(st.range(0)));
  using namespace block;
  // a (tokens, in) x (in, out) product with its two adjoints: dA = G Bᵀ, dB = Aᵀ G
  struct product {
    index_t in, out;
    std::vector<float> a, w, y, da, dw;
    product(index_t i, index_t o) : in(i), out(o), a(tokens * i, 0.5f), w(i * o, 0.01f), y(tokens * o), da(tokens * i), dw(i * o) {}
    void run() {
      gemm<float>(CblasNoTrans, CblasTrans, tokens, out, in, a.data(), in, w.data(), in, y.data(), out);
      gemm<float>(CblasNoTrans, CblasNoTrans, tokens, in, out, y.data(), out, w.data(), in, da.data(), in);
      gemm<float>(CblasTrans, CblasNoTrans, out, in, tokens, y.data(), out, a.data(), in, dw.data(), in);
    }
  };
  product qkv(d, 3 * d), out(d, d), up(d, ff), down(ff, d);
  const index_t pairs = batch * heads;
  std::vector<float> q(pairs * length * head_dim, 0.1f), k(q), v(q), s(pairs * length * length, 0.01f), o(q), dq(q), dk(q), dv(q),
      ds(s);
  for (auto _ : st) {
    qkv.run();
    out.run();
    up.run();
    down.run();
    for (index_t h = 0; h < pairs; ++h) {
      const index_t a = h * length * head_dim, b = h * length * length;
      const auto L = length, D = head_dim;
      gemm<float>(CblasNoTrans, CblasTrans, L, L, D, &q[a], D, &k[a], D, &s[b], L);   // S = Q Kᵀ
      gemm<float>(CblasNoTrans, CblasNoTrans, L, D, L, &s[b], L, &v[a], D, &o[a], D);  // O = P V
      gemm<float>(CblasNoTrans, CblasTrans, L, L, D, &o[a], D, &v[a], D, &ds[b], L);  // dP = G Vᵀ
      gemm<float>(CblasTrans, CblasNoTrans, L, D, L, &s[b], L, &o[a], D, &dv[a], D);  // dV = Pᵀ G
      gemm<float>(CblasNoTrans, CblasNoTrans, L, D, L, &ds[b], L, &k[a], D, &dq[a], D);  // dQ = dS K
      gemm<float>(CblasTrans, CblasNoTrans, L, D, L, &ds[b], L, &q[a], D, &dk[a], D);   // dK = dSᵀ Q
    }
    benchmark::DoNotOptimize(dk.data());
  }
}

namespace stack {
template <class L>
auto model(L layer) {
  return nn::sequential<float>(layer, layer, layer, layer);
}
// value_and_grad of sum(model(x) * r) with respect to the parameters and x
template <class M>
auto loss(const M& m, const fusor::array<float>& r) {
  return [&m, &r](const auto& p) { return sum(m(p, p.at("x")) * r); };
}
template <class M>
void run(benchmark::State& st, const M& m) {
  fusor::set_num_threads(int(st.range(1)));
  fusor::set_blas_num_threads(int(st.range(1)));
  using namespace block;
  nn::parameters<float> params = m.init(3);
  fusor::random::generator rng(4);
  params.emplace("x", fusor::random::normal<float>(rng, {batch, length, d}));
  const fusor::array<float> r = fusor::random::normal<float>(rng, {batch, length, d});
  std::size_t peak = 0;
  std::thread([&] {  // its checkpoint workspaces start empty
    const std::size_t before = fusor::ad::tape_memory().current;
    fusor::ad::reset_tape_memory_peak();
    auto once = fusor::ad::value_and_grad(loss(m, r));
    (void)once(params);
    peak = fusor::ad::tape_memory().peak - before;
  }).join();
  auto step = fusor::ad::value_and_grad(loss(m, r));
  for (auto _ : st) {
    auto [value, grads] = step(params);
    benchmark::DoNotOptimize(grads.at("x").data());
  }
  st.counters["tape_MiB"] = double(peak) / (1024.0 * 1024.0);
}
}  // namespace stack

void fusor_transformer_stack_step(benchmark::State& st) {
  using namespace block;
  const nn::transformer_encoder_layer layer(d, heads, ff, {.causal = true});
  if (st.range(0) == 0) stack::run(st, stack::model(layer));
  else stack::run(st, stack::model(nn::checkpointed(layer)));
}

namespace penalty {
template <bool Penalised>
void run(benchmark::State& st) {
  use_threads(st);
  constexpr index_t batch = 64;
  const data<float> d(batch);
  const auto critic = nn::sequential<float>(nn::linear(in_f, hid), nn::tanh, nn::linear(hid, 1));
  const nn::parameters<float> params = critic.init(5);
  auto loss = [&](const auto& p) {
    if constexpr (Penalised) {
      // D's value and its gradient in x, both variables of this recording
      const auto [total, gx] = fusor::ad::value_and_grad([&](const auto& x, const auto& q) { return sum(critic(q, x)); })(d.x, p);
      return total / float(batch) + 10.0f * mean(square(sqrt(sum(gx * gx, 1)) - 1.0f));
    } else {
      return mean(critic(p, d.x));
    }
  };
  auto step = fusor::ad::value_and_grad(loss);
  for (auto _ : st) {
    auto [value, grads] = step(params);
    benchmark::DoNotOptimize(value);
  }
}
}  // namespace penalty

void fusor_gradient_penalty_step(benchmark::State& st) {
  if (st.range(0) == 1) penalty::run<true>(st);
  else penalty::run<false>(st);
}

void fusor_cnn_step(benchmark::State& st) {
  use_threads(st);
  constexpr index_t batch = 32;
  fusor::random::generator rng(6);
  const fusor::array<float> x = fusor::random::uniform<float>(rng, {batch, 1, 8, 8}, 0.0f, 1.0f);
  const fusor::array<std::int64_t> y = fusor::random::integers<std::int64_t>(rng, {batch}, 0, 10);
  auto model = nn::sequential<float>(
      nn::conv2d(1, 16, {3}, nn::conv_options{.padding = {1}}), nn::batch_norm(16), nn::relu, nn::max_pool2d({2}),
      nn::conv2d(16, 32, {3}, nn::conv_options{.padding = {1}}), nn::batch_norm(32), nn::relu, nn::max_pool2d({2}),
      nn::flatten, nn::linear(32 * 2 * 2, 10));
  nn::parameters<float> params = model.init(7);
  optim::adam<float, fusor::cpu> opt({.lr = 1e-3});
  auto loss = [&](const auto& p, const auto& xs, const auto& ys) { return nn::cross_entropy(model(p, xs), ys); };
  if (st.range(0) == 0) {
    auto step = fusor::ad::value_and_grad(loss);
    for (auto _ : st) {
      auto [value, grads] = step(params, x, y);
      opt.step(params, grads);
      benchmark::DoNotOptimize(value);
    }
  } else {
    auto step = fusor::ad::compile(loss, params, x, y);
    for (auto _ : st) {
      auto [value, grads] = step(params, x, y);
      opt.step(params, grads);
      benchmark::DoNotOptimize(value);
    }
    if (step.recordings() != 1) st.SkipWithError("the step was recorded again: it should only replay");
  }
}

BENCHMARK(fusor_cnn_step)->ArgsProduct({{0, 1}, {1, 2}})->UseRealTime();
BENCHMARK(fusor_gradient_penalty_step)->ArgsProduct({{0, 1}, {1, 2}})->UseRealTime();
BENCHMARK(fusor_transformer_step)->Apply(conv_threads);
BENCHMARK(fusor_transformer_replay)->Apply(conv_threads);
BENCHMARK(transformer_gemm_floor)->Apply(conv_threads);
BENCHMARK(fusor_transformer_stack_step)->ArgsProduct({{0, 1}, {1, 2}})->UseRealTime()->Unit(benchmark::kMillisecond);

void sizes(benchmark::internal::Benchmark* b) {
  for (int t : {1, 2}) b->Args({64, t});
  b->UseRealTime();
}

}  // namespace

BENCHMARK(fusor_step<float>)->Apply(sizes);
BENCHMARK(fusor_step<double>)->Apply(sizes);
BENCHMARK(fusor_replay<float>)->Apply(sizes);
BENCHMARK(fusor_replay<double>)->Apply(sizes);
BENCHMARK(fusor_step<float16>)->Apply(sizes);
BENCHMARK(fusor_step<bfloat16>)->Apply(sizes);
BENCHMARK(fusor_replay<float16>)->Apply(sizes);
BENCHMARK(fusor_replay<bfloat16>)->Apply(sizes);
BENCHMARK(hand_step<float>)->Apply(sizes);
BENCHMARK(hand_step<double>)->Apply(sizes);
BENCHMARK(gemm_floor<float>)->Apply(sizes);
BENCHMARK(gemm_floor<double>)->Apply(sizes);
BENCHMARK(fusor_infer<float>)->Apply(sizes);
BENCHMARK(fusor_infer<double>)->Apply(sizes);

BENCHMARK_MAIN();
