# scalebook_add_chapter(): the mechanics every chapter shares, from its manifest.
#
# chapters/NN-topic/chapter.json says what the chapter is, for CMake and for ./workbook alike; its one
# parser is tools/scalebook/course.py (read_manifest: every field's type and default), whose digest
# of the course CMake reads (CMakeLists.txt):
#   number      3
#   summary     what the chapter covers, for the book's main page and the student edition's README
#   contract    the header students implement (attention_scaling.hpp)
#   checks      the doctest checks (checks.cpp), lesson: the lesson program (lesson.cpp)
#   figures     figures/NAME.gp -> NAME.svg, drawn by draw_figure.cmake (its `set title` names the
#               SVG; the page's caption is its title)
#   bench       whether the chapter has a benchmark (./workbook bench N)
#   lib         (optional) the sources of lib/src holding lib's copy of this chapter's answers,
#               which only later chapters link (lib/CMakeLists.txt)
#   tolerance   the loosest relative difference the checks allow a correct output (run --diff)
#   exercises   in order: {id "3.1", source "ex1_dot_scores.cpp" (in exercises/, the reference's or a
#               submission; one file per exercise recompiles only that one), functions (the contract
#               functions it defines, as in remote.def), points (what each of its checks is worth)}
#   hidden_checks  (optional, the instructor's tree only) a second checks file, in checks.cpp's
#               style, whose checks grading runs and scores with the others but the student edition
#               never holds (tools/scalebook/release.py leaves the file out and writes
#               hidden_count, their number, into the edition's manifest instead). They are built
#               into the grading kit and, on the reference track, proved like the others: the
#               reference passes them, the stubs fail them, and each bugzoo/hidden/NAME.mutant (a
#               mistake that passes every visible check) fails one of them.
# The chapter's CMakeLists.txt calls scalebook_add_chapter() and may add targets of its own; the
# manifest's sources are SCALEBOOK_CHAPTER_SOURCES there.
#
# Targets (chNN = "ch" + two-digit number):
#   chNN_reference   the reference solution (SCALEBOOK_REFERENCE_DIR/NAME/SOURCES)
#   chNN_track       the track being checked (SCALEBOOK_TRACK_DIR/NAME/SOURCES)
#   chNN_checks      the checks against the track; each doctest case is a CTest test labelled chNN
#   chNN_lesson      the lesson program on the reference; its output and figures feed the docs
#   chNN_lesson_track  the lesson program on the track (what `./workbook run` shows a student)
#   chNN_checks_on_stubs  (SCALEBOOK_PROVE_STUBS_FAIL) the checks against the untouched stubs
#   chNN_zoo_MUTANT  (SCALEBOOK_PROVE_STUBS_FAIL) the checks against each bugzoo/MUTANT.mutant, a
#                    small change to one reference file (cmake/apply_mutant.py)
#   chNN_hidden_checks  (reference track, a manifest with hidden_checks) the hidden checks against
#                    the reference, each a CTest test labelled chNN and hidden
#   chNN_hidden_zoo_MUTANT  (SCALEBOOK_PROVE_STUBS_FAIL) every check, visible and hidden, against
#                    each bugzoo/hidden/MUTANT.mutant
#
# The checks are registered from the TEST_CASE names in the checks file, read at configure time, not
# by running a binary: the list a submission is graded against is always the instructor's own.
# build/<preset>/checks.tsv lists them: chapter, exercise id, points, key, name; hidden_checks.tsv
# lists the hidden checks the same way (keys chNN_hK), where this build has them (the reference
# track and the grading kit of the instructor's tree).
set(SCALEBOOK_CMAKE_DIR "${CMAKE_CURRENT_LIST_DIR}")
set(SCALEBOOK_DOCS_GENERATED_DIR "${PROJECT_BINARY_DIR}/docs/generated")
# One look for every figure: SVG, sized for a book page.
set(SCALEBOOK_GNUPLOT_TERMINAL "set terminal svg size 720,420 dynamic enhanced font 'Helvetica,13' background rgb 'white'")
set(SCALEBOOK_CHECKS_MANIFEST "${PROJECT_BINARY_DIR}/checks.tsv")
file(WRITE "${SCALEBOOK_CHECKS_MANIFEST}" "")
set(SCALEBOOK_HIDDEN_MANIFEST "${PROJECT_BINARY_DIR}/hidden_checks.tsv")
file(WRITE "${SCALEBOOK_HIDDEN_MANIFEST}" "")
# What the grader needs to build a worker in the sandbox (tools/scalebook/grading/): written at configure
# time with generator expressions, turned into grading-kit.tsv at generate time.
set(SCALEBOOK_GRADING_KIT "${PROJECT_BINARY_DIR}/grading-kit.tsv.in")
file(WRITE "${SCALEBOOK_GRADING_KIT}" "")

