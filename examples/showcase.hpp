#pragma once
// The quickstart's showcase, written once over the backend tag: examples/quickstart.cpp
// instantiates it for cpu, examples/quickstart.cu for cuda.
#include <cstdint>
#include <iostream>

namespace quickstart {

using namespace fusor;

/// Standardises x, then scores it with a fused expression; runs on whichever backend B is.
template <backend B>
void showcase(std::uint64_t seed) {
  random::generator rng(seed);
  auto x = random::normal<float, B>(rng, {4, 1'000'000}, 3.0f, 2.0f);
  auto mu = mean(x, 1, /*keepdims=*/true);          // (4, 1)
  auto sd = fusor::std(x, 1, /*keepdims=*/true);    // (4, 1)
  array<float, B> z = (x - mu) / sd;                 // one fused pass, broadcast over rows
  array<float, B> score = where(z > 0, z * z, 0.5f * sin(z));  // one more pass
  auto spectrum = fft::fft(z);                       // a barrier: one batched FFT call for the 4 rows
  const double parseval = sum(abs(spectrum) * abs(spectrum)) / double(z.shape()[1]);
  std::cout << "backend        : " << backend_traits<B>::name << "\n"
            << "z mean, std    : " << mean(z) << ", " << fusor::std(z) << "\n"
            << "score sum      : " << sum(score) << "  (one pass, nothing allocated)\n"
            << "energy, FFT    : " << sum(z * z) << " = " << parseval << " (Parseval)\n"
            << "z (summarised) :\n" << z << "\n";
}

}  // namespace quickstart
