#pragma once
// Reductions on the cpu, consuming an expression in the same single pass as an assignment:
// sum(a * b) evaluates a * b batch by batch into SIMD accumulators and writes nothing.
//
// Whole-array: per-thread partials over the coalesced space, SIMD blocks widened into Op's wide
// accumulator (float sums collect in double every 1024 elements), partials merged in thread
// order. Along an axis: when the axis is innermost each output element reduces one row; otherwise
// rows of the output are accumulated slab by slab, so memory is still read contiguously.
#include <algorithm>
#include <cstdint>

#include "diagnostics.hpp"
#include "../../core/reduce_ops.hpp"
#include "evaluator.hpp"
#include "parallel.hpp"


FUSOR_SIMD_DIAGNOSTICS_BEGIN

namespace fusor::detail::cpu_exec {

using namespace cpu_eval;

template <class Op, class B>
B packet_combine(const B& a, const B& b) {
  if constexpr (std::is_same_v<Op, max_op>) return simd::nan_max(a, b);
  else if constexpr (std::is_same_v<Op, min_op>) return simd::nan_min(a, b);
  else return Op::combine(a, b);
}

// The packet of L's lanes combined into one W (packet_traits: a composite element such as a dual
// number reduces as its own packet type).
template <class Op, class W, class L>
W horizontal(const packet_t<L>& x) {
  if constexpr (requires { packet_traits<L>::template horizontal<Op, W>(x); })
    return packet_traits<L>::template horizontal<Op, W>(x);  // the element type knows a better way
  alignas(64) L lanes[packet_traits<L>::size];
  packet_traits<L>::store_aligned(lanes, x);
  W r = Op::template identity<W>();
  for (L v : lanes) r = Op::combine(r, convert_element<W>(v));
  return r;
}

// The lane type packets of L accumulate in: L itself, or the wider lanes its packet_traits names
// (float16 and bfloat16 packets accumulate their float32 lanes, as the scalar loop does).
template <class L>
struct accumulation_lane {
  using type = L;
};
template <class L>
  requires requires { typename packet_traits<L>::wide_lane; }
struct accumulation_lane<L> {
  using type = typename packet_traits<L>::wide_lane;
};
template <class L>
using accumulation_lane_t = typename accumulation_lane<L>::type;

/// A packet of L as its accumulation lanes.
template <class L>
decltype(auto) accumulation_packet(const packet_t<L>& p) {
  if constexpr (std::is_same_v<accumulation_lane_t<L>, L>) return p;
  else return packet_traits<L>::widen(p);
}

// Whether Op can run on batches of this evaluator's values.
template <class Op, class Ev>
inline constexpr bool packet_reducible =
    simd_reduce_v<Op, typename Ev::value_type> && Ev::template kind<typename Ev::value_type> == pk::value;

/// Reduces elements [b, e) of the evaluator's current row.
template <class Op, class W, bool Simd, class Ev>
W reduce_row(const Ev& ev, index_t b, index_t e) {
  W total = Op::template identity<W>();
  index_t i = b;
  if constexpr (Simd) {
    using V = typename Ev::value_type;
    using L = accumulation_lane_t<V>;
    using P = packet_traits<L>;
    using batch = packet_t<L>;
    constexpr index_t w = index_t(P::size);
    constexpr index_t block = 1024;  // terms per lane before widening: bounds float rounding growth
    const batch id = P::broadcast(Op::template identity<L>());
    const auto next = [&ev](index_t k) -> batch { return accumulation_packet<V>(ev.template packet<true, V>(k)); };
    // one horizontal combine per block, and none extra for the whole packets after the last block:
    // a short row (100 floats: 4 + 2 packets) pays one, where each costs a lane-by-lane pass
    // (9 planes of lanes for a dual<float, 8>)
    batch acc = id;
    bool pending = false;
    while (i + 4 * w <= e) {
      const index_t stop = std::min(e, i + block);
      if (pending) total = Op::combine(total, horizontal<Op, W, L>(acc));
      if constexpr (sizeof(batch) > 2 * sizeof(detail::simd::batch<float>)) {
        // a composite packet (a dual<batch, 8> is 9 registers): one accumulator, as four would
        // spill to the stack on every step
        acc = id;
        for (; i + w <= stop; i += w) acc = packet_combine<Op>(acc, next(i));
      } else {
        batch a0 = id, a1 = id, a2 = id, a3 = id;
        for (; i + 4 * w <= stop; i += 4 * w) {
          a0 = packet_combine<Op>(a0, next(i));
          a1 = packet_combine<Op>(a1, next(i + w));
          a2 = packet_combine<Op>(a2, next(i + 2 * w));
          a3 = packet_combine<Op>(a3, next(i + 3 * w));
        }
        acc = packet_combine<Op>(packet_combine<Op>(a0, a1), packet_combine<Op>(a2, a3));
      }
      pending = true;
    }
    // whole packets left over (short rows: a row of 100 floats is 6 packets, not 6 scalar
    // quarters); fewer than 4 of them, so they join the last block's packet without widening
    for (; i + w <= e; i += w) {
      acc = pending ? packet_combine<Op>(acc, next(i)) : next(i);
      pending = true;
    }
    if (pending) total = Op::combine(total, horizontal<Op, W, L>(acc));
  }
  for (; i < e; ++i) total = Op::combine(total, convert_element<W>(ev.scalar(i)));
  return total;
}

// Reduces the current row with the best loop its strides allow: packets where every operand is
// read along a unit or zero stride (the packet<true> evaluators test for a zero stride).
template <class Op, class W, class Ev>
W reduce_row_auto(const Ev& ev, index_t b, index_t e, bool unit_or_zero) {
  if constexpr (packet_reducible<Op, Ev>) {
    if (unit_or_zero) return reduce_row<Op, W, true>(ev, b, e);
  }
  return reduce_row<Op, W, false>(ev, b, e);
}

// Whether every operand's stride along dimension pos is 1 or 0.
template <std::size_t N>
bool unit_or_zero_strides(const std::array<index_t*, N>& ops, int pos) {
  bool ok = true;
  for (index_t* s : ops) ok = ok && (s[pos] == 1 || s[pos] == 0);
  return ok;
}

inline constexpr int max_partials = 256;
inline constexpr int deterministic_parts = 64;  // <= max_partials

template <class Op, class E>
auto reduce_all(const E& e) {
  using V = value_t<E>;
  using W = typename Op::template wide<V>;
  const extents shape = expr_shape(e);
  auto ev = make_evaluator(e, shape);
  using Ev = decltype(ev);
  if (shape.numel() == 0) return Op::template identity<W>();
  auto ops = stride_table<0>(ev);
  const loop_space sp = coalesce(shape.data(), shape.size(), ops);
  FUSOR_COUNT_PASS();
  const int r = sp.rank;
  const index_t rows = sp.rows(), inner = sp.inner();
  const bool unit_or_zero = unit_or_zero_strides(ops, r - 1);

  W partial[max_partials];
  const int nt = std::min(threads_for(shape.numel()), max_partials);
  // one part per thread, or, in a deterministic context, a fixed count of parts dealt to the
  // team: the same sums in the same order whatever the thread count
  const bool fixed = current_context<cpu>().deterministic;
  const int fixed_parts = int(std::min<index_t>(deterministic_parts, r == 1 ? deterministic_parts : rows));
  int used = 1;
  run_team(r == 1 ? nt : int(std::min<index_t>(nt, rows)), [&](int t, int n) {
    Ev local = ev;
    const int parts = fixed ? fixed_parts : n;
    for (int part = t; part < parts; part += n) {
      W acc = Op::template identity<W>();
      if (r == 1) {
        local.seek(nullptr, 0);
        auto [b, end] = split_range(inner, part, parts, 64);
        if (b < end) acc = reduce_row_auto<Op, W>(local, b, end, unit_or_zero);
      } else {
        auto [rb, re] = split_range(rows, part, parts);
        index_t idx[max_rank] = {};
        if (rb < re) unravel(rb, idx, sp.dims, r - 1);
        for (index_t row = rb; row < re; ++row) {
          local.seek(idx, r - 1);
          acc = Op::combine(acc, reduce_row_auto<Op, W>(local, 0, inner, unit_or_zero));
          next_index(idx, sp.dims, r - 1);
        }
      }
      partial[part] = acc;
    }
    if (t == 0) used = parts;
  });
  W total = Op::template identity<W>();
  for (int t = 0; t < used; ++t) total = Op::combine(total, partial[t]);
  return total;
}

// Reorders the evaluator's dimensions: new dimension k is old dimension order[k].
template <class Ev>
void permute_dims(Ev& ev, const int* order, int n) {
  ev.visit_strides([&](index_t* s) {
    index_t tmp[max_rank];
    for (int k = 0; k < n; ++k) tmp[k] = s[order[k]];
    for (int k = 0; k < n; ++k) s[k] = tmp[k];
  });
}

// How a reduction along `axis` walks its input: the output's dimensions in loop order (with
// their strides in the output), then the reduced axis, then (in slab mode) the last axis.
struct axis_plan {
  int order[max_rank];
  index_t dims[max_rank];
  index_t out_strides[max_rank];
  int m = 0;          // output dimensions walked as rows
  index_t rows = 1;   // product of dims[0..m)

