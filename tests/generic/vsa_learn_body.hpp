// Residue number encoding, the decoding of multivariate fractional power encodings by resonator,
// and the sparse distributed memory, written once and instantiated per backend:
// tests/test_vsa_learn.cpp runs them on cpu, tests/test_vsa_cuda.cu on cuda. References: residue
// vectors against phases summed in double from each modulus's roots, the Chinese remainder theorem
// against a search, decoded features against the encoded ones, the memory's activations, counters
// and reads against plain loops over its addresses.
//
// The includer defines TEST_BACKEND (fusor::cpu or fusor::cuda) before including this file.
#include "../common.hpp"

#include <cmath>
#include <complex>
#include <cstdint>
#include <numbers>
#include <numeric>
#include <type_traits>
#include <utility>
#include <vector>

namespace vsalearn {

using fusor::index_t;
using B = TEST_BACKEND;
namespace vsa = fusor::vsa;
using test::host_values;

/// The largest |a_i - b_i| of two complex host vectors.
double largest_gap(const std::vector<std::complex<float>>& a, const std::vector<std::complex<double>>& b) {
  REQUIRE(a.size() == b.size());
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(std::complex<double>(a[i]) - b[i]));
  return worst;
}

// ---- residue number encoding ---------------------------------------------------------------------

TEST_CASE("vsa residue_encoder: phases summed over the moduli's roots, codebooks, CRT, arithmetic by bind and power") {
  const vsa::fhrr m(64);
  const std::vector<std::int64_t> moduli{3, 5, 7};
  const vsa::residue_encoder<B> enc(m, moduli, 11);
  CHECK(enc.range() == 105);
  REQUIRE(enc.codebooks().size() == 3);
  // each modulus's exponents a_kj, read back from its codebook's row 1 (z_k); row r must be z_k^r
  std::vector<std::vector<std::int64_t>> a(3);
  const double pi = std::numbers::pi;
  for (std::size_t k = 0; k < 3; ++k) {
    const std::int64_t q = moduli[k];
    REQUIRE(enc.codebooks()[k].size() == q);
    const auto rows = host_values(enc.codebooks()[k].items());
    for (index_t j = 0; j < 64; ++j) {
      const double turns = std::arg(std::complex<double>(rows[std::size_t(64 + j)])) / (2 * pi);
      a[k].push_back(((std::llround(turns * double(q)) % q) + q) % q);
    }
    std::vector<std::complex<double>> want;
    for (std::int64_t r = 0; r < q; ++r)
      for (index_t j = 0; j < 64; ++j) want.push_back(std::polar(1.0, 2 * pi * double(a[k][std::size_t(j)] * r % q) / double(q)));
    CHECK(largest_gap(rows, want) < 2e-6);
  }
  // encode(x): the binding of z_k^x, the phase sum_k 2 pi a_kj x / m_k, for values across the range
  const std::vector<std::int64_t> xs{0, 1, 2, 52, 103, 104};
  const auto got = host_values(enc.encode(test::on<B>(xs)));
  std::vector<std::complex<double>> want;
  for (const std::int64_t x : xs)
    for (index_t j = 0; j < 64; ++j) {
      double phase = 0;
      for (std::size_t k = 0; k < 3; ++k) phase += 2 * pi * double(a[k][std::size_t(j)] * x % moduli[k]) / double(moduli[k]);
      want.push_back(std::polar(1.0, phase));
    }
  CHECK(largest_gap(got, want) < 2e-6);
  // shapes: (...) -> (..., d); any integer type
  CHECK(enc.encode(test::on<B>(std::vector<std::int32_t>{1, 2, 3, 4, 5, 6}, {2, 3})).shape() == fusor::extents{2, 3, 64});
  CHECK(enc.encode(fusor::zeros<std::int16_t, B>(fusor::extents{0})).shape() == fusor::extents{0, 64});

  // the Chinese remainder theorem against a search over [0, M)
  std::vector<std::vector<std::int64_t>> res(3);
  for (std::int64_t x = 0; x < 105; ++x)
    for (std::size_t k = 0; k < 3; ++k) res[k].push_back(x % moduli[k]);
  std::vector<fusor::array<std::int64_t, B>> residues;
  for (const auto& r : res) residues.push_back(test::on<B>(r));
  const auto back = host_values(enc.combine(residues));
  for (std::int64_t x = 0; x < 105; ++x) CHECK(back[std::size_t(x)] == x);

  // bind adds modulo M; an integer power multiplies
  const auto x = enc.encode(test::on<B>(std::vector<std::int64_t>{40, 99}));
  const auto y = enc.encode(test::on<B>(std::vector<std::int64_t>{70, 6}));
  const auto sum = host_values(vsa::bind(m, x, y));
  const auto sum_want = host_values(enc.encode(test::on<B>(std::vector<std::int64_t>{5, 0})));
  for (std::size_t i = 0; i < sum.size(); ++i) CHECK(std::abs(sum[i] - sum_want[i]) < 1e-5f);
  const auto tripled = host_values(vsa::fractional_power(m, x, 3.0));
  const auto tripled_want = host_values(enc.encode(test::on<B>(std::vector<std::int64_t>{15, 87})));
  for (std::size_t i = 0; i < tripled.size(); ++i) CHECK(std::abs(tripled[i] - tripled_want[i]) < 1e-4f);
}

