// Reverse mode through FFTs, written once per backend: fftconvolve and correlate of real variables,
// complex variables (the derivative table's complex rules) and the Fourier transforms of variables,
// against central differences (along real and imaginary parts for complex inputs) and closed forms.
// tests/test_ad_fft.cpp runs them on cpu (in the test_ad_ops program), tests/test_ad_fft_cuda.cu
// on cuda (in test_ad_cuda).
//
// The includer defines TEST_BACKEND before including this file.
#include "ad_ops_helpers.hpp"

TEST_CASE("fftconvolve and correlate of variables: modes, axes and broadcasting against central differences") {
  using fusor::fft::conv_mode;
  for (const auto& sizes : {std::pair<index_t, index_t>{7, 3}, {3, 7}, {1, 1}, {test::lanes<double> + 1, 4}, {33, 5}}) {
    const index_t nx = sizes.first, nk = sizes.second;  // (CAPTURE of a structured binding: not every nvcc)
    CAPTURE(nx);
    CAPTURE(nk);
    const arr<double> x = adops::random({nx}, 131), k = adops::random({nk}, 132);
    for (conv_mode mode : {conv_mode::full, conv_mode::same, conv_mode::valid}) {
      CAPTURE(int(mode));
      const arr<double> w = adops::random({fusor::fft::fftconvolve(x, k, mode).size()}, 133);
      against_differences("fftconvolve x", [&](const auto& t) { return sum(fftconvolve(t, k, mode) * w); }, x);
      against_differences("fftconvolve k", [&](const auto& t) { return sum(square(fftconvolve(x, t, mode)) * w); }, k);
      against_differences("correlate x", [&](const auto& t) { return sum(sin(correlate(t, k, mode)) * w); }, x);
      against_differences("correlate k", [&](const auto& t) { return sum(correlate(x, t, mode) * w); }, k);
      against_differences("both operands one variable", [&](const auto& t) { return sum(correlate(t, t * 2.0, mode)); }, x);
    }
  }
  // 2-d, all axes and one axis with a broadcast batch
  const arr<double> X = adops::random({5, 6}, 134), K = adops::random({3, 2}, 135), Kb = adops::random({1, 4}, 136),
                    W2 = adops::random({5, 6}, 137), Wb = adops::random({5, 3}, 138);
  against_differences("2-d same (image)", [&](const auto& t) { return sum(fftconvolve(t, K, conv_mode::same) * W2); }, X);
  against_differences("2-d same (kernel)", [&](const auto& t) { return sum(square(fftconvolve(X, t, conv_mode::same)) * W2); }, K);
  against_differences("axis 1, batch broadcast (image)", [&](const auto& t) { return sum(correlate(t, Kb, conv_mode::valid, {1}) * Wb); }, X);
  against_differences("axis 1, batch broadcast (kernel)", [&](const auto& t) { return sum(square(correlate(X, t, conv_mode::valid, {1})) * Wb); }, Kb);
  const arr<double> Xb = adops::random({1, 6}, 141), Kc = adops::random({4, 3}, 142), Wc = adops::random({8, 8}, 144),
                    s0 = adops::dev({1.5}, extents{}), Wn = adops::random({5, 9}, 145);
  against_differences("the image broadcasts on the batch axis", [&](const auto& t) { return sum(square(fftconvolve(t, K, conv_mode::full, {1}))); }, Xb);
  against_differences("2-d correlate (kernel reversed on two axes)", [&](const auto& t) { return sum(correlate(X, t, conv_mode::full) * Wc); }, Kc);
  against_differences("negative axes", [&](const auto& t) { return sum(sin(fftconvolve(t, Kb, conv_mode::full, {-1})) * Wn); }, X);
  against_differences("rank 0", [&](const auto& t) { return sum(fftconvolve(t, s0) * 3.0); }, adops::dev({0.25}, extents{}));
  // float: the same gradient, to float's precision
  {
    const arr<float> xf = adops::random({12}, 146).astype<float>(), kf = adops::random({5}, 147).astype<float>();
    const auto gf = host_values(ad::grad([&](const auto& t) { return sum(square(fftconvolve(t, kf, conv_mode::same))); })(xf));
    const arr<double> kd = kf.astype<double>(), xd = xf.astype<double>();
    const auto gd = host_values(ad::grad([&](const auto& t) { return sum(square(fftconvolve(t, kd, conv_mode::same))); })(xd));
    REQUIRE(gf.size() == gd.size());
    for (std::size_t i = 0; i < gf.size(); ++i) CHECK(test::close(double(gf[i]), gd[i], 1e-4));
  }
  // closed form: d/dx sum(x * k, full) = sum(k) everywhere; the value is fft::fftconvolve's
  const arr<double> x = adops::random({9}, 139), k = adops::random({4}, 140);
  ad::tape tp;
  auto xv = ad::param(tp, x);
  auto z = fftconvolve(xv, k);
  const auto zv = host_values(arr<double>(z.value())), want = host_values(fusor::fft::fftconvolve(x, k));
  REQUIRE(zv.size() == 12);
  for (std::size_t i = 0; i < 12; ++i) CHECK(test::close(zv[i], want[i], 1e-14));
  ad::backward(ad::sum(z));
  double ksum = 0;
  for (double v : host_values(k)) ksum += v;
  const auto gx = host_values(arr<double>(ad::gradient(xv)));
  REQUIRE(gx.size() == 9);
  for (double g : gx) CHECK(test::close(g, ksum, 1e-13));
  // bad input: the array function's errors
  CHECK_THROWS_AS((void)fftconvolve(xv, K), value_error);
  CHECK_THROWS_AS((void)fftconvolve(ad::reshape(xv, {3, 3}), Kb, conv_mode::valid), value_error);
}

