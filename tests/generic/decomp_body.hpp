// The decompositions of fusor::linalg written once and instantiated per backend:
// tests/test_decompositions.cpp runs them on cpu (in the test_linalg program), test_core_cuda.cu
// on cuda. Each result is checked by an identity computed on the host with plain loops in long
// double (A inv(A) = I, U diag(S) Vh = A, A V = V diag(w), QR = A, L L^H = A, the Penrose
// conditions, ...), never by fusor's own products; NumPy's numbers come from the fixtures in
// tests/data/linalg (tests/test_decompositions.cpp, cpu).
//
// The includer defines TEST_BACKEND (fusor::cpu or fusor::cuda) before including this file.
#include "../common.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <vector>

namespace lab {

using fusor::index_t;
using B = TEST_BACKEND;
using test::host_values;
#if defined(__CUDACC__)
using ref_t = double;
#else
using ref_t = long double;
#endif

template <class T>
using wide_t = std::conditional_t<fusor::is_complex_v<T>, std::complex<ref_t>, ref_t>;
template <class T>
wide_t<T> wide(const T& x) {
  if constexpr (fusor::is_complex_v<T>) return wide_t<T>(ref_t(x.real()), ref_t(x.imag()));
  else return ref_t(x);
}
template <class T>
wide_t<T> cj(const T& x) {
  if constexpr (fusor::is_complex_v<T>) return std::conj(wide(x));
  else return wide(x);
}
/// A tolerance for identities on matrices of size n in T's precision.
template <class T>
double tol(index_t n) {
  using R = fusor::real_t<T>;
  return (std::is_same_v<R, float> ? 2e-5 : 1e-12) * double(std::max<index_t>(n, 1));
}

/// Host matrices (row-major), batch after batch.
template <class T>
struct hmat {
  std::vector<T> v;
  index_t batch, r, c;
  T at(index_t b, index_t i, index_t j) const { return v[std::size_t((b * r + i) * c + j)]; }
};
template <class X>
auto host_mats(const X& x) {
  const auto h = fusor::to<fusor::cpu>(x);
  using T = fusor::value_t<decltype(h)>;
  const index_t r = h.shape()[h.ndim() - 2], c = h.shape()[h.ndim() - 1];
  const index_t batch = r * c > 0 ? h.size() / (r * c) : 1;
  return hmat<T>{host_values(h), batch, r, c};
}

/// max |(X Y)(b) - Z(b)| / max(1, |Z|) over the batch, X or Y optionally conjugate-transposed.
template <class T, class U, class F>
double product_error(const hmat<T>& x, bool xh, const hmat<U>& y, bool yh, F z) {
  const index_t m = xh ? x.c : x.r, k = xh ? x.r : x.c, n = yh ? y.r : y.c;
  REQUIRE((yh ? y.c : y.r) == k);
  double worst = 0, scale = 1;
  for (index_t b = 0; b < x.batch; ++b)
    for (index_t i = 0; i < m; ++i)
      for (index_t j = 0; j < n; ++j) {
        wide_t<T> s{};
        for (index_t p = 0; p < k; ++p) {
          const auto a = xh ? cj(x.at(b, p, i)) : wide(x.at(b, i, p));
          const auto bb = yh ? cj(y.at(b % y.batch, j, p)) : wide(y.at(b % y.batch, p, j));
          s += a * wide_t<T>(bb);
        }
        const auto want = z(b, i, j);
        worst = std::max(worst, double(std::abs(s - want)));
        scale = std::max(scale, double(std::abs(want)));
      }
  return worst / scale;
}
/// A batch of random matrices, made well conditioned by adding `shift` on the diagonal.
template <class T>
fusor::array<T, B> random_mats(const fusor::extents& shape, std::uint64_t seed, double shift = 0) {
  auto v = test::values<T>(shape.numel(), -1, 1, seed);
  const index_t r = shape[shape.size() - 2], c = shape[shape.size() - 1];
  if (r * c > 0)
    for (index_t b = 0; b < shape.numel() / (r * c); ++b)
      for (index_t i = 0; i < std::min(r, c); ++i) v[std::size_t((b * r + i) * c + i)] += T(shift);
  return test::on<B>(v, shape);
}
/// A Hermitian positive-definite batch: X X^H + n I.
template <class T>
fusor::array<T, B> hpd_mats(const fusor::extents& shape, std::uint64_t seed) {
  const auto x = host_mats(random_mats<T>(shape, seed));
  std::vector<T> out(x.v.size());
  for (index_t b = 0; b < x.batch; ++b)
    for (index_t i = 0; i < x.r; ++i)
      for (index_t j = 0; j < x.r; ++j) {
        wide_t<T> s = i == j ? wide_t<T>(ref_t(x.r)) : wide_t<T>{};
        for (index_t p = 0; p < x.c; ++p) s += wide(x.at(b, i, p)) * cj(x.at(b, j, p));
        if constexpr (fusor::is_complex_v<T>) out[std::size_t((b * x.r + i) * x.r + j)] = T(s.real(), s.imag());
        else out[std::size_t((b * x.r + i) * x.r + j)] = T(s);
      }
  return test::on<B>(out, shape);
}
inline fusor::extents shape_of(const fusor::extents& batch, index_t r, index_t c) {
  fusor::extents s = batch;
  s.push_back(r);
  s.push_back(c);
  return s;
}
inline std::vector<fusor::extents> batches() { return {fusor::extents{}, fusor::extents{3}, fusor::extents{2, 2}}; }
inline std::vector<index_t> sizes() { return {1, 2, 3, 5, 16, 33}; }

}  // namespace lab

