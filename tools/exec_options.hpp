// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The command line of `locksmith exec`: its options, its help text and exit codes, and their
// translation into the library's config and lock options.
#ifndef LOCKSMITH_TOOLS_EXEC_OPTIONS_HPP
#define LOCKSMITH_TOOLS_EXEC_OPTIONS_HPP

#include "status.hpp"

#include <locksmith/config.hpp>
#include <locksmith/detail/lease_kind.hpp>
#include <locksmith/lock_options.hpp>

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace locksmith::cli {

// Exit codes, from sysexits.h and the shell.
inline constexpr int ex_usage = 64;
inline constexpr int ex_unavailable = 69;
inline constexpr int ex_software = 70;
inline constexpr int ex_tempfail = 75;
// 76 is EX_PROTOCOL in sysexits.h; this tool gives it one meaning only: the lease was lost while
// CMD ran, and CMD was stopped. It wins over whatever CMD exited with.
inline constexpr int ex_lease_lost = 76;
inline constexpr int ex_noperm = 77;
inline constexpr int ex_cannot_execute = 126;
inline constexpr int ex_not_found = 127;

/// A usage error: reported on one line, exit 64.
struct usage_error : std::runtime_error {
   using std::runtime_error::runtime_error;
};

/// The options of `locksmith exec`, as written on the command line.
struct exec_args {
   std::vector<std::string> nodes;
   std::string key;
   std::string ttl = "30s";
   std::string wait = "10s";
   std::string node_timeout = "50ms";
   std::string strategy = "subscribe";
   std::optional<std::string> grace;  // empty: default_grace()
   std::string max_hold;              // empty: no cap
   std::optional<std::string> owner;  // lock_options::owner; empty: default_owner()
   std::string tls_ca;                // empty: the system's trust store
   std::string tls_cert;              // empty: no client certificate
   std::string tls_key;
   unsigned wait_replicas = 0;  // config::wait_replicas
   std::size_t permits = 0;     // 0: not a semaphore
   bool shared = false;         // the read side of a read-write lock
   bool exclusive = false;      // the write side of a read-write lock: a plain exec's anyway
   bool fair = false;           // a fair lock (lock_options::fair)
   std::vector<std::string> command;
};

/// What the options mean, checked.
struct exec_settings {
   locksmith::config cfg;
   locksmith::lock_options opts;
   detail::lease_kind kind;            // the lock, a permit, or a side of a read-write lock
   std::chrono::milliseconds grace{};  // SIGTERM to SIGKILL once the lease is lost
};

/// Parses the command line into `a` (exec) or `st` (status, which sets `status`). Returns an
/// exit code when there is nothing to run (help, usage error), having printed what to print.
std::optional<int> parse_command_line(int argc, char** argv, exec_args& a, status_args& st,
                                      bool& status);

/// The options --tls-ca, --tls-cert and --tls-key of a subcommand.
void add_tls_options(CLI::App& cmd, std::string& ca, std::string& cert, std::string& key);

/// What a --redis URL may look like, for the message about a malformed one.
inline constexpr char const* url_forms =
   "redis://[user[:password]@]host[:port][/db], rediss://... or "
   "redis+sentinel://[user[:password]@]host[:port][,host[:port]]/master[/db] or "
   "redis+cluster://[user[:password]@]host[:port][,host[:port]] "
   "(rediss+sentinel:// and rediss+cluster:// are not supported)";

/// The holder label when --owner is not given: `<hostname>:<pid>` of this process, the one
/// that holds the lock while CMD runs.
std::string default_owner();

/// Checks the options and turns them into settings, or throws usage_error.
exec_settings to_settings(exec_args& a);

/// Warns on stderr about valid but risky settings; once they are known to be valid.
void print_warnings(exec_args const& a, exec_settings const& s);

}  // namespace locksmith::cli

#endif
