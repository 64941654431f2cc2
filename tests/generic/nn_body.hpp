// Layer, loss, initialiser and model test bodies (fusor::ad::nn) written once and instantiated per
// backend: tests/test_nn.cpp runs them on cpu, tests/test_nn_cuda.cu on cuda. References are plain
// loops over host values in long double (double on cuda builds), closed-form adjoints
// (softmax − onehot, sigmoid − y) and central differences (gradcheck, numeric_grad) in float64.
//
// The includer defines TEST_BACKEND (fusor::cpu or fusor::cuda) before including this file.
#include "../common.hpp"
#include "../temp_dir.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace nnbody {

using fusor::extents;
using fusor::index_t;
using B = TEST_BACKEND;
namespace ad = fusor::ad;
namespace nn = fusor::ad::nn;
namespace F = fusor::ad::nn::functional;
#if defined(__CUDACC__)
using ref_t = double;
#else
using ref_t = long double;
#endif
using D = fusor::array<double, B>;
using I64 = fusor::array<std::int64_t, B>;
using params_t = nn::parameters<double, B>;

inline D dvals(index_t n, double lo, double hi, std::uint64_t seed, extents shape = {}) {
  if (shape.size() == 0) shape = extents{n};
  return test::on<B>(test::values<double>(n, lo, hi, seed), shape);
}
inline std::vector<double> hv(const D& a) { return test::host_values(a); }

/// max |a - b| / max(1, |b|) over host values.
inline double rel_diff(const std::vector<double>& a, const std::vector<ref_t>& b) {
  REQUIRE(a.size() == b.size());
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    worst = std::max(worst, double(std::abs(ref_t(a[i]) - b[i]) / std::max<ref_t>(1, std::abs(b[i]))));
  return worst;
}

/// Checks the reverse-mode gradient of f (arrays or variables -> a number) at x against central
/// differences along random directions and, for small x, every coordinate.
template <class Fn>
void check_reverse(const char* what, Fn f, const D& x, double tol = 1e-6) {
  ad::gradcheck_options o;
  o.per_coordinate = x.size() <= 40;
  o.atol = tol;
  o.rtol = tol;
  const auto r = ad::gradcheck<ad::gradcheck_mode::reverse>(f, x, o);
  const std::string report = r.report();
  INFO(what, ": ", report);
  CHECK(r.passed);
}

/// The gradient of loss(params) for one parameter by central differences (loss called on arrays).
template <class Loss>
std::vector<double> numeric_param_grad(const Loss& loss, params_t& params, const std::string& name, double h = 1e-6) {
  auto host = hv(params.at(name));
  std::vector<double> g(host.size());
  const extents shape = params.at(name).shape();
  for (std::size_t i = 0; i < host.size(); ++i) {
    const double keep = host[i];
    host[i] = keep + h;
    params.at(name) = test::on<B>(host, shape);
    const double up = loss(params);
    host[i] = keep - h;
    params.at(name) = test::on<B>(host, shape);
    const double down = loss(params);
    host[i] = keep;
    g[i] = (up - down) / (2 * h);
  }
  params.at(name) = test::on<B>(host, shape);
  return g;
}

// ---- activations -----------------------------------------------------------------------------

template <class Act, class Ref>
void check_activation(const char* name, Act act, Ref ref, double tol) {
  for (index_t n : test::edge_sizes<double>()) {
    const D x = dvals(n, -4, 4, std::uint64_t(n) + 11);
    const D y = act(x);
    const auto xs = hv(x);
    std::vector<ref_t> want(xs.size());
    for (std::size_t i = 0; i < xs.size(); ++i) want[i] = ref(ref_t(xs[i]));
    INFO(name, " n = ", n);
    CHECK(rel_diff(hv(y), want) <= tol);
    if (n > 0 && n < 100) {
      const D w = dvals(n, -1, 1, 5);
      check_reverse(name, [&](const auto& t) { return sum(act(t) * w); }, x);
    }
  }
}

TEST_CASE("nn activations equal their formulas on the edge sizes; their gradients central differences") {
  using R = ref_t;
  check_activation("relu", nn::relu, [](R x) { return x > 0 ? x : R(0); }, 0);
  check_activation("leaky_relu", [](const auto& x) { return nn::leaky_relu(x, 0.2); },
                   [](R x) { return x > 0 ? x : R(0.2) * x; }, 1e-16);
  check_activation("gelu", nn::gelu, [](R x) { return x / 2 * (1 + std::erf(x / std::sqrt(R(2)))); }, 1e-15);
  check_activation("gelu_tanh", nn::gelu_tanh,
                   [](R x) {
                     return x / 2 * (1 + std::tanh(std::sqrt(2 / R(3.14159265358979323846264338327950288L)) *
                                                   (x + R(0.044715) * x * x * x)));
                   },
                   1e-14);
  check_activation("silu", nn::silu, [](R x) { return x / (1 + std::exp(-x)); }, 1e-14);
  check_activation("sigmoid", nn::sigmoid, [](R x) { return 1 / (1 + std::exp(-x)); }, 1e-15);
  check_activation("tanh", nn::tanh, [](R x) { return std::tanh(x); }, 1e-15);
}

TEST_CASE("relu's and leaky_relu's gradient at 0 is the left one (PyTorch's), sigmoid's stays finite far out") {
  const D x = test::on<B>(std::vector<double>{0.0, -1.0, 2.0, -800.0, 800.0});
  const D g = ad::grad([](const auto& t) { return sum(nn::relu(t)); })(x);
  CHECK((hv(g) == std::vector<double>{0, 0, 1, 0, 1}));
  const D gl = ad::grad([](const auto& t) { return sum(nn::leaky_relu(t)); })(x);
  CHECK((hv(gl) == std::vector<double>{0.01, 0.01, 1, 0.01, 1}));
  const D nan = test::on<B>(std::vector<double>{std::nan(""), -1.0});
  CHECK(std::isnan(hv(D(nn::relu(nan)))[0]));  // a diverging run shows, as in PyTorch
  const D gs = ad::grad([](const auto& t) { return sum(nn::sigmoid(t)); })(x);
  const auto s = hv(gs);
  CHECK(s[0] == doctest::Approx(0.25));
  CHECK(s[3] == 0.0);  // e^800 overflows: s(1 − s) = 0, not inf/inf
  CHECK(s[4] == 0.0);
}

TEST_CASE("nn::softmax and nn::log_softmax run along the last axis, for arrays and variables") {
  const D x = dvals(12, -3, 3, 4, extents{3, 4});
  const D p = nn::softmax(x), lp = nn::log_softmax(x);
  const auto xs = hv(x), ps = hv(p), ls = hv(lp);
  for (int r = 0; r < 3; ++r) {
    ref_t z = 0;
    for (int c = 0; c < 4; ++c) z += std::exp(ref_t(xs[r * 4 + c]));
    for (int c = 0; c < 4; ++c) {
      CHECK(ps[r * 4 + c] == doctest::Approx(double(std::exp(ref_t(xs[r * 4 + c])) / z)).epsilon(1e-14));
      CHECK(ls[r * 4 + c] == doctest::Approx(double(ref_t(xs[r * 4 + c]) - std::log(z))).epsilon(1e-14));
    }
  }
  const D w = dvals(12, -1, 1, 9, extents{3, 4});
  check_reverse("softmax", [&](const auto& t) { return sum(nn::softmax(t) * w); }, x);
  check_reverse("log_softmax", [&](const auto& t) { return sum(nn::log_softmax(t) * w); }, x);
}

// ---- losses ----------------------------------------------------------------------------------

TEST_CASE("mse, l1 and binary cross-entropy equal plain loops, mean and sum; gradients by central differences") {
  for (index_t n : std::vector<index_t>{1, 7, 9, 64, 1001}) {
    INFO("n = ", n);
    const D p = dvals(n, 0.02, 0.98, std::uint64_t(n) + 1), y = dvals(n, 0, 1, std::uint64_t(n) + 2);
    const auto ps = hv(p), ys = hv(y);
    ref_t mse = 0, l1 = 0, bce = 0, bcel = 0;
    for (index_t i = 0; i < n; ++i) {
      const ref_t a = ps[i], b = ys[i];
      mse += (a - b) * (a - b);
      l1 += std::abs(a - b);
      bce -= b * std::log(a) + (1 - b) * std::log(1 - a);
      const ref_t z = 8 * a - 4;  // logits in (-4, 4)
      bcel += std::max<ref_t>(z, 0) - z * b + std::log1p(std::exp(-std::abs(z)));
    }
    const D z = 8.0 * p - 4.0;
    CHECK(nn::mse_loss(p, y) == doctest::Approx(double(mse / n)).epsilon(1e-13));
    CHECK(nn::mse_loss(p, y, nn::reduction::sum) == doctest::Approx(double(mse)).epsilon(1e-13));
    CHECK(nn::l1_loss(p, y) == doctest::Approx(double(l1 / n)).epsilon(1e-13));
    CHECK(nn::binary_cross_entropy(p, y) == doctest::Approx(double(bce / n)).epsilon(1e-13));
    CHECK(nn::binary_cross_entropy(p, y, nn::reduction::sum) == doctest::Approx(double(bce)).epsilon(1e-13));
    CHECK(nn::binary_cross_entropy_with_logits(z, y) == doctest::Approx(double(bcel / n)).epsilon(1e-13));
    if (n < 100) {
      check_reverse("mse", [&](const auto& t) { return nn::mse_loss(t, y); }, p);
      check_reverse("mse target", [&](const auto& t) { return nn::mse_loss(p, t, nn::reduction::sum); }, y);
      check_reverse("l1", [&](const auto& t) { return nn::l1_loss(t, y); }, p);
      check_reverse("bce", [&](const auto& t) { return nn::binary_cross_entropy(t, y); }, p);
      check_reverse("bce target", [&](const auto& t) { return nn::binary_cross_entropy(p, t); }, y);
      check_reverse("bce logits", [&](const auto& t) { return nn::binary_cross_entropy_with_logits(t, y); }, z);
      check_reverse("bce logits target",
                    [&](const auto& t) { return nn::binary_cross_entropy_with_logits(z, t, nn::reduction::sum); }, y);
    }
  }
}

