#pragma once
// Scalars to hypervectors through a codebook of correlated levels (torchhd's Level, Thermometer
// and Circular embeddings; HoloVec's LevelEncoder and ThermometerEncoder): a value in [low, high]
// picks the nearest of n evenly spaced levels, and its vector is that level's row, one gather
// for a whole batch. Periodic values (an angle, an hour) use the circular codebook over the
// period [low, high): any finite value wraps onto it. decode is the reverse, the value of the
// most similar level (one similarity GEMM or popcount pass and an argmax).
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "../../core/reduce.hpp"
#include "../item_memory.hpp"
#include "levels.hpp"
#include "structures.hpp"
#include "../../core/ext.hpp"

namespace fusor::vsa {

namespace detail {
/// A value_error naming the first element of x outside [low, high] (a NaN is outside), if any;
/// with `finite`, the first infinite or NaN element.
template <class X>
void check_scalars(const X& x, double low, double high, const char* what, bool finite = false) {
  if (finite) {
    low = -std::numeric_limits<double>::max();
    high = std::numeric_limits<double>::max();
  }
  const auto xc = fusor::ext::contiguous_of(x);
  using B = backend_of_t<decltype(xc.view())>;
  const auto flat = ravel(xc.view());
  const array<bool, B> bad(!(cast<double>(flat) >= low && cast<double>(flat) <= high));
  if (bad.size() == 0 || !any(bad)) return;
  const std::int64_t k = argmax(bad);
  const double v = double(flat(range(k, k + 1)).item());
  const std::string expected =
      finite ? "finite values" : "values in [" + std::to_string(low) + ", " + std::to_string(high) + "]";
  throw value_error(std::string("fusor::vsa::") + what + ": expects " + expected + ", got " + std::to_string(v) +
                    " at flat index " + std::to_string(k));
}

inline void check_range(double low, double high, const char* what) {
  if (!(std::isfinite(low) && std::isfinite(high) && low < high))
    throw value_error(std::string("fusor::vsa::") + what + ": expects finite low < high, got low = " +
                      std::to_string(low) + ", high = " + std::to_string(high));
}
}  // namespace detail

/// Scalars encoded by a codebook of levels (see the file comment). Made by level(),
/// thermometer() or circular().
template <model M, backend B = default_backend>
class scalar_encoder {
 public:
  using value_type = typename M::value_type;

  /// n level vectors (vsa::level) spread evenly over [low, high].
  static scalar_encoder level(const M& m, index_t n, double low, double high, std::uint64_t seed,
                              double randomness = 0.0) {
    detail::check_range(low, high, "scalar_encoder::level");
    return scalar_encoder(m, vsa::level<B>(m, n, seed, randomness), low, high, false);
  }
  /// n thermometer vectors (vsa::thermometer) spread evenly over [low, high].
  static scalar_encoder thermometer(const M& m, index_t n, double low, double high) {
    detail::check_range(low, high, "scalar_encoder::thermometer");
    return scalar_encoder(m, vsa::thermometer<B>(m, n), low, high, false);
  }
  /// n circular vectors (vsa::circular) over the period [low, high): level i stands for
  /// low + i (high - low) / n, and any finite value wraps onto the period.
  static scalar_encoder circular(const M& m, index_t n, double low, double high, std::uint64_t seed) {
    detail::check_range(low, high, "scalar_encoder::circular");
    return scalar_encoder(m, vsa::circular<B>(m, n, seed), low, high, true);
  }

  const M& model() const { return levels_.model(); }
  /// The number of levels.
  index_t size() const { return levels_.size(); }
  double low() const { return low_; }
  double high() const { return high_; }
  bool periodic() const { return periodic_; }
  /// The codebook: level i is row i.
  const item_memory<M, B>& levels() const& { return levels_; }
  const item_memory<M, B>& levels() const&& = delete;  // would dangle: the encoder is a temporary
  /// The value level i stands for.
  double value(index_t i) const { return low_ + double(i) * step_; }

  /// The level of each value (any shape): round((x - low) / step), modulo n when periodic. A
  /// value outside [low, high] (or any non-finite value when periodic) is a value_error naming it.
  template <class X>
  array<std::int64_t, B> indices(const X& values) const {
    detail::check_scalars(values, low_, high_, "scalar_encoder::encode", periodic_);
    const auto i = cast<std::int64_t>(floor((cast<double>(values) - low_) / step_ + 0.5));
    if (!periodic_) return array<std::int64_t, B>(minimum(i, std::int64_t(size() - 1)));
    const std::int64_t n = size();
    return array<std::int64_t, B>((i % n + n) % n);
  }
  /// The vectors of the values: shape (..., width) for values of shape (...).
  template <class X>
  array<value_type, B> encode(const X& values) const {
    return take(levels_.items(), indices(values), 0);
  }
  /// Records of feature vectors: values (..., N) hold N features each; feature p's level is bound
  /// to keys[p] (keys (N, width)) and the N pairs are bundled: (..., width). The same vectors as
  /// record(m, keys, encode(values), o), in one pass for MAP and FHRR (vsa::record of codebook rows).
  template <class K, class X>
  array<value_type, B> encode_record(const K& keys, const X& values, const bundle_options& o = {}) const {
    return vsa::record(model(), keys, levels_.items(), indices(values), o);
  }
  /// The value of the level most similar to each vector ((Q, width) -> (Q), (width) -> ()).
  template <class X>
  array<double, B> decode(const X& vectors, metric s = M::default_metric) const {
    return array<double, B>(low_ + cast<double>(levels_.nearest(vectors, s)) * step_);
  }

 private:
  scalar_encoder(const M& m, array<value_type, B> codebook, double low, double high, bool periodic)
      : levels_(m, std::move(codebook)), low_(low), high_(high), periodic_(periodic) {
    const index_t n = levels_.size();
    step_ = periodic ? (high - low) / double(n) : n > 1 ? (high - low) / double(n - 1) : 0.0;
    if (step_ == 0.0) step_ = 1.0;  // one level: every value is level 0 (and decodes to low)
  }

  item_memory<M, B> levels_;
  double low_, high_, step_ = 1.0;
  bool periodic_;
};

}  // namespace fusor::vsa
