// Reverse-mode operations beyond elementwise trees, written once per backend: reductions (prod,
// max, min, var, std, norm, logsumexp), softmax, views, matmul/dot/tensordot/einsum, concatenate/
// stack/pad/roll, take/mask_select, custom_vjp and gradcheck. Every gradient is compared with
// central differences or a closed form written out by hand. tests/test_ad_ops.cpp runs them on cpu,
// tests/test_ad_ops_cuda.cu on cuda (ad_fft_body.hpp: the convolutions, complex variables and
// Fourier transforms; ad_hessian_body.hpp: forward over reverse).
//
// The includer defines TEST_BACKEND before including this file.
#include "ad_ops_helpers.hpp"

TEST_CASE("reductions of variables: prod, max, min, var, std, norm and logsumexp, whole and along axes") {
  for (const extents& shape : {extents{1}, extents{test::lanes<double> + 1}, extents{17}, extents{4, 3}, extents{5, 7}}) {
    CAPTURE(to_string(shape));
    const arr<double> x = adops::random(shape, 61, 0.5, 1.5), c = adops::random(shape, 62);
    // whole
    against_differences("prod", [&](const auto& t) { return prod(t * c); }, x);
    against_differences("max", [&](const auto& t) { return max(t * c); }, x);
    // a computed tree (exp: SIMD and scalar exp may differ in the last bit) still finds its maximum
    against_differences("max of exp", [&](const auto& t) { return max(exp(t) * c); }, x);
    against_differences("min", [&](const auto& t) { return min(sin(t) * c); }, x);
    against_differences("var", [&](const auto& t) { return var(t * c); }, x);
    against_differences("var ddof 1", [&](const auto& t) { return var(t * t, ddof(1)); }, x);
    against_differences("std", [&](const auto& t) { return adops::stdev(t * c + t); }, x);
    against_differences("norm", [&](const auto& t) { return norm(t * c); }, x);
    against_differences("norm 1", [&](const auto& t) { return norm(t * c, 1.0); }, x);
    against_differences("norm 3", [&](const auto& t) { return norm(t * c, 3.0); }, x);
    against_differences("norm inf", [&](const auto& t) { return norm(t * c, std::numeric_limits<double>::infinity()); }, x);
    against_differences("logsumexp", [&](const auto& t) { return ad::logsumexp(t * c * 3.0); }, x);
    // along the last axis and the first, with and without keepdims, then reduced again
    if (shape.size() == 2) {
      const arr<double> w = adops::random(extents{shape[0], 1}, 63);
      for (int axis : {0, 1, -1}) {
        CAPTURE(axis);
        against_differences("prod axis", [&](const auto& t) { return sum(square(prod(t * c, axis))); }, x);
        against_differences("max axis", [&](const auto& t) { return sum(square(max(t * c, axis))); }, x);
        against_differences("max of exp axis", [&](const auto& t) { return sum(square(max(exp(t) * c, axis))); }, x);
        against_differences("norm inf of sin axis", [&](const auto& t) { return sum(norm(sin(t) * c, -std::numeric_limits<double>::infinity(), axis)); }, x);
        against_differences("min axis keepdims", [&](const auto& t) { return sum(min(t * c, axis, true) * t); }, x);
        against_differences("var axis", [&](const auto& t) { return sum(exp(var(t * c, axis))); }, x);
        against_differences("std axis ddof", [&](const auto& t) { return sum(sqrt(adops::stdev(t + c, axis, ddof(1), true) + t)); }, x);
        against_differences("norm axis", [&](const auto& t) { return sum(norm(t * c, 2.0, axis) * 2.0); }, x);
        against_differences("norm 1 axis", [&](const auto& t) { return sum(square(norm(t * c, 1.0, axis))); }, x);
        against_differences("logsumexp axis", [&](const auto& t) { return sum(square(ad::logsumexp(t * c, axis))); }, x);
        against_differences("logsumexp axis keepdims", [&](const auto& t) { return sum(ad::logsumexp(t * c, axis, true) * w); }, x);
      }
    }
  }
  // closed forms at the non-smooth points: prod with zeros, tied maxima, the norm at zero
  auto g = [](auto f, std::vector<double> v) { return host_values(ad::grad(f)(adops::dev(v))); };
  CHECK(g([](const auto& t) { return prod(t); }, {2, 0, 3}) == std::vector<double>{0, 6, 0});
  CHECK(g([](const auto& t) { return prod(t); }, {2, 0, 0}) == std::vector<double>{0, 0, 0});
  CHECK(g([](const auto& t) { return prod(t); }, {2, 4, 3}) == std::vector<double>{12, 6, 8});
  CHECK(g([](const auto& t) { return max(t); }, {1, 3, 3}) == std::vector<double>{0, 0.5, 0.5});
  CHECK(g([](const auto& t) { return min(t); }, {1, 3, 1, 1}) == std::vector<double>{1.0 / 3, 0, 1.0 / 3, 1.0 / 3});
  CHECK(g([](const auto& t) { return norm(t); }, {0, 0}) == std::vector<double>{0, 0});
  CHECK(g([](const auto& t) { return norm(t); }, {3, 4}) == std::vector<double>{0.6, 0.8});
  // logsumexp's gradient is softmax; its value the stable form (no overflow at 1000)
  const auto v = ad::value_and_grad([](const auto& t) { return ad::logsumexp(t); })(adops::dev({1000, 1000}));
  CHECK(v.first == doctest::Approx(1000 + std::log(2.0)));
  for (double e : host_values(v.second)) CHECK(test::close(e, 0.5, 1e-12));
  CHECK(ad::logsumexp(zeros<double, adops::B>({0})) == -std::numeric_limits<double>::infinity());
  CHECK_THROWS_AS(ad::grad([](const auto& t) { return max(t); })(zeros<double, adops::B>({0})), value_error);
}

