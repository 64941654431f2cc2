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


def half_rows(n, dtype, fused_fma, astype, total, suffix=""):
    """GB/s of bench_elementwise's half rows (2 bytes per half element, 4 of the float32 source):
    fused_fma (y = x * z + w), astype (float32 into the half type) and sum, keyed as its names."""
    return {
        f"fused_fma/{dtype}{suffix}": 4 * n * 2 / median_seconds(fused_fma) / 1e9,
        f"astype/float32_to_{dtype}{suffix}": n * 6 / median_seconds(astype) / 1e9,
        f"sum/{dtype}{suffix}": n * 2 / median_seconds(total) / 1e9,
    }
