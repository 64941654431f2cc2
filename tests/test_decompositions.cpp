// The decomposition bodies (tests/generic/decomp_body.hpp) on the cpu backend, and fusor::linalg
// against numpy.linalg's own results (tests/data/linalg, written by make_linalg_fixtures.py).
#define TEST_BACKEND fusor::cpu
#include "generic/decomp_body.hpp"
#include "data_dir.hpp"

#include <cmath>
#include <complex>
#include <filesystem>
#include <string>


namespace {
template <class T = double>
array<T> npfix(const std::string& name) {
  return load_npy<T>(test::data_dir() / "linalg" / (name + ".npy"));
}
template <class G>
void like_numpy(const G& got, const std::string& name, double tol = 1e-12) {
  const auto want = npfix<value_t<G>>(name);
  INFO(name);
  REQUIRE(got.shape() == want.shape());
  const auto g = test::host_values(got), w = test::host_values(want);
  for (std::size_t i = 0; i < g.size(); ++i) CHECK(test::close(g[i], w[i], tol));
}
}  // namespace

TEST_CASE("fusor::linalg agrees with numpy.linalg (fixtures)") {
  using Z = std::complex<double>;
  const auto a = npfix("in_a"), b = npfix("in_b"), batch = npfix("in_batch"), rect = npfix("in_rect"), spd = npfix("in_spd"),
             deficient = npfix("in_deficient"), rhs = npfix("in_rhs");
  const auto c = npfix<Z>("in_c"), h = npfix<Z>("in_h");
  like_numpy(linalg::inv(a), "inv_a");
  like_numpy(linalg::inv(c), "inv_c");
  like_numpy(linalg::solve(a, b), "solve_ab");
  like_numpy(linalg::det(batch), "det_batch");
  const auto sl = linalg::slogdet(batch);
  like_numpy(sl.sign, "slogdet_batch_sign");
  like_numpy(sl.logabsdet, "slogdet_batch_log");
  like_numpy(linalg::svdvals(rect), "svdvals_rect");
  like_numpy(linalg::svdvals(c), "svdvals_c");
  like_numpy(linalg::eigvalsh(spd), "eigvalsh_spd");
  like_numpy(linalg::eigvalsh(h), "eigvalsh_h");
  // eigenvalues come in LAPACK's order: each of NumPy's is matched with the nearest of fusor's
  for (const auto& [got, name] : {std::pair{linalg::eigvals(c), "eigvals_c"}, std::pair{linalg::eigvals(a), "eigvals_a"}}) {
    INFO(name);
    const auto g = test::host_values(got), w = test::host_values(npfix<Z>(name));
    REQUIRE(g.size() == w.size());
    for (const auto& x : w) {
      double best = 1e300;
      for (const auto& y : g) best = std::min(best, std::abs(x - y));
      CHECK(best < 1e-12 * std::max(1.0, std::abs(x)));
    }
  }
  like_numpy(linalg::cholesky(spd), "cholesky_spd");
  like_numpy(linalg::cholesky(h), "cholesky_h");
  like_numpy(array<double>(abs(linalg::qr(rect).r)), "qr_r_rect");
  const auto ls = linalg::lstsq(rect, rhs);
  like_numpy(ls.x, "lstsq_x");
  like_numpy(ls.residuals, "lstsq_residuals");
  CHECK(ls.rank == npfix<std::int64_t>("lstsq_rank").item());
  like_numpy(ls.s, "lstsq_s");
  like_numpy(linalg::pinv(deficient), "pinv_deficient");
  CHECK(linalg::matrix_rank(deficient).item() == npfix<std::int64_t>("matrix_rank_deficient").item());
  like_numpy(linalg::matrix_power(a, -2), "matrix_power_a_m2");
  like_numpy(matrix_norm(rect, 2.0), "norm2_rect");
  like_numpy(matrix_norm(rect, "nuc"), "nuc_rect");
  like_numpy(cov(rect, false), "cov_rect");
  like_numpy(cov(rect, false, ddof(0)), "cov_rect_bias");
  like_numpy(corrcoef(rect, false), "corrcoef_rect");
  like_numpy(cov(rhs, rhs * rhs + rhs), "cov_xy");
  like_numpy(corrcoef(rhs, rhs * rhs + rhs), "corrcoef_xy");
  like_numpy(cov(c), "cov_c");
  like_numpy(corrcoef(c), "corrcoef_c");
  // integers are computed in float64, as NumPy does
  const auto ints = array<std::int32_t>(std::span<const std::int32_t>(std::vector<std::int32_t>{2, 1, 1, 3}), extents{2, 2});
  static_assert(std::is_same_v<value_t<decltype(linalg::inv(ints))>, double>);
  CHECK(linalg::det(ints).item() == doctest::Approx(5.0));
}

