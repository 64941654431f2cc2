#pragma once
// Evaluators: the cpu backend's run-time form of an expression tree, one type per kind of node,
// built by core's walk (core/expr/bind.hpp) with every strided operand's strides aligned to the
// output's index space. The executor walks rows, calling seek() once per row and
// scalar()/packet() along it. An evaluator is a private per-thread copy, so seek() may mutate it.
#include <array>
#include <concepts>
#include <tuple>
#include <type_traits>
#include <utility>

#include "diagnostics.hpp"
#include "../../core/expr/loop_space.hpp"
#include "../../core/expr/bind.hpp"
#include "packet.hpp"
#include "planar_packet.hpp"
#include "small_float_packet.hpp"


FUSOR_SIMD_DIAGNOSTICS_BEGIN

namespace fusor::detail::cpu_eval {

// The cpu loops are decided by the compilation pass, not by the compiler. A .cpp (g++, clang)
// and nvcc's host pass over a .cu compile them identically, with xsimd and with std::complex, so
// the cpu templates of a program that mixes .cpp and .cu files have one body wherever they are
// instantiated (choosing by __CUDACC__ gave the same template two bodies, and the linker kept
// either: tests/mixed checks a .cpp still takes the SIMD path). nvcc's device pass never runs
// these host loops but instantiates the __host__ __device__ functors they call, so there they
// are scalar and compute complex numbers as cuda::std::complex, which device code can call.
//
// The scalar loop computes a functor on float16 and bfloat16 arguments in float32 and rounds the
// result once, as the SIMD loop does (small_float_packet.hpp): both loops give the same bits for
// functors whose body is several operations (sigmoid, fma, a NaN-propagating maximum).
#if defined(__CUDA_ARCH__)
inline constexpr bool simd_loops = false;
template <class T>
using host_compute_t = compute_t<T>;
#else
inline constexpr bool simd_loops = true;
template <class T>
using host_compute_t = std::conditional_t<simd::small<T>, float, T>;
#endif

/// What a subtree yields in SIMD mode for lane type L: nothing (scalar loop only), a batch of L
/// values, or a comparison mask over L.
enum class pk { none, value, mask };

/// Whether a packet of L can be made from a packet of T (packet_traits<L>::lift): a plain operand
/// inside a statement of composite elements, such as a float array in a dual<float> statement,
/// joins its SIMD loop as a packet of constants instead of sending the statement to the scalar loop.
template <class L, class T>
concept packet_liftable = !std::is_same_v<L, T> && packet_traits<T>::available && packet_traits<L>::available &&
                          requires(const packet_t<T>& p) {
                            { packet_traits<L>::lift(p) } -> std::same_as<packet_t<L>>;
                          };

template <class T>
struct leaf_ev {
  using value_type = T;
  static constexpr int leaves = 1;
  template <class L>
  static constexpr pk kind =
      ((std::is_same_v<T, L> && packet_traits<L>::available) || packet_liftable<L, T>) && simd_loops ? pk::value
                                                                                                      : pk::none;

  const T* base;
  index_t st[max_rank];
  const T* row = nullptr;
  index_t inner = 0;

  /// Points at the row given by the first n indices; the row runs along dimension n.
  void seek(const index_t* idx, int n) {
    const T* p = base;
    for (int k = 0; k < n; ++k) p += idx[k] * st[k];
    row = p;
    inner = st[n];
  }
  T scalar(index_t i) const { return row[i * inner]; }
  template <bool Contiguous, class L>
  packet_t<L> packet(index_t i) const {
    using P = packet_traits<L>;
    if constexpr (!std::is_same_v<T, L>) {
      return P::lift(packet<Contiguous, T>(i));
    } else if constexpr (Contiguous) {
      // "contiguous" rows read each operand along unit or zero strides: a broadcast operand (an
      // adjoint's first-write identity, a row vector added to a matrix) stays on this loop, as
      // the check is a branch the predictor always gets right
      if (inner == 0) return P::broadcast(row[0]);
      return P::load(row + i);
    } else {
      if (inner == 1) return P::load(row + i);
      if (inner == 0) return P::broadcast(row[0]);
      L tmp[P::size];
      for (std::size_t k = 0; k < P::size; ++k) tmp[k] = row[(i + index_t(k)) * inner];
      return P::load(tmp);
    }
  }
  template <class V>
  void visit_strides(V&& v) {
    v(st);
  }
};

template <class T>
struct scalar_ev {
  using value_type = T;
  static constexpr int leaves = 0;
  template <class L>
  static constexpr pk kind =
      ((std::is_same_v<T, L> && packet_traits<L>::available) || packet_liftable<L, T>) && simd_loops ? pk::value
                                                                                                      : pk::none;
  T value;
  void seek(const index_t*, int) {}
  T scalar(index_t) const { return value; }
  template <bool Contiguous, class L>
  packet_t<L> packet(index_t) const {
    if constexpr (!std::is_same_v<T, L>) return packet_traits<L>::broadcast(convert_element<L>(value));
    else return packet_traits<L>::broadcast(value);
  }
  template <class V>
  void visit_strides(V&&) {}
};

/// Whether functor F turns packets of element type C into packets of L (C != L): the parts of a
/// composite element, such as the tangent of a dual number (packet_traits<C>::extracts<F, L>).
template <class F, class C, class L>
concept packet_extraction = !std::is_same_v<C, L> && packet_traits<C>::available && packet_traits<L>::available &&
                            requires { requires packet_traits<C>::template extracts<F, L>; };

template <class F, class Traits, class... E>
struct map_ev {
  using value_type = typename Traits::result;
  using compute = typename Traits::compute;
  static constexpr int leaves = (E::leaves + ... + 0);
  // the lanes the operands are evaluated in, for a statement in L
  template <class L>
  using operand_lane = std::conditional_t<packet_extraction<F, compute, L>, compute, L>;