TEST_CASE("binary_cross_entropy_with_logits: adjoint sigmoid(z) - y, exact at 0 and finite for huge logits") {
  const D z = test::on<B>(std::vector<double>{0.0, 1000.0, -1000.0, 2.5});
  const D y = test::on<B>(std::vector<double>{1.0, 0.0, 1.0, 0.25});
  const double l = nn::binary_cross_entropy_with_logits(z, y, nn::reduction::sum);
  // log 2 + 1000 + 1000 + (2.5 - 0.625 + log1p(e^-2.5))
  CHECK(l == doctest::Approx(std::log(2.0) + 2000 + 2.5 - 0.625 + std::log1p(std::exp(-2.5))).epsilon(1e-14));
  const D g = ad::grad([&](const auto& t) { return nn::binary_cross_entropy_with_logits(t, y, nn::reduction::sum); })(z);
  const auto gs = hv(g);
  CHECK(gs[0] == -0.5);
  CHECK(gs[1] == 1.0);
  CHECK(gs[2] == -1.0);
  CHECK(gs[3] == doctest::Approx(1 / (1 + std::exp(-2.5)) - 0.25).epsilon(1e-15));
}

TEST_CASE("cross_entropy with class labels: logsumexp − z[label], adjoint (softmax − onehot)/N exactly") {
  for (const auto& shape : std::vector<std::pair<index_t, index_t>>{{1, 1}, {1, 5}, {3, 7}, {9, 3}, {64, 10}}) {
    const index_t rows = shape.first, classes = shape.second;
    INFO("rows ", rows, " classes ", classes);
    const D z = dvals(rows * classes, -5, 5, std::uint64_t(rows * 31 + classes), extents{rows, classes});
    std::vector<std::int64_t> lv(static_cast<std::size_t>(rows));
    for (index_t r = 0; r < rows; ++r) lv[r] = (r * 5 + 3) % classes;
    const I64 labels = test::on<B>(lv);
    const auto zs = hv(z);
    ref_t total = 0;
    std::vector<ref_t> want(zs.size());
    for (index_t r = 0; r < rows; ++r) {
      ref_t m = zs[r * classes], s = 0;
      for (index_t c = 0; c < classes; ++c) m = std::max<ref_t>(m, zs[r * classes + c]);
      for (index_t c = 0; c < classes; ++c) s += std::exp(zs[r * classes + c] - m);
      const ref_t lse = m + std::log(s);
      total += lse - zs[r * classes + lv[r]];
      for (index_t c = 0; c < classes; ++c)
        want[r * classes + c] = (std::exp(zs[r * classes + c] - lse) - (c == lv[r] ? 1 : 0)) / ref_t(rows);
    }
    CHECK(nn::cross_entropy(z, labels) == doctest::Approx(double(total / rows)).epsilon(1e-13));
    CHECK(nn::cross_entropy(z, labels, nn::reduction::sum) == doctest::Approx(double(total)).epsilon(1e-13));
    const auto [value, g] = ad::value_and_grad([&](const auto& t) { return nn::cross_entropy(t, labels); })(z);
    CHECK(value == doctest::Approx(double(total / rows)).epsilon(1e-13));
    CHECK(rel_diff(hv(g), want) <= 1e-14);
    if (rows * classes <= 40) check_reverse("cross_entropy", [&](const auto& t) { return nn::cross_entropy(t, labels); }, z);
    // the logits as an expression of a variable (a node first), and labels as an expression
    check_reverse("cross_entropy of an expression",
                  [&](const auto& t) { return nn::cross_entropy(t * 2.0 + 1.0, labels + std::int64_t(0)); }, z);
  }
}

TEST_CASE("cross_entropy with probabilities, of a batch of sequences, of huge logits, and of no rows") {
  const D z = dvals(24, -4, 4, 3, extents{2, 3, 4});
  D q = dvals(24, 0, 1, 8, extents{2, 3, 4});
  const auto zs = hv(z), qs = hv(q);
  ref_t total = 0;
  for (int r = 0; r < 6; ++r) {
    ref_t s = 0;
    for (int c = 0; c < 4; ++c) s += std::exp(ref_t(zs[r * 4 + c]));
    for (int c = 0; c < 4; ++c) total -= qs[r * 4 + c] * (zs[r * 4 + c] - std::log(s));
  }
  CHECK(nn::cross_entropy(z, q) == doctest::Approx(double(total / 6)).epsilon(1e-13));
  check_reverse("cross_entropy probabilities", [&](const auto& t) { return nn::cross_entropy(t, q); }, z);
  check_reverse("cross_entropy's target", [&](const auto& t) { return nn::cross_entropy(z, t); }, q);
  // labels of a (2, 3) batch of sequences: classes along the last axis
  const I64 lab = test::on<B>(std::vector<std::int64_t>{0, 3, 2, 1, 1, 0}, extents{2, 3});
  check_reverse("cross_entropy of sequences", [&](const auto& t) { return nn::cross_entropy(t, lab); }, z);
  // logits of 1000: exp would overflow without the logsumexp
  const D big = test::on<B>(std::vector<double>{1000, 0, -1000, 1000, 1000, 0}, extents{2, 3});
  const I64 bl = test::on<B>(std::vector<std::int64_t>{0, 2});
  CHECK(nn::cross_entropy(big, bl, nn::reduction::sum) == doctest::Approx(1000 + std::log(2.0)).epsilon(1e-14));
  const D gb = ad::grad([&](const auto& t) { return nn::cross_entropy(t, bl, nn::reduction::sum); })(big);
  const auto gbs = hv(gb);
  const std::vector<double> gb_want{0, 0, 0, 0.5, 0.5, -1};
  // 1000 + log 2 is rounded to the ulp of 1000 (1e-13): the halves are 0.5 within that
  for (std::size_t i = 0; i < 6; ++i) CHECK(gbs[i] == doctest::Approx(gb_want[i]).epsilon(1e-12).scale(1e-12));
  // no rows: the mean is NaN (0/0, as NumPy's mean of nothing), the sum 0
  const D none = fusor::zeros<double, B>({0, 3});
  const I64 nl = fusor::zeros<std::int64_t, B>({0});
  CHECK(std::isnan(nn::cross_entropy(none, nl)));
  CHECK(nn::cross_entropy(none, nl, nn::reduction::sum) == 0.0);
}

TEST_CASE("losses reject bad input with typed errors that name what was expected") {
  const D z = dvals(6, -1, 1, 2, extents{2, 3});
  const I64 ok = test::on<B>(std::vector<std::int64_t>{0, 2});
  const I64 high = test::on<B>(std::vector<std::int64_t>{0, 3});
  const I64 negative = test::on<B>(std::vector<std::int64_t>{-1, 0});
  const I64 three = test::on<B>(std::vector<std::int64_t>{0, 1, 2});
  CHECK_THROWS_WITH_AS(nn::cross_entropy(z, high), doctest::Contains("class indices in [0, 3), got labels from 0 to 3"),
                       fusor::index_error);
  CHECK_THROWS_AS(nn::cross_entropy(z, negative), fusor::index_error);
  CHECK_THROWS_WITH_AS(nn::cross_entropy(z, three), doctest::Contains("(2,), got (3,)"), fusor::shape_error);
  const D scalar = fusor::zeros<double, B>({});
  const I64 no_labels = fusor::zeros<std::int64_t, B>({});
  CHECK_THROWS_AS(nn::cross_entropy(scalar, no_labels), fusor::shape_error);
  const D q = dvals(3, 0, 1, 1);
  CHECK_THROWS_AS(nn::cross_entropy(z, q), fusor::shape_error);
  CHECK_THROWS_WITH_AS(nn::mse_loss(z, q), doctest::Contains("got input (2, 3) and target (3,)"), fusor::shape_error);
  CHECK_THROWS_AS(nn::l1_loss(z, q), fusor::shape_error);
  const D p = test::on<B>(std::vector<double>{0.5, 1.5});
  const D y = test::on<B>(std::vector<double>{1, 0});
  CHECK_THROWS_WITH_AS(nn::binary_cross_entropy(p, y), doctest::Contains("probabilities in [0, 1]"), fusor::value_error);
  CHECK_THROWS_AS(nn::binary_cross_entropy_with_logits(p, q), fusor::shape_error);
  CHECK(nn::cross_entropy(z, ok) > 0);
}

