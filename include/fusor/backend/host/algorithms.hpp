#pragma once
// Host loops for core/indexing.hpp, core/sort.hpp and core/scan.hpp: plain loops over contiguous
// rows, rows split over threads (OpenMP) where each row is independent. Orderings follow NumPy:
// NaN sorts last, complex numbers order by (real, imag), sorts are stable.
//
// They are algorithms<cpu> (backend/cpu/algorithms.hpp) and the cuda backend's host round trips
// (nonzero, unique, searchsorted, bincount: backend/cuda/algorithms.cuh), so both backends give
// the same results from one code; this folder names no backend tag. How many threads a loop
// may use is the backend's to say (a Team, below): the cpu's set_num_threads and context cap.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <functional>
#include <numeric>
#include <queue>
#include <type_traits>
#include <vector>

#include "../../core/backend.hpp"
#include "../../core/dtype.hpp"
#include "../../core/order_statistics.hpp"

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace fusor {

namespace detail {
template <class T>
bool is_nan_element(const T& x) {
  if constexpr (std::is_floating_point_v<T>) return std::isnan(x);
  else if constexpr (is_complex_v<T>) return std::isnan(x.real()) || std::isnan(x.imag());
  else return false;
}
/// NumPy's sort order: a < b, with NaN after every number; complex by (real, imag).
template <class T>
bool sort_less(const T& a, const T& b) {
  if constexpr (is_complex_v<T>) {
    const bool na = is_nan_element(a), nb = is_nan_element(b);
    if (na || nb) return !na && nb;
    return a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag());
  } else if constexpr (std::is_floating_point_v<T>) {
    return a < b || (!std::isnan(a) && std::isnan(b));
  } else {
    return a < b;
  }
}
template <class T>
bool sort_equal(const T& a, const T& b) {
  return !sort_less(a, b) && !sort_less(b, a);
}
/// Puts the elements of row[0, m) that belong at the sorted positions pos (ascending, distinct)
/// there, each smaller one before it and each larger after: nth_element on what is left right of
/// the previous position, or one minimum search when the position is the next one (a quantile's
/// two neighbours). O(m) expected for a few positions.
template <class It, class Less>
void select_positions(It row, index_t m, const index_t* pos, index_t npos, Less less) {
  index_t start = 0;
  for (index_t i = 0; i < npos; ++i) {
    const index_t k = pos[i];
    if (k < start || k >= m) continue;
    if (k == start) std::iter_swap(row + k, std::min_element(row + k, row + m, less));
    else std::nth_element(row + start, row + k, row + m, less);
    start = k + 1;
  }
}
}  // namespace detail

