// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// locksmith-chaos's command line.
#ifndef LOCKSMITH_CHAOS_OPTIONS_HPP
#define LOCKSMITH_CHAOS_OPTIONS_HPP

#include "operations.hpp"
#include "worker.hpp"

#include <string>
#include <vector>

namespace locksmith::bench {

/// What the command line asks for: the scenarios to run, in order, and their knobs.
struct request {
   std::vector<std::string> scenarios{"faults"};
   chaos_options o;
   ops_options x;
};

/// Parses the command line into `q`. Returns -1 to run, else the exit status (0 after --help,
/// 2 on a bad option, with the reason on stderr).
int parse_options(int argc, char** argv, request& q);

}  // namespace locksmith::bench

#endif
