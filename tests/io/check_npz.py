#!/usr/bin/env python3
"""Reads the archives tests/io/npz_sample.cpp writes with Python's zipfile (np.load's reader) and
checks each entry against the closed forms the program used: names, compression, CRCs, the .npy
header (parsed as NumPy parses it, with ast.literal_eval) and every value.

Usage: check_npz.py <npz_sample executable>   (runs it in a temporary directory)
"""
import ast
import os
import struct
import subprocess
import sys
import tempfile
import zipfile

EXPECTED = {  # name: (descr, shape, struct format of one element, values)
    "f32": ("<f4", (3, 4), "<f", [i * 0.5 - 2 for i in range(12)]),
    "i64": ("<i8", (5,), "<q", [(i - 2) * 10**12 for i in range(5)]),
    "c128": ("<c16", (3,), "<dd", [(i + 0.5, -2.0 * i) for i in range(3)]),
    "0.weight": ("<f8", (), "<d", [3.25]),
    "empty": ("<f4", (0, 3), "<f", []),
}


def check_entry(name, data):
    descr, shape, fmt, values = EXPECTED[name]
    assert data[:6] == b"\x93NUMPY", (name, data[:6])
    assert data[6:8] == b"\x01\x00", (name, "version", data[6:8])
    (hlen,) = struct.unpack("<H", data[8:10])
    assert (10 + hlen) % 64 == 0, (name, "header not padded to 64 bytes", hlen)
    header = ast.literal_eval(data[10:10 + hlen].decode("latin1"))
    assert header == {"descr": descr, "fortran_order": False, "shape": shape}, (name, header)
    body = data[10 + hlen:]
    size = struct.calcsize(fmt)
    assert len(body) == size * len(values), (name, len(body))
    for k, want in enumerate(values):
        got = struct.unpack_from(fmt, body, k * size)
        got = got if isinstance(want, tuple) else got[0]
        assert got == want, (name, k, got, want)


def main():
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([sys.argv[1], d], check=True)
        for archive, method in (("stored.npz", zipfile.ZIP_STORED), ("deflated.npz", zipfile.ZIP_DEFLATED)):
            with zipfile.ZipFile(os.path.join(d, archive)) as z:
                assert z.testzip() is None, (archive, "bad CRC")
                names = [i.filename for i in z.infolist()]
                assert names == [n + ".npy" for n in EXPECTED], (archive, names)
                for info in z.infolist():
                    assert info.compress_type == method, (archive, info.filename, info.compress_type)
                    check_entry(info.filename[:-4], z.read(info))
    print("check_npz: both archives read by zipfile hold the expected entries")


if __name__ == "__main__":
    main()
