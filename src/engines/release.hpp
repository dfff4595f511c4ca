// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// Releasing: a lease given back by its holder, and the keys that a lost, cancelled or expired
// attempt may have taken. The client owns every release until each node answered or the key has
// expired by itself (persistence), so nothing is lost when the caller moves on.
#ifndef LOCKSMITH_SRC_RELEASE_HPP
#define LOCKSMITH_SRC_RELEASE_HPP

#include "engines/client_context.hpp"
#include "engines/lease_state.hpp"
#include "engines/local_queue.hpp"
#include "protocol/calls.hpp"
#include "protocol/fanout.hpp"

#include <locksmith/report.hpp>

#include <boost/asio/any_completion_handler.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>

namespace locksmith::detail {

/// The client's nodes that `where` names (by index).
std::vector<std::shared_ptr<node>> nodes_where(client_context const& ctx,
                                               std::vector<bool> const& where);

/// Sends a release of `token` to the nodes that `where` names (by index), in the background: the
/// keys that a lost attempt, a cancelled one, or a won one whose validity ran out may hold, or a
/// waiter's registration. Owned until each node answered or `until` (when the key expires by
/// itself) has passed. `quiet`: the attempt tries again by itself (a split vote's loser), so the
/// release wakes nobody; `rejoin`: its waiter registers where the try took the key
/// (release_call). (A handed-over lease is the lock's kind, the default.)
void release_on(client_context& ctx, std::string const& name, std::string const& token,
                std::vector<bool> const& where, std::chrono::steady_clock::time_point until,
                lease_kind const& kind = {}, bool quiet = false,
                waiter_entry const* rejoin = nullptr);

/// release_on's call, to send later, to one node at a time, by the node's index. It keeps what
/// it needs of the client, not ctx itself, which it may outlive, and sends nothing once the
/// client's work is closed (stop()).
std::function<void(std::size_t)> release_later(client_context const& ctx, std::string const& name,
                                               std::string const& token,
                                               std::chrono::steady_clock::time_point until,
                                               lease_kind const& kind = {}, bool quiet = false,
                                               waiter_entry const* rejoin = nullptr);

/// Gives a held (or lost) lease back: not_held for any other; lease_lost for a lost one, once
/// released; else the release's verdict. Sent, and owned, where the key may be
/// (lease_state::may_hold): the other nodes count as no, unasked. The name passes to the next local
/// waiter only once the release has been answered.
///
/// A callback, not a coroutine: an unlock is on every lock cycle's path, and this way costs no
/// coroutine frame and no reactor turn of its own. `h` completes on its associated executor
/// (else ctx.ex), never inside this call, and holds `keep_alive` until then. The caller keeps
/// ctx alive until then.
/// Cancellation (`h`'s slot, any type): completes with operation_aborted; the release, already
/// sent, goes on, owned by the client. `wakes`: this process's contenders for the name waited
/// by message, so another process's may too (release_call's `wakes`). `on_client`: `h`'s
/// associated executor is ctx.ex (runs_on), so that a completion there calls it at once.
void release_lease(client_context& ctx, std::shared_ptr<lease_state> st, report* diag, bool wakes,
                   boost::asio::any_completion_handler<void(error_code)> h,
                   std::shared_ptr<void const> keep_alive = {}, bool on_client = false);

/// The holder's unlock: hands the lease to the coroutine of this process that waits next for its
/// name (local_queue::pass), which takes its key over in one round trip, instead of a release and a
/// new acquire (two, and a message); else gives it back by release_lease. Only a plain lock's lease
/// still held and valid, while the client runs, and at most local_queue::max_handovers times in a
/// row, is handed over: the other kinds' keys are not the lock's (a permit, a reader), or their
/// scripts do not take a key over (a writer, a reentrant hold).
///
/// `h` completes on its associated executor, never inside this call, and holds `keep_alive` (the
/// client, which owns ctx and queue) until then. Cancellation as release_lease; a handover
/// completes at once. `on_client` as release_lease.
void unlock_lease(client_context& ctx, local_queue& queue, std::shared_ptr<lease_state> st,
                  report* diag, boost::asio::any_completion_handler<void(error_code)> h,
                  std::shared_ptr<void const> keep_alive, bool on_client = false);

}  // namespace locksmith::detail

#endif
