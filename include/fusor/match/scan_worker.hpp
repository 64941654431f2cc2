#pragma once
// One worker of an exhaustive scan: its buffers for a batch of rotations and its running key map.
// Per batch: each rotation's template rotated (and filtered) into its lane, placed on the grid and
// transformed (one batched call, or on a backend whose scan_strategy says so two rotations per
// complex pair, the template's zero rows skipped), correlated with the target's spectra, scored,
// and folded into the running maximum.
#include <complex>
#include <cstdint>
#include <memory>
#include <tuple>
#include <vector>

#include "../core/create.hpp"
#include "../core/reduce.hpp"
#include "../core/slice.hpp"
#include "../fft/transforms.hpp"
#include "scan_plan.hpp"
#include "scan_strategy.hpp"
#include "scores.hpp"

namespace fusor::match::detail {

/// The pruned forward transforms' first two steps, from the touched rows of a placed template
/// (`rows`, m0 x m1 x f2, packed) to the touched planes of the grid: template row y1 lands on grid
/// row (y1 - c1) mod f1 and plane y0 on plane (y0 - c0) mod f0, so the last axis is transformed
/// on those rows only (`last(to, from)`, into `stage`, m0 x f1) and the middle axis on those
/// planes only (`middle(to, from)`, into `planes`, f0 planes). What is not written keeps its value.
template <class Rows, class Stage, class Planes, class Last, class Middle>
void pruned_last_axes(const extents& m, const extents& f, Rows& rows, Stage& stage, Planes&& planes, Last&& last,
                      Middle&& middle) {
  const index_t m0 = m[0], m1 = m[1], c0 = m0 / 2, c1 = m1 / 2, f0 = f[0], f1 = f[1];
  last(stage(fusor::all, fusor::range(0, m1 - c1), fusor::all), rows(fusor::all, fusor::range(c1, m1), fusor::all));
  if (c1 > 0) last(stage(fusor::all, fusor::range(f1 - c1, f1), fusor::all), rows(fusor::all, fusor::range(0, c1), fusor::all));
  middle(planes(fusor::range(0, m0 - c0), fusor::all, fusor::all), stage(fusor::range(c0, m0), fusor::all, fusor::all));
  if (c0 > 0) middle(planes(fusor::range(f0 - c0, f0), fusor::all, fusor::all), stage(fusor::range(0, c0), fusor::all, fusor::all));
}

/// The spectrum of a template-sized volume placed on the grid (as `placed` places it) with the
/// zeros skipped: the placed template touches m0 m1 of the grid's f0 f1 rows and m0 of its f0
/// planes, so the last axis is transformed on those rows only, the middle axis on those planes
/// only, and the first axis on everything (about 0.65 of a whole r2c for a 24^3 template on a
/// 140^3 grid; the other order, the middle axis last over every plane, measured slower: 66 ms
/// per rotation against 54 on 144^3). Rows and planes the template never touches stay zero in
/// the staging buffers between calls, so nothing is cleared per call. Where the backend's
/// scan_strategy prunes template zeros (cpu); elsewhere the whole grid is transformed.
template <class B>
struct pruned_forward {
  extents grid, templ;
  array<float, B> rows;                 // (m0, m1, f2): the touched rows, packed
  array<std::complex<float>, B> stage;  // (m0, f1, f2/2+1): after the last axis, untouched rows 0
  array<std::complex<float>, B> planes; // (f0, f1, f2/2+1): after the middle axis, untouched planes 0

  pruned_forward(const extents& f, const extents& m)
      : grid(f),
        templ(m),
        rows(extents{m[0], m[1], f[2]}),
        stage(zeros<std::complex<float>, B>(extents{m[0], f[1], f[2] / 2 + 1})),
        planes(zeros<std::complex<float>, B>(extents{f[0], f[1], f[2] / 2 + 1})) {}

