// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The renewal scenario: what the watchdog costs. One client in this process, on one io_context
// run by this thread, takes many leases on distinct keys, holds them while the watchdog renews
// them, and releases them all.
#ifndef LOCKSMITH_BENCH_RENEWAL_HPP
#define LOCKSMITH_BENCH_RENEWAL_HPP

#include "run_spec.hpp"

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace locksmith::bench {

/// What `--scenario renewal` runs.
struct renewal_spec {
   std::vector<std::string> nodes;
   std::string prefix;         // key prefix, unique to the run
   int leases = 10'000;        // one key each
   milliseconds ttl{3000};     // the watchdog renews every ttl/3
   milliseconds hold{30'000};  // how long all of them are held
   milliseconds node_timeout{50};
   std::optional<pid_t> server;  // the harness's redis-server, for its CPU time
   bool json = false;
};

/// Runs the scenario in this process, on this thread, and prints its row or JSON line. Returns
/// false when its sanity check failed: a lease lost, a lock or unlock failed, or no renewal.
bool run_renewal(renewal_spec const& spec);

}  // namespace locksmith::bench

#endif
