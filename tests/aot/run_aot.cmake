# The ahead-of-time path end to end: the generator (a tessel-compile) writes
# launchers for vector_add, a plain C++ compiler builds them with HIP's headers
# against the fake HIP runtime, and the program checks every launch.
# -DGENERATOR= -DCXX= -DOUT= -DSOURCE_DIR= -DFAKE_HIP=<libtessel_fake_hip.so>
file(REMOVE_RECURSE ${OUT})
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  message(STATUS "${out}")
endfunction()
run(${GENERATOR} --kernel vector_add --const BLOCK=1024 --arch gfx942,gfx1100
    --spec x,x,x,x --spec 16,16,16,16 -o ${OUT})
run(${GENERATOR} --kernel vector_add --name vector_add_gfx942 --const BLOCK=1024 --arch gfx942
    --spec 16,16,16,16 -o ${OUT})
foreach(f vector_add.hpp vector_add.cpp vector_add.gfx942.16_16_16_16.hsaco vector_add.gfx1100.x_x_x_x.hsaco)
  if(NOT EXISTS ${OUT}/${f})
    message(FATAL_ERROR "tessel-compile did not write ${f}")
  endif()
endforeach()
get_filename_component(fake_dir ${FAKE_HIP} DIRECTORY)
run(${CXX} -std=c++17 -Wall -Wextra -Werror -I${OUT} -I${SOURCE_DIR}/tests/fake_hip
    ${OUT}/vector_add.cpp ${OUT}/vector_add_gfx942.cpp ${SOURCE_DIR}/tests/aot/launch_vector_add.cpp
    ${FAKE_HIP} -Wl,-rpath,${fake_dir} -o ${OUT}/launch_vector_add)
run(${OUT}/launch_vector_add)
