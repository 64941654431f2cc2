#pragma once
// NumPy's small numerical helpers: interp, gradient, cross, kron, trapezoid, and convolve /
// correlate in NumPy's 1-d direct sense (fusor::fft has the FFT-based N-d ones of scipy.signal).
// Each is a few fused passes or one generator kernel, so each runs on every backend.
#include <cmath>
#include <complex>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "construct.hpp"
#include "reduce.hpp"
#include "sort.hpp"

namespace fusor {

namespace detail {
/// Floating results: float and complex types stay, integers and bool give float64 (NumPy).
template <class T>
using float_result_t = std::conditional_t<std::is_floating_point_v<T> || is_complex_v<T>, T, double>;
/// r axes of length 1.
inline extents unit_extents(int r) {
  extents e;
  for (int k = 0; k < r; ++k) e.push_back(1);
  return e;
}
}  // namespace detail

/// np.interp: the piecewise-linear interpolant through (xp, fp) at x (xp increasing, 1-d);
/// `left` / `right` (default fp[0] and fp[-1]) outside [xp[0], xp[-1]]. float64 results, as NumPy.
template <expression X, expression XP, expression FP>
auto interp(const X& x, const XP& xp, const FP& fp, std::optional<double> left = {}, std::optional<double> right = {}) {
  using B = backend_of_t<node_t<X>>;
  static_assert(!is_complex_v<value_t<node_t<FP>>>, "fusor: interp takes real fp (interpolate real and imag apart)");
  const array<double, B> xs = cast<double>(detail::owned_copy(xp)), fs = cast<double>(detail::owned_copy(fp));
  if (xs.ndim() != 1 || fs.shape() != xs.shape() || xs.size() == 0)
    throw value_error("fusor: interp needs 1-d xp and fp of one non-zero length, got shapes " + to_string(xs.shape()) +
                      " and " + to_string(fs.shape()));
  const auto xq = detail::owned_copy(x);
  const index_t n = xs.size();
  const auto hx = detail::backend_to_host(xs), hf = detail::backend_to_host(fs);
  const double x_first = hx[0], x_last = hx[std::size_t(n - 1)], f_first = hf[0], f_last = hf[std::size_t(n - 1)];
  const double lo_value = left.value_or(f_first), hi_value = right.value_or(f_last);
  array<double, B> out(xq.shape());
  if (n == 1) {
    out = where(xq < x_first, lo_value, where(xq > x_first, hi_value, f_first));
    return out;
  }
  // xp[j] <= x < xp[j + 1], j clamped to the last interval
  auto j = searchsorted(xs, xq, side::right);
  j = clip(j - std::int64_t(1), std::int64_t(0), std::int64_t(n - 2));
  const auto x0 = take(xs, j), x1 = take(xs, j + std::int64_t(1)), f0 = take(fs, j), f1 = take(fs, j + std::int64_t(1));
  const auto inside = (f1 - f0) / (x1 - x0) * (cast<double>(xq) - x0) + f0;
  out = where(xq < x_first, lo_value,
              where(xq > x_last, hi_value, where(xq == x_last, f_last, where(cast<double>(xq) == x0, f0, inside))));
  return out;
}

namespace detail {
/// The three-point weights of gradient at every position along an axis of coordinates x (NumPy's
/// second-order interior formula and its first- or second-order one-sided ends): g[i] =
/// w[i][0] f[i-1] + w[i][1] f[i] + w[i][2] f[i+1] inside; the ends use f[0..2] or f[n-3..n-1].
inline std::vector<double> gradient_weights(const std::vector<double>& x, int edge_order) {
  const std::size_t n = x.size();
  std::vector<double> w(3 * n, 0.0);
  for (std::size_t i = 1; i + 1 < n; ++i) {
    const double d1 = x[i] - x[i - 1], d2 = x[i + 1] - x[i];
    w[3 * i] = -d2 / (d1 * (d1 + d2));
    w[3 * i + 1] = (d2 - d1) / (d1 * d2);
    w[3 * i + 2] = d1 / (d2 * (d1 + d2));
  }
  if (edge_order == 1) {
    w[0] = -1.0 / (x[1] - x[0]), w[1] = 1.0 / (x[1] - x[0]);
    w[3 * (n - 1)] = -1.0 / (x[n - 1] - x[n - 2]), w[3 * (n - 1) + 1] = 1.0 / (x[n - 1] - x[n - 2]);
  } else {
    double d1 = x[1] - x[0], d2 = x[2] - x[1];
    w[0] = -(2 * d1 + d2) / (d1 * (d1 + d2)), w[1] = (d1 + d2) / (d1 * d2), w[2] = -d1 / (d2 * (d1 + d2));
    d1 = x[n - 2] - x[n - 3], d2 = x[n - 1] - x[n - 2];
    w[3 * (n - 1)] = d2 / (d1 * (d1 + d2)), w[3 * (n - 1) + 1] = -(d2 + d1) / (d1 * d2),
                w[3 * (n - 1) + 2] = (2 * d2 + d1) / (d2 * (d1 + d2));
  }
  return w;
}
/// uniform_h > 0: the samples are evenly spaced by it (NumPy's uniform formulas).
template <class T, class B>
auto gradient_impl(const array_view<T, B>& f, int axis, const std::vector<double>& x, int edge_order, double uniform_h) {
  using R = float_result_t<T>;
  using W = real_t<R>;
  const int ax = normalize_axis(axis, f.ndim());
  const index_t n = f.shape()[ax];
  if (edge_order != 1 && edge_order != 2)
    throw value_error("fusor: gradient's edge_order must be 1 or 2, got " + std::to_string(edge_order));
  if (n < edge_order + 1)
    throw value_error("fusor: gradient needs at least edge_order + 1 = " + std::to_string(edge_order + 1) +
                      " elements along axis " + std::to_string(axis) + ", got shape " + to_string(f.shape()));
  if (index_t(x.size()) != n)
    throw shape_error("fusor: gradient's coordinates must have the axis's length " + std::to_string(n) + ", got " +
                      std::to_string(x.size()));
  const auto w = gradient_weights(x, edge_order);
  array<R, B> out(f.shape());
  const auto o = out.view();
  // evenly spaced coordinates: NumPy's uniform formula (f[i+1] - f[i-1]) / 2h, which never reads
  // f[i] (a NaN or inf sample stays out of its own derivative)
  if (uniform_h > 0 && n > 2) {
    slice_axis(o, ax, 1, n - 1) = (cast<R>(slice_axis(f, ax, 2, n)) - cast<R>(slice_axis(f, ax, 0, n - 2))) / W(2 * uniform_h);
  } else if (n > 2) {  // the interior: three weight vectors broadcast along the axis
    std::vector<W> a(std::size_t(n - 2)), b(a.size()), c(a.size());
    for (index_t i = 1; i + 1 < n; ++i)
      a[std::size_t(i - 1)] = W(w[3 * i]), b[std::size_t(i - 1)] = W(w[3 * i + 1]), c[std::size_t(i - 1)] = W(w[3 * i + 2]);
    extents ws = unit_extents(f.ndim());
    ws[ax] = n - 2;
    const auto da = host_to_backend<B>(a), db = host_to_backend<B>(b), dc = host_to_backend<B>(c);
    slice_axis(o, ax, 1, n - 1) = reshape(da.view(), ws) * cast<R>(slice_axis(f, ax, 0, n - 2)) +
                                  reshape(db.view(), ws) * cast<R>(slice_axis(f, ax, 1, n - 1)) +
                                  reshape(dc.view(), ws) * cast<R>(slice_axis(f, ax, 2, n));
  }
  const auto at = [&](index_t i) { return cast<R>(slice_axis(f, ax, i, i + 1)); };
  if (edge_order == 1) {
    slice_axis(o, ax, 0, 1) = W(w[0]) * at(0) + W(w[1]) * at(1);
    slice_axis(o, ax, n - 1, n) = W(w[3 * (n - 1)]) * at(n - 2) + W(w[3 * (n - 1) + 1]) * at(n - 1);
  } else {
    slice_axis(o, ax, 0, 1) = W(w[0]) * at(0) + W(w[1]) * at(1) + W(w[2]) * at(2);
    slice_axis(o, ax, n - 1, n) =
        W(w[3 * (n - 1)]) * at(n - 3) + W(w[3 * (n - 1) + 1]) * at(n - 2) + W(w[3 * (n - 1) + 2]) * at(n - 1);
  }
  return out;
}
}  // namespace detail

/// np.gradient along one axis with uniform `spacing`: second-order central differences inside,
/// first- (edge_order 1) or second-order (2) one-sided ones at the ends. float64 for integers.
template <expression X>
auto gradient(const X& f, int axis, double spacing = 1.0, int edge_order = 1) {
  return detail::with_input(f, [&](const auto& v) {
    if (v.ndim() == 0) throw shape_error("fusor: gradient needs an array of rank >= 1, got a 0-d array");
    const index_t n = v.shape()[normalize_axis(axis, v.ndim())];
    std::vector<double> x(static_cast<std::size_t>(n));
    for (index_t i = 0; i < n; ++i) x[std::size_t(i)] = double(i) * spacing;
    if (!(spacing > 0) && !(spacing < 0))
      throw value_error("fusor: gradient needs a non-zero finite spacing, got " + std::to_string(spacing));
    return detail::gradient_impl(v, axis, x, edge_order, spacing);
  });
}
/// np.gradient along one axis with the coordinates of the samples (any spacing; NumPy's
/// non-uniform formulas).
template <expression X, expression C>
auto gradient(const X& f, int axis, const C& coordinates, int edge_order = 1) {
  const array<double, backend_of_t<node_t<C>>> c = cast<double>(detail::to_node(coordinates));
  if (c.ndim() != 1) throw shape_error("fusor: gradient's coordinates must be 1-d, got shape " + to_string(c.shape()));
  const std::vector<double> x = detail::backend_to_host(c);
  // evenly spaced coordinates take NumPy's uniform path (it compares the differences exactly too)
  double h = x.size() > 1 ? x[1] - x[0] : 0.0;
  for (std::size_t i = 2; i < x.size() && h != 0; ++i)
    if (x[i] - x[i - 1] != h) h = 0;
  return detail::with_input(f, [&](const auto& v) {
    if (v.ndim() == 0) throw shape_error("fusor: gradient needs an array of rank >= 1, got a 0-d array");
    return detail::gradient_impl(v, axis, x, edge_order, h);
  });
}
/// np.gradient of a 1-d array with unit spacing.
template <expression X>
auto gradient(const X& f) {
  return gradient(f, 0, 1.0, 1);
}

/// np.cross: the cross product of 3-vectors (or 2-vectors, taken with z = 0) along the last axis
/// of each operand, the other axes broadcast. Two 2-vectors give the z component alone.
template <expression A, expression Bx>
auto cross(const A& a, const Bx& b) {
  const auto av = detail::owned_copy(a);
  const auto bv = detail::owned_copy(b);
  using T = promote_t<value_t<decltype(av)>, value_t<decltype(bv)>>;
  using B = backend_of_t<decltype(av)>;
  if (av.ndim() == 0 || bv.ndim() == 0) throw value_error("fusor: cross needs vectors (rank >= 1), got a 0-d array");
  const index_t na = av.shape()[av.ndim() - 1], nb = bv.shape()[bv.ndim() - 1];
  if ((na != 2 && na != 3) || (nb != 2 && nb != 3))
    throw value_error("fusor: cross needs vectors of 2 or 3 components along the last axis, got shapes " +
                      to_string(av.shape()) + " and " + to_string(bv.shape()));
  auto part = [](const auto& v, index_t k) { return detail::index_axis(v.view(), v.ndim() - 1, k); };
  extents sa = av.shape(), sb = bv.shape();
  sa.resize(sa.size() - 1);
  sb.resize(sb.size() - 1);
  const extents s = broadcast_shapes(sa, sb);
  const auto a0 = cast<T>(part(av, 0)), a1 = cast<T>(part(av, 1)), b0 = cast<T>(part(bv, 0)), b1 = cast<T>(part(bv, 1));
  if (na == 2 && nb == 2) {
    array<T, B> z(s);
    z = a0 * b1 - a1 * b0;
    return z;
  }
  extents so = s;
  so.push_back(3);
  array<T, B> out(so);
  const auto o = out.view();
  const int last = so.size() - 1;
  if (na == 3 && nb == 3) {
    const auto a2 = cast<T>(part(av, 2)), b2 = cast<T>(part(bv, 2));
    detail::index_axis(o, last, 0) = a1 * b2 - a2 * b1;
    detail::index_axis(o, last, 1) = a2 * b0 - a0 * b2;
  } else if (na == 3) {  // b2 = 0
    const auto a2 = cast<T>(part(av, 2));
    detail::index_axis(o, last, 0) = -(a2 * b1);
    detail::index_axis(o, last, 1) = a2 * b0;
  } else {  // a2 = 0
    const auto b2 = cast<T>(part(bv, 2));
    detail::index_axis(o, last, 0) = a1 * b2;
    detail::index_axis(o, last, 1) = -(a0 * b2);
  }
  detail::index_axis(o, last, 2) = a0 * b1 - a1 * b0;
  return out;
}

/// np.kron: the Kronecker product; the ranks are aligned by prepending unit axes, and axis k of
/// the result has length a_k * b_k. One fused pass.
template <expression A, expression Bx>
auto kron(const A& a, const Bx& b) {
  const auto av = detail::owned_copy(a);
  const auto bv = detail::owned_copy(b);
  using T = promote_t<value_t<decltype(av)>, value_t<decltype(bv)>>;
  using B = backend_of_t<decltype(av)>;
  const int r = std::max(av.ndim(), bv.ndim());
  extents sa = detail::unit_extents(r), sb = detail::unit_extents(r), inter, wa, wb, so;
  for (int k = 0; k < av.ndim(); ++k) sa[r - av.ndim() + k] = av.shape()[k];
  for (int k = 0; k < bv.ndim(); ++k) sb[r - bv.ndim() + k] = bv.shape()[k];
  for (int k = 0; k < r; ++k) {
    inter.push_back(sa[k]), inter.push_back(sb[k]);
    wa.push_back(sa[k]), wa.push_back(1);
    wb.push_back(1), wb.push_back(sb[k]);
    so.push_back(sa[k] * sb[k]);
  }
  array<T, B> out(so);
  reshape(out.view(), inter) = cast<T>(reshape(av.view(), wa)) * cast<T>(reshape(bv.view(), wb));
  return out;
}

/// The output ranges of np.convolve / np.correlate: full (n + m - 1), same (max(n, m)), valid
/// (max - min + 1).
enum class convolve_mode { full, same, valid };

namespace detail {
/// out[k] = sum_j a[k + offset - j] v[j] over the overlap: element k of a direct 1-d convolution.
template <class T>
struct convolve1d_gen {
  using value_type = T;
  const T* a;
  const T* v;
  index_t n, m, offset;
  FUSOR_HD void fill(index_t first, T* out, index_t count) const {
    using D = compute_t<T>;  // cuda::std::complex for complex values on the device
    const D* x = reinterpret_cast<const D*>(a);
    const D* y = reinterpret_cast<const D*>(v);
    D* o = reinterpret_cast<D*>(out);
    for (index_t i = 0; i < count; ++i) {
      const index_t k = first + i + offset;
      const index_t lo = k - (n - 1) > 0 ? k - (n - 1) : 0, hi = k < m - 1 ? k : m - 1;
      D s = D(0);
      for (index_t j = lo; j <= hi; ++j) s += x[k - j] * y[j];
      o[i] = s;
    }
  }
};
}  // namespace detail

namespace detail {
/// convolve, with the `same` window's start rounded up when `late_same` (np.correlate with the
/// longer second operand: NumPy reverses a correlation of the swapped operands there).
template <class A, class V>
auto convolve_impl(const A& a, const V& v, convolve_mode mode, bool late_same) {
  using T = promote_t<value_t<node_t<A>>, value_t<node_t<V>>>;
  using B = backend_of_t<node_t<A>>;
  array<T, B> x = cast<T>(detail::to_node(a)), k = cast<T>(detail::to_node(v));
  if (x.ndim() != 1 || k.ndim() != 1)
    throw value_error("fusor: convolve and correlate take 1-d arrays (fft::fftconvolve takes any rank), got shapes " +
                      to_string(x.shape()) + " and " + to_string(k.shape()));
  if (x.size() == 0 || k.size() == 0) throw value_error("fusor: convolve and correlate need non-empty arrays, got an empty one");
  if (k.size() > x.size()) std::swap(x, k);  // convolution commutes; NumPy's ranges are of the longer
  const index_t n = x.size(), m = k.size();
  index_t len = n + m - 1, offset = 0;
  if (mode == convolve_mode::same) len = n, offset = late_same ? m / 2 : (m - 1) / 2;
  if (mode == convolve_mode::valid) len = n - m + 1, offset = m - 1;
  array<T, B> out(extents{len});
  out = generator_expr<detail::convolve1d_gen<T>, B>{{x.data(), k.data(), n, m, offset}, extents{len}, extents{1}};
  return out;
}
}  // namespace detail

/// np.convolve: the discrete linear convolution of two 1-d arrays, summed directly (O(n m); for
/// long kernels fft::fftconvolve is faster). Default mode full, as NumPy.
template <expression A, expression V>
auto convolve(const A& a, const V& v, convolve_mode mode = convolve_mode::full) {
  return detail::convolve_impl(a, v, mode, false);
}
/// np.correlate: sum_n a[n + k] conj(v[n]), i.e. convolve(a, conj(v[::-1])). Default mode valid,
/// as NumPy.
template <expression A, expression V>
auto correlate(const A& a, const V& v, convolve_mode mode = convolve_mode::valid) {
  const auto vv = detail::owned_copy(v);
  if (vv.ndim() != 1)
    throw value_error("fusor: convolve and correlate take 1-d arrays (fft::correlate takes any rank), got shape " +
                      to_string(vv.shape()));
  const index_t na = expr_shape(detail::to_node(a)).numel();
  return detail::convolve_impl(a, conj(flip(vv)), mode, vv.size() > na);
}

namespace detail {
// R: the result's type (y's float type, promoted with x's when there are sample coordinates, as
// NumPy's float32 y with float64 x gives float64); d: the spacing, a number or R's differences
template <class R, class T, class B, class D>
auto trapezoid_impl(const array_view<T, B>& y, const D& d, int axis) {
  const int ax = normalize_axis(axis, y.ndim());
  const index_t n = y.shape()[ax];
  if (n < 2) return array<R, B>(sum(cast<R>(slice_axis(y, ax, 0, 0)), ax));  // zeros of the reduced shape
  return array<R, B>(sum(d * (cast<R>(slice_axis(y, ax, 1, n)) + cast<R>(slice_axis(y, ax, 0, n - 1))) * real_t<R>(0.5), ax));
}
}  // namespace detail

/// np.trapezoid along an axis with uniform spacing dx: sum(dx (y[1:] + y[:-1]) / 2). The axis is
/// reduced (the result is an array; for a 1-d y, trapezoid(y) gives the number).
template <expression X>
auto trapezoid(const X& y, double dx, int axis) {
  return detail::with_input(y, [&](const auto& v) {
    if (v.ndim() == 0) throw shape_error("fusor: trapezoid needs an array of rank >= 1, got a 0-d array");
    using R = detail::float_result_t<value_t<std::remove_cvref_t<decltype(v)>>>;
    return detail::trapezoid_impl<R>(v, real_t<R>(dx), axis);
  });
}
/// Along an axis with sample coordinates x (1-d of the axis's length, or y's shape).
template <expression X, expression C>
auto trapezoid(const X& y, const C& x, int axis) {
  return detail::with_input(y, [&](const auto& v) {
    using R = promote_t<detail::float_result_t<value_t<std::remove_cvref_t<decltype(v)>>>,
                        detail::float_result_t<value_t<node_t<C>>>>;
    if (v.ndim() == 0) throw shape_error("fusor: trapezoid needs an array of rank >= 1, got a 0-d array");
    const int ax = normalize_axis(axis, v.ndim());
    const auto xs = array<R, backend_of_t<std::remove_cvref_t<decltype(v)>>>(cast<R>(detail::to_node(x)));
    const index_t n = v.shape()[ax];
    if (xs.ndim() == 1 && xs.size() == n) {
      extents ws = detail::unit_extents(v.ndim());
      ws[ax] = n > 0 ? n - 1 : 0;
      const auto d = diff(xs);
      return detail::trapezoid_impl<R>(v, reshape(d.view(), ws), ax);
    }
    if (xs.shape() == v.shape()) {
      const auto d = diff(xs, 1, ax);
      return detail::trapezoid_impl<R>(v, d.view(), ax);
    }
    throw shape_error("fusor: trapezoid's x must be 1-d of the axis's length " + std::to_string(n) +
                      " or have y's shape " + to_string(v.shape()) + ", got " + to_string(xs.shape()));
  });
}
/// np.trapezoid of a 1-d y: the integral as a number (unit spacing, or dx).
template <expression X>
auto trapezoid(const X& y, double dx = 1.0) {
  auto r = trapezoid(y, dx, -1);
  if (r.ndim() != 0)
    throw shape_error("fusor: trapezoid(y) without an axis needs a 1-d y, got rank " + std::to_string(r.ndim() + 1) +
                      "; name the axis: trapezoid(y, dx, axis)");
  return r.item();
}
template <expression X, expression C>
auto trapezoid(const X& y, const C& x) {
  auto r = trapezoid(y, x, -1);
  if (r.ndim() != 0)
    throw shape_error("fusor: trapezoid(y, x) without an axis needs a 1-d y, got rank " + std::to_string(r.ndim() + 1) +
                      "; name the axis: trapezoid(y, x, axis)");
  return r.item();
}

}  // namespace fusor