TEST_CASE("vsa residue_encoder: distinct values quasi-orthogonal; a resonator decodes every value, clean and noisy") {
  {  // d = 2000, M = 105: every pair of distinct values nearly orthogonal (sd 1 / sqrt(2 d) = 0.016)
    const vsa::fhrr m(2000);
    const vsa::residue_encoder<B> enc(m, {3, 5, 7}, 3);
    const auto all = enc.encode(fusor::array<std::int64_t, B>(fusor::lazy::arange<std::int64_t, B>(0, 105)));
    const auto s = host_values(vsa::similarity(m, all, all, vsa::metric::cosine));
    double off = 0, diag = 2;
    for (index_t i = 0; i < 105; ++i)
      for (index_t j = 0; j < 105; ++j)
        (i == j ? diag : off) = i == j ? std::min(diag, double(s[std::size_t(i * 105 + j)]))
                                       : std::max(off, std::abs(double(s[std::size_t(i * 105 + j)])));
    CHECK(diag > 0.9999);
    CHECK(off < 0.1);
  }
  const vsa::fhrr m(1000);
  const vsa::residue_encoder<B> enc(m, {3, 5, 7, 11}, 5);  // M = 1155: a resonator over 26 items, not 1155
  const fusor::array<std::int64_t, B> values(fusor::lazy::arange<std::int64_t, B>(0, 1155));
  const auto clean = enc.encode(values);
  const auto decoded = host_values(enc.decode(clean));
  index_t right = 0;
  for (std::int64_t x = 0; x < 1155; ++x) right += decoded[std::size_t(x)] == x;
  MESSAGE("residue decoding of 1155 clean values, d = 1000: " << right << " right");
  CHECK(right == 1155);
  // one vector -> a 0-d result
  const auto one = enc.decode(clean(700, fusor::all));
  CHECK(one.ndim() == 0);
  CHECK(host_values(one)[0] == 700);
  // noise: a random vector of half the norm (similarity 0.89) and of the same norm (0.71) added
  const auto noise = vsa::random<B>(m, 1155, 99);
  for (const float a : {0.5f, 1.0f}) {
    const fusor::array<std::complex<float>, B> noisy(clean + a * noise);
    const auto got = host_values(enc.decode(noisy));
    right = 0;
    for (std::int64_t x = 0; x < 1155; ++x) right += got[std::size_t(x)] == x;
    MESSAGE("residue decoding of 1155 values with noise of " << a << " times their norm, d = 1000: " << right << " right");
    CHECK(right >= (a < 1 ? 1150 : 1000));
  }
  // the soft resonator decodes clean vectors too
  vsa::resonator_options soft;
  soft.max_iterations = 20;
  CHECK(host_values(enc.decode(clean, soft)) == host_values(values));
  // the projected superposition start is the identity on these codebooks: it must not be what decode uses
  vsa::resonator_options projected = vsa::residue_encoder<B>::default_resonator();
  projected.begin = vsa::resonator_options::start::superposition;
  const auto stuck = host_values(enc.combine(vsa::resonate(m, clean, enc.codebooks(), projected).indices));
  index_t stuck_right = 0;
  for (std::int64_t x = 0; x < 1155; ++x) stuck_right += stuck[std::size_t(x)] == x;
  MESSAGE("the same resonator from the projected superposition: " << stuck_right << " of 1155");
  CHECK(stuck_right < 600);
  // one modulus: the nearest root power
  const vsa::residue_encoder<B> single(m, {13}, 2);
  const auto s = host_values(single.decode(single.encode(fusor::array<std::int64_t, B>(fusor::lazy::arange<std::int64_t, B>(0, 13)))));
  for (std::int64_t x = 0; x < 13; ++x) CHECK(s[std::size_t(x)] == x);
}

