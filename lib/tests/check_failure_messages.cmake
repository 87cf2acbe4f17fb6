# The results file of lib/tests/failing_checks.cpp: every case fails, and the message of each
# starts with its diagnosis (what ./workbook quotes on one line), not with a context line.
execute_process(COMMAND "${BINARY}" "--scalebook-results=${RESULTS}" --no-colors
                OUTPUT_QUIET ERROR_QUIET)
file(STRINGS "${RESULTS}" lines REGEX "^(passed|failed)\t")
set(expected
    "1.1 a diagnosis comes before the context\tthe output matches known mistake [zeros]: zeros everywhere | near("
    "1.2 without a diagnosis the comparison's report leads\tnear(0.5, 0.25) is actual 0.5 vs expected 0.25"
    "1.3 an exception check names the type thrown instead\tthrower(false) threw std::invalid_argument where scalebook::ShapeError was expected: a shape check"
    "1.4 an Eigen assertion names itself and the check\tEigen assertion failed inside the code under test: "
    "1.5 an Eigen assertion outside any check names itself and the check\tEigen assertion failed inside the code under test: ")
list(LENGTH lines count)
if(NOT count EQUAL 5)
  message(FATAL_ERROR "expected 5 results, got ${count}:\n${lines}")
endif()
foreach(index RANGE 4)
  list(GET lines ${index} line)
  list(GET expected ${index} prefix)
  string(FIND "${line}" "failed\t${prefix}" at)
  if(NOT at EQUAL 0)
    message(FATAL_ERROR "result ${index} does not start with\n  failed\t${prefix}\nbut is\n  ${line}")
  endif()
endforeach()
foreach(index 3 4)
  list(GET lines ${index} line)
  if(NOT line MATCHES "while check \"1\\.[45] [^\"]+\" ran \\(exercise 1\\.[45]\\)")
    message(FATAL_ERROR "an Eigen assertion must name the check that ran:\n  ${line}")
  endif()
endforeach()
message(STATUS "every failure message leads with its diagnosis")
