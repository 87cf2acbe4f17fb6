# Draws one gnuplot figure for the book:
#   cmake -D GNUPLOT=... -D TERMINAL="set terminal svg ..." -D SCRIPT=figures/NAME.gp -D OUTPUT=NAME.svg
#         -P draw_figure.cmake           (in the folder holding the figure's data)
# The book shows each figure with a caption (\image html NAME.svg "caption"), which is its visible
# title: the script's own `set title` is left out of the drawing, so the caption does not repeat
# it, and becomes the SVG's <title>, its accessible name (gnuplot names every figure "Gnuplot").
file(READ "${SCRIPT}" script)
set(title "")
if(script MATCHES "(^|\n)[ \t]*set[ \t]+title[ \t]+(\"([^\"]*)\"|'([^']*)')")
  set(title "${CMAKE_MATCH_3}${CMAKE_MATCH_4}")
  string(REGEX REPLACE "\\\\n.*" "" title "${title}")             # its first line
  string(REGEX REPLACE "{/[^ ]* ([^}]*)}" "\\1" title "${title}")  # enhanced-text markup
  string(REPLACE "\\\\_" "@underscore@" title "${title}")            # an escaped \\_ is a literal _
  string(REGEX REPLACE "[_^{}]" "" title "${title}")
  string(REPLACE "@underscore@" "_" title "${title}")
  string(REGEX REPLACE "(^|\n)([ \t]*set[ \t]+title[^\n]*)" "\\1# (the caption is the title) \\2" script "${script}")
endif()
get_filename_component(stem "${OUTPUT}" NAME_WE)
set(untitled "${CMAKE_CURRENT_BINARY_DIR}/${stem}.book.gp")
file(WRITE "${untitled}" "${script}")
execute_process(COMMAND "${GNUPLOT}" -e "${TERMINAL}" -e "set output '${OUTPUT}'" "${untitled}"
                RESULT_VARIABLE result ERROR_VARIABLE errors)
file(REMOVE "${untitled}")
if(NOT result EQUAL 0)
  message(FATAL_ERROR "gnuplot failed on ${SCRIPT} (${result}):\n${errors}")
endif()
if(title STREQUAL "")
  # The book's browser test fails on a figure still named "Gnuplot"; the build goes on.
  message(WARNING "${SCRIPT} has no `set title \"...\"`: the figure has no name for screen readers")
  return()
endif()
file(READ "${OUTPUT}" svg)
string(REPLACE "&" "&amp;" title "${title}")
string(REPLACE "<" "&lt;" title "${title}")
string(REPLACE "<title>Gnuplot</title>" "<title>${title}</title>" svg "${svg}")
file(WRITE "${OUTPUT}" "${svg}")
