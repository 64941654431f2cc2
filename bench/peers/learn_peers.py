#!/usr/bin/env python3
"""bench_learn's training step in PyTorch (eager autograd, and torch.compile where this PyTorch has
it) and JAX (jit), on the CPU with the same thread count, beside fusor's time from bench_learn's
JSON: prints each peer's median time per step and the ratio fusor/peer (< 1: fusor is faster).
Usage: learn_peers.py BENCH_LEARN_JSON [threads] [jax|torch]   (default: every peer that imports)

The step (float32 and float64, batch 64): a 784-128-10 MLP, ReLU, softmax cross-entropy against
integer labels, the gradient of the mean loss by reverse mode, and a plain SGD update (lr 1e-3) of
the four parameters; inputs U(0, 1), labels uniform in 0..9, as bench_learn draws them (other
numbers, the same shapes). PyTorch also runs the float32 step under CPU autocast in bfloat16,
beside fusor's under ad::autocast<bfloat16>.

And a convolution: conv2d of (32, 32, 32, 32) by (64, 32, 3, 3), padding 1, float32,
forward alone and forward with both gradients (input and weight) of sum(conv2d(x, w) * r), beside
bench_learn's fusor_conv2d_forward and fusor_conv2d_step. And a transformer block:
nn.TransformerEncoderLayer(128, 4, 512, pre-norm, GELU, causal) on (32, 64, 128), the gradients of
sum(block(x) * r) for x and every parameter, beside fusor_transformer_step and _replay (JAX: the same
block written in jax.numpy, jitted). And WGAN-GP's critic step: a 784-128-1 tanh critic D at batch 64, float32, the gradient of mean(D(x)) +
10 mean((|grad_x D(x)_i| - 1)^2) for the critic's parameters (autograd.grad with create_graph=True),
and without the penalty, beside fusor_gradient_penalty_step/1 and /0 (JAX: jax.grad of a loss
holding a jax.grad, jitted). Four checkpointed blocks are torch only. And the CNN of
examples/train_cnn_digits (conv 1->16, batch norm, ReLU, 2x2 max pool, conv 16->32, batch norm,
ReLU, max pool, flatten, linear 128->10, cross-entropy, batch 32 of 1x8x8, float32, training mode)
with one Adam step, beside fusor_cnn_step/0 (tape) and /1 (replayed)."""
import os
import sys

THREADS = int(sys.argv[2]) if len(sys.argv) > 2 else 1
os.environ.setdefault("XLA_FLAGS", f"--xla_cpu_multi_thread_eigen={'true' if THREADS > 1 else 'false'} "
                                   f"intra_op_parallelism_threads={THREADS}")
os.environ.setdefault("OMP_NUM_THREADS", str(THREADS))
# ... and on that many cores: XLA's flags above cap one operation's threads, but its runtime runs
# independent operations (a step's forward and backward convolutions) concurrently on threads of
# its own, so "1 thread" used 1.37 cores in the conv step; fusor's rows use exactly THREADS cores
if hasattr(os, "sched_setaffinity") and THREADS < len(os.sched_getaffinity(0)):
    os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:THREADS])

import numpy as np  # noqa: E402
from timing import fusor_medians as fusor_times  # noqa: E402
from timing import median_seconds as timed  # noqa: E402

BATCH, IN, HID, OUT = 64, 784, 128, 10


def median_seconds(fn):
    return timed(fn, reps=51, warmup=5)  # JIT compilation on the first calls


def problem(dtype):
    rng = np.random.default_rng(1)
    x = rng.uniform(0, 1, (BATCH, IN)).astype(dtype)
    y = rng.integers(0, OUT, BATCH)
    b1, b2 = 1 / np.sqrt(IN), 1 / np.sqrt(HID)
    params = [rng.uniform(-b1, b1, (IN, HID)).astype(dtype), rng.uniform(-b1, b1, HID).astype(dtype),
              rng.uniform(-b2, b2, (HID, OUT)).astype(dtype), rng.uniform(-b2, b2, OUT).astype(dtype)]
    return x, y, params


