#pragma once
// lapack<cuda>: the factorisations of linalg/lapack_fwd.hpp on device memory through cuSOLVER's
// dense API (one handle per thread and device, bound to the current stream before each call):
// getrf/getrs, potrf, syevd/heevd, gesvdj (Jacobi SVD: any shape, where gesvd needs m >= n),
// geqrf and orgqr/ungqr, one call per matrix of the batch. The `info` flags stay on the device
// until the batch is done and come back in one copy.
//
// eig (general, non-symmetric matrices) goes through one host round trip to LAPACK's geev: the
// matrices are copied to the host, factorised there and the results copied back (docs/linalg.md).
#include <cusolverDn.h>

#include <complex>
#include <string>
#include <type_traits>
#include <vector>

#include "../../core/error.hpp"
#include "../../linalg/lapack_fwd.hpp"
#include "../host/lapack.hpp"
#include "blas.cuh"
#include "device_handles.hpp"
#include "executor.cuh"

namespace fusor::detail::cuda_solver {

inline void check(cusolverStatus_t s, const char* call) {
  if (s != CUSOLVER_STATUS_SUCCESS)
    throw cuda_error(int(s), call, std::string("fusor: ") + call + " failed with cuSOLVER status " + std::to_string(int(s)));
}

/// This thread's cuSOLVER handle for the current device, bound to the current stream.
struct destroy_handle {
  void operator()(cusolverDnHandle_t h) const { cusolverDnDestroy(h); }
};
inline cusolverDnHandle_t handle() {
  const cusolverDnHandle_t h = device_handle<cusolverDnHandle_t, destroy_handle>(
      "cuSOLVER", [](cusolverDnHandle_t* p) { check(cusolverDnCreate(p), "cusolverDnCreate"); });
  check(cusolverDnSetStream(h, current_cuda_stream()), "cusolverDnSetStream");
  return h;
}

// std::complex and cuComplex share their layout (two reals): the casts only change the name
template <class T>
auto cu(T* p) {
  if constexpr (std::is_same_v<std::remove_const_t<T>, std::complex<float>>)
    return reinterpret_cast<std::conditional_t<std::is_const_v<T>, const cuComplex*, cuComplex*>>(p);
  else if constexpr (std::is_same_v<std::remove_const_t<T>, std::complex<double>>)
    return reinterpret_cast<std::conditional_t<std::is_const_v<T>, const cuDoubleComplex*, cuDoubleComplex*>>(p);
  else return p;
}
using host::lapack_detail::is_c;  // the precision letters, as the host LAPACK names them
using host::lapack_detail::is_d;
using host::lapack_detail::is_s;

/// A device workspace of at least n elements, kept for the whole batch.
template <class T>
struct workspace {
  array<T, cuda> buf;
  T* get(int n) {
    if (buf.size() < index_t(n)) buf = array<T, cuda>(extents{index_t(n > 0 ? n : 1)});
    return buf.data();
  }
};
/// The batch's info flags, copied to the host once.
inline std::vector<int> infos(const array<int, cuda>& info) {
  std::vector<int> h(std::size_t(info.size()));
  if (!h.empty()) backend_memory<cuda>::copy_to_host(h.data(), info.data(), info.size());
  return h;
}
inline cusolverEigMode_t mode(bool vectors) { return vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR; }
}  // namespace fusor::detail::cuda_solver

namespace fusor {

template <>
struct lapack<cuda> {
  static constexpr const char* name = "cuSOLVER";

  template <class T>
  static std::vector<int> lu(T* a, int* piv, index_t batch, index_t n) {
    namespace s = detail::cuda_solver;
    const int N = detail::cuda_blas::to_int(n, "n");
    auto h = s::handle();
    array<int, cuda> info = zeros<int, cuda>(extents{batch});
    s::workspace<T> ws;
    int lw = 0;
    if constexpr (s::is_s<T>) s::check(cusolverDnSgetrf_bufferSize(h, N, N, s::cu(a), N, &lw), "cusolverDnSgetrf_bufferSize");
    else if constexpr (s::is_d<T>) s::check(cusolverDnDgetrf_bufferSize(h, N, N, s::cu(a), N, &lw), "cusolverDnDgetrf_bufferSize");
    else if constexpr (s::is_c<T>) s::check(cusolverDnCgetrf_bufferSize(h, N, N, s::cu(a), N, &lw), "cusolverDnCgetrf_bufferSize");
    else s::check(cusolverDnZgetrf_bufferSize(h, N, N, s::cu(a), N, &lw), "cusolverDnZgetrf_bufferSize");
    T* w = ws.get(lw);
    for (index_t b = 0; b < batch; ++b) {
      T* m = a + b * n * n;
      int* p = piv + b * n;
      int* i = info.data() + b;
      if constexpr (s::is_s<T>) s::check(cusolverDnSgetrf(h, N, N, s::cu(m), N, s::cu(w), p, i), "cusolverDnSgetrf");
      else if constexpr (s::is_d<T>) s::check(cusolverDnDgetrf(h, N, N, s::cu(m), N, s::cu(w), p, i), "cusolverDnDgetrf");
      else if constexpr (s::is_c<T>) s::check(cusolverDnCgetrf(h, N, N, s::cu(m), N, s::cu(w), p, i), "cusolverDnCgetrf");
      else s::check(cusolverDnZgetrf(h, N, N, s::cu(m), N, s::cu(w), p, i), "cusolverDnZgetrf");
    }
    return s::infos(info);
  }

