// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// Starting the command that runs under the lock, and waiting for it without blocking the
// io_context thread.
#ifndef LOCKSMITH_TOOLS_CHILD_PROCESS_HPP
#define LOCKSMITH_TOOLS_CHILD_PROCESS_HPP

#include <boost/asio/awaitable.hpp>

#include <sys/types.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace locksmith::cli {

/// Environment variables to set in the child, on top of (and in place of) the inherited ones.
using env_overrides = std::vector<std::pair<std::string, std::string>>;

/// What `spawn_command` gives back: the child's pid, or the errno of the failed start.
struct spawn_result {
   pid_t pid = -1;
   int error = 0;
};

/// The file descriptors open in this process now, or empty if /proc/self/fd cannot be read.
/// Taken at start-up, these are the ones our parent meant the command to inherit.
std::optional<std::vector<int>> open_descriptors();

/// Starts `argv[0]`, searched in PATH as execvp does, with `argv` and the inherited environment
/// plus `env`. The child inherits stdin, stdout, stderr, the descriptors in `inherited` and the
/// signal dispositions (caught signals revert to their default at exec); the descriptors this
/// process opened since (Redis connections) are closed in the child. A command that cannot be
/// executed (not found, not executable) yields its errno, not a pid.
spawn_result spawn_command(std::vector<std::string> const& argv, env_overrides const& env,
                           std::optional<std::vector<int>> const& inherited);

/// Completes when the child `pid` has exited, and reaps it. Returns the waitpid status.
/// Throws boost::system::system_error if the child cannot be waited for.
boost::asio::awaitable<int> async_wait_exit(pid_t pid);

/// The exit code of a shell for a waitpid status: the child's own code, or 128 + the signal
/// that killed it.
int exit_code_of(int wait_status) noexcept;

}  // namespace locksmith::cli

#endif
