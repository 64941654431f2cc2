#!/usr/bin/env python3
"""Reads a Google Benchmark JSON file from bench_elementwise (and optionally the NumPy peer's
JSON) and prints, per dtype and thread count, the median GB/s of each benchmark and its ratio
to the triad, to its hand loop, and to NumPy on the same statement."""
import json
import sys

peers = json.load(open(sys.argv[2])) if len(sys.argv) > 2 else {}
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
