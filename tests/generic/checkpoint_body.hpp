// The bodies of gradient checkpointing (ad::checkpoint, nn::checkpointed) and of the tape-memory
// statistic (tape::bytes, ad::tape_memory), written once and instantiated per backend:
// tests/test_ad_checkpoint.cpp runs them on cpu, tests/test_ad_checkpoint_cuda.cu on cuda.
// References: the same model without checkpoints (gradients bit for bit: the same operations on
// the same values), central differences (gradcheck), forward over reverse (hessian), and the
// tape-memory meter against the bytes a block's boundary holds, counted by hand.
//
// The includer defines TEST_BACKEND (fusor::cpu or fusor::cuda) before including this file.
#include "../common.hpp"

#include <cstddef>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace checkpointbody {

using fusor::extents;
using fusor::index_t;
using B = TEST_BACKEND;
namespace ad = fusor::ad;
namespace nn = fusor::ad::nn;
using D = fusor::array<double, B>;
using test::host_values;

inline D draws(std::uint64_t seed, extents shape, double scale = 1.0) {
  fusor::random::generator rng(seed);
  return fusor::random::normal<double, B>(rng, shape, 0.0, scale);
}

// A residual MLP of `blocks` blocks, x + W2ᵀ relu(W1ᵀ x + b1) + b2, width d, hidden width h: the
// parameters of block k are entries 4k .. 4k + 3, passed to the block as one std::vector.
struct residual_mlp {
  index_t n, d, h;
  int blocks;
  std::vector<D> params() const {
    std::vector<D> p;
    for (int k = 0; k < blocks; ++k) {
      p.push_back(draws(100 + 4 * k, {d, h}, 0.2));
      p.push_back(draws(101 + 4 * k, {h}, 0.2));
      p.push_back(draws(102 + 4 * k, {h, d}, 0.2));
      p.push_back(draws(103 + 4 * k, {d}, 0.2));
    }
    return p;
  }
  static auto block() {
    return [](const auto& x, const auto& w) {
      return ad::matmul(nn::relu(ad::matmul(x, w[0]) + w[1]), w[2]) + w[3];
    };
  }
  // checkpoint: 0 none, 1 each block, 2 each block and each pair of blocks around them (nested)
  auto loss(const D& x0, int checkpoint) const {
    return [this, &x0, checkpoint, ck = ad::checkpoint(block()),
            pair = ad::checkpoint([ck = ad::checkpoint(block())](const auto& x, const auto& w) {
              using V = std::remove_cvref_t<decltype(w[0])>;
              const std::vector<V> first(w.begin(), w.begin() + 4), second(w.begin() + 4, w.end());
              auto y = ad::eval(x + ck(x, first));
              return ad::eval(y + ck(y, second));
            })](const auto& q) {
      using V = std::remove_cvref_t<decltype(q[0])>;
      auto x = ad::eval(ad::param(x0) * 1.0);
      for (int k = 0; k < blocks; ++k) {
        if (checkpoint == 2 && k + 1 < blocks) {
          x = pair(x, std::vector<V>(q.begin() + 4 * k, q.begin() + 4 * k + 8));
          ++k;
          continue;
        }
        const std::vector<V> w(q.begin() + 4 * k, q.begin() + 4 * k + 4);
        if (checkpoint > 0) x = ad::eval(x + ck(x, w));
        else x = ad::eval(x + block()(x, w));
      }
      return ad::sum(x * x);
    };
  }
  // The bytes the tapes held at the peak of one value_and_grad call, on a thread of its own (its
  // checkpoint workspaces start empty and are freed when it ends).
  std::size_t peak_bytes(int checkpoint) const {
    std::size_t peak = 0;
    std::thread worker([&] {
      const auto p = params();
      const D x0 = draws(7, {n, d});
      auto vg = ad::value_and_grad(loss(x0, checkpoint));
      const auto before = ad::tape_memory();
      ad::reset_tape_memory_peak();
      (void)vg(p);
      peak = ad::tape_memory().peak - before.current;
    });
    worker.join();
    return peak;
  }
};

