#pragma once
// Order statistics (median, quantile, percentile and their NaN-ignoring forms) and the statistics
// built from reductions (average, ptp, the nan- reductions), with NumPy's names, axis and
// keepdims rules, result types and errors.
//
// Quantiles work on a copy with the axis last. The backend's algorithms<B>::select_quantiles
// arranges each row so that the order statistics the quantiles need sit at their sorted
// positions (the cpu selects them with nth_element, O(n) per row; cuda sorts the rows), then one
// generator pass reads them and interpolates as NumPy's methods do. NaN sorts last: a plain
// quantile of a row holding NaN is NaN, a nan- quantile ignores them.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "order_statistics.hpp"
#include "reduce.hpp"
#include "sort.hpp"

namespace fusor {

namespace detail {
/// Quantiles are floating: float stays float, integers and bool give float64 (NumPy).
template <class T>
using quantile_result_t = std::conditional_t<std::is_floating_point_v<T>, T, double>;

/// Element k of the result is quantile q[k / rows] of row k % rows, read from rows arranged by
/// select_quantiles; valid[r] counts row r's non-NaN values (NaN sorts last).
template <class T, class R>
struct quantile_gen {
  using value_type = R;
  const T* rows;
  const std::int64_t* valid;
  const double* q;
  index_t nrows, n;
  quantile_method method;
  bool skip_nan;
  bool median;  // NumPy's median: the mean of the two middle values, not the midpoint's lerp (inf + inf)
  FUSOR_HD void fill(index_t first, R* out, index_t count) const {
    for (index_t i = 0; i < count; ++i) {
      const index_t k = first + i, qi = k / nrows, r = k % nrows;
      const index_t m = valid[r];
      if (m == 0 || (!skip_nan && m < n)) {
        out[i] = std::numeric_limits<R>::quiet_NaN();
        continue;
      }
      const quantile_position p = quantile_at(q[qi], m, method);
      const T* row = rows + r * n;
      const R lo = static_cast<R>(row[p.lo]), hi = static_cast<R>(row[p.hi]);
      out[i] = median ? (p.gamma == 0 ? lo : (lo + hi) / R(2)) : quantile_lerp(lo, hi, p.gamma);
    }
  }
};

inline void check_quantiles(const std::vector<double>& qs, const char* what) {
  for (double q : qs)
    if (!(q >= 0.0 && q <= 1.0))
      throw value_error(std::string("fusor: ") + what + " expects q in [0, 1], got " + std::to_string(q));
}

/// The quantiles qs of `rows` (rows x n, contiguous, rearranged in place), shaped (qs.size(), rows).
template <class T, class B>
array<quantile_result_t<T>, B> quantiles_of_rows(array<T, B>& rows, index_t nrows, index_t n,
                                                  const std::vector<double>& qs, quantile_method method, bool skip_nan,
                                                  bool median = false) {
  static_assert(!is_complex_v<T>, "fusor: quantiles, percentiles and medians need real values (NumPy rejects complex)");
  using R = quantile_result_t<T>;
  const index_t nq = index_t(qs.size());
  array<R, B> out(extents{nq, nrows});
  if (out.size() == 0) return out;
  array<std::int64_t, B> valid(extents{nrows});
  if constexpr (std::is_floating_point_v<T>) {
    if (n > 0) valid = sum(logical_not(isnan(reshape(rows.view(), extents{nrows, n}))), 1);
    else valid = std::int64_t(0);
  } else {
    valid = std::int64_t(n);
  }
  array<double, B> q(extents{nq});
  backend_memory<B>::copy_from_host(q.data(), qs.data(), nq);
  if (n > 0) algorithms<B>::select_quantiles(rows.data(), nrows, n, valid.data(), qs.data(), nq, method, skip_nan);
  out = generator_expr<quantile_gen<T, R>, B>{
      {rows.data(), valid.data(), q.data(), nrows, n, method, skip_nan, median}, extents{nq, nrows}, extents{nrows, 1}};
  return out;
}

/// Quantiles of the whole array: shape (qs.size()), or with keepdims (qs.size(), 1, ..., 1);
/// without the leading axis when drop_q (one q).
template <class X>
auto quantiles_whole(const X& x, const std::vector<double>& qs, quantile_method method, bool skip_nan, bool keepdims,
                     bool drop_q = false, bool median = false) {
  auto a = owned_copy(x);
  const int rank = a.ndim();
  auto out = quantiles_of_rows(a, 1, a.size(), qs, method, skip_nan, median);
  extents shape;
  if (!drop_q) shape.push_back(index_t(qs.size()));
  if (keepdims)
    for (int k = 0; k < rank; ++k) shape.push_back(1);
  return reshape(std::move(out), shape);
}
/// Quantiles along one axis: shape (qs.size(), the other axes), the axis kept as 1 with keepdims;
/// without the leading axis when drop_q (one q).
template <class X>
auto quantiles_along(const X& x, const std::vector<double>& qs, int axis, quantile_method method, bool skip_nan,
                     bool keepdims, bool drop_q = false, bool median = false) {
  const int requested = axis;
  extents in;
  auto rows = with_input(x, [&](const auto& v) {
    if (v.ndim() == 0)
      throw index_error("fusor: cannot take a quantile of a 0-dimensional array along axis " +
                        std::to_string(requested) + " (expected rank >= 1)");
    in = v.shape();
    return rows_last_view(v, axis);  // (normalises axis)
  });
  const index_t n = in[axis];
  index_t nrows = 1;
  for (int k = 0; k < in.size(); ++k)
    if (k != axis) nrows *= in[k];
  auto out = quantiles_of_rows(rows, nrows, n, qs, method, skip_nan, median);
  extents shape;
  if (!drop_q) shape.push_back(index_t(qs.size()));
  for (int k = 0; k < in.size(); ++k) {
    if (k != axis) shape.push_back(in[k]);
    else if (keepdims) shape.push_back(1);
  }
  return reshape(std::move(out), shape);
}
}  // namespace detail

// ---- quantile / percentile / median --------------------------------------------------------------
/// np.quantile(x, q, method=): the q-th quantile (q in [0, 1]) of all elements.
template <expression E>
auto quantile(const E& e, double q, quantile_method method = quantile_method::linear) {
  detail::check_quantiles({q}, "quantile");
  return detail::quantiles_whole(e, {q}, method, false, false, true).item();
}
/// Along an axis: the result drops the axis (kept as 1 with keepdims).
template <expression E>
auto quantile(const E& e, double q, int axis, bool keepdims = false, quantile_method method = quantile_method::linear) {
  detail::check_quantiles({q}, "quantile");
  return detail::quantiles_along(e, {q}, axis, method, false, keepdims, true);
}
/// Several quantiles at once (one selection pass per row): the result's first axis runs over qs.
template <expression E>
auto quantile(const E& e, const std::vector<double>& qs, quantile_method method = quantile_method::linear) {
  detail::check_quantiles(qs, "quantile");
  return detail::quantiles_whole(e, qs, method, false, false);
}
template <expression E>
auto quantile(const E& e, const std::vector<double>& qs, int axis, bool keepdims = false,
              quantile_method method = quantile_method::linear) {
  detail::check_quantiles(qs, "quantile");
  return detail::quantiles_along(e, qs, axis, method, false, keepdims);
}

namespace detail {
inline std::vector<double> percent_to_fraction(const std::vector<double>& ps, const char* what) {
  std::vector<double> qs;
  qs.reserve(ps.size());
  for (double p : ps) {
    if (!(p >= 0.0 && p <= 100.0))
      throw value_error(std::string("fusor: ") + what + " expects q in [0, 100], got " + std::to_string(p));
    qs.push_back(p / 100.0);
  }
  return qs;
}
}  // namespace detail

/// np.percentile(x, p, method=): quantile(x, p / 100), p in [0, 100].
template <expression E>
auto percentile(const E& e, double p, quantile_method method = quantile_method::linear) {
  return detail::quantiles_whole(e, detail::percent_to_fraction({p}, "percentile"), method, false, false, true).item();
}
template <expression E>
auto percentile(const E& e, double p, int axis, bool keepdims = false, quantile_method method = quantile_method::linear) {
  return detail::quantiles_along(e, detail::percent_to_fraction({p}, "percentile"), axis, method, false, keepdims, true);
}
template <expression E>
auto percentile(const E& e, const std::vector<double>& ps, quantile_method method = quantile_method::linear) {
  return detail::quantiles_whole(e, detail::percent_to_fraction(ps, "percentile"), method, false, false);
}
template <expression E>
auto percentile(const E& e, const std::vector<double>& ps, int axis, bool keepdims = false,
                quantile_method method = quantile_method::linear) {
  return detail::quantiles_along(e, detail::percent_to_fraction(ps, "percentile"), axis, method, false, keepdims);
}

/// np.median: the middle value (the mean of the two middle values for an even count), by
/// selection; NaN for an empty array or one holding NaN.
template <expression E>
auto median(const E& e) {
  return detail::quantiles_whole(e, {0.5}, quantile_method::midpoint, false, false, true, true).item();
}
template <expression E>
auto median(const E& e, int axis, bool keepdims = false) {
  return detail::quantiles_along(e, {0.5}, axis, quantile_method::midpoint, false, keepdims, true, true);
}

// ---- the NaN-ignoring forms ----------------------------------------------------------------------
/// np.nanquantile / np.nanpercentile / np.nanmedian: as above over the non-NaN values; NaN where
/// a slice has none (NumPy warns).
template <expression E>
auto nanquantile(const E& e, double q, quantile_method method = quantile_method::linear) {
  detail::check_quantiles({q}, "nanquantile");
  return detail::quantiles_whole(e, {q}, method, true, false, true).item();
}
template <expression E>
auto nanquantile(const E& e, double q, int axis, bool keepdims = false, quantile_method method = quantile_method::linear) {
  detail::check_quantiles({q}, "nanquantile");
  return detail::quantiles_along(e, {q}, axis, method, true, keepdims, true);
}
template <expression E>
auto nanquantile(const E& e, const std::vector<double>& qs, quantile_method method = quantile_method::linear) {
  detail::check_quantiles(qs, "nanquantile");
  return detail::quantiles_whole(e, qs, method, true, false);
}
template <expression E>
auto nanquantile(const E& e, const std::vector<double>& qs, int axis, bool keepdims = false,
                 quantile_method method = quantile_method::linear) {
  detail::check_quantiles(qs, "nanquantile");
  return detail::quantiles_along(e, qs, axis, method, true, keepdims);
}
template <expression E>
auto nanpercentile(const E& e, double p, quantile_method method = quantile_method::linear) {
  return detail::quantiles_whole(e, detail::percent_to_fraction({p}, "nanpercentile"), method, true, false, true).item();
}
template <expression E>
auto nanpercentile(const E& e, double p, int axis, bool keepdims = false,
                   quantile_method method = quantile_method::linear) {
  return detail::quantiles_along(e, detail::percent_to_fraction({p}, "nanpercentile"), axis, method, true, keepdims,
                                true);
}
template <expression E>
auto nanpercentile(const E& e, const std::vector<double>& ps, quantile_method method = quantile_method::linear) {
  return detail::quantiles_whole(e, detail::percent_to_fraction(ps, "nanpercentile"), method, true, false);
}
template <expression E>
auto nanpercentile(const E& e, const std::vector<double>& ps, int axis, bool keepdims = false,
                   quantile_method method = quantile_method::linear) {
  return detail::quantiles_along(e, detail::percent_to_fraction(ps, "nanpercentile"), axis, method, true, keepdims);
}
template <expression E>
auto nanmedian(const E& e) {
  return detail::quantiles_whole(e, {0.5}, quantile_method::midpoint, true, false, true, true).item();
}
template <expression E>
auto nanmedian(const E& e, int axis, bool keepdims = false) {
  return detail::quantiles_along(e, {0.5}, axis, quantile_method::midpoint, true, keepdims, true, true);
}

namespace detail {
/// x with NaN replaced by `fill` (a lazy node; integers have no NaN and pass as they are).
template <class N, class S>
auto nan_filled(const N& node, S fill) {
  using V = value_t<N>;
  if constexpr (std::is_floating_point_v<V> || is_complex_v<V>) return where(isnan(node), static_cast<V>(fill), node);
  else return node;
}
template <class N>
auto not_nan_count(const N& node) {
  return cast<std::int64_t>(logical_not(isnan(node)));
}
}  // namespace detail

/// np.nansum / np.nanprod: NaN counts as 0 (1 for the product); fused into the reduction's pass.
template <expression E>
auto nansum(const E& e) {
  return sum(detail::nan_filled(detail::to_node(e), 0));
}
template <expression E>
auto nansum(const E& e, int axis, bool keepdims = false) {
  return sum(detail::nan_filled(detail::to_node(e), 0), axis, keepdims);
}
template <expression E>
auto nanprod(const E& e) {
  return prod(detail::nan_filled(detail::to_node(e), 1));
}
template <expression E>
auto nanprod(const E& e, int axis, bool keepdims = false) {
  return prod(detail::nan_filled(detail::to_node(e), 1), axis, keepdims);
}

/// np.nanmean: the mean of the non-NaN values (NaN where there are none).
template <expression E>
auto nanmean(const E& e) {
  const auto node = detail::to_node(e);
  using M = detail::mean_result_t<value_t<decltype(node)>>;
  if constexpr (detail::stats_in_float32<M>) return detail::rounded_stat<M>(nanmean(cast<float>(node)));
  else {
    const auto total = convert_element<M>(sum(cast<M>(detail::nan_filled(node, 0))));
    const index_t count = sum(detail::not_nan_count(node));
    if (count == 0) return M(std::numeric_limits<real_t<M>>::quiet_NaN());
    return M(total / static_cast<real_t<M>>(count));
  }
}
template <expression E>
auto nanmean(const E& e, int axis, bool keepdims = false) {
  const auto node = detail::to_node(e);
  using M = detail::mean_result_t<value_t<decltype(node)>>;
  if constexpr (detail::stats_in_float32<M>) return detail::rounded_stat<M>(nanmean(cast<float>(node), axis, keepdims));
  else {
    auto total = sum(cast<M>(detail::nan_filled(node, 0)), axis, keepdims);
    const auto count = sum(detail::not_nan_count(node), axis, keepdims);
    total = total / cast<real_t<M>>(count);
    return total;
  }
}
/// np.nanvar / np.nanstd: two passes over the non-NaN values; ddof as in var, NaN where it leaves
/// no degrees of freedom (NumPy).
template <expression E>
auto nanvar(const E& e, ddof d = ddof(0)) {
  const auto node = detail::to_node(e);
  using M = detail::mean_result_t<value_t<decltype(node)>>;
  if constexpr (detail::stats_in_float32<M>) return detail::rounded_stat<M>(nanvar(cast<float>(node), d));
  else {
    using R = real_t<M>;
    const M m = nanmean(node);
    const index_t count = sum(detail::not_nan_count(node));
    const auto dev = cast<M>(node) - m;
    R ss;
    if constexpr (is_complex_v<M>) ss = sum(where(isnan(dev), R(0), square(abs(dev))));
    else ss = sum(where(isnan(dev), R(0), square(dev)));
    if (count - d.value <= 0) return std::numeric_limits<R>::quiet_NaN();  // NumPy: NaN, not inf
    return ss / detail::dof<R>(count, d.value);
  }
}
template <expression E>
auto nanvar(const E& e, int axis, ddof d, bool keepdims = false) {
  const auto node = detail::to_node(e);
  using M = detail::mean_result_t<value_t<decltype(node)>>;
  if constexpr (detail::stats_in_float32<M>) return detail::rounded_stat<M>(nanvar(cast<float>(node), axis, d, keepdims));
  else {
    using R = real_t<M>;
    const extents s = expr_shape(node);
    if (s.size() == 0) throw index_error("fusor: cannot reduce a 0-dimensional expression along axis " + std::to_string(axis));
    const int ax = normalize_axis(axis, s.size());
    const auto m = nanmean(node, ax, true);
    const auto dev = cast<M>(node) - m;
    array<R, detail::reduce_backend_t<E>> out;
    if constexpr (is_complex_v<M>) out = sum(where(isnan(dev), R(0), square(abs(dev))), ax, keepdims);
    else out = sum(where(isnan(dev), R(0), square(dev)), ax, keepdims);
    const auto count = sum(detail::not_nan_count(node), ax, keepdims);
    out = where(count - std::int64_t(d.value) <= std::int64_t(0), std::numeric_limits<R>::quiet_NaN(),
                out / cast<R>(count - std::int64_t(d.value)));
    return out;
  }
}
template <expression E>
auto nanvar(const E& e, int axis, bool keepdims = false) {
  return nanvar(e, axis, ddof(0), keepdims);
}
template <expression E>
auto nanstd(const E& e, ddof d = ddof(0)) {
  using std::sqrt;
  using V = value_t<node_t<E>>;
  if constexpr (detail::stats_in_float32<V>) return detail::rounded_stat<V>(nanstd(cast<float>(detail::to_node(e)), d));
  else return sqrt(nanvar(e, d));
}
template <expression E>
auto nanstd(const E& e, int axis, ddof d, bool keepdims = false) {
  using V = value_t<node_t<E>>;
  if constexpr (detail::stats_in_float32<V>) {
    return detail::rounded_stat<V>(nanstd(cast<float>(detail::to_node(e)), axis, d, keepdims));
  } else {
    auto v = nanvar(e, axis, d, keepdims);
    v = sqrt(v);
    return v;
  }
}
template <expression E>
auto nanstd(const E& e, int axis, bool keepdims = false) {
  return nanstd(e, axis, ddof(0), keepdims);
}

/// np.nanmax / np.nanmin: the extreme of the non-NaN values; NaN for an all-NaN slice (NumPy
/// warns); an empty array raises, as max does.
template <expression E>
auto nanmax(const E& e) {
  const auto node = detail::nonempty_node(e, "nanmax");
  using V = value_t<decltype(node)>;
  if constexpr (std::is_floating_point_v<V>) {
    if (sum(detail::not_nan_count(node)) == 0) return std::numeric_limits<V>::quiet_NaN();
    return max(detail::nan_filled(node, -std::numeric_limits<V>::infinity()));
  } else {
    return max(node);
  }
}
template <expression E>
auto nanmin(const E& e) {
  const auto node = detail::nonempty_node(e, "nanmin");
  using V = value_t<decltype(node)>;
  if constexpr (std::is_floating_point_v<V>) {
    if (sum(detail::not_nan_count(node)) == 0) return std::numeric_limits<V>::quiet_NaN();
    return min(detail::nan_filled(node, std::numeric_limits<V>::infinity()));
  } else {
    return min(node);
  }
}
namespace detail {
template <bool Max, class N>
auto nan_extreme_along(const N& node, int axis, bool keepdims) {
  using V = value_t<N>;
  if constexpr (std::is_floating_point_v<V>) {
    constexpr V fill = Max ? -std::numeric_limits<V>::infinity() : std::numeric_limits<V>::infinity();
    auto out = Max ? max(nan_filled(node, fill), axis, keepdims) : min(nan_filled(node, fill), axis, keepdims);
    const auto count = sum(not_nan_count(node), axis, keepdims);
    out = where(count == 0, std::numeric_limits<V>::quiet_NaN(), out);
    return out;
  } else {
    return Max ? max(node, axis, keepdims) : min(node, axis, keepdims);
  }
}
}  // namespace detail
template <expression E>
auto nanmax(const E& e, int axis, bool keepdims = false) {
  return detail::nan_extreme_along<true>(detail::to_node(e), axis, keepdims);
}
template <expression E>
auto nanmin(const E& e, int axis, bool keepdims = false) {
  return detail::nan_extreme_along<false>(detail::to_node(e), axis, keepdims);
}

/// np.nanargmax / np.nanargmin: the index of the extreme non-NaN value; an all-NaN slice raises
/// value_error, as NumPy does (NaN is replaced by -inf / +inf first, NumPy's own rule).
namespace detail {
template <bool Max, class N>
std::int64_t nan_arg_whole(const N& node) {
  using V = value_t<N>;
  require_nonempty(node, Max ? "nanargmax" : "nanargmin");
  if constexpr (std::is_floating_point_v<V>) {
    if (sum(not_nan_count(node)) == 0)
      throw value_error(std::string("fusor: ") + (Max ? "nanargmax" : "nanargmin") +
                        " of an all-NaN array is undefined (NumPy raises too)");
    constexpr V fill = Max ? -std::numeric_limits<V>::infinity() : std::numeric_limits<V>::infinity();
    return Max ? argmax(nan_filled(node, fill)) : argmin(nan_filled(node, fill));
  } else {
    return Max ? argmax(node) : argmin(node);
  }
}
template <bool Max, class N>
auto nan_arg_along(const N& node, int axis, bool keepdims) {
  using V = value_t<N>;
  if constexpr (std::is_floating_point_v<V>) {
    const extents s = expr_shape(node);
    if (s.size() > 0 && s.numel() > 0 && !all(sum(not_nan_count(node), axis) > std::int64_t(0)))
      throw value_error(std::string("fusor: ") + (Max ? "nanargmax" : "nanargmin") + " along axis " +
                        std::to_string(axis) + " met an all-NaN slice (NumPy raises too); shape " + to_string(s));
    constexpr V fill = Max ? -std::numeric_limits<V>::infinity() : std::numeric_limits<V>::infinity();
    return Max ? argmax(nan_filled(node, fill), axis, keepdims) : argmin(nan_filled(node, fill), axis, keepdims);
  } else {
    return Max ? argmax(node, axis, keepdims) : argmin(node, axis, keepdims);
  }
}
}  // namespace detail
template <expression E>
std::int64_t nanargmax(const E& e) {
  return detail::nan_arg_whole<true>(detail::to_node(e));
}
template <expression E>
std::int64_t nanargmin(const E& e) {
  return detail::nan_arg_whole<false>(detail::to_node(e));
}
template <expression E>
auto nanargmax(const E& e, int axis, bool keepdims = false) {
  return detail::nan_arg_along<true>(detail::to_node(e), axis, keepdims);
}
template <expression E>
auto nanargmin(const E& e, int axis, bool keepdims = false) {
  return detail::nan_arg_along<false>(detail::to_node(e), axis, keepdims);
}

// ---- ptp / average -------------------------------------------------------------------------------
/// np.ptp: max - min ("peak to peak"), in the input's type (integers wrap, as in NumPy).
template <expression E>
auto ptp(const E& e) {
  const auto node = detail::nonempty_node(e, "ptp");
  using V = value_t<decltype(node)>;
  static_assert(!std::is_same_v<V, bool>, "fusor: ptp of bool values is not defined (NumPy rejects boolean subtract)");
  return subtract_fn{}(V(max(node)), V(min(node)));
}
template <expression E>
auto ptp(const E& e, int axis, bool keepdims = false) {
  const auto node = detail::to_node(e);
  auto hi = max(node, axis, keepdims);
  hi = hi - min(node, axis, keepdims);
  return hi;
}

/// np.average(x, weights=w): sum(x w) / sum(w) over all elements; w has x's shape.
template <expression E, expression W>
auto average(const E& e, const W& w) {
  const auto x = detail::to_node(e);
  const auto wn = detail::to_node(w);
  if (expr_shape(x) != expr_shape(wn))
    throw shape_error("fusor: average over all elements needs weights of the data's shape " +
                      to_string(expr_shape(x)) + ", got " + to_string(expr_shape(wn)) +
                      " (a 1-d weight vector goes with an axis)");
  using M = detail::mean_result_t<promote_t<value_t<decltype(x)>, value_t<decltype(wn)>>>;
  if constexpr (detail::stats_in_float32<M>) return detail::rounded_stat<M>(average(cast<float>(x), cast<float>(wn)));
  else {
    const M total_w = convert_element<M>(sum(cast<M>(wn)));
    if (total_w == M(0))
      throw value_error("fusor: average's weights sum to zero, so they cannot be normalised (NumPy raises "
                        "ZeroDivisionError)");
    const M total = convert_element<M>(sum(cast<M>(x) * cast<M>(wn)));
    return M(total / total_w);
  }
}
/// Along an axis: w has x's shape, or is 1-d with the axis's length (NumPy's two forms).
template <expression E, expression W>
auto average(const E& e, const W& w, int axis, bool keepdims = false) {
  const auto x = detail::to_node(e);
  const auto wc = detail::contiguous_of(w);
  const auto wv = wc.view();
  const extents s = expr_shape(x);
  if (s.size() == 0) throw index_error("fusor: cannot average a 0-dimensional expression along axis " + std::to_string(axis));
  const int ax = normalize_axis(axis, s.size());
  using M = detail::mean_result_t<promote_t<value_t<decltype(x)>, value_t<decltype(wv)>>>;
  using C = std::conditional_t<detail::stats_in_float32<M>, float, M>;  // what the sums are computed in
  extents ws;
  if (wv.shape() == s) {
    ws = s;
  } else if (wv.ndim() == 1 && wv.shape()[0] == s[ax]) {
    ws = extents{};
    for (int k = 0; k < s.size(); ++k) ws.push_back(k == ax ? s[ax] : 1);
  } else {
    throw shape_error("fusor: average along axis " + std::to_string(axis) + " of shape " + to_string(s) +
                      " needs weights of that shape or 1-d of length " + std::to_string(s[ax]) + ", got " +
                      to_string(wv.shape()));
  }
  const auto wb = reshape(wv, ws);
  auto total_w = sum(cast<C>(broadcast_to(wb, s)), ax, keepdims);
  if (total_w.size() > 0 && any(total_w == C(0)))
    throw value_error("fusor: average's weights sum to zero along axis " + std::to_string(axis) +
                      ", so they cannot be normalised (NumPy raises ZeroDivisionError)");
  auto total = sum(cast<C>(x) * cast<C>(wb), ax, keepdims);
  total = total / total_w;
  if constexpr (detail::stats_in_float32<M>) return detail::rounded_stat<M>(total);
  else return total;
}
/// np.average without weights: the mean.
template <expression E>
auto average(const E& e) {
  return mean(e);
}

}  // namespace fusor
