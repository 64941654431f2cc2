#!/usr/bin/env python3
"""Checks that every header under include/fusor (.hpp and .cuh) only includes layers at or below its own.

DESIGN.md's rule: a layer only includes layers below it; core/ names the backend tags but
includes no backend header and no SIMD, CUDA, FFT or BLAS library. Never: a backend folder from
core, io, ad, vsa or match (they reach the backends through core's hooks); the cpu backend from
the cuda backend (shared host loops live in backend/host/); the fft, linalg or match front end
from a backend (only the hook declarations it specialises). The domain layers call the engine
through fusor::ext (core/ext.hpp, linalg/ext.hpp), not fusor::detail: ad, vsa, match and io
name no fusor::detail:: at all.
A header in a folder this table does not know fails the test, so a new layer states its place
here when it lands.
Usage: check_layers.py <include/fusor directory>
"""
import os
import re
import sys

# layer -> the layers its headers may include (besides itself)
ALLOWED = {
    "core": set(),
    "fft": {"core"},                        # the FFT front end and the fft_backend<B> hook
    "linalg": {"core"},                     # products over the blas<B> and lapack<B> hooks
    # host loops both backends run (sorting, unique, histograms; LAPACK): no backend tag
    "backend/host": {"core"},
    "backend/cpu": {"core", "fft", "linalg", "match", "backend/host"},
    "backend/cuda": {"core", "fft", "linalg", "match", "backend/host"},  # host round trips go through host/
    # .npy/.npz: host memory, to<B> for the rest; never a backend folder
    "io": {"core"},
    # autodiff: generic code over core (dual numbers reach a SIMD backend through core/planar.hpp),
    # FFTs and GEMMs, and io (checkpoints are .npz archives); never a backend folder
    "ad": {"core", "fft", "linalg", "io"},
    # VSA: generic code over core, FFTs (HRR), GEMMs (similarity), .npy (memories), and autodiff
    # (learned encoders); never a backend folder
    "vsa": {"core", "fft", "linalg", "io", "ad"},
    # template matching: generic code over core, FFTs (every score), GEMMs, file IO; never a backend
    "match": {"core", "fft", "linalg", "io"},
    "interop": {"core", "umbrella"},
    "umbrella": {"core", "fft", "linalg", "backend/host", "backend/cpu", "backend/cuda", "io", "interop", "ad",
                 "vsa", "match"},
}
# A backend sits above fft/, linalg/ and match/ only through their hooks: the declarations it
# specialises, never the front ends built on them (which would make every backend header pull in
# the layer).
BACKEND_HOOKS = {"fft/backend_fwd.hpp", "fft/plan_cache.hpp", "linalg/blas_fwd.hpp", "linalg/lapack_fwd.hpp", "linalg/conv_fwd.hpp",
                 "match/scan_strategy.hpp"}
# system headers no core header may include: core sees only the tag types of the backends
CORE_FORBIDDEN_SYSTEM = re.compile(r"^(xsimd/|thrust/|cub/|cuda_runtime|cufft|cublas|fftw3|cblas|omp\.h)")

# layers that reach the engine only through fusor::ext (core/ext.hpp) and the public API
EXT_ONLY = {"vsa", "match", "io", "ad"}
CORE_DETAIL = re.compile(r"\bfusor::detail::(\w+)")
COMMENT = re.compile(r"//[^\n]*")

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def layer_of(rel):
    parts = rel.split("/")
    if len(parts) == 1:
        # fft.hpp and linalg.hpp are their folders' front doors (the backends include them); fusor.hpp,
        # base.hpp, cuda.cuh and the domain layers' ad.hpp, vsa.hpp and match.hpp are umbrellas: each
        # brings the engine with a backend (base.hpp), so that it is a whole include on its own
        stem = os.path.splitext(parts[0])[0]
        return stem if stem in ("fft", "linalg") else "umbrella"
    if parts[0] == "backend":
        return "backend/" + parts[1]
    return parts[0]


def main(root):
    root = os.path.abspath(root)
    problems = []
    count = 0
    for dirpath, _, files in os.walk(root):
        for name in sorted(files):
            if not name.endswith((".hpp", ".cuh")):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            layer = layer_of(rel)
            if layer not in ALLOWED:
                problems.append(f"{rel}: folder '{layer}' has no place in tests/layering/check_layers.py's table")
                continue
            count += 1
            text = open(path, encoding="utf-8").read()
            if layer in EXT_ONLY:
                called = sorted(set(CORE_DETAIL.findall(COMMENT.sub("", text))))
                if called:
                    problems.append(f"{rel}: the {layer} layer calls fusor::detail::{', fusor::detail::'.join(called)} "
                                    f"(a layer reaches the engine through fusor::ext, core/ext.hpp)")
            for kind, target in INCLUDE.findall(text):
                if kind == "<":
                    if layer == "core" and CORE_FORBIDDEN_SYSTEM.match(target):
                        problems.append(f"{rel}: core includes <{target}> (core sees only backend tag types)")
                    continue
                resolved = os.path.normpath(os.path.join(dirpath, target))
                if not resolved.startswith(root + os.sep):
                    problems.append(f"{rel}: includes \"{target}\" from outside include/fusor")
                    continue
                target_rel = os.path.relpath(resolved, root)
                to = layer_of(target_rel)
                if to != layer and to not in ALLOWED[layer]:
                    problems.append(f"{rel}: the {layer} layer includes \"{target}\" from the {to} layer "
                                    f"(allowed: {', '.join(sorted(ALLOWED[layer])) or 'nothing else'})")
                elif layer.startswith("backend/") and to in ("fft", "linalg", "match") and target_rel not in BACKEND_HOOKS:
                    problems.append(f"{rel}: the {layer} backend includes \"{target}\", a front end of the {to} "
                                    f"layer (a backend includes only the hooks: {', '.join(sorted(BACKEND_HOOKS))})")
    for p in sorted(problems):
        print(p)
    print(f"check_layers: {count} headers, {len(problems)} problem(s)")
    return 1 if problems or count == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "include/fusor"))
