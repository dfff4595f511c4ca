// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
/// @file
/// The reentrant lock: `client::async_lock_reentrant(name, owner, opts)` takes the lock `name`
/// for `owner`. While `owner` holds it, taking it again for the same `owner` (from this process or
/// another) succeeds at once and adds one hold; the lock is free again when every hold has been
/// released (`client::async_unlock`) or has expired. Anyone else waits, as for
/// `client::async_lock`. The owner is an explicit id that the caller chooses (a request id, a job
/// id), never a thread; without one, use `client::async_lock`, which is never reentrant.
///
/// Each hold is a @ref locksmith::lease of its own: its own token, fencing token (the name's
/// sequence, as for a lock), TTL, renewal by the watchdog, loss detection, and release. The name's
/// key holds the owner (a 128-bit token derived from `owner`), and `prefix{name}:holds` the holds
/// as a sorted set of token → expiry on the server's clock: a hold whose holder crashed lapses by
/// its TTL, and the key lives as long as its longest hold. So a hold released or lost never frees
/// the lock under the owner's other holds, and a failed attempt's clean-up removes its own hold
/// only.
///
/// The owner id is the whole proof of ownership here: anyone who knows it may take the lock while
/// its owner holds it. A plain `async_lock` of the name does not enter while the owner holds it,
/// but use `async_lock_reentrant` for every holder of a reentrant name.
#ifndef LOCKSMITH_REENTRANT_LOCK_HPP
#define LOCKSMITH_REENTRANT_LOCK_HPP

#include <locksmith/client.hpp>

#endif