  axis_plan(const extents& shape, const extents& output_strides, int axis, bool slabs) {
    const int n = shape.size();
    for (int d = 0; d < n; ++d) {
      if (d == axis || (slabs && d == n - 1)) continue;
      order[m] = d;
      dims[m] = shape[d];
      out_strides[m] = output_strides[d < axis ? d : d - 1];
      rows *= shape[d];
      ++m;
    }
    order[m] = axis;
    if (slabs) order[m + 1] = n - 1;
  }
  index_t offset(const index_t* idx) const {
    index_t o = 0;
    for (int k = 0; k < m; ++k) o += idx[k] * out_strides[k];
    return o;
  }
};

// Runs row_fn(evaluator seeked to the row, output offset) for every output element when the
// reduced axis is innermost (the evaluator's dimensions already permuted to the plan's order).
template <class Ev, class RowFn>
void for_each_axis_row(const Ev& ev, const axis_plan& p, index_t work, RowFn row_fn) {
  run_team(int(std::min<index_t>(threads_for(work), p.rows)), [&](int t, int nt) {
    Ev local = ev;
    auto [rb, re] = split_range(p.rows, t, nt);
    index_t idx[max_rank] = {};
    if (rb < re) unravel(rb, idx, p.dims, p.m);
    for (index_t row = rb; row < re; ++row) {
      local.seek(idx, p.m);
      row_fn(local, p.offset(idx));
      next_index(idx, p.dims, p.m);
    }
  });
}

template <class Op, class T, class E>
void reduce_axis(const leaf<T, cpu>& out, const E& e, int axis) {
  using V = value_t<E>;
  using W = typename Op::template wide<V>;
  const extents shape = expr_shape(e);
  const int n = shape.size();
  const index_t K = shape[axis];
  auto ev = make_evaluator(e, shape);
  using Ev = decltype(ev);
  FUSOR_COUNT_PASS();

  // the other axes in output order, then the reduced axis innermost when it is the last axis
  // (one row per output element), or just before the last axis (slab accumulation)
  const bool slabs = axis != n - 1;
  const axis_plan p(shape, out.strides, axis, slabs);
  permute_dims(ev, p.order, n);
  auto ops = stride_table<0>(ev);
  if (out.shape.numel() == 0) return;
  const int m = p.m;

  if (!slabs) {
    const bool unit_or_zero = unit_or_zero_strides(ops, m);
    for_each_axis_row(ev, p, p.rows * K, [&](const Ev& row, index_t o) {
      out.data[o] = convert_element<T>(reduce_row_auto<Op, W>(row, 0, K, unit_or_zero));
    });
    return;
  }

  const index_t J = shape[n - 1], out_j = out.strides[n - 2];
  const bool unit_or_zero = unit_or_zero_strides(ops, m + 1);
  constexpr index_t chunk = 512;
  const index_t chunks = (J + chunk - 1) / chunk, items = p.rows * chunks;
  run_team(int(std::min<index_t>(threads_for(p.rows * K * J), items)), [&](int t, int nt) {
    Ev local = ev;
    auto [ib, ie] = split_range(items, t, nt);
    index_t idx[max_rank] = {};
    for (index_t item = ib; item < ie; ++item) {
      const index_t row = item / chunks, j0 = (item % chunks) * chunk, j1 = std::min(J, j0 + chunk);
      unravel(row, idx, p.dims, m);
      T* dst = out.data + p.offset(idx);
      bool done = false;
      if constexpr (packet_reducible<Op, Ev>) {
        if (unit_or_zero) {
          using L = accumulation_lane_t<V>;
          using P = packet_traits<L>;
          constexpr index_t w = index_t(P::size);
          alignas(64) L acc[chunk];
          std::fill(acc, acc + chunk, Op::template identity<L>());
          for (index_t k = 0; k < K; ++k) {
            idx[m] = k;
            local.seek(idx, m + 1);
            index_t j = j0;
            for (; j + w <= j1; j += w) {
              L* a = acc + (j - j0);
              P::store_aligned(a, packet_combine<Op>(P::load(a), accumulation_packet<V>(local.template packet<true, V>(j))));
            }
            for (; j < j1; ++j) acc[j - j0] = Op::combine(acc[j - j0], convert_element<L>(local.scalar(j)));
          }
          for (index_t j = j0; j < j1; ++j) dst[j * out_j] = convert_element<T>(acc[j - j0]);
          done = true;
        }
      }
      if (!done) {
        W acc[chunk];
        std::fill(acc, acc + chunk, Op::template identity<W>());
        for (index_t k = 0; k < K; ++k) {
          idx[m] = k;
          local.seek(idx, m + 1);
          for (index_t j = j0; j < j1; ++j) acc[j - j0] = Op::combine(acc[j - j0], convert_element<W>(local.scalar(j)));
        }
        for (index_t j = j0; j < j1; ++j) dst[j * out_j] = convert_element<T>(acc[j - j0]);
      }
    }
  });
}

// First position of the extreme value along a row; a NaN is extreme and ends the search.
template <bool Max, class Ev>
std::pair<typename Ev::value_type, index_t> arg_row(const Ev& ev, index_t n) {
  auto best = ev.scalar(0);
  index_t pos = 0;
  if (is_nan(best)) return {best, 0};
  for (index_t i = 1; i < n; ++i) {
    const auto x = ev.scalar(i);
    if (is_nan(x)) return {x, i};
    if (Max ? (x > best) : (x < best)) best = x, pos = i;
  }
  return {best, pos};
}

template <bool Max, class E>
index_t arg_extreme_all(const E& e) {
  const extents shape = expr_shape(e);
  auto ev = make_evaluator(e, shape);
  auto ops = stride_table<0>(ev);
  const loop_space sp = coalesce(shape.data(), shape.size(), ops);
  FUSOR_COUNT_PASS();
  const int r = sp.rank;
  const index_t rows = sp.rows(), inner = sp.inner();
  index_t idx[max_rank] = {};
  index_t best_pos = 0;
  auto best = decltype(arg_row<Max>(ev, 1).first){};
  for (index_t row = 0; row < rows; ++row) {
    ev.seek(idx, r - 1);
    auto [v, p] = arg_row<Max>(ev, inner);
    if (is_nan(v)) return row * inner + p;
    if (row == 0 || (Max ? (v > best) : (v < best))) best = v, best_pos = row * inner + p;
    next_index(idx, sp.dims, r - 1);
  }
  return best_pos;
}

template <bool Max, class E>
void arg_extreme_axis(const leaf<std::int64_t, cpu>& out, const E& e, int axis) {
  const extents shape = expr_shape(e);
  const int n = shape.size();
  const index_t K = shape[axis];
  auto ev = make_evaluator(e, shape);
  using Ev = decltype(ev);
  FUSOR_COUNT_PASS();
  const axis_plan p(shape, out.strides, axis, false);
  permute_dims(ev, p.order, n);
  for_each_axis_row(ev, p, p.rows * K, [&](const Ev& row, index_t o) { out.data[o] = arg_row<Max>(row, K).second; });
}

}  // namespace fusor::detail::cpu_exec

FUSOR_SIMD_DIAGNOSTICS_END