// ---- functional layers ----------------------------------------------------------------------

TEST_CASE("functional linear and layer_norm equal plain loops; gradients by central differences") {
  const index_t n = 5, in = 4, out = 3;
  const D x = dvals(n * in, -1, 1, 1, extents{n, in}), w = dvals(in * out, -1, 1, 2, extents{in, out});
  const D b = dvals(out, -1, 1, 3);
  const D y = F::linear(x, w, b), y0 = F::linear(x, w);
  const auto xs = hv(x), ws = hv(w), bs = hv(b), ys = hv(y), y0s = hv(y0);
  for (index_t i = 0; i < n; ++i)
    for (index_t j = 0; j < out; ++j) {
      ref_t s = 0;
      for (index_t k = 0; k < in; ++k) s += ref_t(xs[i * in + k]) * ws[k * out + j];
      CHECK(y0s[i * out + j] == doctest::Approx(double(s)).epsilon(1e-14));
      CHECK(ys[i * out + j] == doctest::Approx(double(s + bs[j])).epsilon(1e-14));
    }
  const D c = dvals(n * out, -1, 1, 4, extents{n, out});
  check_reverse("linear x", [&](const auto& t) { return sum(F::linear(t, w, b) * c); }, x);
  check_reverse("linear w", [&](const auto& t) { return sum(F::linear(x, t, b) * c); }, w);
  check_reverse("linear b", [&](const auto& t) { return sum(F::linear(x, w, t) * c); }, b);

  const index_t f = 7;
  const D h = dvals(n * f, -3, 3, 6, extents{n, f}), gamma = dvals(f, 0.5, 1.5, 7), beta = dvals(f, -1, 1, 8);
  const auto hs = hv(h), gs = hv(gamma), bts = hv(beta), ln = hv(F::layer_norm(h, gamma, beta));
  for (index_t i = 0; i < n; ++i) {
    ref_t m = 0, v = 0;
    for (index_t k = 0; k < f; ++k) m += hs[i * f + k];
    m /= f;
    for (index_t k = 0; k < f; ++k) v += (hs[i * f + k] - m) * (hs[i * f + k] - m);
    v /= f;
    for (index_t k = 0; k < f; ++k) {
      const ref_t want = (hs[i * f + k] - m) / std::sqrt(v + ref_t(1e-5)) * gs[k] + bts[k];
      CHECK(ln[i * f + k] == doctest::Approx(double(want)).epsilon(1e-13));
    }
  }
  const D c2 = dvals(n * f, -1, 1, 9, extents{n, f});
  check_reverse("layer_norm x", [&](const auto& t) { return sum(F::layer_norm(t, gamma, beta) * c2); }, h);
  check_reverse("layer_norm weight", [&](const auto& t) { return sum(F::layer_norm(h, t, beta) * c2); }, gamma);
  check_reverse("layer_norm bias", [&](const auto& t) { return sum(F::layer_norm(h, gamma, t) * c2); }, beta);
  check_reverse("layer_norm, no affine", [&](const auto& t) { return sum(F::layer_norm(t) * c2); }, h);
  CHECK_THROWS_AS(F::layer_norm(h, beta(fusor::range(0, 3)), beta), fusor::shape_error);
  CHECK_THROWS_AS(F::layer_norm(h, 0.0), fusor::value_error);
}

TEST_CASE("layer_norm of variables is one node with the closed-form adjoint: its gradients equal the composed statistics") {
  // the reference: the same normalisation composed from ad's mean and elementwise operations (the
  // path dual-number variables still take), differentiated through the generic adjoints
  const double eps = 1e-5;
  auto apart = [](const D& got, const D& want) {
    const auto w = hv(want);
    return rel_diff(hv(got), std::vector<ref_t>(w.begin(), w.end()));
  };
  auto composed = [eps](const auto& x, const auto& w, const auto& b) {
    auto c = ad::eval(x - ad::mean(x, -1, true));
    auto inv = ad::eval(1.0 / sqrt(ad::mean(square(c), -1, true) + eps));
    return c * inv * w + b;
  };
  for (const extents& shape : {extents{3, 1}, extents{2, 15}, extents{4, 16}, extents{3, 17}, extents{2, 3, 5}, extents{0, 6}}) {
    CAPTURE(shape);
    const index_t f = shape[shape.size() - 1];
    const D x = dvals(shape.numel(), -3, 3, 21, shape), w = dvals(f, 0.5, 1.5, 22), b = dvals(f, -1, 1, 23);
    const D c = dvals(shape.numel(), -1, 1, 24, shape);
    const auto fused = ad::value_and_grad(
        [&](const auto& xv, const auto& wv, const auto& bv) { return sum(F::layer_norm(xv, wv, bv, eps) * c); },
        ad::argnums<0, 1, 2>)(x, w, b);
    const auto want = ad::value_and_grad(
        [&](const auto& xv, const auto& wv, const auto& bv) { return sum(composed(xv, wv, bv) * c); },
        ad::argnums<0, 1, 2>)(x, w, b);
    CHECK(std::get<0>(fused) == doctest::Approx(std::get<0>(want)).epsilon(1e-12));
    const auto& [gx, gw, gb] = std::get<1>(fused);
    const auto& [rx, rw, rb] = std::get<1>(want);
    CHECK(apart(gx, rx) < 1e-12);
    CHECK(apart(gw, rw) < 1e-12);
    CHECK(apart(gb, rb) < 1e-12);
    // without the affine, and with constant weight and bias (the node's operands need no gradient)
    const D g0 = ad::grad([&](const auto& xv) { return sum(F::layer_norm(xv, eps) * c); })(x);
    const D r0 = ad::grad([&](const auto& xv) {
      auto cc = ad::eval(xv - ad::mean(xv, -1, true));
      return sum(cc / sqrt(ad::mean(square(cc), -1, true) + eps) * c);
    })(x);
    CHECK(apart(g0, r0) < 1e-12);
    const D gc = ad::grad([&](const auto& xv) { return sum(F::layer_norm(xv, w, b, eps) * c); })(x);
    CHECK(apart(gc, rx) < 1e-12);
  }
  // a width of 1 normalises to 0: the output is the bias and x gets no gradient
  const D x1 = dvals(3, -1, 1, 25, extents{3, 1});
  const D g1 = ad::grad([](const auto& xv) { return sum(F::layer_norm(xv) * 2.0); })(x1);
  for (double v : hv(g1)) CHECK(v == 0.0);
  CHECK_THROWS_AS(ad::grad([](const auto& xv) { return sum(F::layer_norm(xv, -1.0)); })(x1), fusor::value_error);
}

TEST_CASE("adjoints without a pass of their own: a bias under an activation, either side of a difference, a residual") {
  // f = Σ c·z·tanh(z) with z = A ± b (z read twice, as GELU(x·w + b) reads it), + Σ d·(A + r): b's
  // adjoint is read back from A's (± its row sums) when the tanh node's backward pass runs first
  // (order 0), and takes its own pass when A's adjoint already holds the residual's (order 1); r's
  // is the seed. Against the derivative in closed form, in double.
  const index_t n = 5, m = 17;
  const D a = dvals(n * m, -2, 2, 31, extents{n, m}), b = dvals(m, -1, 1, 32), r = dvals(n * m, -1, 1, 33, extents{n, m});
  const D c = dvals(n * m, -1, 1, 34, extents{n, m}), d = dvals(n * m, -1, 1, 35, extents{n, m});
  const auto as = hv(a), bs = hv(b), cs = hv(c), ds = hv(d);
  for (const double sign : {1.0, -1.0})
    for (const int order : {0, 1}) {
      CAPTURE(sign);
      CAPTURE(order);
      const auto [ga, gb, gr] = ad::grad(
          [&](const auto& av, const auto& bv, const auto& rv) {
            auto activation = [&] {
              if (sign > 0) return ad::eval(tanh(av + bv) * (av + bv) * c);
              return ad::eval(tanh(av - bv) * (av - bv) * c);
            };
            auto residual = [&] { return sum((av + rv) * d); };
            if (order == 0) {
              auto first = residual();
              return first + sum(activation());
            }
            auto first = sum(activation());
            return residual() + first;
          },
          ad::argnums<0, 1, 2>)(a, b, r);
      const auto gas = hv(ga), gbs = hv(gb), grs = hv(gr);
      for (index_t j = 0; j < m; ++j) {
        ref_t col = 0;
        for (index_t i = 0; i < n; ++i) {
          const index_t k = i * m + j;
          const ref_t z = ref_t(as[k]) + sign * bs[j], th = std::tanh(z);
          const ref_t dz = cs[k] * ((1 - th * th) * z + th);
          col += dz;
          CHECK(gas[k] == doctest::Approx(double(dz + ds[k])).epsilon(1e-13));
          CHECK(grs[k] == ds[k]);
        }
        CHECK(gbs[j] == doctest::Approx(double(sign * col)).epsilon(1e-12));
      }
    }
  // the same variable on both sides is no pair: tanh(A + A) differentiates to 2(1 - tanh²)
  const D g2 = ad::grad([&](const auto& av) { return sum(tanh(av + av) * c); })(a);
  const auto g2s = hv(g2);
  for (index_t k = 0; k < n * m; ++k) {
    const ref_t th = std::tanh(2 * ref_t(as[k]));
    CHECK(g2s[k] == doctest::Approx(double(2 * cs[k] * (1 - th * th))).epsilon(1e-13));
  }
}

