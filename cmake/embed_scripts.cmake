# Embeds the Lua scripts of src/scripts/ in the library: run at build time (cmake -P) by the rule
# in the top-level CMakeLists.txt whenever a script changes.
#
#   cmake -DSCRIPTS_DIR=<src/scripts> -DOUT_DIR=<dir> -P embed_scripts.cmake
#
# Writes OUT_DIR/embedded_scripts.hpp, one `lua::<name>` per <name>.lua: the text, its SHA-1 (the
# name Redis gives it, for EVALSHA), and its sharded twin for a Redis Cluster, made here by
# turning every `redis.call('PUBLISH', ` into `redis.call('SPUBLISH', ` (sharded pub/sub, Redis 7:
# a release reaches the subscribers at the master of its channel's slot only, where PUBLISH would
# cross the cluster bus to every node). Every text that is embedded is also written whole under
# OUT_DIR/scripts/ (the twins under scripts/sharded/), so that any of them can be read or pasted
# into redis-cli as the server gets it.
cmake_minimum_required(VERSION 3.25)

file(GLOB scripts LIST_DIRECTORIES false RELATIVE ${SCRIPTS_DIR} ${SCRIPTS_DIR}/*.lua)
list(SORT scripts)
if(NOT scripts)
  message(FATAL_ERROR "embed_scripts: no .lua file in ${SCRIPTS_DIR}")
endif()
file(REMOVE_RECURSE ${OUT_DIR}/scripts)

set(header [[// Generated at build time from src/scripts/*.lua by cmake/embed_scripts.cmake: do not edit.
#pragma once

#include <string_view>

namespace locksmith::detail::lua {

/// A script as it is embedded: its text and SHA-1, and its sharded twin (SPUBLISH for PUBLISH)
/// with its own SHA-1, both empty when the script publishes nothing.
struct embedded_script {
   std::string_view text;
   std::string_view sha1;
   std::string_view sharded_text;
   std::string_view sharded_sha1;
};
]])

foreach(file ${scripts})
  string(REGEX REPLACE "\\.lua$" "" name ${file})
  if(NOT name MATCHES "^[a-z][a-z0-9_]*$")
    message(FATAL_ERROR "embed_scripts: ${file}: a script's name must be a C++ identifier")
  endif()
  file(READ ${SCRIPTS_DIR}/${file} text)
  if(text MATCHES "\\)lua\"" OR text MATCHES "\r")
    message(FATAL_ERROR "embed_scripts: ${file} holds ')lua\"' or a carriage return")
  endif()
  string(REPLACE "redis.call('PUBLISH', " "redis.call('SPUBLISH', " sharded "${text}")
  string(SHA1 sha1 "${text}")
  file(WRITE ${OUT_DIR}/scripts/${file} "${text}")
  if(sharded STREQUAL text)
    set(sharded "")
    set(sharded_sha1 "")
  else()
    string(SHA1 sharded_sha1 "${sharded}")
    file(WRITE ${OUT_DIR}/scripts/sharded/${file} "${sharded}")
  endif()
  string(APPEND header "
/// src/scripts/${file}
inline constexpr embedded_script ${name}{R\"lua(${text})lua\", \"${sha1}\",
                                         R\"lua(${sharded})lua\", \"${sharded_sha1}\"};
")
endforeach()

string(APPEND header "
}  // namespace locksmith::detail::lua
")
file(WRITE ${OUT_DIR}/embedded_scripts.hpp.new "${header}")
# Unchanged output keeps its timestamp, so that what includes it is not rebuilt for nothing.
file(COPY_FILE ${OUT_DIR}/embedded_scripts.hpp.new ${OUT_DIR}/embedded_scripts.hpp
     ONLY_IF_DIFFERENT)
file(REMOVE ${OUT_DIR}/embedded_scripts.hpp.new)