def jax_peer():
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)

    def loss(p, x, y):
        w1, b1, w2, b2 = p
        z = jax.nn.relu(x @ w1 + b1) @ w2 + b2
        return jnp.mean(jax.nn.logsumexp(z, axis=1) - jnp.take_along_axis(z, y[:, None], axis=1)[:, 0])

    @jax.jit
    def step(p, x, y):
        value, g = jax.value_and_grad(loss)(p, x, y)
        return value, [w - 1e-3 * gw for w, gw in zip(p, g)]

    out = {}
    for dtype, t in (("float", np.float32), ("double", np.float64)):
        x, y, params = problem(t)
        x, y, state = jnp.asarray(x), jnp.asarray(y), [jnp.asarray(w) for w in params]

        def run():
            nonlocal state
            value, state = step(state, x, y)
            jax.block_until_ready(state)

        out[("jit", dtype)] = median_seconds(run)
    return out


def torch_peer():
    import torch
    torch.set_num_threads(THREADS)
    out = {}
    for dtype, t in (("float", np.float32), ("double", np.float64)):
        x, y, params = problem(t)
        x, y = torch.from_numpy(x), torch.from_numpy(y)
        ps = [torch.from_numpy(w).requires_grad_(True) for w in params]

        def loss_of(x, y, w1, b1, w2, b2):
            z = torch.relu(x @ w1 + b1) @ w2 + b2
            return torch.nn.functional.cross_entropy(z, y)

        def make_step(f):
            def step():
                value = f(x, y, *ps)
                grads = torch.autograd.grad(value, ps)
                with torch.no_grad():
                    for w, g in zip(ps, grads):
                        w.sub_(1e-3 * g)
                return value
            return step

        out[("eager", dtype)] = median_seconds(make_step(loss_of))
        if dtype == "float":
            # mixed precision: float32 parameters, the products in bfloat16 (CPU autocast's type),
            # beside fusor's step under ad::autocast<bfloat16>
            def loss_amp(x, y, w1, b1, w2, b2):
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    return torch.nn.functional.cross_entropy(torch.relu(x @ w1 + b1) @ w2 + b2, y).float()
            out[("autocast", "bfloat16")] = median_seconds(make_step(loss_amp))
        if hasattr(torch, "compile"):
            try:
                out[("compile", dtype)] = median_seconds(make_step(torch.compile(loss_of)))
            except Exception as e:  # noqa: BLE001  (a compiler backend missing on this machine)
                print(f"(torch.compile failed: {type(e).__name__}: {e})")
        else:
            print(f"(torch.compile needs PyTorch >= 2.0; this is {torch.__version__})")
    return out


def torch_conv_peer():
    import torch
    torch.set_num_threads(THREADS)
    rng = np.random.default_rng(2)
    x = torch.from_numpy(rng.normal(size=(32, 32, 32, 32)).astype(np.float32)).requires_grad_(True)
    w = torch.from_numpy((0.05 * rng.normal(size=(64, 32, 3, 3))).astype(np.float32)).requires_grad_(True)
    r = torch.from_numpy(rng.normal(size=(32, 64, 32, 32)).astype(np.float32))

    def forward():
        with torch.no_grad():
            return torch.nn.functional.conv2d(x, w, padding=1)

    def step():
        return torch.autograd.grad((torch.nn.functional.conv2d(x, w, padding=1) * r).sum(), [x, w])

    return {"forward": timed(forward, reps=15, warmup=2), "step": timed(step, reps=15, warmup=2)}


def torch_transformer_peer():
    import torch
    torch.set_num_threads(THREADS)
    torch.manual_seed(3)
    layer = torch.nn.TransformerEncoderLayer(128, 4, 512, dropout=0.0, activation="gelu", batch_first=True, norm_first=True)
    rng = np.random.default_rng(4)
    x = torch.from_numpy(rng.normal(size=(32, 64, 128)).astype(np.float32)).requires_grad_(True)
    r = torch.from_numpy(rng.normal(size=(32, 64, 128)).astype(np.float32))
    mask = torch.triu(torch.full((64, 64), float("-inf")), diagonal=1)
    params = [x] + list(layer.parameters())

    def step():
        return torch.autograd.grad((layer(x, src_mask=mask) * r).sum(), params)

    return timed(step, reps=15, warmup=2)


