#!/usr/bin/env python3
"""bench_elementwise's half rows in PyTorch on the cpu (Debian's python3-torch): fused_fma,
the conversion from float32 and the sum in bfloat16 and float16, on the same sizes and byte
counts (2 per half element), printing GB/s as JSON for bench/ratios.py's PyTorch column.
PyTorch computes bfloat16 and float16 elementwise work in float32 and rounds each result, as
fusor and NumPy do; torch.addcmul(w, x, z) is its one-kernel x * z + w (where it has a kernel for
the type: Debian's PyTorch 1.13 has none for float16 on the cpu, which then takes two)."""
import json
import sys

import torch
from timing import half_rows

N = 10_000_000
results = {}
g = torch.Generator().manual_seed(1)
x32 = torch.rand(N, generator=g) * 2 - 1
for threads in (1, 2):  # as bench_elementwise's rows: keys end in the thread count
    torch.set_num_threads(threads)
    for dtype, t in (("bfloat16", torch.bfloat16), ("float16", torch.float16)):
        x, y, z, w = ((torch.rand(N, generator=g) * 2 - 1).to(t) for _ in range(4))

        def fused_fma():
            torch.addcmul(w, x, z, out=y)

        try:
            fused_fma()
        except RuntimeError:  # PyTorch 1.13's cpu addcmul has no float16 kernel: a product, then a sum

            def fused_fma():
                torch.add(x * z, w, out=y)

        def astype():
            y.copy_(x32)

        def total():
            torch.sum(x)

        results.update(half_rows(N, dtype, fused_fma, astype, total, f"/{threads}"))
json.dump(results, sys.stdout)
