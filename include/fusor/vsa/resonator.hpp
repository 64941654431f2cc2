#pragma once
// A resonator network (Frady, Kent, Olshausen and Sommer, 2020): factorises bound products
// s = x_1 * x_2 * ... * x_F, each x_f an item of codebook f, without trying the prod_f N_f
// combinations. Each factor keeps an estimate, initially the superposition of its whole codebook;
// an iteration updates each factor in turn from s unbound by the other estimates, cleaned up
// through its codebook:
//   soft (the original): x_f <- superpose(similarity(unbind(s, others), X_f), X_f)
//   hard:                x_f <- the codebook item most similar to unbind(s, others)
// Batched: s may hold Q products, which resonate together (every step is one GEMM per factor).
// Non-commutative models (GHRR, VTB) factorise the left fold s = ((x_1 x_2) x_3) ... in order,
// through unbind and unbind_left.
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "item_memory.hpp"
#include "operations.hpp"
#include "../core/ext.hpp"

namespace fusor::vsa {

struct resonator_options {
  index_t max_iterations = 100;
  // winner-take-all: each estimate becomes its single best codebook item. Fewer iterations, but
  // with three or more factors it settles in spurious fixed points far more often than the
  // weighted superposition (the first unbinding is too noisy to pick the right item greedily).
  bool hard = false;
  // Where the estimates start:
  //   superposition  each whole codebook superposed, projected onto the model's domain (the
  //                  original);
  //   sum            each codebook's plain sum, not projected (models whose vectors add: real and
  //                  complex elements). Codebooks that are a group need it: the powers z^r of
  //                  an FHRR root of unity (residue numbers) sum to m where z is 1 and to 0
  //                  elsewhere, which projection turns into the identity, a start with no
  //                  information, while the sum itself unbinds the other factors exactly on
  //                  those positions.
  enum class start { superposition, sum } begin = start::superposition;
};

template <class T, class B>
struct resonator_result {
  std::vector<array<std::int64_t, B>> indices;  // per factor: (Q) the decoded item of each product
  std::vector<array<T, B>> estimates;           // per factor: (Q, width) the final estimates
  index_t iterations = 0;                       // iterations run
  bool converged = false;                       // a fixed point: indices and estimates unchanged
};

namespace detail {
template <class T, class B>
std::vector<T> host_copy(const array<T, B>& a) {
  const auto h = to<cpu>(a);
  return std::vector<T>(h.data(), h.data() + h.size());
}
/// `next` equals `prev`: exactly for integer and bit vectors, within 1e-4 of the largest magnitude
/// for real and complex ones (an elementwise pass, O(Q d), not a (Q, Q) similarity).
template <class T, class B>
bool unchanged(const array<T, B>& next, const array<T, B>& prev) {
  if constexpr (std::is_integral_v<T>) {
    return bool(fusor::all(next == prev));
  } else {
    const double scale = double(fusor::max(abs(prev)));
    return double(fusor::max(abs(next - prev))) <= 1e-4 * scale;
  }
}
}  // namespace detail

/// Factorises the rows of `products` ((Q, width) or one (width) vector) over the codebooks (one
/// item_memory per factor, in binding order). Convergence: every factor's decoded index (the most
/// similar codebook item) of every product and every estimate are the same after an iteration
/// as before it (a fixed point).
template <model M, backend B, class X>
resonator_result<typename M::value_type, B> resonate(const M& m, const X& products,
                                                     const std::vector<item_memory<M, B>>& codebooks,
                                                     const resonator_options& o = {}) {
  using T = typename M::value_type;
  static_assert(std::is_same_v<backend_of_t<X>, B>,
                "fusor::vsa::resonate: the products and the codebooks must live on the same backend");
  const extents ps = detail::checked_rows(m, products, "resonate", "products");
  if (ps.size() > 2)
    throw shape_error("fusor::vsa::resonate: expects products of shape (Q, " + std::to_string(m.width()) + ") or (" +
                      std::to_string(m.width()) + "), got " + to_string(ps));
  if (codebooks.size() < 2)
    throw value_error("fusor::vsa::resonate: needs at least two codebooks (factors), got " +
                      std::to_string(codebooks.size()));
  for (std::size_t f = 0; f < codebooks.size(); ++f)
    if (codebooks[f].size() == 0)
      throw value_error("fusor::vsa::resonate: codebook " + std::to_string(f) + " holds no items");
  if (o.max_iterations < 1)
    throw value_error("fusor::vsa::resonate: needs max_iterations >= 1, got " + std::to_string(o.max_iterations));
  const index_t q = ps.size() == 2 ? ps[0] : 1;
  const auto pc = fusor::ext::contiguous_of(products);
  const array_view<T, B> s(pc.data(), extents{q, m.width()}, extents{m.width(), 1});
  const std::size_t nf = codebooks.size();

  resonator_result<T, B> r;
  std::vector<array<T, B>>& est = r.estimates;
  if (q == 0) {  // nothing to factorise: a fixed point at once
    for (std::size_t f = 0; f < nf; ++f) {
      r.indices.push_back(zeros<std::int64_t, B>(extents{0}));
      est.push_back(zeros<T, B>(extents{0, m.width()}));
    }
    r.converged = true;
    return r;
  }
  std::vector<std::vector<std::int64_t>> last(nf);
  constexpr bool adds = std::is_floating_point_v<T> || fusor::is_complex_v<T>;
  if (!adds && o.begin == resonator_options::start::sum)
    throw value_error("fusor::vsa::resonate: a start from the codebooks' plain sums needs vectors that add (real or "
                      "complex elements), got " + std::string(M::name));
  for (std::size_t f = 0; f < nf; ++f) {  // every item at once
    if constexpr (adds) {
      if (o.begin == resonator_options::start::sum) {
        const array<T, B> total = fusor::sum(codebooks[f].items(), 0, true);
        est.push_back(array<T, B>(broadcast_to(total, extents{q, m.width()})));
        continue;
      }
    }
    est.push_back(vsa::superpose(m, full<float, B>(extents{q, codebooks[f].size()}, 1.0f), codebooks[f].items()));
  }

  // s unbound by every estimate but f's. Commutative models unbind the product of the others at
  // once. The others peel the left fold s = ((x_0 x_1) x_2) ... from the right (unbind by x_{F-1},
  // then x_{F-2}, ... down to x_{f+1}), then remove x_0 ... x_{f-1} bound together from the left
  // (unbind_left): exact for GHRR, and it needs no associativity (VTB's bind is not associative).
  auto isolated = [&](std::size_t f) {
    if constexpr (M::commutative) {
      std::size_t g0 = f == 0 ? 1 : 0;
      array<T, B> p = est[g0].copy();
      for (std::size_t g = g0 + 1; g < nf; ++g)
        if (g != f) p = vsa::bind(m, p, est[g]);
      return array<T, B>(vsa::unbind(m, s, p));
    } else {
      array<T, B> t(s);
      for (std::size_t g = nf - 1; g > f; --g) t = array<T, B>(vsa::unbind(m, t, est[g]));
      if (f == 0) return t;
      array<T, B> left = est[0].copy();
      for (std::size_t g = 1; g < f; ++g) left = vsa::bind(m, left, est[g]);
      return array<T, B>(vsa::unbind_left(m, t, left));
    }
  };
  r.indices.resize(nf);
  for (index_t it = 1; it <= o.max_iterations; ++it) {
    bool same = true;
    for (std::size_t f = 0; f < nf; ++f) {
      const array<T, B> u = isolated(f);
      // cosine weights for every model (BSC's hamming, in [0, 1], would weight unrelated items 1/2)
      const array<float, B> sims = codebooks[f].similarity(u, metric::cosine);  // (Q, N_f)
      r.indices[f] = argmax(sims, -1);
      const auto now = detail::host_copy(r.indices[f]);
      same = same && now == last[f];
      last[f] = now;
      array<T, B> next = o.hard ? take(codebooks[f].items(), r.indices[f], 0)
                                : vsa::superpose(m, sims, codebooks[f].items());
      same = same && detail::unchanged(next, est[f]);
      est[f] = std::move(next);
    }
    r.iterations = it;
    if (same) {
      r.converged = true;
      break;
    }
  }
  return r;
}

}  // namespace fusor::vsa
