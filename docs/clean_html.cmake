# Empties the book's html folder before Doxygen writes it again: Doxygen never deletes a page it no
# longer writes, and a stale page (a renamed chapter, an old folder page) would stay in the book and
# in its link checks. The MathJax copy stays; copy_mathjax.cmake fills it only once.
file(GLOB entries "${HTML_DIR}/*")
list(FILTER entries EXCLUDE REGEX "/mathjax$")
if(entries)
  file(REMOVE_RECURSE ${entries})
endif()
