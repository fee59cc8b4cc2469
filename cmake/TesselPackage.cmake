# What a program outside this tree links: tessel::tessel.
#
# Inside the tree, tests link the static libraries (tessel_core ... tessel_dsl).
# A user links one shared library, libtessel.so, linked from those libraries'
# objects (nothing is compiled twice). It links libMLIR, libLLVM and lld
# privately and finds libMLIR/libLLVM through its RUNPATH, so a program needs
# tessel's public headers and tessel::tessel only: no MLIR or LLVM headers, no
# knowledge of tessel's compiler dependencies. The same target serves
# find_package(tessel) (installed, below) and add_subdirectory / FetchContent
# (the alias tessel::tessel).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The headers a program includes, and the one header under them that is the
# runtime's own (it includes the compiler's entry point, lowering/include).
# tests/package checks each of the others compiles alone and without warnings.
set(TESSEL_PUBLIC_INCLUDE_DIRS
  ${PROJECT_SOURCE_DIR}/core/include ${PROJECT_SOURCE_DIR}/dsl/include
  ${PROJECT_SOURCE_DIR}/runtime/include ${PROJECT_SOURCE_DIR}/kernels/include)
set(TESSEL_INTERNAL_HEADERS tessel/runtime/kernel_cache.hpp)

# The static libraries' objects, and what they link from outside tessel.
set(TESSEL_PARTS tessel_core tessel_backend tessel_lowering tessel_devices tessel_runtime tessel_dsl)
set(tessel_objects)
set(tessel_external)
foreach(part ${TESSEL_PARTS})
  list(APPEND tessel_objects $<TARGET_OBJECTS:${part}>)
  get_target_property(deps ${part} LINK_LIBRARIES)
  if(NOT deps)
    continue()
  endif()
  foreach(dep ${deps})
    if(NOT dep IN_LIST TESSEL_PARTS)
      list(APPEND tessel_external ${dep})
    endif()
  endforeach()
endforeach()
list(REMOVE_DUPLICATES tessel_external)

add_library(tessel_shared SHARED ${tessel_objects})
add_library(tessel::tessel ALIAS tessel_shared)
add_dependencies(tessel_shared ${TESSEL_PARTS})
set_target_properties(tessel_shared PROPERTIES
  OUTPUT_NAME tessel EXPORT_NAME tessel LINKER_LANGUAGE CXX
  VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}
  INSTALL_RPATH "${LLVM_LIBRARY_DIR}")
target_link_libraries(tessel_shared PRIVATE ${tessel_external} PUBLIC Threads::Threads)
# Every symbol resolves when libtessel.so is linked (not later in a user's
# link), and lld's symbols (linked from static archives) are not exported.
target_link_options(tessel_shared PRIVATE LINKER:--no-undefined LINKER:--exclude-libs,ALL)
target_compile_features(tessel_shared INTERFACE cxx_std_20)
target_include_directories(tessel_shared INTERFACE
  "$<BUILD_INTERFACE:${TESSEL_PUBLIC_INCLUDE_DIRS}>"
  "$<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>")

# tessel::compile_main: tessel-compile's driver and its main()
# (tools/tessel-compile) in one static library over libtessel.so. A program
# of TESSEL_AOT_KERNEL registrations that links it is a tessel-compile.
set(tessel_installed tessel_shared)
if(TARGET tessel_compile_main)
  add_library(tessel_compile_main_package STATIC
    $<TARGET_OBJECTS:tessel_compile> $<TARGET_OBJECTS:tessel_compile_main>)
  add_library(tessel::compile_main ALIAS tessel_compile_main_package)
  add_dependencies(tessel_compile_main_package tessel_compile tessel_compile_main)
  set_target_properties(tessel_compile_main_package PROPERTIES
    OUTPUT_NAME tessel_compile_main EXPORT_NAME compile_main LINKER_LANGUAGE CXX)
  target_link_libraries(tessel_compile_main_package PUBLIC tessel_shared)
  list(APPEND tessel_installed tessel_compile_main_package)
endif()

# cmake --install: lib/libtessel.so*, lib/libtessel_compile_main.a,
# include/tessel/..., lib/cmake/tessel/.
install(TARGETS ${tessel_installed} EXPORT tesselTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
set(tessel_excluded)
foreach(header ${TESSEL_INTERNAL_HEADERS})
  get_filename_component(name ${header} NAME)
  list(APPEND tessel_excluded PATTERN ${name} EXCLUDE)
endforeach()
foreach(dir ${TESSEL_PUBLIC_INCLUDE_DIRS})
  install(DIRECTORY ${dir}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
    FILES_MATCHING PATTERN "*.hpp" PATTERN "*.h" ${tessel_excluded})
endforeach()

set(TESSEL_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tessel)
install(EXPORT tesselTargets NAMESPACE tessel:: DESTINATION ${TESSEL_CMAKE_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/tesselConfig.cmake.in
  ${PROJECT_BINARY_DIR}/tesselConfig.cmake INSTALL_DESTINATION ${TESSEL_CMAKE_DIR})
# 0.x: a minor version may break the API, so 0.1 accepts 0.1.* only.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tesselConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tesselConfig.cmake ${PROJECT_BINARY_DIR}/tesselConfigVersion.cmake
  DESTINATION ${TESSEL_CMAKE_DIR})
