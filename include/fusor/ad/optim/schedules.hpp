#pragma once
// Learning-rate schedules: the learning rate as a function of the step count t (the steps taken
// before this one, so the first step reads t = 0), PyTorch's lr_scheduler formulas in closed
// form. An optimizer given one reads it at every step instead of its options' lr.
#include <cmath>
#include <cstdint>
#include <functional>
#include <numbers>
#include <string>

#include "../../core/error.hpp"

namespace fusor::ad::optim {

/// The learning rate at step t >= 0.
using schedule = std::function<double(std::int64_t)>;

namespace detail {
inline void check_rate(double lr, const char* who) {
  if (!(lr >= 0.0) || !std::isfinite(lr))
    throw value_error(std::string("fusor::ad::optim::") + who + ": expected a finite learning rate >= 0, got " +
                      std::to_string(lr));
}
inline void check_positive(double x, const char* who, const char* what) {
  if (!(x > 0.0) || !std::isfinite(x))
    throw value_error(std::string("fusor::ad::optim::") + who + ": expected a finite " + what + " > 0, got " + std::to_string(x));
}
inline void check_steps(std::int64_t n, const char* who, const char* what) {
  if (n < 1)
    throw value_error(std::string("fusor::ad::optim::") + who + ": expected " + what + " >= 1, got " + std::to_string(n));
}
}  // namespace detail

/// lr at every step.
inline schedule constant_lr(double lr) {
  detail::check_rate(lr, "constant_lr");
  return [lr](std::int64_t) { return lr; };
}

/// lr gamma^floor(t / step_size) (PyTorch's StepLR).
inline schedule step_lr(double lr, std::int64_t step_size, double gamma) {
  detail::check_rate(lr, "step_lr");
  detail::check_steps(step_size, "step_lr", "a step_size");
  detail::check_positive(gamma, "step_lr", "gamma");
  return [=](std::int64_t t) { return lr * std::pow(gamma, double(t / step_size)); };
}

/// lr gamma^t (PyTorch's ExponentialLR).
inline schedule exponential_lr(double lr, double gamma) {
  detail::check_rate(lr, "exponential_lr");
  detail::check_positive(gamma, "exponential_lr", "gamma");
  return [=](std::int64_t t) { return lr * std::pow(gamma, double(t)); };
}

/// min_lr + (lr - min_lr) (1 + cos(pi t / total)) / 2, held at min_lr from t = total on
/// (PyTorch's CosineAnnealingLR over one half period, T_max = total).
inline schedule cosine_lr(double lr, std::int64_t total, double min_lr = 0.0) {
  detail::check_rate(lr, "cosine_lr");
  detail::check_rate(min_lr, "cosine_lr");
  detail::check_steps(total, "cosine_lr", "a total step count");
  return [=](std::int64_t t) {
    if (t >= total) return min_lr;
    return min_lr + (lr - min_lr) * 0.5 * (1.0 + std::cos(std::numbers::pi * double(t) / double(total)));
  };
}

/// A linear warm-up of `steps` steps before `then`: then(0) (t + 1) / steps for t < steps, and
/// then(t - steps) after, so the wrapped schedule starts when the warm-up ends.
inline schedule warmup(schedule then, std::int64_t steps) {
  detail::check_steps(steps, "warmup", "a warm-up step count");
  if (!then) throw value_error("fusor::ad::optim::warmup: expected a schedule to follow the warm-up, got an empty one");
  return [then = std::move(then), steps](std::int64_t t) {
    return t < steps ? then(0) * double(t + 1) / double(steps) : then(t - steps);
  };
}

}  // namespace fusor::ad::optim
