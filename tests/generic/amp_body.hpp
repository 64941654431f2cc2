// Mixed-precision training bodies (ad::autocast, optim::grad_scaler, reverse mode through float16
// and bfloat16 variables) written once and instantiated per backend: tests/test_nn_amp.cpp runs
// them on cpu, tests/test_nn_amp_cuda.cu on cuda. A unit of its own beside the layer bodies
// (nn_body.hpp): together they were the suite's largest translation unit.
//
// The includer defines TEST_BACKEND (fusor::cpu or fusor::cuda) before including this file.
#include "../common.hpp"
#include "../data_dir.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace ampbody {

using fusor::extents;
using fusor::index_t;
using B = TEST_BACKEND;
namespace ad = fusor::ad;
namespace nn = fusor::ad::nn;
namespace F = fusor::ad::nn::functional;
using I64 = fusor::array<std::int64_t, B>;

// ---- mixed precision: ad::autocast and optim::grad_scaler -------------------------------------

using F32 = fusor::array<float, B>;
inline F32 fvals(index_t n, double lo, double hi, std::uint64_t seed, extents shape) {
  return test::on<B>(test::values<float>(n, lo, hi, seed), shape);
}
inline std::vector<float> fv(const F32& a) { return test::host_values(a); }
/// x rounded to H and back (the reference's own rounding: H's constructor rounds to nearest even).
template <class H>
double rounded(double x) {
  return double(float(H(x)));
}
/// |got - want| within one unit in the last place of H at want: a product accumulated in float32
/// and rounded once lands on want's H neighbour at worst (an H-accumulated one does not).
template <class H>
void check_within_ulp(const std::vector<float>& got, const std::vector<double>& want, const char* what) {
  REQUIRE(got.size() == want.size());
  int bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double w = want[i];
    const double ulp = w == 0 ? 0x1p-24 : std::ldexp(1.0, std::ilogb(w) - std::numeric_limits<H>::digits + 1);
    if (!(std::abs(double(got[i]) - w) <= ulp)) ++bad;
  }
  INFO(what);
  CHECK(bad == 0);
}

template <class H>
void check_autocast_linear() {
  // in = 257 terms: a 16-bit accumulator would be several units off; float32's is within one
  const index_t n = 5, in = 257, out = 9;
  const F32 x = fvals(n * in, -1, 1, 41, extents{n, in}), w = fvals(in * out, -1, 1, 42, extents{in, out});
  const F32 b = fvals(out, -1, 1, 43, extents{out}), c = fvals(n * out, -1, 1, 44, extents{n, out});
  const auto xs = fv(x), ws = fv(w), bs = fv(b), cs = fv(c);
  std::vector<double> want(std::size_t(n * out)), dx(std::size_t(n * in)), dw(std::size_t(in * out)), db(std::size_t(out), 0.0);
  for (index_t i = 0; i < n; ++i)
    for (index_t j = 0; j < out; ++j) {
      double s = 0;
      for (index_t k = 0; k < in; ++k) s += rounded<H>(xs[i * in + k]) * rounded<H>(ws[k * out + j]);
      want[i * out + j] = rounded<H>(rounded<H>(s) + rounded<H>(bs[j]));
      db[j] += rounded<H>(cs[i * out + j]);
    }
  for (index_t i = 0; i < n; ++i)
    for (index_t k = 0; k < in; ++k) {
      double s = 0;
      for (index_t j = 0; j < out; ++j) s += rounded<H>(cs[i * out + j]) * rounded<H>(ws[k * out + j]);
      dx[i * in + k] = rounded<H>(s);
    }
  for (index_t k = 0; k < in; ++k)
    for (index_t j = 0; j < out; ++j) {
      double s = 0;
      for (index_t i = 0; i < n; ++i) s += rounded<H>(xs[i * in + k]) * rounded<H>(cs[i * out + j]);
      dw[k * out + j] = rounded<H>(s);
    }
  // arrays: an array of H
  const auto y = F::linear(x, w, b, ad::autocast<H>);
  static_assert(std::is_same_v<fusor::value_t<decltype(y)>, H>);
  check_within_ulp<H>(fv(F32(fusor::cast<float>(y))), want, "autocast linear on arrays");
  // variables: the same values, and float32 gradients that came back through the casts
  auto loss = [&](const auto& p) {
    const auto yv = F::linear(p.at("x"), p.at("w"), p.at("b"), ad::autocast<H>);
    static_assert(std::is_same_v<fusor::value_t<fusor::node_t<decltype(yv)>>, H>);
    return sum(fusor::cast<float>(yv) * c);
  };
  std::map<std::string, F32> p;
  p.emplace("x", x.copy());
  p.emplace("w", w.copy());
  p.emplace("b", b.copy());
  auto [value, g] = ad::value_and_grad(loss)(p);
  double value_want = 0;
  for (std::size_t i = 0; i < want.size(); ++i) value_want += want[i] * cs[i];
  CHECK(double(value) == doctest::Approx(value_want).epsilon(1e-2));
  check_within_ulp<H>(fv(g.at("x")), dx, "autocast linear: x's gradient");
  check_within_ulp<H>(fv(g.at("w")), dw, "autocast linear: the weight's gradient");
  const auto gb = fv(g.at("b"));
  for (index_t j = 0; j < out; ++j) CHECK(double(gb[j]) == doctest::Approx(db[j]).epsilon(1e-6));  // summed in float32
}