TEST_CASE("dropout: a seeded Philox mask, the same on every backend, scaled by 1/(1 - p); its gradient is the mask") {
  const index_t n = 20000;
  const double p = 0.3;
  const D x = fusor::ones<double, B>({n});
  fusor::random::generator rng(5);
  const auto y = hv(F::dropout(x, p, rng));
  CHECK(rng.stream() == 1);
  index_t zeros = 0;
  for (double v : y) {
    if (v == 0) ++zeros;
    else CHECK(v == doctest::Approx(1 / (1 - p)).epsilon(1e-15));
  }
  CHECK(std::abs(double(zeros) / n - p) < 0.02);  // 4.4 standard deviations
  // the same seed gives the same mask, on the cpu backend too
  fusor::random::generator again(5), on_cpu(5);
  CHECK(hv(F::dropout(x, p, again)) == y);
  CHECK(test::host_values(F::dropout(fusor::ones<double, fusor::cpu>({n}), p, on_cpu)) == y);
  // the gradient of Σ dropout(t)·w is the mask's scale times w, from the same draw
  const D w = dvals(n, -1, 1, 3);
  fusor::random::generator for_grad(5);
  const auto g = hv(ad::grad([&](const auto& t) { return sum(F::dropout(t, p, for_grad) * w); })(x));
  const auto ws = hv(w);
  for (index_t i = 0; i < n; i += 97) CHECK(g[i] == doctest::Approx(y[i] * ws[i]).epsilon(1e-15));
  // evaluation mode and p = 0 are the identity and draw nothing; p = 1 zeroes everything
  fusor::random::generator idle(5);
  CHECK(hv(F::dropout(x, p, idle, false)) == hv(x));
  CHECK(hv(F::dropout(x, 0.0, idle)) == hv(x));
  CHECK(idle.stream() == 0);
  const auto all = hv(F::dropout(x, 1.0, idle));
  CHECK(std::all_of(all.begin(), all.end(), [](double v) { return v == 0; }));
  CHECK_THROWS_WITH_AS(F::dropout(x, 1.5, idle), doctest::Contains("0 <= p <= 1, got p = 1.5"), fusor::value_error);
  CHECK_THROWS_AS(nn::dropout(-0.1), fusor::value_error);
}

// ---- initialisers ----------------------------------------------------------------------------

TEST_CASE("initialisers draw their published distributions from a seed, identically for a seed") {
  const index_t fan_in = 300, fan_out = 200;
  const extents shape{fan_in, fan_out};
  auto stats = [&](const nn::initializer& how, std::uint64_t seed) {
    fusor::random::generator rng(seed);
    const auto v = hv(nn::initialize<double, B>(how, shape, fan_in, fan_out, rng));
    ref_t m = 0, s = 0, lo = v[0], hi = v[0];
    for (double x : v) {
      m += x;
      lo = std::min<ref_t>(lo, x);
      hi = std::max<ref_t>(hi, x);
    }
    m /= ref_t(v.size());
    for (double x : v) s += (x - m) * (x - m);
    return std::make_tuple(double(m), double(std::sqrt(s / ref_t(v.size()))), double(lo), double(hi), v);
  };
  const double gain = std::sqrt(2.0);
  {  // U(±a) has standard deviation a/√3; 60 000 draws: the moments within 2%
    const double a = std::sqrt(6.0 / (fan_in + fan_out));
    const auto [m, sd, lo, hi, v] = stats(nn::init::xavier_uniform(), 1);
    CHECK(std::abs(m) < 0.02 * a);
    CHECK(sd == doctest::Approx(a / std::sqrt(3.0)).epsilon(0.02));
    CHECK(lo >= -a);
    CHECK(hi < a);
    CHECK(hi > 0.99 * a);
  }
  {
    const auto [m, sd, lo, hi, v] = stats(nn::init::xavier_normal(), 2);
    CHECK(sd == doctest::Approx(std::sqrt(2.0 / (fan_in + fan_out))).epsilon(0.02));
  }
  {
    const double a = gain * std::sqrt(3.0 / fan_in);
    const auto [m, sd, lo, hi, v] = stats(nn::init::kaiming_uniform(), 3);
    CHECK(sd == doctest::Approx(a / std::sqrt(3.0)).epsilon(0.02));
    CHECK(lo >= -a);
    CHECK(hi < a);
  }
  {
    const auto [m, sd, lo, hi, v] = stats(nn::init::kaiming_normal(), 4);
    CHECK(sd == doctest::Approx(gain / std::sqrt(double(fan_in))).epsilon(0.02));
  }
  {
    const double a = 1 / std::sqrt(double(fan_in));
    const auto [m, sd, lo, hi, v] = stats(nn::init::torch_linear(), 5);
    CHECK(lo >= -a);
    CHECK(hi < a);
    CHECK(hi > 0.99 * a);
  }
  {
    const auto [m, sd, lo, hi, v] = stats(nn::init::normal(2.0, 0.5), 6);
    CHECK(m == doctest::Approx(2.0).epsilon(0.01));
    CHECK(sd == doctest::Approx(0.5).epsilon(0.02));
  }
  {
    const auto [m, sd, lo, hi, v] = stats(nn::init::uniform(-3, -1), 7);
    CHECK(lo >= -3);
    CHECK(hi < -1);
  }
  {
    const auto [m, sd, lo, hi, v] = stats(nn::init::constant(0.25), 8);
    CHECK(lo == 0.25);
    CHECK(hi == 0.25);
  }
  CHECK(std::get<4>(stats(nn::init::xavier_normal(), 9)) == std::get<4>(stats(nn::init::xavier_normal(), 9)));
  CHECK(std::get<4>(stats(nn::init::xavier_normal(), 9)) != std::get<4>(stats(nn::init::xavier_normal(), 10)));
  fusor::random::generator rng(1);
  CHECK_THROWS_WITH_AS((nn::initialize<double, B>(nn::init::kaiming_normal(), extents{3}, 0, 3, rng)),
                       doctest::Contains("needs fan_in > 0, got 0"), fusor::value_error);
}

// ---- models ----------------------------------------------------------------------------------

/// The MLP x·W0 + b0 -> relu -> ·W2 + b2 by hand on host values.
inline std::vector<ref_t> mlp_by_hand(const params_t& p, const std::vector<double>& x, index_t n, index_t in,
                                      index_t hidden, index_t out) {
  const auto w0 = hv(p.at("0.weight")), b0 = hv(p.at("0.bias")), w2 = hv(p.at("2.weight")), b2 = hv(p.at("2.bias"));
  std::vector<ref_t> y(static_cast<std::size_t>(n * out));
  for (index_t i = 0; i < n; ++i) {
    std::vector<ref_t> h(static_cast<std::size_t>(hidden));
    for (index_t j = 0; j < hidden; ++j) {
      ref_t s = b0[j];
      for (index_t k = 0; k < in; ++k) s += ref_t(x[i * in + k]) * w0[k * hidden + j];
      h[j] = std::max<ref_t>(s, 0);
    }
    for (index_t j = 0; j < out; ++j) {
      ref_t s = b2[j];
      for (index_t k = 0; k < hidden; ++k) s += h[k] * w2[k * out + j];
      y[i * out + j] = s;
    }
  }
  return y;
}

