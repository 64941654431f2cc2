#pragma once
// The cuda backend's run-time form of an expression tree: the same nodes as core's, bound to the
// output's index space (strides aligned to the output rank, 0 on broadcast axes) and holding
// device pointers, so the whole tree is one kernel argument. Element types are the device's:
// std::complex<R> becomes cuda::std::complex<R> (same layout), so every functor in
// core/functors.hpp runs unchanged in device code.
//
// A node answers get(pos) for one element, where pos is either a flat index (the statement
// coalesced to one dimension) or a multi-index; and chunk<N>(base) for N consecutive elements
// of a flat statement, which leaves load with aligned vector instructions.
#include <cuda/std/complex>
#include <cuda/std/tuple>

#include <complex>
#include <array>
#include <cstddef>
#include <type_traits>
#include <utility>

#include "../../core/expr/loop_space.hpp"
#include "../../core/expr/nodes.hpp"


namespace fusor::detail::cuda_eval {

/// The type a host element type is computed in on the device (cuda::std::complex for complex).
template <class T>
using dev_t = compute_t<T>;

/// A functor's result as a device value (cis returns std::complex, built in device code).
template <class D, class V>
FUSOR_HD D to_device(const V& v) {
  if constexpr (is_complex_v<V> && !std::is_same_v<V, D>) return D(v.real(), v.imag());
  else return convert_element<D>(v);
}

/// N values of one type, aligned so that a leaf reads them with vector loads (16 bytes at most).
template <class D, int N>
struct alignas(sizeof(D) * N < 16 ? sizeof(D) * N : 16) chunk {
  D v[N];
};

/// Positions: one flat index, or a multi-index over the coalesced dimensions.
struct flat_pos {
  index_t i;
};
struct nd_pos {
  const index_t* idx;
  int rank;
};

template <class D>
struct leaf_dev {
  using value_type = D;
  static constexpr std::size_t leaves = 1;
  const D* p;
  index_t st[max_rank];

  __device__ D get(const flat_pos& q) const { return p[q.i * st[0]]; }
  __device__ D get(const nd_pos& q) const {
    index_t off = 0;
    for (int k = 0; k < q.rank; ++k) off += q.idx[k] * st[k];
    return p[off];
  }
  template <int N>
  __device__ chunk<D, N> load(index_t base) const {
    if (st[0] == 0) {
      chunk<D, N> c;
      const D v = p[0];
      for (int k = 0; k < N; ++k) c.v[k] = v;
      return c;
    }
    return *reinterpret_cast<const chunk<D, N>*>(p + base);
  }
  template <class V>
  void visit_strides(V&& v) {
    v(st);
  }
  template <class V>
  void visit_leaves(V&& v) const {
    v(static_cast<const void*>(p), st[0], alignof(chunk<D, 4>));
  }
};

template <class D>
struct scalar_dev {
  using value_type = D;
  static constexpr std::size_t leaves = 0;
  D value;
  template <class P>
  __device__ D get(const P&) const {
    return value;
  }
  template <int N>
  __device__ chunk<D, N> load(index_t) const {
    chunk<D, N> c;
    for (int k = 0; k < N; ++k) c.v[k] = value;
    return c;
  }
  template <class V>
  void visit_strides(V&&) {}
  template <class V>
  void visit_leaves(V&&) const {}
};

template <class F, class Traits, class... E>
struct map_dev {
  using value_type = dev_t<typename Traits::result>;
  static constexpr std::size_t leaves = (E::leaves + ... + 0);
  F f;
  ::cuda::std::tuple<E...> ch;

  template <class P>
  __device__ value_type get(const P& q) const {
    return get_impl(q, std::index_sequence_for<E...>{});
  }
  template <int N>
  __device__ chunk<value_type, N> load(index_t base) const {
    return load_impl<N>(base, std::index_sequence_for<E...>{});
  }
  template <class V>
  void visit_strides(V&& v) {
    visit_strides_impl(v, std::index_sequence_for<E...>{});
  }
  template <class V>
  void visit_leaves(V&& v) const {
    visit_leaves_impl(v, std::index_sequence_for<E...>{});
  }

