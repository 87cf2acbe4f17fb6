# Prepares one chapter page for Doxygen: cmake -D IN=... -D OUT=... -D KIND=lesson|hints
#   [-D PAGER="markdown of the previous/next links"] -P prepare_page.cmake
#
# The chapters' Markdown stays as authors write it (and as ./workbook hint reads it); the book
# reads a prepared copy:
#   lesson  every `\snippet FOLDER/lesson.out LABEL` line is wrapped in <div class="scalebook-output">,
#           so the lesson's output looks unlike code and is labelled "Output" (docs/scalebook.css).
#           Every `\include` line of an exercise file (exercises/CHAPTER/FILE.cpp) or of the
#           reference's copy of it becomes a block captioned with that path, without the file's
#           header comment (each file is named once and the chapter's guidance is not repeated five
#           times): a stub from its "What to write:" line to the end (the exercise's instructions,
#           the line below which the student's code goes, the includes, the signature and the
#           not_implemented call), a reference file from its `namespace scalebook` line. The stubs are read from CHAPTER/stubs/FILE.cpp of the
#           generated docs dir (the chapter's docs assets: the stubs as shipped,
#           cmake/Scalebook.cmake), never from exercises/, which is the reader's own work in
#           progress; the reference files are read where they are.
#   hints   every numbered item of a `## N.K name` section (the tiers ./workbook hint shows one at a
#           time) becomes a collapsed <details> "Hint k of n"; docs/scalebook.css shows tier k+1's
#           only once tier k is open. Other lines ("If the check says ...") stay as they are.
#   both    the previous/next links (PAGER) at the end of the page.
if(NOT DEFINED IN OR NOT DEFINED OUT OR NOT KIND MATCHES "^(lesson|hints)$")
  message(FATAL_ERROR "usage: cmake -D IN=page.md -D OUT=prepared.md -D KIND=lesson|hints [-D PAGER=...] -P prepare_page.cmake")
endif()
file(READ "${IN}" text)
# Split on newlines by hand, keeping empty lines; ; [ and ] would confuse CMake's lists, so they
# travel as placeholders.
string(REPLACE ";" "<sb-semicolon>" text "${text}")
string(REPLACE "[" "<sb-open>" text "${text}")
string(REPLACE "]" "<sb-close>" text "${text}")
string(REPLACE "\n" ";" lines "${text}")

set(out "")
set(open_tag "\\htmlonly[block]")
set(close_tag "\\endhtmlonly")

if(KIND STREQUAL "lesson")
  foreach(line IN LISTS lines)
    if(line MATCHES "^[ \t]*[\\\\@]snippet[ \t]+[^ \t]+\\.out[ \t]")
      string(APPEND out "<div class=\"scalebook-output\">\n${line}\n</div>\n")
    elseif(line MATCHES "^[ \t]*[\\\\@]include[ \t]+((exercises|solutions)/([^/ \t]+)/([^/ \t]+\\.cpp))[ \t]*$")
      set(shown "${CMAKE_MATCH_1}")
      set(read "${CMAKE_MATCH_1}")
      set(first "namespace scalebook")
      if(CMAKE_MATCH_2 STREQUAL "exercises")
        set(read "${CMAKE_MATCH_3}/stubs/${CMAKE_MATCH_4}")
        set(first "What to write:")
      endif()
      # The caption may wrap after a slash, never inside a folder's or file's name.
      string(REPLACE "/" "/</span><wbr><span>" caption "${shown}")
      set(caption "<span>${caption}</span>")
      # \skip leaves the file at the stub's "// What to write:" line (the instructions, which end
      # the header comment of every stub: tools/tests/unit/test_stub_layout.py) or the reference's
      # `namespace scalebook::chNN {` line; \until shows it through the closing
      # `}  // namespace scalebook::chNN` (an anonymous namespace closes with `// namespace` alone).
      string(APPEND out "${open_tag}<div class=\"scalebook-file\"><div class=\"scalebook-file-name\">${caption}</div>${close_tag}\n"
                        "\\dontinclude ${read}\n\\skip ${first}\n\\until // namespace scalebook\n"
                        "${open_tag}</div>${close_tag}\n")
    else()
      string(APPEND out "${line}\n")
    endif()
  endforeach()
else()
  # First pass: the number of tiers of each section, for "Hint k of n".
  set(counts)
  set(count -1)
  foreach(line IN LISTS lines)
    if(line MATCHES "^## ")
      if(count GREATER_EQUAL 0)
        list(APPEND counts ${count})
      endif()
      set(count 0)
    elseif(count GREATER_EQUAL 0 AND line MATCHES "^[0-9]+\\.[ \t]+")
      math(EXPR count "${count} + 1")
    endif()
  endforeach()
  if(count GREATER_EQUAL 0)
    list(APPEND counts ${count})
  endif()

  set(section -1)
  set(in_tier OFF)
  set(tier 0)
  foreach(line IN LISTS lines)
    set(closes OFF)
    if(in_tier)
      # A tier goes on over its indented continuation lines and blank lines; anything else ends it.
      if(NOT line MATCHES "^([ \t]+|$)")
        set(closes ON)
      endif()
    endif()
    if(closes)
      string(APPEND out "\n${open_tag}</details>${close_tag}\n")
      set(in_tier OFF)
      if(NOT line MATCHES "^[0-9]+\\.[ \t]+")
        string(APPEND out "${open_tag}</div>${close_tag}\n\n")
      endif()
    endif()
    if(line MATCHES "^## ")
      math(EXPR section "${section} + 1")
      list(GET counts ${section} n)
      set(tier 0)
      string(APPEND out "${line}\n")
    elseif(section GREATER_EQUAL 0 AND line MATCHES "^[0-9]+\\.[ \t]+(.*)$")
      set(body "${CMAKE_MATCH_1}")
      if(tier EQUAL 0 OR NOT closes)
        string(APPEND out "${open_tag}<div class=\"scalebook-hints\">${close_tag}\n")
      endif()
      math(EXPR tier "${tier} + 1")
      string(APPEND out "${open_tag}<details class=\"scalebook-hint\"><summary>Hint ${tier} of ${n}</summary>${close_tag}\n\n${body}\n")
      set(in_tier ON)
    elseif(in_tier)
      string(STRIP "${line}" stripped)
      string(APPEND out "${stripped}\n")
    else()
      string(APPEND out "${line}\n")
    endif()
  endforeach()
  if(in_tier)
    string(APPEND out "\n${open_tag}</details>${close_tag}\n${open_tag}</div>${close_tag}\n")
  endif()
endif()

if(DEFINED PAGER AND NOT PAGER STREQUAL "")
  string(APPEND out "\n${PAGER}\n")
endif()
string(REPLACE "<sb-semicolon>" ";" out "${out}")
string(REPLACE "<sb-open>" "[" out "${out}")
string(REPLACE "<sb-close>" "]" out "${out}")
file(WRITE "${OUT}.tmp" "${out}")
file(RENAME "${OUT}.tmp" "${OUT}")
