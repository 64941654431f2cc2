// VSA test bodies for the models over integers modulo q (MCR, CGR, block codes), VTB and the
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
  // the same rows on the cpu backend
  const auto h = host_values(vsa::random<fusor::cpu>(m, 8, 3)), ha = host_values(a);
  bool same = true;
  for (std::size_t k = 0; k < h.size(); ++k) same = same && test::close(h[k], ha[k], 1e-6);
  CHECK(same);
  CHECK_THROWS_AS(vsa::bind(m, a, vsa::random<B>(vsa::vtb(1089), 1, 1)), fusor::shape_error);
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
                   vsa::map_b, vsa::bsc, vsa::fhrr, vsa::mcr, vsa::bsbc) {
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
