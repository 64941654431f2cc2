// The FFT front end against a naive double-precision DFT (written here, O(n^2) per line), NumPy's
// conventions for shapes and norms, and direct summation for convolution and correlation.
#include "common.hpp"

#include <algorithm>
#include <atomic>
#include <thread>

using namespace fusor;
using test::index_t;
using cd = std::complex<double>;

namespace {

// ---- the reference: a row-major complex<double> array and naive transforms along one axis ----
struct ref {
  std::vector<cd> v;
  std::vector<index_t> shape;
  index_t size() const {
    index_t p = 1;
    for (auto s : shape) p *= s;
    return p;
  }
};

// calls f(outer, inner) for every line along `axis` (offset = outer * n * inner + inner)
template <class F>
void lines(const std::vector<index_t>& shape, int axis, F&& f) {
  index_t outer = 1, inner = 1;
  for (int j = 0; j < axis; ++j) outer *= shape[std::size_t(j)];
  for (std::size_t j = std::size_t(axis) + 1; j < shape.size(); ++j) inner *= shape[j];
  for (index_t o = 0; o < outer; ++o)
    for (index_t i = 0; i < inner; ++i) f(o, i, inner);
}

/// Crop or zero-pad along one axis to n points.
ref resize_axis(const ref& x, int axis, index_t n) {
  ref r;
  r.shape = x.shape;
  r.shape[std::size_t(axis)] = n;
  r.v.assign(std::size_t(r.size()), cd(0));
  const index_t m = x.shape[std::size_t(axis)];
  lines(x.shape, axis, [&](index_t o, index_t i, index_t inner) {
    for (index_t t = 0; t < std::min(m, n); ++t) r.v[std::size_t((o * n + t) * inner + i)] = x.v[std::size_t((o * m + t) * inner + i)];
  });
  return r;
}

cd twiddle(index_t k, index_t t, index_t n, int sign) {
  const index_t kt = (k * t) % n;  // exact reduction keeps the angle accurate for large k t
  const double ang = sign * 2.0 * M_PI * double(kt) / double(n);
  return {std::cos(ang), std::sin(ang)};
}

/// The unnormalised DFT along one axis (sign -1 forward, +1 backward).
ref dft_axis(const ref& x, int axis, int sign) {
  ref r = x;
  const index_t n = x.shape[std::size_t(axis)];
  lines(x.shape, axis, [&](index_t o, index_t i, index_t inner) {
    for (index_t k = 0; k < n; ++k) {
      cd acc = 0;
      for (index_t t = 0; t < n; ++t) acc += x.v[std::size_t((o * n + t) * inner + i)] * twiddle(k, t, n, sign);
      r.v[std::size_t((o * n + k) * inner + i)] = acc;
    }
  });
  return r;
}

/// NumPy's irfft along one axis: m = n/2+1 points (after resizing) to n real points, the imaginary
/// parts of the zero and (even n) Nyquist terms ignored; unnormalised.
ref c2r_axis(const ref& x0, int axis, index_t n) {
  const ref x = resize_axis(x0, axis, n / 2 + 1);
  ref r;
  r.shape = x.shape;
  r.shape[std::size_t(axis)] = n;
  r.v.assign(std::size_t(r.size()), cd(0));
  const index_t m = n / 2 + 1;
  lines(x.shape, axis, [&](index_t o, index_t i, index_t inner) {
    auto in = [&](index_t k) { return x.v[std::size_t((o * m + k) * inner + i)]; };
    for (index_t t = 0; t < n; ++t) {
      double acc = in(0).real();
      for (index_t k = 1; k < m; ++k) {
        if (2 * k == n) acc += (in(k) * twiddle(k, t, n, +1)).real();
        else acc += 2.0 * (in(k) * twiddle(k, t, n, +1)).real();
      }
      r.v[std::size_t((o * n + t) * inner + i)] = acc;
    }
  });
  return r;
}

ref scaled(ref r, double f) {
  for (auto& z : r.v) z *= f;
  return r;
}

double norm_factor(fft::norm_mode m, bool inverse, index_t n) {
  if (m == fft::norm_mode::ortho) return 1.0 / std::sqrt(double(n));
  if (m == fft::norm_mode::forward) return inverse ? 1.0 : 1.0 / double(n);
  return inverse ? 1.0 / double(n) : 1.0;
}

template <class T>
struct input {
  array<T> a;
  ref r;
};
/// Random values in [-1, 1) of the given shape, as a fusor array and as the reference.
template <class T>
input<T> random_input(const std::vector<index_t>& shape, std::uint64_t seed) {
  index_t n = 1;
  for (auto s : shape) n *= s;
  const auto vals = test::values<T>(n, -1, 1, seed);
  input<T> in{array<T>(std::span<const T>(vals), extents(shape)), {}};
  in.r.shape = shape;
  for (const T& x : vals) {
    if constexpr (is_complex_v<T>) in.r.v.push_back(cd(double(x.real()), double(x.imag())));
    else in.r.v.push_back(cd(double(x), 0.0));
  }
  return in;
}

template <class T>
double tolerance() {
  return std::is_same_v<real_t<T>, float> ? 2e-5 : 1e-12;
}

/// Every element within tol * max|ref| (FFT errors scale with the largest magnitude, not each
/// element's); shapes must agree exactly.
template <class T>
void check(const array<T>& got, const ref& want, double tol, const char* what) {
  INFO(what);
  REQUIRE(got.ndim() == int(want.shape.size()));
  for (int k = 0; k < got.ndim(); ++k) REQUIRE(got.shape()[k] == want.shape[std::size_t(k)]);
  double scale = 1e-300;
  for (const auto& z : want.v) scale = std::max(scale, std::abs(z));
  double worst = 0;
  index_t at = -1;
  const auto g = test::walk(got);
  for (std::size_t i = 0; i < g.size(); ++i) {
    cd gi;
    if constexpr (is_complex_v<T>) gi = cd(double(g[i].real()), double(g[i].imag()));
    else gi = cd(double(g[i]), 0.0);
    const double e = std::abs(gi - want.v[i]);
    if (!(e <= worst)) {
      worst = e;
      at = index_t(i);
    }
  }
  INFO("worst error " << worst << " at flat index " << at << ", scale " << scale);
  CHECK(worst <= tol * std::max(1.0, scale));
}

const fft::norm_mode all_norms[] = {fft::norm_mode::backward, fft::norm_mode::ortho, fft::norm_mode::forward};

}  // namespace

