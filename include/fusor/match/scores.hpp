#pragma once
// The scores of FFT template matching, normalised as pyTME normalises them, and the per-voxel
// kernels the scan runs after each rotation's inverse FFT.
//
// The correlation convention, written once: for a target f and a template g of shape M with
// centre c = M // 2,
//     CC(f, g)(x) = sum_y f(x + y - c) g(y),
// the template's centre placed on voxel x, f zero outside the target. A score map has the
// target's shape, and its maximum names the voxel where the template's centre sits. (pyTME flips
// the template and convolves; the maps agree up to its output shift.) On the FFT grid of shape F
// (F >= target + template // 2 on every axis, so no score reads a wrapped value: scan.hpp), g is
// placed with its centre on the origin, g_F((y - c) mod F) = g(y), and
// CC = irfft(rfft(f_F) conj(rfft(g_F))).
//
// The scores (N: the sum of the mask m; V: the template's voxel count; eps: float's epsilon):
//   CC      CC(f, g), no normalisation;
//   LCC     CC of the Laplacians (scipy.ndimage.laplace, periodic) of target and template;
//   CORR    (CC(f, g m) - mean_g CC(f, m)) / sqrt((CC(f^2, m) - CC(f, m)^2 / V) ssd_g), Lewis's fast
//           normalised cross-correlation with mean_g = sum(g m) / N, ssd_g = sum((g - mean_g)^2 m);
//           0 where the root is below eps. The mask is not rotated (pyTME);
//   CAM     CORR of the standardised target and template;
//   FLCSphericalMask
//           CC(f, g') / (N sigma), g' the rotated template standardised under the (unrotated) mask,
//           sigma^2 = CC(f^2, m) / N - (CC(f, m) / N)^2, sigma = 1 where below eps (Roseman's FLC
//           for a mask that rotations leave alone: one r2c and one c2r per rotation);
//   FLC     the same with the mask rotated with the template and N its rotated sum (Hrabe et al.
//           2012): two r2c and three c2r per rotation;
//   MCC     Padfield's masked normalised cross-correlation (CVPR 2010) with a target mask t (f is
//           the target times t; t = 1 on the target when none is given), g' as for FLC, m rotated,
//           o = max(CC(t, m), eps):
//             (CC(f, g') - CC(f, m) CC(t, g') / o)
//               / sqrt(max(CC(f^2, m) - CC(f, m)^2 / o, 0) max(CC(t, g'^2) - CC(t, g')^2 / o, 0)),
//           clipped to [-1, 1], 0 where o is below overlap_ratio times N (the rotated mask's sum)
//           or where either variance term is below 1e3 eps of its first term. pyTME takes the
//           map's largest overlap for N (the same wherever the mask fits inside t somewhere) and a
//           map-wide tolerance; these are per voxel, so that tiles score as the whole does.
//           Three r2c and six c2r per rotation.
#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "../core/config.hpp"
#include "../core/error.hpp"