# One implementation of a chapter's contract: an OBJECT library per exercise file (PREFIX_ex1, ...)
# and a STATIC library PREFIX of them all. Its sources see SCALEBOOK_EXERCISE_CHAPTER=<number>:
# lib's copies of what this chapter or a later one teaches refuse to be included (#error), so an
# exercise cannot hand in lib's answer. It links only the parts of lib the chapter's exercises may
# use (scalebook_lib_for_<N>, lib/CMakeLists.txt), as a graded worker does: a prototype of a later
# answer redeclared by hand does not link. OBJECTS may add already-compiled objects (a mutant reuses
# the reference's objects of the files it leaves alone).
# UNCACHED: compiled without ccache (the student's own files, see scalebook_add_chapter).
function(_scalebook_contract_library prefix sources chapter_dir number)
  cmake_parse_arguments(PARSE_ARGV 4 ARG "UNCACHED" "" "OBJECTS")
  math(EXPR chapter_number "${number}")  # 03 -> 3: a decimal, never an octal literal
  set(objects ${ARG_OBJECTS})
  set(index 0)
  foreach(source IN LISTS sources)
    math(EXPR index "${index} + 1")
    set(target ${prefix}_ex${index})
    add_library(${target} OBJECT "${source}")
    target_include_directories(${target} PUBLIC "${chapter_dir}")
    target_link_libraries(${target} PUBLIC scalebook_lib_for_${chapter_number})
    target_compile_definitions(${target} PRIVATE SCALEBOOK_EXERCISE_CHAPTER=${chapter_number})
    set_target_properties(${target} PROPERTIES SCALEBOOK_FAST_COMPILE ON)  # -O1: see lib/CMakeLists.txt
    if(ARG_UNCACHED)
      set_target_properties(${target} PROPERTIES CXX_COMPILER_LAUNCHER "")
    endif()
    if(TARGET scalebook_pch)
      target_precompile_headers(${target} REUSE_FROM scalebook_pch)
    endif()
    list(APPEND objects $<TARGET_OBJECTS:${target}>)
  endforeach()
  add_library(${prefix} STATIC ${objects})
  target_include_directories(${prefix} PUBLIC "${chapter_dir}")
  target_link_libraries(${prefix} PUBLIC scalebook_lib_for_${chapter_number})
  set_target_properties(${prefix} PROPERTIES LINKER_LANGUAGE CXX)
endfunction()

# The checks compiled once (OBJECTS: one object library, or a list of them) linked against one
# implementation.
function(_scalebook_checks_executable target objects implementation)
  list(TRANSFORM objects REPLACE "^(.+)$" "$<TARGET_OBJECTS:\\1>" OUTPUT_VARIABLE object_files)
  add_executable(${target} ${object_files})
  target_link_libraries(${target} PRIVATE ${implementation} scalebook::testing scalebook::doctest_main)
  # Exported symbols let an Eigen assertion name the function that misused Eigen (lib/src/core.cpp).
  set_target_properties(${target} PROPERTIES ENABLE_EXPORTS ON)
endfunction()

# _scalebook_check_names(FILE OUT): the TEST_CASE("...") names of a checks file, in order.
function(_scalebook_check_names file out)
  file(STRINGS "${file}" lines REGEX "TEST_CASE[ ]*\\(\"")
  set(names)
  foreach(line IN LISTS lines)
    string(REGEX MATCH "TEST_CASE[ ]*\\(\"([^\"]+)\"" match "${line}")
    set(name "${CMAKE_MATCH_1}")
    string(FIND "${name}" "[" open_bracket)
    string(FIND "${name}" "]" close_bracket)
    if(name MATCHES "[;*?]" OR NOT open_bracket EQUAL -1 OR NOT close_bracket EQUAL -1
       OR NOT name MATCHES "^[0-9]+\\.[0-9]+ ")
      message(FATAL_ERROR "${file}: check name '${name}' must start with its exercise id "
                          "(e.g. \"3.2 ...\") and contain none of [ ] ; * ?")
    endif()
    list(APPEND names "${name}")
  endforeach()
  set(${out} "${names}" PARENT_SCOPE)
endfunction()

# _scalebook_read_manifest(CHAPTER_DIR): chapter.json's fields as CHAPTER_* variables of the caller,
# from the course's digest (CMakeLists.txt includes build/<preset>/course.cmake, which
# tools/scalebook/course.py wrote from the manifests: one parser, one set of defaults).
function(_scalebook_read_manifest chapter_dir)
  cmake_path(GET chapter_dir FILENAME name)
  if(NOT name IN_LIST SCALEBOOK_COURSE_CHAPTERS)
    message(FATAL_ERROR "${chapter_dir} has no chapter.json (see cmake/Scalebook.cmake)")
  endif()
  foreach(key NUMBER SUMMARY CONTRACT CHECKS LESSON BENCH HIDDEN_CHECKS FIGURES SOURCES POINTS)
    set(CHAPTER_${key} "${SCALEBOOK_CHAPTER_${name}_${key}}" PARENT_SCOPE)
  endforeach()
endfunction()

# The implementation being checked (chNN_reference, chNN_track) and exercises.tsv.
function(_scalebook_chapter_track)
  # --- the implementation being checked ---------------------------------------------------------
  if(SCALEBOOK_STUDENT_EDITION AND track_is_reference)
    message(FATAL_ERROR "this is the student edition of scalebook: it has no reference solution to build")
  endif()
  if(NOT SCALEBOOK_STUDENT_EDITION AND (NOT SCALEBOOK_GRADING OR track_is_reference))
    _scalebook_contract_library(${ch}_reference "${reference_sources}" "${chapter_dir}" ${ARG_NUMBER})
  endif()
  if(track_is_reference)
    add_library(${ch}_track ALIAS ${ch}_reference)
  else()
    set(track_sources)
    foreach(source IN LISTS ARG_SOURCES)
      set(track_source "${track_dir}/${source}")
      if(NOT EXISTS "${track_source}")
        if(NOT SCALEBOOK_GRADING)
          message(FATAL_ERROR "chapter ${ARG_NAME}: ${track_source} is missing "
                              "(SCALEBOOK_TRACK_DIR=${SCALEBOOK_TRACK_DIR}); restore it with git checkout")
        endif()
        # A submission without the file: the chapter fails to compile, with this as its first error.
        set(track_source "${CMAKE_CURRENT_BINARY_DIR}/missing/${source}")
        file(WRITE "${track_source}" "#error \"the submission has no ${ARG_NAME}/${source}\"\n")
      endif()
      list(APPEND track_sources "${track_source}")
    endforeach()
    # A student's file is compiled without ccache: each edit is new text, so the cache misses, and
    # a miss costs a preprocessor pass over Eigen and a hash of the 95 MB precompiled header before
    # the compile itself (half again the compile's time on a loaded 2-core machine). Grading
    # compiles every submission once and keeps the cache; so do the tests' scratch copies
    # (SCALEBOOK_CACHE_EXERCISES), whose files are as shipped.
    if(SCALEBOOK_GRADING OR SCALEBOOK_CACHE_EXERCISES)
      _scalebook_contract_library(${ch}_track "${track_sources}" "${chapter_dir}" ${ARG_NUMBER})
    else()
      _scalebook_contract_library(${ch}_track "${track_sources}" "${chapter_dir}" ${ARG_NUMBER} UNCACHED)
    endif()
  endif()
  # Every exercise's object, for ./workbook and the grader (tools/scalebook/loop/build.py): when one
  # exercise file does not compile, they link chNN_checks_partial from the objects that did
  # compile (listed in track_objects.rsp), so that exercise costs itself only.
  set(exercise_lines)
  set(track_objects)
  set(index 0)
  foreach(source IN LISTS ARG_SOURCES)
    math(EXPR index "${index} + 1")
    if(track_is_reference)
      set(object_target ${ch}_reference_ex${index})
    else()
      set(object_target ${ch}_track_ex${index})
    endif()
    string(APPEND exercise_lines "${chapter_number}.${index}\t${source}\t$<TARGET_OBJECTS:${object_target}>\n")
    list(APPEND track_objects $<TARGET_OBJECTS:${object_target}>)
  endforeach()
  file(GENERATE OUTPUT "${CMAKE_CURRENT_BINARY_DIR}/exercises.tsv" CONTENT "${exercise_lines}")
  set(track_objects "${track_objects}" PARENT_SCOPE)
