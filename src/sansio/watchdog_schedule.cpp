// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "sansio/watchdog_schedule.hpp"

#include <algorithm>

namespace locksmith::detail {
using clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

clock::time_point loss_deadline(renewal_facts const& f) noexcept
{
   return f.valid_until - f.node_timeout - f.loss_margin;
}

clock::time_point last_renewal_start(renewal_facts const& f) noexcept
{
   return loss_deadline(f) - f.node_timeout;
}

milliseconds renewal_retry_interval(milliseconds ttl) noexcept
{
   return std::clamp(ttl / 30, milliseconds{5}, milliseconds{100});
}

clock::time_point next_wake(renewal_facts const& f, clock::time_point now) noexcept
{
   auto const lost_at = loss_deadline(f);
   auto const renew_at = f.failing ? now + renewal_retry_interval(f.ttl) : f.renewed_at + f.ttl / 3;
   auto const wake = renew_at > last_renewal_start(f) ? lost_at : renew_at;
   return std::min({wake, f.cap, lost_at});
}

renewal_step on_wake(renewal_facts const& f, clock::time_point now) noexcept
{
   if (now >= f.cap || now >= loss_deadline(f))
      return renewal_step::lose;
   if (now > last_renewal_start(f))
      return renewal_step::sleep;
   return renewal_step::renew;
}

}  // namespace locksmith::detail
