#!/usr/bin/env python3
"""Writes the tiny .npy fixtures that tests/test_npy.cpp loads.

Usage (from the repository root; needs NumPy and ml_dtypes, the fixtures are checked in because CI
has neither):

    python3 tests/data/make_npy_fixtures.py [output_dir]   # default: tests/data/npy

The files were made with NumPy 2.4.6 (and ml_dtypes 0.7.0 for bf16.npy) on a little-endian machine. Each array is built from
np.arange with a closed-form formula; test_npy.cpp recomputes the same values with plain loops
(the formula of each file is repeated in the comment beside it, with i the C-order flat index of
np.arange, or (i, j, k) the multi-index):

  f32.npy           float32 (3, 4)      i * 0.5 - 2
  f64.npy           float64 (2, 3, 4)   (i - 7.25) / 4
  i32.npy           int32 (2, 5)        i * 1000003 - 5000000
  i64.npy           int64 (7,)          (i - 3) * 10**12 + i
  u8.npy            uint8 (4, 4)        (i * 37) % 256
  bool.npy          bool (3, 5)         i % 3 == 0
  c64.npy           complex64 (6,)      (i - 2.5) + 1j * (i * 0.25)
  c128.npy          complex128 (2, 3)   i / 8 - 1j * (i + 0.5)
  fortran_2d_f64.npy float64 (3, 4), Fortran order     10 * i + j
  fortran_3d_i32.npy int32 (2, 3, 4), Fortran order    100 * i + 10 * j + k
  be_f64.npy        >f8 (5,)            i * 1.5 - 2
  be_i32.npy        >i4 (2, 3)          i * -70000 + 12345
  be_c64.npy        >c8 (3,)            (i + 0.5) - 1j * (2 * i)
  scalar_f64.npy    float64 ()          3.25
  empty_0x3_f32.npy float32 (0, 3)
  v2_i64.npy        int64 (3, 4), format version 2.0   i * i - 5
  v3_f32.npy        float32 (5,), format version 3.0   i / 4 + 1
  f16.npy           float16 (2, 5)      i * 0.75 - 3
  be_f16.npy        >f2 (4,)            (i - 1) * 1024 + 0.5 ** i
  bf16.npy          ml_dtypes.bfloat16 (3, 4), saved as '<V2'   (i - 5) * 0.5 - 2 ** -130

All values are exact in their type, so the test compares with ==.
"""
import os
import sys

import ml_dtypes
import numpy as np


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "npy")
    os.makedirs(out, exist_ok=True)

    def check(name, a):
        # the file must read back as written: the same values, dtype (byte order included) and order
        back = np.load(os.path.join(out, name), allow_pickle=False)
        if a.dtype == ml_dtypes.bfloat16:  # NumPy reads ml_dtypes' file back as 2-byte voids
            assert back.dtype == np.dtype("V2"), (name, back.dtype)
            back = back.view(ml_dtypes.bfloat16)
        assert back.dtype == a.dtype, (name, back.dtype, a.dtype)
        assert back.shape == a.shape and np.array_equal(back, a), name
        assert np.isfortran(back) == np.isfortran(a), name

    def save(name, a):
        np.save(os.path.join(out, name), a, allow_pickle=False)
        check(name, a)

    def write(name, a, version):
        with open(os.path.join(out, name), "wb") as f:
            np.lib.format.write_array(f, a, version=version, allow_pickle=False)
        check(name, a)

    i = np.arange
    save("f32.npy", (i(12, dtype=np.float32) * np.float32(0.5) - np.float32(2)).reshape(3, 4))
    save("f64.npy", ((i(24, dtype=np.float64) - 7.25) / 4).reshape(2, 3, 4))
    save("i32.npy", (i(10, dtype=np.int32) * np.int32(1000003) - np.int32(5000000)).reshape(2, 5))
    save("i64.npy", (i(7, dtype=np.int64) - 3) * 10**12 + i(7, dtype=np.int64))
    save("u8.npy", ((i(16) * 37) % 256).astype(np.uint8).reshape(4, 4))
    save("bool.npy", (i(15) % 3 == 0).reshape(3, 5))
    save("c64.npy", ((i(6) - 2.5) + 1j * (i(6) * 0.25)).astype(np.complex64))
    save("c128.npy", (i(6) / 8 - 1j * (i(6) + 0.5)).astype(np.complex128).reshape(2, 3))

    r, c = np.indices((3, 4))
    f2 = np.asfortranarray((10 * r + c).astype(np.float64))
    assert f2.flags.f_contiguous and not f2.flags.c_contiguous
    save("fortran_2d_f64.npy", f2)
    a, b, c = np.indices((2, 3, 4))
    f3 = np.asfortranarray((100 * a + 10 * b + c).astype(np.int32))
    assert f3.flags.f_contiguous and not f3.flags.c_contiguous
    save("fortran_3d_i32.npy", f3)

    save("be_f64.npy", (i(5) * 1.5 - 2).astype(">f8"))
    save("be_i32.npy", (i(6) * -70000 + 12345).astype(">i4").reshape(2, 3))
    save("be_c64.npy", ((i(3) + 0.5) - 1j * (2 * i(3))).astype(">c8"))

    save("scalar_f64.npy", np.array(3.25, dtype=np.float64))
    save("empty_0x3_f32.npy", np.zeros((0, 3), dtype=np.float32))
    write("v2_i64.npy", (i(12, dtype=np.int64) ** 2 - 5).reshape(3, 4), (2, 0))
    write("v3_f32.npy", (i(5, dtype=np.float32) / np.float32(4) + np.float32(1)), (3, 0))
    save("f16.npy", (i(10, dtype=np.float16) * np.float16(0.75) - np.float16(3)).reshape(2, 5))
    save("be_f16.npy", ((i(4) - 1) * 1024.0 + 0.5 ** i(4)).astype(">f2"))
    # (the last term: bfloat16's subnormal 2^-130, kept exactly; -2 - 2^-130 rounds to -2)
    save("bf16.npy", ((i(12) - 5) * 0.5 - 2.0**-130).astype(ml_dtypes.bfloat16).reshape(3, 4))

    # what the headers say, for comparing with the table above (each file was checked by check())
    for name in sorted(os.listdir(out)):
        if name.endswith(".npy"):
            x = np.load(os.path.join(out, name))
            print(f"{name:22s} {x.dtype.str:5s} {str(x.shape):10s} fortran={np.isfortran(x)}")


if __name__ == "__main__":
    main()
