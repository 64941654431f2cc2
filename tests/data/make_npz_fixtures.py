#!/usr/bin/env python3
"""Writes the .npz fixtures that tests/test_npz.cpp reads: archives NumPy wrote, so the reader is
checked against NumPy's writer (zipfile), not against fusor's own.

Usage (from the repository root; needs NumPy, the fixtures are checked in because CI has none):

    python3 tests/data/make_npz_fixtures.py [output_dir]   # default: tests/data/npz

The files were made with NumPy 2.4.6. Each holds the same arrays (i the C-order flat index):

  "w"         float32 (3, 4)   i * 0.5 - 2
  "0.weight"  float64 (2, 3)   (i - 2.5) / 4        (a dotted name, as a model's parameters have)
  "steps"     int64 ()         123456789012
  "empty"     float64 (0, 3)

  savez.npz             np.savez             (entries stored)
  savez_compressed.npz  np.savez_compressed  (entries deflated)
  empty.npz             np.savez with no arrays (the zip end record alone)

All values are exact in their type, so the test compares with ==.
"""
import os
import sys
import zipfile

import numpy as np


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "npz")
    os.makedirs(out, exist_ok=True)
    i = np.arange
    arrays = {
        "w": (i(12, dtype=np.float32) * np.float32(0.5) - np.float32(2)).reshape(3, 4),
        "0.weight": ((i(6, dtype=np.float64) - 2.5) / 4).reshape(2, 3),
        "steps": np.array(123456789012, dtype=np.int64),
        "empty": np.zeros((0, 3), dtype=np.float64),
    }
    for name, save, method in (("savez.npz", np.savez, zipfile.ZIP_STORED),
                               ("savez_compressed.npz", np.savez_compressed, zipfile.ZIP_DEFLATED)):
        path = os.path.join(out, name)
        save(path, **arrays)
        with np.load(path) as back:
            assert sorted(back.files) == sorted(arrays), name
            for k, a in arrays.items():
                assert back[k].dtype == a.dtype and back[k].shape == a.shape and np.array_equal(back[k], a), (name, k)
        with zipfile.ZipFile(path) as z:
            assert all(info.compress_type == method for info in z.infolist()), name
    path = os.path.join(out, "empty.npz")
    np.savez(path)
    with np.load(path) as back:
        assert back.files == []


if __name__ == "__main__":
    main()
