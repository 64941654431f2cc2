# Sourced by the scripts: puts the PyPI build tools (CMake >= 3.28, Ninja) first on PATH.
fusor_pybin=$(python3 - <<'PY'
import os
dirs = []
try:
    import cmake
    dirs.append(cmake.CMAKE_BIN_DIR)
except Exception:
    pass
try:
    import ninja
    dirs.append(ninja.BIN_DIR)
except Exception:
    pass
print(os.pathsep.join(dirs))
PY
)
[ -n "$fusor_pybin" ] && export PATH="$fusor_pybin:$PATH"
unset fusor_pybin