namespace detail::host {
/// A Team for the loops below when the caller has no thread setting of its own: OpenMP's default
/// (OMP_NUM_THREADS or every core). The cuda backend's host round trips use it.
struct openmp_default_team {
  static int threads() {
#if defined(_OPENMP)
    return omp_get_max_threads();
#else
    return 1;
#endif
  }
};

/// The loops on host memory, one static member per algorithms<B> entry (core/algorithms_fwd.hpp).
/// A parallel loop runs on at most Team::threads() threads (read once per call, on the calling
/// thread: a cap set in this thread's execution context applies).
template <class Team>
struct algorithms {
  /// dst[o, i, r] = src[o, idx[i], r] for idx already checked and made non-negative.
  template <class T>
  static void gather(const T* src, index_t outer, index_t n, index_t inner, const std::int64_t* idx, index_t m,
                     T* dst) {
#pragma omp parallel for num_threads(Team::threads()) schedule(static) if (outer * m * inner > (1 << 16))
    for (index_t o = 0; o < outer; ++o)
      for (index_t i = 0; i < m; ++i)
        std::copy_n(src + (o * n + idx[i]) * inner, inner, dst + (o * m + i) * inner);
  }
  /// dst[o, idx[i], r] (+)= src[o, i, r]; later indices win (or all add up) as in NumPy.
  template <class T>
  static void scatter(T* dst, index_t outer, index_t n, index_t inner, const std::int64_t* idx, index_t m,
                      const T* src, bool add) {
    for (index_t o = 0; o < outer; ++o)
      for (index_t i = 0; i < m; ++i) {
        T* d = dst + (o * n + idx[i]) * inner;
        const T* s = src + (o * m + i) * inner;
        if (add)
          for (index_t r = 0; r < inner; ++r) d[r] += s[r];
        else
          std::copy_n(s, inner, d);
      }
  }
  /// dst[to[k], :] += src[from[k], :] for k in [0, m), rows of `inner` elements, `to` in runs of
  /// one row starting at starts[0, runs): each run's rows are added in order of k, runs in
  /// parallel (they write different rows).
  template <class T>
  static void add_row_runs(T* dst, index_t inner, const std::int64_t* to, const std::int64_t* starts, index_t runs,
                           index_t m, const T* src, const std::int64_t* from) {
#pragma omp parallel for num_threads(Team::threads()) schedule(dynamic, 16) if (m * inner > (1 << 16))
    for (index_t r = 0; r < runs; ++r) {
      const index_t k1 = r + 1 < runs ? index_t(starts[r + 1]) : m;
      T* d = dst + to[starts[r]] * inner;
      for (index_t k = index_t(starts[r]); k < k1; ++k) {
        const T* s = src + from[k] * inner;
        for (index_t i = 0; i < inner; ++i) d[i] += s[i];
      }
    }
  }
  /// The first out-of-range index in idx[0, m) (as given), or m when all are in [-n, n); negative
  /// ones are wrapped in place.
  static index_t wrap_indices(std::int64_t* idx, index_t m, index_t n) {
    for (index_t i = 0; i < m; ++i) {
      if (idx[i] < -n || idx[i] >= n) return i;
      if (idx[i] < 0) idx[i] += n;
    }
    return m;
  }
  /// Positions (flat, C order) of the nonzero elements.
  template <class T>
  static std::vector<std::int64_t> flat_nonzero(const T* x, index_t n) {
    std::vector<std::int64_t> out;
    for (index_t i = 0; i < n; ++i)
      if (x[i] != T(0)) out.push_back(i);
    return out;
  }
  template <class T>
  static index_t count_nonzero(const T* x, index_t n) {
    index_t c = 0;
#pragma omp parallel for num_threads(Team::threads()) reduction(+ : c) schedule(static) if (n > (1 << 16))
    for (index_t i = 0; i < n; ++i) c += x[i] != T(0);
    return c;
  }
  /// dst <- x[mask] (both contiguous, same size); returns the count written.
  template <class T>
  static index_t compress(const T* x, const bool* mask, index_t n, T* dst) {
    index_t c = 0;
    for (index_t i = 0; i < n; ++i)
      if (mask[i]) dst[c++] = x[i];
    return c;
  }
  /// x[mask] <- values (in order).
  template <class T>
  static void expand(T* x, const bool* mask, index_t n, const T* values) {
    index_t c = 0;
    for (index_t i = 0; i < n; ++i)
      if (mask[i]) x[i] = values[c++];
  }