// ---- 1-d -------------------------------------------------------------------------------------

TEST_CASE_TEMPLATE("fft/ifft of one axis match the naive DFT for every length kind and norm", T, float, double,
                   std::complex<float>, std::complex<double>) {
  for (index_t n : {1, 2, 3, 4, 5, 7, 8, 13, 16, 17, 31, 64, 97, 100, 128}) {
    const auto in = random_input<T>({n}, std::uint64_t(n));
    for (auto norm : all_norms) {
      CAPTURE(n);
      CAPTURE(int(norm));
      const auto X = fft::fft(in.a, -1, -1, norm);
      static_assert(std::is_same_v<std::remove_cvref_t<decltype(X)>, array<std::complex<real_t<T>>>>);
      check(X, scaled(dft_axis(in.r, 0, -1), norm_factor(norm, false, n)), tolerance<T>(), "fft");
      const auto x = fft::ifft(in.a, -1, -1, norm);
      check(x, scaled(dft_axis(in.r, 0, +1), norm_factor(norm, true, n)), tolerance<T>(), "ifft");
    }
  }
}

TEST_CASE("fft with n crops or zero-pads the input, as NumPy does") {
  const auto in = random_input<double>({10}, 3);
  for (index_t n : {1, 4, 10, 11, 16, 23}) {
    CAPTURE(n);
    check(fft::fft(in.a, n), dft_axis(resize_axis(in.r, 0, n), 0, -1), 1e-12, "fft n");
    check(fft::ifft(in.a, n), scaled(dft_axis(resize_axis(in.r, 0, n), 0, +1), 1.0 / double(n)), 1e-12, "ifft n");
    check(fft::rfft(in.a, n), resize_axis(dft_axis(resize_axis(in.r, 0, n), 0, -1), 0, n / 2 + 1), 1e-12, "rfft n");
  }
}

TEST_CASE_TEMPLATE("rfft keeps n/2+1 points and irfft follows NumPy for even and odd n", T, float, double) {
  for (index_t n : {1, 2, 3, 5, 8, 9, 16, 17, 33, 64, 101}) {
    const auto in = random_input<T>({n}, std::uint64_t(100 + n));
    for (auto norm : all_norms) {
      CAPTURE(n);
      CAPTURE(int(norm));
      const auto X = fft::rfft(in.a, -1, -1, norm);
      REQUIRE(X.shape() == extents{n / 2 + 1});
      check(X, scaled(resize_axis(dft_axis(in.r, 0, -1), 0, n / 2 + 1), norm_factor(norm, false, n)), tolerance<T>(), "rfft");
      // the round trip needs n for odd lengths (the default is 2 (m - 1), always even)
      check(fft::irfft(X, n, -1, norm), in.r, tolerance<T>(), "irfft(rfft(x), n)");
    }
  }
  // arbitrary (not Hermitian) input: the zero and Nyquist imaginary parts are ignored, as NumPy does
  for (index_t n : {2, 6, 7, 12, 15}) {
    CAPTURE(n);
    const auto spec = random_input<std::complex<T>>({n / 2 + 1}, std::uint64_t(7 * n));
    check(fft::irfft(spec.a, n), scaled(c2r_axis(spec.r, 0, n), 1.0 / double(n)), tolerance<T>(), "irfft arbitrary");
  }
  // default n = 2 (m - 1); n from s crops and pads the spectrum
  const auto spec = random_input<std::complex<T>>({9}, 5);
  check(fft::irfft(spec.a), scaled(c2r_axis(spec.r, 0, 16), 1.0 / 16), tolerance<T>(), "irfft default n");
  check(fft::irfft(spec.a, 5), scaled(c2r_axis(spec.r, 0, 5), 1.0 / 5), tolerance<T>(), "irfft crop");
  check(fft::irfft(spec.a, 40), scaled(c2r_axis(spec.r, 0, 40), 1.0 / 40), tolerance<T>(), "irfft pad");
}

TEST_CASE("a 1-d transform along one axis of an n-d array batches the other axes") {
  const auto in = random_input<std::complex<double>>({6, 7, 5}, 11);
  for (int axis : {0, 1, 2, -1, -3}) {
    CAPTURE(axis);
    const int ax = axis < 0 ? axis + 3 : axis;
    fusor::instrument::fft_executions = 0;
    check(fft::fft(in.a, -1, axis), dft_axis(in.r, ax, -1), 1e-12, "fft along axis");
    CHECK(fusor::instrument::fft_executions == 1);  // the whole batch in one library call
  }
  // batched equals looped: each column transformed on its own
  const auto x = random_input<double>({9, 4}, 12);
  const auto X = fft::rfft(x.a, -1, 0);
  for (index_t c = 0; c < 4; ++c) {
    const array<double> col = x.a(all, c).copy();
    const auto Xc = fft::rfft(col);
    for (index_t k = 0; k < 5; ++k) CHECK(test::close(X(k, c), Xc(k), 1e-13));
  }
}

// ---- n-d -------------------------------------------------------------------------------------

TEST_CASE_TEMPLATE("fftn/ifftn over all axes and over chosen axes match sequential naive DFTs", T, float, double,
                   std::complex<double>) {
  const std::vector<std::vector<index_t>> shapes = {{3, 5}, {8, 8}, {4, 6, 5}, {2, 3, 7}, {1, 9}, {5, 1, 3}};
  for (const auto& shape : shapes) {
    const auto in = random_input<T>(shape, shape.size() * 31 + std::uint64_t(shape[0]));
    const int r = int(shape.size());
    for (auto norm : all_norms) {
      ref want = in.r, inv = in.r;
      for (int j = 0; j < r; ++j) {
        want = dft_axis(want, j, -1);
        inv = dft_axis(inv, j, +1);
      }
      check(fft::fftn(in.a, {}, {}, norm), scaled(want, norm_factor(norm, false, in.r.size())), tolerance<T>(), "fftn");
      check(fft::ifftn(in.a, {}, {}, norm), scaled(inv, norm_factor(norm, true, in.r.size())), tolerance<T>(), "ifftn");
    }
    // a subset of the axes, given in a different order (the DFT does not depend on the order)
    const extents axes = r == 2 ? extents{1} : extents{2, 0};
    ref want = in.r;
    index_t n = 1;
    for (int k = 0; k < axes.size(); ++k) {
      want = dft_axis(want, int(axes[k]), -1);
      n *= shape[std::size_t(axes[k])];
    }
    check(fft::fftn(in.a, {}, axes), want, tolerance<T>(), "fftn axes");
    check(fft::fftn(in.a, {}, axes, fft::norm_mode::ortho), scaled(want, 1 / std::sqrt(double(n))), tolerance<T>(), "ortho");
  }
}

