#!/usr/bin/env python3
"""Writes the .npy fixtures that tests/generic/conv_body.hpp compares fusor's convolutions with:
PyTorch's torch.nn.functional.conv1d/2d/3d on small float64 inputs written beside them, with the
gradients of sum(out * r) for a random cotangent r.

Usage (from the repository root; needs PyTorch, the fixtures are checked in because CI has none):

    build/peers-torch-venv/bin/python tests/data/make_conv_fixtures.py [output_dir]   # default: tests/data/conv

The files were made with Debian's PyTorch 1.13 (python3-torch). For each case NAME:
NAME_x, NAME_w, NAME_b (input, weight, bias; random normal, seed 53), NAME_r (the cotangent),
NAME_y (the output), NAME_dx, NAME_dw, NAME_db (the gradients). The cases:

  c1   conv1d (2, 3, 11) * (4, 3, 3), stride 2, padding 1
  c2   conv2d (2, 4, 7, 6) * (6, 2, 3, 3), stride (2, 1), padding (1, 2), dilation (1, 2), groups 2
  c2s  conv2d (1, 3, 8, 9) * (5, 3, 4, 2), padding 'same', dilation (1, 3): an even kernel
  c2d  conv2d (3, 4, 5, 5) * (4, 1, 3, 3), padding 1, groups 4 (depthwise), unbatched input
       taken as (4, 5, 5) from batch item 1 (NAME_x1, NAME_y1)
  c3   conv3d (1, 2, 5, 6, 4) * (3, 2, 2, 3, 2), stride (1, 2, 1), padding (0, 1, 1)

And pooling (seed 54): NAME_x, NAME_r, NAME_y and NAME_dx (the gradient of sum(out * r)):

  p1   max_pool2d (2, 3, 7, 6), kernel (3, 2), stride 2, padding 1
  p2   max_pool1d (2, 3, 11), kernel 3, stride 2, padding 1, dilation 2
  p3   max_pool3d (1, 2, 5, 6, 4), kernel 2
  p4   max_pool2d (2, 2, 6, 6) of small integers (ties: the first maximum takes the gradient), kernel 3, stride 1
  p5   avg_pool2d (2, 3, 7, 6), kernel (2, 3), stride (1, 2), padding 1 (zeros counted)

And normalisation (seed 55), with NAME_w, NAME_b, NAME_dw, NAME_db as well:

  n1   group_norm (2, 6, 5, 4), 3 groups, a weight and a bias per channel
  n2   instance_norm (2, 3, 7), a weight and a bias per channel

And batch_norm (seed 56): NAME_x, NAME_w, NAME_b, NAME_r, NAME_y, NAME_dx, NAME_dw, NAME_db, and
NAME_rm0, NAME_rv0 (the running statistics before) and NAME_rm, NAME_rv (after):

  b1   training, (4, 3, 5, 2), momentum 0.1, running statistics zeros and ones, three calls (the
       outputs and gradients are the third call's)
  b2   evaluation, (3, 2, 7), running statistics random

And transposed convolutions (seed 57), the files of a convolution case:

  t1   conv_transpose1d (2, 4, 6) * (4, 3, 3), stride 2, padding 1, output_padding 1
  t2   conv_transpose2d (2, 4, 5, 4) * (4, 3, 3, 2), stride (2, 1), padding (1, 0), dilation (1, 2), groups 2 (6 out)
  t3   conv_transpose3d (1, 2, 3, 4, 2) * (2, 2, 2, 3, 2), stride 2, output_padding (1, 0, 1)
And resampling (seed 59): NAME_x, NAME_r, NAME_y, NAME_dx:

  r1   adaptive_avg_pool2d (2, 3, 7, 5) to (3, 2) (overlapping windows of 3 and 2 rows)
  r2   adaptive_avg_pool1d (2, 3, 10) to 4
  r3   adaptive_avg_pool3d (1, 2, 5, 6, 4) to (2, 3, 1)
  u1   interpolate nearest (2, 3, 4, 5) to size (7, 10)
  u2   interpolate bilinear (2, 2, 4, 5), scale_factor 2
  u3   interpolate bilinear (1, 2, 5, 4) to size (3, 7), align_corners
  u4   interpolate linear (2, 3, 6), scale_factor 1.5
  u5   interpolate trilinear (1, 2, 3, 4, 2) to size (5, 3, 4)
  u6   interpolate nearest (2, 2, 5), scale_factor 2.5
"""
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "conv")
os.makedirs(out, exist_ok=True)
g = np.random.default_rng(53)


