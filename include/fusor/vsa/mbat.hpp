#pragma once
// MBAT, transform binding as HoloVec defines it (its "VTB" model, "MBAT-style", after Gallant and
// Okaywe's Matrix Binding of Additive Terms, 2013): bind(a, b) applies to b a matrix derived from
// a, M(a) = sum_k w_k(a) R_k, where R_k is the cyclic shift by s_k and the weights are a softmax
// of a's projections onto K fixed code vectors, w(a) = softmax(temperature * <a, U_k>). The result
// is scaled to unit norm:
//
//     bind(a, b) = normalize(sum_k w_k(a) roll(b, s_k))
//
// Not commutative (a acts through K weights, b through its elements), no identity and no right
// inverse: the second operand is recovered from the first by the transposed mix,
// unbind_left(c, a) = normalize(sum_k w_k(a) roll(c, -s_k)) (HoloVec's unbind(c, a)); the first
// operand cannot be recovered, since bind reads it only through K numbers. Vectors are HRR's
// N(0, 1/d) rows scaled to unit norm; bundle sums, similarity is the cosine.
//
// HoloVec's defaults: K = 4 bases, temperature 100, shifts (k + 1) * floor(d / (K + 1)). Its code
// vectors are normalised Gaussian rows from NumPy's generator, which no other library
// reproduces; fusor's are Rademacher rows (+-1/sqrt(d), exactly unit norm, 128 signs per Philox
// block) from (code_seed, k): the projections have the same N(0, 1/d) law, so the weights do too.
// A batch bound with one key (or one key with a batch) computes the K projections as one GEMM and
// mixes in one pass that reads each shifted row in place.
// mbat holds float32 rows; mbat_of<float16> and mbat_of<bfloat16> hold 16-bit rows (float32's
// rounded), bound by float32's projections and mix of the widened operands and rounded once,
// bundled with float32 accumulation, compared through the half GEMM.
#include <array>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

#include "dense.hpp"
#include "ghrr_kernels.hpp"
#include "hrr.hpp"
#include "../core/ext.hpp"

