// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// What one benchmark run does, the memory its processes share, and what each process reports.
#ifndef LOCKSMITH_BENCH_RUN_SPEC_HPP
#define LOCKSMITH_BENCH_RUN_SPEC_HPP

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace locksmith::bench {

using namespace std::chrono_literals;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;

enum class scenario {
   uncontended,
   independent,
   contended,
   handoff,
   quorum,     // RedLock over nodes of which the last `frozen` are paused (SIGSTOP) while measuring
   semaphore,  // every worker takes one of `permits` permits of one name
   rwlock,     // one worker in `write_every` takes one name's write side, the others its read side
   reentrant   // every worker takes one name for its own owner id, and takes it again inside
};
enum class strategy { raw, spin, subscribe };

std::string_view name_of(scenario s);
std::string_view name_of(strategy s);

/// One (scenario, strategy, hold) run.
struct run_spec {
   scenario sc = scenario::uncontended;
   strategy st = strategy::subscribe;
   int workers = 1;
   int processes = 1;
   milliseconds hold{0};
   milliseconds think{100};  // handoff: the most a worker pauses after its release
   milliseconds settle{5};   // handoff: how long a waiter must have waited before a release
   milliseconds warmup{300};
   milliseconds duration{3000};
   milliseconds spin_interval{100};
   milliseconds spin_jitter{100};
   bool renew = true;               // lock_options::renew (the watchdog)
   bool fair = false;               // lock_options::fair (the lock scenarios only)
   bool fence = true;               // lock_options::fence (the lock scenarios only)
   std::string owner;               // lock_options::owner (empty: no label)
   bool checked_floor = false;      // raw: release by a token-checked script, not DEL
   milliseconds node_timeout{50};   // config::node_timeout
   int frozen = 0;                  // quorum: how many of the nodes (the last ones) are paused
   std::size_t permits = 3;         // semaphore: holders at once
   int write_every = 4;             // rwlock: workers 0, write_every, 2 × write_every... write
   std::vector<std::string> nodes;  // Redis URLs
   std::string prefix;              // key prefix, unique to the run
};

/// The number of workers a run may have (the shared block has one slot per worker).
inline constexpr int max_workers = 4096;

enum class phase : int { warmup, measure, stop };

/// Anonymous MAP_SHARED memory, mapped before fork, so that the workers of every process see it.
/// Times are steady_clock (CLOCK_MONOTONIC) nanoseconds, which agree across processes.
struct shared_block {
   std::atomic<int> ph{0};       // a phase
   std::atomic<int> started{0};  // processes whose workers are running
   std::atomic<std::int64_t> overlaps{0};

   /// One per lock key (the independent scenario has one key per worker).
   struct key_state {
      std::atomic<int> holder{0};             // worker index + 1, or 0 when free
      std::atomic<std::int64_t> taken{0};     // acquisitions so far, measured or not
      std::atomic<std::int64_t> released{0};  // releases so far
      std::atomic<int> released_by{0};
      std::atomic<std::int64_t> released_at{0};
      std::atomic<int> holders{0};  // semaphore: permits held; rwlock: readers
      std::atomic<int> writers{0};  // rwlock
   };
   std::atomic<int> most_holders{0};  // semaphore and rwlock: the most holders of a key at once
   key_state keys[max_workers];

   /// Since when each worker has been waiting in async_lock (0: it is not).
   std::atomic<std::int64_t> waiting_since[max_workers];
};
static_assert(std::atomic<std::int64_t>::is_always_lock_free,
              "shared_block needs lock-free atomics");

/// Maps a zeroed shared_block that stays shared across fork(); throws std::system_error.
shared_block* map_shared_block();
void unmap_shared_block(shared_block* b) noexcept;

inline std::int64_t now_ns() noexcept
{
   return std::chrono::duration_cast<nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// What one worker process measured during the measure phase.
struct process_result {
   std::vector<std::int64_t> per_worker;      // acquisitions of each of its workers
   std::vector<std::int64_t> cycle_ns;        // async_lock start to async_unlock end
   std::vector<std::int64_t> handoff_ns;      // release by another worker to acquisition
   std::vector<std::int64_t> acquire_ns;      // quorum: async_lock start to its success
   std::vector<std::int64_t> unreachable_ns;  // quorum: attempts that ended, as expected, in
                                              // quorum_unreachable (start to end)
   std::int64_t failures = 0;                 // lock and unlock errors
   double cpu_ms = 0;                         // the process's user + system CPU while measuring
   std::int64_t tries = -1;  // the library's acquire tries while measuring (-1: not counted, raw)
   std::int64_t retries_lost = -1;  // of them, tries after a lock call's first that lost
   std::string first_error;         // the first failure, to say why
};

/// Writes and reads a process_result on a pipe (binary, same executable on both ends).
bool write_result(int fd, process_result const& r);
bool read_result(int fd, process_result& r);

}  // namespace locksmith::bench

#endif
