#!/usr/bin/env python3
"""Writes the .npy fixtures that tests/generic/attention_body.hpp compares fusor's attention with:
PyTorch's on small float64 inputs written beside them, with the gradients of sum(out * r) for a
random cotangent r.

Usage (from the repository root; needs PyTorch, the fixtures are checked in because CI has none):

    build/peers-torch-venv/bin/python tests/data/make_attention_fixtures.py [output_dir]   # default: tests/data/attention

The files were made with Debian's PyTorch 1.13 (python3-torch), random normal values from NumPy's
default_rng(58). PyTorch 1.13 has no F.scaled_dot_product_attention (2.0 added it), so the a*
cases write its definition, softmax(q kᵀ · scale + mask) v, in PyTorch's operations, with
PyTorch's autograd for the gradients; the m* and e* cases run PyTorch's own modules.

Scaled dot-product attention: NAME_q, NAME_k, NAME_v, NAME_r, NAME_y, NAME_dq, NAME_dk, NAME_dv
(and NAME_mask where there is one):

  a1   q (2, 3, 5, 4), k (2, 3, 6, 4), v (2, 3, 6, 7)
  a2   a1's shapes, causal (key j > i masked for query i; L = 5, S = 6: the top-left triangle)
  a3   q (2, 3, 5, 4), k and v (3, 6, 4) (batch axes broadcast), a boolean mask (2, 1, 5, 6)
       (true: may attend; every row keeps at least one key)
  a4   q (4, 3), k (6, 3), v (6, 5) (no batch), a floating mask (4, 6) added, scale 0.3

nn.MultiheadAttention(batch_first=True): NAME_x (self) or NAME_q, NAME_kv (cross), NAME_r,
NAME_y, the gradients NAME_dx (or NAME_dq, NAME_dkv), and per parameter P (in_proj_weight,
in_proj_bias, out_proj_weight, out_proj_bias) NAME_P and NAME_dP:

  m1   embed_dim 8, 2 heads, self-attention on x (3, 5, 8)
  m2   embed_dim 8, 4 heads, query (2, 4, 8) attends key = value (2, 6, 8) under a boolean mask
       (4, 6) written as fusor takes it (NAME_mask, true: may attend; PyTorch is given ~mask)
  m3   embed_dim 6, 3 heads, unbatched self-attention on x (5, 6), causal (PyTorch: an additive
       -inf upper triangle)

nn.TransformerEncoderLayer(batch_first=True, dropout=0): NAME_x, NAME_r, NAME_y, NAME_dx, and
per parameter P (its state_dict name, dots as underscores) NAME_P and NAME_dP:

  e1   d_model 8, 2 heads, dim_feedforward 16, norm_first, GELU, causal; x (2, 5, 8)
  e2   d_model 8, 4 heads, dim_feedforward 12, post-norm, ReLU; x (3, 4, 8)

nn.TransformerDecoderLayer(batch_first=True, dropout=0): NAME_tgt, NAME_memory, NAME_r, NAME_y,
NAME_dtgt, NAME_dmemory, per parameter NAME_P and NAME_dP as above (and NAME_pad, PyTorch's
memory_key_padding_mask, true: padding):

  d1   d_model 8, 2 heads, dim_feedforward 16, norm_first, GELU, a causal target mask; tgt (2, 5, 8),
       memory (2, 6, 8) with a key padding mask (2, 6)
  d2   d_model 8, 4 heads, dim_feedforward 12, post-norm, ReLU, no mask; unbatched tgt (4, 8),
       memory (3, 8)
"""
import os
import sys

import numpy as np
import torch

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "attention")
os.makedirs(out, exist_ok=True)
g = np.random.default_rng(58)
torch.manual_seed(58)


def save(name, a):
    np.save(os.path.join(out, name + ".npy"), np.ascontiguousarray(a.detach().numpy() if torch.is_tensor(a) else a))


def normal(*shape):
    return torch.tensor(g.standard_normal(shape), dtype=torch.float64, requires_grad=True)


def causal_additive(L, S):
    return torch.triu(torch.full((L, S), float("-inf"), dtype=torch.float64), diagonal=1)


def sdpa(name, qs, ks, vs, causal=False, mask=None, scale=None):
    q, k, v = normal(*qs), normal(*ks), normal(*vs)
    s = q @ k.transpose(-1, -2) * (scale if scale is not None else 1 / np.sqrt(qs[-1]))
    if causal:
        s = s + causal_additive(qs[-2], ks[-2])
    if mask is not None:
        s = s.masked_fill(~torch.tensor(mask), float("-inf")) if mask.dtype == bool else s + torch.tensor(mask)
        save(name + "_mask", mask)
    y = torch.softmax(s, -1) @ v
    r = torch.tensor(g.standard_normal(tuple(y.shape)))
    (y * r).sum().backward()
    for n, t in [("q", q), ("k", k), ("v", v), ("r", r), ("y", y)]:
        save(name + "_" + n, t)
    for n, t in [("q", q), ("k", k), ("v", v)]:
        save(name + "_d" + n, t.grad)


