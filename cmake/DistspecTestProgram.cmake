# distspec_test_program(TARGET [MAIN FILE] SOURCES FILE... [LIBS LIBRARY...]): a GoogleTest
# program of the suite. Besides its sources it gets a main that prints the skip report (MAIN,
# default unittest/support/gtest_main.cpp; the LAMMPS tests name their MPI one) and the report
# itself (support/skip_report.cpp), the support headers, and LIBS with GoogleTest.
get_filename_component(DISTSPEC_TEST_SUPPORT_DIR "${CMAKE_CURRENT_LIST_DIR}/../unittest/support" ABSOLUTE)

function(distspec_test_program target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "MAIN" "SOURCES;LIBS")
  if(NOT arg_MAIN)
    set(arg_MAIN "${DISTSPEC_TEST_SUPPORT_DIR}/gtest_main.cpp")
  endif()
  add_executable(${target} ${arg_MAIN} "${DISTSPEC_TEST_SUPPORT_DIR}/skip_report.cpp" ${arg_SOURCES})
  target_include_directories(${target} PRIVATE "${DISTSPEC_TEST_SUPPORT_DIR}")
  target_link_libraries(${target} PRIVATE ${arg_LIBS} GTest::gtest)
endfunction()