  template <class T>
  static std::vector<int> lu_solve(const T* lu_, const int* piv, T* rhs, index_t batch, index_t n, index_t nrhs) {
    return solve_with(lu_, piv, rhs, batch, n, nrhs, CUBLAS_OP_T);  // M^T X = B: A X = B
  }

  template <class T>
  static std::vector<int> inverse(T* a, index_t batch, index_t n) {
    array<int, cuda> piv(extents{batch, n});
    const auto info = lu(a, piv.data(), batch, n);
    for (int i : info)
      if (i != 0) return info;
    // M X = I column-major gives M^-1, i.e. A^-1 read row-major; the identity is the same either way
    array<T, cuda> x(extents{batch, n, n});
    x = broadcast_to(lazy::eye<T, cuda>(n), x.shape());
    const auto solved = solve_with(static_cast<const T*>(a), piv.data(), x.data(), batch, n, n, CUBLAS_OP_N);
    backend_memory<cuda>::copy_within(a, x.data(), batch * n * n);
    return solved;
  }

  template <class T>
  static std::vector<int> cholesky_upper(T* a, index_t batch, index_t n) {
    namespace s = detail::cuda_solver;
    const int N = detail::cuda_blas::to_int(n, "n");
    const auto up = CUBLAS_FILL_MODE_UPPER;
    auto h = s::handle();
    array<int, cuda> info = zeros<int, cuda>(extents{batch});
    s::workspace<T> ws;
    int lw = 0;
    if constexpr (s::is_s<T>) s::check(cusolverDnSpotrf_bufferSize(h, up, N, s::cu(a), N, &lw), "cusolverDnSpotrf_bufferSize");
    else if constexpr (s::is_d<T>) s::check(cusolverDnDpotrf_bufferSize(h, up, N, s::cu(a), N, &lw), "cusolverDnDpotrf_bufferSize");
    else if constexpr (s::is_c<T>) s::check(cusolverDnCpotrf_bufferSize(h, up, N, s::cu(a), N, &lw), "cusolverDnCpotrf_bufferSize");
    else s::check(cusolverDnZpotrf_bufferSize(h, up, N, s::cu(a), N, &lw), "cusolverDnZpotrf_bufferSize");
    T* w = ws.get(lw);
    for (index_t b = 0; b < batch; ++b) {
      T* m = a + b * n * n;
      int* i = info.data() + b;
      if constexpr (s::is_s<T>) s::check(cusolverDnSpotrf(h, up, N, s::cu(m), N, s::cu(w), lw, i), "cusolverDnSpotrf");
      else if constexpr (s::is_d<T>) s::check(cusolverDnDpotrf(h, up, N, s::cu(m), N, s::cu(w), lw, i), "cusolverDnDpotrf");
      else if constexpr (s::is_c<T>) s::check(cusolverDnCpotrf(h, up, N, s::cu(m), N, s::cu(w), lw, i), "cusolverDnCpotrf");
      else s::check(cusolverDnZpotrf(h, up, N, s::cu(m), N, s::cu(w), lw, i), "cusolverDnZpotrf");
    }
    return s::infos(info);
  }

