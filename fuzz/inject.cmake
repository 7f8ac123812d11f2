# fuzz/inject.cmake - used by scripts/fuzz.sh only while the top-level CMakeLists.txt does not yet
# have the RS_FUZZ option: passed as CMAKE_PROJECT_INCLUDE, it adds fuzz/ after the top level
# has defined regsweep_core (a deferred call runs at the end of the top-level directory; it may
# not add a subdirectory, so fuzz/CMakeLists.txt is included, which is why it uses
# CMAKE_CURRENT_LIST_DIR and sets its output directory).
option(RS_FUZZ "Build the libFuzzer targets under fuzz/ (clang only)" OFF)
if(RS_FUZZ)
  cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL include ${CMAKE_SOURCE_DIR}/fuzz/CMakeLists.txt)
endif()
