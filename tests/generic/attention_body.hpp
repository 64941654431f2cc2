// The bodies of attention (nn::functional::scaled_dot_product_attention and
// multi_head_attention, the nn::multihead_attention, nn::transformer_encoder_layer and
// nn::positional_embedding layers) written once and instantiated per backend:
// tests/test_nn_attention.cpp runs them on cpu, tests/test_nn_attention_cuda.cu on cuda.
// References: a direct loop in double over the definition, central differences (gradcheck),
// PyTorch's own outputs and gradients (tests/data/attention, make_attention_fixtures.py), and
// causality checked by perturbing later positions.
//
// The includer defines TEST_BACKEND (fusor::cpu or fusor::cuda) before including this file.
#include "../common.hpp"
#include "../data_dir.hpp"
#include "double_compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

namespace attentionbody {

using fusor::extents;
using fusor::index_t;
using B = TEST_BACKEND;
namespace ad = fusor::ad;
namespace nn = fusor::ad::nn;
namespace F = fusor::ad::nn::functional;
using D = fusor::array<double, B>;
using params_t = nn::parameters<double, B>;

inline D dvals(index_t n, double lo, double hi, std::uint64_t seed, extents shape) {
  return double_compare::values<B>(n, lo, hi, seed, shape);
}
inline std::vector<double> hv(const D& a) { return test::host_values(a); }
using double_compare::max_rel;

/// softmax(q kᵀ scale [+ mask]) v in double, for `batch` stacked problems of one shape each; mask
/// (batch, L, S) or empty: a boolean mask when `boolean` (nonzero: may attend), else added.
inline std::vector<double> direct_attention(index_t batch, index_t l, index_t s, index_t e, index_t ev, const std::vector<double>& q,
                                            const std::vector<double>& k, const std::vector<double>& v, bool causal,
                                            const std::vector<double>& mask, bool boolean, double scale) {
  std::vector<double> out(static_cast<std::size_t>(batch * l * ev), 0.0), w(static_cast<std::size_t>(s));
  for (index_t b = 0; b < batch; ++b)
    for (index_t i = 0; i < l; ++i) {
      double top = -std::numeric_limits<double>::infinity();
      for (index_t j = 0; j < s; ++j) {
        double dot = 0;
        for (index_t c = 0; c < e; ++c) dot += q[std::size_t((b * l + i) * e + c)] * k[std::size_t((b * s + j) * e + c)];
        double score = dot * scale;
        if (!mask.empty()) {
          const double m = mask[std::size_t((b * l + i) * s + j)];
          score = boolean ? (m != 0 ? score : -std::numeric_limits<double>::infinity()) : score + m;
        }
        if (causal && j > i) score = -std::numeric_limits<double>::infinity();
        w[std::size_t(j)] = score;
        top = std::max(top, score);
      }
      double total = 0;
      for (index_t j = 0; j < s; ++j) total += w[std::size_t(j)] = std::exp(w[std::size_t(j)] - top);
      for (index_t j = 0; j < s; ++j)
        for (index_t c = 0; c < ev; ++c)
          out[std::size_t((b * l + i) * ev + c)] += w[std::size_t(j)] / total * v[std::size_t((b * s + j) * ev + c)];
    }
  return out;
}

TEST_CASE("scaled_dot_product_attention against the definition in double: causal, masks, scale, edge sizes") {
  struct shape_case {
    index_t batch, l, s, e, ev;
  };
  const index_t w = test::lanes<double>;
  for (const shape_case c : {shape_case{3, 5, 6, 4, 7}, shape_case{1, 1, 1, 1, 1}, shape_case{2, 1, 9, w - 1, w + 1},
                             shape_case{2, 7, 3, w, w}, shape_case{1, 17, 17, 5, 3}, shape_case{0, 4, 4, 2, 2}}) {
    CAPTURE(c.batch);
    CAPTURE(c.l);
    CAPTURE(c.s);
    CAPTURE(c.e);
    const D q = dvals(c.batch * c.l * c.e, -1, 1, 1, extents{c.batch, c.l, c.e});
    const D k = dvals(c.batch * c.s * c.e, -1, 1, 2, extents{c.batch, c.s, c.e});
    const D v = dvals(c.batch * c.s * c.ev, -1, 1, 3, extents{c.batch, c.s, c.ev});
    const std::vector<double> none;
    const double scale = 1 / std::sqrt(double(c.e));
    for (bool causal : {false, true}) {
      const D y = F::scaled_dot_product_attention(q, k, v, {.causal = causal});
      CHECK(y.shape() == extents{c.batch, c.l, c.ev});
      CHECK(max_rel(hv(y), direct_attention(c.batch, c.l, c.s, c.e, c.ev, hv(q), hv(k), hv(v), causal, none, false, scale)) <= 1e-14);
    }
    // a boolean mask (every query keeps key 0) and an additive one, each with its own scale
    std::vector<double> bits = test::values<double>(c.batch * c.l * c.s, 0, 1, 4), add = test::values<double>(c.batch * c.l * c.s, -2, 2, 5);
    std::vector<std::uint8_t> keep(bits.size());
    for (std::size_t i = 0; i < bits.size(); ++i) {
      bits[i] = (i % std::size_t(c.s) == 0 || bits[i] < 0.6) ? 1.0 : 0.0;
      keep[i] = bits[i] != 0;
    }
    const fusor::array<bool, B> mask = fusor::cast<bool>(test::on<B>(keep, extents{c.batch, c.l, c.s}));
    const D additive = test::on<B>(add, extents{c.batch, c.l, c.s});
    CHECK(max_rel(hv(D(F::scaled_dot_product_attention(q, k, v, mask, {.scale = 0.7}))),
                  direct_attention(c.batch, c.l, c.s, c.e, c.ev, hv(q), hv(k), hv(v), false, bits, true, 0.7)) <= 1e-14);
    CHECK(max_rel(hv(D(F::scaled_dot_product_attention(q, k, v, additive, {.causal = true, .scale = -1.5}))),
                  direct_attention(c.batch, c.l, c.s, c.e, c.ev, hv(q), hv(k), hv(v), true, add, false, -1.5)) <= 1e-14);
    // variables: the same values, and a gradient of the input's shape (also for an empty batch)
    params_t p;
    p.emplace("q", q.copy());
    p.emplace("k", k.copy());
    p.emplace("v", v.copy());
    const auto [value, grads] = ad::value_and_grad([&](const auto& a) {
      return sum(square(F::scaled_dot_product_attention(a.at("q"), a.at("k"), a.at("v"), mask, {.causal = true})));
    })(p);
    const D y = F::scaled_dot_product_attention(q, k, v, mask, {.causal = true});
    CHECK(double(value) == doctest::Approx(double(fusor::sum(y * y))).epsilon(1e-14));
    CHECK(grads.at("k").shape() == k.shape());
  }
  // batch axes broadcast (q (2, 3, L, E) against k and v (3, S, E)), and a lazy expression as q
  const D q = dvals(2 * 3 * 4 * 3, -1, 1, 6, extents{2, 3, 4, 3}), k = dvals(3 * 5 * 3, -1, 1, 7, extents{3, 5, 3});
  const D v = dvals(3 * 5 * 2, -1, 1, 8, extents{3, 5, 2});
  const D kb = fusor::broadcast_to(k, extents{2, 3, 5, 3}).copy(), vb = fusor::broadcast_to(v, extents{2, 3, 5, 2}).copy();
  CHECK(max_rel(hv(D(F::scaled_dot_product_attention(q * 2.0, k, v))),
                direct_attention(6, 4, 5, 3, 2, hv(D(q * 2.0)), hv(kb), hv(vb), false, {}, false, 1 / std::sqrt(3.0))) <= 1e-14);
}

TEST_CASE("attention gradients by central differences (gradcheck, reverse mode): q, k, v, masks, multi-head weights") {
  const D q = dvals(2 * 4 * 3, -1, 1, 10, extents{2, 4, 3}), k = dvals(2 * 5 * 3, -1, 1, 11, extents{2, 5, 3});
  const D v = dvals(2 * 5 * 2, -1, 1, 12, extents{2, 5, 2}), r = dvals(2 * 4 * 2, -1, 1, 13, extents{2, 4, 2});
  const D add = dvals(4 * 5, -1, 1, 14, extents{4, 5});
  const ad::gradcheck_options go{.directions = 6};
  const nn::attention_options causal{.causal = true};
  const auto gq = ad::gradcheck<ad::gradcheck_mode::reverse>([&](const auto& x) { return sum(F::scaled_dot_product_attention(x, k, v, causal) * r); }, q, go);
  const auto gk = ad::gradcheck<ad::gradcheck_mode::reverse>([&](const auto& x) { return sum(F::scaled_dot_product_attention(q, x, v, add) * r); }, k, go);
  const auto gv = ad::gradcheck<ad::gradcheck_mode::reverse>([&](const auto& x) { return sum(square(F::scaled_dot_product_attention(q, k, x))); }, v, go);
  CHECK_MESSAGE(gq.passed, gq.report());
  CHECK_MESSAGE(gk.passed, gk.report());
  CHECK_MESSAGE(gv.passed, gv.report());
  // multi-head: the packed input projection and the input, self-attention (one GEMM for q, k, v)
  const D x = dvals(2 * 3 * 6, -1, 1, 15, extents{2, 3, 6}), wi = dvals(18 * 6, -0.5, 0.5, 16, extents{18, 6});
  const D bi = dvals(18, -0.5, 0.5, 17, extents{18}), wo = dvals(36, -0.5, 0.5, 18, extents{6, 6}), bo = dvals(6, -0.5, 0.5, 19, extents{6});
  const auto gw = ad::gradcheck<ad::gradcheck_mode::reverse>(
      [&](const auto& p) { return sum(square(F::multi_head_attention(x, x, x, 3, p, bi, wo, bo, causal))); }, wi, go);
  const auto gx = ad::gradcheck<ad::gradcheck_mode::reverse>(
      [&](const auto& p) { return sum(square(F::multi_head_attention(p, p, p, 2, wi, bi, wo, bo))); }, x, go);
  CHECK_MESSAGE(gw.passed, gw.report());
  CHECK_MESSAGE(gx.passed, gx.report());
}

TEST_CASE("attention against PyTorch's: definition (a*), nn.MultiheadAttention (m*), nn.TransformerEncoderLayer (e*), nn.TransformerDecoderLayer (d*) (tests/data/attention)") {
  const std::filesystem::path dir = test::data_dir() / "attention";
  auto load = [&](const std::string& name) { return fusor::to<B>(fusor::load_npy<double, fusor::cpu>(dir / (name + ".npy"))); };
  auto load_mask = [&](const std::string& name) { return fusor::to<B>(fusor::load_npy<bool, fusor::cpu>(dir / (name + ".npy"))); };
  const double tol = 1e-12;
  SUBCASE("scaled_dot_product_attention") {
    for (const std::string c : {"a1", "a2", "a3", "a4"}) {
      CAPTURE(c);
      const D q = load(c + "_q"), k = load(c + "_k"), v = load(c + "_v"), r = load(c + "_r");
      params_t p;
      p.emplace("q", q.copy());
      p.emplace("k", k.copy());
      p.emplace("v", v.copy());
      const auto run = [&](const auto& a, const auto& b, const auto& cc) {
        if (c == "a3") return D(F::scaled_dot_product_attention(a, b, cc, load_mask("a3_mask")));
        if (c == "a4") return D(F::scaled_dot_product_attention(a, b, cc, load("a4_mask"), {.scale = 0.3}));
        return D(F::scaled_dot_product_attention(a, b, cc, {.causal = c == "a2"}));
      };
      CHECK(max_rel(hv(run(q, k, v)), hv(load(c + "_y"))) <= tol);
      const auto [value, grads] = ad::value_and_grad([&](const auto& a) {
        const fusor::array<bool, B> m3 = c == "a3" ? load_mask("a3_mask") : fusor::array<bool, B>(extents{1});
        const D m4 = c == "a4" ? load("a4_mask") : D(extents{1});
        const auto y = [&] {
          if (c == "a3") return F::scaled_dot_product_attention(a.at("q"), a.at("k"), a.at("v"), m3);
          if (c == "a4") return F::scaled_dot_product_attention(a.at("q"), a.at("k"), a.at("v"), m4, {.scale = 0.3});
          return F::scaled_dot_product_attention(a.at("q"), a.at("k"), a.at("v"), {.causal = c == "a2"});
        }();
        return sum(y * r);
      })(p);
      for (const char* n : {"q", "k", "v"}) CHECK(max_rel(hv(grads.at(n)), hv(load(c + "_d" + n))) <= tol);
    }
  }
  const std::vector<std::string> mha_params{"in_proj_weight", "in_proj_bias", "out_proj_weight", "out_proj_bias"};
  SUBCASE("multihead_attention") {
    struct fixture {
      std::string name;
      index_t embed, heads;
      bool cross, causal;
    };
    for (const fixture& c : {fixture{"m1", 8, 2, false, false}, fixture{"m2", 8, 4, true, false}, fixture{"m3", 6, 3, false, true}}) {
      CAPTURE(c.name);
      nn::multihead_attention layer(c.embed, c.heads, {.causal = c.causal});
      const auto specs = layer.parameters();
      params_t p;
      for (std::size_t i = 0; i < specs.size(); ++i) {
        CHECK(specs[i].name == (i < 2 ? mha_params[i] : (i == 2 ? "out_proj.weight" : "out_proj.bias")));
        p.emplace(specs[i].name, load(c.name + "_" + mha_params[i]));
      }
      const D r = load(c.name + "_r");
      if (!c.cross) p.emplace("x", load(c.name + "_x"));
      else {
        p.emplace("q", load(c.name + "_q"));
        p.emplace("kv", load(c.name + "_kv"));
      }
      const fusor::array<bool, B> mask = c.cross ? load_mask("m2_mask") : fusor::array<bool, B>(extents{1});
      const auto forward = [&](const auto& a) {
        const auto get = [&](std::size_t i) -> const auto& { return a.at(specs[i].name); };
        if (c.cross)
          return F::multi_head_attention(a.at("q"), a.at("kv"), a.at("kv"), c.heads, get(0), get(1), get(2), get(3), mask);
        return layer(a.at("x"), get);
      };
      CHECK(max_rel(hv(D(forward(p))), hv(load(c.name + "_y"))) <= tol);
      const auto [value, grads] = ad::value_and_grad([&](const auto& a) { return sum(forward(a) * r); })(p);
      for (std::size_t i = 0; i < specs.size(); ++i) CHECK(max_rel(hv(grads.at(specs[i].name)), hv(load(c.name + "_d" + mha_params[i]))) <= tol);
      if (c.cross) {
        CHECK(max_rel(hv(grads.at("q")), hv(load(c.name + "_dq"))) <= tol);
        CHECK(max_rel(hv(grads.at("kv")), hv(load(c.name + "_dkv"))) <= tol);
        // the layer's cross-attention form: the same, without the mask
        const auto get = [&](std::size_t i) -> const D& { return p.at(specs[i].name); };
        CHECK(max_rel(hv(D(layer.attend(p.at("q"), p.at("kv"), p.at("kv"), get))),
                      hv(D(F::multi_head_attention(p.at("q"), p.at("kv"), p.at("kv"), c.heads, get(0), get(1), get(2), get(3))))) <= 1e-15);
      } else {
        CHECK(max_rel(hv(grads.at("x")), hv(load(c.name + "_dx"))) <= tol);
      }
    }
  }
  SUBCASE("transformer_encoder_layer") {
    struct fixture {
      std::string name;
      index_t d, heads, ff;
      nn::transformer_options o;
    };
    for (const fixture& c : {fixture{"e1", 8, 2, 16, {.causal = true}},
                             fixture{"e2", 8, 4, 12, {.norm_first = false, .activation = nn::transformer_activation::relu}}}) {
      CAPTURE(c.name);
      auto model = nn::sequential<double, B>(nn::transformer_encoder_layer(c.d, c.heads, c.ff, c.o));
      params_t p;
      for (const auto& s : model.parameter_specs()) {
        std::string file = s.name.substr(2);
        std::replace(file.begin(), file.end(), '.', '_');
        const D value = load(c.name + "_" + file);
        CHECK(value.shape() == s.shape);
        p.emplace(s.name, value.copy());
      }
      const D x = load(c.name + "_x"), r = load(c.name + "_r");
      CHECK(max_rel(hv(model(p, x)), hv(load(c.name + "_y"))) <= tol);
      p.emplace("x", x.copy());
      const auto [value, grads] = ad::value_and_grad([&](const auto& a) { return sum(model(a, a.at("x")) * r); })(p);
      CHECK(max_rel(hv(grads.at("x")), hv(load(c.name + "_dx"))) <= tol);
      for (const auto& s : model.parameter_specs()) {
        std::string file = s.name.substr(2);
        std::replace(file.begin(), file.end(), '.', '_');
        CAPTURE(s.name);
        CHECK(max_rel(hv(grads.at(s.name)), hv(load(c.name + "_d" + file))) <= tol);
      }
    }
  }
  SUBCASE("transformer_decoder_layer") {
    struct fixture {
      std::string name;
      index_t d, heads, ff;
      nn::transformer_options o;
      bool padded;
    };
    for (const fixture& c : {fixture{"d1", 8, 2, 16, {.causal = true}, true},
                             fixture{"d2", 8, 4, 12, {.norm_first = false, .activation = nn::transformer_activation::relu}, false}}) {
      CAPTURE(c.name);
      nn::transformer_decoder_layer layer(c.d, c.heads, c.ff, c.o);
      const auto specs = layer.parameters();
      REQUIRE(specs.size() == 18);
      params_t p;
      for (const auto& s : specs) {
        std::string file = s.name;
        std::replace(file.begin(), file.end(), '.', '_');
        const D value = load(c.name + "_" + file);
        CHECK(value.shape() == s.shape);
        p.emplace(s.name, value.copy());
      }
      p.emplace("tgt", load(c.name + "_tgt"));
      p.emplace("memory", load(c.name + "_memory"));
      const D r = load(c.name + "_r");
      // PyTorch's memory_key_padding_mask (true: padding) as the mask attention takes
      const fusor::array<bool, B> keep = c.padded ? F::key_padding_mask(load_mask(c.name + "_pad")) : fusor::array<bool, B>(extents{1});
      const auto forward = [&](const auto& a) {
        const auto get = [&](std::size_t i) -> const auto& { return a.at(specs[i].name); };
        if (c.padded) return layer(a.at("tgt"), a.at("memory"), nn::no_mask{}, keep, get);
        return layer(a.at("tgt"), a.at("memory"), get);
      };
      CHECK(max_rel(hv(D(forward(p))), hv(load(c.name + "_y"))) <= tol);
      const auto [value, grads] = ad::value_and_grad([&](const auto& a) { return sum(forward(a) * r); })(p);
      CHECK(max_rel(hv(grads.at("tgt")), hv(load(c.name + "_dtgt"))) <= tol);
      CHECK(max_rel(hv(grads.at("memory")), hv(load(c.name + "_dmemory"))) <= tol);
      for (const auto& s : specs) {
        std::string file = s.name;
        std::replace(file.begin(), file.end(), '.', '_');
        CAPTURE(s.name);
        CHECK(max_rel(hv(grads.at(s.name)), hv(load(c.name + "_d" + file))) <= tol);
      }
      // bad input before any work: a memory of other features, a target of other batch, a mask of another rank
      const auto get = [&](std::size_t i) -> const D& { return p.at(specs[i].name); };
      const D wide = fusor::zeros<double, B>(extents{c.d + 1});
      CHECK_THROWS_AS(layer(p.at("tgt"), wide, get), fusor::shape_error);
      CHECK_THROWS_AS(F::key_padding_mask(keep), fusor::shape_error);
    }
  }
}

TEST_CASE("a causal transformer in a model: later positions never reach earlier outputs; replay, dropout, training") {
  auto model = nn::sequential<double, B>(nn::embedding(13, 8), nn::positional_embedding(12, 8),
                                         nn::transformer_encoder_layer(8, 2, 16, {.causal = true}),
                                         nn::transformer_encoder_layer(8, 4, 8, {.causal = true}), nn::layer_norm(8), nn::linear(8, 13));
  params_t params = model.init(5);
  // PyTorch's initialisation: Xavier-uniform packed projection (fans 8 and 24), zero biases
  const auto w = hv(params.at("2.self_attn.in_proj_weight"));
  CHECK(*std::max_element(w.begin(), w.end()) <= std::sqrt(6.0 / 32.0));
  CHECK(hv(params.at("3.self_attn.in_proj_bias")) == std::vector<double>(24, 0.0));
  std::vector<std::int64_t> host(3 * 10);
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = std::int64_t((i * 7 + 3) % 13);
  const fusor::array<std::int64_t, B> tokens = test::on<B>(host, extents{3, 10});
  const D y = model(params, tokens);
  CHECK(y.shape() == extents{3, 10, 13});
  // causality: changing token 6 of each row changes no output before position 6
  for (std::size_t row = 0; row < 3; ++row) host[row * 10 + 6] = (host[row * 10 + 6] + 5) % 13;
  const D y2 = model(params, test::on<B>(host, extents{3, 10}));
  const auto a = hv(y), b = hv(y2);
  bool before_same = true, after_differs = false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::size_t pos = (i / 13) % 10;
    if (pos < 6) before_same = before_same && a[i] == b[i];
    else after_differs = after_differs || a[i] != b[i];
  }
  CHECK(before_same);
  CHECK(after_differs);
  // a next-token loss: recorded once and replayed, the bits of value_and_grad; training lowers it
  const fusor::array<std::int64_t, B> inputs = tokens(fusor::range(), fusor::range(0, 9)).copy();
  const fusor::array<std::int64_t, B> targets = tokens(fusor::range(), fusor::range(1, 10)).copy();
  auto loss = [&](const auto& p, const auto& xs, const auto& ys) { return nn::cross_entropy(model(p, xs), ys); };
  const auto [value, grads] = ad::value_and_grad(loss)(params, inputs, targets);
  CHECK(grads.size() == model.parameter_specs().size());
  auto compiled = ad::compile(loss, params, inputs, targets);
  for (int k = 0; k < 2; ++k) {
    auto [v, g] = compiled(params, inputs, targets);
    CHECK(v == value);
    for (const auto& [name, gr] : grads) CHECK(hv(g.at(name)) == hv(gr));
  }
  ad::optim::adam<double, B> opt({.lr = 1e-2});
  double last = double(value);
  for (int step = 0; step < 40; ++step) {
    auto [v, g] = compiled(params, inputs, targets);
    last = double(v);
    opt.step(params, g);
  }
  CHECK(last < 0.5 * double(value));
  // dropout on the weights and the residual branches: a seeded, repeatable draw while training,
  // the identity in evaluation; its fresh masks cannot be replayed
  auto dropped = nn::sequential<double, B>(nn::transformer_encoder_layer(8, 2, 16, {.dropout = 0.3, .seed = 9}));
  const params_t dp = dropped.init(1);
  const D x = dvals(2 * 5 * 8, -1, 1, 20, extents{2, 5, 8});
  const auto first = hv(dropped(dp, x)), second = hv(dropped(dp, x));
  CHECK(first != second);  // the next masks
  auto again = nn::sequential<double, B>(nn::transformer_encoder_layer(8, 2, 16, {.dropout = 0.3, .seed = 9}));
  CHECK(hv(again(dp, x)) == first);  // the same seed and place: the same masks
  dropped.eval();
  auto plain = nn::sequential<double, B>(nn::transformer_encoder_layer(8, 2, 16));
  CHECK(max_rel(hv(dropped(dp, x)), hv(plain(dp, x))) <= 1e-15);
  dropped.train();
  CHECK_THROWS_AS(ad::compile([&](const auto& p, const auto& xs) { return sum(dropped(p, xs)); }, dp, x), ad::tape_error);
  // attention dropout through the functional form: p = 1 drops every weight
  fusor::random::generator rng(3);
  const D q = dvals(2 * 4 * 3, -1, 1, 21, extents{2, 4, 3});
  CHECK(hv(D(F::scaled_dot_product_attention(q, q, q, {.dropout = 1.0, .rng = &rng}))) == std::vector<double>(24, 0.0));
  CHECK(max_rel(hv(D(F::scaled_dot_product_attention(q, q, q, {.dropout = 1.0, .rng = &rng, .training = false}))),
                hv(D(F::scaled_dot_product_attention(q, q, q)))) == 0.0);
}