TEST_CASE("vsa residue_encoder: moduli, values and shapes it does not take") {
  const vsa::fhrr m(32);
  CHECK_THROWS_WITH_AS(vsa::residue_encoder<B>(m, {4, 6}, 1), doctest::Contains("pairwise coprime moduli, got 4 and 6"),
                       fusor::value_error);
  CHECK_THROWS_WITH_AS(vsa::residue_encoder<B>(m, {1, 5}, 1), doctest::Contains("moduli >= 2, got 1"), fusor::value_error);
  CHECK_THROWS_WITH_AS(vsa::residue_encoder<B>(m, {}, 1), doctest::Contains("at least one modulus"), fusor::value_error);
  CHECK_THROWS_WITH_AS(vsa::residue_encoder<B>(m, {65536, 65537}, 1), doctest::Contains("at most 2^31"),
                       fusor::value_error);
  const vsa::residue_encoder<B> enc(m, {3, 5}, 1);
  CHECK_THROWS_WITH_AS(enc.encode(test::on<B>(std::vector<std::int64_t>{0, 15})),
                       doctest::Contains("integers in [0, 15), got 15"), fusor::value_error);
  CHECK_THROWS_WITH_AS(enc.encode(test::on<B>(std::vector<std::int64_t>{-1, 2})),
                       doctest::Contains("integers in [0, 15), got -1"), fusor::value_error);
  CHECK_THROWS_AS(enc.decode(fusor::zeros<std::complex<float>, B>(fusor::extents{2, 31})), fusor::shape_error);
  CHECK_THROWS_AS(enc.decode(fusor::zeros<std::complex<float>, B>(fusor::extents{2, 2, 32})), fusor::shape_error);
  std::vector<fusor::array<std::int64_t, B>> one_residue;
  one_residue.push_back(test::on<B>(std::vector<std::int64_t>{1}));
  vsa::resonator_options from_sums;
  from_sums.begin = vsa::resonator_options::start::sum;
  const vsa::bsc b(64);
  std::vector<vsa::item_memory<vsa::bsc, B>> books;
  books.push_back(vsa::item_memory<vsa::bsc, B>::random(b, 3, 1));
  books.push_back(vsa::item_memory<vsa::bsc, B>::random(b, 3, 2));
  CHECK_THROWS_WITH_AS(vsa::resonate(b, vsa::random<B>(b, 1, 3), books, from_sums),
                       doctest::Contains("needs vectors that add (real or complex elements), got BSC"), fusor::value_error);
  CHECK_THROWS_WITH_AS(enc.combine(one_residue),
                       doctest::Contains("one residue array per modulus (2), got 1"), fusor::value_error);
  one_residue.push_back(test::on<B>(std::vector<std::int64_t>{1, 2}));
  CHECK_THROWS_WITH_AS(enc.combine(one_residue), doctest::Contains("residue arrays of one shape, got (1,) and (2,)"),
                       fusor::shape_error);
  // no vectors: no values, for one modulus and several
  CHECK(enc.decode(fusor::zeros<std::complex<float>, B>(fusor::extents{0, 32})).shape() == fusor::extents{0});
  const vsa::residue_encoder<B> single(m, {5}, 1);
  CHECK(single.decode(fusor::zeros<std::complex<float>, B>(fusor::extents{0, 32})).shape() == fusor::extents{0});
}

// ---- multivariate fractional power encoding, decoded -------------------------------------------------

template <class M>
void check_features_decode(const M& m) {
  const std::vector<double> low{0.0, -2.0, 10.0}, high{1.0, 2.0, 20.0};
  const vsa::fractional_power_features<M, B> enc(m, low, high, 17, vsa::fpe_kernel::sinc, 3.0);
  const index_t n = 24;
  std::vector<double> x;
  const auto u = test::values<double>(n * 3, 0.0, 1.0, 5);
  for (index_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k < 3; ++k) x.push_back(low[k] + u[std::size_t(i * 3) + k] * (high[k] - low[k]));
  const auto xs = test::on<B>(x, {n, 3});
  const auto v = enc.encode(xs);
  const auto got = host_values(enc.decode(v));
  double worst = 0;
  for (index_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k < 3; ++k)
      worst = std::max(worst, std::abs(got[std::size_t(i * 3) + k] - x[std::size_t(i * 3) + k]) / (high[k] - low[k]));
  MESSAGE(M::name << ": largest decoding error of 24 clean 3-feature vectors, relative to the range: " << worst);
  CHECK(worst < 2e-3);
  // a noisy vector: a random vector of half its norm added (similarity about 0.9)
  const auto noise = vsa::random<B>(m, n, 23);
  const fusor::array<typename M::value_type, B> noisy(v + 0.5f * noise);
  const auto got_noisy = host_values(enc.decode(noisy));
  worst = 0;
  for (index_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k < 3; ++k)
      worst = std::max(worst, std::abs(got_noisy[std::size_t(i * 3) + k] - x[std::size_t(i * 3) + k]) / (high[k] - low[k]));
  MESSAGE(M::name << ": with random noise of half the norm added: " << worst);
  CHECK(worst < 0.02);
  // one vector: (features)
  const auto one = enc.decode(v(3, fusor::all));
  REQUIRE(one.shape() == fusor::extents{3});
  CHECK(std::abs(host_values(one)[1] - x[10]) < 4e-3 * 4);
  // one feature: the scalar decoder
  const vsa::fractional_power_features<M, B> single(m, {0.0}, {4.0}, 3, vsa::fpe_kernel::gaussian, 2.0);
  const auto one_feature = host_values(single.decode(single.encode(test::on<B>(std::vector<double>{0.5, 3.25}, {2, 1}))));
  CHECK(std::abs(one_feature[0] - 0.5) < 4e-3);
  CHECK(std::abs(one_feature[1] - 3.25) < 4e-3);
  // the scalar encoders are the features': binding them gives the encoding
  const auto bound = vsa::bind(m, vsa::bind(m, enc.feature(0).encode(fusor::full<double, B>(fusor::extents{1}, 0.25)),
                                            enc.feature(1).encode(fusor::full<double, B>(fusor::extents{1}, 1.0))),
                               enc.feature(2).encode(fusor::full<double, B>(fusor::extents{1}, 12.0)));
  const auto direct = enc.encode(test::on<B>(std::vector<double>{0.25, 1.0, 12.0}, {1, 3}));
  CHECK(double(fusor::max(fusor::abs(bound - direct))) < 2e-3);
}