def save(name, a):
    np.save(os.path.join(out, name + ".npy"), np.ascontiguousarray(a.detach().numpy() if torch.is_tensor(a) else a))


def case(name, conv, xs, ws, **kw):
    x = torch.tensor(g.normal(size=xs), requires_grad=True)
    w = torch.tensor(g.normal(size=ws), requires_grad=True)
    b = torch.tensor(g.normal(size=ws[0]), requires_grad=True)
    y = conv(x, w, b, **kw)
    r = torch.tensor(g.normal(size=tuple(y.shape)))
    (y * r).sum().backward()
    for k, v in [("x", x), ("w", w), ("b", b), ("r", r), ("y", y), ("dx", x.grad), ("dw", w.grad), ("db", b.grad)]:
        save(f"{name}_{k}", v)
    return x, w, b


case("c1", F.conv1d, (2, 3, 11), (4, 3, 3), stride=2, padding=1)
case("c2", F.conv2d, (2, 4, 7, 6), (6, 2, 3, 3), stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2)
case("c2s", F.conv2d, (1, 3, 8, 9), (5, 3, 4, 2), padding="same", dilation=(1, 3))
x, w, b = case("c2d", F.conv2d, (3, 4, 5, 5), (4, 1, 3, 3), padding=1, groups=4)
x1 = x.detach()[1]
save("c2d_x1", x1)
save("c2d_y1", F.conv2d(x1, w.detach(), b.detach(), padding=1, groups=4))
case("c3", F.conv3d, (1, 2, 5, 6, 4), (3, 2, 2, 3, 2), stride=(1, 2, 1), padding=(0, 1, 1))

g = np.random.default_rng(54)


def pool(name, fn, x, **kw):
    x = torch.tensor(x, requires_grad=True)
    y = fn(x, **kw)
    r = torch.tensor(g.normal(size=tuple(y.shape)))
    (y * r).sum().backward()
    for k, v in [("x", x), ("r", r), ("y", y), ("dx", x.grad)]:
        save(f"{name}_{k}", v)


pool("p1", F.max_pool2d, g.normal(size=(2, 3, 7, 6)), kernel_size=(3, 2), stride=2, padding=1)
pool("p2", F.max_pool1d, g.normal(size=(2, 3, 11)), kernel_size=3, stride=2, padding=1, dilation=2)
pool("p3", F.max_pool3d, g.normal(size=(1, 2, 5, 6, 4)), kernel_size=2)
pool("p4", F.max_pool2d, g.integers(0, 3, size=(2, 2, 6, 6)).astype(np.float64), kernel_size=3, stride=1)
pool("p5", F.avg_pool2d, g.normal(size=(2, 3, 7, 6)), kernel_size=(2, 3), stride=(1, 2), padding=1)

g = np.random.default_rng(55)


def norm(name, fn, xs, channels, **kw):
    x = torch.tensor(g.normal(size=xs), requires_grad=True)
    w = torch.tensor(g.normal(size=channels), requires_grad=True)
    b = torch.tensor(g.normal(size=channels), requires_grad=True)
    y = fn(x, weight=w, bias=b, **kw)
    r = torch.tensor(g.normal(size=tuple(y.shape)))
    (y * r).sum().backward()
    for k, v in [("x", x), ("w", w), ("b", b), ("r", r), ("y", y), ("dx", x.grad), ("dw", w.grad), ("db", b.grad)]:
        save(f"{name}_{k}", v)


