#pragma once
// Running and counting reductions: cumsum, cumprod, diff, bincount, histogram.
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "sort.hpp"

namespace fusor {

namespace detail {
template <class X>
auto scan(const X& x, int axis, bool product) {
  const auto c = rows_last_readonly(x, axis);
  const auto r = c.view();
  using T = value_t<decltype(r)>;
  using B = backend_of_t<decltype(r)>;
  // integers accumulate in int64, unsigned ones in uint64 (NumPy's cumsum result types)
  using U = sum_result_t<T>;
  // float rows accumulate in double (then round per element): the error does not grow with n
  using Acc = std::conditional_t<std::is_same_v<U, float>, double,
                                 std::conditional_t<std::is_same_v<U, std::complex<float>>, std::complex<double>, U>>;
  array<U, B> out(r.shape());
  const index_t n = r.shape()[r.ndim() - 1];
  if (out.size() > 0) algorithms<B>::template scan_rows<Acc>(c.data(), r.size() / n, n, product, out.data());
  return rows_back(std::move(out), axis);
}
}  // namespace detail

/// Running sum along an axis (np.cumsum); integers accumulate in int64 (unsigned: uint64), float in double.
template <class X>
auto cumsum(const X& x, int axis) {
  return detail::scan(x, axis, false);
}
/// np.cumsum without an axis: over the flattened array.
template <class X>
auto cumsum(const X& x) {
  return detail::scan(flatten(x), 0, false);
}
/// Running product along an axis (np.cumprod).
template <class X>
auto cumprod(const X& x, int axis) {
  return detail::scan(x, axis, true);
}
template <class X>
auto cumprod(const X& x) {
  return detail::scan(flatten(x), 0, true);
}

/// n-th discrete difference along an axis (np.diff): x[1:] - x[:-1], n times; each is one fused pass.
template <class X>
auto diff(const X& x, int n = 1, int axis = -1) {
  if (n < 0) throw value_error("fusor: diff order must be >= 0, got " + std::to_string(n));
  auto cur = detail::owned_copy(x);
  const int ax = normalize_axis(axis, cur.ndim());
  for (int i = 0; i < n; ++i) {
    const index_t len = cur.shape()[ax];
    if (len == 0) break;
    const auto v = cur.view();
    auto next = eval(detail::slice_axis(v, ax, 1, len) - detail::slice_axis(v, ax, 0, len - 1));
    cur = std::move(next);
  }
  return cur;
}

/// Occurrences of each value 0..max(x) in a 1-d array of non-negative integers (np.bincount);
/// at least `minlength` bins. Returns int64 counts.
template <class X>
auto bincount(const X& x, index_t minlength = 0) {
  const auto c = detail::contiguous_of(x);
  using T = value_t<decltype(c.view())>;
  using B = backend_of_t<decltype(c.view())>;
  static_assert(integer<T>, "fusor: bincount needs integer values");
  if (c.view().ndim() != 1) throw shape_error("fusor: bincount needs a 1-d array, got shape " + to_string(c.view().shape()));
  if (minlength < 0) throw value_error("fusor: bincount minlength must be >= 0, got " + std::to_string(minlength));
  index_t bins = minlength;
  if (c.view().size() > 0) {
    const auto lo = min(c.view()), hi = max(c.view());
    if (lo < 0) throw value_error("fusor: bincount needs non-negative values, got " + std::to_string(lo));
    bins = std::max<index_t>(bins, index_t(hi) + 1);
  }
  array<std::int64_t, B> counts = zeros<std::int64_t, B>(extents{bins});
  algorithms<B>::bincount(c.data(), c.view().size(), static_cast<const std::int64_t*>(nullptr), counts.data());
  return counts;
}
/// Weighted bincount: the sum of weights[i] for each value (double results, like NumPy).
template <class X, expression W>
auto bincount(const X& x, const W& weights, index_t minlength = 0) {
  const auto c = detail::contiguous_of(x);
  using B = backend_of_t<decltype(c.view())>;
  const auto w = detail::contiguous_of(weights);
  if (w.view().shape() != c.view().shape())
    throw shape_error("fusor: bincount weights must have the values' shape " + to_string(c.view().shape()) + ", got " +
                      to_string(w.view().shape()));
  const auto counts = bincount(c.view(), minlength);
  array<double, B> out = zeros<double, B>(counts.shape());
  algorithms<B>::bincount(c.data(), c.view().size(), w.data(), out.data());
  return out;
}

/// The result of histogram: int64 counts per bin and the bins + 1 edges, in the input's float
/// type as NumPy gives them (float32 data: float32 edges; float64 and integers: float64).
template <class E, class B>
struct histogram_result {
  array<std::int64_t, B> counts;
  array<E, B> edges;
};
/// np.histogram with `bins` equal-width bins over [lo, hi] (the last bin includes hi; values
/// outside are ignored). With lo == hi == 0 (the default) the range is [min(x), max(x)].
template <class X>
auto histogram(const X& x, index_t bins = 10, double lo = 0, double hi = 0) {
  const auto c = detail::contiguous_of(x);
  using T = value_t<decltype(c.view())>;
  using B = backend_of_t<decltype(c.view())>;
  static_assert(!is_complex_v<T>, "fusor: histogram needs real values");
  if (bins <= 0) throw value_error("fusor: histogram needs a positive number of bins, got " + std::to_string(bins));
  if (lo == 0 && hi == 0) {  // no range given: the data's, or [0, 1] for no data (NumPy)
    if (c.view().size() > 0) {
      lo = double(min(c.view()));
      hi = double(max(c.view()));
    } else {
      hi = 1;
    }
  }
  if (!(std::isfinite(lo) && std::isfinite(hi)) || lo > hi)
    throw value_error("fusor: histogram range must be finite with lo <= hi, got [" + std::to_string(lo) + ", " +
                      std::to_string(hi) + "]");
  if (lo == hi) {  // NumPy widens an empty range by 0.5 each way
    lo -= 0.5;
    hi += 0.5;
  }
  using E = std::conditional_t<std::is_same_v<T, float>, float, double>;
  histogram_result<E, B> r{zeros<std::int64_t, B>(extents{bins}), linspace<E, B>(E(lo), E(hi), bins + 1)};
  algorithms<B>::histogram(c.data(), c.view().size(), r.edges.data(), bins, static_cast<const double*>(nullptr),
                           r.counts.data());
  return r;
}

}  // namespace fusor
