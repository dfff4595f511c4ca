// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "engines/lease_state.hpp"

#include "engines/lease_owner.hpp"
#include "engines/telemetry.hpp"
#include "engines/watchdog.hpp"

#include "sansio/token.hpp"

namespace locksmith::detail {

lease_state::lease_state(std::shared_ptr<lease_owner> const& c, std::string n, std::string t,
                         std::uint64_t f, clock::time_point start, clock::time_point until,
                         lock_options const& opts)
    : core{c}
    , name{std::move(n)}
    , token{std::move(t)}
    , fence{f}
    , ttl{opts.ttl}
    , drift{opts.drift}
    , acquired_at{start}
    , renewed_at{start}
    , valid_until{until}
    , ex{c->executor()}
{
   // The label is part of the stored value (token.hpp); the lease's own token is without it.
   if (auto const [bare, owner] = split_owner(token); !owner.empty())
      bare_token = bare;
}

void lease_state::end(status s) noexcept
{
   if (st != status::held)
      return;
   st = s;
   if (dog)
      dog->forget(*this);
   if (lost_event)
      lost_event->cancel();
   if (auto c = core.lock())
      c->observer().lease_ended(*this, s == status::lost);
   if (s != status::released)
      leave_slot();
   ended.store(true, std::memory_order_release);
}

lease_state::~lease_state()
{
   if (dog)
      dog->forget(*this);
}

boost::asio::steady_timer& lease_state::lost_timer()
{
   if (!lost_event)
      lost_event.emplace(ex, clock::time_point::max());
   return *lost_event;
}

void lease_state::leave_slot() noexcept
{
   if (!in_slot)
      return;
   in_slot = false;
   if (auto c = core.lock())
      c->leave_slot(name);
}

}  // namespace locksmith::detail
