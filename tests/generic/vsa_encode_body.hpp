// VSA encoders (level, thermometer and circular codebooks, the scalar encoder over them, fractional
// power encoding, n-grams, records) and the centroid classifier (with the digits data set), written once and instantiated per backend: tests/test_vsa_encode.cpp
// runs them on cpu, tests/test_vsa_cuda.cu on cuda. References: the codebooks' construction
// checked position by position against the two random vectors they mix, similarities against
// closed forms (computed here, not by the encoder), FPE vectors against a plain loop of phasors
// (HRR: a naive inverse DFT), decoding against the encoded values.
//
// The includer defines TEST_BACKEND (fusor::cpu or fusor::cuda) before including this file.
#include "../common.hpp"
#include "../data_dir.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <filesystem>
#include <numbers>
#include <span>
#include <utility>
#include <vector>

namespace vsaencode {

using fusor::index_t;
using B = TEST_BACKEND;
namespace vsa = fusor::vsa;
using test::host_values;

/// Element p of row r of model m's host rows as a comparable double pair (BSC: the bit).
template <class M>
std::complex<double> at(const M& m, const std::vector<typename M::value_type>& h, index_t r, index_t p) {
  if constexpr (std::is_same_v<typename M::value_type, std::uint64_t>)
    return double((h[std::size_t(r * m.width() + p / 64)] >> (p % 64)) & 1u);
  else
    return std::complex<double>(h[std::size_t(r * m.width() + p)]);
}

/// Cosine of rows i and j of host rows, by a plain loop (BSC: bipolar).
template <class M>
double cosine(const M& m, const std::vector<typename M::value_type>& h, index_t i, index_t j) {
  double dot = 0, ni = 0, nj = 0;
  for (index_t p = 0; p < m.dim(); ++p) {
    std::complex<double> a = at(m, h, i, p), b = at(m, h, j, p);
    if constexpr (std::is_same_v<M, vsa::bsc>) {
      a = 1.0 - 2.0 * a;
      b = 1.0 - 2.0 * b;
    }
    dot += (a * std::conj(b)).real();
    ni += std::norm(a);
    nj += std::norm(b);
  }
  return dot / std::sqrt(ni * nj);
}

/// |a - b| for real or complex elements; for BSC's words, 0 when equal and 1 when not.
template <class T>
double distance(const T& a, const T& b) {
  if constexpr (std::is_unsigned_v<T>) return a == b ? 0.0 : 1.0;
  else return double(std::abs(a - b));
}

/// The closed-form kernels, written out here.
double kernel(vsa::fpe_kernel k, double u) {
  const double pi = std::numbers::pi;
  switch (k) {
    case vsa::fpe_kernel::sinc: return u == 0 ? 1.0 : std::sin(pi * u) / (pi * u);
    case vsa::fpe_kernel::gaussian: return std::exp(-u * u / 2);
    case vsa::fpe_kernel::laplace: return std::exp(-std::abs(u));
    default: return 1 / (1 + u * u);
  }
}

// ---- codebooks ---------------------------------------------------------------------------------

TEST_CASE_TEMPLATE("vsa level: each level mixes the two end vectors position by position, similarity linear", M,
                   vsa::map_b, vsa::bsc, vsa::fhrr, vsa::hrr) {
  const M m(4001);
  const index_t n = 9;
  const auto lv = host_values(vsa::level<B>(m, n, 17));
  const auto ends = host_values(vsa::random<B>(m, 2, 17));
  REQUIRE(lv.size() == std::size_t(n * m.width()));
  // position p switches from the first end to the second at one level and stays switched
  bool mixed = true, nested = true;
  std::vector<index_t> switched(std::size_t(n), 0);
  for (index_t p = 0; p < m.dim(); ++p) {
    const auto a = at(m, ends, 0, p), b = at(m, ends, 1, p);
    bool on = false;
    for (index_t i = 0; i < n; ++i) {
      const auto x = at(m, lv, i, p);
      mixed = mixed && (x == a || x == b);
      const bool now = x == b && x != a;
      nested = nested && (!on || now || a == b);
      on = on || now;
      if (now) ++switched[std::size_t(i)];
    }
  }
  CHECK(mixed);
  CHECK(nested);
  CHECK(lv[0] == ends[0]);  // level 0 is the first end, level n - 1 the second
  CHECK(at(m, lv, n - 1, m.dim() - 1) == at(m, ends, 1, m.dim() - 1));
  for (index_t i = 1; i < n; ++i) {
    CAPTURE(i);
    const double frac = double(i) / double(n - 1);
    // about frac of the positions come from the second end (the positions where the ends differ)
    const double differ = std::is_same_v<M, vsa::bsc> || std::is_same_v<M, vsa::map_b> ? 0.5 : 1.0;
    CHECK(double(switched[std::size_t(i)]) / double(m.dim()) == doctest::Approx(frac * differ).epsilon(0).scale(1).epsilon(0.05));
    CHECK(cosine(m, lv, 0, i) == doctest::Approx(1 - frac).epsilon(0).scale(1).epsilon(0.05));
  }
}

TEST_CASE("vsa level: randomness, one level, models by position kind, bad input") {
  const vsa::map_b m(1000);
  // randomness 1: every level its own random vector (the ends of n - 1 spans)
  CHECK(host_values(vsa::level<B>(m, 6, 5, 1.0)) == host_values(vsa::random<B>(m, 6, 5)));
  CHECK(host_values(vsa::level<B>(m, 1, 5)) == host_values(vsa::random<B>(m, 1, 5)));
  // randomness 1/2, n = 12: spans of (1 - r)(n - 1) + r = 6 steps, level 6 is the second span's start
  const auto half = host_values(vsa::level<B>(m, 12, 5, 0.5));
  const auto ends = host_values(vsa::random<B>(m, 3, 5));
  CHECK(std::equal(half.begin() + 6 * 1000, half.begin() + 7 * 1000, ends.begin() + 1000));
  CHECK(cosine(m, half, 0, 6) == doctest::Approx(0).epsilon(0).scale(1).epsilon(0.12));
  CHECK(cosine(m, half, 6, 11) == doctest::Approx(1 - 5.0 / 6).epsilon(0).scale(1).epsilon(0.12));
  CHECK(cosine(m, half, 2, 3) == doctest::Approx(1 - 1.0 / 6).epsilon(0).scale(1).epsilon(0.12));
  // blocks move whole (GHRR) and bits keep their density (BSDC)
  const vsa::ghrr g(500, 2);
  const auto lg = host_values(vsa::level<B>(g, 3, 2));
  const auto eg = host_values(vsa::random<B>(g, 2, 2));
  bool whole = true;
  for (index_t p = 0; p < g.dim(); ++p) {
    const auto* blk = &lg[std::size_t(g.width() + 4 * p)];
    const bool first = std::equal(blk, blk + 4, &eg[std::size_t(4 * p)]);
    const bool second = std::equal(blk, blk + 4, &eg[std::size_t(g.width() + 4 * p)]);
    whole = whole && (first || second);
  }
  CHECK(whole);
  const vsa::bsdc sp(10000);
  const auto ls = vsa::level<B>(sp, 3, 4);
  const auto bits = host_values(fusor::array<std::int64_t, B>(fusor::sum(fusor::cast<std::int64_t>(sp.unpack(ls)), -1)));
  for (auto b : bits) CHECK(double(b) == doctest::Approx(100).epsilon(0.3));
  // bad input
  CHECK_THROWS_WITH_AS(vsa::level<B>(m, 0, 1), doctest::Contains("at least 1 level, got 0"), fusor::value_error);
  CHECK_THROWS_WITH_AS(vsa::level<B>(m, 4, 1, 1.5), doctest::Contains("randomness in [0, 1], got 1.5"),
                       fusor::value_error);
  CHECK_THROWS_WITH_AS(vsa::level<B>(vsa::bsdc_seg(100, 10), 4, 1), doctest::Contains("BSDC-SEG has no positions"),
                       fusor::value_error);
}

TEST_CASE_TEMPLATE("vsa thermometer: the first round(i d / (n - 1)) positions are the identity's", M, vsa::map_b,
                   vsa::map_i, vsa::bsc, vsa::fhrr) {
  for (index_t d : {index_t(1), index_t(63), index_t(65), index_t(1001)}) {
    CAPTURE(d);
    const M m(d);
    const index_t n = 7;
    const auto th = host_values(vsa::thermometer<B>(m, n));
    const auto id = host_values(vsa::identity<B>(m, 1));
    bool exact = true;
    for (index_t i = 0; i < n; ++i) {
      const index_t on = index_t(std::llround(double(i) * double(d) / double(n - 1)));
      for (index_t p = 0; p < d; ++p) {
        const auto x = at(m, th, i, p), e = at(m, id, 0, p);
        exact = exact && (p < on ? x == e : x != e);
      }
    }
    CHECK(exact);
    if (d == 1001)
      for (index_t j = 0; j < n; ++j)
        CHECK(cosine(m, th, 0, j) ==
              doctest::Approx(1 - 2 * double(std::llround(double(j) * 1001.0 / 6.0)) / 1001.0).epsilon(1e-6));
  }
  if constexpr (std::is_same_v<M, vsa::map_b>) {
    CHECK(host_values(vsa::thermometer<B>(M(10), 1)) == std::vector<float>(10, -1.0f));
    CHECK_THROWS_WITH_AS(vsa::thermometer<B>(vsa::hrr(10), 3), doctest::Contains("HRR has no negative"),
                         fusor::value_error);
  }
}

TEST_CASE_TEMPLATE("vsa circular: similarity 1 - 2 delta in turns, and it wraps", M, vsa::map_b, vsa::fhrr) {
  const M m(8000);
  const index_t n = 12;
  const auto c = host_values(vsa::circular<B>(m, n, 3));
  for (index_t i : {index_t(0), index_t(5)})
    for (index_t k = 0; k < n; ++k) {
      CAPTURE(i);
      CAPTURE(k);
      const double turns = double(k) / double(n), delta = std::min(turns, 1 - turns);
      CHECK(cosine(m, c, i, (i + k) % n) == doctest::Approx(1 - 2 * delta).epsilon(0).scale(1).epsilon(0.04));
    }
  // each position holds the second vector for half the turn, starting anywhere
  const auto ends = host_values(vsa::random<B>(m, 2, 3));
  bool half = true;
  for (index_t p = 0; p < m.dim(); ++p) {
    if (at(m, ends, 0, p) == at(m, ends, 1, p)) continue;
    index_t count = 0;
    for (index_t i = 0; i < n; ++i) count += at(m, c, i, p) == at(m, ends, 1, p);
    half = half && count == n / 2;
  }
  CHECK(half);
  CHECK_THROWS_AS(vsa::circular<B>(m, 0, 1), fusor::value_error);
}

// ---- the scalar encoder ------------------------------------------------------------------------

TEST_CASE("vsa scalar_encoder: values to levels, decode, periodic values, bad input") {
  const vsa::map_b m(2000);
  const auto enc = vsa::scalar_encoder<vsa::map_b, B>::level(m, 31, -1.0, 2.0, 9);
  const std::vector<double> xs{-1.0, -0.951, -0.949, 0.0, 0.5, 1.96, 2.0};
  const fusor::array<double, B> x(std::span<const double>(xs), fusor::extents{7});
  const auto v = enc.encode(x);
  REQUIRE(v.shape() == fusor::extents{7, 2000});
  const auto book = host_values(enc.levels().items());
  const auto hv = host_values(v);
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const auto level = std::size_t(std::floor((xs[i] + 1.0) / 0.1 + 0.5));  // step 3 / 30
    CAPTURE(i);
    CHECK(std::equal(hv.begin() + std::ptrdiff_t(i * 2000), hv.begin() + std::ptrdiff_t((i + 1) * 2000),
                     book.begin() + std::ptrdiff_t(level * 2000)));
    CHECK(host_values(enc.decode(v))[i] == doctest::Approx(-1.0 + 0.1 * double(level)));
  }
  // any shape: (2, 3) values give (2, 3, width); none give (0, width)
  const auto grid = enc.encode(fusor::zeros<float, B>(fusor::extents{2, 3}));
  CHECK(grid.shape() == fusor::extents{2, 3, 2000});
  CHECK(enc.encode(fusor::zeros<double, B>(fusor::extents{0})).shape() == fusor::extents{0, 2000});
  CHECK_THROWS_WITH_AS(enc.encode(fusor::array<double, B>{0.0, 2.5}),
                       doctest::Contains("expects values in [-1.000000, 2.000000], got 2.500000 at flat index 1"),
                       fusor::value_error);
  CHECK_THROWS_WITH_AS(enc.encode(fusor::array<double, B>{std::nan("")}), doctest::Contains("got nan"),
                       fusor::value_error);
  CHECK_THROWS_WITH_AS((vsa::scalar_encoder<vsa::map_b, B>::level(m, 4, 1.0, 1.0, 0)),
                       doctest::Contains("finite low < high"), fusor::value_error);
  // periodic: hours of a day; 25 wraps to 1, -1 to 23, and 23.6 rounds to level 0
  const vsa::fhrr f(2000);
  const auto hours = vsa::scalar_encoder<vsa::fhrr, B>::circular(f, 24, 0.0, 24.0, 4);
  CHECK(host_values(hours.indices(fusor::array<double, B>{25.0, -1.0, 23.6, 12.0})) ==
        std::vector<std::int64_t>{1, 23, 0, 12});
  CHECK(host_values(hours.decode(hours.encode(fusor::array<double, B>{25.0, 13.2}))) == std::vector<double>{1.0, 13.0});
  CHECK_THROWS_WITH_AS(hours.encode(fusor::array<double, B>{1.0, INFINITY}), doctest::Contains("expects finite values"),
                       fusor::value_error);
  // thermometer over bits
  const vsa::bsc b(640);
  const auto th = vsa::scalar_encoder<vsa::bsc, B>::thermometer(b, 5, 0.0, 1.0);
  CHECK(host_values(th.decode(th.encode(fusor::array<float, B>{0.0f, 0.3f, 1.0f}))) ==
        std::vector<double>{0.0, 0.25, 1.0});
}