TEST_CASE("softmax and log_softmax: values, gradients along each axis, and the stable form") {
  const arr<double> x = adops::random({4, 5}, 71, -3, 3), c = adops::random({4, 5}, 72);
  // values against a hand loop
  const auto hx = host_values(x);
  const auto s = host_values(ad::softmax(x)), ls = host_values(ad::log_softmax(x, 0));
  for (int i = 0; i < 4; ++i) {
    double total = 0;
    for (int j = 0; j < 5; ++j) total += std::exp(hx[std::size_t(i * 5 + j)]);
    for (int j = 0; j < 5; ++j)
      CHECK(test::close(s[std::size_t(i * 5 + j)], std::exp(hx[std::size_t(i * 5 + j)]) / total, 1e-14));
  }
  for (int j = 0; j < 5; ++j) {
    double total = 0;
    for (int i = 0; i < 4; ++i) total += std::exp(hx[std::size_t(i * 5 + j)]);
    for (int i = 0; i < 4; ++i)
      CHECK(test::close(ls[std::size_t(i * 5 + j)], hx[std::size_t(i * 5 + j)] - std::log(total), 1e-14));
  }
  for (int axis : {0, 1, -1}) {
    CAPTURE(axis);
    against_differences("softmax", [&](const auto& t) { return sum(ad::softmax(t * 2.0, axis) * c); }, x);
    against_differences("log_softmax", [&](const auto& t) { return sum(ad::log_softmax(sin(t), axis) * c); }, x);
  }
  // no overflow for large inputs; a 0-d input is an error
  const auto big = host_values(ad::softmax(adops::dev({1000, 1000, 0})));
  CHECK(big == std::vector<double>{0.5, 0.5, 0});
  CHECK_THROWS_AS(ad::softmax(zeros<double, adops::B>({})), index_error);
}

