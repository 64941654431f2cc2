#pragma once
// detail::host::lapack: the factorisations of linalg/lapack_fwd.hpp over LAPACK's Fortran interface (the
// LAPACK that comes with the BLAS: OpenBLAS on Debian, found by CMake's FindLAPACK), one call per
// matrix of the batch. The prototypes are declared here (LAPACKE is a separate package on many
// systems and adds nothing we need): 32-bit integers (LP64) and the hidden lengths of the
// character arguments that gfortran-compiled LAPACKs expect after the others.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

#include "../../core/dtype.hpp"
#include "../../core/error.hpp"

extern "C" {
// LU: getrf, getrs, getri
void sgetrf_(const int*, const int*, float*, const int*, int*, int*);
void dgetrf_(const int*, const int*, double*, const int*, int*, int*);
void cgetrf_(const int*, const int*, std::complex<float>*, const int*, int*, int*);
void zgetrf_(const int*, const int*, std::complex<double>*, const int*, int*, int*);
void sgetrs_(const char*, const int*, const int*, const float*, const int*, const int*, float*, const int*, int*, std::size_t);
void dgetrs_(const char*, const int*, const int*, const double*, const int*, const int*, double*, const int*, int*, std::size_t);
void cgetrs_(const char*, const int*, const int*, const std::complex<float>*, const int*, const int*, std::complex<float>*,
             const int*, int*, std::size_t);
void zgetrs_(const char*, const int*, const int*, const std::complex<double>*, const int*, const int*,
             std::complex<double>*, const int*, int*, std::size_t);
void sgetri_(const int*, float*, const int*, const int*, float*, const int*, int*);
void dgetri_(const int*, double*, const int*, const int*, double*, const int*, int*);
void cgetri_(const int*, std::complex<float>*, const int*, const int*, std::complex<float>*, const int*, int*);
void zgetri_(const int*, std::complex<double>*, const int*, const int*, std::complex<double>*, const int*, int*);
// Cholesky
void spotrf_(const char*, const int*, float*, const int*, int*, std::size_t);
void dpotrf_(const char*, const int*, double*, const int*, int*, std::size_t);
void cpotrf_(const char*, const int*, std::complex<float>*, const int*, int*, std::size_t);
void zpotrf_(const char*, const int*, std::complex<double>*, const int*, int*, std::size_t);
// symmetric / Hermitian eigenproblems (divide and conquer)
void ssyevd_(const char*, const char*, const int*, float*, const int*, float*, float*, const int*, int*, const int*, int*,
             std::size_t, std::size_t);
void dsyevd_(const char*, const char*, const int*, double*, const int*, double*, double*, const int*, int*, const int*,
             int*, std::size_t, std::size_t);
void cheevd_(const char*, const char*, const int*, std::complex<float>*, const int*, float*, std::complex<float>*,
             const int*, float*, const int*, int*, const int*, int*, std::size_t, std::size_t);
void zheevd_(const char*, const char*, const int*, std::complex<double>*, const int*, double*, std::complex<double>*,
             const int*, double*, const int*, int*, const int*, int*, std::size_t, std::size_t);
// SVD (divide and conquer)
void sgesdd_(const char*, const int*, const int*, float*, const int*, float*, float*, const int*, float*, const int*,
             float*, const int*, int*, int*, std::size_t);
void dgesdd_(const char*, const int*, const int*, double*, const int*, double*, double*, const int*, double*,
             const int*, double*, const int*, int*, int*, std::size_t);
void cgesdd_(const char*, const int*, const int*, std::complex<float>*, const int*, float*, std::complex<float>*,
             const int*, std::complex<float>*, const int*, std::complex<float>*, const int*, float*, int*, int*,
             std::size_t);
void zgesdd_(const char*, const int*, const int*, std::complex<double>*, const int*, double*, std::complex<double>*,
             const int*, std::complex<double>*, const int*, std::complex<double>*, const int*, double*, int*, int*,
             std::size_t);
// QR
void sgeqrf_(const int*, const int*, float*, const int*, float*, float*, const int*, int*);
void dgeqrf_(const int*, const int*, double*, const int*, double*, double*, const int*, int*);
void cgeqrf_(const int*, const int*, std::complex<float>*, const int*, std::complex<float>*, std::complex<float>*,
             const int*, int*);
void zgeqrf_(const int*, const int*, std::complex<double>*, const int*, std::complex<double>*, std::complex<double>*,
             const int*, int*);
void sorgqr_(const int*, const int*, const int*, float*, const int*, const float*, float*, const int*, int*);
void dorgqr_(const int*, const int*, const int*, double*, const int*, const double*, double*, const int*, int*);
void cungqr_(const int*, const int*, const int*, std::complex<float>*, const int*, const std::complex<float>*,
             std::complex<float>*, const int*, int*);
void zungqr_(const int*, const int*, const int*, std::complex<double>*, const int*, const std::complex<double>*,
             std::complex<double>*, const int*, int*);
// general eigenproblems (complex)
void cgeev_(const char*, const char*, const int*, std::complex<float>*, const int*, std::complex<float>*,
            std::complex<float>*, const int*, std::complex<float>*, const int*, std::complex<float>*, const int*, float*,
            int*, std::size_t, std::size_t);
void zgeev_(const char*, const char*, const int*, std::complex<double>*, const int*, std::complex<double>*,
            std::complex<double>*, const int*, std::complex<double>*, const int*, std::complex<double>*, const int*,
            double*, int*, std::size_t, std::size_t);
}