// ---- fractional power encoding ------------------------------------------------------------------

TEST_CASE("vsa FPE: the vectorised sincos against double sin and cos, phases up to 1e4") {
  double err = 0;
  test::lcg g{5};
  for (int i = 0; i < 200000; ++i) {
    const float x = float((g.next() * 2 - 1) * (i % 4 == 0 ? 1e4 : i % 4 == 1 ? 100.0 : 4.0));
    float s, c;
    vsa::detail::sincos_poly(x, s, c);
    err = std::max({err, std::abs(double(s) - std::sin(double(x))), std::abs(double(c) - std::cos(double(x)))});
  }
  for (float x : {0.0f, -0.0f, 0.785398f, 1.5707964f, 3.1415927f, -3.1415927f, 4.712389f, 6.2831855f}) {
    float s, c;
    vsa::detail::sincos_poly(x, s, c);
    err = std::max({err, std::abs(double(s) - std::sin(double(x))), std::abs(double(c) - std::cos(double(x)))});
  }
  CHECK(err < 1e-6);
}

TEST_CASE_TEMPLATE("vsa FPE: vectors against a plain loop of phasors, bind adds values", M, vsa::fhrr, vsa::hrr) {
  for (index_t d : {index_t(1), index_t(32), index_t(33)}) {
    CAPTURE(d);
    const M m(d);
    const vsa::fractional_power_encoder<M, B> fp(m, 2.0, 6.0, 21, vsa::fpe_kernel::gaussian, 3.0);
    const auto w = host_values(fp.frequencies());
    REQUIRE(index_t(w.size()) == (std::is_same_v<M, vsa::hrr> ? d / 2 + 1 : d));
    const std::vector<double> xs{2.0, 3.7, 6.0};
    const auto v = host_values(fp.encode(fusor::array<double, B>(std::span<const double>(xs), fusor::extents{3})));
    double err = 0;
    for (std::size_t r = 0; r < xs.size(); ++r)
      for (index_t j = 0; j < d; ++j) {
        std::complex<double> ref;
        if constexpr (std::is_same_v<M, vsa::fhrr>) {
          ref = std::polar(1.0, double(w[std::size_t(j)]) * (xs[r] - 2.0));
        } else {  // a naive inverse DFT of the conjugate-symmetric unit spectrum (DC, Nyquist: 1)
          double s = 0;
          for (index_t k = 0; k < d; ++k) {
            const index_t kk = k <= d / 2 ? k : d - k;
            const double ph = (kk == 0 || 2 * kk == d ? 0.0 : double(w[std::size_t(kk)]) * (xs[r] - 2.0)) * (k <= d / 2 ? 1 : -1);
            s += std::cos(ph + 2 * std::numbers::pi * double(k * j) / double(d));
          }
          ref = s / double(d);
        }
        err = std::max(err, std::abs(std::complex<double>(v[r * std::size_t(d) + std::size_t(j)]) - ref));
      }
    CHECK(err < 2e-5);
  }
  // encode(low) is the identity; bind(encode(a), encode(b)) = encode(a + b - low)
  const M m(512);
  const vsa::fractional_power_encoder<M, B> fp(m, 1.0, 5.0, 3);
  const auto e = fp.encode(fusor::array<double, B>{1.0, 1.5, 2.25, 2.75});
  const auto one = host_values(vsa::identity<B>(m, 1));
  const auto h = host_values(e);
  double id_err = 0;
  for (index_t j = 0; j < m.width(); ++j) id_err = std::max(id_err, double(std::abs(h[std::size_t(j)] - one[std::size_t(j)])));
  CHECK(id_err < 1e-5);
  const auto sum = host_values(vsa::bind(m, e(1, fusor::all), e(2, fusor::all)));
  double bind_err = 0;
  for (index_t j = 0; j < m.width(); ++j)
    bind_err = std::max(bind_err, double(std::abs(sum[std::size_t(j)] - h[std::size_t(3 * m.width() + j)])));
  CHECK(bind_err < 1e-4);
}