  template <class Out>
  void operator()(Out&& out, const array<float, B>& v, const float* weights, float shift, float scale, bool squared) {
    const extents& rs = rows.shape();
    rows = generator_expr<row_placement, B>{
        row_placement{placed_row{v.data(), weights, shift, scale, squared, templ[2], grid[2], templ[2] / 2}}, rs,
        contiguous_strides(rs)};
    pruned_last_axes(templ, grid, rows, stage, planes, [](auto&& to, auto&& from) { fft::rfftn_into(to, from, {}, {2}); },
                     [](auto&& to, auto&& from) { fft::fftn_into(to, from, {}, {1}); });
    fft::fftn_into(out, planes, {}, {0});
  }
};

/// Two rotations at a time, where the backend's scan_strategy pairs lanes (cpu) (scores.hpp's paired transforms): out = the backward-sign DFT of
/// a + i b on the grid (a, b template-sized volumes placed as `placed` places them; b may be
/// absent), with the zeros skipped as pruned_forward skips them: the last axis on the touched
/// rows, the middle axis on the touched planes (written into out, its other planes zeroed), the
/// first axis in place over everything. In place, because FFTW's out-of-place plan for the first
/// axis alone copies through buffers: 20 ms on 128^3 against 7 ms in place (and 13 to 17 ms for
/// a whole 3-d transform).
template <class B>
struct paired_forward {
  extents grid, templ;
  array<std::complex<float>, B> rows;   // (m0, m1, f2): the touched rows, packed
  array<std::complex<float>, B> stage;  // (m0, f1, f2): after the last axis, untouched rows 0

  paired_forward(const extents& f, const extents& m)
      : grid(f), templ(m), rows(extents{m[0], m[1], f[2]}), stage(zeros<std::complex<float>, B>(extents{m[0], f[1], f[2]})) {}

  template <class Out>
  void operator()(Out&& out, const placed_row& a, const placed_row* b) {
    const index_t m0 = templ[0], c0 = m0 / 2, f0 = grid[0];
    const extents& rs = rows.shape();
    rows = generator_expr<pair_row_placement, B>{pair_row_placement{a, b ? *b : a, b != nullptr}, rs, contiguous_strides(rs)};
    const auto backward = [](index_t axis) {  // unscaled
      return [axis](auto&& to, auto&& from) { fft::ifftn_into(to, from, {}, {axis}, fft::norm_mode::forward); };
    };
    pruned_last_axes(templ, grid, rows, stage, out, backward(2), backward(1));
    if (f0 > m0) out(fusor::range(m0 - c0, f0 - c0), fusor::all, fusor::all) = std::complex<float>{};
    backward(0)(out, out);
  }
};

/// Per-thread buffers and the running key map. The grid-sized buffers hold `lanes` rotations
/// (lane i at [i, ...]) so that a batch of rotations is transformed by one library call; a batch
/// may use fewer lanes (the last one of a scan).
template <class B>
struct scan_worker {
  using strategy = scan_strategy<B>;
  /// What one rotation of the batch carries from its template step to its grid steps.
  struct lane {
    std::uint32_t index = 0;  // in the rotation list
    float shift = 0.0f, scale = 1.0f;
    const float* weights = nullptr;  // the standardisation's weights, or none
    double n = 0.0;                  // the mask's sum under this rotation
  };

  const scan_plan<B>& p;
  index_t lanes;
  std::vector<lane> lane_of;
  std::vector<array<float, B>> rot, rot_mask;  // per lane, template-sized
  array<float, B> grid, cc_mask, cc_mask2;     // (lanes, grid); grid unused when scores_in_pairs
  array<float, B> cc_tg, overlap, cc_tg2;      // MCC: CC(t, g'), CC(t, m), CC(t, g'^2)
  // the lanes' spectra: r2c halves, or paired (pairs_lanes), a whole grid per pair of lanes;
  // FLC in pairs: spec_local and spec_mask end as the pairs' CC(f, m) and CC(f^2, m) (in place of
  // cc_mask and cc_mask2), spec as their CC(f, g), and the pairs' scores go to `scores`
  array<std::complex<float>, B> spec, spec_mask, spec_local, spec_box;
  array<float, B> scores;    // FLC in pairs: (pairs, box0, box1, 2 box2), a pair's two scores side by side
  array<float, B> pair_sum;  // FLC in pairs: (2 box2), the pair's mask sums side by side
  std::unique_ptr<pruned_forward<B>> pruned;  // strategy::prunes_template_zeros, one lane at a time
  std::unique_ptr<paired_forward<B>> paired;  // pairs_lanes(batch): two rotations per transform pair
  array<std::uint64_t, B> keys;
  array<double, B> sums;  // the mean map's running sums, in double over many rotations
  bool statistics;
  double score_sum = 0.0, score_sum2 = 0.0;  // over every voxel and rotation this worker scored

