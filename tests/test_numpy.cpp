// The NumPy-completeness bodies (tests/generic/numpy_body.hpp) on the cpu backend, and fusor's
// statistics against NumPy's own results (tests/data/stats, written by make_stats_fixtures.py).
#define TEST_BACKEND fusor::cpu
#include "generic/numpy_body.hpp"
#include "data_dir.hpp"

#include <filesystem>


namespace {
template <class T = double>
array<T> fixture(const std::string& name) {
  return load_npy<T>(test::data_dir() / "stats" / (name + ".npy"));
}
/// got and NumPy's want: the same shape and values to a few ulps (NaN where NumPy has NaN).
template <class G>
void same_as_numpy(const G& got, const std::string& name, double tol = 1e-13) {
  const auto want = fixture<value_t<G>>(name);
  INFO(name);
  REQUIRE(got.shape() == want.shape());
  const auto g = host_values(got), w = host_values(want);
  index_t bad = 0;
  for (std::size_t i = 0; i < g.size(); ++i)
    if (!test::close(g[i], w[i], tol) && bad++ == 0) {
      INFO("first difference at ", i, ": ", double(g[i]), " against NumPy's ", double(w[i]));
      CHECK(false);
    }
  CHECK(bad == 0);
}
}  // namespace

TEST_CASE("statistics agree with NumPy's own results (fixtures)") {
  const auto x = fixture("in_x"), xn = fixture("in_nan"), w = fixture("in_w");
  const auto xi = fixture<std::int32_t>("in_i");
  const auto qv = host_values(fixture("q"));
  const std::pair<const char*, quantile_method> methods[] = {{"linear", quantile_method::linear},
                                                             {"lower", quantile_method::lower},
                                                             {"higher", quantile_method::higher},
                                                             {"nearest", quantile_method::nearest},
                                                             {"midpoint", quantile_method::midpoint}};
  for (const auto& [name, m] : methods) {
    const std::string n = name;
    same_as_numpy(quantile(x, qv, 0, false, m), "quantile_" + n + "_ax0");
    same_as_numpy(quantile(x, qv, 1, false, m), "quantile_" + n + "_ax1");
    same_as_numpy(quantile(x, qv, m), "quantile_" + n + "_all");
    same_as_numpy(quantile(xi, qv, 1, false, m), "quantile_i_" + n);
  }
  same_as_numpy(median(x, 0), "median_ax0");
  same_as_numpy(median(x, 1), "median_ax1");
  CHECK(test::close(median(x), fixture("median_all").item(), 1e-15));
  same_as_numpy(nanmedian(xn, 1), "nanmedian_ax1");
  same_as_numpy(nanpercentile(xn, std::vector<double>{10, 50, 90}, 0), "nanpercentile_ax0");
  same_as_numpy(nanquantile(xn, std::vector<double>{0.3, 0.6}, 1, false, quantile_method::nearest), "nanquantile_nearest_ax1");
  same_as_numpy(nanmean(xn, 1), "nanmean_ax1");
  same_as_numpy(nanvar(xn, 1, ddof(1)), "nanvar_ax1_ddof1");
  same_as_numpy(nanstd(xn, 0), "nanstd_ax0");
  CHECK(test::close(nansum(xn), fixture("nansum_all").item(), 1e-14));
  same_as_numpy(nanmax(xn, 1), "nanmax_ax1");
  same_as_numpy(average(x, w, 1), "average_ax1");
  same_as_numpy(ptp(x, 0), "ptp_ax0");
}

TEST_CASE("elementwise functions agree with NumPy on its edge values (fixtures)") {
  const auto e = fixture("ew_in");
  const auto r = flip(e);
  {  // i0(+-inf) is +inf (scipy.special.i0 agrees); NumPy's Chebyshev form gives NaN there
    const array<double> got = i0(e), want = fixture("ew_i0");
    const auto g = host_values(got), w = host_values(want), in = host_values(e);
    for (std::size_t i = 0; i < g.size(); ++i) {
      CAPTURE(in[i]);
      CHECK(test::close(g[i], std::isinf(in[i]) ? npbody::inf : w[i], 1e-14));
    }
  }
  same_as_numpy(array<double>(sinc(e)), "ew_sinc", 1e-14);
  same_as_numpy(array<double>(rint(e)), "ew_rint", 0);
  same_as_numpy(array<double>(fix(e)), "ew_fix", 0);
  same_as_numpy(array<bool>(signbit(e)), "ew_signbit", 0);
  same_as_numpy(array<double>(reciprocal(e)), "ew_reciprocal", 0);
  same_as_numpy(array<double>(deg2rad(e)), "ew_deg2rad", 1e-15);
  same_as_numpy(array<double>(nan_to_num(e)), "ew_nan_to_num", 0);
  same_as_numpy(array<double>(hypot(e, r)), "ew_hypot", 1e-15);
  same_as_numpy(array<double>(copysign(e, r)), "ew_copysign", 0);
  same_as_numpy(array<double>(fmod(e, r)), "ew_fmod", 0);
  same_as_numpy(array<double>(remainder(e, r)), "ew_remainder", 1e-15);
  same_as_numpy(array<double>(heaviside(e, r)), "ew_heaviside", 0);
  same_as_numpy(array<double>(logaddexp(e, r)), "ew_logaddexp", 1e-15);
  same_as_numpy(array<double>(logaddexp2(e, r)), "ew_logaddexp2", 1e-15);
}
