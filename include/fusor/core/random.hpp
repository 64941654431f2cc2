#pragma once
// Counter-based random numbers: Philox4x32-10 (Salmon et al., SC'11) keyed by (seed, stream)
// and counted by element block, so element i of a draw is the same whatever the thread count or
// backend. A generator hands out one stream per draw: two draws from one generator differ, the
// same seed replays the same sequence of draws.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "create.hpp"
#include "half.hpp"

namespace fusor::random {

/// One Philox4x32-10 evaluation: four 32-bit words from a 128-bit counter and a 64-bit key.
FUSOR_HD inline std::array<std::uint32_t, 4> philox4x32(std::array<std::uint32_t, 4> ctr,
                                                       std::array<std::uint32_t, 2> key) {
  constexpr std::uint32_t m0 = 0xD2511F53u, m1 = 0xCD9E8D57u, w0 = 0x9E3779B9u, w1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) key = {key[0] + w0, key[1] + w1};
    const std::uint64_t p0 = std::uint64_t(m0) * ctr[0], p1 = std::uint64_t(m1) * ctr[2];
    ctr = {std::uint32_t(p1 >> 32) ^ ctr[1] ^ key[0], std::uint32_t(p1), std::uint32_t(p0 >> 32) ^ ctr[3] ^ key[1],
           std::uint32_t(p0)};
  }
  return ctr;
}

/// The four words for block `block` of stream `stream` under `seed`.
FUSOR_HD inline std::array<std::uint32_t, 4> block_words(std::uint64_t seed, std::uint64_t stream,
                                                        std::uint64_t block) {
  return philox4x32({std::uint32_t(block), std::uint32_t(block >> 32), std::uint32_t(stream), std::uint32_t(stream >> 32)},
                    {std::uint32_t(seed), std::uint32_t(seed >> 32)});
}

namespace detail {
// [0, 1) with 24 (float) or 53 (double) random bits.
FUSOR_HD inline float unit_float(std::uint32_t w) { return float(w >> 8) * 0x1.0p-24f; }
FUSOR_HD inline double unit_double(std::uint32_t hi, std::uint32_t lo) {
  return double(((std::uint64_t(hi) << 32) | lo) >> 11) * 0x1.0p-53;
}
// (0, 1]: safe to take the logarithm of.
FUSOR_HD inline double open_unit(std::uint32_t hi, std::uint32_t lo) {
  return (double(((std::uint64_t(hi) << 32) | lo) >> 11) + 1.0) * 0x1.0p-53;
}
FUSOR_HD inline std::uint64_t mulhi64(std::uint64_t a, std::uint64_t b) {
#if defined(__CUDA_ARCH__)
  return __umul64hi(a, b);
#else
  return std::uint64_t((unsigned __int128)a * b >> 64);
#endif
}
}  // namespace detail

/// Hands out keys: each draw uses the next stream of the seed.
class generator {
 public:
  explicit generator(std::uint64_t seed) : seed_(seed) {}
  std::uint64_t seed() const { return seed_; }
  /// The stream the next draw will use.
  std::uint64_t stream() const { return stream_; }
  std::uint64_t take_stream() { return stream_++; }

 private:
  std::uint64_t seed_;
  std::uint64_t stream_ = 0;
};

