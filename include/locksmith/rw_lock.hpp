// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
/// @file
/// The read-write lock: `client::async_read_lock` takes a name shared (a reader),
/// `client::async_write_lock` exclusive (the writer).
///
/// Any number of readers hold the name together, never together with a writer. A reader does
/// not enter while a writer holds the lock or waits for it (writer preference): a steady stream of
/// readers cannot starve a writer.
///
/// Each side's lease is a lease like a lock's: token, fencing token (one sequence per name, shared
/// by readers and writers), TTL, renewal by the watchdog, loss detection, and
/// `client::async_unlock` and `client::async_extend`. Readers are kept on each node as a sorted
/// set of token → expiry on the server's clock (`prefix{name}:readers`); a crashed reader's entry
/// is dropped once its TTL has passed. A reader waits until the writer's release message, or
/// until the writer's key or the writer-waiting mark expires.
///
/// A writer that finds readers marks the name as writer-waiting (`prefix{name}:writer_waiting`,
/// 1 s), which keeps new readers out, and tries again at least every 250 ms while it waits, which
/// keeps the mark set, and at once when the last reader leaves. A writer that dies or gives up
/// while it waits keeps new readers out for at most 1 s. The writer holds the name's lock key, as
/// `client::async_lock` does, and is renewed and released as a lock; a plain `async_lock` of the
/// name, however, does not look at readers: use `async_write_lock` for every writer of a
/// read-write lock. Readers and writers take the majority of the nodes.
#ifndef LOCKSMITH_RW_LOCK_HPP
#define LOCKSMITH_RW_LOCK_HPP

#include <locksmith/client.hpp>

#endif
