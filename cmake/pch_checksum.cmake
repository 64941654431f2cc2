# Writes OUT, the checksum ccache hashes in place of a clang precompiled header (its sloppiness
# pch_external_checksum: "<pch>.sum" beside the .pch). Clang writes the absolute path of every
# header into a .pch, so the same tree built in two folders gives two .pch files, and every unit
# using one would miss the cache in a clone. The checksum stands for what the .pch was made of,
# without the folder: the header it precompiles, the compiler and the flags of the target, and
# the contents of fusor's headers and of the other include directories named in HEADER_DIRS
# (doctest, xsimd: the headers besides the system's that a PCH takes in). A system header
# upgrade that changes no file listed here calls for `ccache -C`.
#   cmake -DOUT=<pch>.sum -DPCH_HEADER=<cmake_pch.hxx> -DCOMPILER=<id and version> -DFLAGS=<...>
#         -DSOURCE_DIR=<project> -DHEADER_DIRS=<dir|dir> -P pch_checksum.cmake
string(REPLACE "|" ";" HEADER_DIRS "${HEADER_DIRS}")
set(text "compiler ${COMPILER}\nflags ${FLAGS}\n")
file(READ "${PCH_HEADER}" header)
string(APPEND text "header\n${header}\n")
foreach(dir "${SOURCE_DIR}/include" ${HEADER_DIRS})
  file(GLOB_RECURSE files LIST_DIRECTORIES false "${dir}/*")
  list(SORT files)
  foreach(f IN LISTS files)
    file(SHA256 "${f}" h)
    file(RELATIVE_PATH rel "${dir}" "${f}")
    string(APPEND text "${rel} ${h}\n")
  endforeach()
endforeach()
string(SHA256 sum "${text}")
file(WRITE "${OUT}" "${sum}\n")
