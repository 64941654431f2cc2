#pragma once
// algorithms<cpu>: the host loops of backend/host/algorithms.hpp on the cpu's own memory, on as
// many threads as the executor's loops (set_num_threads, capped by context<cpu>::threads).
#include "../../core/algorithms_fwd.hpp"
#include "../../core/backend.hpp"
#include "../host/algorithms.hpp"
#include "parallel.hpp"

namespace fusor {
namespace detail {
struct cpu_team {
  static int threads() { return num_threads(); }
};
}  // namespace detail

template <>
struct algorithms<cpu> : detail::host::algorithms<detail::cpu_team> {};
}  // namespace fusor
