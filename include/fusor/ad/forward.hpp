#pragma once
// Forward mode on arrays: seeds, the parts of a dual result, and the transforms built on them
// (JAX's names): jvp, derivative, jacfwd. Generic over the backend: the seed is a lazy node
// (a generator reading the input and the direction), so f(seed) is the same single fused pass
// as f(x), with value and tangent computed together; nothing is materialised but f's result.
#include <array>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../core/array.hpp"
#include "../core/error.hpp"
#include "../core/expr/nodes.hpp"
#include "../core/operators.hpp"
#include "../core/reduce.hpp"
#include "../core/slice.hpp"
#include "../core/shape_ops.hpp"
#include "../core/transfer.hpp"
#include "dual.hpp"
#include "functors.hpp"
#include "../core/ext.hpp"

namespace fusor::ad {

// ---- parts of dual expressions: lazy, so they fuse into the statement that reads them ------------
/// The values of an array or expression of duals, as an expression (`array<float> y = primal(yd)`).
template <class E>
  requires expression<E> && is_dual_v<value_t<E>>
auto primal(const E& e) {
  auto node = fusor::ext::to_node(e);
  return unary_expr<primal_fn, decltype(node)>{primal_fn{}, node};
}
/// Tangent k of an array or expression of duals, as an expression.
template <class E>
  requires expression<E> && is_dual_v<value_t<E>>
auto tangent(const E& e, int k = 0) {
  using D = value_t<E>;
  if (k < 0 || k >= D::tangents)
    throw value_error("fusor: tangent index " + std::to_string(k) + " is out of range for " +
                      std::string(dtype_name<D>()) + " (expected 0 to " + std::to_string(D::tangents - 1) + ")");
  auto node = fusor::ext::to_node(e);
  return unary_expr<tangent_fn, decltype(node)>{tangent_fn{{}, k}, node};
}

namespace detail {
// The seeds are generators (core/expr/nodes.hpp): values computed from positions, here by reading
// the input (and the direction) at that position. A generator, unlike a cast of two leaves, has a
// SIMD form on the cpu (a run of positions is filled, then loaded as a dual packet), so f(seed)
// keeps its SIMD loop.

/// dual(x[p], v[p]): the input seeded with one direction (jvp).
template <class T>
struct direction_seed {
  using value_type = dual<T, 1>;
  const T* x;
  const T* v;
  FUSOR_HD void fill(index_t first, value_type* out, index_t count) const {
    for (index_t i = 0; i < count; ++i) out[i] = value_type{x[first + i], {v[first + i]}};
  }
  /// The cpu's packet of positions first ... first + W - 1 (dual<batch>): two plain loads.
  template <class Packet>
  Packet packet(index_t first) const {
    using Lane = decltype(Packet{}.value);
    return Packet{Lane::load_unaligned(x + first), {Lane::load_unaligned(v + first)}};
  }
};

/// dual(x[p], e_{c0}[p], ..., e_{c0+N-1}[p]): N columns of the identity (jacfwd's chunk).
template <class T, int N>
struct basis_seed {
  using value_type = dual<T, N>;
  const T* x;
  index_t c0;
  FUSOR_HD void fill(index_t first, value_type* out, index_t count) const {
    for (index_t i = 0; i < count; ++i) {
      value_type d{x[first + i], {}};
      for (int k = 0; k < N; ++k) d.tangent[k] = T(first + i == c0 + k ? 1 : 0);
      out[i] = d;
    }
  }
  template <class Packet>
  Packet packet(index_t first) const {
    using Lane = decltype(Packet{}.value);
    constexpr index_t w = index_t(Lane::size);
    // tangent k is 1 in the lane holding column c0 + k, if any: a compare with the lane numbers,
    // no stack buffer (a distance rounded to T cannot land on a lane number unless it is one)
    alignas(64) static constexpr auto lane_numbers = [] {
      std::array<T, std::size_t(w)> a{};
      for (index_t j = 0; j < w; ++j) a[std::size_t(j)] = T(j);
      return a;
    }();
    const Lane lanes = Lane::load_aligned(lane_numbers.data());
    Packet p{Lane::load_unaligned(x + first), {}};
    for (int k = 0; k < N; ++k)
      p.tangent[k] = select(lanes == Lane(T(c0 + k - first)), Lane(T(1)), Lane(T(0)));  // xsimd's, by ADL
    return p;
  }
};

template <class T>
constexpr void require_floating() {
  static_assert(std::is_floating_point_v<T>,
                "fusor: forward-mode differentiation needs a float or double input; convert with astype<double>()");
}

template <class T, class B>
void require_same_shape(const array<T, B>& x, const array<T, B>& v, const char* what) {
  if (x.shape() != v.shape())
    throw shape_error(std::string("fusor: ") + what + ": the tangent must have the input's shape " +
                      to_string(x.shape()) + ", got " + to_string(v.shape()));
}

// f's result as something the parts can be read from: an array (an expression evaluated once),
// or a dual scalar (a reduction) as it is.
template <class R>
auto settle(R&& r) {
  using X = std::remove_cvref_t<R>;
  if constexpr (is_dual_v<X>) return X(r);
  else if constexpr (std::is_same_v<X, array<value_t<X>, backend_of_t<X>>>) {
    static_assert(is_dual_v<value_t<X>>,
                  "fusor: the differentiated function must compute its result from its argument (its "
                  "result holds no tangents)");
    if constexpr (std::is_rvalue_reference_v<R&&>) return X(std::move(r));
    else return r.copy();
  } else if constexpr (expression<X>) {
    static_assert(is_dual_v<value_t<X>>,
                  "fusor: the differentiated function must compute its result from its argument (its "
                  "result holds no tangents)");
    using D = value_t<X>;
    return array<D, backend_of_t<X>>(r);
  } else {
    static_assert(is_dual_v<X>, "fusor: the differentiated function must return an array, an expression or a "
                                "scalar computed from its argument");
    return X(r);
  }
}
}  // namespace detail

/// x seeded with direction v, as a lazy expression of dual<T> (x and v must outlive it). T is
/// float, double or a complex number of them (dual numbers of complex values: complex_dual.hpp).
template <class T, class B>
auto make_dual(const array<T, B>& x, const array<T, B>& v) {
  static_assert(std::is_floating_point_v<T> || (is_complex_v<T> && std::is_floating_point_v<real_t<T>>),
                "fusor: jvp and make_dual need float, double or complex input; convert with astype<double>()");
  detail::require_same_shape(x, v, "make_dual");
  return generator_expr<detail::direction_seed<T>, B>{{x.data(), v.data()}, x.shape(), contiguous_strides(x.shape())};
}

/// The value and directional derivative of f at x along v (JAX's jvp): f is called once with
/// dual numbers (a lazy expression of them), so the pair costs one fused pass of f. f returns an
/// array or expression (the result is a pair of arrays) or a scalar reduction (a pair of numbers),
/// real or complex: a complex x is seeded with a complex direction v (each tangent along v), and a
/// complex result's tangent is the derivative of its real and imaginary parts together.
template <class F, class T, class B>
auto jvp(F&& f, const array<T, B>& x, const array<T, B>& v) {
  auto y = detail::settle(f(make_dual(x, v)));
  using Y = decltype(y);
  if constexpr (is_dual_v<Y>) {
    using R = decltype(primal_of(y));
    return std::pair<R, R>{R(y.value), R(y.tangent[0])};
  } else {
    using R = decltype(primal_of(value_t<Y>{}));
    return std::pair<array<R, B>, array<R, B>>{array<R, B>(primal(y)), array<R, B>(tangent(y, 0))};
  }
}

/// f'(x) for a function of one number (KlongPy's f:>x): one evaluation on dual<T>.
template <class F, class T>
  requires std::is_floating_point_v<T>
T derivative(F&& f, T x) {
  const auto y = f(dual<T>{x, {T(1)}});
  static_assert(is_dual_v<std::remove_cvref_t<decltype(y)>>,
                "fusor: derivative(f, x) needs f to compute its number from its argument");
  return y.tangent[0];
}
/// f(x) and f'(x) together.
template <class F, class T>
  requires std::is_floating_point_v<T>
std::pair<T, T> value_and_derivative(F&& f, T x) {
  const auto y = f(dual<T>{x, {T(1)}});
  return {y.value, y.tangent[0]};
}

/// The Jacobian by forward mode (JAX's jacfwd): shape f(x).shape + x.shape, built Chunk columns per
/// evaluation of f with dual<T, Chunk> (so n inputs cost ceil(n / Chunk) fused passes). Forward
/// mode suits functions with fewer inputs than outputs; jacrev (reverse mode) the opposite.
template <int Chunk = 8, class F, class T, class B>
array<T, B> jacfwd(F&& f, const array<T, B>& x) {
  detail::require_floating<T>();
  static_assert(Chunk >= 1, "fusor: jacfwd needs at least one column per pass (Chunk >= 1)");
  const index_t n = x.size();
  const extents xs = x.shape();
  auto seed = [&](index_t c0) {
    return generator_expr<detail::basis_seed<T, Chunk>, B>{{x.data(), c0}, xs, contiguous_strides(xs)};
  };
  if (n == 0) {  // no columns: the output's shape still comes from one evaluation
    auto y = detail::settle(f(seed(0)));
    extents s;
    if constexpr (!is_dual_v<decltype(y)>) s = y.shape();
    for (int k = 0; k < xs.size(); ++k) s.push_back(xs[k]);
    return array<T, B>(s);
  }
  array<T, B> jac;
  index_t m = 0;
  for (index_t c0 = 0; c0 < n; c0 += Chunk) {
    auto y = detail::settle(f(seed(c0)));
    const index_t cols = std::min<index_t>(Chunk, n - c0);
    if constexpr (is_dual_v<decltype(y)>) {  // a scalar function: the gradient, Chunk entries per pass
      if (c0 == 0) {
        jac = array<T, B>(xs);
        m = 1;
      }
      T g[Chunk];
      for (int k = 0; k < Chunk; ++k) g[k] = T(y.tangent[k]);
      auto flat = jac.reshape(extents{n});
      flat(range(c0, c0 + cols)) = array<T, B>(std::span<const T>(g, std::size_t(cols)), extents{cols});
    } else {
      if (c0 == 0) {
        extents s = y.shape();
        m = y.size();
        for (int k = 0; k < xs.size(); ++k) s.push_back(xs[k]);
        jac = array<T, B>(s);
      }
      auto yflat = y.reshape(extents{m});
      auto j2 = jac.reshape(extents{m, n});
      for (index_t k = 0; k < cols; ++k) j2(all, c0 + k) = tangent(yflat, int(k));
    }
  }
  return jac;
}

}  // namespace fusor::ad
