# Copies the part of Debian's MathJax 2 that the book uses (TeX input, HTML-CSS output, TeX web
# fonts) next to the HTML, so the math renders offline and the folder can be zipped and moved.
if(EXISTS "${DEST}/MathJax.js")
  return()
endif()
file(MAKE_DIRECTORY "${DEST}")
file(COPY "${MATHJAX_DIR}/MathJax.js" DESTINATION "${DEST}")
foreach(part config extensions jax/input/TeX jax/output/HTML-CSS jax/element localization/en
             fonts/HTML-CSS/TeX/woff)
  if(EXISTS "${MATHJAX_DIR}/${part}")
    get_filename_component(parent "${DEST}/${part}" DIRECTORY)
    file(COPY "${MATHJAX_DIR}/${part}" DESTINATION "${parent}" FOLLOW_SYMLINK_CHAIN)
  endif()
endforeach()
