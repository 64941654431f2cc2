#pragma once
// The VSA kernels that are not elementwise expressions (random rows, bit-packed majority, XOR and
// AND popcount products, bit rotations, bit counts), written once as generators: a generator_expr
// computes each output element from its position, and the executor of the backend runs it (a
// threaded SIMD-friendly loop on cpu, one kernel on cuda). They read their inputs through plain
// pointers to contiguous rows, which the front ends (operations.hpp) guarantee.
#include <array>
#include <bit>
#include <complex>
#include <cmath>
#include <cstdint>
#include <utility>

#include "../core/create.hpp"
#include "../core/random.hpp"

namespace fusor::vsa::detail {

using philox_words = std::array<std::uint32_t, 4>;

FUSOR_HD inline int popcount64(std::uint64_t x) {
#if defined(__CUDA_ARCH__)
  return __popcll(x);
#else
  return std::popcount(x);
#endif
}

FUSOR_HD inline int countr_zero64(std::uint64_t x) {
#if defined(__CUDA_ARCH__)
  return __ffsll(static_cast<long long>(x)) - 1;
#else
  return std::countr_zero(x);
#endif
}

/// The bits of word w (of `words`) that hold one of d dimensions: all ones but in the last word.
FUSOR_HD inline std::uint64_t valid_bits(index_t w, index_t words, index_t d) {
  const index_t rest = d - 64 * (words - 1);
  return w + 1 < words || rest == 64 ? ~std::uint64_t(0) : (std::uint64_t(1) << rest) - 1;
}

/// Random rows: element (row, col) of the output is m.element(words, col) where `words` is Philox
/// block col / M::per_block of stream (first_row + row) under `seed` (per_block a power of two; an
/// element finds its place in the block as col & (per_block - 1)). So a row depends on (seed,
/// its index) only: random(m, 5, s) is the first five rows of random(m, 10, s), on every backend.
template <class M>
struct row_draw {
  using value_type = typename M::value_type;
  static constexpr index_t block = M::per_block;  // the cpu scalar loop keeps one block of values
  M m;
  std::uint64_t seed;
  index_t first_row, width;
  FUSOR_HD void fill(index_t first, value_type* out, index_t count) const {
    constexpr index_t per = M::per_block;
    index_t row = first / width, col = first % width;  // divisions once per run, not per block
    index_t i = 0;
    while (i < count) {
      const std::uint64_t stream = std::uint64_t(first_row + row);
      if (col % per == 0 && count - i >= per) {
        // whole blocks of this row: a plain loop of independent blocks, which the core overlaps
        index_t blocks = (width - col < count - i ? width - col : count - i) / per;
        const std::uint64_t b0 = std::uint64_t(col / per);
        value_type* o = out + i;
        for (index_t b = 0; b < blocks; ++b) {
          const philox_words w = fusor::random::block_words(seed, stream, b0 + std::uint64_t(b));
          if constexpr (requires { m.fill_block(w, o); }) {
            // a model that writes a whole block itself, in loops over one word at a time (the
            // compiler vectorises those; it does not vectorise the unrolled positions below)
            m.fill_block(w, o + b * per);
          } else {
            // compile-time positions in the block: an element's `col & (per - 1)` folds to a
            // constant, so the words stay in registers (a run-time index sends them through the stack)
            const index_t c = index_t(b0 + std::uint64_t(b)) * per;  // == col + b * per, visibly aligned
            [&]<index_t... K>(std::integer_sequence<index_t, K...>) {
              ((o[b * per + K] = m.element(w, c + K)), ...);
            }(std::make_integer_sequence<index_t, per>{});
          }
        }
        i += blocks * per;
        col += blocks * per;
        if (col == width) {
          col = 0;
          ++row;
          continue;
        }
        if (i == count) break;
      }
      index_t n = per - col % per;  // the part of one block this run covers
      if (n > width - col) n = width - col;
      if (n > count - i) n = count - i;
      const philox_words w = fusor::random::block_words(seed, stream, std::uint64_t(col / per));
      for (index_t k = 0; k < n; ++k) out[i + k] = m.element(w, col + k);
      i += n;
      col += n;
      if (col == width) {
        col = 0;
        ++row;
      }
    }
  }
};

/// Majority of n bit-packed rows: x holds (batch, n, words) words; output (batch, words). A bit
/// is set when more than half the rows set it; a tie (n even) takes the first row's bit, or a
/// Philox bit keyed by (seed, batch, word) when `random_ties`. The counts are bit-sliced: plane k
/// of a word holds bit k of the 64 counts, a row is added with a ripple of ANDs and XORs, and the
/// comparison with n / 2 runs over the planes, so 64 positions cost a handful of word operations
/// per row (four words at a time, which the compiler turns into SIMD).
struct bit_majority {
  using value_type = std::uint64_t;
  static constexpr int lanes = 4;
  const std::uint64_t* x;
  index_t n, words, d;
  bool random_ties;
  std::uint64_t seed;