namespace fusor::vsa {

namespace detail {

/// +-scale, one Philox bit per element (128 per block): the code vectors.
struct sign_elements {
  using value_type = float;
  static constexpr index_t per_block = 128;
  float scale;
  /// Bit j of a word: set is -s.
  FUSOR_HD static float sign(std::uint32_t word, int j, float s) { return ((word >> j) & 1u) ? -s : s; }
  FUSOR_HD float element(const philox_words& w, index_t c) const {
    const index_t k = c & (per_block - 1);
    return sign(w[std::size_t(k >> 5)], int(k & 31), scale);
  }
  FUSOR_HD void fill_block(const philox_words& w, float* out) const {
    const float s = scale;  // a local: a store through out could otherwise alias the member
    for (int q = 0; q < 4; ++q)
      for (int j = 0; j < 32; ++j) out[32 * q + j] = sign(w[std::size_t(q)], j, s);
  }
};

inline constexpr int mbat_max_bases = 16;

/// softmax(temperature * s_k) over K projections, in double (max subtracted first).
FUSOR_HD inline void mbat_weights(const float* s, int K, double temperature, double* w) {
  double top = temperature * double(s[0]);
  for (int k = 1; k < K; ++k) top = temperature * double(s[k]) > top ? temperature * double(s[k]) : top;
  double total = 0;
  for (int k = 0; k < K; ++k) {
    w[k] = ::exp(temperature * double(s[k]) - top);
    total += w[k];
  }
  for (int k = 0; k < K; ++k) w[k] /= total;
}

/// The weights as rows: scores (n, K) -> softmax rows (n, K), each row's softmax computed once
/// per run that reaches it.
struct mbat_softmax {
  using value_type = float;
  const float* scores;
  int K;
  double temperature;
  FUSOR_HD void fill(index_t first, float* out, index_t count) const {
    double w[mbat_max_bases];
    index_t row = -1;
    for (index_t i = 0; i < count; ++i) {
      const index_t r = (first + i) / K;
      if (r != row) mbat_weights(scores + r * K, K, temperature, w);
      row = r;
      out[i] = float(w[(first + i) % K]);
    }
  }
};

/// out(r, i) = sum_k w(r, k) x(r, (i - shift_k) mod d): the shifted copies added in k order, each
/// float product and sum rounded on its own (the same bits on every backend). The weights (nw, K)
/// and x are read in place with one row (a broadcast key) or one per output row. On cpu a run
/// covers whole stretches of a row, so each shift is two contiguous (vectorised) loops.
struct shift_mix {
  using value_type = float;
  const float* w;  // (nw, K) softmax weights
  const float* x;  // (nx, d)
  std::array<index_t, mbat_max_bases> shifts;  // in [0, d)
  int K;
  index_t d, nw, nx;  // nw, nx: 1 or the output's row count
  FUSOR_HD void fill(index_t first, float* out, index_t count) const {
    index_t row = first / d, col = first % d, i = 0;
    while (i < count) {
      const index_t len = d - col < count - i ? d - col : count - i;
      const float* wr = w + (nw == 1 ? 0 : row) * K;
      const float* xr = x + (nx == 1 ? 0 : row) * d;
      float* o = out + i;
      for (index_t j = 0; j < len; ++j) o[j] = 0.0f;
      for (int k = 0; k < K; ++k) {
        const float wk = wr[k];
        const index_t s = shifts[std::size_t(k)], split = col + len < s ? col + len : s;
        for (index_t c = col; c < split; ++c) o[c - col] = add_rn(o[c - col], mul_rn(wk, xr[c - s + d]));
        for (index_t c = col > s ? col : s; c < col + len; ++c) o[c - col] = add_rn(o[c - col], mul_rn(wk, xr[c - s]));
      }
      i += len;
      col += len;
      if (col == d) {
        col = 0;
        ++row;
      }
    }
  }
};

}  // namespace detail

template <class T>
struct mbat_of : detail::unit_rows_model<mbat_of<T>> {
  static_assert(std::is_same_v<T, float> || fusor::ext::small_float_v<T>, "fusor: MBAT rows are float, float16 or bfloat16");
  using value_type = T;
  static constexpr std::string_view name = "MBAT";
  static constexpr bool self_inverse = false;
  static constexpr bool commutative = false;
  static constexpr bool exact_inverse = false;
  static constexpr metric default_metric = metric::cosine;
  static constexpr double similarity_lo = -1.0, similarity_hi = 1.0;
  static constexpr int max_bases = detail::mbat_max_bases;
  using detail::unit_rows_model<mbat_of<T>>::d;

  /// K bases at HoloVec's shifts (k + 1) * floor(d / (K + 1)), k = 0 .. K-1 (needs d > K).
  explicit mbat_of(index_t dim, int bases = 4, double temperature = 100.0, std::uint64_t code_seed = 0)
      : detail::unit_rows_model<mbat_of<T>>(dim), k_(checked_bases(bases)), temperature_(checked_temperature(temperature)),
        code_seed_(code_seed) {
    if (d <= k_)
      throw value_error("fusor::vsa: an MBAT model with K = " + std::to_string(k_) +
                        " bases at distinct non-zero shifts needs d > K, got d = " + std::to_string(d) +
                        " (or give the shifts)");
    const index_t step = d / (k_ + 1);
    for (int k = 0; k < k_; ++k) shifts_[std::size_t(k)] = (k + 1) * step;
  }
  /// Bases at the given shifts (any integers, taken modulo d; HoloVec's `shifts`).
  mbat_of(index_t dim, std::span<const index_t> shifts, double temperature = 100.0, std::uint64_t code_seed = 0)
      : detail::unit_rows_model<mbat_of<T>>(dim), k_(checked_bases(index_t(shifts.size()))),
        temperature_(checked_temperature(temperature)), code_seed_(code_seed) {
    for (int k = 0; k < k_; ++k) shifts_[std::size_t(k)] = ((shifts[std::size_t(k)] % d) + d) % d;
  }
  mbat_of(index_t dim, std::initializer_list<index_t> shifts, double temperature = 100.0, std::uint64_t code_seed = 0)
      : mbat_of(dim, std::span<const index_t>(shifts.begin(), shifts.size()), temperature, code_seed) {}

