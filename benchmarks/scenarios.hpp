// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The workers of one benchmark process: all of them on one io_context, run by one thread.
#ifndef LOCKSMITH_BENCH_SCENARIOS_HPP
#define LOCKSMITH_BENCH_SCENARIOS_HPP

#include "run_spec.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <random>
#include <string>

namespace locksmith::bench {

/// Runs the workers of process `index` (workers index, index + processes, ...) until the shared
/// phase turns to stop, and returns what they measured while it was `measure`. Call it in a
/// forked child.
process_result run_process(run_spec const& spec, shared_block& shm, int index);

/// What the workers of one process share.
struct process_ctx {
   run_spec const& spec;
   shared_block& shm;
   boost::asio::io_context& io;
   process_result result;
   std::mt19937_64 random{std::random_device{}()};
   // The library's acquire tries so far (a client's metrics), when its workers run.
   struct try_counts {
      std::int64_t tries = 0;
      std::int64_t retries_lost = 0;  // of them, after a lock call's first, that lost
   };
   std::function<try_counts()> count_tries{};
};

/// One worker: its global index (its slot in the shared block) and its lock name.
struct worker {
   int id = 0;
   int local = 0;  // index in process_result::per_worker
   std::string name;
   int key_index = 0;
   boost::asio::cancellation_signal cancel;  // ends a pending async_lock at the stop
   bool locking = false;
};

// Steps that the locksmith and the raw workers share.

bool stopping(process_ctx const& c);
bool measuring(process_ctx const& c);

/// Counts a failure, keeping the first one's description.
void fail(process_ctx& c, std::string const& what);

/// Marks the worker as the key's holder in the shared block; a holder already there is an
/// overlap. When `counted`, counts the acquisition and records the handoff from another worker's
/// release, if this worker was already waiting for it (`wait_start`).
void enter_critical(process_ctx& c, worker const& w, std::int64_t wait_start, std::int64_t acquired,
                    bool counted);

/// Clears the holder mark and stamps the release time, before the release is sent.
void leave_critical(process_ctx& c, worker const& w);

boost::asio::awaitable<void> sleep_for(std::chrono::nanoseconds d);

/// handoff: holds the lock until another worker has waited at least spec.settle.
boost::asio::awaitable<void> await_settled_waiter(process_ctx& c, worker const& w);

/// handoff: the pause before asking (again), and while a released lock is on its way to a
/// waiter, until it got there.
boost::asio::awaitable<void> think(process_ctx& c, worker const& w);

/// Runs body(w) for every worker at once, and a watcher that cancels their pending async_lock
/// at the stop; returns when all of them have ended.
boost::asio::awaitable<void>
run_workers(process_ctx& c, std::vector<worker>& workers,
            std::function<boost::asio::awaitable<void>(worker&)> const& body);

/// The raw baseline (SET NX PX + DEL on one Boost.Redis connection; in the handoff scenario,
/// waiting on a channel that the releaser publishes to), in raw.cpp.
boost::asio::awaitable<void> run_raw_workers(process_ctx& c, std::vector<worker>& workers);

}  // namespace locksmith::bench

#endif
