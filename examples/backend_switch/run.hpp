#pragma once
// The program both main.cpp (cpu) and main.cu (cuda) compile: it uses fusor::default_backend,
// which this project's CMakeLists sets from its BACKEND option. The check runs on the host
// against a plain loop.
#include <algorithm>
#include <cstdio>
#include <vector>

#include "zscore.hpp"

inline int run() {
  using B = fusor::default_backend;
  const fusor::index_t n = 100003;
  fusor::random::generator g(7);
  fusor::array<float> x = fusor::random::normal<float>(g, {n}, 3.0f, 2.0f);  // on B: no tag named
  auto [z, spread] = zscore(x);

  // reference: a plain loop over the same draw, on the host
  fusor::array<float, fusor::cpu> xh = fusor::to<fusor::cpu>(x), zh = fusor::to<fusor::cpu>(z);
  double mean = 0, var = 0, worst = 0, max_abs = 0;
  for (fusor::index_t i = 0; i < n; ++i) mean += xh(i);
  mean /= double(n);
  for (fusor::index_t i = 0; i < n; ++i) var += (xh(i) - mean) * (xh(i) - mean);
  const double sd = std::sqrt(var / double(n));
  for (fusor::index_t i = 0; i < n; ++i) {
    const double ref = (xh(i) - mean) / sd;
    worst = std::max(worst, std::abs(zh(i) - ref));
    max_abs = std::max(max_abs, std::abs(ref));
  }
  const bool ok = worst < 1e-5 && std::abs(spread - max_abs) < 1e-5;
  std::printf("backend_switch on %s: n = %lld, max |z| = %.4f, worst error %.2e: %s\n",
              fusor::backend_traits<B>::name, static_cast<long long>(n), spread, worst, ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
