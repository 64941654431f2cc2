#pragma once
// Data-parallel training (PyTorch's DistributedDataParallel, Horovod): every rank holds the whole
// model, computes the gradient of its own shard of each batch, and before the optimizer step the
// gradients are averaged across the ranks, so that every rank takes the same step. Written over a
// communicator (rank, size, and a summing all-reduce and a broadcast of host buffers of float or
// double), so this layer names no MPI: <fusor/interop/mpi.hpp> provides fusor::mpi::communicator
// (Open MPI, MPICH), and nn::single_process is the one-rank communicator (the same program then
// runs without MPI).
//
// The average is the gradient of the whole batch's mean loss: rank r's gradient of its shard's
// mean is weighted by its share n_r / n before the sum, so a batch that does not split evenly
// still gives the single process's gradient, up to the order of the float sums. Gradients travel
// in buckets (PyTorch's 25 MiB by default): the tree's arrays in order, cut where a bucket is
// full, one all-reduce per bucket; on a device backend a bucket is packed on the device, copied to
// the host, reduced there and copied back. The reduction runs after the backward pass (not
// overlapped with it yet).
#include <algorithm>
#include <concepts>
#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../../core/array.hpp"
#include "../../core/error.hpp"
#include "../../core/slice.hpp"
#include "../../core/ext.hpp"
#include "../optim/leaves.hpp"

namespace fusor::ad::nn {

/// What data_parallel needs of a communicator: this process's rank among size() ranks, and, on
/// host buffers of float and double, an in-place sum across the ranks (every rank receives it)
/// and a broadcast from a root rank. Every rank calls them in the same order.
template <class C>
concept communicator = requires(const C& c, float* f, double* d, std::size_t n) {
  { c.rank() } -> std::convertible_to<int>;
  { c.size() } -> std::convertible_to<int>;
  c.all_reduce_sum(f, n);
  c.all_reduce_sum(d, n);
  c.broadcast(f, n, 0);
  c.broadcast(d, n, 0);
};

/// The communicator of one process alone (rank 0 of 1): reductions and broadcasts leave the data.
struct single_process {
  int rank() const { return 0; }
  int size() const { return 1; }
  template <class T>
  void all_reduce_sum(T*, std::size_t) const {}
  template <class T>
  void broadcast(T*, std::size_t, int) const {}
};

/// Rows [begin, end) of a batch.
struct shard_range {
  index_t begin = 0, end = 0;
  index_t size() const { return end - begin; }
};

/// Rank `rank`'s contiguous share of n rows among `size` ranks: n / size rows each, the first
/// n % size ranks one more (a rank may get none when n < size).
inline shard_range shard_of(index_t n, int rank, int size) {
  if (n < 0) throw value_error("fusor: shard_of needs n >= 0 rows, got " + std::to_string(n));
  if (size < 1 || rank < 0 || rank >= size)
    throw value_error("fusor: shard_of needs 0 <= rank < size, got rank " + std::to_string(rank) + " of " +
                      std::to_string(size));
  const index_t base = n / size, extra = n % size;
  const index_t begin = rank * base + std::min<index_t>(rank, extra);
  return {begin, begin + base + (rank < extra ? 1 : 0)};
}

struct data_parallel_options {
  std::size_t bucket_bytes = std::size_t(25) << 20;  // PyTorch's bucket_cap_mb = 25
};

/// Gradient averaging and parameter broadcast across the ranks of a communicator. One object per
/// thread: it keeps its bucket between calls.
template <communicator C>
class data_parallel {
 public:
  explicit data_parallel(C comm = C{}, data_parallel_options o = {}) : comm_(std::move(comm)), options_(o) {
    if (options_.bucket_bytes < sizeof(double))
      throw value_error("fusor: data_parallel needs bucket_bytes >= " + std::to_string(sizeof(double)) + ", got " +
                        std::to_string(options_.bucket_bytes));
  }
  int rank() const { return comm_.rank(); }
  int size() const { return comm_.size(); }
  const C& comm() const { return comm_; }
  /// This rank's rows of a batch of n (shard_of).
  shard_range shard(index_t n) const { return shard_of(n, rank(), size()); }

  /// Every rank's parameters set to rank 0's (call once after init, so that all ranks start alike).
  template <class Tree>
  void broadcast_parameters(Tree& params) const {
    const auto leaves = arrays_of(params);
    check_structure(leaves, 0, "broadcast_parameters");
    stream(leaves, [this](auto* data, std::size_t n) { comm_.broadcast(data, n, 0); }, 1.0);
  }

  /// Every rank's gradients replaced by the gradient of the whole batch's mean loss, given each
  /// rank's gradients of its own shard's mean loss and its shard's size `samples` (the total is
  /// summed across the ranks). A rank with an empty shard passes samples 0 and a tree of the
  /// right shapes, whose values are not read.
  /// The trees must have the same arrays in the same order on every rank (a std::map's keys are:
  /// prefer it to an unordered_map), and every rank a count >= 0: checked first, a value_error on
  /// every rank before anything is changed.
  template <class Tree>
  void average_gradients(Tree& grads, index_t samples) const {
    const auto leaves = arrays_of(grads);
    const double total = check_structure(leaves, samples, "average_gradients");
    if (total <= 0) throw value_error("fusor: average_gradients: no rank has samples (expected a shard size > 0 somewhere)");
    stream(leaves, [this](auto* data, std::size_t n) { comm_.all_reduce_sum(data, n); }, double(samples) / total);
  }

 private:
  // The tree's arrays in order (optim's leaf walk: a std::map's keys in order, the same on every rank).
  template <class Tree>
  static auto arrays_of(Tree& tree) {
    using A = optim::detail::leaf_t<Tree>;
    using T = typename A::value_type;
    using B = typename A::backend_type;
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                  "fusor: data_parallel exchanges float or double arrays");
    std::vector<optim::detail::leaf_pair<T, B>> leaves;
    optim::detail::leaf_pairs<T, B>(tree, tree, leaves);
    return leaves;
  }

