#pragma once
// algorithms<cpu>: the host loops of backend/host/algorithms.hpp on the cpu's own memory.
#include "../../core/algorithms_fwd.hpp"
#include "../../core/backend.hpp"
#include "../host/algorithms.hpp"

namespace fusor {
template <>
struct algorithms<cpu> : detail::host::algorithms {};
}  // namespace fusor
