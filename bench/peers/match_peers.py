#!/usr/bin/env python3
"""bench_match's rows in pyTME (0.3.6, NumPy/SciPy/FFTW backend), beside fusor's medians from
bench_match's JSON: prints pyTME's median time per rotation, fusor's, and pyTME/fusor (fusor's
speed-up). Usage: match_peers.py BENCH_MATCH_JSON

  scan/<score>/<n>/<m>/<threads>: match_exhaustive on an n^3 target and an m^3 template (a sphere
      mask of radius m/2 - 1), as many rotations as fusor's row (bench_match's "rotations"), cubic interpolation (pyTME's default order 3),
      MaxScoreOverRotations, the target padded by the template (pad_target_edges: pyTME's grid is
      target + template - 1 per axis, fusor's target + template // 2, which reads no wrapped value),
      job_schedule (1, threads): the rotations split over that many processes, as pyTME does;
      time per rotation, setup included as on fusor's side
  rigid_transform/<n>/<order>: pyTME's backend rigid_transform of an n^3 volume (scipy.ndimage's
      affine_transform; order 3 prefilters on every call, as pyTME's scan does)
"""
import json
import os
import sys
import warnings

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import median_seconds  # noqa: E402

import numpy as np  # noqa: E402

SCORES = {0: "CC", 4: "FLCSphericalMask", 5: "FLC"}


def fusor_medians(path):
    med = {}
    for b in json.load(open(path))["benchmarks"]:
        if b.get("aggregate_name") == "median":
            seconds = b["real_time"] * {"ms": 1e-3, "us": 1e-6, "ns": 1e-9}[b["time_unit"]]
            med[b["run_name"].replace("/real_time", "")] = (seconds, int(b.get("rotations", 1)))
    return med


def pytme_scan(score, n, m, threads, count):
    from tme.analyzer import MaxScoreOverRotations
    from tme.matching_data import MatchingData
    from tme.matching_exhaustive import MATCHING_EXHAUSTIVE_REGISTER, match_exhaustive
    from tme.rotations import get_rotation_matrices
    from tme.matching_utils import create_mask

    rng = np.random.default_rng(1)
    target = rng.uniform(-1, 1, (n, n, n)).astype(np.float32)
    template = rng.uniform(-1, 1, (m, m, m)).astype(np.float32)
    mask = create_mask("ellipse", shape=(m, m, m), radius=m / 2 - 1, center=(m // 2,) * 3).astype(np.float32)
    rotations = get_rotation_matrices(angular_sampling=30, dim=3)[:count].astype(np.float32)
    setup, scoring = MATCHING_EXHAUSTIVE_REGISTER[score]

    def run():
        data = MatchingData(target.copy(), template.copy())
        data.template_mask = mask.copy()
        data.rotations = rotations
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            match_exhaustive(matching_data=data, matching_setup=setup, matching_score=scoring,
                             callback_class=MaxScoreOverRotations, callback_class_args={},
                             job_schedule=(1, threads), pad_target_edges=True, interpolation_order=3)

    return median_seconds(run, reps=3, warmup=1) / count


def pytme_rigid_transform(n, order):
    from tme.backends import backend as be

    rng = np.random.default_rng(4)
    v = rng.uniform(-1, 1, (n, n, n)).astype(np.float32)
    out = np.zeros_like(v)
    c, s = np.cos(0.7), np.sin(0.7)
    r = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]], dtype=np.float32)
    return median_seconds(lambda: be.rigid_transform(arr=v, rotation_matrix=r, out=out, order=order,
                                                     center="geometric"), reps=9, warmup=1)


def main():
    med = fusor_medians(sys.argv[1])
    print(f"{'row (time per rotation, setup included)':40} {'pyTME':>12} {'fusor':>12}  pyTME/fusor")
    for key, (t, count) in sorted(med.items()):
        parts = key.split("/")
        if parts[0] == "fusor_scan":
            score, n, m, threads = (int(x) for x in parts[1:5])
            if score not in SCORES:
                continue
            peer = pytme_scan(SCORES[score], n, m, threads, count)
            mine = t / count
            label = f"scan/{SCORES[score]}/{n}/{m}/{threads}"
        elif parts[0] == "fusor_rigid_transform":
            n, cubic = int(parts[1]), int(parts[2])
            peer = pytme_rigid_transform(n, 3 if cubic else 1)
            mine = t
            label = f"rigid_transform/{n}/order{3 if cubic else 1}"
        else:
            continue
        print(f"{label:40} {peer * 1e3:10.3f}ms {mine * 1e3:10.3f}ms  {peer / mine:8.1f}x")


if __name__ == "__main__":
    main()
