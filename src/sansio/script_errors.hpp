// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#ifndef LOCKSMITH_DETAIL_SCRIPT_ERRORS_HPP
#define LOCKSMITH_DETAIL_SCRIPT_ERRORS_HPP

#include <string_view>

namespace locksmith::detail {

/// The error that a command inside a script met, out of the server's report of the script's
/// failure; any other error text is returned as it is. Redis 6 wraps it as a Lua error:
///
///   ERR Error running script (call to f_<sha1>): @user_script:1: @user_script: 1: -READONLY You
///   can't write against a read only replica.
///
/// and this returns "READONLY You can't write against a read only replica." (trailing blanks
/// dropped); an error reply that a script raises as it is comes without the dash and one location
/// ("...: @user_script:1: WRONGTYPE Operation against..."). A Lua runtime error has no code of its
/// own and is returned whole. Redis 7 and later, and Valkey, reply with the command's own error and
/// append where the script stopped ("READONLY ... script: <sha1>, on @user_script:1."): returned
/// unchanged.
std::string_view unwrap_script_error(std::string_view server_message) noexcept;

/// The code of a server's error, the first word of what unwrap_script_error returns: "READONLY",
/// "NOPERM", "OOM", "BUSY", "ERR"... An ACL refusal inside a script comes as ERR ("ERR The user
/// executing the script can't run this command or subcommand", "... can't access at least one of
/// the keys mentioned in the command arguments", wrapped by Redis 6, not by 7.0; "ERR ACL failure
/// in script: ..." on Redis 8.0): "NOPERM", as a refusal outside a script says. A Lua runtime
/// error stays "ERR".
std::string_view server_error_code(std::string_view server_message) noexcept;

}  // namespace locksmith::detail

#endif
