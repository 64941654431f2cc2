#pragma once
// lapack<B>: the dense factorisations the decompositions front end (linalg/decompositions.hpp)
// calls, one specialisation per backend (LAPACK in backend/host/lapack.hpp for cpu, cuSOLVER in
// backend/cuda/solver.cuh). Declared only here, so the front end never names a LAPACK header.
//
// Every operation works on `batch` matrices stored one after another in the backend's memory, for
// T in float, double, complex<float>, complex<double>. LAPACK is column-major and fusor is
// row-major: a row-major n x n buffer holding A is, to LAPACK, the column-major M = A^T. The
// kernels work on M as it lies (no transposing copies) and the front end reads the results
// accordingly (det M = det A; inv M = (inv A)^T is inv A read row-major; the factor of M^T's
// Cholesky is A's; ...). Each returns one LAPACK `info` per matrix (0: success; > 0: singular, not
// positive definite or not converged), on the host.
//
//   static std::vector<int> lu(T* a, int* piv, index_t batch, index_t n);
//       getrf of each M in place (pivots 1-based, n per matrix).
//   static std::vector<int> lu_solve(const T* lu, const int* piv, T* b, index_t batch, index_t n, index_t nrhs);
//       solves M^T X = B (B column-major n x nrhs per matrix, overwritten by X): A X = B.
//   static std::vector<int> inverse(T* a, index_t batch, index_t n);
//       M^-1 in place ((A^-1)^T column-major: A^-1 row-major).
//   static std::vector<int> cholesky_upper(T* a, index_t batch, index_t n);
//       potrf('U') of M: its upper triangle (column-major) is A's lower Cholesky factor row-major;
//       the other triangle is left as it was.
//   static std::vector<int> eigh(T* a, real_t<T>* w, index_t batch, index_t n, bool vectors);
//       syevd/heevd('U') of M (A's lower triangle): w ascending; with vectors, M's eigenvectors
//       as the columns of the column-major buffer (A's are their conjugates).
//   static std::vector<int> svd(T* a, real_t<T>* s, T* u, T* vt, index_t batch, index_t m, index_t n, char job);
//       gesdd-like SVD of the column-major m x n matrix at a (destroyed): job 'A' (u m x m, vt
//       n x n), 'S' (u m x k, vt k x n, k = min(m, n)) or 'N' (values only); column-major outputs.
//   static void qr(T* a, T* tau, index_t batch, index_t m, index_t n);
//       geqrf of the column-major m x n matrices at a (R above the diagonal, reflectors below).
//   static void form_q(T* q, const T* tau, index_t batch, index_t m, index_t cols, index_t k);
//       orgqr/ungqr: the first `cols` columns of Q from k reflectors (q column-major m x cols).
//   static std::vector<int> eig(T* a, T* w, T* vl, index_t batch, index_t n, bool vectors);
//       geev of each M for complex T only: eigenvalues w, and with vectors M's left eigenvectors
//       as the columns of vl (column-major; A's right eigenvectors are their conjugates).
#include <vector>

#include "../core/backend.hpp"
#include "../core/dtype.hpp"

namespace fusor {

template <class B>
struct lapack;

/// A backend with the dense factorisations in this translation unit.
template <class B>
concept lapack_backend = requires { sizeof(lapack<B>); };

}  // namespace fusor
