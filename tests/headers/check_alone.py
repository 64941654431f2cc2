#!/usr/bin/env python3
"""Every header under include/fusor compiles on its own (DESIGN.md: a header is self-contained):
each is the only include of a translation unit checked with -fsyntax-only, in parallel.
Usage: check_alone.py <compiler> <include dir> [flag ...]   (the flags: C++20, -march, -I of cblas.h and
mpi.h; --skip=fusor/<header> leaves one out)
"""
import concurrent.futures
import os
import subprocess
import sys
import tempfile


def main(compiler, include, flags):
    # --skip=fusor/x.hpp: a header whose third-party include this machine lacks (interop/mpi.hpp
    # without MPI)
    skip = {f[len("--skip="):] for f in flags if f.startswith("--skip=")}
    flags = [f for f in flags if not f.startswith("--skip=")]
    root = os.path.join(include, "fusor")
    headers = sorted(h for h in (os.path.relpath(os.path.join(d, f), include) for d, _, files in os.walk(root)
                                 for f in files if f.endswith(".hpp")) if h not in skip)
    with tempfile.TemporaryDirectory() as tmp:
        def check(h):
            src = os.path.join(tmp, h.replace("/", "_") + ".cpp")
            with open(src, "w") as f:
                f.write(f"#include <{h}>\n")
            p = subprocess.run([compiler, "-fsyntax-only", "-I", include, *flags, src], capture_output=True, text=True)
            first = next((l for l in p.stderr.splitlines() if "error" in l), p.stderr[:300])
            return h, p.returncode, first
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            results = list(pool.map(check, headers))
    failed = [(h, e) for h, rc, e in results if rc != 0]
    for h, e in failed:
        print(f"{h} does not compile alone: {e}")
    print(f"check_alone: {len(headers)} headers, {len(failed)} that do not compile on their own")
    return 1 if failed or not headers else 0


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