  template <class T>
  static std::vector<int> eigh(T* a, real_t<T>* ev, index_t batch, index_t n, bool vectors) {
    namespace s = detail::cuda_solver;
    const int N = detail::cuda_blas::to_int(n, "n");
    const auto up = CUBLAS_FILL_MODE_UPPER;
    const auto job = s::mode(vectors);
    auto h = s::handle();
    array<int, cuda> info = zeros<int, cuda>(extents{batch});
    s::workspace<T> ws;
    int lw = 0;
    if constexpr (s::is_s<T>) s::check(cusolverDnSsyevd_bufferSize(h, job, up, N, s::cu(a), N, ev, &lw), "cusolverDnSsyevd_bufferSize");
    else if constexpr (s::is_d<T>) s::check(cusolverDnDsyevd_bufferSize(h, job, up, N, s::cu(a), N, ev, &lw), "cusolverDnDsyevd_bufferSize");
    else if constexpr (s::is_c<T>) s::check(cusolverDnCheevd_bufferSize(h, job, up, N, s::cu(a), N, ev, &lw), "cusolverDnCheevd_bufferSize");
    else s::check(cusolverDnZheevd_bufferSize(h, job, up, N, s::cu(a), N, ev, &lw), "cusolverDnZheevd_bufferSize");
    T* w = ws.get(lw);
    for (index_t b = 0; b < batch; ++b) {
      T* m = a + b * n * n;
      real_t<T>* e = ev + b * n;
      int* i = info.data() + b;
      if constexpr (s::is_s<T>) s::check(cusolverDnSsyevd(h, job, up, N, s::cu(m), N, e, s::cu(w), lw, i), "cusolverDnSsyevd");
      else if constexpr (s::is_d<T>) s::check(cusolverDnDsyevd(h, job, up, N, s::cu(m), N, e, s::cu(w), lw, i), "cusolverDnDsyevd");
      else if constexpr (s::is_c<T>) s::check(cusolverDnCheevd(h, job, up, N, s::cu(m), N, e, s::cu(w), lw, i), "cusolverDnCheevd");
      else s::check(cusolverDnZheevd(h, job, up, N, s::cu(m), N, e, s::cu(w), lw, i), "cusolverDnZheevd");
    }
    return s::infos(info);
  }

  /// gesvdj gives V (not V^H): vt is written as V's conjugate transpose afterwards.
  template <class T>
  static std::vector<int> svd(T* a, real_t<T>* sv, T* u, T* vt, index_t batch, index_t m, index_t n, char job) {
    namespace s = detail::cuda_solver;
    const int M = detail::cuda_blas::to_int(m, "m"), N = detail::cuda_blas::to_int(n, "n");
    const index_t k = std::min(m, n);
    const bool vectors = job != 'N';
    const int econ = job == 'A' ? 0 : 1;
    const index_t ucols = job == 'A' ? m : k, vcols = job == 'A' ? n : k;
    auto h = s::handle();
    gesvdjInfo_t params = nullptr;
    s::check(cusolverDnCreateGesvdjInfo(&params), "cusolverDnCreateGesvdjInfo");
    struct release {
      gesvdjInfo_t p;
      ~release() { cusolverDnDestroyGesvdjInfo(p); }
    } guard{params};
    // without vectors gesvdj still wants valid U and V arguments: one matrix's worth, unused
    array<T, cuda> uu(extents{vectors ? index_t(1) : m * ucols}), vv(extents{n * vcols});
    T* pu0 = vectors ? u : uu.data();
    array<int, cuda> info = zeros<int, cuda>(extents{batch});
    s::workspace<T> ws;
    int lw = 0;
    const auto jz = s::mode(vectors);
    const int ldu = M > 0 ? M : 1, ldv = N > 0 ? N : 1;
    if constexpr (s::is_s<T>) s::check(cusolverDnSgesvdj_bufferSize(h, jz, econ, M, N, s::cu(a), M, sv, s::cu(pu0), ldu, s::cu(vv.data()), ldv, &lw, params), "cusolverDnSgesvdj_bufferSize");
    else if constexpr (s::is_d<T>) s::check(cusolverDnDgesvdj_bufferSize(h, jz, econ, M, N, s::cu(a), M, sv, s::cu(pu0), ldu, s::cu(vv.data()), ldv, &lw, params), "cusolverDnDgesvdj_bufferSize");
    else if constexpr (s::is_c<T>) s::check(cusolverDnCgesvdj_bufferSize(h, jz, econ, M, N, s::cu(a), M, sv, s::cu(pu0), ldu, s::cu(vv.data()), ldv, &lw, params), "cusolverDnCgesvdj_bufferSize");
    else s::check(cusolverDnZgesvdj_bufferSize(h, jz, econ, M, N, s::cu(a), M, sv, s::cu(pu0), ldu, s::cu(vv.data()), ldv, &lw, params), "cusolverDnZgesvdj_bufferSize");
    T* w = ws.get(lw);
    for (index_t b = 0; b < batch; ++b) {
      T* x = a + b * m * n;
      real_t<T>* sb = sv + b * k;
      T* pu = vectors ? u + b * m * ucols : uu.data();
      int* i = info.data() + b;
      if constexpr (s::is_s<T>) s::check(cusolverDnSgesvdj(h, jz, econ, M, N, s::cu(x), M, sb, s::cu(pu), ldu, s::cu(vv.data()), ldv, s::cu(w), lw, i, params), "cusolverDnSgesvdj");
      else if constexpr (s::is_d<T>) s::check(cusolverDnDgesvdj(h, jz, econ, M, N, s::cu(x), M, sb, s::cu(pu), ldu, s::cu(vv.data()), ldv, s::cu(w), lw, i, params), "cusolverDnDgesvdj");
      else if constexpr (s::is_c<T>) s::check(cusolverDnCgesvdj(h, jz, econ, M, N, s::cu(x), M, sb, s::cu(pu), ldu, s::cu(vv.data()), ldv, s::cu(w), lw, i, params), "cusolverDnCgesvdj");
      else s::check(cusolverDnZgesvdj(h, jz, econ, M, N, s::cu(x), M, sb, s::cu(pu), ldu, s::cu(vv.data()), ldv, s::cu(w), lw, i, params), "cusolverDnZgesvdj");
      if (vectors) {
        // V is n x vcols column-major, i.e. (vcols, n) row-major; vt (vcols x n column-major) is
        // (n, vcols) row-major: its conjugate transpose
        const array_view<T, cuda> v_rm(vv.data(), extents{vcols, n}, extents{n, 1});
        array_view<T, cuda> vt_rm(vt + b * vcols * n, extents{n, vcols}, extents{vcols, 1});
        if constexpr (is_complex_v<T>) vt_rm = conj(transpose(v_rm));
        else vt_rm = transpose(v_rm);
      }
    }
    return s::infos(info);
  }

