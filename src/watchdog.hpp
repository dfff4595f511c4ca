// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The watchdog: renews a held lease before it expires, and declares it lost, from this process's
// own steady clock, before its validity runs out. A frozen or partitioned Redis cannot answer, so
// the loss never waits for one. Its schedule is a pure function (detail/watchdog_schedule.hpp).
#ifndef LOCKSMITH_SRC_WATCHDOG_HPP
#define LOCKSMITH_SRC_WATCHDOG_HPP

#include "lease_state.hpp"

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <memory>

namespace locksmith::detail {

/// Renews the lease every ttl/3 until it ends; retries a failed renewal quickly; declares the
/// lease lost when its validity (minus one node timeout and the loss margin) runs out first,
/// when the key is found taken or gone, or when `max_hold` is reached. Holds the core only
/// weakly: renewal ends with the client.
boost::asio::awaitable<void> watch(std::weak_ptr<client_core> core, std::shared_ptr<lease_state> st,
                                   std::chrono::milliseconds max_hold,
                                   std::chrono::milliseconds loss_margin);

/// For a lease that is not renewed: frees the name in this process once the lease expires
/// (later if it is extended meanwhile), so that local waiters may go on to Redis.
boost::asio::awaitable<void> expire(std::shared_ptr<lease_state> st);

}  // namespace locksmith::detail

#endif