TEST_CASE("ad::checkpoint: a 16-block residual MLP's gradients bit for bit, its tape memory by the block count") {
  const residual_mlp m{9, 16, 128, 16};
  const auto p = m.params();
  const D x0 = draws(7, {m.n, m.d});
  auto plain = ad::value_and_grad(m.loss(x0, 0));
  auto each = ad::value_and_grad(m.loss(x0, 1));
  auto nested = ad::value_and_grad(m.loss(x0, 2));
  const auto [v0, g0] = plain(p);
  for (int round = 0; round < 2; ++round) {  // the second reuses the workspaces
    CAPTURE(round);
    const auto [v1, g1] = each(p);
    const auto [v2, g2] = nested(p);
    CHECK(v1 == v0);
    CHECK(v2 == v0);
    REQUIRE(g1.size() == g0.size());
    for (std::size_t k = 0; k < g0.size(); ++k) {
      CAPTURE(k);
      CHECK(host_values(g1[k]) == host_values(g0[k]));
      CHECK(host_values(g2[k]) == host_values(g0[k]));
    }
  }

  // Memory. A checkpointed block leaves on the tape its output and the residual sum, each a value
  // and an adjoint of n × d doubles; the plain block leaves its intermediates too.
  const std::size_t boundary = 4 * std::size_t(m.n * m.d) * sizeof(double);
  const residual_mlp half{m.n, m.d, m.h, 8};
  const std::size_t plain16 = m.peak_bytes(0), plain8 = half.peak_bytes(0);
  const std::size_t ck16 = m.peak_bytes(1), ck8 = half.peak_bytes(1);
  CAPTURE(plain16);
  CAPTURE(plain8);
  CAPTURE(ck16);
  CAPTURE(ck8);
  CHECK(ck16 - ck8 == 8 * boundary);        // per block: the boundary, exactly
  CHECK(plain16 - plain8 >= 8 * 8 * boundary);  // per block without: its intermediates (9 × here)
  CHECK(ck16 * 3 < plain16);                // with one block's intermediates in the workspace
  CHECK(m.peak_bytes(2) < plain16 / 2);     // nested: pairs of checkpointed blocks
}

TEST_CASE("ad::checkpoint: views, constants, scalars and tuples as arguments; central differences; hessian") {
  const D c = draws(21, {3, 5});
  // a non-contiguous view of the variable, a constant array, a number and a tuple of variables
  auto inner = [](const auto& xs, const auto& cst, double s, const auto& pair) {
    return fusor::sin(xs) * cst * s + std::get<0>(pair) * std::get<1>(pair);
  };
  auto f = [&](auto&& ck) {
    return [&c, ck](const auto& x) {
      auto y = ck(x(fusor::all, fusor::range(0, 10, 2)), c, 1.5, std::make_tuple(x(fusor::all, fusor::range(1, 6)), x(fusor::all, fusor::range(5, 10))));
      return sum(fusor::square(y) + y);
    };
  };
  const D x = draws(22, {3, 10});
  const auto g_plain = ad::grad(f(inner))(x);
  const auto g_ck = ad::grad(f(ad::checkpoint(inner)))(x);
  // (the plain function's output stays lazy inside the loss and x's three views add into its
  // adjoint in another order: equal to rounding)
  const auto a = host_values(g_ck), b = host_values(g_plain);
  REQUIRE(a.size() == b.size());
  for (std::size_t k = 0; k < a.size(); ++k) CHECK(a[k] == doctest::Approx(b[k]).epsilon(1e-14));
  const auto r = ad::gradcheck<ad::gradcheck_mode::reverse>(f(ad::checkpoint(inner)), x, {.per_coordinate = true});
  CHECK_MESSAGE(r.passed, r.report());
  // forward over reverse: the checkpointed function runs on dual numbers
  auto g = [](const auto& x) {
    auto ck = ad::checkpoint([](const auto& v) { return ad::eval(fusor::tanh(v) * v); });
    return ad::sum(fusor::square(ck(x)));
  };
  auto g_plain_fn = [](const auto& x) { return ad::sum(fusor::square(fusor::tanh(x) * x)); };
  const D x1 = draws(23, {4});
  const auto h_ck = host_values(ad::hessian(g, x1));
  const auto h_plain = host_values(ad::hessian(g_plain_fn, x1));
  REQUIRE(h_ck.size() == h_plain.size());
  for (std::size_t k = 0; k < h_ck.size(); ++k) CHECK(h_ck[k] == doctest::Approx(h_plain[k]).epsilon(1e-12));
  // on arrays the checkpoint is the function; under no_grad nothing is recorded
  auto sq = ad::checkpoint([](const auto& v) { return v * v; });
  CHECK(host_values(fusor::eval(sq(x1))) == host_values(fusor::eval(x1 * x1)));
  ad::tape t;
  const auto xv = ad::param(t, x1);
  {
    const ad::no_grad off;
    const auto y = sq(xv);
    CHECK(host_values(D(y.value())) == host_values(fusor::eval(x1 * x1)));
  }
  CHECK(t.size() == 0);
  const auto y = sq(xv);
  CHECK(t.size() == 1);  // one node for the whole function
  ad::backward(ad::sum(y));
  CHECK(host_values(D(ad::gradient(xv))) == host_values(fusor::eval(x1 * 2.0)));
}