TEST_CASE("sequential: named parameters, outputs by hand, gradients by central differences, Mithril's evaluate") {
  const index_t n = 6, in = 4, hidden = 5, out = 3;
  const auto model = nn::sequential<double, B>(nn::linear(in, hidden), nn::relu, nn::linear(hidden, out));
  CHECK(model.input_features() == in);
  CHECK(model.output_features() == out);
  std::vector<std::string> names;
  for (const auto& s : model.parameter_specs()) names.push_back(s.name + " " + fusor::to_string(s.shape));
  CHECK((names == std::vector<std::string>{"0.weight (4, 5)", "0.bias (5,)", "2.weight (5, 3)", "2.bias (3,)"}));
  params_t params = model.init(7);
  CHECK(hv(model.init(7).at("2.weight")) == hv(params.at("2.weight")));
  CHECK(hv(model.init(8).at("2.weight")) != hv(params.at("2.weight")));

  const D x = dvals(n * in, -2, 2, 3, extents{n, in});
  const D y = model(params, x);
  CHECK(y.shape() == extents{n, out});
  CHECK(rel_diff(hv(y), mlp_by_hand(params, hv(x), n, in, hidden, out)) <= 1e-14);
  CHECK(hv(model.evaluate(params, x)) == hv(y));

  std::vector<std::int64_t> lv{0, 2, 1, 1, 0, 2};
  const I64 labels = test::on<B>(lv);
  auto loss = [&](const auto& p) { return nn::cross_entropy(model(p, x), labels); };
  const auto [value, grads] = ad::value_and_grad(loss)(params);
  CHECK(value == doctest::Approx(nn::cross_entropy(y, labels)).epsilon(1e-15));
  for (const auto& s : model.parameter_specs()) {
    INFO(s.name);
    const auto num = numeric_param_grad([&](const params_t& p) { return double(loss(p)); }, params, s.name);
    const auto got = hv(grads.at(s.name));
    for (std::size_t i = 0; i < num.size(); ++i) CHECK(got[i] == doctest::Approx(num[i]).epsilon(1e-6).scale(1e-6));
  }

  // evaluate(params, inputs, output_gradients): the vector-Jacobian product of the outputs
  const D og = dvals(n * out, -1, 1, 12, extents{n, out});
  const auto [outputs, vjp] = model.evaluate(params, x, og);
  CHECK(hv(outputs) == hv(y));
  const auto direct = ad::grad([&](const auto& p) { return sum(model(p, x) * og); })(params);
  for (const auto& s : model.parameter_specs()) {
    CHECK(hv(vjp.at(s.name)) == hv(direct.at(s.name)));
    // and against an independent reference: central differences of Σ model(p, x)·og
    INFO(s.name);
    const auto num = numeric_param_grad([&](const params_t& p) { return double(sum(model(p, x) * og)); }, params, s.name);
    const auto got = hv(vjp.at(s.name));
    for (std::size_t i = 0; i < num.size(); ++i) CHECK(got[i] == doctest::Approx(num[i]).epsilon(1e-6).scale(1e-6));
  }
  CHECK_THROWS_WITH_AS(model.evaluate(params, x, dvals(3, 0, 1, 1)), doctest::Contains("the outputs' shape (6, 3)"),
                       fusor::shape_error);
}

TEST_CASE("sequential checks layers when built and parameters and inputs when called") {
  using L1 = nn::linear<true>;
  CHECK_THROWS_WITH_AS((nn::sequential<double, B>(L1(4, 8), nn::relu, L1(5, 2))),
                       doctest::Contains("layer 2 (linear) does not fit the layer before it: fusor: linear expects "
                                         "inputs with 5 features (the last axis), but gets 8"),
                       fusor::shape_error);
  CHECK_THROWS_AS((nn::sequential<double, B>(nn::layer_norm(4), L1(3, 2))), fusor::shape_error);
  CHECK_THROWS_AS(L1(0, 3), fusor::value_error);
  const auto model = nn::sequential<double, B>(L1(4, 3), nn::tanh);
  params_t p = model.init(1);
  const D x = dvals(8, -1, 1, 1, extents{2, 4});
  CHECK_THROWS_WITH_AS(model(p, dvals(6, -1, 1, 1, extents{2, 3})),
                       doctest::Contains("expects inputs with 4 features (the last axis), got shape (2, 3)"),
                       fusor::shape_error);
  params_t wrong = model.init(1);
  wrong.at("0.bias") = fusor::zeros<double, B>({4});
  CHECK_THROWS_WITH_AS(model(wrong, x), doctest::Contains("\"0.bias\" has shape (4,), the model expects (3,)"),
                       fusor::shape_error);
  wrong.erase("0.bias");
  CHECK_THROWS_WITH_AS(model(wrong, x), doctest::Contains("no \"0.bias\" (expected shape (3,)"), fusor::value_error);
  // the same missing name while differentiating: the variables' map is checked the same way
  CHECK_THROWS_AS(ad::grad([&](const auto& q) { return sum(model(q, x)); })(wrong), fusor::value_error);
}

TEST_CASE("a model of an embedding, layer_norm, gelu, dropout and a bias-free linear: gradients and modes") {
  auto model = nn::sequential<double, B>(nn::embedding(6, 4), nn::layer_norm(4), nn::gelu, nn::dropout(0.25, 9),
                                         nn::linear(4, 3, nn::no_bias));
  CHECK(model.input_features() == nn::any_features);
  std::vector<std::string> names;
  for (const auto& s : model.parameter_specs()) names.push_back(s.name);
  CHECK((names == std::vector<std::string>{"0.weight", "1.weight", "1.bias", "4.weight"}));
  params_t params = model.init(3);
  params.at("1.weight") = dvals(4, 0.5, 1.5, 2);  // not the ones the initialiser gives: a real test of its gradient
  params.at("1.bias") = dvals(4, -0.5, 0.5, 3);
  const I64 idx = test::on<B>(std::vector<std::int64_t>{1, 4, 1, 0, 5}, extents{5});
  const I64 labels = test::on<B>(std::vector<std::int64_t>{2, 0, 1, 1, 2});
  model.eval();  // deterministic: the gradients are checked against central differences
  CHECK_FALSE(model.training());
  auto loss = [&](const auto& p) { return nn::cross_entropy(model(p, idx), labels); };
  const auto grads = ad::grad(loss)(params);
  for (const auto& s : model.parameter_specs()) {
    INFO(s.name);
    const auto num = numeric_param_grad([&](const params_t& p) { return double(loss(p)); }, params, s.name);
    const auto got = hv(grads.at(s.name));
    for (std::size_t i = 0; i < num.size(); ++i) CHECK(got[i] == doctest::Approx(num[i]).epsilon(1e-6).scale(1e-6));
  }
  // rows 2 and 3 of the embedding are never read: zero gradient; row 1 is read twice
  const auto ge = hv(grads.at("0.weight"));
  for (int k = 0; k < 4; ++k) {
    CHECK(ge[2 * 4 + k] == 0.0);
    CHECK(ge[3 * 4 + k] == 0.0);
  }
  // an index outside the table is an error, not a wrapped-around row
  const I64 negative = test::on<B>(std::vector<std::int64_t>{1, -1});
  CHECK_THROWS_WITH_AS(model(params, negative), doctest::Contains("indices in [0, 6), got indices from -1 to 1"),
                       fusor::index_error);
  const I64 past = test::on<B>(std::vector<std::int64_t>{6});
  CHECK_THROWS_AS(model(params, past), fusor::index_error);
  // training mode: dropout draws a new mask per call, the evaluation output stays put
  const D e1 = model(params, idx), e2 = model(params, idx);
  CHECK(hv(e1) == hv(e2));
  model.train();
  const D t1 = model(params, idx), t2 = model(params, idx);
  CHECK(hv(t1) != hv(t2));
  CHECK(hv(t1) != hv(e1));
}

TEST_CASE("Mithril's linear regression: a linear layer fitted by Adam (cosine schedule) recovers the least-squares weights") {
  const index_t n = 100, f = 5;
  const std::vector<double> w_true{1, -0.5, 0.25, 0.1, 0.7};
  fusor::random::generator rng(0);
  const auto xs = test::host_values(fusor::random::normal<double, fusor::cpu>(rng, {n, f}));
  const auto noise = test::host_values(fusor::random::normal<double, fusor::cpu>(rng, {n}, 0.0, 0.05));
  std::vector<double> ys(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i) {
    double s = noise[i];
    for (index_t k = 0; k < f; ++k) s += xs[i * f + k] * w_true[k];
    ys[i] = s;
  }
  const D X = test::on<B>(xs, extents{n, f}), Y = test::on<B>(ys, extents{n, 1});
  const auto model = nn::sequential<double, B>(nn::linear(f, 1));
  params_t params = model.init(1);
  ad::optim::adam<double, B> opt({.lr = 0.05});
  opt.set_schedule(ad::optim::cosine_lr(0.05, 1000));  // annealed to 0: it settles on the minimum
  auto vg = ad::value_and_grad([&](const auto& p) { return nn::mse_loss(model(p, X), Y); });
  for (int step = 0; step < 1000; ++step) {
    auto [value, g] = vg(params);
    opt.step(params, g);
  }
  // the least-squares solution of [X 1]·[w b] = y by the normal equations, by hand
  const int m = int(f) + 1;
  std::vector<std::vector<ref_t>> A(m, std::vector<ref_t>(m + 1, 0));
  for (index_t i = 0; i < n; ++i)
    for (int r = 0; r < m; ++r) {
      const ref_t xr = r < f ? ref_t(xs[i * f + r]) : 1;
      for (int c = 0; c < m; ++c) A[r][c] += xr * (c < f ? ref_t(xs[i * f + c]) : 1);
      A[r][m] += xr * ys[i];
    }
  for (int c = 0; c < m; ++c)
    for (int r = 0; r < m; ++r)
      if (r != c) {
        const ref_t k = A[r][c] / A[c][c];
        for (int j = c; j <= m; ++j) A[r][j] -= k * A[c][j];
      }
  const auto w = hv(params.at("0.weight"));
  for (index_t k = 0; k < f; ++k) {
    CHECK(w[k] == doctest::Approx(double(A[k][m] / A[k][k])).epsilon(1e-7).scale(1e-7));
    CHECK(std::abs(w[k] - w_true[k]) < 0.03);  // within the noise
  }
  CHECK(hv(params.at("0.bias"))[0] == doctest::Approx(double(A[f][m] / A[f][f])).epsilon(1e-7).scale(1e-7));
}