namespace detail {
using philox_words = std::array<std::uint32_t, 4>;

/// One draw as a generator (generator_expr): element k is value k % PerBlock of block k / PerBlock
/// of the draw's Philox stream, so it depends on (seed, stream, k) only. A run of positions
/// evaluates each block once. (Named function objects, not lambdas: the same object runs in a
/// cpu loop or a cuda kernel.)
template <index_t PerBlock, class T, class Values>
struct philox_draw {
  using value_type = T;
  static constexpr index_t block = PerBlock;  // positions one Philox evaluation gives
  std::uint64_t seed, stream;
  Values values;  // values(words, j, out, count): values j .. j + count - 1 of a block
  FUSOR_HD void fill(index_t first, T* out, index_t count) const {
    using whole = std::integral_constant<index_t, PerBlock>;
    using from_start = std::integral_constant<index_t, 0>;
    index_t i = 0;
    if (first % PerBlock == 0) {
      // whole blocks with a compile-time count: the words stay in registers
      for (; i + PerBlock <= count; i += PerBlock)
        values(block_words(seed, stream, std::uint64_t((first + i) / PerBlock)), from_start{}, out + i, whole{});
    }
    while (i < count) {
      const index_t k = first + i, j = k % PerBlock;
      const index_t n = PerBlock - j < count - i ? PerBlock - j : count - i;
      values(block_words(seed, stream, std::uint64_t(k / PerBlock)), j, out + i, n);
      i += n;
    }
  }
};

/// The largest value of a 16-bit float below h (h finite).
template <class H>
FUSOR_HD H value_below(H h) {
  if ((h.bits & 0x7fffu) == 0) return H::from_bits(0x8001u);  // below +-0: the negative smallest subnormal
  return H::from_bits(std::uint16_t((h.bits & 0x8000u) ? h.bits + 1 : h.bits - 1));
}

template <class T>
struct uniform_values {  // float: 24 random bits from one word (4 a block); double: 53 bits from two
  // float16 and bfloat16 draw the float32 value and round it, kept below hi
  static constexpr index_t per_block = std::is_same_v<T, double> ? 2 : 4;
  T lo, hi;
  template <class J, class N>
  FUSOR_HD void operator()(const philox_words& w, J j, T* out, N count) const {
    for (index_t i = 0; i < count; ++i) {
      const index_t q = j + i;
      if constexpr (std::is_same_v<T, float>) {
        out[i] = lo + (hi - lo) * unit_float(w[q]);
      } else if constexpr (std::is_same_v<T, double>) {
        out[i] = lo + (hi - lo) * unit_double(w[2 * q], w[2 * q + 1]);
      } else {
        const float flo = float(lo), fhi = float(hi);
        const T h(flo + (fhi - flo) * unit_float(w[q]));
        out[i] = float(h) < fhi || !(flo < fhi) ? h : value_below(hi);
      }
    }
  }
};
template <class T>
struct normal_values {  // Box-Muller in double: a block's two values are the cos and sin halves
  static constexpr index_t per_block = 2;
  T mean, stddev;
  template <class J, class N>
  FUSOR_HD void operator()(const philox_words& w, J j, T* out, N count) const {
    const double r = std::sqrt(-2.0 * std::log(open_unit(w[0], w[1])));
    const double t = 2.0 * std::numbers::pi * unit_double(w[2], w[3]);
    for (index_t i = 0; i < count; ++i)
      out[i] = j + i == 0 ? T(double(mean) + double(stddev) * r * std::cos(t))
                          : T(double(mean) + double(stddev) * r * std::sin(t));
  }
};
template <class T>
struct integers_values {  // 64 random bits per element, multiply-shift onto [lo, lo + range)
  static constexpr index_t per_block = 2;
  T lo;
  std::uint64_t range;
  template <class J, class N>
  FUSOR_HD void operator()(const philox_words& w, J j, T* out, N count) const {
    for (index_t i = 0; i < count; ++i) {
      const index_t q = j + i;
      const std::uint64_t u = (std::uint64_t(w[2 * q]) << 32) | w[2 * q + 1];
      // modulo 2^64, which is exact for every integer type's range (signed ones included)
      out[i] = T(std::uint64_t(lo) + mulhi64(u, range));
    }
  }
};
struct bernoulli_values {
  static constexpr index_t per_block = 2;
  double p;
  template <class J, class N>
  FUSOR_HD void operator()(const philox_words& w, J j, bool* out, N count) const {
    for (index_t i = 0; i < count; ++i) out[i] = unit_double(w[2 * (j + i)], w[2 * (j + i) + 1]) < p;
  }
};

/// The node of one draw: takes the generator's next stream now, so every evaluation of the node
/// gives the same values.
template <class T, class B, class Values>
auto draw(generator& g, const extents& shape, const Values& values) {
  check_shape(shape);
  using G = philox_draw<Values::per_block, T, Values>;
  const std::uint64_t seed = g.seed(), stream = g.take_stream();
  return generator_expr<G, B>{G{seed, stream, values}, shape, contiguous_strides(shape)};
}

template <class T>
inline constexpr bool real_floating = std::is_floating_point_v<T> || fusor::detail::small_float_v<T>;
template <class T>
void check_uniform(T lo, T hi) {
  static_assert(real_floating<T>, "fusor: uniform draws float, double, float16 or bfloat16; use integers() for integers");
  if (!(double(lo) <= double(hi)) || !(std::isfinite(double(lo)) && std::isfinite(double(hi))))
    throw value_error("fusor: uniform needs finite lo <= hi, got lo = " + std::to_string(double(lo)) +
                      ", hi = " + std::to_string(double(hi)));
}
template <class T>
void check_normal(T stddev) {
  static_assert(real_floating<T>, "fusor: normal draws float, double, float16 or bfloat16");
  if (!(double(stddev) >= 0)) throw value_error("fusor: normal needs stddev >= 0, got " + std::to_string(double(stddev)));
}
template <class T>
void check_integers(T lo, T hi) {
  static_assert(integer<T>, "fusor: integers draws an integer type");
  if (!(lo < hi))
    throw value_error("fusor: integers needs lo < hi, got lo = " + std::to_string(lo) + ", hi = " + std::to_string(hi));
}
inline void check_bernoulli(double p) {
  if (!(p >= 0.0 && p <= 1.0)) throw value_error("fusor: bernoulli needs 0 <= p <= 1, got " + std::to_string(p));
}
}  // namespace detail

}  // namespace fusor::random