TEST_CASE("views of variables: transpose, reshape, broadcast_to, flip, squeeze, diagonal and split") {
  const arr<double> x = adops::random({3, 4}, 81), c = adops::random({4, 3}, 82), d = adops::random({2, 3, 4}, 83);
  against_differences("transpose", [&](const auto& t) { return sum(sin(transpose(t)) * c); }, x);
  against_differences("permute_dims", [&](const auto& t) { return sum(permute_dims(t, {1, 0}) * c * transpose(t)); }, x);
  against_differences("swapaxes", [&](const auto& t) { return sum(swapaxes(t, 0, 1) * c); }, x);
  against_differences("reshape (a view)", [&](const auto& t) { return sum(reshape(t, {4, 3}) * c); }, x);
  against_differences("broadcast_to", [&](const auto& t) { return sum(sin(broadcast_to(t, {2, 3, 4})) * d); }, x);
  against_differences("flip", [&](const auto& t) { return sum(flip(t) * t); }, x);
  against_differences("flip axis", [&](const auto& t) { return sum(exp(flip(t, 1)) * transpose(c)); }, x);
  against_differences("expand_dims and squeeze", [&](const auto& t) { return sum(squeeze(expand_dims(t, 0) * t)); }, x);
  const arr<double> sq = adops::random({4, 4}, 84);
  against_differences("diagonal", [&](const auto& t) { return sum(square(diagonal(t))); }, sq);
  // reshape of a transposed variable copies (one node); the adjoint lands in the right places
  {
    ad::tape tp;
    auto xv = ad::param(tp, x);
    auto flat = ad::reshape(ad::transpose(xv), {12});
    CHECK(tp.size() == 1);  // the copy
    const arr<double> w = adops::random({12}, 85);
    auto loss = sum(flat * w);
    ad::backward(loss);
    const auto gx = host_values(arr<double>(ad::gradient(xv))), hw = host_values(w);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j) CHECK(gx[std::size_t(i * 4 + j)] == hw[std::size_t(j * 3 + i)]);
  }
  // split: views, no node; each part's adjoint lands in its rows
  {
    ad::tape tp;
    auto xv = ad::param(tp, x);
    const auto parts = split(xv, 3, 0);  // found by argument-dependent lookup, like the array function
    REQUIRE(parts.size() == 3);
    CHECK(tp.size() == 0);
    auto loss = sum(parts[0] * 1.0 + parts[2] * 3.0);
    ad::backward(loss);
    const auto gx = host_values(arr<double>(ad::gradient(xv)));
    for (int j = 0; j < 12; ++j) CHECK(gx[std::size_t(j)] == (j < 4 ? 1.0 : j < 8 ? 0.0 : 3.0));
  }
}

TEST_CASE("matmul, dot and tensordot of variables: GEMM adjoints against central differences") {
  const arr<double> A = adops::random({3, 4}, 91), Bm = adops::random({4, 5}, 92), v4 = adops::random({4}, 93),
                    v3 = adops::random({3}, 94), S = adops::random({2, 3, 4}, 95), C = adops::random({3, 5}, 96);
  against_differences("matrix @ matrix (first)", [&](const auto& t) { return sum(sin(matmul(t, Bm)) * C); }, A);
  against_differences("matrix @ matrix (second)", [&](const auto& t) { return sum(sin(matmul(A, t)) * C); }, Bm);
  against_differences("both operands one variable", [&](const auto& t) { return sum(matmul(t, transpose(t))); }, A);
  against_differences("matrix @ vector", [&](const auto& t) { return sum(exp(matmul(A, t))); }, v4);
  against_differences("vector @ matrix", [&](const auto& t) { return sum(square(matmul(t, A))); }, v3);
  against_differences("vector @ vector", [&](const auto& t) { return sum(matmul(t, v4) * matmul(t, t)); }, v4);
  against_differences("batch @ matrix (broadcast)", [&](const auto& t) { return sum(square(matmul(S, t))); }, Bm);
  against_differences("batch @ matrix (the batch)", [&](const auto& t) { return sum(square(matmul(t, Bm))); }, S);
  // a matrix under a stack: its adjoint is one GEMM over the folded stack, written into a
  // transposed view (a linear layer's weightᵀ) where it lies, added on a second use, and the
  // per-sample products summed where the stack cannot fold (a permuted stack)
  const arr<double> S2 = adops::random({2, 3, 5, 4}, 100), P = adops::random({3, 2, 4}, 101);
  against_differences("two-axis stack @ matrixᵀ", [&](const auto& t) { return sum(sin(matmul(S2, transpose(t)))); }, adops::random({7, 4}, 102));
  against_differences("stack @ matrixᵀ twice", [&](const auto& t) { return sum(square(matmul(S, transpose(t))) + matmul(S, transpose(t))); }, adops::random({5, 4}, 103));
  against_differences("permuted stack @ matrix", [&](const auto& t) { return sum(square(matmul(swapaxes(P, 0, 1), t))); }, Bm);
  against_differences("two products into one adjoint", [&](const auto& t) { return sum(matmul(t, Bm) * 2.0 + square(matmul(t, Bm))); }, A);
  against_differences("an expression operand", [&](const auto& t) { return sum(tanh(matmul(t * 2.0 + 1.0, Bm))); }, A);
  against_differences("dot 2-d", [&](const auto& t) { return sum(square(dot(t, Bm))); }, A);
  against_differences("dot 1-d", [&](const auto& t) { return sum(dot(t, v4) * 3.0); }, v4);
  against_differences("dot n-d . m-d", [&](const auto& t) { return sum(square(dot(S, t))); }, adops::random({2, 4, 3}, 97));
  against_differences("tensordot axes", [&](const auto& t) { return sum(square(tensordot(S, t, {1, 2}, {0, 1}))); }, adops::random({3, 4, 2}, 98));
  against_differences("tensordot n", [&](const auto& t) { return sum(sin(tensordot(t, S, 1))); }, adops::random({5, 2}, 99));
  // the value against a hand loop
  ad::tape tp;
  auto av = ad::param(tp, A);
  const auto y = host_values(arr<double>(ad::matmul(av, Bm).value())), ha = host_values(A), hb = host_values(Bm);
  REQUIRE(y.size() == 15);
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 5; ++j) {
      double want = 0;
      for (std::size_t k = 0; k < 4; ++k) want += ha[i * 4 + k] * hb[k * 5 + j];
      CHECK(test::close(y[i * 5 + j], want, 1e-14));
    }
  // bad shapes: the array function's error
  CHECK_THROWS_AS((void)ad::matmul(av, A), shape_error);
  CHECK_THROWS_AS((void)ad::tensordot(av, Bm, {0}, {0}), shape_error);
}