endfunction()

# The checks (chNN_checks and _partial), each registered as a CTest test, and checks.tsv.
function(_scalebook_chapter_checks)
  # --- the checks -------------------------------------------------------------------------------
  add_library(${ch}_checks_objects OBJECT "${chapter_dir}/${ARG_CHECKS}")
  target_include_directories(${ch}_checks_objects PRIVATE "${chapter_dir}")
  target_link_libraries(${ch}_checks_objects PRIVATE scalebook::testing)
  # The checks link the track's objects themselves rather than its archive: after a student's edit
  # they are relinked at once, without first rewriting libchNN_track.a (cmake -E rm, ar, ranlib: a
  # third of a second of the wait on a loaded 2-core machine).
  # lib: only the parts the chapter's exercises may use, as in grading (see _scalebook_contract_library).
  add_executable(${ch}_checks $<TARGET_OBJECTS:${ch}_checks_objects> ${track_objects})
  target_link_libraries(${ch}_checks PRIVATE scalebook_lib_for_${chapter_number} scalebook::testing
                                             scalebook::doctest_main)
  set_target_properties(${ch}_checks PROPERTIES ENABLE_EXPORTS ON)  # as _scalebook_checks_executable
  set(partial_objects "${CMAKE_CURRENT_BINARY_DIR}/track_objects.rsp")
  if(NOT EXISTS "${partial_objects}")
    file(WRITE "${partial_objects}" "")
  endif()
  add_executable(${ch}_checks_partial EXCLUDE_FROM_ALL $<TARGET_OBJECTS:${ch}_checks_objects>)
  target_link_libraries(${ch}_checks_partial PRIVATE scalebook_lib_for_${chapter_number} scalebook::testing
                                                     scalebook::doctest_main)
  # A call into an exercise that did not compile lands on address 0 (a crash the runner names);
  # gold links that, ld.bfd does not.
  target_link_options(${ch}_checks_partial PRIVATE -fuse-ld=gold "@${partial_objects}"
                      -Wl,--unresolved-symbols=ignore-all)
  set_target_properties(${ch}_checks_partial PROPERTIES LINK_DEPENDS "${partial_objects}" ENABLE_EXPORTS ON)

  _scalebook_check_names("${chapter_dir}/${ARG_CHECKS}" names)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${chapter_dir}/${ARG_CHECKS}")
  set(index 0)
  foreach(name IN LISTS names)
    math(EXPR index "${index} + 1")
    string(REGEX MATCH "^[0-9]+\\.[0-9]+" exercise "${name}")
    set(points 1)  # what each check of the exercise is worth: chapter.json's points
    foreach(entry IN LISTS CHAPTER_POINTS)
      if(entry MATCHES "^${exercise}=([0-9]+)$")
        set(points "${CMAKE_MATCH_1}")
      endif()
    endforeach()
    set(key "${ch}_${index}")
    file(APPEND "${SCALEBOOK_CHECKS_MANIFEST}" "${ARG_NAME}\t${exercise}\t${points}\t${key}\t${name}\n")
    string(REPLACE "," "\\," filter "${name}")
    set(test_name "${ARG_NAME}/${name}")
    # Grading runs the checks itself (tools/scalebook/grading/), each call through a boxed worker.
    if(NOT SCALEBOOK_GRADING)
      add_test(NAME "${test_name}" COMMAND ${ch}_checks "--test-case=${filter}" --no-version)
      set_tests_properties("${test_name}" PROPERTIES LABELS "${ch}" TIMEOUT "${SCALEBOOK_CHECK_TIMEOUT}")
    endif()
  endforeach()
  set(names "${names}" PARENT_SCOPE)
  _scalebook_chapter_hidden_checks()
  set(hidden_names "${hidden_names}" PARENT_SCOPE)
  set(has_hidden "${has_hidden}" PARENT_SCOPE)
endfunction()

