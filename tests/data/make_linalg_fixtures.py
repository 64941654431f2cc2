#!/usr/bin/env python3
"""Writes the .npy fixtures that tests/test_decompositions.cpp compares fusor::linalg with:
numpy.linalg's own results on small inputs written beside them.

Usage (from the repository root; needs NumPy, the fixtures are checked in because CI has none):

    python3 tests/data/make_linalg_fixtures.py [output_dir]   # default: tests/data/linalg

The files were made with NumPy 2.4.6 (OpenBLAS's LAPACK). Inputs (random normal, seed 30):

  in_a.npy       float64 (4, 4) + 3 I     in_b.npy     float64 (4, 2)
  in_batch.npy   float64 (3, 3, 3)        in_rect.npy  float64 (6, 4)
  in_spd.npy     float64 (4, 4): X X^T + 4 I
  in_c.npy       complex128 (3, 3)        in_h.npy     complex128 (3, 3): Z Z^H + 3 I
  in_deficient.npy float64 (5, 4) of rank 2

Results: inv_a, solve_ab, det_batch, slogdet_batch_sign, slogdet_batch_log, svdvals_rect, svdvals_c,
eigvalsh_spd, eigvalsh_h, eigvals_c (sorted by real part, then imaginary), eigvals_a (same),
cholesky_spd, cholesky_h, qr_r_rect (|R|: the signs of Householder rows are LAPACK's choice),
lstsq_x, lstsq_residuals, lstsq_rank, lstsq_s (of in_rect with in_b's first column extended to 6
rows: in_rhs.npy), pinv_deficient, matrix_rank_deficient, matrix_power_a_m2, norm2_rect,
nuc_rect, inv_c; cov_rect (np.cov(in_rect, rowvar=False)), cov_rect_bias (ddof=0),
corrcoef_rect (rowvar=False), cov_xy and corrcoef_xy (in_rhs against its squares plus in_rhs),
cov_c and corrcoef_c (in_c's rows as variables).
"""
import os
import sys

import numpy as np

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "linalg")
os.makedirs(out, exist_ok=True)


def save(name, a):
    a = np.asarray(a)
    np.save(os.path.join(out, name + ".npy"), a if a.ndim == 0 else np.ascontiguousarray(a))  # (which makes 0-d 1-d)


g = np.random.default_rng(30)
a = g.normal(size=(4, 4)) + 3 * np.eye(4)
b = g.normal(size=(4, 2))
batch = g.normal(size=(3, 3, 3))
rect = g.normal(size=(6, 4))
x = g.normal(size=(4, 4))
spd = x @ x.T + 4 * np.eye(4)
c = g.normal(size=(3, 3)) + 1j * g.normal(size=(3, 3))
z = g.normal(size=(3, 3)) + 1j * g.normal(size=(3, 3))
h = z @ z.conj().T + 3 * np.eye(3)
deficient = np.outer(g.normal(size=5), g.normal(size=4)) + np.outer(g.normal(size=5), g.normal(size=4))
rhs = g.normal(size=6)
for name, v in [("in_a", a), ("in_b", b), ("in_batch", batch), ("in_rect", rect), ("in_spd", spd), ("in_c", c),
                ("in_h", h), ("in_deficient", deficient), ("in_rhs", rhs)]:
    save(name, v)


def by_value(w):
    return w[np.lexsort((w.imag, w.real))]


save("inv_a", np.linalg.inv(a))
save("inv_c", np.linalg.inv(c))
save("solve_ab", np.linalg.solve(a, b))
save("det_batch", np.linalg.det(batch))
sign, logdet = np.linalg.slogdet(batch)
save("slogdet_batch_sign", sign)
save("slogdet_batch_log", logdet)
save("svdvals_rect", np.linalg.svd(rect, compute_uv=False))
save("svdvals_c", np.linalg.svd(c, compute_uv=False))
save("eigvalsh_spd", np.linalg.eigvalsh(spd))
save("eigvalsh_h", np.linalg.eigvalsh(h))
save("eigvals_c", by_value(np.linalg.eigvals(c)))
save("eigvals_a", by_value(np.linalg.eigvals(a).astype(np.complex128)))
save("cholesky_spd", np.linalg.cholesky(spd))
save("cholesky_h", np.linalg.cholesky(h))
save("qr_r_rect", np.abs(np.linalg.qr(rect)[1]))
xs, res, rank, s = np.linalg.lstsq(rect, rhs)
save("lstsq_x", xs)
save("lstsq_residuals", res)
save("lstsq_rank", np.array(rank, dtype=np.int64))
save("lstsq_s", s)
save("pinv_deficient", np.linalg.pinv(deficient))
save("matrix_rank_deficient", np.array(np.linalg.matrix_rank(deficient), dtype=np.int64))
save("matrix_power_a_m2", np.linalg.matrix_power(a, -2))
save("norm2_rect", np.array(np.linalg.matrix_norm(rect, ord=2)))
save("nuc_rect", np.array(np.linalg.matrix_norm(rect, ord="nuc")))
save("cov_rect", np.cov(rect, rowvar=False))
save("cov_rect_bias", np.cov(rect, rowvar=False, ddof=0))
save("corrcoef_rect", np.corrcoef(rect, rowvar=False))
save("cov_xy", np.cov(rhs, rhs ** 2 + rhs))
save("corrcoef_xy", np.corrcoef(rhs, rhs ** 2 + rhs))
save("cov_c", np.cov(c))
save("corrcoef_c", np.corrcoef(c))
