#!/usr/bin/env python3
"""List fusor's public names, or check that modules/fusor.cppm exports all of them.

The names come from the compiler, not from reading headers: clang's AST dump of the umbrella
header, every declaration whose parent is namespace fusor or a public nested namespace (any
namespace but `detail`). Usage:
  public_names.py list  CLANG -- [compiler flags]
  public_names.py check CLANG MODULE.cppm -- [compiler flags]
`check` exits 1 and names what is missing (or exported but no longer public) when the module's
`using` list and the headers disagree.
"""
import re
import subprocess
import sys
import tempfile

DECL = re.compile(r"^(?P<prefix>[| `]*)[|`]-(?P<kind>\w+) 0x[0-9a-f]+ (?:(?:prev|parent) 0x[0-9a-f]+ )*"
                  r"<.*?> (?:(?:col|line):[0-9:]+|[^ ]+:\d+:\d+) (?P<rest>.*)$")
FLAGS = {"implicit", "used", "referenced", "struct", "class", "union", "invalid", "constexpr",
         "hidden", "imported", "typename", "inline"}
NAME = re.compile(r"operator(?:\(\)|\[\]|[^\s']+)|[A-Za-z_]\w*")
KINDS = {"ClassTemplateDecl", "FunctionTemplateDecl", "FunctionDecl", "CXXRecordDecl", "TypeAliasDecl",
         "TypeAliasTemplateDecl", "TypedefDecl", "VarDecl", "VarTemplateDecl", "ConceptDecl", "EnumDecl",
         "NamespaceDecl", "UsingDecl", "NamespaceAliasDecl"}
PRIVATE_NAMESPACES = {"detail"}


def public_names(clang, flags):
    with tempfile.NamedTemporaryFile("w", suffix=".cpp") as src:
        src.write("#include <fusor/fusor.hpp>\n")
        src.flush()
        dump = subprocess.run([clang, *flags, "-fsyntax-only", "-fno-color-diagnostics", "-Xclang", "-ast-dump",
                               "-Xclang", "-ast-dump-filter=fusor", src.name],
                              capture_output=True, text=True)
    if dump.returncode != 0:
        sys.exit(f"public_names: clang failed on fusor.hpp:\n{dump.stderr[-4000:]}")
    names, stack = {}, []  # stack: (depth, namespace name or None for a non-namespace scope)
    for line in dump.stdout.splitlines():
        if line.startswith("Dumping "):
            stack = [(0, "fusor")]
            continue
        m = DECL.match(line)
        if not m:
            continue
        depth = len(m["prefix"]) // 2 + 1
        while stack and stack[-1][0] >= depth:
            stack.pop()
        words = [w for w in m["rest"].split() if w not in FLAGS]
        kind = m["kind"]
        if kind == "UsingDecl" and words:
            words[0] = words[0].rsplit("::", 1)[-1]  # `using a::b::name;` declares name
        name = NAME.match(words[0]).group(0) if words and NAME.match(words[0]) else None
        enclosing_public = stack and all(ns is not None and ns not in PRIVATE_NAMESPACES for _, ns in stack)
        if kind == "NamespaceDecl":
            stack.append((depth, name))
        else:
            stack.append((depth, None))
        if not enclosing_public or kind not in KINDS or name is None or name.startswith("__"):
            continue
        if kind == "NamespaceDecl" and name in PRIVATE_NAMESPACES:
            continue
        if kind == "CXXRecordDecl" and "implicit" in m["rest"].split():
            continue
        names.setdefault("::".join([ns for _, ns in stack[:-1]] + [name]), kind)
    return names


def exported_names(module_path):
    """The names the module exports: using-declarations inside `export namespace ... { }` blocks
    (comments removed first), and the exported nested namespaces themselves."""
    text = open(module_path).read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"//.*", "", text)
    names = set()
    for block in re.finditer(r"export\s+namespace\s+(fusor(?:::[\w:]+)?)\s*\{(.*?)\}", text, flags=re.S):
        if block.group(1) != "fusor":
            names.add(block.group(1))
        for m in re.finditer(r"using\s+((?:fusor::)[\w:]*?(?:operator\s*(?:\(\)|\[\]|[^\s;]+)|\w+))\s*;",
                             block.group(2)):
            names.add(re.sub(r"\s+", "", m.group(1)))
    return names


def main():
    if len(sys.argv) < 3 or "--" not in sys.argv:
        sys.exit(__doc__)
    split = sys.argv.index("--")
    args, flags = sys.argv[1:split], sys.argv[split + 1:]
    mode, clang = args[0], args[1]
    names = public_names(clang, flags)
    if mode == "list":
        print("\n".join(f"{n} {k}" for n, k in sorted(names.items())))
        return
    exported = exported_names(args[2])
    public = set(names)
    missing = sorted(public - exported)
    stale = sorted(exported - public)
    for n in missing:
        print(f"not exported by {args[2]}: {n}")
    for n in stale:
        print(f"exported by {args[2]} but not a public name of fusor.hpp: {n}")
    if missing or stale:
        sys.exit(1)
    print(f"public_names: all {len(names)} public names of fusor.hpp are exported by the module")


if __name__ == "__main__":
    main()