TEST_CASE("fftn with s pads and crops each axis; -1 keeps a length; without axes s picks the last axes") {
  const auto in = random_input<std::complex<double>>({4, 6, 5}, 21);
  {  // s over the last two axes (axes not given)
    const auto got = fft::fftn(in.a, {8, 3});
    const ref want = dft_axis(dft_axis(resize_axis(resize_axis(in.r, 1, 8), 2, 3), 1, -1), 2, -1);
    check(got, want, 1e-12, "fftn s");
  }
  {  // -1 keeps the length
    const auto got = fft::fftn(in.a, {-1, 7}, {0, 2});
    const ref want = dft_axis(dft_axis(resize_axis(in.r, 2, 7), 0, -1), 2, -1);
    check(got, want, 1e-12, "fftn s -1");
  }
  {  // fft2 defaults to the last two axes
    check(fft::fft2(in.a), dft_axis(dft_axis(in.r, 1, -1), 2, -1), 1e-12, "fft2");
    check(fft::ifft2(in.a, {3, 3}), scaled(dft_axis(dft_axis(resize_axis(resize_axis(in.r, 1, 3), 2, 3), 1, 1), 2, 1), 1.0 / 9),
          1e-12, "ifft2 s");
  }
}

TEST_CASE_TEMPLATE("rfftn/irfftn: the last of the axes is halved; odd last lengths need s", T, float, double) {
  const std::vector<std::vector<index_t>> shapes = {{6, 5}, {5, 7}, {3, 4, 9}, {4, 1, 6}, {1, 1}};
  for (const auto& shape : shapes) {
    const int r = int(shape.size());
    const auto in = random_input<T>(shape, std::uint64_t(r * 7 + shape.back()));
    for (auto norm : all_norms) {
      ref full = in.r;
      for (int j = 0; j < r; ++j) full = dft_axis(full, j, -1);
      const index_t last = shape.back();
      const auto X = fft::rfftn(in.a, {}, {}, norm);
      check(X, scaled(resize_axis(full, r - 1, last / 2 + 1), norm_factor(norm, false, in.r.size())), tolerance<T>(), "rfftn");
      const auto back = fft::irfftn(X, extents(shape), {}, norm);
      check(back, in.r, tolerance<T>(), "irfftn round trip");
    }
  }
  // halving the first axis: axes (1, 0) makes axis 0 the real one
  const auto in = random_input<T>({7, 4}, 9);
  const auto X = fft::rfftn(in.a, {}, {1, 0});
  REQUIRE(X.shape() == extents{4, 4});
  check(X, resize_axis(dft_axis(dft_axis(in.r, 0, -1), 1, -1), 0, 4), tolerance<T>(), "rfftn axes (1, 0)");
  check(fft::irfftn(X, {4, 7}, {1, 0}), in.r, tolerance<T>(), "irfftn axes (1, 0)");
  // rfft2 / irfft2 with padding
  const auto y = random_input<T>({2, 5, 6}, 10);
  const auto Y = fft::rfft2(y.a, {8, 9});
  check(Y, resize_axis(dft_axis(dft_axis(resize_axis(resize_axis(y.r, 1, 8), 2, 9), 1, -1), 2, -1), 2, 5), tolerance<T>(), "rfft2 s");
  check(fft::irfft2(Y, {8, 9}), resize_axis(resize_axis(y.r, 1, 8), 2, 9), tolerance<T>(), "irfft2");
}

TEST_CASE_TEMPLATE("*_into transforms write a caller's buffer, reuse the plan and allocate nothing", T, float, double) {
  using C = std::complex<T>;
  for (const auto& shape : std::vector<std::vector<index_t>>{{6, 5}, {3, 4, 9}, {1, 7}}) {
    const int r = int(shape.size());
    const auto in = random_input<T>(shape, std::uint64_t(31 * r + shape.back()));
    ref full = in.r;
    for (int j = 0; j < r; ++j) full = dft_axis(full, j, -1);
    extents half(shape);
    half[r - 1] = shape.back() / 2 + 1;
    array<C> spectrum(half), scratch(half), complex_out{extents(shape)};
    array<T> back{extents(shape)};
    for (auto norm : all_norms) {
      // the first call may plan; the following ones only run the cached plans
      fft::rfftn_into(spectrum, in.a, {}, {}, norm);
      instrument::reset();
      fft::rfftn_into(spectrum, in.a, {}, {}, norm);
      noalias(scratch) = spectrum;
      const long after_copy = instrument::allocations;
      fft::irfftn_into(back, scratch, extents(shape), {}, norm, fft::input_use::overwrite);
      INFO("shape ", to_string(extents(shape)), " norm ", int(norm));
      CHECK(after_copy == 0);
      CHECK(instrument::allocations == 0);
      fft::fftn_into(complex_out, in.a, {}, {}, norm);  // real input: converted to complex (one copy)
      check(spectrum, scaled(resize_axis(full, r - 1, shape.back() / 2 + 1), norm_factor(norm, false, in.r.size())),
            tolerance<T>(), "rfftn_into");
      check(back, in.r, tolerance<T>(), "irfftn_into round trip");
      check(complex_out, scaled(full, norm_factor(norm, false, in.r.size())), tolerance<T>(), "fftn_into");
      // preserving the input (the default) copies it first and leaves it as it was
      const array<C> before = spectrum.copy();
      array<T> again{extents(shape)};
      fft::irfftn_into(again, spectrum, extents(shape), {}, norm);
      CHECK(test::walk(spectrum) == test::walk(before));
      check(again, in.r, tolerance<T>(), "irfftn_into preserving its input");
      // in place: the same elements in the same layout
      fft::ifftn_into(complex_out, complex_out, {}, {}, norm);
      check(complex_out, in.r, tolerance<T>(), "ifftn_into in place");
    }
  }
  // a strided output (every other row of a larger buffer) and the equivalent allocating call
  const auto in = random_input<T>({4, 8}, 5);
  array<C> big(extents{8, 5});
  fft::rfftn_into(big(range(0, 8, 2), fusor::all), in.a);
  const auto want = fft::rfftn(in.a);
  CHECK(test::walk(eval(big(range(0, 8, 2), fusor::all))) == test::walk(want));
  // what the buffer must be
  array<C> wrong(extents{4, 4});
  CHECK_THROWS_WITH_AS(fft::rfftn_into(wrong, in.a), doctest::Contains("rfftn_into into a buffer of shape (4, 4): expected "
                                                                       "the transform's shape (4, 5)"), shape_error);
  array<C> overlap(extents{4, 8});
  CHECK_THROWS_WITH_AS(fft::fftn_into(overlap(fusor::all, range(0, 7)), overlap(fusor::all, range(1, 8))),
                       doctest::Contains("cannot write its output over its input"), value_error);
  CHECK_THROWS_WITH_AS(fft::rfftn_into(big(range(none, none, -2), fusor::all), in.a), doctest::Contains("positive strides"),
                       value_error);
}