TEST_CASE("float32 models and losses agree with float64 within float rounding") {
  using Fa = fusor::array<float, B>;
  const index_t n = 9, in = 6, out = 4;
  const auto m64 = nn::sequential<double, B>(nn::linear(in, 8), nn::gelu, nn::layer_norm(8), nn::linear(8, out));
  const auto m32 = nn::sequential<float, B>(nn::linear(in, 8), nn::gelu, nn::layer_norm(8), nn::linear(8, out));
  params_t p64 = m64.init(5);
  nn::parameters<float, B> p32;
  for (const auto& [name, a] : p64) p32.emplace(name, Fa(fusor::cast<float>(a)));
  const D x = dvals(n * in, -2, 2, 4, extents{n, in});
  const Fa x32 = fusor::cast<float>(x);
  const I64 labels = test::on<B>(std::vector<std::int64_t>{0, 1, 2, 3, 0, 1, 2, 3, 0});
  const D z64 = m64(p64, x);
  const Fa z32 = m32(p32, x32);
  const auto a = test::host_values(z32);
  const auto b = hv(z64);
  // relative to the outputs' scale (about 1): a logit near zero is a difference of O(1) terms,
  // whose float rounding depends on the summation order (cuBLAS's differs from OpenBLAS's)
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i] == doctest::Approx(b[i]).epsilon(1e-5).scale(0.1));
  const D t64 = dvals(n * out, 0.05, 0.95, 6, extents{n, out});
  const Fa t32 = fusor::cast<float>(t64), s32 = fusor::sigmoid(z32);
  const D s64 = fusor::sigmoid(z64);
  CHECK(nn::mse_loss(z32, t32) == doctest::Approx(nn::mse_loss(z64, t64)).epsilon(1e-5));
  CHECK(nn::l1_loss(z32, t32, nn::reduction::sum) == doctest::Approx(nn::l1_loss(z64, t64, nn::reduction::sum)).epsilon(1e-5));
  CHECK(nn::binary_cross_entropy(s32, t32) == doctest::Approx(nn::binary_cross_entropy(s64, t64)).epsilon(1e-5));
  CHECK(nn::binary_cross_entropy_with_logits(z32, t32) ==
        doctest::Approx(nn::binary_cross_entropy_with_logits(z64, t64)).epsilon(1e-5));
  CHECK(nn::cross_entropy(z32, labels) == doctest::Approx(nn::cross_entropy(z64, labels)).epsilon(1e-5));
  const auto g64 = ad::grad([&](const auto& p) { return nn::cross_entropy(m64(p, x), labels); })(p64);
  const auto g32 = ad::grad([&](const auto& p) { return nn::cross_entropy(m32(p, x32), labels); })(p32);
  for (const auto& s : m64.parameter_specs()) {
    INFO(s.name);
    const auto ga = test::host_values(g32.at(s.name));
    const auto gb = hv(g64.at(s.name));
    for (std::size_t i = 0; i < ga.size(); ++i) CHECK(ga[i] == doctest::Approx(gb[i]).epsilon(1e-4).scale(1e-4));
  }
}

// ---- training helpers ------------------------------------------------------------------------

TEST_CASE("shuffled_batches: every row once per epoch, in a seeded order, the same on every backend") {
  for (index_t n : std::vector<index_t>{0, 1, 7, 64, 1001}) {
    for (index_t batch : std::vector<index_t>{1, 8, 64, 2000}) {
      INFO("n ", n, " batch ", batch);
      fusor::random::generator rng(3), same(3), on_cpu(3);
      const auto batches = nn::shuffled_batches<B>(n, batch, rng);
      const auto again = nn::shuffled_batches<B>(n, batch, same);
      const auto cpu_batches = nn::shuffled_batches<fusor::cpu>(n, batch, on_cpu);
      CHECK(batches.size() == std::size_t((n + batch - 1) / batch));
      std::vector<int> seen(std::size_t(n), 0);
      for (std::size_t k = 0; k < batches.size(); ++k) {
        const auto rows = test::host_values(batches[k]);
        CHECK(rows == test::host_values(again[k]));
        CHECK(rows == test::host_values(cpu_batches[k]));
        CHECK(index_t(rows.size()) == (k + 1 < batches.size() ? batch : n - batch * index_t(k)));
        for (auto r : rows) ++seen[std::size_t(r)];
      }
      CHECK(std::all_of(seen.begin(), seen.end(), [](int c) { return c == 1; }));
      const auto dropped = nn::shuffled_batches<B>(n, batch, rng, true);
      CHECK(dropped.size() == std::size_t(n / batch));
    }
  }
  fusor::random::generator rng(1);
  const auto e1 = nn::shuffled_batches<B>(50, 50, rng), e2 = nn::shuffled_batches<B>(50, 50, rng);
  CHECK(test::host_values(e1[0]) != test::host_values(e2[0]));  // each epoch takes the next stream
  CHECK_THROWS_WITH_AS(nn::shuffled_batches<B>(5, 0, rng), doctest::Contains("batch_size >= 1, got 0"), fusor::value_error);
  CHECK_THROWS_AS(nn::shuffled_batches<B>(-1, 2, rng), fusor::value_error);
}

TEST_CASE("two dropout layers of one model draw different masks, repeatably") {
  auto model = nn::sequential<double, B>(nn::dropout(0.5), nn::dropout(0.5, 0));
  const D x = fusor::ones<double, B>({1000});
  const params_t none;
  // the two layers' masks multiply: with independent masks about a quarter survive, with one
  // shared mask a half
  const auto y = hv(model(none, x));
  const auto kept = std::count_if(y.begin(), y.end(), [](double v) { return v != 0; });
  CHECK(kept > 180);
  CHECK(kept < 320);
  auto again = nn::sequential<double, B>(nn::dropout(0.5), nn::dropout(0.5, 0));
  CHECK(hv(again(none, x)) == y);
}

TEST_CASE("accuracy counts the rows whose first largest logit is at the label") {
  const D z = test::on<B>(std::vector<double>{1, 3, 3, 0, 0, -1, 2, 2, 2, 5, 4, 4}, extents{4, 3});
  const auto lab = test::on<B>(std::vector<std::uint8_t>{1, 0, 1, 0});  // ties go to the first
  CHECK(nn::accuracy(z, lab) == 0.75);  // rows 0, 1 and 3; row 2 is all ties: class 0
  const I64 wrong = test::on<B>(std::vector<std::int64_t>{1, 0, 1});
  CHECK_THROWS_WITH_AS(nn::accuracy(z, wrong), doctest::Contains("(4,), got (3,)"), fusor::shape_error);
  CHECK(nn::accuracy(fusor::zeros<double, B>({0, 3}), fusor::zeros<std::int64_t, B>({0})) == 0.0);
  // on variables (inside a differentiated function): read as constants
  double seen = -1;
  (void)ad::grad([&](const auto& t) {
    seen = nn::accuracy(t, lab);
    return sum(t);
  })(z);
  CHECK(seen == 0.75);
}

TEST_CASE("early_stopping waits `patience` epochs without an improvement beyond min_delta") {
  nn::early_stopping acc{.patience = 2, .min_delta = 0.01};
  CHECK(acc.update(0.5));
  CHECK(acc.update(0.6));
  CHECK_FALSE(acc.update(0.605));  // not by more than min_delta
  CHECK_FALSE(acc.stop());
  CHECK_FALSE(acc.update(std::nan("")));
  CHECK(acc.stop());
  CHECK(acc.best == 0.6);
  CHECK(acc.best_epoch == 1);
  nn::early_stopping loss{.patience = 1, .direction = nn::early_stopping::goal::minimize};
  CHECK(loss.update(2.0));
  CHECK(loss.update(1.0));
  CHECK_FALSE(loss.update(1.5));
  CHECK(loss.stop());
  nn::early_stopping bad{.patience = 0};
  CHECK_THROWS_AS(bad.update(1.0), fusor::value_error);
  CHECK(nn::progress_line(3, 20, 0.1234, 0.9725, 0.9611, 52100, 1.0) ==
        "epoch 3/20  loss 0.1234  accuracy 97.25%  val 96.11%  52.1k samples/s");
  CHECK(nn::progress_line(1, 2, 1.5, std::nan(""), std::nan(""), 3e6, 2.0) == "epoch 1/2  loss 1.5000  1.5M samples/s");
  const std::string huge = nn::progress_line(1, 2, 1e200, 0.5, 0.5, 10, 1.0);  // 200 digits: no overrun
  CHECK(huge.size() > 200);
  CHECK(huge.find("  accuracy 50.00%  val 50.00%  10 samples/s") != std::string::npos);
}

