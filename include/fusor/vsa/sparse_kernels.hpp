#pragma once
// The kernels of the sparse binary codes (BSDC), bit-packed as BSC's: Bernoulli(p) rows, per-row
// popcounts, Rachkovskij and Kussul's context-dependent thinning, and the ranking keys of the
// density-keeping vote (a bundle keeps the k positions with the most votes).
#include <bit>
#include <cstdint>

#include "kernels.hpp"

namespace fusor::vsa::detail {

/// Bernoulli(p) bits: bit k of word w of row r is set when 32-bit word 64 w + k of Philox stream
/// (first_row + r) under `seed` is below `threshold` (p 2^32). A row depends on (seed, its index).
struct sparse_bits_draw {
  using value_type = std::uint64_t;
  std::uint64_t seed;
  index_t first_row, words, d;
  std::uint32_t threshold;
  FUSOR_HD void fill(index_t first, std::uint64_t* out, index_t count) const {
    for (index_t i = 0; i < count; ++i) {
      const index_t p = first + i, row = p / words, w = p % words;
      std::uint64_t v = 0;
      for (index_t t = 0; t < 16; ++t) {
        const philox_words b = fusor::random::block_words(seed, std::uint64_t(first_row + row), std::uint64_t(16 * w + t));
        v |= (std::uint64_t(b[0] < threshold) | std::uint64_t(b[1] < threshold) << 1 |
              std::uint64_t(b[2] < threshold) << 2 | std::uint64_t(b[3] < threshold) << 3)
             << (4 * t);
      }
      out[i] = v & valid_bits(w, words, d);
    }
  }
};

/// The set bits of each row: x (rows, words), output (rows) of int32.
struct row_popcounts {
  using value_type = std::int32_t;
  const std::uint64_t* x;
  index_t words;
  FUSOR_HD void fill(index_t first, std::int32_t* out, index_t count) const {
    for (index_t i = 0; i < count; ++i) {
      const std::uint64_t* row = x + (first + i) * words;
      std::int32_t c = 0;
      for (index_t w = 0; w < words; ++w) c += popcount64(row[w]);
      out[i] = c;
    }
  }
};

/// The number K of thinning rotations for a row with `ones` of d bits set, aiming at density
/// `target`: after K rotations a bit of density pz survives with probability 1 - (1 - pz)^K, so
/// the expected density is pz (1 - (1 - pz)^K); K is the smallest with that >= target. -1 when the
/// row is no denser than the target (it is kept whole). Products and comparisons only, so every
/// backend finds the same K.
FUSOR_HD inline index_t thinning_rotations(index_t ones, index_t d, double target) {
  const double pz = double(ones) / double(d);
  if (!(pz > target) || d < 2) return -1;
  const double bound = 1.0 - target / pz;  // (1 - pz)^K <= bound
  double q = 1.0;
  index_t k = 0;
  while (q > bound && k < d) {
    q *= 1.0 - pz;
    ++k;
  }
  return k;
}

/// SplitMix64's finaliser of the k-th step from x: a well-mixed 64-bit hash, integer arithmetic only.
FUSOR_HD inline std::uint64_t mix64(std::uint64_t x, std::uint64_t k = 0) {
  std::uint64_t z = x + 0x9e3779b97f4a7c15ull * (k + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
/// The shift of thinning rotation k, in [1, d - 1].
FUSOR_HD inline index_t thinning_shift(std::uint64_t seed, index_t k, index_t d) {
  return 1 + index_t(mix64(seed, std::uint64_t(k)) % std::uint64_t(d - 1));
}

/// Additive context-dependent thinning (Rachkovskij and Kussul, 2001) of rows z (rows, words): z AND
/// (the OR of K rotations of z by fixed pseudo-random shifts), K per row from its popcount `ones`
/// (thinning_rotations). The result is a subset of z's bits, of about the target density, and
/// depends on every bit of z: the thinned superposition of several vectors is similar to each of
/// them and different for every combination.
struct cdt_thin {
  using value_type = std::uint64_t;
  const std::uint64_t* z;
  const std::int32_t* ones;
  index_t words, d;
  double target;
  std::uint64_t seed;
  FUSOR_HD void fill(index_t first, std::uint64_t* out, index_t count) const {
    for (index_t i = 0; i < count; ++i) {
      const index_t p = first + i, row = p / words, w = p % words;
      const std::uint64_t* zr = z + row * words;
      const index_t k = thinning_rotations(ones[row], d, target);
      if (k < 0) {
        out[i] = zr[w];
        continue;
      }
      std::uint64_t acc = 0;
      for (index_t t = 0; t < k && acc != zr[w]; ++t) acc |= rolled_word(zr, words, d, thinning_shift(seed, t, d), w) & zr[w];
      out[i] = acc;
    }
  }
};

/// MurmurHash3's 32-bit finaliser: a bijection of the 32-bit integers that mixes every bit.
FUSOR_HD inline std::uint32_t fmix32(std::uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  return h ^ (h >> 16);
}

/// Ranking keys of a vote: (score, tie-break) as one uint64 whose order is the score's, then the
/// tie-break's. The tie-break is fmix32(position ^ salt): a bijection of the position, so no two
/// keys of a row are equal (for d < 2^32) and the k-th largest key keeps exactly k positions. The
/// salt is 0 (tie_break::first: a fixed pseudo-random order of the positions, deterministic without
/// a seed and favouring no position and no input, as a lower-position rule would not) or a Philox
/// word keyed by (seed, row) (tie_break::random). T is int32 (counts) or float (weighted sums); s
/// is (rows, d).
template <class T>
struct ranked_keys {
  using value_type = std::uint64_t;
  const T* s;
  index_t d;
  bool random_ties;
  std::uint64_t seed;
  FUSOR_HD static std::uint32_t ordered(std::int32_t v) { return std::uint32_t(v) ^ 0x80000000u; }
  FUSOR_HD static std::uint32_t ordered(float v) {
#if defined(__CUDA_ARCH__)
    std::uint32_t u = __float_as_uint(v);
#else
    std::uint32_t u = std::bit_cast<std::uint32_t>(v);
#endif
    if (v == 0.0f) u = 0;  // -0 ranks as 0
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
  }
  FUSOR_HD void fill(index_t first, std::uint64_t* out, index_t count) const {
    for (index_t i = 0; i < count; ++i) {
      const index_t p = first + i, row = p / d, j = p % d;
      const std::uint32_t salt = random_ties ? fusor::random::block_words(seed, std::uint64_t(row), 0)[0] : 0u;
      out[i] = (std::uint64_t(ordered(s[p])) << 32) | fmix32(std::uint32_t(j) ^ salt);
    }
  }
};

/// The index of the active bit of each segment of L bits (the lowest set bit; 0 for an empty
/// segment): x (rows, words) of S L bits, output (rows, S) of uint16.
struct segment_indices {
  using value_type = std::uint16_t;
  const std::uint64_t* x;
  index_t words, segments, length;
  FUSOR_HD void fill(index_t first, std::uint16_t* out, index_t count) const {
    for (index_t i = 0; i < count; ++i) {
      const index_t p = first + i, row = p / segments, s = p % segments;
      const std::uint64_t* r = x + row * words;
      const index_t lo = s * length, hi = lo + length;
      index_t found = 0;
      for (index_t j = lo; j < hi;) {  // a word at a time: the first set bit of the segment's part
        const index_t w = j / 64, b = j % 64, n = hi - j < 64 - b ? hi - j : 64 - b;
        const std::uint64_t v = (r[w] >> b) & (n == 64 ? ~std::uint64_t(0) : (std::uint64_t(1) << n) - 1);
        if (v != 0) {
          found = j - lo + index_t(countr_zero64(v));
          break;
        }
        j += n;
      }
      out[i] = std::uint16_t(found);
    }
  }
};

/// One-hot segments from indices: idx (rows, S) of uint16, output (rows, words) of S L bits, bit
/// s L + idx[s] set for every segment (an index past L sets nothing).
struct segment_bits {
  using value_type = std::uint64_t;
  const std::uint16_t* idx;
  index_t words, segments, length;
  FUSOR_HD void fill(index_t first, std::uint64_t* out, index_t count) const {
    const index_t d = segments * length;
    for (index_t i = 0; i < count; ++i) {
      const index_t p = first + i, row = p / words, w = p % words, j0 = 64 * w;
      const index_t j1 = j0 + 64 < d ? j0 + 64 : d;
      std::uint64_t v = 0;
      for (index_t s = j0 / length; s * length < j1; ++s) {
        const index_t k = idx[row * segments + s];
        const index_t j = s * length + k;
        if (k < length && j >= j0 && j < j1) v |= std::uint64_t(1) << (j - j0);
      }
      out[i] = v;
    }
  }
};

}  // namespace fusor::vsa::detail