namespace fusor {

namespace detail::host::lapack_detail {
/// A dimension as LAPACK's 32-bit integer (LP64), or a value_error naming it.
inline int dim(index_t v, const char* what) {
  if (v > index_t(2147483647))
    throw value_error(std::string("fusor: ") + what + " = " + std::to_string(v) +
                      " exceeds LAPACK's 32-bit integers (a matrix dimension below 2^31 is expected)");
  return int(v);
}
template <class T>
inline constexpr bool is_s = std::is_same_v<T, float>;
template <class T>
inline constexpr bool is_d = std::is_same_v<T, double>;
template <class T>
inline constexpr bool is_c = std::is_same_v<T, std::complex<float>>;
/// A workspace size LAPACK reported in a T (its real part, for complex workspaces).
/// (rounded up: LAPACKs before 3.10 could report a float size just below the one they need)
template <class T>
int lwork_of(const T& w) {
  if constexpr (is_complex_v<T>) return std::max(1, int(std::ceil(double(w.real()))));
  else return std::max(1, int(std::ceil(double(w))));
}
}  // namespace detail::host::lapack_detail

namespace detail::host {
/// The factorisations on host memory, one static member per lapack<B> entry (linalg/lapack_fwd.hpp):
/// lapack<cpu> is this, and the cuda backend's eig is one round trip through it.
struct lapack {
  static constexpr const char* name = "LAPACK";

  template <class T>
  static std::vector<int> lu(T* a, int* piv, index_t batch, index_t n) {
    const int N = host::lapack_detail::dim(n, "n");
    std::vector<int> info(std::size_t(batch), 0);
    for (index_t b = 0; b < batch; ++b) {
      T* m = a + b * n * n;
      int* p = piv + b * n;
      int& i = info[std::size_t(b)];
      if constexpr (host::lapack_detail::is_s<T>) sgetrf_(&N, &N, m, &N, p, &i);
      else if constexpr (host::lapack_detail::is_d<T>) dgetrf_(&N, &N, m, &N, p, &i);
      else if constexpr (host::lapack_detail::is_c<T>) cgetrf_(&N, &N, m, &N, p, &i);
      else zgetrf_(&N, &N, m, &N, p, &i);
    }
    return info;
  }

  template <class T>
  static std::vector<int> lu_solve(const T* lu_, const int* piv, T* rhs, index_t batch, index_t n, index_t nrhs) {
    const int N = host::lapack_detail::dim(n, "n"), R = host::lapack_detail::dim(nrhs, "the number of right-hand sides");
    const char t = 'T';  // M^T X = B, i.e. A X = B
    std::vector<int> info(std::size_t(batch), 0);
    for (index_t b = 0; b < batch; ++b) {
      const T* m = lu_ + b * n * n;
      const int* p = piv + b * n;
      T* x = rhs + b * n * nrhs;
      int& i = info[std::size_t(b)];
      if constexpr (host::lapack_detail::is_s<T>) sgetrs_(&t, &N, &R, m, &N, p, x, &N, &i, 1);
      else if constexpr (host::lapack_detail::is_d<T>) dgetrs_(&t, &N, &R, m, &N, p, x, &N, &i, 1);
      else if constexpr (host::lapack_detail::is_c<T>) cgetrs_(&t, &N, &R, m, &N, p, x, &N, &i, 1);
      else zgetrs_(&t, &N, &R, m, &N, p, x, &N, &i, 1);
    }
    return info;
  }

