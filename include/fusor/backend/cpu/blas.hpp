#pragma once
// blas<cpu>: the linear-algebra kernels on host memory. float, double, complex<float> and
// complex<double> go to CBLAS (OpenBLAS by default; any CBLAS links, chosen with -DBLA_VENDOR);
// float16 and bfloat16 widen panels to float32 for sgemm and round the float32 result once
// (half_gemm.hpp); the integer and bool types go through a plain blocked loop (NumPy wraps
// integers; so do we).
//
// Only this header names cblas.h: the front end (fusor/linalg) sees blas<B> alone.
#include <algorithm>
#include <climits>
#include <complex>
#include <string>
#include <type_traits>

// OpenBLAS's cblas.h declares a global `typedef uint16_t bfloat16` (openblas_config.h), which
// made `bfloat16` ambiguous in every program saying `using namespace fusor;`. The name is changed
// while the header is read: the functions it types are extern "C", so no symbol changes.
#define bfloat16 fusor_openblas_bfloat16
#include <cblas.h>
#undef bfloat16

#include "../../core/config.hpp"
#include "../../core/error.hpp"
#include "../../linalg/blas_fwd.hpp"
#include "half_gemm.hpp"
#include "memory.hpp"
#include "parallel.hpp"

#if defined(FUSOR_INSTRUMENT)
namespace fusor::instrument {
inline std::atomic<long> blas_calls{0};  ///< gemm/gemv/dot calls (CBLAS or the integer loop)
}  // namespace fusor::instrument
#define FUSOR_COUNT_BLAS_CALL() (++::fusor::instrument::blas_calls)
#else
#define FUSOR_COUNT_BLAS_CALL() ((void)0)
#endif