# The hidden checks (the manifest's hidden_checks): compiled where this build has them, every
# grading kit (the instructor's tree's, and the autograders' trees, which ship the hidden checks but
# no solutions: grading/autograder.py) and the reference track, never the student's loop or edition
# (whose manifests name no hidden_checks file: the release writes hidden_count instead).
# chNN_hidden_objects, hidden_checks.tsv, and on the reference track chNN_hidden_checks with a
# CTest test per hidden check (labels chNN and hidden).
function(_scalebook_chapter_hidden_checks)
  set(has_hidden OFF)
  set(hidden_names)
  if(CHAPTER_HIDDEN_CHECKS AND (SCALEBOOK_GRADING OR (track_is_reference AND NOT SCALEBOOK_STUDENT_EDITION)))
    set(has_hidden ON)
    set(hidden_file "${chapter_dir}/${CHAPTER_HIDDEN_CHECKS}")
    if(NOT EXISTS "${hidden_file}")
      message(FATAL_ERROR "${chapter_dir}/chapter.json: hidden_checks names ${CHAPTER_HIDDEN_CHECKS}, which is missing")
    endif()
    add_library(${ch}_hidden_objects OBJECT "${hidden_file}")
    target_include_directories(${ch}_hidden_objects PRIVATE "${chapter_dir}")
    target_link_libraries(${ch}_hidden_objects PRIVATE scalebook::testing)
    _scalebook_check_names("${hidden_file}" hidden_names)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${hidden_file}")
    set(index 0)
    foreach(name IN LISTS hidden_names)
      math(EXPR index "${index} + 1")
      if(name IN_LIST names)
        message(FATAL_ERROR "${hidden_file}: the hidden check '${name}' has the name of a visible one")
      endif()
      string(REGEX MATCH "^[0-9]+\\.[0-9]+" exercise "${name}")
      set(points 1)
      foreach(entry IN LISTS CHAPTER_POINTS)
        if(entry MATCHES "^${exercise}=([0-9]+)$")
          set(points "${CMAKE_MATCH_1}")
        endif()
      endforeach()
      file(APPEND "${SCALEBOOK_HIDDEN_MANIFEST}" "${ARG_NAME}\t${exercise}\t${points}\t${ch}_h${index}\t${name}\n")
    endforeach()
    if(NOT SCALEBOOK_GRADING)
      add_executable(${ch}_hidden_checks $<TARGET_OBJECTS:${ch}_hidden_objects> ${track_objects})
      target_link_libraries(${ch}_hidden_checks PRIVATE scalebook_lib_for_${chapter_number} scalebook::testing
                                                        scalebook::doctest_main)
      set_target_properties(${ch}_hidden_checks PROPERTIES ENABLE_EXPORTS ON)
      foreach(name IN LISTS hidden_names)
        string(REPLACE "," "\\," filter "${name}")
        add_test(NAME "${ARG_NAME}/${name}" COMMAND ${ch}_hidden_checks "--test-case=${filter}" --no-version)
        set_tests_properties("${ARG_NAME}/${name}" PROPERTIES LABELS "${ch};hidden" TIMEOUT "${SCALEBOOK_CHECK_TIMEOUT}")
      endforeach()
    endif()
  endif()
  set(hidden_names "${hidden_names}" PARENT_SCOPE)
  set(has_hidden "${has_hidden}" PARENT_SCOPE)
endfunction()

# Grading's split: the trusted checks with proxies, the worker's table, the kit's lines.
function(_scalebook_chapter_grading)
  # --- grading's split: trusted checks with proxies, and a worker that serves the functions ------
  # chNN_checks_remote is never linked with an implementation: every contract function in it is a
  # proxy that calls a worker process (remote.def lists them). chNN_serve is the worker's table of
  # functions; the grader links it with a submission's objects inside the sandbox.
  set(remote_def "${chapter_dir}/remote.def")
  if(NOT EXISTS "${remote_def}")
    message(FATAL_ERROR "${ARG_NAME} has no remote.def: list the contract's functions for grading "
                        "(see lib/remote/scalebook/remote.hpp)")
  endif()
  foreach(role proxies serve)
    if(role STREQUAL proxies)
      set(MACRO SCALEBOOK_REMOTE_PROXY)
      set(ROLE "proxies")
    else()
      set(MACRO SCALEBOOK_REMOTE_SERVE)
      set(ROLE "worker's table")
    endif()
    configure_file("${SCALEBOOK_CMAKE_DIR}/remote.cpp.in" "${CMAKE_CURRENT_BINARY_DIR}/remote_${role}.cpp" @ONLY)
    add_library(${ch}_${role} OBJECT "${CMAKE_CURRENT_BINARY_DIR}/remote_${role}.cpp")
    target_include_directories(${ch}_${role} PRIVATE "${chapter_dir}")
    target_link_libraries(${ch}_${role} PRIVATE scalebook::lib scalebook_remote_client)
  endforeach()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${remote_def}")
  # The hidden checks, where this build has them, are graded with the others: the same binary.
  set(hidden_objects)
  if(has_hidden)
    set(hidden_objects $<TARGET_OBJECTS:${ch}_hidden_objects>)
  endif()
  add_executable(${ch}_checks_remote $<TARGET_OBJECTS:${ch}_checks_objects> ${hidden_objects}
                                     $<TARGET_OBJECTS:${ch}_proxies>)
  target_link_libraries(${ch}_checks_remote PRIVATE scalebook_remote_client scalebook::testing
                                                   scalebook::doctest_main)
  file(APPEND "${SCALEBOOK_GRADING_KIT}" "chapter\t${ARG_NAME}\t${ARG_NUMBER}\t$<TARGET_FILE:${ch}_checks_remote>\t$<TARGET_OBJECTS:${ch}_serve>\t${chapter_dir}\n")
  set(libs)
  foreach(part IN LISTS SCALEBOOK_LIB_PARTS_FOR_${chapter_number})
    string(APPEND libs "\t$<TARGET_FILE:${part}>")
  endforeach()
  file(APPEND "${SCALEBOOK_GRADING_KIT}" "libs\t${ARG_NAME}${libs}\n")
endfunction()

