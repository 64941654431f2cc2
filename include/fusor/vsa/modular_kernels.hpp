#pragma once
// Kernels of the models over integers modulo q (MCR, CGR, block codes), written as generators
// like vsa/kernels.hpp: the (Q, N) similarity sweep, the vote that bundles (a phasor vote for MCR,
// a mode for CGR and block codes) and the per-value counts. Every result depends only on integer
// arithmetic, float sums of whole numbers in row order, and double arithmetic spelt out with
// explicit fma on one host-computed table, so the cpu and cuda backends give the same integers.
#include <cmath>
#include <cstdint>

#include "kernels.hpp"

namespace fusor::vsa::detail {

/// Uniform integer in [0, q) from 32 random bits (Lemire's multiply-shift: bias below q / 2^32).
FUSOR_HD inline std::uint32_t below(std::uint32_t bits, std::uint32_t q) {
  return std::uint32_t((std::uint64_t(bits) * q) >> 32);
}

/// a * b + c rounded once, on every backend (an fma the compiler did not choose).
FUSOR_HD inline double fused(double a, double b, double c) {
#if defined(__CUDA_ARCH__)
  return ::fma(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

/// The metric a modular sweep computes, per pair of rows a, b of d elements modulo q:
///   cosine:  1 - 4 D / (q d), D the sum of the modular distances min(a - b, b - a) mod q (the
///            Manhattan distance of Snaider and Franklin, scaled so random pairs score 0);
///   dot:     d - 4 D / q;
///   hamming: the fraction of equal elements;
///   overlap: the number of equal elements.
enum class modular_measure { cosine, dot, hamming, overlap };

/// Similarities of every pair: a (Q, d), b (N, d), output (Q, N) of float. Each pair is one loop
/// the compiler vectorises (partial sums exact in int32 over chunks of 4096 elements, then int64).
template <class T>
struct modular_similarity {
  using value_type = float;
  const T *a, *b;
  index_t nb, d;
  std::int32_t q;
  modular_measure measure;

  FUSOR_HD float finish(std::int64_t s) const {
    switch (measure) {
      case modular_measure::cosine: return float(1.0 - 4.0 * double(s) / (double(q) * double(d)));
      case modular_measure::dot: return float(double(d) - 4.0 * double(s) / double(q));
      case modular_measure::hamming: return float(double(s) / double(d));
      default: return float(s);
    }
  }
  /// The sum of min((x - y) mod q, (y - x) mod q), or the number of x == y, over [k0, k1).
  FUSOR_HD static std::int32_t distances(const T* x, const T* y, index_t k0, index_t k1, std::int32_t q) {
    std::int32_t c = 0;
    for (index_t k = k0; k < k1; ++k) {
      std::int32_t t = std::int32_t(x[k]) - std::int32_t(y[k]);
      t += t < 0 ? q : 0;
      const std::int32_t u = q - t;
      c += t < u ? t : u;
    }
    return c;
  }
  FUSOR_HD static std::int32_t equals(const T* x, const T* y, index_t k0, index_t k1) {
    std::int32_t c = 0;
    for (index_t k = k0; k < k1; ++k) c += std::int32_t(x[k] == y[k]);
    return c;
  }
  FUSOR_HD void fill(index_t first, float* out, index_t count) const {
    const bool eq = measure == modular_measure::hamming || measure == modular_measure::overlap;
    constexpr index_t chunk = 4096;
    for (index_t i = 0; i < count; ++i) {
      const index_t p = first + i;
      const T *x = a + (p / nb) * d, *y = b + (p % nb) * d;
      std::int64_t s = 0;
      for (index_t k0 = 0; k0 < d; k0 += chunk) {
        const index_t k1 = k0 + chunk < d ? k0 + chunk : d;
        s += eq ? equals(x, y, k0, k1) : distances(x, y, k0, k1, q);
      }
      out[i] = finish(s);
    }
  }
};

/// The vote that bundles rows of integers modulo q, per output element (g, j) of (G, d):
///   rows r = 0 .. n-1 at x + g * group_stride + r * d (bundle: each group its own rows; superpose:
///   group_stride 0, every group the same items), weighted by w[g * n + r] (or 1 when w is null).
///   phasor (MCR): the value k whose phasor e^{2 pi i k / q} is nearest the weighted sum S of the
///     rows' phasors: argmax_k Re(S e^{-2 pi i k / q}). Scores within 1e-9 |S| of the best tie (S
///     midway between two values: two rows whose values differ by an odd number, say). A sum within
///     1e-9 n of zero has no direction: every value ties.
///   mode (CGR, block codes): the value of largest total weight.
/// Ties: tie_break::first takes, among the tied values, the first row's value if it is one, else
/// (phasor) the one nearest it, lower on equal distance, or (mode) the one that occurs first in row
/// order; tie_break::random draws one of the tied values from Philox keyed by (seed, g, j).
/// Elements at or above q (rows the caller made) are read modulo q, so no table is read past q.
template <class T>
struct modular_vote {
  using value_type = T;
  const T* x;
  const float* w;        // (G, n) weights or null
  const double* table;   // phasor: cos(2 pi k / q) then sin(2 pi k / q), 2 q doubles (else unused)
  index_t n, d, group_stride;
  std::int32_t q;
  bool phasor, random_ties;
  std::uint64_t seed;

  FUSOR_HD std::int32_t at(const T* rows, index_t r) const {
    const std::int32_t v = rows[r * d];
    return v < q ? v : v % q;
  }
  FUSOR_HD std::uint32_t tie_bits(index_t g, index_t j) const {
    return fusor::random::block_words(seed, std::uint64_t(g), std::uint64_t(j))[0];
  }
  FUSOR_HD std::int32_t distance(std::int32_t a, std::int32_t b) const {
    const std::int32_t t = a >= b ? a - b : b - a;
    return t < q - t ? t : q - t;
  }
  FUSOR_HD T phasor_vote(const T* rows, const float* wg, index_t g, index_t j) const {
    const double *ct = table, *st = table + q;
    double sc = 0, ss = 0, mass = 0;
    for (index_t r = 0; r < n; ++r) {
      const std::int32_t v = at(rows, r);
      if (wg) {
        const double wr = wg[r];
        sc = fused(wr, ct[v], sc);
        ss = fused(wr, st[v], ss);
        mass += wr < 0 ? -wr : wr;
      } else {
        sc += ct[v];
        ss += st[v];
        mass += 1.0;
      }
    }
    const std::int32_t lead = at(rows, 0);
    const double norm2 = fused(sc, sc, ss * ss);
    if (!(norm2 > 1e-18 * mass * mass)) return random_ties ? T(below(tie_bits(g, j), std::uint32_t(q))) : T(lead);
    double score[256];  // MCR's q <= 256 (uint8 elements): each score computed once
    double top = 0;
    for (std::int32_t k = 0; k < q; ++k) {
      score[k] = fused(sc, ct[k], ss * st[k]);
      top = k == 0 || score[k] > top ? score[k] : top;
    }
#if defined(__CUDA_ARCH__)
    const double cutoff = top - 1e-9 * ::sqrt(norm2);
#else
    const double cutoff = top - 1e-9 * std::sqrt(norm2);
#endif
    std::int32_t best = -1, tied = 0;
    for (std::int32_t k = 0; k < q; ++k)
      if (score[k] >= cutoff) {
        ++tied;
        if (best < 0 || distance(k, lead) < distance(best, lead)) best = k;
      }
    if (tied < 2 || !random_ties) return T(best);
    std::uint32_t pick = below(tie_bits(g, j), std::uint32_t(tied));
    for (std::int32_t k = 0; k < q; ++k)
      if (score[k] >= cutoff && pick-- == 0) return T(k);
    return T(best);
  }
  FUSOR_HD float weight(const float* wg, index_t r) const { return wg ? wg[r] : 1.0f; }
  /// The total weight of row r's value, summed in row order (so equal totals are equal floats).
  FUSOR_HD float total(const T* rows, const float* wg, index_t r) const {
    const std::int32_t v = at(rows, r);
    float t = 0;
    for (index_t s = 0; s < n; ++s)
      if (at(rows, s) == v) t += weight(wg, s);
    return t;
  }
  FUSOR_HD T mode_vote(const T* rows, const float* wg, index_t g, index_t j) const {
    constexpr std::int32_t small = 256;  // a table of totals per value when q fits, else O(n^2)
    float totals[small];
    const bool tabled = q <= small;
    if (tabled) {
      for (index_t r = 0; r < n; ++r) totals[at(rows, r)] = 0;
      for (index_t r = 0; r < n; ++r) totals[at(rows, r)] += weight(wg, r);
    }
    auto total_of = [&](index_t r) { return tabled ? totals[at(rows, r)] : total(rows, wg, r); };
    float top = 0;
    std::int32_t val = at(rows, 0);
    for (index_t r = 0; r < n; ++r) {
      const float t = total_of(r);
      if (r == 0 || t > top) {
        top = t;
        val = at(rows, r);
      }
    }
    if (!random_ties) return T(val);
    // the distinct values whose total is `top`, in order of first occurrence; pick one at random
    auto first_of = [&](index_t r) {
      for (index_t s = 0; s < r; ++s)
        if (at(rows, s) == at(rows, r)) return false;
      return true;
    };
    index_t tied = 0;
    for (index_t r = 0; r < n; ++r)
      if (total_of(r) == top && first_of(r)) ++tied;
    if (tied < 2) return T(val);
    index_t pick = index_t(below(tie_bits(g, j), std::uint32_t(tied)));
    for (index_t r = 0; r < n; ++r)
      if (total_of(r) == top && first_of(r) && pick-- == 0) return T(at(rows, r));
    return T(val);
  }
  FUSOR_HD void fill(index_t first, T* out, index_t count) const {
    for (index_t i = 0; i < count; ++i) {
      const index_t p = first + i, g = p / d, j = p % d;
      const T* rows = x + g * group_stride + j;
      const float* wg = w ? w + g * n : nullptr;
      if constexpr (sizeof(T) == 1)  // the phasor vote is MCR's, whose uint8 values keep q <= 256
        out[i] = phasor ? phasor_vote(rows, wg, g, j) : mode_vote(rows, wg, g, j);
      else
        out[i] = mode_vote(rows, wg, g, j);
    }
  }
};

/// How many of the n rows hold each value at each position: x (G, n, d), output (G, d, q) int32.
template <class T>
struct value_counts {
  using value_type = std::int32_t;
  const T* x;
  index_t n, d;
  std::int32_t q;
  FUSOR_HD void fill(index_t first, std::int32_t* out, index_t count) const {
    for (index_t i = 0; i < count; ++i) {
      const index_t p = first + i, v = p % q, j = (p / q) % d, g = p / (q * d);
      const T* rows = x + g * n * d + j;
      std::int32_t c = 0;
      for (index_t r = 0; r < n; ++r) c += std::int32_t(rows[r * d] == T(v));
      out[i] = c;
    }
  }
};

}  // namespace fusor::vsa::detail
