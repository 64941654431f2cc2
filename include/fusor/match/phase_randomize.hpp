#pragma once
// The random-phase noise correction of STOPGAP and pytom-match-pick: a copy of the template with
// its amplitude spectrum and random phases looks like nothing in the tomogram, yet its scores
// carry everything about the target that favours a template of that spectrum (dense, high-
// contrast regions score high whatever they hold). Scanned with the same rotations and filters,
// its per-voxel best score is subtracted from the template's, and its mean added back:
//   corrected = scores - noise_scores + mean(noise_scores)   (pytom-match-pick's formula).
//
// The random phases are those of the transform of a real Gaussian field (Philox, by seed), so
// they are Hermitian by construction, DC and Nyquist included. (pytom-match-pick's newest version
// can also pull the copy inside a mask by Gerchberg-Saxton rounds. That is phase retrieval: with a
// support near the particle's it converges back towards the template, correlation 0.7 with it on a
// test ellipsoid, and the scan applies the template's mask to the copy anyway. fusor leaves it out.)
#include <cmath>
#include <complex>
#include <cstdint>
#include <string>

#include "../core/random.hpp"
#include "../fft/transforms.hpp"
#include "interpolation.hpp"

namespace fusor::match {

/// The template with its amplitude spectrum and the phases of a seeded Gaussian field. On the
/// host, returned on B.
template <class B>
array<float, B> phase_randomized(const array<float, B>& templ, std::uint64_t seed) {
  detail::require_volume(templ.shape(), "phase_randomized");
  const extents n = templ.shape();
  if (templ.size() == 0) throw shape_error("fusor::match::phase_randomized: expected a non-empty template, got shape " + to_string(n));
  using H = detail::host_of_t<B>;
  const auto spec = to<H>(fft::rfftn(to<H>(templ)));
  random::generator g(seed);
  const auto phases = to<H>(fft::rfftn(random::normal<float, H>(g, n)));
  array<std::complex<float>, H> out(spec.shape());
  for (index_t q = 0; q < spec.size(); ++q) {
    const std::complex<float> p = phases.data()[q];
    const float r = std::abs(p), a = std::abs(spec.data()[q]);
    out.data()[q] = r > 0 ? p * (a / r) : std::complex<float>(a, 0.0f);
  }
  return to<B>(fft::irfftn(std::move(out), n));
}

/// scores - noise_scores + the mean of noise_scores' finite values (see the top of this header);
/// a voxel either map leaves unscored (NaN) stays NaN. The mean goes to *noise_mean when given.
template <class B>
array<float, B> subtract_noise_scores(const array<float, B>& scores, const array<float, B>& noise_scores, double* noise_mean = nullptr) {
  if (scores.shape() != noise_scores.shape())
    throw shape_error("fusor::match::subtract_noise_scores: the noise scores' shape " + to_string(noise_scores.shape()) +
                      " is not the scores' " + to_string(scores.shape()));
  using H = detail::host_of_t<B>;
  const array<float, H> s = to<H>(scores), e = to<H>(noise_scores);
  double sum = 0, count = 0;
  for (index_t q = 0; q < e.size(); ++q)
    if (std::isfinite(e.data()[q])) sum += e.data()[q], count += 1;
  const float mean = count > 0 ? float(sum / count) : 0.0f;
  if (noise_mean) *noise_mean = count > 0 ? sum / count : 0.0;
  array<float, H> out(s.shape());
  for (index_t q = 0; q < s.size(); ++q) out.data()[q] = s.data()[q] - e.data()[q] + mean;
  return to<B>(out);
}

}  // namespace fusor::match
