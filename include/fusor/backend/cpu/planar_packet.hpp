#pragma once
// Elements made of planes (core/planar.hpp) on the cpu's SIMD path: an array of such elements is
// evaluated W elements at a time as one element whose planes are xsimd batches (ad::dual<float, N>
// as dual<batch<float>, N>), and core's functors run on it unchanged (they are generic), so sin of
// a dual array is xsimd's sincos plus a multiply per tangent, never a scalar libm call.
//
// Storage stays interleaved (plane 0, plane 1, ..., plane 0, ...): an array of E is an ordinary
// array of an aggregate, and the packet load and store move between that and one register per
// plane. Only the element's own layer knows what the planes mean; this file knows only their
// number and type.
#include <cstddef>
#include <type_traits>
#include <utility>

#include "../../core/planar.hpp"
#include "diagnostics.hpp"
#include "packet.hpp"

FUSOR_SIMD_DIAGNOSTICS_BEGIN

namespace fusor {

template <class E>
  requires planar<E> && detail::simd::floating<typename planar_traits<E>::lane>
struct packet_traits<E> {
  using planes_of = planar_traits<E>;
  using element = E;
  using lane = typename planes_of::lane;
  static constexpr int planes = planes_of::planes;
  using batch = detail::simd::batch<lane>;
  static constexpr bool available = true;
  using type = typename planes_of::template rebind<batch>;
  static constexpr std::size_t size = batch::size;
  // the stores below go through a lane buffer: no alignment of the destination is needed
  static constexpr std::size_t alignment = alignof(element);
  template <class F>
  static constexpr bool supports = planes_of::template packet_functor<F> && simd_op_v<F, lane>;
  /// The planes come out as packets of their lane type.
  template <class F, class L>
  static constexpr bool extracts = planes_of::template extracts<F> && std::is_same_v<L, lane>;
  static_assert(sizeof(element) == std::size_t(planes) * sizeof(lane),
                "fusor: a planar element must be its planes, packed");

  // Loads and stores transpose between W interleaved elements and P planes through a lane
  // buffer, element by element (g++ turns that into shuffles for few planes). The AVX-512 gather
  // and scatter instructions measured 2x and 10x slower for dual<float> on an AMD EPYC. Packets
  // are assembled whole: a default-constructed one would be zero-filled first.
  template <std::size_t... K>
  static type from_planes(const lane (&buf)[planes][size], std::index_sequence<K...>) {
    return planes_of::template assemble<batch>(batch::load_aligned(buf[K])...);
  }
  static type load(const element* p) {
    alignas(64) lane buf[planes][size];
    for (std::size_t j = 0; j < size; ++j)
      for (int k = 0; k < planes; ++k) buf[k][j] = planes_of::plane(p[j], k);
    return from_planes(buf, std::make_index_sequence<std::size_t(planes)>{});
  }
  template <std::size_t... K>
  static type splat(const element& v, std::index_sequence<K...>) {
    return planes_of::template assemble<batch>(batch(planes_of::plane(v, int(K)))...);
  }
  static type broadcast(const element& v) { return splat(v, std::make_index_sequence<std::size_t(planes)>{}); }
  /// The lanes of a packet combined into one W (reductions): plane by plane in W's lane type, for
  /// the operators that act on each plane independently (sums and means of duals). Through a lane
  /// buffer of elements instead, the compiler's mismatched stores and loads cost 30x more.
  template <class Op, class W>
  static W horizontal(const type& v) {
    static_assert(planes_of::template plane_reduction<Op>, "fusor: planar packets reduce plane by plane only");
    using WL = typename planar_traits<W>::lane;
    W r = Op::template identity<W>();
    alignas(64) lane buf[size];
    for (int k = 0; k < planes; ++k) {
      planes_of::plane(v, k).store_aligned(buf);
      WL& acc = planar_traits<W>::plane(r, k);
      for (std::size_t j = 0; j < size; ++j) acc = Op::combine(acc, WL(buf[j]));
    }
    return r;
  }
  /// A plain operand in a statement of E: its values in plane 0, the other planes zero (a dual
  /// number's constant).
  template <std::size_t... K>
  static type lift_planes(const batch& v, std::index_sequence<K...>) {
    return planes_of::template assemble<batch>(v, (void(K), batch(lane(0)))...);
  }
  static type lift(const batch& v) { return lift_planes(v, std::make_index_sequence<std::size_t(planes - 1)>{}); }
  static void store_aligned(element* p, const type& v) {
    alignas(64) lane buf[planes][size];
    for (int k = 0; k < planes; ++k) planes_of::plane(v, k).store_aligned(buf[k]);
    for (std::size_t j = 0; j < size; ++j)
      for (int k = 0; k < planes; ++k) planes_of::plane(p[j], k) = buf[k][j];
  }
};

}  // namespace fusor

FUSOR_SIMD_DIAGNOSTICS_END