 private:
  template <class L, std::size_t... I>
  static constexpr pk kind_of(std::index_sequence<I...>) {
    if constexpr (packet_extraction<F, compute, L>) {
      constexpr bool args_ok = ((std::tuple_element_t<I, std::tuple<E...>>::template kind<compute> == pk::value) && ...);
      return args_ok && std::is_same_v<value_type, L> ? pk::value : pk::none;
    } else if constexpr (!packet_traits<L>::template supports<F>) {
      return pk::none;
    } else {
      constexpr bool args_ok =
          ((F::template accepts_mask<I>
                ? std::tuple_element_t<I, std::tuple<E...>>::template kind<L> != pk::none
                : (std::tuple_element_t<I, std::tuple<E...>>::template kind<L> == pk::value &&
                   std::is_same_v<compute, L>)) && ...);
      if constexpr (!args_ok) return pk::none;
      else if constexpr (std::is_same_v<value_type, bool>) return pk::mask;
      else if constexpr (std::is_same_v<value_type, L>) return pk::value;
      else return pk::none;
    }
  }

 public:
  template <class L>
  static constexpr pk kind = kind_of<L>(std::index_sequence_for<E...>{});

  F f;
  std::tuple<E...> ch;

  void seek(const index_t* idx, int n) {
    std::apply([&](auto&... e) { (e.seek(idx, n), ...); }, ch);
  }
  value_type scalar(index_t i) const { return scalar_impl(i, std::index_sequence_for<E...>{}); }
  template <bool Contiguous, class L>
  auto packet(index_t i) const {
    return std::apply(
        [&](const auto&... e) {
          return simd::apply_packet(f, e.template packet<Contiguous, operand_lane<L>>(i)...);
        },
        ch);
  }
  template <class V>
  void visit_strides(V&& v) {
    std::apply([&](auto&... e) { (e.visit_strides(v), ...); }, ch);
  }

 private:
  template <std::size_t... I>
  value_type scalar_impl(index_t i, std::index_sequence<I...>) const {
    if constexpr ((std::is_same_v<host_compute_t<typename Traits::template arg<I>>, typename Traits::template arg<I>> &&
                   ...))
      return f(convert_element<typename Traits::template arg<I>>(std::get<I>(ch).scalar(i))...);
    else  // complex in nvcc's device pass: computed as cuda::std::complex (see compute_t)
      return convert_element<value_type>(
          f(convert_element<host_compute_t<typename Traits::template arg<I>>>(std::get<I>(ch).scalar(i))...));
  }
};

template <class U, class E>
struct cast_ev {
  using value_type = U;
  static constexpr int leaves = E::leaves;
  using from = typename E::value_type;
  // a cast between element types whose packets convert (packet_traits<U>::lift: float32 to and
  // from float16 or bfloat16) stays on the SIMD loop
  template <class L>
  static constexpr pk kind = !std::is_same_v<U, L>          ? pk::none
                             : std::is_same_v<from, L>      ? E::template kind<L>
                             : packet_liftable<L, from> && !planar<U> && E::template kind<from> == pk::value
                                 ? pk::value
                                 : pk::none;
  E e;
  void seek(const index_t* idx, int n) { e.seek(idx, n); }
  U scalar(index_t i) const { return convert_element<U>(e.scalar(i)); }
  template <bool Contiguous, class L>
  auto packet(index_t i) const {
    if constexpr (std::is_same_v<from, L>) return e.template packet<Contiguous, L>(i);
    else return packet_traits<L>::lift(e.template packet<Contiguous, from>(i));
  }
  template <class V>
  void visit_strides(V&& v) {
    e.visit_strides(v);
  }
};

/// The run a generator computes together (G::block, e.g. the values of one Philox block), or 1.
template <class G>
constexpr index_t generator_block() {
  if constexpr (requires { G::block; }) return G::block;
  else return 1;
}

/// Values computed from positions (generator_expr): seek() finds the row's first position; a
/// contiguous packet asks the generator for a run of consecutive positions at once, and a
/// statement that only copies the generator has it write its rows straight into the destination.
/// The scalar loop (a bool draw in a where, mixed types, casts, strided destinations) keeps the
/// last block of a blocked generator, so it costs one Philox block per block, not per element
/// (an evaluator is a private per-thread copy, so the kept block is too). The refill is out of
/// line: inlined, the bigger scalar() made g++ compile the packet loop 1.8x slower.
template <class G>
struct generator_ev {
  using value_type = typename G::value_type;
  static constexpr int leaves = 1;
  template <class L>
  static constexpr pk kind =
      ((std::is_same_v<value_type, L> && packet_traits<L>::available) || packet_liftable<L, value_type>) && simd_loops
          ? pk::value
          : pk::none;
  static constexpr index_t block = generator_block<G>();

