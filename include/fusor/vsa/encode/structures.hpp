#pragma once
// Encoders of structures built from the batched operations, each a few whole-batch calls (never a
// loop over windows or items):
//   ngram_vectors / ngrams  torchhd's ngrams: each window of n consecutive rows of a sequence bound
//                           as bind_sequence does, permute(x_i, n - 1) * ... * x_{i+n-1}, then the
//                           windows bundled (a stride > 1 skips windows);
//   record                  torchhd's hash_table: values bound to their keys, bind(value, key), and
//                           bundled; unbind(record, key) gives the value back (noisy), and an item
//                           memory of the values cleans it up.
#include <algorithm>
#include <complex>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "../../core/indexing.hpp"
#include "../fhrr.hpp"
#include "../hrr.hpp"
#include "../map.hpp"
#include "../operations.hpp"
#include "../../core/ext.hpp"

namespace fusor::vsa {

namespace detail {
/// o[j] = a[j] * b[j] (Accumulate: o[j] += a[j] * b[j]) for j < count; complex products written out
/// in real arithmetic (std::complex's operator* checks for infinities element by element, which no
/// compiler vectorises). o may be a.
template <bool Accumulate, class T>
FUSOR_HD void products(T* o, const T* a, const T* b, index_t count) {
  if constexpr (fusor::is_complex_v<T>) {
    using R = typename T::value_type;
    R* of = reinterpret_cast<R*>(o);
    const R *af = reinterpret_cast<const R*>(a), *bf = reinterpret_cast<const R*>(b);
    for (index_t j = 0; j < count; ++j) {
      const R ar = af[2 * j], ai = af[2 * j + 1], br = bf[2 * j], bi = bf[2 * j + 1];
      const R re = ar * br - ai * bi, im = ar * bi + ai * br;
      if constexpr (Accumulate) {
        of[2 * j] += re;
        of[2 * j + 1] += im;
      } else {
        of[2 * j] = re;
        of[2 * j + 1] = im;
      }
    }
  } else {
    for (index_t j = 0; j < count; ++j) {
      if constexpr (Accumulate) o[j] += a[j] * b[j];
      else o[j] = a[j] * b[j];
    }
  }
}

/// The length L of sequences of shape (..., L, width) after checking the n-gram parameters.
template <class M>
index_t checked_sequences(const M& m, const extents& s, index_t n, index_t stride, const char* what) {
  if (s.size() < 2)
    throw shape_error("fusor::vsa::" + std::string(what) + ": expects sequences of shape (..., L, " +
                      std::to_string(m.width()) + "), got shape " + to_string(s));
  const index_t len = s[s.size() - 2];
  if (n < 1 || stride < 1 || n > len)
    throw value_error("fusor::vsa::" + std::string(what) + ": expects 1 <= n <= L (the sequence length " +
                      std::to_string(len) + ") and stride >= 1, got n = " + std::to_string(n) +
                      ", stride = " + std::to_string(stride));
  return len;
}

/// The models whose bind is an elementwise product of plain elements: a record of codebook rows
/// can then be summed in one pass without materialising the bound rows.
template <class M>
inline constexpr bool elementwise_product_v =
    std::is_same_v<M, map_b> || std::is_same_v<M, map_i> || std::is_same_v<M, map_c> || std::is_same_v<M, fhrr>;

/// Element (r, j) of an (n, w) output: sum over p < f of keys[p, j] * book[idx[r, p], j]. Each
/// run of a row is summed in blocks of 256 elements that stay in L1 while the f pairs of rows
/// stream past.
template <class T, bool Sign = false>
struct bound_row_sums {
  using value_type = T;
  const T *keys, *book;
  const std::int64_t* idx;
  index_t w, f;
  FUSOR_HD void fill(index_t first, T* out, index_t count) const {
    index_t row = first / w, col = first % w, i = 0;
    while (i < count) {
      const index_t run = w - col < count - i ? w - col : count - i;
      for (index_t b = 0; b < run; b += 256) {
        const index_t e = run - b < 256 ? run : b + 256;
        T* o = out + i;
        for (index_t j = b; j < e; ++j) o[j] = T(0);
        for (index_t p = 0; p < f; ++p) {
          const T* kp = keys + p * w + col;
          const T* vp = book + idx[row * f + p] * w + col;
          products<true>(o + b, kp + b, vp + b, e - b);
        }
        if constexpr (Sign) {  // bundle's sign, a tie taking the first product (p = 0) as bundle does
          const T* k0 = keys + col;
          const T* v0 = book + idx[row * f] * w + col;
          for (index_t j = b; j < e; ++j) {  // arithmetic, not branches: the loop vectorises (and is exact)
            const T sgn = T(o[j] > T(0)) - T(o[j] < T(0));
            o[j] = sgn + T(o[j] == T(0)) * (k0[j] * v0[j]);
          }
        }
      }
      i += run;
      col = 0;
      ++row;
    }
  }
};

/// The rows of sequences stored as (S, L, w) rows: every sequence has all L rows.
template <class T>
struct stored_rows {
  const T* x;
  index_t w, len;
  FUSOR_HD index_t length(index_t) const { return len; }
  FUSOR_HD const T* row(index_t seq, index_t pos) const { return x + (seq * len + pos) * w; }
};
/// The rows of token sequences (S, L) into a codebook (K, w): a sequence ends at its first
/// negative token (the padding of shorter sequences).
template <class T>
struct token_rows {
  const T* book;
  const std::int64_t* tok;
  index_t w, len;
  FUSOR_HD index_t length(index_t seq) const {
    index_t l = 0;
    while (l < len && tok[seq * len + l] >= 0) ++l;
    return l;
  }
  FUSOR_HD const T* row(index_t seq, index_t pos) const { return book + tok[seq * len + pos] * w; }
};

/// Element (s, j) of an (S, w) output: the sum over windows v of the product over k < n of
/// row(s, v stride + k)[(j - (n - 1 - k)) mod w], the n-grams of sequence s summed, for the models
/// whose bind is an elementwise product and whose permute is np.roll. Blocks of 256 elements of a
/// row stay in L1 while the windows' rows stream past; a rolled row is read as its two stretches.
/// Sign: bundle's sign in the same pass, a tie taking the first window's element (as bundle does).
template <class T, class Rows, bool Sign = false>
struct window_product_sums {
  using value_type = T;
  Rows rows;
  index_t w, n, stride;
  // p[j] = src[j] (Op 0), p[j] *= src[j] (Op 1) or o[j] += p[j] * src[j] (Op 2) for j < count
  template <int Op>
  FUSOR_HD static void step(T* p, T* o, const T* src, index_t count) {
    if constexpr (Op == 0) {
      for (index_t j = 0; j < count; ++j) p[j] = src[j];
    } else if constexpr (Op == 1) {
      products<false>(p, p, src, count);
    } else {
      products<true>(o, p, src, count);
    }
  }
  // the step over output columns c0 .. c0 + m - 1 of a row rolled by `shift`: row[(c - shift) mod w],
  // up to two stretches
  template <int Op>
  FUSOR_HD void rolled(T* p, T* o, const T* row, index_t c0, index_t m, index_t shift) const {
    index_t start = c0 - shift % w;
    if (start < 0) start += w;
    const index_t part = w - start < m ? w - start : m;
    step<Op>(p, o, row + start, part);
    if (part < m) step<Op>(p + part, o + part, row, m - part);
  }
  FUSOR_HD void fill(index_t first, T* out, index_t count) const {
    index_t seq = first / w, col = first % w, i = 0;
    T prod[256];
    [[maybe_unused]] T first_window[Sign ? 256 : 1];
    while (i < count) {
      const index_t run = w - col < count - i ? w - col : count - i;
      const index_t len = rows.length(seq), windows = len < n ? 0 : (len - n) / stride + 1;
      for (index_t b = 0; b < run; b += 256) {
        const index_t e = run - b < 256 ? run : b + 256, c0 = col + b, m = e - b;
        T* o = out + i + b;
        for (index_t j = 0; j < m; ++j) o[j] = T(0);
        for (index_t v = 0; v < windows; ++v) {
          const index_t p0 = v * stride;  // the window's first position
          if (n == 1) {
            for (index_t j = 0; j < m; ++j) prod[j] = T(1);
            rolled<2>(prod, o, rows.row(seq, p0), c0, m, 0);
          } else {
            // the first factor copied, the middle ones multiplied in, the last one multiplied and
            // added to the sum in the same loop: n passes over the block per window
            rolled<0>(prod, o, rows.row(seq, p0), c0, m, n - 1);
            for (index_t k = 1; k + 1 < n; ++k) rolled<1>(prod, o, rows.row(seq, p0 + k), c0, m, n - 1 - k);
            rolled<2>(prod, o, rows.row(seq, p0 + n - 1), c0, m, 0);
          }
          if constexpr (Sign) {
            if (v == 0)  // the first window's product is the sum so far
              for (index_t j = 0; j < m; ++j) first_window[j] = o[j];
          }
        }
        if constexpr (Sign) {  // arithmetic, not branches: the loop vectorises (and is exact)
          if (windows == 0)
            for (index_t j = 0; j < m; ++j) first_window[j] = T(0);
          for (index_t j = 0; j < m; ++j) {
            const T sgn = T(o[j] > T(0)) - T(o[j] < T(0));
            o[j] = sgn + T(o[j] == T(0)) * first_window[j];
          }
        }
      }
      i += run;
      col = 0;
      ++seq;
    }
  }
};
}  // namespace detail

/// The n-gram vectors of sequences x (..., L, width): window j binds rows j s ... j s + n - 1 (s the
/// stride) as bind_sequence does. Shape (..., W, width), W = (L - n) / s + 1.
template <model M, class X>
auto ngram_vectors(const M& m, const X& x, index_t n, index_t stride = 1) {
  const index_t len =
      detail::checked_sequences(m, detail::checked_rows(m, x, "ngram_vectors", "sequences"), n, stride, "ngram_vectors");
  const auto xc = fusor::ext::contiguous_of(x);
  const auto v = xc.view();
  using T = value_t<decltype(v)>;
  using B = backend_of_t<decltype(v)>;
  const index_t windows = (len - n) / stride + 1;
  const int axis = v.ndim() - 2;
  extents shape = v.shape(), strides = v.strides();
  shape[axis] = windows;
  strides[axis] *= stride;
  // the k-th member of every window at once: rows k, k + s, ... as one strided view
  auto member = [&](index_t k) { return array_view<T, B>(v.data() + k * v.strides()[axis], shape, strides); };
  array<T, B> acc(m.permute(member(0), n - 1));
  for (index_t k = 1; k < n; ++k) {
    const array<T, B> p(m.permute(member(k), n - 1 - k));
    acc = m.bind(acc, p);
  }
  return acc;
}

namespace detail {
/// HRR's circular convolution commutes with the cyclic shift that marks order: bind(permute(u), v)
/// is permute(bind(u, v)), the same vector as bind(permute(v), u), so an encoding that tells u -> v
/// from v -> u is impossible on HRR (FHRR, its Fourier-domain twin, has no such symmetry).
template <class M>
void require_order(const char* what, const char* order) {
  if constexpr (std::is_same_v<M, hrr>)
    throw value_error("fusor::vsa::" + std::string(what) + ": HRR's circular convolution commutes with the cyclic "
                      "shift that marks " + order + ", so it cannot be told apart; use FHRR or a MAP model");
}

/// The number of rows of an array of shape (..., L): the product of the leading extents (also
/// when L is 0).
inline index_t leading_count(const extents& s) {
  index_t n = 1;
  for (int k = 0; k + 1 < s.size(); ++k) n *= s[k];
  return n;
}
/// The length of each token row (..., L) of tok, checked on the host (one transfer on cuda): a row
/// holds tokens in [0, k), then -1 (padding) to its end. A bad token is an index_error naming its
/// row, its position and what was expected (`token` describes [0, k)).
template <class B>
std::vector<index_t> checked_token_lengths(const array<std::int64_t, B>& tok, index_t k, const char* what, const char* token,
                                           const char* row = "sequence") {
  const extents ts = tok.shape();
  const index_t len = ts.size() > 0 ? ts[ts.size() - 1] : 0, seqs = leading_count(ts);
  const auto host = to<cpu>(tok);
  std::vector<index_t> lengths(static_cast<std::size_t>(seqs));
  for (index_t s = 0; s < seqs; ++s) {
    const std::int64_t* t = host.data() + s * len;
    auto bad = [&](index_t p, const std::string& expected) {
      return index_error("fusor::vsa::" + std::string(what) + ": " + row + " " + std::to_string(s) + " has token " +
                         std::to_string(t[p]) + " at position " + std::to_string(p) + ", expected " + expected);
    };
    const std::string valid = std::string(token) + " in [0, " + std::to_string(k) + ") or -1 (padding)";
    index_t l = 0;
    while (l < len && t[l] >= 0) {
      if (t[l] >= k) throw bad(l, valid);
      ++l;
    }
    if (l < len && t[l] != -1) throw bad(l, valid);
    for (index_t p = l + 1; p < len; ++p)
      if (t[p] != -1)
        throw bad(p, "-1: the " + std::string(row) + " ended at position " + std::to_string(l) + " (a " + row +
                         " ends at its first -1)");
    lengths[static_cast<std::size_t>(s)] = l;
  }
  return lengths;
}

/// The normalisation bundle applies for options o (model_default resolved).
template <class M>
normalization bundle_normalization(const bundle_options& o) {
  if (o.norm != normalization::model_default) return o.norm;
  return std::is_same_v<M, map_i> ? normalization::none : normalization::project;
}
/// The windows' products of each sequence summed and bundled in one pass (MAP, FHRR; ties broken by
/// the first window): (S, w).
template <class M, class B, class Rows>
auto windows_bundled(const M& m, const Rows& rows, index_t seqs, index_t n, index_t stride, const bundle_options& o) {
  using T = typename M::value_type;
  const index_t w = m.width();
  const normalization nm = bundle_normalization<M>(o);
  if constexpr (std::is_same_v<M, map_b> || std::is_same_v<M, map_i>) {
    if (nm != normalization::none)  // the sign in the same pass
      return array<T, B>(generate<B>(window_product_sums<T, Rows, true>{rows, w, n, stride}, extents{seqs, w}));
  }
  array<T, B> r = generate<B>(window_product_sums<T, Rows>{rows, w, n, stride}, extents{seqs, w});
  if (nm != normalization::none) {
    if constexpr (std::is_same_v<M, map_c>) r = clip(r, T(-1), T(1));
    else if constexpr (std::is_same_v<M, fhrr>) r = m.normalize(r);
  }
  return r;
}
}  // namespace detail

/// The n-grams of sequences x (..., L, width) bundled into one vector each: (..., width). For MAP
/// and FHRR with ties broken by the first vector, one pass sums the windows' products without
/// making the (..., W, width) n-gram vectors (see ngram_vectors for the rest).
template <model M, class X>
auto ngrams(const M& m, const X& x, index_t n, index_t stride = 1, const bundle_options& o = {}) {
  if constexpr (detail::elementwise_product_v<M>) {
    if (o.ties == tie_break::first) {
      const extents s = detail::checked_rows(m, x, "ngrams", "sequences");
      const index_t len = detail::checked_sequences(m, s, n, stride, "ngrams");
      const auto xc = fusor::ext::contiguous_of(x);
      using T = typename M::value_type;
      using B = backend_of_t<decltype(xc.view())>;
      const index_t w = m.width(), seqs = s.numel() / (len * w);
      const extents out = detail::bundle_shape(s, M::name, "ngrams");  // (..., width)
      return detail::windows_bundled<M, B>(m, detail::stored_rows<T>{xc.data(), w, len}, seqs, n, stride, o).reshape(out);
    }
  }
  return array<typename M::value_type, backend_of_t<decltype(fusor::ext::contiguous_of(x).view())>>(
      bundle(m, ngram_vectors(m, x, n, stride), o));
}

/// The n-grams of token sequences bundled into one vector each: tokens (..., L) index the rows of a
/// codebook (K, width), and a sequence ends at its first -1 (the padding that lets sequences of
/// different lengths share one array: every later token of its row must be -1 too). Sequence i's
/// vector is ngrams(m, take(codebook, its tokens, 0), n, stride, o): (..., width). For MAP and FHRR
/// with ties broken by the first vector, one pass reads the codebook's rows (no (..., L, width)
/// gathered rows in memory); other models and options gather and bundle the sequences of each
/// length in one call. The tokens are checked on the host (one transfer on cuda): a token outside
/// [0, K) other than the padding, a token after the padding, or a sequence of fewer than n tokens
/// is an error naming the sequence.
template <model M, class C, expression I>
auto ngrams(const M& m, const C& codebook, const I& tokens, index_t n, index_t stride = 1, const bundle_options& o = {}) {
  const extents cs = detail::checked_rows(m, codebook, "ngrams", "codebook");
  const auto cc = fusor::ext::contiguous_of(codebook);
  using T = typename M::value_type;
  using B = backend_of_t<decltype(cc.view())>;
  static_assert(integer<value_t<I>>,
                "fusor::vsa::ngrams: tokens must be integers (rows of the codebook, -1 for padding)");
  const array<std::int64_t, B> tok(cast<std::int64_t>(tokens));
  const extents ts = tok.shape();
  if (cs.size() != 2 || ts.size() < 1)
    throw shape_error("fusor::vsa::ngrams: expects a codebook (K, " + std::to_string(m.width()) +
                      ") and tokens (..., L), got shapes " + to_string(cs) + " and " + to_string(ts));
  const index_t len = ts[ts.size() - 1], seqs = detail::leading_count(ts), k = cs[0], w = m.width();
  if (n < 1 || stride < 1)
    throw value_error("fusor::vsa::ngrams: expects n >= 1 and stride >= 1, got n = " + std::to_string(n) +
                      ", stride = " + std::to_string(stride));
  extents out = ts;
  out[out.size() - 1] = w;
  const std::vector<index_t> lengths = detail::checked_token_lengths(tok, k, "ngrams", "a row of the codebook");
  for (index_t s = 0; s < seqs; ++s)
    if (lengths[static_cast<std::size_t>(s)] < n)
      throw value_error("fusor::vsa::ngrams: sequence " + std::to_string(s) + " has " +
                        std::to_string(lengths[static_cast<std::size_t>(s)]) + " tokens, fewer than n = " + std::to_string(n));
  if constexpr (detail::elementwise_product_v<M>) {
    if (o.ties == tie_break::first)
      return detail::windows_bundled<M, B>(m, detail::token_rows<T>{cc.data(), tok.data(), w, len}, seqs, n, stride, o)
          .reshape(out);
  }
  // the general path: the sequences of each length gathered and bundled in one call
  array<T, B> r(extents{seqs, w});
  const auto flat = tok.reshape(extents{seqs, len});
  for (index_t l = n; l <= len; ++l) {
    std::vector<std::int64_t> which;
    for (index_t s = 0; s < seqs; ++s)
      if (lengths[static_cast<std::size_t>(s)] == l) which.push_back(s);
    if (which.empty()) continue;
    const array<std::int64_t, B> rows(std::span<const std::int64_t>(which), extents{index_t(which.size())});
    const array<std::int64_t, B> seq_tokens(take(flat(all, range(0, l)), rows, 0));  // (c, l)
    scatter(r.view(), rows, ngrams(m, take(cc.view(), seq_tokens, 0), n, stride, o), 0);
  }
  return std::move(r).reshape(out);
}

/// A record (hash table): values (..., N, width) bound to keys (N, width) and bundled: (..., width).
template <model M, class K, class V>
auto record(const M& m, const K& keys, const V& values, const bundle_options& o = {}) {
  const extents ks = detail::checked_rows(m, keys, "record", "keys");
  const extents vs = detail::checked_rows(m, values, "record", "values");
  if (ks.size() != 2 || vs.size() < 2 || vs[vs.size() - 2] != ks[0])
    throw shape_error("fusor::vsa::record: expects keys (N, " + std::to_string(m.width()) + ") and values (..., N, " +
                      std::to_string(m.width()) + ") with the same N, got shapes " + to_string(ks) + " and " +
                      to_string(vs));
  return bundle(m, bind(m, values, keys), o);
}


/// A record whose values are rows of a codebook (K, width) picked by indices (..., N): the same
/// vectors as record(m, keys, take(codebook, indices, 0), o) (up to the rounding of the sum's order
/// for real-valued elements), without the (..., N, width) bound rows in memory. For MAP and FHRR
/// with ties broken by the first vector this is one pass that sums the N products per element
/// (a record of level-encoded features: each pixel's level bound to its position); other models
/// and options bind and bundle blocks of records at a time.
template <model M, class K, class C, class I>
auto record(const M& m, const K& keys, const C& codebook, const I& indices, const bundle_options& o = {}) {
  const extents ks = detail::checked_rows(m, keys, "record", "keys");
  const extents cs = detail::checked_rows(m, codebook, "record", "codebook");
  const auto kc = fusor::ext::contiguous_of(keys);
  const auto cc = fusor::ext::contiguous_of(codebook);
  using T = typename M::value_type;
  using B = backend_of_t<decltype(kc.view())>;
  const array<std::int64_t, B> idx = fusor::ext::checked_indices<B>(cast<std::int64_t>(indices), cs[0], 0, cs);
  const extents is = idx.shape();
  if (ks.size() != 2 || cs.size() != 2 || is.size() < 1 || is[is.size() - 1] != ks[0])
    throw shape_error("fusor::vsa::record: expects keys (N, " + std::to_string(m.width()) + "), a codebook (K, " +
                      std::to_string(m.width()) + ") and indices (..., N) with the same N, got shapes " + to_string(ks) +
                      ", " + to_string(cs) + " and " + to_string(is));
  extents out = is;
  out[out.size() - 1] = m.width();
  const index_t rows = is.numel() / ks[0], f = ks[0], w = m.width();
  if constexpr (detail::elementwise_product_v<M>) {
    if (o.ties == tie_break::first && f > 0) {
      const normalization n = detail::bundle_normalization<M>(o);
      if constexpr (std::is_same_v<M, map_b> || std::is_same_v<M, map_i>) {
        if (n != normalization::none)  // the sign in the same pass
          return detail::generate<B>(detail::bound_row_sums<T, true>{kc.data(), cc.data(), idx.data(), w, f},
                                     extents{rows, w}).reshape(out);
      }
      array<T, B> s = detail::generate<B>(detail::bound_row_sums<T>{kc.data(), cc.data(), idx.data(), w, f},
                                          extents{rows, w});
      if (n != normalization::none) {
        if constexpr (std::is_same_v<M, map_c>) s = clip(s, T(-1), T(1));
        else if constexpr (std::is_same_v<M, fhrr>) s = m.normalize(s);
      }
      return std::move(s).reshape(out);
    }
  }
  // the general path: blocks of records whose bound rows take about 64 MB
  array<T, B> r(extents{rows, w});
  const auto flat = idx.reshape(extents{rows, f});
  const index_t block = std::max<index_t>(1, (index_t(64) << 20) / std::max<index_t>(1, f * w * index_t(sizeof(T))));
  for (index_t b = 0; b < rows; b += block) {
    const index_t e = std::min(rows, b + block);
    r(range(b, e), all) = record(m, kc.view(), take(cc.view(), flat(range(b, e), all), 0), o);
  }
  return std::move(r).reshape(out);
}

}  // namespace fusor::vsa
