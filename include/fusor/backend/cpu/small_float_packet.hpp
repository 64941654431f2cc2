#pragma once
// float16 and bfloat16 (core/half.hpp) on the cpu's SIMD path. A packet of them is a float32
// xsimd batch whose lanes hold values of the 16-bit type exactly: a load widens 2-byte elements
// to float32 in registers (F16C's vcvtph2ps for float16, a shift for bfloat16), every functor runs
// on the float32 batch, as the scalar loop computes it in float32, and its result is rounded back
// to the 16-bit type, ties to even, before the next functor sees it (NumPy's float16 semantics:
// each operation is computed in float32 and rounded once). A store narrows the lanes, exactly.
// So a fused statement over half arrays is one pass that reads and writes 2 bytes per element.
//
// The conversions are x86 instructions: AVX-512F, or AVX2 with F16C (every x86-64-v3 machine).
// Elsewhere (SSE2 builds, aarch64) packet_traits says "none" and the scalar loop runs, with the
// same results. Reductions accumulate the widened float32 lanes (packet_traits::widen), as the
// scalar loop accumulates in float32.
#include <cstddef>
#include <type_traits>

#include "../../core/half.hpp"
#include "diagnostics.hpp"
#include "packet.hpp"

FUSOR_SIMD_DIAGNOSTICS_BEGIN

// The register width of the conversions: xsimd's float batches are 512 bits wherever AVX-512F is
// enabled, 256 bits on AVX2 (x86-64-v3 has F16C with it).
#if defined(__AVX512F__)
#include <immintrin.h>
#define FUSOR_SMALL_PACKET_BITS 512
#elif defined(__AVX2__) && defined(__F16C__)
#include <immintrin.h>
#define FUSOR_SMALL_PACKET_BITS 256
#endif

namespace fusor {

namespace detail::simd {

template <class L>
inline constexpr bool small = one_of<L, float16, bfloat16>;

/// Whether this translation unit converts between 16-bit floats and float32 batches in registers.
constexpr bool small_packets_available() {
#if defined(FUSOR_SMALL_PACKET_BITS)
  return sizeof(batch<float>) * 8 == FUSOR_SMALL_PACKET_BITS;
#else
  return false;
#endif
}

#if defined(FUSOR_SMALL_PACKET_BITS)
/// x rounded to the nearest value of H, ties to even (NaN stays NaN, quiet).
template <class H>
inline batch<float> round_to(const batch<float>& x) {
  if constexpr (std::is_same_v<H, float16>) {
#if FUSOR_SMALL_PACKET_BITS == 512
    return batch<float>(_mm512_cvtph_ps(_mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT)));
#else
    return batch<float>(_mm256_cvtph_ps(_mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT)));
#endif
  } else {
    // bfloat16 is float32's upper half: add just under half of the dropped 16 bits, plus the kept
    // part's lowest bit (ties to even), and clear them; a carry into the exponent is the right
    // rounding up, to infinity past the largest finite value. A NaN keeps its upper payload, quiet.
#if FUSOR_SMALL_PACKET_BITS == 512
    {
      const __m512i u = _mm512_castps_si512(x);
      const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
      __m512i r = _mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)), lsb);
      r = _mm512_mask_or_epi32(r, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), u, _mm512_set1_epi32(0x00400000));
      return batch<float>(_mm512_castsi512_ps(_mm512_and_si512(r, _mm512_set1_epi32(int(0xffff0000u)))));
    }
#else
    {
      const __m256i u = _mm256_castps_si256(x), keep = _mm256_set1_epi32(int(0xffff0000u));
      const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
      const __m256i r = _mm256_and_si256(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), lsb), keep);
      const __m256i q = _mm256_and_si256(_mm256_or_si256(u, _mm256_set1_epi32(0x00400000)), keep);
      return batch<float>(_mm256_blendv_ps(_mm256_castsi256_ps(r), _mm256_castsi256_ps(q), _mm256_cmp_ps(x, x, _CMP_UNORD_Q)));
    }
#endif
  }
}

/// The float32 values of batch<float>::size consecutive elements of H.
template <class H>
inline batch<float> widen_load(const H* p) {
#if FUSOR_SMALL_PACKET_BITS == 512
  {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    if constexpr (std::is_same_v<H, float16>) return batch<float>(_mm512_cvtph_ps(h));
    else return batch<float>(_mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16)));
  }
#else
  {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    if constexpr (std::is_same_v<H, float16>) return batch<float>(_mm256_cvtph_ps(h));
    else return batch<float>(_mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16)));
  }
#endif
}

/// Stores lanes that are values of H (round_to's results) as H, exactly.
template <class H>
inline void narrow_store(H* p, const batch<float>& x) {
#if FUSOR_SMALL_PACKET_BITS == 512
  {
    __m256i h;
    if constexpr (std::is_same_v<H, float16>) h = _mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT);
    else h = _mm512_cvtepi32_epi16(_mm512_srli_epi32(_mm512_castps_si512(x), 16));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), h);
  }
