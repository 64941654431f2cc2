#!/usr/bin/env python3
"""The fusor-match program tested through its command line (ctest runs each mode):

  end_to_end BIN WORK   simulate -> match -> peaks -> preview: every planted copy is found at its
                        voxel with its rotation, nothing else passes the one-false-positive
                        threshold; the output folder holds the maps, the rotation table and the
                        metadata; the STAR file's loop has one row per peak with RELION 5's
                        columns; the preview PNG decodes to the layout's size with the peaks in red;
                        stats' noise fit, SVG (parsed) and table, and the top-hat filter's peaks
  errors BIN WORK       every error path gives its message and a non-zero exit before any work,
                        leaving no output files
  starfile BIN WORK     the STAR file read back by the starfile package (RELION users' reader):
                        its rows are the TSV's peaks, coordinates in voxels and Å, the planted
                        ZYZ angles (exit 77: skipped, without starfile; scripts/deps installs it)
  folder BIN WORK       a result folder always holds one whole result: a run killed after each
                        step of its writing (FUSOR_MATCH_TEST_KILL_AT), a full disk (a file-size
                        limit), a second writer while the first runs, a part from another result,
                        a file of the user's in the folder; a new result removes what was derived
                        from the old one (peaks, preview) and the temporaries of dead runs
  templates BIN WORK    template and mask: a template from a real structure (PyMOL's 1tii.pdb,
                        Debian's pymol-data) integrates to its forward scattering by the published
                        factors; its mmCIF (written by gemmi's own program) and gzipped copies give
                        the same voxels; a map resampled keeps its integral; masks by their
                        definitions, a tight one against brute-force distances
  mpi BIN WORK MPIRUN   mpirun -n 2 gives the one-process maps byte for byte; a bad input ends
                        the job with its message; a rank interrupted (SIGINT) or killed part-way
                        through its scan ends the job, and no map is written (exit 77: skipped,
                        without MPI or mpirun)
"""
import json
import os
import re
import resource
import shutil
import signal
import struct
import subprocess
import sys
import time


def run(*args, ok=True):
    p = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    if ok and p.returncode != 0:
        sys.exit(f"FAILED ({p.returncode}): {' '.join(map(str, args))}\n{p.stdout}\n{p.stderr}")
    return p


def read_star_loop(path):
    """The first loop_ of a STAR file: column names and rows of fields (whitespace separated)."""
    names, rows, in_loop = [], [], False
    for line in open(path):
        s = line.strip()
        if s == "loop_":
            in_loop = True
        elif in_loop and s.startswith("_"):
            names.append(s.split()[0][1:])
        elif in_loop and s and not s.startswith("#"):
            rows.append(s.split())
    return names, rows


