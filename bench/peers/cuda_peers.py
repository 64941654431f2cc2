#!/usr/bin/env python3
"""bench_cuda's statements in PyTorch (eager and torch.compile) and CuPy on the same GPU, timed
with CUDA events (median of 9 after a warm-up), beside fusor's own numbers.

Usage (on the GPU machine):
    build/release/bench/bench_cuda --benchmark_repetitions=9 --benchmark_report_aggregates_only=true \
        --benchmark_format=json > fusor_cuda.json
    python3 bench/peers/cuda_peers.py fusor_cuda.json

Prints GB/s for each tool (bytes read + written by the statement, the same count bench_cuda uses)
and fusor's time over each peer's (below 1 means fusor is faster). A peer that is not installed
is reported as missing, not skipped silently.
"""
import json
import sys

N = 100_000_000
STATEMENTS = {
    # name in bench_cuda: (bytes moved per element, float32)
    "fused_2x_plus_yz_minus_sin_w": 5 * 4,
    "fused_ab_plus_c": 4 * 4,
    "sum_float": 1 * 4,
}


def fusor_times(path):
    """Median milliseconds per benchmark from Google Benchmark's JSON output."""
    with open(path) as f:
        data = json.load(f)
    out = {}
    for b in data["benchmarks"]:
        if b.get("aggregate_name") == "median":
            out[b["run_name"].split("/")[0]] = b["real_time"]  # milliseconds (Unit: kMillisecond)
    return out


def time_ms(sync, start_event, stop_event, fn, reps=9):
    fn()
    sync()
    times = []
    for _ in range(reps):
        start = start_event()
        stop = stop_event()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return sorted(times)[len(times) // 2]


def torch_rows():
    import torch

    dev = "cuda"
    g = torch.Generator(device=dev).manual_seed(1)
    x, y, z, w = (torch.rand(N, device=dev, generator=g) * 2 - 1 for _ in range(4))
    r = torch.empty_like(x)
    ev = lambda: torch.cuda.Event(enable_timing=True)
    t = lambda fn: time_ms(torch.cuda.synchronize, ev, ev, fn)

    def expr1(x, y, z, w):
        return 2 * x + y * z - torch.sin(w)

    def expr2(a, b, c):
        return a * b + c

    c1, c2 = torch.compile(expr1), torch.compile(expr2)
    rows = {}
    rows["torch eager"] = {
        "fused_2x_plus_yz_minus_sin_w": t(lambda: torch.sub(torch.add(2 * x, y * z), torch.sin(w), out=r)),
        "fused_ab_plus_c": t(lambda: torch.add(x * y, z, out=r)),
        "sum_float": t(lambda: torch.sum(x)),
    }
    rows["torch.compile"] = {
        "fused_2x_plus_yz_minus_sin_w": t(lambda: c1(x, y, z, w)),
        "fused_ab_plus_c": t(lambda: c2(x, y, z)),
        "sum_float": t(lambda: torch.sum(x)),
    }
    return rows


def cupy_rows():
    import cupy as cp

    rng = cp.random.default_rng(1)
    x, y, z, w = (rng.uniform(-1, 1, N, dtype=cp.float32) for _ in range(4))
    r = cp.empty_like(x)
    fused1 = cp.ElementwiseKernel("float32 x, float32 y, float32 z, float32 w", "float32 r",
                                  "r = 2.0f * x + y * z - sinf(w)", "fusor_peer_expr1")
    fused2 = cp.ElementwiseKernel("float32 a, float32 b, float32 c", "float32 r", "r = a * b + c", "fusor_peer_expr2")
    sync = cp.cuda.Stream.null.synchronize

    class E:
        def __init__(self):
            self.e = cp.cuda.Event()

        def record(self):
            self.e.record()

        def synchronize(self):
            self.e.synchronize()

        def elapsed_time(self, other):
            return cp.cuda.get_elapsed_time(self.e, other.e)

    t = lambda fn: time_ms(sync, E, E, fn)
    return {
        "cupy eager": {
            "fused_2x_plus_yz_minus_sin_w": t(lambda: cp.subtract(2 * x + y * z, cp.sin(w), out=r)),
            "fused_ab_plus_c": t(lambda: cp.add(x * y, z, out=r)),
            "sum_float": t(lambda: cp.sum(x)),
        },
        "cupy ElementwiseKernel": {
            "fused_2x_plus_yz_minus_sin_w": t(lambda: fused1(x, y, z, w, r)),
            "fused_ab_plus_c": t(lambda: fused2(x, y, z, r)),
            "sum_float": t(lambda: cp.sum(x)),
        },
    }


def main():
    fusor = fusor_times(sys.argv[1]) if len(sys.argv) > 1 else {}
    rows = {}
    for name, make in (("torch", torch_rows), ("cupy", cupy_rows)):
        try:
            rows.update(make())
        except Exception as e:  # a missing peer is reported, not hidden
            print(f"{name}: not run ({type(e).__name__}: {e})")
    print(f"{'statement':32} {'tool':24} {'ms':>8} {'GB/s':>8} {'fusor/peer':>10}")
    for stmt, per_elem in STATEMENTS.items():
        gb = per_elem * N / 1e9
        if stmt in fusor:
            print(f"{stmt:32} {'fusor':24} {fusor[stmt]:8.3f} {gb / (fusor[stmt] / 1e3):8.1f} {'':>10}")
        for tool, times in rows.items():
            ms = times[stmt]
            ratio = f"{fusor[stmt] / ms:10.2f}" if stmt in fusor else f"{'-':>10}"
            print(f"{stmt:32} {tool:24} {ms:8.3f} {gb / (ms / 1e3):8.1f} {ratio}")


if __name__ == "__main__":
    main()