  scan_worker(const scan_plan<B>& plan, index_t batch, bool mean_map, bool stats)
      : p(plan),
        lanes(batch),
        lane_of(std::size_t(batch)),
        grid(scores_in_pairs(plan.kind, batch) ? extents{0} : lanes_shape(plan.window.grid)),
        cc_mask(plan.rotates_mask() && !local_in_pairs(plan.kind, batch) ? lanes_shape(plan.window.grid) : extents{0}),
        cc_mask2(plan.rotates_mask() && !local_in_pairs(plan.kind, batch) ? lanes_shape(plan.window.grid) : extents{0}),
        cc_tg(plan.kind == score::mcc ? lanes_shape(plan.window.grid) : extents{0}),
        overlap(plan.kind == score::mcc ? lanes_shape(plan.window.grid) : extents{0}),
        cc_tg2(plan.kind == score::mcc ? lanes_shape(plan.window.grid) : extents{0}),
        spec(spectra_shape(plan.window.grid, batch)),
        spec_mask(plan.rotates_mask() ? spectra_shape(plan.window.grid, batch) : extents{0}),
        spec_local(local_in_pairs(plan.kind, batch) ? spectra_shape(plan.window.grid, batch) : extents{0}),
        spec_box(plan.box_filter.size() ? half_grid(plan.template_shape) : extents{0}),
        scores(local_in_pairs(plan.kind, batch) ? pair_scores_shape(plan.window.core, batch) : extents{0}),
        pair_sum(local_in_pairs(plan.kind, batch) ? extents{2 * plan.window.core[2]} : extents{0}),
        keys(zeros<std::uint64_t, B>(plan.window.core)),
        sums(mean_map ? zeros<double, B>(plan.window.core) : array<double, B>(extents{0})),
        statistics(stats) {
    for (index_t i = 0; i < lanes; ++i) {
      rot.emplace_back(plan.template_shape);
      if (plan.rotates_mask()) rot_mask.emplace_back(plan.template_shape);
    }
    if constexpr (strategy::pairs_lanes) {
      if (pairs_lanes(batch)) paired = std::make_unique<paired_forward<B>>(plan.window.grid, plan.template_shape);
    }
    if constexpr (strategy::prunes_template_zeros) {
      if (!paired) pruned = std::make_unique<pruned_forward<B>>(plan.window.grid, plan.template_shape);
    }
  }

  /// Whether a worker of `batch` lanes transforms them in pairs (two lanes or more, where the
  /// backend's strategy pairs lanes).
  static bool pairs_lanes(index_t batch) { return strategy::pairs_lanes && batch >= 2; }
  /// Whether it also scores the pairs' correlations where the inverse transform leaves them, in
  /// spec: the scores read as they are, or FLC's computed from there (MCC computes its score on a
  /// lane's grid first).
  static bool scores_in_pairs(score kind, index_t batch) { return pairs_lanes(batch) && kind != score::mcc; }
  /// Whether FLC's three correlations stay paired where their inverse transforms leave them
  /// (spec, spec_local, spec_mask) and its scores are computed from there, a pair at a time, into
  /// `scores`: no pass splits a pair into two grids, and both of a pair's scores come from one
  /// contiguous SIMD pass (the pair's parts side by side, as in the spectra).
  static bool local_in_pairs(score kind, index_t batch) { return kind == score::flc && scores_in_pairs(kind, batch); }
  static extents pair_scores_shape(const extents& t, index_t batch) { return {(batch + 1) / 2, t[0], t[1], 2 * t[2]}; }
  static extents half_grid(const extents& f) { return {f[0], f[1], f[2] / 2 + 1}; }
  static extents spectra_shape(const extents& f, index_t batch) {
    if (pairs_lanes(batch)) return {(batch + 1) / 2, f[0], f[1], f[2]};
    return {batch, f[0], f[1], f[2] / 2 + 1};
  }
  /// Lane i's volume vol[i] as placed_row lays its rows on the grid.
  placed_row lane_row(index_t i, const std::vector<array<float, B>>& vol, bool standardised, bool squared) const {
    const lane& l = lane_of[std::size_t(i)];
    const extents& m = p.template_shape;
    return {vol[std::size_t(i)].data(), standardised ? l.weights : nullptr, standardised ? l.shift : 0.0f,
            standardised ? l.scale : 1.0f, squared, m[2], p.window.grid[2], m[2] / 2};
  }
  extents lanes_shape(const extents& f) const { return {lanes, f[0], f[1], f[2]}; }
  /// The first `used` lanes of a batched buffer.
  template <class T>
  static array_view<T, B> first(array<T, B>& a, index_t used) {
    return a(fusor::range(0, used), fusor::all, fusor::all, fusor::all);
  }