TEST_CASE("irfftn of an arbitrary spectrum: inverse DFT over the leading axes, NumPy's c2r over the last") {
  const auto spec = random_input<std::complex<double>>({4, 3, 4}, 77);
  const auto got = fft::irfftn(spec.a, {4, 3, 6});
  const ref want = scaled(c2r_axis(dft_axis(dft_axis(spec.r, 0, +1), 1, +1), 2, 6), 1.0 / 72);
  check(got, want, 1e-12, "irfftn arbitrary");
}

TEST_CASE("Parseval: energy is kept (ortho) or scaled by N (backward)") {
  const auto in = random_input<double>({12, 10}, 5);
  double ex = 0;
  for (const cd& z : in.r.v) ex += std::norm(z);
  const auto X = fft::fftn(in.a);
  const auto Xo = fft::fftn(in.a, {}, {}, fft::norm_mode::ortho);
  double eX = 0, eXo = 0;
  for (index_t i = 0; i < X.size(); ++i) {
    eX += std::norm(X.data()[i]);
    eXo += std::norm(Xo.data()[i]);
  }
  CHECK(eX / 120 == doctest::Approx(ex).epsilon(1e-12));
  CHECK(eXo == doctest::Approx(ex).epsilon(1e-12));
}

// ---- layouts, temporaries, types -------------------------------------------------------------

TEST_CASE("non-contiguous inputs give the transform of their elements") {
  const auto in = random_input<std::complex<float>>({8, 10}, 8);
  const array<std::complex<float>> xt = transpose(in.a).copy();
  check(fft::fftn(transpose(in.a)), [&] {
    ref r{{}, {10, 8}};
    for (index_t i = 0; i < 10; ++i)
      for (index_t j = 0; j < 8; ++j) r.v.push_back(in.r.v[std::size_t(j * 10 + i)]);
    return dft_axis(dft_axis(r, 0, -1), 1, -1);
  }(), 2e-5, "transposed view");
  // step slices, negative steps (copied), broadcasts (a zero stride on a batch axis)
  const array<float> base = random_input<float>({9, 12}, 3).a;
  const auto sliced = base(range(1, 9, 2), range(11, none, -2));
  const array<float> sliced_copy = sliced.copy();
  const auto a1 = fft::rfft(sliced), a2 = fft::rfft(sliced_copy);
  REQUIRE(a1.shape() == a2.shape());
  for (index_t i = 0; i < a1.size(); ++i) CHECK(a1.data()[i] == a2.data()[i]);
  const array<float> row = random_input<float>({16}, 4).a;
  const auto b1 = fft::fft(broadcast_to(row, {5, 16})), b2 = fft::fft(row);
  for (index_t r = 0; r < 5; ++r)
    for (index_t k = 0; k < 16; ++k) CHECK(b1(r, k) == b2(k));
  // a broadcast along the transformed axis is copied, then transformed
  const array<float> col = random_input<float>({5, 1}, 6).a;
  const auto c1 = fft::fft(broadcast_to(col, {5, 8}));
  for (index_t r = 0; r < 5; ++r) {
    CHECK(test::close(c1(r, 0), std::complex<float>(8 * col(r, 0), 0), 1e-6));
    for (index_t k = 1; k < 8; ++k) CHECK(std::abs(c1(r, k)) <= 1e-5f * std::abs(8 * col(r, 0)) + 1e-6f);
  }
  // expressions are evaluated once, then transformed in place
  const auto e1 = fft::fft(row * 2.0f + 1.0f);
  const array<float> ev = row * 2.0f + 1.0f;
  const auto e2 = fft::fft(ev);
  for (index_t k = 0; k < 16; ++k) CHECK(e1(k) == e2(k));
}

TEST_CASE("inputs are never modified; temporaries are consumed in place") {
  const auto x = random_input<double>({6, 9}, 1);
  const array<std::complex<double>> X = fft::rfftn(x.a);
  const array<std::complex<double>> keep = X.copy();
  const auto y = fft::irfftn(X, {6, 9});  // c2r destroys its input: the lvalue is copied first
  for (index_t i = 0; i < X.size(); ++i) REQUIRE(X.data()[i] == keep.data()[i]);
  check(y, x.r, 1e-12, "irfftn lvalue");
  array<std::complex<double>> Xm = X.copy();
  fusor::instrument::reset();
  const auto y2 = fft::irfftn(std::move(Xm), {6, 9});
  CHECK(fusor::instrument::allocations == 1);  // only the output: the moved spectrum is transformed where it lies
  for (index_t i = 0; i < y.size(); ++i) CHECK(y.data()[i] == doctest::Approx(y2.data()[i]).epsilon(1e-14));
  fusor::instrument::reset();
  const auto z = fft::fft(x.a);  // real to complex: one converted copy, transformed in place
  CHECK(fusor::instrument::allocations == 1);
  const array<std::complex<double>> xc = x.a.astype<std::complex<double>>();
  fusor::instrument::reset();
  const auto z2 = fft::fft(xc);  // complex input read where it lies: only the output
  CHECK(fusor::instrument::allocations == 1);
  for (index_t i = 0; i < z.size(); ++i) CHECK(z.data()[i] == z2.data()[i]);
}

