// The decomposition bodies (tests/generic/decomp_body.hpp) on the cpu backend, and fusor::linalg
// against numpy.linalg's own results (tests/data/linalg, written by make_linalg_fixtures.py).
#define TEST_BACKEND fusor::cpu
#include "generic/decomp_body.hpp"

#include <filesystem>
#include <string>

#ifndef FUSOR_TEST_DATA_DIR
#error "FUSOR_TEST_DATA_DIR must name tests/data (set by tests/CMakeLists.txt)"
#endif

namespace {
template <class T = double>
array<T> npfix(const std::string& name) {
  return load_npy<T>(std::filesystem::path(FUSOR_TEST_DATA_DIR) / "linalg" / (name + ".npy"));
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
