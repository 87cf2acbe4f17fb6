"""The maintainer tests of tools/ (see tools/tests/CMakeLists.txt)."""