TEST_CASE("autocast linear: operands rounded to float16/bfloat16, float32 accumulation, one rounding; gradients the same way") {
  check_autocast_linear<fusor::float16>();
  check_autocast_linear<fusor::bfloat16>();
  // the cast's adjoint is a cast: through float -> H -> float, a gradient c arrives as float(H(c))
  const F32 w = fvals(37, -3, 3, 45, extents{37}), c = fvals(37, -3, 3, 46, extents{37});
  auto g = ad::grad([&](const auto& v) { return sum(fusor::cast<float>(fusor::cast<fusor::float16>(v)) * c); })(w);
  const auto gs = fv(g), cs = fv(c);
  for (std::size_t i = 0; i < gs.size(); ++i) CHECK(double(gs[i]) == rounded<fusor::float16>(cs[i]));
}

TEST_CASE("a model under autocast: 16-bit between its linear layers, float32 in layer_norm and out; float32 gradients") {
  using H = fusor::float16;
  const auto model = nn::sequential<float, B>(nn::linear(6, 8), nn::relu, nn::layer_norm(8), nn::linear(8, 4), nn::tanh);
  const nn::parameters<float, B> params = model.init(3);
  const F32 x = fvals(7 * 6, -1, 1, 47, extents{7, 6}), c = fvals(7 * 4, -1, 1, 48, extents{7, 4});
  const auto y16 = model(params, x, ad::autocast<H>), y32 = model(params, x);
  static_assert(std::is_same_v<decltype(y16), const F32>);  // the output is float32
  const auto a = fv(y16), r = fv(y32);
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(double(a[i]) - double(r[i])));
  CHECK(worst > 0);       // it did compute in float16
  CHECK(worst < 1e-2);    // within float16's rounding of a small model
  // on variables: the values of the array call, and gradients within float16 rounding of float32's
  auto loss16 = [&](const auto& p) { return sum(model(p, x, ad::autocast<H>) * c); };
  auto loss32 = [&](const auto& p) { return sum(model(p, x) * c); };
  auto [v16, g16] = ad::value_and_grad(loss16)(params);
  auto [v32, g32] = ad::value_and_grad(loss32)(params);
  double dot = 0;
  for (std::size_t i = 0; i < a.size(); ++i) dot += double(a[i]) * double(fv(c)[i]);
  CHECK(double(v16) == doctest::Approx(dot).epsilon(1e-5));
  for (const auto& [name, g] : g32) {
    const auto h = fv(g16.at(name)), f = fv(g);
    double scale = 0, diff = 0;
    for (std::size_t i = 0; i < f.size(); ++i) {
      scale = std::max(scale, std::abs(double(f[i])));
      diff = std::max(diff, std::abs(double(h[i]) - double(f[i])));
    }
    INFO(name, ": max |float16 - float32| ", diff, " of ", scale);
    CHECK(diff <= 2e-2 * scale);
  }
}

