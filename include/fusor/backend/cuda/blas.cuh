#pragma once
// blas<cuda>: the linear-algebra kernels on device memory. float, double, complex<float> and
// complex<double> go to cuBLAS (one handle per thread and device, bound to the current stream
// before each call); integer and bool types go through a plain kernel (wrapping like NumPy).
//
// fusor is row-major and cuBLAS column-major: a row-major C = op(A) op(B) is the column-major
// C^T = op(B)^T op(A)^T, so every call swaps the operands instead of transposing data.
#include <cublas_v2.h>

#include <climits>
#include <complex>
#include <string>
#include <type_traits>

#include "../../linalg/blas_fwd.hpp"
#include "device_handles.hpp"
#include "executor.cuh"

namespace fusor::detail::cuda_blas {

inline const char* status_name(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    default: return "unknown cuBLAS status";
  }
}
inline void check(cublasStatus_t s, const char* call) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw cuda_error(int(s), call, std::string("fusor: ") + call + " failed: " + status_name(s));
}

/// This thread's cuBLAS handle for the current device, bound to the current stream.
struct destroy_handle {
  void operator()(cublasHandle_t h) const { cublasDestroy(h); }
};
inline cublasHandle_t handle() {
  const cublasHandle_t h = device_handle<cublasHandle_t, destroy_handle>(
      "cuBLAS", [](cublasHandle_t* p) { check(cublasCreate(p), "cublasCreate"); });
  check(cublasSetStream(h, current_cuda_stream()), "cublasSetStream");
  return h;
}

inline int to_int(index_t v, const char* what) {
  if (v > INT_MAX)
    throw value_error(std::string("fusor: cuBLAS takes 32-bit sizes; ") + what + " is " + std::to_string(v) +
                      " (expected at most " + std::to_string(INT_MAX) + ")");
  return int(v);
}

template <class T>
inline constexpr bool cublas_type = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                                    std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;

inline cublasOperation_t op(bool t) { return t ? CUBLAS_OP_T : CUBLAS_OP_N; }

/// Row-major C (m x n) = op(A) op(B) for the types cuBLAS has no GEMM for (one thread per element).
template <class T>
__global__ void __launch_bounds__(cuda_exec::block_threads)
    gemm_kernel(bool ta, bool tb, index_t m, index_t n, index_t k, const T* a, index_t lda, const T* b, index_t ldb,
                T* c, index_t ldc) {
  using D = compute_t<T>;
  for (index_t e = cuda_exec::global_thread(); e < m * n; e += cuda_exec::grid_threads()) {
    const index_t i = e / n, j = e % n;
    D acc = D(0);
    for (index_t p = 0; p < k; ++p) {
      const T x = ta ? a[p * lda + i] : a[i * lda + p];
      const T y = tb ? b[j * ldb + p] : b[p * ldb + j];
      if constexpr (std::is_same_v<T, bool>) acc = acc || (x && y);
      else acc = add_fn{}(acc, multiply_fn{}(D(x), D(y)));
    }
    c[i * ldc + j] = T(acc);
  }
}

}  // namespace fusor::detail::cuda_blas