# The grading path and the registered names, proved on the reference.
function(_scalebook_chapter_meta)
  # The grading path, proved on the reference: the checks through a worker serving the solutions.
  if(NOT SCALEBOOK_STUDENT_EDITION)
    add_executable(${ch}_worker_reference $<TARGET_OBJECTS:${ch}_serve>)
    target_link_libraries(${ch}_worker_reference PRIVATE ${ch}_reference scalebook_remote_server)
    add_test(NAME "${ARG_NAME} checks pass through a worker process (the grading path) on the reference"
             COMMAND ${CMAKE_COMMAND} -E env "SCALEBOOK_WORKER=$<TARGET_FILE:${ch}_worker_reference>"
                     $<TARGET_FILE:${ch}_checks_remote> --no-version)
    set_tests_properties("${ARG_NAME} checks pass through a worker process (the grading path) on the reference"
                         PROPERTIES LABELS meta)
  endif()

  # The names read above must be exactly the binary's own list.
  set(names_file "${CMAKE_CURRENT_BINARY_DIR}/check_names.txt")
  list(JOIN names "\n" names_text)
  file(WRITE "${names_file}" "${names_text}\n")
  add_test(NAME "${ARG_NAME} the registered checks are exactly the binary's test cases"
           COMMAND "${CMAKE_COMMAND}" -D "BINARY=$<TARGET_FILE:${ch}_checks>" -D "NAMES=${names_file}"
                   -P "${SCALEBOOK_CMAKE_DIR}/check_names_match.cmake")
  set_tests_properties("${ARG_NAME} the registered checks are exactly the binary's test cases"
                       PROPERTIES LABELS meta)
  if(has_hidden)
    set(hidden_names_file "${CMAKE_CURRENT_BINARY_DIR}/hidden_check_names.txt")
    list(JOIN hidden_names "\n" hidden_text)
    file(WRITE "${hidden_names_file}" "${hidden_text}\n")
    add_test(NAME "${ARG_NAME} the registered hidden checks are exactly the hidden binary's test cases"
             COMMAND "${CMAKE_COMMAND}" -D "BINARY=$<TARGET_FILE:${ch}_hidden_checks>" -D "NAMES=${hidden_names_file}"
                     -P "${SCALEBOOK_CMAKE_DIR}/check_names_match.cmake")
    set_tests_properties("${ARG_NAME} the registered hidden checks are exactly the hidden binary's test cases"
                         PROPERTIES LABELS "meta;hidden")
  endif()
endfunction()

# Proofs that the checks can fail: on the untouched stubs, and on every mutant of the bug zoo.
function(_scalebook_chapter_proofs)
  if(SCALEBOOK_PROVE_STUBS_FAIL)
    _scalebook_contract_library(${ch}_stubs "${stub_sources}" "${chapter_dir}" ${ARG_NUMBER})
    # The hidden checks too: each must fail on the stubs, as every visible one does.
    _scalebook_all_check_objects(all_check_objects)
    _scalebook_checks_executable(${ch}_checks_on_stubs "${all_check_objects}" ${ch}_stubs)
    add_test(NAME "${ARG_NAME} every check fails on the untouched stubs"
             COMMAND ${ch}_checks_on_stubs --scalebook-expect-all-fail)
    set_tests_properties("${ARG_NAME} every check fails on the untouched stubs" PROPERTIES LABELS proof)

    # Each bugzoo/NAME.mutant is a small change to one reference file (cmake/apply_mutant.py),
    # applied at build time: the mutant's library is the reference with that one file changed.
    file(GLOB mutants CONFIGURE_DEPENDS "${chapter_dir}/bugzoo/*.mutant")
    foreach(mutant IN LISTS mutants)
      cmake_path(GET mutant STEM mutant_name)
      file(STRINGS "${mutant}" file_line REGEX "^file:")
      string(REGEX REPLACE "^file:[ \t]*" "" mutated_file "${file_line}")
      string(STRIP "${mutated_file}" mutated_file)
      list(FIND ARG_SOURCES "${mutated_file}" mutated_index)
      if(mutated_index EQUAL -1)
        message(FATAL_ERROR "${mutant}: 'file: ${mutated_file}' is not one of the chapter's sources: ${ARG_SOURCES}")
      endif()
      _scalebook_mutant_library(${ch}_mutant_${mutant_name} "${mutant}" "${mutated_file}" zoo "Bug zoo")
      _scalebook_checks_executable(${ch}_zoo_${mutant_name} ${ch}_checks_objects ${ch}_mutant_${mutant_name})
      add_test(NAME "${ARG_NAME} bug zoo: ${mutant_name} is caught"
               COMMAND "${CMAKE_COMMAND}" -D "BINARY=$<TARGET_FILE:${ch}_zoo_${mutant_name}>"
                       -D "MUTANT=${mutant}" -D "RESULTS=${CMAKE_CURRENT_BINARY_DIR}/zoo/${mutant_name}.tsv"
                       -D "PYTHON=${Python3_EXECUTABLE}" -D "RULES=${PROJECT_SOURCE_DIR}/lib/tests/check_messages.py"
                       -P "${SCALEBOOK_CMAKE_DIR}/check_mutant_caught.cmake")
      set_tests_properties("${ARG_NAME} bug zoo: ${mutant_name} is caught" PROPERTIES LABELS proof)
    endforeach()
    _scalebook_chapter_hidden_zoo()
  endif()
endfunction()

