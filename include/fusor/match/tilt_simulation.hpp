#pragma once
// A simulated tilt series and the tomogram reconstructed from it, built from the library's own
// rotations, generators and FFTs on any backend, deterministic by seed: copies of a template at
// random rotations and places in a volume; at each tilt a real-space projection (a line integral
// along the tilt's beam, trilinear samples one voxel apart), multiplied in Fourier space by that
// tilt's CTF (its own defocus around the mean, astigmatism) and exposure filter; noise of the
// electron count at the tilt's dose; and a weighted back-projection (each image's spectrum times
// the ram-lak filter, and times sign(CTF) for a phase-flipped tomogram) into the tomogram. The
// tilt axis is y and the beam z (tilt_series' defaults), the images are the tomogram's x × y.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "../core/create.hpp"
#include "../core/random.hpp"
#include "../core/slice.hpp"
#include "../core/transfer.hpp"
#include "../fft/transforms.hpp"
#include "rotations.hpp"
#include "tilt_weight.hpp"
#include "transform.hpp"

namespace fusor::match {

/// What simulate_tilt_series makes. Angles in degrees (default -60..60 in 3° steps); the images are
/// recorded dose-symmetrically (0, +step, -step, +2 step, ...: Hagen's scheme) or in angle order,
/// each with dose_per_tilt e⁻/Å², so each tilt's accumulated dose is the sum of those recorded
/// before it. Each tilt's defocus is drawn uniformly in defocus ± defocus_spread (Å, rounded to whole Å), with
/// astigmatism U - V = astigmatism at one angle for the series. contrast: the image's relative
/// contrast per unit of projected template density per voxel; the noise of an image is the
/// relative shot noise of its electron count, 1 / sqrt(dose_per_tilt · voxel_size²).
struct tilt_simulation {
  extents shape{96, 96, 96};
  double voxel_size = 10;  // Å
  int copies = 4;
  std::vector<double> angles;
  bool dose_symmetric = true;
  double dose_per_tilt = 3;
  double defocus = 35000, defocus_spread = 15000, astigmatism = 400, astigmatism_angle = 30;
  microscope optics;
  double contrast = 0.02;
  bool noise = true;
  bool phase_flip = false;
  std::uint64_t seed = 1;
};

/// The tomogram and what made it: the series (angles, doses, defocus per tilt, in angle order;
/// correction phase_flip when the reconstruction flipped phases), and each copy's voxel (the
/// template's centre voxel m // 2 lands there) and rotation.
template <class B>
struct simulated_tilt_series {
  array<float, B> tomogram;
  tilt_series series;
  std::vector<std::array<index_t, 3>> positions;
  std::vector<quaternion> rotations;
  /// Which template each copy is: 0 the template searched for, k > 0 the k-th of the others.
  std::vector<int> kinds;
};

namespace detail {

/// Each tilt's image: the line integral of the volume along the tilt's beam m = (-sin t, 0, cos t)
/// through the image point u along d = (cos t, 0, sin t) from the (x, z) centre, at row y; the
/// image is (tilts, n0, n1) with u = i - (n0 - 1) / 2. Samples one voxel apart along m, trilinear,
/// zero off the volume.
struct tilt_projection {
  using value_type = float;
  volume_sampler volume;
  const double* trig;  // sin, cos per tilt
  index_t n0, n1;      // the image's (x, y)
  double cx, cz;       // the volume's (x, z) centre
  index_t steps;       // samples from -steps to steps
  FUSOR_HD void fill(index_t first, float* out, index_t count) const {
    for (index_t e = 0; e < count; ++e) {
      const index_t p = first + e, y = p % n1, i = (p / n1) % n0, t = p / (n1 * n0);
      const double s = trig[2 * t], c = trig[2 * t + 1], u = double(i) - 0.5 * double(n0 - 1);
      float sum = 0;
      for (index_t k = -steps; k <= steps; ++k) {
        const double x = cx + u * c - double(k) * s, z = cz + u * s + double(k) * c;
        sum += volume(float(x), float(y), float(z));
      }
      out[e] = sum;
    }
  }
};

/// The back-projection: tomogram voxel (x, y, z) sums over the tilts each filtered image at
/// u = (x - cx) cos t + (z - cz) sin t, linearly interpolated (zero off the image).
struct tilt_backprojection {
  using value_type = float;
  const float* images;  // (tilts, n0, n1)
  const double* trig;
  index_t tilts, n0, n1, n2;  // n0, n1: the images' and the tomogram's x, y; n2 the tomogram's z
  double cx, cz, scale;
  FUSOR_HD void fill(index_t first, float* out, index_t count) const {
    for (index_t e = 0; e < count; ++e) {
      const index_t p = first + e, z = p % n2, y = (p / n2) % n1, x = p / (n2 * n1);
      double sum = 0;
      for (index_t t = 0; t < tilts; ++t) {
        const double u = (double(x) - cx) * trig[2 * t + 1] + (double(z) - cz) * trig[2 * t] + 0.5 * double(n0 - 1);
        const double f = ::floor(u);
        const index_t i = index_t(f);
        if (i < -1 || i >= n0) continue;
        const double w = u - f;
        const float* row = images + t * n0 * n1 + y;
        const double a = i >= 0 ? double(row[i * n1]) : 0.0, b = i + 1 < n0 ? double(row[(i + 1) * n1]) : 0.0;
        sum += a + w * (b - a);
      }
      out[e] = float(sum * scale);
    }
  }
};

/// The images' spectra (tilts, n0, n1 / 2 + 1) multiplied per tilt: stage 0, each tilt's CTF and
/// exposure filter (what the microscope did); stage 1, the reconstruction's ram-lak filter along
/// the image's x (2 |f_x|, 1 at Nyquist), times sign(CTF) for a phase-flipped tomogram.
struct tilt_image_filter {
  using value_type = float;
  tilt_weight_generator weight;  // its per-tilt numbers, optics and exposure model
  index_t n0, n1, h1;
  int stage;
  bool flip;
  FUSOR_HD void fill(index_t first, float* out, index_t count) const {
    for (index_t e = 0; e < count; ++e) {
      const index_t p = first + e, k = p % h1, i = (p / h1) % n0, t = p / (h1 * n0);
      const double x = tilt_weight_generator::freq(i, n0), y = double(k) / double(n1);
      const double* q = weight.params + t * tilt_weight_generator::stride;
      double v;
      if (stage == 0) {
        v = weight.ctf_at(q, x, y) * weight.exposure_at(q, x, y);
      } else {
        v = 2.0 * ::fabs(x);
        if (flip) v *= weight.ctf_at(q, x, y) < 0 ? -1.0 : 1.0;
      }
      out[e] = float(v);
    }
  }
};

}  // namespace detail

namespace detail {
inline std::vector<double> sin_cos_of(const std::vector<double>& angles) {
  std::vector<double> out;
  for (double a : angles) {
    if (!(a >= -90 && a <= 90)) throw value_error("fusor::match: a tilt angle " + number_text(a) + "°; expected [-90, 90]");
    out.push_back(std::sin(a * 3.14159265358979323846 / 180.0));
    out.push_back(std::cos(a * 3.14159265358979323846 / 180.0));
  }
  return out;
}
template <class B>
array<double, B> on_backend(const std::vector<double>& host) {
  array<double, B> out(extents{index_t(host.size())});
  backend_memory<B>::copy_from_host(out.data(), host.data(), index_t(host.size()));
  return out;
}
}  // namespace detail

/// The projections of `volume` (x, y, z) at each tilt angle (degrees, about y, beam z), as a stack
/// (tilts, x, y): image point u along d = (cos t, 0, sin t) from the volume's (x, z) centre, row y,
/// u = i - (n0 - 1) / 2; the line integral along m = (-sin t, 0, cos t) by trilinear samples one
/// voxel apart, zero off the volume.
template <class B>
array<float, B> project_tilts(const array<float, B>& volume, const std::vector<double>& angles) {
  detail::require_volume(volume.shape(), "project_tilts");
  const extents& n = volume.shape();
  const array<double, B> trig = detail::on_backend<B>(detail::sin_cos_of(angles));
  const index_t steps = index_t(std::ceil(0.5 * std::sqrt(double(n[0] * n[0] + n[2] * n[2])))) + 1;
  const extents stack{index_t(angles.size()), n[0], n[1]};
  return array<float, B>(generator_expr<detail::tilt_projection, B>{
      detail::tilt_projection{detail::volume_sampler{volume.data(), n[0], n[1], n[2], interpolation::linear, 0.0f}, trig.data(), n[0], n[1],
                              0.5 * double(n[0] - 1), 0.5 * double(n[2] - 1), steps},
      stack, contiguous_strides(stack)});
}

/// The tomogram of `shape` reconstructed from a stack of images (tilts, x, y) at the series'
/// angles by weighted back-projection: each image's spectrum times the ram-lak filter along its x
/// (2 |f_x|, 1 at Nyquist), and for a series whose correction is phase_flip times the sign of that
/// tilt's CTF (at voxel_size Å per voxel); then every voxel the mean over the tilts of its image
/// at u = (x - cx) cos t + (z - cz) sin t, linearly interpolated (zero off the image).
template <class B>
array<float, B> weighted_back_projection(const array<float, B>& images, const tilt_series& series, const extents& shape,
                                         double voxel_size) {
  detail::require_volume(shape, "weighted_back_projection (the tomogram)");
  validate_tilt_series(series);
  const extents& st = images.shape();
  if (st.size() != 3 || st[0] != index_t(series.tilts.size()) || st[1] != shape[0] || st[2] != shape[1])
    throw shape_error("fusor::match::weighted_back_projection: expected images of shape (" + std::to_string(series.tilts.size()) + ", " +
                      std::to_string(shape[0]) + ", " + std::to_string(shape[1]) + ") for the series and tomogram " + to_string(shape) +
                      ", got " + to_string(st));
  if (series.tilt_axis != 1 || series.beam_axis != 2)
    throw value_error("fusor::match::weighted_back_projection: reconstructs about tilt axis y with beam z, got axes " +
                      std::to_string(series.tilt_axis) + " and " + std::to_string(series.beam_axis));
  std::vector<double> angles;
  for (const tilt_image& t : series.tilts) angles.push_back(t.angle);
  const array<double, B> trig = detail::on_backend<B>(detail::sin_cos_of(angles));
  tilt_weighting w;
  w.series = series;
  const detail::tilt_weight_parts<B> parts = detail::make_tilt_weight<B>(w, shape, voxel_size);
  const bool flip = series.correction == ctf_correction::phase_flip && series.has_defocus();
  const extents half{st[0], st[1], st[2] / 2 + 1}, axes{1, 2};
  auto spectra = fft::rfftn(images, extents{st[1], st[2]}, axes);
  spectra = spectra * array<float, B>(generator_expr<detail::tilt_image_filter, B>{
                          detail::tilt_image_filter{parts.gen, st[1], st[2], st[2] / 2 + 1, 1, flip}, half, contiguous_strides(half)});
  const array<float, B> weighted = fft::irfftn(std::move(spectra), extents{st[1], st[2]}, axes);
  return array<float, B>(generator_expr<detail::tilt_backprojection, B>{
      detail::tilt_backprojection{weighted.data(), trig.data(), st[0], shape[0], shape[1], shape[2], 0.5 * double(shape[0] - 1),
                                  0.5 * double(shape[2] - 1), 1.0 / double(st[0])},
      shape, contiguous_strides(shape)});
}

/// The series that a simulation records: its angles in order, the dose accumulated before each
/// (in the recording order), and each tilt's defocus, drawn from `seed`.
inline tilt_series simulated_series(const tilt_simulation& s) {
  std::vector<double> angles = s.angles;
  if (angles.empty())
    for (int a = -60; a <= 60; a += 3) angles.push_back(a);
  std::sort(angles.begin(), angles.end());
  if (!(std::isfinite(s.dose_per_tilt) && s.dose_per_tilt >= 0))
    throw value_error("fusor::match::simulate_tilt_series: expected a dose per tilt >= 0 e/Å², got " + detail::number_text(s.dose_per_tilt));
  if (!(std::isfinite(s.defocus_spread) && s.defocus_spread >= 0 && s.defocus - s.defocus_spread > 0))
    throw value_error("fusor::match::simulate_tilt_series: expected defocus - defocus_spread > 0 (underfocus), got " +
                      detail::number_text(s.defocus) + " ± " + detail::number_text(s.defocus_spread) + " Å");
  if (!(std::isfinite(s.astigmatism) && std::abs(s.astigmatism) < 2 * (s.defocus - s.defocus_spread)))
    throw value_error("fusor::match::simulate_tilt_series: the astigmatism " + detail::number_text(s.astigmatism) +
                      " Å leaves a defocus that is not an underfocus");
  // the recording order: by |angle| then positive first (dose-symmetric), or by angle
  std::vector<std::size_t> order(angles.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  // (std::sort with the index as the last key: clang 19 with libstdc++ 12 warns in stable_sort's
  // temporary buffer)
  if (s.dose_symmetric)
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      const double fa = std::abs(angles[a]), fb = std::abs(angles[b]);
      return fa != fb ? fa < fb : angles[a] != angles[b] ? angles[a] > angles[b] : a < b;
    });
  std::vector<double> dose(angles.size());
  for (std::size_t r = 0; r < order.size(); ++r) dose[order[r]] = double(r) * s.dose_per_tilt;
  std::mt19937_64 draw(s.seed * 6364136223846793005ULL + 1442695040888963407ULL);
  std::uniform_real_distribution<double> spread(-1.0, 1.0);
  tilt_series out;
  out.optics = s.optics;
  out.pixel_size = s.voxel_size;
  out.correction = s.phase_flip ? ctf_correction::phase_flip : ctf_correction::none;
  for (std::size_t i = 0; i < angles.size(); ++i) {
    // whole Å, as CTF programs report them (and every file written of the series holds them exactly)
    const double df = std::round(s.defocus + s.defocus_spread * spread(draw));
    out.tilts.push_back({angles[i], dose[i], df + 0.5 * s.astigmatism, df - 0.5 * s.astigmatism, s.astigmatism_angle, 0});
  }
  validate_tilt_series(out);
  return out;
}