TEST_CASE("integer input transforms in double; float stays float") {
  const array<int> a{1, 2, 3, 4};
  const auto A = fft::fft(a);
  static_assert(std::is_same_v<std::remove_cvref_t<decltype(A)>, array<std::complex<double>>>);
  CHECK(A(0) == std::complex<double>(10, 0));
  CHECK(test::close(A(1), std::complex<double>(-2, 2), 1e-15));
  CHECK(test::close(A(2), std::complex<double>(-2, 0), 1e-15));
  const auto R = fft::rfft(array<std::uint8_t>{1, 0, 0, 0});
  static_assert(std::is_same_v<std::remove_cvref_t<decltype(R)>, array<std::complex<double>>>);
  for (index_t k = 0; k < 3; ++k) CHECK(R(k) == std::complex<double>(1, 0));
  static_assert(std::is_same_v<decltype(fft::rfft(std::declval<array<float>&>())), array<std::complex<float>>>);
  static_assert(std::is_same_v<decltype(fft::irfft(std::declval<array<std::complex<float>>&>())), array<float>>);
}

TEST_CASE_TEMPLATE("float16 and bfloat16 transform in float32, as NumPy 2 transforms float16", H, fusor::float16,
                   fusor::bfloat16) {
  // a 2-d field with a factor-7 axis and an even one: the result is the float32 transform of the
  // widened values (the same bits: the widening is exact), complex64 as in NumPy
  const index_t rows = 14, cols = 9;
  array<H> h(extents{rows, cols});
  for (index_t i = 0; i < h.size(); ++i) h.data()[i] = H(float(std::sin(0.3 * double(i)) * 4));
  const array<float> f = h.template astype<float>();
  static_assert(std::is_same_v<decltype(fft::rfftn(h)), array<std::complex<float>>>);
  static_assert(std::is_same_v<decltype(fft::fft(h)), array<std::complex<float>>>);
  auto same = [](const auto& got, const auto& want) {
    REQUIRE(got.shape() == want.shape());
    index_t bad = 0;
    for (index_t i = 0; i < got.size(); ++i) bad += !(got.data()[i] == want.data()[i]);
    CHECK(bad == 0);
  };
  same(fft::rfftn(h), fft::rfftn(f));
  same(fft::fftn(h, {}, {0}), fft::fftn(f, {}, {0}));
  same(fft::rfft(h, 16), fft::rfft(f, 16));  // zero-padded
  same(fft::fftconvolve(h, h), fft::fftconvolve(f, f));
  // against the naive DFT of the 16-bit values, in double
  const auto spectrum = fft::fft(h(0, all));
  for (index_t k = 0; k < cols; ++k) {
    std::complex<double> want = 0;
    for (index_t t = 0; t < cols; ++t)
      want += double(float(h.data()[t])) * std::polar(1.0, -2 * M_PI * double(k * t) / double(cols));
    CHECK(test::close(std::complex<double>(spectrum.data()[k]), want, 1e-5));
  }
}

TEST_CASE("empty batches give empty results; zero points to transform is an error") {
  const array<float> e(extents{0, 8});
  const auto E = fft::rfft(e);
  CHECK(E.shape() == extents{0, 5});
  CHECK(fft::fftn(e, {}, {1}).shape() == extents{0, 8});
  CHECK(fft::fft(e, 4, 0).shape() == extents{4, 8});  // zero-padded to 4 points: all zeros
  const array<float> z(extents{8, 0});
  CHECK_THROWS_WITH_AS(fft::fft(z), doctest::Contains("expects a positive number of points along axis 1, got 0"), value_error);
  CHECK_THROWS_AS(fft::irfft(array<std::complex<float>>{std::complex<float>(1, 0)}), value_error);  // 2 (1 - 1) = 0 points
  const array<double> zero_d(extents{});
  CHECK(fft::fftn(zero_d.copy()).shape() == extents{});
}

TEST_CASE("bad axes, s and n raise typed errors that name what was expected") {
  const array<double> x(extents{4, 5});
  CHECK_THROWS_WITH_AS(fft::fft(x, -1, 2), doctest::Contains("axis 2 is out of range for an array of rank 2"), index_error);
  CHECK_THROWS_WITH_AS(fft::fftn(x, {}, {0, -2}), doctest::Contains("expects each axis once"), value_error);
  CHECK_THROWS_WITH_AS(fft::fftn(x, {4, 5}, {0}), doctest::Contains("expects s and axes of the same length, got s = (4, 5) and axes = (0,)"),
                       value_error);
  CHECK_THROWS_WITH_AS(fft::fftn(x, {2, 2, 2}), doctest::Contains("expected at most one entry per axis"), value_error);
  CHECK_THROWS_WITH_AS(fft::fft(x, 0), doctest::Contains("expects a positive number of points along axis 1, got 0 (from s = (0,))"),
                       value_error);
  CHECK_THROWS_AS(fft::rfftn(x, {3, -5}), value_error);
  CHECK_THROWS_WITH_AS(fft::rfftn(array<double>(extents{})), doctest::Contains("needs at least one axis"), value_error);
}

// ---- helpers ---------------------------------------------------------------------------------

