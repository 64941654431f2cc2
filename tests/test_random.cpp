// Counter-based random numbers: Random123's published Philox4x32-10 known-answer vectors,
// independence from thread count, and distribution moments against closed forms.
#include "common.hpp"

#include <algorithm>
#include <set>

using namespace fusor;
using test::index_t;

TEST_CASE("philox4x32-10 reproduces Random123's known-answer vectors") {
  using w4 = std::array<std::uint32_t, 4>;
  CHECK(random::philox4x32({0, 0, 0, 0}, {0, 0}) == w4{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8});
  CHECK(random::philox4x32({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}) ==
        w4{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd});
  CHECK(random::philox4x32({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}) ==
        w4{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1});
}

TEST_CASE("element i depends only on (seed, stream, i): same integers for any thread count") {
  set_parallel_threshold(1);
  set_num_threads(1);
  random::generator g1(123);
  auto a1 = random::integers<std::int64_t>(g1, {1'000'003}, -5, 1'000'000'000);
  auto u1 = random::uniform<float>(g1, {1001});
  set_num_threads(2);
  random::generator g2(123);
  auto a2 = random::integers<std::int64_t>(g2, {1'000'003}, -5, 1'000'000'000);
  auto u2 = random::uniform<float>(g2, {1001});
  set_num_threads(0);
  set_parallel_threshold(index_t(1) << 17);
  CHECK(all(a1 == a2));
  CHECK(all(u1 == u2));
  // element i of a longer draw equals element i of a shorter one (counter = element block)
  random::generator g3(123);
  auto prefix = random::integers<std::int64_t>(g3, {17}, -5, 1'000'000'000);
  for (index_t i = 0; i < 17; ++i) CHECK(prefix(i) == a1(i));
  // the element is a pure function of Philox output: check one by hand
  const auto w = random::block_words(123, 1, 0);  // stream 1 = second draw of the generator
  CHECK(u1(0) == float(w[0] >> 8) * 0x1.0p-24f);
  // successive draws differ; another seed differs
  random::generator g4(124);
  auto other = random::uniform<float>(g4, {1001});
  CHECK(any(other != u1));
}

TEST_CASE_TEMPLATE("uniform and normal moments match the closed forms", T, float, double) {
  random::generator g(2024);
  const index_t n = 1'000'000;
  auto u = random::uniform<T>(g, {n}, T(-2), T(3));
  CHECK(double(min(u)) >= -2.0);
  CHECK(double(max(u)) < 3.0);
  CHECK(double(mean(u)) == doctest::Approx(0.5).epsilon(0.01));
  CHECK(double(var(u)) == doctest::Approx(25.0 / 12).epsilon(0.01));
  auto z = random::normal<T>(g, {n}, T(1), T(2));
  CHECK(double(mean(z)) == doctest::Approx(1.0).epsilon(0.01));
  CHECK(double(fusor::std(z)) == doctest::Approx(2.0).epsilon(0.01));
  // fraction within one sigma: erf(1/sqrt(2)) = 0.6827
  CHECK(double(mean(abs(z - T(1)) < T(2))) == doctest::Approx(0.6827).epsilon(0.01));
  auto odd = random::normal<T>(g, {7});  // odd sizes fill the last pair partially
  CHECK(all(isfinite(odd)));
}

TEST_CASE_TEMPLATE("float16 and bfloat16 draws are float32's and float64's values rounded, below hi", H, fusor::float16,
                   fusor::bfloat16) {
  // the same seed and stream: uniform rounds the float32 draw, normal the float64 one
  for (index_t n : {index_t(0), index_t(1), index_t(17), index_t(100001)}) {
    random::generator g(77), g32(77);
    const array<H> u = random::uniform<H>(g, {n}, H(-2.0f), H(3.0f));
    const array<float> u32 = random::uniform<float>(g32, {n}, -2.0f, 3.0f);
    const array<H> z = random::normal<H>(g, {n}, H(1.0f), H(0.5f));
    const array<double> z64 = random::normal<double>(g32, {n}, 1.0, 0.5);
    index_t bad = 0;
    for (index_t i = 0; i < n; ++i) {
      const H want(u32(i));
      // a draw that rounds up to hi is the value below it instead
      const bool same = u(i).bits == want.bits || (float(want) == 3.0f && u(i).bits == H(3.0f).bits - 1);
      bad += !same || !(float(u(i)) >= -2.0f && float(u(i)) < 3.0f) || z(i).bits != H(z64(i)).bits;
    }
    INFO("n=", n);
    CHECK(bad == 0);
  }
  // a range narrower than one step of H: every draw is lo or the value below hi, never hi
  random::generator g(5);
  const array<H> narrow = random::uniform<H>(g, {1000}, H(1.0f), H::from_bits(std::uint16_t(H(1.0f).bits + 1)));
  CHECK(all(narrow == 1.0));
  CHECK_THROWS_AS(random::uniform<H>(g, {3}, H(2.0f), H(1.0f)), value_error);
  CHECK_THROWS_AS(random::uniform<H>(g, {3}, H(0.0f), std::numeric_limits<H>::infinity()), value_error);
  CHECK_THROWS_AS(random::normal<H>(g, {3}, H(0.0f), H(-1.0f)), value_error);
}

TEST_CASE("integers, bernoulli and permutation") {
  random::generator g(9);
  auto k = random::integers<std::int32_t>(g, {600'000}, 3, 9);
  CHECK(min(k) == 3);
  CHECK(max(k) == 8);
  for (int v = 3; v < 9; ++v) CHECK(double(mean(k == v)) == doctest::Approx(1.0 / 6).epsilon(0.02));
  auto b = random::bernoulli(g, {500'000}, 0.3);
  CHECK(double(mean(b)) == doctest::Approx(0.3).epsilon(0.01));
  CHECK(!any(random::bernoulli(g, {1000}, 0.0)));
  CHECK(all(random::bernoulli(g, {1000}, 1.0)));
  auto p = random::permutation(g, 1000);
  std::vector<std::int64_t> sorted(p.begin(), p.end());
  std::sort(sorted.begin(), sorted.end());
  for (std::int64_t i = 0; i < 1000; ++i) CHECK(sorted[std::size_t(i)] == i);
  CHECK(random::permutation(g, 0).size() == 0);
  CHECK_THROWS_WITH_AS(random::integers<std::int32_t>(g, {3}, 5, 5), doctest::Contains("needs lo < hi, got lo = 5, hi = 5"),
                       value_error);
  CHECK_THROWS_WITH_AS(random::bernoulli(g, {3}, 1.5), doctest::Contains("needs 0 <= p <= 1, got 1.5"), value_error);
  CHECK_THROWS_AS(random::uniform<float>(g, {3}, 2.f, 1.f), value_error);
  CHECK_THROWS_AS(random::normal<double>(g, {3}, 0., -1.), value_error);
}

TEST_CASE("a lazy draw fuses into a SIMD statement and keeps its values on any thread count") {
  const index_t n = 100'003;
  random::generator ge(31);
  const array<float> eager = random::normal<float>(ge, {n});
  const array<float> a = random::uniform<float>(ge, {n});
  for (int threads : {1, 2}) {
    set_parallel_threshold(1);
    set_num_threads(threads);
    random::generator g(31);
    const auto z = lazy::random::normal<float>(g, {n});
    array<float> y(extents{n});
    instrument::reset();
    y = sin(a) + z;  // sin has a SIMD form: the draw is generated a packet at a time
    CHECK(instrument::passes == 1);
    CHECK(instrument::simd_passes == 1);
    index_t bad = 0;
    for (index_t i = 0; i < n; ++i) bad += !test::close(y(i), std::sin(a(i)) + eager(i), test::ulps<float>(4));
    CHECK(bad == 0);
    // a bool draw in a where runs the scalar loop, each thread keeping its own Philox block
    random::generator gb(32), gb_eager(32);
    const array<bool> mask_ref = random::bernoulli(gb_eager, {n}, 0.4);
    array<float> picked = where(lazy::random::bernoulli(gb, {n}, 0.4), a, -a);
    bad = 0;
    for (index_t i = 0; i < n; ++i) bad += picked(i) != (mask_ref(i) ? a(i) : -a(i));
    CHECK(bad == 0);
    // into a reversed destination: the scalar loop asks the generator one position at a time
    array<float> r(extents{n});
    flip(r) = z;
    bad = 0;
    for (index_t i = 0; i < n; ++i) bad += r(i) != eager(n - 1 - i);
    CHECK(bad == 0);
  }
  set_num_threads(0);
  set_parallel_threshold(index_t(1) << 17);
}