  template <class T>
  static std::vector<int> inverse(T* a, index_t batch, index_t n) {
    const int N = host::lapack_detail::dim(n, "n");
    std::vector<int> piv(std::size_t(std::max<index_t>(n, 1)));
    std::vector<int> info(std::size_t(batch), 0);
    std::vector<T> work(1);
    for (index_t b = 0; b < batch; ++b) {
      T* m = a + b * n * n;
      int& i = info[std::size_t(b)];
      if constexpr (host::lapack_detail::is_s<T>) sgetrf_(&N, &N, m, &N, piv.data(), &i);
      else if constexpr (host::lapack_detail::is_d<T>) dgetrf_(&N, &N, m, &N, piv.data(), &i);
      else if constexpr (host::lapack_detail::is_c<T>) cgetrf_(&N, &N, m, &N, piv.data(), &i);
      else zgetrf_(&N, &N, m, &N, piv.data(), &i);
      if (i != 0) continue;
      int lw = -1, q = 0;
      T size{};
      for (int pass = 0; pass < 2; ++pass) {  // a workspace query, then the inverse
        T* w = pass == 0 ? &size : work.data();
        if constexpr (host::lapack_detail::is_s<T>) sgetri_(&N, m, &N, piv.data(), w, &lw, &q);
        else if constexpr (host::lapack_detail::is_d<T>) dgetri_(&N, m, &N, piv.data(), w, &lw, &q);
        else if constexpr (host::lapack_detail::is_c<T>) cgetri_(&N, m, &N, piv.data(), w, &lw, &q);
        else zgetri_(&N, m, &N, piv.data(), w, &lw, &q);
        if (pass == 0) {
          lw = host::lapack_detail::lwork_of(size);
          if (work.size() < std::size_t(lw)) work.resize(std::size_t(lw));
        }
      }
      i = q;
    }
    return info;
  }

  template <class T>
  static std::vector<int> cholesky_upper(T* a, index_t batch, index_t n) {
    const int N = host::lapack_detail::dim(n, "n");
    const char u = 'U';
    std::vector<int> info(std::size_t(batch), 0);
    for (index_t b = 0; b < batch; ++b) {
      T* m = a + b * n * n;
      int& i = info[std::size_t(b)];
      if constexpr (host::lapack_detail::is_s<T>) spotrf_(&u, &N, m, &N, &i, 1);
      else if constexpr (host::lapack_detail::is_d<T>) dpotrf_(&u, &N, m, &N, &i, 1);
      else if constexpr (host::lapack_detail::is_c<T>) cpotrf_(&u, &N, m, &N, &i, 1);
      else zpotrf_(&u, &N, m, &N, &i, 1);
    }
    return info;
  }

