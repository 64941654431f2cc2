#!/usr/bin/env python3
"""Writes the small MRC fixtures that tests/test_mrc.cpp reads, with the mrcfile package.

Usage (from the repository root; needs NumPy and mrcfile, e.g. the virtual environment that
`scripts/bench match` makes; the fixtures are checked in because CI has neither):

    build/peers-match-venv/bin/python tests/data/make_mrc_fixtures.py [output_dir]   # default: tests/data/mrc

The files were made with mrcfile 1.5.4 and NumPy on a little-endian machine. Every file holds
the values v(x, y, z) of the formula beside it at the voxel of column x, row y and section z
(columns fastest in the file, as MRC stores them), with the header's default axis order
(MAPC, MAPR, MAPS) = (1, 2, 3) unless said otherwise, so that X = column, Y = row, Z = section.
Each file has a companion .npy with the volume as fusor reads it: a float32 array indexed
[x, y, z] (axes X, Y, Z), built here from the formula by plain loops over the physical axes, not
by transposing the file's array.

  mode0_i8.mrc     int8     (nx, ny, nz) = (5, 4, 3)   x * 20 - y * 7 + z * 3 - 40
  mode1_i16.mrc    int16    (6, 5, 4)                  x * 1000 - y * 333 + z * 77 - 3000
  mode2_f32.mrc    float32  (7, 3, 5)                  x / 4 - y * 1.5 + z * z / 8
  mode6_u16.mrc    uint16   (4, 4, 6)                  x * 9000 + y * 300 + z * 11
  mode12_f16.mrc   float16  (3, 5, 4)                  x / 2 - y / 4 + z * 3   (exact in float16)
  mode2_be.mrc     float32, big-endian, (4, 3, 2)      x - 10 * y + 100 * z
  crs_321.mrc      float32, MAPC/MAPR/MAPS = 3, 2, 1, file array (s, r, c) of shape (4, 3, 2):
                   columns run along Z, rows along Y, sections along X, so the volume is
                   (X, Y, Z) = (4, 3, 2) with v = x * 100 + y * 10 + z
  crs_132.mrc      float32, MAPC/MAPR/MAPS = 1, 3, 2, file array (s, r, c) of shape (3, 4, 5):
                   columns along X, rows along Z, sections along Y: (X, Y, Z) = (5, 3, 4),
                   v = x * 100 + y * 10 + z
  ext_header.mrc   float32 (3, 3, 3), an 80-byte extended header of zeros (NSYMBT = 80, EXTTYP MRCO),
                   v = x + y * 3 + z * 9
  nstart.mrc       float32 (2, 2, 2), origin 0 and (NXSTART, NYSTART, NZSTART) = (4, -2, 6),
                   v = x + y + z

Voxel sizes (X, Y, Z) in Å are (1.5, 2.0, 2.5) for mode0..mode12 and mode2_be, 3.0 for the
others; origins (X, Y, Z) in Å are (10, -20, 30.5) for mode0..mode12 and mode2_be, 0 for the
others.
"""
import os
import sys

import mrcfile
import numpy as np


def volume(shape_xyz, f, dtype):
    v = np.zeros(shape_xyz, dtype=np.float64)
    for x in range(shape_xyz[0]):
        for y in range(shape_xyz[1]):
            for z in range(shape_xyz[2]):
                v[x, y, z] = f(x, y, z)
    return v.astype(dtype)


def file_array(v_xyz, crs):
    """The file's (section, row, column) array for a volume indexed [x, y, z] and MAPC/MAPR/MAPS crs:
    element [s, r, c] is the voxel whose coordinate on axis crs[0]-1 is c, on crs[1]-1 is r and on
    crs[2]-1 is s, filled element by element."""
    n = v_xyz.shape
    nc, nr, ns = n[crs[0] - 1], n[crs[1] - 1], n[crs[2] - 1]
    out = np.zeros((ns, nr, nc), dtype=v_xyz.dtype)
    for s in range(ns):
        for r in range(nr):
            for c in range(nc):
                p = [0, 0, 0]
                p[crs[0] - 1], p[crs[1] - 1], p[crs[2] - 1] = c, r, s
                out[s, r, c] = v_xyz[p[0], p[1], p[2]]
    return out


def write(path, v_xyz, crs=(1, 2, 3), voxel=(1.5, 2.0, 2.5), origin=(10.0, -20.0, 30.5), big_endian=False,
          extended=None, nstart=None):
    data = file_array(v_xyz, crs)
    if big_endian:
        data = data.astype(data.dtype.newbyteorder(">"))
    with mrcfile.new(path, overwrite=True) as mrc:
        mrc.set_data(data)
        if extended is not None:
            mrc.set_extended_header(extended)
            mrc.header.exttyp = b"MRCO"
        h = mrc.header
        h.mapc, h.mapr, h.maps = crs
        # the cell: the grid's intervals along X, Y, Z and their lengths
        n = v_xyz.shape
        h.mx, h.my, h.mz = n
        h.cella.x, h.cella.y, h.cella.z = (n[0] * voxel[0], n[1] * voxel[1], n[2] * voxel[2])
        h.origin.x, h.origin.y, h.origin.z = origin
        if nstart is not None:
            h.nxstart, h.nystart, h.nzstart = nstart
    np.save(os.path.splitext(path)[0] + ".npy", v_xyz.astype(np.float32))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join("tests", "data", "mrc")
    os.makedirs(out, exist_ok=True)
    p = lambda name: os.path.join(out, name)
    write(p("mode0_i8.mrc"), volume((5, 4, 3), lambda x, y, z: x * 20 - y * 7 + z * 3 - 40, np.int8))
    write(p("mode1_i16.mrc"), volume((6, 5, 4), lambda x, y, z: x * 1000 - y * 333 + z * 77 - 3000, np.int16))
    write(p("mode2_f32.mrc"), volume((7, 3, 5), lambda x, y, z: x / 4 - y * 1.5 + z * z / 8, np.float32))
    write(p("mode6_u16.mrc"), volume((4, 4, 6), lambda x, y, z: x * 9000 + y * 300 + z * 11, np.uint16))
    write(p("mode12_f16.mrc"), volume((3, 5, 4), lambda x, y, z: x / 2 - y / 4 + z * 3, np.float16))
    write(p("mode2_be.mrc"), volume((4, 3, 2), lambda x, y, z: x - 10 * y + 100 * z, np.float32), big_endian=True)
    f = lambda x, y, z: x * 100 + y * 10 + z
    write(p("crs_321.mrc"), volume((4, 3, 2), f, np.float32), crs=(3, 2, 1), voxel=(3, 3, 3), origin=(0, 0, 0))
    write(p("crs_132.mrc"), volume((5, 3, 4), f, np.float32), crs=(1, 3, 2), voxel=(3, 3, 3), origin=(0, 0, 0))
    write(p("ext_header.mrc"), volume((3, 3, 3), lambda x, y, z: x + y * 3 + z * 9, np.float32), voxel=(3, 3, 3),
          origin=(0, 0, 0), extended=np.zeros(80, dtype=np.uint8))
    write(p("nstart.mrc"), volume((2, 2, 2), lambda x, y, z: x + y + z, np.float32), voxel=(3, 3, 3),
          origin=(0, 0, 0), nstart=(4, -2, 6))
    # mrcfile's own validation of what was written
    for name in sorted(os.listdir(out)):
        if name.endswith(".mrc"):
            assert mrcfile.validate(os.path.join(out, name), print_file=open(os.devnull, "w")), name


if __name__ == "__main__":
    main()
