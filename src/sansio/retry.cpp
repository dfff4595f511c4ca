// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "sansio/retry.hpp"

namespace locksmith::detail {

next_step next_after(attempt_facts const& f) noexcept
{
   bool const lasting = f.lost == error::unexpected_reply || f.lost == error::auth_failed ||
                        f.lost == error::tls_failed || f.lost == error::invalid_argument;
   if (lasting || f.no_wait || f.out_of_time)
      return next_step::give_up;
   bool const taken = f.lost == error::lock_taken;
   if (taken && f.split_vote)
      return next_step::draw_lots;
   if (!taken || !f.by_message)
      return next_step::sleep_spin;
   // Only a confirmed subscription is sure to bring the holder's release.
   if (!f.subscription_confirmed)
      return next_step::await_subscription;
   if (f.event_since_attempt)
      return next_step::retry_now;
   return next_step::sleep_until_release;
}

bool releases_quietly(attempt_facts const& f, next_step step) noexcept
{
   return f.lost == error::lock_taken && (step == next_step::draw_lots || f.others_hold_quorum);
}

error_code final_error(attempt_facts const& f) noexcept
{
   if (f.lost == error::lock_taken && !f.no_wait)
      return error::wait_timeout;
   return f.lost;
}

}  // namespace locksmith::detail
