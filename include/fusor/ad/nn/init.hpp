#pragma once
// Parameter initialisers (torch.nn.init's): a description (what distribution, from which fans)
// that a model turns into arrays from one seeded Philox generator, so a seed gives the same
// parameters on every backend. Fans are the layer's: fan_in inputs and fan_out outputs per unit.
#include <cmath>
#include <string>

#include "../../core/array.hpp"
#include "../../core/create.hpp"
#include "../../core/random.hpp"

namespace fusor::ad::nn {

enum class init_kind { constant, uniform, normal, xavier_uniform, xavier_normal, kaiming_uniform, kaiming_normal };

/// How to fill a parameter. Make one with the functions of nn::init.
struct initializer {
  init_kind kind = init_kind::constant;
  double a = 0;  // constant: the value; uniform: lo; normal: mean; the scaled kinds: the gain
  double b = 0;  // uniform: hi; normal: the standard deviation
};

namespace init {
/// Every element `value`.
inline initializer constant(double value) { return {init_kind::constant, value, 0}; }
inline initializer zeros() { return constant(0); }
inline initializer ones() { return constant(1); }
/// U(lo, hi).
inline initializer uniform(double lo = 0, double hi = 1) { return {init_kind::uniform, lo, hi}; }
/// N(mean, stddev²).
inline initializer normal(double mean = 0, double stddev = 1) { return {init_kind::normal, mean, stddev}; }
/// Glorot: U(±gain·sqrt(6 / (fan_in + fan_out))).
inline initializer xavier_uniform(double gain = 1) { return {init_kind::xavier_uniform, gain, 0}; }
/// Glorot: N(0, gain² · 2 / (fan_in + fan_out)).
inline initializer xavier_normal(double gain = 1) { return {init_kind::xavier_normal, gain, 0}; }
/// He (fan_in mode): U(±gain·sqrt(3 / fan_in)); the default gain √2 suits ReLU.
inline initializer kaiming_uniform(double gain = 1.4142135623730950488) { return {init_kind::kaiming_uniform, gain, 0}; }
/// He (fan_in mode): N(0, gain² / fan_in).
inline initializer kaiming_normal(double gain = 1.4142135623730950488) { return {init_kind::kaiming_normal, gain, 0}; }
/// PyTorch's default for nn.Linear's weight and bias: U(±1 / sqrt(fan_in)).
inline initializer torch_linear() { return kaiming_uniform(0.57735026918962576451); }
}  // namespace init

/// An array of `shape` filled as `how` says, drawing from rng (its next stream) when random.
template <class T, class B = default_backend>
array<T, B> initialize(const initializer& how, const extents& shape, index_t fan_in, index_t fan_out,
                       fusor::random::generator& rng) {
  static_assert(std::is_floating_point_v<T>, "fusor: parameters are float or double");
  const auto need_fan = [&](index_t fan, const char* which) {
    if (fan <= 0)
      throw value_error(std::string("fusor: a scaled initialiser needs ") + which + " > 0, got " + std::to_string(fan) +
                        " for a parameter of shape " + to_string(shape));
    return double(fan);
  };
  switch (how.kind) {
    case init_kind::constant:
      return full<T, B>(shape, T(how.a));
    case init_kind::uniform:
      return fusor::random::uniform<T, B>(rng, shape, T(how.a), T(how.b));
    case init_kind::normal:
      return fusor::random::normal<T, B>(rng, shape, T(how.a), T(how.b));
    case init_kind::xavier_uniform: {
      const double bound = how.a * std::sqrt(6.0 / (need_fan(fan_in, "fan_in") + need_fan(fan_out, "fan_out")));
      return fusor::random::uniform<T, B>(rng, shape, T(-bound), T(bound));
    }
    case init_kind::xavier_normal: {
      const double sd = how.a * std::sqrt(2.0 / (need_fan(fan_in, "fan_in") + need_fan(fan_out, "fan_out")));
      return fusor::random::normal<T, B>(rng, shape, T(0), T(sd));
    }
    case init_kind::kaiming_uniform: {
      const double bound = how.a * std::sqrt(3.0 / need_fan(fan_in, "fan_in"));
      return fusor::random::uniform<T, B>(rng, shape, T(-bound), T(bound));
    }
    case init_kind::kaiming_normal:
      return fusor::random::normal<T, B>(rng, shape, T(0), T(how.a / std::sqrt(need_fan(fan_in, "fan_in"))));
  }
  throw value_error("fusor: unknown initialiser kind " + std::to_string(int(how.kind)));
}

}  // namespace fusor::ad::nn
