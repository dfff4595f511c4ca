// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "watchdog.hpp"

#include "client_core.hpp"

#include <locksmith/detail/watchdog_schedule.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace locksmith::detail {
namespace asio = boost::asio;
using std::chrono::milliseconds;

asio::awaitable<void> expire(std::shared_ptr<lease_state> st)
{
   while (st->st == lease_state::status::held) {
      st->watchdog.expires_at(st->valid_until);
      // The lease's end cancels the sleep; an extension moves valid_until, and we sleep again.
      co_await st->watchdog.async_wait(asio::as_tuple(asio::use_awaitable));
      if (st->st == lease_state::status::held && lease_state::clock::now() >= st->valid_until) {
         st->leave_slot();
         co_return;
      }
   }
}

asio::awaitable<void> watch(std::weak_ptr<client_core> weak, std::shared_ptr<lease_state> st,
                            milliseconds max_hold, milliseconds loss_margin)
{
   using status = lease_state::status;
   using clock = lease_state::clock;
   auto const cap = max_hold.count() > 0 ? st->renewed_at + max_hold : clock::time_point::max();
   bool failing = false;
   // The lease's facts as they are now: an extend moves renewed_at, valid_until and ttl.
   auto facts = [&](milliseconds node_timeout) {
      return renewal_facts{st->renewed_at, st->valid_until, cap,    st->ttl,
                           node_timeout,   loss_margin,     failing};
   };
   while (st->st == status::held) {
      auto core = weak.lock();
      if (!core || core->stopped())
         co_return;  // the client is gone: the key expires by its TTL
      auto const node_timeout = core->settings().node_timeout;
      core.reset();  // not kept alive while sleeping
      st->watchdog.expires_at(next_wake(facts(node_timeout), clock::now()));
      // Sleeps until the next renewal or the deadline; the lease's end cancels the sleep.
      co_await st->watchdog.async_wait(asio::as_tuple(asio::use_awaitable));
      core = weak.lock();
      if (st->st != status::held || !core || core->stopped())
         co_return;
      auto const step = on_wake(facts(node_timeout), clock::now());
      // A lost lease stays in Redis (unless it is gone already) until the holder, having
      // stopped its work, unlocks: released now, it would let the next holder in while that
      // work may still run.
      if (step == renewal_step::lose) {
         st->end(status::lost);
         co_return;
      }
      if (step == renewal_step::sleep)
         continue;
      auto const before = st->valid_until;
      auto const ec = co_await core->extend(st, st->ttl, nullptr);
      core->observer().renewal(*st, ec, before);
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