def end_to_end(bin_, work):
    sim, out = os.path.join(work, "sim"), os.path.join(work, "out")
    run(bin_, "simulate", "-o", sim, "--size", 48, 44, 40, "--template-size", 13, "--copies", 2, "--seed", 5,
        "--angular-step", 45)
    run(bin_, "match", "-t", f"{sim}/target.mrc", "-m", f"{sim}/template.mrc", "--mask", f"{sim}/mask.mrc", "-o", out,
        "-a", 45, "--planning", "estimate")
    for f in ("scores.mrc", "rotations.mrc", "rotations.tsv", "metadata.json"):
        assert os.path.isfile(os.path.join(out, f)), f"match wrote no {f}"
    assert not [f for f in os.listdir(out) if f.startswith(".")], f"temporary files left: {os.listdir(out)}"
    meta = json.load(open(os.path.join(out, "metadata.json")))
    assert meta["score"] == "FLCSphericalMask" and meta["target_shape"] == [48, 44, 40], meta
    assert meta["rotations"]["count"] == len(open(os.path.join(out, "rotations.tsv")).readlines()) - 1
    assert meta["statistics"]["count"] == 48 * 44 * 40 * meta["rotations"]["count"], meta["statistics"]
    assert meta["edges"] == "zeros" and meta["fft_shape"] == [54, 50, 48], meta["fft_shape"]
    # the target repeated beyond its faces: 48 and 40 are grids of their own; 44 (4 x 11) reads a
    # periodic halo on the cheapest 7-smooth grid of at least 44 + 13 - 1 = 56. The planted copies
    # lie inside: the same peaks
    wrap = os.path.join(work, "wrap")
    run(bin_, "match", "-t", f"{sim}/target.mrc", "-m", f"{sim}/template.mrc", "--mask", f"{sim}/mask.mrc", "-o", wrap,
        "-a", 45, "--planning", "estimate", "--edges", "wrap", "-q")
    wmeta = json.load(open(os.path.join(wrap, "metadata.json")))
    assert wmeta["edges"] == "wrap" and wmeta["grid"] == "fast" and wmeta["fft_shape"] == [48, 56, 40], (wmeta["edges"], wmeta["fft_shape"])
    run(bin_, "peaks", "-i", wrap, "-n", 2, "-q")
    # --grid target: the target's own shape, 44 included, and the same maps within rounding
    own = os.path.join(work, "wrap_own")
    run(bin_, "match", "-t", f"{sim}/target.mrc", "-m", f"{sim}/template.mrc", "--mask", f"{sim}/mask.mrc", "-o", own,
        "-a", 45, "--planning", "estimate", "--edges", "wrap", "--grid", "target", "-q")
    ometa = json.load(open(os.path.join(own, "metadata.json")))
    assert ometa["grid"] == "target" and ometa["fft_shape"] == [48, 44, 40], (ometa["grid"], ometa["fft_shape"])
    a_own, a_fast = read_mrc(os.path.join(own, "scores.mrc")), read_mrc(os.path.join(wrap, "scores.mrc"))
    assert abs(a_own - a_fast).max() < 1e-5, float(abs(a_own - a_fast).max())
    # the maps also as HDF5 in pyTME's Density layout, read back by h5py: the MRC maps' values,
    # the voxel size and origin, recorded as parts
    try:
        import h5py
    except ImportError:
        sys.exit("h5py is missing: install Debian's python3-h5py (scripts/deps does)")
    h5 = os.path.join(work, "hdf5")
    run(bin_, "match", "-t", f"{sim}/target.mrc", "-m", f"{sim}/template.mrc", "--mask", f"{sim}/mask.mrc", "-o", h5,
        "-a", 45, "--planning", "estimate", "--hdf5", "-q")
    hmeta = json.load(open(os.path.join(h5, "metadata.json")))
    assert hmeta["hdf5"] == ["scores.h5", "rotations.h5"] and "scores.h5" in hmeta["parts"] and "rotations.h5" in hmeta["parts"], hmeta
    for name, dtype in (("scores", "float32"), ("rotations", "int32")):
        with h5py.File(os.path.join(h5, f"{name}.h5"), "r") as f:
            data = f["data"][...]
            assert data.dtype == dtype and data.shape == (48, 44, 40), (name, data.dtype, data.shape)
            assert (data == read_mrc(os.path.join(h5, f"{name}.mrc")).astype(dtype)).all(), name
            assert list(f["sampling_rate"][...]) == hmeta["voxel_size"] and list(f["origin"][...]) == [0, 0, 0], name
            score = f.attrs["score"]
            assert (score.decode() if isinstance(score, bytes) else str(score)) == "FLCSphericalMask", dict(f.attrs)
            assert abs(f.attrs["max"] - float(data.max())) < 1e-6 and abs(f.attrs["mean"] - float(data.mean())) < 1e-5, dict(f.attrs)
    run(bin_, "peaks", "-i", h5, "-n", 2, "-q")  # the folder is a result like any other
    # --half-precision (pytom's): scores.mrc is the float32 scan's scores rounded once to float16 (mode 12), bit
    # for bit, rotations.mrc the same indices as int16 (mode 1); half the bytes, and the same peaks
    import numpy as np
    half = os.path.join(work, "half")
    run(bin_, "match", "-t", f"{sim}/target.mrc", "-m", f"{sim}/template.mrc", "--mask", f"{sim}/mask.mrc", "-o", half,
        "-a", 45, "--planning", "estimate", "--half-precision", "-q")
    assert json.load(open(os.path.join(half, "metadata.json")))["precision"] == {"scores": "float16", "rotations": "int16"}
    assert meta["precision"] == {"scores": "float32", "rotations": "float32"}, meta["precision"]
    s16, s32 = read_mrc(os.path.join(half, "scores.mrc"), 12), read_mrc(os.path.join(out, "scores.mrc"))
    assert (s16.view("<u2") == s32.astype("<f2").view("<u2")).all(), "float16 scores are not the float32 scores rounded"
    r16, r32 = read_mrc(os.path.join(half, "rotations.mrc"), 1), read_mrc(os.path.join(out, "rotations.mrc"))
    assert (r16.astype(np.float32) == r32).all(), "int16 rotations differ"
    for f in ("scores.mrc", "rotations.mrc"):
        assert os.path.getsize(os.path.join(half, f)) - 1024 == (os.path.getsize(os.path.join(out, f)) - 1024) // 2, f
    run(bin_, "peaks", "-i", half, "--false-positives", 1, "-q")
    # one thread, two or three: the same maps byte for byte with estimated plans (docs/matching.md)
    for score in ("FLCSphericalMask", "FLC"):
        maps = []
        for threads in (1, 2, 3):
            d = os.path.join(work, f"threads_{score}_{threads}")
            run(bin_, "match", "-t", f"{sim}/target.mrc", "-m", f"{sim}/template.mrc", "--mask", f"{sim}/mask.mrc",
                "-o", d, "-a", 45, "--planning", "estimate", "-s", score, "-j", threads, "-q")
            maps.append([open(os.path.join(d, f), "rb").read() for f in ("scores.mrc", "rotations.mrc")])
        assert maps[0] == maps[1] == maps[2], f"{score}: the thread count changed the maps"
    run(bin_, "peaks", "-i", out, "--false-positives", 1)
    truth = [l.split("\t") for l in open(os.path.join(sim, "truth.tsv")).read().splitlines()[1:]]
    want = sorted((int(t[0]), int(t[1]), int(t[2]), int(t[3])) for t in truth)
    found = [l.split("\t") for l in open(os.path.join(out, "peaks.tsv")).read().splitlines()[1:]]
    got = sorted((int(p[0]), int(p[1]), int(p[2]), int(p[4])) for p in found)
    assert got == want, f"peaks {got}, planted {want}"
    hfound = [l.split("\t") for l in open(os.path.join(half, "peaks.tsv")).read().splitlines()[1:]]
    assert sorted((int(p[0]), int(p[1]), int(p[2]), int(p[4])) for p in hfound) == want, f"half-precision peaks {hfound}"
    wfound = [l.split("\t") for l in open(os.path.join(wrap, "peaks.tsv")).read().splitlines()[1:]]
    assert sorted((int(p[0]), int(p[1]), int(p[2]), int(p[4])) for p in wfound) == want, wfound
    names, rows = read_star_loop(os.path.join(out, "peaks.star"))
    for col in ("rlnTomoName", "rlnCoordinateX", "rlnCoordinateY", "rlnCoordinateZ", "rlnCenteredCoordinateXAngst",
                "rlnAngleRot", "rlnAngleTilt", "rlnAnglePsi", "rlnTomoTiltSeriesPixelSize"):
        assert col in names, f"{col} missing from the STAR loop {names}"
    assert all(float(r[names.index("rlnTomoTiltSeriesPixelSize")]) == meta["voxel_size"][0] for r in rows), rows
    assert len(rows) == len(want) and all(len(r) == len(names) for r in rows), rows
    star = sorted((int(r[1]), int(r[2]), int(r[3])) for r in rows)
    assert star == sorted(w[:3] for w in want), star
    # the Euler angles in the STAR rows are the planted rotations' (truth.tsv, 4 decimals)
    angles = {(int(t[0]), int(t[1]), int(t[2])): [float(v) for v in t[4:7]] for t in truth}
    for r in rows:
        e = [float(v) for v in r[names.index("rlnAngleRot"):names.index("rlnAnglePsi") + 1]]
        assert max(abs(a - b) for a, b in zip(e, angles[(int(r[1]), int(r[2]), int(r[3]))])) < 1e-3, (e, r)
    # stats: the noise fit of the score histogram, its SVG picture parsed as XML, the table; the
    # top-hat filter keeps every planted copy at one false positive
    run(bin_, "stats", "-i", out, "--bins", 150, "-q")
    st = json.load(open(os.path.join(out, "stats.json")))
    # (the map holds each voxel's best score over the rotations: its bell is nearly every voxel)
    assert abs(st["noise"]["samples"] / (48 * 44 * 40) - 1) < 0.2 and st["noise"]["sigma"] > 0, st["noise"]
    svg = __import__("xml.etree.ElementTree", fromlist=["x"]).parse(os.path.join(out, "stats.svg")).getroot()
    ns = {"s": "http://www.w3.org/2000/svg"}
    bars = svg.findall(".//s:g[@id='bars']/s:rect", ns)
    table = [l.split("\t") for l in open(os.path.join(out, "stats.tsv")).read().splitlines()[1:]]
    assert len(table) == 150 and 0 < len(bars) <= 150, (len(table), len(bars))
    assert sum(float(b.attrib["data-count"]) for b in bars) == float(table[0][2]) == 48 * 44 * 40, table[0]
    assert abs(float(svg.find(".//s:line[@id='cutoff']", ns).attrib["data-score"]) / st["cutoff"] - 1) < 1e-5
    assert svg.find(".//s:polyline[@id='fit']", ns) is not None and svg.find(".//s:rect[@id='fit-region']", ns) is not None
    expected = [float(r[1]) for r in table]
    assert all(a >= b for a, b in zip(expected, expected[1:])), "expected false positives rise with the threshold"
    best = min(float(p[3]) for p in found)  # the planted copies' lowest score passes the cut-off
    assert best > st["cutoff"], (best, st["cutoff"])
    run(bin_, "peaks", "-i", out, "--tophat", "--false-positives", 1, "-o", os.path.join(out, "tophat"), "-q")
    tfound = [l.split("\t") for l in open(os.path.join(out, "tophat.tsv")).read().splitlines()[1:]]
    assert sorted((int(p[0]), int(p[1]), int(p[2]), int(p[4])) for p in tfound) == want, tfound
    # a tomogram mask that is 0 about the first planted copy: the other remains
    import numpy as np
    tdata = open(f"{sim}/target.mrc", "rb").read()
    mask = np.ones((40, 44, 48), "<f4")  # (z, y, x), as the file stores it
    x0, y0, z0 = want[0][:3]
    mask[max(0, z0 - 8):z0 + 9, max(0, y0 - 8):y0 + 9, max(0, x0 - 8):x0 + 9] = 0  # a template's reach about it
    open(os.path.join(work, "tomo_mask.mrc"), "wb").write(tdata[:1024] + mask.tobytes())
    run(bin_, "peaks", "-i", out, "--false-positives", 1, "--tomogram-mask", os.path.join(work, "tomo_mask.mrc"),
        "-o", os.path.join(out, "masked"), "-q")
    mfound = [l.split("\t") for l in open(os.path.join(out, "masked.tsv")).read().splitlines()[1:]]
    assert sorted((int(p[0]), int(p[1]), int(p[2]), int(p[4])) for p in mfound) == want[1:], mfound
    # two tomograms' particle tables as one (their rows in order, the columns once)
    merged = os.path.join(work, "merged.star")
    run(bin_, "peaks", "-i", wrap, "-q", "--tomo-name", "other")
    p = run(bin_, "merge-stars", os.path.join(out, "peaks.star"), os.path.join(wrap, "peaks.star"), "-o", merged)
    mnames, mrows = read_star_loop(merged)
    _, wrows = read_star_loop(os.path.join(wrap, "peaks.star"))
    assert mnames == names and mrows == rows + wrows, (mnames, len(mrows))
    assert "2 tomograms" in p.stdout, p.stdout
    # a constrained search about the picks (pyTME's --orientations): each pick's ellipsoid and the
    # rotations within 30 degrees of its own orientation, read from the merged STAR (one tomogram
    # of its two) and from the TSV; its scores are the exhaustive search's at the same voxels
    whole = read_mrc(os.path.join(out, "scores.mrc"))
    seeded_tables = []
    # pyTME's orientation table: x y z euler_x euler_y euler_z score detail, the angles the numbers
    # of its STAR rows (here the peaks' STAR rows written as pyTME lays them out)
    pytme_tsv = os.path.join(work, "pytme_orientations.tsv")
    open(pytme_tsv, "w").write("x\ty\tz\teuler_x\teuler_y\teuler_z\tscore\tdetail\n" + "".join(
        "\t".join(r[names.index(c)] for c in ("rlnCoordinateX", "rlnCoordinateY", "rlnCoordinateZ", "rlnAngleRot", "rlnAngleTilt",
                                                "rlnAnglePsi", "rlnLCCmax")) + "\t-1\n" for r in rows))
    for name, seeds in (("seeded_star", ["--seeds", merged, "--seeds-tomo", "target"]),
                        ("seeded_tsv", ["--seeds", os.path.join(out, "peaks.tsv")]),
                        ("seeded_pytme", ["--seeds", pytme_tsv])):
        d = os.path.join(work, name)
        run(bin_, "match", "-t", f"{sim}/target.mrc", "-m", f"{sim}/template.mrc", "--mask", f"{sim}/mask.mrc", "-o", d,
            "-a", 45, "--planning", "estimate", *seeds, "--seed-radius", 3, "--seed-cone", 30, "-q")
        smeta = json.load(open(os.path.join(d, "metadata.json")))
        table = [l.split("\t") for l in open(os.path.join(d, "seeds.tsv")).read().splitlines()[1:]]
        assert sorted((int(r[4]), int(r[5]), int(r[6]), int(r[8])) for r in table) == want, table
        smap = read_mrc(os.path.join(d, "scores.mrc"))
        for r in table:
            assert abs(float(r[7]) - whole[int(r[4]), int(r[5]), int(r[6])]) < 1e-5, (r, whole[int(r[4]), int(r[5]), int(r[6])])
        scored = ~np.isnan(smap)
        assert scored.sum() == sum(int(r[10]) for r in table) == 2 * 123, scored.sum()  # two balls of radius 3
        assert (smap[scored] <= whole[scored] + 1e-5).all()
        sm = smeta["seeds"]
        assert sm["count"] == 2 and sm["cone"] == 30 and sm["radius"] == [3, 3, 3], sm
        assert sm["rotations_scored"] == sum(int(r[9]) for r in table) < 2 * smeta["rotations"]["count"] / 4, sm
        assert smeta["statistics"]["count"] == 0, smeta["statistics"]
        seeded_tables.append([r[:11] for r in table])
    assert seeded_tables[0] == seeded_tables[1] == seeded_tables[2], seeded_tables
    run(bin_, "peaks", "-i", os.path.join(work, "seeded_tsv"), "-n", 2, "-q")
    sfound = [l.split("\t") for l in open(os.path.join(work, "seeded_tsv", "peaks.tsv")).read().splitlines()[1:]]
    assert sorted((int(p[0]), int(p[1]), int(p[2]), int(p[4])) for p in sfound) == want, sfound
    p = run(bin_, "peaks", "-i", os.path.join(work, "seeded_tsv"), "--false-positives", 1, ok=False)
    assert p.returncode != 0 and "is a seeded search" in p.stderr, p.stderr
    # pyTME's background normalisation: a phase-scrambled copy of the template (the same
    # amplitudes) matched the same way; peaks --background subtracts its scores per voxel (0 as a
    # floor) and adds back their mean; the planted copies stay on top
    scr = os.path.join(work, "scrambled.mrc")
    run(bin_, "template", "--map", f"{sim}/template.mrc", "--voxel-size", meta["voxel_size"][0], "--centre", "box",
        "--scramble-phases", 7, "-o", scr, "-q")
    t0, t1 = read_mrc(f"{sim}/template.mrc"), read_mrc(scr)
    a0, a1 = np.abs(np.fft.rfftn(t0)), np.abs(np.fft.rfftn(t1))
    assert np.abs(a0 - a1).max() < 1e-4 * a0.max() and np.abs(t0 - t1).max() > 0.1 * np.abs(t0).max()
    bg = os.path.join(work, "background")
    run(bin_, "match", "-t", f"{sim}/target.mrc", "-m", scr, "--mask", f"{sim}/mask.mrc", "-o", bg, "-a", 45, "--planning",
        "estimate", "-q")
    p = run(bin_, "peaks", "-i", out, "--background", bg, "-n", 2, "-o", os.path.join(out, "normalised"))
    assert "1 background(s) subtracted" in p.stdout, p.stdout
    nfound = [l.split("\t") for l in open(os.path.join(out, "normalised.tsv")).read().splitlines()[1:]]
    assert sorted((int(p[0]), int(p[1]), int(p[2]), int(p[4])) for p in nfound) == want, nfound
    fg, bgs = read_mrc(os.path.join(out, "scores.mrc")).astype(np.float64), np.maximum(read_mrc(os.path.join(bg, "scores.mrc")), 0)
    for p in nfound:
        x, y, z = int(p[0]), int(p[1]), int(p[2])
        assert abs(float(p[3]) - (fg[x, y, z] - bgs[x, y, z] + bgs.mean())) < 1e-4, (p, fg[x, y, z], bgs[x, y, z])
    run(bin_, "stats", "-i", out, "--background", bg, "-o", os.path.join(work, "bg_stats"), "-q")
    bst = json.load(open(os.path.join(work, "bg_stats.json")))
    assert bst["backgrounds"]["results"] == [bg] and abs(bst["backgrounds"]["mean"] - bgs.mean()) < 1e-5, bst["backgrounds"]
    p = run(bin_, "peaks", "-i", out, "--background", bg, "--false-positives", 1, ok=False)
    assert p.returncode != 0 and "before --background is subtracted" in p.stderr, p.stderr
    p = run(bin_, "match", "-t", f"{sim}/target.mrc", "-m", f"{sim}/template.mrc", "-o", os.path.join(work, "seeded_two"),
            "--seeds", merged, "--seed-radius", 3, ok=False)
    assert p.returncode != 0 and "the particles of 2 tomograms (other, target); say which with --seeds-tomo" in p.stderr, p.stderr
    # the preview: a PNG of the size the layout gives, decoded here (unfiltered RGB rows)
    png = os.path.join(out, "preview.png")
    run(bin_, "preview", "-i", out, "--width", 600)
    width, height, pixels = read_png(png)
    zoom = max(1, (600 - 12) // (48 + 48 + 44))
    assert (width, height) == (zoom * 140 + 12, 2 * zoom * 44 + 6), (width, height, zoom)
    red = sum(1 for i in range(0, len(pixels), 3) if pixels[i:i + 3] == b"\xff\x00\x00")
    gray = sum(1 for i in range(0, len(pixels), 3) if pixels[i] == pixels[i + 1] == pixels[i + 2])
    assert red > 0 and gray > width * height // 2, (red, gray, width * height)
    # a tilt series instead of a wedge (every tilt's slab, CTF and exposure on the template): the
    # series in metadata.json as given, and the planted copies still found
    tilted = os.path.join(work, "tilted")
    dose = os.path.join(work, "dose.txt")
    open(dose, "w").write("".join(f"{3 * i}\n" for i in range(25)))
    run(bin_, "match", "-t", f"{sim}/target.mrc", "-m", f"{sim}/template.mrc", "--mask", f"{sim}/mask.mrc", "-o", tilted,
        "-a", 45, "--planning", "estimate", "--tilt-angles=-60,60:5", "--defocus", 20000, "--dose", dose, "-q")
    series = json.load(open(os.path.join(tilted, "metadata.json")))["tilt_series"]
    assert series["angles"] == [float(a) for a in range(-60, 61, 5)] and series["doses"][-1] == 72, series
    assert series["ctf"] and series["defocus_u"] == [20000.0] * 25 and series["tilt_weighting"] == "grigorieff", series
    run(bin_, "peaks", "-i", tilted, "--false-positives", 1, "-q")
    tfound = [l.split("\t") for l in open(os.path.join(tilted, "peaks.tsv")).read().splitlines()[1:]]
    assert sorted((int(p[0]), int(p[1]), int(p[2]), int(p[4])) for p in tfound) == want, tfound
    files_checked = tilt_files(bin_, work, sim)
    tilted_truth, tilted_found = tilt_series_run(bin_, work)
    right, wrong = relion_average(bin_, work)
    centres = rotation_centres(bin_, work)
    p = run(bin_, "peaks", "-i", out, "--background", os.path.join(work, "centre_relion"), "-n", 1, ok=False)
    assert p.returncode != 0 and "has scores of shape (52, 48, 44); expected the scores' (48, 44, 40)" in p.stderr, p.stderr
    # a rotation file in RELION's angles (rotations.tsv's own columns) or as pyTME's pulling
    # quaternions (the inverses) reads back as the same rotations
    table = [l.split("\t") for l in open(os.path.join(out, "rotations.tsv")).read().splitlines()[1:6]]
    quats = [[float(v) for v in t[4:8]] for t in table]
    open(os.path.join(work, "relion.txt"), "w").write("".join(" ".join(t[1:4]) + "\n" for t in table))
    open(os.path.join(work, "pytme.txt"), "w").write("".join(f"{q[0]} {-q[1]} {-q[2]} {-q[3]}\n" for q in quats))
    for conv in ("relion", "pytme"):
        d = os.path.join(work, f"conv_{conv}")
        run(bin_, "match", "-t", f"{sim}/target.mrc", "-m", f"{sim}/template.mrc", "-o", d, "--rotations",
            os.path.join(work, f"{conv}.txt"), "--rotations-convention", conv, "--planning", "estimate", "-q")
        back = [[float(v) for v in l.split("\t")[4:8]] for l in open(os.path.join(d, "rotations.tsv")).read().splitlines()[1:]]
        for q, b in zip(quats, back):  # the same rotation: q or -q
            assert min(max(abs(x - y) for x, y in zip(q, b)), max(abs(x + y) for x, y in zip(q, b))) < 1e-5, (conv, q, b)
    print(f"fusor-match end to end: {len(got)} planted copies found with their rotations (with a tilt series' weight too); "
          f"Warp's XML and RELION 5's STAR files read, {files_checked} of their errors named; a simulated tilt series' "
          f"{tilted_truth} copies found among {tilted_found} peaks, the same maps from IMOD's and RELION's files; STAR rows {len(rows)}; "
          f"preview {width} x {height} with {red} red pixels; sub-volumes turned back by the STAR angles as RELION "
          f"reads them average to the template (correlation {right:.3f}; the transposed convention {wrong:.3f}); an even "
          f"template turned about RELION's and pyTME's centres: STAR coordinates within "
          f"{centres['relion'][0]:.2f} and {centres['pytme'][0]:.2f} voxels of the planted copies, averages "
          f"{centres['relion'][1]:.3f} and {centres['pytme'][1]:.3f}")


WARP_XML = """<?xml version="1.0" encoding="utf-16"?>
<TiltSeries Status="Processed" AreAnglesInverted="False">
	<Angles>-3
0
3</Angles>
	<Dose>6
0
3</Dose>
	<UseTilt>True
True
False</UseTilt>
	<CTF>
		<Param Name="PixelSize" Value="1.35" />
		<Param Name="PixelSizeDelta" Value="0" />
		<Param Name="PixelSizeAngle" Value="0" />
		<Param Name="Cs" Value="2.7" />
		<Param Name="Voltage" Value="300" />
		<Param Name="Defocus" Value="3.5" />
		<Param Name="DefocusDelta" Value="0.1" />
		<Param Name="DefocusAngle" Value="30" />
		<Param Name="Amplitude" Value="0.07" />
		<Param Name="Bfactor" Value="0" />
		<Param Name="Scale" Value="1" />
		<Param Name="PhaseShift" Value="0" />
	</CTF>
	<GridCTF Width="1" Height="1" Depth="3">
		<Node X="0" Y="0" Z="0" Value="3.51" />
		<Node X="0" Y="0" Z="1" Value="3.5" />
		<Node X="0" Y="0" Z="2" Value="3.49" />
	</GridCTF>
	<GridCTFDefocusDelta Width="1" Height="1" Depth="3">
		<Node X="0" Y="0" Z="0" Value="0.1" />
		<Node X="0" Y="0" Z="1" Value="0.1" />
		<Node X="0" Y="0" Z="2" Value="0.1" />
	</GridCTFDefocusDelta>
	<GridCTFDefocusAngle Width="1" Height="1" Depth="3">
		<Node X="0" Y="0" Z="0" Value="30" />
		<Node X="0" Y="0" Z="1" Value="31" />
		<Node X="0" Y="0" Z="2" Value="32" />
	</GridCTFDefocusAngle>
	<GridCTFPhase Width="1" Height="1" Depth="3">
		<Node X="0" Y="0" Z="0" Value="0" />
		<Node X="0" Y="0" Z="1" Value="0.5" />
		<Node X="0" Y="0" Z="2" Value="0" />
	</GridCTFPhase>
</TiltSeries>
"""

RELION_TOMOGRAMS = """
# version 50001

data_global

loop_
_rlnTomoName #1
_rlnVoltage #2
_rlnSphericalAberration #3
_rlnAmplitudeContrast #4
_rlnMicrographOriginalPixelSize #5
_rlnTomoHand #6
_rlnTomoTiltSeriesPixelSize #7
_rlnTomoTiltSeriesStarFile #8
_rlnTomoTomogramBinning #9
_rlnTomoSizeX #10
_rlnTomoSizeY #11
_rlnTomoSizeZ #12
TS_01   200.000000     2.000000     0.100000     0.675000    -1.000000     1.350000 Tomograms/job003/tilt_series/TS_01.star     8.000000 4000 4000 2000
TS_02   300.000000     2.700000     0.070000     0.675000    -1.000000     1.350000 Tomograms/job003/tilt_series/TS_02.star     8.000000 4000 4000 2000
"""

RELION_TILT_SERIES = """
# version 50001

data_TS_01

loop_
_rlnMicrographMovieName #1
_rlnTomoTiltMovieFrameCount #2
_rlnTomoNominalStageTiltAngle #3
_rlnTomoNominalTiltAxisAngle #4
_rlnMicrographPreExposure #5
_rlnTomoNominalDefocus #6
_rlnMicrographName #7
_rlnDefocusU #8
_rlnDefocusV #9
_rlnDefocusAngle #10
_rlnCtfMaxResolution #11
_rlnTomoXTilt #12
_rlnTomoYTilt #13
_rlnTomoZRot #14
_rlnTomoXShiftAngst #15
_rlnTomoYShiftAngst #16
frames/TS_01_001_0.0.tif 8 0.001 85.0 0.000000 -4.0 MotionCorr/job002/frames/TS_01_001_0.0.mrc 41250.5 40110.25 -37.5 5.2 0.0 0.12 85.3 12.5 -3.0
frames/TS_01_002_3.0.tif 8 3.000 85.0 3.100000 -4.0 MotionCorr/job002/frames/TS_01_002_3.0.mrc 41400.0 40300.00 -36.0 5.9 0.0 3.09 85.3 10.0 -2.5
frames/TS_01_003_-3.0.tif 8 -3.000 85.0 6.200000 -4.0 MotionCorr/job002/frames/TS_01_003_-3.0.mrc 41100.0 40000.00 -38.0 6.1 0.0 -2.95 85.3 11.0 -1.5
"""


def tilt_files(bin_, work, sim):
    """Warp's XML (in UTF-16, as Warp writes it) and RELION 5's tomograms.star with its tilt-series
    STAR (paths relative to the project folder): the series metadata.json records is what they say."""
    target, templ = f"{sim}/target.mrc", f"{sim}/template.mrc"
    xml = os.path.join(work, "TS_01.xml")
    open(xml, "wb").write(WARP_XML.encode("utf-16"))
    out = os.path.join(work, "warp")
    run(bin_, "match", "-t", target, "-m", templ, "-o", out, "-a", 90, "--planning", "estimate", "--warp-xml", xml, "-q")
    s = json.load(open(os.path.join(out, "metadata.json")))["tilt_series"]
    assert s["angles"] == [-3, 0] and s["doses"] == [6, 0], s  # the third tilt is excluded (UseTilt False)
    assert [round(v, 6) for v in s["defocus_u"]] == [35600, 35500] and [round(v, 6) for v in s["defocus_v"]] == [34600, 34500], s
    assert s["astigmatism_angle"] == [30, 31] and s["phase_shift"] == [0, 90], s  # Warp's phase shift in units of pi
    assert (s["voltage_kv"], s["cs_mm"], s["amplitude_contrast"], s["pixel_size"]) == (300, 2.7, 0.07, 1.35), s
    job = os.path.join(work, "project", "Tomograms", "job003")
    os.makedirs(os.path.join(job, "tilt_series"))
    open(os.path.join(job, "tomograms.star"), "w").write(RELION_TOMOGRAMS)
    open(os.path.join(job, "tilt_series", "TS_01.star"), "w").write(RELION_TILT_SERIES)
    out = os.path.join(work, "relion")
    run(bin_, "match", "-t", target, "-m", templ, "-o", out, "-a", 90, "--planning", "estimate", "--relion5-tomograms-star",
        os.path.join(job, "tomograms.star"), "--tomogram", "TS_01", "--ctf-model", "phase-flip", "-q")
    s = json.load(open(os.path.join(out, "metadata.json")))["tilt_series"]
    assert s["angles"] == [0.12, 3.09, -2.95] and s["doses"] == [0, 3.1, 6.2], s  # rlnTomoYTilt over the nominal angle
    assert s["defocus_u"] == [41250.5, 41400, 41100] and s["defocus_v"] == [40110.25, 40300, 40000], s
    assert s["astigmatism_angle"] == [-37.5, -36, -38] and s["ctf_model"] == "phase-flip", s
    assert (s["voltage_kv"], s["cs_mm"], s["amplitude_contrast"], s["pixel_size"]) == (200, 2, 0.1, 1.35), s
    # their errors: the file, the line or the row, the field
    bad_xml = os.path.join(work, "bad.xml")
    open(bad_xml, "w").write(WARP_XML.replace('encoding="utf-16"', 'encoding="utf-8"').replace("<Dose>6", "<Dose>6x"))
    broken = os.path.join(work, "broken.xml")
    open(broken, "w").write(WARP_XML.replace('encoding="utf-16"', 'encoding="utf-8"').replace("</CTF>", ""))
    no_col = os.path.join(job, "no_name.star")
    open(no_col, "w").write(RELION_TOMOGRAMS.replace("_rlnTomoName #1", "_rlnTomoLabel #1"))
    bad_row = os.path.join(job, "tilt_series", "TS_02.star")
    open(bad_row, "w").write(RELION_TILT_SERIES.replace("data_TS_01", "data_TS_02").replace("41400.0", "4l400.0"))
    cases = [
        (["--warp-xml", bad_xml], "bad.xml:6", "<Dose> holds '6x', not a finite number"),
        (["--warp-xml", broken], "broken.xml:", "not well-formed XML"),
        (["--relion5-tomograms-star", os.path.join(job, "tomograms.star"), "--tomogram", "TS_09"], "no tomogram named 'TS_09'",
         "it has TS_01, TS_02"),
        (["--relion5-tomograms-star", no_col, "--tomogram", "TS_01"], "no_name.star", "no rlnTomoName column"),
        (["--relion5-tomograms-star", os.path.join(job, "tomograms.star"), "--tomogram", "TS_02"], "TS_02.star: data_TS_02",
         "row 2: rlnDefocusU '4l400.0' is not a finite number"),
        (["--relion5-tomograms-star", os.path.join(job, "tomograms.star")], "--tomogram NAME", ""),
        (["--warp-xml", xml, "--dose", xml], "drop --dose and --defocus", ""),
        (["--warp-xml", xml, "--tilt-angles=-60,60:3"], "each give the tilt series", "give one"),
    ]
    for args, *expect in cases:
        p = run(bin_, "match", "-t", target, "-m", templ, "-o", os.path.join(work, "none"), *args, ok=False)
        text = p.stdout + p.stderr
        assert p.returncode != 0, f"{args}: exit 0\n{text}"
        for e in expect:
            assert e in text, f"{args}: {e!r} not in the message:\n{text}"
        assert not os.path.exists(os.path.join(work, "none")), args
    return len(cases)


def tilt_series_run(bin_, work):
    """simulate --tilt-series, then match with the series read from IMOD's and pytom's files and
    from RELION 5's STAR files (the same series, so the same maps byte for byte), and the peaks:
    every planted copy found."""
    sim = os.path.join(work, "tilted")
    run(bin_, "simulate", "-o", sim, "--tilt-series", "--size", 64, 64, 48, "--template-size", 17, "--copies", 3, "--seed", 2)
    for f in ("target.mrc", "template.mrc", "mask.mrc", "truth.tsv", "TS.tlt", "TS.defocus", "dose.txt", "tomograms.star",
              "tilt_series/TS.star"):
        assert os.path.isfile(os.path.join(sim, f)), f"simulate --tilt-series wrote no {f}"
    base = ["match", "-t", f"{sim}/target.mrc", "-m", f"{sim}/template.mrc", "--mask", f"{sim}/mask.mrc", "-a", 30, "--planning",
            "estimate", "-q"]
    files, star = os.path.join(work, "tilted_files"), os.path.join(work, "tilted_star")
    run(bin_, *base, "-o", files, "--tilt-angles", f"{sim}/TS.tlt", "--defocus", f"{sim}/TS.defocus", "--dose", f"{sim}/dose.txt")
    run(bin_, *base, "-o", star, "--relion5-tomograms-star", f"{sim}/tomograms.star", "--tomogram", "TS")
    a = json.load(open(os.path.join(files, "metadata.json")))["tilt_series"]
    b = json.load(open(os.path.join(star, "metadata.json")))["tilt_series"]
    for k in ("angles", "doses", "defocus_u", "defocus_v", "astigmatism_angle", "phase_shift"):
        assert a[k] == b[k], (k, a[k], b[k])
    assert len(a["angles"]) == 41 and a["angles"][0] == -60 and a["doses"][20] == 0, a
    for f in ("scores.mrc", "rotations.mrc"):
        assert open(os.path.join(files, f), "rb").read() == open(os.path.join(star, f), "rb").read(), f"{f}: the two readers' maps differ"
    run(bin_, "peaks", "-i", files, "--false-positives", 1, "--margin", 8, "-q")
    truth = [[int(v) for v in l.split("\t")[:3]] for l in open(os.path.join(sim, "truth.tsv")).read().splitlines()[1:]]
    found = [[int(v) for v in l.split("\t")[:3]] for l in open(os.path.join(files, "peaks.tsv")).read().splitlines()[1:]]
    for t in truth:
        assert any(sum((x - y) ** 2 for x, y in zip(t, p)) <= 3 for p in found), f"planted {t} not among the peaks {found}"
    return len(truth), len(found)


def read_mrc(path, mode=2):
    """An MRC file's volume indexed [x, y, z] (its column, row, section), as fusor reads it, after
    checking that the file's mode is `mode` (2 float32, 1 int16, 12 float16)."""
    import numpy as np
    data = open(path, "rb").read()
    nx, ny, nz, got = struct.unpack("<4i", data[:16])
    assert got == mode, f"{path}: mode {got}, expected {mode}"
    dtype = {2: "<f4", 1: "<i2", 12: "<f2"}[mode]
    start = 1024 + struct.unpack("<i", data[92:96])[0]
    assert len(data) == start + np.dtype(dtype).itemsize * nx * ny * nz, f"{path}: {len(data)} bytes"
    return np.frombuffer(data[start:], dtype).reshape(nz, ny, nx).transpose(2, 1, 0)


def relion_matrix(rot, tilt, psi):
    """RELION's Euler_angles2matrix (src/euler.cpp), written from its formula: the rotation that
    turns the reference into the particle, on (x, y, z) coordinates."""
    import numpy as np
    a, b, g = np.radians([rot, tilt, psi])
    ca, sa, cb, sb, cg, sg = np.cos(a), np.sin(a), np.cos(b), np.sin(b), np.cos(g), np.sin(g)
    cc, cs, sc, ss = cb * ca, cb * sa, sb * ca, sb * sa
    return np.array([[cg * cc - sg * sa, cg * cs + sg * ca, -cg * sb],
                     [-sg * cc - cg * sa, -sg * cs + cg * ca, sg * sb],
                     [sc, ss, cb]])


def trilinear(vol, pts):
    """vol sampled at the points pts (3, N) of its [x, y, z] index space; 0 outside."""
    import numpy as np
    lo = np.floor(pts).astype(int)
    f = pts - lo
    out = np.zeros(pts.shape[1])
    for dx in (0, 1):
        for dy in (0, 1):
            for dz in (0, 1):
                i, j, k = lo[0] + dx, lo[1] + dy, lo[2] + dz
                w = (f[0] if dx else 1 - f[0]) * (f[1] if dy else 1 - f[1]) * (f[2] if dz else 1 - f[2])
                ok = (i >= 0) & (i < vol.shape[0]) & (j >= 0) & (j < vol.shape[1]) & (k >= 0) & (k < vol.shape[2])
                out[ok] += w[ok] * vol[i[ok], j[ok], k[ok]]
    return out


def relion_average(bin_, work):
    """The STAR file's orientations as RELION reads them: sub-volumes of the target cut at the
    picked voxels and turned back by each row's rlnAngleRot/Tilt/Psi (RELION's matrix A turns the
    reference into the particle, so the reference at p is the particle at centre + A (p - h))
    average to the template; the transposed matrices (the other convention) do not."""
    sim, out = os.path.join(work, "relion_sim"), os.path.join(work, "relion_out")
    run(bin_, "simulate", "-o", sim, "--size", 56, 52, 48, "--template-size", 13, "--copies", 3, "--seed", 11,
        "--angular-step", 45, "--noise", 0.1)
    run(bin_, "match", "-t", f"{sim}/target.mrc", "-m", f"{sim}/template.mrc", "--mask", f"{sim}/mask.mrc", "-o", out,
        "-a", 45, "--planning", "estimate", "-q")
    run(bin_, "peaks", "-i", out, "-n", 3, "-q")
    names, rows = read_star_loop(os.path.join(out, "peaks.star"))
    target, templ = read_mrc(f"{sim}/target.mrc"), read_mrc(f"{sim}/template.mrc")
    right, wrong = star_average(target, templ, names, rows, False), star_average(target, templ, names, rows, True)
    assert len(rows) == 3 and right >= 0.95, f"the RELION-convention average correlates {right:.3f} with the template"
    assert wrong < right - 0.05, f"the transposed convention averages as well ({wrong:.3f} against {right:.3f})"
    return right, wrong


def star_average(target, templ, names, rows, transpose=False):
    """The correlation with the template of the average of the target's sub-volumes at the STAR
    rows' coordinates, each turned back by its rlnAngleRot/Tilt/Psi about RELION's box centre
    m // 2 (the reference at p is the particle at centre + A (p - h)); transposed: the other
    convention."""
    import numpy as np
    m = templ.shape[0]
    grid = np.stack(np.meshgrid(*[np.arange(m)] * 3, indexing="ij")).reshape(3, -1) - m // 2
    acc = np.zeros(m ** 3)
    for r in rows:
        c = np.array([float(r[names.index(f"rlnCoordinate{k}")]) for k in "XYZ"])
        a = relion_matrix(*(float(r[names.index(k)]) for k in ("rlnAngleRot", "rlnAngleTilt", "rlnAnglePsi")))
        acc += trilinear(target, c[:, None] + (a.T if transpose else a) @ grid)
    return np.corrcoef(acc / len(rows), templ.reshape(-1))[0, 1]


def rotation_centres(bin_, work):
    """An even template (12^3, planted turned about its voxel 6, RELION's box centre) scanned
    turning about RELION's centre m // 2 and about pyTME's (m - 1) / 2: metadata.json records
    each; the TSV names where the rotation centre lands (the planted voxels; with pyTME's half a
    voxel lower on every axis), the STAR where RELION's box centre lands, within half a voxel of
    the planted one with either centre, and its sub-volumes average to the template."""
    sim = os.path.join(work, "centre_sim")
    run(bin_, "simulate", "-o", sim, "--size", 52, 48, 44, "--template-size", 12, "--copies", 3, "--seed", 21,
        "--angular-step", 45, "--noise", 0.1)
    truth = {int(t[3]): [int(v) for v in t[:3]]
             for t in (l.split("\t") for l in open(os.path.join(sim, "truth.tsv")).read().splitlines()[1:])}
    target, templ = read_mrc(f"{sim}/target.mrc"), read_mrc(f"{sim}/template.mrc")
    result = {}
    for centre, voxel in (("relion", 6.0), ("pytme", 5.5)):
        out = os.path.join(work, f"centre_{centre}")
        run(bin_, "match", "-t", f"{sim}/target.mrc", "-m", f"{sim}/template.mrc", "-o", out, "-a", 45,
            "--rotation-centre", centre, "--planning", "estimate", "-q")
        meta = json.load(open(os.path.join(out, "metadata.json")))
        assert meta["rotation_centre"] == {"convention": centre, "voxel": [voxel] * 3}, meta["rotation_centre"]
        run(bin_, "peaks", "-i", out, "-n", 3, "-q")
        peaks = [l.split("\t") for l in open(os.path.join(out, "peaks.tsv")).read().splitlines()[1:]]
        names, rows = read_star_loop(os.path.join(out, "peaks.star"))
        assert sorted(int(p[4]) for p in peaks) == sorted(truth), (centre, peaks, truth)
        worst = 0.0
        for p, r in zip(peaks, rows):
            at = [float(v) for v in p[:3]]
            star = [float(r[names.index(f"rlnCoordinate{k}")]) for k in "XYZ"]
            planted = truth[int(p[4])]
            if centre == "relion":  # the scan's voxel, the planted one, RELION's coordinate: one point
                assert at == planted == star, (at, planted, star)
            else:  # the centre half a voxel below the score's voxel on each (even) axis
                assert all(v % 1 == 0.5 for v in at), at
            worst = max(worst, max(abs(a - b) for a, b in zip(star, planted)))
        assert worst <= 0.5, f"{centre}: a STAR coordinate lies {worst:.2f} voxels from its planted copy"
        avg = star_average(target, templ, names, rows)
        assert avg >= 0.9, f"{centre}: the STAR rows' sub-volumes average to {avg:.3f} with the template"
        # the peaks as seeds of radius 0: the STAR's box centres and the TSV's rotation centres both
        # read back as the voxels that scored them, and score there as the exhaustive scan did
        for table in ("peaks.star", "peaks.tsv"):
            d = os.path.join(work, f"centre_{centre}_seeds")
            run(bin_, "match", "-t", f"{sim}/target.mrc", "-m", f"{sim}/template.mrc", "-o", d, "-a", 45, "--rotation-centre",
                centre, "--planning", "estimate", "--seeds", os.path.join(out, table), "--seed-radius", 0, "-q")
            seeded = [l.split("\t") for l in open(os.path.join(d, "seeds.tsv")).read().splitlines()[1:]]
            shift = 0.0 if centre == "relion" else -0.5
            for p, q in zip(peaks, seeded):
                assert [int(v) for v in q[4:7]] == [round(float(v) - shift) for v in p[:3]] and int(q[10]) == 1, (table, p, q)
                assert abs(float(q[7]) - float(p[3])) < 1e-5 and q[8] == p[4], (table, p, q)
        result[centre] = (worst, avg)
    return result


def read_png(path):
    """Width, height and RGB bytes of an 8-bit RGB PNG whose rows are unfiltered (as preview writes)."""
    import struct
    import zlib
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        assert zlib.crc32(kind + body) == struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])[0], f"bad CRC in {kind}"
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            assert (depth, color) == (8, 2), (depth, color)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = 1 + 3 * width
    assert len(raw) == height * stride, (len(raw), height, stride)
    assert all(raw[r * stride] == 0 for r in range(height)), "a filtered row"
    return width, height, b"".join(raw[r * stride + 1:(r + 1) * stride] for r in range(height))


