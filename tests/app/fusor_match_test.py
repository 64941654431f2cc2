#!/usr/bin/env python3
"""The fusor-match program tested through its command line (ctest runs each mode):

  end_to_end BIN WORK   simulate -> match -> peaks -> preview: every planted copy is found at its
                        voxel with its rotation, nothing else passes the one-false-positive
                        threshold; the output folder holds the maps, the rotation table and the
                        metadata; the STAR file's loop has one row per peak with RELION 5's
                        columns; the preview PNG decodes to the layout's size with the peaks in red
  errors BIN WORK       every error path gives its message and a non-zero exit before any work,
                        leaving no output files
  starfile BIN WORK     the STAR file read back by the starfile package (RELION users' reader):
                        its rows are the TSV's peaks, coordinates in voxels and Å, the planted
                        ZYZ angles (exit 77: skipped, without starfile; scripts/deps installs it)
  mpi BIN WORK MPIRUN   mpirun -n 2 gives the one-process maps byte for byte; a bad input ends
                        the job with its message; a rank interrupted (SIGINT) or killed part-way
                        through its scan ends the job, and no map is written (exit 77: skipped,
                        without MPI or mpirun)
"""
import json
import os
import shutil
import signal
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
    # the target repeated beyond its faces: 48 and 40 are 5-smooth grids of their own; 44 reads a
    # periodic halo (5-smooth >= 44 + 13 - 1 = 60). The planted copies lie inside: the same peaks
    wrap = os.path.join(work, "wrap")
    run(bin_, "match", "-t", f"{sim}/target.mrc", "-m", f"{sim}/template.mrc", "--mask", f"{sim}/mask.mrc", "-o", wrap,
        "-a", 45, "--planning", "estimate", "--edges", "wrap", "-q")
    wmeta = json.load(open(os.path.join(wrap, "metadata.json")))
    assert wmeta["edges"] == "wrap" and wmeta["fft_shape"] == [48, 60, 40], (wmeta["edges"], wmeta["fft_shape"])
    run(bin_, "peaks", "-i", wrap, "-n", 2, "-q")
    run(bin_, "peaks", "-i", out, "--false-positives", 1)
    truth = [l.split("\t") for l in open(os.path.join(sim, "truth.tsv")).read().splitlines()[1:]]
    want = sorted((int(t[0]), int(t[1]), int(t[2]), int(t[3])) for t in truth)
    found = [l.split("\t") for l in open(os.path.join(out, "peaks.tsv")).read().splitlines()[1:]]
    got = sorted((int(p[0]), int(p[1]), int(p[2]), int(p[4])) for p in found)
    assert got == want, f"peaks {got}, planted {want}"
    wfound = [l.split("\t") for l in open(os.path.join(wrap, "peaks.tsv")).read().splitlines()[1:]]
    assert sorted((int(p[0]), int(p[1]), int(p[2]), int(p[4])) for p in wfound) == want, wfound
    names, rows = read_star_loop(os.path.join(out, "peaks.star"))
    for col in ("rlnTomoName", "rlnCoordinateX", "rlnCoordinateY", "rlnCoordinateZ", "rlnCenteredCoordinateXAngst",
                "rlnAngleRot", "rlnAngleTilt", "rlnAnglePsi"):
        assert col in names, f"{col} missing from the STAR loop {names}"
    assert len(rows) == len(want) and all(len(r) == len(names) for r in rows), rows
    star = sorted((int(r[1]), int(r[2]), int(r[3])) for r in rows)
    assert star == sorted(w[:3] for w in want), star
    # the Euler angles in the STAR rows are the planted rotations' (truth.tsv, 4 decimals)
    angles = {(int(t[0]), int(t[1]), int(t[2])): [float(v) for v in t[4:7]] for t in truth}
    for r in rows:
        e = [float(v) for v in r[names.index("rlnAngleRot"):names.index("rlnAnglePsi") + 1]]
        assert max(abs(a - b) for a, b in zip(e, angles[(int(r[1]), int(r[2]), int(r[3]))])) < 1e-3, (e, r)
    # the preview: a PNG of the size the layout gives, decoded here (unfiltered RGB rows)
    png = os.path.join(out, "preview.png")
    run(bin_, "preview", "-i", out, "--width", 600)
    width, height, pixels = read_png(png)
    zoom = max(1, (600 - 12) // (48 + 48 + 44))
    assert (width, height) == (zoom * 140 + 12, 2 * zoom * 44 + 6), (width, height, zoom)
    red = sum(1 for i in range(0, len(pixels), 3) if pixels[i:i + 3] == b"\xff\x00\x00")
    gray = sum(1 for i in range(0, len(pixels), 3) if pixels[i] == pixels[i + 1] == pixels[i + 2])
    assert red > 0 and gray > width * height // 2, (red, gray, width * height)
    print(f"fusor-match end to end: {len(got)} planted copies found with their rotations; STAR rows {len(rows)}; "
          f"preview {width} x {height} with {red} red pixels")


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


def errors(bin_, work):
    sim = os.path.join(work, "sim")
    run(bin_, "simulate", "-o", sim, "--size", 24, 24, 24, "--template-size", 9, "--copies", 1)
    small = os.path.join(work, "small")
    run(bin_, "simulate", "-o", small, "--size", 16, 16, 16, "--template-size", 9, "--copies", 1, "--voxel-size", 8)
    t, m = f"{sim}/target.mrc", f"{sim}/template.mrc"
    out = os.path.join(work, "out")
    cases = [
        ("missing target", ["match", "-t", f"{work}/none.mrc", "-m", m, "-o", out], "target", "missing or not readable"),
        ("missing option", ["match", "-t", t, "-o", out], "--template", "required"),
        ("bad score", ["match", "-t", t, "-m", m, "-o", out, "-s", "flc"], "FLCSphericalMask", "got \"flc\""),
        ("bad planning", ["match", "-t", t, "-m", m, "-o", out, "--planning", "fast"], "--planning", "estimate"),
        ("bad edges", ["match", "-t", t, "-m", m, "-o", out, "--edges", "mirror"], "--edges", "wrap"),
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
    bad_rot = os.path.join(work, "rot.txt")
    open(bad_rot, "w").write("rot tilt psi\n0 0 0\n10 20\n")
    cases.append(("rotation file", ["match", "-t", t, "-m", m, "-o", out, "--rotations", bad_rot], "line 3",
                  "expected 3 numbers"))
    for name, args, *expect in cases:
        p = run(bin_, *args, ok=False)
        text = p.stdout + p.stderr
        assert p.returncode != 0, f"{name}: exit 0\n{text}"
        for e in expect:
            assert e in text, f"{name}: {e!r} not in the message:\n{text}"
        assert not os.path.exists(out) or not os.listdir(out), f"{name}: output written: {os.listdir(out)}"
    print(f"fusor-match errors: {len(cases)} error paths give their messages")


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
    if len(sys.argv) < 4 or sys.argv[1] not in ("end_to_end", "errors", "starfile", "mpi"):
        sys.exit(__doc__)
    work = sys.argv[3]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    if sys.argv[1] == "mpi":
        mpi(sys.argv[2], work, sys.argv[4] if len(sys.argv) > 4 else "none")
    else:
        {"end_to_end": end_to_end, "errors": errors, "starfile": star}[sys.argv[1]](sys.argv[2], work)