namespace fusor::match {

enum class score { cc, lcc, corr, cam, flc_spherical_mask, flc, mcc };

/// pyTME's names: "CC", "LCC", "CORR", "CAM", "FLCSphericalMask", "FLC", "MCC".
inline std::string to_string(score s) {
  switch (s) {
    case score::cc: return "CC";
    case score::lcc: return "LCC";
    case score::corr: return "CORR";
    case score::cam: return "CAM";
    case score::flc_spherical_mask: return "FLCSphericalMask";
    case score::flc: return "FLC";
    default: return "MCC";
  }
}

/// The score named as pyTME names it (case-sensitive); a value_error lists the names.
inline score parse_score(std::string_view name) {
  for (score s : {score::cc, score::lcc, score::corr, score::cam, score::flc_spherical_mask, score::flc, score::mcc})
    if (to_string(s) == name) return s;
  throw value_error("fusor::match::parse_score: expected one of CC, LCC, CORR, CAM, FLCSphericalMask, FLC, MCC; got \"" +
                    std::string(name) + "\"");
}

namespace detail {

/// Float bits, on every backend.
FUSOR_HD inline std::uint32_t float_bits(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  std::uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
#endif
}
FUSOR_HD inline float bits_float(std::uint32_t b) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(b);
#else
  float x;
  std::memcpy(&x, &b, sizeof x);
  return x;
#endif
}

/// A score and its rotation index as one 64-bit key whose unsigned order is the order of the
/// scores, ties going to the lower index: the running best over rotations is one max per voxel,
/// and merging the maps of threads, devices or processes is a max too, so the result does not
/// depend on how the rotations were split. NaN counts as -infinity, -0 as 0. Key 0 is below every
/// score.
FUSOR_HD inline std::uint64_t score_key(float s, std::uint32_t rotation) {
  std::uint32_t b = s != s ? 0xFF800000u : float_bits(s);
  if (b == 0x80000000u) b = 0;  // -0 is 0: equal scores tie to the lower index whatever their sign
  b = (b & 0x80000000u) ? ~b : (b | 0x80000000u);
  return (std::uint64_t(b) << 32) | std::uint64_t(~rotation);
}
FUSOR_HD inline float key_score(std::uint64_t key) {
  const std::uint32_t o = std::uint32_t(key >> 32);
  return bits_float((o & 0x80000000u) ? (o & 0x7FFFFFFFu) : ~o);
}
FUSOR_HD inline std::uint32_t key_rotation(std::uint64_t key) { return ~std::uint32_t(key); }

inline constexpr float float_eps = 1.1920928955078125e-07f;

/// Calls run(row, k, e, len) for each piece of the positions [first, first + count) of a C-ordered
/// array whose rows hold `width` positions: the piece starts at position k of row `row` and at
/// offset e of the run, and holds len positions (one division per row, not per element).
template <class Run>
FUSOR_HD void for_each_row_piece(index_t first, index_t count, index_t width, Run&& run) {
  index_t e = 0;
  while (e < count) {
    const index_t p = first + e, k = p % width, len = width - k < count - e ? width - k : count - e;
    run(p / width, k, e, len);
    e += len;
  }
}

// A host loop GCC must vectorise even at -O2, whose cost model (GCC's "very cheap") refuses any
// loop that needs a remainder: OpenMP's simd, where OpenMP is on. Clang vectorises these loops
// itself at -O2, and at -O1 (the sanitizer builds), where its vectoriser does not run, would warn
// for every one. Device code, clang and builds without OpenMP get a plain loop.
#if defined(_OPENMP) && !defined(__CUDA_ARCH__) && defined(__GNUC__) && !defined(__clang__)
#define FUSOR_MATCH_SIMD_LOOP _Pragma("omp simd")
#else
#define FUSOR_MATCH_SIMD_LOOP
#endif

/// One rotation's score at each target voxel, from the FFT-grid maps (all of the FFT shape F, read
/// at the voxel's place there):
///   plain (CC, LCC; FLC and MCC, whose scores the scan computes on the grid first): cc;
///   shifted (CORR, CAM, FLC-s.):  (cc - numerator) inv_denominator (numerator may be absent).
struct score_map {
  enum class form { plain, shifted };
  form kind;
  const float* cc;
  const float* numerator;
  const float* inv_denominator;
  index_t n1, n2, f1, f2;  // the scored box's axes 1 and 2, the FFT grid's
  index_t o0 = 0, o1 = 0, o2 = 0;  // where the scored box's first voxel sits on the grid
  index_t step = 1;                // cc's elements apart: 2 for one part of a paired correlation

  template <form F>
  FUSOR_HD float at(index_t q) const {
    const float c = cc[q * step];
    if constexpr (F == form::plain) {
      return c;
    } else {
      return (numerator ? c - numerator[q] : c) * inv_denominator[q];
    }
  }

