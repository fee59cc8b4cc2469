# Compile-fail tests of the DSL's static_asserts: each case of
# static_asserts.cpp must fail with its message; case 0 must compile.
set(_dsl_cf_src ${CMAKE_CURRENT_LIST_DIR}/static_asserts.cpp)
set(_dsl_cf_cases
  "1|the operands' element types differ"
  "2|a floating-point literal cannot combine with an integer or bool tile"
  "3|bitwise ops .& | \\^ ~. need integer or bool tiles"
  "4|exp needs a floating-point tile"
  "5|shifts .<< >>. need integer tiles"
  "6|the value's element type must equal the pointers' element type"
  "7|pointer tiles only combine with integer offset tiles"
  "8|the operands' element types differ"
  "9|a mask must be a bool tile"
  "10|wrong number of kernel arguments"
  "11|arithmetic on bool tiles is not supported")
foreach(_case IN LISTS _dsl_cf_cases)
  string(REPLACE "|" ";" _parts "${_case}")
  list(GET _parts 0 _n)
  list(GET _parts 1 _re)
  add_test(NAME dsl_static_assert_${_n}
    COMMAND ${CMAKE_CXX_COMPILER} -std=c++20 -fsyntax-only -DCASE=${_n}
      -I${CMAKE_SOURCE_DIR}/dsl/include -I${CMAKE_SOURCE_DIR}/runtime/include ${_dsl_cf_src})
  set_tests_properties(dsl_static_assert_${_n} PROPERTIES PASS_REGULAR_EXPRESSION "${_re}")
endforeach()
add_test(NAME dsl_static_assert_0
  COMMAND ${CMAKE_CXX_COMPILER} -std=c++20 -fsyntax-only -DCASE=0
    -I${CMAKE_SOURCE_DIR}/dsl/include -I${CMAKE_SOURCE_DIR}/runtime/include ${_dsl_cf_src})
