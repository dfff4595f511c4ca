// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#ifndef LOCKSMITH_LOGGER_HPP
#define LOCKSMITH_LOGGER_HPP

#include <functional>
#include <string_view>

namespace locksmith {

/// How much a log line matters.
enum class log_level {
   debug,    ///< a fault already reported, again (a node still failing), a Cluster redirection
   info,     ///< a connection made, a node that answers again, a script sent whole after NOSCRIPT
   warning,  ///< a fault that was tolerated: a node failed but the quorum held, a renewal retried
   error,    ///< a fault that the caller will feel: a lease lost
};

/// The level's name, in lower case ("debug", "info", "warning", "error").
constexpr std::string_view to_string(log_level l) noexcept
{
   constexpr std::string_view names[] = {"debug", "info", "warning", "error"};
   auto const i = static_cast<unsigned>(l);
   return i < 4 ? names[i] : "unknown";
}

/// Receives the client's log lines (see config::logger). Called on the client's executor, from
/// inside the client's own handlers: it must return quickly and must not throw (an exception is
/// swallowed), nor call back into the client. The line has no trailing newline, names a node by
/// its URL without its password, and is only valid during the call.
using log_function = std::function<void(log_level, std::string_view)>;

}  // namespace locksmith

#endif
