# A bug-zoo mutant must lose points: at least one check fails. And the diagnosis must be evidence:
# some failing check's message names the mutant's mistake in the checks' one form, "known mistake
# [ID]" (ID: the mutant's "id:" line, or its file name), no failing message names a mistake other
# than ID and those on its "also:" line (a guess its output does not support), and every failure
# message obeys the messages' rules (lib/tests/check_messages.py, which decides all of this).
get_filename_component(dir "${RESULTS}" DIRECTORY)
file(MAKE_DIRECTORY "${dir}")
file(REMOVE "${RESULTS}")
execute_process(COMMAND "${BINARY}" "--scalebook-results=${RESULTS}" --no-colors
                OUTPUT_VARIABLE output ERROR_VARIABLE output RESULT_VARIABLE result)
if(NOT EXISTS "${RESULTS}")
  message(FATAL_ERROR "the checks did not finish against ${MUTANT} (${result}):\n${output}")
endif()
execute_process(COMMAND "${PYTHON}" "${RULES}" --zoo "${MUTANT}" "${RESULTS}"
                OUTPUT_VARIABLE said ERROR_VARIABLE said RESULT_VARIABLE bad)
if(NOT bad EQUAL 0)
  message(FATAL_ERROR "${MUTANT}:\n${said}")
endif()
message(STATUS "${said}")