TEST_CASE("a checkpoint of a model's parameters and Adam's state resumes training on this backend bit for bit") {
  const test::temp_dir dir("nn_checkpoint");
  const auto model = nn::sequential<double, B>(nn::linear(3, 4), nn::tanh, nn::linear(4, 2));
  const D x = dvals(15, -1, 1, 5, extents{5, 3});
  const I64 labels = test::on<B>(std::vector<std::int64_t>{0, 1, 1, 0, 1});
  auto vg = ad::value_and_grad([&](const auto& p) { return nn::cross_entropy(model(p, x), labels); });
  params_t p = model.init(1);
  ad::optim::adam<double, B> opt({.lr = 0.05});
  for (int k = 0; k < 3; ++k) {
    auto [value, g] = vg(p);
    opt.step(p, g);
  }
  const std::filesystem::path path = dir.path / "ck.npz";
  nn::save_parameters(path, p, opt, fusor::npz_compression::deflated);
  params_t q = model.init(2);
  ad::optim::adam<double, B> resumed({.lr = 0.05});
  nn::load_parameters(path, q, resumed);
  CHECK(resumed.steps() == 3);
  for (int k = 0; k < 2; ++k) {
    auto [v1, g1] = vg(p);
    opt.step(p, g1);
    auto [v2, g2] = vg(q);
    resumed.step(q, g2);
  }
  for (const auto& [name, a] : p) {
    INFO(name);
    CHECK(hv(q.at(name)) == hv(a));
  }
}

TEST_CASE("ad::compile replays a training step: the bits of value_and_grad, no allocation, a new recording when arrays change") {
  const auto model = nn::sequential<double, B>(nn::linear(5, 7), nn::relu, nn::linear(7, 3));
  D x = dvals(4 * 5, -1, 1, 21, extents{4, 5});
  const I64 labels = test::on<B>(std::vector<std::int64_t>{2, 0, 1, 2});
  auto f = [&](const auto& p, const auto& xs, const auto& ys, double weight) {
    return weight * nn::cross_entropy(model(p, xs), ys);
  };
  // with a mean along an axis and a whole sum: the other replayable kinds of step (and a weight
  // whose adjoint two nodes write: its matmul's product passes through a kept buffer)
  auto g = [&](const auto& p, const auto& xs, const auto& ys, double weight) {
    return nn::cross_entropy(model(p, xs), ys) + weight * sum(mean(square(p.at("0.weight")), 0));
  };
  // one call of a compiled function against value_and_grad of the same function: the loss and
  // every gradient bit for bit, and (where asked) no allocation
  auto replay_matches = [&](auto& compiled, auto& reference, bool no_allocation, const auto&... args) {
    fusor::instrument::allocations = 0;
    auto [value, grads] = compiled(args...);
    if (no_allocation) CHECK(fusor::instrument::allocations == 0);
    auto [value_ref, grads_ref] = reference(args...);
    CHECK(value == value_ref);
    for (const auto& [name, gr] : grads_ref) CHECK(hv(grads.at(name)) == hv(gr));
  };
  // on cuda a replay is one CUDA graph (captured by the first); cpu has none
  auto graph_replays = [](const auto& compiled) {
    INFO(compiled.why_not_graph());
    if constexpr (std::is_same_v<B, fusor::cuda>) CHECK(compiled.replays_as_graph());
    else CHECK_FALSE(compiled.replays_as_graph());
  };
  // three replays of loss(params, x, data) against value_and_grad, `next` written into data
  // before the third
  auto replays_with_new_data = [&](auto loss, const params_t& params, D& data, const D& next) {
    auto compiled = ad::compile(loss, params, x, data);
    auto reference_loss = ad::value_and_grad(loss);
    for (int k = 0; k < 3; ++k) {
      CAPTURE(k);
      if (k == 2) data.view() = next;
      replay_matches(compiled, reference_loss, true, params, x, data);
    }
    CHECK(compiled.replays() == 3);
    CHECK(compiled.recordings() == 1);
    graph_replays(compiled);
  };
  params_t p = model.init(5), q = model.init(5);
  auto reference = ad::value_and_grad(f);
  auto step = ad::compile(f, p, x, labels, 0.01);
  CHECK(step.recordings() == 1);
  CHECK(step.forward_steps() == 6);
  {
    params_t r = model.init(6);
    auto compiled_g = ad::compile(g, r, x, labels, 0.01);
    CHECK(compiled_g.forward_steps() == 8);
    auto reference_g = ad::value_and_grad(g);
    for (int k = 0; k < 2; ++k) replay_matches(compiled_g, reference_g, true, r, x, labels, 0.01);
    CHECK(compiled_g.replays() == 2);
    graph_replays(compiled_g);
  }
  {
    // a step on an explicit context runs under it: a replay allocates nothing, so it fits a budget
    // of one byte; a new recording allocates, and the budget refuses it before it starts
    fusor::context<B> tight;
    tight.memory_limit = 1;
    auto budgeted = ad::compile(f, p, x, labels, 0.01);  // (recorded here, outside the budget)
    CHECK(budgeted(tight, p, x, labels, 0.01).first == reference(p, x, labels, 0.01).first);
    CHECK(budgeted.replays() == 1);
    const params_t other = model.init(8);
    CHECK_THROWS_AS(budgeted(tight, other, x, labels, 0.01), fusor::memory_limit_error);
    CHECK(fusor::current_context<B>().memory_limit == 0);
  }
  {
    // softmax and log_softmax along either axis replay too, without allocating (their row maxima
    // and sums live in buffers the recording keeps)
    const D onehot = test::on<B>(std::vector<double>{0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 1}, extents{4, 3});
    auto h = [&](const auto& p, const auto& xs, const D& ys) {
      const auto z = model(p, xs);
      return -sum(ad::log_softmax(z) * ys) + sum(square(ad::softmax(z * 2.0, 0)));
    };
    params_t r = model.init(7);
    auto compiled_h = ad::compile(h, r, x, onehot);
    auto reference_h = ad::value_and_grad(h);
    for (int k = 0; k < 2; ++k) replay_matches(compiled_h, reference_h, true, r, x, onehot);
    CHECK(compiled_h.replays() == 2);
    CHECK(compiled_h.recordings() == 1);
    graph_replays(compiled_h);
  }
  {
    // binary cross-entropy of logits (its value kept on the device, as a whole sum's) replays too
    D targets = test::on<B>(std::vector<double>{0, 1, 1, 0, 1, 0, 0, 1, 1, 0, 1, 0}, extents{4, 3});
    auto b = [&](const auto& p, const auto& xs, const D& ys) {
      return nn::binary_cross_entropy_with_logits(model(p, xs), ys) +
             nn::binary_cross_entropy_with_logits(model(p, xs) * 0.5, ys, nn::reduction::sum);
    };
    replays_with_new_data(b, model.init(9), targets,
                          test::on<B>(std::vector<double>{1, 0, 0, 1, 0.5, 1, 1, 0, 0, 1, 0, 0.25}, extents{4, 3}));
  }
  {
    // binary_cross_entropy checks its probabilities in every replay (after the replay's work)
    const D v = test::on<B>(std::vector<double>{0.5, 0.25, 0.75});
    D ps = test::on<B>(std::vector<double>{0.5, 0.9, 0.2});
    const D ys = test::on<B>(std::vector<double>{1, 0, 1});
    auto bce = [&](const auto& w, const D& xs) { return nn::binary_cross_entropy(w * xs, ys); };
    auto compiled_p = ad::compile(bce, v, ps);
    CHECK(compiled_p(v, ps).first == ad::value_and_grad(bce)(v, ps).first);
    ps.view() = test::on<B>(std::vector<double>{0.5, 8.0, 0.2});
    CHECK_THROWS_WITH_AS(compiled_p(v, ps), doctest::Contains("got values in [0.150000, 2.000000]"), fusor::value_error);
    ps.view() = test::on<B>(std::vector<double>{0.5, 0.9, 0.2});
    CHECK(hv(compiled_p(v, ps).second) == hv(ad::value_and_grad(bce)(v, ps).second));
    CHECK(compiled_p.recordings() == 1);
    CHECK(compiled_p.replays() == 3);
    graph_replays(compiled_p);
  }
  {
    // cross_entropy with probabilities replays (its row sums and logsumexp in kept buffers)
    D q = test::on<B>(std::vector<double>{0.2, 0.3, 0.5, 1, 0, 0, 0, 0.5, 0.5, 0.1, 0.1, 0.8}, extents{4, 3});
    auto c = [&](const auto& p, const auto& xs, const D& qs) {
      return nn::cross_entropy(model(p, xs), qs) + nn::cross_entropy(model(p, xs), qs * 2.0, nn::reduction::sum);
    };
    replays_with_new_data(c, model.init(10), q,
                          test::on<B>(std::vector<double>{0.5, 0.5, 0, 0, 0, 1, 0.25, 0.25, 0.5, 1, 0, 0}, extents{4, 3}));
  }
  {
    // an embedding (a gather) replays and reads its index array again: new indices written into
    // the same array are gathered, and checked (a table has no row -1, nor row 6)
    const auto emb = nn::sequential<double, B>(nn::embedding(6, 4), nn::linear(4, 3));
    I64 tokens = test::on<B>(std::vector<std::int64_t>{1, 5, 5, 0});
    auto e = [&](const auto& p, const I64& ids, const I64& ys) { return nn::cross_entropy(emb(p, ids), ys); };
    params_t r = emb.init(8);
    auto compiled_e = ad::compile(e, r, tokens, labels);
    auto reference_e = ad::value_and_grad(e);
    for (int k = 0; k < 3; ++k) {
      CAPTURE(k);
      if (k == 1) tokens.view() = test::on<B>(std::vector<std::int64_t>{2, 2, 3, 4});
      replay_matches(compiled_e, reference_e, true, r, tokens, labels);
    }
    CHECK(compiled_e.recordings() == 1);
    tokens.view() = test::on<B>(std::vector<std::int64_t>{0, 6, 1, 2});
    CHECK_THROWS_WITH_AS(compiled_e(r, tokens, labels), doctest::Contains("embedding needs indices in [0, 6), got indices from 0 to 6"),
                         fusor::index_error);
    tokens.view() = test::on<B>(std::vector<std::int64_t>{0, -1, 1, 2});
    CHECK_THROWS_WITH_AS(compiled_e(r, tokens, labels), doctest::Contains("from -1 to 2"), fusor::index_error);
    // ad::take (not a table) counts a negative index from the end, in a replay as when recorded
    auto tk = [](const auto& v, const I64& ids) { return sum(square(ad::take(v, ids, 0))); };
    const D w = dvals(5, -1, 1, 33);
    I64 ids = test::on<B>(std::vector<std::int64_t>{-1, 0, 4});
    auto compiled_tk = ad::compile(tk, w, ids);
    (void)compiled_tk(w, ids);
    CHECK(compiled_tk.replays() == 1);
    CHECK(hv(compiled_tk(w, ids).second) == hv(ad::grad(tk)(w, ids)));
    {
      // the closed form: d/dw Σ w[i]² over i = 4 (as -1), 0, 4 is 2w at 0, 4w at 4, 0 elsewhere
      const auto wv = hv(w);
      const auto g = hv(compiled_tk(w, ids).second);
      CHECK(g == std::vector<double>{2 * wv[0], 0, 0, 0, 4 * wv[4]});
    }
    ids.view() = test::on<B>(std::vector<std::int64_t>{-6, 0, 4});
    CHECK_THROWS_WITH_AS(compiled_tk(w, ids), doctest::Contains("index -6 is out of bounds for axis 0 with size 5"), fusor::index_error);
    ids.view() = test::on<B>(std::vector<std::int64_t>{-1, 0, 4});
    CHECK(hv(compiled_tk(w, ids).second) == hv(ad::grad(tk)(w, ids)));  // (a failed replay leaves no trace)
    // class labels are checked by every replay too, after its work
    tokens.view() = test::on<B>(std::vector<std::int64_t>{1, 5, 5, 0});
    I64 ys = test::on<B>(std::vector<std::int64_t>{2, 0, 1, 2});
    auto compiled_y = ad::compile(e, r, tokens, ys);
    ys.view() = test::on<B>(std::vector<std::int64_t>{2, 3, 1, 0});
    CHECK_THROWS_WITH_AS(compiled_y(r, tokens, ys), doctest::Contains("cross_entropy needs class indices in [0, 3), got labels from 0 to 3"),
                         fusor::index_error);
    ys.view() = test::on<B>(std::vector<std::int64_t>{1, 0, 1, 2});
    CHECK(compiled_y(r, tokens, ys).first == reference_e(r, tokens, ys).first);
    CHECK(compiled_y.recordings() == 1);
    CHECK(compiled_y.replays() == 2);
    graph_replays(compiled_e);
    graph_replays(compiled_tk);
    graph_replays(compiled_y);
  }
  ad::optim::sgd<double, B> opt_p({.lr = 0.1, .momentum = 0.9}), opt_q({.lr = 0.1, .momentum = 0.9});
  for (int k = 0; k < 4; ++k) {
    CAPTURE(k);
    if (k == 2) x.view() = dvals(4 * 5, -2, 2, 22, extents{4, 5});  // new values in the same array: a replay
    fusor::instrument::allocations = 0;
    auto [value, grads] = step(p, x, labels, 0.01);
    CHECK(fusor::instrument::allocations == 0);
    auto [value_ref, grads_ref] = reference(q, x, labels, 0.01);
    CHECK(value == value_ref);  // bit for bit: the same passes in the same order
    for (const auto& [name, g] : grads_ref) {
      INFO(name);
      CHECK(hv(grads.at(name)) == hv(g));
    }
    opt_p.step(p, grads);
    opt_q.step(q, grads_ref);
  }
  CHECK(step.recordings() == 1);
  CHECK(step.replays() == 4);
  graph_replays(step);
  // another array, another shape, another scalar: each records again (and still gives the reference's bits)
  const D x2 = dvals(6 * 5, -1, 1, 23, extents{6, 5});
  const I64 labels2 = test::on<B>(std::vector<std::int64_t>{0, 1, 2, 0, 1, 2});
  auto [v2, g2] = step(p, x2, labels2, 0.01);
  CHECK(step.recordings() == 2);
  CHECK(v2 == reference(p, x2, labels2, 0.01).first);
  (void)step(p, x2, labels2, 0.5);
  CHECK(step.recordings() == 3);
  (void)step(p, x2, labels2, 0.5);
  CHECK(step.recordings() == 3);
  CHECK(hv(g2.at("2.bias")) == hv(reference(p, x2, labels2, 0.5).second.at("2.bias")));  // g2 is the latest gradient
}

