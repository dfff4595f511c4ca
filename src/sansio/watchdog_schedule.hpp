// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#ifndef LOCKSMITH_DETAIL_WATCHDOG_SCHEDULE_HPP
#define LOCKSMITH_DETAIL_WATCHDOG_SCHEDULE_HPP

#include <chrono>

namespace locksmith::detail {

/// What the watchdog knows of a held lease when it plans.
struct renewal_facts {
   using clock = std::chrono::steady_clock;
   clock::time_point renewed_at;   // start of the last acquire or extend that succeeded
   clock::time_point valid_until;  // the lease's validity
   clock::time_point cap = clock::time_point::max();  // where max_hold ends
   std::chrono::milliseconds ttl{};
   std::chrono::milliseconds node_timeout{};
   std::chrono::milliseconds loss_margin{};
   bool failing = false;  // the last renewal failed
};

/// When the lease is declared lost: one node timeout plus the loss margin before its validity
/// ends. A renewal started later could not answer in time, and the holder needs that slack to
/// stop its work.
std::chrono::steady_clock::time_point loss_deadline(renewal_facts const& f) noexcept;

/// The last moment a renewal may start: its answer is due before the loss deadline.
std::chrono::steady_clock::time_point last_renewal_start(renewal_facts const& f) noexcept;

/// A failed renewal is retried this often: ttl/30, within [5 ms, 100 ms].
std::chrono::milliseconds renewal_retry_interval(std::chrono::milliseconds ttl) noexcept;

/// When the watchdog wakes next, planned at `now`: a third of the TTL after the last renewal
/// (a retry interval from now after a failure), or the loss deadline if that renewal could not
/// start in time; never after the loss deadline or max_hold's end.
std::chrono::steady_clock::time_point next_wake(renewal_facts const& f,
                                                std::chrono::steady_clock::time_point now) noexcept;

/// What the watchdog does when it wakes.
enum class renewal_step {
   lose,   // max_hold reached or the loss deadline passed: the lease is lost
   sleep,  // too late to start a renewal: sleep until the loss deadline
   renew,  // extend the lease now
};
renewal_step on_wake(renewal_facts const& f, std::chrono::steady_clock::time_point now) noexcept;

}  // namespace locksmith::detail

#endif