namespace fusor {

template <>
struct blas<cuda> {
  template <class T>
  static void gemm(bool trans_a, bool trans_b, index_t m, index_t n, index_t k, const T* a, index_t lda, const T* b,
                   index_t ldb, T* c, index_t ldc) {
    using namespace detail::cuda_blas;
    FUSOR_COUNT_BLAS_CALL();
    if constexpr (cublas_type<T>) {
      const int M = to_int(m, "m"), N = to_int(n, "n"), K = to_int(k, "k");
      const int LDA = to_int(lda, "lda"), LDB = to_int(ldb, "ldb"), LDC = to_int(ldc, "ldc");
      cublasHandle_t h = handle();
      if constexpr (std::is_same_v<T, float>) {
        const float one = 1, zero = 0;
        check(cublasSgemm(h, op(trans_b), op(trans_a), N, M, K, &one, b, LDB, a, LDA, &zero, c, LDC), "cublasSgemm");
      } else if constexpr (std::is_same_v<T, double>) {
        const double one = 1, zero = 0;
        check(cublasDgemm(h, op(trans_b), op(trans_a), N, M, K, &one, b, LDB, a, LDA, &zero, c, LDC), "cublasDgemm");
      } else if constexpr (std::is_same_v<T, std::complex<float>>) {
        const cuComplex one{1, 0}, zero{0, 0};
        check(cublasCgemm(h, op(trans_b), op(trans_a), N, M, K, &one, reinterpret_cast<const cuComplex*>(b), LDB,
                          reinterpret_cast<const cuComplex*>(a), LDA, &zero, reinterpret_cast<cuComplex*>(c), LDC),
              "cublasCgemm");
      } else {
        const cuDoubleComplex one{1, 0}, zero{0, 0};
        check(cublasZgemm(h, op(trans_b), op(trans_a), N, M, K, &one, reinterpret_cast<const cuDoubleComplex*>(b), LDB,
                          reinterpret_cast<const cuDoubleComplex*>(a), LDA, &zero,
                          reinterpret_cast<cuDoubleComplex*>(c), LDC),
              "cublasZgemm");
      }
    } else if constexpr (detail::small_float_v<T>) {
      // float16 / bfloat16: cuBLAS's mixed-precision GEMM, float32 accumulation (compute type
      // 32F, tensor cores where the shapes allow), each element rounded once into C
      const int M = to_int(m, "m"), N = to_int(n, "n"), K = to_int(k, "k");
      const int LDA = to_int(lda, "lda"), LDB = to_int(ldb, "ldb"), LDC = to_int(ldc, "ldc");
      constexpr cudaDataType_t type = std::is_same_v<T, float16> ? CUDA_R_16F : CUDA_R_16BF;
      const float one = 1, zero = 0;
      check(cublasGemmEx(handle(), op(trans_b), op(trans_a), N, M, K, &one, b, type, LDB, a, type, LDA, &zero, c, type,
                         LDC, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
            "cublasGemmEx");
    } else {
      gemm_kernel<<<detail::cuda_exec::grid_for(m * n), detail::cuda_exec::block_threads, 0, current_cuda_stream()>>>(
          trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc);
      detail::cuda_exec::check_launch("fusor integer gemm kernel launch");
    }
  }

  template <class T>
  static void gemv(bool trans_a, index_t m, index_t n, const T* a, index_t lda, const T* x, index_t incx, T* y,
                   index_t incy) {
    using namespace detail::cuda_blas;
    if constexpr (cublas_type<T>) {
      FUSOR_COUNT_BLAS_CALL();
      // row-major A (m x n, ld lda) is column-major A^T (n x m): y = A x is op T on it
      const int M = to_int(m, "m"), N = to_int(n, "n"), LDA = to_int(lda, "lda");
      const int IX = to_int(incx, "incx"), IY = to_int(incy, "incy");
      const cublasOperation_t o = trans_a ? CUBLAS_OP_N : CUBLAS_OP_T;
      cublasHandle_t h = handle();
      if constexpr (std::is_same_v<T, float>) {
        const float one = 1, zero = 0;
        check(cublasSgemv(h, o, N, M, &one, a, LDA, x, IX, &zero, y, IY), "cublasSgemv");
      } else if constexpr (std::is_same_v<T, double>) {
        const double one = 1, zero = 0;
        check(cublasDgemv(h, o, N, M, &one, a, LDA, x, IX, &zero, y, IY), "cublasDgemv");
      } else if constexpr (std::is_same_v<T, std::complex<float>>) {
        const cuComplex one{1, 0}, zero{0, 0};
        check(cublasCgemv(h, o, N, M, &one, reinterpret_cast<const cuComplex*>(a), LDA,
                          reinterpret_cast<const cuComplex*>(x), IX, &zero, reinterpret_cast<cuComplex*>(y), IY),
              "cublasCgemv");
      } else {
        const cuDoubleComplex one{1, 0}, zero{0, 0};
        check(cublasZgemv(h, o, N, M, &one, reinterpret_cast<const cuDoubleComplex*>(a), LDA,
                          reinterpret_cast<const cuDoubleComplex*>(x), IX, &zero,
                          reinterpret_cast<cuDoubleComplex*>(y), IY),
              "cublasZgemv");
      }
    } else {  // y (as a column) = op(A) x (as a column): a GEMM with one column
      const index_t rows = trans_a ? n : m, inner = trans_a ? m : n;
      if (incx == 1 && incy == 1) {
        gemm(trans_a, false, rows, 1, inner, a, lda, x, 1, y, 1);
      } else {
        array<T, cuda> xs(extents{inner}), ys(extents{rows});
        executor<cuda>::assign(xs.as_leaf(), leaf<T, cuda>{const_cast<T*>(x), extents{inner}, extents{incx}});
        gemm(trans_a, false, rows, 1, inner, a, lda, xs.data(), 1, ys.data(), 1);
        executor<cuda>::assign(leaf<T, cuda>{y, extents{rows}, extents{incy}}, ys.as_leaf());
      }
    }
  }

  template <class T>
  static T dotu(index_t n, const T* x, index_t incx, const T* y, index_t incy) {
    using namespace detail::cuda_blas;
    FUSOR_COUNT_BLAS_CALL();
    if constexpr (cublas_type<T>) {
      const int N = to_int(n, "n"), IX = to_int(incx, "incx"), IY = to_int(incy, "incy");
      cublasHandle_t h = handle();
      T r{};
      // the result is written to host memory: cuBLAS waits for the stream
      check(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST), "cublasSetPointerMode");
      if constexpr (std::is_same_v<T, float>) check(cublasSdot(h, N, x, IX, y, IY, &r), "cublasSdot");
      else if constexpr (std::is_same_v<T, double>) check(cublasDdot(h, N, x, IX, y, IY, &r), "cublasDdot");
      else if constexpr (std::is_same_v<T, std::complex<float>>)
        check(cublasCdotu(h, N, reinterpret_cast<const cuComplex*>(x), IX, reinterpret_cast<const cuComplex*>(y), IY,
                          reinterpret_cast<cuComplex*>(&r)),
              "cublasCdotu");
      else
        check(cublasZdotu(h, N, reinterpret_cast<const cuDoubleComplex*>(x), IX,
                          reinterpret_cast<const cuDoubleComplex*>(y), IY, reinterpret_cast<cuDoubleComplex*>(&r)),
              "cublasZdotu");
      return r;
    } else {  // a fused multiply-sum over the two strided vectors (one kernel)
      const leaf<T, cuda> lx{const_cast<T*>(x), extents{n}, extents{incx}}, ly{const_cast<T*>(y), extents{n}, extents{incy}};
      if constexpr (std::is_same_v<T, bool>) {
        return executor<cuda>::reduce<detail::any_op>(binary_expr<logical_and_fn, leaf<T, cuda>, leaf<T, cuda>>{{}, lx, ly});
      } else if constexpr (detail::small_float_v<T>) {  // products kept in float32, the sum rounded once
        using X = cast_expr<float, leaf<T, cuda>>;
        return static_cast<T>(executor<cuda>::reduce<detail::sum_op>(binary_expr<multiply_fn, X, X>{{}, X{lx}, X{ly}}));
      } else
        return static_cast<T>(executor<cuda>::reduce<detail::sum_op>(binary_expr<multiply_fn, leaf<T, cuda>, leaf<T, cuda>>{{}, lx, ly}));
    }
  }
};

}  // namespace fusor
