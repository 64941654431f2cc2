#!/usr/bin/env python3
"""bench_match's rows in pyTME (0.3.6, NumPy/SciPy/FFTW backend), beside fusor's medians from
bench_match's JSON: prints pyTME's median time per rotation, fusor's, and pyTME/fusor (fusor's
speed-up). Usage: match_peers.py BENCH_MATCH_JSON

  scan/<score>/<n0>x<n1>x<n2>/<m>/<threads>/<edges>: the same on bench_match's non-cubic targets
      (fusor_scan_box rows), edges wrap: pyTME's default (no padding, its grid the target's own
      shape), zeros: pad_target_edges as above
  scan/<score>/<n>/<m>/<threads>: match_exhaustive on an n^3 target and an m^3 template (a sphere
      mask of radius m/2 - 1), as many rotations as fusor's row (bench_match's "rotations"), cubic interpolation (pyTME's default order 3),
      MaxScoreOverRotations, the target padded by the template (pad_target_edges: pyTME's grid is
      target + template - 1 per axis, fusor's target + template // 2, which reads no wrapped value),
      job_schedule (1, threads): the rotations split over that many processes, as pyTME does;
      time per rotation, setup included as on fusor's side
  rigid_transform/<n>/<order>: pyTME's backend rigid_transform of an n^3 volume (scipy.ndimage's
      affine_transform; order 3 prefilters on every call, as pyTME's scan does)

Usage: match_peers.py tilted FUSOR_MATCH WORK [--size X Y Z] [--template M] [--step DEG] [--contrast C ...]

  A simulated tilt series (fusor-match simulate --tilt-series) searched by fusor-match with a
  wedge only, by fusor-match weighted by the series, and by pyTME's match_template weighted by the
  same series (its files written from the simulation's STAR): the copies each recovers at 0 and 1
  false positives by one peak rule, and the time per rotation (see tilted()).

Usage: match_peers.py proteins FUSOR_MATCH WORK [--size X Y Z] [--voxel A] [--box M] [--contrast C]

  Two real proteins (PyMOL's 1TII and IL2, Debian's pymol-data) made templates from their models,
  planted in one simulated tilt series and searched for 1TII by fusor-match (with and without the
  random-phase noise correction) and by pyTME from its own model-derived template: the 1TII copies
  found, the IL2 copies scoring among them, z of each protein's copies (see proteins()).

Usage: match_peers.py seeded FUSOR_MATCH WORK [--step DEG] [--fine DEG] [--radius R] [--cone DEG]

  The same series, a constrained search about the 20 best peaks of a coarse search: fusor-match
  --seeds against pyTME's --orientations, the 1TII copies each scores and the wall time (see
  seeded()).

Usage: match_peers.py program FUSOR_MATCH WORK [--size N] [--template M] [--step DEG] [--reps R]

  The whole program against pyTME's own command-line programs: `fusor-match simulate` plants
  copies of a template in an N^3 target; pyTME's `match_template` (FLCSphericalMask, angular
  sampling DEG, the planted mask, -n 1 and 2 processes) and `fusor-match match` (the same
  rotations, written by this script from pyTME's get_rotation_matrices as a rotation file, the
  same mask and score, --threads 1 and 2) run end to end, each the median wall time of R runs,
  divided by the rotations. fusor runs twice: with --edges wrap, pyTME's default convention (its
  correlation is circular on the target's own grid, so the edge band reads the opposite face),
  and with its own default --edges zeros (zeros beyond the target, on a grid padded by half a
  template). Then the score maps are correlated with pyTME's: wrap over every voxel, zeros where
  the template lies inside the target (where the two conventions agree on what is scored); and
  pyTME's `postprocess` and `fusor-match peaks` (on the wrap run) call as many peaks as were
  planted: same voxels, same rotations?
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


def pytme_scan(score, n, m, threads, count, pad=True):
    from tme.analyzer import MaxScoreOverRotations
    from tme.matching_data import MatchingData
    from tme.matching_exhaustive import MATCHING_EXHAUSTIVE_REGISTER, match_exhaustive
    from tme.rotations import get_rotation_matrices
    from tme.matching_utils import create_mask

    rng = np.random.default_rng(1)
    target = rng.uniform(-1, 1, tuple(n) if isinstance(n, tuple) else (n, n, n)).astype(np.float32)
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
                             job_schedule=(1, threads), pad_target_edges=pad, interpolation_order=3)

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
        elif parts[0] == "fusor_scan_box":
            score, n0, n1, n2, m, threads, wrap = (int(x) for x in parts[1:8])
            if score not in SCORES:
                continue
            peer = pytme_scan(SCORES[score], (n0, n1, n2), m, threads, count, pad=not wrap)
            mine = t / count
            label = f"scan/{SCORES[score]}/{n0}x{n1}x{n2}/{m}/{threads}/{'wrap' if wrap else 'zeros'}"
        elif parts[0] == "fusor_rigid_transform":
            n, cubic = int(parts[1]), int(parts[2])
            peer = pytme_rigid_transform(n, 3 if cubic else 1)
            mine = t
            label = f"rigid_transform/{n}/order{3 if cubic else 1}"
        else:
            continue
        print(f"{label:40} {peer * 1e3:10.3f}ms {mine * 1e3:10.3f}ms  {peer / mine:8.1f}x")


def _median_wall(cmd, reps, env):
    import subprocess
    import time
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env)
        times.append(time.perf_counter() - t0)
        if p.returncode != 0:
            sys.exit(f"failed ({p.returncode}): {' '.join(map(str, cmd))}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    return sorted(times)[len(times) // 2]


def _pytme_rotation_file(step, path):
    """pyTME's own rotation set for this sampling (what its match_template searches), in its order,
    written as a fusor-match --rotations file; returns the quaternions (x y z w). pyTME rotates the
    template by the inverse of its matrices relative to fusor's quaternions: fusor gets the
    transposes, so that rotation i is the same orientation in both programs."""
    from scipy.spatial.transform import Rotation
    from tme.rotations import get_rotation_matrices
    mats = get_rotation_matrices(angular_sampling=step, dim=3, use_optimized_set=True)
    quats = Rotation.from_matrix(np.transpose(mats, (0, 2, 1))).as_quat()
    with open(path, "w") as f:
        f.write("# pyTME's get_rotation_matrices(angular_sampling=%g, use_optimized_set=True), transposed: w x y z\n" % step)
        for x, y, z, w in quats:
            f.write(f"{w:.17g} {x:.17g} {y:.17g} {z:.17g}\n")
    return quats


def program(argv):
    import argparse
    import importlib.metadata
    import subprocess
    import mrcfile
    from tme.matching_utils import load_pickle

    ap = argparse.ArgumentParser(prog="match_peers.py program")
    ap.add_argument("fusor_match")
    ap.add_argument("work")
    ap.add_argument("--size", type=int, default=128)
    ap.add_argument("--template", type=int, default=21)
    ap.add_argument("--step", type=float, default=30.0)
    ap.add_argument("--copies", type=int, default=6)
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args(argv)
    bindir = os.path.dirname(sys.executable)
    os.makedirs(a.work, exist_ok=True)
    sim = os.path.join(a.work, "sim")
    subprocess.run([a.fusor_match, "simulate", "-o", sim, "--size", *[str(a.size)] * 3, "--template-size",
                    str(a.template), "--copies", str(a.copies), "--angular-step", str(a.step), "--seed", "11"],
                   check=True, capture_output=True)
    rot_file = os.path.join(a.work, "rotations.txt")
    quats = _pytme_rotation_file(a.step, rot_file)
    count = len(quats)
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    tgt, tpl, msk = (os.path.join(sim, f) for f in ("target.mrc", "template.mrc", "mask.mrc"))
    print(f"fusor-match against pyTME {importlib.metadata.version('pytme')}'s command-line programs: {a.size}^3 target, "
          f"{a.template}^3 template, {a.copies} planted copies, FLCSphericalMask, {count} rotations ({a.step:g} degrees); "
          f"end to end, median of {a.reps} runs")
    print(f"{'threads':>8} {'pyTME':>14} {'fusor wrap':>14} {'pyTME/fusor':>12} {'fusor zeros':>14} {'pyTME/fusor':>12}"
          "   (time per rotation)")
    for t in (1, 2):
        py_out = os.path.join(a.work, f"pytme{t}.pickle")
        py_s = _median_wall([os.path.join(bindir, "match_template"), "-m", tgt, "-i", tpl, "-I", msk, "-a", a.step,
                             "-s", "FLCSphericalMask", "-n", t, "-o", py_out], a.reps, env)
        fm_s = {}
        for edges in ("wrap", "zeros"):
            fm_s[edges] = _median_wall([a.fusor_match, "match", "-t", tgt, "-m", tpl, "--mask", msk, "--rotations", rot_file,
                                        "-s", "FLCSphericalMask", "--edges", edges, "--threads", t, "-q", "-o",
                                        os.path.join(a.work, f"fusor{t}{edges}")], a.reps, env)
        print(f"{t:>8} {py_s / count * 1e3:11.2f} ms {fm_s['wrap'] / count * 1e3:11.2f} ms {py_s / fm_s['wrap']:11.1f}x"
              f" {fm_s['zeros'] / count * 1e3:11.2f} ms {py_s / fm_s['zeros']:11.1f}x")
    # the maps (pyTME's arrays are indexed x, y, z; an MRC file's data reads z, y, x)
    py = load_pickle(os.path.join(a.work, "pytme1.pickle"))
    ps, pr = py[0], py[2]
    r = a.template // 2
    inside = np.s_[r:-r, r:-r, r:-r]
    for edges, region, where in (("wrap", np.s_[:, :, :], "every voxel"),
                                 ("zeros", inside, "the voxels where the template lies inside the target")):
        out = os.path.join(a.work, f"fusor1{edges}")
        fs = np.asarray(mrcfile.read(os.path.join(out, "scores.mrc"))).T
        fr = np.asarray(mrcfile.read(os.path.join(out, "rotations.mrc"))).T.astype(np.int64)
        cc = np.corrcoef(fs[region].ravel(), ps[region].ravel())[0, 1]
        print(f"score maps, --edges {edges}: correlation {cc:.9f} over {where} (max |difference| "
              f"{np.abs(fs[region] - ps[region]).max():.2g}); the same best rotation at {100 * np.mean(fr[region] == pr[region]):.3f}%"
              " of them")
    fr = np.asarray(mrcfile.read(os.path.join(a.work, "fusor1wrap", "rotations.mrc"))).T.astype(np.int64)
    # the peaks: as many as were planted, at least a template radius apart
    subprocess.run([os.path.join(bindir, "postprocess"), "--input-file", os.path.join(a.work, "pytme1.pickle"),
                    "--output-format", "orientations", "--num-peaks", str(a.copies), "--min-distance", str(r),
                    "--output-prefix", os.path.join(a.work, "pytme_peaks")], check=True, capture_output=True, env=env)
    subprocess.run([a.fusor_match, "peaks", "-i", os.path.join(a.work, "fusor1wrap"), "-n", str(a.copies), "-d", str(r), "-q"],
                   check=True, capture_output=True)
    py_peaks = [l.split("\t") for l in open(os.path.join(a.work, "pytme_peaks.tsv")).read().splitlines()[1:]]
    fm_peaks = [l.split("\t") for l in open(os.path.join(a.work, "fusor1wrap", "peaks.tsv")).read().splitlines()[1:]]
    py_set = sorted((int(float(p[0])), int(float(p[1])), int(float(p[2]))) for p in py_peaks)
    fm_set = sorted((int(p[0]), int(p[1]), int(p[2])) for p in fm_peaks)
    truth = sorted(tuple(int(v) for v in l.split("\t")[:3]) for l in open(os.path.join(sim, "truth.tsv")).read().splitlines()[1:])
    same_rot = all(pr[p] == fr[p] for p in fm_set) if py_set == fm_set else False
    # fusor's RELION 5 STAR file read back by the starfile package (installed beside pyTME)
    import starfile
    star = starfile.read(os.path.join(a.work, "fusor1wrap", "peaks.star"))
    star_set = sorted(zip(star["rlnCoordinateX"].astype(int), star["rlnCoordinateY"].astype(int),
                          star["rlnCoordinateZ"].astype(int)))
    print(f"peaks: pyTME {len(py_set)}, fusor {len(fm_set)}; the same voxels: {py_set == fm_set}; the same rotations: "
          f"{same_rot}; the planted copies: {fm_set == truth}; starfile reads fusor's STAR rows: {star_set == fm_set}")


def _peaks(scores, r):
    """A best-score map's local maxima at least r voxels apart, none within r of a face, in score
    order."""
    from scipy.ndimage import maximum_filter
    top = maximum_filter(scores, size=2 * r + 1, mode="constant", cval=-np.inf)
    inside = np.zeros(scores.shape, bool)
    inside[r:-r, r:-r, r:-r] = True
    peaks = np.argwhere((scores == top) & inside)
    return peaks[np.argsort(-scores[tuple(peaks.T)], kind="stable")]


def _found_at(scores, truth, r, fps, tolerance):
    """Copies recovered when the peaks (_peaks) are taken in score order down to the (fps + 1)-th
    that is no copy: the recall at fps false positives, the same rule for every program's map. A
    peak within `tolerance` voxels of a copy not yet found finds it."""
    found, false = set(), 0
    for p in _peaks(scores, r):
        near = [i for i, t in enumerate(truth) if i not in found and np.sum((p - t) ** 2) <= tolerance ** 2]
        if near:
            found.add(near[0])
        else:
            false += 1
            if false > fps:
                break
    return len(found)


def _copy_z(scores, points, r, tolerance):
    """Each point's best score within `tolerance` voxels, in robust standard deviations of the map
    (1.4826 median absolute deviations from its median, faces excluded), and the map's (median,
    spread) they were measured from."""
    inner = scores[r:-r, r:-r, r:-r]
    med = np.median(inner)
    sd = 1.4826 * np.median(np.abs(inner - med))
    z = []
    for t in points:
        lo = np.maximum(t - tolerance, 0)
        z.append((scores[lo[0]:t[0] + tolerance + 1, lo[1]:t[1] + tolerance + 1, lo[2]:t[2] + tolerance + 1].max() - med) / sd)
    return np.array(z), med, sd


def _separation(scores, truth, r, tolerance):
    """How far the copies stand out of the map's noise (_copy_z): the mean and the least of the
    copies' z, and the z of the highest peak that is no copy."""
    z, med, sd = _copy_z(scores, truth, r, tolerance)
    false = [p for p in _peaks(scores, r) if np.min(np.sum((truth - p) ** 2, axis=1)) > tolerance ** 2]
    return np.mean(z), np.min(z), (scores[tuple(false[0])] - med) / sd


