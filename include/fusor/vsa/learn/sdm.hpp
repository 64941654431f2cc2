#pragma once
// Sparse distributed memory (Kanerva, 1988; torchhd's memory.SparseDistributed): n hard locations,
// each a fixed random address of model MA and a row of counters holding the sum of the contents
// (of model MC) written near it. An address activates the locations whose address is at least
// `threshold` similar to it (Kanerva's Hamming radius for BSC); writing adds the content to every
// active location's counters, and reading sums the counters of the locations the address
// activates and maps the sum back onto the content model (a majority for BSC, the sign for MAP-B).
// A batch of Q addresses is one similarity pass (activation (Q, n)) and one GEMM: writing
// C += A^T V, reading A C.
//
// The threshold is chosen from the expected fraction p of locations an address activates. For
// MAP-B and BSC the Hamming distance h of unrelated vectors is binomial (d, 1/2): a location is
// active when h <= r, r the smallest radius whose binomial probability reaches p (Kanerva's radius;
// torchhd's binom.ppf(p, d, 1/2)), so at least p of random locations, and as few as that allows.
// For the continuous models the similarity of unrelated vectors is close to normal: N(0, 1/d)
// for the cosine of real vectors (MAP-C, HRR), N(0, 1/(2 d)) for FHRR's (the real part of a mean
// of random phasors); the threshold is that law's 1 - p quantile. Contents are stored as real counters: MAP-B, MAP-C and HRR as they are, BSC as
// bipolar 1 - 2 bit.
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "../../core/indexing.hpp"
#include "../../core/reduce.hpp"
#include "../../core/shape_ops.hpp"
#include "../../linalg/matmul.hpp"
#include "../bsc.hpp"
#include "../fhrr.hpp"
#include "../hrr.hpp"
#include "../map.hpp"
#include "../operations.hpp"
#include "../../core/ext.hpp"

