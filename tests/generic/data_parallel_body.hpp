// The bodies of data-parallel training (nn::data_parallel, nn::shard_of), written once and
// instantiated per backend: tests/test_nn_data_parallel.cpp runs them on cpu,
// tests/test_nn_data_parallel_cuda.cu on cuda. The ranks here are threads sharing a communicator
// that sums in rank order (MPI itself is tested by the example train_digits_data_parallel under
// mpirun -n 2). Reference: the same model trained by one process on the whole batch.
//
// The includer defines TEST_BACKEND (fusor::cpu or fusor::cuda) before including this file.
#include "../common.hpp"

#include <barrier>
#include <cstddef>
#include <exception>
#include <string>
#include <thread>
#include <vector>

namespace dataparallelbody {

using fusor::extents;
using fusor::index_t;
using B = TEST_BACKEND;
namespace ad = fusor::ad;
namespace nn = fusor::ad::nn;
using D = fusor::array<double, B>;
using labels_t = fusor::array<std::int64_t, B>;
using params_t = nn::parameters<double, B>;
using test::host_values;

// Threads as ranks: a reduction publishes each rank's buffer, waits for all, sums them in rank
// order into a temporary, waits until every rank has read, and writes the sum back.
struct thread_world {
  explicit thread_world(int n) : size(n), sync(n), slots(std::size_t(n)) {}
  int size;
  std::barrier<> sync;
  std::vector<void*> slots;
};
struct thread_rank {
  thread_world* world;
  int me;
  int rank() const { return me; }
  int size() const { return world->size; }
  template <class T>
  void all_reduce_sum(T* data, std::size_t n) const {
    world->slots[std::size_t(me)] = data;
    world->sync.arrive_and_wait();
    std::vector<T> total(n, T(0));
    for (int k = 0; k < size(); ++k)
      for (std::size_t i = 0; i < n; ++i) total[i] += static_cast<const T*>(world->slots[std::size_t(k)])[i];
    world->sync.arrive_and_wait();
    for (std::size_t i = 0; i < n; ++i) data[i] = total[i];
  }
  template <class T>
  void broadcast(T* data, std::size_t n, int root) const {
    world->slots[std::size_t(me)] = data;
    world->sync.arrive_and_wait();
    if (me != root)
      for (std::size_t i = 0; i < n; ++i) data[i] = static_cast<const T*>(world->slots[std::size_t(root)])[i];
    world->sync.arrive_and_wait();
  }
};
static_assert(nn::communicator<thread_rank>);
static_assert(nn::communicator<nn::single_process>);

// Runs body(rank) on `ranks` threads; rethrows the first rank's exception.
template <class F>
void on_ranks(int ranks, const F& body) {
  thread_world world(ranks);
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(ranks));
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      try {
        body(thread_rank{&world, r});
      } catch (...) {
        errors[std::size_t(r)] = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

struct problem {
  index_t n = 9;
  D x;
  labels_t y;
  problem() {
    fusor::random::generator rng(61);
    x = fusor::random::normal<double, B>(rng, {n, 5});
    y = test::on<B>(std::vector<std::int64_t>{0, 2, 1, 1, 0, 2, 2, 1, 0}, {n});
  }
  static auto model() { return nn::sequential<double, B>(nn::linear(5, 7), nn::tanh, nn::linear(7, 3)); }
};

// `steps` Adam steps on rows [begin, end) of the batch per rank, the gradients averaged by dp.
template <class C>
params_t train(const problem& p, const nn::data_parallel<C>& dp, int steps, bool perturb) {
  const auto model = problem::model();
  params_t params = model.init(7);
  if (perturb) params.at("0.weight") += 1.0;  // a rank that starts elsewhere: the broadcast fixes it
  dp.broadcast_parameters(params);
  ad::optim::adam<double, B> opt({.lr = 0.05});
  const nn::shard_range s = dp.shard(p.n);
  const D xs = p.x(fusor::range(s.begin, s.end), fusor::all).copy();
  const labels_t ys = p.y(fusor::range(s.begin, s.end)).copy();
  auto step = ad::value_and_grad([&](const auto& q) { return nn::cross_entropy(model(q, xs), ys); });
  for (int k = 0; k < steps; ++k) {
    params_t grads;
    if (s.size() > 0) {
      grads = std::move(step(params).second);
    } else {  // an empty shard: the right shapes, values not read
      for (const auto& [name, a] : params) grads.emplace(name, fusor::full<double, B>(a.shape(), 1e300));
    }
    dp.average_gradients(grads, s.size());
    opt.step(params, grads);
  }
  return params;
}

TEST_CASE("nn::shard_of: contiguous shards, the remainder to the first ranks; bad ranks") {
  auto sh = [](index_t n, int r, int s) {
    const auto x = nn::shard_of(n, r, s);
    return std::vector<index_t>{x.begin, x.end};
  };
  CHECK(sh(9, 0, 2) == std::vector<index_t>{0, 5});
  CHECK(sh(9, 1, 2) == std::vector<index_t>{5, 9});
  CHECK(sh(2, 2, 3) == std::vector<index_t>{2, 2});  // more ranks than rows: an empty shard
  CHECK(sh(0, 0, 1) == std::vector<index_t>{0, 0});
  CHECK(sh(1, 0, 1) == std::vector<index_t>{0, 1});
  CHECK(sh(17, 3, 4) == std::vector<index_t>{13, 17});
  index_t covered = 0;
  for (int r = 0; r < 5; ++r) covered += nn::shard_of(1001, r, 5).size();
  CHECK(covered == 1001);
  CHECK_THROWS_AS(nn::shard_of(5, 2, 2), fusor::value_error);
  CHECK_THROWS_AS(nn::shard_of(5, 0, 0), fusor::value_error);
  CHECK_THROWS_AS(nn::shard_of(-1, 0, 1), fusor::value_error);
}

TEST_CASE("nn::data_parallel: two and three ranks train as one process on the whole batch (uneven and empty shards, small buckets)") {
  const problem p;
  const params_t reference = train(p, nn::data_parallel<nn::single_process>(), 4, false);
  for (int ranks : {2, 3}) {
    for (std::size_t bucket : {std::size_t(40), std::size_t(25) << 20}) {  // 5 doubles: arrays split across buckets
      CAPTURE(ranks);
      CAPTURE(bucket);
      problem q;
      if (ranks == 3) {  // two rows over three ranks: one empty shard
        q.n = 2;
        q.x = p.x(fusor::range(0, 2), fusor::all).copy();
        q.y = p.y(fusor::range(0, 2)).copy();
      }
      const params_t want = ranks == 3 ? train(q, nn::data_parallel<nn::single_process>(), 4, false)
                                       : params_t{};
      std::vector<params_t> got(static_cast<std::size_t>(ranks));
      on_ranks(ranks, [&](thread_rank c) {
        got[std::size_t(c.rank())] = train(q, nn::data_parallel<thread_rank>(c, {.bucket_bytes = bucket}), 4, c.rank() == 1);
      });
      const params_t& ref = ranks == 3 ? want : reference;
      for (const auto& [name, a] : ref) {
        CAPTURE(name);
        const auto r = host_values(a);
        for (int k = 0; k < ranks; ++k) {
          const auto g = host_values(got[std::size_t(k)].at(name));
          if (k > 0) CHECK(g == host_values(got[0].at(name)));  // every rank took the same steps
          for (std::size_t i = 0; i < r.size(); ++i) CHECK(g[i] == doctest::Approx(r[i]).epsilon(1e-12));
        }
      }
    }
  }
}

TEST_CASE("nn::data_parallel bad input: a rank with another tree, negative or no samples, tiny buckets") {
  // a rank whose tree differs: every rank throws, nothing is changed
  std::vector<std::string> messages(2);
  std::vector<std::vector<double>> kept(2);
  on_ranks(2, [&](thread_rank c) {
    const nn::data_parallel<thread_rank> dp(c);
    params_t grads;
    grads.emplace("a", fusor::full<double, B>(extents{3}, 1.0));
    if (c.rank() == 1) grads.emplace("b", fusor::full<double, B>(extents{2}, 1.0));
    try {
      dp.average_gradients(grads, 1);
    } catch (const fusor::value_error& e) {
      messages[std::size_t(c.rank())] = e.what();
    }
    kept[std::size_t(c.rank())] = host_values(grads.at("a"));
  });
  for (const auto& m : messages) CHECK(m.find("rank 0 has 1 arrays of 3 elements") != std::string::npos);
  for (const auto& k : kept) CHECK(k == std::vector<double>{1.0, 1.0, 1.0});
  // one rank's negative count, or the same totals in other shapes: every rank throws (none waits)
  for (int variant = 0; variant < 2; ++variant) {
    CAPTURE(variant);
    std::vector<int> thrown(2, 0);
    on_ranks(2, [&](thread_rank c) {
      const nn::data_parallel<thread_rank> dp(c);
      std::vector<D> grads;
      const bool swapped = variant == 1 && c.rank() == 1;
      grads.push_back(fusor::full<double, B>(extents{swapped ? 5 : 3}, 1.0));
      grads.push_back(fusor::full<double, B>(extents{swapped ? 3 : 5}, 1.0));
      try {
        dp.average_gradients(grads, variant == 0 && c.rank() == 1 ? -2 : 1);
      } catch (const fusor::value_error&) {
        thrown[std::size_t(c.rank())] = 1;
      }
    });
    CHECK(thrown == std::vector<int>{1, 1});
  }
  const nn::data_parallel<nn::single_process> one;
  params_t g;
  g.emplace("w", fusor::full<double, B>(extents{2, 2}, 3.0));
  CHECK_THROWS_AS(one.average_gradients(g, -1), fusor::value_error);
  CHECK_THROWS_AS(one.average_gradients(g, 0), fusor::value_error);  // no rank has samples
  one.average_gradients(g, 4);  // one process: the gradient is its own
  CHECK(host_values(g.at("w")) == std::vector<double>(4, 3.0));
  CHECK_THROWS_AS(nn::data_parallel<nn::single_process>({}, {.bucket_bytes = 4}), fusor::value_error);
}

}  // namespace dataparallelbody