  G gen;
  index_t st[max_rank];
  index_t row = 0;
  index_t inner = 0;
  mutable index_t kept = -1;  // the first position of the block in kept_values
  mutable value_type kept_values[block];

  void seek(const index_t* idx, int n) {
    index_t p = 0;
    for (int k = 0; k < n; ++k) p += idx[k] * st[k];
    row = p;
    inner = st[n];
  }
  value_type scalar(index_t i) const {
    const index_t pos = row + i * inner;
    if constexpr (block == 1) {
      value_type v;
      gen.fill(pos, &v, 1);
      return v;
    } else {
      const index_t first = pos - pos % block;
      if (first != kept) refill(first);
      return kept_values[pos - first];
    }
  }
  [[gnu::noinline]] void refill(index_t first) const {
    gen.fill(first, kept_values, block);
    kept = first;
  }
  /// d[b, e) = positions row + b ... of a contiguous row (dst = the generator, as it is).
  void write_row(value_type* d, index_t b, index_t e) const { gen.fill(row + b, d + b, e - b); }
  template <bool Contiguous, class L>
  packet_t<L> packet(index_t i) const {
    if constexpr (!std::is_same_v<value_type, L>) return packet_traits<L>::lift(packet<Contiguous, value_type>(i));
    else return own_packet<Contiguous>(i);
  }
  template <bool Contiguous, class L = value_type>
  auto own_packet(index_t i) const {
    using P = packet_traits<L>;
    // a broadcast generator (one position along the row) is rare: out of line, so the hot
    // contiguous path stays as small as it was before zero strides joined it
    if (inner == 0) [[unlikely]] return broadcast_packet<L>();
    L tmp[P::size];
    if (Contiguous || inner == 1) {
      // a generator that can build a packet itself (autodiff's seeds load their planes straight
      // into a dual packet) skips the round trip through lane memory
      if constexpr (requires { gen.template packet<packet_t<L>>(row + i); })
        return gen.template packet<packet_t<L>>(row + i);
      gen.fill(row + i, tmp, index_t(P::size));
    } else {
      for (std::size_t k = 0; k < P::size; ++k) gen.fill(row + (i + index_t(k)) * inner, tmp + k, 1);
    }
    return P::load(tmp);
  }
  template <class L>
  [[gnu::noinline]] packet_t<L> broadcast_packet() const {
    L v;
    gen.fill(row, &v, 1);
    return packet_traits<L>::broadcast(v);
  }
  template <class V>
  void visit_strides(V&& v) {
    v(st);
  }
};

/// The cpu evaluator of each kind of node, for the shared walk (core/expr/bind.hpp).
struct binding {
  template <class T, class B>
  static leaf_ev<T> bind_leaf(const leaf<T, B>& l, const index_t* st) {
    leaf_ev<T> ev{l.data, {}, l.data, 0};
    for (int k = 0; k < max_rank; ++k) ev.st[k] = st[k];
    return ev;
  }
  template <class G>
  static generator_ev<G> bind_generator(const G& g, const index_t* st) {
    generator_ev<G> ev{g, {}, 0, 0, -1, {}};
    for (int k = 0; k < max_rank; ++k) ev.st[k] = st[k];
    return ev;
  }
  template <class T>
  static scalar_ev<T> bind_scalar(const scalar_expr<T>& s) {
    return {s.value};
  }
  template <class F, class Traits, class... E>
  static map_ev<F, Traits, E...> bind_map(const F& f, const E&... children) {
    return {f, {children...}};
  }
  template <class U, class E>
  static cast_ev<U, E> bind_cast(const E& child) {
    return {child};
  }
};

/// e bound to the output shape `out` as the cpu loops walk it.
template <class E>
auto make_evaluator(const E& e, const extents& out) {
  return bind<binding>(e, out);
}

}  // namespace fusor::detail::cpu_eval

FUSOR_SIMD_DIAGNOSTICS_END