namespace fusor::vsa {

namespace detail {
/// The smallest r with P(Binomial(d, 1/2) <= r) >= p, for 0 < p < 1 (pmf summed in log space).
inline std::int64_t binomial_radius(std::int64_t d, double p) {
  const double lnd = std::lgamma(double(d) + 1.0), half = double(d) * std::log(0.5);
  double cdf = 0;
  for (std::int64_t r = 0; r <= d; ++r) {
    cdf += std::exp(lnd - std::lgamma(double(r) + 1.0) - std::lgamma(double(d - r) + 1.0) + half);
    if (cdf >= p) return r;
  }
  return d;
}
/// z with P(N(0, 1) >= z) = p, for 0 < p < 1: bisection on erfc (60 halvings of [-40, 40]).
inline double upper_normal_quantile(double p) {
  double lo = -40, hi = 40;
  for (int i = 0; i < 60; ++i) {
    const double mid = 0.5 * (lo + hi);
    (0.5 * std::erfc(mid / std::sqrt(2.0)) > p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}
}  // namespace detail

template <model MA, model MC = MA, backend B = default_backend>
class sparse_distributed_memory {
 public:
  using address_type = typename MA::value_type;
  using content_type = typename MC::value_type;
  /// Address models: those whose random similarity has the spread the threshold assumes.
  static constexpr bool address_supported = std::is_same_v<MA, map_b> || std::is_same_v<MA, map_c> ||
                                            std::is_same_v<MA, hrr> || std::is_same_v<MA, fhrr> ||
                                            std::is_same_v<MA, bsc>;
  /// Content models: those stored as real counters.
  static constexpr bool content_supported =
      std::is_same_v<MC, map_b> || std::is_same_v<MC, map_c> || std::is_same_v<MC, hrr> || std::is_same_v<MC, bsc>;

  /// `locations` hard locations with random addresses from `seed`, each activated by an
  /// expected fraction `active` of random addresses; counters start at 0.
  sparse_distributed_memory(const MA& address_model, const MC& content_model, index_t locations, std::uint64_t seed,
                            double active = 0.01)
      : ma_(address_model), mc_(content_model), active_(active) {
    if constexpr (!address_supported)
      throw value_error("fusor::vsa::sparse_distributed_memory: " + std::string(MA::name) +
                        " addresses are not supported; expected MAP-B, MAP-C, HRR, FHRR or BSC");
    if constexpr (!content_supported)
      throw value_error("fusor::vsa::sparse_distributed_memory: " + std::string(MC::name) +
                        " contents are not supported; expected MAP-B, MAP-C, HRR or BSC (stored as real counters)");
    if (locations < 1)
      throw value_error("fusor::vsa::sparse_distributed_memory: needs at least 1 location, got " +
                        std::to_string(locations));
    if (!(active > 0.0 && active < 1.0))
      throw value_error("fusor::vsa::sparse_distributed_memory: expects an active fraction in (0, 1), got " +
                        std::to_string(active));
    const double z = detail::upper_normal_quantile(active), d = double(ma_.dim());
    if constexpr (std::is_same_v<MA, bsc> || std::is_same_v<MA, map_b>) {
      // h <= r: hamming similarity 1 - h/d, MAP-B cosine 1 - 2h/d; compared half a lattice step
      // lower, so float rounding of a similarity on the boundary cannot drop it
      const double r = double(detail::binomial_radius(ma_.dim(), active));
      radius_ = index_t(r);
      threshold_ = std::is_same_v<MA, bsc> ? 1.0 - r / d : 1.0 - 2.0 * r / d;
      compare_ = threshold_ - (std::is_same_v<MA, bsc> ? 0.5 : 1.0) / d;
    } else {
      threshold_ = compare_ = std::is_same_v<MA, fhrr> ? z / std::sqrt(2.0 * d) : z / std::sqrt(d);
    }
    addresses_ = vsa::random<B>(ma_, locations, seed);
    counters_ = zeros<float, B>(extents{locations, mc_.dim()});
  }
  /// Addresses and contents of one model.
  sparse_distributed_memory(const MA& m, index_t locations, std::uint64_t seed, double active = 0.01)
    requires std::is_same_v<MA, MC>
      : sparse_distributed_memory(m, m, locations, seed, active) {}

  const MA& address_model() const { return ma_; }
  const MC& content_model() const { return mc_; }
  index_t locations() const { return addresses_.shape()[0]; }
  /// The expected fraction of locations a random address activates.
  double active_fraction() const { return active_; }
  /// The similarity (MA's default metric) at which a location activates.
  double threshold() const { return threshold_; }
  /// MAP-B and BSC: the Hamming radius r (a location is active when h <= r); -1 for the others.
  index_t radius() const { return radius_; }
  /// The hard locations' addresses, (locations, address width).
  const array<address_type, B>& addresses() const& { return addresses_; }
  const array<address_type, B>& addresses() const&& = delete;
  /// The counters, (locations, content d): the sums of the (bipolar, for BSC) contents written.
  const array<float, B>& counters() const& { return counters_; }
  const array<float, B>& counters() const&& = delete;

  /// Which locations each address activates: (Q, locations) or (locations) of 0 and 1 (float, a
  /// GEMM's operand).
  template <class X>
  array<float, B> activation(const X& addresses) const {
    const extents s = detail::checked_rows(ma_, addresses, "sparse_distributed_memory::activation", "addresses");
    if (s.size() > 2) rank_error("activation", "addresses", ma_.width(), s);
    return array<float, B>(cast<float>(active(addresses)));
  }

  /// Adds each content to the counters of the locations its address activates: addresses
  /// (Q, address width) with contents (Q, content width), or one of each.
  template <class X, class V>
  void write(const X& addresses, const V& contents) {
    const extents as = detail::checked_rows(ma_, addresses, "sparse_distributed_memory::write", "addresses");
    const extents cs = detail::checked_rows(mc_, contents, "sparse_distributed_memory::write", "contents");
    if (as.size() > 2) rank_error("write", "addresses", ma_.width(), as);
    if (cs.size() != as.size() || (as.size() == 2 && as[0] != cs[0]))
      throw shape_error("fusor::vsa::sparse_distributed_memory::write: expects one content per address, got addresses "
                        "of shape " + to_string(as) + " and contents of shape " + to_string(cs));
    const index_t q = as.size() == 2 ? as[0] : 1;
    const array<bool, B> on = active(addresses).reshape(extents{q, locations()});
    const array<float, B> v = real_rows(contents).reshape(extents{q, mc_.dim()});
    add_active(counters_, on, true, v);
  }

  /// The sums of the counters of the locations each address activates: (Q, content d) or
  /// (content d), before they are mapped onto the content model.
  template <class X>
  array<float, B> read_sums(const X& addresses) const {
    const extents s = detail::checked_rows(ma_, addresses, "sparse_distributed_memory::read", "addresses");
    if (s.size() > 2) rank_error("read", "addresses", ma_.width(), s);
    const index_t q = s.size() == 2 ? s[0] : 1;
    const array<bool, B> on = active(addresses).reshape(extents{q, locations()});
    array<float, B> sums = zeros<float, B>(extents{q, mc_.dim()});
    add_active(sums, on, false, counters_);
    if (s.size() == 2) return sums;
    return array<float, B>(sums.reshape(extents{mc_.dim()}));
  }

  /// The content read at each address: the counters' sums mapped onto the content model (BSC: the
  /// majority, a bit set where the sum is negative, as 1 - 2 bit maps back; MAP-B: +1 where the
  /// sum is positive, else -1; MAP-C: clipped to [-1, 1]; HRR: scaled to unit norm).
  template <class X>
  array<content_type, B> read(const X& addresses) const {
    const array<float, B> s = read_sums(addresses);
    if constexpr (std::is_same_v<MC, bsc>)
      return array<content_type, B>(mc_.pack(eval(s < 0.0f)));
    else if constexpr (std::is_same_v<MC, map_b>)
      return array<content_type, B>(vsa::hard_quantize(s));
    else
      return array<content_type, B>(vsa::normalize(mc_, s));
  }

 private:
  /// Below this fraction of active (address, location) pairs, writes and reads add the active
  /// rows (nnz d additions) instead of multiplying by the 0/1 activation (2 Q L d flops in a
  /// GEMM): a GEMM does about 16 times the additions per second that adding gathered rows does.
  static constexpr double sparse_below = 1.0 / 16;
  /// Adds along the activation `on` (Q, locations): to the locations' rows of dst the rows of src
  /// their addresses activate (a write, dst += onᵀ src), or to the addresses' rows of dst the rows
  /// of src at the locations they activate (a read, dst += on src). Sparse: the active pairs in
  /// order of dst's rows, each row taking all its additions while in cache.
  void add_active(array<float, B>& dst, const array<bool, B>& on, bool to_locations, const array<float, B>& src) const {
    if (double(count_nonzero(on)) < sparse_below * double(on.size())) {
      const array<std::int64_t, B> pairs = to_locations ? argwhere(transpose(on)) : argwhere(on);  // (nnz, 2): dst, src
      fusor::ext::add_gathered_rows(dst, array<std::int64_t, B>(pairs(all, 0)), src,
                                    array<std::int64_t, B>(pairs(all, 1)));
    } else {
      const array<float, B> a(cast<float>(on));
      if (to_locations) dst += matmul(transpose(a), src);
      else dst += matmul(a, src);
    }
  }
  /// Whether each address activates each location: (Q, locations) or (locations).
  template <class X>
  array<bool, B> active(const X& addresses) const {
    return array<bool, B>(vsa::similarity(ma_, addresses, addresses_, MA::default_metric) >= float(compare_));
  }
  [[noreturn]] static void rank_error(const char* what, const char* name, index_t width, const extents& s) {
    throw shape_error("fusor::vsa::sparse_distributed_memory::" + std::string(what) + ": expects " + name + " (Q, " +
                      std::to_string(width) + ") or one (" + std::to_string(width) + ") vector, got shape " +
                      to_string(s));
  }
  /// Contents as real rows: BSC's bits as 1 - 2 bit, the real models as they are.
  template <class V>
  array<float, B> real_rows(const V& contents) const {
    if constexpr (std::is_same_v<MC, bsc>)
      return array<float, B>(1.0f - 2.0f * cast<float>(mc_.unpack(contents)));
    else
      return array<float, B>(cast<float>(contents));
  }

  MA ma_;
  MC mc_;
  double active_;
  double threshold_ = 0, compare_ = 0;
  index_t radius_ = -1;
  array<address_type, B> addresses_;
  array<float, B> counters_;
};

}  // namespace fusor::vsa
