#pragma once
// Codebooks of correlated vectors for ordered and periodic values, as torchhd's level,
// thermometer and circular functions and HoloVec's level and thermometer encoders make them:
//   level        n vectors from one random vector to another, each step replacing a further
//                1 / (n - 1) of the positions, so similarity falls linearly with the distance in
//                levels, from 1 to about 0 (the ends are independent random vectors);
//                `randomness` in [0, 1] trades that for independence, as torchhd's does: the
//                levels are cut into spans of (1 - r)(n - 1) + r steps with a fresh random vector
//                at each span's end (r = 1: n independent random vectors);
//   thermometer  level i has its first round(i d / (n - 1)) positions equal to the identity's
//                and the rest to its negative: similarity 1 - 2 |i - j| / (n - 1) exactly, from
//                1 to -1 (MAP, BSC and FHRR, the models with a negative of the identity);
//   circular     n vectors around a circle: position p switches to a second random vector for
//                half a turn starting at a random phase s_p, so similarity is 1 - 2 delta where
//                delta in [0, 1/2] is the circular distance in turns, and level n would be level 0.
// Every codebook is an (n, width) array built in a few whole-array passes (never a loop over
// vectors) from Philox draws keyed by the seed, so every backend gives the same vectors.
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "../../core/indexing.hpp"
#include "../../core/random.hpp"
#include "../bsc.hpp"
#include "../fhrr.hpp"
#include "../map.hpp"
#include "../operations.hpp"
#include "positions.hpp"

namespace fusor::vsa {

namespace detail {
/// The seed of a codebook's position keys: another Philox key than its vectors' (whose streams
/// are the row indices under `seed` itself).
inline std::uint64_t key_seed(std::uint64_t seed) { return seed ^ 0x9e3779b97f4a7c15ull; }

inline void check_levels(index_t n, const char* what) {
  if (n < 1)
    throw value_error(std::string("fusor::vsa::") + what + ": needs at least 1 level, got " + std::to_string(n));
}

template <class T, class B>
array<T, B> host_array(const std::vector<T>& v) {
  return array<T, B>(std::span<const T>(v.data(), v.size()), extents{index_t(v.size())});
}

/// The models whose identity has a negative to count down to (MAP, BSC, FHRR).
template <class M>
inline constexpr bool has_thermometer_v =
    std::is_same_v<M, map_b> || std::is_same_v<M, map_i> || std::is_same_v<M, map_c> || std::is_same_v<M, bsc> ||
    std::is_same_v<M, fhrr>;
}  // namespace detail

/// n level vectors of model m (see the file comment), (n, width).
template <backend B = default_backend, model M>
array<typename M::value_type, B> level(const M& m, index_t n, std::uint64_t seed, double randomness = 0.0) {
  detail::check_levels(n, "level");
  if (!(randomness >= 0.0 && randomness <= 1.0))
    throw value_error("fusor::vsa::level: expects randomness in [0, 1], got " + std::to_string(randomness));
  detail::require_mixable(m, "level");
  const double per_span = n == 1 ? 1.0 : (1.0 - randomness) * double(n - 1) + randomness;
  // (the spans' count rounded down when (n - 1) / per_span is within rounding of an integer)
  const index_t spans = n == 1 ? 1 : std::max<index_t>(1, index_t(std::ceil(double(n - 1) / per_span - 1e-9)));
  std::vector<std::int64_t> lo(static_cast<std::size_t>(n)), hi(static_cast<std::size_t>(n));
  std::vector<float> frac(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i) {
    const double x = double(i) / per_span;
    const index_t k = std::min<index_t>(index_t(x), spans - 1);
    lo[std::size_t(i)] = k;
    hi[std::size_t(i)] = k + 1;
    frac[std::size_t(i)] = float(std::min(1.0, x - double(k)));
  }
  const array<typename M::value_type, B> ends = random<B>(m, spans + 1, seed);
  fusor::random::generator g(detail::key_seed(seed));
  const array<float, B> keys = fusor::random::uniform<float, B>(g, extents{spans, m.dim()});
  const auto lo_i = detail::host_array<std::int64_t, B>(lo), hi_i = detail::host_array<std::int64_t, B>(hi);
  return detail::mix_positions(m, take(ends, lo_i, 0), take(ends, hi_i, 0), take(keys, lo_i, 0),
                               detail::host_array<float, B>(frac));
}

/// n thermometer vectors of model m (MAP, BSC or FHRR; see the file comment), (n, width).
template <backend B = default_backend, model M>
array<typename M::value_type, B> thermometer(const M& m, index_t n) {
  detail::check_levels(n, "thermometer");
  if constexpr (!detail::has_thermometer_v<M>) {
    throw value_error("fusor::vsa::thermometer: " + std::string(M::name) +
                      " has no negative of its identity to count from; expected MAP-B, MAP-I, MAP-C, BSC or FHRR");
  } else {
    using T = typename M::value_type;
    const index_t d = m.dim();
    const array<T, B> one = identity<B>(m, 1);
    const array<T, B> minus(negative(m, one));
    std::vector<float> frac(static_cast<std::size_t>(n));
    for (index_t i = 0; i < n; ++i)  // level i: positions p < round(i d / (n - 1)) are the identity's
      frac[std::size_t(i)] = n == 1 ? 0.0f : float(std::round(double(i) * double(d) / double(n - 1)) / double(d));
    const array<std::int64_t, B> rows = zeros<std::int64_t, B>(extents{n});
    // key (p + 1/2) / d < frac_i exactly when p < frac_i d (frac_i d an integer)
    const array<float, B> centre((lazy::arange<float, B>(0.0f, float(d)) + 0.5f) / float(d));
    const array<float, B> key(broadcast_to(centre, extents{n, d}));
    return detail::mix_positions(m, take(minus, rows, 0), take(one, rows, 0), key, detail::host_array<float, B>(frac));
  }
}

/// n vectors of model m around a circle (see the file comment), (n, width): level i stands for
/// the phase i / n of a turn.
template <backend B = default_backend, model M>
array<typename M::value_type, B> circular(const M& m, index_t n, std::uint64_t seed) {
  detail::check_levels(n, "circular");
  detail::require_mixable(m, "circular");
  const array<typename M::value_type, B> ends = random<B>(m, 2, seed);
  fusor::random::generator g(detail::key_seed(seed));
  const array<float, B> start = fusor::random::uniform<float, B>(g, extents{1, m.dim()});
  // the turn since position p's switch, in [0, 1): it holds the second vector for the first half
  const array<float, B> phase(lazy::arange<float, B>(0.0f, float(n)) / float(n));
  const auto since = phase.reshape(extents{n, 1}) - start + 1.0f;
  const array<float, B> key(since - floor(since));
  const array<std::int64_t, B> first = zeros<std::int64_t, B>(extents{n}), second = ones<std::int64_t, B>(extents{n});
  return detail::mix_positions(m, take(ends, first, 0), take(ends, second, 0), key, full<float, B>(extents{n}, 0.5f));
}

}  // namespace fusor::vsa
