#pragma once
// Umbrella header: the core, the cpu backend, the host-safe cuda tag, linear algebra (CBLAS)
// and FFTs (FFTW). (Autodiff, VSA and matching join here as they land.)
#include "core/config.hpp"
#include "core/error.hpp"
#include "core/backend.hpp"
#include "core/dtype.hpp"
#include "core/extents.hpp"
#include "core/expr/leaf.hpp"
#include "core/expr/nodes.hpp"
#include "core/functors.hpp"
#include "core/view.hpp"
#include "core/array.hpp"
#include "core/operators.hpp"
#include "core/assign.hpp"
#include "core/reduce_ops.hpp"
#include "core/reduce.hpp"
#include "core/create.hpp"
#include "core/random.hpp"
#include "core/slice.hpp"
#include "core/shape_ops.hpp"
#include "core/join.hpp"
#include "core/pad.hpp"
#include "core/algorithms_fwd.hpp"
#include "core/indexing.hpp"
#include "core/transfer.hpp"
#include "core/sort.hpp"
#include "core/scan.hpp"
#include "core/io/print.hpp"
#include "core/io/npy.hpp"
#include "backend/cpu/memory.hpp"
#include "backend/cpu/parallel.hpp"
#include "backend/cpu/packet.hpp"
#include "backend/cpu/evaluator.hpp"
#include "backend/cpu/executor.hpp"
#include "backend/cpu/algorithms.hpp"
#include "backend/cuda/traits.hpp"
#include "linalg.hpp"
#include "backend/cpu/blas.hpp"
#include "fft.hpp"
#include "backend/cpu/fft.hpp"

namespace fusor {
/// The backend user code gets when it does not name one; all translation units of a program
/// must agree on FUSOR_DEFAULT_BACKEND (it changes types, so disagreeing is an ODR violation).
#if defined(FUSOR_DEFAULT_BACKEND_CUDA)
using default_backend = cuda;
#else
using default_backend = cpu;
#endif
}  // namespace fusor