TEST_CASE("nn::checkpointed: a causal transformer with dropout, bit for bit, two steps; the same state_dict names") {
  nn::transformer_options o;
  o.dropout = 0.1;
  o.causal = true;
  o.seed = 3;
  auto plain = nn::sequential<double, B>(nn::transformer_encoder_layer(16, 4, 32, o), nn::transformer_encoder_layer(16, 4, 32, o),
                                         nn::linear(16, 5));
  auto ck = nn::sequential<double, B>(nn::checkpointed(nn::transformer_encoder_layer(16, 4, 32, o)),
                                      nn::checkpointed(nn::transformer_encoder_layer(16, 4, 32, o)),
                                      nn::checkpointed(nn::linear(16, 5)));
  REQUIRE(plain.parameter_specs().size() == ck.parameter_specs().size());
  for (std::size_t k = 0; k < ck.parameter_specs().size(); ++k) {
    CHECK(ck.parameter_specs()[k].name == plain.parameter_specs()[k].name);
    CHECK(ck.parameter_specs()[k].shape == plain.parameter_specs()[k].shape);
  }
  const auto p = plain.init(7);
  const D x = draws(31, {3, 7, 16});
  for (int step = 0; step < 2; ++step) {  // the dropout generators advance alike
    CAPTURE(step);
    auto loss = [&](auto& model) { return [&](const auto& q) { return ad::sum(fusor::square(model(q, x))); }; };
    const auto [v0, g0] = ad::value_and_grad(loss(plain))(p);
    const auto [v1, g1] = ad::value_and_grad(loss(ck))(p);
    CHECK(v1 == v0);
    for (const auto& [name, g] : g0) {
      CAPTURE(name);
      CHECK(host_values(g1.at(name)) == host_values(g));
    }
  }
  plain.eval();
  ck.eval();
  CHECK(host_values(ck(p, x)) == host_values(plain(p, x)));
  CHECK(std::string(nn::checkpointed<nn::transformer_encoder_layer>::name()) ==
        std::string("checkpointed ") + nn::transformer_encoder_layer::name());
}