TEST_CASE("complex variables and the Fourier transforms of variables against central differences") {
  using fusor::fft::norm_mode;
  using adops::cplx;
  namespace fft = fusor::fft;
  // complex elementwise programs: holomorphic steps conjugate their derivative, abs/arg/real/imag/conj
  const arr<cplx> z = adops::random_complex({7}, 151), c = adops::random_complex({7}, 152);
  adops::against_differences_complex("z * c + z²", [&](const auto& t) { return sum(fusor::abs(t * c + t * t)); }, z);
  adops::against_differences_complex("exp, divide, sin", [&](const auto& t) { return sum(fusor::real(exp(t) / (t + 3.0)) + fusor::imag(sin(t) * c)); }, z);
  adops::against_differences_complex("abs², arg, conj", [&](const auto& t) { return sum(square(fusor::abs(t)) + fusor::arg(t + 2.0) * 0.5 + fusor::real(fusor::conj(t) * c)); }, z);
  adops::against_differences_complex("sqrt, log, tanh", [&](const auto& t) { return sum(fusor::abs(sqrt(t + 2.0) * log(t + 2.5) - tanh(t))); }, z);
  // a real variable in a complex expression gets the real part of its adjoint
  against_differences("real into complex", [&](const auto& t) { return sum(fusor::abs(t * c + 1.0) + fusor::imag(exp(t * c))); }, adops::random({7}, 153));
  // the transforms, real input, every size class, with n cropping and padding, every norm
  for (index_t n : {index_t(1), index_t(2), index_t(7), index_t(8), test::lanes<double> + 1}) {
    CAPTURE(n);
    const arr<double> x = adops::random({n}, 154), w = adops::random({2 * n + 3}, 155), v = adops::random({2 * n + 3}, 156);
    for (norm_mode norm : {norm_mode::backward, norm_mode::ortho, norm_mode::forward}) {
      CAPTURE(int(norm));
      against_differences("fft of real", [&](const auto& t) { return sum(fusor::abs(fft::fft(t, -1, -1, norm) + 0.5) * w(fusor::range(0, n))); }, x);
      against_differences("rfft: real and imaginary parts", [&](const auto& t) {
        const index_t m = n / 2 + 1;
        return sum(fusor::real(fft::rfft(t, -1, -1, norm)) * w(fusor::range(0, m)) + fusor::imag(fft::rfft(t, -1, -1, norm)) * v(fusor::range(0, m)));
      }, x);
      against_differences("rfft cropped and padded", [&](const auto& t) {
        return sum(fusor::imag(fft::rfft(t, n + 3, -1, norm)) * v(fusor::range(0, (n + 3) / 2 + 1))) + sum(fusor::real(fft::rfft(t, (n + 1) / 2, -1, norm)));
      }, x);
      against_differences("irfft of a filtered spectrum", [&](const auto& t) {
        return sum(sin(fft::irfft(fft::rfft(t) * cplx(0.5, -0.75), 2 * n + 3, -1, norm)) * w);
      }, x);
    }
  }
  // complex input: ifft, fft, irfft (a half spectrum that is not Hermitian: the imaginary parts at
  // 0 and n/2 are dropped, as NumPy does), cropped or padded
  const arr<cplx> s5 = adops::random_complex({5}, 157), s23 = adops::random_complex({2, 3}, 158);
  const arr<double> w8 = adops::random({8}, 159), w9 = adops::random({9}, 160), w24 = adops::random({2, 4}, 161);
  adops::against_differences_complex("ifft", [&](const auto& t) { return sum(fusor::abs(fft::ifft(t, 8)) * w8); }, s5);
  adops::against_differences_complex("fft ortho", [&](const auto& t) { return sum(fusor::real(fft::fft(t * t, 3, -1, norm_mode::ortho))); }, s5);
  adops::against_differences_complex("irfft even", [&](const auto& t) { return sum(fft::irfft(t) * w8); }, s5);
  adops::against_differences_complex("irfft odd", [&](const auto& t) { return sum(square(fft::irfft(t, 9)) * w9); }, s5);
  adops::against_differences_complex("irfft cropped", [&](const auto& t) { return sum(fft::irfft(t, 4, -1, norm_mode::forward) * w8(fusor::range(0, 4))); }, s5);
  adops::against_differences_complex("irfft2 (non-Hermitian planes)", [&](const auto& t) { return sum(fft::irfft2(t, {2, 4}) * w24); }, s23);
  // n-d: rfft2/irfft2 round trip, fftn over chosen axes, rfftn with s
  const arr<double> X = adops::random({4, 6}, 162), Y = adops::random({3, 4, 5}, 163), W46 = adops::random({4, 6}, 164),
                    W345 = adops::random({3, 4, 3}, 165);
  against_differences("rfft2 / irfft2", [&](const auto& t) { return sum(sin(fft::irfft2(fft::rfft2(t) * cplx(1.0, 0.5), {4, 6})) * W46); }, X);
  against_differences("fftn over axes (0, 2)", [&](const auto& t) { return sum(fusor::abs(fft::fftn(t, {}, {0, 2}))); }, Y);
  against_differences("rfftn with s", [&](const auto& t) { return sum(fusor::imag(fft::rfftn(t, {3, 5}, {0, 2})) * W345) + sum(fusor::real(fft::rfftn(t, {2, 4}, {2, 0}))); }, Y);
  against_differences("ifft2 of a real input", [&](const auto& t) { return sum(fusor::real(fft::ifft2(t, {}, {-2, -1}, norm_mode::ortho) * cplx(0.3, 2.0))); }, X);
  // a 0-d input (no axes): the value as complex, and the identity as its adjoint
  against_differences("fftn of a 0-d input", [&](const auto& t) { return sum(fusor::real(fft::fftn(t * t)) * 3.0); }, adops::dev({0.5}, extents{}));
  // closed form (Parseval): Σ|fft(x, ortho)|² = Σx², so the gradient is 2x
  const arr<double> x = adops::random({10}, 166);
  const auto gp = host_values(ad::grad([](const auto& t) { return sum(square(fusor::abs(fft::fft(t, -1, -1, norm_mode::ortho)))); })(x));
  const auto hx = host_values(x);
  REQUIRE(gp.size() == 10);
  for (std::size_t i = 0; i < 10; ++i) CHECK(test::close(gp[i], 2 * hx[i], 1e-12));
  // the value is the array function's
  ad::tape tp;
  auto xv = ad::param(tp, x);
  const auto got = host_values(arr<cplx>(fft::rfft(xv).value())), want = host_values(fft::rfft(x));
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i] == want[i]);
  // bad input: the array function's errors
  CHECK_THROWS_AS((void)fft::rfftn(xv, {4, 4}), value_error);
  CHECK_THROWS_AS((void)fft::fft(xv, 0), value_error);
}