TEST_CASE_TEMPLATE("vsa FPE: the similarity follows the chosen kernel", M, vsa::fhrr, vsa::hrr) {
  const index_t d = 4096;
  const M m(d);
  const double low = -3, high = 5, bw = 4;
  const std::vector<double> deltas{0.0, 0.25, 0.5, 1.0, 1.7, 3.0};
  using K = vsa::fpe_kernel;
  for (K k : {K::sinc, K::gaussian, K::laplace, K::cauchy}) {
    CAPTURE(vsa::to_string(k));
    std::vector<double> mean(deltas.size(), 0.0);
    const int seeds = 4;
    for (int s = 0; s < seeds; ++s) {
      const vsa::fractional_power_encoder<M, B> fp(m, low, high, std::uint64_t(100 + s), k, bw);
      std::vector<double> xs{-1.0};
      for (double dl : deltas) xs.push_back(-1.0 + dl);
      const auto h = host_values(fp.encode(fusor::array<double, B>(std::span<const double>(xs), fusor::extents{index_t(xs.size())})));
      for (std::size_t i = 0; i < deltas.size(); ++i) mean[i] += cosine(m, h, 0, index_t(i + 1)) / seeds;
    }
    for (std::size_t i = 0; i < deltas.size(); ++i) {
      CAPTURE(deltas[i]);
      const double u = bw * deltas[i] / (high - low);
      double expect = kernel(k, u);
      if constexpr (std::is_same_v<M, vsa::hrr>) expect = (2 + (d - 2) * expect) / d;  // DC and Nyquist always agree
      CHECK(mean[i] == doctest::Approx(expect).epsilon(0).scale(1).epsilon(0.02));
      const vsa::fractional_power_encoder<M, B> fp(m, low, high, 1, k, bw);
      CHECK(fp.similarity(deltas[i]) == doctest::Approx(expect).epsilon(1e-12));
    }
  }
  // a mixture: the weighted kernels, each position drawn from one component
  const std::vector<vsa::fpe_component> mix{{K::gaussian, 1.0, 3.0}, {K::sinc, 8.0, 1.0}};
  double mean = 0;
  for (int s = 0; s < 4; ++s) {
    const vsa::fractional_power_encoder<M, B> fp(m, 0.0, 1.0, std::uint64_t(7 + s), mix);
    CHECK(fp.components()[0].weight == doctest::Approx(0.75));
    const auto h = host_values(fp.encode(fusor::array<double, B>{0.2, 0.3}));
    mean += cosine(m, h, 0, 1) / 4;
  }
  double expect = 0.75 * kernel(K::gaussian, 0.1) + 0.25 * kernel(K::sinc, 0.8);
  if constexpr (std::is_same_v<M, vsa::hrr>) expect = (2 + (d - 2) * expect) / d;
  CHECK(mean == doctest::Approx(expect).epsilon(0).scale(1).epsilon(0.02));
}

TEST_CASE_TEMPLATE("vsa FPE: decoding recovers the values, clean and noisy", M, vsa::fhrr, vsa::hrr) {
  const M m(2000);
  using K = vsa::fpe_kernel;
  const std::vector<double> xs{10.0, 10.01, 13.3, 17.77, 19.999, 20.0};
  const fusor::array<double, B> x(std::span<const double>(xs), fusor::extents{6});
  for (K k : {K::sinc, K::gaussian, K::laplace, K::cauchy}) {
    CAPTURE(vsa::to_string(k));
    const vsa::fractional_power_encoder<M, B> fp(m, 10.0, 20.0, 5, k, 6.0);
    const auto v = fp.encode(x);
    const auto back = host_values(fp.decode(v));
    for (std::size_t i = 0; i < xs.size(); ++i) CHECK(back[i] == doctest::Approx(xs[i]).epsilon(0).scale(1).epsilon(1e-3));
    // one vector decodes to a 0-d array; a bundle with two random vectors still decodes near its value
    const auto one = fp.decode(v(2, fusor::all));
    CHECK(one.ndim() == 0);
    CHECK(host_values(one)[0] == doctest::Approx(13.3).epsilon(0).scale(1).epsilon(1e-3));
    const auto others = vsa::random<B>(m, 2, 77);
    const auto noisy = vsa::bundle(m, fusor::concatenate(std::vector<fusor::array_view<typename M::value_type, B>>{
                                           v(fusor::range(3, 4), fusor::all), others.view()}, 0),
                                   {vsa::normalization::none});
    CHECK(host_values(fp.decode(noisy))[0] == doctest::Approx(17.77).epsilon(0).scale(1).epsilon(0.05));
  }
  const vsa::fractional_power_encoder<M, B> fp(m, 0.0, 1.0, 5);
  CHECK_THROWS_WITH_AS(fp.decode(vsa::random<B>(M(10), 1, 1)), doctest::Contains("dimension 2000"), fusor::shape_error);
  CHECK_THROWS_WITH_AS(fp.decode(fp.encode(fusor::array<float, B>{0.5f}), 1), doctest::Contains("at least 2 values"),
                       fusor::value_error);
  CHECK_THROWS_WITH_AS(fp.encode(fusor::array<float, B>{-0.5f}), doctest::Contains("got -0.500000 at flat index 0"),
                       fusor::value_error);
}

TEST_CASE("vsa FPE: models without fractional powers and bad parameters are value errors") {
  using K = vsa::fpe_kernel;
  CHECK_THROWS_WITH_AS((vsa::fractional_power_encoder<vsa::map_b, B>(vsa::map_b(16), 0.0, 1.0, 1)),
                       doctest::Contains("MAP-B has no fractional powers"), fusor::value_error);
  const vsa::fhrr f(16);
  CHECK_THROWS_WITH_AS((vsa::fractional_power_encoder<vsa::fhrr, B>(f, 0.0, 1.0, 1, K::sinc, 0.0)),
                       doctest::Contains("bandwidth > 0, got 0"), fusor::value_error);
  CHECK_THROWS_WITH_AS((vsa::fractional_power_encoder<vsa::fhrr, B>(f, 0.0, 1.0, 1, std::vector<vsa::fpe_component>{})),
                       doctest::Contains("at least one mixture component"), fusor::value_error);
  CHECK_THROWS_WITH_AS((vsa::fractional_power_encoder<vsa::fhrr, B>(
                           f, 0.0, 1.0, 1, std::vector<vsa::fpe_component>{{K::sinc, 1.0, -1.0}, {K::sinc, 2.0, 2.0}})),
                       doctest::Contains("weights >= 0, got -1"), fusor::value_error);
  CHECK_THROWS_WITH_AS((vsa::fractional_power_encoder<vsa::fhrr, B>(f, 2.0, 1.0, 1)),
                       doctest::Contains("finite low < high, got low = 2"), fusor::value_error);
  // sinc's frequencies are theta * bandwidth / (high - low) for theta uniform on [-pi, pi): bounded,
  // with the uniform law's variance pi^2 / 3
  const vsa::fractional_power_encoder<vsa::fhrr, B> u(vsa::fhrr(20000), 0.0, 2.0, 9, K::sinc, 4.0);
  const auto wu = host_values(u.frequencies());
  double var = 0;
  bool bounded = true;
  for (float x : wu) {
    const double theta = double(x) * 2.0 / 4.0;
    bounded = bounded && theta >= -std::numbers::pi && theta < std::numbers::pi;
    var += theta * theta / double(wu.size());
  }
  CHECK(bounded);
  CHECK(var == doctest::Approx(std::numbers::pi * std::numbers::pi / 3).epsilon(0.03));
  // the same frequencies on every backend: drawn by fusor's keyed Philox (on cuda, against cpu)
  const vsa::fractional_power_encoder<vsa::fhrr, B> a(f, 0.0, 1.0, 3, K::cauchy, 2.0);
  const vsa::fractional_power_encoder<vsa::fhrr, fusor::cpu> c(f, 0.0, 1.0, 3, K::cauchy, 2.0);
  const auto wa = host_values(a.frequencies()), wc = host_values(c.frequencies());
  bool same = true;
  for (std::size_t i = 0; i < wa.size(); ++i) same = same && std::abs(wa[i] - wc[i]) <= 1e-6f * std::abs(wc[i]);
  CHECK(same);
}

}  // namespace vsaencode

// ---- structures ----------------------------------------------------------------------------------

