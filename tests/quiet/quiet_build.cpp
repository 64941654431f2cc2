// A consumer program that touches every SIMD loop fusor instantiates (elementwise on each SIMD
// lane type, masks and selections, fma, reductions whole and along axes, arg-reductions), plus
// printing, .npy, FFTs and a matrix product. tests/CMakeLists.txt compiles it with
// -Wall -Wextra -Werror under g++ and clang, for this machine and for AVX-512: a warning that
// fusor's headers cause in a user's build fails the test.
#include <fusor/fusor.hpp>

#include <complex>
#include <cstdint>
#include <iostream>
#include <sstream>

namespace {

template <class T>
double elementwise_and_reductions(fusor::index_t n) {
  using namespace fusor;
  auto a = arange<T>(T(n)), b = full<T>({n}, T(3));
  array<T> c = a * b + b - a;
  array<T> d = where(a > b, maximum(a, b), minimum(c, b));
  array<T> e = clip(fma(a, b, c), T(0), T(100)) + abs(-d);
  array<bool> m = logical_and(a != b, !(c < d));
  auto mat = e.reshape({n / 4, 4});
  return double(sum(e)) + double(max(d)) + double(min(c)) + double(argmax(e)) + double(sum(m)) +
         double(sum(sum(mat, 0))) + double(max(mat, 1)(0)) + double(argmin(mat, 0)(1));
}

template <class T>
double floating(fusor::index_t n) {
  using namespace fusor;
  auto x = linspace<T>(T(0.1), T(2), n);
  array<T> y = exp(x) * sin(x) + sqrt(x) / cos(x) - log(x) + tanh(x) * atan2(x, x + T(1));
  array<T> z = pow(x, T(2.5)) + floor(x) + round(y) + sign(x - T(1));
  array<bool> bad = isnan(y) || isinf(z);
  return double(sum(y)) + double(mean(z)) + double(fusor::std(z)) + double(prod(x(range(0, 8)))) +
         double(norm(y)) + double(sum(bad));
}

template <class T>
double integers(fusor::index_t n) {
  using namespace fusor;
  auto i = arange<T>(T(n));
  array<T> j = (((i << T(2)) >> T(1)) ^ (i & T(7))) | ~i;
  array<T> k = i % T(5) + floor_divide(i, T(3));
  return double(sum(j)) + double(sum(k)) + double(max(j));
}

}  // namespace

int main() {
  using namespace fusor;
  const index_t n = 1000;
  double total = elementwise_and_reductions<float>(n) + elementwise_and_reductions<double>(n) +
                 elementwise_and_reductions<std::int32_t>(n) + elementwise_and_reductions<std::int64_t>(n) +
                 floating<float>(n) + floating<double>(n) + integers<std::int32_t>(n) + integers<std::int64_t>(n);

  random::generator g(7);
  auto r = random::normal<float>(g, {8, 64});
  // generators fused into statements: a packet type, a bool draw in a where, a grid
  array<float> noisy = r + lazy::random::uniform<float>(g, r.shape());
  array<double> masked = where(lazy::random::bernoulli(g, {8, 64}), lazy::coordinates<double>({8, 64}, 1), 0.0);
  total += double(sum(noisy)) + sum(masked) + double(sum(lazy::eye<std::int32_t>(5)));
  auto spectrum = fft::rfft(r);
  array<float> back = fft::irfft(spectrum, 64);
  auto product = matmul(r, transpose(r));
  array<std::complex<double>> zc = exp(array<std::complex<double>>{std::complex<double>(1.0, 2.0), std::complex<double>(-0.5, 0.25)});
  std::ostringstream out;
  out << back(range(0, 2), range(0, 4)) << product(0, 0) << zc << array<std::uint8_t>{1, 2} << array<bool>{true};
  const auto bytes = to_npy_bytes(back);
  total += double(load_npy_bytes<float>(bytes).size()) + double(out.str().size());
  std::cout << "quiet_build: " << (total == total ? "ok" : "nan") << "\n";
  return total == total ? 0 : 1;
}
