// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#ifndef LOCKSMITH_RW_LOCK_HPP
#define LOCKSMITH_RW_LOCK_HPP

#include <locksmith/client.hpp>
#include <locksmith/detail/acquire_kind.hpp>

#include <boost/asio/deferred.hpp>

#include <string_view>

namespace locksmith {

/// Takes the read-write lock `name` shared (a reader): any number of readers hold it together,
/// never together with a writer. A reader does not enter while a writer holds the lock or waits
/// for it (writer preference): a steady stream of readers cannot starve a writer.
///
/// The lease is a lease like a lock's: token, fencing token (one sequence per name, shared by
/// readers and writers), TTL, renewal by the watchdog, loss detection, and
/// `client::async_unlock` and `client::async_extend`. Readers are kept on each node as a sorted
/// set of token → expiry on the server's clock (`prefix{name}:readers`); a crashed reader's
/// entry is dropped once its TTL has passed. A reader waits until the writer's release message,
/// or until the writer's key or the writer-waiting mark expires.
///
/// Signature: `void(error_code, lease)`. Errors as `client::async_lock` (lock_taken or
/// wait_timeout while a writer holds or waits). `opts.wait` zero makes one attempt.
/// Coroutines of one process that ask for the same name contend one at a time (FIFO), readers and
/// writers alike; a reader that got the lock lets the next one contend at once.
/// Cancellation: as `client::async_lock`.
template <boost::asio::completion_token_for<void(error_code, lease)> CompletionToken =
             boost::asio::deferred_t>
auto async_read_lock(client& c, std::string_view name, lock_options const& opts = {},
                     CompletionToken&& token = {})
{
   return detail::initiate_acquire(c, token, {detail::lease_kind::of::read}, name, opts, nullptr);
}

/// As above; `diag` receives how each node answered in the last attempt.
template <boost::asio::completion_token_for<void(error_code, lease)> CompletionToken =
             boost::asio::deferred_t>
auto async_read_lock(client& c, std::string_view name, lock_options const& opts, report& diag,
                     CompletionToken&& token = {})
{
   return detail::initiate_acquire(c, token, {detail::lease_kind::of::read}, name, opts, &diag);
}

/// Takes the read-write lock `name` exclusive (the writer): no reader and no other writer holds
/// it meanwhile. A writer that finds readers marks the name as writer-waiting
/// (`prefix{name}:writer_waiting`, 1 s), which keeps new readers out, and tries again at least
/// every 250 ms while it waits, which keeps the mark set, and at once when the last reader
/// leaves. A writer that dies or gives up while it waits keeps new readers out for at most 1 s.
///
/// The writer holds the name's lock key, as `client::async_lock` does, and is renewed and
/// released as a lock; a plain `async_lock` of the name, however, does not look at readers: use
/// this operation for every writer of a read-write lock. Readers and writers take the majority
/// of the nodes.
///
/// Signature, errors and cancellation: as `client::async_lock`.
template <boost::asio::completion_token_for<void(error_code, lease)> CompletionToken =
             boost::asio::deferred_t>
auto async_write_lock(client& c, std::string_view name, lock_options const& opts = {},
                      CompletionToken&& token = {})
{
   return detail::initiate_acquire(c, token, {detail::lease_kind::of::write}, name, opts, nullptr);
}

/// As above; `diag` receives how each node answered in the last attempt.
template <boost::asio::completion_token_for<void(error_code, lease)> CompletionToken =
             boost::asio::deferred_t>
auto async_write_lock(client& c, std::string_view name, lock_options const& opts, report& diag,
                      CompletionToken&& token = {})
{
   return detail::initiate_acquire(c, token, {detail::lease_kind::of::write}, name, opts, &diag);
}

}  // namespace locksmith

#endif
