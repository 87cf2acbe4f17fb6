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
# an array with a concurrency limit and a dependent merge job. About 15 s, most of it waiting for
# the scheduler; one core at most.
set(slurm_test "grading: Slurm runs an array with a concurrency limit and a dependent merge job")
add_test(NAME "${slurm_test}"
         COMMAND "${SCALEBOOK_DEBIAN_PYTHON}" "${CMAKE_CURRENT_LIST_DIR}/test_slurm.py")
set_tests_properties("${slurm_test}" PROPERTIES LABELS "grading;slurm" TIMEOUT 180 SKIP_RETURN_CODE 77)
