# Keeps the documentation's references from going stale (issue 28): run as
#   cmake -DROOT=<source dir> -P check_references.cmake
# (CTest's `docs_references`, label unit; CMake alone, so it runs on a fresh machine). Fails, naming
# the file and the reference, when
# - a relative Markdown link of README.md, benchmarks/README.md, CONTRIBUTING.md, CHANGELOG.md or
#   docs/*.md names a file or directory that does not exist, or an #anchor that no heading of its
#   target makes;
# - a path into the tree that they mention (`src/...`, test/..., examples/..., in backticks or
#   not) does not exist (paths under build/ are outputs, and are not checked);
# - a test that docs/*.md cite as `suite/case` is not a Boost.Test case of that suite in test/;
# - an enumerator of locksmith::error (include/locksmith/error.hpp) is named nowhere in README.md
#   or docs/*.md, where a caller learns what it means.
cmake_minimum_required(VERSION 3.25)
if(NOT DEFINED ROOT)
  message(FATAL_ERROR "usage: cmake -DROOT=<source dir> -P check_references.cmake")
endif()

set(problems "")
macro(problem text)
  string(APPEND problems "  ${text}\n")
endmacro()

# GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens.
function(anchors_of file out)
  file(STRINGS "${file}" headings REGEX "^#+ ")
  set(anchors "")
  foreach(h IN LISTS headings)
    string(REGEX REPLACE "^#+ +" "" h "${h}")
    string(TOLOWER "${h}" h)
    string(REGEX REPLACE "[^a-z0-9 _-]" "" h "${h}")
    string(REPLACE " " "-" h "${h}")
    list(APPEND anchors "${h}")
  endforeach()
  set(${out} "${anchors}" PARENT_SCOPE)
endfunction()

file(GLOB docs_md RELATIVE "${ROOT}" "${ROOT}/docs/*.md")
set(documents README.md benchmarks/README.md ${docs_md})
foreach(f CONTRIBUTING.md CHANGELOG.md)
  if(EXISTS "${ROOT}/${f}")
    list(APPEND documents ${f})
  endif()
endforeach()

# The test cases that exist, as "suite/case": a case belongs to the suite declared last above it
# in its file (the test files declare their suites one after the other, never nested).
file(GLOB_RECURSE test_sources "${ROOT}/test/*.cpp")
set(declared "")
foreach(src IN LISTS test_sources)
  file(STRINGS "${src}" lines REGEX "BOOST_[A-Z_]*TEST_(CASE|SUITE)\\(")
  set(suite "")
  foreach(l IN LISTS lines)
    if(l MATCHES "TEST_SUITE\\(([A-Za-z0-9_]+)")
      set(suite "${CMAKE_MATCH_1}")
    elseif(l MATCHES "TEST_CASE\\(([A-Za-z0-9_]+)")
      list(APPEND declared "${suite}/${CMAKE_MATCH_1}")
    endif()
  endforeach()
endforeach()

set(all_text "")
foreach(doc IN LISTS documents)
  file(READ "${ROOT}/${doc}" text)
  string(APPEND all_text "${text}\n")
  get_filename_component(dir "${ROOT}/${doc}" DIRECTORY)

  # Links: [text](target), relative ones only. "](" is swapped for a marker first: a lone "]"
  # would upset CMake's lists.
  string(REPLACE "](" "@LINK@(" marked "${text}")
  string(REGEX MATCHALL "@LINK@\\([^) \n]+\\)" links "${marked}")
  foreach(link IN LISTS links)
    string(REGEX REPLACE "^@LINK@\\((.*)\\)$" "\\1" target "${link}")
    if(target MATCHES "^[a-z+]+:")  # https:, mailto:, redis:...
      continue()
    endif()
    set(anchor "")
    if(target MATCHES "^([^#]*)#(.*)$")
      set(target "${CMAKE_MATCH_1}")
      set(anchor "${CMAKE_MATCH_2}")
    endif()
    if(target STREQUAL "")
      set(path "${ROOT}/${doc}")
    else()
      set(path "${dir}/${target}")
    endif()
    if(NOT EXISTS "${path}")
      problem("${doc}: link to ${target}, which does not exist")
    elseif(NOT anchor STREQUAL "" AND path MATCHES "\\.md$")
      anchors_of("${path}" anchors)
      if(NOT anchor IN_LIST anchors)
        problem("${doc}: link to ${target}#${anchor}, a heading that does not exist")
      endif()
    endif()
  endforeach()

  # Paths into the tree, quoted or not; not those inside a longer path or a URL. Brackets go
  # first, for the same reason.
  string(REGEX REPLACE "[][]" " " unbracketed "${text}")
  string(REGEX MATCHALL
    "[^A-Za-z0-9_./-](include|src|test|tools|examples|benchmarks|scripts|fuzz|cmake|docs|\\.ci)/[A-Za-z0-9_./-]*"
    paths " ${unbracketed}")
  foreach(p IN LISTS paths)
    string(SUBSTRING "${p}" 1 -1 p)
    string(REGEX REPLACE "[.]+$" "" p "${p}")  # a sentence's full stop
    if(NOT EXISTS "${ROOT}/${p}")
      problem("${doc}: mentions ${p}, which does not exist")
    endif()
  endforeach()

  # Tests cited as `suite/case` (docs/ only: the README's backticks hold other slashes).
  if(doc MATCHES "^docs/")
    string(REGEX MATCHALL "`[a-z0-9_]+/[a-z0-9_]+`" cited "${text}")
    foreach(c IN LISTS cited)
      string(REGEX REPLACE "^`(.*)`$" "\\1" c "${c}")
      if(NOT c IN_LIST declared)
        problem("${doc}: cites the test ${c}, which test/ does not declare")
      endif()
    endforeach()
  endif()
endforeach()

# Every error enumerator is explained somewhere a caller reads.
file(READ "${ROOT}/include/locksmith/error.hpp" error_hpp)
string(REGEX MATCH "enum class error {[^}]*}" body "${error_hpp}")
string(REGEX MATCHALL "\n   [a-z_]+( = [0-9]+)?," enumerators "${body}")
if(enumerators STREQUAL "")
  problem("include/locksmith/error.hpp: no enumerator of locksmith::error found")
endif()
set(user_text "")
foreach(doc IN LISTS documents)
  if(doc STREQUAL "README.md" OR doc MATCHES "^docs/")
    file(READ "${ROOT}/${doc}" text)
    string(APPEND user_text " ${text} ")
  endif()
endforeach()
foreach(e IN LISTS enumerators)
  string(REGEX REPLACE "^\n   ([a-z_]+).*$" "\\1" e "${e}")
  if(NOT user_text MATCHES "[^A-Za-z0-9_]${e}[^A-Za-z0-9_]")
    problem("error::${e} is named nowhere in README.md or docs/*.md")
  endif()
endforeach()

list(LENGTH documents n)
if(NOT problems STREQUAL "")
  message(FATAL_ERROR "stale references in the documentation:\n${problems}")
endif()
message(STATUS "docs: ${n} documents, their links, paths, cited tests and the error names agree")