TEST_CASE("vsa fractional_power_features: decoding by resonator over the features' grids, then refinement") {
  check_features_decode(vsa::fhrr(4096));
  check_features_decode(vsa::hrr(4096));
  const vsa::fhrr m(256);
  const vsa::fractional_power_features<vsa::fhrr, B> enc(m, {0.0, 0.0}, {1.0, 1.0}, 1);
  const auto v = enc.encode(test::on<B>(std::vector<double>{0.5, 0.5}, {1, 2}));
  CHECK_THROWS_WITH_AS(enc.decode(v, 1), doctest::Contains("a grid of at least 2 values"), fusor::value_error);
  CHECK_THROWS_WITH_AS(enc.decode(v, 0, 0), doctest::Contains("at least 1 refinement round, got 0"), fusor::value_error);
  CHECK_THROWS_AS(enc.decode(fusor::zeros<std::complex<float>, B>(fusor::extents{1, 255})), fusor::shape_error);
  CHECK_THROWS_WITH_AS(enc.feature(2), doctest::Contains("a feature in [0, 2), got 2"), fusor::index_error);
  CHECK(enc.decode(fusor::zeros<std::complex<float>, B>(fusor::extents{0, 256})).shape() == fusor::extents{0, 2});
}

// ---- an FPE bandwidth learned through fusor::ad ----------------------------------------------------

template <class M>
void check_learned_bandwidth(const M& m) {
  namespace ad = fusor::ad;
  // values in [0, 10], a gaussian kernel at bandwidth 2: the scale s multiplies it
  const vsa::fractional_power_encoder<M, B> enc(m, 0.0, 10.0, 41, vsa::fpe_kernel::gaussian, 2.0);
  std::vector<float> dh;
  for (int i = 0; i < 64; ++i) dh.push_back(-3.0f + 6.0f * float(i) / 63.0f);
  const auto delta = test::on<B>(dh);
  // the value at s = 1.5 against the cosines of real encodings of 4 and 4 + delta by the scaled encoder
  const auto one = fusor::full<float, B>(fusor::extents{1}, 1.5f);
  const auto at = host_values(enc.similarity_at(delta, one));
  const auto wide = enc.scaled(1.5);
  CHECK(wide.components()[0].bandwidth == doctest::Approx(3.0));
  std::vector<double> xs, ys;
  for (const float d : dh) {
    xs.push_back(4.0);
    ys.push_back(4.0 + double(d));
  }
  const auto s = host_values(vsa::similarity(m, wide.encode(test::on<B>(ys)), wide.encode(test::on<B>(xs)), vsa::metric::cosine));
  double worst = 0;
  for (std::size_t i = 0; i < dh.size(); ++i) worst = std::max(worst, std::abs(double(at[i]) - double(s[i * dh.size() + i])));
  CHECK(worst < 1e-4);
  // the target: the kernel of bandwidth 5 (the scale 2.5); loss the mean squared gap
  std::vector<float> th;
  for (const float d : dh) th.push_back(float(vsa::kernel_value(vsa::fpe_kernel::gaussian, 5.0 * d / 10.0)));
  const auto target = test::on<B>(th);
  auto loss = [&](const auto& scale) { return mean(square(enc.similarity_at(delta, scale) - target)); };
  // the gradient against a central difference of the loss in double
  const auto loss_at = [&](double sc) {
    const auto v = host_values(enc.similarity_at(delta, fusor::full<float, B>(fusor::extents{1}, float(sc))));
    double l = 0;
    for (std::size_t i = 0; i < v.size(); ++i) l += (double(v[i]) - double(th[i])) * (double(v[i]) - double(th[i]));
    return l / double(v.size());
  };
  const double h = 1e-2, numeric = (loss_at(1.5 + h) - loss_at(1.5 - h)) / (2 * h);
  const double analytic = double(host_values(ad::grad(loss)(one))[0]);
  CHECK(analytic == doctest::Approx(numeric).epsilon(1e-2));
  CHECK(analytic < 0);  // the target is wider in bandwidth: the loss falls as the scale grows
  // Adam from s = 1 finds the scale 2.5
  fusor::array<float, B> scale = fusor::full<float, B>(fusor::extents{1}, 1.0f);
  ad::optim::adam<float, B> opt({.lr = 0.05});
  auto vg = ad::value_and_grad(loss);
  double last = 0;
  for (int step = 0; step < 300; ++step) {
    auto [l, g] = vg(scale);
    last = double(l);
    opt.step(scale, g);
  }
  const double learned = double(host_values(scale)[0]);
  MESSAGE(M::name << ": the learned bandwidth scale " << learned << " (2.5 expected), loss " << last);
  CHECK(learned == doctest::Approx(2.5).epsilon(0.05));
}

