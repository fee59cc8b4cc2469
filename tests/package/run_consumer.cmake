# Builds and runs tests/package/consumer, a program outside tessel's tree, in
# a fresh folder WORK_DIR (cmake -P; variables from tests/package):
#   FROM=package       cmake --install BUILD_DIR into WORK_DIR/prefix, check
#                      the layout, build the consumer with find_package(tessel)
#   FROM=fetchcontent  build the consumer with tessel from SOURCE_DIR built
#                      inside it (FetchContent, i.e. add_subdirectory)
# then run it on the emulator and run its tessel-compile. Any failing step
# fails the test.
# CONSUMER_ARGS: the consumer's configure arguments (compiler, generator).
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

# Runs one step, prints its output and time, stops the test when it fails.
function(step name)
  string(TIMESTAMP start "%s")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  string(TIMESTAMP end "%s")
  math(EXPR seconds "${end} - ${start}")
  message(STATUS "${name} (${seconds} s):\n${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${name} failed (${rc})")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

set(prefix ${WORK_DIR}/prefix)
if(FROM STREQUAL "package")
  step("install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
  # A program gets tessel's public headers, not the compiler's or the runtime's own.
  foreach(present include/tessel/tessel.hpp include/tessel/core/trace.hpp
          include/tessel/runtime/device.hpp include/tessel/kernels/softmax.hpp
          lib/cmake/tessel/tesselConfig.cmake lib/cmake/tessel/tesselConfigVersion.cmake)
    if(NOT EXISTS ${prefix}/${present})
      message(FATAL_ERROR "not installed: ${present}")
    endif()
  endforeach()
  foreach(absent include/tessel/runtime/kernel_cache.hpp include/tessel/lowering include/tessel/Dialect)
    if(EXISTS ${prefix}/${absent})
      message(FATAL_ERROR "installed but not public: ${absent}")
    endif()
  endforeach()
  list(APPEND CONSUMER_ARGS -DCMAKE_PREFIX_PATH=${prefix})
elseif(FROM STREQUAL "fetchcontent")
  list(APPEND CONSUMER_ARGS -DTESSEL_FROM=fetchcontent -DFETCHCONTENT_SOURCE_DIR_TESSEL=${SOURCE_DIR})
else()
  message(FATAL_ERROR "FROM is '${FROM}'")
endif()

step("configure the consumer" ${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${WORK_DIR}/build
     -DCMAKE_BUILD_TYPE=Release ${CONSUMER_ARGS})
step("build the consumer" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)

set(program ${WORK_DIR}/build/vector_add)
if(FROM STREQUAL "package")
  # The program loads the installed library, not one in the build tree.
  step("ldd" ldd ${program})
  if(NOT step_output MATCHES "libtessel\\.so[.0-9]* => ${prefix}/")
    message(FATAL_ERROR "vector_add does not load libtessel.so from ${prefix}")
  endif()
endif()

set(ENV{TESSEL_DEVICE} emulator)
set(ENV{TESSEL_CACHE_DIR} ${WORK_DIR}/cache)
step("run the consumer" ${program})
if(NOT step_output MATCHES "consumer on emulator.*: 0 of 5000 elements wrong")
  message(FATAL_ERROR "unexpected output of vector_add")
endif()

# Its tessel-compile (tessel::compile_main) writes a launcher and a gfx942
# code object: the AMDGPU back end and lld run inside the library.
set(aot ${WORK_DIR}/aot)
step("tessel-compile vector_add" ${WORK_DIR}/build/vector_add_aot
     --kernel vector_add --const BLOCK=256 --arch gfx942 -o ${aot})
foreach(file vector_add.hpp vector_add.cpp vector_add.gfx942.x_x_x_x.hsaco)
  if(NOT EXISTS ${aot}/${file})
    message(FATAL_ERROR "tessel-compile did not write ${file}")
  endif()
endforeach()
# An ELF file (7f 'E' 'L' 'F') for machine EM_AMDGPU (224 = 0xe0, little-endian).
file(READ ${aot}/vector_add.gfx942.x_x_x_x.hsaco magic LIMIT 4 HEX)
file(READ ${aot}/vector_add.gfx942.x_x_x_x.hsaco machine OFFSET 18 LIMIT 2 HEX)
if(NOT magic STREQUAL "7f454c46" OR NOT machine STREQUAL "e000")
  message(FATAL_ERROR "vector_add.gfx942.x_x_x_x.hsaco is not an AMDGPU ELF (${magic}, machine ${machine})")
endif()
