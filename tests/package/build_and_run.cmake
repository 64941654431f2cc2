# Configure, build and run a separate CMake project, as its README says a user would:
#   cmake -DSRC=<project> -DBUILD=<dir> [-DEXE=<program>] -DARGS="<-D...;...>" -P build_and_run.cmake
# Without EXE it only builds (a gpu program then runs as its own ctest entry).
cmake_minimum_required(VERSION 3.28)
file(REMOVE_RECURSE ${BUILD})
foreach(cmd IN ITEMS configure build)
  if(cmd STREQUAL "configure")
    execute_process(COMMAND ${CMAKE_COMMAND} -S ${SRC} -B ${BUILD} -G Ninja -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM} ${ARGS}
                    RESULT_VARIABLE rc)
  else()
    execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD} RESULT_VARIABLE rc)
  endif()
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${cmd} of ${SRC} failed (exit ${rc})")
  endif()
endforeach()
if(EXE)
  execute_process(COMMAND ${BUILD}/${EXE} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${EXE} failed (exit ${rc})")
  endif()
endif()