  template <class T>
  static void qr(T* a, T* tau, index_t batch, index_t m, index_t n) {
    namespace s = detail::cuda_solver;
    const int M = detail::cuda_blas::to_int(m, "m"), N = detail::cuda_blas::to_int(n, "n");
    const int lda = M > 0 ? M : 1;
    auto h = s::handle();
    array<int, cuda> info = zeros<int, cuda>(extents{batch});
    s::workspace<T> ws;
    int lw = 0;
    if constexpr (s::is_s<T>) s::check(cusolverDnSgeqrf_bufferSize(h, M, N, s::cu(a), lda, &lw), "cusolverDnSgeqrf_bufferSize");
    else if constexpr (s::is_d<T>) s::check(cusolverDnDgeqrf_bufferSize(h, M, N, s::cu(a), lda, &lw), "cusolverDnDgeqrf_bufferSize");
    else if constexpr (s::is_c<T>) s::check(cusolverDnCgeqrf_bufferSize(h, M, N, s::cu(a), lda, &lw), "cusolverDnCgeqrf_bufferSize");
    else s::check(cusolverDnZgeqrf_bufferSize(h, M, N, s::cu(a), lda, &lw), "cusolverDnZgeqrf_bufferSize");
    T* w = ws.get(lw);
    for (index_t b = 0; b < batch; ++b) {
      T* x = a + b * m * n;
      T* t = tau + b * std::min(m, n);
      int* i = info.data() + b;
      if constexpr (s::is_s<T>) s::check(cusolverDnSgeqrf(h, M, N, s::cu(x), lda, s::cu(t), s::cu(w), lw, i), "cusolverDnSgeqrf");
      else if constexpr (s::is_d<T>) s::check(cusolverDnDgeqrf(h, M, N, s::cu(x), lda, s::cu(t), s::cu(w), lw, i), "cusolverDnDgeqrf");
      else if constexpr (s::is_c<T>) s::check(cusolverDnCgeqrf(h, M, N, s::cu(x), lda, s::cu(t), s::cu(w), lw, i), "cusolverDnCgeqrf");
      else s::check(cusolverDnZgeqrf(h, M, N, s::cu(x), lda, s::cu(t), s::cu(w), lw, i), "cusolverDnZgeqrf");
    }
  }

