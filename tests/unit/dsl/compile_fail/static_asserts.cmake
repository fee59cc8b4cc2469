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
  "11|arithmetic on bool tiles is not supported"
  "12|the combine function must take 2N scalar tiles"
  "13|the combine function must return one tile of the input's element type"
  "14|must return a std::tuple of tiles, one per input"
  "15|the combine function returns a std::tuple of the wrong size"
  "16|the combine function's results must have the inputs' element types, in order"
  "17|reductions and scans take numeric or bool tiles, not pointers"
  "18|join: both tiles need one element type"
  "19|assume needs a scalar bool tile"
  "20|multiple_of and max_contiguous take integer tiles"
  "21|sum needs a numeric tile"
  "22|xor_sum needs an integer or bool tile"
  "23|argmax and argmin need numeric tiles"
  "24|max and min need numeric tiles"
  "25|is not contextually convertible to 'bool'"
  "26|the body of for_range takes the induction variable, an i32"
  "27|no matching function for call to 'for_range'"
  "28|dot takes half, bfloat16, float, int8_t or 8-bit float tiles"
  "29|dot accumulates half, bfloat16, float and 8-bit float products in float"
  "30|this atomic takes i32 or i64 elements .and, or, xor, umax, umin."
  "31|the value's element type must equal the pointers' element type"
  "32|random offsets are an int32_t or int64_t tile"
  "33|a random seed is an int32_t or int64_t scalar"
  "34|a random seed is an int32_t or int64_t scalar"
  "35|umulhi needs int32_t or int64_t tiles"
  "36|the operands' element types differ"
  "37|where: with a bool condition, a or b must be a tile"
  "38|where: two literals of kinds that do not mix"
  "39|pow needs floating-point tiles"
  "40|sigmoid needs a floating-point tile"
  "41|the operands' element types differ"
  "42|8-bit float tiles are for load, store, cast and dot"
  "43|8-bit float tiles are for load, store, cast and dot"
  "44|an 8-bit float casts to and from float, half, bfloat16 or another 8-bit float"
  "45|sum needs a numeric tile"
  "46|dot mixes 8-bit floats of one family only: float8_e4m3fn with float8_e5m2 .OCP."
  "47|dot's operands have one element type .only 8-bit floats mix"
  "48|dot's operands have one element type .only 8-bit floats mix"
  "49|dot accumulates half, bfloat16, float and 8-bit float products in float"
  "50|device_print prints tiles"
  "51|static_print prints tiles, numbers, Const values and strings")
foreach(_case IN LISTS _dsl_cf_cases)
  string(REPLACE "|" ";" _parts "${_case}")
  list(GET _parts 0 _n)
  list(GET _parts 1 _re)
  add_test(NAME dsl_static_assert_${_n}
    COMMAND ${CMAKE_CXX_COMPILER} -std=c++20 -fsyntax-only -DCASE=${_n}
      -I${CMAKE_SOURCE_DIR}/core/include -I${CMAKE_SOURCE_DIR}/dsl/include -I${CMAKE_SOURCE_DIR}/runtime/include ${_dsl_cf_src})
  set_tests_properties(dsl_static_assert_${_n} PROPERTIES PASS_REGULAR_EXPRESSION "${_re}")
endforeach()
add_test(NAME dsl_static_assert_0
  COMMAND ${CMAKE_CXX_COMPILER} -std=c++20 -fsyntax-only -DCASE=0
    -I${CMAKE_SOURCE_DIR}/core/include -I${CMAKE_SOURCE_DIR}/dsl/include -I${CMAKE_SOURCE_DIR}/runtime/include ${_dsl_cf_src})