namespace fwd_fft {
/// ad::jvp(f, x, v) of a real-valued f against central differences along v (and, for a real x,
/// against the reverse-mode gradient's component along v).
template <class F, class T>
void jvp_against_differences(const char* name, F f, const arr<T>& x, const arr<T>& v, double tol = 1e-7) {
  const std::string label = name;
  CAPTURE(label);
  const auto [value, tangent] = ad::jvp(f, x, v);
  const double h = 1e-6;
  const double up = ad::detail::host_values(f(arr<T>(x + v * h)))[0], down = ad::detail::host_values(f(arr<T>(x - v * h)))[0];
  CHECK(test::close(double(value), ad::detail::host_values(f(x))[0], 1e-13));
  CHECK(test::close(double(tangent), (up - down) / (2 * h), tol));
  if constexpr (std::is_floating_point_v<T>) {
    const auto g = host_values(ad::grad(f)(x)), hv = host_values(v);
    double along = 0;
    for (std::size_t i = 0; i < g.size(); ++i) along += g[i] * hv[i];
    CHECK(test::close(double(tangent), along, 1e-11));
  }
}
/// The transform's jvp is the transform itself applied to the direction (it is linear).
template <class Got, class Want>
void same_elements(const Got& got, const Want& want, double tol = 1e-12) {
  const auto g = host_values(got), w = host_values(want);
  REQUIRE(g.size() == w.size());
  index_t bad = 0;
  for (std::size_t i = 0; i < g.size(); ++i)
    if (!test::close(g[i], w[i], tol) && bad++ == 0) {
      CAPTURE(i);
      CHECK(g[i] == w[i]);
    }
  CHECK(bad == 0);
}
}  // namespace fwd_fft

