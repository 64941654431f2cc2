// VSA test bodies for the models over integers modulo q (MCR, CGR, block codes), VTB, MBAT and the
// random permutations, written once per backend like vsa_body.hpp (which the includer includes
// first: TEST_BACKEND, the helpers). Every result is compared with a plain host loop (modular
// arithmetic in int, matrices and phasors in double), a closed form or a stated retrieval property.
#include <map>
#include <numeric>
#include <set>

namespace vsabody {

template <class M>
constexpr bool is_modular = std::is_same_v<M, vsa::mcr> || std::is_same_v<M, vsa::cgr> || std::is_same_v<M, vsa::bsbc>;

inline int mod_q(int x, int q) { return ((x % q) + q) % q; }
inline int mod_dist(int a, int b, int q) { return std::min(mod_q(a - b, q), mod_q(b - a, q)); }

template <class T>
std::vector<int> ints(const std::vector<T>& v) {
  return std::vector<int>(v.begin(), v.end());
}

// ---- modular models -------------------------------------------------------------------------------

TEST_CASE_TEMPLATE("vsa modular random: rows keyed by (seed, index), uniform over [0, q), the same on every backend", M,
                   vsa::mcr, vsa::cgr, vsa::bsbc) {
  for (index_t q : {index_t(2), index_t(3), index_t(16), index_t(M::max_modulus)}) {
    for (index_t d : {index_t(1), index_t(15), index_t(16), index_t(17), index_t(1001)}) {
      CAPTURE(q);
      CAPTURE(d);
      const M m(d, q);
      const auto a = ints(host_values(vsa::random<B>(m, 10, 42)));
      const auto b = ints(host_values(vsa::random<B>(m, 4, 42, 6)));  // rows 6..9
      REQUIRE(a.size() == std::size_t(10 * d));
      CHECK(std::equal(b.begin(), b.end(), a.begin() + 6 * d));
      CHECK(ints(host_values(vsa::random<fusor::cpu>(m, 10, 42))) == a);
      bool layout = true;  // element (row, col): 32 bits of Philox block col / 4 of stream row, onto [0, q)
      for (index_t row : {index_t(0), index_t(9)})
        for (index_t col : {index_t(0), std::min(index_t(3), d - 1), d / 2, d - 1}) {
          const auto w = fusor::random::block_words(42, std::uint64_t(row), std::uint64_t(col / 4));
          layout = layout && a[std::size_t(row * d + col)] == int((std::uint64_t(w[std::size_t(col % 4)]) * q) >> 32);
        }
      CHECK(layout);
      CHECK(std::all_of(a.begin(), a.end(), [&](int v) { return v >= 0 && v < q; }));
      if (d == 1001) {  // mean (q - 1) / 2 and variance (q^2 - 1) / 12 of 10 010 draws
        double s = 0, s2 = 0;
        for (int v : a) {
          s += v;
          s2 += double(v) * v;
        }
        const double n = double(a.size()), mean = s / n, var = s2 / n - mean * mean;
        const double want_var = (double(q) * q - 1) / 12;
        CHECK(std::abs(mean - (q - 1) / 2.0) < 5 * std::sqrt(want_var / n));
        CHECK(var == doctest::Approx(want_var).epsilon(0.05));
      }
    }
  }
  {  // thread counts do not matter
    const auto before = fusor::num_threads();
    const auto thr = fusor::parallel_threshold();
    fusor::set_parallel_threshold(1);
    fusor::set_num_threads(1);
    const auto one = host_values(vsa::random<B>(M(10'007), 40, 9));
    fusor::set_num_threads(2);
    const auto two = host_values(vsa::random<B>(M(10'007), 40, 9));
    fusor::set_num_threads(before);
    fusor::set_parallel_threshold(thr);
    CHECK(one == two);
  }
  CHECK_THROWS_AS(M(10, 1), fusor::value_error);
  CHECK_THROWS_AS(M(10, M::max_modulus + 1), fusor::value_error);
  CHECK_THROWS_WITH_AS(M(0, 4), doctest::Contains(std::string(M::name).c_str()), fusor::value_error);
  CHECK(M(5).modulus() == M::default_modulus);
}

TEST_CASE_TEMPLATE("vsa modular bind: addition modulo q against a loop, exact inverse, identity, negation", M, vsa::mcr,
                   vsa::cgr, vsa::bsbc) {
  for (index_t q : {index_t(2), index_t(7), index_t(M::max_modulus)}) {
    for (index_t d : {index_t(1), index_t(31), index_t(32), index_t(33), index_t(257)}) {
      CAPTURE(q);
      CAPTURE(d);
      const M m(d, q);
      const index_t n = 3;
      const auto a = vsa::random<B>(m, n, 1), b = vsa::random<B>(m, n, 2);
      const auto c = vsa::bind(m, a, b);
      const auto ha = ints(host_values(a)), hb = ints(host_values(b)), hc = ints(host_values(c));
      bool ok = true, inv_ok = true, neg_ok = true;
      const auto hi = ints(host_values(vsa::inverse(m, a))), hn = ints(host_values(vsa::negative(m, a)));
      for (std::size_t k = 0; k < ha.size(); ++k) {
        ok = ok && hc[k] == mod_q(ha[k] + hb[k], int(q));
        inv_ok = inv_ok && hi[k] == mod_q(-ha[k], int(q));
        neg_ok = neg_ok && hn[k] == mod_q(ha[k] + int(q) / 2, int(q));
      }
      CHECK(ok);
      CHECK(inv_ok);
      CHECK(neg_ok);
      CHECK(host_values(vsa::bind(m, b, a)) == host_values(c));
      CHECK(host_values(vsa::unbind(m, c, b)) == host_values(a));
      CHECK(host_values(vsa::unbind(m, c, a)) == host_values(b));
      CHECK(host_values(vsa::bind(m, a, vsa::inverse(m, a))) == host_values(vsa::identity<B>(m, n)));
      CHECK(host_values(vsa::bind(m, a, vsa::identity<B>(m))) == host_values(a));
      // one key broadcast against the batch
      const auto c1 = ints(host_values(vsa::bind(m, a, b(fusor::range(0, 1), fusor::all))));
      bool bc = true;
      for (index_t i = 0; i < n; ++i)
        for (index_t j = 0; j < d; ++j)
          bc = bc && c1[std::size_t(i * d + j)] == mod_q(ha[std::size_t(i * d + j)] + hb[std::size_t(j)], int(q));
      CHECK(bc);
      // multibind: the sum of the rows modulo q
      const auto mb = ints(host_values(vsa::multibind(m, a)));
      bool mok = true;
      for (index_t j = 0; j < d; ++j) {
        int s = 0;
        for (index_t i = 0; i < n; ++i) s += ha[std::size_t(i * d + j)];
        mok = mok && mb[std::size_t(j)] == mod_q(s, int(q));
      }
      CHECK(mok);
      // permute is np.roll
      const auto p = ints(host_values(vsa::permute(m, a, 5)));
      bool rok = true;
      for (index_t i = 0; i < n; ++i)
        for (index_t j = 0; j < d; ++j)
          rok = rok && p[std::size_t(i * d + j)] == ha[std::size_t(i * d + mod_q(int(j - 5), int(d)))];
      CHECK(rok);
    }
  }
  const M m(40, 8);
  CHECK_THROWS_AS(vsa::bind(m, vsa::random<B>(m, 2, 1), vsa::random<B>(M(41, 8), 2, 1)), fusor::shape_error);
}

/// The values tied in an MCR vote of `vals` (weights w): the one nearest the phasor sum (by atan2),
/// both neighbours when the angle is within 1e-6 of a half-step, every value when the sum is within
/// 1e-9 of zero (per unit of weight).
inline std::vector<int> mcr_tied(int q, const std::vector<int>& vals, const std::vector<double>& w) {
  double sc = 0, ss = 0, mass = 0;
  for (std::size_t r = 0; r < vals.size(); ++r) {
    const double t = 2 * std::numbers::pi * vals[r] / q;
    sc += w[r] * std::cos(t);
    ss += w[r] * std::sin(t);
    mass += std::abs(w[r]);
  }
  std::vector<int> all(static_cast<std::size_t>(q));
  std::iota(all.begin(), all.end(), 0);
  if (std::hypot(sc, ss) < 1e-9 * mass) return all;
  const double t = std::atan2(ss, sc) * q / (2 * std::numbers::pi);
  const double f = t - std::floor(t);
  if (std::abs(f - 0.5) < 1e-6) {
    std::vector<int> two{mod_q(int(std::floor(t)), q), mod_q(int(std::floor(t)) + 1, q)};
    std::sort(two.begin(), two.end());
    return two;
  }
  return {mod_q(int(std::lround(t)), q)};
}

/// The reference vote with tie_break::first: MCR the value nearest the phasor sum; on a tie the
/// first row's value if tied, else the tied value nearest it (lower on equal distance), and for a
/// sum of zero the first row's value. CGR and block codes the value of largest total weight, the
/// earliest-occurring on equal totals.
template <class M>
int reference_vote(const M& m, const std::vector<int>& vals, const std::vector<double>& w) {
  const int q = int(m.modulus());
  if constexpr (std::is_same_v<M, vsa::mcr>) {
    const auto tied = mcr_tied(q, vals, w);
    if (int(tied.size()) == q) return vals[0];
    int best = tied[0];
    for (int k : tied)
      if (mod_dist(k, vals[0], q) < mod_dist(best, vals[0], q)) best = k;
    return best;
  } else {
    std::map<int, double> total;
    for (std::size_t r = 0; r < vals.size(); ++r) total[vals[r]] += w[r];
    int best = vals[0];
    for (int v : vals)
      if (total[v] > total[best]) best = v;
    return best;
  }
}

TEST_CASE_TEMPLATE("vsa modular bundle: the phasor vote (MCR) and the mode (CGR, BSBC) against a loop", M, vsa::mcr,
                   vsa::cgr, vsa::bsbc) {
  for (index_t q : {index_t(2), index_t(5), index_t(16), index_t(300 < M::max_modulus ? 300 : 256)}) {
    for (index_t d : {index_t(1), index_t(63), index_t(200)}) {
      for (index_t n : {index_t(1), index_t(2), index_t(3), index_t(8)}) {
        CAPTURE(q);
        CAPTURE(d);
        CAPTURE(n);
        const M m(d, q);
        const auto x = vsa::random<B>(m, 2 * n, 11);
        const auto s = vsa::bundle(m, fusor::reshape(x, fusor::extents{2, n, d}));
        REQUIRE(s.shape() == (fusor::extents{2, d}));
        const auto hx = ints(host_values(x)), hs = ints(host_values(s));
        bool ok = true;
        for (index_t g = 0; g < 2; ++g)
          for (index_t j = 0; j < d; ++j) {
            std::vector<int> vals;
            for (index_t r = 0; r < n; ++r) vals.push_back(hx[std::size_t((g * n + r) * d + j)]);
            ok = ok && hs[std::size_t(g * d + j)] == reference_vote(m, vals, std::vector<double>(vals.size(), 1.0));
          }
        CHECK(ok);
      }
    }
  }
  const M m(500, 16);
  const auto x = vsa::random<B>(m, 2, 5);
  CHECK_THROWS_AS(vsa::bundle(m, x, vsa::bundle_options{vsa::normalization::none}), fusor::value_error);
  CHECK_THROWS_AS(vsa::bundle(m, vsa::random<B>(m, 0, 1)), fusor::value_error);
  // seeded random ties: reproducible, each tie goes to one of the tied values, about half each way
  // (two vectors: the mode ties wherever they differ; MCR wherever they differ by an odd number)
  for (index_t q : {index_t(16), index_t(300 < M::max_modulus ? 300 : 16)}) {
    CAPTURE(q);
    const M mt(500, q);
    const auto xt = vsa::random<B>(mt, 2, 5);
    vsa::bundle_options o;
    o.ties = vsa::tie_break::random;
    o.seed = 3;
    const auto r1 = ints(host_values(vsa::bundle(mt, xt, o)));
    CHECK(r1 == ints(host_values(vsa::bundle(mt, xt, o))));
    const auto hx = ints(host_values(xt)), first = ints(host_values(vsa::bundle(mt, xt)));
    int ties = 0, same_as_first = 0;
    bool one_of = true;
    for (index_t j = 0; j < 500; ++j) {
      const int a = hx[std::size_t(j)], b = hx[std::size_t(500 + j)];
      std::vector<int> tied;
      if constexpr (std::is_same_v<M, vsa::mcr>) tied = mcr_tied(int(q), {a, b}, {1.0, 1.0});
      else tied = a == b ? std::vector<int>{a} : std::vector<int>{a, b};
      const bool in = std::find(tied.begin(), tied.end(), r1[std::size_t(j)]) != tied.end();
      one_of = one_of && in;
      if (tied.size() == 2) {
        ++ties;
        same_as_first += r1[std::size_t(j)] == first[std::size_t(j)];
      }
    }
    CHECK(one_of);
    CHECK(ties > 100);
    CHECK(std::abs(same_as_first - ties / 2.0) < 4 * std::sqrt(ties / 4.0));
  }
  // the accumulator
  const auto x3 = vsa::random<B>(m, 3, 8);
  const auto hx3 = ints(host_values(x3));
  if constexpr (std::is_same_v<M, vsa::mcr>) {
    const auto acc = host_values(vsa::bundle_counts(m, x3));
    REQUIRE(acc.size() == 500);
    bool aok = true;
    for (index_t j = 0; j < 500; ++j) {
      std::complex<double> s = 0;
      for (index_t r = 0; r < 3; ++r) s += std::polar(1.0, 2 * std::numbers::pi * hx3[std::size_t(r * 500 + j)] / 16);
      aok = aok && std::abs(std::complex<double>(acc[std::size_t(j)]) - s) < 1e-5;
    }
    CHECK(aok);
  } else {
    const auto counts = host_values(vsa::bundle_counts(m, x3));
    REQUIRE(counts.size() == std::size_t(500 * 16));
    bool cok = true;
    for (index_t j = 0; j < 500; ++j)
      for (int v = 0; v < 16; ++v) {
        int c = 0;
        for (index_t r = 0; r < 3; ++r) c += hx3[std::size_t(r * 500 + j)] == v;
        cok = cok && counts[std::size_t(j * 16 + v)] == c;
      }
    CHECK(cok);
  }
}

TEST_CASE_TEMPLATE("vsa modular similarity: (Q, N) in one sweep against a loop, every metric", M, vsa::mcr, vsa::cgr,
                   vsa::bsbc) {
  for (index_t q : {index_t(3), index_t(16), index_t(M::max_modulus)}) {
    for (index_t d : {index_t(1), index_t(7), index_t(64), index_t(1001), index_t(5000)}) {
      for (auto [nq, nx] : {std::pair<index_t, index_t>{3, 5}, {1, 1}, {0, 4}, {4, 0}, {2, 9}}) {
        CAPTURE(q);
        CAPTURE(d);
        CAPTURE(nq);
        CAPTURE(nx);
        const M m(d, q);
        const auto qs = vsa::random<B>(m, nq, 1), xs = vsa::random<B>(m, nx, 2);
        const auto hq = ints(host_values(qs)), hx = ints(host_values(xs));
        for (vsa::metric s : {vsa::metric::cosine, vsa::metric::dot, vsa::metric::hamming, vsa::metric::overlap}) {
          const auto r = vsa::similarity(m, qs, xs, s);
          REQUIRE(r.shape() == (fusor::extents{nq, nx}));
          const auto hr = host_values(r);
          bool ok = true;
          for (index_t i = 0; i < nq; ++i)
            for (index_t j = 0; j < nx; ++j) {
              double dist = 0, eq = 0;
              for (index_t t = 0; t < d; ++t) {
                const int a = hq[std::size_t(i * d + t)], b = hx[std::size_t(j * d + t)];
                dist += mod_dist(a, b, int(q));
                eq += a == b;
              }
              double want = 0;
              const bool onehot = M::block_code;
              if (s == vsa::metric::hamming || (onehot && s == vsa::metric::cosine)) want = eq / double(d);
              else if (s == vsa::metric::overlap || (onehot && s == vsa::metric::dot)) want = eq;
              else if (s == vsa::metric::cosine) want = 1 - 4 * dist / (double(q) * d);
              else want = d - 4 * dist / double(q);
              ok = ok && std::abs(hr[std::size_t(i * nx + j)] - want) <= 1e-5 * std::max(1.0, std::abs(want));
            }
          CHECK(ok);
        }
      }
    }
  }
  const M m(100, 16);
  const auto a = vsa::random<B>(m, 3, 1);
  CHECK(sim1(m, a, a) == doctest::Approx(M::similarity_hi));
  CHECK(double(host_values(vsa::similarity(m, vsa::negative(m, a(0, fusor::all)), a(0, fusor::all)))[0]) ==
        doctest::Approx(M::similarity_lo));
  CHECK(vsa::similarity(m, a(0, fusor::all), a).shape() == fusor::extents{3});
  CHECK_THROWS_AS(vsa::similarity(m, a, vsa::random<B>(M(99, 16), 2, 1)), fusor::shape_error);
}

TEST_CASE_TEMPLATE("vsa modular superpose: the weighted vote against a loop", M, vsa::mcr, vsa::cgr, vsa::bsbc) {
  const index_t d = 131, n = 6, nq = 4;
  const M m(d, 9);
  const auto items = vsa::random<B>(m, n, 4);
  std::vector<float> wv(static_cast<std::size_t>(nq * n));
  for (std::size_t k = 0; k < wv.size(); ++k) wv[k] = float(int(k * 7 % 11) - 3) / 4.0f;
  const auto r = ints(host_values(vsa::superpose(m, test::on<B>(wv, fusor::extents{nq, n}), items)));
  const auto hi = ints(host_values(items));
  bool ok = true;
  for (index_t g = 0; g < nq; ++g)
    for (index_t j = 0; j < d; ++j) {
      std::vector<int> vals;
      std::vector<double> w;
      for (index_t r2 = 0; r2 < n; ++r2) {
        vals.push_back(hi[std::size_t(r2 * d + j)]);
        w.push_back(wv[std::size_t(g * n + r2)]);
      }
      ok = ok && r[std::size_t(g * d + j)] == reference_vote(m, vals, w);
    }
  CHECK(ok);
  CHECK_THROWS_AS(vsa::superpose(m, test::on<B>(std::vector<float>{}, fusor::extents{2, 0}), vsa::random<B>(m, 0, 1)),
                  fusor::value_error);
  // rows made outside with elements at or above q: memories reduce them modulo q, votes read them so
  using T = typename M::value_type;
  std::vector<T> raw(static_cast<std::size_t>(3 * d));
  for (std::size_t k = 0; k < raw.size(); ++k) raw[k] = T((k * 37 + 5) % std::size_t(M::max_modulus));
  const auto rows = test::on<B>(raw, fusor::extents{3, d});
  std::vector<T> reduced(raw);
  for (auto& v : reduced) v = T(int(v) % 9);
  const auto canon = test::on<B>(reduced, fusor::extents{3, d});
  const vsa::item_memory<M, B> mem(m, rows.copy());
  CHECK(host_values(mem.items()) == reduced);
  CHECK(host_values(vsa::bundle(m, rows)) == host_values(vsa::bundle(m, canon)));
}

TEST_CASE("vsa MCR: elements as FHRR phasors") {
  const vsa::mcr m(50, 12);
  const auto x = vsa::random<B>(m, 2, 1);
  const auto p = host_values(m.phasors(x));
  const auto hx = ints(host_values(x));
  bool ok = true;
  for (std::size_t k = 0; k < hx.size(); ++k)
    ok = ok && std::abs(std::complex<double>(p[k]) - std::polar(1.0, 2 * std::numbers::pi * hx[k] / 12)) < 1e-6;
  CHECK(ok);
}

// ---- VTB ---------------------------------------------------------------------------------------------

TEST_CASE("vsa VTB: bind is sqrt(m) A B^T against a loop; right identity; transpose inverse; not commutative") {
  CHECK_THROWS_WITH_AS(vsa::vtb(1000), doctest::Contains("961 and 1024"), fusor::value_error);
  CHECK_THROWS_AS(vsa::vtb(0), fusor::value_error);
  for (index_t side : {index_t(1), index_t(3), index_t(8), index_t(17)}) {
    CAPTURE(side);
    const index_t d = side * side, n = 3;
    const vsa::vtb m(d);
    CHECK(m.side() == side);
    const auto a = vsa::random<B>(m, n, 1), b = vsa::random<B>(m, n, 2);
    const auto ha = host_values(a), hb = host_values(b);
    bool unit = true;  // unit rows
    for (index_t i = 0; i < n; ++i) {
      double s = 0;
      for (index_t t = 0; t < d; ++t) s += double(ha[std::size_t(i * d + t)]) * ha[std::size_t(i * d + t)];
      unit = unit && std::abs(s - 1) < 1e-5;
    }
    CHECK(unit);
    const auto hc = host_values(vsa::bind(m, a, b));
    const auto hu = host_values(vsa::unbind(m, vsa::bind(m, a, b), b));
    const auto hi = host_values(vsa::inverse(m, b));
    bool ok = true, inv_ok = true, unbind_ok = true;
    const double root = std::sqrt(double(side));
    for (index_t i = 0; i < n; ++i)
      for (index_t r = 0; r < side; ++r)
        for (index_t c = 0; c < side; ++c) {
          double s = 0;  // (A B^T)[r, c]
          for (index_t t = 0; t < side; ++t)
            s += double(ha[std::size_t(i * d + r * side + t)]) * hb[std::size_t(i * d + c * side + t)];
          ok = ok && std::abs(hc[std::size_t(i * d + r * side + c)] - root * s) < 1e-5;
          inv_ok = inv_ok && hi[std::size_t(i * d + r * side + c)] == hb[std::size_t(i * d + c * side + r)];
          double u = 0;  // unbind is sqrt(m) C B, C = bind(a, b) as computed above
          for (index_t t = 0; t < side; ++t)
            u += double(hc[std::size_t(i * d + r * side + t)]) * hb[std::size_t(i * d + t * side + c)];
          unbind_ok = unbind_ok && std::abs(hu[std::size_t(i * d + r * side + c)] - root * u) < 1e-5;
        }
    CHECK(ok);
    CHECK(inv_ok);
    CHECK(unbind_ok);
    // the left unbind is sqrt(m) C^T A
    const auto hl = host_values(vsa::unbind_left(m, vsa::bind(m, a, b), a));
    bool left_ok = true;
    for (index_t i = 0; i < n; ++i)
      for (index_t r = 0; r < side; ++r)
        for (index_t c = 0; c < side; ++c) {
          double u = 0;
          for (index_t t = 0; t < side; ++t)
            u += double(hc[std::size_t(i * d + t * side + r)]) * ha[std::size_t(i * d + t * side + c)];
          left_ok = left_ok && std::abs(hl[std::size_t(i * d + r * side + c)] - root * u) < 1e-5;
        }
    CHECK(left_ok);
    const auto id = vsa::identity<B>(m);
    const auto hx = host_values(vsa::bind(m, a, id));
    bool ident = true;
    for (std::size_t k = 0; k < ha.size(); ++k) ident = ident && std::abs(hx[k] - ha[k]) < 1e-6;
    CHECK(ident);
    if (side > 1) CHECK(host_values(vsa::bind(m, b, a)) != hc);
    // multibind folds left
    const auto mb = host_values(vsa::multibind(m, a));
    const auto fold = host_values(vsa::bind(m, vsa::bind(m, a(0, fusor::all), a(1, fusor::all)), a(2, fusor::all)));
    bool fok = true;
    for (std::size_t k = 0; k < fold.size(); ++k) fok = fok && std::abs(mb[k] - fold[k]) < 1e-5;
    CHECK(fok);
    // one key broadcast against the batch
    const auto k1 = host_values(vsa::bind(m, a, b(fusor::range(1, 2), fusor::all)));
    const auto k2 = host_values(vsa::bind(m, a(fusor::range(2, 3), fusor::all), b(fusor::range(1, 2), fusor::all)));
    bool bok = true;
    for (index_t t = 0; t < d; ++t) bok = bok && std::abs(k1[std::size_t(2 * d + t)] - k2[std::size_t(t)]) < 1e-6;
    CHECK(bok);
    // one vector on the left against a batch: row i is bind(a_0, b_i)
    const auto l1 = host_values(vsa::bind(m, a(0, fusor::all), b));
    bool lok = true;
    for (index_t i = 0; i < n; ++i) {
      const auto li = host_values(vsa::bind(m, a(0, fusor::all), b(i, fusor::all)));
      for (index_t t = 0; t < d; ++t) lok = lok && std::abs(l1[std::size_t(i * d + t)] - li[std::size_t(t)]) < 1e-6;
    }
    CHECK(lok);
  }
  // unbinding recovers the operand approximately (about 1/sqrt(2), as HRR), at d = 1024
  const vsa::vtb m(1024);
  const auto a = vsa::random<B>(m, 8, 3), b = vsa::random<B>(m, 8, 4);
  const auto s = host_values(vsa::similarity(m, vsa::unbind(m, vsa::bind(m, a, b), b), a));
  for (index_t i = 0; i < 8; ++i) CHECK(s[std::size_t(i * 8 + i)] > 0.6);
  CHECK(s[1] < 0.2);
  const auto sl = host_values(vsa::similarity(m, vsa::unbind_left(m, vsa::bind(m, a, b), a), b));
  for (index_t i = 0; i < 8; ++i) CHECK(sl[std::size_t(i * 8 + i)] > 0.6);
  // a commutative model's left unbind recovers the right operand (FHRR: exactly, up to rounding)
  const vsa::fhrr f(100);
  const auto fa = vsa::random<B>(f, 2, 1), fb = vsa::random<B>(f, 2, 2);
  const auto fl = host_values(vsa::unbind_left(f, vsa::bind(f, fa, fb), fa)), hfb = host_values(fb);
  bool left_exact = true;
  for (std::size_t k = 0; k < hfb.size(); ++k) left_exact = left_exact && std::abs(fl[k] - hfb[k]) < 1e-5f;
  CHECK(left_exact);
  // the same rows on the cpu backend
  const auto h = host_values(vsa::random<fusor::cpu>(m, 8, 3)), ha = host_values(a);
  bool same = true;
  for (std::size_t k = 0; k < h.size(); ++k) same = same && test::close(h[k], ha[k], 1e-6);
  CHECK(same);
  CHECK_THROWS_AS(vsa::bind(m, a, vsa::random<B>(vsa::vtb(1089), 1, 1)), fusor::shape_error);
}

// ---- MBAT ----------------------------------------------------------------------------------------------

/// MBAT's weights by hand, in double: the softmax of temperature * <a, U_k> over the host copy of
/// the code vectors.
inline std::vector<double> mbat_weights_reference(const vsa::mbat& m, const std::vector<float>& u, const float* a) {
  const index_t d = m.dim(), K = m.bases();
  std::vector<double> s(static_cast<std::size_t>(K)), w(static_cast<std::size_t>(K));
  double top = -1e300, total = 0;
  for (index_t k = 0; k < K; ++k) {
    double dot = 0;
    for (index_t t = 0; t < d; ++t) dot += double(a[t]) * u[std::size_t(k * d + t)];
    s[std::size_t(k)] = m.temperature() * dot;
    top = std::max(top, s[std::size_t(k)]);
  }
  for (index_t k = 0; k < K; ++k) total += w[std::size_t(k)] = std::exp(s[std::size_t(k)] - top);
  for (double& v : w) v /= total;
  return w;
}
/// The MBAT mix by hand: normalize(sum_k w_k(a) roll(x, +-shift_k)).
inline std::vector<double> mbat_reference(const vsa::mbat& m, const std::vector<float>& u, const float* a, const float* x,
                                          bool left) {
  const index_t d = m.dim();
  const auto w = mbat_weights_reference(m, u, a);
  std::vector<double> out(std::size_t(d), 0.0);
  for (index_t k = 0; k < m.bases(); ++k) {
    const index_t sh = left ? -m.shifts()[std::size_t(k)] : m.shifts()[std::size_t(k)];
    for (index_t t = 0; t < d; ++t) out[std::size_t(t)] += w[std::size_t(k)] * x[(((t - sh) % d) + d) % d];
  }
  double n2 = 0;
  for (double v : out) n2 += v * v;
  for (double& v : out) v /= std::sqrt(n2);
  return out;
}

TEST_CASE("vsa MBAT: softmax-weighted shifts against a loop; left unbind; not commutative; HoloVec's parameters") {
  // HoloVec's default shifts (k + 1) * floor(d / (K + 1)); given shifts are taken modulo d
  const auto shifts_of = [](const vsa::mbat& m) { return std::vector<index_t>(m.shifts().begin(), m.shifts().end()); };
  CHECK(shifts_of(vsa::mbat(10'000)) == std::vector<index_t>{2000, 4000, 6000, 8000});
  CHECK(shifts_of(vsa::mbat(7, 4)) == std::vector<index_t>{1, 2, 3, 4});
  const vsa::mbat given(10, {-1, 13, 0});
  CHECK(shifts_of(given) == std::vector<index_t>{9, 3, 0});
  CHECK(given.bases() == 3);
  CHECK_THROWS_WITH_AS(vsa::mbat(4, 4), doctest::Contains("d > K"), fusor::value_error);
  CHECK_THROWS_AS(vsa::mbat(100, 1), fusor::value_error);
  CHECK_THROWS_WITH_AS(vsa::mbat(100, 17), doctest::Contains("between 2 and 16"), fusor::value_error);
  CHECK_THROWS_AS(vsa::mbat(100, {5}), fusor::value_error);
  CHECK_THROWS_AS(vsa::mbat(0), fusor::value_error);
  for (double t : {0.0, -1.0, std::nan(""), HUGE_VAL}) CHECK_THROWS_AS(vsa::mbat(100, 4, t), fusor::value_error);

  // code vectors: +-1/sqrt(d) from (code_seed, k) alone; K = 2's rows are K = 4's first two
  for (index_t d : {index_t(5), index_t(127), index_t(128), index_t(129), index_t(1001)}) {
    CAPTURE(d);
    const auto u4 = host_values(vsa::mbat(d, 4, 100.0, 9).code_vectors<B>());
    const auto u2 = host_values(vsa::mbat(d, 2, 100.0, 9).code_vectors<B>());
    const float h = float(1.0 / std::sqrt(double(d)));
    bool signs = true;
    for (float v : u4) signs = signs && (v == h || v == -h);
    CHECK(signs);
    CHECK(std::vector<float>(u4.begin(), u4.begin() + 2 * d) == u2);
    CHECK(host_values(vsa::mbat(d, 4, 100.0, 10).code_vectors<B>()) != u4);
  }
  const auto big = host_values(vsa::mbat(10'000).code_vectors<B>());
  for (index_t k = 0; k < 4; ++k) {  // balanced, and nearly orthogonal to the next row
    double sum = 0, cross = 0;
    for (index_t t = 0; t < 10'000; ++t) {
      sum += big[std::size_t(k * 10'000 + t)];
      cross += double(big[std::size_t(k * 10'000 + t)]) * big[std::size_t(((k + 1) % 4) * 10'000 + t)];
    }
    CHECK(std::abs(sum) < 5.0);  // 5 standard deviations of a sum of 10 000 signs / 100
    CHECK(std::abs(cross) < 0.05);
  }

  // bind and the left unbind against the loop, one key, batches, SIMD-width edges and odd sizes
  for (auto [d, K] : {std::pair<index_t, int>{3, 2}, {7, 4}, {8, 4}, {9, 4}, {17, 16}, {64, 3}, {1001, 5}}) {
    CAPTURE(d);
    CAPTURE(K);
    const vsa::mbat m(d, K, 30.0, 4);
    const index_t n = 3;
    const auto a = vsa::random<B>(m, n, 1), b = vsa::random<B>(m, n, 2);
    const auto ha = host_values(a), hb = host_values(b), u = host_values(m.code_vectors<B>());
    const auto c = vsa::bind(m, a, b);
    const auto hc = host_values(c), hl = host_values(vsa::unbind_left(m, c, a));
    const auto hw = host_values(m.weights(a));
    REQUIRE(m.weights(a).shape() == (fusor::extents{n, index_t(K)}));
    bool ok = true, left_ok = true, w_ok = true;
    for (index_t i = 0; i < n; ++i) {
      const auto want = mbat_reference(m, u, ha.data() + i * d, hb.data() + i * d, false);
      const auto want_l = mbat_reference(m, u, ha.data() + i * d, hc.data() + i * d, true);
      for (index_t t = 0; t < d; ++t) {
        ok = ok && std::abs(hc[std::size_t(i * d + t)] - want[std::size_t(t)]) < 2e-5;
        left_ok = left_ok && std::abs(hl[std::size_t(i * d + t)] - want_l[std::size_t(t)]) < 2e-5;
      }
      const auto want_w = mbat_weights_reference(m, u, ha.data() + i * d);
      for (int k = 0; k < K; ++k) w_ok = w_ok && std::abs(hw[std::size_t(i * K + k)] - want_w[std::size_t(k)]) < 1e-5;
    }
    CHECK(ok);
    CHECK(left_ok);
    CHECK(w_ok);
    // one key against the batch, on either side, and a (2, 1, d) x (1, 3, d) broadcast
    const auto k1 = host_values(vsa::bind(m, a(fusor::range(1, 2), fusor::all), b));
    const auto k2 = host_values(vsa::bind(m, a, b(1, fusor::all)));
    bool bok = true;
    for (index_t i = 0; i < n; ++i) {
      const auto want1 = mbat_reference(m, u, ha.data() + 1 * d, hb.data() + i * d, false);
      const auto want2 = mbat_reference(m, u, ha.data() + i * d, hb.data() + 1 * d, false);
      for (index_t t = 0; t < d; ++t)
        bok = bok && std::abs(k1[std::size_t(i * d + t)] - want1[std::size_t(t)]) < 2e-5 &&
              std::abs(k2[std::size_t(i * d + t)] - want2[std::size_t(t)]) < 2e-5;
    }
    CHECK(bok);
    const auto grid = vsa::bind(m, fusor::reshape(a(fusor::range(0, 2), fusor::all), fusor::extents{2, 1, d}),
                                fusor::reshape(b, fusor::extents{1, n, d}));
    REQUIRE(grid.shape() == (fusor::extents{2, n, d}));
    const auto hg = host_values(grid);
    bool gok = true;
    for (index_t p = 0; p < 2; ++p)
      for (index_t i = 0; i < n; ++i) {
        const auto want = mbat_reference(m, u, ha.data() + p * d, hb.data() + i * d, false);
        for (index_t t = 0; t < d; ++t) gok = gok && std::abs(hg[std::size_t((p * n + i) * d + t)] - want[std::size_t(t)]) < 2e-5;
      }
    CHECK(gok);
    // multibind folds left
    const auto mb = host_values(vsa::multibind(m, a));
    const auto fold = host_values(vsa::bind(m, vsa::bind(m, a(0, fusor::all), a(1, fusor::all)), a(2, fusor::all)));
    bool fok = true;
    for (std::size_t k = 0; k < fold.size(); ++k) fok = fok && std::abs(mb[k] - fold[k]) < 1e-6;
    CHECK(fok);
    CHECK(vsa::bind(m, vsa::random<B>(m, 0, 1), b(0, fusor::all)).shape() == (fusor::extents{0, d}));
  }
  // at d = 10 000: the left unbind recovers b, the bind hides both operands, and the order matters
  const vsa::mbat m(10'000);
  const auto a = vsa::random<B>(m, 8, 3), b = vsa::random<B>(m, 8, 4);
  const auto c = vsa::bind(m, a, b);
  const auto rec = host_values(vsa::similarity(m, vsa::unbind_left(m, c, a), b));
  const auto cb = host_values(vsa::similarity(m, c, b)), ca = host_values(vsa::similarity(m, c, a));
  const auto comm = host_values(vsa::similarity(m, c, vsa::bind(m, b, a)));
  double worst = 1, leak = 0, cross = 0;
  for (index_t i = 0; i < 8; ++i) {
    worst = std::min(worst, double(rec[std::size_t(i * 8 + i)]));
    leak = std::max({leak, std::abs(double(cb[std::size_t(i * 8 + i)])), std::abs(double(ca[std::size_t(i * 8 + i)]))});
    cross = std::max(cross, std::abs(double(comm[std::size_t(i * 8 + i)])));
  }
  MESSAGE("MBAT d = 10 000: worst recovery ", worst, ", largest |similarity| of c to its operands ", leak,
          ", largest |similarity(ab, ba)| ", cross);
  CHECK(worst > 0.45);  // with K = 4 equal weights the recovery is 0.60; sharper weights give more
  CHECK(leak < 0.1);    // (the shifted copies of b are nearly orthogonal to b)
  CHECK(cross < 0.1);
  CHECK(std::abs(double(rec[1])) < 0.1);  // b_1 is not recovered from pair 0
  // bad input
  CHECK_THROWS_AS(vsa::bind(m, a, vsa::random<B>(vsa::mbat(100), 8, 4)), fusor::shape_error);
  CHECK_THROWS_AS(m.weights(vsa::random<B>(vsa::mbat(100), 1, 4)), fusor::shape_error);
}

// ---- GHRR ------------------------------------------------------------------------------------------

using cdouble = std::complex<double>;
/// Block j of row i of GHRR rows h (m x m, row-major) as complex doubles.
inline std::vector<cdouble> ghrr_block(const std::vector<std::complex<float>>& h, const vsa::ghrr& m, index_t i, index_t j) {
  const index_t mm = m.side() * m.side();
  std::vector<cdouble> r(static_cast<std::size_t>(mm));
  for (index_t k = 0; k < mm; ++k) r[std::size_t(k)] = cdouble(h[std::size_t(i * m.width() + j * mm + k)]);
  return r;
}
/// op(x) op(y) for m x m matrices, op the identity or the adjoint.
inline std::vector<cdouble> matprod(const std::vector<cdouble>& x, const std::vector<cdouble>& y, index_t m, bool adj_x = false,
                                    bool adj_y = false) {
  std::vector<cdouble> r(static_cast<std::size_t>(m * m));
  for (index_t a = 0; a < m; ++a)
    for (index_t b = 0; b < m; ++b)
      for (index_t k = 0; k < m; ++k) {
        const cdouble u = adj_x ? std::conj(x[std::size_t(k * m + a)]) : x[std::size_t(a * m + k)];
        const cdouble v = adj_y ? std::conj(y[std::size_t(b * m + k)]) : y[std::size_t(k * m + b)];
        r[std::size_t(a * m + b)] += u * v;
      }
  return r;
}
inline double maxdiff(const std::vector<cdouble>& x, const std::vector<cdouble>& y) {
  double e = 0;
  for (std::size_t k = 0; k < x.size(); ++k) e = std::max(e, std::abs(x[k] - y[k]));
  return e;
}
inline std::vector<cdouble> eye(index_t m) {
  std::vector<cdouble> r(static_cast<std::size_t>(m * m));
  for (index_t k = 0; k < m; ++k) r[std::size_t(k * m + k)] = 1;
  return r;
}
/// Cholesky of a Hermitian matrix succeeds: it is positive definite.
inline bool positive_definite(const std::vector<cdouble>& h, index_t m) {
  std::vector<cdouble> l(static_cast<std::size_t>(m * m));
  for (index_t j = 0; j < m; ++j) {
    double dj = h[std::size_t(j * m + j)].real();
    for (index_t k = 0; k < j; ++k) dj -= std::norm(l[std::size_t(j * m + k)]);
    if (!(dj > 1e-12)) return false;
    l[std::size_t(j * m + j)] = std::sqrt(dj);
    for (index_t i = j + 1; i < m; ++i) {
      cdouble s = h[std::size_t(i * m + j)];
      for (index_t k = 0; k < j; ++k) s -= l[std::size_t(i * m + k)] * std::conj(l[std::size_t(j * m + k)]);
      l[std::size_t(i * m + j)] = s / l[std::size_t(j * m + j)];
    }
  }
  return true;
}

/// Block j of row `row` of vsa::random(ghrr(D, 2, alpha), ..., seed) computed another way: the
/// documented Philox layout (ceil((2 m^2 + m) / 4) blocks per matrix, words in order: m^2 Box-Muller
/// pairs, then m phases), Q from a Cholesky QR (A = Q R with R^H R = A^H A, R's diagonal positive:
/// the same unique Q as Gram-Schmidt, by another algorithm), the diagonality blend, then Q Lambda.
inline std::vector<cdouble> ghrr_reference_block(std::uint64_t seed, index_t row, index_t j, double alpha) {
  const index_t m = 2, per = (2 * m * m + m + 3) / 4;
  std::vector<std::uint32_t> words;
  for (index_t t = 0; t < per; ++t) {
    const auto w = fusor::random::block_words(seed, std::uint64_t(row), std::uint64_t(j * per + t));
    words.insert(words.end(), w.begin(), w.end());
  }
  std::size_t next = 0;
  std::vector<cdouble> a(4);
  for (auto& x : a) {
    const double u1 = (double(words[next]) + 1.0) * 0x1.0p-32, u2 = double(words[next + 1]) * 0x1.0p-32;
    next += 2;
    x = std::polar(std::sqrt(-2.0 * std::log(u1)), 2 * std::numbers::pi * u2);
  }
  const auto cholesky_q = [](const std::vector<cdouble>& x) {  // Q = X R^{-1}, R^H R = X^H X
    const cdouble g00 = std::norm(x[0]) + std::norm(x[2]), g01 = std::conj(x[0]) * x[1] + std::conj(x[2]) * x[3];
    const double g11 = std::norm(x[1]) + std::norm(x[3]);
    const double r00 = std::sqrt(g00.real());
    const cdouble r01 = g01 / r00;
    const double r11 = std::sqrt(g11 - std::norm(r01));
    // R^{-1} = [[1/r00, -r01/(r00 r11)], [0, 1/r11]]
    const cdouble i00 = 1.0 / r00, i01 = -r01 / (r00 * r11), i11 = 1.0 / r11;
    return std::vector<cdouble>{x[0] * i00, x[0] * i01 + x[1] * i11, x[2] * i00, x[2] * i01 + x[3] * i11};
  };
  auto q = cholesky_q(a);
  if (alpha > 0) {
    for (std::size_t k = 0; k < 4; ++k) q[k] = (1 - alpha) * q[k] + (k % 3 == 0 ? alpha : 0.0);
    q = cholesky_q(q);
  }
  for (index_t c = 0; c < m; ++c) {
    const cdouble ph = std::polar(1.0, 2 * std::numbers::pi * double(words[next++]) * 0x1.0p-32);
    for (index_t r = 0; r < m; ++r) q[std::size_t(r * m + c)] *= ph;
  }
  return q;
}

/// On cpu: a generator filled in runs that start and end anywhere (mid-block, mid-word, across
/// rows) gives the elements it gives one at a time (as a cuda thread computes them).
template <class G>
bool runs_agree(const G& g, index_t total) {
  using T = typename G::value_type;
  std::vector<T> one(static_cast<std::size_t>(total)), run(static_cast<std::size_t>(total));
  for (index_t p = 0; p < total; ++p) g.fill(p, &one[std::size_t(p)], 1);
  bool ok = true;
  for (index_t step : {index_t(1), index_t(3), index_t(7), index_t(10), index_t(65), total})
    for (index_t first = 0; first < total; first += step) {
      const index_t n = std::min(step, total - first);
      g.fill(first, &run[std::size_t(first)], n);
      ok = ok && std::equal(run.begin() + first, run.begin() + first + n, one.begin() + first);
    }
  return ok;
}

TEST_CASE("vsa GHRR: unitary blocks; bind, unbind, unbind_left and inverse against matrix loops; tunable commutativity") {
  CHECK_THROWS_AS(vsa::ghrr(0), fusor::value_error);
  CHECK_THROWS_WITH_AS(vsa::ghrr(10, 9), doctest::Contains("[1, 8]"), fusor::value_error);
  CHECK_THROWS_AS(vsa::ghrr(10, 0), fusor::value_error);
  CHECK_THROWS_WITH_AS(vsa::ghrr(10, 3, 1.5), doctest::Contains("diagonality in [0, 1]"), fusor::value_error);
  CHECK_THROWS_AS(vsa::ghrr(10, 3, std::nan("")), fusor::value_error);
  for (index_t side : {index_t(1), index_t(2), index_t(3), index_t(8)})
    for (index_t blocks : {index_t(1), index_t(7)}) {
      CAPTURE(side);
      CAPTURE(blocks);
      const vsa::ghrr m(blocks, side);
      CHECK(m.dim() == blocks);
      CHECK(m.width() == blocks * side * side);
      const index_t n = 3;
      const auto a = vsa::random<B>(m, n, 1), b = vsa::random<B>(m, n, 2);
      const auto ha = host_values(a), hb = host_values(b);
      const auto hc = host_values(vsa::bind(m, a, b)), hu = host_values(vsa::unbind(m, vsa::bind(m, a, b), b));
      const auto hl = host_values(vsa::unbind_left(m, vsa::bind(m, a, b), a)), hi = host_values(vsa::inverse(m, a));
      double unitary = 0, bind_err = 0, unbind_err = 0, left_err = 0, inv_err = 0;
      for (index_t i = 0; i < n; ++i)
        for (index_t j = 0; j < blocks; ++j) {
          const auto A = ghrr_block(ha, m, i, j), Bm = ghrr_block(hb, m, i, j);
          unitary = std::max({unitary, maxdiff(matprod(A, A, side, false, true), eye(side)),
                              maxdiff(matprod(A, A, side, true, false), eye(side))});
          bind_err = std::max(bind_err, maxdiff(ghrr_block(hc, m, i, j), matprod(A, Bm, side)));
          unbind_err = std::max(unbind_err, maxdiff(ghrr_block(hu, m, i, j), A));
          left_err = std::max(left_err, maxdiff(ghrr_block(hl, m, i, j), Bm));
          std::vector<cdouble> adj(static_cast<std::size_t>(side * side));
          for (index_t r = 0; r < side; ++r)
            for (index_t c = 0; c < side; ++c) adj[std::size_t(r * side + c)] = std::conj(A[std::size_t(c * side + r)]);
          inv_err = std::max(inv_err, maxdiff(ghrr_block(hi, m, i, j), adj));
        }
      CHECK(unitary < 1e-5);
      CHECK(bind_err < 1e-5);
      CHECK(unbind_err < 1e-5);
      CHECK(left_err < 1e-5);
      CHECK(inv_err == 0);
      // reproducible, keyed by row index, the same on the cpu backend
      CHECK(host_values(vsa::random<B>(m, 2, 1, 1)) ==
            std::vector<std::complex<float>>(ha.begin() + m.width(), ha.begin() + 3 * m.width()));
      const auto hcpu = host_values(vsa::random<fusor::cpu>(m, n, 1));
      bool same = true;
      for (std::size_t k = 0; k < ha.size(); ++k) same = same && test::close(hcpu[k], ha[k], 1e-6);
      CHECK(same);
      // identity from both sides; bind with the inverse is the identity
      const auto id = vsa::identity<B>(m);
      const auto l = host_values(vsa::bind(m, id, a)), r = host_values(vsa::bind(m, a, id));
      bool ident = true;
      for (std::size_t k = 0; k < ha.size(); ++k) ident = ident && l[k] == ha[k] && r[k] == ha[k];
      CHECK(ident);
      const auto back = host_values(vsa::similarity(m, vsa::bind(m, a, vsa::inverse(m, a)), id));
      CHECK(back[0] == doctest::Approx(1).epsilon(1e-5));
      CHECK(host_values(vsa::similarity(m, vsa::negative(m, a), a))[0] == doctest::Approx(-1).epsilon(1e-5));
      // a key broadcast against the batch, a vector on the left against a batch
      const auto k1 = host_values(vsa::bind(m, a, b(1, fusor::all)));
      const auto k2 = host_values(vsa::bind(m, a(0, fusor::all), b));
      bool bok = true;
      for (index_t i = 0; i < n; ++i) {
        const auto w1 = host_values(vsa::bind(m, a(i, fusor::all), b(1, fusor::all)));
        const auto w2 = host_values(vsa::bind(m, a(0, fusor::all), b(i, fusor::all)));
        for (index_t t = 0; t < m.width(); ++t)
          bok = bok && k1[std::size_t(i * m.width() + t)] == w1[std::size_t(t)] && k2[std::size_t(i * m.width() + t)] == w2[std::size_t(t)];
      }
      CHECK(bok);
      // (2, 1, w) against (1, 3, w): every pair
      const auto pa = fusor::reshape(a(fusor::range(0, 2), fusor::all), fusor::extents{2, 1, m.width()});
      const auto pb = fusor::reshape(b.view(), fusor::extents{1, 3, m.width()});
      const auto grid = vsa::bind(m, pa, pb);
      REQUIRE(grid.shape() == (fusor::extents{2, 3, m.width()}));
      const auto hg = host_values(grid);
      const auto w12 = host_values(vsa::bind(m, a(1, fusor::all), b(2, fusor::all)));
      CHECK(std::vector<std::complex<float>>(hg.end() - m.width(), hg.end()) == w12);
      // multibind folds left
      const auto mb = host_values(vsa::multibind(m, a));
      const auto fold = host_values(vsa::bind(m, vsa::bind(m, a(0, fusor::all), a(1, fusor::all)), a(2, fusor::all)));
      CHECK(mb == fold);
      // similarity: Re tr(sum_j A_j B_j^H) / (m D) against a loop, (Q, N) in one call
      const auto sim = host_values(vsa::similarity(m, a, b));
      bool sok = true;
      for (index_t i = 0; i < n; ++i)
        for (index_t k = 0; k < n; ++k) {
          double t = 0;
          for (index_t j = 0; j < blocks; ++j) {
            const auto p = matprod(ghrr_block(ha, m, i, j), ghrr_block(hb, m, k, j), side, false, true);
            for (index_t r2 = 0; r2 < side; ++r2) t += p[std::size_t(r2 * side + r2)].real();
          }
          sok = sok && std::abs(sim[std::size_t(i * n + k)] - t / double(side * blocks)) < 1e-5;
        }
      CHECK(sok);
      // permute moves whole blocks
      const auto pr = host_values(vsa::permute(m, a, 2));
      bool rolled = true;
      for (index_t i = 0; i < n; ++i)
        for (index_t j = 0; j < blocks; ++j)
          rolled = rolled && maxdiff(ghrr_block(pr, m, i, (j + 2) % blocks), ghrr_block(ha, m, i, j)) == 0;
      CHECK(rolled);
      CHECK(host_values(vsa::unpermute(m, vsa::permute(m, a, 2), 2)) == ha);
      const auto perm = vsa::random_permutation<B>(m, 4);
      CHECK(perm.size() == blocks);
      const auto ord = host_values(perm.order());
      const auto pp = host_values(vsa::permute(m, a, perm));
      bool gathered = true;
      for (index_t i = 0; i < n; ++i)
        for (index_t j = 0; j < blocks; ++j)
          gathered = gathered && maxdiff(ghrr_block(pp, m, i, j), ghrr_block(ha, m, i, ord[std::size_t(j)])) == 0;
      CHECK(gathered);
      CHECK(host_values(vsa::unpermute(m, vsa::permute(m, a, perm), perm)) == ha);
      // bundle: the sum, then every block's unitary polar factor U (U unitary, U^H X Hermitian
      // positive definite); normalization::none keeps the sum
      const auto x = vsa::random<B>(m, 5, 3);
      const auto hx = host_values(x), hs = host_values(vsa::bundle_counts(m, x)), hn = host_values(vsa::bundle(m, x));
      double sum_err = 0, polar_unitary = 0, hermitian = 0;
      bool pd = true;
      for (index_t j = 0; j < blocks; ++j) {
        std::vector<cdouble> s(static_cast<std::size_t>(side * side));
        for (index_t i = 0; i < 5; ++i) {
          const auto xi = ghrr_block(hx, m, i, j);
          for (std::size_t k = 0; k < s.size(); ++k) s[k] += xi[k];
        }
        sum_err = std::max(sum_err, maxdiff(ghrr_block(hs, m, 0, j), s));
        const auto U = ghrr_block(hn, m, 0, j);
        polar_unitary = std::max(polar_unitary, maxdiff(matprod(U, U, side, false, true), eye(side)));
        const auto P = matprod(U, s, side, true, false);
        std::vector<cdouble> ph(P.size());
        for (index_t r2 = 0; r2 < side; ++r2)
          for (index_t c = 0; c < side; ++c) ph[std::size_t(r2 * side + c)] = std::conj(P[std::size_t(c * side + r2)]);
        hermitian = std::max(hermitian, maxdiff(P, ph));
        pd = pd && positive_definite(P, side);
      }
      CHECK(sum_err < 1e-5);
      CHECK(polar_unitary < 1e-5);
      CHECK(hermitian < 1e-4);
      CHECK(pd);
      vsa::bundle_options none;
      none.norm = vsa::normalization::none;
      CHECK(host_values(vsa::bundle(m, x, none)) == hs);
      // the zero block of a + negative(a) has no polar factor: it becomes the identity block
      fusor::array<std::complex<float>, B> pair(fusor::extents{2, m.width()});
      pair(fusor::range(0, 1), fusor::all) = a(fusor::range(0, 1), fusor::all);
      pair(fusor::range(1, 2), fusor::all) = vsa::negative(m, a(fusor::range(0, 1), fusor::all));
      CHECK(host_values(vsa::bundle(m, pair)) == host_values(vsa::identity<B>(m)));
    }
  // the draw against a block computed another way, Haar and blended
  for (double alpha : {0.0, 0.5}) {
    const vsa::ghrr m(3, 2, alpha);
    const auto h = host_values(vsa::random<B>(m, 2, 17));
    double err = 0;
    for (index_t i = 0; i < 2; ++i)
      for (index_t j = 0; j < 3; ++j) err = std::max(err, maxdiff(ghrr_block(h, m, i, j), ghrr_reference_block(17, i, j, alpha)));
    CAPTURE(alpha);
    CHECK(err < 1e-6);
  }
  // runs starting and ending anywhere agree with element-by-element fills (cpu: the arrays are host memory)
  if constexpr (std::is_same_v<B, fusor::cpu>) {
    const vsa::ghrr m(5, 3);
    const auto a = vsa::random<B>(m, 3, 1), b = vsa::random<B>(m, 2, 2);
    const auto* pa = reinterpret_cast<const float*>(a.data());
    const auto* pb = reinterpret_cast<const float*>(b.data());
    const index_t w = m.width();
    CHECK(runs_agree(vsa::detail::ghrr_draw{9, 4, 5, 3, 0.3}, 3 * w));
    CHECK(runs_agree(vsa::detail::block_product{pa, pb, 3, w, 3, 1, false, true}, 3 * w));
    CHECK(runs_agree(vsa::detail::block_product{pb, pa, 3, w, 1, 3, true, false}, 3 * w));
    CHECK(runs_agree(vsa::detail::block_adjoint{pa, 3}, 3 * w));
    CHECK(runs_agree(vsa::detail::block_polar{pa, 3}, 3 * w));
    const vsa::ghrr m8(2, 8);
    const auto c = vsa::random<B>(m8, 2, 3);
    CHECK(runs_agree(vsa::detail::block_product{reinterpret_cast<const float*>(c.data()),
                                                reinterpret_cast<const float*>(c.data()), 8, m8.width(), 2, 2, false, false},
                     2 * m8.width()));
  }
  // tunable commutativity at D = 500, m = 3: bind(a, b) and bind(b, a) are nearly orthogonal for
  // Haar blocks, equal for diagonal blocks, in between for diagonality 1/2
  double last = -1;
  for (double diag : {0.0, 0.5, 1.0}) {
    const vsa::ghrr m(500, 3, diag);
    const auto a = vsa::random<B>(m, 1, 1), b = vsa::random<B>(m, 1, 2);
    const double c = host_values(vsa::similarity(m, vsa::bind(m, a, b), vsa::bind(m, b, a)))[0];
    MESSAGE("GHRR diagonality ", diag, ": similarity(ab, ba) = ", c);
    CHECK(c > last);
    last = c;
    if (diag == 0.0) CHECK(std::abs(c) < 0.25);
    if (diag == 1.0) {
      CHECK(c == doctest::Approx(1).epsilon(1e-5));
      const auto ha = host_values(a);  // diagonal blocks
      bool diagonal = true;
      for (index_t j = 0; j < 500; ++j)
        for (index_t k = 0; k < 9; ++k) diagonal = diagonal && (k % 4 == 0 || ha[std::size_t(j * 9 + k)] == 0.0f);
      CHECK(diagonal);
    }
  }
  // bundling: 30 of 300 items are the top 30 at D = 1000, m = 2 (width 4000)
  const vsa::ghrr m(1000, 2);
  const auto mem = vsa::item_memory<vsa::ghrr, B>::random(m, 300, 7);
  CHECK(bundled_are_top(m, mem, 30));
  CHECK_THROWS_WITH_AS(vsa::bind(m, mem.items(), vsa::random<B>(vsa::ghrr(1000, 3), 1, 1)), doctest::Contains("1000 blocks of 2 x 2"),
                       fusor::shape_error);
}

// ---- BSDC ------------------------------------------------------------------------------------------

/// The bits of packed rows as 0/1 ints, (rows, d).
template <class M>
std::vector<int> bits_of(const M& m, const std::vector<std::uint64_t>& h, index_t rows) {
  const index_t d = m.bits();  // BSDC-SEG's dim() counts segments
  std::vector<int> r(static_cast<std::size_t>(rows * d));
  for (index_t i = 0; i < rows; ++i)
    for (index_t j = 0; j < d; ++j)
      r[std::size_t(i * d + j)] = int((h[std::size_t(i * m.width() + j / 64)] >> (j % 64)) & 1u);
  return r;
}

/// Context-dependent thinning of one row of bits by the published rule, on unpacked bits: K from
/// the closed form (the smallest K with pz (1 - (1 - pz)^K) >= p), the shifts of the documented
/// sequence, z AND (OR of the K rotations of z).
/// The documented shift of thinning rotation k: 1 + SplitMix64(seed + golden (k + 1)) mod (d - 1).
inline index_t documented_shift(std::uint64_t seed, index_t k, index_t d) {
  std::uint64_t z = seed + 0x9e3779b97f4a7c15ull * std::uint64_t(k + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return 1 + index_t(z % std::uint64_t(d - 1));
}

inline std::vector<int> thinned(const std::vector<int>& z, double p, std::uint64_t seed) {
  const auto d = index_t(z.size());
  const double ones = double(std::count(z.begin(), z.end(), 1)), pz = ones / double(d);
  if (!(pz > p) || d < 2) return z;
  const auto k = index_t(std::ceil(std::log(1.0 - p / pz) / std::log(1.0 - pz) - 1e-12));
  std::vector<int> acc(z.size());
  for (index_t t = 0; t < k; ++t) {
    const index_t r = documented_shift(seed, t, d);
    for (index_t j = 0; j < d; ++j) acc[std::size_t(j)] |= z[std::size_t(((j - r) % d + d) % d)];
  }
  for (std::size_t j = 0; j < z.size(); ++j) acc[j] &= z[j];
  return acc;
}

TEST_CASE_TEMPLATE("vsa BSDC: Bernoulli(p) bits, the density-keeping vote, similarity against loops", M, vsa::bsdc,
                   vsa::bsdc_cdt) {
  CHECK_THROWS_WITH_AS(M(100, 1.5), doctest::Contains("density p in (0, 1)"), fusor::value_error);
  CHECK_THROWS_AS(M(100, -0.1), fusor::value_error);
  CHECK_THROWS_AS(M(0), fusor::value_error);
  CHECK(M(10'000).density() == doctest::Approx(0.01));
  CHECK(M(10'000).active() == 100);
  // density within 5 standard deviations over 20 rows; rows keyed by (seed, index); bits past d clear
  for (index_t d : {index_t(65), index_t(130), index_t(10'000)}) {
    CAPTURE(d);
    const M m(d, d < 1000 ? 0.2 : 0.0);
    const auto x = vsa::random<B>(m, 20, 3);
    const auto hx = host_values(x);
    const auto bits = bits_of(m, hx, 20);
    const double n = double(bits.size()), ones = double(std::count(bits.begin(), bits.end(), 1));
    CHECK(std::abs(ones - n * m.density()) < 5 * std::sqrt(n * m.density() * (1 - m.density())));
    CHECK(host_values(vsa::random<B>(m, 5, 3, 15)) == std::vector<std::uint64_t>(hx.end() - 5 * m.width(), hx.end()));
    CHECK(host_values(vsa::random<fusor::cpu>(m, 20, 3)) == hx);
    bool clear = true;
    for (index_t i = 0; i < 20; ++i) clear = clear && (hx[std::size_t(i * m.width() + m.width() - 1)] & ~vsa::detail::valid_bits(m.width() - 1, m.width(), d)) == 0;
    CHECK(clear);
  }
  // the thinning shifts are the documented sequence, in [1, d - 1]
  bool shifts = true;
  for (index_t k = 0; k < 64; ++k)
    shifts = shifts && vsa::detail::thinning_shift(3, k, 300) == documented_shift(3, k, 300) &&
             documented_shift(3, k, 300) >= 1 && documented_shift(3, k, 300) <= 299;
  CHECK(shifts);
  const index_t d = 300, n = 4;
  const M m(d, 0.1);
  const auto a = vsa::random<B>(m, n, 1), b = vsa::random<B>(m, n, 2);
  const auto ba = bits_of(m, host_values(a), n), bb = bits_of(m, host_values(b), n);
  const auto bc = bits_of(m, host_values(vsa::bind(m, a, b)), n);
  if constexpr (std::is_same_v<M, vsa::bsdc>) {  // XOR: exact and self-inverse
    bool ok = true;
    for (std::size_t k = 0; k < bc.size(); ++k) ok = ok && bc[k] == (ba[k] ^ bb[k]);
    CHECK(ok);
    CHECK(host_values(vsa::unbind(m, vsa::bind(m, a, b), b)) == host_values(a));
  } else {  // thinning of the superposition, as the published rule on unpacked bits
    bool ok = true, subset = true;
    for (index_t i = 0; i < n; ++i) {
      std::vector<int> z(static_cast<std::size_t>(d));
      for (index_t j = 0; j < d; ++j) z[std::size_t(j)] = ba[std::size_t(i * d + j)] | bb[std::size_t(i * d + j)];
      const auto want = thinned(z, m.density(), 0);
      for (index_t j = 0; j < d; ++j) {
        ok = ok && bc[std::size_t(i * d + j)] == want[std::size_t(j)];
        subset = subset && bc[std::size_t(i * d + j)] <= z[std::size_t(j)];
      }
    }
    CHECK(ok);
    CHECK(subset);
    CHECK(host_values(vsa::bind(m, a, b)) == host_values(vsa::bind(m, b, a)));
    // a different thinning seed thins differently; at d = 10 000 the bound vector has about the
    // density p and is similar to both operands (and to neither of two unrelated vectors)
    CHECK(host_values(vsa::bind(M(d, 0.1, 7), a, b)) != host_values(vsa::bind(m, a, b)));
    const M big(10'000);
    const auto x = vsa::random<B>(big, 4, 5);
    const auto c = vsa::bind(big, x(0, fusor::all), x(1, fusor::all));
    const auto cb = bits_of(big, host_values(c), 1);
    CHECK(std::abs(double(std::count(cb.begin(), cb.end(), 1)) - 100.0) < 25.0);
    const auto s = host_values(vsa::similarity(big, c, x));
    CHECK(s[0] > 0.4);
    CHECK(s[1] > 0.4);
    CHECK(s[2] < 0.1);
    CHECK(s[3] < 0.1);
    // multibind thins the OR of all rows: similar to each of three
    const auto t = vsa::multibind(big, x(fusor::range(0, 3), fusor::all));
    const auto st = host_values(vsa::similarity(big, t, x));
    CHECK(st[0] > 0.2);  // a third of the bits from each: about 1/3
    CHECK(st[2] > 0.2);
    CHECK(st[3] < 0.1);
    // normalize thins a dense row to about the density and keeps a sparse one
    const auto dense = vsa::random<B>(M(10'000, 0.05), 1, 9);
    const auto nd = bits_of(big, host_values(vsa::normalize(big, dense)), 1);
    CHECK(std::abs(double(std::count(nd.begin(), nd.end(), 1)) - 100.0) < 25.0);
    const auto sparse = vsa::random<B>(M(10'000, 0.005), 1, 9);
    CHECK(host_values(vsa::normalize(big, sparse)) == host_values(sparse));
  }
  // bundle: exactly min(k, positions with a vote) bits; every kept position has at least the votes
  // of every dropped one; deterministic; seeded random ties
  const auto x = vsa::random<B>(m, 6, 11);
  const auto bx = bits_of(m, host_values(x), 6);
  for (bool random_ties : {false, true}) {
    vsa::bundle_options o;
    if (random_ties) {
      o.ties = vsa::tie_break::random;
      o.seed = 5;
    }
    const auto r = vsa::bundle(m, x, o);
    const auto br = bits_of(m, host_values(r), 1);
    std::vector<int> votes(static_cast<std::size_t>(d));
    for (index_t i = 0; i < 6; ++i)
      for (index_t j = 0; j < d; ++j) votes[std::size_t(j)] += bx[std::size_t(i * d + j)];
    int kept = 0, min_kept = 1 << 30, max_dropped = 0, voted = 0;
    bool only_voted = true;
    for (index_t j = 0; j < d; ++j) {
      voted += votes[std::size_t(j)] > 0;
      if (br[std::size_t(j)]) {
        ++kept;
        min_kept = std::min(min_kept, votes[std::size_t(j)]);
        only_voted = only_voted && votes[std::size_t(j)] > 0;
      } else {
        max_dropped = std::max(max_dropped, votes[std::size_t(j)]);
      }
    }
    CHECK(kept == std::min<int>(int(m.active()), voted));
    CHECK(min_kept >= max_dropped);
    CHECK(only_voted);
    CHECK(host_values(vsa::bundle(m, x, o)) == host_values(r));
    const auto counts = host_values(vsa::bundle_counts(m, x));
    CHECK(counts == votes);
  }
  vsa::bundle_options s5, s6;
  s5.ties = s6.ties = vsa::tie_break::random;
  s5.seed = 5;
  s6.seed = 6;
  CHECK(host_values(vsa::bundle(m, x, s5)) != host_values(vsa::bundle(m, x, s6)));
  vsa::bundle_options none;
  none.norm = vsa::normalization::none;
  CHECK_THROWS_AS(vsa::bundle(m, x, none), fusor::value_error);
  // one vector bundles to itself when it has at most k bits
  const M sparse_m(d, 0.02);
  const auto one = vsa::random<B>(sparse_m, 1, 4);
  const auto one_bits = bits_of(sparse_m, host_values(one), 1);
  REQUIRE(std::count(one_bits.begin(), one_bits.end(), 1) <= sparse_m.active());
  CHECK(host_values(vsa::bundle(sparse_m, fusor::reshape(one.view(), fusor::extents{1, 1, sparse_m.width()}))) == host_values(one));
  // runs starting and ending anywhere agree with element-by-element fills (cpu)
  if constexpr (std::is_same_v<B, fusor::cpu>) {
    const auto ones = host_values(fusor::array<std::int32_t, B>(fusor::full<std::int32_t, B>(fusor::extents{6}, 90)));
    CHECK(runs_agree(vsa::detail::bit_counts{x.data(), 3, m.width(), d}, 2 * d));
    CHECK(runs_agree(vsa::detail::sparse_bits_draw{4, 2, m.width(), d, 1u << 29}, 6 * m.width()));
    CHECK(runs_agree(vsa::detail::cdt_thin{x.data(), ones.data(), m.width(), d, 0.05, 1}, 6 * m.width()));
    CHECK(runs_agree(vsa::detail::segment_indices{x.data(), m.width(), 60, 5}, 6 * 60));
  }
  // similarity: every metric against a loop over the bits, (Q, N) in one call
  for (vsa::metric s : {vsa::metric::cosine, vsa::metric::dot, vsa::metric::overlap, vsa::metric::hamming}) {
    const auto sim = host_values(vsa::similarity(m, a, b, s));
    bool ok = true;
    for (index_t i = 0; i < n; ++i)
      for (index_t k = 0; k < n; ++k) {
        double both = 0, na = 0, nb = 0, diff = 0;
        for (index_t j = 0; j < d; ++j) {
          const int u = ba[std::size_t(i * d + j)], v = bb[std::size_t(k * d + j)];
          both += u & v;
          na += u;
          nb += v;
          diff += u ^ v;
        }
        const double want = s == vsa::metric::cosine  ? (na * nb > 0 ? both / std::sqrt(na * nb) : 0.0)
                            : s == vsa::metric::hamming ? 1.0 - diff / double(d)
                                                        : both;
        ok = ok && std::abs(sim[std::size_t(i * n + k)] - want) < 1e-5;
      }
    CHECK(ok);
  }
  CHECK(host_values(vsa::similarity(m, vsa::empty<B>(m), a))[0] == 0.0f);
  // bundling 10 of 1000 items keeps each as the top 10 at d = 10 000, p = 1 / sqrt(d) (100 bits)
  const M big(10'000);
  CHECK(bundled_are_top(big, vsa::item_memory<M, B>::random(big, 1000, 21), 10));
  // superpose: the k positions of largest positive weighted vote
  std::vector<float> wv{1.0f, -0.5f, 2.0f, 0.25f, 0.0f, 1.0f};
  const auto r = vsa::superpose(m, test::on<B>(wv), x);
  std::vector<double> score(static_cast<std::size_t>(d));
  for (index_t i = 0; i < 6; ++i)
    for (index_t j = 0; j < d; ++j) score[std::size_t(j)] += double(wv[std::size_t(i)]) * bx[std::size_t(i * d + j)];
  const auto br = bits_of(m, host_values(r), 1);
  double min_kept = 1e30, max_dropped = -1e30;
  int kept = 0, positive = 0;
  for (index_t j = 0; j < d; ++j) {
    positive += score[std::size_t(j)] > 0;
    if (br[std::size_t(j)]) {
      ++kept;
      min_kept = std::min(min_kept, score[std::size_t(j)]);
    } else {
      max_dropped = std::max(max_dropped, score[std::size_t(j)]);
    }
  }
  CHECK(kept == std::min<int>(int(m.active()), positive));
  CHECK(min_kept >= max_dropped - 1e-6);
  CHECK(min_kept > 0);
}

TEST_CASE("vsa BSDC-SEG: one bit per segment, bsbc's algebra in bits, similarity by popcount") {
  CHECK_THROWS_AS(vsa::bsdc_seg(0), fusor::value_error);
  CHECK_THROWS_WITH_AS(vsa::bsdc_seg(10, 1), doctest::Contains("L in [2, 65536]"), fusor::value_error);
  CHECK_THROWS_AS(vsa::bsdc_seg(10, 70'000), fusor::value_error);
  for (index_t length : {index_t(5), index_t(64), index_t(100)})
    for (index_t segments : {index_t(1), index_t(7)}) {
      CAPTURE(length);
      CAPTURE(segments);
      const vsa::bsdc_seg m(segments, length);
      const vsa::bsbc k(segments, length);
      const index_t d = segments * length, n = 3;
      CHECK(m.dim() == segments);
      CHECK(m.width() == (d + 63) / 64);
      const auto a = vsa::random<B>(m, n, 1), b = vsa::random<B>(m, n, 2);
      const auto ia = ints(host_values(vsa::random<B>(k, n, 1))), ib = ints(host_values(vsa::random<B>(k, n, 2)));
      // bsbc's vectors of the same seed, one bit per segment
      const auto ba = bits_of(m, host_values(a), n);
      bool one_hot = true;
      for (index_t i = 0; i < n; ++i)
        for (index_t sg = 0; sg < segments; ++sg)
          for (index_t j = 0; j < length; ++j)
            one_hot = one_hot && ba[std::size_t(i * d + sg * length + j)] == (j == ia[std::size_t(i * segments + sg)]);
      CHECK(one_hot);
      CHECK(ints(host_values(m.to_indices(a))) == ia);
      // bind shifts each segment by b's position: index addition modulo L; exact unbind and inverse
      const auto ic = ints(host_values(m.to_indices(vsa::bind(m, a, b))));
      bool added = true;
      for (std::size_t t = 0; t < ic.size(); ++t) added = added && ic[t] == mod_q(ia[t] + ib[t], int(length));
      CHECK(added);
      CHECK(host_values(vsa::unbind(m, vsa::bind(m, a, b), b)) == host_values(a));
      CHECK(host_values(vsa::bind(m, a, vsa::inverse(m, a))) == host_values(vsa::identity<B>(m, n)));
      CHECK(host_values(vsa::bind(m, a, b)) == host_values(vsa::bind(m, b, a)));
      // similarity: agreeing segments over S (cosine), their number (overlap, dot), bitwise hamming
      for (vsa::metric s : {vsa::metric::cosine, vsa::metric::overlap, vsa::metric::dot, vsa::metric::hamming}) {
        const auto sim = host_values(vsa::similarity(m, a, b, s));
        bool ok = true;
        for (index_t i = 0; i < n; ++i)
          for (index_t j = 0; j < n; ++j) {
            int agree = 0;
            for (index_t sg = 0; sg < segments; ++sg)
              agree += ia[std::size_t(i * segments + sg)] == ib[std::size_t(j * segments + sg)];
            const double want = s == vsa::metric::cosine    ? double(agree) / double(segments)
                                : s == vsa::metric::hamming ? 1.0 - 2.0 * double(segments - agree) / double(d)
                                                            : double(agree);
            ok = ok && std::abs(sim[std::size_t(i * n + j)] - want) < 1e-5;
          }
        CHECK(ok);
      }
      CHECK(host_values(vsa::similarity(m, vsa::negative(m, a), a))[0] == 0.0f);
      // permute moves whole segments; bundle is bsbc's mode; normalize makes one bit per segment
      CHECK(ints(host_values(m.to_indices(vsa::permute(m, a, 2)))) == ints(host_values(vsa::permute(k, vsa::random<B>(k, n, 1), 2))));
      CHECK(ints(host_values(m.to_indices(vsa::bundle(m, a)))) == ints(host_values(vsa::bundle(k, vsa::random<B>(k, n, 1)))));
      const auto noisy = fusor::array<std::uint64_t, B>(a | b);
      const auto nb = bits_of(m, host_values(vsa::normalize(m, noisy)), n);
      bool lowest = true;
      for (index_t i = 0; i < n; ++i)
        for (index_t sg = 0; sg < segments; ++sg) {
          const int lo = std::min(ia[std::size_t(i * segments + sg)], ib[std::size_t(i * segments + sg)]);
          for (index_t j = 0; j < length; ++j) lowest = lowest && nb[std::size_t(i * d + sg * length + j)] == (j == lo);
        }
      CHECK(lowest);
      if constexpr (std::is_same_v<B, fusor::cpu>) {
        const auto idx = vsa::random<B>(k, n, 1);
        CHECK(runs_agree(vsa::detail::segment_bits{idx.data(), m.width(), segments, length}, n * m.width()));
        CHECK(runs_agree(vsa::detail::segment_indices{a.data(), m.width(), segments, length}, n * segments));
      }
      const auto perm = vsa::random_permutation<B>(m, 3);
      CHECK(perm.size() == segments);
      CHECK(host_values(vsa::unpermute(m, vsa::permute(m, a, perm), perm)) == host_values(a));
    }
  CHECK_THROWS_WITH_AS(vsa::bind(vsa::bsdc_seg(10, 64), vsa::random<B>(vsa::bsdc_seg(10, 64), 1, 1), vsa::random<B>(vsa::bsdc_seg(5, 64), 1, 1)),
                       doctest::Contains("10 segments of 64 bits"), fusor::shape_error);
}

// ---- quantisation ---------------------------------------------------------------------------------

TEST_CASE("vsa hard and soft quantize: torchhd's sign (0 to -1) and tanh, elementwise") {
  const std::vector<float> v{-2.5f, -0.0f, 0.0f, 1e-30f, 3.0f, -1e-30f, 0.5f};
  const auto x = test::on<B>(v);
  const auto h = host_values(fusor::array<float, B>(vsa::hard_quantize(x)));
  const auto t = host_values(fusor::array<float, B>(vsa::soft_quantize(x)));
  REQUIRE(h.size() == v.size());
  for (std::size_t k = 0; k < v.size(); ++k) {
    CHECK(h[k] == (v[k] > 0 ? 1.0f : -1.0f));
    CHECK(t[k] == doctest::Approx(std::tanh(double(v[k]))).epsilon(1e-6));
  }
  // a MAP accumulator back to bipolar: the bundle's sign, ties to -1
  const vsa::map_b m(200);
  const auto acc = vsa::bundle_counts(m, vsa::random<B>(m, 4, 2));
  const auto q = host_values(fusor::array<float, B>(vsa::hard_quantize(acc)));
  const auto a = host_values(acc);
  bool ok = true;
  for (std::size_t k = 0; k < a.size(); ++k) ok = ok && q[k] == (a[k] > 0 ? 1.0f : -1.0f);
  CHECK(ok);
}

// ---- random permutations ---------------------------------------------------------------------------

TEST_CASE_TEMPLATE("vsa random permutations: a permutation per seed, applied as a gather, undone by unpermute", M,
                   vsa::map_b, vsa::bsc, vsa::bsdc_cdt, vsa::fhrr, vsa::mcr, vsa::bsbc) {
  for (index_t d : {index_t(1), index_t(63), index_t(64), index_t(65), index_t(300)}) {
    CAPTURE(d);
    const M m(d);
    const auto p = vsa::random_permutation<B>(m, 5);
    const auto order = host_values(p.order());
    std::vector<std::int64_t> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    bool perm = true;
    for (index_t j = 0; j < d; ++j) perm = perm && sorted[std::size_t(j)] == j;
    CHECK(perm);
    CHECK(host_values(vsa::random_permutation<fusor::cpu>(m, 5).order()) == order);
    if (d >= 63) CHECK(host_values(vsa::random_permutation<B>(m, 6).order()) != order);
    const auto x = vsa::random<B>(m, 3, 8);
    const auto px = vsa::permute(m, x, p);
    const auto u = unpacked(m, host_values(x), 3), up = unpacked(m, host_values(px), 3);
    if constexpr (is_modular<M>) {
      const auto hx = ints(host_values(x)), hp = ints(host_values(px));
      bool ok = true;
      for (index_t i = 0; i < 3; ++i)
        for (index_t j = 0; j < d; ++j) ok = ok && hp[std::size_t(i * d + j)] == hx[std::size_t(i * d + order[std::size_t(j)])];
      CHECK(ok);
    } else {
      bool ok = true;
      for (index_t i = 0; i < 3; ++i)
        for (index_t j = 0; j < d; ++j) ok = ok && up[std::size_t(i * d + j)] == u[std::size_t(i * d + order[std::size_t(j)])];
      CHECK(ok);
    }
    CHECK(host_values(vsa::unpermute(m, px, p)) == host_values(x));
  }
  const M m(10);
  CHECK_THROWS_AS(vsa::permute(m, vsa::random<B>(m, 1, 1), vsa::random_permutation<B>(M(11), 1)), fusor::shape_error);
  const std::vector<std::int64_t> dup{0, 1, 2, 3, 4, 5, 6, 7, 8, 8}, out{0, 1, 2, 3, 4, 5, 6, 7, 8, 10};
  CHECK_THROWS_WITH_AS(vsa::permutation<B>(test::on<B>(dup)), doctest::Contains("exactly once"), fusor::value_error);
  CHECK_THROWS_AS(vsa::permutation<B>(test::on<B>(out)), fusor::value_error);
  CHECK_THROWS_AS(vsa::permutation<B>(test::on<B>(dup, fusor::extents{2, 5})), fusor::shape_error);
  const std::vector<std::int32_t> rev{9, 8, 7, 6, 5, 4, 3, 2, 1, 0};
  const vsa::permutation<B> r(test::on<B>(rev));
  CHECK(host_values(r.inverse_order()) == std::vector<std::int64_t>{9, 8, 7, 6, 5, 4, 3, 2, 1, 0});
}

}  // namespace vsabody
