"""The unit tests of tools/ (see tools/tests/CMakeLists.txt)."""
