#pragma once
// executor<cpu>: runs an assignment in one pass over memory. The iteration space is coalesced
// (a contiguous statement is one flat loop); each row is an aligned scalar head, an xsimd body
// and a scalar tail when the whole tree has a SIMD form, or a scalar loop otherwise. Above the
// size threshold the rows (or the flat range) are split over OpenMP threads.
#include <algorithm>
#include <cstdint>

#include "diagnostics.hpp"
#include "../../core/assign.hpp"
#include "evaluator.hpp"
#include "memory.hpp"
#include "parallel.hpp"


FUSOR_SIMD_DIAGNOSTICS_BEGIN

namespace fusor::detail::cpu_exec {

using namespace cpu_eval;

template <bool Contiguous, class T, class Ev>
void packet_row(T* d, const Ev& ev, index_t b, index_t e) {
  using P = packet_traits<T>;
  constexpr index_t W = index_t(P::size);
  constexpr std::uintptr_t align = P::alignment;
  index_t i = b;
  for (; i < e && reinterpret_cast<std::uintptr_t>(d + i) % align != 0; ++i) d[i] = convert_element<T>(ev.scalar(i));
  for (; i + 2 * W <= e; i += 2 * W) {
    // (auto: a packet of float16 may come as a result still to be rounded, which the store rounds)
    const auto p0 = ev.template packet<Contiguous, T>(i);
    const auto p1 = ev.template packet<Contiguous, T>(i + W);
    P::store_aligned(d + i, p0);
    P::store_aligned(d + i + W, p1);
  }
  for (; i + W <= e; i += W) P::store_aligned(d + i, ev.template packet<Contiguous, T>(i));
  for (; i < e; ++i) d[i] = convert_element<T>(ev.scalar(i));
}

template <class T, class Ev>
void scalar_row(T* d, index_t ds, const Ev& ev, index_t b, index_t e) {
  for (index_t i = b; i < e; ++i) d[i * ds] = convert_element<T>(ev.scalar(i));
}

template <class T, class Ev>
void assign(const leaf<T, cpu>& dst, const Ev& ev0) {
  Ev ev = ev0;
  index_t dst_st[max_rank];
  for (int k = 0; k < dst.shape.size(); ++k) dst_st[k] = dst.strides[k];
  auto ops = stride_table<1>(ev);
  ops[0] = dst_st;
  const loop_space sp = coalesce(dst.shape.data(), dst.shape.size(), ops);
  FUSOR_COUNT_PASS();

  const int r = sp.rank;
  const index_t inner = sp.inner(), rows = sp.rows();
  const bool simd_ok = dst_st[r - 1] == 1;
  // every operand read along unit or zero (broadcast) strides: the packet<true> loop, whose
  // evaluators test for a zero stride; the generator's straight write needs unit strides
  bool unit_or_zero = true, unit = true;
  for (std::size_t j = 1; j < ops.size(); ++j) {
    unit_or_zero = unit_or_zero && (ops[j][r - 1] == 1 || ops[j][r - 1] == 0);
    unit = unit && ops[j][r - 1] == 1;
  }
  if constexpr (Ev::template kind<T> == pk::value)
    if (simd_ok) FUSOR_COUNT_SIMD_PASS();

  auto run_row = [&](Ev& e, T* d, index_t b, index_t end) {
    if constexpr (requires { e.write_row(d, b, end); }) {  // dst = a generator, as it is
      if (unit && simd_ok) {
        e.write_row(d, b, end);
        return;
      }
    }
    if constexpr (Ev::template kind<T> == pk::value) {
      if (simd_ok) {
        if (unit_or_zero) packet_row<true>(d, e, b, end);
        else packet_row<false>(d, e, b, end);
        return;
      }
    }
    scalar_row(d, dst_st[r - 1], e, b, end);
  };

  const int nt = threads_for(rows * inner);
  if (r == 1) {
    // one flat loop: split the range at cache-line multiples
    run_team(nt, [&](int t, int n) {
      Ev local = ev;
      local.seek(nullptr, 0);
      // (elements wider than a cache line, such as dual<double, 8>, split at any element)
      auto [b, e] = split_range(inner, t, n, std::max<index_t>(1, index_t(cpu_alignment / sizeof(T))) * 4);
      if (b < e) run_row(local, dst.data, b, e);
    });
    return;
  }
  // An operand read across rows (a transpose: inner stride not 0 or +-1) would touch a new
  // cache line for every element; walking tiles of tile x tile elements instead reuses each
  // line for `tile` consecutive rows (2.3x faster on a 4096^2 transpose here).
  constexpr index_t tile = 32;
  bool gather = false;
  for (std::size_t j = 1; j < ops.size(); ++j) {
    const index_t s = ops[j][r - 1];
    gather = gather || (s != 0 && s != 1 && s != -1);
  }
  const bool tiled = gather && inner >= 2 * tile && rows >= 2;
  run_team(std::min<index_t>(nt, rows), [&](int t, int n) {
    Ev local = ev;
    auto [rb, re] = split_range(rows, t, n);
    if (rb >= re) return;
    index_t idx[max_rank] = {};
    unravel(rb, idx, sp.dims, r - 1);
    if (tiled) {
      for (index_t row = rb; row < re; row += tile) {
        const index_t nrow = std::min(tile, re - row);
        for (index_t cb = 0; cb < inner; cb += tile) {
          index_t ti[max_rank];
          for (int k = 0; k + 1 < r; ++k) ti[k] = idx[k];
          for (index_t q = 0; q < nrow; ++q) {
            local.seek(ti, r - 1);
            T* d = dst.data;
            for (int k = 0; k + 1 < r; ++k) d += ti[k] * dst_st[k];
            run_row(local, d, cb, std::min(cb + tile, inner));
            next_index(ti, sp.dims, r - 1);
          }
        }
        for (index_t q = 0; q < nrow; ++q) next_index(idx, sp.dims, r - 1);
      }
      return;
    }
    for (index_t row = rb; row < re; ++row) {
      local.seek(idx, r - 1);
      T* d = dst.data;
      for (int k = 0; k + 1 < r; ++k) d += idx[k] * dst_st[k];
      run_row(local, d, 0, inner);
      next_index(idx, sp.dims, r - 1);
    }
  });
}

}  // namespace fusor::detail::cpu_exec