def torch_transformer_stack_peer():
    """Four such blocks, plain and each under torch.utils.checkpoint (non-reentrant), beside
    fusor_transformer_stack_step/0 and /1."""
    import torch
    from torch.utils.checkpoint import checkpoint
    torch.set_num_threads(THREADS)
    torch.manual_seed(3)
    layers = [torch.nn.TransformerEncoderLayer(128, 4, 512, dropout=0.0, activation="gelu", batch_first=True,
                                               norm_first=True) for _ in range(4)]
    rng = np.random.default_rng(4)
    x = torch.from_numpy(rng.normal(size=(32, 64, 128)).astype(np.float32)).requires_grad_(True)
    r = torch.from_numpy(rng.normal(size=(32, 64, 128)).astype(np.float32))
    mask = torch.triu(torch.full((64, 64), float("-inf")), diagonal=1)
    params = [x] + [p for layer in layers for p in layer.parameters()]

    def step(saved):
        def run():
            y = x
            for layer in layers:
                y = checkpoint(layer, y, mask, use_reentrant=False) if saved else layer(y, src_mask=mask)
            return torch.autograd.grad((y * r).sum(), params)
        return run

    return {saved: timed(step(saved), reps=7, warmup=1) for saved in (0, 1)}


def torch_gradient_penalty_peer():
    import torch
    torch.set_num_threads(THREADS)
    x0, _, _ = problem(np.float32)
    rng = np.random.default_rng(5)
    b1, b2 = 1 / np.sqrt(IN), 1 / np.sqrt(HID)
    params = [torch.tensor(rng.uniform(-b, b, shape).astype(np.float32), requires_grad=True)
              for b, shape in ((b1, (IN, HID)), (b1, (HID,)), (b2, (HID, 1)), (b2, (1,)))]
    w1, c1, w2, c2 = params

    def step(penalised):
        def run():
            x = torch.from_numpy(x0).requires_grad_(penalised == 1)
            score = torch.tanh(x @ w1 + c1) @ w2 + c2
            loss = score.mean()
            if penalised:
                (gx,) = torch.autograd.grad(score.sum(), x, create_graph=True)
                loss = loss + 10 * ((gx.norm(dim=1) - 1) ** 2).mean()
            return torch.autograd.grad(loss, params)
        return run

    return {penalised: timed(step(penalised), reps=51, warmup=5) for penalised in (0, 1)}


def jax_conv_peer():
    """conv2d forward and forward + both gradients, jitted (lax.conv_general_dilated, NCHW/OIHW)."""
    import jax
    import jax.numpy as jnp
    rng = np.random.default_rng(2)
    x = jnp.asarray(rng.normal(size=(32, 32, 32, 32)).astype(np.float32))
    w = jnp.asarray((0.05 * rng.normal(size=(64, 32, 3, 3))).astype(np.float32))
    r = jnp.asarray(rng.normal(size=(32, 64, 32, 32)).astype(np.float32))

    def conv(x, w):
        return jax.lax.conv_general_dilated(x, w, (1, 1), [(1, 1), (1, 1)], dimension_numbers=("NCHW", "OIHW", "NCHW"))

    forward = jax.jit(conv)
    # value and gradients, as fusor's step and PyTorch's compute them: jax.grad alone would let XLA
    # drop the forward convolution (the loss is linear in it), timed apart as "gradients"
    step = jax.jit(jax.value_and_grad(lambda x, w: (conv(x, w) * r).sum(), argnums=(0, 1)))
    grads = jax.jit(jax.grad(lambda x, w: (conv(x, w) * r).sum(), argnums=(0, 1)))
    return {"forward": timed(lambda: jax.block_until_ready(forward(x, w)), reps=15, warmup=2),
            "step": timed(lambda: jax.block_until_ready(step(x, w)), reps=15, warmup=2),
            "gradients": timed(lambda: jax.block_until_ready(grads(x, w)), reps=15, warmup=2)}


