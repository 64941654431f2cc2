#pragma once
// Linear algebra (NumPy names): matmul, dot, vdot, inner, outer, tensordot, trace, einsum,
// matrix_norm, and numpy.linalg's decompositions in fusor::linalg (inv, solve, det, svd, eig, qr,
// cholesky, lstsq, ...), cov and corrcoef. The kernels come from blas<B> and lapack<B>, specialised per backend:
// include <fusor/fusor.hpp> (cpu: CBLAS, LAPACK) or <fusor/cuda.cuh> (cuda: cuBLAS, cuSOLVER)
// rather than this header alone.
#include "linalg/blas_fwd.hpp"
#include "linalg/conv_fwd.hpp"
#include "linalg/matmul.hpp"
#include "linalg/products.hpp"
#include "linalg/einsum.hpp"
#include "linalg/lapack_fwd.hpp"
#include "linalg/decompositions.hpp"
#include "linalg/norms.hpp"
#include "linalg/covariance.hpp"
#include "linalg/ext.hpp"