  /// Lane i of `out` = rfft of the lane's volume vol[i] placed on the grid, standardised by the
  /// lane's moments or not, squared or not; `scratch` is a batched grid buffer the plain path
  /// places into (one batched transform for every lane).
  void forward(array<std::complex<float>, B>& out, index_t used, const std::vector<array<float, B>>& vol,
               bool standardised, bool squared, array<float, B>& scratch) {
    if constexpr (strategy::pairs_lanes) {
      if (paired) {  // pair j: lanes 2j and 2j + 1 (the last pair of an odd batch holds one)
        for (index_t j = 0; 2 * j < used; ++j) {
          const placed_row a = lane_row(2 * j, vol, standardised, squared);
          const placed_row b = 2 * j + 1 < used ? lane_row(2 * j + 1, vol, standardised, squared) : a;
          (*paired)(out(j, fusor::all, fusor::all, fusor::all), a, 2 * j + 1 < used ? &b : nullptr);
        }
        return;
      }
    }
    for (index_t i = 0; i < used; ++i) {
      const lane& l = lane_of[std::size_t(i)];
      const float* w = standardised ? l.weights : nullptr;
      const float shift = standardised ? l.shift : 0.0f, scale = standardised ? l.scale : 1.0f;
      if constexpr (strategy::prunes_template_zeros) {
        (*pruned)(out(i, fusor::all, fusor::all, fusor::all), vol[std::size_t(i)], w, shift, scale, squared);
      } else {
        scratch(i, fusor::all, fusor::all, fusor::all) = placed(vol[std::size_t(i)], w, shift, scale, p.window.grid, squared);
      }
    }
    if constexpr (!strategy::prunes_template_zeros) fft::rfftn_into(first(out, used), first(scratch, used), {}, {1, 2, 3});
  }

  /// Every used lane of out = CC(target, lane's template) from a target spectrum ft (one grid,
  /// broadcast over the lanes) and the lanes' spectra g, through `scratch` (which may be g).
  void correlate_lanes(const array<std::complex<float>, B>& ft, array<std::complex<float>, B>& g,
                       array<std::complex<float>, B>& scratch, array<float, B>& out, index_t used, bool leave_paired = false) {
    if constexpr (strategy::pairs_lanes) {
      if (paired) {
        const extents& f = p.window.grid;
        const index_t pairs = (used + 1) / 2, cells = f.numel();
        for (index_t j = 0; j < pairs; ++j)
          scratch(j, fusor::all, fusor::all, fusor::all) = generator_expr<paired_product, B>{
              paired_product{ft.data(), g.data() + j * cells, f[0], f[1], f[2]}, f, contiguous_strides(f)};
        auto s = first(scratch, pairs);
        fft::ifftn_into(s, s, {}, {1, 2, 3}, fft::norm_mode::forward);  // in place, unscaled
        if (leave_paired) return;  // the score reads each part where it lies (score_map::step)
        for (index_t i = 0; i < used; ++i) {  // pair j's real parts are lane 2j's correlation, its imaginary 2j + 1's
          const auto pair = scratch(i / 2, fusor::all, fusor::all, fusor::all);
          if (i % 2) out(i, fusor::all, fusor::all, fusor::all) = imag(pair);
          else out(i, fusor::all, fusor::all, fusor::all) = real(pair);
        }
        return;
      }
    }
    auto s = first(scratch, used);
    const extents lanes = s.shape();
    s = generator_expr<conj_product, B>{conj_product{ft.data(), g.data(), index_t(ft.size())}, lanes, contiguous_strides(lanes)};
    fft::irfftn_into(first(out, used), s, p.window.grid, {1, 2, 3}, fft::norm_mode::forward, fft::input_use::overwrite);
  }