def jax_transformer_peer():
    """nn.TransformerEncoderLayer(128, 4, 512, pre-norm, exact GELU, causal) in jax.numpy: the
    gradients of sum(block(x) * r) for x and every parameter, jitted."""
    import jax
    import jax.numpy as jnp
    n, length, e, heads, ff = 32, 64, 128, 4, 512
    rng = np.random.default_rng(4)

    def normal(*shape, scale=1.0):
        return jnp.asarray((scale * rng.normal(size=shape)).astype(np.float32))

    p = {"in_w": normal(3 * e, e, scale=0.05), "in_b": normal(3 * e, scale=0.0), "out_w": normal(e, e, scale=0.05),
         "out_b": normal(e, scale=0.0), "l1w": normal(ff, e, scale=0.05), "l1b": normal(ff, scale=0.0),
         "l2w": normal(e, ff, scale=0.05), "l2b": normal(e, scale=0.0), "n1w": normal(e) * 0 + 1, "n1b": normal(e, scale=0.0),
         "n2w": normal(e) * 0 + 1, "n2b": normal(e, scale=0.0)}
    x, r = normal(n, length, e), normal(n, length, e)
    causal = jnp.tril(jnp.ones((length, length), dtype=bool))

    def norm(h, w, b):
        m = h.mean(-1, keepdims=True)
        v = ((h - m) ** 2).mean(-1, keepdims=True)
        return (h - m) / jnp.sqrt(v + 1e-5) * w + b

    def split(t):
        return t.reshape(n, length, heads, e // heads).transpose(0, 2, 1, 3)

    def block(p, x):
        q, k, v = jnp.split(norm(x, p["n1w"], p["n1b"]) @ p["in_w"].T + p["in_b"], 3, axis=-1)
        s = jnp.where(causal, split(q) @ split(k).transpose(0, 1, 3, 2) / np.sqrt(e // heads), -jnp.inf)
        a = (jax.nn.softmax(s, axis=-1) @ split(v)).transpose(0, 2, 1, 3).reshape(n, length, e)
        h = x + a @ p["out_w"].T + p["out_b"]
        up = jax.nn.gelu(norm(h, p["n2w"], p["n2b"]) @ p["l1w"].T + p["l1b"], approximate=False)
        return h + up @ p["l2w"].T + p["l2b"]

    step = jax.jit(jax.grad(lambda p, x: (block(p, x) * r).sum(), argnums=(0, 1)))
    return timed(lambda: jax.block_until_ready(step(p, x)), reps=15, warmup=2)


def jax_gradient_penalty_peer():
    """WGAN-GP's critic step: jax.grad of mean(D(x)) + 10 mean((|grad_x D(x)_i| - 1)^2), jitted."""
    import jax
    import jax.numpy as jnp
    x0, _, _ = problem(np.float32)
    rng = np.random.default_rng(5)
    b1, b2 = 1 / np.sqrt(IN), 1 / np.sqrt(HID)
    params = [jnp.asarray(rng.uniform(-b, b, shape).astype(np.float32))
              for b, shape in ((b1, (IN, HID)), (b1, (HID,)), (b2, (HID, 1)), (b2, (1,)))]
    x = jnp.asarray(x0)

    def critic(p, x):
        return jnp.tanh(x @ p[0] + p[1]) @ p[2] + p[3]

    def loss(p, penalised):
        value = critic(p, x).mean()
        if penalised:
            gx = jax.grad(lambda xs: critic(p, xs).sum())(x)
            value = value + 10 * ((jnp.sqrt((gx * gx).sum(axis=1)) - 1) ** 2).mean()
        return value

    step = jax.jit(jax.grad(loss), static_argnums=1)
    return {penalised: timed(lambda: jax.block_until_ready(step(params, bool(penalised))), reps=51, warmup=5)
            for penalised in (0, 1)}


def cnn_problem():
    rng = np.random.default_rng(6)
    return rng.uniform(0, 1, (32, 1, 8, 8)).astype(np.float32), rng.integers(0, 10, 32)


def torch_cnn_peer():
    import torch
    torch.set_num_threads(THREADS)
    torch.manual_seed(7)
    nn = torch.nn
    model = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(128, 10)).train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = (torch.from_numpy(a) for a in cnn_problem())

    def step():
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()

    return timed(step, reps=51, warmup=5)


def jax_cnn_peer():
    import jax
    import jax.numpy as jnp
    rng = np.random.default_rng(7)

    def uniform(bound, *shape):
        return jnp.asarray(rng.uniform(-bound, bound, shape).astype(np.float32))

    params = {"c1w": uniform(1 / 3, 16, 1, 3, 3), "c1b": uniform(1 / 3, 16), "g1": jnp.ones(16, jnp.float32), "b1": jnp.zeros(16, jnp.float32),
              "c2w": uniform(1 / 12, 32, 16, 3, 3), "c2b": uniform(1 / 12, 32), "g2": jnp.ones(32, jnp.float32), "b2": jnp.zeros(32, jnp.float32),
              "lw": uniform(1 / np.sqrt(128), 128, 10), "lb": uniform(1 / np.sqrt(128), 10)}
    f32 = jnp.float32  # (jax_peer turns x64 on for its float64 rows)
    stats = {"m1": jnp.zeros(16, f32), "v1": jnp.ones(16, f32), "m2": jnp.zeros(32, f32), "v2": jnp.ones(32, f32)}
    x, y = (jnp.asarray(a) for a in cnn_problem())

    def conv(h, w, b):
        out = jax.lax.conv_general_dilated(h, w, (1, 1), [(1, 1), (1, 1)], dimension_numbers=("NCHW", "OIHW", "NCHW"))
        return out + b[None, :, None, None]

    def norm(h, g, b):
        m = h.mean(axis=(0, 2, 3))
        v = h.var(axis=(0, 2, 3))
        return (h - m[None, :, None, None]) / jnp.sqrt(v[None, :, None, None] + 1e-5) * g[None, :, None, None] + \
            b[None, :, None, None], m, v

    def pool(h):
        n, c, height, width = h.shape
        return h.reshape(n, c, height // 2, 2, width // 2, 2).max(axis=(3, 5))

    def loss(p, s):
        h, m1, v1 = norm(conv(x, p["c1w"], p["c1b"]), p["g1"], p["b1"])
        h, m2, v2 = norm(conv(pool(jax.nn.relu(h)), p["c2w"], p["c2b"]), p["g2"], p["b2"])
        z = pool(jax.nn.relu(h)).reshape(32, 128) @ p["lw"] + p["lb"]
        value = jnp.mean(jax.nn.logsumexp(z, axis=1) - jnp.take_along_axis(z, y[:, None], axis=1)[:, 0])
        n = 32 * 8 * 8
        running = {"m1": 0.9 * s["m1"] + 0.1 * m1, "v1": 0.9 * s["v1"] + 0.1 * v1 * n / (n - 1),
                   "m2": 0.9 * s["m2"] + 0.1 * m2, "v2": 0.9 * s["v2"] + 0.1 * v2 * (n / 4) / (n / 4 - 1)}
        return value, running

    @jax.jit
    def step(p, s, mom, vel, t):
        (value, s), g = jax.value_and_grad(loss, has_aux=True)(p, s)
        mom = jax.tree_util.tree_map(lambda a, b: 0.9 * a + 0.1 * b, mom, g)
        vel = jax.tree_util.tree_map(lambda a, b: 0.999 * a + 0.001 * b * b, vel, g)
        p = jax.tree_util.tree_map(lambda w, a, b: w - 1e-3 * (a / (1 - 0.9 ** t)) / (jnp.sqrt(b / (1 - 0.999 ** t)) + 1e-8),
                                   p, mom, vel)
        return p, s, mom, vel, value

    state = [params, stats, jax.tree_util.tree_map(jnp.zeros_like, params), jax.tree_util.tree_map(jnp.zeros_like, params)]
    t = [1.0]

    def run():
        *state[:], value = step(*state, t[0])
        t[0] += 1
        jax.block_until_ready(value)

    return timed(run, reps=51, warmup=5)


def print_cnn(fusor, label, tp):
    print(f"the CNN of train_cnn_digits, batch 32 of 1x8x8, float32, training mode, one Adam step, {THREADS} thread(s)")
    for replayed, name in ((0, "tape"), (1, "replayed")):
        tf = fusor.get(("fusor_cnn_step", f"{replayed}/{THREADS}"))
        ratio = f"{tf / tp:.3f}" if tf else "-"
        print(f"  {name:9} {label} {tp * 1e3:8.3f}ms  fusor {tf * 1e3 if tf else float('nan'):8.3f}ms  fusor/{label} {ratio}")


def print_rows(fusor, label, conv, block, penalty, stack=None):
    print(f"conv2d (32, 32, 32, 32) * (64, 32, 3, 3), padding 1, float32, {THREADS} thread(s)")
    for mode, name in (("forward", "fusor_conv2d_forward"), ("step", "fusor_conv2d_step")):
        tf = fusor.get((name, str(THREADS)))
        tp = conv[mode]
        ratio = f"{tf / tp:.3f}" if tf else "-"
        print(f"  {mode:8} {label} {tp * 1e3:8.2f}ms  fusor {tf * 1e3 if tf else float('nan'):8.2f}ms  fusor/{label} {ratio}")
    if "gradients" in conv:
        tf = fusor.get(("fusor_conv2d_step", str(THREADS)))
        ratio = f"{tf / conv['gradients']:.3f}" if tf else "-"
        print(f"  {label}'s gradients alone (no loss value: its forward convolution dropped) {conv['gradients'] * 1e3:8.2f}ms"
              f"  fusor step/that {ratio}")
    print(f"transformer block (nn.TransformerEncoderLayer(128, 4, 512), pre-norm, GELU, causal), (32, 64, 128), "
          f"float32, {THREADS} thread(s), forward and backward")
    for name in ("fusor_transformer_step", "fusor_transformer_replay"):
        tf = fusor.get((name, str(THREADS)))
        ratio = f"{tf / block:.3f}" if tf else "-"
        print(f"  {name:26} {label} {block * 1e3:8.2f}ms  fusor {tf * 1e3 if tf else float('nan'):8.2f}ms  fusor/{label} {ratio}")
    if stack is not None:
        print(f"four such blocks, plain (0) and each checkpointed (1: torch.utils.checkpoint), {THREADS} thread(s)")
        for saved, tp in stack.items():
            tf = fusor.get(("fusor_transformer_stack_step", f"{saved}/{THREADS}"))
            ratio = f"{tf / tp:.3f}" if tf else "-"
            print(f"  checkpointed {saved}  {label} {tp * 1e3:8.2f}ms  fusor {tf * 1e3 if tf else float('nan'):8.2f}ms  fusor/{label} {ratio}")
    print(f"WGAN-GP critic step (784-128-1, tanh, batch {BATCH}, float32), without (0) and with (1) the gradient "
          f"penalty, {THREADS} thread(s)")
    for penalised, tp in penalty.items():
        tf = fusor.get(("fusor_gradient_penalty_step", f"{penalised}/{THREADS}"))
        ratio = f"{tf / tp:.3f}" if tf else "-"
        print(f"  penalised {penalised}  {label} {tp * 1e3:8.3f}ms  fusor {tf * 1e3 if tf else float('nan'):8.3f}ms  fusor/{label} {ratio}")


def main():
    fusor = fusor_times(sys.argv[1])
    only = sys.argv[3] if len(sys.argv) > 3 else None
    peers = {}
    for key, label, fn in (("jax", "JAX", jax_peer), ("torch", "PyTorch", torch_peer)):
        if only not in (None, key):
            continue
        try:
            for (mode, dtype), seconds in fn().items():
                peers[(f"{label} {mode}", dtype)] = seconds
        except ImportError as e:
            print(f"({label} not installed: {e}; scripts/bench learn installs JAX from PyPI and Debian's python3-torch)")
    if not peers:
        return
    print(f"threads: {THREADS}; one training step of a 784-128-10 MLP at batch {BATCH}")
    # fusor's step recorded every time (value_and_grad) and replayed (ad::compile)
    print(f"{'peer':22} {'dtype':7} {'peer':>10} {'step':>10} {'step/peer':>10} {'replay':>10} {'replay/peer':>12}")
    for (label, dtype), tp in sorted(peers.items()):
        cols = []
        for name, width in (("fusor_step", 10), ("fusor_replay", 12)):  # <bfloat16>: under ad::autocast
            tf = fusor.get((f"{name}<{dtype}>", f"{BATCH}/{THREADS}"))
            cols.append(f"{tf * 1e3:8.3f}ms {tf / tp:{width}.3f}" if tf else f"{'-':>10} {'-':>{width}}")
        print(f"{label:22} {dtype:7} {tp * 1e3:8.3f}ms {cols[0]} {cols[1]}")
    if only in (None, "torch"):
        try:
            import torch  # noqa: F401
        except ImportError:
            pass
        else:
            print_rows(fusor, "PyTorch", torch_conv_peer(), torch_transformer_peer(), torch_gradient_penalty_peer(),
                       torch_transformer_stack_peer())
            print_cnn(fusor, "PyTorch", torch_cnn_peer())
    if only in (None, "jax"):
        try:
            import jax  # noqa: F401
        except ImportError:
            pass
        else:
            print_rows(fusor, "JAX", jax_conv_peer(), jax_transformer_peer(), jax_gradient_penalty_peer())
            print_cnn(fusor, "JAX", jax_cnn_peer())

if __name__ == "__main__":
    main()
