# `cmake --install BUILD --component fusor-match --prefix PREFIX`, then the installed program's --version.
file(REMOVE_RECURSE ${PREFIX})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD} --component fusor-match --prefix ${PREFIX}
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install --component fusor-match failed (exit ${rc})")
endif()
execute_process(COMMAND ${PREFIX}/bin/fusor-match --version RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the installed ${PREFIX}/bin/fusor-match --version failed (exit ${rc})")
endif()
message("${out}")