using namespace fusor;
using lab::B;
using test::host_values;

TEST_CASE_TEMPLATE("inv, solve, det and slogdet satisfy their identities in every dtype and batch", T, float, double,
                   std::complex<float>, std::complex<double>) {
  using R = real_t<T>;
  for (const auto& batch : lab::batches())
    for (index_t n : lab::sizes()) {
      CAPTURE(n);
      CAPTURE(batch.size());
      const auto a = lab::random_mats<T>(lab::shape_of(batch, n, n), std::uint64_t(n) + 1, double(n) / 2 + 1);
      const auto ha = lab::host_mats(a);
      const auto ai = linalg::inv(a);
      REQUIRE(ai.shape() == a.shape());
      CHECK(lab::product_error(ha, false, lab::host_mats(ai), false,
                               [](index_t, index_t i, index_t j) { return lab::wide_t<T>(i == j ? 1 : 0); }) < lab::tol<T>(n));
      // solve: a matrix right-hand side, and a vector one
      const auto b = lab::random_mats<T>(lab::shape_of(batch, n, 4), 77);
      const auto x = linalg::solve(a, b);
      REQUIRE(x.shape() == b.shape());
      const auto hb = lab::host_mats(b);
      CHECK(lab::product_error(ha, false, lab::host_mats(x), false,
                               [&](index_t bi, index_t i, index_t j) { return lab::wide(hb.at(bi, i, j)); }) < lab::tol<T>(n));
      const auto bv = test::on<B>(test::values<T>(n, -1, 1, 78));
      if (batch.size() == 0) {
        const auto xv = host_values(linalg::solve(a, bv));
        const auto hbv = host_values(bv);
        for (index_t i = 0; i < n; ++i) {
          lab::wide_t<T> s{};
          for (index_t j = 0; j < n; ++j) s += lab::wide(ha.at(0, i, j)) * lab::wide(xv[std::size_t(j)]);
          CHECK(double(std::abs(s - lab::wide(hbv[std::size_t(i)]))) < lab::tol<T>(n) * 10);
        }
      }
      // det against Gaussian elimination with partial pivoting in long double on the host
      const auto d = host_values(linalg::det(a));
      const auto sl = linalg::slogdet(a);
      const auto sg = host_values(sl.sign);
      const auto la = host_values(sl.logabsdet);
      REQUIRE(d.size() == std::size_t(ha.batch));
      for (index_t bi = 0; bi < ha.batch; ++bi) {
        std::vector<lab::wide_t<T>> m(std::size_t(n * n));
        for (index_t i = 0; i < n * n; ++i) m[std::size_t(i)] = lab::wide(ha.v[std::size_t(bi * n * n + i)]);
        lab::wide_t<T> det = 1;
        for (index_t col = 0; col < n; ++col) {
          index_t p = col;
          for (index_t r = col + 1; r < n; ++r)
            if (std::abs(m[std::size_t(r * n + col)]) > std::abs(m[std::size_t(p * n + col)])) p = r;
          if (p != col) {
            for (index_t j = 0; j < n; ++j) std::swap(m[std::size_t(p * n + j)], m[std::size_t(col * n + j)]);
            det = -det;
          }
          det *= m[std::size_t(col * n + col)];
          for (index_t r = col + 1; r < n; ++r) {
            const auto f = m[std::size_t(r * n + col)] / m[std::size_t(col * n + col)];
            for (index_t j = col; j < n; ++j) m[std::size_t(r * n + j)] -= f * m[std::size_t(col * n + j)];
          }
        }
        const double rel = double(std::abs(lab::wide(d[std::size_t(bi)]) - det)) / double(std::abs(det));
        if (double(std::abs(det)) < 1e30) CHECK(rel < lab::tol<T>(n) * 10);  // (float overflows past 3e38, as NumPy's)
        CHECK(double(la[std::size_t(bi)]) == doctest::Approx(double(std::log(std::abs(det)))).epsilon(lab::tol<T>(n) * 10));
        CHECK(double(std::abs(lab::wide(sg[std::size_t(bi)]) - det / lab::wide_t<T>(std::abs(det)))) < lab::tol<T>(n) * 10);
      }
    }
  // hand-computed, and the edge cases NumPy defines
  const auto m2 = test::on<B>(std::vector<T>{T(1), T(2), T(3), T(4)}, extents{2, 2});
  CHECK(host_values(linalg::det(m2))[0] == T(-2));
  CHECK(host_values(linalg::inv(m2)) == std::vector<T>{T(-2), T(1), T(1.5), T(-0.5)});
  const auto empty = test::on<B>(std::vector<T>{}, extents{0, 0});
  CHECK(host_values(linalg::det(empty)) == std::vector<T>{T(1)});
  CHECK(linalg::inv(empty).shape() == extents{0, 0});
  const auto singular = test::on<B>(std::vector<T>{T(1), T(2), T(2), T(4)}, extents{2, 2});
  CHECK(host_values(linalg::det(singular))[0] == T(0));
  const auto ss = linalg::slogdet(singular);
  CHECK(host_values(ss.sign)[0] == T(0));
  CHECK(std::isinf(host_values(ss.logabsdet)[0]));
  // a singular matrix in a batch: linalg_error names its index
  std::vector<T> stack(5 * 4, T(0));
  for (int bi = 0; bi < 5; ++bi)
    for (int i = 0; i < 2; ++i) stack[std::size_t(bi * 4 + i * 3)] = T(bi == 3 ? 0 : 1 + bi);
  const auto st = test::on<B>(stack, extents{5, 2, 2});
  try {
    (void)linalg::inv(st);
    FAIL("inv of a stack holding a singular matrix did not throw");
  } catch (const linalg_error& e) {
    CHECK(e.matrix == 3);
    CHECK(std::string(e.what()).find("matrix 3 of the batch is singular") != std::string::npos);
  }
  CHECK_THROWS_AS((void)linalg::solve(st, test::on<B>(std::vector<T>{T(1), T(1)})), linalg_error);
  CHECK_THROWS_AS((void)linalg::inv(test::on<B>(std::vector<T>(6, T(1)), extents{2, 3})), shape_error);
  CHECK_THROWS_AS((void)linalg::inv(test::on<B>(std::vector<T>(3, T(1)))), shape_error);
  CHECK_THROWS_AS((void)linalg::solve(m2, test::on<B>(std::vector<T>(3, T(1)))), shape_error);
  static_assert(std::is_same_v<value_t<decltype(linalg::slogdet(m2).logabsdet)>, R>);
}

