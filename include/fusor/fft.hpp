#pragma once
// The FFT front end (namespace fusor::fft): numpy.fft's transforms and helpers, plan-cache
// control, and scipy's next_fast_len, fftconvolve and correlate. The transforms themselves come
// from fft_backend<B>: FFTW for cpu (backend/cpu/fft.hpp, included by <fusor/fusor.hpp>).
#include "fft/backend_fwd.hpp"
#include "fft/transforms.hpp"
#include "fft/helpers.hpp"
#include "fft/transform_cost.hpp"
#include "fft/convolve.hpp"

namespace fusor::fft {

/// The counters of backend B's plan cache (size, capacity, hits, misses).
template <class B = default_backend>
plan_cache_stats plan_cache_info() {
  return fft_backend<B>::cache_stats();
}
/// How many plans backend B keeps (default 64; 0 keeps none). Plans beyond it are destroyed, the
/// least recently used first, once no transform is running them.
template <class B = default_backend>
void set_plan_cache_capacity(std::size_t plans) {
  fft_backend<B>::set_cache_capacity(plans);
}
/// Destroys backend B's cached plans (and resets its hit and miss counters).
template <class B = default_backend>
void clear_plan_cache() {
  fft_backend<B>::clear_cache();
}

}  // namespace fusor::fft
