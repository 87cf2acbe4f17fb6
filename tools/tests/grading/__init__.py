"""The grading tests of tools/ (see tools/tests/CMakeLists.txt)."""
