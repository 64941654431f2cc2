#!/usr/bin/env python3
"""Reads a Google Benchmark JSON file from bench_elementwise (and optionally the NumPy peer's
JSON, then PyTorch's) and prints, per dtype and thread count, the median GB/s of each benchmark
and its ratio to the triad, to its hand loop, and to NumPy on the same statement; then the half
rows (float16, bfloat16) beside float32's triad, NumPy and PyTorch."""
import json
import sys

peers = json.load(open(sys.argv[2])) if len(sys.argv) > 2 else {}
torch_peers = json.load(open(sys.argv[3])) if len(sys.argv) > 3 else {}
rows = {}
for b in json.load(open(sys.argv[1]))["benchmarks"]:
    if b.get("aggregate_name") != "median":
        continue
    name = b["run_name"]  # e.g. fused_sin/float/2/real_time
    fn, dtype, threads = name.split("/")[:3]
    rows[(dtype, int(threads), fn)] = b["GB/s"] / 1e9

pairs = [("fused_sin", "hand_sin"), ("fused_sin", "hand_xsimd_sin"), ("fused_fma", "hand_fma"), ("fused_dot", "hand_dot"),
         ("fused_noise", "hand_noise"), ("eager_noise", "hand_noise")]
print(f"{'dtype':7} {'thr':>3} {'statement':16} {'GB/s':>7} {'/triad':>7} {'vs hand':>21} {'vs numpy':>9}")
for dtype in ("float", "double"):
    for threads in (1, 2):
        triad = rows.get((dtype, threads, "triad"))
        if triad is None:
            continue
        print(f"{dtype:7} {threads:>3} {'triad':16} {triad:7.2f} {1.0:7.2f}")
        for fused, hand in pairs:
            f, h = rows.get((dtype, threads, fused)), rows.get((dtype, threads, hand))
            if f is None or h is None:
                continue
            peer = peers.get(f"{fused}/{dtype}")
            vs_numpy = f"{f / peer:8.2f}x" if peer else ""
            print(f"{dtype:7} {threads:>3} {fused:16} {f:7.2f} {f / triad:7.2f} {f / h:7.2f} x {hand:14} {vs_numpy}")

# float16 and bfloat16 (bytes at 2 per element): beside float32's triad in the same run, NumPy
# (float16; ml_dtypes for bfloat16) and PyTorch's cpu kernels
half_rows = [(d, t, fn) for (d, t, fn) in rows if d.startswith("float32_to_") or d in ("float16", "bfloat16")]
if half_rows:
    print(f"\n{'half':26} {'thr':>3} {'GB/s':>7} {'/triad':>7} {'vs numpy':>9} {'vs torch':>9}")
    for dtype, threads, fn in sorted(half_rows, key=lambda r: (r[2], r[0], r[1])):
        f = rows[(dtype, threads, fn)]
        triad = rows.get(("float", threads, "triad"))
        key = f"{fn}/{dtype}"
        vs = [f"{f / p[k]:8.2f}x" if k in p else f"{'':9}" for p, k in ((peers, key), (torch_peers, f"{key}/{threads}"))]
        print(f"{key:26} {threads:>3} {f:7.2f} {f / triad if triad else float('nan'):7.2f} {vs[0]} {vs[1]}")
