#!/usr/bin/env python3
"""Writes every ```cpp block of the given Markdown pages to OUT_DIR/<page>_<n>.cpp and prints
their paths (one per line, ';'-separated for CMake). Each block must be a complete program:
documentation code is compiled and run by ctest, so it cannot drift from the library."""
import pathlib
import re
import sys

out = pathlib.Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
written = []
for page in sys.argv[2:]:
    text = pathlib.Path(page).read_text(encoding="utf-8")
    stem = re.sub(r"[^A-Za-z0-9]+", "_", pathlib.Path(page).stem).lower()
    for n, block in enumerate(re.findall(r"^```cpp\n(.*?)^```", text, flags=re.S | re.M), start=1):
        path = out / f"{stem}_{n}.cpp"
        content = f"// extracted from {pathlib.Path(page).name}, block {n}\n{block}"
        if not path.exists() or path.read_text(encoding="utf-8") != content:
            path.write_text(content, encoding="utf-8")
        written.append(str(path))
print(";".join(written), end="")
