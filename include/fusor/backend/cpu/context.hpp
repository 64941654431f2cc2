#pragma once
// context<cpu>: what the cpu backend's loops, FFTs and allocations on one thread run with (see
// core/context.hpp). Every field's default is "the process-wide setting".
#include <cstddef>
#include <optional>

#include "../../core/backend.hpp"
#include "../../core/context.hpp"
#include "../../fft/backend_fwd.hpp"

namespace fusor {

template <>
struct context<cpu> {
  using backend_type = cpu;
  /// The most threads a loop started under this context uses (0: fusor::num_threads()'s
  /// process-wide setting; a larger value than that setting is cut to it).
  int threads = 0;
  /// The threads one large FFT uses (0: fft::set_threads' process-wide setting).
  int fft_threads = 0;
  /// The effort of the FFT plans made under this context (none: fft::set_planning's).
  std::optional<fft::planning> fft_planning{};
  /// Results the same bit for bit whatever the thread count: whole-array reductions are cut into
  /// a fixed number of parts (not one per thread) and combined in order, and FFT plans are made
  /// with planning::estimate (a measured plan depends on timings). Off by default; it costs
  /// nothing measurable on a sum of 3M floats and about 12% on one of 2^18 (64 parts, not 2).
  bool deterministic = false;
  /// The most bytes live cpu arrays (of the whole process) may hold after an allocation made
  /// under this context; beyond it the allocation throws memory_limit_error before any memory
  /// is taken (0: no limit).
  std::size_t memory_limit = 0;
  /// Told of every cpu allocation and release this thread makes (see memory_hook).
  memory_hook on_memory{};

  /// This context as the thread's current one for as long as the returned scope lives.
  context_scope<cpu> enter() const;
};

inline context_scope<cpu> context<cpu>::enter() const { return context_scope<cpu>(*this); }

}  // namespace fusor
