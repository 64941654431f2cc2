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
#include <vector>

#include "create.hpp"

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

/// Block k of one draw's stream: the element generator gets the block's four Philox words.
/// (Named function objects, not lambdas: the same object runs in a cpu thread or a cuda kernel.)
template <class T, class Gen>
struct stream_blocks {
  std::uint64_t seed, stream;
  Gen gen;
  FUSOR_HD void operator()(index_t block, T* out, index_t count) const {
    gen(block_words(seed, stream, std::uint64_t(block)), out, count);
  }
};

/// One draw: takes the generator's next stream and fills an array block by block, calling
/// gen(words, out, count) with the block's four Philox words.
template <index_t Block, class T, class B, class Gen>
array<T, B> draw(generator& g, const extents& shape, Gen gen) {
  array<T, B> a(shape);
  const std::uint64_t seed = g.seed(), stream = g.take_stream();
  executor<B>::template fill_blocks<Block>(a.as_leaf(), stream_blocks<T, Gen>{seed, stream, gen});
  return a;
}

template <class T>
struct uniform_gen {  // float: 24 random bits from one word; double: 53 bits from two
  T lo, hi;
  FUSOR_HD void operator()(const philox_words& w, T* out, index_t count) const {
    for (index_t i = 0; i < count; ++i) {
      T u;
      if constexpr (std::is_same_v<T, float>) u = unit_float(w[i]);
      else u = T(unit_double(w[2 * i], w[2 * i + 1]));
      out[i] = lo + (hi - lo) * u;
    }
  }
};
template <class T>
struct normal_gen {  // Box-Muller in double: two values per block
  T mean, stddev;
  FUSOR_HD void operator()(const philox_words& w, T* out, index_t count) const {
    const double r = std::sqrt(-2.0 * std::log(open_unit(w[0], w[1])));
    const double t = 2.0 * std::numbers::pi * unit_double(w[2], w[3]);
    out[0] = T(double(mean) + double(stddev) * r * std::cos(t));
    if (count > 1) out[1] = T(double(mean) + double(stddev) * r * std::sin(t));
  }
};
template <class T>
struct integers_gen {  // 64 random bits per element, multiply-shift onto [lo, lo + range)
  T lo;
  std::uint64_t range;
  FUSOR_HD void operator()(const philox_words& w, T* out, index_t count) const {
    for (index_t i = 0; i < count; ++i) {
      const std::uint64_t u = (std::uint64_t(w[2 * i]) << 32) | w[2 * i + 1];
      // modulo 2^64, which is exact for every integer type's range (signed ones included)
      out[i] = T(std::uint64_t(lo) + mulhi64(u, range));
    }
  }
};
struct bernoulli_gen {
  double p;
  FUSOR_HD void operator()(const philox_words& w, bool* out, index_t count) const {
    for (index_t i = 0; i < count; ++i) out[i] = unit_double(w[2 * i], w[2 * i + 1]) < p;
  }
};
}  // namespace detail

/// Uniform values in [lo, hi). float uses 24 random bits per element, double 53.
template <element T, backend B = default_backend>
array<T, B> uniform(generator& g, const extents& shape, T lo = T(0), T hi = T(1)) {
  static_assert(std::is_floating_point_v<T>, "fusor: uniform draws float or double; use integers() for integers");
  if (!(lo <= hi))
    throw value_error("fusor: uniform needs lo <= hi, got lo = " + std::to_string(lo) + ", hi = " + std::to_string(hi));
  constexpr index_t per_block = std::is_same_v<T, float> ? 4 : 2;
  return detail::draw<per_block, T, B>(g, shape, detail::uniform_gen<T>{lo, hi});
}

/// Normal values (Box-Muller on 53-bit uniforms, computed in double).
template <element T, backend B = default_backend>
array<T, B> normal(generator& g, const extents& shape, T mean = T(0), T stddev = T(1)) {
  static_assert(std::is_floating_point_v<T>, "fusor: normal draws float or double");
  if (!(stddev >= T(0)))
    throw value_error("fusor: normal needs stddev >= 0, got " + std::to_string(stddev));
  return detail::draw<2, T, B>(g, shape, detail::normal_gen<T>{mean, stddev});
}

/// Integers uniform in [lo, hi) (64 random bits per element, multiply-shift mapping).
template <element T, backend B = default_backend>
array<T, B> integers(generator& g, const extents& shape, T lo, T hi) {
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>, "fusor: integers draws an integer type");
  if (!(lo < hi))
    throw value_error("fusor: integers needs lo < hi, got lo = " + std::to_string(lo) + ", hi = " + std::to_string(hi));
  const std::uint64_t range = std::uint64_t(hi) - std::uint64_t(lo);  // hi - lo modulo 2^64: exact
  return detail::draw<2, T, B>(g, shape, detail::integers_gen<T>{lo, range});
}

/// true with probability p.
template <backend B = default_backend>
array<bool, B> bernoulli(generator& g, const extents& shape, double p = 0.5) {
  if (!(p >= 0.0 && p <= 1.0))
    throw value_error("fusor: bernoulli needs 0 <= p <= 1, got " + std::to_string(p));
  return detail::draw<2, bool, B>(g, shape, detail::bernoulli_gen{p});
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
