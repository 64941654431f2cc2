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

namespace {
/// A float16 result against NumPy's: the same shape, and values within `ulps` units in the last
/// place of float16 at NumPy's value (0: the same bits; NaN where NumPy has NaN).
template <class G>
void same_half_as_numpy(const G& got, const std::string& name, double ulps) {
  static_assert(std::is_same_v<value_t<G>, fusor::float16>);
  const auto want = fixture<fusor::float16>(name);
  INFO(name);
  REQUIRE(got.shape() == want.shape());
  const auto g = host_values(got), w = host_values(want);
  index_t bad = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const double gi = double(float(g[i])), wi = double(float(w[i]));
    const double ulp = std::ldexp(1.0, std::max(std::ilogb(wi), -14) - 10);  // float16: 10 fraction bits
    const bool ok = std::isnan(wi) ? std::isnan(gi) : std::abs(gi - wi) <= ulps * ulp;
    if (!ok && bad++ == 0) {
      INFO("first difference at ", i, ": ", gi, " against NumPy's ", wi);
      CHECK(false);
    }
  }
  CHECK(bad == 0);
}
}  // namespace

TEST_CASE("float16 arithmetic and statistics agree with NumPy's (fixtures)") {
  const auto h = fixture<fusor::float16>("in_h");
  // sums and means: float32 accumulation rounded once, the same bits as NumPy's pairwise float32
  // sum over contiguous elements
  same_half_as_numpy(full<fusor::float16>(extents{}, sum(h)), "h_sum_all", 0);
  // along a leading axis NumPy adds row by row in float16, rounding every step (its result here
  // is the row-by-row one in all 33 columns); fusor accumulates in float32 and rounds once, so it
  // is within NumPy's own error of it and exactly the rounded column sum (exact in float32 here)
  const array<fusor::float16> s0 = sum(h, 0);
  same_half_as_numpy(s0, "h_sum_0", 0.5 * double(h.shape()[0] - 1));
  for (index_t j = 0; j < h.shape()[1]; ++j) {
    float exact = 0;
    for (index_t i = 0; i < h.shape()[0]; ++i) exact += float(h.data()[i * h.shape()[1] + j]);
    CHECK(s0.data()[j].bits == fusor::float16(exact).bits);
  }
  same_half_as_numpy(full<fusor::float16>(extents{}, mean(h)), "h_mean_all", 0);
  same_half_as_numpy(mean(h, 0), "h_mean_0", 0);
  same_half_as_numpy(mean(h, 1), "h_mean_1", 0);
  // var and std: fusor computes in float32 and rounds once; NumPy rounds the mean and each square
  // to float16 first, so they differ by a unit or two
  same_half_as_numpy(var(h, 1, ddof(1)), "h_var_1", 2);
  same_half_as_numpy(fusor::std(h, 0), "h_std_0", 2);
  array<fusor::float16> hn = h.copy();
  for (index_t i = 0; i < hn.size(); i += 7) hn.data()[i] = std::numeric_limits<fusor::float16>::quiet_NaN();
  // NumPy's nanmean rounds the float16 sum before dividing by the count; fusor rounds once
  same_half_as_numpy(nanmean(hn, 1), "h_nanmean_1", 1);
  // elementwise: each function computed in float32 and rounded once (exact for + * / and sqrt;
  // exp, sin, tanh, log1p may differ from NumPy's libm by a float32 ulp, which can flip a rounding)
  const array<fusor::float16> e = array<fusor::float16>(h / fusor::float16(50.0f)).reshape(extents{h.size()});
  const auto er = flip(e);
  same_half_as_numpy(array<fusor::float16>(e + er), "h_ew_add", 0);
  same_half_as_numpy(array<fusor::float16>(e * er), "h_ew_multiply", 0);
  same_half_as_numpy(array<fusor::float16>(e / er), "h_ew_divide", 0);
  same_half_as_numpy(array<fusor::float16>(sqrt(abs(e))), "h_ew_sqrt", 0);
  same_half_as_numpy(array<fusor::float16>(exp(e)), "h_ew_exp", 1);
  same_half_as_numpy(array<fusor::float16>(sin(e)), "h_ew_sin", 1);
  same_half_as_numpy(array<fusor::float16>(tanh(e)), "h_ew_tanh", 1);
  same_half_as_numpy(array<fusor::float16>(log1p(abs(e))), "h_ew_log1p", 1);
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
