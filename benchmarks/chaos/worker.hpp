// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The worker side of locksmith-chaos: what the harness and its forked worker processes share, and
// one worker process (its own client, C coroutines taking locks and using the resource).
#ifndef LOCKSMITH_CHAOS_WORKER_HPP
#define LOCKSMITH_CHAOS_WORKER_HPP

#include <boost/system/error_code.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace locksmith::bench {

struct chaos_options {
   int nodes = 5, processes = 4, coroutines = 8, names = 8;
   int seconds = 60;
   int ttl_ms = 2000, quarantine_ms = 3000, wait_ms = 3000;
   int hold_ms = 1;  // each holder holds for a random time below this
   bool restarts = true, delay = true;
   bool fence = true;                // lock_options::fence (--no-fence: the unfenced lock)
   unsigned wait_replicas = 0;       // config::wait_replicas
   std::string owner;                // lock_options::owner (--owner; empty: no label)
   std::vector<std::string> labels;  // the names to lock; empty: n0 .. n<names-1>
};

constexpr std::size_t max_stamps = 4096;
constexpr std::size_t max_tracked_names = 256;  // names whose grants are timed (the first ones)
constexpr std::size_t error_kinds = 32;         // [v]: locksmith::error v; [0]: any other error
constexpr std::size_t wait_buckets = 60'000;    // an attempt's wait, by the millisecond

// Shared by the harness and its forked workers (an anonymous shared mapping).
struct shared_block {
   std::atomic<bool> stop{false};
   std::atomic<long> cycles{0}, overlaps{0}, stale_writes{0}, leases_lost{0}, hangs{0};
   std::atomic<long> lock_errors{0}, unlock_errors{0}, resource_errors{0};
   std::atomic<long> min_loss_slack_us{1'000'000'000};  // at the loss signal, to valid_until
   std::atomic<long> negative_loss_slack{0};            // losses signalled after valid_until
   std::atomic<std::size_t> overlap_count{0}, restart_count{0};
   std::atomic<std::int64_t> overlap_at[max_stamps];  // steady ns of each overlap
   std::atomic<std::int64_t> restart_at[max_stamps];  // steady ns of each kill -9 + restart

   // What an operation scenario measures (the fault mode fills them in as well).
   std::atomic<long> attempts{0}, grants{0};
   std::atomic<long> lock_error_kind[2][error_kinds];  // [1]: the attempt overlapped an operation
   std::atomic<long> unlock_error_kind[error_kinds];
   std::atomic<long> wait_ms[2][wait_buckets];  // [1]: the attempt overlapped an operation
   std::atomic<std::int64_t> op_epoch{0};       // odd while the harness runs an operation
   std::atomic<std::int64_t> op_mark_ns{0};     // the start of the last operation
   std::atomic<std::int64_t> last_grant_ns[max_tracked_names];
   std::atomic<std::int64_t>
      first_grant_after_mark_ns[max_tracked_names];  // < op_mark_ns: none yet
   std::atomic<std::int64_t> max_gap_ns{0};  // the longest a wanted name went without a grant
};

/// The slot of error_kinds that counts `ec`.
std::size_t error_kind_index(boost::system::error_code const& ec);

/// The name of error_kinds slot `i`, for the report: the locksmith::error enumerator, or "other".
std::string error_kind_name(std::size_t i);

/// An operation begins (it sets op_mark_ns): the attempts that overlap it count as waits during
/// an operation, and the first grant of each name after it is recorded.
void begin_operation(shared_block& shm);
void end_operation(shared_block& shm);

inline std::int64_t now_ns()
{
   return std::chrono::steady_clock::now().time_since_epoch().count();
}

// One worker process: a client on `nodes`, the resource at `resource_url`, C coroutines taking
// locks until `shm.stop`. Returns the process's exit status.
int run_worker_process(chaos_options const& o, std::vector<std::string> const& nodes,
                       std::string const& resource_url, shared_block& shm, int index);

}  // namespace locksmith::bench

#endif