 private:
  template <class V, std::size_t... I>
  void visit_strides_impl(V& v, std::index_sequence<I...>) {
    (::cuda::std::get<I>(ch).visit_strides(v), ...);
  }
  template <class V, std::size_t... I>
  void visit_leaves_impl(V& v, std::index_sequence<I...>) const {
    (::cuda::std::get<I>(ch).visit_leaves(v), ...);
  }
  template <class P, std::size_t... I>
  __device__ value_type get_impl(const P& q, std::index_sequence<I...>) const {
    return to_device<value_type>(
        f(convert_element<dev_t<typename Traits::template arg<I>>>(::cuda::std::get<I>(ch).get(q))...));
  }
  template <int N, std::size_t... I>
  __device__ chunk<value_type, N> load_impl(index_t base, std::index_sequence<I...>) const {
    const ::cuda::std::tuple<decltype(::cuda::std::get<I>(ch).template load<N>(base))...> in{
        ::cuda::std::get<I>(ch).template load<N>(base)...};
    chunk<value_type, N> c;
    for (int k = 0; k < N; ++k)
      c.v[k] = to_device<value_type>(
          f(convert_element<dev_t<typename Traits::template arg<I>>>(::cuda::std::get<I>(in).v[k])...));
    return c;
  }
};

template <class U, class E>
struct cast_dev {
  using value_type = dev_t<U>;
  static constexpr std::size_t leaves = E::leaves;
  E e;
  template <class P>
  __device__ value_type get(const P& q) const {
    return convert_element<value_type>(e.get(q));
  }
  template <int N>
  __device__ chunk<value_type, N> load(index_t base) const {
    const auto in = e.template load<N>(base);
    chunk<value_type, N> c;
    for (int k = 0; k < N; ++k) c.v[k] = convert_element<value_type>(in.v[k]);
    return c;
  }
  template <class V>
  void visit_strides(V&& v) {
    e.visit_strides(v);
  }
  template <class V>
  void visit_leaves(V&& v) const {
    e.visit_leaves(v);
  }
};

// ---- binding nodes to an output shape ---------------------------------------------------------
template <class F, class A>
auto make_evaluator(const unary_expr<F, A>& e, const extents& out);
template <class F, class A, class B>
auto make_evaluator(const binary_expr<F, A, B>& e, const extents& out);
template <class F, class A, class B, class C>
auto make_evaluator(const ternary_expr<F, A, B, C>& e, const extents& out);
template <class U, class A>
auto make_evaluator(const cast_expr<U, A>& e, const extents& out);

template <class T, class B>
leaf_dev<dev_t<T>> make_evaluator(const leaf<T, B>& l, const extents& out) {
  leaf_dev<dev_t<T>> ev{reinterpret_cast<const dev_t<T>*>(l.data), {}};
  const int n = out.size(), off = n - l.shape.size();
  for (int k = 0; k < n; ++k) ev.st[k] = (k < off || l.shape[k - off] == 1) ? 0 : l.strides[k - off];
  return ev;
}
template <class T>
scalar_dev<dev_t<T>> make_evaluator(const scalar_expr<T>& s, const extents&) {
  return {to_device<dev_t<T>>(s.value)};
}
template <class F, class A>
auto make_evaluator(const unary_expr<F, A>& e, const extents& out) {
  using EA = decltype(make_evaluator(e.a, out));
  return map_dev<F, typename unary_expr<F, A>::traits, EA>{e.f, {make_evaluator(e.a, out)}};
}
template <class F, class A, class B>
auto make_evaluator(const binary_expr<F, A, B>& e, const extents& out) {
  using EA = decltype(make_evaluator(e.a, out));
  using EB = decltype(make_evaluator(e.b, out));
  return map_dev<F, typename binary_expr<F, A, B>::traits, EA, EB>{e.f,
                                                                    {make_evaluator(e.a, out), make_evaluator(e.b, out)}};
}
template <class F, class A, class B, class C>
auto make_evaluator(const ternary_expr<F, A, B, C>& e, const extents& out) {
  using EA = decltype(make_evaluator(e.a, out));
  using EB = decltype(make_evaluator(e.b, out));
  using EC = decltype(make_evaluator(e.c, out));
  return map_dev<F, typename ternary_expr<F, A, B, C>::traits, EA, EB, EC>{
      e.f, {make_evaluator(e.a, out), make_evaluator(e.b, out), make_evaluator(e.c, out)}};
}
template <class U, class A>
auto make_evaluator(const cast_expr<U, A>& e, const extents& out) {
  using EA = decltype(make_evaluator(e.a, out));
  return cast_dev<U, EA>{make_evaluator(e.a, out)};
}

/// Pointers to the stride arrays of every leaf of an evaluator, after `Extra` leading slots.
template <std::size_t Extra, class Ev>
std::array<index_t*, Extra + Ev::leaves> stride_table(Ev& ev) {
  std::array<index_t*, Extra + Ev::leaves> t{};
  std::size_t k = Extra;
  ev.visit_strides([&](index_t* s) { t[k++] = s; });
  return t;
}

}  // namespace fusor::detail::cuda_eval
