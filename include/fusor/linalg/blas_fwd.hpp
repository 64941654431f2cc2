#pragma once
// blas<B>: the dense kernels the linear-algebra front end calls, one specialisation per backend
// (CBLAS in backend/cpu/blas.hpp; cuBLAS later in backend/cuda/blas.cuh). Declared only here, so
// the front end never names a BLAS header and a backend adds its kernels without touching it.
//
// Every specialisation provides, for each element type T (float, double, complex<float>,
// complex<double>, and the integer and bool types through a plain loop), row-major operations on
// memory the backend can address:
//
//   static void gemm(bool trans_a, bool trans_b, index_t m, index_t n, index_t k,
//                    const T* a, index_t lda, const T* b, index_t ldb, T* c, index_t ldc);
//       C (m x n, row stride ldc) = op(A) * op(B), op(X) = X or X^T (never conjugated);
//       C is overwritten, never read (beta = 0), m, n, k > 0.
//   static void gemv(bool trans_a, index_t m, index_t n, const T* a, index_t lda,
//                    const T* x, index_t incx, T* y, index_t incy);
//       y = op(A) x with A m x n; y has n elements when trans_a, else m; y is overwritten.
//   static T dotu(index_t n, const T* x, index_t incx, const T* y, index_t incy);
//       sum x[i] * y[i] (no conjugation).
#include "../core/backend.hpp"

namespace fusor {

template <class B>
struct blas;

/// A backend with linear-algebra kernels in this translation unit.
template <class B>
concept blas_backend = requires { sizeof(blas<B>); };

/// Whether blas<B> runs threads of its own beside fusor's loops (OpenBLAS's pthreads build), from
/// the specialisation's optional `static bool has_own_threads()`; false without it. Work placed
/// between BLAS calls then runs best on the calling thread (ad/nn/conv_gemm.hpp says why).
template <class B>
bool blas_keeps_own_threads() {
  if constexpr (requires { blas<B>::has_own_threads(); }) return blas<B>::has_own_threads();
  else return false;
}

}  // namespace fusor
