// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
/// @file
/// The semaphore: `client::async_acquire_permit(name, permits, opts)` takes one of the `permits`
/// permits of the name. At most `permits` leases on the name are held at once, across every
/// process; a caller waits up to `opts.wait` for a holder to give one back (zero: one attempt, as
/// async_try_lock).
///
/// Each permit is a @ref locksmith::lease of its own: its own token, fencing token (one sequence
/// per name, shared by all permits), TTL, renewal by the watchdog, loss detection (`lease::lost`,
/// `async_wait_lost`), and `client::async_unlock` and `client::async_extend` as for a lock. A
/// holder that crashes gives its permit back when its TTL runs out: each node keeps the holders
/// as a sorted set of token → expiry on the server's clock, and drops the expired ones at each
/// attempt. A waiter sleeps until a release message, or until the first holder's expiry.
///
/// Every caller must pass the same `permits` for a name: each node admits a new holder while
/// fewer than the `permits` given by that caller hold it. The name's key is a sorted set: a name
/// used as a lock or a read-write lock fails with error::unexpected_reply (WRONGTYPE).
///
/// With N nodes, a permit needs more than N × permits / (permits + 1) nodes to grant it
/// (detail::permit_quorum), not a majority: otherwise permits + 1 holders could each hold a
/// majority. With 5 nodes, 1 permit needs 3 nodes, 2 or 3 permits need 4, and 4 or more need all
/// 5 (no node may fail). One node is the single-instance semaphore.
///
/// Coroutines of one process that ask for the same name contend one at a time (FIFO); a holder
/// lets the next one contend at once.
#ifndef LOCKSMITH_SEMAPHORE_HPP
#define LOCKSMITH_SEMAPHORE_HPP

#include <locksmith/client.hpp>

#endif