TEST_CASE("einsum of variables: contractions, diagonals, sums and broadcasts against central differences") {
  const arr<double> A = adops::random({3, 4}, 111), Bm = adops::random({4, 5}, 112), C = adops::random({3, 5}, 113),
                    Q = adops::random({4, 4}, 114), S = adops::random({2, 3, 4}, 115), T3 = adops::random({2, 4, 5}, 116),
                    v4 = adops::random({4}, 117), v3 = adops::random({3}, 118), W = adops::random({3, 4}, 119),
                    X3 = adops::random({3, 4, 5}, 120), w4 = adops::random({4}, 121), w34 = adops::random({3, 4}, 122),
                    v5 = adops::random({5}, 124);
  against_differences("ij,jk->ik (first)", [&](const auto& t) { return sum(sin(einsum("ij,jk->ik", t, Bm)) * C); }, A);
  against_differences("ij,jk->ik (second)", [&](const auto& t) { return sum(sin(einsum("ij,jk->ik", A, t)) * C); }, Bm);
  against_differences("implicit ij,jk", [&](const auto& t) { return sum(square(einsum("ij,jk", t, Bm))); }, A);
  against_differences("one variable twice", [&](const auto& t) { return sum(einsum("ij,kj->ik", t, t) * C.view()(fusor::all, fusor::range(0, 3))); }, A);
  against_differences("bij,bjk->bik", [&](const auto& t) { return sum(square(einsum("bij,bjk->bik", S, t))); }, T3);
  against_differences("i,i-> (inner)", [&](const auto& t) { return sum(exp(einsum("i,i->", t, v4))); }, v4);
  against_differences("i,j->ij (outer)", [&](const auto& t) { return sum(einsum("i,j->ij", v3, t) * W); }, v4);
  against_differences("ij,ij->ij", [&](const auto& t) { return sum(sin(einsum("ij,ij->ij", t, W))); }, A);
  against_differences("ii,ij->j (a diagonal)", [&](const auto& t) { return sum(square(einsum("ii,ij->j", t, A.view()(fusor::range(0, 3), fusor::all)))); }, adops::random({3, 3}, 123));
  against_differences("ijk,k->i (j summed in one operand)", [&](const auto& t) { return sum(square(einsum("ijk,k->i", t, v5))); }, X3);
  against_differences("i,jk->ij (k summed in the other)", [&](const auto& t) { return sum(square(einsum("i,jk->ij", t, Bm)) * w34.view()(fusor::all, fusor::range(0, 4))); }, v3);
  against_differences("i,jk->ij (the second, k summed there)", [&](const auto& t) { return sum(square(einsum("i,jk->ij", v3, t)) * w34); }, Bm);
  against_differences("ij,jj->i (the second, a diagonal)", [&](const auto& t) { return sum(sin(einsum("ij,jj->i", A, t))); }, Q);
  against_differences("ii,ii->i (both one variable)", [&](const auto& t) { return sum(square(einsum("ii,ii->i", t, t))); }, Q);
  against_differences("a transposed view", [&](const auto& t) { return sum(sin(einsum("ij,jk->ik", transpose(t), Bm))); }, adops::random({4, 3}, 125));
  against_differences("ij->ji", [&](const auto& t) { return sum(einsum("ij->ji", t) * transpose(W)); }, A);
  against_differences("ij->ij (the adjoint is g)", [&](const auto& t) { return sum(square(einsum("ij->ij", t)) * W); }, A);
  against_differences("ii->i", [&](const auto& t) { return sum(square(einsum("ii->i", t)) * w4); }, Q);
  against_differences("ii-> (trace)", [&](const auto& t) { return sum(exp(einsum("ii->", t))); }, Q);
  against_differences("ij->j", [&](const auto& t) { return sum(square(einsum("ij->j", t)) * w4); }, A);
  against_differences("ijk->", [&](const auto& t) { return sum(sin(einsum("ijk->", t))); }, X3);
  // closed form: d trace(Q) / dQ = I
  ad::tape tp;
  auto qv = ad::param(tp, Q);
  auto tr = einsum("ii->", qv);
  ad::backward(tr);
  const auto gq = host_values(arr<double>(ad::gradient(qv)));
  REQUIRE(gq.size() == 16);
  for (std::size_t i = 0; i < 16; ++i) CHECK(gq[i] == (i % 5 == 0 ? 1.0 : 0.0));
  // the value is fusor::einsum's
  const auto y = host_values(arr<double>(einsum("ij,jk->ik", qv, Q).value())), want = host_values(arr<double>(einsum("ij,jk->ik", Q, Q)));
  REQUIRE(y.size() == want.size());
  for (std::size_t i = 0; i < y.size(); ++i) CHECK(y[i] == want[i]);
  // bad input: the array function's errors
  CHECK_THROWS_AS((void)einsum("ij,jk->ik", qv, A), shape_error);
  CHECK_THROWS_AS((void)einsum("ij->k", qv), value_error);
}

