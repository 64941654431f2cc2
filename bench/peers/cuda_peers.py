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


def learn_rows():
    """bench_cuda's training step (784-128-10 MLP, float32, cross-entropy, SGD, the loss read each
    step) in PyTorch: eager, and captured once as a CUDA graph and replayed (torch.cuda.graphs).
    Microseconds per step, median of 9 runs of 200 steps."""
    import time
    import torch

    out = {}
    for batch in (64, 1024):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(784, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)).cuda()
        opt = torch.optim.SGD(model.parameters(), lr=1e-3)
        x = torch.rand(batch, 784, device="cuda")
        y = torch.randint(0, 10, (batch,), device="cuda")
        loss_fn = torch.nn.CrossEntropyLoss()

        def eager():
            opt.zero_grad(set_to_none=False)
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            return loss.item()

        # the PyTorch recipe for a whole-step graph: warm up on a side stream, capture, replay
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                eager()
        torch.cuda.current_stream().wait_stream(s)
        graph = torch.cuda.CUDAGraph()
        opt.zero_grad(set_to_none=False)
        with torch.cuda.graph(graph):
            static_loss = loss_fn(model(x), y)
            static_loss.backward()
            opt.step()

        def replay():
            graph.replay()
            return static_loss.item()

        for name, fn in (("torch eager", eager), ("torch CUDA graph", replay)):
            times = []
            for _ in range(9):
                fn()
                t0 = time.perf_counter()
                for _ in range(200):
                    fn()
                times.append((time.perf_counter() - t0) / 200 * 1e6)
            out[(name, batch)] = sorted(times)[4]
    return out


def fusor_step_times(path):
    """Microseconds per step (real time) of bench_cuda's learn_step_* medians, by (name, batch)."""
    with open(path) as f:
        data = json.load(f)
    out = {}
    for b in data["benchmarks"]:
        name = b["run_name"]
        if b.get("aggregate_name") == "median" and name.startswith("learn_step_"):
            kind, batch = name.split("/")[:2]
            out[(kind, int(batch))] = b["real_time"]  # microseconds (Unit: kMicrosecond)
    return out


def main():
    fusor = fusor_times(sys.argv[1]) if len(sys.argv) > 1 else {}
    steps = fusor_step_times(sys.argv[1]) if len(sys.argv) > 1 else {}
    try:
        peers = learn_rows()
    except Exception as e:
        peers = {}
        print(f"torch training step: not run ({type(e).__name__}: {e})")
    if steps or peers:
        print(f"{'training step':24} {'batch':>6} {'us/step':>9} {'fusor replay/this':>18}")
        for batch in (64, 1024):
            ref = steps.get(("learn_step_replay", batch))
            rows = [(k, steps[(k, batch)]) for k in ("learn_step_tape", "learn_step_replay") if (k, batch) in steps]
            rows += [(k, peers[(k, batch)]) for k in ("torch eager", "torch CUDA graph") if (k, batch) in peers]
            for name, us in rows:
                ratio = f"{ref / us:18.2f}" if ref else f"{'-':>18}"
                print(f"{name:24} {batch:6d} {us:9.1f} {ratio}")
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