# Each bugzoo/hidden/NAME.mutant: a mistake a submission tuned to the visible checks makes. It must
# pass every visible check and fail a hidden one that names it (cmake/check_hidden_mutant.cmake): the
# proof that the hidden checks take points the visible ones leave. The zoo is never released.
function(_scalebook_chapter_hidden_zoo)
  file(GLOB hidden_mutants CONFIGURE_DEPENDS "${chapter_dir}/bugzoo/hidden/*.mutant")
  if(hidden_mutants AND NOT CHAPTER_HIDDEN_CHECKS)
    message(FATAL_ERROR "${chapter_dir}/bugzoo/hidden holds mutants but the chapter's manifest names no hidden_checks")
  endif()
  if(NOT has_hidden)
    return()  # a build on another track (SCALEBOOK_TRACK_DIR) compiles no hidden checks to prove
  endif()
  foreach(mutant IN LISTS hidden_mutants)
    cmake_path(GET mutant STEM mutant_name)
    file(STRINGS "${mutant}" file_line REGEX "^file:")
    string(REGEX REPLACE "^file:[ \t]*" "" mutated_file "${file_line}")
    string(STRIP "${mutated_file}" mutated_file)
    list(FIND ARG_SOURCES "${mutated_file}" mutated_index)
    if(mutated_index EQUAL -1)
      message(FATAL_ERROR "${mutant}: 'file: ${mutated_file}' is not one of the chapter's sources: ${ARG_SOURCES}")
    endif()
    _scalebook_mutant_library(${ch}_hidden_mutant_${mutant_name} "${mutant}" "${mutated_file}" hidden_zoo "Hidden bug zoo")
    _scalebook_all_check_objects(all_check_objects)  # the hidden ones among them (has_hidden)
    _scalebook_checks_executable(${ch}_hidden_zoo_${mutant_name} "${all_check_objects}" ${ch}_hidden_mutant_${mutant_name})
    set(test "${ARG_NAME} hidden bug zoo: ${mutant_name} passes every visible check and fails a hidden one")
    add_test(NAME "${test}"
             COMMAND "${CMAKE_COMMAND}" -D "BINARY=$<TARGET_FILE:${ch}_hidden_zoo_${mutant_name}>"
                     -D "MUTANT=${mutant}" -D "HIDDEN=${CMAKE_CURRENT_BINARY_DIR}/hidden_check_names.txt"
                     -D "RESULTS=${CMAKE_CURRENT_BINARY_DIR}/hidden_zoo/${mutant_name}.tsv"
                     -P "${SCALEBOOK_CMAKE_DIR}/check_hidden_mutant.cmake")
    set_tests_properties("${test}" PROPERTIES LABELS "proof;hidden")
  endforeach()
endfunction()

# The lesson program on the reference and on the track; its determinism.
function(_scalebook_chapter_lesson)
  # --- the lesson, once compiled, linked against the reference and against the track -------------
  # The lesson's own code may use all of lib (chapter 1's trains lib's MLP of chapter 2). The
  # exercises it calls were linked under the chapter's rule first: `./workbook run` checks the
  # chapter and runs no lesson while an exercise does not link.
  add_library(${ch}_lesson_objects OBJECT "${chapter_dir}/${ARG_LESSON}")
  target_link_libraries(${ch}_lesson_objects PRIVATE ${ch}_track scalebook::lib)
  add_executable(${ch}_lesson_track $<TARGET_OBJECTS:${ch}_lesson_objects>)
  target_link_libraries(${ch}_lesson_track PRIVATE ${ch}_track scalebook::lib)
  if(NOT SCALEBOOK_STUDENT_EDITION)
    add_executable(${ch}_lesson $<TARGET_OBJECTS:${ch}_lesson_objects>)
    target_link_libraries(${ch}_lesson PRIVATE ${ch}_reference scalebook::lib)
    add_test(NAME "${ARG_NAME} lesson output is identical run to run"
             COMMAND "${CMAKE_COMMAND}" -D "LESSON=$<TARGET_FILE:${ch}_lesson>"
                     -D "WORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/determinism"
                     -P "${SCALEBOOK_CMAKE_DIR}/check_lesson_deterministic.cmake")
    set_tests_properties("${ARG_NAME} lesson output is identical run to run" PROPERTIES LABELS lesson)
  endif()
endfunction()

