// The bodies of the convolutional layers (nn::functional::conv1d/2d/3d and the nn::conv layers,
// pooling, adaptive pooling and interpolation, group/instance/RMS normalisation, nn::flatten) written once and instantiated per backend: tests/test_nn_conv.cpp runs them on cpu, tests/test_nn_conv_cuda.cu
// on cuda. References: direct loops in double over the definition, central differences
// (gradcheck), and PyTorch's own outputs and gradients (tests/data/conv, make_conv_fixtures.py).
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
#include <map>
#include <string>
#include <vector>

namespace convbody {

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

/// Two replays of `compiled` (ad::compile of loss) give value_and_grad's bits.
template <class C, class Loss, class... A>
void check_replays(C& compiled, const Loss& loss, const params_t& params, const A&... args) {
  const auto [value, grads] = ad::value_and_grad(loss)(params, args...);
  for (int k = 0; k < 2; ++k) {
    auto [v, g] = compiled(params, args...);
    CHECK(v == value);
    for (const auto& [name, gr] : grads) CHECK(hv(g.at(name)) == hv(gr));
  }
}

/// The definition, in double: out[n, o, p] = bias[o] + sum over the group's channels c and the
/// kernel positions k of w[o, c, k] x[n, g C/G + c, p stride + k dilation - before] (zero outside).
/// Shapes are batched, (N, C, *in) and (O, C / G, *kernel); `before` the zeros before each axis.
struct conv_case {
  extents x, w;
  extents stride, dilation, before, out;  // per spatial axis
  index_t groups = 1;
};
inline std::vector<double> direct_conv(const conv_case& c, const std::vector<double>& x, const std::vector<double>& w,
                                       const std::vector<double>* bias) {
  const int d = c.x.size() - 2;
  const index_t N = c.x[0], C = c.x[1], O = c.w[0], Cg = c.w[1], Og = O / c.groups;
  index_t in[3] = {1, 1, 1}, ks[3] = {1, 1, 1}, out[3] = {1, 1, 1}, st[3] = {1, 1, 1}, dl[3] = {1, 1, 1}, bf[3] = {0, 0, 0};
  for (int i = 0; i < d; ++i) {
    in[i] = c.x[2 + i];
    ks[i] = c.w[2 + i];
    out[i] = c.out[i];
    st[i] = c.stride[i];
    dl[i] = c.dilation[i];
    bf[i] = c.before[i];
  }
  std::vector<double> y(std::size_t(N * O * out[0] * out[1] * out[2]));
  for (index_t n = 0; n < N; ++n)
    for (index_t o = 0; o < O; ++o)
      for (index_t p0 = 0; p0 < out[0]; ++p0)
        for (index_t p1 = 0; p1 < out[1]; ++p1)
          for (index_t p2 = 0; p2 < out[2]; ++p2) {
            double acc = bias ? (*bias)[std::size_t(o)] : 0.0;
            for (index_t c2 = 0; c2 < Cg; ++c2) {
              const index_t ch = (o / Og) * Cg + c2;
              for (index_t k0 = 0; k0 < ks[0]; ++k0)
                for (index_t k1 = 0; k1 < ks[1]; ++k1)
                  for (index_t k2 = 0; k2 < ks[2]; ++k2) {
                    const index_t i0 = p0 * st[0] + k0 * dl[0] - bf[0], i1 = p1 * st[1] + k1 * dl[1] - bf[1],
                                  i2 = p2 * st[2] + k2 * dl[2] - bf[2];
                    if (i0 < 0 || i1 < 0 || i2 < 0 || i0 >= in[0] || i1 >= in[1] || i2 >= in[2]) continue;
                    acc += w[std::size_t((((o * Cg + c2) * ks[0] + k0) * ks[1] + k1) * ks[2] + k2)] *
                           x[std::size_t((((n * C + ch) * in[0] + i0) * in[1] + i1) * in[2] + i2)];
                  }
            }
            y[std::size_t((((n * O + o) * out[0] + p0) * out[1] + p1) * out[2] + p2)] = acc;
          }
  return y;
}

/// The same call through the rank's own function (conv1d, conv2d, conv3d) and the generic one.
template <class... A>
auto conv_by_rank(int dims, const A&... a) {
  D r1 = F::conv(a...);
  D r2 = dims == 1 ? D(F::conv1d(a...)) : dims == 2 ? D(F::conv2d(a...)) : D(F::conv3d(a...));
  CHECK(hv(r1) == hv(r2));
  return r1;
}

TEST_CASE("conv1d/2d/3d against the definition in double: strides, padding, dilation, groups, 'same', odd shapes") {
  struct spec {
    extents x, w;
    nn::conv_options o;
  };
  const std::vector<spec> specs{
      {{2, 3, 13}, {4, 3, 3}, {.stride = {2}, .padding = {1}}},
      {{1, 4, 9}, {6, 2, 4}, {.dilation = {2}, .groups = 2, .same = true}},
      {{3, 2, 7, 5}, {5, 2, 3, 2}, {.stride = {1, 2}, .padding = {2, 0}, .dilation = {2, 1}}},
      {{2, 6, 9, 8}, {6, 1, 3, 3}, {.padding = {1}, .groups = 6}},  // depthwise
      {{1, 3, 17, 9}, {4, 3, 1, 1}, {}},                             // 1 x 1
      {{2, 2, 5, 4}, {3, 2, 5, 4}, {}},                              // the kernel covers the input: one output
      {{1, 2, 6, 5, 7}, {4, 2, 2, 3, 3}, {.stride = {2, 1, 3}, .padding = {1, 0, 2}}},
      {{2, 4, 5, 6, 4}, {2, 2, 3, 2, 2}, {.dilation = {1, 2, 1}, .groups = 2, .same = true}},
  };
  std::uint64_t seed = 1;
  for (const spec& s : specs) {
    CAPTURE(s.x);
    CAPTURE(s.w);
    const int d = s.w.size() - 2;
    const D x = dvals(s.x.numel(), -1, 1, seed++, s.x), w = dvals(s.w.numel(), -1, 1, seed++, s.w);
    const D b = dvals(s.w[0], -1, 1, seed++, extents{s.w[0]});
    conv_case c{s.x, s.w, {}, {}, {}, {}, s.o.groups};
    for (int i = 0; i < d; ++i) {
      const auto at = [&](const extents& v) { return v.size() == 1 ? v[0] : v[i]; };
      const index_t reach = at(s.o.dilation) * (s.w[2 + i] - 1) + 1;
      c.stride.push_back(s.o.same ? 1 : at(s.o.stride));
      c.dilation.push_back(at(s.o.dilation));
      c.before.push_back(s.o.same ? (reach - 1) / 2 : at(s.o.padding));
      const index_t padded = s.o.same ? s.x[2 + i] + reach - 1 : s.x[2 + i] + 2 * at(s.o.padding);
      c.out.push_back((padded - reach) / c.stride.back() + 1);
    }
    const auto hb = hv(b);
    const auto want = direct_conv(c, hv(x), hv(w), &hb), want_plain = direct_conv(c, hv(x), hv(w), nullptr);
    const D y = conv_by_rank(d, x, w, b, s.o);
    extents shape{s.x[0], s.w[0]};
    for (index_t e : c.out) shape.push_back(e);
    CHECK(y.shape() == shape);
    CHECK(max_rel(hv(y), want) <= 1e-13);
    CHECK(max_rel(hv(conv_by_rank(d, x, w, s.o)), want_plain) <= 1e-13);
    // float32: within float's accumulation of the same sums
    const fusor::array<float, B> yf = F::conv(fusor::cast<float>(x), fusor::cast<float>(w), fusor::cast<float>(b), s.o);
    std::vector<double> yfd;
    for (float v : test::host_values(yf)) yfd.push_back(v);
    CHECK(max_rel(yfd, want) <= 1e-5);
    // an unbatched input (C, *in) is batch item 0 without its axis; a strided input is read in place
    extents one = s.x;
    one[0] = 1;
    const D x0 = x(fusor::range(0, 1));
    extents unbatched;
    for (int k = 1; k < s.x.size(); ++k) unbatched.push_back(s.x[k]);
    const D yu = F::conv(fusor::reshape(x0, unbatched), w, b, s.o);
    CHECK(yu.shape() == fusor::ext::drop_axis(shape, 0));
    CHECK(max_rel(hv(yu), hv(D(y(fusor::range(0, 1))))) <= 1e-14);  // (another GEMM width: BLAS may sum in another order)
  }
}

TEST_CASE("conv: a transposed (strided) input and weight read where they lie") {
  const D xt = dvals(2 * 3 * 6 * 5, -1, 1, 40, extents{2, 3, 5, 6});
  const D wt = dvals(4 * 3 * 3 * 2, -1, 1, 41, extents{4, 3, 2, 3});
  const auto x = fusor::swapaxes(xt.view(), 2, 3);  // (2, 3, 6, 5), not contiguous
  const auto w = fusor::swapaxes(wt.view(), 2, 3);  // (4, 3, 3, 2)
  const nn::conv_options o{.stride = {2}, .padding = {1}};
  CHECK(hv(D(F::conv2d(x, w, o))) == hv(D(F::conv2d(D(x), D(w), o))));
  // and as variables: the gradients land on the transposed layouts
  auto loss = [&](const auto& p) { return sum(square(F::conv2d(ad::transpose(p.at("x"), {0, 1, 3, 2}), ad::transpose(p.at("w"), {0, 1, 3, 2}), o))); };
  params_t p;
  p.emplace("x", xt.copy());
  p.emplace("w", wt.copy());
  const auto [value, grads] = ad::value_and_grad(loss)(p);
  auto flat = [&](const auto& xv, const auto& wv) { return sum(square(F::conv2d(xv, wv, o))); };
  params_t q;
  q.emplace("x", D(x));
  q.emplace("w", D(w));
  const auto [value2, grads2] = ad::value_and_grad([&](const auto& r) { return flat(r.at("x"), r.at("w")); })(q);
  CHECK(double(value) == doctest::Approx(double(value2)).epsilon(1e-14));
  CHECK(hv(grads.at("x")) == hv(D(fusor::swapaxes(grads2.at("x").view(), 2, 3))));
  CHECK(hv(grads.at("w")) == hv(D(fusor::swapaxes(grads2.at("w").view(), 2, 3))));
}

TEST_CASE("conv gradients: input, weight and bias by central differences (gradcheck, reverse mode)") {
  const nn::conv_options o2{.stride = {2, 1}, .padding = {1, 2}, .dilation = {1, 2}, .groups = 2};
  const D x = dvals(2 * 4 * 7 * 6, -1, 1, 60, extents{2, 4, 7, 6}), w = dvals(6 * 2 * 3 * 3, -1, 1, 61, extents{6, 2, 3, 3});
  const D b = dvals(6, -1, 1, 62, extents{6}), r = dvals(2 * 6 * 4 * 6, -1, 1, 63, extents{2, 6, 4, 6});
  const ad::gradcheck_options go{.directions = 6};
  const auto gx = ad::gradcheck<ad::gradcheck_mode::reverse>([&](const auto& v) { return sum(F::conv2d(v, w, b, o2) * r); }, x, go);
  const auto gw = ad::gradcheck<ad::gradcheck_mode::reverse>([&](const auto& v) { return sum(F::conv2d(x, v, b, o2) * r); }, w, go);
  const auto gb = ad::gradcheck<ad::gradcheck_mode::reverse>([&](const auto& v) { return sum(F::conv2d(x, w, v, o2) * r); }, b, go);
  CHECK_MESSAGE(gx.passed, gx.report());
  CHECK_MESSAGE(gw.passed, gw.report());
  CHECK_MESSAGE(gb.passed, gb.report());
  // 1-d and 3-d, 'same' and a depthwise kernel: a nonlinear loss, every input at once
  const D x1 = dvals(2 * 3 * 9, -1, 1, 64, extents{2, 3, 9}), w1 = dvals(3 * 1 * 4, -1, 1, 65, extents{3, 1, 4});
  const auto g1 = ad::gradcheck<ad::gradcheck_mode::reverse>(
      [&](const auto& v) { return sum(square(F::conv1d(v, w1, {.groups = 3, .same = true}))); }, x1, go);
  CHECK_MESSAGE(g1.passed, g1.report());
  const D x3 = dvals(1 * 2 * 4 * 5 * 3, -1, 1, 66, extents{1, 2, 4, 5, 3}), w3 = dvals(2 * 2 * 2 * 2 * 2, -1, 1, 67, extents{2, 2, 2, 2, 2});
  const auto g3 = ad::gradcheck<ad::gradcheck_mode::reverse>(
      [&](const auto& v) { return sum(square(F::conv3d(x3, v, {.stride = {2, 1, 1}, .padding = {1}}))); }, w3, go);
  CHECK_MESSAGE(g3.passed, g3.report());
}

TEST_CASE("conv against PyTorch's conv1d/2d/3d: outputs and the three gradients (tests/data/conv)") {
  const std::filesystem::path dir = test::data_dir() / "conv";
  auto load = [&](const std::string& name) { return fusor::to<B>(fusor::load_npy<double, fusor::cpu>(dir / (name + ".npy"))); };
  struct fixture {
    std::string name;
    nn::conv_options o;
  };
  const std::vector<fixture> cases{
      {"c1", {.stride = {2}, .padding = {1}}},
      {"c2", {.stride = {2, 1}, .padding = {1, 2}, .dilation = {1, 2}, .groups = 2}},
      {"c2s", {.dilation = {1, 3}, .same = true}},
      {"c2d", {.padding = {1}, .groups = 4}},
      {"c3", {.stride = {1, 2, 1}, .padding = {0, 1, 1}}},
  };
  for (const fixture& c : cases) {
    CAPTURE(c.name);
    const D x = load(c.name + "_x"), w = load(c.name + "_w"), b = load(c.name + "_b"), r = load(c.name + "_r");
    CHECK(max_rel(hv(D(F::conv(x, w, b, c.o))), hv(load(c.name + "_y"))) <= 1e-13);
    params_t p;
    p.emplace("x", x.copy());
    p.emplace("w", w.copy());
    p.emplace("b", b.copy());
    const auto [value, grads] = ad::value_and_grad([&](const auto& q) { return sum(F::conv(q.at("x"), q.at("w"), q.at("b"), c.o) * r); })(p);
    CHECK(max_rel(hv(grads.at("x")), hv(load(c.name + "_dx"))) <= 1e-13);
    CHECK(max_rel(hv(grads.at("w")), hv(load(c.name + "_dw"))) <= 1e-13);
    CHECK(max_rel(hv(grads.at("b")), hv(load(c.name + "_db"))) <= 1e-13);
  }
  // PyTorch's unbatched input
  const D w = load("c2d_w"), b = load("c2d_b");
  CHECK(max_rel(hv(D(F::conv2d(load("c2d_x1"), w, b, {.padding = {1}, .groups = 4}))), hv(load("c2d_y1"))) <= 1e-13);
}

TEST_CASE("conv in float32 (the backend's convolution library where the build has one): outputs and both adjoints against double") {
  // float32 goes to conv_library<B> where it exists (oneDNN on the cpu), else to the GEMMs: either
  // way it must agree with the double computation (checked above against the definition and
  // PyTorch) to float's rounding of the same sums, on every geometry the library sees
  using F32 = fusor::array<float, B>;
  struct spec {
    extents x, w;
    nn::conv_options o;
  };
  auto host = [](const F32& a) {  // float32 results widened, to compare with the double ones
    std::vector<double> v;
    for (float e : test::host_values(a)) v.push_back(e);
    return v;
  };
  const std::vector<spec> specs{
      {{3, 5, 17}, {7, 5, 3}, {.stride = {2}, .padding = {1}}},
      {{2, 4, 9}, {6, 2, 4}, {.dilation = {2}, .groups = 2, .same = true}},  // even kernel: 'same' pads 3 before, 3 after
      {{2, 3, 8, 6}, {4, 3, 2, 2}, {.same = true}},                          // 0 before, 1 after
      {{3, 3, 7, 5}, {5, 3, 3, 2}, {.stride = {1, 2}, .padding = {2, 0}, .dilation = {2, 1}}},
      {{2, 16, 9, 8}, {16, 1, 3, 3}, {.padding = {1}, .groups = 16}},  // depthwise
      {{1, 17, 15, 9}, {33, 17, 1, 1}, {}},                             // 1 x 1, odd channels
      {{5, 32, 12, 12}, {64, 32, 3, 3}, {.padding = {1}}},              // the blocked kernels' channel multiples
      {{2, 2, 6, 5, 7}, {4, 2, 2, 3, 3}, {.stride = {2, 1, 3}, .padding = {1, 0, 2}}},
  };
  std::uint64_t seed = 300;
  for (const spec& s : specs) {
    CAPTURE(s.x);
    CAPTURE(s.w);
    const D x = dvals(s.x.numel(), -1, 1, seed++, s.x), w = dvals(s.w.numel(), -1, 1, seed++, s.w), b = dvals(s.w[0], -1, 1, seed++, extents{s.w[0]});
    const D y = F::conv(x, w, b, s.o);
    const D r = dvals(y.size(), -1, 1, seed++, y.shape());
    auto loss = [&](const auto& p, const auto& rr) { return sum(F::conv(p.at("x"), p.at("w"), p.at("b"), s.o) * rr); };
    params_t pd;
    pd.emplace("x", x.copy());
    pd.emplace("w", w.copy());
    pd.emplace("b", b.copy());
    const auto [vd, gd] = ad::value_and_grad(loss)(pd, r);
    nn::parameters<float, B> pf;
    for (const auto& [name, a] : pd) pf.emplace(name, F32(fusor::cast<float>(a)));
    const F32 rf = fusor::cast<float>(r);
    CHECK(max_rel(host(F32(F::conv(pf.at("x"), pf.at("w"), pf.at("b"), s.o))), hv(y)) <= 2e-6);
    const auto [vf, gf] = ad::value_and_grad(loss)(pf, rf);
    CHECK(double(vf) == doctest::Approx(double(vd)).epsilon(1e-4));
    for (const char* name : {"x", "w", "b"}) {
      INFO(name);
      CHECK(max_rel(host(gf.at(name)), hv(gd.at(name))) <= 2e-6);
    }
    // replayed: the recorded call's bits
    auto compiled = ad::compile(loss, pf, rf);
    for (int k = 0; k < 2; ++k) {
      auto [v2, g2] = compiled(pf, rf);
      CHECK(v2 == vf);
      for (const char* name : {"x", "w", "b"}) CHECK(test::host_values(g2.at(name)) == test::host_values(gf.at(name)));
    }
    // an unbatched input is item 0; a strided (transposed) input is read as its values
    extents unbatched;
    for (int k = 1; k < s.x.size(); ++k) unbatched.push_back(s.x[k]);
    const F32 x0 = fusor::reshape(F32(pf.at("x")(fusor::range(0, 1))), unbatched);
    const F32 y0 = F::conv(x0, pf.at("w"), pf.at("b"), s.o);
    CHECK(max_rel(host(y0), hv(D(y(fusor::range(0, 1))))) <= 2e-6);
  }
  // an empty batch, and a transposed input as an array and as a variable
  const F32 w = fusor::cast<float>(dvals(8 * 4 * 3 * 3, -1, 1, 350, extents{8, 4, 3, 3}));
  CHECK(F32(F::conv2d(F32(extents{0, 4, 6, 6}), w, {.padding = {1}})).shape() == extents{0, 8, 6, 6});
  const F32 xt = fusor::cast<float>(dvals(2 * 4 * 7 * 6, -1, 1, 351, extents{2, 4, 7, 6}));
  const auto xs = fusor::swapaxes(xt.view(), 2, 3);
  CHECK(test::host_values(F32(F::conv2d(xs, w, {.padding = {1}}))) == test::host_values(F32(F::conv2d(F32(xs), w, {.padding = {1}}))));
  nn::parameters<float, B> pt;
  pt.emplace("x", xt.copy());
  const auto [vt, gt] = ad::value_and_grad([&](const auto& q) { return sum(square(F::conv2d(ad::transpose(q.at("x"), {0, 1, 3, 2}), w, {.padding = {1}}))); })(pt);
  nn::parameters<float, B> pc;
  pc.emplace("x", F32(xs));
  const auto [vc, gc] = ad::value_and_grad([&](const auto& q) { return sum(square(F::conv2d(q.at("x"), w, {.padding = {1}}))); })(pc);
  CHECK(vt == vc);
  CHECK(test::host_values(gt.at("x")) == test::host_values(F32(fusor::swapaxes(gc.at("x").view(), 2, 3))));
  // a strided constant input under ad::compile is read at each replay, where it lies now
  F32 xr = xt.copy();
  auto lossr = [&](const auto& q) { return sum(square(F::conv2d(fusor::swapaxes(xr.view(), 2, 3), q.at("w"), {.padding = {1}}))); };
  nn::parameters<float, B> pw;
  pw.emplace("w", w.copy());
  auto replayed = ad::compile(lossr, pw);
  for (int k = 0; k < 2; ++k) {
    if (k == 1) xr *= 2.0f;
    const auto [want, wgrads] = ad::value_and_grad(lossr)(pw);
    auto [got, grads] = replayed(pw);
    CHECK(got == want);
    CHECK(test::host_values(grads.at("w")) == test::host_values(wgrads.at("w")));
  }
  // transposed convolutions: the convolution's input adjoint forward, its forward pass and weight
  // adjoint backward (output_padding beyond the stride but within the dilation included)
  struct tspec {
    extents x, w;
    nn::conv_transpose_options o;
  };
  const std::vector<tspec> tspecs{
      {{3, 6, 7, 5}, {6, 4, 3, 3}, {.stride = {2}, .padding = {1}, .output_padding = {1}}},
      {{2, 4, 5, 6}, {4, 3, 3, 2}, {.stride = {2, 1}, .padding = {1, 0}, .dilation = {1, 2}, .groups = 2}},
      {{2, 3, 9}, {3, 5, 3}, {.stride = {1}, .output_padding = {1}, .dilation = {3}}},
  };
  for (const tspec& s : tspecs) {
    CAPTURE(s.x);
    CAPTURE(s.w);
    const D x = dvals(s.x.numel(), -1, 1, seed++, s.x), w2 = dvals(s.w.numel(), -1, 1, seed++, s.w);
    const int d = s.w.size() - 2;
    auto tconv = [&](const auto& a, const auto& b) {
      return d == 1 ? F::conv_transpose1d(a, b, s.o) : F::conv_transpose2d(a, b, s.o);
    };
    const D y = tconv(x, w2);
    const D r = dvals(y.size(), -1, 1, seed++, y.shape());
    auto loss = [&](const auto& p, const auto& rr) { return sum(tconv(p.at("x"), p.at("w")) * rr); };
    params_t pd;
    pd.emplace("x", x.copy());
    pd.emplace("w", w2.copy());
    const auto [vd, gd] = ad::value_and_grad(loss)(pd, r);
    nn::parameters<float, B> pf;
    for (const auto& [name, a] : pd) pf.emplace(name, F32(fusor::cast<float>(a)));
    const F32 rf = fusor::cast<float>(r);
    CHECK(max_rel(host(F32(tconv(pf.at("x"), pf.at("w")))), hv(y)) <= 2e-6);
    const auto [vf, gf] = ad::value_and_grad(loss)(pf, rf);
    for (const char* name : {"x", "w"}) {
      INFO(name);
      CHECK(max_rel(host(gf.at(name)), hv(gd.at(name))) <= 2e-6);
    }
  }
}

TEST_CASE("conv edge sizes: an empty batch, one channel, SIMD-width rows") {
  for (index_t n : {index_t(0), index_t(1), index_t(3)})
    for (index_t len : {test::lanes<double> - 1, test::lanes<double>, test::lanes<double> + 1, index_t(17)}) {
      CAPTURE(n);
      CAPTURE(len);
      const D x = dvals(n * len * 2, -1, 1, 70 + std::uint64_t(len), extents{n, 1, 2, len});
      const D w = dvals(3 * 1 * 1 * 3, -1, 1, 80, extents{3, 1, 1, 3});
      const nn::conv_options o{.padding = {0, 1}};
      const D y = F::conv2d(x, w, o);
      CHECK(y.shape() == extents{n, 3, 2, len});
      conv_case c{extents{n, 1, 2, len}, extents{3, 1, 1, 3}, {1, 1}, {1, 1}, {0, 1}, {2, len}, 1};
      CHECK(max_rel(hv(y), direct_conv(c, hv(x), hv(w), nullptr)) <= 1e-13);
      params_t p;
      p.emplace("x", x.copy());
      p.emplace("w", w.copy());
      const auto [value, grads] = ad::value_and_grad([&](const auto& q) { return sum(square(F::conv2d(q.at("x"), q.at("w"), o))); })(p);
      CHECK(grads.at("x").shape() == x.shape());
      if (n == 0) CHECK(hv(grads.at("w")) == std::vector<double>(9, 0.0));
    }
}

TEST_CASE("conv bad input: typed errors naming what was expected and given, before any work") {
  const D x = dvals(2 * 4 * 6 * 6, -1, 1, 90, extents{2, 4, 6, 6}), w = dvals(6 * 2 * 3 * 3, -1, 1, 91, extents{6, 2, 3, 3});
  CHECK_THROWS_WITH_AS(F::conv2d(x, w), doctest::Contains("the input has 4 channels (axis 1 of shape (2, 4, 6, 6)), but the weight (6, 2, 3, 3) with 1 group(s) expects"), fusor::shape_error);
  CHECK_THROWS_WITH_AS(F::conv1d(x, w), doctest::Contains("conv1d: expected a weight of shape (out_channels, in_channels / groups, k), got shape (6, 2, 3, 3)"), fusor::shape_error);
  CHECK_THROWS_WITH_AS(F::conv2d(dvals(24, 0, 1, 1, extents{4, 6}), w, {.groups = 2}), doctest::Contains("expected an input of shape (batch, channels, 2 spatial axes)"), fusor::shape_error);
  CHECK_THROWS_WITH_AS(F::conv2d(x, w, {.groups = 4}), doctest::Contains("expected out_channels divisible by groups, got 6 out channels"), fusor::value_error);
  CHECK_THROWS_WITH_AS(F::conv2d(x, w, {.groups = 0}), doctest::Contains("expected groups >= 1, got 0"), fusor::value_error);
  CHECK_THROWS_WITH_AS(F::conv2d(x, w, {.stride = {0}, .groups = 2}), doctest::Contains("expected stride >= 1, got (0,)"), fusor::value_error);
  CHECK_THROWS_WITH_AS(F::conv2d(x, w, {.padding = {1, -1}, .groups = 2}), doctest::Contains("expected padding >= 0, got (1, -1)"), fusor::value_error);
  CHECK_THROWS_WITH_AS(F::conv2d(x, w, {.dilation = {1, 1, 1}, .groups = 2}), doctest::Contains("expected dilation as one value or 2 (one per spatial axis), got (1, 1, 1)"), fusor::value_error);
  CHECK_THROWS_WITH_AS(F::conv2d(x, w, {.stride = {2}, .groups = 2, .same = true}), doctest::Contains("padding 'same' needs stride 1"), fusor::value_error);
  CHECK_THROWS_WITH_AS(F::conv2d(x, w, {.dilation = {3}, .groups = 2}), doctest::Contains("the padded input (6 x 6 on the spatial axes) is smaller than the dilated kernel (7 x 7)"), fusor::shape_error);
  CHECK_THROWS_WITH_AS(F::conv2d(x, w, dvals(5, 0, 1, 1, extents{5}), {.groups = 2}), doctest::Contains("expected a bias of shape (out_channels,) = (6,) for the weight (6, 2, 3, 3), got shape (5,)"), fusor::shape_error);
  // on variables the checks run before anything is recorded
  params_t p;
  p.emplace("x", x.copy());
  CHECK_THROWS_AS(ad::value_and_grad([&](const auto& q) { return sum(F::conv2d(q.at("x"), w)); })(p), fusor::shape_error);
  // the layers check their own arguments
  CHECK_THROWS_WITH_AS(nn::conv2d(4, 6, {3, 3, 3}), doctest::Contains("conv2d expects a kernel size of one value or 2, got (3, 3, 3)"), fusor::value_error);
  CHECK_THROWS_WITH_AS(nn::conv2d(4, 6, {3}, nn::conv_options{.groups = 4}), doctest::Contains("divisible by groups"), fusor::value_error);
  CHECK_THROWS_AS(nn::conv1d(0, 6, {3}), fusor::value_error);
}

TEST_CASE("conv layers in a model: PyTorch's parameter layout and initialisation, training, ad::compile's replay") {
  const auto model = nn::sequential<double, B>(
      nn::conv2d(1, 4, {3}, nn::conv_options{.padding = {1}}), nn::relu, nn::conv2d(4, 2, {3, 2}, nn::no_bias, nn::conv_options{.stride = {2}}),
      nn::flatten, nn::linear(2 * 2 * 3, 3));
  std::vector<std::string> names;
  for (const auto& s : model.parameter_specs()) names.push_back(s.name + " " + fusor::to_string(s.shape));
  CHECK((names == std::vector<std::string>{"0.weight (4, 1, 3, 3)", "0.bias (4,)", "2.weight (2, 4, 3, 2)", "4.weight (12, 3)",
                                           "4.bias (3,)"}));
  params_t params = model.init(3);
  // PyTorch's bound: 1 / sqrt(fan_in), fan_in = in_channels / groups * kernel size
  for (const auto& [name, bound] : std::vector<std::pair<std::string, double>>{{"0.weight", 1 / 3.0}, {"0.bias", 1 / 3.0}, {"2.weight", 1 / std::sqrt(24.0)}}) {
    const auto v = hv(params.at(name));
    CHECK(*std::max_element(v.begin(), v.end()) <= bound);
    CHECK(*std::min_element(v.begin(), v.end()) >= -bound);
  }
  const D x = dvals(5 * 6 * 7, -1, 1, 100, extents{5, 1, 6, 7});
  const fusor::array<std::int64_t, B> labels = test::on<B>(std::vector<std::int64_t>{0, 2, 1, 1, 0});
  CHECK(model(params, x).shape() == extents{5, 3});
  auto loss = [&](const auto& p, const auto& xs, const auto& ys) { return nn::cross_entropy(model(p, xs), ys); };
  // the gradients against central differences of the loss, every parameter
  const auto [value, grads] = ad::value_and_grad(loss)(params, x, labels);
  for (const auto& name : {"0.weight", "2.weight", "0.bias"}) {
    INFO(name);
    const auto got = hv(grads.at(name));
    auto host = hv(params.at(name));
    const extents shape = params.at(name).shape();
    for (std::size_t i = 0; i < host.size(); i += 3) {
      const double keep = host[i];
      params_t q;
      for (const auto& [k, v] : params) q.emplace(k, v.copy());
      host[i] = keep + 1e-6;
      q.at(name) = test::on<B>(host, shape);
      const double up = double(loss(q, x, labels));
      host[i] = keep - 1e-6;
      q.at(name) = test::on<B>(host, shape);
      const double down = double(loss(q, x, labels));
      host[i] = keep;
      CHECK(got[i] == doctest::Approx((up - down) / 2e-6).epsilon(1e-6).scale(1e-6));
    }
  }
  // record once, replay: the bits of value_and_grad, the convolutions two forward steps of it
  auto compiled = ad::compile(loss, params, x, labels);
  for (int k = 0; k < 2; ++k) {
    auto [v, g] = compiled(params, x, labels);
    CHECK(v == value);
    for (const auto& [name, gr] : grads) CHECK(hv(g.at(name)) == hv(gr));
  }
  CHECK(compiled.replays() == 2);
  // a few steps of gradient descent lower the loss
  double first = value, last = value;
  for (int step = 0; step < 20; ++step) {
    auto [v, g] = compiled(params, x, labels);
    last = double(v);
    for (auto& [name, a] : params) a -= 0.5 * g.at(name);
  }
  CHECK(last < 0.5 * first);
  // nn::flatten alone: arrays, expressions and variables keep their elements in C order
  const D z = dvals(2 * 3 * 4, -1, 1, 101, extents{2, 3, 4});
  CHECK(nn::flatten(z).shape() == extents{2, 12});
  CHECK(hv(D(nn::flatten(z * 2.0))) == hv(D(fusor::reshape(D(z * 2.0), extents{2, 12}))));
  CHECK(nn::flatten(D(extents{0, 5})).shape() == extents{0, 5});
  params_t zp;
  zp.emplace("z", z.copy());
  const auto [zv, zg] = ad::value_and_grad([&](const auto& q) { return sum(square(nn::flatten(q.at("z") * 3.0))); })(zp);
  CHECK(max_rel(hv(zg.at("z")), hv(D(z * 18.0))) <= 1e-15);
  CHECK_THROWS_WITH_AS(nn::flatten(D(extents{})), doctest::Contains("nn::flatten needs an input with a batch axis"), fusor::shape_error);
}

TEST_CASE("conv in float16 and bfloat16 (ad::autocast): float32 accumulation, one rounding") {
  using F32 = fusor::array<float, B>;
  const F32 x = fusor::cast<float>(dvals(2 * 8 * 9 * 9, -1, 1, 110, extents{2, 8, 9, 9}));
  const F32 w = fusor::cast<float>(dvals(4 * 8 * 3 * 3, -1, 1, 111, extents{4, 8, 3, 3}));
  const nn::conv_options o{.padding = {1}};
  const auto want = test::host_values(F32(F::conv2d(x, w, o)));
  auto check = [&]<class H>(H, double unit) {
    const fusor::array<H, B> xh = fusor::cast<H>(x), wh = fusor::cast<H>(w);
    const auto got = test::host_values(fusor::array<float, B>(fusor::cast<float>(F::conv2d(xh, wh, o))));
    // the operands' rounding (72 products of |x|, |w| <= 1) and the result's: a few units of H
    double worst = 0;
    for (std::size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(double(got[i]) - double(want[i])));
    CHECK(worst <= 16 * unit);
  };
  check(fusor::float16{}, 0x1p-10);
  check(fusor::bfloat16{}, 0x1p-7);
  // a conv layer under autocast: float32 parameters, a 16-bit product, the model's output float32
  const auto model = nn::sequential<float, B>(nn::conv2d(8, 4, {3}, nn::conv_options{.padding = {1}}));
  const auto params = model.init(5);
  const auto y16 = model(params, x, ad::autocast<fusor::float16>);
  static_assert(std::is_same_v<fusor::value_t<decltype(y16)>, float>);
  const auto y32 = test::host_values(F32(model(params, x)));
  const auto yh = test::host_values(y16);
  double worst = 0;
  for (std::size_t i = 0; i < yh.size(); ++i) worst = std::max(worst, std::abs(double(yh[i]) - double(y32[i])));
  CHECK(worst <= 16 * 0x1p-10);
}

// ---- transposed convolutions -----------------------------------------------------------------------

TEST_CASE("conv_transpose1d/2d/3d against PyTorch's (outputs, three gradients) and as the convolution's adjoint") {
  const std::filesystem::path dir = test::data_dir() / "conv";
  auto load = [&](const std::string& name) { return fusor::to<B>(fusor::load_npy<double, fusor::cpu>(dir / (name + ".npy"))); };
  struct fixture {
    std::string name;
    int dims;
    nn::conv_transpose_options o;
  };
  const std::vector<fixture> cases{
      {"t1", 1, {.stride = {2}, .padding = {1}, .output_padding = {1}}},
      {"t2", 2, {.stride = {2, 1}, .padding = {1, 0}, .dilation = {1, 2}, .groups = 2}},
      {"t3", 3, {.stride = {2}, .output_padding = {1, 0, 1}}},
  };
  for (const fixture& c : cases) {
    CAPTURE(c.name);
    const D x = load(c.name + "_x"), w = load(c.name + "_w"), b = load(c.name + "_b"), r = load(c.name + "_r");
    auto ct = [&](const auto& xv, const auto& wv, const auto& bv) {
      if (c.dims == 1) return F::conv_transpose1d(xv, wv, bv, c.o);
      if (c.dims == 2) return F::conv_transpose2d(xv, wv, bv, c.o);
      return F::conv_transpose3d(xv, wv, bv, c.o);
    };
    CHECK(max_rel(hv(D(ct(x, w, b))), hv(load(c.name + "_y"))) <= 1e-13);
    params_t p;
    p.emplace("x", x.copy());
    p.emplace("w", w.copy());
    p.emplace("b", b.copy());
    auto loss = [&](const auto& q) { return sum(ct(q.at("x"), q.at("w"), q.at("b")) * r); };
    const auto [value, grads] = ad::value_and_grad(loss)(p);
    CHECK(max_rel(hv(grads.at("x")), hv(load(c.name + "_dx"))) <= 1e-13);
    CHECK(max_rel(hv(grads.at("w")), hv(load(c.name + "_dw"))) <= 1e-13);
    CHECK(max_rel(hv(grads.at("b")), hv(load(c.name + "_db"))) <= 1e-13);
    auto compiled = ad::compile(loss, p);  // replayed: the same bits
    auto [v2, g2] = compiled(p);
    CHECK(v2 == value);
    for (const auto& [name, g] : grads) CHECK(hv(g2.at(name)) == hv(g));
  }
  // <conv_transpose(x, w), y> = <x, conv(y, w)> for every x and y: the adjoint, with groups and dilation
  const nn::conv_transpose_options to{.stride = {2, 3}, .padding = {1, 2}, .output_padding = {1, 0}, .dilation = {2, 1}, .groups = 3};
  const D x = dvals(2 * 6 * 4 * 5, -1, 1, 700, extents{2, 6, 4, 5}), w = dvals(6 * 2 * 3 * 4, -1, 1, 701, extents{6, 2, 3, 4});
  const D z = F::conv_transpose2d(x, w, to);
  const D y = dvals(z.size(), -1, 1, 702, z.shape());
  const D cy = F::conv2d(y, w, {.stride = {2, 3}, .padding = {1, 2}, .dilation = {2, 1}, .groups = 3});
  CHECK(cy.shape() == x.shape());
  double lhs = 0, rhs = 0;
  const auto hz = hv(z), hy = hv(y), hx = hv(x), hc = hv(cy);
  for (std::size_t i = 0; i < hz.size(); ++i) lhs += hz[i] * hy[i];
  for (std::size_t i = 0; i < hx.size(); ++i) rhs += hx[i] * hc[i];
  CHECK(lhs == doctest::Approx(rhs).epsilon(1e-13));
  const auto gx = ad::gradcheck<ad::gradcheck_mode::reverse>([&](const auto& v) { return sum(square(F::conv_transpose2d(v, w, to))); }, x,
                                                             {.directions = 4});
  CHECK_MESSAGE(gx.passed, gx.report());
  // unbatched: batch item 0 without its axis
  const D xu = fusor::reshape(D(x(fusor::range(0, 1))), extents{6, 4, 5});
  CHECK(max_rel(hv(D(F::conv_transpose2d(xu, w, to))), hv(D(z(fusor::range(0, 1))))) <= 1e-14);
  // bad input
  CHECK_THROWS_WITH_AS(F::conv_transpose2d(x, w, {.stride = {2}, .output_padding = {2}, .groups = 3}),
                       doctest::Contains("output_padding must be smaller than the stride or the dilation"), fusor::value_error);
  CHECK_THROWS_WITH_AS(F::conv_transpose2d(x, dvals(4 * 2 * 3 * 3, 0, 1, 1, extents{4, 2, 3, 3})), doctest::Contains("expects in_channels = 4"), fusor::shape_error);
  CHECK_THROWS_WITH_AS(F::conv_transpose2d(x, w, {.groups = 4}), doctest::Contains("expected in_channels divisible by groups"), fusor::value_error);
  CHECK_THROWS_WITH_AS(F::conv_transpose2d(x, w, dvals(5, 0, 1, 1, extents{5}), to), doctest::Contains("expected a bias of shape (out_channels,) = (6,)"), fusor::shape_error);
  CHECK_THROWS_WITH_AS(F::conv_transpose2d(dvals(6 * 1 * 1, 0, 1, 1, extents{1, 6, 1, 1}), w, {.padding = {3}, .groups = 3}),
                       doctest::Contains("the output would have"), fusor::shape_error);
  // the layer: PyTorch's weight layout (in, out / groups, *kernel) and fan_in, an upsampling decoder in a model
  const auto model = nn::sequential<double, B>(nn::conv2d(3, 4, {3}, nn::conv_options{.stride = {2}, .padding = {1}}), nn::relu,
                                               nn::conv_transpose2d(4, 3, {3}, nn::conv_transpose_options{.stride = {2}, .padding = {1}, .output_padding = {1}}));
  std::vector<std::string> names;
  for (const auto& sp : model.parameter_specs()) names.push_back(sp.name + " " + fusor::to_string(sp.shape) + " " + std::to_string(sp.fan_in));
  CHECK((names == std::vector<std::string>{"0.weight (4, 3, 3, 3) 27", "0.bias (4,) 27", "2.weight (4, 3, 3, 3) 27", "2.bias (3,) 27"}));
  params_t mp = model.init(3);
  const D img = dvals(2 * 3 * 8 * 6, -1, 1, 703, extents{2, 3, 8, 6});
  CHECK(model(mp, img).shape() == img.shape());  // an autoencoder's shapes: down by 2, up by 2
  CHECK_THROWS_AS(nn::conv_transpose2d(4, 3, {3, 3, 3}), fusor::value_error);
}

// ---- pooling -----------------------------------------------------------------------------------

/// max (or mean, padding zeros counted) pooling by its definition, in double, on (N, C, *in).
inline std::vector<double> direct_pool(const extents& xs, const std::vector<double>& x, bool max, const extents& kernel,
                                       const extents& stride, const extents& padding, const extents& dilation,
                                       extents& out_shape) {
  const int d = xs.size() - 2;
  index_t in[3] = {1, 1, 1}, ks[3] = {1, 1, 1}, out[3] = {1, 1, 1}, st[3] = {1, 1, 1}, dl[3] = {1, 1, 1}, bf[3] = {0, 0, 0};
  out_shape = extents{xs[0], xs[1]};
  for (int i = 0; i < d; ++i) {
    in[i] = xs[2 + i];
    ks[i] = kernel[i];
    st[i] = stride[i];
    dl[i] = dilation[i];
    bf[i] = padding[i];
    out[i] = (in[i] + 2 * bf[i] - dl[i] * (ks[i] - 1) - 1) / st[i] + 1;
    out_shape.push_back(out[i]);
  }
  std::vector<double> y;
  for (index_t plane = 0; plane < xs[0] * xs[1]; ++plane)
    for (index_t p0 = 0; p0 < out[0]; ++p0)
      for (index_t p1 = 0; p1 < out[1]; ++p1)
        for (index_t p2 = 0; p2 < out[2]; ++p2) {
          double acc = max ? -INFINITY : 0.0;
          for (index_t k0 = 0; k0 < ks[0]; ++k0)
            for (index_t k1 = 0; k1 < ks[1]; ++k1)
              for (index_t k2 = 0; k2 < ks[2]; ++k2) {
                const index_t i0 = p0 * st[0] + k0 * dl[0] - bf[0], i1 = p1 * st[1] + k1 * dl[1] - bf[1],
                              i2 = p2 * st[2] + k2 * dl[2] - bf[2];
                if (i0 < 0 || i1 < 0 || i2 < 0 || i0 >= in[0] || i1 >= in[1] || i2 >= in[2]) continue;
                const double v = x[std::size_t(((plane * in[0] + i0) * in[1] + i1) * in[2] + i2)];
                acc = max ? std::max(acc, v) : acc + v;
              }
          y.push_back(max ? acc : acc / double(ks[0] * ks[1] * ks[2]));
        }
  return y;
}

TEST_CASE("max and average pooling against the definition in double: 1-, 2- and 3-d, strides, padding, dilation") {
  struct spec {
    extents x, kernel, stride, padding, dilation;
  };
  const std::vector<spec> specs{
      {{2, 3, 13}, {3}, {2}, {1}, {1}},
      {{1, 2, 9}, {2}, {2}, {0}, {3}},
      {{3, 2, 7, 5}, {2, 3}, {2, 1}, {1, 1}, {1, 1}},
      {{2, 1, test::lanes<double> + 1, test::lanes<double> - 1}, {2, 2}, {2, 2}, {0, 0}, {1, 1}},
      {{1, 2, 6, 5, 7}, {2, 3, 2}, {1, 2, 2}, {1, 0, 1}, {1, 1, 1}},
  };
  std::uint64_t seed = 200;
  for (const spec& s : specs) {
    CAPTURE(s.x);
    const int d = s.x.size() - 2;
    const D x = dvals(s.x.numel(), -1, 1, seed++, s.x);
    const nn::pool_options o{.stride = s.stride, .padding = s.padding, .dilation = s.dilation};
    extents shape;
    const auto want = direct_pool(s.x, hv(x), true, s.kernel, s.stride, s.padding, s.dilation, shape);
    const D y = d == 1 ? D(F::max_pool1d(x, s.kernel, o)) : d == 2 ? D(F::max_pool2d(x, s.kernel, o)) : D(F::max_pool3d(x, s.kernel, o));
    CHECK(y.shape() == shape);
    CHECK(hv(y) == want);  // a maximum is one of the values: exact
    const bool dilated = s.dilation[0] != 1 || (d > 1 && s.dilation[1] != 1) || (d > 2 && s.dilation[2] != 1);
    if (!dilated) {
      const nn::pool_options oa{.stride = s.stride, .padding = s.padding};
      const auto want_avg = direct_pool(s.x, hv(x), false, s.kernel, s.stride, s.padding, s.dilation, shape);
      const D a = d == 1 ? D(F::avg_pool1d(x, s.kernel, oa)) : d == 2 ? D(F::avg_pool2d(x, s.kernel, oa)) : D(F::avg_pool3d(x, s.kernel, oa));
      CHECK(a.shape() == shape);
      CHECK(max_rel(hv(a), want_avg) <= 1e-14);
    }
  }
  // a NaN in a window is its maximum (PyTorch's), and an unbatched input is batch item 0
  std::vector<double> v(2 * 4 * 4, 1.0);
  v[5] = std::nan("");
  const D xn = test::on<B>(v, extents{2, 4, 4});
  const auto yn = hv(D(F::max_pool2d(xn, {2})));
  CHECK(std::isnan(yn[0]));
  CHECK(yn[1] == 1.0);
  CHECK(hv(D(F::max_pool2d(fusor::reshape(xn, extents{1, 2, 4, 4}), {2}))).size() == yn.size());
}

TEST_CASE("pooling against PyTorch's max_pool1d/2d/3d and avg_pool2d: outputs and gradients (tests/data/conv)") {
  const std::filesystem::path dir = test::data_dir() / "conv";
  auto load = [&](const std::string& name) { return fusor::to<B>(fusor::load_npy<double, fusor::cpu>(dir / (name + ".npy"))); };
  struct fixture {
    std::string name;
    int dims;
    bool max;
    extents kernel;
    nn::pool_options o;
  };
  const std::vector<fixture> cases{
      {"p1", 2, true, {3, 2}, {.stride = {2}, .padding = {1}}},
      {"p2", 1, true, {3}, {.stride = {2}, .padding = {1}, .dilation = {2}}},
      {"p3", 3, true, {2}, {}},
      {"p4", 2, true, {3}, {.stride = {1}}},  // integer values: ties, the first maximum takes the gradient
      {"p5", 2, false, {2, 3}, {.stride = {1, 2}, .padding = {1}}},
  };
  for (const fixture& c : cases) {
    CAPTURE(c.name);
    const D x = load(c.name + "_x"), r = load(c.name + "_r");
    const D y = c.max ? (c.dims == 1 ? D(F::max_pool1d(x, c.kernel, c.o)) : c.dims == 2 ? D(F::max_pool2d(x, c.kernel, c.o)) : D(F::max_pool3d(x, c.kernel, c.o)))
                      : D(F::avg_pool2d(x, c.kernel, c.o));
    CHECK(max_rel(hv(y), hv(load(c.name + "_y"))) <= 1e-15);
    params_t p;
    p.emplace("x", x.copy());
    const auto [value, grads] = ad::value_and_grad([&](const auto& q) {
      const auto& v = q.at("x");
      if (c.max) {
        if (c.dims == 1) return sum(F::max_pool1d(v, c.kernel, c.o) * r);
        if (c.dims == 2) return sum(F::max_pool2d(v, c.kernel, c.o) * r);
        return sum(F::max_pool3d(v, c.kernel, c.o) * r);
      }
      return sum(F::avg_pool2d(v, c.kernel, c.o) * r);
    })(p);
    CHECK(max_rel(hv(grads.at("x")), hv(load(c.name + "_dx"))) <= 1e-14);
  }
}

TEST_CASE("pooling: layers in a model, gradcheck, replay, bad input") {
  const D x = dvals(2 * 3 * 8 * 7, -1, 1, 300, extents{2, 3, 8, 7});
  const ad::gradcheck_options go{.directions = 6};
  const auto gm = ad::gradcheck<ad::gradcheck_mode::reverse>(
      [&](const auto& v) { return sum(square(F::max_pool2d(v, {3, 2}, {.stride = {2, 1}, .padding = {1}}))); }, x, go);
  CHECK_MESSAGE(gm.passed, gm.report());
  const auto ga = ad::gradcheck<ad::gradcheck_mode::reverse>(
      [&](const auto& v) { return sum(square(F::avg_pool2d(v, {2}, {.stride = {1}}))); }, x, go);
  CHECK_MESSAGE(ga.passed, ga.report());
  // a small CNN: conv, group norm, relu, max pool, conv, average pool, flatten, linear; replayed bit for bit
  const auto model = nn::sequential<double, B>(nn::conv2d(3, 4, {3}, nn::conv_options{.padding = {1}}), nn::group_norm(2, 4), nn::relu,
                                               nn::max_pool2d({2}), nn::conv2d(4, 4, {1}), nn::avg_pool2d({2}, {.stride = {1}}),
                                               nn::flatten, nn::linear(4 * 3 * 2, 3));
  params_t params = model.init(4);
  CHECK(model(params, x).shape() == extents{2, 3});
  const fusor::array<std::int64_t, B> labels = test::on<B>(std::vector<std::int64_t>{2, 0});
  auto loss = [&](const auto& p, const auto& xs) { return nn::cross_entropy(model(p, xs), labels); };
  auto compiled = ad::compile(loss, params, x);
  check_replays(compiled, loss, params, x);
  // new input values: a replay's windows are read again (the maxima move)
  D x2 = dvals(2 * 3 * 8 * 7, -1, 1, 301, extents{2, 3, 8, 7});
  x.view() = x2;
  {
    auto [v, g] = compiled(params, x);
    const auto [v2, g2] = ad::value_and_grad(loss)(params, x);
    CHECK(v == v2);
    for (const auto& [name, gr] : g2) CHECK(hv(g.at(name)) == hv(gr));
  }
  CHECK_THROWS_WITH_AS(F::max_pool2d(x, {3}, {.padding = {2}}), doctest::Contains("padding should be at most half the window"), fusor::value_error);
  CHECK_THROWS_WITH_AS(F::avg_pool2d(x, {2}, {.dilation = {2}}), doctest::Contains("average pooling takes no dilation"), fusor::value_error);
  CHECK_THROWS_WITH_AS(F::max_pool2d(x, {9}), doctest::Contains("is smaller than the window (9)"), fusor::shape_error);
  CHECK_THROWS_WITH_AS(F::max_pool1d(dvals(2, 0, 1, 1, extents{1, 1, 2}), {2}, {.padding = {1}, .dilation = {3}}),
                       doctest::Contains("window 0 along spatial axis 0 reads only padding"), fusor::value_error);
  CHECK_THROWS_WITH_AS(F::max_pool3d(dvals(12, 0, 1, 1, extents{3, 4}), {2}), doctest::Contains("expected an input of shape (batch, channels, 3 spatial axes)"), fusor::shape_error);
  CHECK_THROWS_WITH_AS(F::max_pool2d(x, {0}), doctest::Contains("expected kernel_size >= 1, got (0,)"), fusor::value_error);
  CHECK_THROWS_WITH_AS(nn::max_pool2d({2, 2, 2}), doctest::Contains("max_pool2d expects a kernel size of one value or 2"), fusor::value_error);
}

// ---- resampling: adaptive average pooling and interpolation -----------------------------------------

TEST_CASE("adaptive average pooling and interpolation against PyTorch's: outputs and gradients (tests/data/conv)") {
  const std::filesystem::path dir = test::data_dir() / "conv";
  auto load = [&](const std::string& name) { return fusor::to<B>(fusor::load_npy<double, fusor::cpu>(dir / (name + ".npy"))); };
  const auto check = [&](const std::string& name, const auto& f) {
    CAPTURE(name);
    const D x = load(name + "_x"), r = load(name + "_r");
    CHECK(max_rel(hv(D(f(x))), hv(load(name + "_y"))) <= 1e-14);
    params_t p;
    p.emplace("x", x.copy());
    const auto [value, grads] = ad::value_and_grad([&](const auto& q) { return sum(f(q.at("x")) * r); })(p);
    CHECK(max_rel(hv(grads.at("x")), hv(load(name + "_dx"))) <= 1e-14);
  };
  check("r1", [](const auto& x) { return F::adaptive_avg_pool2d(x, {3, 2}); });
  check("r2", [](const auto& x) { return F::adaptive_avg_pool1d(x, {4}); });
  check("r3", [](const auto& x) { return F::adaptive_avg_pool3d(x, {2, 3, 1}); });
  using nn::interpolation;
  check("u1", [](const auto& x) { return F::interpolate(x, {.size = {7, 10}}); });
  check("u2", [](const auto& x) { return F::interpolate(x, {.scale_factor = {2}, .mode = interpolation::linear}); });
  check("u3", [](const auto& x) { return F::interpolate(x, {.size = {3, 7}, .mode = interpolation::linear, .align_corners = true}); });
  check("u4", [](const auto& x) { return F::interpolate(x, {.scale_factor = {1.5}, .mode = interpolation::linear}); });
  check("u5", [](const auto& x) { return F::interpolate(x, {.size = {5, 3, 4}, .mode = interpolation::linear}); });
  check("u6", [](const auto& x) { return F::interpolate(x, {.scale_factor = {2.5}}); });
}

TEST_CASE("resampling: closed forms, edge sizes, gradcheck, layers in a replayed model, bad input") {
  const D x = dvals(2 * 3 * 5 * 7, -1, 1, 310, extents{2, 3, 5, 7});
  // global average pooling is the mean over the spatial axes; the input's own size is the identity
  CHECK(max_rel(hv(D(F::adaptive_avg_pool2d(x, {1}))), hv(D(fusor::mean(fusor::mean(x, 3, true), 2, true)))) <= 1e-15);
  CHECK(max_rel(hv(D(F::adaptive_avg_pool2d(x, {5, 7}))), hv(x)) == 0.0);
  // more outputs than inputs: each output averages the one or two inputs its window covers
  const D x1 = dvals(3, -1, 1, 311, extents{1, 1, 3});
  const auto v1 = hv(x1), up = hv(D(F::adaptive_avg_pool1d(x1, {5})));
  CHECK(up == std::vector<double>{v1[0], (v1[0] + v1[1]) / 2, v1[1], (v1[1] + v1[2]) / 2, v1[2]});
  // unbatched (C, *spatial) input, a strided view as input
  const D pooled = F::adaptive_avg_pool2d(x, {2, 3});
  CHECK(max_rel(hv(D(F::adaptive_avg_pool2d(x(0, fusor::ellipsis), {2, 3}))), hv(D(pooled(0, fusor::ellipsis)))) == 0.0);
  CHECK(max_rel(hv(D(F::adaptive_avg_pool1d(fusor::swapaxes(x(0, fusor::ellipsis), 0, 1), {2}))), hv(D(F::adaptive_avg_pool1d(fusor::swapaxes(x(0, fusor::ellipsis), 0, 1).copy(), {2})))) == 0.0);
  // nearest upsampling by 2 repeats each element; linear at the input's size is the identity; a 1 x 1 input spreads
  const auto vx = hv(x), near = hv(D(F::interpolate(x, {.scale_factor = {2}})));
  bool repeats = true;
  for (std::size_t i = 0; i < near.size(); ++i) {
    const std::size_t col = i % 14, row = (i / 14) % 10, plane = i / 140;
    repeats = repeats && near[i] == vx[plane * 35 + (row / 2) * 7 + col / 2];
  }
  CHECK(repeats);
  CHECK(max_rel(hv(D(F::interpolate(x, {.size = {5, 7}, .mode = nn::interpolation::linear}))), vx) <= 1e-15);
  const D one = dvals(2, -1, 1, 312, extents{1, 2, 1, 1});
  const auto spread = hv(D(F::interpolate(one, {.size = {3, 4}, .mode = nn::interpolation::linear, .align_corners = true})));
  CHECK(spread == std::vector<double>{hv(one)[0], hv(one)[0], hv(one)[0], hv(one)[0], hv(one)[0], hv(one)[0], hv(one)[0], hv(one)[0],
                                      hv(one)[0], hv(one)[0], hv(one)[0], hv(one)[0], hv(one)[1], hv(one)[1], hv(one)[1], hv(one)[1],
                                      hv(one)[1], hv(one)[1], hv(one)[1], hv(one)[1], hv(one)[1], hv(one)[1], hv(one)[1], hv(one)[1]});
  // SIMD-width sides and an empty batch
  for (index_t side : {test::lanes<double> - 1, test::lanes<double> + 1}) {
    const D s = dvals(2 * side * 3, -1, 1, 313, extents{1, 2, side, 3});
    CHECK(F::interpolate(s, {.scale_factor = {2, 1}, .mode = nn::interpolation::linear}).shape() == extents{1, 2, 2 * side, 3});
  }
  CHECK(F::adaptive_avg_pool2d(D(extents{0, 3, 4, 4}), {2}).shape() == extents{0, 3, 2, 2});
  CHECK(F::interpolate(D(extents{0, 3, 4, 4}), {.size = {2}, .mode = nn::interpolation::linear}).shape() == extents{0, 3, 2, 2});
  const ad::gradcheck_options go{.directions = 6};
  const auto ga = ad::gradcheck<ad::gradcheck_mode::reverse>([&](const auto& v) { return sum(square(F::adaptive_avg_pool2d(v, {3, 4}))); }, x, go);
  const auto gi = ad::gradcheck<ad::gradcheck_mode::reverse>(
      [&](const auto& v) { return sum(square(F::interpolate(v, {.size = {7, 4}, .mode = nn::interpolation::linear}))); }, x, go);
  CHECK_MESSAGE(ga.passed, ga.report());
  CHECK_MESSAGE(gi.passed, gi.report());
  // layers in a model: a conv, upsampling, a conv, global average pooling, linear; replayed bit for bit
  const auto model = nn::sequential<double, B>(nn::conv2d(3, 4, {3}, nn::conv_options{.padding = {1}}), nn::relu,
                                               nn::upsample({.scale_factor = {2}, .mode = nn::interpolation::linear}),
                                               nn::conv2d(4, 4, {3}), nn::adaptive_avg_pool2d({1}), nn::flatten, nn::linear(4, 3));
  params_t params = model.init(5);
  CHECK(model(params, x).shape() == extents{2, 3});
  const fusor::array<std::int64_t, B> labels = test::on<B>(std::vector<std::int64_t>{1, 2});
  auto loss = [&](const auto& p, const auto& xs) { return nn::cross_entropy(model(p, xs), labels); };
  auto compiled = ad::compile(loss, params, x);
  check_replays(compiled, loss, params, x);
  CHECK_THROWS_WITH_AS(F::interpolate(x, {}), doctest::Contains("exactly one of size and scale_factor, got neither"), fusor::value_error);
  CHECK_THROWS_WITH_AS(F::interpolate(x, {.size = {2}, .scale_factor = {2}}), doctest::Contains("got both"), fusor::value_error);
  CHECK_THROWS_WITH_AS(F::interpolate(x, {.size = {2}, .align_corners = true}), doctest::Contains("align_corners applies to linear"),
                       fusor::value_error);
  CHECK_THROWS_WITH_AS(F::interpolate(x, {.scale_factor = {0.1}}), doctest::Contains("leaves axis 2 of length 5 with no element"),
                       fusor::value_error);
  CHECK_THROWS_WITH_AS(F::interpolate(x, {.size = {2, 3, 4}}), doctest::Contains("a size of one value or 2, got (2, 3, 4)"), fusor::value_error);
  CHECK_THROWS_WITH_AS(F::interpolate(x(0, 0, fusor::ellipsis), {.size = {2}}), doctest::Contains("(batch, channels, 1 to 3 spatial axes), got shape (5, 7)"),
                       fusor::shape_error);
  CHECK_THROWS_WITH_AS(F::adaptive_avg_pool2d(x, {0, 2}), doctest::Contains("an output size >= 1, got (0, 2)"), fusor::value_error);
  CHECK_THROWS_WITH_AS(F::adaptive_avg_pool3d(x(0, 0, fusor::ellipsis), {2}), doctest::Contains("(batch, channels, 3 spatial axes)"), fusor::shape_error);
  CHECK_THROWS_WITH_AS(F::adaptive_avg_pool2d(D(extents{1, 2, 0, 3}), {2}), doctest::Contains("spatial axes of length >= 1"), fusor::value_error);
  CHECK_THROWS_AS(nn::upsample({}), fusor::value_error);
  CHECK_THROWS_AS(nn::adaptive_avg_pool2d({1, 2, 3}), fusor::value_error);
}

// ---- normalisation without running statistics -----------------------------------------------------

TEST_CASE("group_norm and instance_norm against PyTorch's: outputs and the three gradients (tests/data/conv)") {
  const std::filesystem::path dir = test::data_dir() / "conv";
  auto load = [&](const std::string& name) { return fusor::to<B>(fusor::load_npy<double, fusor::cpu>(dir / (name + ".npy"))); };
  for (const std::string name : {"n1", "n2"}) {
    CAPTURE(name);
    const D x = load(name + "_x"), w = load(name + "_w"), b = load(name + "_b"), r = load(name + "_r");
    auto norm = [&](const auto& v, const auto& wv, const auto& bv) {
      if (name == "n1") return F::group_norm(v, 3, wv, bv);
      return F::instance_norm(v, wv, bv);
    };
    CHECK(max_rel(hv(D(norm(x, w, b))), hv(load(name + "_y"))) <= 1e-13);
    params_t p;
    p.emplace("x", x.copy());
    p.emplace("w", w.copy());
    p.emplace("b", b.copy());
    const auto [value, grads] = ad::value_and_grad([&](const auto& q) { return sum(norm(q.at("x"), q.at("w"), q.at("b")) * r); })(p);
    CHECK(max_rel(hv(grads.at("x")), hv(load(name + "_dx"))) <= 1e-12);
    CHECK(max_rel(hv(grads.at("w")), hv(load(name + "_dw"))) <= 1e-13);
    CHECK(max_rel(hv(grads.at("b")), hv(load(name + "_db"))) <= 1e-13);
  }
}

TEST_CASE("group_norm, instance_norm and rms_norm against their definitions in double; 16 bits; bad input") {
  // group_norm: each (sample, group) standardised with the biased variance; 1 group and C groups
  const extents s{2, 6, 3, test::lanes<double> + 1};
  const D x = dvals(s.numel(), -2, 2, 400, s);
  const auto hx = hv(x);
  const index_t plane = s[2] * s[3];
  for (index_t groups : {index_t(1), index_t(3), index_t(6)}) {
    CAPTURE(groups);
    const index_t per = s[1] / groups * plane;
    std::vector<double> want(hx.size());
    for (index_t k = 0; k < s[0] * groups; ++k) {
      double m = 0, v = 0;
      for (index_t i = 0; i < per; ++i) m += hx[std::size_t(k * per + i)];
      m /= double(per);
      for (index_t i = 0; i < per; ++i) v += (hx[std::size_t(k * per + i)] - m) * (hx[std::size_t(k * per + i)] - m);
      v /= double(per);
      for (index_t i = 0; i < per; ++i) want[std::size_t(k * per + i)] = (hx[std::size_t(k * per + i)] - m) / std::sqrt(v + 1e-5);
    }
    CHECK(max_rel(hv(D(F::group_norm(x, groups))), want) <= 1e-13);
    if (groups == s[1]) CHECK(max_rel(hv(D(F::instance_norm(x))), want) <= 1e-13);
  }
  // rms_norm over the last axis, eps the machine epsilon by default, a weight per feature
  const index_t f = s[3];
  const D w = dvals(f, -1, 1, 401, extents{f});
  const auto hw = hv(w);
  std::vector<double> want(hx.size());
  for (index_t row = 0; row < index_t(hx.size()) / f; ++row) {
    double ms = 0;
    for (index_t j = 0; j < f; ++j) ms += hx[std::size_t(row * f + j)] * hx[std::size_t(row * f + j)];
    ms = ms / double(f) + std::numeric_limits<double>::epsilon();
    for (index_t j = 0; j < f; ++j) want[std::size_t(row * f + j)] = hx[std::size_t(row * f + j)] / std::sqrt(ms) * hw[std::size_t(j)];
  }
  CHECK(max_rel(hv(D(F::rms_norm(x, w))), want) <= 1e-14);
  const ad::gradcheck_options go{.directions = 4};
  const auto gr = ad::gradcheck<ad::gradcheck_mode::reverse>([&](const auto& v) { return sum(square(F::rms_norm(v, w)) * x); }, x, go);
  CHECK_MESSAGE(gr.passed, gr.report());
  const auto gg = ad::gradcheck<ad::gradcheck_mode::reverse>([&](const auto& v) { return sum(square(F::group_norm(v, 2)) * x); }, x, go);
  CHECK_MESSAGE(gg.passed, gg.report());
  // float16: computed in float32 and rounded once
  const fusor::array<float, B> xf = fusor::cast<float>(x);
  const auto g32 = test::host_values(fusor::array<float, B>(F::group_norm(xf, 3)));
  const auto g16 = test::host_values(fusor::array<float, B>(fusor::cast<float>(F::group_norm(fusor::array<fusor::float16, B>(fusor::cast<fusor::float16>(xf)), 3))));
  double worst = 0;
  for (std::size_t i = 0; i < g32.size(); ++i) worst = std::max(worst, std::abs(double(g16[i]) - double(g32[i])));
  CHECK(worst <= 8 * 0x1p-10);
  // bad input
  CHECK_THROWS_WITH_AS(F::group_norm(x, 4), doctest::Contains("group_norm needs groups >= 1 dividing the channels, got 4 groups for 6 channels"), fusor::value_error);
  CHECK_THROWS_WITH_AS(F::group_norm(x, 3, w, w), doctest::Contains("group_norm's weight and bias must have shape (channels,) = (6,)"), fusor::shape_error);
  CHECK_THROWS_AS(F::group_norm(dvals(4, 0, 1, 1, extents{4}), 1), fusor::shape_error);
  CHECK_THROWS_WITH_AS(F::instance_norm(dvals(6, 0, 1, 1, extents{2, 3})), doctest::Contains("with a spatial axis"), fusor::shape_error);
  CHECK_THROWS_WITH_AS(F::rms_norm(x, dvals(3, 0, 1, 1, extents{3})), doctest::Contains("rms_norm's weight must have the shape of the last axis"), fusor::shape_error);
  CHECK_THROWS_AS(nn::group_norm(4, 6), fusor::value_error);
  CHECK_THROWS_AS(nn::rms_norm(0), fusor::value_error);
}

// ---- batch normalisation --------------------------------------------------------------------------

TEST_CASE("batch_norm against PyTorch's: training (outputs, gradients, running statistics after three calls, also replayed) and evaluation") {
  const std::filesystem::path dir = test::data_dir() / "conv";
  auto load = [&](const std::string& name) { return fusor::to<B>(fusor::load_npy<double, fusor::cpu>(dir / (name + ".npy"))); };
  for (const std::string name : {"b1", "b2"}) {
    CAPTURE(name);
    const bool training = name == "b1";
    const int calls = training ? 3 : 1;
    const nn::batch_norm_options o{.training = training};
    const D x = load(name + "_x"), w = load(name + "_w"), b = load(name + "_b"), r = load(name + "_r");
    // arrays
    D rm = load(name + "_rm0"), rv = load(name + "_rv0");
    D y;
    for (int k = 0; k < calls; ++k) y = F::batch_norm(x, rm, rv, w, b, o);
    CHECK(max_rel(hv(y), hv(load(name + "_y"))) <= 1e-13);
    CHECK(max_rel(hv(rm), hv(load(name + "_rm"))) <= 1e-14);
    CHECK(max_rel(hv(rv), hv(load(name + "_rv"))) <= 1e-14);
    // variables: the gradients of the last call, the running statistics moved by every call
    D vm = load(name + "_rm0"), vv = load(name + "_rv0");
    params_t p;
    p.emplace("x", x.copy());
    p.emplace("w", w.copy());
    p.emplace("b", b.copy());
    auto loss = [&](const auto& q) { return sum(F::batch_norm(q.at("x"), vm, vv, q.at("w"), q.at("b"), o) * r); };
    for (int k = 0; k < calls; ++k) {
      const auto [value, grads] = ad::value_and_grad(loss)(p);
      if (k + 1 < calls) continue;
      CHECK(max_rel(hv(grads.at("x")), hv(load(name + "_dx"))) <= 1e-12);
      CHECK(max_rel(hv(grads.at("w")), hv(load(name + "_dw"))) <= 1e-13);
      CHECK(max_rel(hv(grads.at("b")), hv(load(name + "_db"))) <= 1e-13);
    }
    CHECK(max_rel(hv(vm), hv(load(name + "_rm"))) <= 1e-14);
    CHECK(max_rel(hv(vv), hv(load(name + "_rv"))) <= 1e-14);
    // recorded once and replayed: the replays move the running statistics too
    vm = load(name + "_rm0");
    vv = load(name + "_rv0");
    auto compiled = ad::compile(loss, p);  // the recording: the first call
    for (int k = 1; k < calls; ++k) (void)compiled(p);
    CHECK(compiled.replays() == std::size_t(calls - 1));
    CHECK(max_rel(hv(vm), hv(load(name + "_rm"))) <= 1e-14);
    CHECK(max_rel(hv(vv), hv(load(name + "_rv"))) <= 1e-14);
  }
}

TEST_CASE("batch_norm layers: running statistics in the layer, eval(), 16 bits, bad input") {
  const D x = dvals(6 * 3 * 4 * 5, -2, 2, 500, extents{6, 3, 4, 5});
  const auto model = nn::sequential<double, B>(nn::batch_norm(3), nn::flatten, nn::linear(60, 2));
  auto params = model.init(2);
  const auto& bn = model.layer<0>();
  CHECK_THROWS_AS((bn.running_mean<double, B>()), fusor::value_error);  // nothing seen yet
  const D y = model(params, x);  // training mode: batch statistics, the running ones moved
  std::vector<double> means(3, 0.0);
  const auto hx = hv(x);
  for (std::size_t i = 0; i < hx.size(); ++i) means[(i / 20) % 3] += hx[i] / 120.0;
  const auto rm = hv(D(bn.running_mean<double, B>().copy()));
  for (int c = 0; c < 3; ++c) CHECK(rm[std::size_t(c)] == doctest::Approx(0.1 * means[std::size_t(c)]).epsilon(1e-12));
  auto m = model;
  m.eval();  // the copy shares the layer's running statistics, and uses them now
  const D ye = m(params, x);
  CHECK(hv(ye) != hv(y));
  const auto rm_after = hv(D(bn.running_mean<double, B>().copy()));
  CHECK(rm_after == rm);  // evaluation leaves them
  // float16 input: float32 running statistics, float32 arithmetic
  const auto model16 = nn::sequential<float, B>(nn::batch_norm(3));
  const auto p16 = model16.init(1);
  const fusor::array<float, B> xf = fusor::cast<float>(x);
  const auto y32 = test::host_values(fusor::array<float, B>(model16(p16, xf)));
  const auto y16 = test::host_values(model16(p16, xf, ad::autocast<fusor::float16>));
  double worst = 0;
  for (std::size_t i = 0; i < y32.size(); ++i) worst = std::max(worst, std::abs(double(y16[i]) - double(y32[i])));
  CHECK(worst <= 8 * 0x1p-10);
  // bad input
  D rmb = fusor::zeros<double, B>(extents{2}), rvb = fusor::ones<double, B>(extents{3});
  const D w3 = fusor::ones<double, B>(extents{3}), b3 = fusor::zeros<double, B>(extents{3});
  CHECK_THROWS_WITH_AS(F::batch_norm(x, rmb, rvb, w3, b3, {.training = true}), doctest::Contains("running statistics must have shape (channels,) = (3,)"), fusor::shape_error);
  D rm1 = fusor::zeros<double, B>(extents{3}), rv1 = fusor::ones<double, B>(extents{3});
  CHECK_THROWS_WITH_AS(F::batch_norm(dvals(3, 0, 1, 1, extents{1, 3}), rm1, rv1, w3, b3, {.training = true}), doctest::Contains("more than one value per channel"), fusor::value_error);
  CHECK_THROWS_WITH_AS(F::batch_norm(x, rm1, rv1, w3, b3, {.momentum = 2}), doctest::Contains("0 <= momentum <= 1"), fusor::value_error);
  CHECK(hv(rm1) == std::vector<double>(3, 0.0));  // untouched by the refused calls
  CHECK_THROWS_AS(nn::batch_norm(0), fusor::value_error);
  // a layer keeps the running statistics of the first element type it sees
  nn::batch_norm lone(3);
  auto get = [&](std::size_t k) -> const D& { return k == 0 ? w3 : b3; };
  (void)lone(x, get);
  const fusor::array<float, B> w3f = fusor::ones<float, B>(extents{3}), b3f = fusor::zeros<float, B>(extents{3});
  auto getf = [&](std::size_t k) -> const fusor::array<float, B>& { return k == 0 ? w3f : b3f; };
  CHECK_THROWS_WITH_AS(lone(xf, getf), doctest::Contains("of one element type and backend"), fusor::value_error);
}

}  // namespace convbody