TEST_CASE("NumPy parity: pinv of rank-deficient float32 and complex64 matrices; matrix_power of integers") {
  // rank 2 of 5 x 4; NumPy's 1e-15 cut-off keeps float32's rounding-level singular values (NumPy
  // itself then gives entries of 1e7); the default max(m, n) eps drops them: A P A = A, P bounded
  // U (5 x 2) V (2 x 4) multiplied in float32: its two zero singular values come out near 4e-8
  // and 1e-8 (NumPy: pinv entries of 4.3e7 for the real one, 7.4e6 for the complex one)
  std::vector<float> ur(10), ui(10), vr(8), vi(8);
  for (int i = 0; i < 5; ++i)
    for (int k = 0; k < 2; ++k) {
      ur[std::size_t(i * 2 + k)] = std::sin(1.3f * float(i) + 0.7f * float(k) + 0.1f);
      ui[std::size_t(i * 2 + k)] = std::cos(0.4f * float(i) - 0.6f * float(k));
    }
  for (int k = 0; k < 2; ++k)
    for (int j = 0; j < 4; ++j) {
      vr[std::size_t(k * 4 + j)] = std::cos(0.9f * float(k) + 1.1f * float(j) + 0.3f);
      vi[std::size_t(k * 4 + j)] = std::sin(0.5f * float(k * j) + 0.2f);
    }
  const fusor::array<float> uf(std::span<const float>(ur), extents{5, 2}), vf(std::span<const float>(vr), extents{2, 4});
  const fusor::array<float> uim(std::span<const float>(ui), extents{5, 2}), vim(std::span<const float>(vi), extents{2, 4});
  using cf = std::complex<float>;
  const fusor::array<cf> uz(cast<cf>(uf) + cast<cf>(uim) * cf(0, 1)), vz(cast<cf>(vf) + cast<cf>(vim) * cf(0, 1));
  const auto check = [](const auto& a) {
    const auto p = linalg::pinv(a);
    const auto apa = matmul(matmul(a, p), a);
    CHECK(double(max(abs(apa - a))) < 1e-4 * double(max(abs(a))));
    CHECK(double(max(abs(p))) < 10.0);
    CHECK(linalg::matrix_rank(a).item() == 2);
  };
  check(fusor::array<float>(matmul(uf, vf)));
  check(fusor::array<cf>(matmul(uz, vz)));
  // matrix_power(int, -3): NumPy's float64 [[5, -8], [-8, 13]]; here through a float64 matrix,
  // and the integer call says so (its result type is the integer one)
  const fusor::array<std::int64_t> k{{2, 1}, {1, 1}};
  const auto kp = linalg::matrix_power(fusor::array<double>(cast<double>(k)), -3);
  CHECK(max(abs(kp - fusor::array<double>{{5.0, -8.0}, {-8.0, 13.0}})) < 1e-12);
  CHECK_THROWS_WITH_AS((void)linalg::matrix_power(k, -3), doctest::Contains("call matrix_power(cast<double>(a), -3)"),
                       value_error);
}