# The book's assets: the lesson's output, its figures, the stubs as shipped.
function(_scalebook_chapter_docs)
  # --- docs assets: the lesson's real output and data, and the figures gnuplot draws from them ---
  if(SCALEBOOK_BUILD_DOCS)
    set(out_dir "${SCALEBOOK_DOCS_GENERATED_DIR}/${ARG_NAME}")
    set(outputs "${out_dir}/lesson.out")
    set(figure_commands)
    foreach(figure IN LISTS ARG_FIGURES)
      list(APPEND outputs "${out_dir}/${figure}.svg")
      list(APPEND figure_commands
           COMMAND "${CMAKE_COMMAND}" -D "GNUPLOT=${GNUPLOT_EXECUTABLE}" -D "TERMINAL=${SCALEBOOK_GNUPLOT_TERMINAL}"
                   -D "SCRIPT=${chapter_dir}/figures/${figure}.gp" -D "OUTPUT=${figure}.svg"
                   -P "${SCALEBOOK_CMAKE_DIR}/draw_figure.cmake")
    endforeach()
    list(TRANSFORM ARG_FIGURES PREPEND "${chapter_dir}/figures/" OUTPUT_VARIABLE figure_scripts)
    list(TRANSFORM figure_scripts APPEND ".gp")
    file(MAKE_DIRECTORY "${out_dir}")
    if(SCALEBOOK_STUDENT_EDITION)
      # The student edition has no reference to run the lesson on: its output and figures were
      # made by the reference when the edition was released (docs/prebuilt/NAME).
      set(prebuilt "${PROJECT_SOURCE_DIR}/docs/prebuilt/${ARG_NAME}")
      set(figure_commands)
      file(GLOB prebuilt_files LIST_DIRECTORIES false "${prebuilt}/*")
      add_custom_command(OUTPUT ${outputs}
                         COMMAND "${CMAKE_COMMAND}" -E copy ${prebuilt_files} "${out_dir}"
                         DEPENDS ${prebuilt_files}
                         COMMENT "The ${ARG_NAME} lesson's output, as released" VERBATIM)
    else()
    add_custom_command(
      OUTPUT ${outputs}
      COMMAND "${CMAKE_COMMAND}" -D "LESSON=$<TARGET_FILE:${ch}_lesson>" -D "OUT_DIR=${out_dir}"
              -P "${SCALEBOOK_CMAKE_DIR}/run_lesson.cmake"
      ${figure_commands}
      WORKING_DIRECTORY "${out_dir}"
      DEPENDS ${ch}_lesson ${figure_scripts} "${SCALEBOOK_CMAKE_DIR}/run_lesson.cmake"
              "${SCALEBOOK_CMAKE_DIR}/draw_figure.cmake"
      COMMENT "Running the ${ARG_NAME} lesson and drawing its figures"
      VERBATIM)
    endif()
    # The exercise stubs the page shows (docs/prepare_page.cmake reads NAME/stubs/FILE): a copy of
    # the stubs as shipped, never exercises/ itself, which in a student's tree is their own work in
    # progress. Here exercises/ is pristine; the student edition ships its copy as released
    # (tools/scalebook/release.py: docs/prebuilt/NAME/stubs). Editing an exercise so never rebuilds the book.
    set(stubs_dir "${out_dir}/stubs")
    list(TRANSFORM ARG_SOURCES PREPEND "${stubs_dir}/" OUTPUT_VARIABLE stub_copies)
    if(SCALEBOOK_STUDENT_EDITION)
      list(TRANSFORM ARG_SOURCES PREPEND "${PROJECT_SOURCE_DIR}/docs/prebuilt/${ARG_NAME}/stubs/"
           OUTPUT_VARIABLE shipped_stubs)
    else()
      set(shipped_stubs ${stub_sources})
    endif()
    add_custom_command(OUTPUT ${stub_copies}
                       COMMAND "${CMAKE_COMMAND}" -E make_directory "${stubs_dir}"
                       COMMAND "${CMAKE_COMMAND}" -E copy ${shipped_stubs} "${stubs_dir}"
                       DEPENDS ${shipped_stubs}
                       COMMENT "The ${ARG_NAME} exercise stubs the book shows, as shipped" VERBATIM)
    list(APPEND outputs ${stub_copies})
    add_custom_target(${ch}_docs_assets DEPENDS ${outputs})
    set_property(GLOBAL APPEND PROPERTY SCALEBOOK_DOCS_ASSET_TARGETS ${ch}_docs_assets)
    set_property(GLOBAL APPEND PROPERTY SCALEBOOK_DOCS_ASSET_FILES ${outputs})
  endif()
endfunction()

# The chapter in the book: its line on the main page, its pages, contract and sources.
function(_scalebook_chapter_pages)
  set_property(GLOBAL APPEND PROPERTY SCALEBOOK_CHAPTER_INDEX
               "- @ref ${ch} — ${ARG_SUMMARY} Hints: @ref ${ch}_hints")
  # The lesson and hints pages reach Doxygen prepared by docs/prepare_page.cmake (output blocks,
  # collapsed hint tiers, previous/next links), in chapter order.
  set_property(GLOBAL APPEND PROPERTY SCALEBOOK_DOCS_CHAPTER_PAGES "${ch}|${chapter_dir}")
  set_property(GLOBAL APPEND PROPERTY SCALEBOOK_DOCS_INPUTS "${chapter_dir}/${ARG_CONTRACT}")
  set_property(GLOBAL APPEND PROPERTY SCALEBOOK_DOCS_SOURCES
               ${reference_sources} "${chapter_dir}/${ARG_LESSON}")
endfunction()

# Each variants/FILE of the reference chapter: a correct solution written another way (another order of
# operations, loops for Eigen's expressions, a reciprocal for a division...) that stands in for the
# reference's FILE. With all of a chapter's variants in place of their files, every check, visible
# and hidden, must pass, and the lesson must print what the book prints as `./workbook run N --diff`
# compares them: no line marked as differing, no claim of the page failing
# (cmake/check_lesson_matches.py). The proof that a correct student is never told otherwise.
function(_scalebook_chapter_variants)
  file(GLOB variants CONFIGURE_DEPENDS "${SCALEBOOK_REFERENCE_DIR}/${ARG_NAME}/variants/*")
  if(NOT variants)
    return()
  endif()
  foreach(variant IN LISTS variants)
    cmake_path(GET variant FILENAME name)
    if(NOT name IN_LIST ARG_SOURCES)
      message(FATAL_ERROR "${variant}: a variant is named like the reference file it replaces, one of: ${ARG_SOURCES}")
    endif()
  endforeach()
  set(replaced)
  set(variant_sources)
  foreach(source IN LISTS ARG_SOURCES)  # in the sources' order
    if(EXISTS "${SCALEBOOK_REFERENCE_DIR}/${ARG_NAME}/variants/${source}")
      list(APPEND replaced "${source}")
      list(APPEND variant_sources "${SCALEBOOK_REFERENCE_DIR}/${ARG_NAME}/variants/${source}")
    endif()
  endforeach()
  _scalebook_reference_with(${ch}_variant FILES ${replaced} SOURCES ${variant_sources})
  _scalebook_all_check_objects(all_check_objects)
  _scalebook_checks_executable(${ch}_checks_on_variant "${all_check_objects}" ${ch}_variant)
  add_test(NAME "${ARG_NAME} a correct solution written another way passes every check"
           COMMAND ${ch}_checks_on_variant)
  add_executable(${ch}_lesson_variant $<TARGET_OBJECTS:${ch}_lesson_objects>)
  target_link_libraries(${ch}_lesson_variant PRIVATE ${ch}_variant scalebook::lib)
  set(test "${ARG_NAME} a correct solution written another way: its lesson matches the book, no claim fails")
  add_test(NAME "${test}"
           COMMAND "${Python3_EXECUTABLE}" "${SCALEBOOK_CMAKE_DIR}/check_lesson_matches.py"
                   --book $<TARGET_FILE:${ch}_lesson> --other $<TARGET_FILE:${ch}_lesson_variant>
                   --chapter "${chapter_dir}" --work "${CMAKE_CURRENT_BINARY_DIR}/variant_lesson")
  set_tests_properties("${ARG_NAME} a correct solution written another way passes every check" "${test}"
                       PROPERTIES LABELS "proof;variant")
