#pragma once
// Creation functions (NumPy names). The backend is a template argument defaulting to cpu:
// zeros<float>({3, 4}) or zeros<float, cuda>({3, 4}). Values are written by the backend's
// executor, so creating a device array never stages through the host. The computed ones
// (arange, linspace, eye, coordinates) are also nodes under fusor::lazy, to fuse into a statement.
#include <cmath>
#include <cstdint>
#include <string>

#include "assign.hpp"

namespace fusor {

/// Uninitialised array (np.empty).
template <element T, backend B = default_backend>
array<T, B> empty(const extents& shape) {
  return array<T, B>(shape);
}
template <element T, backend B = default_backend, class S>
  requires(scalar<S> || std::is_same_v<S, T>)  // a number, or an element (a dual number, ...)
array<T, B> full(const extents& shape, const S& value) {
  array<T, B> a(shape);
  a.fill(value);
  return a;
}
template <element T, backend B = default_backend>
array<T, B> zeros(const extents& shape) {
  return full<T, B>(shape, T(0));
}
template <element T, backend B = default_backend>
array<T, B> ones(const extents& shape) {
  return full<T, B>(shape, T(1));
}

// *_like: same shape and backend; the element type defaults to the argument's.
template <class U = void, expression E>
auto empty_like(const E& e) {
  using T = std::conditional_t<std::is_void_v<U>, value_t<E>, U>;
  return empty<T, backend_of_t<E>>(expr_shape(detail::to_node(e)));
}
template <class U = void, expression E>
auto zeros_like(const E& e) {
  using T = std::conditional_t<std::is_void_v<U>, value_t<E>, U>;
  return zeros<T, backend_of_t<E>>(expr_shape(detail::to_node(e)));
}
template <class U = void, expression E>
auto ones_like(const E& e) {
  using T = std::conditional_t<std::is_void_v<U>, value_t<E>, U>;
  return ones<T, backend_of_t<E>>(expr_shape(detail::to_node(e)));
}
template <class U = void, expression E, scalar S>
auto full_like(const E& e, const S& value) {
  using T = std::conditional_t<std::is_void_v<U>, value_t<E>, U>;
  return full<T, backend_of_t<E>>(expr_shape(detail::to_node(e)), value);
}

namespace detail {
// Generators for generator_expr: element k is a closed form of k alone (named function objects,
// not lambdas: the same object runs in a cpu loop or a cuda kernel).
template <class T>
struct arange_gen {
  using value_type = T;
  T start, step;
  FUSOR_HD void fill(index_t first, T* out, index_t count) const {
    for (index_t i = 0; i < count; ++i) out[i] = static_cast<T>(start + static_cast<T>(first + i) * step);
  }
};
template <class T>
struct linspace_gen {  // computed in float64 like NumPy; integer results are floored (NumPy 2)
  using value_type = T;
  T start, stop;
  double step;
  index_t num;
  bool endpoint;
  FUSOR_HD void fill(index_t first, T* out, index_t count) const {
    for (index_t i = 0; i < count; ++i) {
      const index_t k = first + i;
      const double v = double(start) + double(k) * step;
      out[i] = (endpoint && k == num - 1 && num > 1) ? stop
                                                    : convert_element<T>(std::is_integral_v<T> ? std::floor(v) : v);
    }
  }
};
template <class T>
struct eye_gen {  // position k of an n x m matrix is (k / m, k % m)
  using value_type = T;
  index_t m, k;
  FUSOR_HD void fill(index_t first, T* out, index_t count) const {
    for (index_t i = 0; i < count; ++i) {
      const index_t flat = first + i, r = flat / m, c = flat % m;
      out[i] = c - r == k ? T(1) : T(0);
    }
  }
};

template <class T>
void check_arange_step(T start, T stop, T step) {
  if (step == T(0))
    throw value_error("fusor: arange step must be non-zero, got 0 (start " + std::to_string(start) + ", stop " +
                      std::to_string(stop) + ")");
}
}  // namespace detail

namespace lazy {
// Creation functions as nodes (generator_expr): their values are computed inside the statement
// that uses them, so `y = x * lazy::arange<float>(0.f, float(n))` reads x, writes y and nothing
// else. The eager functions of the same names (fusor::arange, ...) evaluate these nodes.

/// np.arange as a node: element i is start + i * step.
template <element T, backend B = default_backend>
auto arange(T start, T stop, T step = T(1)) {
  detail::check_arange_step(start, stop, step);
  const double span = (double(stop) - double(start)) / double(step);
  const index_t n = span > 0 ? index_t(std::ceil(span)) : 0;
  return generator_expr<detail::arange_gen<T>, B>{{start, step}, extents{n}, extents{1}};
}
template <element T, backend B = default_backend>
auto arange(T stop) {
  return arange<T, B>(T(0), stop, T(1));
}

/// np.linspace as a node.
template <element T, backend B = default_backend>
auto linspace(T start, T stop, index_t num, bool endpoint = true) {
  if (num < 0) throw value_error("fusor: linspace needs num >= 0, got " + std::to_string(num));
  const index_t div = endpoint ? num - 1 : num;
  const double step = div > 0 ? (double(stop) - double(start)) / double(div) : 0.0;
  return generator_expr<detail::linspace_gen<T>, B>{{start, stop, step, num, endpoint}, extents{num}, extents{1}};
}

/// np.eye as a node: n x m with ones on diagonal k (m defaults to n).
template <element T, backend B = default_backend>
auto eye(index_t n, index_t m = -1, index_t k = 0) {
  if (m < 0) m = n;
  if (n < 0) throw value_error("fusor: eye needs n >= 0, got " + std::to_string(n));
  const extents shape{n, m};
  check_shape(shape);
  return generator_expr<detail::eye_gen<T>, B>{{m, k}, shape, contiguous_strides(shape)};
}

/// Every element's coordinate along `axis` of `shape` (np.indices(shape)[axis]) as a node: a
/// ramp along that axis repeated along the others, so grids and masks (a sphere is
/// (z - c)^2 + (y - c)^2 + (x - c)^2 < r^2) fuse into one pass without index arrays.
template <element T = std::int64_t, backend B = default_backend>
auto coordinates(const extents& shape, int axis) {
  check_shape(shape);
  const int ax = normalize_axis(axis, shape.size());
  extents strides;
  for (int k = 0; k < shape.size(); ++k) strides.push_back(k == ax ? 1 : 0);
  return generator_expr<detail::arange_gen<T>, B>{{T(0), T(1)}, shape, strides};
}

}  // namespace lazy

/// Evenly spaced values in [start, stop) with `step` (np.arange); element i is start + i * step.
template <element T, backend B = default_backend>
array<T, B> arange(T start, T stop, T step = T(1)) {
  return array<T, B>(lazy::arange<T, B>(start, stop, step));
}
/// 0, 1, ..., stop - 1.
template <element T, backend B = default_backend>
array<T, B> arange(T stop) {
  return arange<T, B>(T(0), stop, T(1));
}

/// `num` evenly spaced values from start to stop (np.linspace); stop is included when endpoint.
template <element T, backend B = default_backend>
array<T, B> linspace(T start, T stop, index_t num, bool endpoint = true) {
  return array<T, B>(lazy::linspace<T, B>(start, stop, num, endpoint));
}

/// n x m matrix with ones on diagonal k (np.eye); m defaults to n.
template <element T, backend B = default_backend>
array<T, B> eye(index_t n, index_t m = -1, index_t k = 0) {
  return array<T, B>(lazy::eye<T, B>(n, m, k));
}

}  // namespace fusor