  // Rank 0's (element count, array count, Σ size_k·(k + 1)) broadcast, each rank compares its own,
  // and one sum gathers the mismatches, the negative sample counts and the samples: a rank whose
  // tree differs, or whose count is negative, makes every rank throw (no rank is left waiting in
  // a later collective). Returns the total of the samples.
  template <class Leaves>
  double check_structure(const Leaves& leaves, index_t samples, const char* what) const {
    double mine[3] = {0, double(leaves.size()), 0};
    for (std::size_t k = 0; k < leaves.size(); ++k) {
      mine[0] += double(leaves[k].param->size());
      mine[2] += double(leaves[k].param->size()) * double(k + 1);
    }
    double first[3] = {mine[0], mine[1], mine[2]};
    comm_.broadcast(first, 3, 0);
    const bool same = first[0] == mine[0] && first[1] == mine[1] && first[2] == mine[2];
    double sums[3] = {same ? 0.0 : 1.0, samples < 0 ? 1.0 : 0.0, samples < 0 ? 0.0 : double(samples)};
    comm_.all_reduce_sum(sums, 3);
    if (sums[1] != 0)
      throw value_error(std::string("fusor: data_parallel ") + what + " needs samples >= 0 (each rank's shard size) on every rank; " +
                        (samples < 0 ? "this rank passed " + std::to_string(samples) : std::string("another rank passed a negative count")));
    if (sums[0] != 0)
      throw value_error(std::string("fusor: data_parallel ") + what + ": the ranks hold different trees (rank 0 has " +
                        std::to_string(index_t(first[1])) + " arrays of " + std::to_string(index_t(first[0])) +
                        " elements, rank " + std::to_string(rank()) + " has " + std::to_string(index_t(mine[1])) +
                        " of " + std::to_string(index_t(mine[0])) + "; expected the same arrays in the same order on every rank)");
    return sums[2];
  }

  // The arrays streamed through buckets: each bucket is filled with the arrays' elements (times
  // `scale`), handed to `exchange`, and copied back.
  template <class Leaves, class Exchange>
  void stream(const Leaves& leaves, const Exchange& exchange, double scale) const {
    using A = std::remove_pointer_t<decltype(leaves[0].param)>;
    using T = typename A::value_type;
    using B = typename A::backend_type;
    std::size_t total = 0;
    for (const auto& leaf : leaves) total += std::size_t(leaf.param->size());
    if (total == 0) return;
    const std::size_t capacity = std::min(total, std::max<std::size_t>(1, options_.bucket_bytes / sizeof(T)));
    array<T, B>& bucket = cached_bucket<T, B>(capacity);
    T* host = nullptr;  // the host copy of a device bucket
    if constexpr (!backend_traits<B>::host_accessible) {
      if (host_.size() < capacity * sizeof(T)) host_.resize(capacity * sizeof(T));
      host = reinterpret_cast<T*>(host_.data());  // (operator new's alignment suits float and double)
    }
    struct piece {
      A* owner;
      index_t from, at, count;  // the owner's elements [from, from + count) at bucket[at, at + count)
    };
    std::vector<piece> pieces;
    std::size_t used = 0;
    auto flush = [&] {
      if (used == 0) return;
      if constexpr (backend_traits<B>::host_accessible) {
        exchange(bucket.data(), used);
      } else {
        backend_memory<B>::copy_to_host(host, bucket.data(), index_t(used));
        exchange(host, used);
        backend_memory<B>::copy_from_host(bucket.data(), host, index_t(used));
      }
      for (const piece& p : pieces) {
        auto flat = p.owner->reshape(extents{p.owner->size()});
        flat(range(p.from, p.from + p.count)) = bucket(range(p.at, p.at + p.count));
      }
      pieces.clear();
      used = 0;
    };
    for (const auto& leaf : leaves) {
      A& a = *leaf.param;
      const index_t n = a.size();
      auto flat = a.reshape(extents{n});
      for (index_t from = 0; from < n;) {
        const index_t count = std::min<index_t>(n - from, index_t(capacity - used));
        auto into = bucket(range(index_t(used), index_t(used) + count));
        if (scale == 1.0) into = flat(range(from, from + count));
        else if (scale == 0.0) into = T(0);  // an empty shard: its gradients (a mean of nothing) are not read
        else into = flat(range(from, from + count)) * T(scale);
        pieces.push_back(piece{&a, from, index_t(used), count});
        used += std::size_t(count);
        from += count;
        if (used == capacity) flush();
      }
    }
    flush();
  }

  // The bucket of the last exchange, kept for the next step's (a training loop allocates nothing
  // after its first step): an array<T, B> of at least bucket_elements_, T and B named by bucket_kind_.
  template <class T, class B>
  array<T, B>& cached_bucket(std::size_t n) const {
    if (bucket_kind_ != &bucket_kind<T, B> || bucket_elements_ < n) {
      bucket_ = std::make_shared<array<T, B>>(extents{index_t(n)});
      bucket_kind_ = &bucket_kind<T, B>;
      bucket_elements_ = n;
    }
    return *static_cast<array<T, B>*>(bucket_.get());
  }
  template <class T, class B>
  static constexpr char bucket_kind = 0;

  C comm_;
  data_parallel_options options_;
  mutable std::shared_ptr<void> bucket_;
  mutable const char* bucket_kind_ = nullptr;
  mutable std::size_t bucket_elements_ = 0;
  mutable std::vector<std::byte> host_;
};

}  // namespace fusor::ad::nn
