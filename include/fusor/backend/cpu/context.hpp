#pragma once
// context<cpu>: what the cpu backend's loops, FFTs and allocations on one thread run with (see
// core/context.hpp). Every field's default is "the process-wide setting".
#include <optional>

#include "../../core/backend.hpp"
#include "../../core/context.hpp"
#include "../../fft/backend_fwd.hpp"

namespace fusor {

/// deterministic (from context_settings) on the cpu: whole-array reductions are cut into a
/// fixed number of parts (not one per thread) and combined in order, so their bits do not depend
/// on the thread count; and FFT plans are made with planning::estimate (a measured plan depends
/// on timings), so runs repeat. FFTW and the BLAS still choose their algorithms by their own
/// thread counts: fix fft_threads and set_blas_num_threads as well for bits that do not depend
/// on them. It costs nothing measurable on a sum of 3M floats and about 12% on one of 2^18
/// (64 parts, not 2).
template <>
struct context<cpu> : context_settings<cpu> {
  /// The most threads fusor's statements and reductions started under this context use, and
  /// the default of a large FFT's (0: fusor::num_threads()'s process-wide setting; a larger
  /// value than that setting is cut to it). The BLAS keeps its own (set_blas_num_threads).
  int threads = 0;
  /// The threads one large FFT uses (0: fft::set_threads' process-wide setting).
  int fft_threads = 0;
  /// The effort of the FFT plans made under this context (none: fft::set_planning's).
  std::optional<fft::planning> fft_planning{};
};

}  // namespace fusor
