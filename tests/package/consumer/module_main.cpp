// `import fusor;` as the README tells users to write it: the import alone (with clang 19,
// fusor::module force-includes xsimd into this target: see cmake/fusorModule.cmake). Every check
// compares the module's result with a plain loop, a closed form or a published known answer.
import fusor;

#include <array>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <numbers>
#include <stdexcept>
#include <string>
#include <vector>

namespace {
int failures = 0;
void check(bool ok, const std::string& what) {
  if (!ok) {
    ++failures;
    std::printf("FAILED: %s\n", what.c_str());
  }
}
bool close(double a, double b, double tol) { return std::abs(a - b) <= tol * (1.0 + std::abs(b)); }
}  // namespace

int main() {
  using fusor::array;
  using fusor::index_t;
  static_assert(std::is_same_v<fusor::default_backend, fusor::cpu>);
  static_assert(std::is_same_v<array<float>, array<float, fusor::cpu>>);

  // lazy expressions fused into one loop, at the sizes around the SIMD width and a large odd one
  for (index_t n : {index_t(0), index_t(1), index_t(3), index_t(4), index_t(7), index_t(8), index_t(9), index_t(33), index_t(100003)}) {
    array<float> x = fusor::arange<float>(0, n);
    array<float> y = fusor::linspace<float>(-1.0f, 1.0f, n);
    auto lazy = 2.0f * x + fusor::sin(y) * y - 1.5f;  // nothing runs yet
    array<float> r = lazy;
    bool same = r.size() == n;
    double sum_ref = 0, dot_ref = 0;
    float max_ref = -INFINITY;
    index_t argmax_ref = 0;
    for (index_t i = 0; i < n && same; ++i) {
      const float xi = float(i), yi = y(i);
      const float ref = 2.0f * xi + std::sin(yi) * yi - 1.5f;
      same = close(r(i), ref, 1e-6);
      sum_ref += double(r(i));
      dot_ref += double(xi) * double(yi);
      if (r(i) > max_ref) max_ref = r(i), argmax_ref = i;
    }
    check(same, "2x + sin(y) y - 1.5 at n = " + std::to_string(n));
    check(close(fusor::sum(r), sum_ref, 1e-6), "sum at n = " + std::to_string(n));
    check(close(fusor::sum(x * y), dot_ref, 1e-5), "sum(x * y) (fused reduction) at n = " + std::to_string(n));
    if (n > 0) {
      check(fusor::max(r) == max_ref, "max at n = " + std::to_string(n));
      check(fusor::argmax(r) == argmax_ref, "argmax at n = " + std::to_string(n));
    }
  }

  // operators, comparisons, where, axis reductions
  array<double> m = fusor::reshape(fusor::arange<double>(0, 12), {3, 4});
  array<double> col = fusor::sum(m, 0);
  array<bool> big = m > 5.0;
  array<double> w = fusor::where(big, m, -m);
  for (index_t j = 0; j < 4; ++j) check(col(j) == double(j) + (4 + j) + (8 + j), "sum over axis 0");
  check(fusor::count_nonzero(big) == 6 && w(0, 1) == -1.0 && w(2, 3) == 11.0, "comparison and where");

  // random numbers: Random123's known answer, and element i of a uniform draw from block i / 4
  using w4 = std::array<std::uint32_t, 4>;
  check(fusor::random::philox4x32({0, 0, 0, 0}, {0, 0}) == w4{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
        "philox4x32-10 known answer");
  fusor::random::generator g(2024);
  array<float> u = fusor::random::uniform<float>(g, {1001});
  bool uniform_ok = true;
  for (index_t i = 0; i < 1001; ++i) {
    const auto words = fusor::random::philox4x32({std::uint32_t(i / 4), 0, 0, 0}, {2024, 0});
    uniform_ok = uniform_ok && u(i) == float(words[i % 4] >> 8) * 0x1.0p-24f;
  }
  check(uniform_ok, "uniform<float> elements from Philox words");
  // the same draw as a lazy node, fused into a statement: the same values plus a ramp
  fusor::random::generator g2(2024);
  array<float> fused = fusor::lazy::random::uniform<float>(g2, {1001}) + fusor::lazy::arange<float>(1001.0f);
  bool lazy_ok = true;
  for (index_t i = 0; i < 1001; ++i) lazy_ok = lazy_ok && fused(i) == u(i) + float(i);
  check(lazy_ok, "lazy::random::uniform + lazy::arange through the module");

  // FFTs: rfft against a naive DFT
  const index_t n = 37;
  array<double> s = fusor::cos(fusor::arange<double>(0, n) * 0.3) + 0.5;
  array<std::complex<double>> f = fusor::fft::rfft(s);
  bool fft_ok = f.size() == n / 2 + 1;
  for (index_t k = 0; k < f.size() && fft_ok; ++k) {
    std::complex<double> ref = 0;
    for (index_t t = 0; t < n; ++t) ref += s(t) * std::polar(1.0, -2 * std::numbers::pi * double(k * t) / double(n));
    fft_ok = std::abs(f(k) - ref) < 1e-10 * n;
  }
  check(fft_ok, "rfft against a naive DFT (n = 37)");

  // VSA through the module: a bound pair unbinds exactly (MAP-B), and BSC's popcount search finds it
  {
    const fusor::vsa::map_b m(1000);
    const auto keys = fusor::vsa::random(m, 2, 7);
    const auto b = fusor::vsa::bind(m, keys(0, fusor::all), keys(1, fusor::all));
    const auto back = fusor::vsa::unbind(m, b, keys(1, fusor::all));
    bool exact = true;
    for (index_t j = 0; j < 1000; ++j) exact = exact && back(j) == keys(0, j);
    check(exact, "vsa::unbind(bind(a, b), b) == a for MAP-B");
    const fusor::vsa::bsc h(1000);
    const auto items = fusor::vsa::random(h, 10, 3);
    const array<float> s = fusor::vsa::similarity(h, items(4, fusor::all), items);
    check(fusor::argmax(s) == 4 && s(4) == 1.0f, "vsa::similarity of BSC item 4 against the items");
  }
  // autodiff through the module: reverse (ad::sum found by argument-dependent lookup) and forward
  {
    array<double> x{1.0, 2.0, 3.0};
    const array<double> g = fusor::ad::grad([](const auto& t) { return sum(t * t); })(x);
    check(g(0) == 2.0 && g(2) == 6.0, "ad::grad of sum(x * x) at [1 2 3] is [2 4 6]");
    check(fusor::ad::derivative([](auto t) { return t * t * t; }, 2.0) == 12.0, "ad::derivative of x^3 at 2 is 12");
  }

  // typed errors cross the module boundary
  try {
    array<float> a = fusor::zeros<float>({3}), b = fusor::zeros<float>({4});
    array<float> c = a + b;
    check(false, "adding shapes (3) and (4) did not throw");
  } catch (const fusor::shape_error& e) {
    check(std::string(e.what()).find("(3,) and (4,)") != std::string::npos, std::string("shape_error names the shapes: ") + e.what());
  }

  if (failures == 0) std::printf("import fusor: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
