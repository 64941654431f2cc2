// The autodiff example's body, written once for any backend: examples/autodiff.cpp runs it on
// the cpu, examples/autodiff.cu on cuda.
#pragma once
#include <cmath>
#include <cstdio>

namespace autodiff_example {

// A function written once: it runs on arrays, on arrays of dual numbers and on reverse-mode
// variables, on every backend. (sum is called unqualified: argument-dependent lookup picks
// fusor::ad::sum for variables, which records the reduction on their tape.)
template <class X>
auto energy(const X& x) {
  return sum(sin(x) * exp(-x * x) + x * x / 2.0);
}

// Its gradient written by hand, to check against: cos(x)e^{-x^2} - 2x sin(x)e^{-x^2} + x.
template <fusor::backend B>
fusor::array<double, B> energy_gradient(const fusor::array<double, B>& x) {
  return fusor::array<double, B>(cos(x) * exp(-x * x) - 2.0 * x * sin(x) * exp(-x * x) + x);
}

/// Returns 0 when every derivative agrees with the hand-written one.
template <fusor::backend B>
int run() {
  using namespace fusor;
  const index_t n = 1'000'001;
  random::generator g(7);
  const array<double, B> x = random::uniform<double, B>(g, {n}, -2.0, 2.0);
  const array<double, B> v = random::normal<double, B>(g, {n});
  const array<double, B> grad = energy_gradient(x);

  // value and directional derivative in one fused pass
  const auto [value, along_v] = ad::jvp([](const auto& t) { return energy(t); }, x, v);
  const double want = sum(grad * v);
  std::printf("energy %.6f, derivative along v %.6f (hand-written gradient . v: %.6f)\n", value, along_v, want);

  // the gradient by reverse mode: one recorded node, one fused backward pass
  const auto [value2, rev] = ad::value_and_grad([](const auto& t) { return energy(t); })(x);
  const double grad_err = max(abs(rev - grad));
  std::printf("value_and_grad: energy %.6f, max error of the gradient %.2e\n", value2, grad_err);

  // the gradient of a small slice by forward mode, and a gradcheck against central differences
  const array<double, B> head = x(range(0, 16)).copy();
  const array<double, B> g16 = ad::jacfwd([](const auto& t) { return energy(t); }, head);
  const double err = max(abs(g16 - energy_gradient(head)));
  const auto check = ad::gradcheck([](const auto& t) { return energy(t); }, head, {.per_coordinate = true});
  std::printf("jacfwd gradient of 16 inputs: max error %.2e; %s\n", err, check.report().c_str());
  const bool ok = std::abs(along_v - want) <= 1e-9 * std::abs(want) + 1e-9 && err < 1e-12 && grad_err < 1e-12 &&
                  std::abs(value2 - value) <= 1e-9 * std::abs(value) && check.passed;
  std::printf("%s\n", ok ? "autodiff: ok" : "autodiff: MISMATCH");
  return ok ? 0 : 1;
}

}  // namespace autodiff_example
