#pragma once
// Creation functions (NumPy names). The backend is a template argument defaulting to cpu:
// zeros<float>({3, 4}) or zeros<float, cuda>({3, 4}). Values are written by the backend's
// executor, so creating a device array never stages through the host.
#include <cmath>
#include <string>

#include "assign.hpp"

namespace fusor {

/// Uninitialised array (np.empty).
template <element T, backend B = default_backend>
array<T, B> empty(const extents& shape) {
  return array<T, B>(shape);
}
template <element T, backend B = default_backend, scalar S>
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
// Element generators for fill_blocks, by 256-element block (named function objects, not
// lambdas: the same object runs in a cpu thread or a cuda kernel).
template <class T>
struct arange_gen {
  T start, step;
  FUSOR_HD void operator()(index_t block, T* out, index_t count) const {
    for (index_t i = 0; i < count; ++i) out[i] = static_cast<T>(start + static_cast<T>(block * 256 + i) * step);
  }
};
template <class T>
struct linspace_gen {  // computed in float64 like NumPy; integer results are floored (NumPy 2)
  T start, stop;
  double step;
  index_t num;
  bool endpoint;
  FUSOR_HD void operator()(index_t block, T* out, index_t count) const {
    for (index_t i = 0; i < count; ++i) {
      const index_t k = block * 256 + i;
      const double v = double(start) + double(k) * step;
      out[i] = (endpoint && k == num - 1 && num > 1) ? stop
                                                    : convert_element<T>(std::is_integral_v<T> ? std::floor(v) : v);
    }
  }
};
template <class T>
struct eye_gen {
  index_t m, k;
  FUSOR_HD void operator()(index_t block, T* out, index_t count) const {
    for (index_t i = 0; i < count; ++i) {
      const index_t flat = block * 256 + i, r = flat / m, c = flat % m;
      out[i] = c - r == k ? T(1) : T(0);
    }
  }
};
}  // namespace detail

/// Evenly spaced values in [start, stop) with `step` (np.arange); element i is start + i * step.
template <element T, backend B = default_backend>
array<T, B> arange(T start, T stop, T step = T(1)) {
  if (step == T(0))
    throw value_error("fusor: arange step must be non-zero, got 0 (start " + std::to_string(start) + ", stop " +
                      std::to_string(stop) + ")");
  const double span = (double(stop) - double(start)) / double(step);
  const index_t n = span > 0 ? index_t(std::ceil(span)) : 0;
  array<T, B> a(extents{n});
  executor<B>::template fill_blocks<256>(a.as_leaf(), detail::arange_gen<T>{start, step});
  return a;
}
/// 0, 1, ..., stop - 1.
template <element T, backend B = default_backend>
array<T, B> arange(T stop) {
  return arange<T, B>(T(0), stop, T(1));
}

/// `num` evenly spaced values from start to stop (np.linspace); stop is included when endpoint.
template <element T, backend B = default_backend>
array<T, B> linspace(T start, T stop, index_t num, bool endpoint = true) {
  if (num < 0) throw value_error("fusor: linspace needs num >= 0, got " + std::to_string(num));
  array<T, B> a(extents{num});
  const index_t div = endpoint ? num - 1 : num;
  const double step = div > 0 ? (double(stop) - double(start)) / double(div) : 0.0;
  executor<B>::template fill_blocks<256>(a.as_leaf(), detail::linspace_gen<T>{start, stop, step, num, endpoint});
  return a;
}

/// n x m matrix with ones on diagonal k (np.eye); m defaults to n.
template <element T, backend B = default_backend>
array<T, B> eye(index_t n, index_t m = -1, index_t k = 0) {
  if (m < 0) m = n;
  if (n < 0) throw value_error("fusor: eye needs n >= 0, got " + std::to_string(n));
  array<T, B> a(extents{n, m});
  executor<B>::template fill_blocks<256>(a.as_leaf(), detail::eye_gen<T>{m, k});
  return a;
}

}  // namespace fusor
