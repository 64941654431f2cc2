#pragma once
// The density of an atomic model on a grid: a template for matching, built from a structure the
// way an electron microscope sees it (electron scattering factors, each atom blurred by its
// B-factor). The atoms come from a model reader (fusor-match reads PDB and mmCIF with gemmi, and
// takes the factors from gemmi's copy of International Tables C, table 4.3.2.2); this header is
// the placement alone, with no file format and no element table in it.
//
// An atom's scattering factor f(s) = sum_i a_i exp(-b_i s^2), s = |k| / 2 (k in cycles per Å), with
// its B-factor B and occupancy q, is the transform of the density
//   rho(r) = q sum_i a_i (4 pi / beta_i)^(3/2) exp(-4 pi^2 |r|^2 / beta_i),   beta_i = b_i + B,
// whose integral is q sum_i a_i = q f(0). A voxel of a few Å cannot sample that (a carbon's
// sharpest term is 0.06 Å wide); the map holds the density band-limited to the grid, the sampled
// value of sum_k F(k) e^(2 pi i k.r) / V over the box's frequencies up to the grid's Nyquist
// frequency (F: the model's structure factor, V: the box's volume), as a Fourier crop of a finely
// sampled map would. It is computed as a non-uniform FFT: each atom is spread on a grid twice as
// fine with an extra Gaussian blur that that grid samples well, transformed, the blur divided out
// of the frequencies the output keeps (a factor of at most exp(pi^2 / 8) = 3.4, at the Nyquist
// frequency), and cut to the output grid (resample.hpp). The tests measure 2e-6 of the peak
// against the closed form, and 4e-7 of F(0) against the structure factor.
#include <array>
#include <cmath>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "filters.hpp"
#include "resample.hpp"
#include "transform.hpp"