TEST_CASE("concatenate, stack, pad and roll of variables") {
  const arr<double> x = adops::random({2, 3}, 101), y = adops::random({4, 3}, 102);
  // closed forms: the adjoint of sum(w * op(x)) is the matching part of w
  ad::tape tp;
  auto xv = ad::param(tp, x), yv = ad::param(tp, y);
  const arr<double> w = adops::random({6, 3}, 103);
  auto loss = sum(ad::concatenate({xv, yv}, 0) * w);
  ad::backward(loss);
  const auto hw = host_values(w), gx = host_values(arr<double>(ad::gradient(xv))),
             gy = host_values(arr<double>(ad::gradient(yv)));
  for (std::size_t i = 0; i < 6; ++i) CHECK(gx[i] == hw[i]);
  for (std::size_t i = 0; i < 12; ++i) CHECK(gy[i] == hw[6 + i]);
  // against central differences, through the array functions on the array side (the constant
  // weights are named: a recorded expression reads its arrays again in the backward pass)
  const arr<double> w26 = adops::random({2, 6}, 104), w223 = adops::random({2, 2, 3}, 105),
                    w56 = adops::random({5, 6}, 106), w23 = adops::random({2, 3}, 107), w23b = adops::random({2, 3}, 108);
  against_differences("concatenate axis 1", [&](const auto& t) {
    if constexpr (adops::is_var_arg<decltype(t)>) return sum(sin(ad::concatenate({t, ad::eval(t * 2.0)}, 1)) * w26);
    else {
      const arr<double> t2 = t * 2.0;
      return sum(sin(concatenate(std::vector{t.view(), t2.view()}, 1)) * w26);
    }
  }, x);
  against_differences("stack axis 1", [&](const auto& t) {
    if constexpr (adops::is_var_arg<decltype(t)>) return sum(square(ad::stack({t, ad::eval(exp(t))}, 1)) * w223);
    else {
      const arr<double> e = exp(t);
      return sum(square(stack(std::vector{t.view(), e.view()}, 1)) * w223);
    }
  }, x);
  against_differences("pad", [&](const auto& t) { return sum(sin(pad(t, {{1, 2}, {0, 3}}, pad_mode::constant, 0.5)) * w56); }, x);
  against_differences("roll", [&](const auto& t) { return sum(roll(t * t, 2, 1) * w23); }, x);
  against_differences("roll flattened", [&](const auto& t) { return sum(roll(t, -4) * w23b); }, x);
  // the modes that read the input: widths beyond the axis (wrap, symmetric and reflect fold more
  // than once), a length-1 axis, an axis left alone
  const arr<double> x3 = adops::random({3, 1, 4}, 109), w3 = adops::random({11, 3, 6}, 110);
  for (const pad_mode mode : {pad_mode::edge, pad_mode::wrap, pad_mode::reflect, pad_mode::symmetric}) {
    against_differences(pad_mode_name(mode), [&](const auto& t) {
      return sum(square(pad(t, {{5, 3}, {1, 1}, {0, 2}}, mode)) * w3);
    }, x3);
  }
  CHECK(adops::host_values(ad::pad(xv, {{0, 0}, {0, 0}}, pad_mode::edge).value()) == adops::host_values(x));
  CHECK_THROWS_WITH_AS((void)ad::pad(xv, {{1, 1}, {1, 1}, {1, 1}}, pad_mode::reflect),
                       "fusor: pad expects 1 or 2 (before, after) pairs for shape (2, 3), got 3", value_error);
  CHECK_THROWS_WITH_AS((void)ad::pad(xv, {{1, -1}}, pad_mode::wrap),
                       "fusor: pad widths must be >= 0, got (1, -1) for axis 0", value_error);
  CHECK_THROWS_AS((void)ad::concatenate({xv, ad::var<double, adops::B>(ad::transpose(yv))}, 0), shape_error);
  ad::tape other;
  auto zv = ad::param(other, x);
  CHECK_THROWS_AS((void)ad::concatenate({xv, zv}, 0), ad::tape_error);
}

