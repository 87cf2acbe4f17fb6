# Finds scalebook's dependencies among Debian's packages; a missing one is named with its package.
function(scalebook_require_package found package what)
  if(NOT ${found})
    message(FATAL_ERROR "scalebook needs ${what}, from Debian's package ${package}:\n"
                        "  sudo apt-get install ${package}\n"
                        "(./workbook installs every missing package when run as root)")
  endif()
endfunction()

find_package(Eigen3 3.4 QUIET NO_MODULE)
scalebook_require_package(Eigen3_FOUND libeigen3-dev "Eigen 3.4")

find_package(doctest 2.4 QUIET)
scalebook_require_package(doctest_FOUND doctest-dev "the doctest test framework")

if(SCALEBOOK_BUILD_DOCS)
  find_package(Doxygen 1.9 QUIET COMPONENTS dot)
  scalebook_require_package(DOXYGEN_FOUND "doxygen graphviz" "Doxygen and Graphviz (for the book)")
  find_program(GNUPLOT_EXECUTABLE gnuplot)
  scalebook_require_package(GNUPLOT_EXECUTABLE gnuplot-nox "gnuplot (for the figures)")
  find_path(SCALEBOOK_MATHJAX_DIR MathJax.js PATHS /usr/share/javascript/mathjax NO_DEFAULT_PATH)
  scalebook_require_package(SCALEBOOK_MATHJAX_DIR libjs-mathjax "MathJax (math in the book, offline)")
  find_path(SCALEBOOK_AWESOME_CSS_DIR doxygen-awesome.css PATHS /usr/share/doxygen-awesome-css NO_DEFAULT_PATH)
  scalebook_require_package(SCALEBOOK_AWESOME_CSS_DIR doxygen-awesome-css "the doxygen-awesome theme")
endif()

# The bug zoo applies its mutants with cmake/apply_mutant.py; ./workbook itself runs on Python 3.
# Debian's interpreter first (config.json's debian_python), as in ./workbook: the tests import
# Debian's python3-* modules.
string(JSON scalebook_debian_python GET "${SCALEBOOK_CONFIG}" debian_python)
if(EXISTS "${scalebook_debian_python}" AND NOT Python3_EXECUTABLE)
  set(Python3_EXECUTABLE "${scalebook_debian_python}" CACHE FILEPATH "Debian's Python 3, which sees python3-* packages")
endif()
# Every build: the configure step reads the course's manifests through tools/scalebook/course.py.
find_package(Python3 3.9 QUIET COMPONENTS Interpreter)
scalebook_require_package(Python3_Interpreter_FOUND python3 "Python 3 (./workbook, and the manifests at configure time)")