namespace fusor::match {

/// One atom of a model: its position (Å; x, y, z), occupancy, isotropic B-factor (Å^2), the five
/// Gaussians of its scattering factor f(s) = sum_i a_i exp(-b_i s^2) (a_i in Å, b_i in Å^2, s in
/// 1/Å), and its mass (daltons; for the centre of mass).
struct scattering_atom {
  vec3 position{};
  double occupancy = 1;
  double b_factor = 0;
  std::array<double, 5> a{}, b{};
  double mass = 0;
};

struct model_density_options {
  /// Å per voxel of the output.
  double voxel_size = 1;
  /// The output's shape (voxels along x, y, z).
  extents box;
  /// The model point that lands on the box's centre voxel (box // 2), in Å; the centre of mass
  /// (masses times occupancies) when empty.
  std::optional<vec3> center;
  /// A B-factor (Å^2) added to every atom's: a Gaussian blur of the whole map.
  double blur = 0;
  /// A Gaussian low-pass at this resolution (Å; fourier_filter's bandpass), 0 for none.
  double lowpass = 0;
  /// Negates the map (dark protein, as in a tomogram that was not inverted).
  bool invert = false;
};

/// The centre of mass of the atoms, masses times occupancies as weights; a value_error when they
/// weigh nothing.
inline vec3 center_of_mass(std::span<const scattering_atom> atoms) {
  double w = 0, c[3] = {0, 0, 0};
  for (const scattering_atom& t : atoms) {
    const double m = t.mass * t.occupancy;
    w += m;
    for (int k = 0; k < 3; ++k) c[k] += m * t.position[k];
  }
  if (!(w > 0))
    throw value_error("fusor::match::center_of_mass: expected atoms with mass and occupancy, got " + std::to_string(atoms.size()) +
                      " atom(s) of total weight " + std::to_string(w));
  return {c[0] / w, c[1] / w, c[2] / w};
}

/// The model's forward scattering F(0) = sum over atoms of q f(0) = q sum_i a_i (Å): the integral
/// of its density, and so the sum of density_from_model's map times the voxel volume.
inline double forward_scattering(std::span<const scattering_atom> atoms) {
  double f = 0;
  for (const scattering_atom& t : atoms)
    for (double ai : t.a) f += t.occupancy * ai;
  return f;
}

namespace detail {

inline void check_model_options(std::span<const scattering_atom> atoms, const model_density_options& o) {
  const auto finite_at_least = [](double v, double low) { return std::isfinite(v) && v >= low; };
  if (!(std::isfinite(o.voxel_size) && o.voxel_size > 0))
    throw value_error("fusor::match::density_from_model: expected a finite voxel size > 0 Å, got " + std::to_string(o.voxel_size));
  require_shape(o.box, "density_from_model");
  if (!finite_at_least(o.blur, 0))
    throw value_error("fusor::match::density_from_model: expected a finite blur >= 0 Å^2, got " + std::to_string(o.blur));
  if (!finite_at_least(o.lowpass, 0))
    throw value_error("fusor::match::density_from_model: expected a finite low-pass resolution >= 0 Å, got " +
                      std::to_string(o.lowpass));
  if (o.center && !(std::isfinite((*o.center)[0]) && std::isfinite((*o.center)[1]) && std::isfinite((*o.center)[2])))
    throw value_error("fusor::match::density_from_model: expected a finite centre");
  for (std::size_t i = 0; i < atoms.size(); ++i) {
    const scattering_atom& t = atoms[i];
    const std::string who = "fusor::match::density_from_model: atom " + std::to_string(i) + " has ";
    for (int k = 0; k < 3; ++k)
      if (!std::isfinite(t.position[k])) throw value_error(who + "a non-finite coordinate " + "xyz"[k]);
    if (!finite_at_least(t.occupancy, 0)) throw value_error(who + "occupancy " + std::to_string(t.occupancy) + "; expected >= 0");
    if (!finite_at_least(t.b_factor, 0)) throw value_error(who + "B-factor " + std::to_string(t.b_factor) + " Å^2; expected >= 0");
    if (!finite_at_least(t.mass, 0)) throw value_error(who + "mass " + std::to_string(t.mass) + "; expected >= 0");
    for (int g = 0; g < 5; ++g)
      if (!std::isfinite(t.a[g]) || !finite_at_least(t.b[g], 0))
        throw value_error(who + "scattering-factor Gaussian " + std::to_string(g) + " (a " + std::to_string(t.a[g]) + ", b " +
                          std::to_string(t.b[g]) + "); expected a finite a and a finite b >= 0");
  }
}

/// Adds each atom's density, blurred by `spread` (Å^2 more on every Gaussian), to the periodic
/// grid `fine` of spacing h (Å), the point `origin` (Å) at index 0. Each Gaussian is separable:
/// three short tables per atom, then one pass over a cube of 5 standard deviations' radius.
template <class Host>
void spread_atoms(std::span<const scattering_atom> atoms, double extra_b, double spread, const vec3& origin, double h, Host& fine) {
  constexpr double pi = 3.14159265358979323846;
  const extents n = fine.shape();
  float* g = fine.data();
  std::vector<double> line;  // one row of the cube along axis 2
  std::vector<index_t> index[3];
  std::vector<double> part[5][3];
  for (const scattering_atom& t : atoms) {
    if (t.occupancy == 0) continue;
    double beta[5], amp[5], widest = 0;
    for (int i = 0; i < 5; ++i) {
      beta[i] = t.b[i] + t.b_factor + extra_b + spread;
      amp[i] = t.occupancy * t.a[i] * std::pow(4 * pi / beta[i], 1.5);
      widest = std::max(widest, beta[i]);
    }
    const double radius = 5 * std::sqrt(widest / (8 * pi * pi)) / h;  // fine voxels
    index_t lo[3], count[3];
    for (int k = 0; k < 3; ++k) {
      const double u = (t.position[k] - origin[k]) / h;
      lo[k] = index_t(std::ceil(u - radius));
      count[k] = index_t(std::floor(u + radius)) - lo[k] + 1;  // past a face it wraps: the box is periodic
      index[k].resize(std::size_t(count[k]));
      for (int i = 0; i < 5; ++i) part[i][k].resize(std::size_t(count[k]));
      for (index_t d = 0; d < count[k]; ++d) {
        const double x = (double(lo[k] + d) - u) * h;
        index[k][std::size_t(d)] = ((lo[k] + d) % n[k] + n[k]) % n[k];
        for (int i = 0; i < 5; ++i) part[i][k][std::size_t(d)] = std::exp(-4 * pi * pi * x * x / beta[i]);
      }
    }
    line.resize(std::size_t(count[2]));
    for (index_t d0 = 0; d0 < count[0]; ++d0)
      for (index_t d1 = 0; d1 < count[1]; ++d1) {
        std::fill(line.begin(), line.end(), 0.0);
        for (int i = 0; i < 5; ++i) {
          const double w = amp[i] * part[i][0][std::size_t(d0)] * part[i][1][std::size_t(d1)];
          for (index_t d2 = 0; d2 < count[2]; ++d2) line[std::size_t(d2)] += w * part[i][2][std::size_t(d2)];
        }
        float* row = g + (index[0][std::size_t(d0)] * n[1] + index[1][std::size_t(d1)]) * n[2];
        for (index_t d2 = 0; d2 < count[2]; ++d2) row[index[2][std::size_t(d2)]] += float(line[std::size_t(d2)]);
      }
  }
}

}  // namespace detail

/// The model's density on a grid of `o.box` voxels of `o.voxel_size` Å (see the top of this
/// header): each voxel holds the density at its centre, band-limited to the grid, in Å of
/// scattering factor per Å^3, so the map's sum times the voxel volume is forward_scattering(atoms)
/// (when the atoms lie inside the box: the box is periodic, as an FFT's is, and an atom beyond a
/// face adds to the opposite one). Built on the host, returned on B.
template <class B = cpu>
array<float, B> density_from_model(std::span<const scattering_atom> atoms, const model_density_options& o) {
  constexpr double pi = 3.14159265358979323846;
  detail::check_model_options(atoms, o);
  const vec3 c = o.center ? *o.center : center_of_mass(atoms);
  const extents n = o.box;
  const extents fine_shape{2 * n[0], 2 * n[1], 2 * n[2]};
  const double h = o.voxel_size / 2;
  // a Gaussian one fine voxel wide: its transform, sampled every 1/h, aliases 1.5e-5 of itself
  // into the output's band
  const double spread = 8 * pi * pi * h * h;
  vec3 origin;  // the position (Å) of fine index 0: the box's centre voxel sits on c
  for (int k = 0; k < 3; ++k) origin[k] = c[k] - double(n[k] / 2) * o.voxel_size;
  using H = detail::host_of_t<B>;
  array<float, H> fine = zeros<float, H>(fine_shape);
  detail::spread_atoms(atoms, o.blur, spread, origin, h, fine);
  const auto spec = to<cpu>(fft::rfftn(fine));
  const double box[3] = {double(n[0]) * o.voxel_size, double(n[1]) * o.voxel_size, double(n[2]) * o.voxel_size};
  // the spread divided out: exp(+spread |k|^2 / 4), k in cycles per Å
  const auto unblur = [&](index_t f0, index_t f1, index_t f2) {
    const double k0 = double(f0) / box[0], k1 = double(f1) / box[1], k2 = double(f2) / box[2];
    return std::exp(spread * (k0 * k0 + k1 * k1 + k2 * k2) / 4);
  };
  auto coarse = detail::window_spectrum(spec, fine_shape, n, double(n.numel()) / double(fine_shape.numel()), unblur);
  // the low-pass on the spectrum already at hand (apply_filter would transform there and back)
  if (o.lowpass > 0) coarse = coarse * filter_multiplier<H>(fourier_filter{o.voxel_size, bandpass{o.lowpass, 0, true}, {}, {}, {}, {}}, n);
  array<float, H> map = fft::irfftn(std::move(coarse), n);
  if (o.invert) map = array<float, H>(-map);
  return to<B>(map);
}

}  // namespace fusor::match
