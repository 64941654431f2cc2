// Forward over reverse, written once per backend: hessian and hvp through elementwise trees, matmul,
// logsumexp, softmax and log_softmax, the statistics (prod, max, min, var, std, norms), and joins,
// rolls, gathers, pads and flips, against closed forms written out by hand and central differences
// of the reverse gradient. A tape of dual numbers instantiates every operation's adjoint again for
// dual elements, so this body is a translation unit of its own: tests/test_ad_hessian.cpp (cpu, in
// the test_ad_ops program), tests/test_ad_hessian_cuda.cu (cuda, in test_ad_cuda).
//
// The includer defines TEST_BACKEND before including this file.
#include "ad_ops_helpers.hpp"

TEST_CASE("hessian and hvp: forward over reverse") {
  // f = Σ x³ + (Σ x)²: H = diag(6x) + 2
  auto f = [](const auto& t) { return sum(t * t * t) + sum(square(sum(t))); };
  const arr<double> x = adops::random({5}, 121), v = adops::random({5}, 122);
  const auto hx = host_values(x), hv = host_values(v);
  const auto H = ad::hessian(f, x);
  REQUIRE(H.shape() == extents{5, 5});
  const auto h = host_values(H);
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 5; ++j) CHECK(test::close(h[std::size_t(i * 5 + j)], (i == j ? 6 * hx[std::size_t(i)] : 0) + 2, 1e-13));
  const auto hvp = host_values(ad::hvp(f, x, v));
  double sv = 0;
  for (double e : hv) sv += e;
  for (std::size_t i = 0; i < 5; ++i) CHECK(test::close(hvp[i], 6 * hx[i] * hv[i] + 2 * sv, 1e-13));
  // Rosenbrock: its Hessian is tridiagonal, written out by hand
  auto rosen = [](const auto& t) {
    const index_t n = t.size();
    return sum(100.0 * square(t(range(1, n)) - square(t(range(0, n - 1)))) + square(1.0 - t(range(0, n - 1))));
  };
  const arr<double> r = adops::random({9}, 123, -1.5, 1.5);
  const auto hr = host_values(r);
  const auto Hr = host_values(ad::hessian(rosen, r));
  for (int i = 0; i < 9; ++i)
    for (int j = 0; j < 9; ++j) {
      const double xi = hr[std::size_t(i)];
      double want = 0;
      if (i == j) {
        if (i + 1 < 9) want += 1200 * xi * xi - 400 * hr[std::size_t(i + 1)] + 2;
        if (i > 0) want += 200;
      } else if (j == i + 1 || j == i - 1) {
        want = -400 * hr[std::size_t(std::min(i, j))];
      }
      CHECK(test::close(Hr[std::size_t(i * 9 + j)], want, 1e-12));
    }

  // through the operations that are not elementwise: matmul (BLAS has no duals: GEMMs by planes),
  // logsumexp, softmax and log_softmax. Σ(Ax)² has H = 2AᵀA; logsumexp has diag(p) − ppᵀ.
  const arr<double> A = adops::random({3, 5}, 124);
  const auto ha = host_values(A);
  const auto Hm = host_values(ad::hessian([&](const auto& t) { return sum(square(ad::matmul(A, t))); }, x));
  const auto Hl = host_values(ad::hessian([](const auto& t) { return logsumexp(t); }, x));
  double z = 0;
  for (double e : hx) z += std::exp(e);
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 5; ++j) {
      double ata = 0;
      for (int k = 0; k < 3; ++k) ata += ha[std::size_t(k * 5 + i)] * ha[std::size_t(k * 5 + j)];
      CHECK(test::close(Hm[std::size_t(i * 5 + j)], 2 * ata, 1e-13));
      const double pi = std::exp(hx[std::size_t(i)]) / z, pj = std::exp(hx[std::size_t(j)]) / z;
      CHECK(test::close(Hl[std::size_t(i * 5 + j)], (i == j ? pi : 0) - pi * pj, 1e-13));
    }
  // H·v against central differences of the reverse gradient along v, for matrix arguments
  const arr<double> X = adops::random({3, 3}, 125), V = adops::random({3, 3}, 126), C = adops::random({3, 3}, 127);
  auto products = [](const auto& t) { return sum(square(ad::matmul(t, t))); };
  auto softmaxes = [&](const auto& t) {
    return sum(ad::log_softmax(t, 1) * C) + sum(square(ad::softmax(t, 0))) + sum(logsumexp(t, 1));
  };
  adops::hvp_against_differences("matmul of a variable by itself", products, X, V);
  adops::hvp_against_differences("softmax, log_softmax and logsumexp along axes", softmaxes, X, V);

  // the statistics on a tape of dual numbers: prod, max, min, var, std and the norms, whole and
  // along axes (distinct entries and a distinct maximum: away from the non-smooth points)
  auto stats = [](const auto& t) {
    return square(prod(t)) + max(t) * min(t) + sum(square(max(t, 1))) + sum(min(t, 0, true)) + sum(var(t, 1)) +
           ad::std(t) + sum(ad::std(t, 0, ddof(1))) + norm(t) + sum(norm(t, 3.0, 1)) + norm(t, 1.0) +
           square(norm(t, std::numeric_limits<double>::infinity())) + sum(square(norm(t, 2.0, 0, true)));
  };
  adops::hvp_against_differences("prod, max, min, var, std and norms, whole and along axes", stats, X, V);
  // joins, rolls, gathers, pads and flips on a tape of dual numbers
  const arr<double> C6 = adops::random({6, 3}, 128);
  const arr<std::int64_t> picks = test::on<adops::B>(std::vector<std::int64_t>{0, 4, 4, 8}, {4});
  auto quartic = [](const auto& e) { return sum(square(square(e))); };
  auto moves = [&](const auto& t) {
    return sum(square(ad::concatenate({t, ad::eval(t * t)}, 0) * C6)) + quartic(ad::stack({t, t}, 1)) +
           sum(square(sin(ad::roll(t, 1, 0)))) + quartic(ad::take(t, picks)) + sum(square(ad::pad(t, 1))) +
           quartic(ad::flip(t, 1));
  };
  adops::hvp_against_differences("concatenate, stack, roll, take, pad and flip", moves, X, V);
  // closed forms: var (ddof 0) has H = (2/n)(I − 11ᵀ/n); prod has H_ij = Π_{k≠i,j} x_k off the diagonal
  const auto Hv = host_values(ad::hessian([](const auto& t) { return var(t); }, x));
  const auto Hp = host_values(ad::hessian([](const auto& t) { return prod(t); }, x));
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 5; ++j) {
      CHECK(test::close(Hv[std::size_t(i * 5 + j)], (2.0 / 5) * ((i == j ? 1.0 : 0.0) - 1.0 / 5), 1e-13));
      double others = 1;
      for (int k = 0; k < 5; ++k)
        if (k != i && k != j) others *= hx[std::size_t(k)];
      CHECK(test::close(Hp[std::size_t(i * 5 + j)], i == j ? 0.0 : others, 1e-13));
    }
}