def _pytme_series_files(sim, voxel):
    """The simulated series for pyTME, from the tilt-series STAR the simulation wrote: the angles
    with the dose accumulated before each tilt as the weights column (tilts.tsv), and the per-tilt
    CTF as CTFFIND4 writes it (ctffind.txt, which fusor-match reads as well). Their paths."""
    import starfile
    ts = starfile.read(os.path.join(sim, "tilt_series", "TS.star"))
    tilts = os.path.join(sim, "tilts.tsv")
    with open(tilts, "w") as f:
        f.write("angles\tweights\n")
        for ang, dose in zip(ts["rlnTomoNominalStageTiltAngle"], ts["rlnMicrographPreExposure"]):
            f.write(f"{ang:.4f}\t{dose:.4f}\n")
    ctffind = os.path.join(sim, "ctffind.txt")
    with open(ctffind, "w") as f:
        f.write("# Output from CTFFind version 4.1.14 (written by match_peers.py from the simulation's STAR)\n"
                f"# Pixel size: {voxel:.3f} Angstroms ; acceleration voltage: 300.0 keV ; spherical aberration: 2.70 mm ; "
                "amplitude contrast: 0.07\n# Columns: #1 - micrograph number; #2 - defocus 1 [Angstroms]; #3 - defocus 2; "
                "#4 - azimuth of astigmatism; #5 - additional phase shift [radians]; #6 - cross correlation; #7 - spacing (in "
                "Angstroms) up to which CTF rings were fit successfully\n")
        for i, (u, v, ang) in enumerate(zip(ts["rlnDefocusU"], ts["rlnDefocusV"], ts["rlnDefocusAngle"])):
            f.write(f"{i + 1:.6f} {u:.2f} {v:.2f} {ang:.2f} 0.000000 0.100000 20.000000\n")
    return tilts, ctffind