norm("n1", lambda x, **kw: F.group_norm(x, 3, **kw), (2, 6, 5, 4), 6)
norm("n2", F.instance_norm, (2, 3, 7), 3)

g = np.random.default_rng(56)


def bn(name, xs, channels, training, calls):
    x = torch.tensor(g.normal(size=xs), requires_grad=True)
    w = torch.tensor(g.normal(size=channels), requires_grad=True)
    b = torch.tensor(g.normal(size=channels), requires_grad=True)
    if training:
        rm, rv = torch.zeros(channels, dtype=torch.float64), torch.ones(channels, dtype=torch.float64)
    else:
        rm, rv = torch.tensor(g.normal(size=channels)), torch.tensor(g.uniform(0.5, 2, size=channels))
    save(f"{name}_rm0", rm.clone())
    save(f"{name}_rv0", rv.clone())
    for _ in range(calls):
        y = F.batch_norm(x, rm, rv, w, b, training=training, momentum=0.1, eps=1e-5)
    r = torch.tensor(g.normal(size=tuple(y.shape)))
    (y * r).sum().backward()
    for k, v in [("x", x), ("w", w), ("b", b), ("r", r), ("y", y), ("dx", x.grad), ("dw", w.grad), ("db", b.grad),
                 ("rm", rm), ("rv", rv)]:
        save(f"{name}_{k}", v)


bn("b1", (4, 3, 5, 2), 3, True, 3)
bn("b2", (3, 2, 7), 2, False, 1)

g = np.random.default_rng(57)


def tcase(name, conv, xs, ws, out_channels, **kw):
    x = torch.tensor(g.normal(size=xs), requires_grad=True)
    w = torch.tensor(g.normal(size=ws), requires_grad=True)
    b = torch.tensor(g.normal(size=out_channels), requires_grad=True)
    y = conv(x, w, b, **kw)
    r = torch.tensor(g.normal(size=tuple(y.shape)))
    (y * r).sum().backward()
    for k, v in [("x", x), ("w", w), ("b", b), ("r", r), ("y", y), ("dx", x.grad), ("dw", w.grad), ("db", b.grad)]:
        save(f"{name}_{k}", v)


tcase("t1", F.conv_transpose1d, (2, 4, 6), (4, 3, 3), 3, stride=2, padding=1, output_padding=1)
tcase("t2", F.conv_transpose2d, (2, 4, 5, 4), (4, 3, 3, 2), 6, stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups=2)
tcase("t3", F.conv_transpose3d, (1, 2, 3, 4, 2), (2, 2, 2, 3, 2), 2, stride=2, output_padding=(1, 0, 1))

g = np.random.default_rng(59)


def resample(name, fn, xs, **kw):
    x = torch.tensor(g.normal(size=xs), requires_grad=True)
    y = fn(x, **kw)
    r = torch.tensor(g.normal(size=tuple(y.shape)))
    (y * r).sum().backward()
    for k, v in [("x", x), ("r", r), ("y", y), ("dx", x.grad)]:
        save(f"{name}_{k}", v)


resample("r1", F.adaptive_avg_pool2d, (2, 3, 7, 5), output_size=(3, 2))
resample("r2", F.adaptive_avg_pool1d, (2, 3, 10), output_size=4)
resample("r3", F.adaptive_avg_pool3d, (1, 2, 5, 6, 4), output_size=(2, 3, 1))
resample("u1", F.interpolate, (2, 3, 4, 5), size=(7, 10), mode="nearest")
resample("u2", F.interpolate, (2, 2, 4, 5), scale_factor=2, mode="bilinear", align_corners=False)
resample("u3", F.interpolate, (1, 2, 5, 4), size=(3, 7), mode="bilinear", align_corners=True)
resample("u4", F.interpolate, (2, 3, 6), scale_factor=1.5, mode="linear")
resample("u5", F.interpolate, (1, 2, 3, 4, 2), size=(5, 3, 4), mode="trilinear")
resample("u6", F.interpolate, (2, 2, 5), scale_factor=2.5, mode="nearest")