/// The digits MLP of examples/train_digits (64-64-10, Adam at 1e-2, batches of 32), trained for
/// `epochs` with or without a policy; its held-out accuracy.
template <class Policy>
double digits_accuracy(Policy policy, int epochs, bool scale_loss) {
  const std::filesystem::path dir = test::data_dir() / "digits";
  const F32 images = fusor::to<B>(fusor::array<float, fusor::cpu>(
      fusor::cast<float>(fusor::load_npy<std::uint8_t, fusor::cpu>(dir / "images.npy")) / 16.0f));
  const I64 labels = fusor::to<B>(fusor::array<std::int64_t, fusor::cpu>(
      fusor::cast<std::int64_t>(fusor::load_npy<std::uint8_t, fusor::cpu>(dir / "labels.npy"))));
  const index_t n = images.shape()[0], n_train = n - n / 5;
  fusor::random::generator rng(2026);
  const I64 order = fusor::random::permutation<B>(rng, n);
  const I64 train_rows = order(fusor::range(0, n_train)).copy(), test_rows = order(fusor::range(n_train, n)).copy();
  const F32 x_train = fusor::take(images, train_rows, 0), x_test = fusor::take(images, test_rows, 0);
  const I64 y_train = fusor::take(labels, train_rows), y_test = fusor::take(labels, test_rows);
  const auto model = nn::sequential<float, B>(nn::linear(64, 64), nn::relu, nn::linear(64, 10));
  nn::parameters<float, B> params = model.init(7);
  ad::optim::adam<float, B> opt({.lr = 1e-2});
  ad::optim::grad_scaler<float, B> scaler({.enabled = scale_loss});
  const F32* xb = nullptr;
  const I64* yb = nullptr;
  auto call = [&](const auto& p, const auto& xs) {
    if constexpr (std::is_same_v<Policy, std::nullptr_t>) return model(p, xs);
    else return model(p, xs, policy);
  };
  auto step = ad::value_and_grad([&](const auto& p) { return scaler.scale(nn::cross_entropy(call(p, *xb), *yb)); });
  int skipped = 0;
  for (int epoch = 0; epoch < epochs; ++epoch)
    for (const auto& batch : nn::shuffled_batches<B>(n_train, 32, rng)) {
      const F32 xs = fusor::take(x_train, batch, 0);
      const I64 ys = fusor::take(y_train, batch);
      xb = &xs;
      yb = &ys;
      auto [loss, grads] = step(params);
      skipped += !scaler.step(opt, params, grads);
    }
  CHECK(skipped == 0);  // 2^16 is small enough for this model's gradients
  return nn::accuracy(call(params, x_test), y_test);
}

TEST_CASE("the digits MLP trains to float32's accuracy (within 1%) under autocast, float16 with loss scaling and bfloat16") {
  const double f32 = digits_accuracy(nullptr, 12, false);
  const double f16 = digits_accuracy(ad::autocast<fusor::float16>, 12, true);
  const double bf16 = digits_accuracy(ad::autocast<fusor::bfloat16>, 12, false);
  MESSAGE("digits held out after 12 epochs: float32 " << f32 << ", float16 AMP " << f16 << ", bfloat16 AMP " << bf16);
  CHECK(f32 >= 0.95);
  CHECK(std::abs(f16 - f32) <= 0.01);
  CHECK(std::abs(bf16 - f32) <= 0.01);
}