# International Tables for Crystallography C (2011), table 4.3.2.2: the electron scattering
# factors' Gaussian amplitudes a1..a5 (Å); f(0) is their sum
IT_C_4322_A = {
    "C": (0.0893, 0.2563, 0.7570, 1.0487, 0.3575),
    "N": (0.1022, 0.3219, 0.7982, 0.8197, 0.1715),
    "O": (0.0974, 0.2921, 0.6910, 0.6990, 0.2039),
    "S": (0.2497, 0.5628, 1.3899, 2.1865, 0.7715),
}
STRUCTURE = "/usr/share/pymol/data/demo/1tii.pdb"  # heat-labile enterotoxin IIb, from Debian's pymol-data
TWO_PROTEIN_CONTRAST = 0.05


def pdb_forward_scattering(path):
    """F(0) of a PDB file's first model without waters, from its ATOM/HETATM columns."""
    total = 0.0
    for line in open(path):
        if line.startswith("ENDMDL"):
            break
        if line.startswith(("ATOM", "HETATM")) and line[17:20] != "HOH":
            total += float(line[54:60]) * sum(IT_C_4322_A[line[76:78].strip()])
    return total


def healpix_ring_centres(nside):
    """(theta, phi) of every HEALPix pixel centre in ring order, from Górski et al. (2005), eqs. 4-9."""
    import math
    out, npix, ncap = [], 12 * nside * nside, 2 * nside * (nside - 1)
    for p in range(npix):
        if p < ncap:  # north polar cap
            i = int((1 + math.sqrt(1 + 2 * p)) / 2)
            j = p + 1 - 2 * i * (i - 1)
            z, phi = 1 - i * i / (3 * nside * nside), math.pi / (2 * i) * (j - 0.5)
        elif p < npix - ncap:  # equatorial belt
            q = p - ncap
            i, j = q // (4 * nside) + nside, q % (4 * nside) + 1
            s = (i - nside + 1) % 2
            z, phi = 4 / 3 - 2 * i / (3 * nside), math.pi / (2 * nside) * (j - s / 2)
        else:  # south polar cap
            q = npix - p
            i = int((1 + math.sqrt(2 * q - 1)) / 2)
            j = 4 * i + 1 - (q - 2 * i * (i - 1))
            z, phi = -1 + i * i / (3 * nside * nside), math.pi / (2 * i) * (j - 0.5)
        out.append((math.acos(z), phi % (2 * math.pi)))  # the belt's last pixel of a ring sits at 2 pi, that is 0
    return out