TEST_CASE("forward mode through the Fourier transforms, the FFT convolutions and dual numbers of complex values") {
  using fusor::fft::conv_mode;
  using fusor::fft::norm_mode;
  using adops::cplx;
  namespace fft = fusor::fft;
  using fwd_fft::jvp_against_differences;
  using fwd_fft::same_elements;
  // linear maps: value = the transform of x, tangent = the transform of v, for every size class,
  // cropping and padding, every norm, real and complex input
  for (index_t n : {index_t(1), index_t(2), index_t(7), test::lanes<double> + 1, index_t(33)}) {
    CAPTURE(n);
    const arr<double> x = adops::random({3, n}, 171), v = adops::random({3, n}, 172);
    const arr<cplx> z = adops::random_complex({n, 2}, 173), u = adops::random_complex({n, 2}, 174);
    for (norm_mode norm : {norm_mode::backward, norm_mode::ortho, norm_mode::forward}) {
      CAPTURE(int(norm));
      auto rf = [&](const auto& t) { return fft::rfft(t, n + 2, -1, norm); };
      auto [rv, rt] = ad::jvp(rf, x, v);
      same_elements(rv, rf(x));
      same_elements(rt, rf(v));
      auto irf = [&](const auto& t) { return fft::irfft(t, 2 * n - 1, 0, norm); };
      auto [iv, it] = ad::jvp(irf, z, u);
      same_elements(iv, irf(z));
      same_elements(it, irf(u));
      auto cf = [&](const auto& t) { return fft::ifft(fft::fft(t, n + 1, 0, norm), -1, -1, norm); };
      auto [cv, ct] = ad::jvp(cf, z, u);
      same_elements(cv, cf(z));
      same_elements(ct, cf(u));
      auto nd = [&](const auto& t) { return fft::fftn(t, {4, n}, {0, 1}, norm); };
      auto [nv, nt] = ad::jvp(nd, x, v);
      same_elements(nv, nd(x));
      same_elements(nt, nd(v));
    }
  }
  // an empty batch, a 0-d input (no axes: the value as complex, its planes one by one), and an
  // expression as input (evaluated once, then its planes transformed together)
  {
    const arr<double> s0 = adops::dev({0.5}, extents{}), d0 = adops::dev({2.0}, extents{});
    auto [zv, zt] = ad::jvp([](const auto& t) { return fft::fftn(t); }, s0, d0);
    CHECK(zt.shape() == extents{});
    same_elements(zv, fft::fftn(s0));
    same_elements(zt, fft::fftn(d0));
    const arr<double> e(extents{0, 6}), x = adops::random({4, 6}, 175), v = adops::random({4, 6}, 176);
    auto [ev, et] = ad::jvp([](const auto& t) { return fft::rfft(t); }, e, e);
    CHECK(ev.shape() == extents{0, 4});
    CHECK(et.shape() == extents{0, 4});
    auto [xv, xt] = ad::jvp([](const auto& t) { return fft::rfft2(t * 2.0 + 1.0, {5, 6}); }, x, v);
    same_elements(xv, fft::rfft2(x * 2.0 + 1.0, {5, 6}));
    same_elements(xt, fft::rfft2(arr<double>(v * 2.0), {5, 6}));
  }
  // nonlinear programs through the transforms and convolutions: central differences, and the
  // reverse-mode gradient along v (a separate implementation)
  const arr<double> X = adops::random({5, 7}, 177), V = adops::random({5, 7}, 178), K = adops::random({3, 2}, 179);
  jvp_against_differences("power spectrum", [](const auto& t) { return sum(square(fusor::abs(fft::rfft2(t)))); }, X, V);
  jvp_against_differences("filtered round trip", [](const auto& t) { return sum(sin(fft::irfftn(fft::rfftn(t) * cplx(0.5, -0.25), {5, 7}))); }, X, V);
  jvp_against_differences("real, imag, angle of a padded transform", [](const auto& t) {
    return sum(fusor::real(fft::fft(t, 9, 0)) * fusor::imag(fft::fft(t, 9, 0))) + sum(fusor::arg(fft::fft(t) + 1.0));
  }, X, V);
  jvp_against_differences("fftconvolve with a constant kernel", [&](const auto& t) { return sum(square(fftconvolve(t, K, conv_mode::same))); }, X, V);
  jvp_against_differences("correlate of the variable with itself", [](const auto& t) { return sum(cos(correlate(t, t * 0.5, conv_mode::full))); }, X, V);
  jvp_against_differences("convolve along one axis, the kernel the variable", [&](const auto& t) {
    return sum(fftconvolve(X, t * 0.5 + 1.0, conv_mode::same, {1}) * X);
  }, X, V);
  // closed forms: a convolution's tangent is conv(v, k) (k constant) and conv(v, x) + conv(x, v)
  // (both operands the variable)
  {
    auto [cv, ct] = ad::jvp([&](const auto& t) { return fftconvolve(t, K); }, X, V);
    same_elements(cv, fft::fftconvolve(X, K));
    same_elements(ct, fft::fftconvolve(V, K));
    auto [sv, st] = ad::jvp([](const auto& t) { return fftconvolve(t, t, conv_mode::same); }, X, V);
    same_elements(sv, fft::fftconvolve(X, X, conv_mode::same));
    same_elements(st, arr<double>(fft::fftconvolve(V, X, conv_mode::same) + fft::fftconvolve(X, V, conv_mode::same)));
  }
  // dual numbers of complex values: abs, angle, real, imag, conj and the arithmetic along a complex
  // direction; abs's and angle's tangents are 0 at 0 (JAX's subgradient)
  const arr<cplx> Z = adops::random_complex({9}, 180), U = adops::random_complex({9}, 181), C = adops::random_complex({9}, 182);
  jvp_against_differences("complex elementwise", [&](const auto& t) {
    return sum(fusor::abs(t * C + t * t) + fusor::arg(t + 2.0) * 0.5 + fusor::real(fusor::conj(t) * C) + fusor::imag(exp(t) / (t + 3.0)));
  }, Z, U);
  {
    const arr<cplx> zero = test::on<TEST_BACKEND>(std::vector<cplx>(2), extents{2}), dir = adops::random_complex({2}, 183);
    const auto [a0, at] = ad::jvp([](const auto& t) { return fusor::abs(t) + fusor::arg(t); }, zero, dir);
    for (double g : host_values(at)) CHECK(g == 0.0);
  }
  // Parseval, complex input: Σ|fft(z)|² = n Σ|z|², so its derivative along u is 2n Re Σ conj(z) u
  {
    const auto [p, dp] = ad::jvp([](const auto& t) { return sum(square(fusor::abs(fft::fft(t)))); }, Z, U);
    const auto hz = host_values(Z), hu = host_values(U);
    double want = 0;
    for (std::size_t i = 0; i < hz.size(); ++i) want += 2.0 * 9 * (std::conj(hz[i]) * hu[i]).real();
    CHECK(test::close(double(dp), want, 1e-12));
    jvp_against_differences("Parseval", [](const auto& t) { return sum(square(fusor::abs(fft::fft(t)))); }, Z, U);
  }
  // the Jacobian by forward mode equals reverse mode's
  {
    const arr<double> x = adops::random({11}, 184);
    auto f = [](const auto& t) {
      auto spectrum = fft::rfft(t, 12);  // an array of duals: evaluate what reads it before it goes
      if constexpr (ad::detail::holds_vars_v<decltype(spectrum)>) return fusor::abs(spectrum);
      else return eval(fusor::abs(spectrum));
    };
    same_elements(ad::jacfwd<4>(f, x), ad::jacrev(f, x), 1e-12);
    same_elements(ad::jacfwd<1>(f, x), ad::jacrev(f, x), 1e-12);
  }
  // float: to float's precision
  {
    const arr<double> xd = adops::random({16}, 185), vd = adops::random({16}, 186);
    const arr<float> xf = xd.astype<float>(), vf = vd.astype<float>();
    auto f = [](const auto& t) { return sum(square(fusor::abs(fft::rfft(t)))); };
    CHECK(test::close(double(ad::jvp(f, xf, vf).second), ad::jvp(f, xd, vd).second, 1e-5));
  }
  // bad input: the array functions' errors, before any work
  const arr<double> x3 = adops::random({3}, 187);
  CHECK_THROWS_AS((void)ad::jvp([](const auto& t) { return fft::rfft(t, 0); }, x3, x3), value_error);
  CHECK_THROWS_AS((void)ad::jvp([](const auto& t) { return fft::fftn(t, {4, 4}); }, x3, x3), value_error);
  CHECK_THROWS_AS((void)ad::jvp([&](const auto& t) { return fftconvolve(t, K); }, x3, x3), value_error);
}