namespace fusor {

namespace detail::cpu_blas {

template <class T>
inline constexpr bool cblas_type = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                                   std::is_same_v<T, std::complex<float>> ||
                                   std::is_same_v<T, std::complex<double>>;

// CBLAS takes 32-bit ints unless built for ILP64; a larger dimension would wrap silently.
inline int to_blas_int(index_t v, const char* what) {
  if (v < 0 || v > index_t(INT_MAX))
    throw backend_error(std::string("fusor: ") + what + " = " + std::to_string(v) +
                        " is outside the range of the BLAS integer type (at most " + std::to_string(INT_MAX) + ")");
  return int(v);
}
inline CBLAS_TRANSPOSE trans(bool t) { return t ? CblasTrans : CblasNoTrans; }

/// C = op(A) op(B) + beta C in float32 through CBLAS: half_gemm's multiplier.
inline void sgemm_beta(bool ta, bool tb, index_t m, index_t n, index_t k, const float* a, index_t lda, const float* b,
                       index_t ldb, float beta, float* c, index_t ldc) {
  cblas_sgemm(CblasRowMajor, trans(ta), trans(tb), to_blas_int(m, "gemm M"), to_blas_int(n, "gemm N"),
              to_blas_int(k, "gemm K"), 1.0f, a, to_blas_int(lda, "gemm lda"), b, to_blas_int(ldb, "gemm ldb"), beta, c,
              to_blas_int(ldc, "gemm ldc"));
}

// The accumulator of the loop kernel: integers wrap in their unsigned type (defined behaviour,
// and the same bits NumPy gets); narrow ones accumulate in unsigned int and wrap when stored.
template <class T>
using loop_acc_t =
    std::conditional_t<std::is_same_v<T, bool>, bool,
                       std::conditional_t<std::is_integral_v<T>,
                                          std::make_unsigned_t<std::conditional_t<(sizeof(T) < sizeof(int)), int, T>>,
                                          T>>;

/// C = op(A) op(B) for types CBLAS does not have. Rows of C are split over threads; each row is
/// built in blocks of columns so the accumulators stay in cache.
template <class T>
void loop_gemm(bool ta, bool tb, index_t m, index_t n, index_t k, const T* a, index_t lda, const T* b, index_t ldb,
               T* c, index_t ldc) {
  using W = loop_acc_t<T>;
  constexpr index_t nb = 256;
  const index_t work = m * n * std::max<index_t>(k, 1);
  run_team(std::min<index_t>(threads_for(work / 8), m), [&](int t, int nt) {
    auto [rb, re] = split_range(m, t, nt);
    W acc[nb];  // one block of columns of a row of C
    for (index_t i = rb; i < re; ++i) {
      for (index_t j0 = 0; j0 < n; j0 += nb) {
        const index_t jn = std::min(nb, n - j0);
        std::fill(acc, acc + jn, W(0));
        for (index_t p = 0; p < k; ++p) {
          const T aip = ta ? a[p * lda + i] : a[i * lda + p];
          const index_t step = tb ? ldb : 1;
          const T* bp = tb ? b + j0 * ldb + p : b + p * ldb + j0;
          if constexpr (std::is_same_v<T, bool>) {
            if (aip)
              for (index_t j = 0; j < jn; ++j) acc[j] = acc[j] || bp[j * step];
          } else {
            const W w = W(aip);
            for (index_t j = 0; j < jn; ++j) acc[j] += w * W(bp[j * step]);
          }
        }
        for (index_t j = 0; j < jn; ++j) c[i * ldc + j0 + j] = static_cast<T>(acc[j]);
      }
    }
  });
}

/// The kernel for a type CBLAS lacks: 16-bit floats through float32 panels, the rest a loop.
template <class T>
void gemm_or_loop(bool ta, bool tb, index_t m, index_t n, index_t k, const T* a, index_t lda, const T* b, index_t ldb,
                  T* c, index_t ldc) {
  if constexpr (small_float_v<T>) half_gemm(ta, tb, m, n, k, a, lda, b, ldb, c, ldc, sgemm_beta);
  else loop_gemm(ta, tb, m, n, k, a, lda, b, ldb, c, ldc);
}

}  // namespace detail::cpu_blas

/// Whether the BLAS library runs threads of its own beside fusor's OpenMP team (OpenBLAS's
/// pthreads build; its OpenMP build shares the team, its serial build has none): then work
/// between BLAS calls runs best on the calling thread (ad/nn/conv_gemm.hpp says why).
inline bool blas_has_own_threads() {
#if defined(OPENBLAS_CONST)
  return openblas_get_parallel() == 1;
#else
  return false;
#endif
}
template <>
struct blas<cpu> {
  static constexpr const char* name = "CBLAS";
  static bool has_own_threads() { return blas_has_own_threads(); }

  template <class T>
  static void gemm(bool ta, bool tb, index_t m, index_t n, index_t k, const T* a, index_t lda, const T* b,
                   index_t ldb, T* c, index_t ldc) {
    using namespace detail::cpu_blas;
    FUSOR_COUNT_BLAS_CALL();
    if constexpr (!cblas_type<T>) {
      gemm_or_loop(ta, tb, m, n, k, a, lda, b, ldb, c, ldc);
    } else {
      const int M = to_blas_int(m, "gemm M"), N = to_blas_int(n, "gemm N"), K = to_blas_int(k, "gemm K");
      const int LA = to_blas_int(lda, "gemm lda"), LB = to_blas_int(ldb, "gemm ldb"), LC = to_blas_int(ldc, "gemm ldc");
      if constexpr (std::is_same_v<T, float>)
        cblas_sgemm(CblasRowMajor, trans(ta), trans(tb), M, N, K, 1.0f, a, LA, b, LB, 0.0f, c, LC);
      else if constexpr (std::is_same_v<T, double>)
        cblas_dgemm(CblasRowMajor, trans(ta), trans(tb), M, N, K, 1.0, a, LA, b, LB, 0.0, c, LC);
      else {
        const T one(1), zero(0);
        if constexpr (std::is_same_v<T, std::complex<float>>)
          cblas_cgemm(CblasRowMajor, trans(ta), trans(tb), M, N, K, &one, a, LA, b, LB, &zero, c, LC);
        else
          cblas_zgemm(CblasRowMajor, trans(ta), trans(tb), M, N, K, &one, a, LA, b, LB, &zero, c, LC);
      }
    }
  }

