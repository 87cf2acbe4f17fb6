# docs/prepare_page.cmake on fixtures in every shape the chapters' pages take (run by CTest):
#   cmake -D PREPARE=docs/prepare_page.cmake -D WORK=dir -P prepare_page.cmake
file(MAKE_DIRECTORY "${WORK}")
function(expect text pattern what)
  if(NOT text MATCHES "${pattern}")
    message(FATAL_ERROR "prepare_page: ${what}\n--- got ---\n${text}")
  endif()
endfunction()
function(count text needle expected what)
  string(REGEX MATCHALL "${needle}" found "${text}")
  list(LENGTH found n)
  if(NOT n EQUAL expected)
    message(FATAL_ERROR "prepare_page: ${what}: ${n} times '${needle}', expected ${expected}\n--- got ---\n${text}")
  endif()
endfunction()

# Hints: tiers with continuation lines, a blank line between tiers, brackets and semicolons, a
# "If the check says" line after the tiers, a section with one tier.
file(WRITE "${WORK}/hints.md" [=[
Chapter 9 hints {#ch09_hints}
===

Intro with [brackets]; and a semicolon.

## 9.1 thing {#ch09_hint_9_1}

1. First tier
   continues here.

2. Second tier, after a blank line.
3. Third tier with `code[0]; x`.

If the check says "scaled by d_k": divide by its square root.

## 9.2 other {#ch09_hint_9_2}

1. Only tier.
]=])
execute_process(COMMAND "${CMAKE_COMMAND}" -D "IN=${WORK}/hints.md" -D "OUT=${WORK}/hints.out.md" -D KIND=hints
                        -D "PAGER=<div class=\"scalebook-pager\">@ref ch09</div>" -P "${PREPARE}"
                RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "prepare_page failed on the hints fixture")
endif()
file(READ "${WORK}/hints.out.md" hints)
count("${hints}" "<details class=\"scalebook-hint\">" 4 "one collapsed section per tier")
count("${hints}" "</details>" 4 "every tier closed")
count("${hints}" "<div class=\"scalebook-hints\">" 2 "one group of tiers per exercise")
expect("${hints}" "Hint 1 of 3</summary>[^\n]*\n\nFirst tier\ncontinues here\\." "tier 1 with its continuation line")
expect("${hints}" "Hint 2 of 3</summary>[^\n]*\n\nSecond tier, after a blank line\\." "tier 2 after a blank line")
expect("${hints}" "Third tier with `code\\[0\\]; x`\\." "brackets and semicolons kept")
expect("${hints}" "</div>\\\\endhtmlonly\n+If the check says" "the mistake line after the tiers, outside them")
expect("${hints}" "Hint 1 of 1</summary>" "a section with one tier")
expect("${hints}" "Intro with \\[brackets\\]; and a semicolon\\." "text outside the sections unchanged")
expect("${hints}" "<div class=\"scalebook-pager\">@ref ch09</div>\n$" "the previous/next links at the end")

# Lessons: only output snippets (of lesson.out) are wrapped, code snippets are not; each exercise
# file becomes one captioned block from its "What to write:" instructions on, and each solution one
# of its code from the namespace on; the stubs are read from the shipped copy (09-x/stubs/) rather
# than from exercises/; the caption may wrap after a slash only; other includes are left alone.
file(WRITE "${WORK}/lesson.md" [=[
\snippet chapters/09-x/lesson.cpp code-label
\snippet 09-x/lesson.out out-label
@snippet 09-x/lesson.out other

\include exercises/09-x/ex1_first.cpp

\include exercises/09-x/ex2_second.cpp

\if instructor
\include solutions/09-x/ex1_first.cpp
\endif
\include chapters/09-x/lesson.cpp
]=])
execute_process(COMMAND "${CMAKE_COMMAND}" -D "IN=${WORK}/lesson.md" -D "OUT=${WORK}/lesson.out.md" -D KIND=lesson
                        -P "${PREPARE}" RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "prepare_page failed on the lesson fixture")
endif()
file(READ "${WORK}/lesson.out.md" lesson)
count("${lesson}" "<div class=\"scalebook-output\">" 2 "each output snippet labelled")
expect("${lesson}" "^\\\\snippet chapters/09-x/lesson.cpp code-label\n<div" "a code snippet left alone")
count("${lesson}" "<div class=\"scalebook-file\">" 3 "one block per exercise file or solution")
count("${lesson}" "[\\@]include " 1 "no exercise file or solution included whole")
set(caption "\\\\htmlonly\\[block\\]<div class=\"scalebook-file\"><div class=\"scalebook-file-name\">")
set(stub1 "<span>exercises/</span><wbr><span>09-x/</span><wbr><span>ex1_first\\.cpp</span>")
count("${lesson}" "${stub1}" 1 "the stub's file named once, in its caption")
set(stub2 "<span>exercises/</span><wbr><span>09-x/</span><wbr><span>ex2_second\\.cpp</span>")
set(solution1 "<span>solutions/</span><wbr><span>09-x/</span><wbr><span>ex1_first\\.cpp</span>")
set(stub_code "\n\\\\skip What to write:\n\\\\until // namespace scalebook\n\\\\htmlonly\\[block\\]</div>\\\\endhtmlonly\n")
set(code "\n\\\\skip namespace scalebook\n\\\\until // namespace scalebook\n\\\\htmlonly\\[block\\]</div>\\\\endhtmlonly\n")
expect("${lesson}" "${caption}${stub1}</div>\\\\endhtmlonly\n\\\\dontinclude 09-x/stubs/ex1_first\\.cpp${stub_code}"
       "a stub captioned with its path, from its instructions on, read from the stubs as shipped")
expect("${lesson}" "${caption}${stub2}</div>\\\\endhtmlonly\n\\\\dontinclude 09-x/stubs/ex2_second\\.cpp${stub_code}"
       "every stub in its own block")
expect("${lesson}" "\\\\if instructor\n${caption}${solution1}</div>\\\\endhtmlonly\n\\\\dontinclude solutions/09-x/ex1_first\\.cpp${code}\\\\endif\n"
       "a solution captioned with its path, read where it is, inside the instructor section")
expect("${lesson}" "\n\\\\include chapters/09-x/lesson\\.cpp\n" "an include of another file left alone")
message(STATUS "prepare_page: hint tiers collapsed one per tier, output snippets labelled, exercise files captioned, pager appended")