TEST_CASE("vsa FPE bandwidth learned through fusor::ad: the similarity against encodings, its gradient, a fit") {
  check_learned_bandwidth(vsa::fhrr(4096));
  check_learned_bandwidth(vsa::hrr(4096));
  const vsa::fractional_power_encoder<vsa::fhrr, B> enc(vsa::fhrr(64), 0.0, 1.0, 1);
  CHECK_THROWS_WITH_AS(enc.scaled(0.0), doctest::Contains("a finite scale > 0, got 0"), fusor::value_error);
  CHECK_THROWS_AS(enc.similarity_at(fusor::zeros<float, B>(fusor::extents{2, 2}), fusor::ones<float, B>(fusor::extents{1})),
                  fusor::shape_error);
}

// ---- sparse distributed memory ------------------------------------------------------------------------

/// The memory's activations, counters and reads against plain loops over its addresses, for
/// MAP-B or BSC addresses and contents: n locations, a fraction `fraction` active, which the
/// memory handles by a GEMM (dense) or by gathering the active rows (sparse, below 1/16).
template <class M>
void check_sdm_against_loops(const M& m, index_t n, double fraction, bool sparse) {
  const index_t q = 6, d = m.dim();
  vsa::sparse_distributed_memory<M, M, B> sdm(m, n, 5, fraction);
  const auto keys = vsa::random<B>(m, q, 6);
  const auto data = vsa::random<B>(m, q, 7);
  sdm.write(keys, data);
  sdm.write(keys(0, fusor::all), data(1, fusor::all));  // one pair alone
  const auto addr = host_values(sdm.addresses());
  const auto kh = host_values(keys), vh = host_values(data);
  // element p of a row as +-1 (BSC: 1 - 2 bit)
  const auto pm = [&](const auto& h, index_t r, index_t p) {
    if constexpr (std::is_same_v<M, vsa::bsc>)
      return 1.0 - 2.0 * double((h[std::size_t(r * m.width() + p / 64)] >> (p % 64)) & 1u);
    else
      return double(h[std::size_t(r * m.width() + p)]);
  };
  const auto active = [&](index_t key, index_t loc) {
    double dot = 0;
    for (index_t p = 0; p < d; ++p) dot += pm(kh, key, p) * pm(addr, loc, p);
    // active when the Hamming distance h = (d - dot) / 2 is at most the radius
    return (double(d) - dot) / 2 <= double(sdm.radius()) ? 1.0 : 0.0;
  };
  std::vector<double> counters(std::size_t(n * d), 0.0);
  const auto add = [&](index_t key, index_t value) {
    for (index_t l = 0; l < n; ++l)
      if (active(key, l) > 0)
        for (index_t p = 0; p < d; ++p) counters[std::size_t(l * d + p)] += pm(vh, value, p);
  };
  for (index_t i = 0; i < q; ++i) add(i, i);
  add(0, 1);
  const auto act = host_values(sdm.activation(keys));
  double activated = 0;
  for (index_t i = 0; i < q; ++i)
    for (index_t l = 0; l < n; ++l) {
      CHECK(double(act[std::size_t(i * n + l)]) == active(i, l));
      activated += active(i, l);
    }
  CHECK(activated > 0);  // the loops below compare something
  CHECK((activated < double(q * n) / 16) == sparse);  // the path the case is meant to take
  const auto c = host_values(sdm.counters());
  for (std::size_t i = 0; i < counters.size(); ++i) CHECK(double(c[i]) == counters[i]);
  // reads: the sums of the active counters, then the content model's majority
  const auto sums = host_values(sdm.read_sums(keys));
  const auto read = host_values(sdm.read(keys));
  for (index_t i = 0; i < q; ++i)
    for (index_t p = 0; p < d; ++p) {
      double s = 0;
      for (index_t l = 0; l < n; ++l) s += active(i, l) * counters[std::size_t(l * d + p)];
      CHECK(double(sums[std::size_t(i * d + p)]) == s);
      if constexpr (std::is_same_v<M, vsa::bsc>)
        CHECK(((read[std::size_t(i * m.width() + p / 64)] >> (p % 64)) & 1u) == (s < 0 ? 1u : 0u));
      else
        CHECK(read[std::size_t(i * d + p)] == (s > 0 ? 1.0f : -1.0f));
    }
}