  /// The template steps of one rotation: rotated (and filtered) into its lane, its moments taken.
  void prepare(index_t i, const quaternion& q, std::uint32_t index) {
    lane& l = lane_of[std::size_t(i)];
    array<float, B>& g = rot[std::size_t(i)];
    const matrix3 r = to_matrix(q);
    rigid_transform(p.source, r, {}, g, p.rotate);
    if (p.box_filter.size()) {
      fft::rfftn_into(spec_box, g);
      spec_box = spec_box * p.box_filter;
      fft::irfftn_into(g, spec_box, p.template_shape, {}, fft::norm_mode::forward, fft::input_use::overwrite);
    }
    l = lane{};
    l.index = index;
    l.n = p.mask_sum;
    if (p.rotates_mask()) {
      array<float, B>& gm = rot_mask[std::size_t(i)];
      rigid_transform(p.mask_source, r, {}, gm, p.rotate);
      l.n = double(sum(cast<double>(gm)));
      std::tie(l.shift, l.scale) = weighted_standardisation(g, gm, l.n);
      l.weights = gm.data();
    } else if (p.kind == score::flc_spherical_mask) {
      std::tie(l.shift, l.scale) = weighted_standardisation(g, p.mask, l.n);
      l.weights = p.mask.data();
    }
  }

  /// Scores rotations q[0, used) as one batch, recorded in the key map as indices first,
  /// first + 1, ..., or as indices[0, used) where given (a seed's subset of the list).
  void run(const quaternion* q, std::uint32_t first_index, index_t used, const std::uint32_t* indices = nullptr) {
    for (index_t i = 0; i < used; ++i) prepare(i, q[i], indices ? indices[i] : first_index + std::uint32_t(i));
    forward(spec, used, rot, true, false, grid);
    if (p.kind == score::mcc) correlate_lanes(p.ft_tmask, spec, spec_mask, cc_tg, used);  // spec kept for the next
    const bool in_pairs = scores_in_pairs(p.kind, lanes), local_pairs = local_in_pairs(p.kind, lanes);
    correlate_lanes(p.ft_target, spec, spec, grid, used, in_pairs);
    if (p.kind == score::mcc) {
      // the rotated mask's correlations with the target mask, the target and its square
      forward(spec, used, rot_mask, false, false, cc_mask);
      correlate_lanes(p.ft_tmask, spec, spec_mask, overlap, used);
      correlate_lanes(p.ft_target, spec, spec_mask, cc_mask, used);
      correlate_lanes(p.ft_target2, spec, spec, cc_mask2, used);
      // the standardised template's square against the target mask
      forward(spec, used, rot, true, true, cc_tg2);
      correlate_lanes(p.ft_tmask, spec, spec, cc_tg2, used);
    } else if (p.kind == score::flc) {
      // the masks' spectra against the target's and its square's: in pairs, both correlations left
      // where their inverse transforms put them (spec_local, then spec_mask in place), and scored
      // from there a pair at a time (score)
      forward(spec_mask, used, rot_mask, false, false, cc_mask);
      correlate_lanes(p.ft_target, spec_mask, local_pairs ? spec_local : spec, cc_mask, used, local_pairs);
      correlate_lanes(p.ft_target2, spec_mask, local_pairs ? spec_mask : spec, cc_mask2, used, local_pairs);
    }
    for (index_t i = 0; i < used; ++i) score(i, in_pairs, key_parts(i, in_pairs, used));
  }

  /// How many lanes lane i's key and statistics pass covers: both of a pair read together (their
  /// map read once), from the pair's first lane.
  index_t key_parts(index_t i, bool in_pairs, index_t used) const {
    if (!in_pairs) return 1;
    return i % 2 ? 0 : i + 1 < used ? 2 : 1;
  }

