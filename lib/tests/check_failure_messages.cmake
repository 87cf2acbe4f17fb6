# The results file of lib/tests/failing_checks.cpp: every case fails, and the message of each
# starts with its diagnosis (what ./workbook quotes on one line), not with a context line.
execute_process(COMMAND "${BINARY}" "--scalebook-results=${RESULTS}" --no-colors
                OUTPUT_QUIET ERROR_QUIET)
file(STRINGS "${RESULTS}" lines REGEX "^(passed|failed)\t")
set(expected
    "1.1 a diagnosis comes before the context\tthe output matches known mistake [zeros]: zeros everywhere | matrices differ"
    "1.2 without a diagnosis the comparison's report leads\tactual 0.5 vs expected 0.25"
    "1.3 an exception check names the type thrown instead\tthrower(false) threw std::invalid_argument where scalebook::ShapeError was expected: a shape check"
    "1.4 an Eigen assertion names itself and the check\tEigen assertion failed inside the code under test: "
    "1.5 an Eigen assertion outside any check names itself and the check\tEigen assertion failed inside the code under test: "
    "1.6 every failure of a check is reported, the first in full, the others by their reason\tfirst: zeros where ones belong | matrices differ"
    "1.7 a plain comparison shows its sentence, never the C++ expression\tx must be below 1e-9, got 0.118034"
    "1.8 an exception from a valid input says the input was valid\tthe code under test threw scalebook::ShapeError on a valid input (the contract accepts this input, so nothing may be thrown): \"thrower: shapes\" | input: m = (1, 1) [[1]]"
    "1.9 a property that fails shows its sentence and its smallest counterexample\tproperty: every whole number from 0 to 30 is below 7 | broken by the smallest failing input found: x = 7 is not below 7 | input: x = 7 (found after ")
list(LENGTH lines count)
list(LENGTH expected wanted)
if(NOT count EQUAL wanted)
  message(FATAL_ERROR "expected ${wanted} results, got ${count}:\n${lines}")
endif()
math(EXPR last "${wanted} - 1")
foreach(index RANGE ${last})
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
# 1.6: the second and third failures by their one-line reasons (the named mistake kept), the
# repeated one said once, each on a line of its own ("\n" escaped in the results file).
list(GET lines 5 line)
string(FIND "${line}" [[\nalso failed: second: a half where a quarter belongs\nalso failed: third: zeros again | the output matches known mistake [zeros]: zeros everywhere]] at)
string(REGEX MATCHALL "also failed: second" seconds "${line}")
list(LENGTH seconds second_count)
if(at EQUAL -1 OR NOT second_count EQUAL 1)
  message(FATAL_ERROR "every further failure must follow once, by its reason:\n  ${line}")
endif()
# 1.7: neither the expression nor doctest's decomposition of it.
list(GET lines 6 line)
if(line MATCHES "std::abs|< 1e-09| is ")
  message(FATAL_ERROR "a raw doctest expression in a message:\n  ${line}")
endif()
message(STATUS "every failure message leads with its diagnosis")