TEST_CASE("vsa sparse_distributed_memory: activations, counters and reads against plain loops") {
  check_sdm_against_loops(vsa::map_b(64), 40, 0.2, false);
  check_sdm_against_loops(vsa::bsc(100), 40, 0.2, false);
  check_sdm_against_loops(vsa::map_b(64), 600, 0.02, true);
  check_sdm_against_loops(vsa::bsc(100), 600, 0.02, true);
}

TEST_CASE("vsa sparse_distributed_memory: the threshold activates the asked fraction; stored items read back, noisy addresses too") {
  {  // the fraction of locations random addresses activate, for each address model
    const auto fraction = [](const auto& m) {
      using M = std::remove_cvref_t<decltype(m)>;
      const vsa::sparse_distributed_memory<M, vsa::map_b, B> sdm(m, vsa::map_b(8), 2000, 1, 0.05);
      return double(fusor::mean(sdm.activation(vsa::random<B>(m, 200, 2))));
    };
    const double f_map = fraction(vsa::map_b(1000)), f_bsc = fraction(vsa::bsc(1000)),
                 f_fhrr = fraction(vsa::fhrr(1000)), f_hrr = fraction(vsa::hrr(1000));
    MESSAGE("active fractions asked 0.05: MAP-B " << f_map << ", BSC " << f_bsc << ", FHRR " << f_fhrr << ", HRR " << f_hrr);
    // MAP-B and BSC: the binomial radius against a sum of the pmf written here (d = 1000, p = 0.05)
    double cdf = 0, pmf = std::pow(0.5, 1000.0);
    index_t r = 0;
    for (; cdf + pmf < 0.05; ++r) {
      cdf += pmf;
      pmf *= double(1000 - r) / double(r + 1);
    }
    const vsa::sparse_distributed_memory<vsa::bsc, vsa::bsc, B> kanerva(vsa::bsc(1000), 10, 1, 0.05);
    CHECK(kanerva.radius() == r);
    CHECK(kanerva.threshold() == doctest::Approx(1.0 - double(r) / 1000.0));
    for (const double f : {f_map, f_bsc, f_fhrr, f_hrr}) {  // (the binomial radius's step: up to 0.057 for MAP-B, BSC)
      CHECK(f > 0.04);
      CHECK(f < 0.065);
    }
  }
  // Kanerva's setting: binary addresses and contents, d = 1000, 2000 locations, 2% active
  const vsa::bsc m(1000);
  vsa::sparse_distributed_memory<vsa::bsc, vsa::bsc, B> sdm(m, 2000, 3, 0.02);
  const index_t stored = 100;
  const auto keys = vsa::random<B>(m, stored, 4);
  const auto data = vsa::random<B>(m, stored, 5);
  sdm.write(keys, data);
  const fusor::array<float, B> exact = vsa::similarity(m, sdm.read(keys), data);  // (stored, stored)
  const auto top = host_values(fusor::argmax(exact, -1));
  const auto own = host_values(exact);
  index_t right = 0;
  double worst = 1;
  for (index_t i = 0; i < stored; ++i) {
    right += top[std::size_t(i)] == i;
    worst = std::min(worst, double(own[std::size_t(i * stored + i)]));
  }
  MESSAGE("SDM, 100 pairs, exact addresses: " << right << " top-1, the lowest similarity to the stored content " << worst);
  CHECK(right == stored);
  CHECK(worst > 0.8);
  // addresses with 5% of their bits flipped
  fusor::random::generator g(8);
  const fusor::array<std::uint64_t, B> flips(m.pack(fusor::random::bernoulli<B>(g, fusor::extents{stored, 1000}, 0.05)));
  const fusor::array<std::uint64_t, B> noisy(keys ^ flips);
  const auto top_noisy = host_values(fusor::argmax(vsa::similarity(m, sdm.read(noisy), data), -1));
  right = 0;
  for (index_t i = 0; i < stored; ++i) right += top_noisy[std::size_t(i)] == i;
  MESSAGE("SDM, 100 pairs, addresses with 5% of bits flipped: " << right << " top-1");
  CHECK(right >= 95);
  // MAP-B contents at MAP-B addresses, one pair at a time
  const vsa::map_b mm(1000);
  vsa::sparse_distributed_memory<vsa::map_b, vsa::map_b, B> maps(mm, 1000, 9, 0.05);
  const auto k2 = vsa::random<B>(mm, 20, 10), v2 = vsa::random<B>(mm, 20, 11);
  for (index_t i = 0; i < 20; ++i) maps.write(k2(i, fusor::all), v2(i, fusor::all));
  const auto r = maps.read(k2(7, fusor::all));
  CHECK(r.shape() == fusor::extents{1000});
  CHECK(host_values(vsa::similarity(mm, r, v2(7, fusor::all)))[0] > 0.8f);
}