TEST_CASE("ad::compile refuses what it cannot replay, naming it") {
  const D x = dvals(12, -1, 1, 31, extents{3, 4});
  const D w = dvals(4, -1, 1, 32);
  // a reduction without a forward step
  CHECK_THROWS_WITH_AS(ad::compile([](const auto& v, const auto& xs) { return ad::max(xs * v); }, w, x),
                       doctest::Contains("registers no forward step (its result has shape ())"), ad::tape_error);
  // a value read to the host while recording would be the recorded one in every replay
  CHECK_THROWS_WITH_AS(ad::compile(
                           [](const auto& v, const auto& xs) {
                             auto s = sum(xs * v);
                             return s * s.item();
                           },
                           w, x),
                       doctest::Contains("item()"), ad::tape_error);
  // an array f made itself is gone after the recording (and was computed from the recorded arguments)
  CHECK_THROWS_WITH_AS(ad::compile(
                           [](const auto& v, const auto& xs) {
                             const D twice = xs * 2.0;
                             return sum(twice * v);
                           },
                           w, x),
                       doctest::Contains("shape (3, 4) that it created itself"), ad::tape_error);
  // a lazy random draw would give the recorded numbers in every replay
  fusor::random::generator noise(5);
  CHECK_THROWS_WITH_AS(ad::compile(
                           [&](const auto& v, const auto& xs) {
                             return sum(square(xs * v + fusor::lazy::random::normal<double, B>(noise, extents{3, 4})));
                           },
                           w, x),
                       doctest::Contains("a lazy random draw"), ad::tape_error);
  // dropout in training mode draws a new mask each call
  auto train = nn::sequential<double, B>(nn::linear(4, 2), nn::dropout(0.5, 1));
  const params_t p = train.init(1);
  auto loss = [&](const auto& q, const auto& xs) { return sum(train(q, xs)); };
  CHECK_THROWS_WITH_AS(ad::compile(loss, p, x), doctest::Contains("dropout in training mode"), ad::tape_error);
  train.eval();  // evaluation mode: dropout is the identity, and the function can be replayed
  auto step = ad::compile(loss, p, x);
  CHECK(step(p, x).first == doctest::Approx(ad::value_and_grad(loss)(p, x).first));
  CHECK(step.replays() == 1);
}

}  // namespace nnbody