  template <class T>
  static std::vector<int> eigh(T* a, real_t<T>* w, index_t batch, index_t n, bool vectors) {
    using R = real_t<T>;
    const int N = host::lapack_detail::dim(n, "n");
    const char job = vectors ? 'V' : 'N', u = 'U';
    std::vector<int> info(std::size_t(batch), 0);
    std::vector<T> work(1);
    std::vector<R> rwork(1);
    std::vector<int> iwork(1);
    for (index_t b = 0; b < batch; ++b) {
      T* m = a + b * n * n;
      R* ev = w + b * n;
      int& i = info[std::size_t(b)];
      int lw = -1, lr = -1, li = -1;
      T ws{};
      R rs{};
      int is = 0;
      for (int pass = 0; pass < 2; ++pass) {
        T* pw = pass == 0 ? &ws : work.data();
        R* pr = pass == 0 ? &rs : rwork.data();
        int* pi = pass == 0 ? &is : iwork.data();
        if constexpr (host::lapack_detail::is_s<T>) ssyevd_(&job, &u, &N, m, &N, ev, pw, &lw, pi, &li, &i, 1, 1);
        else if constexpr (host::lapack_detail::is_d<T>) dsyevd_(&job, &u, &N, m, &N, ev, pw, &lw, pi, &li, &i, 1, 1);
        else if constexpr (host::lapack_detail::is_c<T>) cheevd_(&job, &u, &N, m, &N, ev, pw, &lw, pr, &lr, pi, &li, &i, 1, 1);
        else zheevd_(&job, &u, &N, m, &N, ev, pw, &lw, pr, &lr, pi, &li, &i, 1, 1);
        if (pass == 0) {
          lw = host::lapack_detail::lwork_of(ws);
          lr = std::max(1, int(rs));
          li = std::max(1, is);
          if (work.size() < std::size_t(lw)) work.resize(std::size_t(lw));
          if (rwork.size() < std::size_t(lr)) rwork.resize(std::size_t(lr));
          if (iwork.size() < std::size_t(li)) iwork.resize(std::size_t(li));
        }
      }
    }
    return info;
  }

  template <class T>
  static std::vector<int> svd(T* a, real_t<T>* s, T* u, T* vt, index_t batch, index_t m, index_t n, char job) {
    using R = real_t<T>;
    const int M = host::lapack_detail::dim(m, "m"), N = host::lapack_detail::dim(n, "n");
    const index_t k = std::min(m, n);
    const index_t ucols = job == 'A' ? m : k, vrows = job == 'A' ? n : k;
    const int ldu = std::max(1, M), ldvt = std::max(1, int(vrows));
    std::vector<int> info(std::size_t(batch), 0);
    std::vector<T> work(1);
    std::vector<int> iwork(std::size_t(std::max<index_t>(8 * k, 1)));
    std::vector<R> rwork;
    if constexpr (is_complex_v<T>) {  // LAPACK's documented sizes (values only: 7 min(m, n))
      const std::size_t mx = std::size_t(std::max(m, n)), mn = std::size_t(k);
      rwork.resize(job == 'N' ? std::max<std::size_t>(7 * mn, 1)
                              : std::max<std::size_t>(mn * std::max(5 * mn + 7, 2 * mx + 2 * mn + 1), 1));
    }
    T dummy{};
    for (index_t b = 0; b < batch; ++b) {
      T* x = a + b * m * n;
      R* sv = s + b * k;
      T* pu = job == 'N' ? &dummy : u + b * m * ucols;
      T* pv = job == 'N' ? &dummy : vt + b * vrows * n;
      int& i = info[std::size_t(b)];
      int lw = -1;
      T ws{};
      for (int pass = 0; pass < 2; ++pass) {
        T* pw = pass == 0 ? &ws : work.data();
        if constexpr (host::lapack_detail::is_s<T>)
          sgesdd_(&job, &M, &N, x, &M, sv, pu, &ldu, pv, &ldvt, pw, &lw, iwork.data(), &i, 1);
        else if constexpr (host::lapack_detail::is_d<T>)
          dgesdd_(&job, &M, &N, x, &M, sv, pu, &ldu, pv, &ldvt, pw, &lw, iwork.data(), &i, 1);
        else if constexpr (host::lapack_detail::is_c<T>)
          cgesdd_(&job, &M, &N, x, &M, sv, pu, &ldu, pv, &ldvt, pw, &lw, rwork.data(), iwork.data(), &i, 1);
        else
          zgesdd_(&job, &M, &N, x, &M, sv, pu, &ldu, pv, &ldvt, pw, &lw, rwork.data(), iwork.data(), &i, 1);
        if (pass == 0) {
          lw = host::lapack_detail::lwork_of(ws);
          if (work.size() < std::size_t(lw)) work.resize(std::size_t(lw));
        }
      }
    }
    return info;
  }

