#!/usr/bin/env python3
"""bench_ad's functions in JAX (jit, CPU) and PyTorch (eager autograd, CPU), on the same sizes and
thread counts, beside fusor's times from bench_ad's JSON: prints each peer's median time and the
ratio fusor/peer (< 1: fusor is faster). Peers that are not installed are skipped with a note.
Usage: ad_peers.py BENCH_AD_JSON [threads] [jax|torch]   (default: every peer that imports)

The functions (float32 and float64, n = 1e3 and 1e6):
  square: sum((2 (x + 1))^2)      sinexp: sum(sin(x) exp(-x^2) + x^2 / 2)
  rosen:  sum(100 (x[1:] - x[:-1]^2)^2 + (1 - x[:-1])^2)
value and gradient from a plain input (jax.value_and_grad under jit; torch: requires_grad,
forward, backward), and the JVP of sinexp at 1e6 (jax.jvp under jit; torch.func.jvp).
  dense:  sum(tanh(X @ W)^2) for n x n matrices X (data) and W (the variable), n = 64 and 256.
  conv:   sum(fftconvolve(I, k, "same")^2) for a 256 x 256 image I (data) and a 16 x 16 kernel k
          (the variable); JAX only (jax.scipy.signal.fftconvolve; PyTorch has no FFT convolution):
          its value and gradient (vg_conv), and its JVP along a kernel direction (jvp_conv, jax.jvp).
  jacfwd_tanh, jacrev_tanh: the 100 x 100 Jacobian of y = sum(A * tanh(x), 1) in forward and reverse
          mode (jax.jacfwd / jax.jacrev under jit; torch.autograd.functional.jacobian, vectorised
          reverse mode, and forward mode where this PyTorch has it)."""
import os
import sys

THREADS = int(sys.argv[2]) if len(sys.argv) > 2 else 1
os.environ.setdefault("XLA_FLAGS", f"--xla_cpu_multi_thread_eigen={'true' if THREADS > 1 else 'false'} "
                                   f"intra_op_parallelism_threads={THREADS}")
os.environ.setdefault("OMP_NUM_THREADS", str(THREADS))

import numpy as np  # noqa: E402
from timing import fusor_medians as fusor_times  # noqa: E402
from timing import median_seconds as timed  # noqa: E402


def median_seconds(fn):
    return timed(fn, reps=15, warmup=3)  # JIT compilation on the first calls


def inputs(n, dtype, seed):
    return np.random.default_rng(seed).uniform(-1, 1, n).astype(dtype)


def jax_peer():
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
    fns = {
        "square": lambda x: jnp.sum(jnp.square(2 * (x + 1))),
        "sinexp": lambda x: jnp.sum(jnp.sin(x) * jnp.exp(-x * x) + x * x / 2),
        "rosen": lambda x: jnp.sum(100 * jnp.square(x[1:] - jnp.square(x[:-1])) + jnp.square(1 - x[:-1])),
    }
    out = {}
    for name, f in fns.items():
        vg = jax.jit(jax.value_and_grad(f))
        for dtype in ("float", "double"):
            for n in (1000, 1000000):
                x = jnp.asarray(inputs(n, np.float32 if dtype == "float" else np.float64, 1))
                out[(f"vg_{name}", dtype, n)] = median_seconds(lambda: jax.block_until_ready(vg(x)))
    for dtype in ("float", "double"):
        for n in (64, 256):
            t = np.float32 if dtype == "float" else np.float64
            X, W = jnp.asarray(inputs(n * n, t, 2).reshape(n, n)), jnp.asarray(inputs(n * n, t, 3).reshape(n, n))
            vg = jax.jit(jax.value_and_grad(lambda w, X=X: jnp.sum(jnp.square(jnp.tanh(X @ w)))))
            out[("vg_dense", dtype, n)] = median_seconds(lambda: jax.block_until_ready(vg(W)))
    from jax.scipy.signal import fftconvolve
    for dtype in ("float", "double"):
        t = np.float32 if dtype == "float" else np.float64
        image, k = jnp.asarray(inputs(256 * 256, t, 4).reshape(256, 256)), jnp.asarray(inputs(16 * 16, t, 5).reshape(16, 16))
        vg = jax.jit(jax.value_and_grad(lambda w, image=image: jnp.sum(jnp.square(fftconvolve(image, w, mode="same")))))
        out[("vg_conv", dtype, 256)] = median_seconds(lambda: jax.block_until_ready(vg(k)))
        dk = jnp.asarray(inputs(16 * 16, t, 6).reshape(16, 16))
        conv_loss = lambda w, image=image: jnp.sum(jnp.square(fftconvolve(image, w, mode="same")))  # noqa: E731
        jv_conv = jax.jit(lambda w, d: jax.jvp(conv_loss, (w,), (d,)))
        out[("jvp_conv", dtype, 256)] = median_seconds(lambda: jax.block_until_ready(jv_conv(k, dk)))
    for dtype in ("float", "double"):
        t = np.float32 if dtype == "float" else np.float64
        A, x = jnp.asarray(inputs(100 * 100, t, 6).reshape(100, 100)), jnp.asarray(inputs(100, t, 7))
        tanh_map = lambda x, A=A: jnp.sum(A * jnp.tanh(x), 1)  # noqa: E731
        for mode, jac in (("jacfwd", jax.jacfwd), ("jacrev", jax.jacrev)):
            J = jax.jit(jac(tanh_map))
            out[(f"{mode}_tanh", dtype, 100)] = median_seconds(lambda: jax.block_until_ready(J(x)))
    jv = jax.jit(lambda x, v: jax.jvp(fns["sinexp"], (x,), (v,)))
    for dtype in ("float", "double"):
        t = np.float32 if dtype == "float" else np.float64
        x, v = jnp.asarray(inputs(1000000, t, 1)), jnp.asarray(inputs(1000000, t, 2))
        out[("jvp_sinexp", dtype, 1000000)] = median_seconds(lambda: jax.block_until_ready(jv(x, v)))
    return out


