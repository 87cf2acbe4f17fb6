# The README's instructor-edition command, run as the README gives it, then the book it builds
# checked in the browser as the instructor edition (every page says it holds the solutions):
#   cmake -D SOURCE_DIR=... -D PYTHON=... -D CHECK=check_docs_in_browser.py -P instructor_edition.cmake
execute_process(COMMAND "${CMAKE_COMMAND}" --workflow --preset instructor
                WORKING_DIRECTORY "${SOURCE_DIR}" RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "`cmake --workflow --preset instructor` (README, 'For instructors') failed: ${result}")
endif()
set(html "${SOURCE_DIR}/build/instructor/docs/html")
if(NOT EXISTS "${html}/index.html")
  message(FATAL_ERROR "the README promises the instructor book in build/instructor/docs/html; it is not there")
endif()
execute_process(COMMAND "${PYTHON}" "${CHECK}" "${html}" --edition instructor --book-pages-only
                        --widths phone --screenshots "${SOURCE_DIR}/build/instructor/docs/screenshots"
                RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "the instructor edition's book fails its browser check (${result})")
endif()