namespace fusor::lazy::random {
// The draws as nodes: `x = a + lazy::random::normal<float>(g, a.shape())` draws inside the one
// pass that adds. Each call takes the generator's next stream, as the eager draw does, so a node
// gives the same values as fusor::random's function of the same name, however often (and on
// whichever thread or backend) it is evaluated.

/// Uniform values in [lo, hi), as a node.
template <element T, backend B = default_backend>
auto uniform(fusor::random::generator& g, const extents& shape, T lo = T(0), T hi = T(1)) {
  fusor::random::detail::check_uniform(lo, hi);
  return fusor::random::detail::draw<T, B>(g, shape, fusor::random::detail::uniform_values<T>{lo, hi});
}
/// Normal values, as a node.
template <element T, backend B = default_backend>
auto normal(fusor::random::generator& g, const extents& shape, T mean = T(0), T stddev = T(1)) {
  fusor::random::detail::check_normal(stddev);
  return fusor::random::detail::draw<T, B>(g, shape, fusor::random::detail::normal_values<T>{mean, stddev});
}
/// Integers uniform in [lo, hi), as a node.
template <element T, backend B = default_backend>
auto integers(fusor::random::generator& g, const extents& shape, T lo, T hi) {
  fusor::random::detail::check_integers(lo, hi);
  const std::uint64_t range = std::uint64_t(hi) - std::uint64_t(lo);  // hi - lo modulo 2^64: exact
  return fusor::random::detail::draw<T, B>(g, shape, fusor::random::detail::integers_values<T>{lo, range});
}
/// true with probability p, as a node.
template <backend B = default_backend>
auto bernoulli(fusor::random::generator& g, const extents& shape, double p = 0.5) {
  fusor::random::detail::check_bernoulli(p);
  return fusor::random::detail::draw<bool, B>(g, shape, fusor::random::detail::bernoulli_values{p});
}

}  // namespace fusor::lazy::random

namespace fusor::random {
// The eager draws: arrays, evaluated from the nodes above in one pass (so both forms agree).

/// Uniform values in [lo, hi). float uses 24 random bits per element, double 53.
template <element T, backend B = default_backend>
array<T, B> uniform(generator& g, const extents& shape, T lo = T(0), T hi = T(1)) {
  return array<T, B>(lazy::random::uniform<T, B>(g, shape, lo, hi));
}
/// Normal values (Box-Muller on 53-bit uniforms, computed in double).
template <element T, backend B = default_backend>
array<T, B> normal(generator& g, const extents& shape, T mean = T(0), T stddev = T(1)) {
  return array<T, B>(lazy::random::normal<T, B>(g, shape, mean, stddev));
}
/// Integers uniform in [lo, hi) (64 random bits per element, multiply-shift mapping).
template <element T, backend B = default_backend>
array<T, B> integers(generator& g, const extents& shape, T lo, T hi) {
  return array<T, B>(lazy::random::integers<T, B>(g, shape, lo, hi));
}
/// true with probability p.
template <backend B = default_backend>
array<bool, B> bernoulli(generator& g, const extents& shape, double p = 0.5) {
  return array<bool, B>(lazy::random::bernoulli<B>(g, shape, p));
}

/// A random permutation of 0..n-1: each position gets a 64-bit Philox key and the positions are
/// sorted by (key, position), so the result does not depend on threads or backend.
template <backend B = default_backend>
array<std::int64_t, B> permutation(generator& g, index_t n) {
  if (n < 0) throw value_error("fusor: permutation needs n >= 0, got " + std::to_string(n));
  const std::uint64_t seed = g.seed(), stream = g.take_stream();
  std::vector<std::uint64_t> keys(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; i += 2) {
    const auto w = block_words(seed, stream, std::uint64_t(i / 2));
    keys[std::size_t(i)] = (std::uint64_t(w[0]) << 32) | w[1];
    if (i + 1 < n) keys[std::size_t(i + 1)] = (std::uint64_t(w[2]) << 32) | w[3];
  }
  // sorted on the host, then copied to B: the same integers on every backend
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), std::int64_t(0));
  std::sort(order.begin(), order.end(), [&](std::int64_t x, std::int64_t y) {
    return keys[std::size_t(x)] != keys[std::size_t(y)] ? keys[std::size_t(x)] < keys[std::size_t(y)] : x < y;
  });
  array<std::int64_t, B> a(extents{n});
  if (n > 0) backend_memory<B>::copy_from_host(a.data(), order.data(), n);
  return a;
}

}  // namespace fusor::random
