#!/usr/bin/env python3
"""Writes every ```cpp block of the given Markdown pages to OUT_DIR/<page>_<n>.cpp. Each block must
be a complete program: documentation code is compiled and run by ctest, so it cannot drift from
the library.

Building 60 small programs costs mostly the same instantiations again and again, so the blocks
of a page that can share a program are also written together to OUT_DIR/<page>_all.cpp: each
block in a namespace of its own, its main() renamed, the includes hoisted, and a main() that runs
the block whose number it is given. A block stays a program of its own when it imports the
module, uses the cuda backend, specialises a template of fusor's (only possible at namespace
scope), defines macros, or takes main's arguments.

Prints ';'-separated entries for CMake: a block's own file (path), or a page's shared program
(path|n,n,...) followed by nothing else for the blocks it holds."""
import pathlib
import re
import sys


def write_if_changed(path, content):
    if not path.exists() or path.read_text(encoding="utf-8") != content:
        path.write_text(content, encoding="utf-8")


def shareable(block):
    return ("import fusor;" not in block and "fusor/backend/cuda/" not in block and "template <>" not in block
            and "#define" not in block and len(re.findall(r"\bint main\(\)", block)) == 1
            and len(re.findall(r"\bmain\(", block)) == 1)


def closing_brace(code, start):
    """Index of the brace closing the one at `start`, skipping literals and comments."""
    depth, i, n = 0, start, len(code)
    while i < n:
        c = code[i]
        if code.startswith("//", i):
            i = code.find("\n", i)
            i = n if i < 0 else i
            continue
        if code.startswith("/*", i):
            i = code.find("*/", i) + 2
            continue
        if c == "'" and 0 < i < n - 1 and code[i - 1].isalnum() and code[i + 1].isdigit():
            i += 1  # a digit separator (10'000), not a character literal
            continue
        if c in "\"'":
            if c == '"' and i > 0 and code[i - 1] == "R":  # a raw string: R"(...)"
                end = code.find(')"', i)
                i = end + 2
                continue
            i += 1
            while i < n and code[i] != c:
                i += 2 if code[i] == "\\" else 1
            i += 1
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise SystemExit("extract_snippets: unbalanced braces in a documentation block")


def shared_program(stem, blocks):
    includes, bodies = ["#include <cstdio>", "#include <cstdlib>"], []  # (the dispatching main's)
    for n, block in blocks:
        body = []
        for line in block.splitlines():
            if line.startswith("#include"):
                if line not in includes:
                    includes.append(line)
            else:
                body.append(line)
        code = "\n".join(body)
        m = re.search(r"\bint main\(\)\s*\{", code)
        close = closing_brace(code, m.end() - 1)
        # (main's implicit return 0 becomes explicit: the renamed function is an ordinary one)
        code = code[:m.start()] + "int block_main() {" + code[m.end():close] + "  return 0;\n" + code[close:]
        bodies.append(f"namespace fusor_doc_{stem}_{n} {{  // block {n}\n{code}\n}}  // namespace fusor_doc_{stem}_{n}\n")
    cases = "".join(f"    case {n}: return fusor_doc_{stem}_{n}::block_main();\n" for n, _ in blocks)
    return ("// extracted from the page's blocks that share one program (tests/extract_snippets.py)\n"
            + "\n".join(includes) + "\n\n" + "\n".join(bodies)
            + "\nint main(int argc, char** argv) {\n  switch (argc == 2 ? std::atoi(argv[1]) : 0) {\n" + cases
            + "    default:\n      std::fprintf(stderr, \"usage: %s BLOCK (the number of a block of the page)\\n\", argv[0]);\n"
            + "      return 2;\n  }\n}\n")


out = pathlib.Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
entries = []
for page in sys.argv[2:]:
    text = pathlib.Path(page).read_text(encoding="utf-8")
    stem = re.sub(r"[^A-Za-z0-9]+", "_", pathlib.Path(page).stem).lower()
    shared = []
    for n, block in enumerate(re.findall(r"^```cpp\n(.*?)^```", text, flags=re.S | re.M), start=1):
        path = out / f"{stem}_{n}.cpp"
        write_if_changed(path, f"// extracted from {pathlib.Path(page).name}, block {n}\n{block}")
        if shareable(block):
            shared.append((n, block))
        else:
            entries.append(str(path))
    if len(shared) == 1:
        entries.append(str(out / f"{stem}_{shared[0][0]}.cpp"))
    elif shared:
        path = out / f"{stem}_all.cpp"
        write_if_changed(path, shared_program(stem, shared))
        entries.append(str(path) + "|" + ",".join(str(n) for n, _ in shared))
print(";".join(entries), end="")
