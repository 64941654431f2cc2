#pragma once
// A template from a density map (an EMDB entry, a subtomogram average): brought to the tomogram's
// voxel size by Fourier resampling (resample.hpp), its centre put on the box's centre voxel,
// boxed, and optionally low-passed, mirrored (the other hand) and inverted (dark protein).
//
// Resampling keeps the box: a grid of n voxels of size s becomes m voxels of size n s / m. To reach
// the voxel size asked for, each axis is first padded (with the mean of the map's faces) to the
// least length n' whose n' s / size is within 1e-4 of a whole number m' (or the nearest up to
// n' = n + max(n, 160)); the voxel size the result really has, n' s / m', is returned with it
// (within 1e-3 of the one asked for, or the call throws), for the caller to write into the
// file's header.
#include <array>
#include <cmath>
#include <complex>
#include <string>

#include "filters.hpp"
#include "resample.hpp"
#include "transform.hpp"

namespace fusor::match {

struct map_template_options {
  /// Å per voxel of the result (the tomogram's).
  double voxel_size = 0;
  /// The result's shape; empty: the map's extent at the new voxel size.
  extents box;
  /// The point put on the box's centre voxel: the map's centre of mass (of its positive values)
  /// when true, else its centre voxel n // 2.
  bool center_of_mass = false;
  /// A Gaussian low-pass at this resolution (Å; fourier_filter's bandpass), 0 for none.
  double lowpass = 0;
  /// Mirrors the result along z (mirror(v, 2)): the other handedness.
  bool mirror = false;
  /// Negates the result.
  bool invert = false;
};

/// A volume with the voxel size it really has (Å along x, y, z).
template <class B>
struct sized_volume {
  array<float, B> volume;
  std::array<double, 3> voxel_size{};
};

namespace detail {

/// The least padded length n' >= n whose n' from / to is within 1e-4 of a whole number m'
/// (relative to m'), or failing that the nearest in [n, n + max(n, 160)], with that m'.
inline std::array<index_t, 2> resample_lengths(index_t n, double from, double to) {
  index_t best_n = n, best_m = 1;
  double best = 1e300;
  for (index_t p = n; p <= n + std::max<index_t>(n, 160); ++p) {
    const double exact = double(p) * from / to;
    const index_t m = std::max<index_t>(1, index_t(std::llround(exact)));
    const double err = std::fabs(exact - double(m)) / double(m);
    if (err < best - 1e-12) best = err, best_n = p, best_m = m;
    if (best <= 1e-4) break;
  }
  return {best_n, best_m};
}

/// The centre of mass (voxels) of a volume's positive values; a value_error when it has none.
template <class Host>
vec3 positive_center_of_mass(const Host& v) {
  const extents n = v.shape();
  double w = 0, c[3] = {0, 0, 0};
  for (index_t i = 0; i < n[0]; ++i)
    for (index_t j = 0; j < n[1]; ++j)
      for (index_t k = 0; k < n[2]; ++k) {
        const double x = v.data()[(i * n[1] + j) * n[2] + k];
        if (!(x > 0)) continue;
        w += x, c[0] += x * double(i), c[1] += x * double(j), c[2] += x * double(k);
      }
  if (!(w > 0))
    throw value_error("fusor::match::template_from_map: the centre of mass needs positive density, and the map has no value "
                      "above 0; invert it first (or centre on the box)");
  return {c[0] / w, c[1] / w, c[2] / w};
}

/// The mean of the voxels on a volume's six faces.
template <class Host>
double face_mean(const Host& v) {
  const extents n = v.shape();
  double s = 0, count = 0;
  for (index_t i = 0; i < n[0]; ++i)
    for (index_t j = 0; j < n[1]; ++j)
      for (index_t k = 0; k < n[2]; ++k)
        if (i == 0 || j == 0 || k == 0 || i == n[0] - 1 || j == n[1] - 1 || k == n[2] - 1) {
          s += v.data()[(i * n[1] + j) * n[2] + k];
          count += 1;
        }
  return s / count;
}

}  // namespace detail

/// The template `o` describes from `map` (voxel sizes `map_voxel`, Å along x, y, z). Computed on
/// the host, returned on B.
template <class B>
sized_volume<B> template_from_map(const array<float, B>& map, const std::array<double, 3>& map_voxel, const map_template_options& o) {
  constexpr double pi = 3.14159265358979323846;
  detail::require_volume(map.shape(), "template_from_map");
  const extents n = map.shape();
  if (map.size() == 0) throw shape_error("fusor::match::template_from_map: expected a non-empty map, got shape " + to_string(n));
  for (int k = 0; k < 3; ++k)
    if (!(std::isfinite(map_voxel[k]) && map_voxel[k] > 0))
      throw value_error(std::string("fusor::match::template_from_map: expected the map's voxel size along ") + "xyz"[k] +
                        " finite and > 0 Å, got " + std::to_string(map_voxel[k]));
  if (!(std::isfinite(o.voxel_size) && o.voxel_size > 0))
    throw value_error("fusor::match::template_from_map: expected a finite voxel size > 0 Å, got " + std::to_string(o.voxel_size));
  if (!o.box.empty()) detail::require_shape(o.box, "template_from_map");
  if (!(std::isfinite(o.lowpass) && o.lowpass >= 0))
    throw value_error("fusor::match::template_from_map: expected a finite low-pass resolution >= 0 Å, got " +
                      std::to_string(o.lowpass));

  using H = detail::host_of_t<B>;
  const array<float, H> in = to<H>(map);
  const vec3 c = o.center_of_mass ? detail::positive_center_of_mass(in) : volume_center(n);
  extents padded{0, 0, 0}, m{0, 0, 0};
  std::array<double, 3> size{};
  for (int k = 0; k < 3; ++k) {
    const auto [p, q] = detail::resample_lengths(n[k], map_voxel[k], o.voxel_size);
    padded[k] = p, m[k] = q;
    size[k] = double(p) * map_voxel[k] / double(q);
    if (std::fabs(size[k] - o.voxel_size) > 1e-3 * o.voxel_size)
      throw value_error(std::string("fusor::match::template_from_map: no padding of the map's ") + std::to_string(n[k]) +
                        " voxels of " + std::to_string(map_voxel[k]) + " Å along " + "xyz"[k] + " resamples to voxels of " +
                        std::to_string(o.voxel_size) + " Å within 0.1% (nearest: " + std::to_string(size[k]) + " Å)");
  }
  // the map padded with its faces' mean, so that no step appears at the new faces
  array<float, H> grown = full<float, H>(padded, float(detail::face_mean(in)));
  for (index_t i = 0; i < n[0]; ++i)
    for (index_t j = 0; j < n[1]; ++j)
      std::copy_n(in.data() + (i * n[1] + j) * n[2], n[2], grown.data() + (i * padded[1] + j) * padded[2]);
  // shift the content so that c lands on the new grid's centre voxel m // 2, which lies at
  // (m // 2) n' / m old voxels: a phase ramp on the old grid's frequencies
  double shift[3];
  for (int k = 0; k < 3; ++k) shift[k] = double(m[k] / 2) * double(padded[k]) / double(m[k]) - c[k];
  const auto ramp = [&](index_t f0, index_t f1, index_t f2) {
    const double phase = -2 * pi *
                         (double(f0) * shift[0] / double(padded[0]) + double(f1) * shift[1] / double(padded[1]) +
                          double(f2) * shift[2] / double(padded[2]));
    return std::complex<double>(std::cos(phase), std::sin(phase));
  };
  const auto spec = to<H>(fft::rfftn(grown));
  auto window = detail::window_spectrum(spec, padded, m, double(m.numel()) / double(padded.numel()), ramp);
  const array<float, H> resampled = fft::irfftn(std::move(window), m);

  // boxed about the centre voxel: out[j] = resampled[j - box // 2 + m // 2], the faces' mean beyond
  const extents box = o.box.empty() ? m : o.box;
  const float outside = float(detail::face_mean(resampled));
  array<float, H> out(box);
  for (index_t i = 0; i < box[0]; ++i)
    for (index_t j = 0; j < box[1]; ++j)
      for (index_t k = 0; k < box[2]; ++k) {
        const index_t s0 = i - box[0] / 2 + m[0] / 2, s1 = j - box[1] / 2 + m[1] / 2, s2 = k - box[2] / 2 + m[2] / 2;
        const bool inside = s0 >= 0 && s0 < m[0] && s1 >= 0 && s1 < m[1] && s2 >= 0 && s2 < m[2];
        out.data()[(i * box[1] + j) * box[2] + k] = inside ? resampled.data()[(s0 * m[1] + s1) * m[2] + s2] : outside;
      }
  if (o.lowpass > 0)
    out = apply_filter(out, fourier_filter{(size[0] + size[1] + size[2]) / 3, bandpass{o.lowpass, 0, true}, {}, {}, {}, {}});
  if (o.mirror) out = mirror(out, 2);
  if (o.invert) out = array<float, H>(-out);
  return {to<B>(out), size};
}

}  // namespace fusor::match
