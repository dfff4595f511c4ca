// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#ifndef LOCKSMITH_REENTRANT_LOCK_HPP
#define LOCKSMITH_REENTRANT_LOCK_HPP

#include <locksmith/client.hpp>
#include <locksmith/detail/acquire_kind.hpp>

#include <boost/asio/deferred.hpp>

#include <string_view>

namespace locksmith {

/// Takes the lock `name` for `owner`, reentrantly: while `owner` holds it, taking it again for
/// the same `owner` (from this process or another) succeeds at once and adds one hold; the lock
/// is free again when every hold has been released (`client::async_unlock`) or has expired.
/// Anyone else waits, as for `client::async_lock`. The owner is an explicit id that the caller
/// chooses (a request id, a job id), never a thread; without one, use `client::async_lock`,
/// which is never reentrant.
///
/// Each hold is a @ref lease of its own: its own token, fencing token (the name's sequence, as for
/// a lock), TTL, renewal by the watchdog, loss detection, and release. The name's key holds the
/// owner (a 128-bit token derived from `owner`), and `prefix{name}:holds` the holds as a sorted
/// set of token → expiry on the server's clock: a hold whose holder crashed lapses by its TTL,
/// and the key lives as long as its longest hold. So a hold released or lost never frees the
/// lock under the owner's other holds, and a failed attempt's clean-up removes its own hold only.
///
/// The owner id is the whole proof of ownership here: anyone who knows it may take the lock
/// while its owner holds it. A plain `async_lock` of the name does not enter while the owner
/// holds it, but use this operation for every holder of a reentrant name.
///
/// Signature: `void(error_code, lease)`. Errors as `client::async_lock`, and
/// error::invalid_argument for an empty owner. A hold taken again while this process holds the
/// name for the same owner does not queue behind the process's other contenders (they wait for
/// the owner). Cancellation: as `client::async_lock`.
template <boost::asio::completion_token_for<void(error_code, lease)> CompletionToken =
             boost::asio::deferred_t>
auto async_lock_reentrant(client& c, std::string_view name, std::string_view owner,
                          lock_options const& opts = {}, CompletionToken&& token = {})
{
   return detail::initiate_acquire(
      c, token, {detail::lease_kind::of::reentrant, 1, std::string{owner}}, name, opts, nullptr);
}

/// As above; `diag` receives how each node answered in the last attempt.
template <boost::asio::completion_token_for<void(error_code, lease)> CompletionToken =
             boost::asio::deferred_t>
auto async_lock_reentrant(client& c, std::string_view name, std::string_view owner,
                          lock_options const& opts, report& diag, CompletionToken&& token = {})
{
   return detail::initiate_acquire(
      c, token, {detail::lease_kind::of::reentrant, 1, std::string{owner}}, name, opts, &diag);
}

}  // namespace locksmith

#endif