  template <class T>
  static void gemv(bool ta, index_t m, index_t n, const T* a, index_t lda, const T* x, index_t incx, T* y,
                   index_t incy) {
    using namespace detail::cpu_blas;
    FUSOR_COUNT_BLAS_CALL();
    if constexpr (!cblas_type<T>) {
      // y as a column (or row) of a one-column product
      if (ta) gemm_or_loop(true, false, n, index_t(1), m, a, lda, x, incx, y, incy);
      else gemm_or_loop(false, false, m, index_t(1), n, a, lda, x, incx, y, incy);
    } else {
      const int M = to_blas_int(m, "gemv M"), N = to_blas_int(n, "gemv N"), LA = to_blas_int(lda, "gemv lda");
      const int IX = to_blas_int(incx, "gemv incx"), IY = to_blas_int(incy, "gemv incy");
      if constexpr (std::is_same_v<T, float>)
        cblas_sgemv(CblasRowMajor, trans(ta), M, N, 1.0f, a, LA, x, IX, 0.0f, y, IY);
      else if constexpr (std::is_same_v<T, double>)
        cblas_dgemv(CblasRowMajor, trans(ta), M, N, 1.0, a, LA, x, IX, 0.0, y, IY);
      else {
        const T one(1), zero(0);
        if constexpr (std::is_same_v<T, std::complex<float>>)
          cblas_cgemv(CblasRowMajor, trans(ta), M, N, &one, a, LA, x, IX, &zero, y, IY);
        else
          cblas_zgemv(CblasRowMajor, trans(ta), M, N, &one, a, LA, x, IX, &zero, y, IY);
      }
    }
  }

  template <class T>
  static T dotu(index_t n, const T* x, index_t incx, const T* y, index_t incy) {
    using namespace detail::cpu_blas;
    FUSOR_COUNT_BLAS_CALL();
    if constexpr (!cblas_type<T>) {
      T r{};
      gemm_or_loop(true, false, index_t(1), index_t(1), n, x, incx, y, incy, &r, index_t(1));  // x as a 1 x n row of stride incx
      return r;
    } else {
      const int N = to_blas_int(n, "dot n"), IX = to_blas_int(incx, "dot incx"), IY = to_blas_int(incy, "dot incy");
      if constexpr (std::is_same_v<T, float>) return cblas_sdot(N, x, IX, y, IY);
      else if constexpr (std::is_same_v<T, double>) return cblas_ddot(N, x, IX, y, IY);
      else {
        T r{};
        if constexpr (std::is_same_v<T, std::complex<float>>) cblas_cdotu_sub(N, x, IX, y, IY, &r);
        else cblas_zdotu_sub(N, x, IX, y, IY, &r);
        return r;
      }
    }
  }
};

/// Threads the BLAS library uses for one call (OpenBLAS; a no-op for a CBLAS that offers no
/// runtime setting, where the library's own variable, e.g. MKL_NUM_THREADS, applies). n <= 0
/// restores the library default. Independent of set_num_threads, which governs fusor's loops.
inline void set_blas_num_threads(int n) {
#if defined(OPENBLAS_CONST)  // defined by OpenBLAS's cblas.h only
  static const int initial = openblas_get_num_threads();  // from OPENBLAS_NUM_THREADS or the cores
  openblas_set_num_threads(n > 0 ? n : initial);
#else
  (void)n;
#endif
}
/// Threads the BLAS library uses, or 0 when the library does not say.
inline int blas_num_threads() {
#if defined(OPENBLAS_CONST)
  return openblas_get_num_threads();
#else
  return 0;
#endif
}

}  // namespace fusor