#include "reduce.hpp"

namespace fusor {

template <>
inline constexpr bool has_executor<cpu> = true;

template <>
struct executor<cpu> {
  /// The threads a layer above may spread its own independent work over (fusor::num_threads()).
  static int threads() { return num_threads(); }
  /// dst = e, where e's shape broadcasts to dst's (checked by the caller).
  template <class T, class E>
  static void assign(const leaf<T, cpu>& dst, const E& e) {
    detail::cpu_exec::assign(dst, detail::cpu_eval::make_evaluator(e, dst.shape));
  }
  /// Reduces all elements of e with Op; returns Op's wide accumulator.
  template <class Op, class E>
  static auto reduce(const E& e) {
    return detail::cpu_exec::reduce_all<Op>(e);
  }
  /// *dst = finish(reduce<Op>(e)) (finish: detail::finish_as; of Op's identity when e is empty),
  /// written where the backend's arrays live (host memory here): for a caller that must not read a
  /// value back (ad::compile's replays).
  template <class Op, class R, class E, class Finish>
  static void reduce_into(R* dst, const E& e, const Finish& finish) {
    *dst = finish(detail::cpu_exec::reduce_all<Op>(e));
  }
  /// out[...] = reduction of e along `axis`; out has e's shape without that axis.
  template <class Op, class T, class E>
  static void reduce_axis(const leaf<T, cpu>& out, const E& e, int axis) {
    detail::cpu_exec::reduce_axis<Op>(out, e, axis);
  }
  /// Position (flat, C order) of the first maximum (Max) or minimum of e; NaN counts as extreme.
  template <bool Max, class E>
  static index_t arg_extreme(const E& e) {
    return detail::cpu_exec::arg_extreme_all<Max>(e);
  }
  template <bool Max, class E>
  static void arg_extreme_axis(const leaf<std::int64_t, cpu>& out, const E& e, int axis) {
    detail::cpu_exec::arg_extreme_axis<Max>(out, e, axis);
  }
};

}  // namespace fusor

FUSOR_SIMD_DIAGNOSTICS_END