#else
  {
    __m128i h;
    if constexpr (std::is_same_v<H, float16>) {
      h = _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT);
    } else {
      const __m256i u = _mm256_srli_epi32(_mm256_castps_si256(x), 16);  // each lane <= 0xffff: packs exactly
      h = _mm_packus_epi32(_mm256_castsi256_si128(u), _mm256_extracti128_si256(u, 1));
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), h);
  }
#endif
}
#endif

/// A packet of H: a float32 batch whose every lane is a value of H.
template <class H>
struct small_packet {
  batch<float> v;
  /// The float32 lanes a functor or a float32 statement reads.
  const batch<float>& lanes() const { return v; }
};

/// A functor's float32 result on packets of H, not yet rounded to H: the next functor rounds it
/// before it reads it, and a store rounds it as it narrows (F16C's conversion rounds itself), so
/// a statement's last operation is not rounded twice.
template <class H>
struct small_result {
  batch<float> v;
#if defined(FUSOR_SMALL_PACKET_BITS)
  batch<float> lanes() const { return round_to<H>(v); }
  operator small_packet<H>() const { return {lanes()}; }
#endif
};

template <class X>
inline constexpr bool is_small_packet = false;
template <class H>
inline constexpr bool is_small_packet<small_packet<H>> = true;
template <class H>
inline constexpr bool is_small_packet<small_result<H>> = true;

/// The float32 lanes a functor reads: a packet of H's as they are, a pending result rounded.
template <class X>
decltype(auto) unwrap_small(const X& x) {
  if constexpr (is_small_packet<X>) return x.lanes();
  else return (x);
}

template <class... A>
struct first_small;
template <class H, class... A>
struct first_small<small_packet<H>, A...> {
  using type = H;
};
template <class H, class... A>
struct first_small<small_result<H>, A...> {
  using type = H;
};
template <class X, class... A>
struct first_small<X, A...> : first_small<A...> {};

/// Functors whose float32 result on values of H is a value of H already, so no rounding is
/// needed: sign changes, selections, and rounding to integers (an integer below 2^11 or 2^8 is a
/// value of either type, and a larger value of it is an integer already).
template <class F>
inline constexpr bool exact_on_small =
    one_of<F, negate_fn, abs_fn, maximum_fn, minimum_fn, clip_fn, where_fn, conj_fn, real_fn, floor_fn, ceil_fn,
           trunc_fn, round_fn, sign_fn>;

/// A functor applied to packets among which are packets of a 16-bit float: computed on their
/// float32 batches, as the scalar loop computes it; a value result is to be rounded to H once
/// (small_result), a mask is returned as it is.
template <class F, class... A>
  requires(is_small_packet<A> || ...)
auto apply_packet(const F& f, const A&... a) {
  using H = typename first_small<A...>::type;
  auto r = packet_impl<F>::apply(f, unwrap_small(a)...);
  if constexpr (!std::is_same_v<decltype(r), batch<float>>) return r;
  else if constexpr (exact_on_small<F>) return small_packet<H>{r};
  else return small_result<H>{r};
}

}  // namespace detail::simd

// Sums, means, max and min accumulate a 16-bit float's widened lanes in float32 registers (their
// accumulator, element_traits::accumulator, is float32).
namespace detail::simd {
template <>
inline constexpr bool reduces_widened<float16> = small_packets_available();
template <>
inline constexpr bool reduces_widened<bfloat16> = small_packets_available();
}  // namespace detail::simd

#if defined(FUSOR_SMALL_PACKET_BITS)
template <class H>
  requires(detail::simd::small<H> && detail::simd::small_packets_available())
struct packet_traits<H> {
  static constexpr bool available = true;
  using type = detail::simd::small_packet<H>;
  using wide_batch = detail::simd::batch<float>;
  static constexpr std::size_t size = wide_batch::size;
  static constexpr std::size_t alignment = size * sizeof(H);  // a whole store in one cache line
  /// Every functor with a float32 SIMD form: it runs on the widened lanes.
  template <class F>
  static constexpr bool supports = simd_op_v<F, float>;
  static type load(const H* p) { return {detail::simd::widen_load(p)}; }
  static type broadcast(const H& v) { return {wide_batch(float(v))}; }
  static void store_aligned(H* p, const type& v) { detail::simd::narrow_store(p, v.v); }
  static void store_aligned(H* p, const detail::simd::small_result<H>& r) {
    if constexpr (std::is_same_v<H, float16>) detail::simd::narrow_store(p, r.v);  // vcvtps2ph rounds
    else detail::simd::narrow_store(p, r.lanes());
  }
  /// A float32 operand converted to H (astype<H> of a float array), rounded once.
  static type lift(const wide_batch& x) { return {detail::simd::round_to<H>(x)}; }
  /// The float32 lanes a reduction accumulates.
  using wide_lane = float;
  static wide_batch widen(const type& v) { return v.v; }
};
#endif

}  // namespace fusor

FUSOR_SIMD_DIAGNOSTICS_END