TEST_CASE("fftfreq, rfftfreq, fftshift and ifftshift match NumPy") {
  // np.fft.fftfreq(5), np.fft.fftfreq(6, d=0.5), np.fft.rfftfreq(7, d=2)
  const double f5[] = {0.0, 0.2, 0.4, -0.4, -0.2};
  const auto a = fft::fftfreq(5);
  for (index_t i = 0; i < 5; ++i) CHECK(a(i) == f5[i]);
  const double f6[] = {0.0, 1.0 / 3, 2.0 / 3, -1.0, -2.0 / 3, -1.0 / 3};
  const auto b = fft::fftfreq(6, 0.5);
  REQUIRE(b.size() == 6);
  for (index_t i = 0; i < 6; ++i) CHECK(b(i) == doctest::Approx(f6[i]).epsilon(1e-15));
  const auto c = fft::rfftfreq(7, 2.0);
  REQUIRE(c.size() == 4);
  for (index_t i = 0; i < 4; ++i) CHECK(c(i) == double(i) / 14.0);
  CHECK_THROWS_AS(fft::fftfreq(0), value_error);
  static_assert(std::is_same_v<decltype(fft::fftfreq<float>(4)), array<float>>);

  // np.fft.fftshift(np.arange(5)) = [3 4 0 1 2]; ifftshift = [2 3 4 0 1]
  const auto s5 = fft::fftshift(arange<int>(5)), i5 = fft::ifftshift(arange<int>(5));
  const int want_s[] = {3, 4, 0, 1, 2}, want_i[] = {2, 3, 4, 0, 1};
  for (index_t i = 0; i < 5; ++i) {
    CHECK(s5(i) == want_s[i]);
    CHECK(i5(i) == want_i[i]);
  }
  // 2-d, one axis: np.fft.fftshift(np.arange(12).reshape(3, 4), axes=1)
  const array<int> m = arange<int>(12).reshape({3, 4});
  const auto sm = fft::fftshift(m, {1});
  const int want_m[] = {2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9};
  for (index_t i = 0; i < 12; ++i) CHECK(sm.data()[i] == want_m[i]);
  const auto all2 = fft::ifftshift(fft::fftshift(m));
  for (index_t i = 0; i < 12; ++i) CHECK(all2.data()[i] == int(i));
  // the zero frequency lands in the middle: fftshift(fftfreq(n))[n // 2] == 0
  for (index_t n : {1, 2, 7, 8}) CHECK(fft::fftshift(fft::fftfreq(n))(n / 2) == 0.0);
}

TEST_CASE("next_fast_len is the smallest 2,3,5,7-smooth length at least the target") {
  auto smooth = [](index_t v) {
    for (index_t p : {2, 3, 5, 7})
      while (v % p == 0) v /= p;
    return v == 1;
  };
  for (index_t n = 1; n <= 3000; ++n) {
    index_t want = n;
    while (!smooth(want)) ++want;
    REQUIRE(fft::next_fast_len(n) == want);
  }
  CHECK(fft::next_fast_len(542) == 560);
  CHECK(fft::next_fast_len(1000001) == 1000188);  // 2^2 * 3^6 * 7^3
  CHECK(smooth(fft::next_fast_len(index_t(1) << 40 | 1)));
  CHECK_THROWS_WITH_AS(fft::next_fast_len(0), doctest::Contains("expects a positive length, got 0"), value_error);
}

TEST_CASE("transform_cost: the model's weights per factor, the odd penalty, and the choices it makes") {
  // the weights written out (fft/transform_cost.hpp): 2 0.215, 3 0.523, 5 0.773, 7 1.198, odd 1.718
  CHECK(fft::axis_cost(1) == 0.0);
  CHECK(fft::axis_cost(128) == doctest::Approx(7 * 0.215));
  CHECK(fft::axis_cost(112) == doctest::Approx(4 * 0.215 + 1.198));
  CHECK(fft::axis_cost(135) == doctest::Approx(3 * 0.523 + 0.773 + 1.718));
  CHECK(std::isinf(fft::axis_cost(13)));  // no codelet: never a length to pad to
  CHECK(std::isinf(fft::axis_cost(2 * 11)));
  CHECK(fft::transform_cost(extents{112, 126, 70}) ==
        doctest::Approx(112.0 * 126 * 70 * (fft::axis_cost(112) + fft::axis_cost(126) + fft::axis_cost(70))));
  CHECK(fft::transform_cost(extents{}) == 0.0);
  // what the fit was made to reproduce (one-thread FFTW pairs measured here: 140^3 21.5 ms against
  // 144^3 16.1 ms, 126^3 18.1 against 128^3 10.2, 135^3 32.8 against 144^3, 112^3 7.2 against 120^3 7.9)
  CHECK(fft::transform_cost(extents{144, 144, 144}) < fft::transform_cost(extents{140, 140, 140}));
  CHECK(fft::transform_cost(extents{128, 128, 128}) < fft::transform_cost(extents{126, 126, 126}));
  CHECK(fft::transform_cost(extents{144, 144, 144}) < fft::transform_cost(extents{135, 135, 135}));
  CHECK(fft::transform_cost(extents{112, 112, 112}) < fft::transform_cost(extents{120, 120, 120}));
  CHECK_THROWS_WITH_AS(fft::axis_cost(0), doctest::Contains("expects a positive length, got 0"), value_error);
}

// ---- convolution and correlation ---------------------------------------------------------------

namespace {
/// Direct n-d convolution (full) of two reference arrays of equal rank.
ref direct_convolve(const ref& a, const ref& b, bool correlate) {
  const std::size_t r = a.shape.size();
  ref out;
  for (std::size_t j = 0; j < r; ++j) out.shape.push_back(a.shape[j] + b.shape[j] - 1);
  out.v.assign(std::size_t(out.size()), cd(0));
  std::vector<index_t> ia(r), ib(r);
  for (index_t p = 0; p < a.size(); ++p) {
    index_t rem = p;
    for (std::size_t j = r; j-- > 0;) {
      ia[j] = rem % a.shape[j];
      rem /= a.shape[j];
    }
    for (index_t q = 0; q < b.size(); ++q) {
      index_t rq = q, off = 0;
      for (std::size_t j = r; j-- > 0;) {
        ib[j] = rq % b.shape[j];
        rq /= b.shape[j];
      }
      // convolution: out[i + k] += a[i] b[k]; correlation: b reversed and conjugated
      for (std::size_t j = 0; j < r; ++j) off = off * out.shape[j] + ia[j] + (correlate ? b.shape[j] - 1 - ib[j] : ib[j]);
      out.v[std::size_t(off)] += a.v[std::size_t(p)] * (correlate ? std::conj(b.v[std::size_t(q)]) : b.v[std::size_t(q)]);
    }
  }
  return out;
}
/// scipy's _centered on every axis: the block of `shape` starting at (full - shape) // 2.
ref centered(const ref& full, const std::vector<index_t>& shape) {
  ref r = full;
  for (std::size_t j = 0; j < shape.size(); ++j) {
    const index_t start = (full.shape[j] - shape[j]) / 2;
    ref next;
    next.shape = r.shape;
    next.shape[j] = shape[j];
    next.v.assign(std::size_t(next.size()), cd(0));
    lines(r.shape, int(j), [&](index_t o, index_t i, index_t inner) {
      for (index_t t = 0; t < shape[j]; ++t)
        next.v[std::size_t((o * shape[j] + t) * inner + i)] = r.v[std::size_t((o * r.shape[j] + start + t) * inner + i)];
    });
    r = next;
  }
  return r;
}
}  // namespace

