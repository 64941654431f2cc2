#pragma once
// Linear algebra (NumPy names): matmul, dot, vdot, inner, outer, tensordot, trace, einsum,
// matrix_norm. The kernels come from blas<B>, specialised per backend: include <fusor/fusor.hpp>
// (cpu: CBLAS) or <fusor/cuda.cuh> (cuda) rather than this header alone.
#include "linalg/blas_fwd.hpp"
#include "linalg/matmul.hpp"
#include "linalg/products.hpp"
#include "linalg/einsum.hpp"
#include "linalg/norms.hpp"
