# scalebook_add_chapter(): the mechanics every chapter shares.
#
#   scalebook_add_chapter(NAME 03-attention-scaling NUMBER 03
#                         SOURCE attention_scaling.cpp   # in exercises/NAME, solutions/NAME, a submission
#                         CHECKS checks.cpp              # doctest checks, in chapters/NAME
#                         LESSON lesson.cpp              # lesson program, in chapters/NAME
#                         FIGURES variance               # figures/variance.gp -> variance.svg
#                         SUMMARY "what the chapter covers, for the book's main page")
#
# Targets (chNN = "ch" + NUMBER):
#   chNN_reference   the reference solution (solutions/NAME/SOURCE)
#   chNN_track       the track being checked (SCALEBOOK_TRACK_DIR/NAME/SOURCE)
#   chNN_checks      the checks against the track; each doctest case is a CTest test labelled chNN
#   chNN_lesson      the lesson program on the reference; its output and figures feed the docs
#   chNN_lesson_track  the lesson program on the track (what `./workbook run` shows a student)
#   chNN_checks_on_stubs  (SCALEBOOK_PROVE_STUBS_FAIL) the checks against the untouched stubs
set(SCALEBOOK_CMAKE_DIR "${CMAKE_CURRENT_LIST_DIR}")

function(scalebook_add_chapter)
  cmake_parse_arguments(PARSE_ARGV 0 ARG "" "NAME;NUMBER;SOURCE;CHECKS;LESSON;SUMMARY" "FIGURES")
  set(ch "ch${ARG_NUMBER}")
  set(chapter_dir "${PROJECT_SOURCE_DIR}/chapters/${ARG_NAME}")
  set(reference_source "${PROJECT_SOURCE_DIR}/solutions/${ARG_NAME}/${ARG_SOURCE}")
  set(stub_source "${PROJECT_SOURCE_DIR}/exercises/${ARG_NAME}/${ARG_SOURCE}")
  set(track_source "${SCALEBOOK_TRACK_DIR}/${ARG_NAME}/${ARG_SOURCE}")

  # One library per implementation of the chapter's contract (chapters/NAME/*.hpp).
  function(_scalebook_contract_library target source)
    add_library(${target} STATIC "${source}")
    target_include_directories(${target} PUBLIC "${chapter_dir}")
    target_link_libraries(${target} PUBLIC scalebook::lib)
  endfunction()

  _scalebook_contract_library(${ch}_reference "${reference_source}")
  cmake_path(COMPARE "${track_source}" EQUAL "${reference_source}" track_is_reference)
  if(track_is_reference)
    add_library(${ch}_track ALIAS ${ch}_reference)
  else()
    if(NOT EXISTS "${track_source}")
      message(FATAL_ERROR "chapter ${ARG_NAME}: ${track_source} is missing (SCALEBOOK_TRACK_DIR=${SCALEBOOK_TRACK_DIR})")
    endif()
    _scalebook_contract_library(${ch}_track "${track_source}")
  endif()

  # The checks are compiled once and linked against each implementation.
  add_library(${ch}_checks_objects OBJECT "${chapter_dir}/${ARG_CHECKS}")
  target_include_directories(${ch}_checks_objects PRIVATE "${chapter_dir}")
  target_link_libraries(${ch}_checks_objects PRIVATE scalebook::testing)

  add_executable(${ch}_checks $<TARGET_OBJECTS:${ch}_checks_objects>)
  target_link_libraries(${ch}_checks PRIVATE ${ch}_track scalebook::testing scalebook::doctest_main)
  doctest_discover_tests(${ch}_checks TEST_PREFIX "${ARG_NAME}/" PROPERTIES LABELS "${ch}")

  if(SCALEBOOK_PROVE_STUBS_FAIL)
    _scalebook_contract_library(${ch}_stubs "${stub_source}")
    add_executable(${ch}_checks_on_stubs $<TARGET_OBJECTS:${ch}_checks_objects>)
    target_link_libraries(${ch}_checks_on_stubs PRIVATE ${ch}_stubs scalebook::testing scalebook::doctest_main)
    add_test(NAME "${ARG_NAME} every check fails on the untouched stubs"
             COMMAND ${ch}_checks_on_stubs --scalebook-expect-all-fail)
    set_tests_properties("${ARG_NAME} every check fails on the untouched stubs" PROPERTIES LABELS stub-proof)
  endif()

  # The lesson program, once compiled, linked against the reference and against the track.
  add_library(${ch}_lesson_objects OBJECT "${chapter_dir}/${ARG_LESSON}")
  target_link_libraries(${ch}_lesson_objects PRIVATE ${ch}_reference)
  add_executable(${ch}_lesson $<TARGET_OBJECTS:${ch}_lesson_objects>)
  target_link_libraries(${ch}_lesson PRIVATE ${ch}_reference)
  add_executable(${ch}_lesson_track $<TARGET_OBJECTS:${ch}_lesson_objects>)
  target_link_libraries(${ch}_lesson_track PRIVATE ${ch}_track)

  add_test(NAME "${ARG_NAME} lesson output is identical run to run"
           COMMAND "${CMAKE_COMMAND}" -D "LESSON=$<TARGET_FILE:${ch}_lesson>"
                   -D "WORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/determinism"
                   -P "${SCALEBOOK_CMAKE_DIR}/check_lesson_deterministic.cmake")
  set_tests_properties("${ARG_NAME} lesson output is identical run to run" PROPERTIES LABELS lesson)

  # Docs assets: the lesson's real output and data, and the figures gnuplot draws from the data.
  if(SCALEBOOK_BUILD_DOCS)
    set(out_dir "${SCALEBOOK_DOCS_GENERATED_DIR}/${ARG_NAME}")
    set(outputs "${out_dir}/lesson.out")
    set(figure_commands)
    foreach(figure IN LISTS ARG_FIGURES)
      list(APPEND outputs "${out_dir}/${figure}.svg")
      list(APPEND figure_commands
           COMMAND "${GNUPLOT_EXECUTABLE}" -e "${SCALEBOOK_GNUPLOT_TERMINAL}" -e "set output '${figure}.svg'"
                   "${chapter_dir}/figures/${figure}.gp")
    endforeach()
    list(TRANSFORM ARG_FIGURES PREPEND "${chapter_dir}/figures/" OUTPUT_VARIABLE figure_scripts)
    list(TRANSFORM figure_scripts APPEND ".gp")
    add_custom_command(
      OUTPUT ${outputs}
      COMMAND "${CMAKE_COMMAND}" -E make_directory "${out_dir}"
      COMMAND "${CMAKE_COMMAND}" -D "LESSON=$<TARGET_FILE:${ch}_lesson>" -D "OUT_DIR=${out_dir}"
              -P "${SCALEBOOK_CMAKE_DIR}/run_lesson.cmake"
      ${figure_commands}
      WORKING_DIRECTORY "${out_dir}"
      DEPENDS ${ch}_lesson ${figure_scripts} "${SCALEBOOK_CMAKE_DIR}/run_lesson.cmake"
      COMMENT "Running the ${ARG_NAME} lesson and drawing its figures"
      VERBATIM)
    add_custom_target(${ch}_docs_assets DEPENDS ${outputs})
    set_property(GLOBAL APPEND PROPERTY SCALEBOOK_DOCS_ASSET_TARGETS ${ch}_docs_assets)
    set_property(GLOBAL APPEND PROPERTY SCALEBOOK_DOCS_ASSET_FILES ${outputs})
  endif()
  math(EXPR number "${ARG_NUMBER}")
  set_property(GLOBAL APPEND PROPERTY SCALEBOOK_CHAPTER_INDEX
               "- Chapter ${number}: @subpage ${ch} — ${ARG_SUMMARY} Hints: @subpage ${ch}_hints")
  cmake_path(GET ARG_SOURCE STEM contract)
  set_property(GLOBAL APPEND PROPERTY SCALEBOOK_DOCS_INPUTS
               "${chapter_dir}/lesson.md" "${chapter_dir}/hints.md" "${chapter_dir}/${contract}.hpp")
  set_property(GLOBAL APPEND PROPERTY SCALEBOOK_DOCS_SOURCES
               "${stub_source}" "${reference_source}" "${chapter_dir}/${ARG_LESSON}")
endfunction()

set(SCALEBOOK_DOCS_GENERATED_DIR "${PROJECT_BINARY_DIR}/docs/generated")
# One look for every figure: SVG, sized for a book page.
set(SCALEBOOK_GNUPLOT_TERMINAL "set terminal svg size 720,420 dynamic enhanced font 'Helvetica,13' background rgb 'white'")
