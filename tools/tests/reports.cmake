# The class's pages (tools/scalebook/pages.py) and the Slurm harness (tools/scalebook/slurm.py):
# included from the top-level CMakeLists.txt with the maintainers' tests. Each test is a Python
# script run by Debian's /usr/bin/python3 (python3-jinja2, python3-selenium are its modules) and
# exits 77, which CTest reports as skipped, when what it needs is not installed.
find_program(SCALEBOOK_DEBIAN_PYTHON python3 PATHS /usr/bin NO_DEFAULT_PATH
             DOC "Debian's python3, which imports the python3-* packages the tools use")
if(NOT SCALEBOOK_DEBIAN_PYTHON)
  message(STATUS "The pages and Slurm tests are skipped: no /usr/bin/python3 (package python3)")
  return()
endif()

# Against a real single-node Slurm the test starts itself (Debian's slurm-wlm and munge, as root):
# an array with a concurrency limit and a dependent merge job. About 20 s, most of it waiting for
# the scheduler; one core at most (90 s when a dozen builds share the machine's 2 cores).
set(slurm_test "grading: Slurm runs an array with a concurrency limit and a dependent merge job")
add_test(NAME "${slurm_test}"
         COMMAND "${SCALEBOOK_DEBIAN_PYTHON}" "${CMAKE_CURRENT_LIST_DIR}/test_slurm.py")
set_tests_properties("${slurm_test}" PROPERTIES LABELS "grading;slurm" TIMEOUT 600 SKIP_RETURN_CODE 77)

# The feedback and class pages of a hostile class (markup, scripts, terminal escapes, bytes that
# are not UTF-8, a 100 kB line, names with quotes), read back with html.parser: about a second.
set(pages_test "grading: feedback and class pages show a submission's text as text")
add_test(NAME "${pages_test}"
         COMMAND "${SCALEBOOK_DEBIAN_PYTHON}" "${CMAKE_CURRENT_LIST_DIR}/test_pages.py")
set_tests_properties("${pages_test}" PROPERTIES LABELS "grading;pages" TIMEOUT 300 SKIP_RETURN_CODE 77)

# The same pages in headless Chromium at a phone's and a desktop's width: no submission's script
# runs, the layout holds, the class page sorts. One browser, five page loads: about 5 s on a quiet
# machine (over 2 minutes when a dozen builds share its 2 cores: hence the generous time-out).
# Skipped (exit 77) without chromium, chromium-driver or python3-selenium.
set(pages_browser_test "grading: feedback and class pages in a real browser (no submission script runs, layout, sorting)")
add_test(NAME "${pages_browser_test}"
         COMMAND "${SCALEBOOK_DEBIAN_PYTHON}" "${CMAKE_CURRENT_LIST_DIR}/test_pages_browser.py")
set_tests_properties("${pages_browser_test}" PROPERTIES LABELS "grading;pages;browser" TIMEOUT 600
                                                        SKIP_RETURN_CODE 77)