TEST_CASE_TEMPLATE("svd, eigh, eig, qr and cholesky reconstruct their input", T, float, double, std::complex<float>,
                   std::complex<double>) {
  using R = real_t<T>;
  for (const auto& batch : lab::batches())
    for (const auto& [r, c] : std::vector<std::pair<index_t, index_t>>{{1, 1}, {3, 3}, {5, 2}, {2, 5}, {17, 9}, {8, 8}}) {
      CAPTURE(r);
      CAPTURE(c);
      CAPTURE(batch.size());
      const index_t k = std::min(r, c);
      const auto a = lab::random_mats<T>(lab::shape_of(batch, r, c), std::uint64_t(r * 10 + c));
      const auto ha = lab::host_mats(a);
      for (bool full : {true, false}) {
        const auto f = linalg::svd(a, full);
        REQUIRE(f.u.shape() == lab::shape_of(batch, r, full ? r : k));
        REQUIRE(f.vh.shape() == lab::shape_of(batch, full ? c : k, c));
        const auto hu = lab::host_mats(f.u), hv = lab::host_mats(f.vh);
        const auto hs = host_values(f.s);
        // U diag(S) Vh = A (the first k columns of U and rows of Vh)
        double worst = 0;
        for (index_t b = 0; b < ha.batch; ++b)
          for (index_t i = 0; i < r; ++i)
            for (index_t j = 0; j < c; ++j) {
              lab::wide_t<T> s{};
              for (index_t p = 0; p < k; ++p)
                s += lab::wide(hu.at(b, i, p)) * lab::ref_t(hs[std::size_t(b * k + p)]) * lab::wide(hv.at(b, p, j));
              worst = std::max(worst, double(std::abs(s - lab::wide(ha.at(b, i, j)))));
            }
        CHECK(worst < lab::tol<T>(r + c) * 10);
        // orthonormal columns and rows; S descending, non-negative
        CHECK(lab::product_error(hu, true, hu, false, [](index_t, index_t i, index_t j) { return lab::wide_t<T>(i == j); }) <
              lab::tol<T>(r));
        CHECK(lab::product_error(hv, false, hv, true, [](index_t, index_t i, index_t j) { return lab::wide_t<T>(i == j); }) <
              lab::tol<T>(c));
        for (index_t b = 0; b < ha.batch; ++b)
          for (index_t p = 0; p < k; ++p) {
            CHECK(hs[std::size_t(b * k + p)] >= R(0));
            if (p > 0) CHECK(hs[std::size_t(b * k + p)] <= hs[std::size_t(b * k + p - 1)]);
          }
        const auto sv = host_values(linalg::svdvals(a));
        for (std::size_t i = 0; i < sv.size(); ++i) CHECK(std::abs(double(sv[i]) - double(hs[i])) < lab::tol<T>(r + c) * 10);
      }
      // qr in its three modes
      for (auto mode : {linalg::qr_mode::reduced, linalg::qr_mode::complete, linalg::qr_mode::r}) {
        CAPTURE(int(mode));
        const auto q = linalg::qr(a, mode);
        const index_t qc = mode == linalg::qr_mode::complete ? r : k;
        REQUIRE(q.r.shape() == lab::shape_of(batch, qc, c));
        const auto hr = lab::host_mats(q.r);
        for (index_t b = 0; b < hr.batch; ++b)
          for (index_t i = 0; i < hr.r; ++i)
            for (index_t j = 0; j < std::min(i, c); ++j) CHECK(hr.at(b, i, j) == T(0));
        if (mode == linalg::qr_mode::r) continue;
        REQUIRE(q.q.shape() == lab::shape_of(batch, r, qc));
        const auto hq = lab::host_mats(q.q);
        CHECK(lab::product_error(hq, false, hr, false, [&](index_t b, index_t i, index_t j) { return lab::wide(ha.at(b, i, j)); }) <
              lab::tol<T>(r + c));
        CHECK(lab::product_error(hq, true, hq, false, [](index_t, index_t i, index_t j) { return lab::wide_t<T>(i == j); }) <
              lab::tol<T>(r));
      }
      if (r != c) continue;
      const index_t n = r;
      // eigh on Hermitian positive-definite input: A V = V diag(w), V^H V = I, w ascending
      const auto h = lab::hpd_mats<T>(lab::shape_of(batch, n, n), std::uint64_t(n) + 5);
      const auto hh = lab::host_mats(h);
      const auto e = linalg::eigh(h);
      const auto hw = host_values(e.eigenvalues);
      const auto hvv = lab::host_mats(e.eigenvectors);
      CHECK(lab::product_error(hh, false, hvv, false, [&](index_t b, index_t i, index_t j) {
              return lab::wide(hvv.at(b, i, j)) * lab::ref_t(hw[std::size_t(b * n + j)]);
            }) < lab::tol<T>(n) * 4);
      CHECK(lab::product_error(hvv, true, hvv, false, [](index_t, index_t i, index_t j) { return lab::wide_t<T>(i == j); }) <
            lab::tol<T>(n));
      for (index_t b = 0; b < hh.batch; ++b)
        for (index_t p = 1; p < n; ++p) CHECK(hw[std::size_t(b * n + p)] >= hw[std::size_t(b * n + p - 1)]);
      const auto wv = host_values(linalg::eigvalsh(h));
      for (std::size_t i = 0; i < wv.size(); ++i) CHECK(std::abs(double(wv[i]) - double(hw[i])) < lab::tol<T>(n) * 10);
      // eigh reads the lower triangle only (NumPy's UPLO="L")
      {
        auto lower = lab::host_mats(h);
        for (index_t b = 0; b < lower.batch; ++b)
          for (index_t i = 0; i < n; ++i)
            for (index_t j = i + 1; j < n; ++j) lower.v[std::size_t((b * n + i) * n + j)] = T(99);
        const auto wl = host_values(linalg::eigvalsh(test::on<B>(lower.v, h.shape())));
        for (std::size_t i = 0; i < wl.size(); ++i) CHECK(std::abs(double(wl[i]) - double(hw[i])) < lab::tol<T>(n) * 10);
      }
      // cholesky: L L^H = A, L lower triangular
      const auto L = linalg::cholesky(h);
      const auto hl = lab::host_mats(L);
      CHECK(lab::product_error(hl, false, hl, true, [&](index_t b, index_t i, index_t j) { return lab::wide(hh.at(b, i, j)); }) <
            lab::tol<T>(n) * 4);
      for (index_t b = 0; b < hl.batch; ++b)
        for (index_t i = 0; i < n; ++i)
          for (index_t j = i + 1; j < n; ++j) CHECK(hl.at(b, i, j) == T(0));
      // eig of a general matrix: A V = V diag(w), unit eigenvectors
      using C = std::conditional_t<is_complex_v<T>, T, std::complex<T>>;
      const auto g = linalg::eig(a);
      const auto gw = host_values(g.eigenvalues);
      const auto gv = lab::host_mats(g.eigenvectors);
      lab::hmat<C> ac{std::vector<C>(ha.v.begin(), ha.v.end()), ha.batch, n, n};
      CHECK(lab::product_error(ac, false, gv, false, [&](index_t b, index_t i, index_t j) {
              return lab::wide(gv.at(b, i, j)) * lab::wide(gw[std::size_t(b * n + j)]);
            }) < lab::tol<T>(n) * 20);
      for (index_t b = 0; b < gv.batch; ++b)
        for (index_t j = 0; j < n; ++j) {
          lab::ref_t norm2 = 0;
          for (index_t i = 0; i < n; ++i) norm2 += std::norm(lab::wide(gv.at(b, i, j)));
          CHECK(double(norm2) == doctest::Approx(1.0).epsilon(lab::tol<T>(n) * 10));
        }
      const auto ew = host_values(linalg::eigvals(a));
      for (std::size_t i = 0; i < ew.size(); ++i) CHECK(std::abs(lab::wide(ew[i]) - lab::wide(gw[i])) < lab::tol<T>(n) * 100);
    }
  // not positive definite, in a batch: the index
  std::vector<T> stack(4 * 4, T(0));
  for (int bi = 0; bi < 4; ++bi)
    for (int i = 0; i < 2; ++i) stack[std::size_t(bi * 4 + i * 3)] = T(bi == 2 && i == 1 ? -1 : 2);
  try {
    (void)linalg::cholesky(test::on<B>(stack, extents{4, 2, 2}));
    FAIL("cholesky of a stack holding an indefinite matrix did not throw");
  } catch (const linalg_error& e) {
    CHECK(e.matrix == 2);
    CHECK(std::string(e.what()).find("is not positive definite") != std::string::npos);
  }
  // empty matrices and shapes
  CHECK(linalg::svd(test::on<B>(std::vector<T>{}, extents{0, 3})).vh.shape() == extents{3, 3});
  CHECK(linalg::eigh(test::on<B>(std::vector<T>{}, extents{0, 0})).eigenvalues.size() == 0);
  CHECK_THROWS_AS((void)linalg::eigh(test::on<B>(std::vector<T>(6), extents{2, 3})), shape_error);
  CHECK_THROWS_AS((void)linalg::svd(test::on<B>(std::vector<T>(3))), shape_error);
}