TEST_CASE("vsa sparse_distributed_memory: models, sizes and shapes it does not take") {
  const vsa::map_b m(64);
  CHECK_THROWS_WITH_AS((vsa::sparse_distributed_memory<vsa::map_b, vsa::fhrr, B>(m, vsa::fhrr(64), 10, 1)),
                       doctest::Contains("FHRR contents are not supported"), fusor::value_error);
  CHECK_THROWS_WITH_AS((vsa::sparse_distributed_memory<vsa::mcr, vsa::map_b, B>(vsa::mcr(64), m, 10, 1)),
                       doctest::Contains("addresses are not supported"), fusor::value_error);
  CHECK_THROWS_WITH_AS((vsa::sparse_distributed_memory<vsa::map_b, vsa::map_b, B>(m, 0, 1)),
                       doctest::Contains("at least 1 location, got 0"), fusor::value_error);
  CHECK_THROWS_WITH_AS((vsa::sparse_distributed_memory<vsa::map_b, vsa::map_b, B>(m, 10, 1, 1.0)),
                       doctest::Contains("active fraction in (0, 1), got 1.0"), fusor::value_error);
  vsa::sparse_distributed_memory<vsa::map_b, vsa::map_b, B> sdm(m, 10, 1);
  CHECK_THROWS_WITH_AS(sdm.write(vsa::random<B>(m, 3, 1), vsa::random<B>(m, 2, 2)),
                       doctest::Contains("one content per address, got addresses of shape (3, 64) and contents of shape (2, 64)"),
                       fusor::shape_error);
  CHECK_THROWS_AS(sdm.write(vsa::random<B>(m, 3, 1), fusor::zeros<float, B>(fusor::extents{3, 63})), fusor::shape_error);
  CHECK_THROWS_AS(sdm.read(fusor::zeros<float, B>(fusor::extents{2, 2, 64})), fusor::shape_error);
  // nothing written: every sum is 0, MAP-B reads -1 (ties go to -1, as torchhd's hard_quantize)
  CHECK(double(fusor::max(fusor::abs(sdm.read_sums(vsa::random<B>(m, 2, 3))))) == 0.0);
  CHECK(double(fusor::max(sdm.read(vsa::random<B>(m, 2, 3)))) == -1.0);
}

// ---- centroid classifiers of bit and modular models ---------------------------------------------------

/// n samples of `classes` random prototypes of model m, each with a fraction `flip` of its
/// elements replaced by a random vector's (MAP-B, BSC: bits; modular: values), labels i % classes.
template <class M>
std::pair<fusor::array<typename M::value_type, B>, fusor::array<std::int64_t, B>> noisy_prototypes(const M& m, index_t n,
                                                                                                   index_t classes,
                                                                                                   double flip) {
  using T = typename M::value_type;
  const auto proto = host_values(vsa::random<B>(m, classes, 31));
  const auto other = host_values(vsa::random<B>(m, n, 32));
  const auto u = test::values<double>(n * m.width() * (std::is_same_v<T, std::uint64_t> ? 64 : 1), 0.0, 1.0, 33);
  std::vector<T> x(static_cast<std::size_t>(n * m.width()));
  std::vector<std::int64_t> y(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i) {
    y[std::size_t(i)] = i % classes;
    for (index_t w = 0; w < m.width(); ++w) {
      const T p = proto[std::size_t(y[std::size_t(i)] * m.width() + w)], o = other[std::size_t(i * m.width() + w)];
      if constexpr (std::is_same_v<T, std::uint64_t>) {  // bit by bit
        T mask = 0;
        for (int b = 0; b < 64; ++b)
          if (u[std::size_t((i * m.width() + w) * 64 + b)] < flip) mask |= T(1) << b;
        x[std::size_t(i * m.width() + w)] = (p & ~mask) | (o & mask);
      } else {
        x[std::size_t(i * m.width() + w)] = u[std::size_t(i * m.width() + w)] < flip ? o : p;
      }
    }
  }
  return {test::on<B>(x, {n, m.width()}), test::on<B>(y)};
}

