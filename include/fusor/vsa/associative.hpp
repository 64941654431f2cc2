#pragma once
// A key -> value associative memory: keys and values stored as two contiguous (N, width)
// matrices of one model, row i of one paired with row i of the other. A recall is one similarity
// pass of the queries against every key, then a gather of the values at the best keys, so noisy
// keys recall their exact values. (The holographic form, one vector bundle(bind(keys, values))
// queried by unbind and cleaned up against the values, is two calls: see docs/vsa.md.)
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "item_memory.hpp"

namespace fusor::vsa {

template <model M, backend B = default_backend>
class associative_memory {
 public:
  using value_type = typename M::value_type;

  explicit associative_memory(const M& m) : keys_(m), values_(m) {}

  const M& model() const { return keys_.model(); }
  index_t size() const { return keys_.size(); }
  const item_memory<M, B>& keys() const { return keys_; }
  const item_memory<M, B>& values() const { return values_; }

  /// Stores pairs: keys and values both (n, width) (or one (width) vector each).
  template <class K, class V>
  void store(const K& keys, const V& values) {
    const extents ks = detail::checked_rows(model(), keys, "associative_memory::store", "keys");
    const extents vs = detail::checked_rows(model(), values, "associative_memory::store", "values");
    auto rows = [](const extents& s) { return s.size() == 1 ? index_t(1) : s.size() == 2 ? s[0] : index_t(-1); };
    if (rows(ks) < 0 || rows(vs) < 0 || rows(ks) != rows(vs))
      throw shape_error("fusor::vsa::associative_memory::store: expects as many values as keys, as (n, width) rows or "
                        "single (width) vectors; got keys of shape " + to_string(ks) + " and values of shape " +
                        to_string(vs));
    keys_.add(keys);
    values_.add(values);
  }
  /// The value paired with the key most similar to each query: (Q, width) or (width).
  template <class X>
  auto recall(const X& queries, metric s = M::default_metric) const {
    if (size() == 0) throw value_error("fusor::vsa::associative_memory::recall: the memory holds no pairs");
    return take(values_.items(), keys_.nearest(queries, s), 0);
  }
  /// The index of the pair whose key is most similar to each query.
  template <class X>
  auto lookup(const X& queries, metric s = M::default_metric) const {
    if (size() == 0) throw value_error("fusor::vsa::associative_memory::lookup: the memory holds no pairs");
    return keys_.nearest(queries, s);
  }

 private:
  item_memory<M, B> keys_, values_;
};

}  // namespace fusor::vsa
