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