TEST_CASE_TEMPLATE("lstsq, pinv, matrix_rank, matrix_power and the spectral norms", T, float, double, std::complex<double>) {
  using R = real_t<T>;
  // an over-determined full-rank system: the normal equations hold, A^H (A x - b) = 0
  for (const auto& [m, n] : std::vector<std::pair<index_t, index_t>>{{7, 3}, {3, 3}, {20, 5}}) {
    CAPTURE(m);
    const auto a = lab::random_mats<T>(extents{m, n}, std::uint64_t(m + n), 1.0);
    const auto b = test::on<B>(test::values<T>(m, -1, 1, 91));
    const auto ls = linalg::lstsq(a, b);
    CHECK(ls.rank == n);
    const auto ha = lab::host_mats(a);
    const auto hx = host_values(ls.x), hb = host_values(b);
    REQUIRE(hx.size() == std::size_t(n));
    std::vector<lab::wide_t<T>> res(static_cast<std::size_t>(m));
    lab::ref_t rss = 0;
    for (index_t i = 0; i < m; ++i) {
      lab::wide_t<T> s{};
      for (index_t j = 0; j < n; ++j) s += lab::wide(ha.at(0, i, j)) * lab::wide(hx[std::size_t(j)]);
      res[std::size_t(i)] = s - lab::wide(hb[std::size_t(i)]);
      rss += std::norm(res[std::size_t(i)]);
    }
    for (index_t j = 0; j < n; ++j) {
      lab::wide_t<T> g{};
      for (index_t i = 0; i < m; ++i) g += lab::cj(ha.at(0, i, j)) * res[std::size_t(i)];
      CHECK(double(std::abs(g)) < lab::tol<T>(m) * 10);
    }
    if (m > n) {
      REQUIRE(ls.residuals.size() == 1);
      CHECK(double(host_values(ls.residuals)[0]) == doctest::Approx(double(rss)).epsilon(lab::tol<T>(m) * 10));
    } else {
      CHECK(ls.residuals.size() == 0);
    }
  }
  // rank deficient: rank 2 of a 5 x 4 made from two outer products; pinv's Penrose conditions
  std::vector<T> u1 = test::values<T>(5, -1, 1, 1), u2 = test::values<T>(5, -1, 1, 2), v1 = test::values<T>(4, -1, 1, 3),
                 v2 = test::values<T>(4, -1, 1, 4), dv(20);
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 4; ++j) dv[std::size_t(i * 4 + j)] = u1[std::size_t(i)] * v1[std::size_t(j)] + u2[std::size_t(i)] * v2[std::size_t(j)];
  const auto d = test::on<B>(dv, extents{5, 4});
  CHECK(linalg::matrix_rank(d).item() == 2);
  CHECK(linalg::lstsq(d, test::on<B>(test::values<T>(5, -1, 1, 5))).rank == 2);
  const auto hd = lab::host_mats(d);
  // the default cut-off, max(m, n) times the type's epsilon, drops float's rounding-level
  // singular values of a rank-deficient matrix (NumPy's 1e-15 keeps them)
  const auto p = lab::host_mats(linalg::pinv(d));
  REQUIRE((p.r == 4 && p.c == 5));
  // A P A = A and P A P = P
  std::vector<T> ap(25);
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 5; ++j) {
      lab::wide_t<T> s{};
      for (int k = 0; k < 4; ++k) s += lab::wide(hd.at(0, i, k)) * lab::wide(p.at(0, k, j));
      if constexpr (is_complex_v<T>) ap[std::size_t(i * 5 + j)] = T(R(s.real()), R(s.imag()));
      else ap[std::size_t(i * 5 + j)] = T(s);
    }
  const lab::hmat<T> hap{ap, 1, 5, 5};
  CHECK(lab::product_error(hap, false, hd, false, [&](index_t, index_t i, index_t j) { return lab::wide(hd.at(0, i, j)); }) <
        lab::tol<T>(5) * 10);
  // (A P)^H = A P
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 5; ++j) CHECK(double(std::abs(lab::wide(ap[std::size_t(i * 5 + j)]) - lab::cj(ap[std::size_t(j * 5 + i)]))) < lab::tol<T>(5) * 10);
  // batched rank
  const auto rk = host_values(linalg::matrix_rank(lab::random_mats<T>(extents{3, 4, 6}, 9)));
  CHECK(rk == std::vector<std::int64_t>{4, 4, 4});
  CHECK(linalg::matrix_rank(test::on<B>(std::vector<T>(9, T(0)), extents{3, 3})).item() == 0);

  // matrix_power against repeated products on the host
  const auto a = lab::random_mats<T>(extents{2, 4, 4}, 33, 1.0);
  const auto ha = lab::host_mats(a);
  for (long long e : {0LL, 1LL, 2LL, 5LL, -1LL, -3LL}) {
    CAPTURE(e);
    const auto pw = lab::host_mats(linalg::matrix_power(a, e));
    const auto base = e < 0 ? lab::host_mats(linalg::inv(a)) : ha;
    std::vector<lab::wide_t<T>> acc(32, lab::wide_t<T>{});
    for (index_t b = 0; b < 2; ++b)
      for (int i = 0; i < 4; ++i) acc[std::size_t(b * 16 + i * 5)] = 1;
    for (long long t = 0; t < (e < 0 ? -e : e); ++t) {
      std::vector<lab::wide_t<T>> nxt(32, lab::wide_t<T>{});
      for (index_t b = 0; b < 2; ++b)
        for (int i = 0; i < 4; ++i)
          for (int j = 0; j < 4; ++j)
            for (int k = 0; k < 4; ++k)
              nxt[std::size_t(b * 16 + i * 4 + j)] += acc[std::size_t(b * 16 + i * 4 + k)] * lab::wide(base.at(b, k, j));
      acc = nxt;
    }
    double worst = 0, scale = 1;
    for (std::size_t i = 0; i < 32; ++i) {
      worst = std::max(worst, double(std::abs(lab::wide(pw.v[i]) - acc[i])));
      scale = std::max(scale, double(std::abs(acc[i])));
    }
    CHECK(worst / scale < lab::tol<T>(4) * 20);
  }
  const auto ip = linalg::matrix_power(test::on<B>(std::vector<std::int64_t>{1, 1, 1, 0}, extents{2, 2}), 10);  // Fibonacci
  CHECK(host_values(ip) == std::vector<std::int64_t>{89, 55, 55, 34});
  CHECK_THROWS_AS((void)linalg::matrix_power(test::on<B>(std::vector<std::int64_t>{1, 1, 1, 0}, extents{2, 2}), -1), value_error);
  CHECK_THROWS_AS((void)linalg::matrix_power(test::on<B>(std::vector<T>(6), extents{2, 3}), 2), shape_error);

  // the spectral and nuclear norms read the singular values (checked against svd's above)
  const auto mm = lab::random_mats<T>(extents{3, 5, 4}, 44);
  const auto sv = host_values(linalg::svdvals(mm));
  const auto n2 = host_values(matrix_norm(mm, 2.0)), nm2 = host_values(matrix_norm(mm, -2.0)),
             nuc = host_values(matrix_norm(mm, "nuc"));
  for (int b = 0; b < 3; ++b) {
    CHECK(std::abs(double(n2[std::size_t(b)]) - double(sv[std::size_t(b * 4)])) < lab::tol<T>(5));
    CHECK(std::abs(double(nm2[std::size_t(b)]) - double(sv[std::size_t(b * 4 + 3)])) < lab::tol<T>(5));
    double s = 0;
    for (int p = 0; p < 4; ++p) s += double(sv[std::size_t(b * 4 + p)]);
    CHECK(std::abs(double(nuc[std::size_t(b)]) - s) < lab::tol<T>(5) * 4);
  }
  // other axes, keepdims
  CHECK(matrix_norm(mm, 2.0, {0, 2}, true).shape() == extents{1, 5, 1});
  CHECK(host_values(matrix_norm(test::on<B>(std::vector<T>{T(3), T(0), T(0), T(4)}, extents{2, 2}), 2.0))[0] == R(4));
  CHECK(host_values(matrix_norm(test::on<B>(std::vector<T>{T(3), T(0), T(0), T(4)}, extents{2, 2}), "nuc"))[0] == R(7));
}

