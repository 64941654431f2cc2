#!/usr/bin/env python3
"""Writes the .npy fixtures that tests/test_numpy.cpp compares fusor's statistics with: NumPy's
own results for its order statistics, NaN-ignoring reductions, average and the elementwise
functions whose edge cases are easy to get subtly wrong.

Usage (from the repository root; needs NumPy, the fixtures are checked in because CI has none):

    python3 tests/data/make_stats_fixtures.py [output_dir]   # default: tests/data/stats

The files were made with NumPy 2.4.6. Inputs are written beside the results (in_*.npy) so the
test runs fusor on exactly NumPy's input:

  in_x.npy             float64 (6, 7)  random normal, seed 20
  in_nan.npy           float64 (6, 7)  in_x with NaN at every 5th element and row 3 all NaN
  in_i.npy             int32 (5, 8)    random integers in [-50, 50), seed 21
  in_w.npy             float64 (7,)    weights in [0, 1)
  q.npy                float64 (5,)    0, 0.13, 0.5, 0.77, 1
  quantile_<m>_ax<a>.npy   np.quantile(in_x, q, axis=a, method=m) for a in 0, 1 and m in
                           linear, lower, higher, nearest, midpoint
  quantile_<m>_all.npy     np.quantile(in_x, q, method=m) (axis=None)
  quantile_i_<m>.npy       np.quantile(in_i, q, axis=1, method=m) as float64
  median_ax0.npy, median_ax1.npy, median_all.npy
  nanmedian_ax1.npy        np.nanmedian(in_nan, axis=1) (NaN for the all-NaN row)
  nanpercentile_ax0.npy    np.nanpercentile(in_nan, [10, 50, 90], axis=0)
  nanquantile_nearest_ax1.npy
  nanmean_ax1.npy, nanvar_ax1_ddof1.npy, nanstd_ax0.npy, nansum_all.npy, nanmax_ax1.npy
  average_ax1.npy          np.average(in_x, weights=in_w, axis=1)
  ptp_ax0.npy
  ew_in.npy                float64 (40,) values with 0, -0, +-inf, NaN and large ones
  ew_<f>.npy               np.<f>(ew_in) for i0, sinc, rint, fix, signbit, reciprocal, deg2rad,
                           nan_to_num; np.<f>(ew_in, ew_in[::-1]) for hypot, copysign, fmod,
                           remainder, heaviside, logaddexp, logaddexp2
  in_h.npy             float16 (6, 33)  random normal * 60 + 200, seed 24 (NumPy rounds to float16)
  h_<r>_<a>.npy        float16 results of np.<r>(in_h, axis=a) for sum, mean (all, 0, 1), var
                       (axis 1, ddof 1), std (axis 0), nanmean of in_h with NaN at every 7th
                       element (axis 1); NumPy sums contiguous float16 elements with float32
                       pairwise accumulators, adds row by row in float16 along a leading axis,
                       computes var's squares in float16 and rounds nanmean's sum before dividing
  h_ew_<f>.npy         np.<f> of float16 operands (in_h / 50, and its reverse for two operands)
                       for add, multiply, divide, exp, sin, tanh, sqrt (of |x|), log1p (of |x|)
"""
import os
import sys

import numpy as np

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "stats")
os.makedirs(out, exist_ok=True)


def save(name, a):
    a = np.asarray(a)
    np.save(os.path.join(out, name + ".npy"), a if a.ndim == 0 else np.ascontiguousarray(a))  # (which makes 0-d 1-d)


x = np.random.default_rng(20).normal(size=(6, 7))
xn = x.copy()
xn.flat[::5] = np.nan
xn[3, :] = np.nan
xi = np.random.default_rng(21).integers(-50, 50, size=(5, 8)).astype(np.int32)
w = np.random.default_rng(22).random(7)
q = np.array([0.0, 0.13, 0.5, 0.77, 1.0])
save("in_x", x)
save("in_nan", xn)
save("in_i", xi)
save("in_w", w)
save("q", q)
for m in ["linear", "lower", "higher", "nearest", "midpoint"]:
    for a in (0, 1):
        save(f"quantile_{m}_ax{a}", np.quantile(x, q, axis=a, method=m))
    save(f"quantile_{m}_all", np.quantile(x, q, method=m))
    save(f"quantile_i_{m}", np.quantile(xi, q, axis=1, method=m).astype(np.float64))
save("median_ax0", np.median(x, axis=0))
save("median_ax1", np.median(x, axis=1))
save("median_all", np.array(np.median(x)))
with np.errstate(all="ignore"):
    import warnings

    warnings.simplefilter("ignore")
    save("nanmedian_ax1", np.nanmedian(xn, axis=1))
    save("nanpercentile_ax0", np.nanpercentile(xn, [10, 50, 90], axis=0))
    save("nanquantile_nearest_ax1", np.nanquantile(xn, [0.3, 0.6], axis=1, method="nearest"))
    save("nanmean_ax1", np.nanmean(xn, axis=1))
    save("nanvar_ax1_ddof1", np.nanvar(xn, axis=1, ddof=1))
    save("nanstd_ax0", np.nanstd(xn, axis=0))
    save("nansum_all", np.array(np.nansum(xn)))
    save("nanmax_ax1", np.nanmax(xn, axis=1))
save("average_ax1", np.average(x, weights=w, axis=1))
save("ptp_ax0", np.ptp(x, axis=0))

ew = np.concatenate([[0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, 700.0, -30.5, 1e-300],
                     np.random.default_rng(23).normal(scale=20, size=26)])
save("ew_in", ew)
with np.errstate(all="ignore"):
    for f in ["i0", "sinc", "rint", "fix", "signbit", "reciprocal", "deg2rad", "nan_to_num"]:
        save("ew_" + f, getattr(np, f)(ew))
    r = ew[::-1]
    for f in ["hypot", "copysign", "fmod", "remainder", "heaviside", "logaddexp", "logaddexp2"]:
        save("ew_" + f, getattr(np, f)(ew, r))

# float16: NumPy 2's arithmetic on its 2-byte float (each ufunc computed in float32 and rounded)
h = (np.random.default_rng(24).normal(size=(6, 33)) * 60 + 200).astype(np.float16)
save("in_h", h)
save("h_sum_all", np.array(h.sum()))
save("h_sum_0", h.sum(axis=0))
save("h_mean_all", np.array(h.mean()))
save("h_mean_0", h.mean(axis=0))
save("h_mean_1", h.mean(axis=1))
save("h_var_1", h.var(axis=1, ddof=1))
save("h_std_0", h.std(axis=0))
hn = h.copy()
hn.flat[::7] = np.nan
save("h_nanmean_1", np.nanmean(hn, axis=1))
e = (h / np.float16(50)).ravel()
er = e[::-1]
save("h_ew_add", e + er)
save("h_ew_multiply", e * er)
save("h_ew_divide", e / er)
for f in ["exp", "sin", "tanh"]:
    save("h_ew_" + f, getattr(np, f)(e))
save("h_ew_sqrt", np.sqrt(np.abs(e)))
save("h_ew_log1p", np.log1p(np.abs(e)))