  int bases() const { return k_; }
  /// The shifts s_k, in [0, d).
  std::span<const index_t> shifts() const { return {shifts_.data(), std::size_t(k_)}; }
  double temperature() const { return temperature_; }
  std::uint64_t code_seed() const { return code_seed_; }

  /// The K code vectors U_k (K, d): +-1/sqrt(d) from Philox stream 2^62 + k of code_seed (no
  /// random row of the model uses those streams).
  template <backend B = default_backend>
  array<float, B> code_vectors() const {
    return detail::generate<B>(
        detail::row_draw<detail::sign_elements>{{float(1.0 / std::sqrt(double(d)))}, code_seed_, code_stream, d},
        extents{k_, d});
  }
  /// The weights w(a) = softmax(temperature * <a, U_k>) of rows a (..., d): (..., K).
  template <class X>
  auto weights(const X& a) const {
    check_rows(*this, expr_shape(fusor::ext::to_node(a)), "mbat::weights");
    const auto ac = fusor::ext::contiguous_of(a);
    return weights_of(ac.view());
  }

  /// HRR's N(0, 1/d) rows, scaled to unit norm (HoloVec's real space); 16-bit rows are those
  /// rounded once.
  template <class B>
  array<T, B> draw(index_t n, std::uint64_t seed, index_t first) const {
    if constexpr (std::is_same_v<T, float>) return detail::unit_normal_rows<B>(d, n, seed, first);
    else return array<T, B>(cast<T>(detail::unit_normal_rows<B>(d, n, seed, first)));
  }
  /// normalize(sum_k w_k(a) roll(b, s_k)), broadcast over the leading axes.
  template <class X, class Y>
  auto bind(const X& a, const Y& b) const {
    return mix(a, b, false);
  }
  /// normalize(sum_k w_k(a) roll(c, -s_k)): recovers b from c = bind(a, b) given a,
  /// approximately (the weights' own term sum_k w_k^2 b stands out of K (K - 1) shifted copies).
  template <class X, class Y>
  auto unbind_left(const X& c, const Y& a) const {
    return mix(a, c, true);
  }
  /// bind folded left along axis -2: bind(bind(x_0, x_1), x_2) ...
  template <class X>
  auto multibind(const X& x) const {
    return detail::fold_left(*this, x);
  }

 private:
  static constexpr index_t code_stream = index_t(1) << 62;
  int k_ = 4;
  double temperature_ = 100.0;
  std::uint64_t code_seed_ = 0;
  std::array<index_t, detail::mbat_max_bases> shifts_{};

