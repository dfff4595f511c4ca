// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The watchdog: renews a held lease before it expires, and declares it lost, from this process's
// own steady clock, before its validity runs out. A frozen or partitioned Redis cannot answer, so
// the loss never waits for one.
#include "core.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

namespace locksmith::detail {
namespace asio = boost::asio;
using std::chrono::milliseconds;

namespace {

// A failed renewal is retried this often: quickly, but without hammering a sick node.
milliseconds retry_interval(milliseconds ttl)
{
   return std::clamp(ttl / 30, milliseconds{5}, milliseconds{100});
}

}  // namespace

asio::awaitable<void> client_core::expire(std::shared_ptr<lease_state> st)
{
   while (st->st == lease_state::status::held) {
      st->watchdog.expires_at(st->valid_until);
      // The lease's end cancels the sleep; an extension moves valid_until, and we sleep again.
      co_await st->watchdog.async_wait(asio::as_tuple(asio::use_awaitable));
      if (st->st == lease_state::status::held && clock::now() >= st->valid_until) {
         st->leave_slot();
         co_return;
      }
   }
}

asio::awaitable<void> client_core::watch(
   std::weak_ptr<client_core> weak,
   std::shared_ptr<lease_state> st,
   milliseconds max_hold,
   milliseconds loss_margin)
{
   using status = lease_state::status;
   auto const cap = max_hold.count() > 0 ? st->renewed_at + max_hold : clock::time_point::max();
   bool failing = false;
   while (st->st == status::held) {
      auto core = weak.lock();
      if (!core || core->stopped)
         co_return;  // the client is gone: the key expires by its TTL
      auto const node_timeout = core->cfg.node_timeout;
      core.reset();  // not kept alive while sleeping
      // Lost one node timeout (plus the caller's margin) before the validity ends: a renewal
      // started later could not answer in time, and the holder needs that slack to stop its work.
      auto const lost_at = st->valid_until - node_timeout - loss_margin;
      auto const renew_at = failing ? clock::now() + retry_interval(st->ttl) : st->renewed_at + st->ttl / 3;
      // No renewal starts unless its answer is due before the loss deadline.
      auto const last_start = lost_at - node_timeout;
      auto const wake = renew_at > last_start ? lost_at : renew_at;
      st->watchdog.expires_at(std::min({wake, cap, lost_at}));
      // Sleeps until the next renewal or the deadline; the lease's end cancels the sleep.
      co_await st->watchdog.async_wait(asio::as_tuple(asio::use_awaitable));
      core = weak.lock();
      if (st->st != status::held || !core || core->stopped)
         co_return;
      auto const now = clock::now();
      // A lost lease stays in Redis (unless it is gone already) until the holder, having
      // stopped its work, unlocks: released now, it would let the next holder in while that
      // work may still run.
      if (now >= cap || now >= lost_at) {
         st->end(status::lost);
         co_return;
      }
      if (now > last_start)
         continue;  // too late to renew: sleep until lost_at
      auto const ec = co_await core->extend(st, st->ttl, nullptr);
      if (!ec) {
         failing = false;
      } else if (ec == error::not_owner || ec == error::lease_expired) {
         st->end(status::lost);  // the key is gone or someone else's: no retry can help
         co_return;
      } else {
         failing = true;
      }
   }
}

}  // namespace locksmith::detail
