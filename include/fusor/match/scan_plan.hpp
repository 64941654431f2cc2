#pragma once
// What every worker of an exhaustive scan reads, made once per target or tile (scan_plan): the
// checks of the scan's inputs, the target as every tile reads it (filtered, the score's
// whole-target step), its spectra on the window's grid, the template ready to rotate, and the
// maps of the score that do not depend on the rotation.
#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <tuple>

#include "../core/create.hpp"
#include "../core/reduce.hpp"
#include "../fft/transforms.hpp"
#include "filters.hpp"
#include "scan_options.hpp"
#include "scan_windows.hpp"
#include "scores.hpp"
#include "transform.hpp"

namespace fusor::match {

/// The first voxel (i, j, k) of a volume that is NaN or infinite, in row-major order, or nothing.
/// One reduction pass; an argmax pass more only when there is such a voxel.
template <class B>
std::optional<std::array<index_t, 3>> first_non_finite(const array<float, B>& volume) {
  const extents& s = volume.shape();
  if (s.size() != 3)
    throw shape_error("fusor::match::first_non_finite: expected a 3-d volume, got shape " + to_string(s));
  if (volume.size() == 0 || !any(!isfinite(volume))) return std::nullopt;
  const index_t i = index_t(argmax(cast<std::int8_t>(!isfinite(volume))));
  return std::array<index_t, 3>{i / (s[1] * s[2]), (i / s[2]) % s[1], i % s[2]};
}

namespace detail {

/// A scan input whose every voxel is finite, or a value_error naming it and its first bad voxel:
/// one NaN or inf would make every score it touches NaN or inf (and the statistics with them).
template <class B>
void require_finite(const array<float, B>& volume, const char* what) {
  if (const auto bad = first_non_finite(volume))
    throw value_error(std::string("fusor::match::scan: the ") + what + " holds a non-finite value (NaN or inf) at voxel (" +
                      std::to_string((*bad)[0]) + ", " + std::to_string((*bad)[1]) + ", " + std::to_string((*bad)[2]) +
                      "); expected finite values");
}

inline void check_scan_input(const extents& t, const extents& g, const extents& m, std::size_t rotations) {
  require_volume(t, "scan (the target)");
  require_volume(g, "scan (the template)");
  for (int a = 0; a < 3; ++a)
    if (g[a] < 1 || g[a] > t[a])
      throw shape_error("fusor::match::scan: expected a non-empty template no larger than the target on every axis, got "
                        "template " + to_string(g) + " and target " + to_string(t));
  if (m != g)
    throw shape_error("fusor::match::scan: expected a mask of the template's shape " + to_string(g) + ", got " +
                      to_string(m));
  if (rotations == 0) throw value_error("fusor::match::scan: expected at least one rotation, got none");
  if (rotations > std::size_t(INT32_MAX))
    throw value_error("fusor::match::scan: at most 2^31 - 1 rotations, got " + std::to_string(rotations));
}

/// A template-sized volume v placed on the grid `grid`, centred on the origin, each value
/// becoming (v - shift) scale w (w: weights of the template's shape, or none), or its square.
template <class B>
generator_expr<grid_placement, B> placed(const array<float, B>& v, const float* weights, float shift, float scale,
                                         const extents& grid, bool squared = false) {
  const extents& m = v.shape();
  return {grid_placement{placed_row{v.data(), weights, shift, scale, squared, m[2], grid[2], m[2] / 2}, m[0], m[1],
                         grid[0], grid[1], m[0] / 2, m[1] / 2},
          grid, contiguous_strides(grid)};
}

/// out = CC(target, template) on out's grid from the target's spectrum ft (scaled by 1/|grid|) and
/// the template's spectrum g: the product goes to `scratch` (which may be g itself), and the
/// unscaled inverse transform consumes it. out may be the grid g was taken from.
template <class B>
void correlate(const array<std::complex<float>, B>& ft, const array<std::complex<float>, B>& g,
               array<std::complex<float>, B>& scratch, array<float, B>& out) {
  const extents& h = g.shape();
  scratch = generator_expr<conj_product, B>{conj_product{ft.data(), g.data(), h.numel()}, h, contiguous_strides(h)};
  fft::irfftn_into(out, scratch, out.shape(), {}, fft::norm_mode::forward, fft::input_use::overwrite);
}

/// What every worker reads: the grid, the target's spectra (scaled by 1/|F|), the template (or its
/// B-spline coefficients) and mask ready to rotate, and the precomputed maps of the score.
template <class B>
struct scan_plan {
  score kind;
  scan_window window;  // its grid is the plan's FFT grid
  extents template_shape;
  array<std::complex<float>, B> ft_target, ft_target2;  // ft_target2: FLC and MCC
  array<std::complex<float>, B> ft_tmask;              // MCC: the target mask's spectrum
  array<float, B> source;                              // what is rotated
  array<float, B> mask;                                // as given
  array<float, B> mask_source;                         // FLC, MCC: the mask as rotated (its values as coefficients)
  array<float, B> numerator, inv_denominator;          // the FFT grid's shape, where the score has them
  array<float, B> box_filter;                          // the template filter on the template's box, / |box|
  double mask_sum = 0;
  transform_options rotate;
  double overlap_ratio = 0.3;  // MCC
  /// Whether the mask rotates with the template (FLC, MCC).
  bool rotates_mask() const { return kind == score::flc || kind == score::mcc; }
};

/// A rotation centre inside the template's box [0, m - 1] on every axis, or a value_error saying
/// where it lies.
inline void check_rotation_center(const std::optional<vec3>& c, const extents& m) {
  if (!c) return;
  for (std::size_t a = 0; a < 3; ++a)
    if (!(std::isfinite((*c)[a]) && (*c)[a] >= 0.0 && (*c)[a] <= double(m[a] - 1))) {
      char where[160];
      std::snprintf(where, sizeof where, "(%.6g, %.6g, %.6g)", (*c)[0], (*c)[1], (*c)[2]);
      throw value_error(std::string("fusor::match::scan: expected a rotation centre inside the template's box [0, m - 1] "
                                    "for the template of shape ") + to_string(m) + ", got " + where);
    }
}

template <class B>
array<float, B> periodic_laplacian_of(const array<float, B>& v) {
  const extents& s = v.shape();
  return array<float, B>(generator_expr<periodic_laplacian, B>{periodic_laplacian{v.data(), s[0], s[1], s[2]}, s,
                                                               contiguous_strides(s)});
}

/// (v - mean) / std over the whole volume (np.std, population), as pyTME's CAM.
template <class B>
array<float, B> standardised(const array<float, B>& v, const char* what) {
  const double n = double(v.size());
  const double mean = double(sum(cast<double>(v))) / n;
  const double var = double(sum(cast<double>(v) * cast<double>(v))) / n - mean * mean;
  if (!(var > 0))
    throw value_error(std::string("fusor::match::scan: CAM standardises the ") + what + ", which is constant");
  return array<float, B>((v - float(mean)) * float(1.0 / std::sqrt(var)));
}

/// Whether the score reads the target through a whole-target preparation (prepared_target).
inline bool prepares_target(score kind, const scan_options& o, bool target_mask) {
  return !o.target_filter.empty() || kind == score::lcc || kind == score::cam || (kind == score::mcc && target_mask);
}

/// The target as every tile reads it: filtered, then the score's whole-target step (LCC's
/// periodic Laplacian, CAM's standardisation, MCC's product with the target mask), done once over
/// the whole target so that tiles see exactly what the whole scan sees.
template <class B>
array<float, B> prepared_target(const array<float, B>& target0, score kind, const scan_options& o,
                                const array<float, B>* target_mask) {
  const fft::planning_scope<B> once(fft::planning::estimate);  // one transform pair: not worth measuring
  const array<float, B> filtered = o.target_filter.empty() ? array<float, B>(extents{0}) : apply_filter(target0, o.target_filter);
  const array<float, B>& target1 = o.target_filter.empty() ? target0 : filtered;
  if (kind == score::mcc && target_mask) return array<float, B>(target1 * *target_mask);
  return kind == score::lcc   ? periodic_laplacian_of(target1)
         : kind == score::cam ? standardised(target1, "target")
                              : target1.copy();
}

/// The window w of the (prepared) target on w's grid, squared or not; of a volume of ones of
/// shape n where `target` is null (MCC's target mask when none is given).
template <class B>
generator_expr<window_grid, B> window_on_grid(const array<float, B>* target, const extents& n, const scan_window& w,
                                              bool squared) {
  return {window_grid{target ? target->data() : nullptr, n[0], n[1], n[2], w.start[0], w.start[1], w.start[2], w.shape[0], w.shape[1],
                      w.shape[2], w.grid[1], w.grid[2], squared, w.periodic},
          w.grid, contiguous_strides(w.grid)};
}

/// The template filter for window w of a target of shape n: a tilt series' weight with a defocus
/// gradient is made for the centre of the window's scored box (tilt_weighting::center_offset,
/// from the target's centre); any other filter is the same everywhere.
inline fourier_filter window_template_filter(const fourier_filter& f, const scan_window& w, const extents& n) {
  if (!f.tilts || f.tilts->defocus_handedness == 0) return f;
  fourier_filter at = f;
  for (std::size_t a = 0; a < 3; ++a)
    at.tilts->center_offset[a] = double(w.start[a] + w.offset[a]) + 0.5 * double(w.core[int(a)] - 1) - 0.5 * double(n[int(a)] - 1);
  return at;
}

template <class B>
scan_plan<B> plan_scan(const array<float, B>& target, const array<float, B>& templ0, const array<float, B>& mask, score kind,
                       const scan_options& o, const scan_window& w, const array<float, B>* target_mask) {
  // the plan's transforms run once per plan (a few per tile): FFTW's measuring planner would take
  // longer than it saves (0.4 s for each of a 128^3 r2c and c2r, against a few ms per call); the
  // workers' per-rotation transforms keep scan_options::planning
  const fft::planning_scope<B> once(fft::planning::estimate);
  scan_plan<B> p{kind, w, templ0.shape(),
                 array<std::complex<float>, B>(extents{0}), array<std::complex<float>, B>(extents{0}),
                 array<std::complex<float>, B>(extents{0}), array<float, B>(extents{0}), mask.copy(), array<float, B>(extents{0}), array<float, B>(extents{0}),
                 array<float, B>(extents{0}), array<float, B>(extents{0}), 0.0, {}};
  if (!o.template_filter.empty())
    p.box_filter = filter_array<B>(window_template_filter(o.template_filter, w, target.shape()), templ0.shape(), 1.0 / double(templ0.size()));
  const bool masked = kind != score::cc && kind != score::lcc;
  p.mask_sum = double(sum(cast<double>(mask)));
  if (masked && !(p.mask_sum > 0))
    throw value_error("fusor::match::scan: " + to_string(kind) + " needs a mask with a positive sum, got " +
                      std::to_string(p.mask_sum));

  array<float, B> templ = kind == score::lcc   ? periodic_laplacian_of(templ0)
                          : kind == score::cam ? standardised(templ0, "template")
                                               : templ0.copy();
  p.overlap_ratio = o.overlap_ratio;
  if (kind == score::flc_spherical_mask || kind == score::flc || kind == score::mcc) {
    // the unrotated template must be standardisable: a constant one scores nothing
    const auto [mean, inv] = weighted_standardisation(templ, mask, p.mask_sum);
    (void)mean;
    if (inv == 0.0f)
      throw value_error("fusor::match::scan: the template is constant under the mask; " + to_string(kind) +
                        " has nothing to normalise");
  }

  const extents& f = p.window.grid;
  const float inv_cells = float(1.0 / double(f.numel()));
  p.ft_target = fft::rfftn(array<float, B>(window_on_grid(&target, target.shape(), w, false)));
  p.ft_target = p.ft_target * inv_cells;
  const bool needs_squares = kind != score::cc && kind != score::lcc;
  array<std::complex<float>, B> ft_target2(extents{0});
  if (needs_squares) {
    ft_target2 = fft::rfftn(array<float, B>(window_on_grid(&target, target.shape(), w, true)));
    ft_target2 = ft_target2 * inv_cells;
  }
  if (kind == score::mcc) {
    p.ft_tmask = fft::rfftn(array<float, B>(window_on_grid(target_mask, target.shape(), w, false)));
    p.ft_tmask = p.ft_tmask * inv_cells;
  }

  // the mask's local moments of the target, where the mask does not rotate
  if (kind == score::corr || kind == score::cam || kind == score::flc_spherical_mask) {
    array<std::complex<float>, B> ft_mask = fft::rfftn(array<float, B>(placed(mask, nullptr, 0.0f, 1.0f, f)));
    array<std::complex<float>, B> spec(ft_mask.shape());
    array<float, B> window(f), window2(f);
    correlate(p.ft_target, ft_mask, spec, window);  // CC(f, m)
    correlate(ft_target2, ft_mask, spec, window2);  // CC(f^2, m)
    const float eps = float_eps;
    if (kind == score::flc_spherical_mask) {
      const float n = float(p.mask_sum);
      // pyTME's norm_scores: sigma = sqrt(max(E[f^2] - E[f]^2, 0)), 1 where below eps; 1 / (sigma N)
      array<float, B> sigma(sqrt(maximum(window2 / n - (window / n) * (window / n), 0.0f)));
      p.inv_denominator = array<float, B>(1.0f / (where(sigma < eps, 1.0f, sigma) * n));
    } else {
      const double n = p.mask_sum;
      const double mean_g = double(sum(cast<double>(templ) * cast<double>(mask))) / n;
      const double ssd = double(sum((cast<double>(templ) - mean_g) * (cast<double>(templ) - mean_g) * cast<double>(mask)));
      const float volume = float(templ.size());  // pyTME divides by the template's voxel count, not N
      p.numerator = array<float, B>(window * float(mean_g));
      array<float, B> den(sqrt(maximum((window2 - window * window / volume) * float(ssd), 0.0f)));
      p.inv_denominator = array<float, B>(where(den > eps, 1.0f / where(den > eps, den, 1.0f), 0.0f));
      templ = array<float, B>(templ * mask);  // CORR rotates the masked template
    }
  }
  if (kind == score::flc || kind == score::mcc) {
    p.ft_target2 = std::move(ft_target2);
    p.mask_source = mask.copy();  // rotated as coefficients: a smooth mask, no prefilter ringing (pyTME)
  }

  p.rotate.method = o.method;
  p.rotate.prefiltered = true;
  p.rotate.center = o.rotation_center;  // (empty: the template's volume_center)
  p.source = o.method == interpolation::cubic ? bspline_coefficients(templ) : std::move(templ);
  return p;
}

}  // namespace detail

}  // namespace fusor::match