TEST_CASE("ad::checkpoint bad use: captured variables, a function that throws or changes, a replay; a layer without parameters; tape::bytes") {
  const D x = draws(41, {2, 3});
  const D w = draws(42, {2, 3});
  {  // a variable of the enclosing recording read by the function
    ad::tape t;
    const auto xv = ad::param(t, x);
    const auto wv = ad::param(t, w);
    auto bad = ad::checkpoint([&wv](const auto& v) { return ad::eval(v * wv); });
    try {
      (void)bad(xv);
      FAIL("a captured variable was accepted");
    } catch (const ad::tape_error& e) {
      CHECK(std::string(e.what()).find("two different tapes") != std::string::npos);
      CHECK(std::string(e.what()).find("inside ad::checkpoint") != std::string::npos);
    }
  }
  {  // a captured variable returned as it is: named, not used
    ad::tape t;
    const auto xv = ad::param(t, x);
    const auto wv = ad::param(t, w);
    auto leak = ad::checkpoint([&wv](const auto&) { return wv; });
    CHECK_THROWS_WITH_AS((void)leak(xv), doctest::Contains("returned a variable of another tape"), ad::tape_error);
  }
  {  // a function that throws: the thread's recording state is as before, and the next call works
    ad::tape t;
    const auto xv = ad::param(t, x);
    bool fail = true;
    auto flaky = ad::checkpoint([&fail](const auto& v) {
      if (fail) throw fusor::value_error("fusor test: thrown inside a checkpointed function");
      return ad::eval(v * 3.0);
    });
    CHECK_THROWS_AS((void)flaky(xv), fusor::value_error);
    CHECK(ad::recording());
    CHECK_FALSE(ad::has_active_tape());
    fail = false;
    const auto y = flaky(xv);
    ad::backward(ad::sum(y));
    CHECK(host_values(D(ad::gradient(xv))) == std::vector<double>(6, 3.0));
  }
  {  // a checkpointed layer without parameters (dropout) on a variable, and on an array
    auto model = nn::sequential<double, B>(nn::linear(3, 4), nn::checkpointed(nn::dropout(0.5, 9)), nn::linear(4, 2));
    auto plain = nn::sequential<double, B>(nn::linear(3, 4), nn::dropout(0.5, 9), nn::linear(4, 2));
    const auto p = plain.init(3);
    auto loss = [&](auto& m) { return [&](const auto& q) { return sum(fusor::square(m(q, x))); }; };
    const auto [v0, g0] = ad::value_and_grad(loss(plain))(p);
    const auto [v1, g1] = ad::value_and_grad(loss(model))(p);
    CHECK(v1 == v0);
    for (const auto& [name, g] : g0) CHECK(host_values(g1.at(name)) == host_values(g));
    model.eval();
    plain.eval();
    CHECK(host_values(model(p, x)) == host_values(plain(p, x)));
  }
  {  // a function whose recompute differs from its call
    int calls = 0;
    auto changing = ad::checkpoint([&calls](const auto& v) {
      ++calls;
      return ad::eval(v(fusor::range(0, calls == 1 ? 2 : 1), fusor::all) * 2.0);
    });
    ad::tape t;
    const auto xv = ad::param(t, x);
    const auto loss = ad::sum(changing(xv));
    try {
      ad::backward(loss);
      FAIL("a changed recompute was accepted");
    } catch (const ad::tape_error& e) {
      CHECK(std::string(e.what()).find("returned shape (1, 3) when recomputed") != std::string::npos);
    }
  }
  {  // ad::compile cannot replay a checkpoint (the function is called again in the backward pass)
    auto f = [ck = ad::checkpoint([](const auto& v) { return ad::eval(fusor::exp(v)); })](const auto& v, const D&) {
      return ad::sum(ck(v));
    };
    try {
      auto compiled = ad::compile(f, x, w);
      FAIL("a checkpoint was compiled");
    } catch (const ad::tape_error& e) {
      CHECK(std::string(e.what()).find("ad::checkpoint") != std::string::npos);
    }
  }
  {  // tape::bytes: owned buffers and kept arrays, none of the borrowed parameter
    ad::tape t;
    const auto xv = ad::param(t, x);
    CHECK(t.bytes() == 0);
    const auto y = ad::eval(xv * 2.0);
    CHECK(t.bytes() == 6 * sizeof(double));
    ad::backward(ad::sum(y));
    CHECK(t.bytes() >= 6 * sizeof(double) * 2);  // y's adjoint, the loss and its adjoint, x's adjoint
    const std::size_t held = t.bytes();
    t.reset();
    CHECK(t.bytes() == held);  // buffers stay for the next recording
  }
}

}  // namespace checkpointbody
