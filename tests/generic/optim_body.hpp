// Optimizer test bodies written once and instantiated per backend: tests/test_optim.cpp runs them
// on cpu, tests/test_optim_cuda.cu on cuda. Every update is compared with the published formula
// written out here as a plain loop in long double (textbook bias-corrected moments for Adam, not
// PyTorch's rearranged form that fusor follows), over several steps, on trees of parameters of
// the edge sizes; the convergence example is KlongPy's.
//
// The includer defines TEST_BACKEND (fusor::cpu or fusor::cuda) before including this file.
#include "../common.hpp"

#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace optimbody {

using fusor::extents;
using fusor::index_t;
using B = TEST_BACKEND;
namespace ad = fusor::ad;
namespace optim = fusor::ad::optim;
#if defined(__CUDACC__)
using ref_t = double;
#else
using ref_t = long double;
#endif

template <class T>
using tree = std::map<std::string, fusor::array<T, B>>;

/// The reference's state of one parameter: two slots and whether a step was taken.
struct ref_state {
  std::vector<ref_t> a, b;
  bool first = true;
};

/// One step of an optimizer's published formula on one parameter, at step t (1-based) with the
/// learning rate lr.
using ref_step = std::function<void(std::vector<ref_t>& p, const std::vector<ref_t>& g, ref_state& s, int t, ref_t lr)>;

inline ref_step ref_sgd(const optim::sgd_options& o) {
  return [o](std::vector<ref_t>& p, const std::vector<ref_t>& g, ref_state& s, int, ref_t lr) {
    s.a.resize(p.size());
    for (std::size_t i = 0; i < p.size(); ++i) {
      ref_t d = g[i] + ref_t(o.weight_decay) * p[i];
      if (o.momentum > 0) {
        s.a[i] = s.first ? d : ref_t(o.momentum) * s.a[i] + (1 - ref_t(o.dampening)) * d;
        d = o.nesterov ? d + ref_t(o.momentum) * s.a[i] : s.a[i];
      }
      p[i] -= lr * d;
    }
    s.first = false;
  };
}

/// Adam (decoupled: AdamW) as Kingma and Ba write it: m / (1 - b1^t) over sqrt(v / (1 - b2^t)) + eps.
inline ref_step ref_adam(const optim::adam_options& o, bool decoupled) {
  return [o, decoupled](std::vector<ref_t>& p, const std::vector<ref_t>& g, ref_state& s, int t, ref_t lr) {
    s.a.resize(p.size());
    s.b.resize(p.size());
    const ref_t b1 = ref_t(o.beta1), b2 = ref_t(o.beta2), wd = ref_t(o.weight_decay);
    for (std::size_t i = 0; i < p.size(); ++i) {
      ref_t d = g[i];
      if (decoupled) p[i] -= lr * wd * p[i];
      else d += wd * p[i];
      s.a[i] = b1 * s.a[i] + (1 - b1) * d;
      s.b[i] = b2 * s.b[i] + (1 - b2) * d * d;
      const ref_t mhat = s.a[i] / (1 - std::pow(b1, ref_t(t))), vhat = s.b[i] / (1 - std::pow(b2, ref_t(t)));
      p[i] -= lr * mhat / (std::sqrt(vhat) + ref_t(o.eps));
    }
  };
}

inline ref_step ref_rmsprop(const optim::rmsprop_options& o) {
  return [o](std::vector<ref_t>& p, const std::vector<ref_t>& g, ref_state& s, int, ref_t lr) {
    s.a.resize(p.size());
    s.b.resize(p.size());
    const ref_t alpha = ref_t(o.alpha);
    for (std::size_t i = 0; i < p.size(); ++i) {
      const ref_t d = g[i] + ref_t(o.weight_decay) * p[i];
      s.a[i] = alpha * s.a[i] + (1 - alpha) * d * d;
      ref_t u = d / (std::sqrt(s.a[i]) + ref_t(o.eps));
      if (o.momentum > 0) {
        s.b[i] = ref_t(o.momentum) * s.b[i] + u;
        u = s.b[i];
      }
      p[i] -= lr * u;
    }
  };
}