def pytom_healpix_list(step):
    """pytom_tm.angles.angle_to_angle_list(step): (Z1, X, Z2) radians, sorted."""
    import math
    npix, nside = 4 * math.pi / math.radians(step) ** 2, 0
    while 12 * nside * nside < npix:
        nside += 1
    turns = math.ceil(360 / step)
    return sorted((phi, theta, 2 * math.pi * k / turns) for theta, phi in healpix_ring_centres(nside) for k in range(turns))


def templates(bin_, work):
    import numpy as np
    if not os.path.isfile(STRUCTURE):
        sys.exit(f"{STRUCTURE} is missing: install Debian's pymol-data (scripts/deps does)")
    os.makedirs(work, exist_ok=True)
    t = os.path.join(work, "1tii.mrc")
    p = run(bin_, "template", "--model", STRUCTURE, "--voxel-size", 10, "--box", 16, 18, 17, "-o", t)
    assert "5469 atoms" in p.stdout and "215 water atoms left out" in p.stdout, p.stdout
    v = read_mrc(t).astype(np.float64)
    assert v.shape == (16, 18, 17), v.shape
    f0 = pdb_forward_scattering(STRUCTURE)
    assert abs(v.sum() * 1000 / f0 - 1) < 1e-5, (v.sum() * 1000, f0)
    # the centre of mass of the positive density sits on the box's centre voxel, within a voxel
    w = np.clip(v, 0, None)
    com = [float((w.sum(axis=tuple(a for a in range(3) if a != k)) * np.arange(v.shape[k])).sum() / w.sum()) for k in range(3)]
    assert all(abs(com[k] - v.shape[k] // 2) < 1 for k in range(3)), com
    # the same structure as mmCIF written by gemmi's own program, and gzipped: the same voxels
    cif = os.path.join(work, "1tii.cif")
    run("gemmi", "convert", STRUCTURE, cif)
    shutil.copyfileobj(open(cif, "rb"), __import__("gzip").open(cif + ".gz", "wb"))
    for other in (cif, cif + ".gz"):
        o = os.path.join(work, "other.mrc")
        run(bin_, "template", "--model", other, "--voxel-size", 10, "--box", 16, 18, 17, "-o", o, "-q")
        assert open(o, "rb").read()[1024:] == open(t, "rb").read()[1024:], f"{other} gives other voxels than the PDB file"
    # inverted and mirrored along z about the centre voxel (8 of 17): voxel k takes 16 - k
    im = os.path.join(work, "inv_mirror.mrc")
    run(bin_, "template", "--model", STRUCTURE, "--voxel-size", 10, "--box", 16, 18, 17, "--invert", "--mirror", "-o", im, "-q")
    assert np.allclose(read_mrc(im), -v[:, :, ::-1], rtol=0, atol=1e-6 * np.abs(v).max())
    # the map resampled to 7 Å in a box that holds all of it: the same integral
    r = os.path.join(work, "resampled.mrc")
    p = run(bin_, "template", "--map", t, "--voxel-size", 7, "--box", 26, "--centre", "box", "-o", r)
    rv = read_mrc(r).astype(np.float64)
    size = struct.unpack("<3f", open(r, "rb").read()[40:52])
    voxel = [size[k] / rv.shape[k] for k in range(3)]
    assert all(abs(x - 7) < 7e-3 for x in voxel), voxel
    assert abs(rv.sum() * voxel[0] * voxel[1] * voxel[2] / f0 - 1) < 2e-3, (rv.sum() * np.prod(voxel), f0)
    # masks: a soft sphere by its definition; a tight mask from brute-force distances
    sph = os.path.join(work, "sphere.mrc")
    run(bin_, "mask", "--box", 16, 18, 17, "--radius", 5, "--soft-edge", 3, "-o", sph, "-q")
    g = np.stack(np.meshgrid(*[np.arange(n) - n // 2 for n in (16, 18, 17)], indexing="ij"))
    d = np.sqrt((g ** 2).sum(axis=0)) - 5
    want = np.where(d <= 0, 1, np.where(d < 3, 0.5 * (1 + np.cos(np.pi * np.clip(d, 0, 3) / 3)), 0))
    assert np.abs(read_mrc(sph) - want).max() < 1e-5
    tight = os.path.join(work, "tight.mrc")
    threshold = 0.2 * v.max()
    run(bin_, "mask", "--template", t, "--shape", "tight", "--threshold", threshold, "--dilation", 1.5, "--soft-edge", 2,
        "-o", tight, "-q")
    inside = np.argwhere(v > threshold)
    pts = g.reshape(3, -1).T + np.array([8, 9, 8])
    dist = np.sqrt(((pts[:, None, :] - inside[None, :, :]) ** 2).sum(axis=2)).min(axis=1).reshape(v.shape) - 1.5
    want = np.where(dist <= 0, 1, np.where(dist < 2, 0.5 * (1 + np.cos(np.pi * np.clip(dist, 0, 2) / 2)), 0))
    assert np.abs(read_mrc(tight) - want).max() < 1e-5
    # the angular step by the Crowther criterion (10 Å voxels: resolution 20 Å), and the
    # icosahedral group's asymmetric unit: about 1/60 of the set
    sim = os.path.join(work, "sim")
    run(bin_, "simulate", "-o", sim, "--size", 24, 24, 24, "--template-size", 9, "--copies", 1)
    runs = {}
    for name, extra in (("crowther", ["--particle-diameter", 40]), ("c1", ["-a", 28.6479]),
                        ("icosahedral", ["--particle-diameter", 40, "--symmetry", "I"])):
        out = os.path.join(work, name)
        p = run(bin_, "match", "-t", f"{sim}/target.mrc", "-m", f"{sim}/template.mrc", "-o", out, "--planning", "estimate", *extra)
        runs[name] = json.load(open(os.path.join(out, "metadata.json")))["rotations"]
        assert runs[name]["count"] == len(open(os.path.join(out, "rotations.tsv")).readlines()) - 1
    crowther = runs["crowther"]
    assert abs(crowther["angular_step"] - 0.5 * 180 / 3.141592653589793) < 1e-9, crowther
    assert crowther["crowther"] == {"particle_diameter": 40.0, "resolution": 20.0}, crowther
    assert crowther["count"] == runs["c1"]["count"], (crowther["count"], runs["c1"]["count"])
    # (at so coarse a step the cell holds few directions: 2.5 times 1/60 of the C1 set)
    assert runs["icosahedral"]["symmetry"] == "I" and crowther["count"] <= 60 * runs["icosahedral"]["count"] < 3 * crowther["count"], runs
    # a cone: every rotation turns the template's z within 30 degrees of the axis, fewer rotations
    cone = os.path.join(work, "cone")
    run(bin_, "match", "-t", f"{sim}/target.mrc", "-m", f"{sim}/template.mrc", "-o", cone, "-a", 15, "--planning", "estimate",
        "--cone-angle", 30, "--cone-axis", 1, 0, 1, "-q")
    cm = json.load(open(os.path.join(cone, "metadata.json")))["rotations"]
    assert cm["cone"] == {"angle": 30.0, "axis": [1.0, 0.0, 1.0]} and 0 < cm["count"] < 3850 / 8, cm
    axis = np.array([1.0, 0.0, 1.0]) / np.sqrt(2)
    for line in open(os.path.join(cone, "rotations.tsv")).read().splitlines()[1:]:
        w, x, y, z = (float(v) for v in line.split("\t")[4:8])
        zt = np.array([2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)])  # the rotation's image of z
        assert np.degrees(np.arccos(min(1.0, float(zt @ axis)))) <= 30 + 1e-6, (line, zt)
    # pytom-match-pick's HEALPix angle list: the same rotations in the same order as pytom builds
    # them, the pixel centres here from the HEALPix paper's ring formulas (not chealpix), each row's
    # orientation Rz(Z2) Rx(X) Rz(Z1) (pytom's RELION export, inverted); its covering radius; and a
    # few rows as a pytom angle file (radians) read back as the same rotations
    hp = os.path.join(work, "healpix")
    run(bin_, "match", "-t", f"{sim}/target.mrc", "-m", f"{sim}/template.mrc", "-o", hp, "-a", 30, "--angle-set", "healpix",
        "--planning", "estimate", "-q")
    hmeta = json.load(open(os.path.join(hp, "metadata.json")))["rotations"]
    want_zxz = pytom_healpix_list(30.0)
    got_q = [[float(v) for v in l.split("\t")[4:8]] for l in open(os.path.join(hp, "rotations.tsv")).read().splitlines()[1:]]
    assert hmeta["angle_set"] == "healpix" and hmeta["healpix"]["nside"] == 2 and len(got_q) == len(want_zxz) == 576, hmeta
    def rz(a):
        return np.array([[np.cos(a), -np.sin(a), 0], [np.sin(a), np.cos(a), 0], [0, 0, 1]])
    def rx(a):
        return np.array([[1, 0, 0], [0, np.cos(a), -np.sin(a)], [0, np.sin(a), np.cos(a)]])
    def quat_matrix(q):
        w, x, y, z = q
        return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                         [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                         [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])
    worst = max(np.abs(quat_matrix(q) - rz(c) @ rx(b) @ rz(a)).max() for q, (a, b, c) in zip(got_q, want_zxz))
    assert worst < 1e-9, worst
    qs = np.array(got_q)
    probes = np.random.default_rng(3).normal(size=(4000, 4))
    probes /= np.linalg.norm(probes, axis=1)[:, None]
    hp_radius = float(np.degrees(2 * np.arccos(np.clip(np.abs(probes @ qs.T).max(axis=1), 0, 1))).max())
    assert hp_radius < 30, hp_radius  # pytom's lists stay within their step (a little below fusor's 0.88)
    # with C3: only the rows whose turn about the template's own z (Z1) is below 120 degrees
    run(bin_, "match", "-t", f"{sim}/target.mrc", "-m", f"{sim}/template.mrc", "-o", hp + "3", "-a", 30, "--angle-set", "healpix",
        "--symmetry", "C3", "--planning", "estimate", "-q")
    c3 = json.load(open(os.path.join(hp + "3", "metadata.json")))["rotations"]["count"]
    assert c3 == sum(1 for z in want_zxz if z[0] < 2 * np.pi / 3 - 1e-12), c3
    rows = os.path.join(work, "pytom_angles.txt")
    open(rows, "w").write("".join(f"{a!r} {b!r} {c!r}\n" for a, b, c in want_zxz[100:105]))
    back = os.path.join(work, "pytom_rows")
    run(bin_, "match", "-t", f"{sim}/target.mrc", "-m", f"{sim}/template.mrc", "-o", back, "--rotations", rows,
        "--rotations-convention", "pytom", "--planning", "estimate", "-q")
    bq = [[float(v) for v in l.split("\t")[4:8]] for l in open(os.path.join(back, "rotations.tsv")).read().splitlines()[1:]]
    assert max(np.abs(quat_matrix(q) - quat_matrix(p)).max() for q, p in zip(bq, got_q[100:105])) < 1e-9
    # the random-phase noise correction: recorded, the map changed, the planted copy still the best peak
    nc = os.path.join(work, "noise_corrected")
    run(bin_, "match", "-t", f"{sim}/target.mrc", "-m", f"{sim}/template.mrc", "-o", nc, "-a", 45, "--planning", "estimate",
        "--noise-correction", "-q")
    plain = os.path.join(work, "plain")
    run(bin_, "match", "-t", f"{sim}/target.mrc", "-m", f"{sim}/template.mrc", "-o", plain, "-a", 45, "--planning", "estimate", "-q")
    ncm = json.load(open(os.path.join(nc, "metadata.json")))["noise_correction"]
    assert ncm["seed"] == 321 and 0 < ncm["noise_mean"] < 1, ncm
    a, b = read_mrc(os.path.join(nc, "scores.mrc")), read_mrc(os.path.join(plain, "scores.mrc"))
    assert np.abs(a - b).max() > 1e-3
    truth = open(os.path.join(sim, "truth.tsv")).read().splitlines()[1].split("\t")
    run(bin_, "peaks", "-i", nc, "-n", 1, "-q")
    top = open(os.path.join(nc, "peaks.tsv")).read().splitlines()[1].split("\t")
    assert top[:3] == truth[:3], (top, truth)
    # two real proteins in one simulated tilt series, searched for one: 1TII's copies come out on
    # top, IL2's below them (templates from the models, the series' weighting)
    t1, t2 = os.path.join(work, "t1tii.mrc"), os.path.join(work, "til2.mrc")
    run(bin_, "template", "--model", STRUCTURE, "--voxel-size", 6, "--box", 20, "-o", t1, "-q")
    run(bin_, "template", "--model", os.path.join(os.path.dirname(STRUCTURE), "il2.pdb"), "--voxel-size", 6, "--box", 20, "-o", t2, "-q")
    two = os.path.join(work, "two")
    run(bin_, "simulate", "-o", two, "--tilt-series", "--size", 72, 72, 48, "--voxel-size", 6, "--template", t1, "--other", t2,
        "--other-copies", 2, "--copies", 2, "--contrast", TWO_PROTEIN_CONTRAST, "--seed", 3)
    rows = [l.split("\t") for l in open(os.path.join(two, "truth.tsv")).read().splitlines()[1:]]
    assert [r[7] for r in rows] == ["0", "0", "1", "1"], rows
    found2 = os.path.join(work, "two_result")
    run(bin_, "match", "-t", f"{two}/target.mrc", "-m", t1, "--mask", f"{two}/mask.mrc", "-o", found2, "-a", 30, "--planning",
        "estimate", "--tilt-angles", f"{two}/TS.tlt", "--dose", f"{two}/dose.txt", "--defocus", f"{two}/TS.defocus", "-q")
    sc = read_mrc(os.path.join(found2, "scores.mrc"))
    best = [float(sc[max(int(r[0]) - 2, 0):int(r[0]) + 3, max(int(r[1]) - 2, 0):int(r[1]) + 3, max(int(r[2]) - 2, 0):int(r[2]) + 3].max())
            for r in rows]
    assert min(best[:2]) > max(best[2:]), f"1TII's copies score {best[:2]}, IL2's {best[2:]}"
    run(bin_, "peaks", "-i", found2, "-n", 2, "--margin", 6, "-q")
    top2 = [l.split("\t") for l in open(os.path.join(found2, "peaks.tsv")).read().splitlines()[1:]]
    for p in top2:
        assert min(sum((int(p[k]) - int(r[k])) ** 2 for k in range(3)) for r in rows[:2]) <= 9, (p, rows)  # z smeared by the wedge
    print(f"fusor-match templates: two proteins: 1TII's copies score {min(best[:2]):.3f} and up, IL2's {max(best[2:]):.3f} at most")
    print(f"fusor-match templates: 1tii.pdb integrates to F(0) = {f0:.1f} Å within 1e-5; mmCIF and gzip give the same "
          f"voxels; resampled to {voxel[0]:.4f} Å it keeps its integral; sphere and tight masks by their definitions")


def errors(bin_, work):
    sim = os.path.join(work, "sim")
    run(bin_, "simulate", "-o", sim, "--size", 24, 24, 24, "--template-size", 9, "--copies", 1)
    small = os.path.join(work, "small")
    run(bin_, "simulate", "-o", small, "--size", 16, 16, 16, "--template-size", 9, "--copies", 1, "--voxel-size", 8)
    t, m = f"{sim}/target.mrc", f"{sim}/template.mrc"
    out = os.path.join(work, "out")
    seeds_plain, seeds_far, seeds_bad = (os.path.join(work, f) for f in ("plain_seeds.tsv", "far_seeds.tsv", "bad_seeds.tsv"))
    open(seeds_plain, "w").write("x\ty\tz\n12\t12\t12\n")
    open(seeds_far, "w").write("x\ty\tz\trot\ttilt\tpsi\n12\t12\t12\t0\t90\t0\n30\t12\t12\t0\t0\t0\n")
    open(seeds_bad, "w").write("a\tb\tc\n1\t2\t3\n")
    open(seeds_far.replace("far", "one"), "w").write("x\ty\tz\trot\ttilt\tpsi\n12\t12\t12\t10\t37\t0\n")
    cases = [
        ("seeds without radius", ["match", "-t", t, "-m", m, "-o", out, "--seeds", seeds_plain], "--seeds needs --seed-radius", ""),
        ("seed radius of two", ["match", "-t", t, "-m", m, "-o", out, "--seeds", seeds_plain, "--seed-radius", "1,2"],
         "one radius or three", ""),
        ("seed radius alone", ["match", "-t", t, "-m", m, "-o", out, "--seed-radius", "2"], "--seed-radius", "--seeds"),
        ("seed outside", ["match", "-t", t, "-m", m, "-o", out, "--seeds", seeds_far, "--seed-radius", "2"],
         "far_seeds.tsv line 3", "lies outside the target (24, 24, 24)"),
        ("seed cone without angles", ["match", "-t", t, "-m", m, "-o", out, "--seeds", seeds_plain, "--seed-radius", "2",
                                      "--seed-cone", "20"], "--seed-cone needs each point's orientation", "line 2 has no angles"),
        ("seed cone empty", ["match", "-t", t, "-m", m, "-o", out, "--seeds", seeds_far.replace("far", "one"), "--seed-radius", "2",
                             "--seed-cone", "0.5", "-a", "90"], "no rotation of the set", "widen --seed-cone"),
        ("seeds and target mask", ["match", "-t", t, "-m", m, "-o", out, "--seeds", seeds_plain, "--seed-radius", "2",
                                   "--target-mask", t], "excludes --target-mask", ""),
        ("seeds without x y z", ["match", "-t", t, "-m", m, "-o", out, "--seeds", seeds_bad, "--seed-radius", "2"],
         "column names with x, y and z", ""),
        ("seeds tomo of a TSV", ["match", "-t", t, "-m", m, "-o", out, "--seeds", seeds_plain, "--seed-radius", "2",
                                 "--seeds-tomo", "a"], "--seeds-tomo selects rows of a STAR file", ""),
        ("missing target", ["match", "-t", f"{work}/none.mrc", "-m", m, "-o", out], "target", "missing or not readable"),
        ("missing option", ["match", "-t", t, "-o", out], "--template", "required"),
        ("bad score", ["match", "-t", t, "-m", m, "-o", out, "-s", "flc"], "FLCSphericalMask", "got \"flc\""),
        ("half precision of CC", ["match", "-t", t, "-m", m, "-o", out, "-s", "CC", "--half-precision"],
         "--half-precision", "CC is an unnormalised correlation"),
        ("bad planning", ["match", "-t", t, "-m", m, "-o", out, "--planning", "fast"], "--planning", "estimate"),
        ("bad edges", ["match", "-t", t, "-m", m, "-o", out, "--edges", "mirror"], "--edges", "wrap"),
        ("bad grid", ["match", "-t", t, "-m", m, "-o", out, "--grid", "small"], "--grid", "target"),
        ("bad rotation centre", ["match", "-t", t, "-m", m, "-o", out, "--rotation-centre", "middle"], "--rotation-centre",
         "pytme"),
        ("template larger", ["match", "-t", m, "-m", t, "-o", out], "larger than the target", "along axis"),
        ("voxel sizes", ["match", "-t", t, "-m", f"{small}/template.mrc", "-o", out], "mismatched voxel sizes", "8.0"),
        ("budget", ["match", "-t", t, "-m", m, "-o", out, "--memory", "100K"], "does not hold", "raise the budget"),
        ("bad budget", ["match", "-t", t, "-m", m, "-o", out, "--memory", "lots"], "--memory", "got \"lots\""),
        ("bad symmetry", ["match", "-t", t, "-m", m, "-o", out, "--symmetry", "X3"], "Cn or Dn", "X3"),
        ("step and file", ["match", "-t", t, "-m", m, "-o", out, "-a", "20", "--rotations", t], "excludes", "--rotations"),
        ("bad wedge", ["match", "-t", t, "-m", m, "-o", out, "--wedge", "60", "-60"], "--wedge", "lower first"),
        ("mask shape", ["match", "-t", t, "-m", m, "--mask", t, "-o", out], "the mask", "expected the template's"),
        ("no match output", ["peaks", "-i", f"{work}/none"], "metadata.json", "missing"),
        ("two thresholds", ["peaks", "-i", sim, "--min-score", "0.3", "--false-positives", "1"], "excludes", ""),
        ("no subcommand", [], "subcommand", ""),
        ("preview of nothing", ["preview", "-i", f"{work}/none"], "metadata.json", "missing"),
        ("simulate too full", ["simulate", "-o", f"{work}/full", "--size", "20", "20", "20", "--template-size", "9",
                               "--copies", "50"], "do not fit", "fewer --copies"),
    ]
    pytom_degrees = os.path.join(work, "pytom_degrees.txt")
    open(pytom_degrees, "w").write("30 60 90\n")
    bad_rot = os.path.join(work, "rot.txt")
    open(bad_rot, "w").write("rot tilt psi\n0 0 0\n10 20\n")
    cases.append(("rotation file", ["match", "-t", t, "-m", m, "-o", out, "--rotations", bad_rot], "line 3",
                  "expected 3 numbers"))
    huge_rot = os.path.join(work, "huge.txt")
    open(huge_rot, "w").write("0 0 0\n1e308 0 0\n")
    cases.append(("huge angle", ["match", "-t", t, "-m", m, "-o", out, "--rotations", huge_rot], "line 2",
                  "from -360 to 360, got 1e+308"))
    open(os.path.join(work, "quat.txt"), "w").write("1 0 0 0\n1e300 1e300 0 0\n")
    cases.append(("huge quaternion", ["match", "-t", t, "-m", m, "-o", out, "--rotations", f"{work}/quat.txt"],
                  "line 2", "finite, non-zero length, got length inf"))
    # numbers: finite and in range, bounds as people write them
    cases += [
        ("threads beyond the machine", ["match", "-t", t, "-m", m, "-o", out, "-j", "100000"], "--threads",
         f"from 0 to {4 * os.cpu_count()}"),
        ("negative threads", ["match", "-t", t, "-m", m, "-o", out, "-j", "-3"], "--threads", "got \"-3\""),
        ("huge budget", ["match", "-t", t, "-m", m, "-o", out, "--memory", "1e30"], "--memory", "1 byte to 1024T"),
        ("huger budget", ["match", "-t", t, "-m", m, "-o", out, "--memory", "1e300T"], "--memory", "1 byte to 1024T"),
        ("half a byte", ["match", "-t", t, "-m", m, "-o", out, "--memory", "0.5"], "--memory", "got \"0.5\""),
        ("NaN low-pass", ["match", "-t", t, "-m", m, "-o", out, "--lowpass", "nan"], "--lowpass", "finite number"),
        ("inf high-pass", ["match", "-t", t, "-m", m, "-o", out, "--highpass", "inf"], "--highpass", "finite number"),
        ("NaN voltage", ["match", "-t", t, "-m", m, "-o", out, "--defocus", "1e4", "--voltage", "nan"], "--voltage", "from 1 to 3000"),
        ("NaN amplitude contrast", ["match", "-t", t, "-m", m, "-o", out, "--amplitude-contrast", "nan"],
         "--amplitude-contrast", "finite number"),
        ("wedge beyond 90", ["match", "-t", t, "-m", m, "-o", out, "--wedge", "-100", "60"], "--wedge", "from -90 to 90"),
        ("NaN step", ["match", "-t", t, "-m", m, "-o", out, "-a", "nan"], "--angular-step", "above 0 and up to 180"),
        ("NaN min-score", ["peaks", "-i", sim, "--min-score", "nan"], "--min-score", "finite number"),
        ("zero false positives", ["peaks", "-i", sim, "--false-positives", "0"], "--false-positives", "above 0"),
        ("inf noise", ["simulate", "-o", f"{work}/sim_inf", "--noise", "inf"], "--noise", "finite number"),
    ]
    # the tilt series: every file read and every count checked before any work
    tlt = os.path.join(work, "TS.tlt")
    open(tlt, "w").write("".join(f"{a}\n" for a in range(-60, 61, 10)))
    dose12 = os.path.join(work, "dose12.txt")
    open(dose12, "w").write("".join(f"{3 * i}\n" for i in range(12)))
    bad_tlt = os.path.join(work, "bad.tlt")
    open(bad_tlt, "w").write("-60\n-50\nx\n")
    defocus = os.path.join(work, "TS.defocus")
    open(defocus, "w").write("1 1 -60 -60 3000 2\n2 12 -50 50 3100\n")
    cases += [
        ("wedge and tilts", ["match", "-t", t, "-m", m, "-o", out, "--wedge", "-60", "60", "--tilt-angles", tlt],
         "--wedge and the tilt series", "give one"),
        ("dose count", ["match", "-t", t, "-m", m, "-o", out, "--tilt-angles", tlt, "--dose", dose12], "gives 12 doses for 13 tilts",
         "one per tilt"),
        ("dose without tilts", ["match", "-t", t, "-m", m, "-o", out, "--dose", dose12], "--dose", "give the tilts too"),
        ("defocus file without tilts", ["match", "-t", t, "-m", m, "-o", out, "--defocus", defocus], "names a defocus file",
         "--tilt-angles or --mdoc"),
        ("defocus views", ["match", "-t", t, "-m", m, "-o", out, "--tilt-angles", tlt, "--defocus", defocus],
         "TS.defocus", "gives no defocus for view 13 of 13"),
        ("bad tilt file", ["match", "-t", t, "-m", m, "-o", out, "--tilt-angles", bad_tlt], "bad.tlt:3", "tilt angle 'x'"),
        ("bad tilt range", ["match", "-t", t, "-m", m, "-o", out, "--tilt-angles=-60,60:0"], "-60,60:0", "start,stop:step"),
        ("negative tilt defocus", ["match", "-t", t, "-m", m, "-o", out, "--tilt-angles", tlt, "--defocus", "-2e4"],
         "tilt 0 has defocus U -20000", "positive underfocus"),
        ("weighting without tilts", ["match", "-t", t, "-m", m, "-o", out, "--tilt-weighting", "relion"], "--tilt-weighting",
         "give the tilts"),
    ]
    # non-finite voxels: refused before any work, naming the file and the voxel. A simulated
    # file's data starts at byte 1024 (no extended header): the first voxel and the last
    data = open(t, "rb").read()
    assert struct.unpack("<i", data[92:96])[0] == 0, "the simulated target has an extended header"
    nan_t, inf_m = os.path.join(work, "nan_target.mrc"), os.path.join(work, "inf_template.mrc")
    open(nan_t, "wb").write(data[:1024] + struct.pack("<f", float("nan")) + data[1028:])
    tdata = open(m, "rb").read()
    open(inf_m, "wb").write(tdata[:-4] + struct.pack("<f", float("inf")))
    cases += [
        ("NaN target", ["match", "-t", nan_t, "-m", m, "-o", out], f"the target {nan_t} holds a non-finite value",
         "at voxel (0, 0, 0)"),
        ("inf template", ["match", "-t", t, "-m", inf_m, "-o", out], "the template", "non-finite value (NaN or inf) at voxel (8, 8, 8)"),
        ("inf mask", ["match", "-t", t, "-m", m, "--mask", inf_m, "-o", out], f"the mask {inf_m} holds a non-finite value",
         "(8, 8, 8)"),
    ]
    # an empty template (9 x 9 x 0 voxels): said so, nothing created
    empty = os.path.join(work, "empty.mrc")
    open(empty, "wb").write(tdata[:8] + struct.pack("<i", 0) + tdata[12:1024])
    cases.append(("empty template", ["match", "-t", t, "-m", empty, "-o", out], "the template", "is empty ((9, 9, 0) voxels)"))
    tiny = os.path.join(work, "tiny.mrc")
    open(tiny, "wb").write(tdata[:8] + struct.pack("<i", 2) + tdata[12:1024 + 9 * 9 * 2 * 4])
    cases.append(("tiny template", ["match", "-t", t, "-m", tiny, "-o", out], "too small for the default spherical mask",
                  "give a --mask"))
    # templates and masks
    bad_charge = os.path.join(work, "charge.pdb")
    open(bad_charge, "w").write("ATOM      1  CA  GLY A   1      10.000  10.000  10.000  1.00 20.00           C68\nEND\n")
    unknown = os.path.join(work, "unknown.pdb")
    open(unknown, "w").write("ATOM      1  Q1  GLY A   1      10.000  10.000  10.000  1.00 20.00          QQ\nEND\n")
    no_atoms = os.path.join(work, "no_atoms.pdb")
    open(no_atoms, "w").write("HEADER    NOTHING\nEND\n")
    tpl = os.path.join(work, "tpl.mrc")
    tomograms_star = os.path.join(work, "tomograms.star")
    open(tomograms_star, "w").write(RELION_TOMOGRAMS)
    short_star, long_star = os.path.join(work, "short.star"), os.path.join(work, "long.star")
    open(short_star, "w").write("data_particles\n\nloop_\n_rlnTomoName #1\n_rlnCoordinateX #2\nTS_01 10\n")
    open(long_star, "w").write("data_particles\n\nloop_\n_rlnTomoName #1\n_rlnCoordinateX #2\n_rlnCoordinateY #3\nTS_02 10 12\n")
    cases += [
        ("cone and rotation file", ["match", "-t", t, "-m", m, "-o", out, "--cone-angle", "30", "--rotations", bad_rot],
         "--cone-angle builds its own rotations", ""),
        ("cone and D2", ["match", "-t", t, "-m", m, "-o", out, "--cone-angle", "30", "--symmetry", "D2"], "takes a Cn symmetry", ""),
        ("healpix and D2", ["match", "-t", t, "-m", m, "-o", out, "--angle-set", "healpix", "--symmetry", "D2"],
         "--angle-set healpix takes a Cn symmetry", "got D2"),
        ("healpix and rotation file", ["match", "-t", t, "-m", m, "-o", out, "--angle-set", "healpix", "--rotations", bad_rot],
         "--angle-set healpix builds its own rotations", ""),
        ("cone and healpix", ["match", "-t", t, "-m", m, "-o", out, "--angle-set", "healpix", "--cone-angle", "20"],
         "excludes --angle-set healpix", ""),
        ("pytom angles in degrees", ["match", "-t", t, "-m", m, "-o", out, "--rotations", pytom_degrees, "--rotations-convention",
                                     "pytom"], "pytom_degrees.txt line 1", "radians from -2 pi to 2 pi, got 30"),
        ("resolution alone", ["match", "-t", t, "-m", m, "-o", out, "--resolution", "20"], "--resolution sets the step",
         "--particle-diameter"),
        ("diameter and step", ["match", "-t", t, "-m", m, "-o", out, "--particle-diameter", "100", "-a", "10"], "excludes", ""),
        ("model and map", ["template", "--model", unknown, "--map", m, "--voxel-size", "5", "-o", tpl], "excludes", ""),
        ("model without box", ["template", "--model", unknown, "--voxel-size", "5", "-o", tpl], "--model needs --box", ""),
        ("malformed model", ["template", "--model", bad_charge, "--voxel-size", "5", "--box", "8", "-o", tpl],
         f"cannot read the model {bad_charge} as PDB or mmCIF", "charge"),
        ("unknown element", ["template", "--model", unknown, "--voxel-size", "5", "--box", "8", "-o", tpl],
         "atom Q1 of residue GLY 1 in chain A", "no tabulated electron scattering factor"),
        ("model without atoms", ["template", "--model", no_atoms, "--voxel-size", "5", "--box", "8", "-o", tpl], "no atoms", ""),
        ("missing model", ["template", "--model", f"{work}/none.pdb", "--voxel-size", "5", "--box", "8", "-o", tpl],
         "none.pdb is missing", ""),
        ("zero voxel size", ["template", "--model", unknown, "--voxel-size", "0", "--box", "8", "-o", tpl], "--voxel-size", "above 0"),
        ("blur of a map", ["template", "--map", m, "--voxel-size", "10", "--blur", "50", "-o", tpl], "--blur is for --model", ""),
        ("dark map's centre of mass", ["template", "--map", nan_t.replace("nan_target", "negative"), "--voxel-size", "10", "-o", tpl],
         "positive density", "invert it first"),
        ("output under a file", ["template", "--map", m, "--voxel-size", "10", "-o", f"{m}/t.mrc"], "cannot be written",
         "is not a folder"),
        ("tight mask without template", ["mask", "--shape", "tight", "--box", "8", "-o", tpl], "--shape tight needs --template", ""),
        ("sphere without radius", ["mask", "--box", "8", "-o", tpl], "--shape sphere needs --radius", ""),
        ("mask box", ["mask", "--box", "8", "--template", m, "--radius", "3", "-o", tpl], "is not the template's shape", ""),
        ("stats of nothing", ["stats", "-i", f"{work}/none"], "metadata.json", "missing"),
        ("merge one STAR", ["merge-stars", tomograms_star, "-o", tpl], "two or more STAR files", ""),
        ("merge no particles", ["merge-stars", tomograms_star, tomograms_star, "-o", tpl], "holds no data_particles loop", ""),
        ("merge other columns", ["merge-stars", short_star, long_star, "-o", tpl], "has the columns", "the same columns"),
        ("stats bins", ["stats", "-i", sim, "--bins", "3"], "--bins", "from 10 to 100000"),
        ("tophat connectivity", ["peaks", "-i", sim, "--tophat", "--tophat-connectivity", "4"], "--tophat-connectivity", ""),
        ("empty tight mask", ["mask", "--template", m, "--shape", "tight", "--threshold", "1e9", "-o", tpl],
         "no voxel of the template is above the threshold", "its values run from"),
    ]
    # a map with no positive value (the template negated) for the centre-of-mass case
    open(nan_t.replace("nan_target", "negative"), "wb").write(
        tdata[:1024] + struct.pack(f"<{(len(tdata) - 1024) // 4}f",
                                   *[-abs(x) - 1 for x in struct.unpack(f"<{(len(tdata) - 1024) // 4}f", tdata[1024:])]))
    for name, args, *expect in cases:
        p = run(bin_, *args, ok=False)
        text = p.stdout + p.stderr
        assert p.returncode != 0, f"{name}: exit 0\n{text}"
        for e in expect:
            assert e in text, f"{name}: {e!r} not in the message:\n{text}"
        assert not re.search(r"[0-9]{40}", text), f"{name}: a number of 40 digits in the message:\n{text}"
        assert not os.path.exists(out), f"{name}: the output folder was made: {os.listdir(out)}"
        assert not os.path.exists(tpl), f"{name}: {tpl} was written"
        assert not [f for f in os.listdir(work) if ".fusor-partial-" in f], f"{name}: staging left: {os.listdir(work)}"
    # a constant target: no evidence of the template anywhere, so every score is 0 up to rounding
    # (pyTME's normalisation, sigma 1 where it is below float's epsilon); with zeros beyond the
    # faces the faces themselves are a step the template may correlate with, so only voxels a
    # template's reach inside are checked there
    import numpy as np
    nx, ny, nz = struct.unpack("<3i", data[:12])
    const = os.path.join(work, "constant.mrc")
    open(const, "wb").write(data[:1024] + np.full(nx * ny * nz, 2.5, "<f4").tobytes())
    for edges in ("wrap", "zeros"):
        for score in ("FLCSphericalMask", "FLC", "CORR", "MCC"):
            d = os.path.join(work, f"const_{edges}_{score}")
            run(bin_, "match", "-t", const, "-m", m, "-o", d, "-a", 60, "--planning", "estimate", "-s", score,
                "--edges", edges, "-q")
            sc = read_mrc(os.path.join(d, "scores.mrc"))
            r = 9 if edges == "zeros" else 0
            inner = sc[r:sc.shape[0] - r, r:sc.shape[1] - r, r:sc.shape[2] - r]
            assert inner.size and np.abs(inner).max() < 1e-3, (edges, score, float(np.abs(inner).max()))
    # a malformed metadata.json: every field a reader needs is reported in words
    good = os.path.join(work, "good")
    run(bin_, "match", "-t", t, "-m", m, "-o", good, "-a", 90, "--planning", "estimate", "-q")
    meta_path = os.path.join(good, "metadata.json")
    meta = json.load(open(meta_path))
    for field, value, words in ((("statistics", "mean"), None, "statistics.mean is null; expected a finite number"),
                                (("statistics", "stddev"), "x", "statistics.stddev is string \"x\"; expected a finite number"),
                                (("template_shape",), [9, 9], "template_shape is array [9,9]; expected three voxel counts"),
                                (("rotations", "count"), -1, "rotations.count is number -1; expected a count"),
                                (("target",), 7, "target is number 7; expected a string"),
                                (("rotation_centre", "voxel"), [4, "4", 4], "expected three finite numbers"),
                                (("rotation_centre", "voxel"), [4, 4, 12], "expected a point inside the template's box")):
        bad = json.loads(json.dumps(meta))
        node = bad
        for k in field[:-1]:
            node = node[k]
        node[field[-1]] = value
        json.dump(bad, open(meta_path, "w"))
        for sub in (["peaks", "-i", good, "-q"],) + ((["preview", "-i", good, "-q"],) if field[0] in ("target", "template_shape") else ()):
            p = run(bin_, *sub, ok=False)
            assert p.returncode == 1 and words in p.stderr and "json.exception" not in p.stderr, (field, p.stderr)
    json.dump(meta, open(meta_path, "w"))
    run(bin_, "peaks", "-i", good, "-q")
    print(f"fusor-match errors: {len(cases)} error paths give their messages and create nothing; malformed metadata in words")


def folder(bin_, work):
    sim, out = os.path.join(work, "sim"), os.path.join(work, "out")
    run(bin_, "simulate", "-o", sim, "--size", 28, 26, 24, "--template-size", 9, "--copies", 1, "--seed", 4)
    match = [bin_, "match", "-t", f"{sim}/target.mrc", "-m", f"{sim}/template.mrc", "-o", out, "--planning", "estimate",
             "-q", "--threads", 1]
    parts = ("scores.mrc", "rotations.mrc", "rotations.tsv", "metadata.json")

    def contents():  # the lock file of a killed run stays (flock is released with the process)
        return {f: open(os.path.join(out, f), "rb").read() for f in sorted(os.listdir(out)) if f != ".fusor-match.lock"}

    def staging():
        return sorted(f for f in os.listdir(work) if f.startswith(".out.fusor-partial-"))

    def rotation_count():
        return json.load(open(os.path.join(out, "metadata.json")))["rotations"]["count"]

    run(*match, "-a", 90)
    run(bin_, "peaks", "-i", out, "-n", 1, "-q")
    old = contents()
    assert set(old) == set(parts) | {"peaks.tsv", "peaks.star"}, sorted(old)
    old_count = rotation_count()
    # killed after each step of the writing, up to the swap: the previous result, whole, with
    # what was derived from it; the dead run's staging folder stays until the next run
    for point in parts:
        p = subprocess.run([str(a) for a in match + ["-a", 60]], capture_output=True, text=True,
                           env=dict(os.environ, FUSOR_MATCH_TEST_KILL_AT=point))
        assert p.returncode == -signal.SIGKILL, (point, p.returncode, p.stderr)
        assert contents() == old, f"killed after staging {point}: the folder changed: {sorted(contents())}"
        assert len(staging()) == 1, (point, staging())
        run(bin_, "peaks", "-i", out, "-o", os.path.join(work, "p"), "-q")
    # killed right after the swap: the new result, whole; nothing derived from the old one
    p = subprocess.run([str(a) for a in match + ["-a", 60]], capture_output=True, text=True,
                       env=dict(os.environ, FUSOR_MATCH_TEST_KILL_AT="swapped"))
    assert p.returncode == -signal.SIGKILL, p.stderr
    new = contents()
    assert set(new) == set(parts) and rotation_count() > old_count, (sorted(new), rotation_count(), old_count)
    run(bin_, "peaks", "-i", out, "-q")
    # the next run removes the dead runs' staging folders, and the peaks of the result it replaces
    run(*match, "-a", 90)
    assert staging() == [], staging()
    now = contents()
    assert sorted(now) == sorted(parts) and all(now[f] == old[f] for f in parts[:3]), "the same scan gave other maps"
    run(bin_, "peaks", "-i", out, "-n", 1, "-q")
    run(bin_, "preview", "-i", out, "-q")
    assert os.path.isfile(os.path.join(out, "preview.png"))
    before = contents()
    run(*match, "-a", 90)
    assert sorted(contents()) == sorted(parts), f"derived files outlived their result: {sorted(contents())}"

    # a full disk, as a file-size limit: the write fails, the previous result stays, nothing is left
    run(bin_, "peaks", "-i", out, "-n", 1, "-q")
    before = contents()

    def small_files():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG) instead
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
    p = subprocess.run([str(a) for a in match + ["-a", 60]], capture_output=True, text=True, preexec_fn=small_files)
    assert p.returncode == 1 and "File too large" in p.stderr, (p.returncode, p.stderr)
    assert contents() == before and staging() == [], (sorted(contents()), staging())

    # a second writer while the first runs: it fails at once, naming the first; so do peaks and
    # preview writing into the folder; reading it elsewhere works
    first = subprocess.Popen([str(a) for a in match[:-3] + ["-a", 5, "--threads", 1]], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    header = first.stdout.readline()  # printed as the scan starts, the folder locked
    assert header.startswith("match:"), header + first.stderr.read()
    for second in (match + ["-a", 90], [bin_, "peaks", "-i", out, "-q"], [bin_, "preview", "-i", out, "-q"]):
        t0 = time.time()
        p = run(*second, ok=False)
        assert p.returncode == 1 and f"in use by another fusor-match (pid {first.pid} on " in p.stderr, p.stderr
        assert time.time() - t0 < 30, "the second writer waited"
    run(bin_, "peaks", "-i", out, "-o", os.path.join(work, "elsewhere"), "-q")
    first.send_signal(signal.SIGINT)
    _, err = first.communicate(timeout=120)
    assert first.returncode == 130 and "interrupted" in err, (first.returncode, err)
    assert contents() == before and staging() == [], "an interrupted run changed the folder"
    assert not os.path.exists(os.path.join(out, ".fusor-match.lock"))

    # a part from another result: refused in words by peaks and preview
    other = os.path.join(work, "other")
    run(bin_, "match", "-t", f"{sim}/target.mrc", "-m", f"{sim}/template.mrc", "-o", other, "-a", 60, "--planning",
        "estimate", "-q")
    shutil.copy(os.path.join(other, "scores.mrc"), os.path.join(out, "scores.mrc"))
    for reader in ("peaks", "preview"):
        p = run(bin_, reader, "-i", out, "-q", ok=False)
        assert p.returncode == 1 and "scores.mrc is not the part metadata.json records" in p.stderr, p.stderr
    shutil.copy(os.path.join(other, "rotations.tsv"), os.path.join(out, "rotations.tsv"))
    p = run(bin_, "peaks", "-i", out, "-q", ok=False)
    assert p.returncode == 1 and "mixes two results" in p.stderr, p.stderr
    # a file of the user's in the folder: refused before any work (the swap would take it away)
    open(os.path.join(out, "notes.txt"), "w").write("mine")
    p = run(*match, "-a", 90, ok=False)
    assert p.returncode == 1 and "holds files fusor-match did not write (notes.txt)" in p.stderr, p.stderr
    assert open(os.path.join(out, "notes.txt")).read() == "mine"
    print("fusor-match result folder: whole after a kill at each of 5 points, a full disk, a second writer and an "
          "interrupt; mixed parts and foreign files refused; derived files and dead runs' temporaries removed")


def star(bin_, work):
    try:
        import starfile
    except ImportError:
        print("SKIPPED: the starfile package is missing (scripts/deps installs it: pip install 'starfile>=0.4.12,<0.5')")
        sys.exit(77)
    sim, out = os.path.join(work, "sim"), os.path.join(work, "out")
    run(bin_, "simulate", "-o", sim, "--size", 40, 36, 32, "--template-size", 11, "--copies", 2, "--seed", 3,
        "--angular-step", 45, "--voxel-size", 6.5)
    run(bin_, "match", "-t", f"{sim}/target.mrc", "-m", f"{sim}/template.mrc", "--mask", f"{sim}/mask.mrc", "-o", out,
        "-a", 45, "--planning", "estimate", "-q")
    run(bin_, "peaks", "-i", out, "-n", 2, "--tomo-name", "TS_01", "-q")
    table = starfile.read(os.path.join(out, "peaks.star"))
    assert len(table) == 2, table
    tsv = [l.split("\t") for l in open(os.path.join(out, "peaks.tsv")).read().splitlines()]
    head, rows = tsv[0], tsv[1:]
    truth = [l.split("\t") for l in open(os.path.join(sim, "truth.tsv")).read().splitlines()[1:]]
    planted = {(int(t[0]), int(t[1]), int(t[2])): [float(v) for v in t[4:7]] for t in truth}
    assert list(table["rlnTomoName"]) == ["TS_01", "TS_01"], table["rlnTomoName"]
    for i, r in enumerate(rows):
        voxel = tuple(int(r[head.index(c)]) for c in ("x", "y", "z"))
        got = tuple(int(table[f"rlnCoordinate{c}"][i]) for c in "XYZ")
        assert got == voxel and voxel in planted, (got, voxel, sorted(planted))
        # RELION 5's centred coordinates in Å: (voxel - size // 2) * voxel size
        for c, v, size in zip("XYZ", voxel, (40, 36, 32)):
            angst = float(table[f"rlnCenteredCoordinate{c}Angst"][i])
            assert abs(angst - (v - size // 2) * 6.5) < 1e-3, (c, angst, v)
        angles = [float(table[c][i]) for c in ("rlnAngleRot", "rlnAngleTilt", "rlnAnglePsi")]
        assert max(abs(a - b) for a, b in zip(angles, planted[voxel])) < 1e-3, (angles, planted[voxel])
    print(f"fusor-match STAR file: starfile reads {len(table)} rows with columns {list(table.columns)}")


def mpi(bin_, work, mpirun):
    if mpirun == "none" or not shutil.which(mpirun):
        print("SKIPPED: fusor-match was built without MPI or mpirun is missing (Debian: libopenmpi-dev openmpi-bin)")
        sys.exit(77)
    sim = os.path.join(work, "sim")
    run(bin_, "simulate", "-o", sim, "--size", 40, 36, 38, "--template-size", 11, "--copies", 2, "--seed", 8)
    common = ["match", "-t", f"{sim}/target.mrc", "-m", f"{sim}/template.mrc", "-a", 40, "--planning", "estimate",
              "--threads", 1, "-q"]
    # Open MPI refuses root without these; --oversubscribe lets 2 ranks share fewer cores
    # (LeakSanitizer, in the sanitizer build, would report Open MPI's own allocations kept until exit)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", ASAN_OPTIONS="detect_leaks=0")
    # the whole target: the ranks split the rotations; a budget that cuts it into tiles: the ranks
    # split the tiles, each scoring every rotation on its own
    for split, budget in (("rotations", []), ("tiles", ["--memory", "2M"])):
        one_dir, two_dir = os.path.join(work, f"one_{split}"), os.path.join(work, f"two_{split}")
        run(bin_, *common, *budget, "-o", one_dir)
        cmd = [mpirun, "-n", "2", "--oversubscribe", bin_, *map(str, common + budget), "-o", two_dir]
        p = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if p.returncode != 0:
            sys.exit(f"FAILED ({p.returncode}): {' '.join(cmd)}\n{p.stdout}\n{p.stderr}")
        for f in ("scores.mrc", "rotations.mrc", "rotations.tsv"):
            a = open(os.path.join(one_dir, f), "rb").read()
            b = open(os.path.join(two_dir, f), "rb").read()
            assert a == b, f"{f}: 2 processes differ from 1 ({len(a)} and {len(b)} bytes; split by {split})"
        one = json.load(open(os.path.join(one_dir, "metadata.json")))
        two = json.load(open(os.path.join(two_dir, "metadata.json")))
        assert two["processes"] == 2 and one["processes"] == 1, (one["processes"], two["processes"])
        assert two["split"] == split and one["split"] is None, (split, one["split"], two["split"])
        tiled = one["tile"] != [40, 36, 38]
        assert tiled == (split == "tiles") and two["tile"] == one["tile"], (split, one["tile"], two["tile"])
        s1, s2 = one["statistics"], two["statistics"]
        assert s1["count"] == s2["count"], (s1, s2)
        assert abs(s1["mean"] - s2["mean"]) <= 1e-9 * max(1.0, abs(s1["mean"])), (s1, s2)
        assert abs(s1["stddev"] - s2["stddev"]) <= 1e-9 * s1["stddev"], (s1, s2)
    # a bad input on every rank ends the job with the message, not a hang
    p = subprocess.run([mpirun, "-n", "2", "--oversubscribe", bin_, "match", "-t", f"{work}/none.mrc", "-m",
                        f"{sim}/template.mrc", "-o", os.path.join(work, "bad")], capture_output=True, text=True,
                       env=env, timeout=120)
    assert p.returncode != 0 and "missing or not readable" in p.stdout + p.stderr, p.stdout + p.stderr
    assert not os.path.exists(os.path.join(work, "bad", "scores.mrc"))
    # a rank that fails part-way through its scan ends the job: rank 1 interrupted (its own
    # MPI_Abort, with its message), then rank 1 killed (Open MPI's own ending); no map is written
    long_run = ["match", "-t", f"{sim}/target.mrc", "-m", f"{sim}/template.mrc", "-a", 12, "--threads", 1,
                "--planning", "estimate"]
    for how in (signal.SIGINT, signal.SIGKILL):
        out = os.path.join(work, f"part_{how.name}")
        cmd = [mpirun, "-n", "2", "--oversubscribe", bin_, *map(str, long_run), "-o", out]
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        header = p.stdout.readline()  # rank 0 prints it as the scan starts (every rank is past its setup)
        assert header.startswith("match:"), header + p.stderr.read()
        pid = rank_pid(1, out)
        os.kill(pid, how)
        try:
            stdout, stderr = p.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            p.kill()
            sys.exit(f"FAILED: the job went on after rank 1 got {how.name}")
        said = header + stdout + stderr
        assert p.returncode != 0, said
        if how == signal.SIGINT:
            assert "(rank 1 of 2): interrupted; no output was written" in said, said
        assert not os.path.exists(os.path.join(out, "scores.mrc")), f"{how.name}: a map was written"
    print(f"fusor-match under mpirun -n 2: scores.mrc, rotations.mrc and rotations.tsv identical to one process; "
          f"{one['rotations']['count']} rotations; a rank interrupted or killed part-way ends the job and writes nothing")


def rank_pid(rank, marker):
    """The pid of the fusor-match process of MPI rank `rank` whose command line holds `marker`."""
    for _ in range(600):
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                cmdline = open(f"/proc/{d}/cmdline", "rb").read().split(b"\0")
                if marker.encode() not in cmdline or not cmdline[0].endswith(b"fusor-match"):
                    continue
                environ = open(f"/proc/{d}/environ", "rb").read().split(b"\0")
            except OSError:
                continue
            if f"OMPI_COMM_WORLD_RANK={rank}".encode() in environ:
                return int(d)
        time.sleep(0.1)
    sys.exit(f"FAILED: no process of rank {rank} for {marker}")


if __name__ == "__main__":
    if len(sys.argv) < 4 or sys.argv[1] not in ("end_to_end", "errors", "folder", "starfile", "mpi", "templates"):
        sys.exit(__doc__)
    work = sys.argv[3]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    if sys.argv[1] == "mpi":
        mpi(sys.argv[2], work, sys.argv[4] if len(sys.argv) > 4 else "none")
    else:
        {"end_to_end": end_to_end, "errors": errors, "folder": folder, "starfile": star, "templates": templates}[sys.argv[1]](sys.argv[2], work)
