# The stage READMEs' generated resource and instruction-mix tables must match this build's SASS
# (plots/sass_tables.py --check). Needs GG_CUOBJDUMP from tests/CMakeLists.txt; 77 = skipped
# without cuobjdump. Include this file after the SASS tests there.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
add_test(NAME sass_tables
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/plots/sass_tables.py --check
                 --build ${CMAKE_BINARY_DIR} --cuobjdump "${GG_CUOBJDUMP}")
set_tests_properties(sass_tables PROPERTIES LABELS "cpu;sass" SKIP_RETURN_CODE 77)
