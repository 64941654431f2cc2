#pragma once
// One generic algorithm, written once for every backend: standardise a signal and report how far
// it is from its mean. Nothing here names cpu or cuda; the caller's template argument (or
// fusor::default_backend) decides where the arrays live and where the loops run.
#include <cmath>

template <fusor::backend B>
struct zscore_result {
  fusor::array<float, B> z;  // (x - mean) / stddev
  double spread;             // max |z|
};

template <fusor::backend B>
zscore_result<B> zscore(const fusor::array<float, B>& x) {
  const double mean = fusor::mean(x);
  const double stddev = fusor::std(x);
  fusor::array<float, B> z = (x - float(mean)) / float(stddev);  // one fused loop or kernel
  const double spread = fusor::max(fusor::abs(z));  // before z moves into the result
  return {std::move(z), spread};
}