// Forward mode through the products and convolutions (issue 53): their GEMMs taken on the planes
// of the dual numbers (linalg's planar product). Each Jacobian by forward mode against reverse
// mode's, each jvp against central differences (gradcheck), and the same written with ad:: and
// with fusor:: names (ad::matmul of arrays is fusor::matmul). A function returns a value, not an
// expression of a product's temporary (eval, found by argument-dependent lookup: ad's or fusor's).
namespace forwardproducts {
template <class F>
void jacobians_agree(const char* name, F f, const arr<double>& x) {
  const std::string label = name;
  CAPTURE(label);
  const auto jf = host_values(ad::jacfwd(f, x));
  const auto jr = host_values(ad::jacrev(f, x));
  REQUIRE(jf.size() == jr.size());
  index_t bad = 0;
  for (std::size_t i = 0; i < jf.size(); ++i)
    if (!test::close(jf[i], jr[i], 1e-13) && bad++ == 0) {
      CAPTURE(i);
      CHECK(jf[i] == doctest::Approx(jr[i]));
    }
  CHECK(bad == 0);
  const auto r = ad::gradcheck(f, x, {.directions = 4});
  CHECK_MESSAGE(r.passed, r.report());
}
}  // namespace forwardproducts

TEST_CASE("forward mode through matmul, dot, tensordot, einsum and the convolutions: jacfwd against jacrev, jvp against differences") {
  namespace F = fusor::ad::nn::functional;
  using forwardproducts::jacobians_agree;
  const arr<double> A = adops::random({5, 4}, 131), Bm = adops::random({3, 2}, 132), c = adops::random({3}, 133);
  const arr<double> X = adops::random({4, 3}, 134), T3 = adops::random({3, 4, 2}, 135);
  jacobians_agree("matmul (constant on the left, tanh after)", [&](const auto& t) { return eval(tanh(ad::matmul(A, t))); }, X);
  jacobians_agree("matmul (the variable on both sides)", [&](const auto& t) { return ad::matmul(t, fusor::matmul(Bm, fusor::transpose(Bm))); }, X);
  jacobians_agree("dot with a vector, and a 1-d variable", [&](const auto& t) { return eval(square(ad::dot(t, c))); }, X);
  jacobians_agree("tensordot", [&](const auto& t) { return ad::tensordot(T3, t, extents{1, 0}, extents{0, 1}); }, X);
  jacobians_agree("einsum of a constant and a variable", [&](const auto& t) { return ad::einsum("ij,jk->ik", A, eval(sin(t))); }, X);
  jacobians_agree("einsum of the variable with itself", [&](const auto& t) { return ad::einsum("ij,kj->ik", t, t); }, X);
  jacobians_agree("einsum transposing one operand", [&](const auto& t) { return eval(square(ad::einsum("ij->ji", t))); }, X);
  // fusor's own names on arrays of duals (a jvp needs no ad:: spelling)
  {
    const arr<double> v = adops::random({4, 3}, 136);
    const auto [y, dy] = ad::jvp([&](const auto& t) { return fusor::matmul(A, t); }, X, v);
    const auto want = host_values(arr<double>(fusor::matmul(A, v)));
    CHECK(host_values(y) == host_values(arr<double>(fusor::matmul(A, X))));
    CHECK(host_values(dy) == want);  // linear: the tangent is A·v itself
  }
  // edge sizes: an empty contraction (the product is zeros) and one-element operands
  {
    const arr<double> empty = adops::random({0, 3}, 137), e = adops::random({2, 0}, 138);
    const auto [y, dy] = ad::jvp([&](const auto& t) { return ad::matmul(e, t); }, empty, empty);
    CHECK(y.shape() == extents{2, 3});
    for (double d : host_values(dy)) CHECK(d == 0.0);
    jacobians_agree("1 x 1 matmul", [&](const auto& t) { return ad::matmul(t, t); }, adops::random({1, 1}, 139));
  }
  // bad input: the product's shapes are checked before any work, as for numbers
  const arr<double> wrong = adops::random({3, 4}, 149);
  CHECK_THROWS_AS(ad::jvp([&](const auto& t) { return ad::matmul(A, t); }, wrong, wrong), fusor::shape_error);
  // the convolutions: with respect to the input, and to the weight (the input then a constant)
  const arr<double> img = adops::random({2, 3, 5, 7}, 140), w = adops::random({4, 3, 3, 2}, 141), bias = adops::random({4}, 142);
  fusor::ad::nn::conv_options o;
  o.stride = {2, 1};
  o.padding = {1};
  o.dilation = {1, 2};
  jacobians_agree("conv2d in its input", [&](const auto& t) { return F::conv2d(t, w, bias, o); }, img);
  jacobians_agree("conv2d in its weight", [&](const auto& k) { return F::conv2d(img, k, o); }, w);
  const arr<double> sig = adops::random({1, 2, 9}, 143), k1 = adops::random({2, 2, 3}, 144);
  jacobians_agree("conv_transpose1d in its input", [&](const auto& t) { return F::conv_transpose1d(t, k1); }, sig);
  // forward over reverse through einsum and the convolutions
  const arr<double> V = adops::random({4, 3}, 145);
  adops::hvp_against_differences("einsum", [&](const auto& t) { return sum(square(ad::einsum("ij,jk->ik", A, t))) + sum(t * t * t); }, X, V);
  const arr<double> small = adops::random({1, 2, 4, 5}, 146), dir = adops::random({1, 2, 4, 5}, 147), k2 = adops::random({3, 2, 2, 2}, 148);
  adops::hvp_against_differences("conv2d", [&](const auto& t) { return sum(square(tanh(F::conv2d(t, k2)))); }, small, dir);
}