TEST_CASE_TEMPLATE("cov and corrcoef against plain loops", T, float, double, std::complex<double>, std::int32_t) {
  using C = std::conditional_t<is_complex_v<T>, std::complex<double>, double>;  // NumPy: float64 or complex128
  using W = lab::wide_t<C>;
  const index_t vars = 4, obs = 9;
  const auto v = test::values<T>(vars * obs, -5, 5, 61);
  const auto x = test::on<B>(v, extents{vars, obs});
  static_assert(std::is_same_v<value_t<decltype(cov(x))>, C>);
  const auto c = host_values(cov(x)), r = host_values(corrcoef(x)), cb = host_values(cov(x, true, ddof(0)));
  const auto ct = host_values(cov(array<T, B>(transpose(x.view())), false));  // columns as variables: the same
  REQUIRE(c.size() == std::size_t(vars * vars));
  const auto at = [&](index_t i, index_t k) { return lab::wide(C(v[std::size_t(i * obs + k)])); };
  std::vector<W> mean(static_cast<std::size_t>(vars));
  for (index_t i = 0; i < vars; ++i) {
    for (index_t k = 0; k < obs; ++k) mean[std::size_t(i)] += at(i, k);
    mean[std::size_t(i)] /= lab::ref_t(obs);
  }
  for (index_t i = 0; i < vars; ++i)
    for (index_t j = 0; j < vars; ++j) {
      W s{};
      for (index_t k = 0; k < obs; ++k) {
        const W dj = at(j, k) - mean[std::size_t(j)];
        if constexpr (is_complex_v<W>) s += (at(i, k) - mean[std::size_t(i)]) * std::conj(dj);
        else s += (at(i, k) - mean[std::size_t(i)]) * dj;
      }
      const double scale = double(std::abs(s)) + 1;
      const std::size_t f = std::size_t(i * vars + j);
      CHECK(double(std::abs(lab::wide(c[f]) - s / lab::ref_t(obs - 1))) < lab::tol<C>(obs) * 10 * scale);
      CHECK(double(std::abs(lab::wide(cb[f]) - s / lab::ref_t(obs))) < lab::tol<C>(obs) * 10 * scale);
      CHECK(double(std::abs(lab::wide(ct[f]) - lab::wide(c[f]))) < lab::tol<C>(obs) * 10 * scale);
      // corrcoef: cov_ij / sqrt(cov_ii cov_jj)
      W sii{}, sjj{};
      for (index_t k = 0; k < obs; ++k) {
        sii += W(std::norm(at(i, k) - mean[std::size_t(i)]));
        sjj += W(std::norm(at(j, k) - mean[std::size_t(j)]));
      }
      const W want_r = s / std::sqrt(sii * sjj);
      CHECK(double(std::abs(lab::wide(r[f]) - want_r)) < lab::tol<C>(obs) * 10);
    }
  for (const auto& e : r) CHECK(double(std::abs(lab::wide(e))) <= 1.0 + 1e-6);
  // one variable: a 0-d result, var with ddof 1
  const auto one = test::on<B>(std::vector<T>(v.begin(), v.begin() + obs));
  const auto c1 = cov(one);
  CHECK(c1.ndim() == 0);
  if constexpr (!is_complex_v<T>) CHECK(double(host_values(c1)[0]) == doctest::Approx(double(var(one, ddof(1)))).epsilon(1e-5));
  CHECK(cov(one, one).shape() == extents{2, 2});
  // n - ddof clamped at 0 (inf, not a sign flip), as NumPy
  CHECK(std::isinf(double(std::abs(lab::wide(host_values(cov(test::on<B>(std::vector<T>{T(1), T(2)}), true, ddof(3)))[0])))));
  CHECK_THROWS_AS((void)cov(x, test::on<B>(std::vector<T>(3))), shape_error);
  CHECK_THROWS_AS((void)corrcoef(test::on<B>(std::vector<T>(8), extents{2, 2, 2})), shape_error);
}
