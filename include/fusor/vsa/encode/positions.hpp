#pragma once
// Mixing two vectors position by position, the step every correlated codebook (level, thermometer,
// circular) is made of: row i of the result takes position p from hi[i] where key[i, p] <
// frac[i], else from lo[i]. A position is what a model's dim() counts: an element (MAP, FHRR,
// HRR, VTB, MBAT, MCR, CGR, a BSBC block index), a bit (BSC, BSDC, BSDC-CDT) or an m x m block
// (GHRR), so a mixed row is made of whole positions of the two inputs and stays in the model's
// domain. BSDC-SEG, one set bit per segment, has no such positions: mixing its bits would leave a
// segment with two bits or none.
#include <cstdint>
#include <string>
#include <type_traits>

#include "../bsdc.hpp"
#include "../ghrr.hpp"
#include "../kernels.hpp"
#include "../model.hpp"
#include "../packed.hpp"

namespace fusor::vsa::detail {

template <class M>
inline constexpr bool packed_positions_v = std::is_base_of_v<packed_bits<M>, M> && !std::is_same_v<M, bsdc_seg>;

/// Whether a model's positions can be mixed (every model but BSDC-SEG).
template <class M>
inline constexpr bool mixable_positions_v = !std::is_same_v<M, bsdc_seg>;

template <class M>
void require_mixable(const M&, const char* what) {
  if constexpr (!mixable_positions_v<M>)
    throw value_error(std::string("fusor::vsa::") + what + ": " + std::string(M::name) +
                      " has no positions to mix (one set bit per segment); expected a model whose dimensions are "
                      "elements, bits or blocks (every model but BSDC-SEG)");
}

/// The packed-bit form: each output word takes, bit by bit, lo's or hi's word. Bits past d stay
/// clear because both inputs keep them clear.
struct mix_bits {
  using value_type = std::uint64_t;
  const std::uint64_t *lo, *hi;  // (L, words)
  const float *key, *frac;       // (L, d), (L)
  index_t d, words;
  FUSOR_HD void fill(index_t first, std::uint64_t* out, index_t count) const {
    for (index_t e = first; e < first + count; ++e) {
      const index_t row = e / words, w = e % words;
      const float f = frac[row];
      const float* k = key + row * d + 64 * w;
      const index_t bits = d - 64 * w < 64 ? d - 64 * w : 64;
      std::uint64_t mask = 0;
      for (index_t b = 0; b < bits; ++b) mask |= std::uint64_t(k[b] < f) << b;
      out[e - first] = (lo[e] & ~mask) | (hi[e] & mask);
    }
  }
};

/// Row i: position p from hi[i] where key[i, p] < frac[i], else from lo[i]. lo, hi (L, width)
/// contiguous arrays of m's vectors, key (L, m.dim()), frac (L).
template <class M, class B>
array<typename M::value_type, B> mix_positions(const M& m, const array<typename M::value_type, B>& lo,
                                               const array<typename M::value_type, B>& hi, const array<float, B>& key,
                                               const array<float, B>& frac) {
  using T = typename M::value_type;
  const index_t L = lo.shape()[0], d = m.dim(), w = m.width();
  if constexpr (packed_positions_v<M>) {
    return generate<B>(mix_bits{lo.data(), hi.data(), key.data(), frac.data(), d, w}, extents{L, w});
  } else if constexpr (std::is_same_v<M, ghrr>) {
    const index_t mm = w / d;  // the m x m elements of one block move together
    const auto block = [&](const array<T, B>& a) { return array_view<T, B>(const_cast<T*>(a.data()), extents{L, d, mm}, extents{w, mm, 1}); };
    array<T, B> out(extents{L, w});
    array_view<T, B>(out.data(), extents{L, d, mm}, extents{w, mm, 1}) =
        where(key.reshape(extents{L, d, 1}) < frac.reshape(extents{L, 1, 1}), block(hi), block(lo));
    return out;
  } else {
    require_mixable(m, "mix_positions");
    return array<T, B>(where(key < frac.reshape(extents{L, 1}), hi, lo));
  }
}

}  // namespace fusor::vsa::detail