TEST_CASE("vsa centroid classifier of bit and modular models: the same as a real or complex one on the embedded samples") {
  const index_t n = 120, k = 4;
  {  // BSC against MAP-B on 1 - 2 bit, the embedding written out here
    const vsa::bsc m(300);
    auto [x, y] = noisy_prototypes(m, n, k, 0.9);  // hard enough that one pass misclassifies some
    const auto bits = host_values(x);
    std::vector<float> pm;
    for (index_t i = 0; i < n; ++i)
      for (index_t p = 0; p < 300; ++p) pm.push_back(1.0f - 2.0f * float((bits[std::size_t(i * m.width() + p / 64)] >> (p % 64)) & 1u));
    const auto xr = test::on<B>(pm, {n, 300});
    vsa::centroid_classifier<vsa::bsc, B> c(m, k);
    vsa::centroid_classifier<vsa::map_b, B> r(vsa::map_b(300), k);
    static_assert(std::is_same_v<decltype(c)::centroid_type, float>);
    c.fit(x, y);
    r.fit(xr, y);
    CHECK(host_values(c.centroids()) == host_values(r.centroids()));  // sums of +-1: exact
    CHECK(double(fusor::max(fusor::abs(c.scores(x) - r.scores(xr)))) < 1e-5);
    const index_t wc = c.refine(x, y, 1.0, 1), wr = r.refine(xr, y, 1.0, 1);
    CHECK(wc == wr);
    CHECK(wc > 0);  // the refinement moved centroids: the comparisons below test it
    CHECK(double(fusor::max(fusor::abs(c.centroids() - r.centroids()))) < 1e-3);
    CHECK(host_values(c.predict(x)) == host_values(r.predict(xr)));
    c.fit_online(x, y, 0.5);
    r.fit_online(xr, y, 0.5);
    CHECK(double(fusor::max(fusor::abs(c.centroids() - r.centroids()))) < 1e-3);
    MESSAGE("BSC centroids, 4 prototypes with 90% of their bits redrawn: accuracy " << c.accuracy(x, y) << " after "
            << wc << " corrections");
    CHECK(c.accuracy(x, y) >= 0.9);
  }
  {  // MCR against FHRR on the phasors e^{2 pi i v / q}, written out here
    const vsa::mcr m(100, 7);
    auto [x, y] = noisy_prototypes(m, n, k, 0.93);
    const auto v = host_values(x);
    std::vector<std::complex<float>> ph;
    for (const auto e : v) ph.push_back(std::complex<float>(std::polar(1.0, 2 * std::numbers::pi * double(e) / 7.0)));
    const auto xr = test::on<B>(ph, {n, 100});
    vsa::centroid_classifier<vsa::mcr, B> c(m, k);
    vsa::centroid_classifier<vsa::fhrr, B> r(vsa::fhrr(100), k);
    c.fit(x, y);
    r.fit(xr, y);
    CHECK(double(fusor::max(fusor::abs(c.centroids() - r.centroids()))) < 1e-4);
    const index_t wc = c.refine(x, y, 1.0, 1);
    CHECK(wc == r.refine(xr, y, 1.0, 1));
    CHECK(wc > 0);
    CHECK(double(fusor::max(fusor::abs(c.centroids() - r.centroids()))) < 1e-3);
    CHECK(host_values(c.predict(x)) == host_values(r.predict(xr)));
    MESSAGE("MCR centroids, 93% of the values redrawn: accuracy " << c.accuracy(x, y) << " after " << wc << " corrections");
    CHECK(c.accuracy(x, y) >= 0.8);
  }
  // BSDC (0/1 bits), CGR and block codes learn the prototypes too
  {
    const vsa::bsdc m(2000);
    auto [x, y] = noisy_prototypes(m, n, k, 0.3);
    vsa::centroid_classifier<vsa::bsdc, B> c(m, k);
    c.fit(x, y);
    CHECK(c.accuracy(x, y) >= 0.95);
  }
  {
    const vsa::cgr m(300, 5);
    auto [x, y] = noisy_prototypes(m, n, k, 0.6);
    vsa::centroid_classifier<vsa::cgr, B> c(m, k);
    c.fit(x, y);
    CHECK(c.accuracy(x, y) >= 0.95);
  }
  {
    const vsa::bsbc m(200, 16);
    auto [x, y] = noisy_prototypes(m, n, k, 0.6);
    vsa::centroid_classifier<vsa::bsbc, B> c(m, k);
    c.fit(x, y);
    c.refine(x, y);
    CHECK(c.accuracy(x, y) >= 0.95);
  }
  CHECK_THROWS_WITH_AS((vsa::centroid_classifier<vsa::bsdc_seg, B>(vsa::bsdc_seg(100), 3)),
                       doctest::Contains("BSDC-SEG vectors cannot be summed into centroids"), fusor::value_error);
  vsa::centroid_classifier<vsa::bsc, B> c(vsa::bsc(128), 2);
  CHECK_THROWS_AS(c.fit(fusor::zeros<std::uint64_t, B>(fusor::extents{3, 3}), test::on<B>(std::vector<std::int64_t>{0, 1, 0})),
                  fusor::shape_error);
  CHECK_THROWS_AS(c.scores(fusor::zeros<std::uint64_t, B>(fusor::extents{3, 3})), fusor::shape_error);
}

}  // namespace vsalearn
