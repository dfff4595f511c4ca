// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The threads scenario: the two ways to use cores, in this process. One client shared by an
// io_context that N threads run (the caller coroutines each on a strand of their own, as a
// thread-pool gateway's connections), against one client per thread (an io_context per thread),
// beside the raw floor (SET NX PX + DEL, a connection per thread); and the cost of a call that
// starts on another thread than the client's, on one caller's uncontended cycle.
#ifndef LOCKSMITH_BENCH_THREADS_HPP
#define LOCKSMITH_BENCH_THREADS_HPP

#include <chrono>
#include <string>
#include <vector>

namespace locksmith::bench {

/// What `--scenario threads` runs.
struct threads_plan {
   std::vector<int> threads{1, 2};  // a run of each way per thread count
   int workers = 32;                // caller coroutines in all, each on a name of its own
   std::chrono::milliseconds duration{3000};
   std::chrono::milliseconds warmup{300};
   int rounds = 3;  // the cross-thread cycle: rounds of each placement, interleaved
   bool json = false;
};

/// Prints one row or JSON line per (way, threads), then per caller placement. Returns false when
/// a run failed an operation or acquired nothing.
bool run_threads(threads_plan const& plan, std::string const& url);

}  // namespace locksmith::bench

#endif