  /// The score of lane i from its correlations, folded into the running maps.
  /// in_pairs: the correlation is part i % 2 of pair i / 2 in spec, not lane i of grid. parts:
  /// the lanes from i on whose keys and statistics the fused pass (fuses_statistics) updates (0:
  /// done with i - 1).
  void score(index_t i, bool in_pairs, index_t parts) {
    const lane& l = lane_of[std::size_t(i)];
    const extents& t = p.window.core;
    const extents& f = p.window.grid;
    const float* cc = in_pairs ? reinterpret_cast<const float*>(spec.data() + (i / 2) * f.numel()) + i % 2
                               : grid.data() + i * f.numel();
    score_map m{score_map::form::plain, cc, nullptr, nullptr, t[1], t[2], f[1], f[2],
                p.window.offset[0], p.window.offset[1], p.window.offset[2], in_pairs ? 2 : 1};
    // FLC and MCC: the score is computed on the scored box of the grid, in place of the correlation,
    // by one fused elementwise pass (SIMD square roots and divisions on cpu); the key pass then
    // reads it as a plain map. FLC in pairs: a pair's pass (at its first lane) reads the three
    // correlations where the pairs' transforms left them, each voxel's two parts side by side as
    // one contiguous row, and writes the pair's scores the same way, which the key pass reads
    const auto box = [&](array<float, B>& a) {
      const auto& o = p.window.offset;
      return a(i, fusor::range(o[0], o[0] + t[0]), fusor::range(o[1], o[1] + t[1]), fusor::range(o[2], o[2] + t[2]));
    };
    const float nf = float(l.n), eps = float_eps;
    // cc / (N sigma), sigma^2 = CC(f^2, m) / N - (CC(f, m) / N)^2, sigma = 1 where below eps
    const auto flc_score = [&](auto&& out, const auto& g, const auto& e1, const auto& e2, const auto& n) {
      const auto mean = e1 / n;
      const auto sigma = sqrt(maximum(e2 / n - mean * mean, 0.0f));
      out = g / (where(sigma < eps, 1.0f, sigma) * n);
    };
    if (p.kind == score::mcc) {
      // Padfield's score (scores.hpp), 0 where the overlap or either variance term is too small
      auto g = box(grid);
      const auto o = maximum(box(overlap), eps);
      const auto d = box(cc_mask), b = box(cc_tg), e = box(cc_mask2), h = box(cc_tg2);
      const auto fixed = e - d * d / o;
      const auto moving = h - b * b / o;
      const float tol = 1e3f * eps, min_overlap = float(p.overlap_ratio * l.n);
      g = where(o >= min_overlap && fixed > tol * e && moving > tol * h,
                clip((g - d * b / o) / sqrt(fixed * moving), -1.0f, 1.0f), 0.0f);
    } else if (p.kind == score::flc && in_pairs) {
      const index_t j = i / 2;
      const extents rows{t[0], t[1], 2 * t[2]};  // a voxel's two parts side by side
      if (i % 2 == 0) {
        const auto& o = p.window.offset;
        const auto pair_box = [&](array<std::complex<float>, B>& a) {
          float* first = reinterpret_cast<float*>(a.data() + j * f.numel() + (o[0] * f[1] + o[1]) * f[2] + o[2]);
          return array_view<float, B>(first, rows, extents{2 * f[1] * f[2], 2 * f[2], 1});
        };
        const float second = i + 1 < lanes ? float(lane_of[std::size_t(i + 1)].n) : 1.0f;
        array_view<float, B>(pair_sum.data(), extents{t[2]}, extents{2}) = nf;
        array_view<float, B>(pair_sum.data() + 1, extents{t[2]}, extents{2}) = second;
        flc_score(array_view<float, B>(scores.data() + j * rows.numel(), rows), pair_box(spec), pair_box(spec_local),
                  pair_box(spec_mask), array_view<float, B>(pair_sum.data(), rows, extents{0, 0, 1}));
      }
      m = score_map{score_map::form::plain, scores.data() + j * rows.numel() + i % 2, nullptr, nullptr, t[1], t[2], t[1], t[2], 0, 0, 0, 2};
    } else if (p.kind == score::flc) {
      flc_score(box(grid), box(grid), box(cc_mask), box(cc_mask2), nf);
    } else if (p.kind != score::cc && p.kind != score::lcc) {
      m.kind = score_map::form::shifted;
      m.numerator = p.numerator.size() ? p.numerator.data() : nullptr;
      m.inv_denominator = p.inv_denominator.data();
    }
    if (sums.size()) sums = generator_expr<sum_update, B>{sum_update{m, sums.data()}, t, contiguous_strides(t)};
    if (statistics && strategy::fuses_statistics) {
      // one pass: the keys and the statistics' sums together, a row at a time
      if (parts == 0) return;
      const extents rows{t[0] * t[1]};
      const std::complex<double> moments = sum(generator_expr<best_update_moments, B>{
          best_update_moments{m, keys.data(), l.index, int(parts)}, rows, contiguous_strides(rows)});
      score_sum += moments.real();
      score_sum2 += moments.imag();
      return;
    }
    // a thread per voxel for the keys (on a device their reads and writes then coalesce)
    keys = generator_expr<best_update, B>{best_update{m, keys.data(), l.index}, t, contiguous_strides(t)};
    if (statistics) {
      const std::complex<double> moments = sum(generator_expr<score_moments, B>{score_moments{m}, t, contiguous_strides(t)});
      score_sum += moments.real();
      score_sum2 += moments.imag();
    }
  }
};

}  // namespace fusor::match::detail