  template <class T>
  static void form_q(T* q, const T* tau, index_t batch, index_t m, index_t cols, index_t k) {
    namespace s = detail::cuda_solver;
    const int M = detail::cuda_blas::to_int(m, "m"), C = detail::cuda_blas::to_int(cols, "the columns of Q"),
              K = detail::cuda_blas::to_int(k, "k");
    const int lda = M > 0 ? M : 1;
    auto h = s::handle();
    array<int, cuda> info = zeros<int, cuda>(extents{batch});
    s::workspace<T> ws;
    int lw = 0;
    if constexpr (s::is_s<T>) s::check(cusolverDnSorgqr_bufferSize(h, M, C, K, s::cu(q), lda, s::cu(tau), &lw), "cusolverDnSorgqr_bufferSize");
    else if constexpr (s::is_d<T>) s::check(cusolverDnDorgqr_bufferSize(h, M, C, K, s::cu(q), lda, s::cu(tau), &lw), "cusolverDnDorgqr_bufferSize");
    else if constexpr (s::is_c<T>) s::check(cusolverDnCungqr_bufferSize(h, M, C, K, s::cu(q), lda, s::cu(tau), &lw), "cusolverDnCungqr_bufferSize");
    else s::check(cusolverDnZungqr_bufferSize(h, M, C, K, s::cu(q), lda, s::cu(tau), &lw), "cusolverDnZungqr_bufferSize");
    T* w = ws.get(lw);
    for (index_t b = 0; b < batch; ++b) {
      T* x = q + b * m * cols;
      const T* t = tau + b * k;
      int* i = info.data() + b;
      if constexpr (s::is_s<T>) s::check(cusolverDnSorgqr(h, M, C, K, s::cu(x), lda, s::cu(t), s::cu(w), lw, i), "cusolverDnSorgqr");
      else if constexpr (s::is_d<T>) s::check(cusolverDnDorgqr(h, M, C, K, s::cu(x), lda, s::cu(t), s::cu(w), lw, i), "cusolverDnDorgqr");
      else if constexpr (s::is_c<T>) s::check(cusolverDnCungqr(h, M, C, K, s::cu(x), lda, s::cu(t), s::cu(w), lw, i), "cusolverDnCungqr");
      else s::check(cusolverDnZungqr(h, M, C, K, s::cu(x), lda, s::cu(t), s::cu(w), lw, i), "cusolverDnZungqr");
    }
  }

  /// One host round trip: geev is LAPACK's (cuSOLVER's non-symmetric solver needs its 64-bit
  /// generic API and a newer toolkit than fusor requires).
  template <class T>
  static std::vector<int> eig(T* a, T* w, T* vl, index_t batch, index_t n, bool vectors) {
    std::vector<T> ha(std::size_t(batch * n * n)), hw(std::size_t(batch * n)), hv(vectors ? ha.size() : 0);
    backend_memory<cuda>::copy_to_host(ha.data(), a, batch * n * n);
    const auto info = detail::host::lapack::eig(ha.data(), hw.data(), vectors ? hv.data() : nullptr, batch, n, vectors);
    backend_memory<cuda>::copy_from_host(w, hw.data(), batch * n);
    if (vectors) backend_memory<cuda>::copy_from_host(vl, hv.data(), batch * n * n);
    return info;
  }

 private:
  template <class T>
  static std::vector<int> solve_with(const T* lu_, const int* piv, T* rhs, index_t batch, index_t n, index_t nrhs,
                                     cublasOperation_t op) {
    namespace s = detail::cuda_solver;
    const int N = detail::cuda_blas::to_int(n, "n"), R = detail::cuda_blas::to_int(nrhs, "the number of right-hand sides");
    auto h = s::handle();
    array<int, cuda> info = zeros<int, cuda>(extents{batch});
    for (index_t b = 0; b < batch; ++b) {
      const T* m = lu_ + b * n * n;
      const int* p = piv + b * n;
      T* x = rhs + b * n * nrhs;
      int* i = info.data() + b;
      if constexpr (s::is_s<T>) s::check(cusolverDnSgetrs(h, op, N, R, s::cu(m), N, p, s::cu(x), N, i), "cusolverDnSgetrs");
      else if constexpr (s::is_d<T>) s::check(cusolverDnDgetrs(h, op, N, R, s::cu(m), N, p, s::cu(x), N, i), "cusolverDnDgetrs");
      else if constexpr (s::is_c<T>) s::check(cusolverDnCgetrs(h, op, N, R, s::cu(m), N, p, s::cu(x), N, i), "cusolverDnCgetrs");
      else s::check(cusolverDnZgetrs(h, op, N, R, s::cu(m), N, p, s::cu(x), N, i), "cusolverDnZgetrs");
    }
    return s::infos(info);
  }
};

}  // namespace fusor