  /// Calls op(e, score) for the target positions first, ..., first + count - 1 (e counting from
  /// 0), a row of the target at a time: one index decomposition per row, and the row's grid
  /// positions consecutive, so the loop vectorises.
  template <class Op>
  FUSOR_HD void for_each(index_t first, index_t count, Op op) const {
    switch (kind) {
      case form::plain: rows<form::plain>(first, count, op); break;
      default: rows<form::shifted>(first, count, op); break;
    }
  }
  template <form F, class Op>
  FUSOR_HD void rows(index_t first, index_t count, Op& op) const {
    for_each_row_piece(first, count, n2, [&](index_t row, index_t k, index_t e, index_t len) {
      const index_t q = ((row / n1 + o0) * f1 + row % n1 + o1) * f2 + k + o2;
      FUSOR_MATCH_SIMD_LOOP  // every op writes its own element: no step depends on another
      for (index_t t = 0; t < len; ++t) op(e + t, at<F>(q + t));
    });
  }
};

/// keys(p) = max(keys(p), key(score(p), rotation)): the running best, in place.
struct best_update {
  using value_type = std::uint64_t;
  score_map s;
  const std::uint64_t* keys;
  std::uint32_t rotation;
  FUSOR_HD void fill(index_t first, std::uint64_t* out, index_t count) const {
    const std::uint64_t* old = keys + first;
    const std::uint32_t r = rotation;
    s.for_each(first, count, [=](index_t e, float v) {
      const std::uint64_t k = score_key(v, r);
      out[e] = k > old[e] ? k : old[e];
    });
  }
};

/// sums(p) += score(p): the running sum for the mean map, in place, in double.
struct sum_update {
  using value_type = double;
  score_map s;
  const double* sums;
  FUSOR_HD void fill(index_t first, double* out, index_t count) const {
    const double* old = sums + first;
    s.for_each(first, count, [=](index_t e, float v) { out[e] = old[e] + double(v); });
  }
};

/// The score and its square as one complex value (real: v, imaginary: v²), in double: one sum
/// gives both moments of the scan's score statistics in one pass over the scores (a device's
/// form: a thread per score; best_update_moments is the cpu's).
struct score_moments {
  using value_type = std::complex<double>;
  score_map s;
  FUSOR_HD void fill(index_t first, std::complex<double>* out, index_t count) const {
    s.for_each(first, count, [=](index_t e, float v) {
      const double d = double(v);
      out[e] = std::complex<double>(d, d * d);
    });
  }
};

/// best_update and score_moments in one pass, a row of the scored box (n1 n2 rows of the flat
/// index) per element: each row's keys are updated in place (every row by one call, so no two
/// threads write a key; a second evaluation would change nothing, a max being idempotent), and
/// the element is the row's sum of scores and of their squares (real, imaginary), in double.
/// A row goes in chunks of its scores (the shifted form's through a small buffer), read by plain
/// loops (the keys, the sums) that the compiler vectorises: one loop doing all of it did not
/// (3.5 times slower at 128^3). Eight partial sums per moment, in a fixed order, keep the sums
/// independent of how the rows are split between threads.
/// Two parts (a paired map, step 2): both rotations of the pair, the second with index
/// rotation + 1, part by part over each chunk, so the pair's map, the keys and the
/// precomputed maps are read from memory once for both.
struct best_update_moments {
  using value_type = std::complex<double>;
  score_map s;
  std::uint64_t* keys;  // the scored box's running keys, row-major
  std::uint32_t rotation;
  int parts = 1;
  template <score_map::form F>
  FUSOR_HD std::complex<double> row(index_t r) const {
    constexpr index_t chunk = 256;  // a multiple of the 8 lanes: only a row's last chunk has a tail
    const index_t q = ((r / s.n1 + s.o0) * s.f1 + r % s.n1 + s.o1) * s.f2 + s.o2;
    std::uint64_t* k = keys + r * s.n2;
    float scores[chunk];  // the shifted form's scores, or a paired map's part (step 2) gathered
    double a[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0}, b[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    const index_t n2 = s.n2;
    const bool paired = s.step == 2;
    for (index_t first = 0; first < n2; first += chunk)
    for (int part = 0; part < parts; ++part) {
      const index_t len = n2 - first < chunk ? n2 - first : chunk;
      const std::uint32_t rot = rotation + std::uint32_t(part);
      const float* cc = s.cc + (q + first) * s.step + part;
      const float* v = cc;  // plain and not paired: the map holds the scores
      // score_map::at, a loop per branch (and per step) so that each vectorises
      if constexpr (F == score_map::form::shifted) {
        const float* inv = s.inv_denominator + q + first;
        const float* num = s.numerator ? s.numerator + q + first : nullptr;
        if (num && paired) {
          FUSOR_MATCH_SIMD_LOOP
          for (index_t t = 0; t < len; ++t) scores[t] = (cc[2 * t] - num[t]) * inv[t];
        } else if (num) {
          FUSOR_MATCH_SIMD_LOOP
          for (index_t t = 0; t < len; ++t) scores[t] = (cc[t] - num[t]) * inv[t];
        } else if (paired) {
          FUSOR_MATCH_SIMD_LOOP
          for (index_t t = 0; t < len; ++t) scores[t] = cc[2 * t] * inv[t];
        } else {
          FUSOR_MATCH_SIMD_LOOP
          for (index_t t = 0; t < len; ++t) scores[t] = cc[t] * inv[t];
        }
        v = scores;
      } else if (paired) {
        FUSOR_MATCH_SIMD_LOOP
        for (index_t t = 0; t < len; ++t) scores[t] = cc[2 * t];
        v = scores;
      }
      // most voxels' best stands after the first rotations: a key is written only when it rises
      std::uint64_t* kk = k + first;
      FUSOR_MATCH_SIMD_LOOP
      for (index_t t = 0; t < len; ++t) {
        const std::uint64_t key = score_key(v[t], rot);
        if (key > kk[t]) kk[t] = key;
      }
      index_t t = 0;
      for (; t + 8 <= len; t += 8)
        for (int lane = 0; lane < 8; ++lane) {
          const double d = double(v[t + lane]);
          a[lane] += d;
          b[lane] += d * d;
        }
      for (; t < len; ++t) {
        const double d = double(v[t]);
        a[0] += d;
        b[0] += d * d;
      }
    }
    return {((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7])),
            ((b[0] + b[1]) + (b[2] + b[3])) + ((b[4] + b[5]) + (b[6] + b[7]))};
  }
  FUSOR_HD void fill(index_t first, std::complex<double>* out, index_t count) const {
    for (index_t e = 0; e < count; ++e)
      out[e] = s.kind == score_map::form::plain ? row<score_map::form::plain>(first + e)
                                                : row<score_map::form::shifted>(first + e);
  }
};

/// The score or the rotation index out of a key map.
struct key_scores {
  using value_type = float;
  const std::uint64_t* keys;
  FUSOR_HD void fill(index_t first, float* out, index_t count) const {
    for (index_t e = 0; e < count; ++e) out[e] = key_score(keys[first + e]);
  }
};
struct key_rotations {
  using value_type = std::int32_t;
  const std::uint64_t* keys;
  FUSOR_HD void fill(index_t first, std::int32_t* out, index_t count) const {
    for (index_t e = 0; e < count; ++e) out[e] = std::int32_t(key_rotation(keys[first + e]));
  }
};

/// One row of a template of shape (m0, m1, m2) as it lies along the FFT grid's last axis (f2
/// long, the template's centre c2 on 0, wrapping), each value v becoming (v - shift) scale w (w:
/// a weight map of the template's shape, or 1), or its square (MCC's CC(t, g'^2)), zero where the
/// template is not: what grid_placement and row_placement write for each row they touch.
struct placed_row {
  const float* values;
  const float* weights;
  float shift, scale;
  bool squared;
  index_t m2, f2, c2;
  /// The template index that grid position q (of an axis f long, template m long, centre c) holds,
  /// or -1: q holds template offset d = q (q < f - c) or q - f, i.e. index d + c.
  FUSOR_HD static index_t source(index_t q, index_t f, index_t m, index_t c) {
    const index_t y = (q < f - c ? q : q - f) + c;
    return y >= 0 && y < m ? y : -1;
  }
  /// The value grid position q holds in the template row starting at values[base].
  FUSOR_HD float at(index_t base, index_t q) const {
    const index_t y2 = source(q, f2, m2, c2);
    if (y2 < 0) return 0.0f;
    float v = (values[base + y2] - shift) * scale;
    if (weights) v *= weights[base + y2];
    return squared ? v * v : v;
  }
  /// o[t] for grid positions k, ..., k + len - 1 of the template row starting at values[base].
  FUSOR_HD void write(float* o, index_t base, index_t k, index_t len) const {
    for (index_t t = 0; t < len; ++t) o[t] = at(base, k + t);
  }
};

/// Places a template of shape (m0, m1, m2) on the FFT grid (f0, f1, f2) with its centre c on the
/// origin (wrapping), zero elsewhere (placed_row): the placement, the standardisation under a mask
/// and the zeroing of the grid in one pass.
struct grid_placement {
  using value_type = float;
  placed_row r;
  index_t m0, m1, f0, f1, c0, c1;
  FUSOR_HD void fill(index_t first, float* out, index_t count) const {
    // a row at a time: most rows of the grid miss the template and are zeroed in a plain loop
    for_each_row_piece(first, count, r.f2, [&](index_t row, index_t k, index_t e, index_t len) {
      float* o = out + e;
      const index_t y0 = placed_row::source(row / f1, f0, m0, c0), y1 = placed_row::source(row % f1, f1, m1, c1);
      if (y0 < 0 || y1 < 0) {
        for (index_t t = 0; t < len; ++t) o[t] = 0.0f;
        return;
      }
      r.write(o, (y0 * m1 + y1) * r.m2, k, len);
    });
  }
};

/// A window of the target on the FFT grid (f0, f1, f2): grid position u holds the target's voxel
/// s + u (squared, for the local second moments) where u lies inside the window w and s + u inside
/// the target n, and 0 elsewhere: the window's extraction, its zero padding and the grid's in one
/// pass. Periodic: s + u is taken modulo n, so the window reads the target repeated on every side.
struct window_grid {
  using value_type = float;
  const float* t;
  index_t n0, n1, n2, s0, s1, s2, w0, w1, w2, f1, f2;
  bool squared;
  bool periodic;  // the window reads the target as periodic (edge_mode::wrap), not zero beyond it
  FUSOR_HD static index_t wrapped(index_t x, index_t n) {
    const index_t r = x % n;
    return r < 0 ? r + n : r;
  }
  FUSOR_HD void fill(index_t first, float* out, index_t count) const {
    for_each_row_piece(first, count, f2, [&](index_t row, index_t k, index_t e, index_t len) {
      float* o = out + e;
      const index_t u0 = row / f1, u1 = row % f1;
      const index_t x0 = periodic ? wrapped(s0 + u0, n0) : s0 + u0, x1 = periodic ? wrapped(s1 + u1, n1) : s1 + u1;
      if (u0 >= w0 || u1 >= w1 || x0 < 0 || x0 >= n0 || x1 < 0 || x1 >= n1) {
        for (index_t j = 0; j < len; ++j) o[j] = 0.0f;
        return;
      }
      const float* src = t ? t + (x0 * n1 + x1) * n2 : nullptr;  // none: 1 on the target
      for (index_t j = 0; j < len; ++j) {
        const index_t u2 = k + j, x2 = periodic ? wrapped(s2 + u2, n2) : s2 + u2;
        const float v = u2 < w2 && x2 >= 0 && x2 < n2 ? (src ? src[x2] : 1.0f) : 0.0f;
        o[j] = squared ? v * v : v;
      }
    });
  }
};

/// a(k mod h) conj(b(k)) over lanes of h complex values (b's lanes contiguous; a one spectrum
/// for all of them), by the plain formula: the correlation's product, written out so that it
/// vectorises (the engine's complex multiply keeps std::complex's scalar NaN recovery, 8% of a
/// 128^3 scan's time; spectra of finite data never need it). out may be b itself.
struct conj_product {
  using value_type = std::complex<float>;
  const std::complex<float>* a;
  const std::complex<float>* b;
  index_t h;
  FUSOR_HD void fill(index_t first, std::complex<float>* out, index_t count) const {
    for_each_row_piece(first, count, h, [&](index_t, index_t k, index_t e, index_t len) {
      const float* x = reinterpret_cast<const float*>(a + k);
      const float* y = reinterpret_cast<const float*>(b + first + e);
      float* o = reinterpret_cast<float*>(out + e);
      FUSOR_MATCH_SIMD_LOOP
      for (index_t t = 0; t < len; ++t) {
        const float xr = x[2 * t], xi = x[2 * t + 1], yr = y[2 * t], yi = y[2 * t + 1];
        o[2 * t] = xr * yr + xi * yi;
        o[2 * t + 1] = xi * yr - xr * yi;
      }
    });
  }
};

// ---- cpu: two rotations in one complex transform pair (scan.hpp's paired_forward) ----------
// FFTW's complex transform of a grid costs about what its real inverse alone does (128^3 here:
// 20 ms against 18 ms for c2r and 17 ms for r2c, whose half-spectrum passes run narrower
// codelets), so two real correlations go through one complex pair: z = a + i b placed on the
// grid, Z = the backward-sign DFT of z, and the unscaled backward DFT of F Z is CC(f, a) +
// i CC(f, b), F the target's spectrum over the whole grid. (For real a, the backward-sign DFT is
// conj(A), the factor the real path multiplies by; the pair is linear in z, so the imaginary
// part carries b's correlation.) cpu only: cuFFT's real transforms are not the slower kind.

/// Two template-sized volumes' rows, as row_placement lays one, packed into one complex row: the
/// first volume's in the real parts, the second's (or zeros) in the imaginary ones.
struct pair_row_placement {
  using value_type = std::complex<float>;
  placed_row re, im;
  bool has_im;
  void fill(index_t first, std::complex<float>* out, index_t count) const {
    for_each_row_piece(first, count, re.f2, [&](index_t row, index_t k, index_t e, index_t len) {
      float* o = reinterpret_cast<float*>(out + e);
      for (index_t t = 0; t < len; ++t) {
        o[2 * t] = re.at(row * re.m2, k + t);
        o[2 * t + 1] = has_im ? im.at(row * im.m2, k + t) : 0.0f;
      }
    });
  }
};

/// F(k) z(k) over a whole (f0, f1, f2) grid, F a real volume's spectrum given by its r2c half
/// (f0, f1, f2/2+1) and read past the half by its symmetry F(k) = conj(F(-k)); z a paired
/// spectrum (paired_forward). out may be z itself.
struct paired_product {
  using value_type = std::complex<float>;
  const std::complex<float>* half;
  const std::complex<float>* z;
  index_t f0, f1, f2;
  void fill(index_t first, std::complex<float>* out, index_t count) const {
    const index_t h = f2 / 2 + 1;
    for_each_row_piece(first, count, f2, [&](index_t row, index_t k, index_t e, index_t len) {
      const index_t k0 = row / f1, k1 = row % f1;
      const float* direct = reinterpret_cast<const float*>(half + row * h);
      const float* mirror = reinterpret_cast<const float*>(half + (((f0 - k0) % f0) * f1 + (f1 - k1) % f1) * h);
      const float* y = reinterpret_cast<const float*>(z + first + e);
      float* o = reinterpret_cast<float*>(out + e);
      const index_t stored = std::min(len, std::max<index_t>(h - k, 0));  // positions k + t < h
      FUSOR_MATCH_SIMD_LOOP
      for (index_t t = 0; t < stored; ++t) {
        const float a = direct[2 * (k + t)], b = direct[2 * (k + t) + 1], yr = y[2 * t], yi = y[2 * t + 1];
        o[2 * t] = a * yr - b * yi;
        o[2 * t + 1] = a * yi + b * yr;
      }
      FUSOR_MATCH_SIMD_LOOP
      for (index_t t = stored; t < len; ++t) {  // F(k) = conj(F(-k)), -k's last index f2 - k - t
        const index_t q = f2 - k - t;
        const float a = mirror[2 * q], b = -mirror[2 * q + 1], yr = y[2 * t], yi = y[2 * t + 1];
        o[2 * t] = a * yr - b * yi;
        o[2 * t + 1] = a * yi + b * yr;
      }
    });
  }
};

/// The rows of the FFT grid that a placed template touches, packed: row (y0, y1) of the template
/// (m0 x m1 rows) as placed_row lays it along the grid's last axis. The pruned forward transform
/// starts from these rows instead of the whole grid (scan.hpp).
struct row_placement {
  using value_type = float;
  placed_row r;
  FUSOR_HD void fill(index_t first, float* out, index_t count) const {
    for_each_row_piece(first, count, r.f2, [&](index_t row, index_t k, index_t e, index_t len) {
      r.write(out + e, row * r.m2, k, len);
    });
  }
};

/// scipy.ndimage.laplace with mode "wrap": the sum over the axes of v[i-1] - 2 v[i] + v[i+1].
struct periodic_laplacian {
  using value_type = float;
  const float* v;
  index_t n0, n1, n2;
  FUSOR_HD void fill(index_t first, float* out, index_t count) const {
    for (index_t e = 0; e < count; ++e) {
      const index_t p = first + e, i = p / (n1 * n2), j = (p / n2) % n1, k = p % n2;
      const float c = v[p];
      const index_t s0 = n1 * n2, s1 = n2;
      const float a0 = v[p + ((i == 0 ? n0 - 1 : -1) * s0)], b0 = v[p + ((i == n0 - 1 ? 1 - n0 : 1) * s0)];
      const float a1 = v[p + ((j == 0 ? n1 - 1 : -1) * s1)], b1 = v[p + ((j == n1 - 1 ? 1 - n1 : 1) * s1)];
      const float a2 = v[p + (k == 0 ? n2 - 1 : -1)], b2 = v[p + (k == n2 - 1 ? 1 - n2 : 1)];
      out[e] = (a0 - 2.0f * c + b0) + (a1 - 2.0f * c + b1) + (a2 - 2.0f * c + b2);
    }
  }
};

}  // namespace detail
}  // namespace fusor::match