TEST_CASE("grad_scaler: an overflow skips the step and halves the scale; clean steps grow it; PyTorch's rules") {
  using H = fusor::float16;
  const auto model = nn::sequential<float, B>(nn::linear(5, 6), nn::relu, nn::linear(6, 3));
  nn::parameters<float, B> params = model.init(11);
  const F32 x = fvals(4 * 5, -1, 1, 49, extents{4, 5});
  const I64 y = test::on<B>(std::vector<std::int64_t>{0, 2, 1, 2});
  ad::optim::sgd<float, B> opt({.lr = 0.1});
  // a scale of 2^100 is finite in float32, but the float16 gradients it makes are not
  ad::optim::grad_scaler<float, B> scaler({.init_scale = 0x1p100, .growth_interval = 3});
  auto step = ad::value_and_grad([&](const auto& p) { return scaler.scale(nn::cross_entropy(model(p, x, ad::autocast<H>), y)); });
  nn::parameters<float, B> before;
  for (const auto& [name, a] : params) before.emplace(name, a.copy());
  {
    auto [loss, grads] = step(params);
    CHECK(std::isfinite(double(loss)));
    CHECK_FALSE(scaler.step(opt, params, grads));  // skipped
    for (const auto& [name, p] : before) CHECK(fv(params.at(name)) == fv(p));  // untouched
    CHECK(scaler.get_scale() == 0x1p99);
    CHECK(opt.steps() == 0);
  }
  // back off to a scale that fits: 2^99 ... 2^16 skip, then steps run and, every 3, the scale doubles
  int skipped = 1;
  while (true) {
    auto [loss, grads] = step(params);
    if (scaler.step(opt, params, grads)) break;
    ++skipped;
  }
  CHECK(skipped >= 70);  // 2^100 down to below float16's 65504 times a gradient of order 1
  const double fits = scaler.get_scale();
  CHECK(scaler.growth_tracker() == 1);
  for (int k = 0; k < 2; ++k) {
    auto [loss, grads] = step(params);
    CHECK(scaler.step(opt, params, grads));
  }
  CHECK(scaler.get_scale() == 2 * fits);
  CHECK(scaler.growth_tracker() == 0);

  // unscale divides in place, exactly for a power of two; a second unscale before a step is an error
  ad::optim::grad_scaler<float, B> s2({.init_scale = 1024});
  std::map<std::string, F32> g;
  g.emplace("a", fvals(9, -1, 1, 50, extents{9}));
  const auto ga = fv(g.at("a"));
  CHECK(s2.unscale(g));
  const auto un = fv(g.at("a"));
  for (std::size_t i = 0; i < ga.size(); ++i) CHECK(un[i] == ga[i] / 1024.0f);
  CHECK_THROWS_WITH_AS(s2.unscale(g), doctest::Contains("already called"), fusor::value_error);
  // a NaN anywhere is found
  ad::optim::grad_scaler<float, B> s3;
  std::map<std::string, F32> bad;
  bad.emplace("a", test::on<B>(std::vector<float>{1.0f, std::nanf(""), 2.0f}));
  CHECK_FALSE(s3.unscale(bad));
  // disabled: a scale of 1 and every step taken
  ad::optim::grad_scaler<float, B> off({.enabled = false});
  CHECK(off.get_scale() == 1.0);
  // options out of range are value_errors naming the option
  CHECK_THROWS_WITH_AS((ad::optim::grad_scaler<float, B>({.init_scale = 0})), doctest::Contains("init_scale"), fusor::value_error);
  CHECK_THROWS_WITH_AS((ad::optim::grad_scaler<float, B>({.growth_factor = 1})), doctest::Contains("growth_factor"), fusor::value_error);
  CHECK_THROWS_WITH_AS((ad::optim::grad_scaler<float, B>({.backoff_factor = 1})), doctest::Contains("backoff_factor"), fusor::value_error);
  CHECK_THROWS_WITH_AS((ad::optim::grad_scaler<float, B>({.growth_interval = 0})), doctest::Contains("growth_interval"), fusor::value_error);
}

TEST_CASE("a replayed step (ad::compile) multiplies by the scaler's current scale") {
  const auto model = nn::sequential<float, B>(nn::linear(5, 3));
  nn::parameters<float, B> params = model.init(12);
  const F32 x = fvals(4 * 5, -1, 1, 51, extents{4, 5});
  ad::optim::grad_scaler<float, B> scaler({.init_scale = 4, .growth_interval = 1});  // doubles every step
  ad::optim::sgd<float, B> opt({.lr = 0.0});
  auto f = [&](const auto& p, const auto& xs) { return scaler.scale(sum(square(model(p, xs, ad::autocast<fusor::bfloat16>)))); };
  auto compiled = ad::compile(f, params, x);
  auto [v1, g1] = compiled(params, x);
  CHECK(scaler.step(opt, params, g1));
  CHECK(scaler.get_scale() == 8);
  auto [v2, g2] = compiled(params, x);
  CHECK(double(v2) == doctest::Approx(2 * double(v1)).epsilon(1e-6));
  CHECK(compiled.replays() == 2);
  CHECK(compiled.recordings() == 1);  // the scale changed in place: the recording still holds
}

}  // namespace ampbody
