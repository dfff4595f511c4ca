// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// `locksmith status`: what the servers know of a lock (client::async_inspect), printed for an
// operator or, with --json, for a script.
#ifndef LOCKSMITH_TOOLS_STATUS_HPP
#define LOCKSMITH_TOOLS_STATUS_HPP

#include <locksmith/inspection.hpp>

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace locksmith::cli {

/// The options of `locksmith status`, as written on the command line.
struct status_args {
   std::vector<std::string> nodes;
   std::string key;
   std::string node_timeout = "1s";
   std::string tls_ca;
   std::string tls_cert;
   std::string tls_key;
   bool json = false;
};

/// Adds the `status` subcommand to `app`, its options read into `a`.
CLI::App* add_status_command(CLI::App& app, status_args& a);

/// Runs `locksmith status`: prints what the servers know of the key and returns the exit code
/// (0 held by a quorum, 1 free, 64 usage, 69 unavailable, 70 unexpected reply, 77 refused).
int run_status(status_args a);

/// The inspection as one JSON object (one line), as `status --json` prints it.
std::string to_json(inspection const& in);

/// The inspection as text, as `status` prints it.
std::string to_text(inspection const& in);

}  // namespace locksmith::cli

#endif