def randomise(module):
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.tensor(g.standard_normal(tuple(p.shape)) * 0.5))


def save_params(name, module):
    for n, p in module.named_parameters():
        save(name + "_" + n.replace(".", "_"), p)
        save(name + "_d" + n.replace(".", "_"), p.grad)


sdpa("a1", (2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 7))
sdpa("a2", (2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 7), causal=True)
m3 = g.random((2, 1, 5, 6)) < 0.6
m3[..., 0] = True  # every query keeps a key
sdpa("a3", (2, 3, 5, 4), (3, 6, 4), (3, 6, 4), mask=m3)
sdpa("a4", (4, 3), (6, 3), (6, 5), mask=g.standard_normal((4, 6)), scale=0.3)

# nn.MultiheadAttention
mha = torch.nn.MultiheadAttention(8, 2, batch_first=True).double()
randomise(mha)
x = normal(3, 5, 8)
y = mha(x, x, x, need_weights=False)[0]
r = torch.tensor(g.standard_normal(tuple(y.shape)))
(y * r).sum().backward()
for n, t in [("x", x), ("r", r), ("y", y), ("dx", x.grad)]:
    save("m1_" + n, t)
save_params("m1", mha)

mha = torch.nn.MultiheadAttention(8, 4, batch_first=True).double()
randomise(mha)
q, kv = normal(2, 4, 8), normal(2, 6, 8)
mask = g.random((4, 6)) < 0.6
mask[:, 0] = True
y = mha(q, kv, kv, attn_mask=torch.tensor(~mask), need_weights=False)[0]
r = torch.tensor(g.standard_normal(tuple(y.shape)))
(y * r).sum().backward()
for n, t in [("q", q), ("kv", kv), ("mask", mask), ("r", r), ("y", y), ("dq", q.grad), ("dkv", kv.grad)]:
    save("m2_" + n, t)
save_params("m2", mha)

mha = torch.nn.MultiheadAttention(6, 3, batch_first=True).double()
randomise(mha)
x = normal(5, 6)
y = mha(x, x, x, attn_mask=causal_additive(5, 5), need_weights=False)[0]
r = torch.tensor(g.standard_normal(tuple(y.shape)))
(y * r).sum().backward()
for n, t in [("x", x), ("r", r), ("y", y), ("dx", x.grad)]:
    save("m3_" + n, t)
save_params("m3", mha)

# nn.TransformerEncoderLayer
for name, d, heads, ff, norm_first, act, causal, xs in [("e1", 8, 2, 16, True, "gelu", True, (2, 5, 8)),
                                                         ("e2", 8, 4, 12, False, "relu", False, (3, 4, 8))]:
    layer = torch.nn.TransformerEncoderLayer(d, heads, ff, dropout=0.0, activation=act, batch_first=True,
                                             norm_first=norm_first).double()
    randomise(layer)
    x = normal(*xs)
    y = layer(x, src_mask=causal_additive(xs[-2], xs[-2]) if causal else None)
    r = torch.tensor(g.standard_normal(tuple(y.shape)))
    (y * r).sum().backward()
    for n, t in [("x", x), ("r", r), ("y", y), ("dx", x.grad)]:
        save(name + "_" + n, t)
    save_params(name, layer)

# nn.TransformerDecoderLayer
for name, d, heads, ff, norm_first, act, causal, ts, ms, padded in [
        ("d1", 8, 2, 16, True, "gelu", True, (2, 5, 8), (2, 6, 8), True),
        ("d2", 8, 4, 12, False, "relu", False, (4, 8), (3, 8), False)]:
    layer = torch.nn.TransformerDecoderLayer(d, heads, ff, dropout=0.0, activation=act, batch_first=True,
                                             norm_first=norm_first).double()
    randomise(layer)
    tgt, memory = normal(*ts), normal(*ms)
    pad = None
    if padded:
        pad = g.random((ms[0], ms[1])) < 0.4
        pad[:, 0] = False  # every query keeps a key
        save(name + "_pad", pad)
    y = layer(tgt, memory, tgt_mask=causal_additive(ts[-2], ts[-2]) if causal else None,
              memory_key_padding_mask=torch.tensor(pad) if padded else None)
    r = torch.tensor(g.standard_normal(tuple(y.shape)))
    (y * r).sum().backward()
    for n, t in [("tgt", tgt), ("memory", memory), ("r", r), ("y", y), ("dtgt", tgt.grad), ("dmemory", memory.grad)]:
        save(name + "_" + n, t)
    save_params(name, layer)
