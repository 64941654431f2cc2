#pragma once
// Sorting and searching along an axis: sort, stable argsort, partition and argpartition
// (selection), topk (k << n without a full sort),
// unique (with counts, inverse and first indices), searchsorted. Orderings follow NumPy: NaN
// last, complex by (real, imag). Each works on rows with the axis moved last and contiguous, and
// calls the backend's algorithms<B>.
#include <cstdint>
#include <string>
#include <utility>
#include <algorithm>
#include <vector>

#include "indexing.hpp"

namespace fusor {

namespace detail {
/// A contiguous copy of x with `axis` moved last: the layout every row kernel reads.
template <class T, class B>
array<T, B> rows_last_view(const array_view<T, B>& v, int& axis) {
  if (v.ndim() == 0) throw shape_error("fusor: sorting needs an array of rank >= 1, got a 0-d array");
  axis = normalize_axis(axis, v.ndim());
  return array<T, B>(moveaxis(v, axis, -1));
}
template <class X>
auto rows_last(const X& x, int& axis) {
  return with_input(x, [&](const auto& v) { return rows_last_view(v, axis); });
}
/// Read-only rows: x's own memory when the axis is already last and x is contiguous, else a
/// copy laid out that way (argsort, topk and scans only read their input). A 0-d input is read
/// as one element of rank 1, as NumPy's argsort and cumsum do (axis 0 or -1; others raise).
template <class X>
auto rows_last_readonly(const X& x, int& axis) {
  auto ready = [&](const auto& v) {
    if (v.ndim() == 0 || normalize_axis(axis, v.ndim()) != v.ndim() - 1 || !v.is_contiguous()) return false;
    axis = v.ndim() - 1;
    return true;
  };
  auto one_element = [&](const auto& v) {
    axis = normalize_axis(axis, 1);
    return std::remove_cvref_t<decltype(v)>(v.data(), extents{1}, extents{1});
  };
  if constexpr (is_view_v<X> || is_array_v<X>) {
    const auto v = part_view(x);
    using C = contiguous<value_t<decltype(v)>, backend_of_t<decltype(v)>>;
    if (v.ndim() == 0) return C(one_element(v));
    return ready(v) ? C(v) : C(rows_last_view(v, axis));
  } else {
    auto tmp = eval(x);
    using C = contiguous<value_t<decltype(tmp)>, backend_of_t<decltype(tmp)>>;
    if (tmp.ndim() == 0) return C(one_element(tmp.view()).copy());
    if (ready(tmp.view())) return C(std::move(tmp));  // the evaluation is already the layout
    return C(rows_last_view(tmp.view(), axis));
  }
}
/// r (axis last) back into the caller's axis order.
template <class T, class B>
array<T, B> rows_back(array<T, B>&& r, int axis) {
  if (axis == r.ndim() - 1) return std::move(r);
  return array<T, B>(moveaxis(r, -1, axis));
}
}  // namespace detail

/// A sorted copy along an axis (np.sort; stable, NaN last).
template <class X>
auto sort(const X& x, int axis = -1) {
  auto r = detail::rows_last(x, axis);
  using T = value_t<decltype(r)>;
  using B = backend_of_t<decltype(r)>;
  const index_t n = r.ndim() ? r.shape()[r.ndim() - 1] : 1;
  if (r.size() > 0) algorithms<B>::template sort_rows<T>(r.data(), r.size() / n, n);
  return detail::rows_back(std::move(r), axis);
}
/// The indices that sort x along an axis (np.argsort(kind="stable")): equal elements keep their order.
template <class X>
auto argsort(const X& x, int axis = -1) {
  const auto c = detail::rows_last_readonly(x, axis);
  const auto r = c.view();
  using B = backend_of_t<decltype(r)>;
  array<std::int64_t, B> out(r.shape());
  const index_t n = r.shape()[r.ndim() - 1];
  if (r.size() > 0) algorithms<B>::argsort_rows(c.data(), r.size() / n, n, out.data());
  return detail::rows_back(std::move(out), axis);
}

namespace detail {
/// kth normalised (negative counts from the end), checked, sorted and without repeats.
inline std::vector<index_t> normalized_kth(const std::vector<index_t>& kth, index_t n, const char* what) {
  std::vector<index_t> k;
  k.reserve(kth.size());
  for (index_t v : kth) {
    const index_t w = v < 0 ? v + n : v;
    if (w < 0 || w >= n)
      throw value_error(std::string("fusor: ") + what + " expects -" + std::to_string(n) + " <= kth < " +
                        std::to_string(n) + " (the axis length), got kth = " + std::to_string(v));
    k.push_back(w);
  }
  std::sort(k.begin(), k.end());
  k.erase(std::unique(k.begin(), k.end()), k.end());
  return k;
}
}  // namespace detail

/// np.partition: a copy in which the elements at positions kth (one or several, negative from
/// the end) along the axis are where a sort would put them, every smaller element before and
/// every larger after (NaN last). Selection (O(n) per row) on cpu, not a sort.
template <class X>
auto partition(const X& x, const std::vector<index_t>& kth, int axis = -1) {
  auto r = detail::rows_last(x, axis);
  using T = value_t<decltype(r)>;
  using B = backend_of_t<decltype(r)>;
  const index_t n = r.shape()[r.ndim() - 1];
  const auto k = detail::normalized_kth(kth, n, "partition");
  if (r.size() > 0) algorithms<B>::template partition_rows<T>(r.data(), r.size() / n, n, k.data(), index_t(k.size()));
  return detail::rows_back(std::move(r), axis);
}
template <class X>
auto partition(const X& x, index_t kth, int axis = -1) {
  return partition(x, std::vector<index_t>{kth}, axis);
}
/// np.argpartition: int64 indices that would partition x along the axis (ties in any order).
template <class X>
auto argpartition(const X& x, const std::vector<index_t>& kth, int axis = -1) {
  const auto c = detail::rows_last_readonly(x, axis);
  const auto r = c.view();
  using B = backend_of_t<decltype(r)>;
  array<std::int64_t, B> out(r.shape());
  const index_t n = r.shape()[r.ndim() - 1];
  const auto k = detail::normalized_kth(kth, n, "argpartition");
  if (r.size() > 0) algorithms<B>::argpartition_rows(c.data(), r.size() / n, n, k.data(), index_t(k.size()), out.data());
  return detail::rows_back(std::move(out), axis);
}
template <class X>
auto argpartition(const X& x, index_t kth, int axis = -1) {
  return argpartition(x, std::vector<index_t>{kth}, axis);
}

/// The result of topk: values and their int64 indices along the axis, best first.
template <class T, class B>
struct topk_result {
  array<T, B> values;
  array<std::int64_t, B> indices;
};
/// The k largest (largest = true) or smallest elements along an axis, best first, with their
/// indices; ties go to the lower index (like a stable sort). O(n log k) per row, no full sort.
template <class X>
auto topk(const X& x, index_t k, int axis = -1, bool largest = true) {
  const auto c = detail::rows_last_readonly(x, axis);
  const auto r = c.view();
  using T = value_t<decltype(r)>;
  using B = backend_of_t<decltype(r)>;
  const index_t n = r.shape()[r.ndim() - 1];
  if (k < 0 || k > n)
    throw value_error("fusor: topk expects 0 <= k <= " + std::to_string(n) + " (the axis length), got k = " +
                      std::to_string(k));
  extents s = r.shape();
  s[s.size() - 1] = k;
  array<T, B> values(s);
  array<std::int64_t, B> idx(s);
  if (values.size() > 0) algorithms<B>::topk_rows(c.data(), r.size() / n, n, k, largest, values.data(), idx.data());
  return topk_result<T, B>{detail::rows_back(std::move(values), axis), detail::rows_back(std::move(idx), axis)};
}

/// The result of unique: sorted distinct values; for each, the count and the first index in
/// the flattened input; for each input element, the position of its value in `values`.
template <class T, class B>
struct unique_result {
  array<T, B> values;
  array<std::int64_t, B> counts;
  array<std::int64_t, B> inverse;  // the input's shape
  array<std::int64_t, B> index;
};
/// np.unique(x, return_index=True, return_inverse=True, return_counts=True) on the flattened
/// array (NaNs are collapsed into one, like NumPy's equal_nan=True).
template <class X>
auto unique(const X& x) {
  const auto c = detail::contiguous_of(x);
  using T = value_t<decltype(c.view())>;
  using B = backend_of_t<decltype(c.view())>;
  const index_t n = c.view().size();
  array<std::int64_t, B> order(extents{n});
  if (n > 0) algorithms<B>::argsort_rows(c.data(), 1, n, order.data());
  const index_t u = n > 0 ? algorithms<B>::count_runs(c.data(), order.data(), n) : 0;
  unique_result<T, B> res{array<T, B>(extents{u}), array<std::int64_t, B>(extents{u}),
                          array<std::int64_t, B>(c.view().shape()), array<std::int64_t, B>(extents{u})};
  if (n > 0)
    algorithms<B>::fill_unique(c.data(), order.data(), n, res.values.data(), res.counts.data(), res.index.data(),
                               res.inverse.data());
  return res;
}

enum class side { left, right };
/// np.searchsorted: where each value would be inserted into the sorted 1-d array `a` to keep it
/// sorted (left: before equal elements, right: after). The result has the values' shape.
template <class A, class V>
auto searchsorted(const A& a, const V& values, side s = side::left) {
  const auto ca = detail::contiguous_of(a);
  using T = value_t<decltype(ca.view())>;
  using B = backend_of_t<decltype(ca.view())>;
  if (ca.view().ndim() != 1)
    throw shape_error("fusor: searchsorted needs a 1-d sorted array, got shape " + to_string(ca.view().shape()));
  if constexpr (scalar<V>) {
    using C = promote_t<T, V>;
    const C v = static_cast<C>(values);
    if constexpr (backend_traits<B>::host_accessible) {
      std::int64_t out;
      algorithms<B>::searchsorted(ca.data(), ca.view().size(), &v, 1, s == side::right, &out);
      return out;
    } else {  // the kernels take the backend's memory: the one value goes there and back
      array<C, B> dv(extents{1});
      backend_memory<B>::copy_from_host(dv.data(), &v, 1);
      array<std::int64_t, B> out(extents{1});
      algorithms<B>::searchsorted(ca.data(), ca.view().size(), dv.data(), 1, s == side::right, out.data());
      return out.item();
    }
  } else {
    const auto cv = detail::contiguous_of(values);
    array<std::int64_t, B> out(cv.view().shape());
    algorithms<B>::searchsorted(ca.data(), ca.view().size(), cv.data(), cv.view().size(), s == side::right, out.data());
    return out;
  }
}

}  // namespace fusor