TEST_CASE_TEMPLATE("fftconvolve and correlate match direct summation in every mode", T, float, double, std::complex<double>) {
  const std::vector<std::pair<std::vector<index_t>, std::vector<index_t>>> cases = {
      {{1}, {1}}, {{7}, {3}}, {{3}, {8}}, {{31}, {31}}, {{100}, {9}}, {{6, 7}, {3, 2}}, {{5, 4}, {5, 4}},
      {{4, 5, 6}, {2, 3, 3}}, {{3, 9}, {4, 2}}};
  for (const auto& [sa, sb] : cases) {
    const auto a = random_input<T>(sa, sa.size() * 13 + std::uint64_t(sa[0])), b = random_input<T>(sb, 91 + std::uint64_t(sb[0]));
    for (bool corr : {false, true}) {
      CAPTURE(corr);
      const ref full = direct_convolve(a.r, b.r, corr);
      auto run = [&](fft::conv_mode m) { return corr ? fft::correlate(a.a, b.a, m) : fft::fftconvolve(a.a, b.a, m); };
      const double tol = std::is_same_v<real_t<T>, float> ? 1e-5 : 1e-12;
      check(run(fft::conv_mode::full), full, tol, "full");
      check(run(fft::conv_mode::same), centered(full, sa), tol, "same");
      bool ge = true, le = true;
      std::vector<index_t> valid;
      for (std::size_t j = 0; j < sa.size(); ++j) {
        ge = ge && sa[j] >= sb[j];
        le = le && sa[j] <= sb[j];
        valid.push_back(std::max(sa[j], sb[j]) - std::min(sa[j], sb[j]) + 1);
      }
      if (ge || le) {
        check(run(fft::conv_mode::valid), centered(full, valid), tol, "valid");
      } else {
        CHECK_THROWS_WITH_AS(run(fft::conv_mode::valid), doctest::Contains("at least as large as the other on every convolved axis"),
                             value_error);
      }
    }
  }
}

TEST_CASE("fftconvolve over chosen axes broadcasts the others; mixed and integer types promote") {
  // (3, 10) signals convolved along axis 1 with one (1, 4) kernel
  const auto sig = random_input<double>({3, 10}, 41), ker = random_input<double>({1, 4}, 42);
  const auto got = fft::fftconvolve(sig.a, ker.a, fft::conv_mode::full, {1});
  REQUIRE(got.shape() == extents{3, 13});
  for (index_t r = 0; r < 3; ++r) {
    ref row{{sig.r.v.begin() + r * 10, sig.r.v.begin() + r * 10 + 10}, {10}};
    const ref want = direct_convolve(row, ref{ker.r.v, {4}}, false);
    for (index_t k = 0; k < 13; ++k) CHECK(std::abs(got(r, k) - want.v[std::size_t(k)].real()) <= 1e-12);
  }
  CHECK_THROWS_WITH_AS(fft::fftconvolve(sig.a, random_input<double>({2, 4}, 1).a, fft::conv_mode::full, {1}),
                       doctest::Contains("equal lengths (or 1) on the axes it does not convolve"), shape_error);
  // int * int gives double; float * double gives double; float * complex<float> gives complex<float>
  const auto ii = fft::fftconvolve(array<int>{1, 2, 3}, array<int>{1, 1});
  static_assert(std::is_same_v<std::remove_cvref_t<decltype(ii)>, array<double>>);
  const double want_ii[] = {1, 3, 5, 3};
  for (index_t i = 0; i < 4; ++i) CHECK(ii(i) == doctest::Approx(want_ii[i]).epsilon(1e-14));
  static_assert(std::is_same_v<decltype(fft::fftconvolve(std::declval<array<float>&>(), std::declval<array<double>&>())), array<double>>);
  static_assert(std::is_same_v<decltype(fft::fftconvolve(std::declval<array<float>&>(), std::declval<array<std::complex<float>>&>())),
                               array<std::complex<float>>>);
  CHECK_THROWS_WITH_AS(fft::fftconvolve(array<double>{1, 2}, array<double>{{1, 2}}), doctest::Contains("inputs of the same rank"),
                       value_error);
  CHECK(fft::fftconvolve(array<double>(extents{0}), array<double>{1, 2}).size() == 0);
}

TEST_CASE("fftconvolve: two forward transforms, the product in place, one inverse, one crop") {
  const auto a = random_input<float>({64, 64}, 3), b = random_input<float>({7, 7}, 4);
  fusor::instrument::reset();
  fusor::instrument::fft_executions = 0;
  const auto same = fft::fftconvolve(a.a, b.a, fft::conv_mode::same);
  CHECK(fusor::instrument::fft_executions == 3);
  // padded copies of both inputs, their two spectra, the inverse's output, the cropped result:
  // the spectrum product is written over the first spectrum and the inverse consumes it in place
  CHECK(fusor::instrument::allocations == 6);
  CHECK(same.shape() == extents{64, 64});
}

// ---- plans, threads, wisdom --------------------------------------------------------------------