TEST_CASE("attention bad input: typed errors naming what was expected and given, before any work") {
  const D q = dvals(2 * 4 * 3, -1, 1, 30, extents{2, 4, 3}), k = dvals(2 * 5 * 3, -1, 1, 31, extents{2, 5, 3});
  const D v = dvals(2 * 5 * 2, -1, 1, 32, extents{2, 5, 2});
  CHECK_THROWS_WITH_AS(F::scaled_dot_product_attention(q, dvals(2 * 5 * 4, -1, 1, 33, extents{2, 5, 4}), v),
                       doctest::Contains("the query's and the key's last axes (E) equal, got query (2, 4, 3), key (2, 5, 4)"), fusor::shape_error);
  CHECK_THROWS_WITH_AS(F::scaled_dot_product_attention(q, k, dvals(2 * 6 * 2, -1, 1, 34, extents{2, 6, 2})),
                       doctest::Contains("second-to-last axes (S) equal"), fusor::shape_error);
  CHECK_THROWS_WITH_AS(F::scaled_dot_product_attention(dvals(3, -1, 1, 35, extents{3}), k, v), doctest::Contains("of rank >= 2"),
                       fusor::shape_error);
  CHECK_THROWS_WITH_AS(F::scaled_dot_product_attention(dvals(3 * 4 * 3, -1, 1, 36, extents{3, 4, 3}), k, v),
                       doctest::Contains("batch axes that broadcast"), fusor::shape_error);
  CHECK_THROWS_WITH_AS(F::scaled_dot_product_attention(q, k, v, D(extents{4, 4})),
                       doctest::Contains("a mask that broadcasts to the scores' shape (2, 4, 5), got (4, 4)"), fusor::shape_error);
  CHECK_THROWS_WITH_AS(F::scaled_dot_product_attention(q, k, v, {.dropout = 1.5}), doctest::Contains("0 <= dropout <= 1, got 1.5"),
                       fusor::value_error);
  CHECK_THROWS_WITH_AS(F::scaled_dot_product_attention(q, k, v, {.dropout = 0.1}), doctest::Contains("needs a generator"),
                       fusor::value_error);
  CHECK_THROWS_WITH_AS(F::scaled_dot_product_attention(q, k, v, {.scale = std::numeric_limits<double>::infinity()}),
                       doctest::Contains("a finite scale"), fusor::value_error);
  // multi-head: heads, parameter shapes, inputs
  CHECK_THROWS_WITH_AS(nn::multihead_attention(8, 3), doctest::Contains("embed_dim >= 1 divisible by num_heads >= 1, got embed_dim 8 and 3 heads"),
                       fusor::value_error);
  CHECK_THROWS_AS(nn::transformer_encoder_layer(8, 2, 0), fusor::value_error);
  CHECK_THROWS_AS(nn::transformer_encoder_layer(8, 2, 16, {.eps = 0}), fusor::value_error);
  CHECK_THROWS_AS(nn::multihead_attention(8, 2, {.dropout = -0.1}), fusor::value_error);
  const D x = dvals(2 * 3 * 6, -1, 1, 37, extents{2, 3, 6}), wi = dvals(18 * 6, -1, 1, 38, extents{18, 6}), bi = dvals(18, -1, 1, 39, extents{18});
  const D wo = dvals(36, -1, 1, 40, extents{6, 6}), bo = dvals(6, -1, 1, 41, extents{6});
  CHECK_THROWS_WITH_AS(F::multi_head_attention(x, x, x, 4, wi, bi, wo, bo), doctest::Contains("divisible by num_heads"), fusor::value_error);
  CHECK_THROWS_WITH_AS(F::multi_head_attention(x, x, x, 2, wi, bi, wo, bi), doctest::Contains("out_proj_bias of shape (6,), got (18,)"),
                       fusor::shape_error);
  CHECK_THROWS_WITH_AS(F::multi_head_attention(x, x, x, 2, wo, bi, wo, bo), doctest::Contains("in_proj_weight of shape (18, 6), got (6, 6)"),
                       fusor::shape_error);
  const D x4 = dvals(2 * 3 * 4, -1, 1, 42, extents{2, 3, 4}), xb = dvals(3 * 3 * 6, -1, 1, 43, extents{3, 3, 6});
  CHECK_THROWS_WITH_AS(F::multi_head_attention(x, x4, x4, 2, wi, bi, wo, bo), doctest::Contains("with E = 6, got query (2, 3, 6), key (2, 3, 4)"),
                       fusor::shape_error);
  CHECK_THROWS_AS(F::multi_head_attention(x, xb, xb, 2, wi, bi, wo, bo), fusor::shape_error);
  // the mask and the options are checked before the projections run (nothing recorded)
  CHECK_THROWS_WITH_AS(F::multi_head_attention(x, x, x, 2, wi, bi, wo, bo, D(extents{4, 4})),
                       doctest::Contains("a mask that broadcasts to the scores' shape (2, 2, 3, 3), got (4, 4)"), fusor::shape_error);
  CHECK_THROWS_WITH_AS(F::multi_head_attention(x, x, x, 2, wi, bi, wo, bo, {.dropout = 0.5}), doctest::Contains("needs a generator"),
                       fusor::value_error);
  {
    ad::tape t;
    const ad::use_tape on(t);
    const auto xv = ad::param(t, x);
    const std::size_t before = t.size();
    CHECK_THROWS_AS(F::multi_head_attention(xv, xv, xv, 2, wi, bi, wo, bo, D(extents{4, 4})), fusor::shape_error);
    CHECK(t.size() == before);
  }
  CHECK_THROWS_WITH_AS((nn::sequential<double, B>(nn::transformer_encoder_layer(6, 2, 8)))(nn::sequential<double, B>(nn::transformer_encoder_layer(6, 2, 8)).init(1), dvals(2 * 3 * 4 * 6, -1, 1, 45, extents{2, 3, 4, 6})),
                       doctest::Contains("expects inputs (N, L, 6) or (L, 6), got shape (2, 3, 4, 6)"), fusor::shape_error);
  // a model: features that do not chain, a sequence longer than the position table
  CHECK_THROWS_AS((nn::sequential<double, B>(nn::linear(4, 6), nn::transformer_encoder_layer(8, 2, 16))), fusor::shape_error);
  auto model = nn::sequential<double, B>(nn::positional_embedding(3, 6));
  const params_t p = model.init(1);
  CHECK_THROWS_WITH_AS(model(p, x4), doctest::Contains("inputs (..., L, 6) with L <= 3, got shape (2, 3, 4)"), fusor::shape_error);
  CHECK_THROWS_WITH_AS(model(p, dvals(4 * 6, -1, 1, 44, extents{4, 6})), doctest::Contains("L <= 3, got shape (4, 6)"), fusor::shape_error);
  CHECK(max_rel(hv(model(p, x)), hv(D(x + p.at("0.weight")))) == 0.0);
}

}  // namespace attentionbody