namespace vsaencode {

// ---- feature vectors: random projection, multivariate FPE ----------------------------------------

TEST_CASE_TEMPLATE("vsa random_projection: signs, bits or scaled values of x P against a plain loop", M, vsa::map_b,
                   vsa::bsc, vsa::map_c, vsa::hrr) {
  for (index_t d : {index_t(1), index_t(63), index_t(257)}) {
    CAPTURE(d);
    const M m(d);
    const index_t f = 5;
    const vsa::random_projection<M, B> enc(m, f, 3);
    std::vector<float> xs(static_cast<std::size_t>(2 * 3 * f));
    for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = float(std::sin(0.7 * double(i) + 0.3)) * 2.0f;
    const fusor::array<float, B> x(std::span<const float>(xs), fusor::extents{2, 3, f});  // a (2, 3) batch
    const auto v = enc.encode(x);
    REQUIRE(v.shape() == fusor::extents{2, 3, m.width()});
    const auto hp = host_values(enc.matrix());
    const auto hv = host_values(v);
    bool same = true;
    double err = 0;
    for (index_t r = 0; r < 6; ++r)
      for (index_t j = 0; j < d; ++j) {
        double y = 0;
        for (index_t k = 0; k < f; ++k) y += double(xs[std::size_t(r * f + k)]) * double(hp[std::size_t(k * d + j)]);
        if constexpr (std::is_same_v<M, vsa::map_b>) {
          if (std::abs(y) > 1e-4) same = same && hv[std::size_t(r * d + j)] == (y < 0 ? -1.0f : 1.0f);
        } else if constexpr (std::is_same_v<M, vsa::bsc>) {
          if (std::abs(y) > 1e-4) same = same && double(at(m, hv, r, j).real()) == (y < 0 ? 1.0 : 0.0);
        } else {
          double ref = y / std::sqrt(double(f * d));
          if constexpr (std::is_same_v<M, vsa::map_c>) ref = std::clamp(ref, -1.0, 1.0);
          err = std::max(err, std::abs(double(hv[std::size_t(r * d + j)]) - ref));
        }
      }
    CHECK(same);
    CHECK(err < 1e-5);
  }
  const M m(64);
  const vsa::random_projection<M, B> enc(m, 3, 1);
  CHECK_THROWS_WITH_AS(enc.encode(fusor::zeros<float, B>(fusor::extents{2, 4})), doctest::Contains("expects feature vectors (..., 3), got shape (2, 4)"),
                       fusor::shape_error);
  CHECK_THROWS_AS((vsa::random_projection<M, B>(m, 0, 1)), fusor::value_error);
  CHECK_THROWS_WITH_AS((vsa::random_projection<vsa::fhrr, B>(vsa::fhrr(8), 2, 1)), doctest::Contains("FHRR has no projection encoding"),
                       fusor::value_error);
}

TEST_CASE("vsa random_projection: sign projections keep angles, similarity 1 - 2 angle / pi (SimHash)") {
  const vsa::map_b m(10'000);
  const vsa::random_projection<vsa::map_b, B> enc(m, 3, 7);
  // unit vectors at angles 0, 30, 60, 90, 135 and 180 degrees from (1, 0, 0) in the x-y plane
  const std::vector<double> deg = {0, 30, 60, 90, 135, 180};
  std::vector<float> xs;
  for (double a : deg) {
    const double r = a * std::numbers::pi / 180;
    xs.insert(xs.end(), {float(std::cos(r)), float(std::sin(r)), 0.0f});
  }
  const fusor::array<float, B> x(std::span<const float>(xs), fusor::extents{6, 3});
  const auto v = enc.encode(x);
  const auto s = host_values(vsa::similarity(m, v, v));
  double err = 0;
  for (std::size_t i = 0; i < deg.size(); ++i) err = std::max(err, std::abs(double(s[i]) - (1 - 2 * deg[i] / 180)));
  CHECK(err < 0.04);  // d = 10 000 signs: a standard deviation of about 0.01 per similarity
  // BSC's bits: hamming similarity 1 - angle / pi
  const vsa::bsc b(10'000);
  const auto vb = vsa::random_projection<vsa::bsc, B>(b, 3, 7).encode(x);
  const auto sb = host_values(vsa::similarity(b, vb, vb));
  double eb = 0;
  for (std::size_t i = 0; i < deg.size(); ++i) eb = std::max(eb, std::abs(double(sb[i]) - (1 - deg[i] / 180)));
  CHECK(eb < 0.02);
}

TEST_CASE_TEMPLATE("vsa fractional_power_features: phasors of x W against a loop, product kernels, binding adds", M,
                   vsa::fhrr, vsa::hrr) {
  const M m(10'000);
  const std::vector<double> low = {0.0, -1.0}, high = {10.0, 1.0};
  const vsa::fractional_power_features<M, B> enc(m, low, high, 5, vsa::fpe_kernel::gaussian, 8.0);
  const fusor::array<double, B> x = fusor::array<double, B>{2.0, 0.25, 3.0, -0.5, 5.0, 0.75}.reshape(fusor::extents{3, 2});
  const auto v = enc.encode(x);
  REQUIRE(v.shape() == fusor::extents{3, m.width()});
  if constexpr (std::is_same_v<M, vsa::fhrr>) {  // position j: e^{i sum_k w_kj (x_k - low_k)}
    const auto w = host_values(enc.frequencies());
    const auto hv = host_values(v);
    const std::vector<double> hx = {2.0, 0.25, 3.0, -0.5, 5.0, 0.75};
    double err = 0;
    for (index_t r = 0; r < 3; ++r)
      for (index_t j = 0; j < m.dim(); ++j) {
        double phase = 0;
        for (index_t k = 0; k < 2; ++k) phase += double(w[std::size_t(k * m.dim() + j)]) * (hx[std::size_t(r * 2 + k)] - low[std::size_t(k)]);
        err = std::max(err, std::abs(std::complex<double>(hv[std::size_t(r * m.dim() + j)]) - std::polar(1.0, phase)));
      }
    CHECK(err < 1e-4);
    // binding adds the offsets x - low: enc(2, 0.25) * enc(3, -0.5) = enc(5, 0.75) (low = (0, -1))
    const auto b = host_values(vsa::bind(m, v(0, fusor::all), v(1, fusor::all)));
    double eb = 0;
    for (index_t j = 0; j < m.dim(); ++j) eb = std::max(eb, double(std::abs(b[std::size_t(j)] - hv[std::size_t(2 * m.dim() + j)])));
    CHECK(eb < 1e-4);
  }
  // the similarity of x and x + delta against the product of gaussian kernels
  const std::vector<std::vector<double>> deltas = {{0.5, 0.0}, {0.0, 0.1}, {0.5, 0.1}, {2.0, 0.0}};
  std::vector<double> xs;
  for (const auto& dl : deltas) xs.insert(xs.end(), {4.0, 0.0, 4.0 + dl[0], dl[1]});
  const fusor::array<double, B> pairs(std::span<const double>(xs), fusor::extents{index_t(deltas.size()), 2, 2});
  const auto e = enc.encode(pairs);  // (4, 2, width)
  const auto s = host_values(vsa::similarity(m, e(fusor::all, 0, fusor::all), e(fusor::all, 1, fusor::all)));
  double err = 0;
  for (std::size_t i = 0; i < deltas.size(); ++i)
    err = std::max(err, std::abs(double(s[i * deltas.size() + i]) - enc.similarity(deltas[i])));
  CHECK(err < 0.04);
  CHECK(enc.similarity({0.5, 0.1}) == doctest::Approx(std::exp(-0.5 * 0.16) * std::exp(-0.5 * 0.16)).epsilon(
                                           std::is_same_v<M, vsa::hrr> ? 1e-3 : 1e-12));
  // one feature gives the scalar encoder's vectors for the same seed, at odd and even d, also for a
  // range far from 0 (x - low is taken in double by both)
  for (index_t d : {index_t(101), index_t(100)})
    for (double base : {0.0, 1.7e9}) {
      CAPTURE(d);
      CAPTURE(base);
      const M m1(d);
      const vsa::fractional_power_features<M, B> many(m1, {base}, {base + 86'400.0}, 9, vsa::fpe_kernel::gaussian, 30.0);
      const vsa::fractional_power_encoder<M, B> one(m1, base, base + 86'400.0, 9, vsa::fpe_kernel::gaussian, 30.0);
      const fusor::array<double, B> t{base, base + 100.5, base + 86'400.0};
      const auto a = host_values(many.encode(t.reshape(fusor::extents{3, 1}))), c = host_values(one.encode(t));
      REQUIRE(a.size() == c.size());
      double e1 = 0;
      for (std::size_t i = 0; i < a.size(); ++i) e1 = std::max(e1, double(std::abs(a[i] - c[i])));
      CHECK(e1 < 1e-5);
      if constexpr (std::is_same_v<M, vsa::hrr>) {  // the DC bin (and an even d's Nyquist bin) are real
        const auto w = host_values(many.frequencies());
        CHECK(w.front() == 0.0f);
        CHECK((d % 2 == 1 || w.back() == 0.0f));
      }
    }
  // a range's ends are inside it, also where float cannot hold them
  const vsa::fractional_power_features<M, B> tenth(m, {0.0}, {0.1}, 1);
  CHECK(tenth.encode(fusor::array<double, B>{0.1}).shape() == fusor::extents{m.width()});
  // bad input
  CHECK_THROWS_WITH_AS(enc.encode(fusor::array<double, B>{11.0, 0.0}), doctest::Contains("feature 0 of row 0 is 11"),
                       fusor::value_error);
  CHECK_THROWS_WITH_AS(enc.encode(fusor::array<double, B>{1.0, 0.0, 2.0}), doctest::Contains("expects feature vectors (..., 2)"),
                       fusor::shape_error);
  CHECK_THROWS_AS((vsa::fractional_power_features<M, B>(m, {0.0}, {1.0, 2.0}, 1)), fusor::value_error);
  CHECK_THROWS_AS((vsa::fractional_power_features<vsa::map_b, B>(vsa::map_b(8), {0.0}, {1.0}, 1)), fusor::value_error);
}


/// np.roll of a host row of d values by `shift` toward higher indices.
template <class T>
std::vector<T> rolled(const T* row, index_t d, index_t shift) {
  std::vector<T> r(static_cast<std::size_t>(d));
  for (index_t j = 0; j < d; ++j) r[std::size_t(((j + shift) % d + d) % d)] = row[j];
  return r;
}

TEST_CASE("vsa ngrams: windows bound as permuted products, bundled; against a plain loop") {
  const vsa::map_i m(37);
  const index_t len = 7, d = 37;
  const auto x = vsa::random<B>(m, 2 * len, 8).reshape(fusor::extents{2, len, d});  // two sequences
  const auto hx = host_values(x);
  for (index_t n : {index_t(1), index_t(3), index_t(7)})
    for (index_t stride : {index_t(1), index_t(2)}) {
      CAPTURE(n);
      CAPTURE(stride);
      const auto grams = vsa::ngram_vectors(m, x, n, stride);
      const index_t windows = (len - n) / stride + 1;
      REQUIRE(grams.shape() == fusor::extents{2, windows, d});
      const auto hg = host_values(grams);
      const auto bundled = host_values(vsa::ngrams(m, x, n, stride));
      bool same = true, sums = true;
      for (index_t s = 0; s < 2; ++s) {
        std::vector<std::int64_t> total(static_cast<std::size_t>(d), 0);
        for (index_t w = 0; w < windows; ++w) {
          std::vector<std::int32_t> ref(static_cast<std::size_t>(d), 1);
          for (index_t k = 0; k < n; ++k) {
            const auto r = rolled(&hx[std::size_t((s * len + w * stride + k) * d)], d, n - 1 - k);
            for (index_t j = 0; j < d; ++j) ref[std::size_t(j)] *= r[std::size_t(j)];
          }
          for (index_t j = 0; j < d; ++j) {
            same = same && hg[std::size_t((s * windows + w) * d + j)] == ref[std::size_t(j)];
            total[std::size_t(j)] += ref[std::size_t(j)];
          }
        }
        for (index_t j = 0; j < d; ++j) sums = sums && bundled[std::size_t(s * d + j)] == total[std::size_t(j)];  // MAP-I: the plain sum
      }
      CHECK(same);
      CHECK(sums);
    }
  // MAP-B (sign, ties to the first window), MAP-C (clip) and FHRR (unit phasors): the one-pass n-grams
  // against bundling the n-gram vectors
  auto one_pass = [](const auto& mm) {
    const auto seq = vsa::random<B>(mm, 12, 5).reshape(fusor::extents{2, 6, mm.width()});
    const auto a = host_values(vsa::ngrams(mm, seq, 3));  // 4 windows: a sum of 0 at about 3 in 8 positions
    const auto b = host_values(vsa::bundle(mm, vsa::ngram_vectors(mm, seq, 3)));
    double e = 0;
    for (std::size_t i = 0; i < a.size(); ++i) e = std::max(e, double(std::abs(a[i] - b[i])));
    return e;
  };
  CHECK(one_pass(vsa::map_b(300)) == 0.0);
  CHECK(one_pass(vsa::map_c(300)) < 1e-5);
  CHECK(one_pass(vsa::fhrr(300)) < 1e-5);
  // HRR: each window is bind_sequence of its rows
  const vsa::hrr h(64);
  const auto hs = vsa::random<B>(h, 5, 3);
  const auto g = host_values(vsa::ngram_vectors(h, hs, 3));
  const auto w1 = host_values(vsa::bind_sequence(h, hs(fusor::range(1, 4), fusor::all)));
  double err = 0;
  for (index_t j = 0; j < 64; ++j) err = std::max(err, double(std::abs(g[std::size_t(64 + j)] - w1[std::size_t(j)])));
  CHECK(err < 1e-5);
  CHECK_THROWS_WITH_AS(vsa::ngram_vectors(m, x, 8), doctest::Contains("1 <= n <= L (the sequence length 7)"),
                       fusor::value_error);
  CHECK_THROWS_AS(vsa::ngram_vectors(m, x, 2, 0), fusor::value_error);
  CHECK_THROWS_WITH_AS(vsa::ngram_vectors(m, vsa::random<B>(m, 1, 1).reshape(fusor::extents{d}), 1),
                       doctest::Contains("expects sequences of shape (..., L, 37)"), fusor::shape_error);
}

TEST_CASE_TEMPLATE("vsa ngrams of token sequences: each sequence's n-grams of its codebook rows, padding ends it", M,
                   vsa::map_b, vsa::map_i, vsa::map_c, vsa::fhrr, vsa::bsc, vsa::hrr) {
  // rows: the full length, shorter with padding, exactly n (one window)
  const std::vector<std::int64_t> toks = {0, 4, 2, 2, 1, 3, 0,    //
                                          3, 3, 1, 4, -1, -1, -1,  //
                                          2, 0, 4, -1, -1, -1, -1};
  const fusor::array<std::int64_t, B> t(std::span<const std::int64_t>(toks), fusor::extents{3, 7});
  for (index_t d : {index_t(1), index_t(64), index_t(257)}) {
    const M m(d);
    const auto book = vsa::random<B>(m, 5, 11);
    for (index_t n : {index_t(1), index_t(3)})
      for (index_t stride : {index_t(1), index_t(2)})
        for (auto norm : {vsa::normalization::model_default, vsa::normalization::none}) {
          CAPTURE(d);
          CAPTURE(n);
          CAPTURE(stride);
          if (std::is_same_v<M, vsa::bsc> && norm == vsa::normalization::none) continue;  // bits hold no sum
          const vsa::bundle_options o{norm};
          const auto all = vsa::ngrams(m, book, t, n, stride, o);
          REQUIRE(all.shape() == fusor::extents{3, m.width()});
          const auto got = host_values(all);
          double err = 0;
          for (index_t s = 0; s < 3; ++s) {
            const index_t len = s == 0 ? 7 : s == 1 ? 4 : 3;
            const fusor::array<std::int64_t, B> own = t(s, fusor::range(0, len)).copy();
            const auto ref = host_values(vsa::ngrams(m, fusor::take(book, own, 0), n, stride, o));
            for (index_t j = 0; j < m.width(); ++j)
              err = std::max(err, distance(got[std::size_t(s * m.width() + j)], ref[std::size_t(j)]));
          }
          CHECK(err < 1e-5);
        }
  }
  // a batch of shape (2, 1, L) keeps its leading axes
  const M m(64);
  const auto book = vsa::random<B>(m, 5, 11);
  CHECK(vsa::ngrams(m, book, t(fusor::range(0, 2), fusor::all).copy().reshape(fusor::extents{2, 1, 7}), 2).shape() ==
        fusor::extents{2, 1, m.width()});
  // bad tokens and parameters, each naming the sequence
  auto row = [](std::vector<std::int64_t> v) {
    return fusor::array<std::int64_t, B>(std::span<const std::int64_t>(v), fusor::extents{1, index_t(v.size())});
  };
  CHECK_THROWS_WITH_AS(vsa::ngrams(m, book, row({0, 5, 1}), 2),
                       doctest::Contains("sequence 0 has token 5 at position 1, expected a row of the codebook in [0, 5) or -1"),
                       fusor::index_error);
  CHECK_THROWS_WITH_AS(vsa::ngrams(m, book, row({0, -2, 1}), 2), doctest::Contains("token -2 at position 1"), fusor::index_error);
  CHECK_THROWS_WITH_AS(vsa::ngrams(m, book, row({0, 1, -1, 3}), 2),
                       doctest::Contains("token 3 at position 3, expected -1: the sequence ended at position 2"),
                       fusor::index_error);
  CHECK_THROWS_WITH_AS(vsa::ngrams(m, book, row({0, 1, -1, -1}), 3),
                       doctest::Contains("sequence 0 has 2 tokens, fewer than n = 3"), fusor::value_error);
  CHECK_THROWS_AS(vsa::ngrams(m, book, row({0, 1, 2}), 0), fusor::value_error);
  CHECK_THROWS_WITH_AS(vsa::ngrams(m, book, fusor::zeros<std::int64_t, B>(fusor::extents{3, 0}), 1),
                       doctest::Contains("sequence 0 has 0 tokens, fewer than n = 1"), fusor::value_error);
  CHECK_THROWS_WITH_AS(vsa::ngrams(m, book.reshape(fusor::extents{5, 1, m.width()}), row({0, 1}), 1),
                       doctest::Contains("expects a codebook (K, "), fusor::shape_error);
}

TEST_CASE("vsa record: values bound to keys and bundled; unbinding a key recovers its value") {
  const vsa::map_i mi(50);
  const auto keys = vsa::random<B>(mi, 4, 1);
  const auto values = vsa::random<B>(mi, 8, 2).reshape(fusor::extents{2, 4, 50});
  const auto rec = host_values(vsa::record(mi, keys, values));
  const auto hk = host_values(keys), hv = host_values(values);
  bool exact = true;
  for (index_t r = 0; r < 2; ++r)
    for (index_t j = 0; j < 50; ++j) {
      std::int32_t s = 0;
      for (index_t k = 0; k < 4; ++k) s += hv[std::size_t((r * 4 + k) * 50 + j)] * hk[std::size_t(k * 50 + j)];
      exact = exact && rec[std::size_t(r * 50 + j)] == s;
    }
  CHECK(exact);
  // a 20-field record at d = 4000: every field's value is the nearest item after unbinding
  const vsa::fhrr f(4000);
  const auto fields = vsa::random<B>(f, 20, 3);
  const auto items = vsa::item_memory<vsa::fhrr, B>::random(f, 100, 4);
  const fusor::array<std::int64_t, B> chosen = fusor::cast<std::int64_t>(fusor::lazy::arange<std::int64_t, B>(0, 20) * 5 + 2);
  const auto r = vsa::record(f, fields, fusor::take(items.items(), chosen, 0));
  const auto found = host_values(items.nearest(vsa::unbind(f, r, fields)));
  CHECK(found == host_values(chosen));
  CHECK_THROWS_WITH_AS(vsa::record(mi, keys, vsa::random<B>(mi, 3, 2)), doctest::Contains("with the same N"),
                       fusor::shape_error);
}

TEST_CASE_TEMPLATE("vsa record of codebook rows: the same vectors as binding and bundling the gathered rows", M,
                   vsa::map_b, vsa::map_i, vsa::map_c, vsa::fhrr, vsa::hrr) {
  for (index_t d : {index_t(1), index_t(255), index_t(257)}) {
    CAPTURE(d);
    const M m(d);
    const auto enc = vsa::scalar_encoder<M, B>::level(m, 5, 0.0, 4.0, 3);
    const auto keys = vsa::random<B>(m, 6, 4);
    std::vector<double> xs(static_cast<std::size_t>(7 * 6));
    for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = double((i * 5) % 5);  // every level, even counts: ties
    const fusor::array<double, B> x(std::span<const double>(xs), fusor::extents{7, 6});
    for (auto norm : {vsa::normalization::model_default, vsa::normalization::none}) {
      const auto fused = host_values(enc.encode_record(keys, x, {norm}));
      const auto plain = host_values(vsa::record(m, keys, enc.encode(x), {norm}));
      REQUIRE(fused.size() == plain.size());
      double err = 0;
      for (std::size_t i = 0; i < fused.size(); ++i) err = std::max(err, double(std::abs(fused[i] - plain[i])));
      CHECK(err < 1e-5);
    }
  }
  const vsa::map_b m(64);
  const auto book = vsa::random<B>(m, 3, 1);
  CHECK_THROWS_AS(vsa::record(m, vsa::random<B>(m, 2, 2), book, fusor::array<std::int64_t, B>{0, 3}), fusor::index_error);
  CHECK_THROWS_WITH_AS(vsa::record(m, vsa::random<B>(m, 2, 2), book, fusor::array<std::int64_t, B>{0, 1, 2}),
                       doctest::Contains("with the same N"), fusor::shape_error);
}

// ---- graphs, trees, automata, multisets ------------------------------------------------------------

/// The index of the most similar row of `book` for each row of `q`.
template <class M, class Q, class K>
std::vector<std::int64_t> nearest(const M& m, const Q& q, const K& book) {
  return host_values(fusor::argmax(vsa::similarity(m, q, book), -1));
}

TEST_CASE_TEMPLATE("vsa graph: edge vectors against bind, neighbours, successors and predecessors top-1 at d = 10 000", M,
                   vsa::map_b, vsa::fhrr, vsa::hrr, vsa::bsc) {
  const M m(10'000);
  const index_t k = 40;
  const auto nodes = vsa::random<B>(m, k, 21);
  // a ring 0 - 1 - ... - 39 - 0 plus chords i - (i + 7): each node has 4 neighbours, 80 edges
  std::vector<std::int64_t> e;
  for (index_t i = 0; i < k; ++i) {
    e.insert(e.end(), {i, (i + 1) % k});
    e.insert(e.end(), {i, (i + 7) % k});
  }
  const index_t n_edges = index_t(e.size() / 2);
  const fusor::array<std::int64_t, B> edges(std::span<const std::int64_t>(e), fusor::extents{n_edges, 2});
  // edge vectors against bind and permute of the gathered rows
  const auto kind = std::is_same_v<M, vsa::hrr> ? vsa::edge_kind::undirected : vsa::edge_kind::directed;
  const auto ev = host_values(vsa::edge_vectors(m, nodes, edges, kind));
  const fusor::array<std::int64_t, B> src{3}, dst{4};
  fusor::array<typename M::value_type, B> u = fusor::take(nodes, src, 0);
  if (kind == vsa::edge_kind::directed) u = vsa::permute(m, u, 1);
  const auto ref = host_values(vsa::bind(m, u, fusor::take(nodes, dst, 0)));
  double err = 0;
  for (index_t j = 0; j < m.width(); ++j) err = std::max(err, distance(ev[std::size_t(6 * m.width() + j)], ref[std::size_t(j)]));
  CHECK(err < 1e-4);
  // a stored edge is much more similar to the graph than an absent one
  for (auto kind : {vsa::edge_kind::undirected, vsa::edge_kind::directed}) {
    CAPTURE(int(kind));
    if (std::is_same_v<M, vsa::hrr> && kind == vsa::edge_kind::directed) {  // u -> v is v -> u on HRR
      CHECK_THROWS_WITH_AS(vsa::graph(m, nodes, edges, kind), doctest::Contains("commutes with the cyclic shift"),
                           fusor::value_error);
      CHECK_THROWS_AS(vsa::successors(m, nodes, nodes), fusor::value_error);
      continue;
    }
    const auto g = vsa::graph(m, nodes, edges, kind);
    REQUIRE(g.shape() == fusor::extents{m.width()});
    const auto present = host_values(vsa::similarity(m, g, vsa::edge_vectors(m, nodes, edges, kind)));
    const fusor::array<std::int64_t, B> absent_edges{0, 2, 5, 30, 10, 20, 1, 3};
    const auto absent = host_values(vsa::similarity(m, g, vsa::edge_vectors(m, nodes, absent_edges.reshape(fusor::extents{4, 2}), kind)));
    const double lo = M::similarity_lo == 0 ? 0.5 : 0.0;  // BSC's hamming similarity is 1/2 when unrelated
    CHECK(*std::min_element(present.begin(), present.end()) - lo > 2 * (*std::max_element(absent.begin(), absent.end()) - lo));
    // every node's top-1 neighbour (undirected), successor and predecessor (directed) is a true one
    const auto first = vsa::graph(m, nodes, edges, kind);
    bool top1 = true;
    if (kind == vsa::edge_kind::undirected) {
      const auto nb = nearest(m, vsa::neighbours(m, first, nodes), nodes);
      for (index_t i = 0; i < k; ++i) {
        const auto j = nb[std::size_t(i)];
        top1 = top1 && (j == (i + 1) % k || j == (i + k - 1) % k || j == (i + 7) % k || j == (i + k - 7) % k);
      }
    } else {
      const auto next = nearest(m, vsa::successors(m, first, nodes), nodes);
      const auto prev = nearest(m, vsa::predecessors(m, first, nodes), nodes);
      for (index_t i = 0; i < k; ++i) {
        const auto a = next[std::size_t(i)], b = prev[std::size_t(i)];
        top1 = top1 && (a == (i + 1) % k || a == (i + 7) % k) && (b == (i + k - 1) % k || b == (i + k - 7) % k);
      }
    }
    CHECK(top1);
  }
  // MAP and FHRR sum a directed graph in one pass: the same vector as bundling its edge vectors
  if constexpr (std::is_same_v<M, vsa::map_b> || std::is_same_v<M, vsa::fhrr>) {
    const auto one = host_values(vsa::graph(m, nodes, edges, vsa::edge_kind::directed));
    const auto two = host_values(vsa::bundle(m, vsa::edge_vectors(m, nodes, edges, vsa::edge_kind::directed)));
    double e2 = 0;
    for (std::size_t i = 0; i < one.size(); ++i) e2 = std::max(e2, distance(one[i], two[i]));
    CHECK(e2 < 1e-4);
  }
  CHECK_THROWS_WITH_AS(vsa::graph(m, nodes, edges.reshape(fusor::extents{n_edges * 2})),
                       doctest::Contains("edges (..., E, 2) of node indices"), fusor::shape_error);
  CHECK_THROWS_AS(vsa::graph(m, nodes, fusor::array<std::int64_t, B>{0, 40}.reshape(fusor::extents{1, 2})), fusor::index_error);
  CHECK_THROWS_WITH_AS(vsa::graph(m, nodes, fusor::array<std::int64_t, B>{0, -1}.reshape(fusor::extents{1, 2})),
                       doctest::Contains("needs edges of node indices in [0, 40), got edges from -1 to 0"),
                       fusor::index_error);
}

TEST_CASE("vsa graph: undirected edges need a commutative bind; batches of graphs") {
  const vsa::vtb v(64);
  const auto vn = vsa::random<B>(v, 3, 1);
  CHECK_THROWS_WITH_AS(vsa::graph(v, vn, fusor::array<std::int64_t, B>{0, 1}.reshape(fusor::extents{1, 2})),
                       doctest::Contains("an undirected edge needs a commutative bind"), fusor::value_error);
  CHECK(vsa::graph(v, vn, fusor::array<std::int64_t, B>{0, 1}.reshape(fusor::extents{1, 2}), vsa::edge_kind::directed).shape() ==
        fusor::extents{64});
  // two graphs of three edges in one call: each the graph of its own edges
  const vsa::map_i m(100);
  const auto nodes = vsa::random<B>(m, 5, 2);
  const fusor::array<std::int64_t, B> e{0, 1, 1, 2, 2, 3, 4, 0, 3, 1, 2, 4};
  const auto both = host_values(vsa::graph(m, nodes, e.reshape(fusor::extents{2, 3, 2}), vsa::edge_kind::directed));
  // against the bundle of the edge vectors (MAP-I: their integer sum), both graphs of the batch
  const auto ref = host_values(vsa::bundle(m, vsa::edge_vectors(m, nodes, e.reshape(fusor::extents{2, 3, 2}), vsa::edge_kind::directed)));
  CHECK(both == ref);
  const auto hn = host_values(nodes);
  std::int32_t first = 0;  // graph 0 at position 5 by hand: its edges (0, 1), (1, 2), (2, 3)
  for (auto [a, b] : {std::pair{0, 1}, std::pair{1, 2}, std::pair{2, 3}}) first += hn[std::size_t(a * 100 + 4)] * hn[std::size_t(b * 100 + 5)];
  CHECK(both[5] == first);
  // HRR cannot tell a path's steps apart (lr is rl): a value error
  const vsa::hrr h(64);
  CHECK_THROWS_WITH_AS(vsa::tree_paths(h, vsa::random<B>(h, 2, 1), fusor::array<std::int64_t, B>{0, 1}.reshape(fusor::extents{1, 2})),
                       doctest::Contains("marks a step's depth"), fusor::value_error);
}

TEST_CASE_TEMPLATE("vsa tree: path vectors against a plain product of permuted roles; leaves recovered top-1", M, vsa::map_b,
                   vsa::fhrr, vsa::bsc) {
  const M m(10'000);
  const auto roles = vsa::random<B>(m, 2, 31);
  // eight leaves at depths 0 to 4 (-1 pads the shorter paths)
  const std::vector<std::int64_t> p = {-1, -1, -1, -1,  //  the root
                                       0, -1, -1, -1,   //  l
                                       1, 0, -1, -1,    //  rl
                                       1, 1, -1, -1,    //  rr
                                       0, 0, 1, -1,     //  llr
                                       0, 1, 1, 0,      //  lrrl
                                       1, 1, 1, 1,      //  rrrr
                                       0, 0, 0, 0};     //  llll
  const fusor::array<std::int64_t, B> paths(std::span<const std::int64_t>(p), fusor::extents{8, 4});
  const auto pv = vsa::tree_paths(m, roles, paths);
  REQUIRE(pv.shape() == fusor::extents{8, m.width()});
  // path 5 (lrrl) by hand: permute(L, 0) * permute(R, 1) * permute(R, 2) * permute(L, 3)
  const fusor::array<std::int64_t, B> l{0}, r{1};
  const auto L = fusor::take(roles, l, 0), R = fusor::take(roles, r, 0);
  const auto a = vsa::bind(m, vsa::bind(m, L, vsa::permute(m, R, 1)), vsa::bind(m, vsa::permute(m, R, 2), vsa::permute(m, L, 3)));
  const auto ha = host_values(a), hp = host_values(pv);
  double err = 0;
  for (index_t j = 0; j < m.width(); ++j) err = std::max(err, distance(hp[std::size_t(5 * m.width() + j)], ha[std::size_t(j)]));
  CHECK(err < 1e-4);
  const auto root = host_values(vsa::identity<B>(m, 1));
  CHECK(std::vector<typename M::value_type>(hp.begin(), hp.begin() + m.width()) == root);
  // a tree of eight leaves from a memory of 50 items; every leaf is top-1 at its path
  const auto items = vsa::random<B>(m, 50, 32);
  const fusor::array<std::int64_t, B> chosen{3, 14, 15, 9, 26, 5, 35, 8};
  const auto t = vsa::tree(m, roles, paths, fusor::take(items, chosen, 0));
  CHECK(nearest(m, vsa::tree_leaf(m, t, roles, paths), items) == host_values(chosen));
  CHECK_THROWS_WITH_AS(vsa::tree_paths(m, roles, fusor::array<std::int64_t, B>{0, 2}.reshape(fusor::extents{1, 2})),
                       doctest::Contains("token 2 at position 1, expected a step (0 left, 1 right) in [0, 2) or -1"),
                       fusor::index_error);
  CHECK_THROWS_WITH_AS(vsa::tree_paths(m, items, paths), doctest::Contains("expects roles (2, "), fusor::shape_error);
  CHECK_THROWS_WITH_AS(vsa::tree_paths(m, roles, fusor::array<std::int64_t, B>{0, -1, 1}.reshape(fusor::extents{1, 3})),
                       doctest::Contains("path 0 has token 1 at position 2, expected -1: the path ended at position 1"),
                       fusor::index_error);
  CHECK_THROWS_WITH_AS(vsa::tree(m, roles, paths.reshape(fusor::extents{2, 4, 4}), items), doctest::Contains("expects paths (N, D)"),
                       fusor::shape_error);
  // paths of depth 0: the root's identity for each
  const auto roots = host_values(vsa::tree_paths(m, roles, fusor::zeros<std::int64_t, B>(fusor::extents{2, 0})));
  CHECK(std::vector<typename M::value_type>(roots.begin(), roots.begin() + m.width()) == root);
  CHECK(roots.size() == std::size_t(2 * m.width()));
}

TEST_CASE_TEMPLATE("vsa automaton: the next state of every transition top-1; transitions against bind", M, vsa::map_b,
                   vsa::fhrr, vsa::bsc) {
  const M m(10'000);
  // a turnstile-like machine of 6 states over 3 symbols: 18 transitions, t = (3 s + 2 a + 1) mod 6
  const auto states = vsa::random<B>(m, 6, 41), symbols = vsa::random<B>(m, 3, 42);
  std::vector<std::int64_t> tr, from, on, to;
  for (std::int64_t s = 0; s < 6; ++s)
    for (std::int64_t a = 0; a < 3; ++a) {
      const std::int64_t t = (3 * s + 2 * a + 1) % 6;
      tr.insert(tr.end(), {s, a, t});
      from.push_back(s);
      on.push_back(a);
      to.push_back(t);
    }
  const fusor::array<std::int64_t, B> transitions(std::span<const std::int64_t>(tr), fusor::extents{18, 3});
  const auto fsa = vsa::automaton(m, states, symbols, transitions);
  REQUIRE(fsa.shape() == fusor::extents{m.width()});
  auto ix = [](const std::vector<std::int64_t>& v) {
    return fusor::array<std::int64_t, B>(std::span<const std::int64_t>(v), fusor::extents{index_t(v.size())});
  };
  const auto next = vsa::next_state(m, fsa, fusor::take(states, ix(from), 0), fusor::take(symbols, ix(on), 0));
  CHECK(nearest(m, next, states) == to);
  // one transition (a bundle of one: itself) against bind(bind(s, a), permute(t)) written out
  const auto one = host_values(vsa::automaton(m, states, symbols, transitions(fusor::range(4, 5), fusor::all).copy()));
  const auto ref = host_values(vsa::bind(m, vsa::bind(m, fusor::take(states, ix({1}), 0), fusor::take(symbols, ix({1}), 0)),
                                         vsa::permute(m, fusor::take(states, ix({to[4]}), 0), 1)));
  double err = 0;
  for (std::size_t j = 0; j < ref.size(); ++j) err = std::max(err, distance(one[j], ref[j]));
  CHECK(err < 1e-4);
  CHECK_THROWS_WITH_AS(vsa::automaton(m, states, symbols, fusor::array<std::int64_t, B>{0, 3, 1}.reshape(fusor::extents{1, 3})),
                       doctest::Contains("vsa::automaton needs symbol indices in [0, 3), got symbols from 3 to 3"),
                       fusor::index_error);
  CHECK_THROWS_WITH_AS(vsa::automaton(m, states, symbols, fusor::array<std::int64_t, B>{0, 1}.reshape(fusor::extents{1, 2})),
                       doctest::Contains("transitions (..., T, 3)"), fusor::shape_error);
  const vsa::hrr h(64);
  CHECK_THROWS_WITH_AS(vsa::automaton(h, vsa::random<B>(h, 2, 1), vsa::random<B>(h, 1, 2), fusor::array<std::int64_t, B>{0, 0, 1}.reshape(fusor::extents{1, 3})),
                       doctest::Contains("HRR's circular convolution commutes"), fusor::value_error);
}

TEST_CASE("vsa multiset: an unnormalised bundle of codebook rows counts each item's multiplicity") {
  // MAP-I's bundle is the integer sum: <multiset, item> / d estimates the item's count, within a
  // few standard deviations (sqrt(N / d) each) at d = 10 000
  const vsa::map_i m(10'000);
  const auto items = vsa::random<B>(m, 20, 51);
  const fusor::array<std::int64_t, B> bag{1, 1, 1, 4, 4, 7, 9, 9, 9, 9, 12, 0};
  const auto set = vsa::bundle(m, fusor::take(items, bag, 0));
  const auto dots = host_values(fusor::array<float, B>(fusor::matmul(fusor::cast<float>(items), fusor::cast<float>(set)) / 10'000.0f));
  std::vector<int> counts(20, 0);
  for (auto i : host_values(bag)) ++counts[std::size_t(i)];
  double err = 0;
  for (std::size_t i = 0; i < 20; ++i) err = std::max(err, std::abs(double(dots[i]) - counts[i]));
  CHECK(err < 0.2);  // 12 items: each estimate's standard deviation is sqrt(12 / 10 000) = 0.035
}

// ---- the centroid classifier ----------------------------------------------------------------------

TEST_CASE("vsa centroid classifier: sums per class, prediction, OnlineHD refinement, against plain loops") {
  const vsa::map_b m(129);
  const index_t n = 40, c = 3, d = 129;
  const auto x = vsa::random<B>(m, n, 6);
  std::vector<std::int64_t> labels(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i) labels[std::size_t(i)] = (i * 7) % c;
  const fusor::array<std::int64_t, B> y(std::span<const std::int64_t>(labels), fusor::extents{n});
  vsa::centroid_classifier<vsa::map_b, B> clf(m, c);
  clf.fit(x, y);
  const auto hx = host_values(x);
  std::vector<double> sums(static_cast<std::size_t>(c * d), 0.0);
  for (index_t i = 0; i < n; ++i)
    for (index_t j = 0; j < d; ++j) sums[std::size_t(labels[std::size_t(i)] * d + j)] += hx[std::size_t(i * d + j)];
  const auto hc = host_values(clf.centroids());
  bool exact = true;
  for (std::size_t k = 0; k < sums.size(); ++k) exact = exact && double(hc[k]) == sums[k];
  CHECK(exact);
  // the reference prediction: argmax of plain-loop cosines; one OnlineHD pass in doubles
  auto cosines = [&](const std::vector<double>& cen) {
    std::vector<double> s(static_cast<std::size_t>(n * c));
    for (index_t i = 0; i < n; ++i)
      for (index_t k = 0; k < c; ++k) {
        double dot = 0, nx = 0, nc = 0;
        for (index_t j = 0; j < d; ++j) {
          const double a = hx[std::size_t(i * d + j)], b = cen[std::size_t(k * d + j)];
          dot += a * b;
          nx += a * a;
          nc += b * b;
        }
        s[std::size_t(i * c + k)] = nc > 0 ? dot / std::sqrt(nx * nc) : 0.0;
      }
    return s;
  };
  const auto s0 = cosines(sums);
  std::vector<std::int64_t> pred(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i)
    pred[std::size_t(i)] = std::max_element(s0.begin() + i * c, s0.begin() + (i + 1) * c) - (s0.begin() + i * c);
  CHECK(host_values(clf.predict(x)) == pred);
  std::vector<double> after = sums;
  index_t wrong = 0;
  for (index_t i = 0; i < n; ++i) {
    const auto yi = labels[std::size_t(i)], pi = pred[std::size_t(i)];
    if (yi == pi) continue;
    ++wrong;
    for (index_t j = 0; j < d; ++j) {
      after[std::size_t(yi * d + j)] += 0.5 * (1 - s0[std::size_t(i * c + yi)]) * hx[std::size_t(i * d + j)];
      after[std::size_t(pi * d + j)] -= 0.5 * (1 - s0[std::size_t(i * c + pi)]) * hx[std::size_t(i * d + j)];
    }
  }
  REQUIRE(wrong > 0);  // 40 random vectors in 3 classes: the sums do not separate them all
  CHECK(clf.refine(x, y, 0.5) == wrong);
  const auto hr = host_values(clf.centroids());
  double err = 0;
  for (std::size_t k = 0; k < after.size(); ++k) err = std::max(err, std::abs(double(hr[k]) - after[k]));
  CHECK(err < 1e-4);
  // bad input
  CHECK_THROWS_WITH_AS(clf.fit(x, fusor::array<std::int64_t, B>{0, 1}), doctest::Contains("labels (n), got shapes (40, 129) and (2,)"),
                       fusor::shape_error);
  CHECK_THROWS_WITH_AS(clf.fit(x(fusor::range(0, 1), fusor::all), fusor::array<std::int64_t, B>{3}),
                       doctest::Contains("labels in [0, 3), got 3"), fusor::index_error);
  CHECK_THROWS_WITH_AS((vsa::centroid_classifier<vsa::bsdc_seg, B>(vsa::bsdc_seg(64), 2)),
                       doctest::Contains("BSDC-SEG vectors cannot be summed"), fusor::value_error);
}

/// A centroid classifier's held-out accuracy after one pass and after `refinements` OnlineHD passes,
/// on the split of examples/train_digits (a permutation seeded 2026, the last 20% held out).
template <class M, class X>
std::pair<double, double> held_out(const M& m, const X& encoded, const fusor::array<std::int64_t, B>& labels, index_t classes,
                                   int refinements) {
  using fusor::array;
  const index_t n = labels.size(), n_train = n - n / 5;
  fusor::random::generator rng(2026);
  const array<std::int64_t, B> order = fusor::random::permutation<B>(rng, n);
  const array<std::int64_t, B> train = order(fusor::range(0, n_train)).copy(), test = order(fusor::range(n_train, n)).copy();
  const array<float, B> x_train = fusor::take(encoded, train, 0), x_test = fusor::take(encoded, test, 0);
  const array<std::int64_t, B> y_train = fusor::take(labels, train), y_test = fusor::take(labels, test);
  vsa::centroid_classifier<M, B> clf(m, classes);
  clf.fit(x_train, y_train);
  const double one_pass = clf.accuracy(x_test, y_test);
  clf.refine(x_train, y_train, 1.0, refinements);
  return {one_pass, clf.accuracy(x_test, y_test)};
}

TEST_CASE("vsa digits: level-encoded pixels bound to position keys, a centroid classifier >= 90% held out") {
  using fusor::array;
  const std::filesystem::path dir = test::data_dir() / "digits";
  const array<std::uint8_t, B> images = fusor::to<B>(fusor::load_npy<std::uint8_t, fusor::cpu>(dir / "images.npy"));
  const array<std::int64_t, B> labels =
      fusor::to<B>(array<std::int64_t, fusor::cpu>(fusor::cast<std::int64_t>(fusor::load_npy<std::uint8_t, fusor::cpu>(dir / "labels.npy"))));
  const index_t n = images.shape()[0];
  const vsa::map_b m(1000);
  const auto pixels = vsa::scalar_encoder<vsa::map_b, B>::level(m, 17, 0.0, 16.0, 1);  // 0..16
  const auto keys = vsa::random<B>(m, 64, 2);                                          // one per pixel
  array<float, B> hv(fusor::extents{n, 1000});
  for (index_t b = 0; b < n; b += 512) {  // (512, 64, 1000) bound pixels at a time
    const index_t e = std::min(n, b + 512);
    hv(fusor::range(b, e), fusor::all) = pixels.encode_record(keys, images(fusor::range(b, e), fusor::all));
  }
  const auto [one_pass, refined] = held_out(m, hv, labels, 10, 12);
  MESSAGE("digits, d = 1000: one pass " << one_pass << ", after 12 refinement passes " << refined);
  CHECK(one_pass >= 0.85);
  CHECK(refined >= 0.90);
}

TEST_CASE("vsa language identification: letter trigrams of single words from five Debian word lists") {
  using fusor::array;
  const std::filesystem::path dir = test::data_dir() / "language";
  const auto words = fusor::load_npy<std::uint8_t, fusor::cpu>(dir / "words.npy");  // (5000, 16), codes 1..A, 0 pads
  const array<std::int64_t, B> labels =
      fusor::to<B>(array<std::int64_t, fusor::cpu>(fusor::cast<std::int64_t>(fusor::load_npy<std::uint8_t, fusor::cpu>(dir / "labels.npy"))));
  const index_t n = words.shape()[0];
  REQUIRE(n == 5000);
  // token rows: a boundary mark (token 0) before and after the letters (codes 1..A), then -1,
  // ngrams' padding (so that prefixes and suffixes count)
  const index_t len = words.shape()[1];
  fusor::array<std::int64_t, fusor::cpu> t = fusor::full<std::int64_t, fusor::cpu>(fusor::extents{n, len + 2}, -1);
  for (index_t i = 0; i < n; ++i) {
    index_t l = 0;
    t(i, 0) = 0;
    for (; l < len && words(i, l) != 0; ++l) t(i, l + 1) = words(i, l);
    t(i, l + 1) = 0;
  }
  const vsa::map_b m(2048);
  const auto letters = vsa::random<B>(m, index_t(fusor::max(words)) + 1, 7);
  // each word's trigram counts (the sum, not its sign: the counts carry more than the majority)
  const auto encoded = vsa::ngrams(m, letters, fusor::to<B>(t), 3, 1, {vsa::normalization::none});
  const auto [one_pass, refined] = held_out(m, encoded, labels, 5, 5);
  MESSAGE("language of single words, d = 2048: one pass " << one_pass << ", after 5 refinement passes " << refined);
  CHECK(one_pass >= 0.68);  // chance is 0.2
  CHECK(refined >= 0.72);
}

}  // namespace vsaencode