// Reverse over reverse (issue 53): a gradient taken of variables is recorded on the enclosing tape
// and differentiated again. grad of ⟨∇f, v⟩ against forward over reverse (hvp) and central
// differences, jacrev of grad against hessian, through elementwise trees, reductions, views,
// matmul and softmax; a gradient penalty (value and gradient both used), a mixed second
// derivative with respect to an argument that is not differentiated inside, and a MAML step on a
// parameter tree against central differences of the whole outer function.
namespace reverseoverreverse {
template <class F>
void grad_of_grad_agrees(const char* name, F f, const arr<double>& x, const arr<double>& v) {
  const std::string label = name;
  CAPTURE(label);
  auto along = ad::grad([&](const auto& t) { return sum(ad::grad(f)(t) * v); });
  const auto rr = host_values(along(x));
  const auto fr = host_values(ad::hvp(f, x, v));
  REQUIRE(rr.size() == fr.size());
  index_t bad = 0;
  for (std::size_t i = 0; i < rr.size(); ++i)
    if (!test::close(rr[i], fr[i], 1e-12) && bad++ == 0) {
      CAPTURE(i);
      CHECK(rr[i] == doctest::Approx(fr[i]));
    }
  CHECK(bad == 0);
  const auto jr = host_values(ad::jacrev(ad::grad(f), x));
  const auto h = host_values(ad::hessian(f, x));
  REQUIRE(jr.size() == h.size());
  for (std::size_t i = 0; i < jr.size(); ++i)
    if (!test::close(jr[i], h[i], 1e-12) && bad++ == 0) {
      CAPTURE(i);
      CHECK(jr[i] == doctest::Approx(h[i]));
    }
  CHECK(bad == 0);
}
}  // namespace reverseoverreverse

