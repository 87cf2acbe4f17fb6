# Runs a lesson program in OUT_DIR, writing its standard output to OUT_DIR/lesson.out.
# A lesson that crashes or exits non-zero fails the docs build: the book never shows stale output.
execute_process(COMMAND "${LESSON}" "${OUT_DIR}" --book OUTPUT_FILE "${OUT_DIR}/lesson.out"
                ERROR_VARIABLE errors RESULT_VARIABLE result WORKING_DIRECTORY "${OUT_DIR}")
if(NOT result EQUAL 0)
  message(FATAL_ERROR "lesson ${LESSON} failed (${result}):\n${errors}")
endif()
