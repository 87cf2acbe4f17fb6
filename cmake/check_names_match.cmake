# Fails unless the check names CMake registered (read from the TEST_CASE lines at configure time)
# are exactly the test cases the compiled binary lists, in the same order.
execute_process(COMMAND "${BINARY}" --list-test-cases --no-version --no-colors
                OUTPUT_VARIABLE listing RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${BINARY} --list-test-cases failed: ${result}")
endif()
string(REGEX REPLACE "\\[doctest\\][^\n]*\n" "" listing "${listing}")
string(REGEX REPLACE "=+\n" "" listing "${listing}")
string(STRIP "${listing}" listing)
file(READ "${NAMES}" registered)
string(STRIP "${registered}" registered)
# doctest lists test cases sorted by file and line, which is the order they appear in the file.
if(NOT listing STREQUAL registered)
  message(FATAL_ERROR "registered checks:\n${registered}\n\nbinary's test cases:\n${listing}")
endif()
