#pragma once
// Helpers for a training loop: mini-batches in a seeded shuffled order, classification accuracy,
// a one-line progress report per epoch, and early stopping on a validation metric. Plain
// functions and small structs: the loop itself stays the user's (see docs/learning.md).
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "../../core/array.hpp"
#include "../../core/indexing.hpp"
#include "../../core/random.hpp"
#include "../../core/reduce.hpp"
#include "../ops.hpp"
#include "../../core/ext.hpp"

namespace fusor::ad::nn {

/// One epoch's mini-batches: the row indices 0..n-1 in a shuffled order drawn from rng (its next
/// stream: a seed gives the same order on every backend), cut into batches of batch_size; the
/// last batch holds the rest unless drop_last. Gather a batch's rows with take(x, batch, 0).
template <backend B = default_backend>
std::vector<array<std::int64_t, B>> shuffled_batches(index_t n, index_t batch_size, fusor::random::generator& rng,
                                                     bool drop_last = false) {
  if (n < 0) throw value_error("fusor: shuffled_batches needs n >= 0, got " + std::to_string(n));
  if (batch_size < 1) throw value_error("fusor: shuffled_batches needs batch_size >= 1, got " + std::to_string(batch_size));
  const array<std::int64_t, B> order = fusor::random::permutation<B>(rng, n);
  std::vector<array<std::int64_t, B>> batches;
  for (index_t start = 0; start < n; start += batch_size) {
    const index_t stop = std::min(n, start + batch_size);
    if (drop_last && stop - start < batch_size) break;
    batches.push_back(order(range(start, stop)).copy());
  }
  return batches;
}

/// The fraction of rows whose largest logit (the first of equal ones) is at the label: logits
/// (..., classes), labels of the logits' shape without the last axis. 0 rows give 0. Logits that
/// are variables are read as constants (nothing is recorded).
template <expression X, expression L>
double accuracy(const X& logits, const L& labels) {
  if constexpr (ad::detail::holds_vars_v<X>) {
    return accuracy(ad::stop_gradient(logits), labels);
  } else {
    const auto z = fusor::ext::to_node(logits);
    const extents shape = expr_shape(z);
    if (shape.size() == 0)
      throw shape_error("fusor: accuracy needs logits with a class axis (the last), got a 0-dimensional one");
    const extents rows = fusor::ext::drop_axis(shape, shape.size() - 1);
    const extents ls = expr_shape(fusor::ext::to_node(labels));
    if (!(ls == rows))
      throw shape_error("fusor: accuracy's labels must have the logits' shape without the class axis, " +
                        to_string(rows) + ", got " + to_string(ls));
    if (rows.numel() == 0) return 0;
    const auto predicted = fusor::argmax(logits, -1);
    return double(fusor::sum(predicted == cast<std::int64_t>(labels))) / double(rows.numel());
  }
}

/// "epoch 3/20  loss 0.1234  accuracy 97.25%  val 96.11%  52.1k samples/s": one line per epoch.
/// A NaN accuracy or validation figure is left out.
inline std::string progress_line(int epoch, int epochs, double loss, double train_accuracy, double val_accuracy,
                                 double samples, double seconds) {
  // each piece is formatted on its own: a huge loss (1e200 has 200 digits in %f) cannot overrun
  const auto piece = [](const char* format, auto... values) {
    const int n = std::snprintf(nullptr, 0, format, values...);
    std::string text(std::size_t(n > 0 ? n : 0), '\0');
    std::snprintf(text.data(), text.size() + 1, format, values...);
    return text;
  };
  std::string line = piece("epoch %d/%d  loss %.4f", epoch, epochs, loss);
  if (!std::isnan(train_accuracy)) line += piece("  accuracy %.2f%%", 100 * train_accuracy);
  if (!std::isnan(val_accuracy)) line += piece("  val %.2f%%", 100 * val_accuracy);
  const double rate = seconds > 0 ? samples / seconds : 0;
  if (rate >= 1e6) line += piece("  %.1fM samples/s", rate / 1e6);
  else if (rate >= 1e3) line += piece("  %.1fk samples/s", rate / 1e3);
  else line += piece("  %.0f samples/s", rate);
  return line;
}

/// Early stopping on a validation metric (Keras's EarlyStopping): update(value) after each
/// epoch; stop() turns true once `patience` epochs in a row failed to improve on the best by
/// more than min_delta. Higher is better for an accuracy (the default), lower for a loss.
struct early_stopping {
  enum class goal { maximize, minimize };
  int patience = 5;
  double min_delta = 0;
  goal direction = goal::maximize;

  double best = std::numeric_limits<double>::quiet_NaN();
  int best_epoch = -1;  ///< the epoch (0-based count of updates) of the best value
  int epochs = 0;       ///< updates so far
  int waited = 0;       ///< updates since the best

  /// Records the metric of one epoch; returns whether it is the best so far (save the parameters then).
  bool update(double value) {
    if (patience < 1) throw value_error("fusor: early_stopping needs patience >= 1, got " + std::to_string(patience));
    const bool better = !std::isnan(value) &&
                        (std::isnan(best) || (direction == goal::maximize ? value > best + min_delta : value < best - min_delta));
    if (better) {
      best = value;
      best_epoch = epochs;
      waited = 0;
    } else {
      ++waited;
    }
    ++epochs;
    return better;
  }
  bool stop() const { return waited >= patience; }
};

/// Seconds since construction (a monotonic clock), for progress lines.
class stopwatch {
 public:
  stopwatch() : start_(std::chrono::steady_clock::now()) {}
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }
  void restart() { start_ = std::chrono::steady_clock::now(); }

 private:
  std::chrono::steady_clock::time_point start_;
};

}  // namespace fusor::ad::nn
