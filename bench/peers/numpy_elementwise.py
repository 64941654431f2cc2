#!/usr/bin/env python3
"""The statements of bench_elementwise in NumPy, on the same sizes, printing GB/s (same byte
counts as the C++ benchmarks) so scripts/bench can show fusor's ratio to NumPy; the half rows in
float16 and, with ml_dtypes installed, bfloat16.
NumPy evaluates op by op (a temporary per operation); `out=` variants are its best case."""
import json
import sys

import numpy as np
from timing import half_rows, median_seconds

N = 10_000_000




results = {}
rng = np.random.default_rng(1)
for dtype in ("float", "double"):
    t = np.float32 if dtype == "float" else np.float64
    x, y, z, w = (rng.uniform(-1, 1, N).astype(t) for _ in range(4))
    size = np.dtype(t).itemsize

    def fused_sin():
        y[...] = 2 * x + y * z - np.sin(w)

    def fused_fma():
        np.add(x * z, w, out=y)

    def fused_dot():
        np.dot(x, z)

    for name, fn, nbytes in (("fused_sin", fused_sin, 5), ("fused_fma", fused_fma, 4), ("fused_dot", fused_dot, 2)):
        results[f"{name}/{dtype}"] = nbytes * N * size / median_seconds(fn) / 1e9

# float16 (NumPy's own, every ufunc computed in float32 and rounded) and bfloat16 (ml_dtypes'
# ufunc loops, when it is installed): the half rows of bench_elementwise, bytes at 2 per element
x32 = rng.uniform(-1, 1, N).astype(np.float32)
half_types = {"float16": np.float16}
try:
    import ml_dtypes

    half_types["bfloat16"] = ml_dtypes.bfloat16
except ImportError:
    pass
for dtype, t in half_types.items():
    x, y, z, w = (rng.uniform(-1, 1, N).astype(np.float32).astype(t) for _ in range(4))

    def fused_fma():
        np.add(x * z, w, out=y)

    def astype():
        y[...] = x32  # a float32 array converted into the half one

    def total():
        np.sum(x)

    results.update(half_rows(N, dtype, fused_fma, astype, total))

json.dump(results, sys.stdout)
