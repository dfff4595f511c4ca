// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// One run: fork the worker processes, warm up, measure, stop, and gather what they measured.
#ifndef LOCKSMITH_BENCH_RUNNER_HPP
#define LOCKSMITH_BENCH_RUNNER_HPP

#include "run_spec.hpp"

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace locksmith::bench {

/// What a run measured, all processes together.
struct run_result {
   run_spec spec;
   double seconds = 0;  // length of the measure phase
   std::vector<std::int64_t> per_worker;
   std::vector<std::int64_t> per_process;     // acquisitions of each process
   double client_cpu_ms = 0;                  // of the worker processes, while measuring
   std::optional<std::int64_t> tries;         // the library's acquire tries, while measuring
   std::optional<std::int64_t> retries_lost;  // of them, after a lock call's first, that lost
   std::vector<std::int64_t> cycle_ns;
   std::vector<std::int64_t> handoff_ns;
   std::vector<std::int64_t> acquire_ns;      // quorum
   std::vector<std::int64_t> unreachable_ns;  // quorum
   std::int64_t failures = 0;
   std::string first_error;
   std::int64_t overlaps = 0;
   int most_holders = 0;  // semaphore and rwlock: the most holders of the key at once
   std::optional<std::int64_t> commands;  // INFO commandstats delta, without INFO itself, of the
                                          // nodes not frozen
   std::optional<std::int64_t> requests;  // the same without the commands that scripts ran
   std::optional<double> server_cpu_ms;   // when the harness runs the server

   std::int64_t acquisitions() const;
   /// No overlap, no failure, and at least one acquisition.
   bool sane() const { return overlaps == 0 && failures == 0 && acquisitions() > 0; }
};

/// Called about every 100 ms while measuring, with the seconds elapsed.
using progress_fn = std::function<void(double elapsed_s)>;

/// Called once the processes have started, before the warm-up (the quorum scenario freezes its
/// nodes there).
using start_fn = std::function<void()>;

/// Runs `spec` in spec.processes forked processes. `server` is the pid of the redis-server the
/// harness started, if any, for its CPU time. A process that crashes or hangs counts as a failure.
run_result run_once(run_spec const& spec, std::optional<pid_t> server, progress_fn const& progress,
                    start_fn const& on_start = {});

}  // namespace locksmith::bench

#endif
