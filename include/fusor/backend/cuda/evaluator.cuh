#pragma once
// The cuda backend's run-time form of an expression tree: one evaluator type per kind of node,
// built by core's walk (core/expr/bind.hpp) with strides aligned to the output's index space,
// holding device pointers, so the whole tree is one kernel argument. Element types are the device's:
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
#include "../../core/expr/bind.hpp"


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

/// Values computed from positions (generator_expr); a contiguous chunk is one run of the
/// generator, which shares work between neighbours. The generator writes host element types
/// (std::complex for a complex eye), converted to the device's as a leaf's are.
template <class G>
struct generator_dev {
  using host_type = typename G::value_type;
  using value_type = dev_t<host_type>;
  static constexpr std::size_t leaves = 1;
  G gen;
  index_t st[max_rank];

  __device__ value_type at(index_t position) const {
    host_type v;
    gen.fill(position, &v, 1);
    return to_device<value_type>(v);
  }
  __device__ value_type get(const flat_pos& q) const { return at(q.i * st[0]); }
  __device__ value_type get(const nd_pos& q) const {
    index_t off = 0;
    for (int k = 0; k < q.rank; ++k) off += q.idx[k] * st[k];
    return at(off);
  }
  template <int N>
  __device__ chunk<value_type, N> load(index_t base) const {
    chunk<value_type, N> c;
    if (st[0] == 0) {
      const value_type v = at(0);
      for (int k = 0; k < N; ++k) c.v[k] = v;
    } else {
      host_type run[N];
      gen.fill(base, run, N);
      for (int k = 0; k < N; ++k) c.v[k] = to_device<value_type>(run[k]);
    }
    return c;
  }
  template <class V>
  void visit_strides(V&& v) {
    v(st);
  }
  template <class V>
  void visit_leaves(V&& v) const {
    v(nullptr, st[0], 1);  // nothing to load: any chunk is aligned
  }
};

/// The cuda evaluator of each kind of node, for the shared walk (core/expr/bind.hpp).
struct binding {
  template <class T, class B>
  static leaf_dev<dev_t<T>> bind_leaf(const leaf<T, B>& l, const index_t* st) {
    leaf_dev<dev_t<T>> ev{reinterpret_cast<const dev_t<T>*>(l.data), {}};
    for (int k = 0; k < max_rank; ++k) ev.st[k] = st[k];
    return ev;
  }
  template <class G>
  static generator_dev<G> bind_generator(const G& g, const index_t* st) {
    generator_dev<G> ev{g, {}};
    for (int k = 0; k < max_rank; ++k) ev.st[k] = st[k];
    return ev;
  }
  template <class T>
  static scalar_dev<dev_t<T>> bind_scalar(const scalar_expr<T>& s) {
    return {to_device<dev_t<T>>(s.value)};
  }
  template <class F, class Traits, class... E>
  static map_dev<F, Traits, E...> bind_map(const F& f, const E&... children) {
    return {f, {children...}};
  }
  template <class U, class E>
  static cast_dev<U, E> bind_cast(const E& child) {
    return {child};
  }
};

/// e bound to the output shape `out`, as one kernel argument.
template <class E>
auto make_evaluator(const E& e, const extents& out) {
  return bind<binding>(e, out);
}

}  // namespace fusor::detail::cuda_eval