  /// Sorts each of `rows` rows of length n in place. (Stability is invisible for values alone,
  /// so this is std::sort.)
  template <class T>
  static void sort_rows(T* x, index_t rows, index_t n) {
#pragma omp parallel for num_threads(Team::threads()) schedule(dynamic) if (rows > 1 && rows * n > (1 << 15))
    for (index_t r = 0; r < rows; ++r)
      std::sort(x + r * n, x + (r + 1) * n, [](const T& a, const T& b) { return detail::sort_less(a, b); });
  }
  /// np.partition of each row: the elements at the positions kth (ascending, distinct, in range)
  /// are those a sort would put there; smaller ones before, larger after. Selection, no sort.
  template <class T>
  static void partition_rows(T* x, index_t rows, index_t n, const index_t* kth, index_t nk) {
#pragma omp parallel for num_threads(Team::threads()) schedule(dynamic) if (rows > 1 && rows * n > (1 << 15))
    for (index_t r = 0; r < rows; ++r)
      detail::select_positions(x + r * n, n, kth, nk, [](const T& a, const T& b) { return detail::sort_less(a, b); });
  }
  /// np.argpartition of each row: the indices that would partition it (ties in any order, as in NumPy).
  template <class T>
  static void argpartition_rows(const T* x, index_t rows, index_t n, const index_t* kth, index_t nk, std::int64_t* out) {
#pragma omp parallel for num_threads(Team::threads()) schedule(dynamic) if (rows > 1 && rows * n > (1 << 15))
    for (index_t r = 0; r < rows; ++r) {
      std::int64_t* o = out + r * n;
      const T* row = x + r * n;
      std::iota(o, o + n, std::int64_t{0});
      detail::select_positions(o, n, kth, nk,
                               [row](std::int64_t a, std::int64_t b) { return detail::sort_less(row[a], row[b]); });
    }
  }
  /// For quantiles: arranges each row so that the order statistics NumPy's `method` reads for
  /// the quantiles qs, over the row's valid[r] non-NaN values, sit at their sorted positions, the
  /// NaNs after them (rows whose quantile is NaN anyway are left as they are). Selection: O(n)
  /// per row for a few quantiles, where a sort is O(n log n).
  template <class T>
  static void select_quantiles(T* x, index_t rows, index_t n, const std::int64_t* valid, const double* qs, index_t nq,
                               quantile_method method, bool skip_nan) {
#pragma omp parallel for num_threads(Team::threads()) schedule(dynamic) if (rows > 1 && rows * n > (1 << 15))
    for (index_t r = 0; r < rows; ++r) {
      T* row = x + r * n;
      const index_t m = valid[r];
      if (m == 0 || (!skip_nan && m < n)) continue;
      if (m < n) std::partition(row, row + n, [](const T& v) { return !detail::is_nan_element(v); });
      std::vector<index_t> need;
      need.reserve(std::size_t(2 * nq));
      for (index_t i = 0; i < nq; ++i) {
        const auto p = detail::quantile_at(qs[i], m, method);
        need.push_back(p.lo);
        need.push_back(p.hi);
      }
      std::sort(need.begin(), need.end());
      need.erase(std::unique(need.begin(), need.end()), need.end());
      detail::select_positions(row, m, need.data(), index_t(need.size()), [](const T& a, const T& b) { return a < b; });
    }
  }
  /// Stable argsort of each row: std::sort on (value, index), which orders equal values by
  /// position, so no merge buffer is needed.
  template <class T>
  static void argsort_rows(const T* x, index_t rows, index_t n, std::int64_t* out) {
#pragma omp parallel for num_threads(Team::threads()) schedule(dynamic) if (rows > 1 && rows * n > (1 << 15))
    for (index_t r = 0; r < rows; ++r) {
      std::int64_t* o = out + r * n;
      const T* row = x + r * n;
      std::iota(o, o + n, std::int64_t{0});
      std::sort(o, o + n, [row](std::int64_t a, std::int64_t b) {
        if (detail::sort_less(row[a], row[b])) return true;
        return a < b && !detail::sort_less(row[b], row[a]);
      });
    }
  }
  /// The k largest (or smallest) of each row with their indices, best first; ties go to the
  /// lower index. A bounded heap: O(n log k) time and O(k) memory per row, no full sort.
  template <class T>
  static void topk_rows(const T* x, index_t rows, index_t n, index_t k, bool largest, T* values, std::int64_t* indices) {
#pragma omp parallel for num_threads(Team::threads()) schedule(dynamic) if (rows > 1 && rows * n > (1 << 15))
    for (index_t r = 0; r < rows; ++r) {
      const T* row = x + r * n;
      // "a ranks before b": larger (or smaller) value first, then lower index; NaN counts as the
      // largest value, as in NumPy's sort order
      auto before = [row, largest](std::int64_t a, std::int64_t b) {
        const T& va = row[a];
        const T& vb = row[b];
        if (largest ? detail::sort_less(vb, va) : detail::sort_less(va, vb)) return true;
        if (detail::sort_equal(va, vb)) return a < b;
        return false;
      };
      // max-heap on "ranks after": the top is the worst of the kept k
      std::vector<std::int64_t> heap;
      heap.reserve(std::size_t(k));
      const index_t fill = std::min(k, n);
      for (index_t i = 0; i < fill; ++i) {
        heap.push_back(i);
        std::push_heap(heap.begin(), heap.end(), before);
      }
      // the scan, with the direction a template parameter so the hot comparison has no branch
      auto scan = [&]<bool Largest>(std::bool_constant<Largest>) {
        T worst = row[heap.front()];  // cached: the loop mostly compares against it
        for (index_t i = fill; i < n; ++i) {
          if constexpr (!is_complex_v<T>) {
            // fast rejection of a value plainly worse than the worst kept one; NaNs and ties
            // fall through to the exact comparison
            if (Largest ? row[i] < worst : worst < row[i]) continue;
          }
          if (before(i, heap.front())) {
            std::pop_heap(heap.begin(), heap.end(), before);
            heap.back() = i;
            std::push_heap(heap.begin(), heap.end(), before);
            worst = row[heap.front()];
          }
        }
      };
      if (k > 0) {
        if (largest) scan(std::true_type{});
        else scan(std::false_type{});
      }
      std::sort_heap(heap.begin(), heap.end(), before);
      for (index_t j = 0; j < k; ++j) {
        indices[r * k + j] = heap[std::size_t(j)];
        values[r * k + j] = row[heap[std::size_t(j)]];
      }
    }
  }
  /// The number of distinct values, given the stable sorting permutation `order` of x.
  template <class T>
  static index_t count_runs(const T* x, const std::int64_t* order, index_t n) {
    index_t u = 0;
    for (index_t i = 0; i < n; ++i) u += i == 0 || !detail::sort_equal(x[order[i]], x[order[i - 1]]);
    return u;
  }
  /// unique's outputs from the stable sorting permutation: the first index of a value is the
  /// first of its run (stability keeps input order within a run).
  template <class T>
  static void fill_unique(const T* x, const std::int64_t* order, index_t n, T* values, std::int64_t* counts,
                          std::int64_t* first, std::int64_t* inverse) {
    index_t j = -1;
    for (index_t i = 0; i < n; ++i) {
      if (i == 0 || !detail::sort_equal(x[order[i]], x[order[i - 1]])) {
        ++j;
        values[j] = x[order[i]];
        counts[j] = 0;
        first[j] = order[i];
      }
      ++counts[j];
      inverse[order[i]] = j;
    }
  }
  /// Cumulative sum or product of each row, accumulated in Acc and rounded to U per element.
  template <class Acc, class T, class U>
  static void scan_rows(const T* x, index_t rows, index_t n, bool product, U* out) {
#pragma omp parallel for num_threads(Team::threads()) schedule(static) if (rows > 1 && rows * n > (1 << 16))
    for (index_t r = 0; r < rows; ++r) {
      Acc acc = product ? Acc(1) : Acc(0);
      for (index_t i = 0; i < n; ++i) {
        if (product) acc *= Acc(x[r * n + i]);
        else acc += Acc(x[r * n + i]);
        out[r * n + i] = U(acc);
      }
    }
  }
  /// For each value, the insertion point in the sorted row a[0, n) (left: first position where
  /// it fits, right: last).
  template <class T, class V>
  static void searchsorted(const T* a, index_t n, const V* v, index_t m, bool right, std::int64_t* out) {
#pragma omp parallel for num_threads(Team::threads()) schedule(static) if (m > (1 << 14))
    for (index_t i = 0; i < m; ++i) {
      using C = promote_t<T, V>;  // compare as NumPy does: 2.5 goes between 2 and 3 of an int array
      const C x = C(v[i]);
      const T* p = right ? std::upper_bound(a, a + n, x, [](const C& q, const T& e) { return detail::sort_less(q, C(e)); })
                         : std::lower_bound(a, a + n, x, [](const T& e, const C& q) { return detail::sort_less(C(e), q); });
      out[i] = p - a;
    }
  }
  /// counts[x[i]] += w[i] (w null: 1); values already checked to lie in [0, bins).
  template <class I, class W, class C>
  static void bincount(const I* x, index_t n, const W* w, C* counts) {
    for (index_t i = 0; i < n; ++i) counts[x[i]] += w ? C(w[i]) : C(1);
  }
  /// Equal-width histogram of finite values in [lo, hi] (the last bin includes hi, as NumPy).
  /// edges: bins + 1 increasing values; the bin is computed, then corrected against the edges
  /// so that a value on an edge always lands in the bin that edge opens.
  template <class T, class E, class W, class C>
  static void histogram(const T* x, index_t n, const E* edges, index_t bins, const W* w, C* counts) {
    const double lo = double(edges[0]), hi = double(edges[bins]), scale = double(bins) / (hi - lo);
    for (index_t i = 0; i < n; ++i) {
      const double v = double(x[i]);
      if (!(v >= lo && v <= hi)) continue;
      index_t b = std::min<index_t>(index_t((v - lo) * scale), bins - 1);
      if (v < double(edges[b])) --b;
      else if (b + 1 < bins && v >= double(edges[b + 1])) ++b;
      counts[b] += w ? C(w[i]) : C(1);
    }
  }
};
}  // namespace detail::host

}  // namespace fusor