def tilted(argv):
    """A simulated tilt series' tomogram searched three ways, each end to end with its own
    program: (a) fusor-match with a missing wedge only, (b) fusor-match weighted by the tilt series
    (--tilt-angles, --dose, --defocus: each tilt's slab, CTF and exposure filter), (c) pyTME's
    match_template weighted by the same series (--tilt-angles with the doses as weights,
    --tilt-weighting grigorieff, --ctf-file, --ctf-correction raw); the same rotations
    (pyTME's set, handed to fusor as a rotation file), mask and score (FLCSphericalMask); the
    copies each recovers at 0 and 1 false positives by one peak rule (_found_at), and the time per
    rotation at 1 and 2 threads (processes for pyTME), and how far the copies' scores stand out of
    each map's noise. (b') is (b) with both volumes whitened by the tomogram's radial power
    spectrum: a back-projection's noise is not white."""
    import argparse
    import importlib.metadata
    import subprocess
    import mrcfile
    from tme.matching_utils import load_pickle

    ap = argparse.ArgumentParser(prog="match_peers.py tilted")
    ap.add_argument("fusor_match")
    ap.add_argument("work")
    ap.add_argument("--size", type=int, nargs=3, default=[200, 200, 100])
    ap.add_argument("--template", type=int, default=21)
    ap.add_argument("--copies", type=int, default=10)
    ap.add_argument("--step", type=float, default=20.0)
    ap.add_argument("--contrast", type=float, nargs="+", default=[0.01, 0.006])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    a = ap.parse_args(argv)
    bindir = os.path.dirname(sys.executable)
    os.makedirs(a.work, exist_ok=True)
    rot_file = os.path.join(a.work, "rotations.txt")
    quats = _pytme_rotation_file(a.step, rot_file)
    count = len(quats)
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    r = a.template // 2
    print(f"a simulated tilt series ({'x'.join(map(str, a.size))} voxels of 10 Å, {a.copies} copies of a {a.template}^3 "
          f"template, ±60° in 3° steps, 2-5 µm defocus, 3 e/Å² per tilt), FLCSphericalMask over pyTME "
          f"{importlib.metadata.version('pytme')}'s {a.step:g}° set ({count} rotations), end to end, one run each")
    tol = a.template // 4  # peaks lie at least r apart; a missing wedge smears a copy's peak along z by a few voxels
    print(f"a copy is found by a peak within {tol} voxels; z: the copies' best scores (mean, least) and the highest "
          "other peak, in robust standard deviations of the map")
    print(f"{'contrast':>8} {'search':32} {'found, 0 FP':>12} {'found, 1 FP':>12} {'z copies':>12} {'z false':>8}" +
          "".join(f" {f'{t} thread(s)':>14}" for t in a.threads) + "   (time per rotation)")
    for contrast in a.contrast:
        sim = os.path.join(a.work, f"sim{contrast:g}")
        subprocess.run([a.fusor_match, "simulate", "-o", sim, "--tilt-series", "--size", *map(str, a.size), "--template-size",
                        str(a.template), "--copies", str(a.copies), "--contrast", str(contrast), "--seed", "7"],
                       check=True, capture_output=True)
        truth = np.array([[int(v) for v in l.split("\t")[:3]] for l in open(os.path.join(sim, "truth.tsv")).read().splitlines()[1:]])
        tilts, ctffind = _pytme_series_files(sim, 10.0)
        tgt, tpl, msk = (os.path.join(sim, f) for f in ("target.mrc", "template.mrc", "mask.mrc"))
        base = [a.fusor_match, "match", "-t", tgt, "-m", tpl, "--mask", msk, "--rotations", rot_file, "-s", "FLCSphericalMask",
                "--edges", "wrap", "-q"]
        searches = {
            "(a) fusor-match, wedge": base + ["--wedge", "-60", "60"],
            "(b) fusor-match, tilt series": base + ["--tilt-angles", os.path.join(sim, "TS.tlt"), "--dose",
                                                    os.path.join(sim, "dose.txt"), "--defocus", ctffind],
            "(b') the same, --whiten": base + ["--tilt-angles", os.path.join(sim, "TS.tlt"), "--dose", os.path.join(sim, "dose.txt"),
                                                "--defocus", ctffind, "--whiten"],
            "(c) pyTME, tilt series": [os.path.join(bindir, "match_template"), "-m", tgt, "-i", tpl, "-I", msk, "-a", a.step,
                                       "-s", "FLCSphericalMask", "--tilt-angles", tilts, "--tilt-weighting", "grigorieff",
                                       "--wedge-axes", "2,1", "--ctf-file", ctffind, "--ctf-correction", "raw"],
        }
        for name, cmd in searches.items():
            times, maps = [], None
            for t in a.threads:
                out = os.path.join(a.work, f"{name[1:name.index(')')]}{contrast:g}_{t}")
                pytme = name.startswith("(c)")
                full = cmd + (["-n", t, "-o", out + ".pickle"] if pytme else ["--threads", t, "-o", out])
                times.append(_median_wall(full, 1, env))
                if maps is None:  # pyTME's arrays are indexed x, y, z; an MRC file's data reads z, y, x
                    maps = load_pickle(out + ".pickle")[0] if pytme else np.asarray(mrcfile.read(os.path.join(out, "scores.mrc"))).T
            zm, zl, zf = _separation(maps, truth, r, tol)
            print(f"{contrast:>8g} {name:32} {_found_at(maps, truth, r, 0, tol):>5}/{len(truth):<6} "
                  f"{_found_at(maps, truth, r, 1, tol):>5}/{len(truth):<6} {zm:6.2f} {zl:5.2f} {zf:8.2f}" +
                  "".join(f" {s / count * 1e3:11.2f} ms" for s in times))