endfunction()

# _scalebook_reference_with(TARGET FILES NAME... SOURCES PATH...): the chapter's reference as the
# contract library TARGET, each file NAME of its sources compiled from the PATH at the same position
# instead; the chapter's other files are the reference's own objects. Reads the calling
# scalebook_add_chapter's ch, ARG_SOURCES, ARG_NUMBER and chapter_dir.
function(_scalebook_reference_with target)
  cmake_parse_arguments(PARSE_ARGV 1 WITH "" "" "FILES;SOURCES")
  set(kept_objects)
  set(index 0)
  foreach(source IN LISTS ARG_SOURCES)
    math(EXPR index "${index} + 1")
    if(NOT source IN_LIST WITH_FILES)
      list(APPEND kept_objects $<TARGET_OBJECTS:${ch}_reference_ex${index}>)
    endif()
  endforeach()
  _scalebook_contract_library(${target} "${WITH_SOURCES}" "${chapter_dir}" ${ARG_NUMBER} OBJECTS ${kept_objects})
endfunction()

# _scalebook_all_check_objects(OUT): the object libraries of every check this build has for the
# chapter, the visible ones and, where it has them, the hidden ones.
function(_scalebook_all_check_objects out)
  set(objects ${ch}_checks_objects)
  if(has_hidden)
    list(APPEND objects ${ch}_hidden_objects)
  endif()
  set(${out} ${objects} PARENT_SCOPE)
endfunction()

# _scalebook_mutant_library(TARGET MUTANT FILE FOLDER WHAT): the chapter's reference with MUTANT
# applied to FILE (by cmake/apply_mutant.py, into FOLDER/NAME/ of the binary dir), as the contract
# library TARGET (_scalebook_reference_with).
function(_scalebook_mutant_library target mutant mutated_file folder what)
  cmake_path(GET mutant STEM mutant_name)
  set(mutated_source "${CMAKE_CURRENT_BINARY_DIR}/${folder}/${mutant_name}/${mutated_file}")
  add_custom_command(OUTPUT "${mutated_source}"
                     COMMAND "${Python3_EXECUTABLE}" "${PROJECT_SOURCE_DIR}/cmake/apply_mutant.py" "${mutant}"
                             "${SCALEBOOK_REFERENCE_DIR}/${ARG_NAME}" "${mutated_source}"
                     DEPENDS "${mutant}" "${SCALEBOOK_REFERENCE_DIR}/${ARG_NAME}/${mutated_file}"
                             "${PROJECT_SOURCE_DIR}/cmake/apply_mutant.py"
                     COMMENT "${what}: applying ${mutant_name} to ${mutated_file}" VERBATIM)
  _scalebook_reference_with(${target} FILES "${mutated_file}" SOURCES "${mutated_source}")
endfunction()

# scalebook_add_chapter([NAME folder]): the chapter in the current folder (or chapters/NAME), from
# its chapter.json. The helpers above read this function's variables (ARG_*, ch, chapter_dir...).
function(scalebook_add_chapter)
  cmake_parse_arguments(PARSE_ARGV 0 ARG "" "NAME" "")
  if(NOT ARG_NAME)
    cmake_path(GET CMAKE_CURRENT_SOURCE_DIR FILENAME ARG_NAME)
  endif()
  set(chapter_dir "${PROJECT_SOURCE_DIR}/chapters/${ARG_NAME}")
  _scalebook_read_manifest("${chapter_dir}")
  set(ARG_NUMBER "${CHAPTER_NUMBER}")      # 03
  set(ARG_SOURCES ${CHAPTER_SOURCES})
  set(ARG_FIGURES ${CHAPTER_FIGURES})
  set(ARG_CONTRACT "${CHAPTER_CONTRACT}")
  set(ARG_CHECKS "${CHAPTER_CHECKS}")
  set(ARG_LESSON "${CHAPTER_LESSON}")
  set(ARG_SUMMARY "${CHAPTER_SUMMARY}")
  set(SCALEBOOK_CHAPTER_SOURCES ${CHAPTER_SOURCES} PARENT_SCOPE)
  set(ch "ch${ARG_NUMBER}")
  math(EXPR chapter_number "${ARG_NUMBER}")  # 03 -> 3: a decimal, never an octal literal
  list(TRANSFORM ARG_SOURCES PREPEND "${SCALEBOOK_REFERENCE_DIR}/${ARG_NAME}/" OUTPUT_VARIABLE reference_sources)
  list(TRANSFORM ARG_SOURCES PREPEND "${PROJECT_SOURCE_DIR}/exercises/${ARG_NAME}/" OUTPUT_VARIABLE stub_sources)
  set(track_dir "${SCALEBOOK_TRACK_DIR}/${ARG_NAME}")
  cmake_path(COMPARE "${track_dir}" EQUAL "${SCALEBOOK_REFERENCE_DIR}/${ARG_NAME}" track_is_reference)
  _scalebook_chapter_track()
  _scalebook_chapter_checks()
  _scalebook_chapter_grading()
  if(SCALEBOOK_GRADING)
    return()  # grading builds the checks only
  endif()
  _scalebook_chapter_meta()
  _scalebook_chapter_proofs()
  if(SCALEBOOK_STUDENT_EDITION)
    set(reference_sources)  # the edition has none: the book shows the lesson alone
  endif()
  _scalebook_chapter_lesson()
  if(SCALEBOOK_PROVE_STUBS_FAIL AND NOT SCALEBOOK_STUDENT_EDITION)
    _scalebook_chapter_variants()
  endif()
  _scalebook_chapter_docs()
  _scalebook_chapter_pages()
endfunction()
