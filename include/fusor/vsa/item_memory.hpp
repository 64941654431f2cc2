#pragma once
// Item memory (a codebook): N vectors of one model stored as one contiguous (N, width) array,
// so a batch of Q queries is one similarity pass giving (Q, N), then top-k, argmax (cleanup) or
// a threshold. Saved and loaded as .npy (the rows as NumPy sees them: float32, complex64, or
// uint64 words for BSC).
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "../core/join.hpp"
#include "../core/context.hpp"
#include "../core/sort.hpp"
#include "../io/npy.hpp"
#include "operations.hpp"
#include "../core/ext.hpp"

namespace fusor::vsa {

template <model M, backend B = default_backend>
class item_memory {
 public:
  using value_type = typename M::value_type;
  /// Rows from outside (a file, the caller's array) are put in the model's canonical form where it
  /// has one (m.canonical): BSC's bits past d cleared, so popcounts count only the d dimensions;
  /// MCR, CGR and block codes' elements reduced modulo q.
  static constexpr bool canonicalised = requires(const M& m, const array<value_type, B>& x) { m.canonical(x); };

  /// An empty memory of model m.
  explicit item_memory(const M& m) : m_(m), items_(extents{0, m.width()}) {}
  /// A memory holding the rows of `items` (N, width), checked against m.
  item_memory(const M& m, array<value_type, B> items) : m_(m), items_(std::move(items)) {
    detail::checked_rows(m_, items_, "item_memory", "items");
    if (items_.ndim() != 2)
      throw shape_error("fusor::vsa::item_memory: expects items of shape (N, " + std::to_string(m_.width()) +
                        "), got shape " + to_string(items_.shape()));
    if constexpr (canonicalised) items_ = m_.canonical(items_);
  }
  /// n random items (vsa::random with this seed).
  static item_memory random(const M& m, index_t n, std::uint64_t seed) {
    return item_memory(m, vsa::random<B>(m, n, seed));
  }
  /// A memory saved by save() (or np.save of an (N, width) array of the model's element type).
  static item_memory load(const M& m, const std::filesystem::path& path) {
    return item_memory(m, load_npy<value_type, B>(path));
  }

  const M& model() const { return m_; }
  index_t size() const { return items_.shape()[0]; }
  const array<value_type, B>& items() const& { return items_; }
  const array<value_type, B>& items() const&& = delete;  // would dangle: the memory is a temporary
  /// Item i as a (width) row view (valid until the next add).
  array_view<value_type, B> operator[](index_t i) const&& = delete;
  array_view<value_type, B> operator[](index_t i) const& {
    if (i < 0 || i >= size())
      throw index_error("fusor::vsa::item_memory: item " + std::to_string(i) + " is outside the memory's " +
                        std::to_string(size()) + " items");
    return array_view<value_type, B>(const_cast<value_type*>(items_.data()) + i * m_.width(), extents{m_.width()},
                                     extents{1});
  }

  /// Appends rows ((n, width) or one (width) vector); returns the index of the first.
  template <class X>
  index_t add(const X& rows) {
    const extents s = detail::checked_rows(m_, rows, "item_memory::add", "rows");
    if (s.size() > 2)
      throw shape_error("fusor::vsa::item_memory::add: expects (n, " + std::to_string(m_.width()) + ") rows or one (" +
                        std::to_string(m_.width()) + ") vector, got shape " + to_string(s));
    const index_t first = size();
    const auto add = fusor::ext::contiguous_of(rows);
    const auto v = detail::as_matrix(add.view());
    auto append = [&](const array_view<value_type, B>& r) {
      items_ = concatenate(std::vector<array_view<value_type, B>>{items_.view(), r}, 0);
    };
    if constexpr (canonicalised) {  // the new rows in canonical form, not the whole memory again
      const array<value_type, B> c = m_.canonical(v);
      append(c.view());
    } else {
      append(v);
    }
    return first;
  }

  /// Similarity of queries (Q, width) or (width) to every item: (Q, N) or (N).
  template <class X>
  auto similarity(const X& queries, metric s = M::default_metric) const {
    require_items("similarity");
    return vsa::similarity(m_, queries, items_, s);
  }
  /// The k most similar items of each query, most similar first ({values, indices}, (Q, k)).
  template <class X>
  auto query(const X& queries, index_t k = 1, metric s = M::default_metric) const {
    require_items("query");
    if (k < 1 || k > size())
      throw value_error("fusor::vsa::item_memory::query: expects 1 <= k <= " + std::to_string(size()) +
                        " (the memory's size), got k = " + std::to_string(k));
    return topk(similarity(queries, s), k, -1, true);
  }
  /// The index of the most similar item of each query (ties to the lower index).
  template <class X>
  auto nearest(const X& queries, metric s = M::default_metric) const {
    auto r = query(queries, 1, s);
    const extents shape = r.indices.shape();
    extents out;
    for (int k = 0; k + 1 < shape.size(); ++k) out.push_back(shape[k]);
    return std::move(r.indices).reshape(out);
  }
  /// Cleanup: each query replaced by its most similar stored item (same shape as the queries).
  template <class X>
  auto cleanup(const X& queries, metric s = M::default_metric) const {
    return take(items_, nearest(queries, s), 0);
  }
  /// query and cleanup on an explicit context (a context<B>, or on(stream) on cuda): the search
  /// runs as if it were the thread's current context.
  template <execution_context E, class X>
  auto query(const E& exec, const X& queries, index_t k = 1, metric s = M::default_metric) const {
    return with_context<B>(exec, [&] { return query(queries, k, s); });
  }
  template <execution_context E, class X>
  auto cleanup(const E& exec, const X& queries, metric s = M::default_metric) const {
    return with_context<B>(exec, [&] { return cleanup(queries, s); });
  }
  /// Which items each query is at least `threshold` similar to: (Q, N) or (N) of bool.
  template <class X>
  auto within(const X& queries, double threshold, metric s = M::default_metric) const {
    return eval(similarity(queries, s) >= float(threshold));
  }

  /// Attention (modern Hopfield) cleanup: each query replaced by the superposition of the items
  /// weighted by softmax(beta * similarity), projected onto the model's domain. A large beta
  /// approaches cleanup(); a small one blends the neighbours.
  template <class X>
  auto attend(const X& queries, double beta, metric s = M::default_metric) const {
    require_items("attend");
    if (!(beta > 0.0)) throw value_error("fusor::vsa::item_memory::attend: needs beta > 0, got " + std::to_string(beta));
    const array<float, B> sims = similarity(queries, s);
    const int last = sims.ndim() - 1;
    const array<float, B> peak = max(sims, last, true);
    array<float, B> w = exp(float(beta) * (sims - peak));
    const array<float, B> total = sum(w, last, true);
    w = w / total;
    return vsa::superpose(m_, w, items_);
  }

  /// Writes the (N, width) rows as .npy.
  void save(const std::filesystem::path& path) const { save_npy(path, items_); }

 private:
  void require_items(const char* what) const {
    if (size() == 0)
      throw value_error(std::string("fusor::vsa::item_memory::") + what + ": the memory holds no items");
  }
  M m_;
  array<value_type, B> items_;
};

}  // namespace fusor::vsa
