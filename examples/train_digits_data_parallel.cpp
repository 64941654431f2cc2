// Data-parallel training over MPI: the digits MLP (examples/train_digits.hpp's model) trained by
// every rank on its own shard of each batch, the gradients averaged across the ranks before each
// Adam step (ad::nn::data_parallel over fusor::mpi::communicator). Rank 0 also trains the same
// model alone on the whole batches and checks that the two agree up to float rounding: the
// parameters after every step, and the test accuracy.
// Usage: mpirun -n 2 train_digits_data_parallel [steps] [directory of images.npy and labels.npy]
// (started without mpirun it is one rank, and the check is exact).
#include <fusor/fusor.hpp>
#include <fusor/interop/mpi.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "data_path.hpp"

int main(int argc, char** argv) {
  using namespace fusor;
  namespace nn = ad::nn;
  const mpi::session session(argc, argv);
  const nn::data_parallel<mpi::communicator> dp{mpi::communicator()};
  const int steps = argc > 1 ? std::atoi(argv[1]) : 100;
  const std::string dir = argc > 2 ? std::string(argv[2]) : example::data_path(FUSOR_DIGITS_DIR);

  // every rank reads the data and draws the same batches (one seed); each trains on its shard
  const array<float> images = cast<float>(load_npy<std::uint8_t, cpu>(dir + "/images.npy")) / 16.0f;
  const array<std::int64_t> labels = cast<std::int64_t>(load_npy<std::uint8_t, cpu>(dir + "/labels.npy"));
  const index_t n = images.shape()[0], n_test = n / 5, n_train = n - n_test, batch = 75;  // 75: uneven shards
  random::generator rng(2026);
  const array<std::int64_t> order = random::permutation<cpu>(rng, n);
  const array<std::int64_t> train_rows = order(range(0, n_train)).copy(), test_rows = order(range(n_train, n)).copy();
  const array<float> x_train = take(images, train_rows, 0), x_test = take(images, test_rows, 0);
  const array<std::int64_t> y_train = take(labels, train_rows), y_test = take(labels, test_rows);

  const auto model = nn::sequential<float>(nn::linear(64, 64), nn::relu, nn::linear(64, 10));
  nn::parameters<float> params = model.init(7 + std::uint64_t(dp.rank()));  // different starts...
  dp.broadcast_parameters(params);                                         // ...made rank 0's
  nn::parameters<float> alone = model.init(7);                              // rank 0's reference
  ad::optim::adam<float> opt({.lr = 1e-2}), opt_alone({.lr = 1e-2});
  const array<float>* xb = nullptr;
  const array<std::int64_t>* yb = nullptr;
  auto step = ad::value_and_grad([&](const auto& p) { return nn::cross_entropy(model(p, *xb), *yb); });

  double worst = 0;  // the largest parameter difference from the process alone, relative to the largest parameter
  random::generator batches_rng(9);
  int done = 0;
  while (done < steps) {
    for (const auto& rows : nn::shuffled_batches(n_train, batch, batches_rng, true)) {
      if (done++ == steps) break;
      const nn::shard_range s = dp.shard(rows.size());
      const array<std::int64_t> mine = rows(range(s.begin, s.end)).copy();
      const array<float> x = take(x_train, mine, 0);
      const array<std::int64_t> y = take(y_train, mine);
      xb = &x;
      yb = &y;
      auto [loss, grads] = step(params);
      dp.average_gradients(grads, s.size());
      opt.step(params, grads);
      if (dp.rank() == 0) {  // the same step by one process on the whole batch
        const array<float> xa = take(x_train, rows, 0);
        const array<std::int64_t> ya = take(y_train, rows);
        xb = &xa;
        yb = &ya;
        auto [loss_alone, grads_alone] = step(alone);
        opt_alone.step(alone, grads_alone);
        for (const auto& [name, a] : alone) {
          const double scale = std::max(1.0, double(max(abs(a))));
          worst = std::max(worst, double(max(abs(params.at(name) - a))) / scale);
        }
      }
    }
  }
  if (dp.rank() != 0) return 0;
  const double accuracy = nn::accuracy(model(params, x_test), y_test);
  const double accuracy_alone = nn::accuracy(model(alone, x_test), y_test);
  std::printf("%d rank(s), %d steps of batch %lld: test accuracy %.2f%% (one process: %.2f%%), largest parameter "
              "difference from one process %.3g (relative)\n",
              dp.size(), steps, static_cast<long long>(batch), 100 * accuracy, 100 * accuracy_alone, worst);
  // float sums in another order: rounding, which Adam's normalised steps keep at a few 1e-6 here
  if (!(worst <= (dp.size() == 1 ? 0.0 : 1e-4)) || std::abs(accuracy - accuracy_alone) > 0.01 || accuracy < 0.9) {
    std::printf("train_digits_data_parallel: FAILED\n");
    return 1;
  }
  std::printf("train_digits_data_parallel: ok (%d ranks)\n", dp.size());
  return 0;
}
