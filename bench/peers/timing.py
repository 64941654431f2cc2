"""Timing shared by the peer scripts: the median of repeated calls after warm-up calls (the first
calls of a JIT compile, of NumPy allocate), as Google Benchmark's medians on the C++ side."""
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
