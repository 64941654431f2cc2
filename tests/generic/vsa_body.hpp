// VSA test bodies written once and instantiated per backend: tests/test_vsa.cpp runs them on cpu,
// tests/test_vsa_cuda.cu on cuda. Every result is compared with a plain host loop over the
// unpacked elements (bits, reals, complex numbers in double), a closed form or a stated
// retrieval property, never with the code under test.
//
// The includer defines TEST_BACKEND (fusor::cpu or fusor::cuda) before including this file.
#include "../common.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <filesystem>
#include <numbers>
#include <vector>

namespace vsabody {

using fusor::index_t;
using B = TEST_BACKEND;
namespace vsa = fusor::vsa;
using test::host_values;

using all_models = std::tuple<vsa::map_b, vsa::map_i, vsa::map_c, vsa::bsc, vsa::fhrr, vsa::hrr>;

/// The model's vectors as doubles per dimension (BSC: bits as bipolar +1/-1; FHRR: complex),
/// from the host copy: the references below work on these.
template <class M>
auto unpacked(const M& m, const std::vector<typename M::value_type>& h, index_t rows) {
  using T = typename M::value_type;
  if constexpr (std::is_same_v<M, vsa::bsc>) {
    std::vector<double> r(std::size_t(rows * m.dim()));
    for (index_t i = 0; i < rows; ++i)
      for (index_t j = 0; j < m.dim(); ++j)
        r[std::size_t(i * m.dim() + j)] = ((h[std::size_t(i * m.width() + j / 64)] >> (j % 64)) & 1u) ? -1.0 : 1.0;
    return r;
  } else if constexpr (std::is_same_v<T, std::uint64_t>) {  // the sparse codes: bits as 0 and 1
    std::vector<double> r(std::size_t(rows * m.dim()));
    for (index_t i = 0; i < rows; ++i)
      for (index_t j = 0; j < m.dim(); ++j)
        r[std::size_t(i * m.dim() + j)] = double((h[std::size_t(i * m.width() + j / 64)] >> (j % 64)) & 1u);
    return r;
  } else if constexpr (fusor::is_complex_v<T>) {
    std::vector<std::complex<double>> r(h.begin(), h.end());
    return r;
  } else {
    std::vector<double> r(h.begin(), h.end());
    return r;
  }
}

/// Cosine and dot of two rows of doubles (complex: Re <a, conj b>).
template <class V>
std::pair<double, double> cos_dot(const V* a, const V* b, index_t n) {
  double dot = 0, na = 0, nb = 0;
  for (index_t j = 0; j < n; ++j) {
    if constexpr (fusor::is_complex_v<V>) {
      dot += (a[j] * std::conj(b[j])).real();
      na += std::norm(a[j]);
      nb += std::norm(b[j]);
    } else {
      dot += a[j] * b[j];
      na += a[j] * a[j];
      nb += b[j] * b[j];
    }
  }
  const double den = std::sqrt(na) * std::sqrt(nb);
  return {den > 0 ? dot / den : 0.0, dot};
}

/// A model of about d dimensions: VTB needs a square, GHRR d / 4 blocks of 2 x 2.
template <class M>
M about(index_t d) {
  if constexpr (std::is_same_v<M, vsa::vtb>) {
    const auto s = index_t(std::lround(std::sqrt(double(d))));
    return M(s * s);
  } else if constexpr (std::is_same_v<M, vsa::ghrr>) {
    return M(d / 4, 2);
  } else {
    return M(d);
  }
}

/// Capacity: the bundle of a memory's first k items has exactly those k as its top k.
template <class M>
bool bundled_are_top(const M& m, const vsa::item_memory<M, B>& mem, index_t k) {
  const auto top = mem.query(vsa::bundle(m, mem.items()(fusor::range(0, k), fusor::all)), k);
  auto idx = host_values(top.indices);
  std::sort(idx.begin(), idx.end());
  bool members = true;
  for (index_t i = 0; i < k; ++i) members = members && idx[std::size_t(i)] == i;
  return members;
}

template <class M>
double sim1(const M& m, const fusor::array<typename M::value_type, B>& a, const fusor::array<typename M::value_type, B>& b) {
  return double(host_values(vsa::similarity(m, a, b))[0]);
}

// ---- random ------------------------------------------------------------------------------------

TEST_CASE_TEMPLATE("vsa random: rows keyed by (seed, index), reproducible, in the model's domain", M, vsa::map_b,
                   vsa::map_i, vsa::map_c, vsa::bsc, vsa::fhrr, vsa::hrr) {
  for (index_t d : {index_t(1), index_t(7), index_t(63), index_t(64), index_t(65), index_t(1001)}) {
    CAPTURE(d);
    const M m(d);
    const auto a = host_values(vsa::random<B>(m, 10, 42));
    const auto b = host_values(vsa::random<B>(m, 5, 42));
    const auto c = host_values(vsa::random<B>(m, 5, 42, 5));  // rows 5..9
    REQUIRE(a.size() == std::size_t(10 * m.width()));
    CHECK(std::equal(b.begin(), b.end(), a.begin()));
    CHECK(std::equal(c.begin(), c.end(), a.begin() + 5 * m.width()));
    CHECK(host_values(vsa::random<B>(m, 10, 43)) != a);
    // the same rows on the cpu backend (for cuda: the same vectors on every backend)
    const auto h = host_values(vsa::random<fusor::cpu>(m, 10, 42));
    bool same = true;
    for (std::size_t i = 0; i < a.size(); ++i) same = same && test::close(a[i], h[i], 1e-6);
    CHECK(same);
    // the domain
    const auto u = unpacked(m, a, 10);
    double sum = 0, sumsq = 0;
    bool in_domain = true;
    for (const auto& x : u) {
      if constexpr (std::is_same_v<M, vsa::map_b> || std::is_same_v<M, vsa::map_i> || std::is_same_v<M, vsa::bsc>)
        in_domain = in_domain && (x == 1.0 || x == -1.0);
      else if constexpr (std::is_same_v<M, vsa::map_c>)
        in_domain = in_domain && x >= -1.0 && x < 1.0;
      else if constexpr (std::is_same_v<M, vsa::fhrr>)
        in_domain = in_domain && std::abs(std::abs(x) - 1.0) < 1e-6;
      if constexpr (!fusor::is_complex_v<std::decay_t<decltype(x)>>) {
        sum += x;
        sumsq += x * x;
      }
    }
    CHECK(in_domain);
    if constexpr (std::is_same_v<M, vsa::bsc>) {  // the bits past d stay clear
      bool pads_clear = true;
      for (index_t i = 0; i < 10; ++i)
        pads_clear = pads_clear && (a[std::size_t(i * m.width() + m.width() - 1)] & ~fusor::vsa::detail::valid_bits(
                                                                                   m.width() - 1, m.width(), d)) == 0;
      CHECK(pads_clear);
    }
    if (d == 1001 && !std::is_same_v<M, vsa::fhrr>) {  // moments of 10 010 draws
      const double n = double(u.size()), mean = sum / n, var = sumsq / n - mean * mean;
      const double want_var = std::is_same_v<M, vsa::hrr> ? 1.0 / double(d) : std::is_same_v<M, vsa::map_c> ? 1.0 / 3 : 1.0;
      CHECK(std::abs(mean) < 5 * std::sqrt(want_var / n));
      CHECK(var == doctest::Approx(want_var).epsilon(0.05));
    }
  }
  CHECK_THROWS_AS(M(0), fusor::value_error);
  CHECK_THROWS_AS(vsa::random<B>(M(8), -1, 1), fusor::value_error);
  CHECK(vsa::random<B>(M(8), 0, 1).shape() == fusor::extents{0, M(8).width()});
}

TEST_CASE("vsa random: MAP-B and BSC from one seed are the same bits; thread counts do not matter") {
  const index_t d = 10'007;
  const auto mb = host_values(vsa::random<B>(vsa::map_b(d), 3, 7));
  const auto bits = unpacked(vsa::bsc(d), host_values(vsa::random<B>(vsa::bsc(d), 3, 7)), 3);
  CHECK(std::equal(mb.begin(), mb.end(), bits.begin(), [](float x, double y) { return double(x) == y; }));
  const auto before = fusor::num_threads();
  const auto thr = fusor::parallel_threshold();
  fusor::set_parallel_threshold(1);
  fusor::set_num_threads(1);
  const auto one = host_values(vsa::random<B>(vsa::hrr(d), 40, 9));
  const auto one_f = host_values(vsa::random<B>(vsa::fhrr(d), 40, 9));
  fusor::set_num_threads(2);
  const auto two = host_values(vsa::random<B>(vsa::hrr(d), 40, 9));
  const auto two_f = host_values(vsa::random<B>(vsa::fhrr(d), 40, 9));
  const auto some = host_values(vsa::random<B>(vsa::hrr(d), 3, 9, 37));  // rows 37..39 alone
  fusor::set_num_threads(before);
  fusor::set_parallel_threshold(thr);
  CHECK(one == two);
  CHECK(one_f == two_f);
  CHECK(std::equal(some.begin(), some.end(), one.begin() + 37 * d));
}

// ---- bind, inverse, unbind ----------------------------------------------------------------------

TEST_CASE_TEMPLATE("vsa bind: against a plain loop, commutative and invertible as the traits say", M, vsa::map_b,
                   vsa::map_i, vsa::map_c, vsa::bsc, vsa::fhrr, vsa::hrr) {
  for (index_t d : {index_t(1), index_t(2), index_t(9), index_t(64), index_t(65), index_t(257)}) {
    CAPTURE(d);
    const M m(d);
    const index_t n = 3;
    const auto a = vsa::random<B>(m, n, 1), b = vsa::random<B>(m, n, 2);
    const auto c = vsa::bind(m, a, b);
    REQUIRE(c.shape() == a.shape());
    const auto ua = unpacked(m, host_values(a), n), ub = unpacked(m, host_values(b), n),
               uc = unpacked(m, host_values(c), n);
    bool ok = true;
    for (index_t i = 0; i < n; ++i)
      for (index_t j = 0; j < d; ++j) {
        const auto k = std::size_t(i * d + j);
        if constexpr (std::is_same_v<M, vsa::hrr>) {  // circular convolution, directly
          double s = 0;
          for (index_t t = 0; t < d; ++t)
            s += ua[std::size_t(i * d + t)] * ub[std::size_t(i * d + (j - t + d) % d)];
          ok = ok && std::abs(uc[k] - s) < 1e-5;
        } else {  // elementwise product (BSC: XOR is the product of the bipolar values)
          ok = ok && std::abs(uc[k] - ua[k] * ub[k]) < 1e-6;
        }
      }
    CHECK(ok);
    // one vector broadcast against a batch
    const auto c1 = host_values(vsa::bind(m, a, b(fusor::range(0, 1), fusor::all)));
    const auto c0 = host_values(vsa::bind(m, a(fusor::range(1, 2), fusor::all), b(fusor::range(0, 1), fusor::all)));
    CHECK(std::equal(c0.begin(), c0.end(), c1.begin() + m.width(),
                     [](auto u, auto v) { return test::close(u, v, 1e-6); }));  // HRR: other FFT plans
    if constexpr (M::commutative) CHECK(host_values(vsa::bind(m, b, a)) == host_values(c));
    if constexpr (M::self_inverse && M::exact_inverse)
      CHECK(host_values(vsa::bind(m, a, a)) == host_values(vsa::identity<B>(m, n)));
    // identity
    const auto id = vsa::identity<B>(m, 1);
    const auto ia = unpacked(m, host_values(vsa::bind(m, a, id)), n), ra = unpacked(m, host_values(a), n);
    bool same = true;
    for (std::size_t k = 0; k < ia.size(); ++k) same = same && std::abs(ia[k] - ra[k]) < 1e-5;
    CHECK(same);
    // unbind recovers the operand
    const auto r = vsa::unbind(m, c, b);
    const auto ur = unpacked(m, host_values(r), n);
    if constexpr (M::exact_inverse) {
      bool exact = true;
      for (std::size_t k = 0; k < ur.size(); ++k) exact = exact && std::abs(ur[k] - ua[k]) < 1e-5;
      CHECK(exact);
    }
    if (d >= 257) {
      for (index_t i = 0; i < n; ++i) {
        const double cs = cos_dot(ur.data() + i * d, ua.data() + i * d, d).first;
        if constexpr (std::is_same_v<M, vsa::hrr>) CHECK(cs > 0.55);       // Plate: about 1/sqrt(2)
        else if constexpr (std::is_same_v<M, vsa::map_c>) CHECK(cs > 0.65);  // a * b^2: about sqrt(45)/9
        else CHECK(cs > 0.999);
      }
    }
  }
}

TEST_CASE("vsa HRR: exact and approximate inverses") {
  const vsa::hrr m(2000);
  const auto a = vsa::random<B>(m, 4, 3), b = vsa::random<B>(m, 4, 4);
  const auto c = vsa::bind(m, a, b);
  const auto exact = vsa::unbind(m, c, b, vsa::inverse_kind::exact);
  const auto ha = host_values(a), he = host_values(exact);
  double worst = 0;
  for (std::size_t k = 0; k < ha.size(); ++k) worst = std::max(worst, double(std::abs(ha[k] - he[k])));
  CHECK(worst < 2e-3);  // spectra of random vectors keep away from 0; float FFTs
  // the approximate inverse is the involution a[-i mod d]
  const auto inv = host_values(vsa::inverse(m, a));
  bool inv_ok = true;
  for (index_t i = 0; i < 4; ++i)
    for (index_t j = 0; j < m.dim(); ++j)
      inv_ok = inv_ok && inv[std::size_t(i * m.dim() + j)] == ha[std::size_t(i * m.dim() + (m.dim() - j) % m.dim())];
  CHECK(inv_ok);
  // bind with the exact inverse is the identity
  const auto e = host_values(vsa::bind(m, a, vsa::inverse(m, a, vsa::inverse_kind::exact)));
  CHECK(std::abs(e[0] - 1.0f) < 1e-3);
  CHECK(std::abs(e[1]) < 1e-3);
}

// ---- bundle -------------------------------------------------------------------------------------

TEST_CASE_TEMPLATE("vsa bundle: against a plain loop, with ties and normalisations", M, vsa::map_b, vsa::map_i,
                   vsa::map_c, vsa::bsc, vsa::fhrr, vsa::hrr) {
  for (index_t d : {index_t(1), index_t(63), index_t(64), index_t(65), index_t(200)}) {
    for (index_t n : {index_t(1), index_t(2), index_t(4), index_t(5)}) {
      CAPTURE(d);
      CAPTURE(n);
      const M m(d);
      const auto x = vsa::random<B>(m, 2 * n, 11);  // (2, n, w) below: two bundles at once
      const auto x3 = fusor::reshape(x, fusor::extents{2, n, m.width()});
      const auto s = vsa::bundle(m, x3);
      REQUIRE(s.shape() == (fusor::extents{2, m.width()}));
      const auto u = unpacked(m, host_values(x), 2 * n), us = unpacked(m, host_values(s), 2);
      bool ok = true;
      for (index_t g = 0; g < 2; ++g)
        for (index_t j = 0; j < d; ++j) {
          using V = std::decay_t<decltype(u[0])>;
          V acc{};
          for (index_t r = 0; r < n; ++r) acc += u[std::size_t((g * n + r) * d + j)];
          const V first = u[std::size_t(g * n * d + j)];
          V want = acc;
          if constexpr (std::is_same_v<M, vsa::map_b> || std::is_same_v<M, vsa::bsc>)
            want = acc > 0 ? 1.0 : acc < 0 ? -1.0 : first;
          else if constexpr (std::is_same_v<M, vsa::map_c>)
            want = std::clamp(acc, -1.0, 1.0);
          else if constexpr (std::is_same_v<M, vsa::fhrr>)
            want = std::abs(acc) > 0 ? acc / std::abs(acc) : V(1.0);
          ok = ok && std::abs(us[std::size_t(g * d + j)] - want) < 1e-4;
        }
      CHECK(ok);
    }
  }
  const M m(100);
  CHECK_THROWS_AS(vsa::bundle(m, vsa::random<B>(m, 0, 1)), fusor::value_error);  // empty bundle
  const auto single = vsa::random<B>(m, 1, 1);
  CHECK_THROWS_AS(vsa::bundle(m, single(0, fusor::all)), fusor::shape_error);  // one row, no axis to bundle
}

TEST_CASE("vsa bundle: seeded random ties are reproducible and differ from first-operand ties") {
  const vsa::bsc m(1000);
  const auto x = vsa::random<B>(m, 2, 5);
  vsa::bundle_options o;
  o.ties = vsa::tie_break::random;
  o.seed = 77;
  const auto r1 = host_values(vsa::bundle(m, x, o)), r2 = host_values(vsa::bundle(m, x, o));
  CHECK(r1 == r2);
  CHECK(r1 != host_values(vsa::bundle(m, x)));
  // where the two agree, the majority is theirs; where they differ, about half go each way
  const auto u = unpacked(m, host_values(x), 2), ur = unpacked(m, r1, 1);
  index_t agree_ok = 0, agree = 0, from_first = 0, ties = 0;
  for (index_t j = 0; j < 1000; ++j) {
    if (u[std::size_t(j)] == u[std::size_t(1000 + j)]) {
      ++agree;
      agree_ok += ur[std::size_t(j)] == u[std::size_t(j)];
    } else {
      ++ties;
      from_first += ur[std::size_t(j)] == u[std::size_t(j)];
    }
  }
  CHECK(agree_ok == agree);
  CHECK(std::abs(double(from_first) - ties / 2.0) < 4 * std::sqrt(ties / 4.0));
  // MAP-B too
  const vsa::map_b mb(1000);
  const auto y = vsa::random<B>(mb, 2, 5);
  vsa::bundle_options ob;
  ob.ties = vsa::tie_break::random;
  CHECK(host_values(vsa::bundle(mb, y, ob)) == host_values(vsa::bundle(mb, y, ob)));
  CHECK_THROWS_AS(vsa::bundle(m, x, vsa::bundle_options{vsa::normalization::none}), fusor::value_error);
  // MAP-I sums exactly; bundle_counts of BSC counts set bits
  const vsa::map_i mi(50);
  const auto z = vsa::random<B>(mi, 7, 1);
  const auto zs = host_values(vsa::bundle(mi, z)), zh = host_values(z);
  bool sums = true;
  for (index_t j = 0; j < 50; ++j) {
    int acc = 0;
    for (index_t r = 0; r < 7; ++r) acc += zh[std::size_t(r * 50 + j)];
    sums = sums && zs[std::size_t(j)] == acc;
  }
  CHECK(sums);
  const auto counts = host_values(vsa::bundle_counts(m, x));
  bool counted = true;
  for (index_t j = 0; j < 1000; ++j)
    counted = counted && counts[std::size_t(j)] == (u[std::size_t(j)] < 0) + (u[std::size_t(1000 + j)] < 0);
  CHECK(counted);
}

TEST_CASE_TEMPLATE("vsa capacity: 100 bundled items of 1000 are the top 100 at d = 10 000", M, vsa::map_b, vsa::map_i,
                   vsa::map_c, vsa::bsc, vsa::fhrr, vsa::hrr, vsa::vtb, vsa::mbat, vsa::mcr, vsa::cgr, vsa::bsbc) {
  const M m(10'000);
  CHECK(bundled_are_top(m, vsa::item_memory<M, B>::random(m, 1000, 2024), 100));
}

// ---- half precision --------------------------------------------------------------------------------

// MAP-C, MAP-B, HRR and MBAT over float16 and bfloat16 rows: the rows are the float32 model's rounded, bind is
// the float32 bind of the widened rows rounded once, similarity is float32's within a unit of the
// 16-bit type, and 100 bundled items of 1000 are still the top 100 at d = 10 000.
template <class H, class M16, class M32>
void check_half_model() {
  const index_t d = 1001;  // odd: the FFT's and the SIMD loop's tails
  const M16 m(d);
  const M32 f(d);
  const auto a = vsa::random<B>(m, 4, 11), b = vsa::random<B>(m, 4, 12);
  static_assert(std::is_same_v<fusor::value_t<decltype(a)>, H>);
  const auto af = vsa::random<B>(f, 4, 11), bf = vsa::random<B>(f, 4, 12);
  const auto ha = host_values(a), hb = host_values(b);
  const auto hfa = host_values(af), hfb = host_values(bf);
  bool rounded = true;
  for (std::size_t i = 0; i < ha.size(); ++i) rounded = rounded && ha[i].bits == H(hfa[i]).bits && hb[i].bits == H(hfb[i]).bits;
  CHECK(rounded);
  // bind: the float32 model's bind of the widened rows, rounded once
  const fusor::array<float, B> wa = a.template astype<float>(), wb = b.template astype<float>();
  const auto c = vsa::bind(m, a, b);
  static_assert(std::is_same_v<fusor::value_t<decltype(c)>, H>);
  const auto hc = host_values(c);
  const auto want = host_values(vsa::bind(f, wa, wb));
  bool bound = true;
  for (std::size_t i = 0; i < hc.size(); ++i) bound = bound && hc[i].bits == H(want[i]).bits;
  CHECK(bound);
  // similarity of every pair (a GEMM) and of one query against a batch (one pass): float32's of the
  // widened rows within a unit of H (the GEMM rounds the dot products, the quotient rounds again)
  const double unit = std::is_same_v<H, fusor::float16> ? 0x1p-10 : 0x1p-7;
  const auto s = host_values(vsa::similarity(m, a, c));
  const auto sw = host_values(vsa::similarity(f, wa, c.template astype<float>()));
  const auto s1 = host_values(vsa::similarity(m, a(0, fusor::all), c));
  bool close = true;
  for (std::size_t i = 0; i < s.size(); ++i) close = close && std::abs(double(float(s[i])) - double(sw[i])) <= unit;
  for (std::size_t i = 0; i < s1.size(); ++i) close = close && std::abs(double(float(s1[i])) - double(sw[i])) <= unit;
  CHECK(close);
  // capacity, with the bundle accumulated in float32
  const M16 big(10'000);
  CHECK(bundled_are_top(big, vsa::item_memory<M16, B>::random(big, 1000, 2024), 100));
}

TEST_CASE_TEMPLATE("vsa in float16 and bfloat16: MAP-C, MAP-B, HRR and MBAT compute in float32 and round once", H,
                   fusor::float16, fusor::bfloat16) {
  check_half_model<H, vsa::map_c_of<H>, vsa::map_c>();
  check_half_model<H, vsa::map_b_of<H>, vsa::map_b>();
  check_half_model<H, vsa::hrr_of<H>, vsa::hrr>();
  check_half_model<H, vsa::mbat_of<H>, vsa::mbat>();
  // MBAT's left unbind of 16-bit rows: float32's of the widened rows, rounded once
  const vsa::mbat_of<H> m(1001);
  const auto a = vsa::random<B>(m, 3, 21), b = vsa::random<B>(m, 3, 22);
  const auto c = vsa::bind(m, a, b), u = vsa::unbind_left(m, c, a);
  const auto want = host_values(vsa::unbind_left(vsa::mbat(1001), c.template astype<float>(), a.template astype<float>()));
  const auto hu = host_values(u);
  bool same = true;
  for (std::size_t i = 0; i < hu.size(); ++i) same = same && hu[i].bits == H(want[i]).bits;
  CHECK(same);
}

// ---- permute -------------------------------------------------------------------------------------

TEST_CASE_TEMPLATE("vsa permute: np.roll of the d dimensions, any shift, undone by unpermute", M, vsa::map_b, vsa::bsc,
                   vsa::bsdc, vsa::fhrr, vsa::hrr) {
  for (index_t d : {index_t(1), index_t(63), index_t(64), index_t(65), index_t(130)}) {
    const M m(d);
    const auto x = vsa::random<B>(m, 3, 8);
    const auto u = unpacked(m, host_values(x), 3);
    for (index_t shift : {index_t(0), index_t(1), index_t(-1), index_t(63), index_t(64), index_t(65), d - 1, 2 * d + 3}) {
      CAPTURE(d);
      CAPTURE(shift);
      const auto p = vsa::permute(m, x, shift);
      const auto up = unpacked(m, host_values(p), 3);
      bool ok = true;
      for (index_t i = 0; i < 3; ++i)
        for (index_t j = 0; j < d; ++j)
          ok = ok && up[std::size_t(i * d + j)] == u[std::size_t(i * d + (((j - shift) % d) + d) % d)];
      CHECK(ok);
      CHECK(host_values(vsa::unpermute(m, p, shift)) == host_values(x));
    }
  }
}

// ---- similarity ------------------------------------------------------------------------------------

TEST_CASE_TEMPLATE("vsa similarity: (Q, N) in one pass against a plain loop, every metric", M, vsa::map_b, vsa::map_i,
                   vsa::map_c, vsa::bsc, vsa::fhrr, vsa::hrr) {
  for (index_t d : {index_t(1), index_t(7), index_t(64), index_t(65), index_t(1001)}) {
    for (auto [nq, nx] : {std::pair<index_t, index_t>{3, 5}, {1, 1}, {0, 4}, {4, 0}, {6, 9}}) {
      CAPTURE(d);
      CAPTURE(nq);
      CAPTURE(nx);
      const M m(d);
      const auto q = vsa::random<B>(m, nq, 1), x = vsa::random<B>(m, nx, 2);
      const auto uq = unpacked(m, host_values(q), nq), ux = unpacked(m, host_values(x), nx);
      std::vector<vsa::metric> metrics{vsa::metric::cosine, vsa::metric::dot};
      if constexpr (std::is_same_v<M, vsa::bsc>) {
        metrics.push_back(vsa::metric::hamming);
        metrics.push_back(vsa::metric::overlap);
      }
      for (vsa::metric s : metrics) {
        const auto r = vsa::similarity(m, q, x, s);
        REQUIRE(r.shape() == (fusor::extents{nq, nx}));
        const auto hr = host_values(r);
        bool ok = true;
        for (index_t i = 0; i < nq; ++i)
          for (index_t j = 0; j < nx; ++j) {
            auto [c, dot] = cos_dot(uq.data() + i * d, ux.data() + j * d, d);
            double want = s == vsa::metric::cosine ? c : dot;
            if (s == vsa::metric::hamming) want = 1.0 - (double(d) - dot) / 2.0 / double(d);
            if constexpr (std::is_same_v<M, vsa::bsc>) {
              if (s == vsa::metric::overlap) {  // both bits set: both bipolar values -1
                want = 0;
                for (index_t t = 0; t < d; ++t)
                  want += uq[std::size_t(i * d + t)] < 0 && ux[std::size_t(j * d + t)] < 0;
              }
            }
            ok = ok && std::abs(hr[std::size_t(i * nx + j)] - want) <= 1e-4 * std::max(1.0, std::abs(want));
          }
        CHECK(ok);
      }
    }
  }
  const M m(100);
  const auto a = vsa::random<B>(m, 2, 1);
  CHECK(vsa::similarity(m, a(0, fusor::all), a).shape() == fusor::extents{2});
  CHECK(vsa::similarity(m, a(0, fusor::all), a(1, fusor::all)).shape() == fusor::extents{});
  CHECK(sim1(m, a, a) == doctest::Approx(M::similarity_hi).epsilon(1e-5));
  const auto neg = vsa::negative(m, a);
  CHECK(double(host_values(vsa::similarity(m, neg(0, fusor::all), a(0, fusor::all)))[0]) ==
        doctest::Approx(M::similarity_lo).epsilon(1e-5));
  // bad input: dimensions, metrics, ranks
  const M other(200);  // (BSC: a dimension of another word count; 99 and 100 bits look alike)
  CHECK_THROWS_AS(vsa::similarity(m, a, vsa::random<B>(other, 2, 1)), fusor::shape_error);
  CHECK_THROWS_AS(vsa::bind(m, a, vsa::random<B>(other, 2, 1)), fusor::shape_error);
  if constexpr (!std::is_same_v<M, vsa::bsc>) CHECK_THROWS_AS(vsa::similarity(m, a, a, vsa::metric::hamming), fusor::value_error);
  CHECK_THROWS_AS(vsa::similarity(m, fusor::reshape(a, fusor::extents{1, 2, m.width()}), a), fusor::shape_error);
  try {
    (void)vsa::bind(m, a, vsa::random<B>(other, 2, 1));
  } catch (const fusor::shape_error& e) {
    CHECK(std::string(e.what()).find(std::string(M::name)) != std::string::npos);
  }
}

// ---- sequences, powers, memories -----------------------------------------------------------------

TEST_CASE_TEMPLATE("vsa multibind and sequences: folds of bind and bundle over permuted rows", M, vsa::map_b, vsa::bsc,
                   vsa::fhrr, vsa::hrr, vsa::mbat) {
  const M m(129);
  const auto x = vsa::random<B>(m, 4, 6);
  auto fold = vsa::bind(m, x(fusor::range(0, 1), fusor::all), x(fusor::range(1, 2), fusor::all));
  for (index_t i = 2; i < 4; ++i) fold = vsa::bind(m, fold, x(fusor::range(i, i + 1), fusor::all));
  const auto mb = vsa::multibind(m, x);
  const auto um = unpacked(m, host_values(mb), 1), uf = unpacked(m, host_values(fold), 1);
  bool ok = true;
  for (std::size_t k = 0; k < um.size(); ++k) ok = ok && std::abs(um[k] - uf[k]) < 1e-4;
  CHECK(ok);
  // bind_sequence: permute(x0, 3) * permute(x1, 2) * permute(x2, 1) * x3
  auto seq = vsa::permute(m, x(fusor::range(0, 1), fusor::all), 3);
  for (index_t i = 1; i < 4; ++i) seq = vsa::bind(m, seq, vsa::permute(m, x(fusor::range(i, i + 1), fusor::all), 3 - i));
  const auto us = unpacked(m, host_values(seq), 1), ub = unpacked(m, host_values(vsa::bind_sequence(m, x)), 1);
  bool ok2 = true;
  for (std::size_t k = 0; k < us.size(); ++k) ok2 = ok2 && std::abs(us[k] - ub[k]) < 1e-4;
  CHECK(ok2);
  // bundle_sequence: the last element is the unshifted one, the first shifted by n - 1
  const auto bs = vsa::bundle_sequence(m, x);
  CHECK(sim1(m, bs, vsa::permute(m, x(fusor::range(0, 1), fusor::all), 3)) > sim1(m, bs, x(fusor::range(0, 1), fusor::all)));
  CHECK_THROWS_AS(vsa::multibind(m, x(0, fusor::all)), fusor::shape_error);
}

TEST_CASE("vsa fractional power: exponents add under bind (FHRR, HRR)") {
  const vsa::fhrr f(500);
  const auto x = vsa::random<B>(f, 2, 3);
  const auto lhs = vsa::bind(f, vsa::fractional_power(f, x, 0.3), vsa::fractional_power(f, x, 0.45));
  CHECK(sim1(f, lhs, vsa::fractional_power(f, x, 0.75)) > 0.999);
  CHECK(sim1(f, vsa::fractional_power(f, x, 1.0), x) > 0.9999);
  CHECK(sim1(f, vsa::fractional_power(f, x, 0.0), vsa::identity<B>(f)) > 0.9999);
  const vsa::hrr h(501);
  const auto y = vsa::random<B>(h, 1, 4);
  CHECK(sim1(h, vsa::fractional_power(h, y, 1.0), y) > 0.999);
  const auto hl = vsa::bind(h, vsa::fractional_power(h, y, 2.0), vsa::fractional_power(h, y, 1.0));
  CHECK(sim1(h, hl, vsa::bind(h, vsa::bind(h, y, y), y)) > 0.999);
}

TEST_CASE("vsa BSC: pack and unpack are inverse; bits past d stay clear") {
  for (index_t d : {index_t(1), index_t(64), index_t(100)}) {
    const vsa::bsc m(d);
    const auto x = vsa::random<B>(m, 3, 1);
    // the reference bits, unpacked by a host loop (bit j of word j / 64)
    const auto ref = unpacked(m, host_values(x), 3);
    std::vector<std::uint8_t> ref_bits(ref.size());
    for (std::size_t k = 0; k < ref.size(); ++k) ref_bits[k] = ref[k] < 0 ? 1 : 0;
    CHECK(host_values(m.unpack(x)) == ref_bits);
    CHECK(host_values(m.pack(test::on<B>(ref_bits, fusor::extents{3, d}))) == host_values(x));
    const auto neg = host_values(vsa::negative(m, x));
    CHECK((neg[std::size_t(m.width() - 1)] & ~vsa::detail::valid_bits(m.width() - 1, m.width(), d)) == 0);
    CHECK_THROWS_AS(m.unpack(vsa::random<B>(vsa::bsc(d + 64), 1, 1)), fusor::shape_error);
  }
  // rows from outside with bits set past d: a memory clears them, so similarities count d bits
  const vsa::bsc m(100);
  const auto ones = fusor::full<std::uint64_t, B>(fusor::extents{3, m.width()}, ~std::uint64_t(0));
  const vsa::item_memory<vsa::bsc, B> mem(m, ones.copy());
  CHECK(host_values(mem.items()) == host_values(vsa::negative(m, vsa::empty<B>(m, 3))));
  CHECK(host_values(mem.similarity(mem.items(), vsa::metric::overlap))[0] == 100.0f);
}

TEST_CASE_TEMPLATE("vsa item memory: add, top-k, cleanup, threshold, .npy round trip", M, vsa::map_b, vsa::bsc,
                   vsa::fhrr, vsa::hrr, vsa::mcr, vsa::cgr, vsa::bsbc) {
  using memory = vsa::item_memory<M, B>;
  const M m(2000);
  memory mem(m);
  CHECK(mem.size() == 0);
  CHECK_THROWS_AS(mem.similarity(vsa::random<B>(m, 1, 1)), fusor::value_error);
  CHECK_THROWS_WITH_AS(mem.query(vsa::random<B>(m, 1, 1)), doctest::Contains("holds no items"), fusor::value_error);
  CHECK(mem.add(vsa::random<B>(m, 20, 9)) == 0);
  const auto one = vsa::random<B>(m, 1, 9, 20);
  CHECK(mem.add(one(0, fusor::all)) == 20);
  REQUIRE(mem.size() == 21);
  // noisy copies of items 3 and 17 (bundled with two random vectors) clean up to the items
  const auto noise = vsa::random<B>(m, 4, 1234);
  fusor::array<typename M::value_type, B> q3(fusor::extents{3, m.width()}), q17(fusor::extents{3, m.width()});
  q3(fusor::range(0, 1), fusor::all) = mem[3];
  q3(fusor::range(1, 3), fusor::all) = noise(fusor::range(0, 2), fusor::all);
  q17(fusor::range(0, 1), fusor::all) = mem[17];
  q17(fusor::range(1, 3), fusor::all) = noise(fusor::range(2, 4), fusor::all);
  fusor::array<typename M::value_type, B> queries(fusor::extents{2, m.width()});
  queries(fusor::range(0, 1), fusor::all) = vsa::bundle(m, q3);
  queries(fusor::range(1, 2), fusor::all) = vsa::bundle(m, q17);
  CHECK(host_values(mem.nearest(queries)) == std::vector<std::int64_t>{3, 17});
  CHECK(host_values(mem.cleanup(queries)) == host_values(fusor::take(mem.items(), test::on<B>(std::vector<std::int64_t>{3, 17}), 0)));
  const auto top = mem.query(queries, 3);
  CHECK(top.values.shape() == fusor::extents{2, 3});
  {
    // on an explicit context: the same answers, the search's allocations told to its hook
    std::size_t made = 0;
    auto count = [&](const fusor::memory_event& e) { made += e.kind == fusor::memory_event::allocation; };
    fusor::context<B> c;
    c.on_memory = fusor::memory_hook(count);
    CHECK(host_values(mem.query(c, queries, 3).indices) == host_values(top.indices));
    CHECK(host_values(mem.cleanup(c, queries)) == host_values(mem.cleanup(queries)));
    CHECK(made > 0);
  }
  const auto tv = host_values(top.values);
  CHECK(tv[0] >= tv[1]);
  CHECK(tv[1] >= tv[2]);
  const auto w = host_values(mem.within(queries, 0.3 * M::similarity_hi + 0.7 * (M::similarity_lo + M::similarity_hi) / 2));
  CHECK(w[3]);
  CHECK(!w[4]);
  CHECK_THROWS_AS(mem.query(queries, 0), fusor::value_error);
  CHECK_THROWS_AS(mem.query(queries, 22), fusor::value_error);
  CHECK_THROWS_AS(mem[21], fusor::index_error);
  CHECK_THROWS_AS(mem.add(vsa::random<B>(M(1000), 1, 1)), fusor::shape_error);
  const auto path = std::filesystem::temp_directory_path() / ("fusor_vsa_memory_" + std::string(M::name) + ".npy");
  mem.save(path);
  const auto back = memory::load(m, path);
  CHECK(host_values(back.items()) == host_values(mem.items()));
  CHECK_THROWS_AS(memory::load(M(1000), path), fusor::shape_error);
  std::filesystem::remove(path);
}

// ---- superposition, resonators, associative memory, attention -------------------------------------

TEST_CASE_TEMPLATE("vsa superpose: the projected weighted sum, against a plain loop", M, vsa::map_b, vsa::bsc, vsa::fhrr,
                   vsa::hrr) {
  const index_t d = 67, n = 5, q = 3;
  const M m(d);
  const auto items = vsa::random<B>(m, n, 3);
  std::vector<float> wv(static_cast<std::size_t>(q * n));
  for (std::size_t k = 0; k < wv.size(); ++k) wv[k] = float(int(k * 7 % 11) - 5) / 4.0f;
  const auto w = test::on<B>(wv, fusor::extents{q, n});
  const auto r = vsa::superpose(m, w, items);
  REQUIRE(r.shape() == (fusor::extents{q, m.width()}));
  const auto ui = unpacked(m, host_values(items), n), ur = unpacked(m, host_values(r), q);
  bool ok = true;
  for (index_t i = 0; i < q; ++i) {
    using V = std::decay_t<decltype(ui[0])>;
    std::vector<V> acc(static_cast<std::size_t>(d));
    for (index_t j = 0; j < n; ++j)
      for (index_t t = 0; t < d; ++t) acc[std::size_t(t)] += double(wv[std::size_t(i * n + j)]) * ui[std::size_t(j * d + t)];
    double norm = 0;
    for (const auto& a : acc) norm += std::norm(a);
    for (index_t t = 0; t < d; ++t) {
      const V a = acc[std::size_t(t)];
      V want = a;
      if constexpr (std::is_same_v<M, vsa::map_b> || std::is_same_v<M, vsa::bsc>) want = a < 0 ? -1.0 : 1.0;
      else if constexpr (std::is_same_v<M, vsa::fhrr>) want = a / std::abs(a);
      else want = a / std::sqrt(norm);
      ok = ok && std::abs(ur[std::size_t(i * d + t)] - want) < 1e-4;
    }
  }
  CHECK(ok);
  CHECK(vsa::superpose(m, w(0, fusor::all), items).shape() == fusor::extents{m.width()});
  CHECK_THROWS_AS(vsa::superpose(m, w(fusor::all, fusor::range(0, 4)), items), fusor::shape_error);
}

TEST_CASE_TEMPLATE("vsa resonator: 3 factors from 3 codebooks of 20 items at d = 2000", M, vsa::map_b, vsa::bsc, vsa::fhrr,
                   vsa::mcr, vsa::cgr, vsa::bsbc, vsa::bsdc_seg, vsa::vtb, vsa::ghrr) {
  const M m = about<M>(2000);  // VTB 45 x 45, GHRR 500 blocks of 2 x 2 (their bind is not commutative:
                               // the products are left folds, factorised in order)
  using memory = vsa::item_memory<M, B>;
  std::vector<memory> books;
  for (std::uint64_t f = 0; f < 3; ++f) books.push_back(memory::random(m, 20, 100 + f));
  // 6 products of known factors, bound in one batched call per factor
  const std::vector<std::int64_t> truth[3] = {{0, 5, 19, 7, 3, 11}, {1, 1, 18, 0, 9, 4}, {2, 13, 17, 6, 6, 15}};
  auto product = fusor::take(books[0].items(), test::on<B>(truth[0]), 0);
  for (int f = 1; f < 3; ++f) product = vsa::bind(m, product, fusor::take(books[std::size_t(f)].items(), test::on<B>(truth[f]), 0));
  vsa::resonator_options o;
  o.max_iterations = 50;
  const auto r = vsa::resonate(m, product, books, o);
  CHECK(r.converged);
  CHECK(r.iterations <= 20);  // stated: a fixed point within 20 iterations
  MESSAGE(M::name, " soft, 3 factors: ", r.iterations, " iterations");
  for (int f = 0; f < 3; ++f) CHECK(host_values(r.indices[std::size_t(f)]) == truth[f]);
  // hard (winner-take-all) on two factors, where its first greedy step is reliable
  std::vector<memory> two;
  two.emplace_back(m, books[0].items().copy());
  two.emplace_back(m, books[1].items().copy());
  const auto pair = vsa::bind(m, fusor::take(books[0].items(), test::on<B>(truth[0]), 0),
                              fusor::take(books[1].items(), test::on<B>(truth[1]), 0));
  o.hard = true;
  const auto h = vsa::resonate(m, pair, two, o);
  CHECK(h.converged);
  CHECK(h.iterations <= 5);
  MESSAGE(M::name, " hard, 2 factors: ", h.iterations, " iterations");
  for (int f = 0; f < 2; ++f) CHECK(host_values(h.indices[std::size_t(f)]) == truth[f]);
  for (int f = 0; f < 2; ++f)  // a hard fixed point is made of codebook items
    CHECK(host_values(h.estimates[std::size_t(f)]) ==
          host_values(fusor::take(books[std::size_t(f)].items(), test::on<B>(truth[f]), 0)));
  // one product as a vector; bad input
  const auto one = fusor::take(product, test::on<B>(std::vector<std::int64_t>{2}), 0);
  const auto r1 = vsa::resonate(m, one(0, fusor::all), books);
  CHECK(host_values(r1.indices[0]) == std::vector<std::int64_t>{19});
  std::vector<memory> single;
  single.emplace_back(m, books[0].items().copy());
  CHECK_THROWS_AS(vsa::resonate(m, product, single), fusor::value_error);
  CHECK_THROWS_AS(vsa::resonate(m, vsa::random<B>(about<M>(100), 1, 1), books), fusor::shape_error);
  vsa::resonator_options zero;
  zero.max_iterations = 0;
  CHECK_THROWS_AS(vsa::resonate(m, product, books, zero), fusor::value_error);
  const auto none = vsa::resonate(m, vsa::random<B>(m, 0, 1), books);  // no products: nothing to do
  CHECK(none.converged);
  CHECK(none.iterations == 0);
  CHECK(none.indices[0].shape() == fusor::extents{0});
}

TEST_CASE_TEMPLATE("vsa associative memory and attention: noisy keys recall exact values", M, vsa::map_b, vsa::bsc,
                   vsa::fhrr, vsa::hrr, vsa::vtb, vsa::mbat, vsa::mcr, vsa::cgr, vsa::bsbc) {
  const M m(2025);  // 45 * 45, a square for VTB
  vsa::associative_memory<M, B> am(m);
  CHECK_THROWS_AS(am.recall(vsa::random<B>(m, 1, 1)), fusor::value_error);
  const auto keys = vsa::random<B>(m, 30, 1), values = vsa::random<B>(m, 30, 2);
  am.store(keys, values);
  REQUIRE(am.size() == 30);
  CHECK_THROWS_AS(am.store(keys, vsa::random<B>(m, 29, 2)), fusor::shape_error);
  vsa::associative_memory<M, B> single(m);  // one pair: a (width) key with a (1, width) value
  single.store(keys(0, fusor::all), values(fusor::range(0, 1), fusor::all));
  CHECK(single.size() == 1);
  // keys 4 and 22, each bundled with two random vectors
  fusor::array<typename M::value_type, B> noisy(fusor::extents{2, 3, m.width()});
  const auto noise = vsa::random<B>(m, 4, 77);
  noisy(0, fusor::range(0, 1), fusor::all) = keys(fusor::range(4, 5), fusor::all);
  noisy(0, fusor::range(1, 3), fusor::all) = noise(fusor::range(0, 2), fusor::all);
  noisy(1, fusor::range(0, 1), fusor::all) = keys(fusor::range(22, 23), fusor::all);
  noisy(1, fusor::range(1, 3), fusor::all) = noise(fusor::range(2, 4), fusor::all);
  const auto queries = vsa::bundle(m, noisy);
  CHECK(host_values(am.lookup(queries)) == std::vector<std::int64_t>{4, 22});
  const auto got = host_values(am.recall(queries));
  const auto want = host_values(fusor::take(values, test::on<B>(std::vector<std::int64_t>{4, 22}), 0));
  CHECK(got == want);
  // attention: a sharp softmax is the cleanup; every beta keeps the nearest item the most similar
  const auto& mem = am.keys();
  const auto sharp = mem.attend(queries, 1000.0);
  CHECK(host_values(mem.nearest(sharp)) == std::vector<std::int64_t>{4, 22});
  CHECK(sim1(m, sharp, keys(fusor::range(4, 5), fusor::all)) > 0.99 * M::similarity_hi);
  const auto soft = mem.attend(queries, 5.0);
  CHECK(host_values(mem.nearest(soft)) == std::vector<std::int64_t>{4, 22});
  CHECK_THROWS_AS(mem.attend(queries, 0.0), fusor::value_error);
}

}  // namespace vsabody