/// The simulation (tilt_simulation says what), with `templ` (a density, a cube no larger than the
/// volume) planted `copies` times, and each of `others` (densities of the template's shape: other
/// particles, to tell apart from the template's) `other_copies[k]` times, every copy a template
/// apart from the rest and half a template inside every face.
template <class B>
simulated_tilt_series<B> simulate_tilt_series(const array<float, B>& templ, const tilt_simulation& s,
                                              const std::vector<array<float, B>>& others = {}, const std::vector<int>& other_copies = {}) {
  detail::require_volume(s.shape, "simulate_tilt_series (the volume)");
  detail::require_volume(templ.shape(), "simulate_tilt_series (the template)");
  const extents& n = s.shape;
  const extents& m = templ.shape();
  if (n.numel() == 0 || m.numel() == 0) throw shape_error("fusor::match::simulate_tilt_series: expected a non-empty volume and template");
  for (int a = 0; a < 3; ++a)
    if (m[a] > n[a])
      throw shape_error("fusor::match::simulate_tilt_series: the template " + to_string(m) + " is larger than the volume " + to_string(n));
  if (others.size() != other_copies.size())
    throw value_error("fusor::match::simulate_tilt_series: " + std::to_string(others.size()) + " other templates but " +
                      std::to_string(other_copies.size()) + " counts of their copies; expected one count each");
  int total = s.copies;
  for (std::size_t k = 0; k < others.size(); ++k) {
    if (others[k].shape() != m)
      throw shape_error("fusor::match::simulate_tilt_series: other template " + std::to_string(k) + " is " + to_string(others[k].shape()) +
                        "; expected the template's shape " + to_string(m));
    if (other_copies[k] < 0)
      throw value_error("fusor::match::simulate_tilt_series: expected copies >= 0 of other template " + std::to_string(k) + ", got " +
                        std::to_string(other_copies[k]));
    total += other_copies[k];
  }
  detail::check_length(s.voxel_size, "simulate_tilt_series", "voxel size", "(Å)");
  if (!(std::isfinite(s.contrast) && s.contrast > 0))
    throw value_error("fusor::match::simulate_tilt_series: expected a contrast > 0, got " + detail::number_text(s.contrast));
  if (s.copies < 0) throw value_error("fusor::match::simulate_tilt_series: expected copies >= 0, got " + std::to_string(s.copies));
  simulated_tilt_series<B> out;
  out.series = simulated_series(s);
  const std::size_t tilts = out.series.tilts.size();

  // the copies: places a template apart, half a template inside each face, drawn until they fit
  std::mt19937_64 pick(s.seed * 7919 + 17);
  const index_t h0 = m[0] / 2, h1 = m[1] / 2, h2 = m[2] / 2, span = std::max(m[0], std::max(m[1], m[2]));
  for (int tries = 0; int(out.positions.size()) < total && tries < 100000; ++tries) {
    const std::array<index_t, 3> c{h0 + index_t(pick() % std::uint64_t(n[0] - 2 * h0)), h1 + index_t(pick() % std::uint64_t(n[1] - 2 * h1)),
                                   h2 + index_t(pick() % std::uint64_t(n[2] - 2 * h2))};
    bool apart = true;
    for (const auto& o : out.positions) {
      const double d0 = double(c[0] - o[0]), d1 = double(c[1] - o[1]), d2 = double(c[2] - o[2]);
      apart = apart && std::sqrt(d0 * d0 + d1 * d1 + d2 * d2) >= double(span);
    }
    if (apart) out.positions.push_back(c);
  }
  if (int(out.positions.size()) < total)
    throw value_error("fusor::match::simulate_tilt_series: " + std::to_string(total) + " copies of a " + to_string(m) +
                      " template do not fit a template apart in " + to_string(n) + "; got " + std::to_string(out.positions.size()));
  // the template's copies first, then each other template's (the first s.copies rotations are
  // those of a simulation without others)
  out.rotations = random_rotations(std::int64_t(total), s.seed * 31 + 7);
  out.kinds.assign(std::size_t(s.copies), 0);
  for (std::size_t k = 0; k < others.size(); ++k) out.kinds.insert(out.kinds.end(), std::size_t(other_copies[k]), int(k) + 1);
  array<float, B> sample = zeros<float, B>(n);
  for (std::size_t i = 0; i < out.positions.size(); ++i) {
    const auto& c = out.positions[i];
    auto box = sample(range(c[0] - h0, c[0] - h0 + m[0]), range(c[1] - h1, c[1] - h1 + m[1]), range(c[2] - h2, c[2] - h2 + m[2]));
    box = box + rigid_transform(out.kinds[i] == 0 ? templ : others[std::size_t(out.kinds[i] - 1)], out.rotations[i]);
  }

  // each tilt's image: the projection, its spectrum times the tilt's CTF and exposure filter, the
  // electron count's noise; then the weighted back-projection
  std::vector<double> angles;
  for (const tilt_image& t : out.series.tilts) angles.push_back(t.angle);
  tilt_weighting w;
  w.series = out.series;
  const detail::tilt_weight_parts<B> parts = detail::make_tilt_weight<B>(w, n, s.voxel_size);
  const extents stack{index_t(tilts), n[0], n[1]}, half{index_t(tilts), n[0], n[1] / 2 + 1}, axes{1, 2};
  auto spectra = fft::rfftn(array<float, B>(project_tilts(sample, angles) * float(s.contrast)), extents{n[0], n[1]}, axes);
  spectra = spectra * array<float, B>(generator_expr<detail::tilt_image_filter, B>{
                          detail::tilt_image_filter{parts.gen, n[0], n[1], n[1] / 2 + 1, 0, false}, half, contiguous_strides(half)});
  array<float, B> images = fft::irfftn(std::move(spectra), extents{n[0], n[1]}, axes);
  if (s.noise && s.dose_per_tilt > 0) {
    random::generator g(s.seed * 104729 + 3);
    const double sigma = 1.0 / std::sqrt(s.dose_per_tilt * s.voxel_size * s.voxel_size);
    images = images + random::normal<float, B>(g, stack, 0.0f, float(sigma));
  }
  out.tomogram = weighted_back_projection(images, out.series, n, s.voxel_size);
  return out;
}

}  // namespace fusor::match
