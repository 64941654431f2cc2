#pragma once
// einsum for one or two operands: the explicit form "ij,jk->ik" and the implicit form "ij,jk"
// (output: the indices that appear once, in alphabetical order). A repeated index within an
// operand takes its diagonal (a view); indices missing from the output are summed (one operand)
// or contracted with one batched GEMM (two operands; permute + reshape, copying only what cannot
// be viewed as a matrix); without a contraction two operands multiply in one fused pass.
// Ellipses and three or more operands are not supported and say so.
#include <cctype>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "../core/create.hpp"
#include "../core/reduce.hpp"
#include "detail/contract.hpp"

namespace fusor {

namespace detail::linalg {

struct einsum_spec {
  std::string text;         // the pattern as given, for messages
  std::string in[2];        // indices of each operand
  std::string out;          // output indices
  index_t size[128] = {};   // size of each index (0 until seen: sizes may be 0 too, see `seen`)
  bool seen[128] = {};

  std::string where() const { return "fusor: einsum '" + text + "': "; }
};

inline einsum_spec parse_einsum(std::string_view pattern, int given) {
  einsum_spec s;
  s.text = std::string(pattern);
  std::string p;
  for (char ch : pattern)
    if (!std::isspace(static_cast<unsigned char>(ch))) p += ch;
  if (p.find('.') != std::string::npos)
    throw value_error(s.where() + "ellipsis ('...') is not supported; name every axis");
  const auto arrow = p.find("->");
  const bool explicit_out = arrow != std::string::npos;
  const std::string lhs = explicit_out ? p.substr(0, arrow) : p;
  const std::string rhs = explicit_out ? p.substr(arrow + 2) : std::string();
  auto check_chars = [&](const std::string& part) {
    for (char ch : part)
      if (!std::isalpha(static_cast<unsigned char>(ch)) && ch != ',')
        throw value_error(s.where() + "invalid character '" + std::string(1, ch) +
                          "' (expected letters a-z, A-Z, commas and one '->')");
  };
  check_chars(lhs);
  check_chars(rhs);
  if (rhs.find(',') != std::string::npos)
    throw value_error(s.where() + "the output after '->' must be a single list of indices");
  int count = 1;
  for (char ch : lhs) count += ch == ',';
  if (count > 2 || given > 2)
    throw value_error(s.where() + std::to_string(std::max(count, given)) +
                      " operands are not supported (at most 2); contract in steps, e.g. "
                      "einsum(\"ik,kl->il\", einsum(\"ij,jk->ik\", a, b), c)");
  if (count != given)
    throw value_error(s.where() + "the pattern names " + std::to_string(count) + " operand(s) but " +
                      std::to_string(given) + " were given");
  const auto comma = lhs.find(',');
  s.in[0] = lhs.substr(0, comma);
  if (count == 2) s.in[1] = lhs.substr(comma + 1);
  int uses[128] = {};
  for (int k = 0; k < count; ++k)
    for (char ch : s.in[k]) ++uses[static_cast<unsigned char>(ch)];
  if (explicit_out) {
    for (std::size_t i = 0; i < rhs.size(); ++i) {
      const char ch = rhs[i];
      if (rhs.find(ch) != i)
        throw value_error(s.where() + "index '" + std::string(1, ch) + "' appears twice in the output");
      if (uses[static_cast<unsigned char>(ch)] == 0)
        throw value_error(s.where() + "output index '" + std::string(1, ch) + "' does not appear in any operand");
    }
    s.out = rhs;
  } else {
    for (int ch = 0; ch < 128; ++ch)
      if (uses[ch] == 1) s.out += char(ch);
  }
  return s;
}

// Records operand k's index sizes (checking them against the pattern and each other) and returns
// its view with repeated indices merged into their diagonal; `labels` becomes the unique indices.
template <class T, class B>
strided<T, B> einsum_operand(einsum_spec& s, int k, const strided<T, B>& v, std::string& labels) {
  const std::string& idx = s.in[k];
  if (int(idx.size()) != v.ndim())
    throw shape_error(s.where() + "operand " + std::to_string(k) + " has shape " + to_string(v.shape()) +
                      " (rank " + std::to_string(v.ndim()) + ") but the pattern gives it " +
                      std::to_string(idx.size()) + " indices ('" + idx + "')");
  labels.clear();
  extents shape, strides;
  for (int d = 0; d < v.ndim(); ++d) {
    const unsigned char ch = static_cast<unsigned char>(idx[std::size_t(d)]);
    if (s.seen[ch] && s.size[ch] != v.shape()[d]) {
      // name where the index got its first size
      int first_op = 0;
      for (int j = 0; j <= k; ++j)
        if (s.in[j].find(char(ch)) != std::string::npos) {
          first_op = j;
          break;
        }
      throw shape_error(s.where() + "index '" + std::string(1, char(ch)) + "' has size " +
                        std::to_string(s.size[ch]) + " in operand " + std::to_string(first_op) + " and size " +
                        std::to_string(v.shape()[d]) + " in operand " + std::to_string(k) + " (shape " +
                        to_string(v.shape()) + ")");
    }
    s.seen[ch] = true;
    s.size[ch] = v.shape()[d];
    const auto pos = labels.find(char(ch));
    if (pos == std::string::npos) {
      labels += char(ch);
      shape.push_back(v.shape()[d]);
      strides.push_back(v.strides()[d]);
    } else {
      strides[int(pos)] += v.strides()[d];  // a repeated index walks the diagonal
    }
  }
  return {v.data(), shape, strides};
}

// Sums v over the indices for which drop(label) holds; labels loses them. Each sum is sum's
// (integers accumulate in int64) stored straight into R, in one pass.
template <class R, class B, class Drop>
operand<R, B> sum_indices(const strided<R, B>& v, std::string& labels, Drop&& drop) {
  operand<R, B> o;
  o.view = v;
  for (int k = int(labels.size()) - 1; k >= 0; --k) {
    if (!drop(labels[std::size_t(k)])) continue;
    o.keep = reduce_along<sum_op, R>(o.view.as_leaf(), k, false);
    o.view = o.keep.view();
    labels.erase(std::size_t(k), 1);
  }
  return o;
}

// v (indices `labels`, each in `out`) rearranged into the output's index order, as a new array.
template <class R, class B>
array<R, B> to_output(array<R, B>&& owned, const strided<R, B>& v, const std::string& labels,
                      const std::string& out) {
  int perm[max_rank] = {};
  bool identity = true;
  for (std::size_t i = 0; i < out.size(); ++i) {
    perm[i] = int(labels.find(out[i]));
    identity = identity && perm[i] == int(i);
  }
  if (identity && owned.data() == v.data() && owned.data() != nullptr && v.is_contiguous()) return std::move(owned);
  return permuted(v, perm, int(out.size())).copy();
}

template <class R, class B>
array<R, B> einsum1(einsum_spec& s, const strided<R, B>& v0) {
  std::string la;
  const strided<R, B> v = einsum_operand(s, 0, v0, la);
  if (s.out.empty()) return full<R, B>(extents{}, convert_element<R>(sum(v.as_leaf())));
  auto o = sum_indices(v, la, [&](char c) { return s.out.find(c) == std::string::npos; });
  return to_output(std::move(o.keep), o.view, la, s.out);
}

template <class R, class B>
array<R, B> einsum2(einsum_spec& s, const strided<R, B>& v0, const strided<R, B>& v1) {
  std::string la, lb;
  const strided<R, B> a0 = einsum_operand(s, 0, v0, la);
  const strided<R, B> b0 = einsum_operand(s, 1, v1, lb);
  auto in_out = [&](char c) { return s.out.find(c) != std::string::npos; };
  // an index only one operand has and the output lacks is summed out of that operand first
  const std::string la0 = la, lb0 = lb;
  auto oa = sum_indices(a0, la, [&](char c) { return !in_out(c) && lb0.find(c) == std::string::npos; });
  auto ob = sum_indices(b0, lb, [&](char c) { return !in_out(c) && la0.find(c) == std::string::npos; });
  const strided<R, B> a = oa.view, b = ob.view;

  bool contraction = false;
  for (char c : la) contraction = contraction || (!in_out(c) && lb.find(c) != std::string::npos);
  if (!contraction) {
    // a product of broadcast views in the output's order: one fused pass
    extents sh, sa, sb, stra, strb;
    for (char c : s.out) {
      const index_t n = s.size[static_cast<unsigned char>(c)];
      sh.push_back(n);
      const auto pa = la.find(c), pb = lb.find(c);
      sa.push_back(pa == std::string::npos ? 1 : n);
      stra.push_back(pa == std::string::npos ? 0 : a.strides()[int(pa)]);
      sb.push_back(pb == std::string::npos ? 1 : n);
      strb.push_back(pb == std::string::npos ? 0 : b.strides()[int(pb)]);
    }
    const strided<R, B> xa(a.data(), sa, stra), xb(b.data(), sb, strb);
    array<R, B> r(sh);
    detail::assign_expr(r.as_leaf(), times(xa.as_leaf(), xb.as_leaf()), false);
    return r;
  }
  axis_list bat_a, bat_b, free_a, free_b, con_a, con_b;
  std::string order;  // the indices of contract's result: batch, free of a, free of b
  for (char c : s.out)
    if (la.find(c) != std::string::npos && lb.find(c) != std::string::npos) {
      bat_a.push_back(int(la.find(c)));
      bat_b.push_back(int(lb.find(c)));
      order += c;
    }
  for (char c : s.out)
    if (la.find(c) != std::string::npos && lb.find(c) == std::string::npos) {
      free_a.push_back(int(la.find(c)));
      order += c;
    }
  for (char c : s.out)
    if (lb.find(c) != std::string::npos && la.find(c) == std::string::npos) {
      free_b.push_back(int(lb.find(c)));
      order += c;
    }
  for (std::size_t i = 0; i < la.size(); ++i)
    if (!in_out(la[i]) && lb.find(la[i]) != std::string::npos) {
      con_a.push_back(int(i));
      con_b.push_back(int(lb.find(la[i])));
    }
  array<R, B> r = contract(a, b, bat_a, free_a, con_a, bat_b, con_b, free_b);
  const strided<R, B> rv = r.view();
  return to_output(std::move(r), rv, order, s.out);
}

}  // namespace detail::linalg

/// np.einsum with one operand: transposes ("ij->ji"), diagonals ("ii->i"), traces ("ii->"),
/// sums ("ij->", "ij->j"). Always a new array (0-d when every index is summed).
template <expression A>
auto einsum(std::string_view pattern, const A& a) {
  using N = node_t<A>;
  using R = value_t<N>;
  auto s = detail::linalg::parse_einsum(pattern, 1);
  const auto o = detail::linalg::materialize<R>(detail::to_node(a));
  return detail::linalg::einsum1(s, o.view);
}

/// np.einsum with two operands: matrix products ("ij,jk->ik"), batched ("bij,bjk->bik"), inner
/// ("i,i->"), outer ("i,j->ij"), elementwise ("ij,ij->ij") and any contraction that is a
/// permutation, a reshape and one batched GEMM. The result type is promote_t<A, B>.
template <expression A, expression Bx>
auto einsum(std::string_view pattern, const A& a, const Bx& b) {
  using args = detail::linalg::binary_args<A, Bx>;
  using R = typename args::R;
  detail::linalg::require_blas<typename args::B>();
  auto s = detail::linalg::parse_einsum(pattern, 2);
  const args x(a, b);
  const auto oa = detail::linalg::materialize<R>(x.na);
  const auto ob = detail::linalg::materialize<R>(x.nb);
  return detail::linalg::einsum2(s, oa.view, ob.view);
}

/// Three or more operands are not supported: throws value_error (contract in steps instead).
template <expression A, expression Bx, expression C, expression... Rest>
array<value_t<node_t<A>>, backend_of_t<node_t<A>>> einsum(std::string_view pattern, const A&, const Bx&, const C&,
                                                           const Rest&...) {
  detail::linalg::parse_einsum(pattern, int(3 + sizeof...(Rest)));
  throw value_error("fusor: einsum '" + std::string(pattern) + "': at most 2 operands are supported");
}

}  // namespace fusor
