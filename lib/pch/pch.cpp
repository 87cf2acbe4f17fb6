// Compiled only to produce the precompiled header that exercise files reuse (lib/CMakeLists.txt).