def torch_peer():
    import torch
    torch.set_num_threads(THREADS)
    fns = {
        "square": lambda x: torch.sum(torch.square(2 * (x + 1))),
        "sinexp": lambda x: torch.sum(torch.sin(x) * torch.exp(-x * x) + x * x / 2),
        "rosen": lambda x: torch.sum(100 * torch.square(x[1:] - torch.square(x[:-1])) + torch.square(1 - x[:-1])),
    }
    out = {}
    for name, f in fns.items():
        for dtype in ("float", "double"):
            for n in (1000, 1000000):
                base = torch.from_numpy(inputs(n, np.float32 if dtype == "float" else np.float64, 1))

                def step():
                    x = base.detach().requires_grad_(True)
                    y = f(x)
                    y.backward()
                    return y.item(), x.grad

                out[(f"vg_{name}", dtype, n)] = median_seconds(step)
    for dtype in ("float", "double"):
        for n in (64, 256):
            t = np.float32 if dtype == "float" else np.float64
            X = torch.from_numpy(inputs(n * n, t, 2).reshape(n, n))
            W = torch.from_numpy(inputs(n * n, t, 3).reshape(n, n))

            def dense_step():
                w = W.detach().requires_grad_(True)
                y = torch.sum(torch.square(torch.tanh(X @ w)))
                y.backward()
                return y.item(), w.grad

            out[("vg_dense", dtype, n)] = median_seconds(dense_step)
    from torch.autograd.functional import jacobian
    for dtype in ("float", "double"):
        t = np.float32 if dtype == "float" else np.float64
        A, x = torch.from_numpy(inputs(100 * 100, t, 6).reshape(100, 100)), torch.from_numpy(inputs(100, t, 7))
        tanh_map = lambda x, A=A: torch.sum(A * torch.tanh(x), 1)  # noqa: E731
        out[("jacrev_tanh", dtype, 100)] = median_seconds(lambda: jacobian(tanh_map, x, vectorize=True))
        try:
            jacobian(tanh_map, x, vectorize=True, strategy="forward-mode")
            out[("jacfwd_tanh", dtype, 100)] = median_seconds(
                lambda: jacobian(tanh_map, x, vectorize=True, strategy="forward-mode"))
        except (RuntimeError, NotImplementedError, TypeError):
            pass  # forward-mode jacobian needs a newer PyTorch (functorch)
    try:
        from torch.func import jvp
    except ImportError:  # PyTorch < 2.0
        jvp = None
    if jvp is not None:
        for dtype in ("float", "double"):
            t = np.float32 if dtype == "float" else np.float64
            x, v = torch.from_numpy(inputs(1000000, t, 1)), torch.from_numpy(inputs(1000000, t, 2))
            out[("jvp_sinexp", dtype, 1000000)] = median_seconds(lambda: jvp(fns["sinexp"], (x,), (v,)))
    return out


def main():
    fusor = fusor_times(sys.argv[1])
    peers = {}
    only = sys.argv[3] if len(sys.argv) > 3 else None
    for key, label, fn in (("jax", "JAX", jax_peer), ("torch", "PyTorch", torch_peer)):
        if only not in (None, key):
            continue
        try:
            peers[label] = fn()
        except ImportError as e:
            print(f"({label} not installed: {e}; scripts/bench ad installs JAX from PyPI and Debian's python3-torch)")
    if not peers:
        return
    print(f"threads: {THREADS}")
    print(f"{'function':24} {'fusor':>10}" + "".join(f" {p:>10} {'fusor/' + p:>14}" for p in peers))
    keys = sorted({k for p in peers.values() for k in p})
    for kind, dtype, n in keys:
        fkey = (f"fusor_{kind}<{dtype}>", f"{n}/{THREADS}")
        if fkey not in fusor:
            continue
        tf = fusor[fkey]
        row = f"{kind + '<' + dtype + '>/' + str(n):24} {tf * 1e3:8.3f}ms"
        for p in peers.values():
            tp = p.get((kind, dtype, n))
            row += f" {tp * 1e3:8.3f}ms {tf / tp:14.3f}" if tp else f" {'-':>10} {'-':>14}"
        print(row)


if __name__ == "__main__":
    main()