def _two_protein_parser(command, contrast):
    """The options of the two-protein commands (proteins, seeded)."""
    import argparse
    ap = argparse.ArgumentParser(prog=f"match_peers.py {command}")
    ap.add_argument("fusor_match")
    ap.add_argument("work")
    ap.add_argument("--size", type=int, nargs=3, default=[200, 200, 100])
    ap.add_argument("--voxel", type=float, default=6.0)
    ap.add_argument("--box", type=int, default=24)
    ap.add_argument("--copies", type=int, default=10)
    ap.add_argument("--step", type=float, default=20.0)
    ap.add_argument("--contrast", type=float, default=contrast)
    ap.add_argument("--threads", type=int, default=2)
    return ap


def _two_proteins(a):
    """The two-protein problem of proteins() and seeded(): 1TII and IL2 templates from their models
    (fusor-match template), the simulated tilt series with both planted, pyTME's own 1TII template,
    pyTME's rotation set for the step and its tilt-series files."""
    import subprocess
    from tme import Density
    demo = "/usr/share/pymol/data/demo"
    os.makedirs(a.work, exist_ok=True)
    tpl = {}
    for name in ("1tii", "il2"):
        tpl[name] = os.path.join(a.work, f"{name}.mrc")
        subprocess.run([a.fusor_match, "template", "--model", f"{demo}/{name}.pdb", "--voxel-size", str(a.voxel), "--box",
                        str(a.box), "-o", tpl[name], "-q"], check=True)
    sim = os.path.join(a.work, "sim")
    subprocess.run([a.fusor_match, "simulate", "-o", sim, "--tilt-series", "--size", *map(str, a.size), "--voxel-size", str(a.voxel),
                    "--template", tpl["1tii"], "--other", tpl["il2"], "--other-copies", str(a.copies), "--copies", str(a.copies),
                    "--contrast", str(a.contrast), "--seed", "7"], check=True, capture_output=True)
    rows = [l.split("\t") for l in open(os.path.join(sim, "truth.tsv")).read().splitlines()[1:]]
    truth = np.array([[int(v) for v in r[:3]] for r in rows if r[7] == "0"])
    other = np.array([[int(v) for v in r[:3]] for r in rows if r[7] == "1"])
    rot_file = os.path.join(a.work, "rotations.txt")
    count = len(_pytme_rotation_file(a.step, rot_file))
    # pyTME's own template from the model: its scattering-factor density at 1.5 Å (its placement
    # fails at coarser sampling, where an atom's radius is under a voxel), resampled to the
    # voxel size by its spline resampling, padded to the box about its centre of mass
    ptpl = os.path.join(a.work, "1tii_pytme.mrc")
    d = Density.from_structure(f"{demo}/1tii.pdb", sampling_rate=1.5, weight_type="scattering_factors")
    d = d.resample(new_sampling_rate=a.voxel, method="spline", order=3)
    com = np.round(d.center_of_mass(d.data)).astype(int)
    box = np.zeros((a.box,) * 3, np.float32)
    for src in np.ndindex(d.data.shape):
        dst = np.array(src) - com + a.box // 2
        if np.all(dst >= 0) and np.all(dst < a.box):
            box[tuple(dst)] = d.data[src]
    Density(box, sampling_rate=np.array([a.voxel] * 3), origin=np.zeros(3)).to_file(ptpl)
    tilts, ctffind = _pytme_series_files(sim, a.voxel)
    return dict(tpl=tpl, sim=sim, truth=truth, other=other, rot_file=rot_file, count=count, ptpl=ptpl, tilts=tilts,
                ctffind=ctffind, bindir=os.path.dirname(sys.executable))