  static int checked_bases(index_t k) {
    if (k < 2 || k > detail::mbat_max_bases)
      throw value_error("fusor::vsa: an MBAT model needs between 2 and " + std::to_string(detail::mbat_max_bases) +
                        " bases (shifts), got " + std::to_string(k));
    return int(k);
  }
  static double checked_temperature(double t) {
    if (!(t > 0) || !std::isfinite(t))
      throw value_error("fusor::vsa: an MBAT model needs a finite temperature > 0, got " + std::to_string(t));
    return t;
  }
  /// The weights of the rows of a contiguous view (..., d): (..., K), the projections <a, U_k> by
  /// one GEMM, then one softmax per row.
  template <class U, class B>
  array<float, B> weights_of(const array_view<U, B>& a) const {
    const array<float, B> s = scores(a);
    extents out = a.shape();
    out[out.size() - 1] = k_;
    return detail::generate<B>(detail::mbat_softmax{s.data(), k_, temperature_}, out);
  }
  /// <a, U_k> for the rows of a contiguous view: (rows, K), one GEMM. On a backend whose memory is
  /// host memory (the cpu) each thread keeps the code vectors of the last model it bound with (up
  /// to 2^20 floats): drawing them was 3 of the 8.5 us of one bind at d = 10 000 and K = 4. Device
  /// memory is not kept in a thread_local (it could outlive the device context at thread exit), so
  /// elsewhere they are drawn for each call.
  template <class U, class B>
  array<float, B> scores(const array_view<U, B>& a) const {
    const index_t rows = a.size() / d;
    const array_view<U, B> am(a.data(), extents{rows, d}, extents{d, 1});
    if constexpr (!std::is_same_v<U, float>) {  // 16-bit rows: the projections of the widened rows, in float32
      const array<float, B> wide(cast<float>(am));
      return scores(wide.view());
    }
    if constexpr (backend_traits<B>::host_accessible) {
      if (index_t(k_) * d <= (index_t(1) << 20)) {
        struct kept {
          index_t d = 0;
          int k = 0;
          std::uint64_t seed = 0;
          array<float, B> u;  // host memory (named through B: dependent, so this header stands alone)
        };
        thread_local kept last;
        if (last.d != d || last.k != k_ || last.seed != code_seed_) {
          last.u = code_vectors<B>();
          last.d = d;
          last.k = k_;
          last.seed = code_seed_;
        }
        return matmul(am, swapaxes(last.u.view(), 0, 1));
      }
    }
    const array<float, B> u = code_vectors<B>();
    return matmul(am, swapaxes(u.view(), 0, 1));
  }
  /// The K shifted copies of x mixed by a's weights (shifts negated for the left unbind), scaled to
  /// unit norm. Operands whose rows are one row or all the output's rows are read in place; any
  /// other broadcast is materialised first.
  template <class X, class Y>
  auto mix(const X& a, const Y& x, bool transposed) const {
    if constexpr (!std::is_same_v<T, float>) {
      // 16-bit rows: float32's mix of the widened operands, rounded once
      using B = backend_of_t<X>;
      const array<float, B> af(cast<float>(a));
      const array<float, B> xf(cast<float>(x));
      return array<T, B>(cast<T>(mix_rows(af, xf, transposed)));
    } else {
      return mix_rows(a, x, transposed);
    }
  }
  /// mix of float32 rows.
  template <class X, class Y>
  auto mix_rows(const X& a, const Y& x, bool transposed) const {
    const auto ac = fusor::ext::contiguous_of(a);
    const auto xc = fusor::ext::contiguous_of(x);
    using B = backend_of_t<decltype(ac.view())>;
    static_assert(std::is_same_v<B, backend_of_t<decltype(xc.view())>>, "fusor::vsa::bind: both operands on one backend");
    const extents sa = ac.view().shape(), sx = xc.view().shape(), out = broadcast_shapes(sa, sx);
    const index_t n = out.numel() / d, na = sa.numel() / d, nx = sx.numel() / d;
    std::array<index_t, detail::mbat_max_bases> s = shifts_;
    if (transposed)
      for (int k = 0; k < k_; ++k) s[std::size_t(k)] = (d - s[std::size_t(k)]) % d;
    // one row or one per output row is read in place; any other broadcast is materialised
    const bool in_place = (na == n || na == 1) && (nx == n || nx == 1);
    array<float, B> ab, xb;
    if (!in_place) {
      ab = array<float, B>(broadcast_to(ac.view(), out));
      xb = array<float, B>(broadcast_to(xc.view(), out));
    }
    const array<float, B> w = weights_of(in_place ? ac.view() : ab.view());
    const float* xp = in_place ? xc.data() : xb.data();
    return detail::unit_rows(detail::generate<B>(
        detail::shift_mix{w.data(), xp, s, k_, d, in_place && na <= 1 ? 1 : n, in_place && nx <= 1 ? 1 : n}, out));
  }
};

/// MBAT over float32 rows.
using mbat = mbat_of<float>;

}  // namespace fusor::vsa
