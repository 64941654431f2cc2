#pragma once
// Encoders of structures built from the batched operations, each a few whole-batch calls (never a
// loop over windows or items):
//   ngram_vectors / ngrams  torchhd's ngrams: each window of n consecutive rows of a sequence bound
//                           as bind_sequence does, permute(x_i, n - 1) * ... * x_{i+n-1}, then the
//                           windows bundled (a stride > 1 skips windows);
//   record                  torchhd's hash_table: values bound to their keys, bind(value, key), and
//                           bundled; unbind(record, key) gives the value back (noisy), and an item
//                           memory of the values cleans it up.
#include <string>

#include "../operations.hpp"

namespace fusor::vsa {

/// The n-gram vectors of sequences x (..., L, width): window j binds rows j s ... j s + n - 1 (s the
/// stride) as bind_sequence does. Shape (..., W, width), W = (L - n) / s + 1.
template <model M, class X>
auto ngram_vectors(const M& m, const X& x, index_t n, index_t stride = 1) {
  const extents s = detail::checked_rows(m, x, "ngram_vectors", "sequences");
  if (s.size() < 2)
    throw shape_error("fusor::vsa::ngram_vectors: expects sequences of shape (..., L, " + std::to_string(m.width()) +
                      "), got shape " + to_string(s));
  const index_t len = s[s.size() - 2];
  if (n < 1 || stride < 1 || n > len)
    throw value_error("fusor::vsa::ngram_vectors: expects 1 <= n <= L (the sequence length " + std::to_string(len) +
                      ") and stride >= 1, got n = " + std::to_string(n) + ", stride = " + std::to_string(stride));
  const auto xc = fusor::detail::contiguous_of(x);
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

/// The n-grams of sequences x (..., L, width) bundled into one vector each: (..., width).
template <model M, class X>
auto ngrams(const M& m, const X& x, index_t n, index_t stride = 1, const bundle_options& o = {}) {
  return bundle(m, ngram_vectors(m, x, n, stride), o);
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

}  // namespace fusor::vsa
