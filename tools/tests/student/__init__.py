"""The student tests of tools/ (see tools/tests/CMakeLists.txt)."""
