// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#ifndef LOCKSMITH_METRICS_HPP
#define LOCKSMITH_METRICS_HPP

#include <locksmith/error.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace locksmith {

/// A distribution of durations, in seconds, as Prometheus keeps one: a count per bucket.
struct histogram {
   /// The buckets' upper bounds, in seconds, ascending. A value falls in the first bucket whose
   /// bound is at least the value; values above the last bound fall in one more bucket (+Inf).
   std::vector<double> bounds;
   /// Observations per bucket (not cumulative): bounds.size() + 1 entries, the last one +Inf.
   std::vector<std::uint64_t> counts = std::vector<std::uint64_t>(bounds.size() + 1);
   double sum = 0;           ///< the sum of the observations, in seconds
   std::uint64_t count = 0;  ///< how many observations

   /// Counts one observation.
   void record(double seconds)
   {
      auto const at = std::lower_bound(bounds.begin(), bounds.end(), seconds) - bounds.begin();
      counts.resize(bounds.size() + 1);
      ++counts[static_cast<std::size_t>(at)];
      sum += seconds;
      ++count;
   }
};

/// How often lock operations ended with one error.
struct error_count {
   error_code ec;            ///< the error, in its own category
   std::string name;         ///< its label: the enumerator (`wait_timeout`), `operation_aborted`...
   std::uint64_t count = 0;  ///< how many operations ended with it
};

/// How one node voted in the acquire attempts (see node_vote): `none` counts the attempts that
/// were decided before it answered.
struct node_votes {
   std::string node;  ///< the node's URL, without its password
   /// @{
   std::uint64_t yes = 0, no = 0, failed = 0, none = 0;  ///< attempts in which it voted so
   /// @}
};

/// What ended a waiter's sleep between two acquire attempts.
struct wake_counts {
   std::uint64_t message = 0;    ///< a release message (or a reconnect, which may have hidden one)
   std::uint64_t ttl_timer = 0;  ///< the holder's key was due to expire (its PTTL)
   std::uint64_t spin = 0;       ///< the spin strategy's interval, or no quorum to wait on
   std::uint64_t lots = 0;       ///< the random pause after a split vote
   std::uint64_t subscription = 0;  ///< the release channel's subscription confirmed, or polled
};

/// A client's counters and histograms since it was made (see client::metrics). A plain value.
struct metrics_snapshot {
   std::uint64_t acquisitions = 0;     ///< leases granted (async_lock, async_try_lock)
   std::vector<error_count> failures;  ///< lock operations that granted no lease, by error
   histogram wait;                     ///< from the call to the grant, of the acquisitions
   histogram hold;                     ///< from the grant to the lease's end (unlock, loss or drop)
   histogram renewal_slack;            ///< validity left when a watchdog renewal succeeded
   std::uint64_t renewals = 0;         ///< watchdog renewals that succeeded
   std::uint64_t renewal_failures = 0;  ///< watchdog renewals that failed (retried, or lost)
   std::uint64_t leases_lost = 0;       ///< leases that the watchdog declared lost
   wake_counts wakes;                   ///< what ended the sleeps of waiters
   /// Attempts after a lock call's first that lost: a waiter woken in vain (the herd), or a
   /// spinning one that looked too soon. A call's first attempt that finds the lock held is not
   /// counted: a plain lock lets an arrival barge, so it must try, and that try registers it
   /// among the name's waiters (lost attempts in all: the acquire votes' yes + no + failed +
   /// none on one node, less the acquisitions).
   std::uint64_t retries_lost = 0;
   std::vector<node_votes> votes;  ///< per node, in config order
};

/// The snapshot in Prometheus' text exposition format (version 0.0.4): a `# HELP` and a `# TYPE`
/// line per family, counters named `locksmith_..._total`, histograms as cumulative `_bucket`
/// lines with `le` labels (the last one `+Inf`), `_sum` and `_count`. Serve it as
/// `text/plain; version=0.0.4`. A pure function.
std::string to_prometheus(metrics_snapshot const& m);

}  // namespace locksmith

#endif