TEST_CASE("reverse over reverse: grad of grad and jacrev of grad against hvp, hessian and differences") {
  using reverseoverreverse::grad_of_grad_agrees;
  auto cubic = [](const auto& t) { return sum(t * t * t) + sum(square(sum(t))) + sum(exp(sin(t)) * t); };
  // sizes 0, 1, around a double SIMD width, and a large odd one
  for (index_t n : {index_t(0), index_t(1), index_t(3), index_t(5), index_t(37)}) {
    CAPTURE(n);
    grad_of_grad_agrees("elementwise and whole reductions", cubic, adops::random({n}, 151), adops::random({n}, 152));
  }
  const arr<double> X = adops::random({3, 4}, 153), V = adops::random({3, 4}, 154), A = adops::random({4, 4}, 155),
                    C = adops::random({3, 4}, 156);
  grad_of_grad_agrees("views: slices, transposes and reductions along axes",
                      [](const auto& t) {
                        return sum(square(t(range(1, 3), fusor::all) - square(t(range(0, 2), fusor::all)))) + sum(square(sum(t, 0))) +
                               sum(cos(ad::transpose(t)) * ad::transpose(t));
                      },
                      X, V);
  grad_of_grad_agrees("matmul", [&](const auto& t) { return sum(square(ad::matmul(t, A))) + sum(square(ad::matmul(t, ad::transpose(t)))); }, X, V);
  grad_of_grad_agrees("softmax, log_softmax and logsumexp",
                      [&](const auto& t) { return sum(ad::log_softmax(t, 1) * C) + sum(square(ad::softmax(t, 0))) + logsumexp(t); },
                      X, V);
  // against central differences of the gradient along v
  {
    auto f = [&](const auto& t) { return sum(ad::softmax(ad::matmul(t, A), 1) * C) + sum(t * t * t); };
    auto along = ad::grad([&](const auto& t) { return sum(ad::grad(f)(t) * V); });
    const auto rr = host_values(along(X));
    const double h = 1e-5;
    const auto up = host_values(ad::grad(f)(arr<double>(X + h * V)));
    const auto down = host_values(ad::grad(f)(arr<double>(X - h * V)));
    for (std::size_t i = 0; i < rr.size(); ++i) CHECK(test::close(rr[i], (up[i] - down[i]) / (2 * h), 1e-7));
  }
  // a gradient penalty: d/dx [f + |∇f|²] = ∇f + 2 H ∇f, the value and the gradient both outputs
  {
    const arr<double> x = adops::random({6}, 157);
    auto penalised = ad::grad([&](const auto& t) {
      auto [value, g] = ad::value_and_grad(cubic)(t);
      return value + sum(g * g);
    });
    const auto got = host_values(penalised(x));
    const arr<double> g = ad::grad(cubic)(x);
    const auto hg = host_values(ad::hvp(cubic, x, g)), gv = host_values(g);
    for (std::size_t i = 0; i < got.size(); ++i) CHECK(test::close(got[i], gv[i] + 2 * hg[i], 1e-12));
  }
  // a mixed second derivative: f(x, w) = Σ w x², ∇ₓf = 2wx, so d/dw ⟨∇ₓf, v⟩ = 2vx; and both at once
  {
    const arr<double> x = adops::random({5}, 158), w = adops::random({5}, 159), v = adops::random({5}, 160);
    auto f = [](const auto& a, const auto& b) { return sum(b * a * a); };
    const auto got = host_values(ad::grad([&](const auto& b) { return sum(ad::grad(f)(x, b) * v); })(w));
    const auto hx = host_values(x), hv = host_values(v), hw = host_values(w);
    for (std::size_t i = 0; i < got.size(); ++i) CHECK(test::close(got[i], 2 * hv[i] * hx[i], 1e-13));
    // x and w both variables outside, x differentiated inside: d/dx ⟨2wx, v⟩ = 2wv, d/dw = 2vx
    const auto [gx, gw] = ad::grad([&](const auto& a, const auto& b) { return sum(ad::grad(f)(a, b) * v); },
                                   ad::argnums<0, 1>)(x, w);
    const auto hgx = host_values(gx), hgw = host_values(gw);
    for (std::size_t i = 0; i < 5; ++i) {
      CHECK(test::close(hgx[i], 2 * hw[i] * hv[i], 1e-13));
      CHECK(test::close(hgw[i], 2 * hv[i] * hx[i], 1e-13));
    }
  }
  // one step of MAML on a parameter tree (w, b): the meta-gradient of the loss after an inner
  // gradient step, against central differences of the outer function along a random direction
  {
    const arr<double> X1 = adops::random({7, 3}, 161), y1 = adops::random({7, 2}, 162), X2 = adops::random({5, 3}, 163),
                      y2 = adops::random({5, 2}, 164);
    auto loss = [](const auto& p, const auto& Xs, const auto& ys) {
      return mean(square(tanh(ad::matmul(Xs, std::get<0>(p))) + std::get<1>(p) - ys));
    };
    auto inner = [&](const auto& p) { return loss(p, X1, y1); };
    auto meta = [&](const auto& p) {
      const auto g = ad::grad(inner)(p);
      const auto w1 = eval(std::get<0>(p) - 0.3 * std::get<0>(g));
      const auto b1 = eval(std::get<1>(p) - 0.3 * std::get<1>(g));
      return loss(std::make_tuple(std::cref(w1), std::cref(b1)), X2, y2);
    };
    const arr<double> w = adops::random({3, 2}, 165), b = adops::random({2}, 166);
    const arr<double> dw = adops::random({3, 2}, 167), db = adops::random({2}, 168);
    const auto [gw, gb] = ad::grad(meta)(std::make_tuple(std::cref(w), std::cref(b)));
    double along = 0;
    const auto hgw = host_values(gw), hgb = host_values(gb), hdw = host_values(dw), hdb = host_values(db);
    for (std::size_t i = 0; i < hgw.size(); ++i) along += hgw[i] * hdw[i];
    for (std::size_t i = 0; i < hgb.size(); ++i) along += hgb[i] * hdb[i];
    const double h = 1e-5;
    auto at = [&](double s) {
      const arr<double> ws(w + s * dw), bs(b + s * db);
      return double(meta(std::make_tuple(std::cref(ws), std::cref(bs))));
    };
    CHECK(test::close(along, (at(h) - at(-h)) / (2 * h), 1e-7));
  }
  // under no_grad a gradient is still a gradient (the scope stops the caller's recording only), on
  // arrays and on variables, whose outputs are then constants
  {
    const arr<double> x = adops::random({5}, 170);
    const auto want = host_values(arr<double>(ad::grad(cubic)(x)));
    const ad::no_grad off;
    CHECK(host_values(arr<double>(ad::grad(cubic)(x))) == want);
    ad::tape t;
    const auto xv = ad::param(t, x);
    const auto g = ad::grad(cubic)(xv);
    CHECK(!g.requires_grad());
    CHECK(host_values(arr<double>(g.value())) == want);
  }
  // a variable of the enclosing recording captured by the inner function and returned: its
  // gradient would be taken on the wrong tape
  {
    const arr<double> x = adops::random({4}, 169);
    auto captured = ad::grad([](const auto& t) { return sum(ad::grad([&](const auto&) { return sum(t); })(t)); });
    CHECK_THROWS_WITH_AS(captured(x), doctest::Contains("returned a variable of another tape"), ad::tape_error);
  }
}
