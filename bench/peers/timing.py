"""Timing shared by the peer scripts: the median of repeated calls after warm-up calls (the first
calls of a JIT compile, of NumPy allocate), as Google Benchmark's medians on the C++ side."""
import json
import time


def median_seconds(fn, reps=9, warmup=1):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return sorted(times)[len(times) // 2]


def fusor_medians(path):
    """fusor's median seconds per benchmark from Google Benchmark's JSON output, keyed by
    (function, arguments): ("fusor_step<float>", "64/1") for "fusor_step<float>/64/1/real_time"."""
    med = {}
    for b in json.load(open(path))["benchmarks"]:
        if b.get("aggregate_name") == "median":
            head, _, rest = b["run_name"].partition("/")
            med[(head, rest.replace("/real_time", ""))] = b["real_time"] * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}.get(
                b.get("time_unit", "ns"), 1e-9)
    return med