TEST_CASE("take and mask_select of variables: the adjoint scatter-adds") {
  const arr<double> x = adops::random({3, 5}, 131);
  const arr<std::int64_t> idx = test::on<adops::B>(std::vector<std::int64_t>{4, 0, -1, 2, 4, 4}, {6});
  const arr<double> w = adops::random({3, 6}, 132), wf = adops::random({6}, 133);
  against_differences("take axis 1 (repeated, negative)", [&](const auto& t) { return sum(sin(take(t, idx, 1)) * w); }, x);
  against_differences("take flattened", [&](const auto& t) { return sum(square(take(t, idx)) * wf); }, x);
  // closed form: an index read k times gets k times the adjoint
  const auto g = host_values(ad::grad([&](const auto& t) { return sum(take(t, idx, 1)); })(x));
  for (int i = 0; i < 3; ++i) {
    const double want[5] = {1, 0, 1, 0, 4};  // column 4 is read as 4, 4, 4 and -1
    for (int j = 0; j < 5; ++j) CHECK(g[std::size_t(i * 5 + j)] == want[j]);
  }
  // a take of a view (a column slice) lands in the view
  against_differences("take of a slice", [&](const auto& t) { return sum(exp(take(t(fusor::all, fusor::range(1, 4)), idx(fusor::range(1, 3)), 1))); }, x);
  // boolean masks
  std::vector<bool> hm(15);
  for (std::size_t i = 0; i < 15; ++i) hm[i] = i % 3 != 1;
  arr<bool> mask(extents{3, 5});
  {
    std::vector<std::uint8_t> bytes(hm.begin(), hm.end());
    const arr<std::uint8_t> mb = test::on<adops::B>(bytes, {3, 5});
    mask = mb != std::uint8_t(0);
  }
  const arr<double> wm = adops::random({10}, 134);
  against_differences("mask_select", [&](const auto& t) { return sum(square(mask_select(t * 2.0, mask)) * wm); }, x);
  const auto gm = host_values(ad::grad([&](const auto& t) { return sum(mask_select(t, mask)); })(x));
  for (std::size_t i = 0; i < 15; ++i) CHECK(gm[i] == (hm[i] ? 1.0 : 0.0));
  // the mask's adjoint adds to what is already there (the later node runs first)
  const auto gm2 = host_values(ad::grad([&](const auto& t) { return sum(mask_select(t, mask)) + sum(t); })(x));
  for (std::size_t i = 0; i < 15; ++i) CHECK(gm2[i] == (hm[i] ? 2.0 : 1.0));
  const auto gt2 = host_values(ad::grad([&](const auto& t) { return sum(take(t, idx, 1)) + sum(t * 2.0); })(x));
  for (std::size_t i = 0; i < 15; ++i) CHECK(gt2[i] == g[i] + 2.0);
  CHECK_THROWS_AS(ad::grad([&](const auto& t) { return sum(take(t, idx * 3, 1)); })(x), index_error);
}

