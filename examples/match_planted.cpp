// Template matching on a planted problem: three rotated copies of a template hidden in a noisy
// volume, found again by an exhaustive FLCSphericalMask scan over a 30-degree rotation set and
// peak calling with a threshold that noise alone would cross once in the whole search. The
// matching is written once for any backend B (this program runs it on the cpu); the problem is
// built on the host.
#include <fusor/fusor.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

namespace match = fusor::match;
using fusor::array;
using fusor::extents;
using fusor::index_t;

template <class B>
int find_planted() {
  // the template: an elongated blob with a side lobe, so that every rotation looks different
  const extents m{17, 17, 17};
  match::mask_options body, lobe;
  body.edge = lobe.edge = match::mask_edge::gaussian(1.0);
  lobe.center = match::vec3{8, 12, 9};
  const array<float, B> templ(match::ellipsoid_mask<B>(m, {5, 3, 2}, body) + 0.6f * match::sphere_mask<B>(m, 1.5, lobe));

  // the target: noise with three copies planted at known centres and rotations
  const extents n{72, 64, 68};
  const auto rotations = match::uniform_rotations(30.0);
  struct copy {
    index_t x, y, z;
    std::size_t rotation;
  };
  const std::vector<copy> planted{{18, 20, 22, 40}, {50, 40, 30, 211}, {30, 46, 52, 377}};
  fusor::random::generator g(11);
  array<float> target = fusor::random::normal<float>(g, n, 0.0f, 0.3f);  // built on the host
  for (const copy& c : planted) {
    const auto turned = fusor::to<fusor::cpu>(match::rigid_transform(templ, rotations[c.rotation]));
    for (index_t i = 0; i < m[0]; ++i)
      for (index_t j = 0; j < m[1]; ++j)
        for (index_t k = 0; k < m[2]; ++k)
          target.data()[((c.x + i - 8) * n[1] + (c.y + j - 8)) * n[2] + (c.z + k - 8)] +=
              turned.data()[(i * m[1] + j) * m[2] + k];
  }

  // every rotation of the set, scored as pyTME's FLCSphericalMask, keeping the scores' spread
  const auto mask = match::sphere_mask<B>(m, 8.0);
  match::scan_options options;
  options.statistics = true;
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = match::scan(fusor::to<B>(target), templ, mask, rotations, match::score::flc_spherical_mask, options);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%zu rotations of a %lld^3 template over a %lld x %lld x %lld target (FFT grid %lld x %lld x %lld): "
              "%.2f s, %.2f ms per rotation\n",
              rotations.size(), (long long)m[0], (long long)n[0], (long long)n[1], (long long)n[2],
              (long long)r.fft_shape[0], (long long)r.fft_shape[1], (long long)r.fft_shape[2], seconds,
              1e3 * seconds / double(rotations.size()));

  // the peaks at least a template radius apart that noise would reach once in the whole search
  match::peak_options find;
  find.min_distance = 8.0;
  find.false_positives = 1.0;
  const auto peaks = match::find_peaks(r, rotations, find);
  std::printf("scores: mean %.4f, spread %.4f over %lld; threshold for one false positive: %.3f\n", r.statistics.mean,
              r.statistics.stddev, (long long)r.statistics.count, match::false_positive_threshold(r.statistics, 1.0));
  int found = 0;
  for (const match::peak& p : peaks) {
    const bool hit = std::any_of(planted.begin(), planted.end(), [&](const copy& c) {
      return c.x == p.position[0] && c.y == p.position[1] && c.z == p.position[2] &&
             c.rotation == std::size_t(p.rotation);
    });
    found += hit;
    std::printf("peak at (%lld, %lld, %lld): score %.3f, rotation %d (RELION rot %.1f tilt %.1f psi %.1f)%s\n",
                (long long)p.position[0], (long long)p.position[1], (long long)p.position[2], p.score, p.rotation,
                p.euler[0], p.euler[1], p.euler[2], hit ? "" : "  <- not planted");
  }
  if (found != int(planted.size()) || peaks.size() != planted.size()) {
    std::printf("match_planted: found %d of %zu copies\n", found, planted.size());
    return 1;
  }
  std::printf("match_planted: ok\n");
  return 0;
}

int main() { return find_planted<fusor::cpu>(); }