  template <class T>
  static void qr(T* a, T* tau, index_t batch, index_t m, index_t n) {
    const int M = host::lapack_detail::dim(m, "m"), N = host::lapack_detail::dim(n, "n");
    const int lda = std::max(1, M);
    std::vector<T> work(1);
    for (index_t b = 0; b < batch; ++b) {
      T* x = a + b * m * n;
      T* t = tau + b * std::min(m, n);
      int lw = -1, i = 0;
      T ws{};
      for (int pass = 0; pass < 2; ++pass) {
        T* pw = pass == 0 ? &ws : work.data();
        if constexpr (host::lapack_detail::is_s<T>) sgeqrf_(&M, &N, x, &lda, t, pw, &lw, &i);
        else if constexpr (host::lapack_detail::is_d<T>) dgeqrf_(&M, &N, x, &lda, t, pw, &lw, &i);
        else if constexpr (host::lapack_detail::is_c<T>) cgeqrf_(&M, &N, x, &lda, t, pw, &lw, &i);
        else zgeqrf_(&M, &N, x, &lda, t, pw, &lw, &i);
        if (pass == 0) {
          lw = host::lapack_detail::lwork_of(ws);
          if (work.size() < std::size_t(lw)) work.resize(std::size_t(lw));
        }
      }
    }
  }

  template <class T>
  static void form_q(T* q, const T* tau, index_t batch, index_t m, index_t cols, index_t k) {
    const int M = host::lapack_detail::dim(m, "m"), C = host::lapack_detail::dim(cols, "the columns of Q"),
              K = host::lapack_detail::dim(k, "k");
    const int lda = std::max(1, M);
    std::vector<T> work(1);
    for (index_t b = 0; b < batch; ++b) {
      T* x = q + b * m * cols;
      const T* t = tau + b * k;
      int lw = -1, i = 0;
      T ws{};
      for (int pass = 0; pass < 2; ++pass) {
        T* pw = pass == 0 ? &ws : work.data();
        if constexpr (host::lapack_detail::is_s<T>) sorgqr_(&M, &C, &K, x, &lda, t, pw, &lw, &i);
        else if constexpr (host::lapack_detail::is_d<T>) dorgqr_(&M, &C, &K, x, &lda, t, pw, &lw, &i);
        else if constexpr (host::lapack_detail::is_c<T>) cungqr_(&M, &C, &K, x, &lda, t, pw, &lw, &i);
        else zungqr_(&M, &C, &K, x, &lda, t, pw, &lw, &i);
        if (pass == 0) {
          lw = host::lapack_detail::lwork_of(ws);
          if (work.size() < std::size_t(lw)) work.resize(std::size_t(lw));
        }
      }
    }
  }

  template <class T>
  static std::vector<int> eig(T* a, T* w, T* vl, index_t batch, index_t n, bool vectors) {
    static_assert(is_complex_v<T>, "fusor: lapack::eig takes complex matrices (the front end converts real ones)");
    using R = real_t<T>;
    const int N = host::lapack_detail::dim(n, "n");
    const char jl = vectors ? 'V' : 'N', jr = 'N';
    const int ldv = std::max(1, N), one = 1;
    std::vector<int> info(std::size_t(batch), 0);
    std::vector<T> work(1);
    std::vector<R> rwork(std::size_t(std::max<index_t>(2 * n, 1)));
    T dummy{};
    for (index_t b = 0; b < batch; ++b) {
      T* x = a + b * n * n;
      T* ev = w + b * n;
      T* pl = vectors ? vl + b * n * n : &dummy;
      int& i = info[std::size_t(b)];
      int lw = -1;
      T ws{};
      for (int pass = 0; pass < 2; ++pass) {
        T* pw = pass == 0 ? &ws : work.data();
        if constexpr (std::is_same_v<T, std::complex<float>>)
          cgeev_(&jl, &jr, &N, x, &ldv, ev, pl, &ldv, &dummy, &one, pw, &lw, rwork.data(), &i, 1, 1);
        else
          zgeev_(&jl, &jr, &N, x, &ldv, ev, pl, &ldv, &dummy, &one, pw, &lw, rwork.data(), &i, 1, 1);
        if (pass == 0) {
          lw = host::lapack_detail::lwork_of(ws);
          if (work.size() < std::size_t(lw)) work.resize(std::size_t(lw));
        }
      }
    }
    return info;
  }
};
}  // namespace detail::host

}  // namespace fusor
