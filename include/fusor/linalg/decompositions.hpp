#pragma once
// numpy.linalg's decompositions and solvers, in fusor::linalg: inv, solve, det, slogdet, svd,
// svdvals, eig, eigvals, eigh, eigvalsh, qr, cholesky, lstsq, pinv, matrix_rank, matrix_power.
// Every one takes a stack of matrices (the last two axes; leading axes are a batch) and returns
// arrays on the input's backend. Integers and bool are computed in float64, as NumPy does; float,
// double and the complex types in their own precision.
//
// The factorisations are the backend's lapack<B> (LAPACK on cpu, cuSOLVER on cuda). fusor is
// row-major and LAPACK column-major, so a row-major buffer holding A is, to LAPACK, M = A^T; each
// function below says how it reads M's factorisation as A's (for most, with no transposing copy).
// A matrix the factorisation cannot take (singular, not positive definite, not converged) raises
// linalg_error naming its index in the batch.
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "../core/construct.hpp"
#include "../core/error.hpp"
#include "../core/reduce.hpp"
#include "lapack_fwd.hpp"
#include "matmul.hpp"

namespace fusor::linalg {

namespace detail {
using fusor::detail::to_node;
/// The type a decomposition computes in: float, double and complex stay; integers and bool go to
/// double (NumPy).
template <class V>
using lapack_t = std::conditional_t<std::is_floating_point_v<V> || is_complex_v<V>, V, double>;

/// A contiguous copy of a stack of matrices in the computation type, with its batch shape.
template <class T, class B>
struct matrices {
  array<T, B> data;
  extents batch_shape;
  index_t batch = 1, rows = 0, cols = 0;
};
template <class E>
auto matrices_of(const E& e, const char* what, bool square) {
  const auto node = to_node(e);
  using V = value_t<decltype(node)>;
  using T = lapack_t<V>;
  using B = backend_of_t<decltype(node)>;
  const extents s = expr_shape(node);
  if (s.size() < 2)
    throw shape_error(std::string("fusor: linalg::") + what + " needs a matrix or a stack of matrices (rank >= 2), got shape " +
                      to_string(s));
  matrices<T, B> m;
  m.rows = s[s.size() - 2];
  m.cols = s[s.size() - 1];
  if (square && m.rows != m.cols)
    throw shape_error(std::string("fusor: linalg::") + what + " needs square matrices in the last two axes, got shape " +
                      to_string(s));
  for (int k = 0; k + 2 < s.size(); ++k) m.batch_shape.push_back(s[k]);
  m.batch = m.batch_shape.numel();
  m.data = cast<T>(node);
  return m;
}
// (not an initializer_list: nvcc's host pass mangles braced lists passed as arguments here)
inline extents with_tail(const extents& batch, index_t a) {
  extents s = batch;
  s.push_back(a);
  return s;
}
inline extents with_tail(const extents& batch, index_t a, index_t b) {
  extents s = with_tail(batch, a);
  s.push_back(b);
  return s;
}
/// Throws linalg_error for the first matrix whose LAPACK info is not 0.
inline void check_info(const std::vector<int>& info, const char* what, const char* positive_means) {
  for (std::size_t b = 0; b < info.size(); ++b) {
    if (info[b] > 0)
      throw linalg_error(std::string("fusor: linalg::") + what + ": matrix " + std::to_string(b) + " of the batch " +
                             positive_means + " (LAPACK info " + std::to_string(info[b]) + ")",
                         static_cast<long long>(b));
    if (info[b] < 0)
      throw linalg_error(std::string("fusor: linalg::") + what + ": LAPACK rejected argument " + std::to_string(-info[b]) +
                             " for matrix " + std::to_string(b) + " of the batch (a fusor bug; please report it)",
                         static_cast<long long>(b));
  }
}
/// The matrices transposed (the last two axes swapped) into a new contiguous array: the
/// column-major copy LAPACK needs where M = A^T will not do (QR, least squares).
template <class T, class B>
array<T, B> swap_last(const array<T, B>& a) {
  return array<T, B>(swapaxes(a.view(), -1, -2));
}
/// Identity matrices of the batch's shape.
template <class T, class B>
array<T, B> identities(const extents& batch_shape, index_t n) {
  array<T, B> out(with_tail(batch_shape, n, n));
  out = broadcast_to(lazy::eye<T, B>(n), out.shape());
  return out;
}
}  // namespace detail

/// np.linalg.inv: the inverse of each matrix of the stack (getrf + getri on M = A^T give
/// (A^-1)^T column-major, which is A^-1 row-major). Singular: linalg_error.
template <expression E>
auto inv(const E& a) {
  auto m = detail::matrices_of(a, "inv", true);
  using T = value_t<decltype(m.data)>;
  using B = backend_of_t<decltype(m.data)>;
  if (m.data.size() > 0) detail::check_info(lapack<B>::template inverse<T>(m.data.data(), m.batch, m.rows), "inv", "is singular");
  return std::move(m.data);
}

/// np.linalg.solve: x with a x = b for each matrix; b is a vector (n) or a stack of matrices
/// (..., n, k) whose batch axes broadcast against a's. Singular: linalg_error.
template <expression E, expression R>
auto solve(const E& a, const R& b) {
  auto m = detail::matrices_of(a, "solve", true);
  using T = value_t<decltype(m.data)>;
  using B = backend_of_t<decltype(m.data)>;
  using TB = detail::lapack_t<value_t<node_t<R>>>;
  using C = promote_t<T, TB>;
  const auto bn = detail::to_node(b);
  const extents sb = expr_shape(bn);
  const index_t n = m.rows;
  const bool vector_rhs = sb.size() == 1;
  if (sb.size() == 0 || sb[vector_rhs ? 0 : sb.size() - 2] != n)
    throw shape_error("fusor: linalg::solve needs b of shape (" + std::to_string(n) + ") or (..., " + std::to_string(n) +
                      ", k) for a of shape " + to_string(detail::with_tail(m.batch_shape, m.rows, m.cols)) + ", got " + to_string(sb));
  // the common batch: a's and b's batch axes broadcast
  extents bb;
  if (!vector_rhs)
    for (int k = 0; k + 2 < sb.size(); ++k) bb.push_back(sb[k]);
  const extents batch = broadcast_shapes(m.batch_shape, bb);
  const index_t nb = batch.numel(), k = vector_rhs ? 1 : sb[sb.size() - 1];
  // LAPACK factorises in place: a's copy (made by matrices_of) is used as it is unless the batch
  // broadcasts or b's type widens it
  array<C, B> lu;
  if (batch == m.batch_shape && std::is_same_v<C, T>) {
    lu = std::move(m.data);
  } else {
    lu = array<C, B>(detail::with_tail(batch, n, n));
    lu.view() = cast<C>(broadcast_to(m.data.view(), lu.shape()));
  }
  // the right-hand sides column-major (n x k per matrix): b's last two axes swapped, one pass
  array<C, B> x(detail::with_tail(batch, k, n));
  fusor::detail::with_input(b, [&](const auto& v) {
    if (vector_rhs) x.view() = cast<C>(broadcast_to(reshape(v, extents{1, n}), x.shape()));
    else x.view() = cast<C>(broadcast_to(swapaxes(v, -1, -2), x.shape()));
    return 0;
  });
  if (n > 0 && nb > 0) {
    array<int, B> piv(extents{nb, n});
    detail::check_info(lapack<B>::template lu<C>(lu.data(), piv.data(), nb, n), "solve", "is singular");
    detail::check_info(lapack<B>::template lu_solve<C>(lu.data(), piv.data(), x.data(), nb, n, k), "solve", "is singular");
  }
  if (vector_rhs) return std::move(x).reshape(detail::with_tail(batch, n));
  if (k == 1) return std::move(x).reshape(detail::with_tail(batch, n, 1));  // (1, n) and (n, 1): one layout
  return array<C, B>(swapaxes(x.view(), -1, -2));
}

/// solve on an explicit context (a context<B>, or on(stream) on cuda).
template <execution_context X, expression E, expression R>
auto solve(const X& exec, const E& a, const R& b) {
  return with_context<backend_of_t<node_t<E>>>(exec, [&] { return solve(a, b); });
}

/// The result of slogdet: sign (a unit complex number for complex input; 0 for a singular
/// matrix) and log|det| (-inf for a singular matrix), each of the batch's shape.
template <class T, class B>
struct slogdet_result {
  array<T, B> sign;
  array<real_t<T>, B> logabsdet;
};

namespace detail {
/// U's diagonal of each matrix's LU factorisation and the permutation's parity (+1 / -1).
template <class T, class B>
void lu_diagonal(matrices<T, B>& m, array<T, B>& diag, array<T, B>& parity) {
  const index_t n = m.rows;
  diag = array<T, B>(with_tail(m.batch_shape, n));
  parity = array<T, B>(m.batch_shape);
  if (m.batch == 0) return;
  if (n == 0) {
    parity = T(1);
    return;
  }
  array<int, B> piv(extents{m.batch, n});
  (void)lapack<B>::template lu<T>(m.data.data(), piv.data(), m.batch, n);  // singular: a zero on U's diagonal
  diag = diagonal(reshape(m.data.view(), with_tail(m.batch_shape, n, n)), 0, -2, -1);
  // each pivot that is not its own row is one swap: parity (-1)^swaps
  const auto steps = lazy::coordinates<int, B>(extents{m.batch, n}, 1) + 1;
  const auto swaps = sum(cast<std::int64_t>(piv != steps), 1);
  parity = reshape(where(swaps % std::int64_t(2) == std::int64_t(0), T(1), T(-1)), m.batch_shape);
}
}  // namespace detail

/// np.linalg.det: each matrix's determinant, from its LU factorisation (det M = det A): an array
/// of the batch's shape (0-d for one matrix; .item() reads it). 0 for a singular matrix.
template <expression E>
auto det(const E& a) {
  auto m = detail::matrices_of(a, "det", true);
  using T = value_t<decltype(m.data)>;
  using B = backend_of_t<decltype(m.data)>;
  array<T, B> diag, parity;
  detail::lu_diagonal(m, diag, parity);
  if (m.rows == 0) return parity;  // det of a 0 x 0 matrix is 1
  array<T, B> out = prod(diag, -1);
  out = out * parity;
  return out;
}
/// np.linalg.slogdet: sign and log|det| of each matrix (no overflow for large ones).
template <expression E>
auto slogdet(const E& a) {
  auto m = detail::matrices_of(a, "slogdet", true);
  using T = value_t<decltype(m.data)>;
  using B = backend_of_t<decltype(m.data)>;
  using R = real_t<T>;
  array<T, B> diag, parity;
  detail::lu_diagonal(m, diag, parity);
  slogdet_result<T, B> r{array<T, B>(m.batch_shape), array<R, B>(m.batch_shape)};
  if (m.rows == 0) {
    r.sign = T(1);
    r.logabsdet = R(0);
    return r;
  }
  r.logabsdet = sum(log(abs(diag)), -1);
  if constexpr (is_complex_v<T>) {
    array<T, B> phase = prod(diag / cast<T>(abs(diag)), -1);  // a singular matrix: NaN, replaced below
    r.sign = where(isinf(r.logabsdet), T(0), phase * parity);
  } else {
    r.sign = where(isinf(r.logabsdet), T(0), prod(sign(diag), -1) * parity);
  }
  return r;
}

/// The result of svd: A = u diag(s) vh for each matrix; s descending, real.
template <class T, class B>
struct svd_result {
  array<T, B> u;
  array<real_t<T>, B> s;
  array<T, B> vh;
};

/// np.linalg.svd(a, full_matrices): u (m x m, or m x k when reduced), s (k = min(m, n)), vh (n x n
/// or k x n). Divide and conquer (gesdd) of M = A^T = V S U^T: its left factor read row-major is
/// vh, its right one is u, with no transposing copies.
template <expression E>
auto svd(const E& a, bool full_matrices = true) {
  auto m = detail::matrices_of(a, "svd", false);
  using T = value_t<decltype(m.data)>;
  using B = backend_of_t<decltype(m.data)>;
  const index_t r = m.rows, c = m.cols, k = std::min(r, c);
  const index_t ucols = full_matrices ? r : k, vrows = full_matrices ? c : k;
  svd_result<T, B> out{array<T, B>(detail::with_tail(m.batch_shape, r, ucols)),
                       array<real_t<T>, B>(detail::with_tail(m.batch_shape, k)),
                       array<T, B>(detail::with_tail(m.batch_shape, vrows, c))};
  if (m.batch == 0) return out;
  if (k == 0) {  // no singular values: u and vh are identities (full) or empty
    if (full_matrices) {
      out.u = detail::identities<T, B>(m.batch_shape, r);
      out.vh = detail::identities<T, B>(m.batch_shape, c);
    }
    return out;
  }
  // M is c x r column-major: LAPACK's u (c x vrows) is vh, its vt (ucols x r) is u
  detail::check_info(lapack<B>::template svd<T>(m.data.data(), out.s.data(), out.vh.data(), out.u.data(), m.batch, c, r,
                                                 full_matrices ? 'A' : 'S'),
                     "svd", "did not converge");
  return out;
}
/// np.linalg.svdvals: the singular values alone, descending (shape (..., min(m, n))).
template <expression E>
auto svdvals(const E& a) {
  auto m = detail::matrices_of(a, "svdvals", false);
  using T = value_t<decltype(m.data)>;
  using B = backend_of_t<decltype(m.data)>;
  const index_t k = std::min(m.rows, m.cols);
  array<real_t<T>, B> s(detail::with_tail(m.batch_shape, k));
  if (m.batch > 0 && k > 0)
    detail::check_info(lapack<B>::template svd<T>(m.data.data(), s.data(), static_cast<T*>(nullptr),
                                                  static_cast<T*>(nullptr), m.batch, m.cols, m.rows, 'N'),
                       "svdvals", "did not converge");
  return s;
}

/// The result of eigh and eig: eigenvalues and the eigenvectors as the columns of a matrix.
template <class W, class T, class B>
struct eig_result {
  array<W, B> eigenvalues;
  array<T, B> eigenvectors;
};

namespace detail {
/// eigh and eigvalsh: syevd/heevd of each M = conj(A) (A's lower triangle, NumPy's UPLO="L"): the
/// same eigenvalues, eigenvectors conjugated; with `vectors`, A's as the columns of a matrix.
template <expression E>
auto hermitian_eigen(const E& a, const char* fn, bool vectors) {
  auto m = matrices_of(a, fn, true);
  using T = value_t<decltype(m.data)>;
  using B = backend_of_t<decltype(m.data)>;
  const index_t n = m.rows;
  eig_result<real_t<T>, T, B> out{array<real_t<T>, B>(with_tail(m.batch_shape, n)), array<T, B>()};
  if (m.batch > 0 && n > 0)
    check_info(lapack<B>::template eigh<T>(m.data.data(), out.eigenvalues.data(), m.batch, n, vectors), fn,
               "did not converge");
  if (!vectors) return out;
  if (m.batch == 0 || n == 0) out.eigenvectors = array<T, B>(with_tail(m.batch_shape, n, n));
  // the buffer holds M's eigenvectors as columns, column-major: read row-major they are rows
  else if constexpr (is_complex_v<T>) out.eigenvectors = conj(swapaxes(m.data.view(), -1, -2));
  else out.eigenvectors = swapaxes(m.data.view(), -1, -2);
  return out;
}
/// eig and eigvals: geev of each M = A^T, in complex arithmetic: A's right eigenvectors are the
/// conjugates of M's left ones, normalised the same way (unit norm, largest component real).
template <expression E>
auto general_eigen(const E& a, const char* fn, bool vectors) {
  auto m = matrices_of(a, fn, true);
  using T = value_t<decltype(m.data)>;
  using B = backend_of_t<decltype(m.data)>;
  using C = std::conditional_t<is_complex_v<T>, T, std::complex<T>>;
  const index_t n = m.rows;
  eig_result<C, C, B> out{array<C, B>(with_tail(m.batch_shape, n)), array<C, B>()};
  if (vectors) out.eigenvectors = array<C, B>(with_tail(m.batch_shape, n, n));
  if (m.batch == 0 || n == 0) return out;
  array<C, B> z = cast<C>(m.data.view());
  array<C, B> vl(vectors ? out.eigenvectors.shape() : extents{0});
  check_info(lapack<B>::template eig<C>(z.data(), out.eigenvalues.data(), vectors ? vl.data() : static_cast<C*>(nullptr),
                                        m.batch, n, vectors),
             fn, "did not converge");
  if (vectors) out.eigenvectors = conj(swapaxes(vl.view(), -1, -2));
  return out;
}
}  // namespace detail

/// np.linalg.eigh: eigenvalues (ascending, real) and orthonormal eigenvectors (columns) of
/// symmetric / Hermitian matrices, reading the lower triangle (NumPy's UPLO="L").
template <expression E>
auto eigh(const E& a) {
  return detail::hermitian_eigen(a, "eigh", true);
}
/// np.linalg.eigvalsh: the eigenvalues alone.
template <expression E>
auto eigvalsh(const E& a) {
  return detail::hermitian_eigen(a, "eigvalsh", false).eigenvalues;
}

/// np.linalg.eig: eigenvalues and right eigenvectors (unit columns) of general matrices, always
/// complex (NumPy returns real arrays when every eigenvalue happens to be real; a type cannot
/// depend on the values here).
template <expression E>
auto eig(const E& a) {
  return detail::general_eigen(a, "eig", true);
}
/// np.linalg.eigvals: the eigenvalues alone (complex).
template <expression E>
auto eigvals(const E& a) {
  return detail::general_eigen(a, "eigvals", false).eigenvalues;
}

/// np.linalg.cholesky: the lower-triangular L with A = L L^H for Hermitian positive-definite
/// matrices (the lower triangle is read). potrf('U') of M = A^T leaves, in M's upper triangle,
/// exactly L row-major; the rest is zeroed. Not positive definite: linalg_error.
template <expression E>
auto cholesky(const E& a) {
  auto m = detail::matrices_of(a, "cholesky", true);
  using T = value_t<decltype(m.data)>;
  using B = backend_of_t<decltype(m.data)>;
  if (m.batch == 0 || m.rows == 0) return std::move(m.data);
  detail::check_info(lapack<B>::template cholesky_upper<T>(m.data.data(), m.batch, m.rows), "cholesky",
                     "is not positive definite");
  return tril(m.data);
}

/// qr's modes: reduced (q m x k, r k x n), complete (q m x m, r m x n), r (r alone, k x n).
enum class qr_mode { reduced, complete, r };
/// The result of qr: A = q r, q with orthonormal columns, r upper triangular.
template <class T, class B>
struct qr_result {
  array<T, B> q;
  array<T, B> r;
};
/// np.linalg.qr(a, mode): Householder QR (geqrf, then orgqr/ungqr for q) of each matrix, on a
/// column-major copy (A itself, not A^T, is factorised).
template <expression E>
auto qr(const E& a, qr_mode mode = qr_mode::reduced) {
  auto m = detail::matrices_of(a, "qr", false);
  using T = value_t<decltype(m.data)>;
  using B = backend_of_t<decltype(m.data)>;
  const index_t r = m.rows, c = m.cols, k = std::min(r, c);
  const index_t qcols = mode == qr_mode::complete ? r : k, rrows = mode == qr_mode::complete ? r : k;
  qr_result<T, B> out{array<T, B>(detail::with_tail(m.batch_shape, r, mode == qr_mode::r ? 0 : qcols)),
                      array<T, B>(detail::with_tail(m.batch_shape, rrows, c))};
  if (m.batch == 0) return out;
  if (k == 0) {
    out.r = T(0);
    if (mode != qr_mode::r) {
      const auto eye_r = detail::identities<T, B>(m.batch_shape, r);
      out.q = eye_r(fusor::ellipsis, fusor::all, range(0, qcols));
    }
    return out;
  }
  array<T, B> cm = detail::swap_last(m.data);  // (batch, c, r) row-major: each matrix column-major
  array<T, B> tau(extents{m.batch, k});
  lapack<B>::template qr<T>(cm.data(), tau.data(), m.batch, r, c);
  // r: the upper triangle of the first rrows rows, read back row-major
  const auto a_rm = swapaxes(reshape(cm.view(), detail::with_tail(m.batch_shape, c, r)), -1, -2);
  out.r = triu(array<T, B>(a_rm(fusor::ellipsis, range(0, rrows), fusor::all)));
  if (mode == qr_mode::r) return out;
  // q: the reflectors in the first k columns of an m x qcols column-major buffer
  array<T, B> qb = zeros<T, B>(detail::with_tail(m.batch_shape, qcols, r));
  const auto reflectors = reshape(cm.view(), detail::with_tail(m.batch_shape, c, r));
  qb(fusor::ellipsis, range(0, k), fusor::all) = reflectors(fusor::ellipsis, range(0, k), fusor::all);
  lapack<B>::template form_q<T>(qb.data(), tau.data(), m.batch, r, qcols, k);
  out.q = swapaxes(qb.view(), -1, -2);
  return out;
}

/// The result of lstsq: the solution, the residual sums of squares (one per column of b, empty
/// unless the system is over-determined with full rank, as NumPy), the rank and the singular
/// values of a.
template <class T, class B>
struct lstsq_result {
  array<T, B> x;
  array<real_t<T>, B> residuals;
  std::int64_t rank;
  array<real_t<T>, B> s;
};
/// np.linalg.lstsq(a, b, rcond): the minimum-norm least-squares solution of a x = b for one
/// matrix a (m x n) and b of shape (m) or (m, k), by the SVD: singular values below rcond times the
/// largest count as zero (rcond < 0, the default: machine epsilon times max(m, n), NumPy's).
template <expression E, expression R>
auto lstsq(const E& a, const R& b, double rcond = -1) {
  using T = detail::lapack_t<promote_t<value_t<node_t<E>>, value_t<node_t<R>>>>;
  using B = backend_of_t<node_t<E>>;
  using W = real_t<T>;
  const array<T, B> A = cast<T>(detail::to_node(a));
  const array<T, B> rhs = cast<T>(detail::to_node(b));
  if (A.ndim() != 2)
    throw shape_error("fusor: linalg::lstsq needs a 2-d matrix a (NumPy's lstsq takes no batch), got shape " +
                      to_string(A.shape()));
  const index_t m = A.shape()[0], n = A.shape()[1];
  if (!(rhs.ndim() == 1 || rhs.ndim() == 2) || rhs.shape()[0] != m)
    throw shape_error("fusor: linalg::lstsq needs b of shape (" + std::to_string(m) + ") or (" + std::to_string(m) +
                      ", k) for a of shape " + to_string(A.shape()) + ", got " + to_string(rhs.shape()));
  const bool vec = rhs.ndim() == 1;
  const index_t k = vec ? 1 : rhs.shape()[1];
  const auto f = svd(A, false);
  const index_t p = std::min(m, n);
  if (rcond < 0) rcond = double(std::numeric_limits<W>::epsilon()) * double(std::max(m, n));
  std::int64_t rank = 0;
  array<W, B> inv_s(extents{p});
  if (p > 0) {
    const W smax = max(f.s);
    inv_s = where(f.s > W(rcond) * smax, W(1) / f.s, W(0));
    rank = sum(cast<std::int64_t>(f.s > W(rcond) * smax));
  }
  // x = V diag(1/s) U^H b
  const array<T, B> b2(reshape(rhs.view(), extents{m, k}));
  array<T, B> uhb = matmul(conj(transpose(f.u)), b2);                 // (p, k)
  uhb = uhb * reshape(cast<T>(inv_s), extents{p, 1});
  array<T, B> x = matmul(conj(transpose(f.vh)), uhb);                 // (n, k)
  lstsq_result<T, B> out{std::move(x), array<W, B>(extents{0}), rank, f.s.copy()};
  if (rank == n && m > n) {
    const array<T, B> res = matmul(A, out.x) - b2;
    out.residuals = sum(square(abs(res)), 0);
  }
  if (vec) {
    out.x = reshape(std::move(out.x), extents{n});
  }
  return out;
}

/// np.linalg.pinv(a, rcond): the Moore-Penrose pseudo-inverse of each matrix, V diag(1/s) U^H with
/// singular values at most rcond times the largest set to zero. The default (rcond < 0) is
/// max(m, n) times the type's epsilon, NumPy's rtol=None: NumPy's own default, 1e-15, lies below
/// float32's precision, so a rank-deficient float32 or complex64 matrix kept singular values that
/// are rounding noise (about 1e-8 of the largest) and gave entries of 1e6 and more, as NumPy does.
/// For float64 the two agree within a factor max(m, n) / 4.5.
template <expression E>
auto pinv(const E& a, double rcond = -1) {
  const auto f = svd(a, false);
  using T = value_t<decltype(f.u)>;
  using W = real_t<T>;
  const index_t k = f.s.shape()[f.s.ndim() - 1];
  auto s = f.s.copy();
  if (rcond < 0) {
    const extents& us = f.u.shape();
    const extents& vs = f.vh.shape();
    rcond = double(std::numeric_limits<W>::epsilon()) * double(std::max(us[us.size() - 2], vs[vs.size() - 1]));
  }
  if (k > 0) {
    const auto smax = max(f.s, -1, true);
    s = where(f.s > W(rcond) * smax, W(1) / f.s, W(0));
  }
  // pinv = vh^H diag(1/s) u^H: scale vh's rows, then one batched product
  const auto inv_s = expand_dims(cast<T>(s), -2);
  const array<T, backend_of_t<decltype(f.u)>> vs = conj(swapaxes(f.vh.view(), -1, -2)) * inv_s;
  return matmul(vs, conj(swapaxes(f.u.view(), -1, -2)));
}

/// np.linalg.matrix_rank: the number of singular values above tol (default: the largest times
/// max(m, n) times machine epsilon, NumPy's), per matrix: int64 of the batch's shape.
template <expression E>
auto matrix_rank(const E& a, double tol = -1) {
  const auto s = svdvals(a);
  using W = value_t<decltype(s)>;
  using B = backend_of_t<decltype(s)>;
  const auto sa = expr_shape(detail::to_node(a));
  const index_t k = s.shape()[s.ndim() - 1];
  extents bs = s.shape();
  bs.resize(bs.size() - 1);
  array<std::int64_t, B> rank = zeros<std::int64_t, B>(bs);
  if (k == 0) return rank;
  const W scale = tol < 0 ? std::numeric_limits<W>::epsilon() * W(std::max(sa[sa.size() - 1], sa[sa.size() - 2])) : W(0);
  if (tol < 0) rank = sum(cast<std::int64_t>(s > expand_dims(max(s, -1), -1) * scale), -1);
  else rank = sum(cast<std::int64_t>(s > W(tol)), -1);
  return rank;
}

/// np.linalg.matrix_power: a^n by repeated squaring (n < 0: the inverse's power; n = 0: identities).
template <expression E>
auto matrix_power(const E& a, long long n) {
  const auto node = detail::to_node(a);
  using V = value_t<decltype(node)>;
  using B = backend_of_t<decltype(node)>;
  const extents s = expr_shape(node);
  if (s.size() < 2 || s[s.size() - 1] != s[s.size() - 2])
    throw shape_error("fusor: linalg::matrix_power needs square matrices in the last two axes, got shape " + to_string(s));
  extents batch = s;
  batch.resize(batch.size() - 2);
  const index_t m = s[s.size() - 1];
  using T = V;
  array<T, B> result = detail::identities<T, B>(batch, m);
  if (n == 0) return result;
  array<T, B> base;
  if (n < 0) {
    if constexpr (std::is_integral_v<V>)
      throw value_error("fusor: linalg::matrix_power of an integer matrix to a negative power is its float64 inverse's "
                        "power (NumPy returns that), but here the result has the matrix's integer type, fixed when "
                        "the call compiles; call matrix_power(cast<double>(a), " + std::to_string(n) + ")");
    else base = inv(node);
    n = -n;
  } else {
    base = node;
  }
  bool first = true;
  for (long long e = n; e > 0; e >>= 1) {
    if (e & 1) {
      if (first) result = base.copy(), first = false;
      else result = matmul(result, base);
    }
    if (e > 1) base = matmul(base, base);
  }
  return result;
}

}  // namespace fusor::linalg