inline ref_step ref_adagrad(const optim::adagrad_options& o) {
  return [o](std::vector<ref_t>& p, const std::vector<ref_t>& g, ref_state& s, int t, ref_t lr) {
    if (s.first) s.a.assign(p.size(), ref_t(o.initial_accumulator_value));
    s.first = false;
    const ref_t clr = lr / (1 + ref_t(t - 1) * ref_t(o.lr_decay));
    for (std::size_t i = 0; i < p.size(); ++i) {
      const ref_t d = g[i] + ref_t(o.weight_decay) * p[i];
      s.a[i] += d * d;
      p[i] -= clr * d / (std::sqrt(s.a[i]) + ref_t(o.eps));
    }
  };
}

/// The parameter shapes of the trees: the edge sizes of T's SIMD width, a matrix, a large odd size.
template <class T>
std::vector<extents> shapes() {
  const index_t w = test::lanes<T>;
  return {extents{0}, extents{1}, extents{w - 1}, extents{w + 1}, extents{3, 2 * w + 5}, extents{10'007}};
}

/// Runs `steps` steps of an optimizer on a tree of parameters with fresh gradients each step, and
/// of the reference on host copies; returns the largest relative difference of the parameters.
template <class T, class Opt>
double compare(Opt& opt, const ref_step& ref, const std::function<ref_t(int)>& lr_at, int steps = 5) {
  const auto sh = shapes<T>();
  tree<T> params;
  std::vector<std::vector<ref_t>> rp(sh.size());
  std::vector<ref_state> rs(sh.size());
  for (std::size_t k = 0; k < sh.size(); ++k) {
    const auto v = test::values<T>(sh[k].numel(), -2, 2, 100 + k);
    params.emplace(std::string(1, char('a' + k)), test::on<B>(v, sh[k]));
    rp[k].assign(v.begin(), v.end());
  }
  double worst = 0;
  for (int t = 1; t <= steps; ++t) {
    tree<T> grads;
    std::vector<std::vector<ref_t>> rg(sh.size());
    for (std::size_t k = 0; k < sh.size(); ++k) {
      const auto v = test::values<T>(sh[k].numel(), -1, 1, 1000 * std::uint64_t(t) + k);
      grads.emplace(std::string(1, char('a' + k)), test::on<B>(v, sh[k]));
      rg[k].assign(v.begin(), v.end());
    }
    opt.step(params, grads);
    for (std::size_t k = 0; k < sh.size(); ++k) {
      ref(rp[k], rg[k], rs[k], t, lr_at(t - 1));
      const auto got = test::host_values(params.at(std::string(1, char('a' + k))));
      for (std::size_t i = 0; i < got.size(); ++i)
        worst = std::max(worst, double(std::abs(ref_t(got[i]) - rp[k][i]) / std::max<ref_t>(1, std::abs(rp[k][i]))));
    }
  }
  return worst;
}

template <class T>
double tolerance() {
  return std::is_same_v<T, float> ? 4e-6 : 1e-13;
}

TEST_CASE_TEMPLATE("optim: every optimizer against its published formula, over steps, on every edge size", T, float, double) {
  const auto fixed = [](double lr) { return [lr](int) { return ref_t(lr); }; };
  SUBCASE("sgd") {
    for (const auto& o : {optim::sgd_options{}, optim::sgd_options{0.1, 0.9}, optim::sgd_options{0.05, 0.9, 0.0, 0.01, true},
                          optim::sgd_options{0.1, 0.5, 0.3, 0.02}}) {
      CAPTURE(o.momentum);
      CAPTURE(o.nesterov);
      optim::sgd<T, B> opt(o);
      CHECK(compare<T>(opt, ref_sgd(o), fixed(o.lr)) <= tolerance<T>());
      CHECK(opt.steps() == 5);
      CHECK(opt.state().size() == (o.momentum > 0 ? 1u : 0u));
    }
  }
  SUBCASE("adam and adamw") {
    optim::adam_options o;
    o.lr = 0.01;
    for (const double wd : {0.0, 0.1}) {
      o.weight_decay = wd;
      optim::adam<T, B> a(o);
      CHECK(compare<T>(a, ref_adam(o, false), fixed(o.lr)) <= tolerance<T>());
      optim::adamw<T, B> w(o);
      CHECK(compare<T>(w, ref_adam(o, true), fixed(o.lr)) <= tolerance<T>());
      CHECK(w.state().size() == 2);
    }
    CHECK(optim::adamw<T, B>().options().weight_decay == 0.01);  // PyTorch's default
    CHECK(optim::adam<T, B>().options().lr == 1e-3);
  }
  SUBCASE("rmsprop") {
    optim::rmsprop_options with_momentum;
    with_momentum.momentum = 0.8;
    with_momentum.weight_decay = 0.05;
    for (const auto& o : {optim::rmsprop_options{}, with_momentum}) {
      optim::rmsprop<T, B> opt(o);
      CHECK(compare<T>(opt, ref_rmsprop(o), fixed(o.lr)) <= tolerance<T>());
    }
  }
  SUBCASE("adagrad") {
    optim::adagrad_options decayed;
    decayed.lr_decay = 0.1;
    decayed.initial_accumulator_value = 0.1;
    decayed.weight_decay = 0.01;
    for (const auto& o : {optim::adagrad_options{}, decayed}) {
      optim::adagrad<T, B> opt(o);
      CHECK(compare<T>(opt, ref_adagrad(o), fixed(o.lr)) <= tolerance<T>());
    }
  }
  SUBCASE("a schedule replaces the options' learning rate") {
    optim::adam_options o;
    optim::adam<T, B> opt(o);
    opt.set_schedule(optim::warmup(optim::step_lr(0.05, 2, 0.5), 2));
    const auto lr_at = [](int t) { return ref_t(t < 2 ? 0.05 * (t + 1) / 2 : 0.05 * std::pow(0.5, (t - 2) / 2)); };
    CHECK(compare<T>(opt, ref_adam(o, false), lr_at, 7) <= tolerance<T>());
  }
}

TEST_CASE("optim: a step is one pass per parameter and allocates nothing once its state is made") {
  tree<float> params, grads;
  for (const char* k : {"w", "b", "c"}) {
    params.emplace(k, test::on<B>(test::values<float>(1001, -1, 1, 3), extents{7, 11, 13}));
    grads.emplace(k, test::on<B>(test::values<float>(1001, -1, 1, 4), extents{7, 11, 13}));
  }
  optim::adam<float, B> opt;
  opt.step(params, grads);
  fusor::instrument::allocations = 0;
  fusor::instrument::passes = 0;
#if defined(__CUDACC__)
  fusor::instrument::kernel_launches = 0;
#endif
  opt.step(params, grads);
  CHECK(fusor::instrument::allocations == 0);
  if constexpr (std::is_same_v<B, fusor::cpu>) CHECK(fusor::instrument::passes == 3);
#if defined(__CUDACC__)
  CHECK(fusor::instrument::kernel_launches == 3);
#endif
}

TEST_CASE("optim: KlongPy's linear fit: the exact gradient at (1, 0), and 500 Adam steps reach (2, 1)") {
  // loss = sum((w X + b - Y)^2) / 3 on X = [1 2 3], Y = [3 5 7]: at w = 1, b = 0 the residuals are
  // (-2, -3, -4), so dL/dw = 2/3 (-2 - 6 - 12) = -40/3 and dL/db = 2/3 (-9) = -6
  const auto X = test::on<B>(std::vector<double>{1, 2, 3}), Y = test::on<B>(std::vector<double>{3, 5, 7});
  auto loss = [&](const auto& p) {
    const auto& [w, b] = p;
    return sum(square(w * X + b - Y) / 3.0);
  };
  std::tuple<fusor::array<double, B>, fusor::array<double, B>> wb{test::on<B>(std::vector<double>{1.0}),
                                                                  test::on<B>(std::vector<double>{0.0})};
  auto vg = ad::value_and_grad(loss);
  {
    const auto [value, g] = vg(wb);
    CHECK(value == doctest::Approx(29.0 / 3).epsilon(1e-15));
    CHECK(test::host_values(std::get<0>(g))[0] == doctest::Approx(-40.0 / 3).epsilon(1e-15));
    CHECK(test::host_values(std::get<1>(g))[0] == doctest::Approx(-6.0).epsilon(1e-15));
  }
  optim::adam_options o;
  o.lr = 0.1;
  optim::adam<double, B> opt(o);
  for (int i = 0; i < 500; ++i) {
    const auto [value, g] = vg(wb);
    opt.step(wb, g);
  }
  const double w = test::host_values(std::get<0>(wb))[0], b = test::host_values(std::get<1>(wb))[0];
  MESSAGE("after 500 Adam steps: w = ", w, ", b = ", b);
  CHECK(std::abs(w - 2) < 1e-2);
  CHECK(std::abs(b - 1) < 1e-2);
}

TEST_CASE("optim: schedules in closed form; clipping by the joint norm") {
  const auto s = optim::step_lr(0.1, 3, 0.5);
  for (int t = 0; t < 10; ++t) CHECK(s(t) == doctest::Approx(0.1 * std::pow(0.5, t / 3)).epsilon(1e-15));
  const auto e = optim::exponential_lr(0.2, 0.9);
  CHECK(e(0) == 0.2);
  CHECK(e(5) == doctest::Approx(0.2 * std::pow(0.9, 5)).epsilon(1e-15));
  const auto c = optim::cosine_lr(1.0, 10, 0.1);
  CHECK(c(0) == doctest::Approx(1.0).epsilon(1e-15));
  CHECK(c(5) == doctest::Approx(0.55).epsilon(1e-15));
  CHECK(c(3) == doctest::Approx(0.1 + 0.9 * (1 + std::cos(std::acos(-1.0) * 0.3)) / 2).epsilon(1e-15));
  CHECK(c(10) == 0.1);
  CHECK(c(1000) == 0.1);
  const auto w = optim::warmup(optim::constant_lr(2.0), 4);
  CHECK(w(0) == 0.5);
  CHECK(w(3) == 2.0);
  CHECK(w(9) == 2.0);
  // the wrapped schedule starts when the warm-up ends
  const auto ws = optim::warmup(optim::step_lr(1.0, 2, 0.5), 2);
  CHECK(ws(0) == 0.5);
  CHECK(ws(1) == 1.0);
  CHECK(ws(3) == 1.0);
  CHECK(ws(4) == 0.5);

  // clipping: [3, 4] and [12] have joint norm 13
  std::map<std::string, fusor::array<double, B>> g;
  g.emplace("a", test::on<B>(std::vector<double>{3, 4}));
  g.emplace("b", test::on<B>(std::vector<double>{12}));
  CHECK(optim::clip_grad_norm(g, 20.0) == doctest::Approx(13).epsilon(1e-15));
  CHECK(test::host_values(g.at("a")) == std::vector<double>{3, 4});  // under the limit: untouched
  CHECK(optim::clip_grad_norm(g, 6.5) == doctest::Approx(13).epsilon(1e-15));
  const double scale = 6.5 / (13 + 1e-6);
  CHECK(test::host_values(g.at("a"))[1] == doctest::Approx(4 * scale).epsilon(1e-15));
  CHECK(test::host_values(g.at("b"))[0] == doctest::Approx(12 * scale).epsilon(1e-15));
  fusor::array<float, B> one = test::on<B>(std::vector<float>{0, 0, 0});
  CHECK(optim::clip_grad_norm(one, 1.0) == 0.0);
  CHECK_THROWS_WITH_AS(optim::clip_grad_norm(one, 0.0), doctest::Contains("max_norm > 0, got 0"), fusor::value_error);
}

TEST_CASE("optim: bad options, mismatched trees and changed parameters are typed errors") {
  using sgd = optim::sgd<float, B>;  // (no comma inside the macros)
  using adam = optim::adam<float, B>;
  using rmsprop = optim::rmsprop<float, B>;
  using adagrad = optim::adagrad<float, B>;
  CHECK_THROWS_WITH_AS(sgd({-0.1}), doctest::Contains("learning rate >= 0, got -0.1"), fusor::value_error);
  optim::sgd_options nesterov;
  nesterov.nesterov = true;
  CHECK_THROWS_WITH_AS(sgd{nesterov}, doctest::Contains("Nesterov momentum needs a momentum > 0"),
                       fusor::value_error);
  optim::adam_options betas;
  betas.beta2 = 1.0;
  CHECK_THROWS_WITH_AS(adam{betas}, doctest::Contains("betas in [0, 1)"), fusor::value_error);
  optim::rmsprop_options alpha;
  alpha.alpha = 1.5;
  CHECK_THROWS_AS(rmsprop{alpha}, fusor::value_error);
  optim::adagrad_options decay;
  decay.lr_decay = -1;
  CHECK_THROWS_AS(adagrad{decay}, fusor::value_error);
  CHECK_THROWS_AS(optim::step_lr(0.1, 0, 0.5), fusor::value_error);
  CHECK_THROWS_AS(optim::cosine_lr(0.1, 0), fusor::value_error);
  CHECK_THROWS_AS(optim::exponential_lr(0.1, 0.0), fusor::value_error);
  CHECK_THROWS_AS(optim::warmup(optim::schedule{}, 3), fusor::value_error);

  tree<float> params, grads;
  params.emplace("w", test::on<B>(std::vector<float>{1, 2, 3}));
  params.emplace("b", test::on<B>(std::vector<float>{0}));
  grads.emplace("w", test::on<B>(std::vector<float>{1, 1, 1}));
  grads.emplace("c", test::on<B>(std::vector<float>{1}));
  optim::adam<float, B> opt;
  CHECK_THROWS_WITH_AS(opt.step(params, grads), doctest::Contains("no gradient for the parameters[\"b\"]"), fusor::value_error);
  grads.erase("c");
  grads.emplace("b", test::on<B>(std::vector<float>{1, 1}));
  CHECK_THROWS_WITH_AS(opt.step(params, grads), doctest::Contains("the parameters[\"b\"] has shape (1,) but its gradient has shape (2,)"),
                       fusor::shape_error);
  grads.erase("b");
  grads.emplace("b", test::on<B>(std::vector<float>{1}));
  opt.step(params, grads);  // now they match
  CHECK(opt.steps() == 1);
  // a different set of parameters for the same state
  params.emplace("z", test::on<B>(std::vector<float>{1}));
  grads.emplace("z", test::on<B>(std::vector<float>{1}));
  CHECK_THROWS_WITH_AS(opt.step(params, grads), doctest::Contains("its state was made for 2 parameters"), fusor::value_error);
  opt.reset();
  opt.step(params, grads);
  CHECK(opt.steps() == 1);
  // vectors of another length; a schedule that goes negative
  std::vector<fusor::array<float, B>> pv, gv;
  pv.push_back(test::on<B>(std::vector<float>{1}));
  CHECK_THROWS_WITH_AS(sgd().step(pv, gv), doctest::Contains("holds 1 parameters but its gradients 0"),
                       fusor::shape_error);
  optim::sgd<float, B> scheduled;
  scheduled.set_schedule([](std::int64_t t) { return 0.1 - 0.1 * double(t); });
  gv.push_back(test::on<B>(std::vector<float>{1}));
  scheduled.step(pv, gv);
  scheduled.step(pv, gv);  // lr 0 is allowed
  CHECK_THROWS_WITH_AS(scheduled.step(pv, gv), doctest::Contains("learning rate >= 0, got -0.1"), fusor::value_error);
}

}  // namespace optimbody