  template <int L>
  FUSOR_HD void majority(index_t b, index_t w, std::uint64_t* out) const {
    int planes = 1;
    while (planes < 63 && (index_t(1) << planes) <= n) ++planes;
    std::uint64_t c[63][L];
    for (int k = 0; k < planes; ++k)
      for (int l = 0; l < L; ++l) c[k][l] = 0;
    const std::uint64_t* col = x + b * n * words + w;
    for (index_t r = 0; r < n; ++r) {
      std::uint64_t carry[L];
      for (int l = 0; l < L; ++l) carry[l] = col[r * words + l];
      for (int k = 0; k < planes; ++k)
        for (int l = 0; l < L; ++l) {
          const std::uint64_t t = c[k][l] & carry[l];
          c[k][l] ^= carry[l];
          carry[l] = t;
        }
    }
    const index_t half = n / 2;  // count > half is a majority; count == half (n even) a tie
    for (int l = 0; l < L; ++l) {
      std::uint64_t gt = 0, eq = ~std::uint64_t(0);
      for (int k = planes - 1; k >= 0; --k) {
        if ((half >> k) & 1) {
          eq &= c[k][l];
        } else {
          gt |= eq & c[k][l];
          eq &= ~c[k][l];
        }
      }
      std::uint64_t r = gt;
      if (n % 2 == 0) {
        std::uint64_t tie = col[l];
        if (random_ties) {
          const auto t = fusor::random::block_words(seed, std::uint64_t(b), std::uint64_t(w + l));
          tie = (std::uint64_t(t[1]) << 32) | t[0];
        }
        r |= eq & tie;
      }
      out[l] = r & valid_bits(w + l, words, d);
    }
  }
  FUSOR_HD void fill(index_t first, std::uint64_t* out, index_t count) const {
    index_t i = 0;
    while (i < count) {
      const index_t p = first + i, b = p / words, w = p % words;
      if (i + lanes <= count && w + lanes <= words) {
        majority<lanes>(b, w, out + i);
        i += lanes;
      } else {
        majority<1>(b, w, out + i);
        ++i;
      }
    }
  }
};

/// Per-bit counts of n bit-packed rows (the bundle accumulator): x (batch, n, words), output
/// (batch, d) of int32. On cpu a run counts whole words, visiting only the set bits of each row's
/// word (sparse rows cost their few bits); a cuda thread counts its position down the rows.
struct bit_counts {
  using value_type = std::int32_t;
  const std::uint64_t* x;
  index_t n, words, d;
  FUSOR_HD std::int32_t one(index_t p) const {
    const index_t b = p / d, j = p % d;
    const std::uint64_t* col = x + b * n * words + j / 64;
    std::int32_t c = 0;
    for (index_t r = 0; r < n; ++r) c += std::int32_t((col[r * words] >> (j % 64)) & 1u);
    return c;
  }
  FUSOR_HD void fill(index_t first, std::int32_t* out, index_t count) const {
#if defined(__CUDA_ARCH__)
    for (index_t i = 0; i < count; ++i) out[i] = one(first + i);
#else
    index_t i = 0;
    while (i < count) {
      const index_t p = first + i, b = p / d, j = p % d, w = j / 64, j0 = 64 * w;
      const index_t nbits = d - j0 < 64 ? d - j0 : 64;
      if (count - i < 8) {  // a short run: position by position
        out[i] = one(p);
        ++i;
        continue;
      }
      std::int32_t c[64] = {};
      const std::uint64_t* col = x + b * n * words + w;
      for (index_t r = 0; r < n; ++r)
        for (std::uint64_t v = col[r * words]; v != 0; v &= v - 1) ++c[std::countr_zero(v)];
      index_t take = nbits - (j - j0);
      if (take > count - i) take = count - i;
      for (index_t k = 0; k < take; ++k) out[i + k] = c[j - j0 + k];
      i += take;
    }
#endif
  }
};

/// popcount(a_q OP b_j) summed over the words of a row, for every pair: a (Q, words), b (N,
/// words), output (Q, N) of int32; OP is XOR (Hamming distance) or AND (overlap). Four pairs of
/// one row share each load of the query word.
struct popcount_product {
  using value_type = std::int32_t;
  const std::uint64_t *a, *b;
  index_t nb, words;
  bool use_and;
  FUSOR_HD static std::uint64_t op(std::uint64_t x, std::uint64_t y, bool land) { return land ? x & y : x ^ y; }
  FUSOR_HD void fill(index_t first, std::int32_t* out, index_t count) const {
    index_t i = 0;
    while (i < count) {
      const index_t p = first + i, q = p / nb, j = p % nb;
      const std::uint64_t* aq = a + q * words;
      if (j + 4 <= nb && i + 4 <= count) {
        const std::uint64_t *b0 = b + j * words, *b1 = b0 + words, *b2 = b1 + words, *b3 = b2 + words;
        std::int32_t c0 = 0, c1 = 0, c2 = 0, c3 = 0;
        if (use_and) {
          for (index_t w = 0; w < words; ++w) {
            const std::uint64_t v = aq[w];
            c0 += popcount64(v & b0[w]);
            c1 += popcount64(v & b1[w]);
            c2 += popcount64(v & b2[w]);
            c3 += popcount64(v & b3[w]);
          }
        } else {
          for (index_t w = 0; w < words; ++w) {
            const std::uint64_t v = aq[w];
            c0 += popcount64(v ^ b0[w]);
            c1 += popcount64(v ^ b1[w]);
            c2 += popcount64(v ^ b2[w]);
            c3 += popcount64(v ^ b3[w]);
          }
        }
        out[i] = c0;
        out[i + 1] = c1;
        out[i + 2] = c2;
        out[i + 3] = c3;
        i += 4;
      } else {
        const std::uint64_t* bj = b + j * words;
        std::int32_t c = 0;
        for (index_t w = 0; w < words; ++w) c += popcount64(op(aq[w], bj[w], use_and));
        out[i] = c;
        ++i;
      }
    }
  }
};

/// Word w of a d-bit row rotated by `shift` (0 <= shift < d) toward higher positions (np.roll on the
/// unpacked bits): output bit j is input bit (j - shift) mod d. A word whose 64 source bits do not
/// wrap around d is two shifted input words; the rest go bit by bit.
FUSOR_HD inline std::uint64_t rolled_word(const std::uint64_t* row, index_t words, index_t d, index_t shift, index_t w) {
  const index_t j0 = 64 * w, nbits = d - j0 < 64 ? d - j0 : 64;
  index_t src = j0 - shift;
  if (src < 0) src += d;
  std::uint64_t v = 0;
  if (src + nbits <= d) {
    const index_t sw = src / 64, sb = src % 64;
    v = row[sw] >> sb;
    if (sb != 0 && sw + 1 < words) v |= row[sw + 1] << (64 - sb);
  } else {
    for (index_t k = 0; k < nbits; ++k) {
      index_t s = src + k;
      if (s >= d) s -= d;
      v |= ((row[s / 64] >> (s % 64)) & 1u) << k;
    }
  }
  return v & valid_bits(w, words, d);
}

/// Rotation of d-bit rows by `shift` positions toward higher indices.
struct bit_roll {
  using value_type = std::uint64_t;
  const std::uint64_t* x;
  index_t words, d, shift;  // 0 <= shift < d
  FUSOR_HD void fill(index_t first, std::uint64_t* out, index_t count) const {
    for (index_t i = 0; i < count; ++i) {
      const index_t p = first + i, r = p / words, w = p % words;
      out[i] = rolled_word(x + r * words, words, d, shift, w);
    }
  }
};

/// Bits rearranged: output bit j of a row is input bit order[j] of the same row (rows, words).
struct bit_gather {
  using value_type = std::uint64_t;
  const std::uint64_t* x;
  const std::int64_t* order;
  index_t words, d;
  FUSOR_HD void fill(index_t first, std::uint64_t* out, index_t count) const {
    for (index_t i = 0; i < count; ++i) {
      const index_t p = first + i, r = p / words, w = p % words;
      const std::uint64_t* row = x + r * words;
      const index_t j0 = 64 * w, nbits = d - j0 < 64 ? d - j0 : 64;
      std::uint64_t v = 0;
      for (index_t k = 0; k < nbits; ++k) {
        const index_t s = order[j0 + k];
        v |= ((row[s / 64] >> (s % 64)) & 1u) << k;
      }
      out[i] = v;
    }
  }
};

/// Unpacked bits: output (rows, d) of uint8 (0 or 1) from (rows, words).
struct bit_unpack {
  using value_type = std::uint8_t;
  const std::uint64_t* x;
  index_t words, d;
  FUSOR_HD void fill(index_t first, std::uint8_t* out, index_t count) const {
    for (index_t i = 0; i < count; ++i) {
      const index_t p = first + i, r = p / d, j = p % d;
      out[i] = std::uint8_t((x[r * words + j / 64] >> (j % 64)) & 1u);
    }
  }
};

/// Packed bits: output (rows, words) from (rows, d) elements, a bit set where the element is
/// non-zero.
template <class T>
struct bit_pack {
  using value_type = std::uint64_t;
  const T* x;
  index_t words, d;
  FUSOR_HD void fill(index_t first, std::uint64_t* out, index_t count) const {
    for (index_t i = 0; i < count; ++i) {
      const index_t p = first + i, r = p / words, w = p % words;
      const T* row = x + r * d + 64 * w;
      const index_t nbits = d - 64 * w < 64 ? d - 64 * w : 64;
      std::uint64_t v = 0;
      for (index_t k = 0; k < nbits; ++k) v |= std::uint64_t(row[k] != T(0)) << k;
      out[i] = v;
    }
  }
};

/// Elements drawn for FHRR: angles pi (2u - 1) in [-pi, pi), u with 24 random bits, four per
/// Philox block. The phasors are cis() of these in a fused SIMD pass (a scalar cos and sin per
/// element cost twenty times the draw).
struct phase_elements {
  using value_type = float;
  static constexpr index_t per_block = 4;
  FUSOR_HD float element(const philox_words& w, index_t col) const {
    return 3.14159265358979323846f * (2.0f * fusor::random::detail::unit_float(w[col & 3]) - 1.0f);
  }
};
/// Elements drawn for HRR, four per Philox block: elements 2p and 2p + 1 share the words 2 (p % 2)
/// and 2 (p % 2) + 1, the first as u1 in (0, 1] (radius_elements), the second as the angle
/// 2 pi u2 (angle_elements), and are Box-Muller's two normal variates sqrt(-2 log u1) cos(2 pi u2)
/// and sqrt(-2 log u1) sin(2 pi u2). The sine is the cosine of the angle less pi / 2, so every
/// element is the same function of its two inputs, computed in one fused SIMD pass.
struct radius_elements {
  using value_type = float;
  static constexpr index_t per_block = 4;
  FUSOR_HD float element(const philox_words& w, index_t col) const {
    return (float(w[2 * ((col >> 1) & 1)] >> 8) + 1.0f) * 0x1.0p-24f;
  }
};
struct angle_elements {
  using value_type = float;
  static constexpr index_t per_block = 4;
  FUSOR_HD float element(const philox_words& w, index_t col) const {
    return 6.28318530717958647692f * fusor::random::detail::unit_float(w[2 * ((col >> 1) & 1) + 1]) -
           1.57079632679489661923f * float(col & 1);
  }
};

/// Complex rows (rows, d) from real and imaginary parts held in padded rows (rows, dp).
template <class R>
struct interleave_rows {
  using value_type = std::complex<R>;
  const R *re, *im;
  index_t d, dp;
  FUSOR_HD void fill(index_t first, std::complex<R>* out, index_t count) const {
    index_t row = first / d, col = first % d;
    for (index_t i = 0; i < count; ++i) {
      out[i] = std::complex<R>(re[row * dp + col], im[row * dp + col]);
      if (++col == d) {
        col = 0;
        ++row;
      }
    }
  }
};

/// Each complex element divided by its magnitude, 0 to 1 (the identity's element): one pass in
/// real arithmetic (the engine's complex abs and division run element by element through
/// std::complex, several times slower).
template <class R>
struct unit_phasors {
  using value_type = std::complex<R>;
  const R* x;  // interleaved (re, im)
  FUSOR_HD void fill(index_t first, std::complex<R>* out, index_t count) const {
    for (index_t i = 0; i < count; ++i) {
      const R re = x[2 * (first + i)], im = x[2 * (first + i) + 1], n2 = re * re + im * im;
      if (n2 > R(0)) {
        const R inv = R(1) / std::sqrt(n2);
        out[i] = std::complex<R>(re * inv, im * inv);
      } else {
        out[i] = std::complex<R>(R(1), R(0));
      }
    }
  }
};

/// Rows padded to a multiple of 16 elements (every SIMD width) for the draws whose values go
/// through transcendental functions: then a fused pass computes every element in its vector body
/// (the scalar tail's std:: functions round differently, and where the tail falls depends on how
/// many rows are drawn), so a row's values do not depend on n or the thread count.
inline index_t padded_width(index_t d) { return (d + 15) / 16 * 16; }

/// The generator as an array of `shape` on backend B. Always a new array: the kernels above read
/// arrays through pointers, which the engine's aliasing checks of generator nodes do not see (and
/// the draws fill long runs far faster than a packet at a time inside a fused statement).
template <class B, class G>
array<typename G::value_type, B> generate(const G& g, const extents& shape) {
  return array<typename G::value_type, B>(generator_expr<G, B>{g, shape, contiguous_strides(shape)});
}

}  // namespace fusor::vsa::detail
