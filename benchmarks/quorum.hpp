// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The RedLock scenario: N redis-servers of the harness's own, K of them frozen (SIGSTOP) while
// one worker takes and releases one lock in a loop.
#ifndef LOCKSMITH_BENCH_QUORUM_HPP
#define LOCKSMITH_BENCH_QUORUM_HPP

#include "run_spec.hpp"

#include <string>
#include <vector>

namespace locksmith::bench {

/// What `--scenario quorum` runs.
struct quorum_plan {
   run_spec base;                  // durations, renew, node timeout, prefix stem
   int nodes = 5;                  // redis-servers to start
   std::vector<int> frozen;        // K of each run, in turn
   std::vector<std::string> urls;  // --redis nodes instead of our own (then nothing can freeze)
   bool json = false;
};

/// The most that the cycle p99 with frozen nodes may exceed the healthy one by: the target.
inline constexpr double quorum_p99_allowance_us = 2000;

/// Starts the servers (unless urls are given), runs each K in turn, and prints one row or JSON
/// line per run. Returns false when a sanity check failed: a failure (or any acquisition) while
/// a quorum was reachable (or not), or an overlap. Throws std::runtime_error when it cannot start.
bool run_quorum(quorum_plan const& plan);

}  // namespace locksmith::bench

#endif