TEST_CASE("plans are cached by layout, reused, bounded and clearable") {
  fft::clear_plan_cache();
  const auto x = random_input<double>({32, 24}, 1);
  (void)fft::rfftn(x.a);
  auto s = fft::plan_cache_info();
  CHECK(s.misses == 1);
  CHECK(s.hits == 0);
  (void)fft::rfftn(x.a);
  s = fft::plan_cache_info();
  CHECK(s.misses == 1);
  CHECK(s.hits == 1);
  (void)fft::rfftn(x.a(range(0, 16), all));  // another geometry: a new plan
  (void)fft::fftn(x.a);                      // another kind: a new plan
  s = fft::plan_cache_info();
  CHECK(s.misses == 3);
  CHECK(s.size == 3);
  fft::set_plan_cache_capacity(1);
  CHECK(fft::plan_cache_info().size == 1);
  (void)fft::rfftn(x.a);
  CHECK(fft::plan_cache_info().size == 1);
  fft::set_plan_cache_capacity(0);  // no caching at all: still correct
  check(fft::rfftn(x.a), resize_axis(dft_axis(dft_axis(x.r, 0, -1), 1, -1), 1, 13), 1e-12, "capacity 0");
  CHECK(fft::plan_cache_info().size == 0);
  fft::set_plan_cache_capacity(64);
  fft::clear_plan_cache();
  s = fft::plan_cache_info();
  CHECK(s.size == 0);
  CHECK(s.hits == 0);
  CHECK(s.capacity == 64);
}

TEST_CASE("transforms from several threads at once share the cache safely, under eviction") {
  fft::clear_plan_cache();
  fft::set_plan_cache_capacity(2);  // constant eviction while other threads run their plans
  std::vector<input<double>> ins;
  std::vector<ref> wants;
  for (index_t n : {16, 18, 20, 24, 25}) {
    ins.push_back(random_input<double>({4, n}, std::uint64_t(n)));
    wants.push_back(resize_axis(dft_axis(ins.back().r, 1, -1), 1, n / 2 + 1));
  }
  std::atomic<int> bad{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < 4; ++t)
    pool.emplace_back([&, t] {
      for (int it = 0; it < 50; ++it) {
        const std::size_t k = std::size_t(t + it) % ins.size();
        const auto X = fft::rfft(ins[k].a);
        for (index_t i = 0; i < X.size(); ++i)
          if (std::abs(cd(X.data()[i]) - wants[k].v[std::size_t(i)]) > 1e-12 * 64) ++bad;
      }
    });
  for (auto& th : pool) th.join();
  CHECK(bad == 0);
  CHECK(fft::plan_cache_info().size <= 2);
  fft::set_plan_cache_capacity(64);
}

TEST_CASE("threads and planning effort change the plan, not the result") {
  const auto x = random_input<float>({128, 160}, 9);  // 20480 points: above the threaded threshold with 2 batches
  const auto x2 = random_input<float>({2, 128, 160}, 9);
  fft::set_threads(1);
  const auto one = fft::rfftn(x2.a, {}, {1, 2});
  fft::set_threads(2);
  const auto two = fft::rfftn(x2.a, {}, {1, 2});
  fft::set_threads(0);
  CHECK(fft::threads() >= 1);
  REQUIRE(one.shape() == two.shape());
  for (index_t i = 0; i < one.size(); ++i) REQUIRE(test::close(one.data()[i], two.data()[i], 1e-4));

  fft::set_planning(fft::planning::measure);
  CHECK(fft::planning_effort() == fft::planning::measure);
  const array<float> before = x.a.copy();
  const auto measured = fft::rfftn(x.a);  // measuring plans on scratch memory: x is untouched
  for (index_t i = 0; i < x.a.size(); ++i) REQUIRE(x.a.data()[i] == before.data()[i]);
  fft::set_planning(fft::planning::estimate);
  const auto estimated = fft::rfftn(x.a);
  for (index_t i = 0; i < measured.size(); ++i) REQUIRE(test::close(measured.data()[i], estimated.data()[i], 1e-4));

  // a planning scope changes this thread's effort only, and only while it lives: the effort is
  // part of the plan's key, so the first transform in the scope makes a new plan
  {
    const auto y = random_input<float>({36, 50}, 10);
    (void)fft::rfftn(y.a);  // an estimated plan
    const long misses = fft::plan_cache_info().misses;
    (void)fft::rfftn(y.a);
    CHECK(fft::plan_cache_info().misses == misses);
    {
      const fft::planning_scope<fusor::cpu> scope(fft::planning::patient);
      CHECK(fft::planning_effort() == fft::planning::estimate);  // the process-wide setting is untouched
      (void)fft::rfftn(y.a);
      CHECK(fft::plan_cache_info().misses == misses + 1);
      long other = 0;
      std::thread([&] {
        (void)fft::rfftn(y.a);  // another thread: still estimated, found in the cache
        other = fft::plan_cache_info().misses;
      }).join();
      CHECK(other == misses + 1);
    }
    (void)fft::rfftn(y.a);  // back to the estimated plan
    CHECK(fft::plan_cache_info().misses == misses + 1);
  }
  // a threads scope: a large transform on 2 threads, then in the scope on 1 (a new plan, the
  // same numbers), then on 2 again (the cached plan)
  {
    fft::set_threads(2);
    const auto big = random_input<float>({2, 130, 160}, 11);  // a shape no earlier check planned
    const auto two_threads = fft::rfftn(big.a, {}, {1, 2});
    const long misses = fft::plan_cache_info().misses;
    {
      const fft::threads_scope<fusor::cpu> scope(1);
      const auto one_thread = fft::rfftn(big.a, {}, {1, 2});
      CHECK(fft::plan_cache_info().misses == misses + 1);
      for (index_t i = 0; i < one_thread.size(); ++i) REQUIRE(test::close(one_thread.data()[i], two_threads.data()[i], 1e-4));
      CHECK(fft::threads() == 2);  // the process-wide setting is untouched
    }
    (void)fft::rfftn(big.a, {}, {1, 2});
    CHECK(fft::plan_cache_info().misses == misses + 1);
    fft::set_threads(0);
  }

  const std::string w = fft::export_wisdom<float>();
  CHECK(w.find("fftw") != std::string::npos);
  fft::forget_wisdom();
  CHECK_NOTHROW(fft::import_wisdom<float>(w));
  CHECK_THROWS_WITH_AS(fft::import_wisdom<double>("not wisdom"), doctest::Contains("expected FFTW double wisdom text"), fft_error);
}