def proteins(argv):
    """Two real proteins in one simulated tilt series, searched for one of them: PyMOL's copies of
    PDB entries 1TII (heat-labile enterotoxin IIb, 5469 atoms) and IL2 (interleukin-2, 2084 atoms)
    from Debian's pymol-data, each made a template by `fusor-match template --model` (electron
    scattering factors, B-factors), planted ten times each (`simulate --tilt-series --template
    --other`), and searched with the 1TII template: (b) fusor-match weighted by the tilt series,
    (b+n) the same with the random-phase noise correction, (c) pyTME 0.3.6 from its own
    model-derived template (Density.from_structure, the same voxel size and box) with the same
    weighting. Reported: the 1TII copies found at 0 and 1 false positives (a peak on an IL2 copy
    counts as false), the IL2 copies among the peaks above the first false one, and how far each
    protein's copies stand out of the map's noise (z), time per rotation."""
    import mrcfile
    from tme.matching_utils import load_pickle

    ap = _two_protein_parser("proteins", contrast=0.02)
    a = ap.parse_args(argv)
    t = _two_proteins(a)
    tpl, sim, truth, other, rot_file, count, ptpl, tilts, ctffind, bindir = (t[k] for k in (
        "tpl", "sim", "truth", "other", "rot_file", "count", "ptpl", "tilts", "ctffind", "bindir"))
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    tgt, msk = os.path.join(sim, "target.mrc"), os.path.join(sim, "mask.mrc")
    series = ["--tilt-angles", os.path.join(sim, "TS.tlt"), "--dose", os.path.join(sim, "dose.txt"), "--defocus", ctffind]
    base = [a.fusor_match, "match", "-t", tgt, "-m", tpl["1tii"], "--mask", msk, "--rotations", str(rot_file), "-s", "FLCSphericalMask",
            "--edges", "wrap", "-q", "--threads", str(a.threads)] + series
    searches = {
        "(b) fusor-match, tilt series": base,
        "(b+n) the same, --noise-correction": base + ["--noise-correction"],
        "(c) pyTME, its template, tilt series": [os.path.join(bindir, "match_template"), "-m", tgt, "-i", ptpl, "-I", msk, "-a",
                                                 str(a.step), "-s", "FLCSphericalMask", "--tilt-angles", tilts, "--tilt-weighting",
                                                 "grigorieff", "--wedge-axes", "2,1", "--ctf-file", ctffind, "--ctf-correction", "raw",
                                                 "-n", str(a.threads)],
    }
    r = a.box // 2
    tol = max(2, a.box // 6)
    print(f"two proteins in a simulated tilt series ({'x'.join(map(str, a.size))} voxels of {a.voxel:g} Å, {len(truth)} copies of "
          f"1TII and {len(other)} of IL2 from their PDB models, ±60° in 3° steps, 2-5 µm defocus, 3 e/Å² per tilt, contrast "
          f"{a.contrast:g}), searched for 1TII: FLCSphericalMask over pyTME's {a.step:g}° set ({count} rotations), {a.threads} "
          f"thread(s); a copy is found by a peak within {tol} voxels; an IL2 copy's peak is a false positive")
    print(f"{'search':38} {'1TII, 0 FP':>10} {'1TII, 1 FP':>10} {'IL2 above':>9} {'z 1TII':>7} {'z IL2':>7} {'z other':>7} {'time':>10}")
    for name, cmd in searches.items():
        out = os.path.join(a.work, name[1:name.index(")")].replace("+", "_"))
        pytme = name.startswith("(c)")
        seconds = _median_wall(cmd + ["-o", out + ".pickle" if pytme else out], 1, env)
        maps = load_pickle(out + ".pickle")[0] if pytme else np.asarray(mrcfile.read(os.path.join(out, "scores.mrc"))).T
        _, _, zf = _separation(maps, np.concatenate([truth, other]), r, tol)
        # the IL2 copies among the peaks down to the first that is neither protein
        above, peaks = 0, _peaks(maps, r)
        for p in peaks:
            if np.min(np.sum((truth - p) ** 2, axis=1)) <= tol ** 2:
                continue
            if np.min(np.sum((other - p) ** 2, axis=1)) <= tol ** 2:
                above += 1
                continue
            break
        print(f"{name:38} {_found_at(maps, truth, r, 0, tol):>4}/{len(truth):<5} {_found_at(maps, truth, r, 1, tol):>4}/{len(truth):<5} "
              f"{above:>9} {np.mean(_copy_z(maps, truth, r, tol)[0]):7.2f} {np.mean(_copy_z(maps, other, r, tol)[0]):7.2f} "
              f"{zf:7.2f} {seconds / count * 1e3:7.2f} ms")


def seeded(argv):
    """A constrained search about known points on the two-protein series of proteins(): the 20 best
    peaks of fusor-match's search over pyTME's coarse set (peaks.star) are the seeds of both
    programs, each searched within --radius voxels and --cone degrees of its own orientation over
    pyTME's finer set: (s) fusor-match match --seeds (each seed's box on a grid of its own),
    (p) pyTME's match_template --orientations --orientations-uncertainty --orientations-cone
    (its scan over the box that holds every seed, scores outside the seeds' constraints
    rejected). Reported: the 1TII copies among the seeds' best scores, the best score at each
    copy, and the wall time of each program (same threads)."""
    import mrcfile
    from tme.matching_utils import load_pickle

    ap = _two_protein_parser("seeded", contrast=0.06)
    ap.add_argument("--fine", type=float, default=10.0, help="the seeded search's step (--step: the coarse search's)")
    ap.add_argument("--radius", type=int, default=3)
    ap.add_argument("--cone", type=float, default=20.0)
    a = ap.parse_args(argv)
    t = _two_proteins(a)
    sim, truth, tpl, ctffind, tilts, ptpl = t["sim"], t["truth"], t["tpl"], t["ctffind"], t["tilts"], t["ptpl"]
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    tgt, msk = os.path.join(sim, "target.mrc"), os.path.join(sim, "mask.mrc")
    series = ["--tilt-angles", os.path.join(sim, "TS.tlt"), "--dose", os.path.join(sim, "dose.txt"), "--defocus", ctffind]
    common = ["-s", "FLCSphericalMask", "--edges", "wrap", "-q", "--threads", str(a.threads)] + series
    coarse = os.path.join(a.work, "coarse")
    _median_wall([a.fusor_match, "match", "-t", tgt, "-m", tpl["1tii"], "--mask", msk, "--rotations", t["rot_file"], "-o", coarse,
                  *common], 1, env)
    _median_wall([a.fusor_match, "peaks", "-i", coarse, "-n", 20, "--margin", a.box // 4, "-q"], 1, env)
    seeds = os.path.join(coarse, "peaks.star")
    fine_rot = os.path.join(a.work, "rotations_fine.txt")
    count = len(_pytme_rotation_file(a.fine, fine_rot))
    out_f, out_p = os.path.join(a.work, "seeded_fusor"), os.path.join(a.work, "seeded_pytme.pickle")
    t_f = _median_wall([a.fusor_match, "match", "-t", tgt, "-m", tpl["1tii"], "--mask", msk, "--rotations", fine_rot,
                        "--rotations-convention", "pytme", "-o", out_f, "--seeds", seeds, "--seed-radius", a.radius, "--seed-cone",
                        a.cone, *common], 1, env)
    t_p = _median_wall([os.path.join(t["bindir"], "match_template"), "-m", tgt, "-i", ptpl, "-I", msk, "-a", a.fine, "-s",
                        "FLCSphericalMask", "--tilt-angles", tilts, "--tilt-weighting", "grigorieff", "--wedge-axes", "2,1",
                        "--ctf-file", ctffind, "--ctf-correction", "raw", "-n", a.threads, "--orientations", seeds,
                        "--orientations-uncertainty", a.radius, "--orientations-cone", a.cone, "-o", out_p], 1, env)
    maps = {"(s) fusor-match --seeds": np.asarray(mrcfile.read(os.path.join(out_f, "scores.mrc"))).T,
            "(p) pyTME --orientations": np.asarray(load_pickle(out_p)[0])}
    seconds = {"(s) fusor-match --seeds": t_f, "(p) pyTME --orientations": t_p}
    table = [l.split("\t") for l in open(os.path.join(out_f, "seeds.tsv")).read().splitlines()[1:]]
    scored = sum(int(r[9]) for r in table)
    print(f"a constrained search on the two-protein series ({'x'.join(map(str, a.size))} voxels of {a.voxel:g} Å, contrast "
          f"{a.contrast:g}, {len(truth)} copies of 1TII and of IL2): the 20 best peaks of a search over pyTME's {a.step:g}° set "
          f"as seeds, each searched within {a.radius} voxels and {a.cone:g}° over pyTME's {a.fine:g}° set ({count} rotations; "
          f"fusor-match scored {scored} seed-rotations), {a.threads} thread(s)")
    print(f"{'search':28} {'1TII copies':>12} {'mean score at copies':>21} {'time':>9}")
    for name, m in maps.items():
        m = np.where(np.isfinite(m), m, -np.inf)
        at = [float(m[max(p[0] - 1, 0):p[0] + 2, max(p[1] - 1, 0):p[1] + 2, max(p[2] - 1, 0):p[2] + 2].max()) for p in truth]
        found = sum(1 for v in at if v > -np.inf and v > 0)
        print(f"{name:28} {found:>5}/{len(truth):<6} {np.mean([v for v in at if v > -np.inf] or [0]):21.4f} {seconds[name]:8.1f}s")
    print(f"pyTME/fusor time: {t_p / t_f:.1f}x")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "program":
        program(sys.argv[2:])
    elif len(sys.argv) > 1 and sys.argv[1] == "tilted":
        tilted(sys.argv[2:])
    elif len(sys.argv) > 1 and sys.argv[1] == "proteins":
        proteins(sys.argv[2:])
    elif len(sys.argv) > 1 and sys.argv[1] == "seeded":
        seeded(sys.argv[2:])
    else:
        main()
