#pragma once
// lapack<cpu>: LAPACK's factorisations (backend/host/lapack.hpp) on the cpu's own memory.
#include "../../core/backend.hpp"
#include "../../linalg/lapack_fwd.hpp"
#include "../host/lapack.hpp"

namespace fusor {
template <>
struct lapack<cpu> : detail::host::lapack {};
}  // namespace fusor