TEST_CASE("custom_vjp: a user adjoint through the registration point of the library's operations") {
  // x³ with its hand-written derivative 3x², and a residual (x²) kept from the forward pass
  auto cube = ad::custom_vjp(
      [](const auto& x) {
        arr<double> sq = x * x;
        arr<double> y = sq * x;
        return std::make_pair(std::move(y), std::move(sq));
      },
      [](const arr<double>& sq, const auto& g) { return 3.0 * sq * g; });
  const arr<double> x = adops::random({7}, 111);
  const auto hx = host_values(x);
  const auto g = host_values(ad::grad([&](const auto& t) { return sum(sin(cube(t * 2.0))); })(x));
  for (std::size_t i = 0; i < hx.size(); ++i) {
    const double u = 2 * hx[i];
    CHECK(test::close(g[i], std::cos(u * u * u) * 3 * u * u * 2, 1e-13));
  }
  // called on arrays, it is the forward function
  CHECK(host_values(cube(x)) == host_values(arr<double>(x * x * x)));
  // the user's adjoint is the one used: a straight-through estimator of rounding
  auto ste = ad::custom_vjp([](const auto& x) { return std::make_pair(arr<double>(round(x)), 0); },
                            [](int, const auto& g) { return arr<double>(g); });
  CHECK(host_values(ad::grad([&](const auto& t) { return sum(ste(t) * 2.0); })(x)) == std::vector<double>(7, 2.0));
  // two arguments: one cotangent each, a tuple; the residuals are the arguments' views
  auto mul2 = ad::custom_vjp(
      [](const auto& a, const auto& b) { return std::make_pair(arr<double>(a * b), std::make_pair(a, b)); },
      [](const auto& res, const auto& g) { return std::make_tuple(arr<double>(g * res.second), arr<double>(g * res.first)); });
  const arr<double> y = adops::random({7}, 112);
  const auto [ga, gb] = ad::grad([&](const auto& a, const auto& b) { return sum(mul2(a, b)); }, ad::argnums<0, 1>)(x, y);
  CHECK(host_values(ga) == host_values(y));
  CHECK(host_values(gb) == host_values(x));
  // gradcheck in reverse mode checks a user adjoint: the right one passes, a wrong one fails
  const auto ok = ad::gradcheck<ad::gradcheck_mode::reverse>([&](const auto& t) { return sum(sin(cube(t))); }, x,
                                                               {.directions = 3, .per_coordinate = true});
  CHECK(ok.passed);
  CHECK(ok.directions_checked == 3 + 7);
  CHECK(ok.max_abs_error < 1e-8);
  auto off = ad::custom_vjp([](const auto& t) { return std::make_pair(arr<double>(t * t), t.copy()); },
                            [](const arr<double>& t, const auto& gr) { return 2.2 * t * gr; });  // should be 2t
  const auto bad = ad::gradcheck<ad::gradcheck_mode::reverse>([&](const auto& t) { return off(t); }, x,
                                                                {.directions = 2, .per_coordinate = true});
  CHECK_FALSE(bad.passed);
  CHECK(bad.max_abs_error > 1e-3);
  CHECK(bad.report().find("gradcheck FAILED: 9 directions") == 0);
  // reverse mode reaches what forward mode cannot (BLAS has no dual numbers); both modes together
  const arr<double> W = adops::random({3, 7}, 113);
  // (eval: matmul's result is a temporary, which an expression returned from f would outlive)
  const auto lin = ad::gradcheck<ad::gradcheck_mode::reverse>([&](const auto& t) { return eval(square(tanh(matmul(W, t)))); }, x,
                                                                {.directions = 4});
  INFO(lin.report());
  CHECK(lin.passed);
  CHECK(lin.directions_checked == 4);
  const auto both = ad::gradcheck<ad::gradcheck_mode::both>([](const auto& t) { return sum(exp(t) * t); }, x, {.directions = 2});
  CHECK(both.passed);
  CHECK(both.directions_checked == 4);
  // a cotangent of the wrong shape is a typed error naming both shapes
  auto wrong = ad::custom_vjp([](const auto& x2) { return std::make_pair(arr<double>(x2 * 2.0), 0); },
                              [](int, const auto&) { return zeros<double, adops::B>({3}); });
  CHECK_THROWS_WITH_AS(ad::grad([&](const auto& t) { return sum(wrong(t)); })(x),
                       "fusor: custom_vjp's bwd returned a cotangent of shape (3,) for argument 0, expected the "
                       "argument's shape (7,)",
                       ad::tape_error);
}
