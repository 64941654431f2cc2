#!/usr/bin/env python3
"""Refits fft::transform_cost's weights (include/fusor/fft/transform_cost.hpp) from bench_fft's
fftw_measured_pair rows: the time per grid element of a one-thread r2c + c2r pair is modelled as
the sum over the grid's axes of a weight per factor 2, 3, 5 and 7 and a penalty for an odd length,
fitted by least squares on the relative error. Prints the weights, the rms relative error, and
each grid's time beside the model's, so that another machine's ranking can be compared with the
one the header holds. Usage:

  build/release/bench/bench_fft --benchmark_filter=fftw_measured_pair --benchmark_repetitions=3 \\
      --benchmark_report_aggregates_only=true --benchmark_out=pairs.json --benchmark_out_format=json
  python3 bench/fit_transform_cost.py pairs.json
"""
import json
import sys

import numpy as np

HEADER = {"2": 0.215, "3": 0.523, "5": 0.773, "7": 1.198, "odd": 1.718}


def features(shape):
    f = np.zeros(5)
    for n in shape:
        f[4] += n % 2
        for i, p in enumerate((2, 3, 5, 7)):
            while n % p == 0:
                f[i] += 1
                n //= p
    return f


def main():
    rows = []
    for b in json.load(open(sys.argv[1]))["benchmarks"]:
        if b["run_name"].startswith("fftw_measured_pair/") and b.get("aggregate_name", "median") == "median":
            shape = [int(x) for x in b["run_name"].split("/")[1:4]]
            ms = b["real_time"] * {"ms": 1.0, "us": 1e-3, "ns": 1e-6}[b["time_unit"]]
            rows.append((shape, ms * 1e6 / np.prod(shape)))  # ns per element
    x = np.array([features(s) for s, _ in rows])
    y = np.array([t for _, t in rows])
    w, *_ = np.linalg.lstsq(x / y[:, None], np.ones(len(y)), rcond=None)
    rms = np.sqrt(np.mean(((x @ w - y) / y) ** 2))
    print("weights  2: %.3f  3: %.3f  5: %.3f  7: %.3f  odd: %.3f   (rms relative error %.2f, %d grids)" % (*w, rms, len(y)))
    print("header   " + "  ".join(f"{k}: {v:.3f}" for k, v in HEADER.items()))
    for (s, t), p in zip(rows, x @ w):
        print(f"{'x'.join(map(str, s)):>12}  {t:6.2f} ns/element measured  {p:6.2f} fitted")


if __name__ == "__main__":
    main()
