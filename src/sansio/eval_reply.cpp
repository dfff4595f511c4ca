// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "sansio/eval_reply.hpp"

#include "sansio/cluster.hpp"
#include "sansio/replicas.hpp"
#include "sansio/script_errors.hpp"

#include <boost/asio/error.hpp>
#include <boost/redis/error.hpp>

namespace locksmith::detail {
namespace {

// A reply of the server: what its error means, or whether the WAIT behind the script fell short.
void read_reply(eval_step& s, eval_completion const& c, script const& code,
                boost::redis::generic_response& resp)
{
   if (resp.has_error()) {
      s.server_message = server_error(resp);
      // Redis 6 wraps a command's error inside a script in a script error of its own.
      auto const error_code = server_error_code(s.server_message);
      if (is_auth_error(error_code)) {
         s.ec = error::auth_failed;
      } else if (c.sentinel && (error_code == "READONLY" || unblocked_by_a_demotion(error_code))) {
         // The master that the Sentinels named was made a replica (a failover under way), before
         // the call or under its WAIT: ask them again. Not a lasting server error, so the
         // attempt may be retried.
         s.demoted = true;
         s.ec = boost::redis::error::role_check_failed;
      } else if (error_code == "LOADING") {
         // A server that loads its data set (a restart from its dump or append-only file) runs
         // no command until it is done, and then answers: a routine operation's passing
         // failure, as a cluster's TRYAGAIN is, and a call that ran nowhere. Unless a WAIT
         // followed the script: the error may be the WAIT's (first_error_wins), after a script
         // that ran.
         s.ec = boost::asio::error::try_again;
         s.ran_nowhere = c.wait_replicas == 0;
      }
      return;
   }
   if (c.wait_replicas == 0)
      return;
   auto const acked = take_wait_reply(resp);
   // A reply without a WAIT's fails to parse as the script's, later; a "taken" or "not ours"
   // wrote nothing that replicas must have.
   if (!acked || *acked >= std::int64_t{c.wait_replicas} || !granted(code, resp))
      return;
   s.server_message = replicas_message(*acked, c.wait_replicas, c.replica_timeout);
   s.ec = error::not_enough_replicas;
}

}  // namespace

eval_step next_eval_step(eval_completion const& c, script const& code, link_health const& health,
                         std::function<bool()> const& still_wanted,
                         boost::redis::generic_response& resp)
{
   eval_step s;
   if (code.publishes)
      strip_leading_pong(resp);
   if (!c.ec && !c.by_text && is_noscript(resp) && still_wanted()) {
      s.next = eval_step::action::send_text;
      return s;
   }
   s.ec = c.ec;
   // Failed otherwise than by its deadline or a stop: its connection's end cut it short.
   bool const cut =
      c.ec && !c.stopped && (c.ec != boost::asio::error::operation_aborted || c.before_deadline);
   // ...and the connection ended because its server answered the health check with LOADING: the
   // call met the load (as read_reply's LOADING), a passing failure.
   bool const loading = cut && server_error_code(health.refused_ping()) == "LOADING";
   if (s.ec == boost::asio::error::operation_aborted && !c.stopped && !loading) {
      s.ec = boost::asio::error::timed_out;
      s.timed_out = true;
   } else if (!s.ec) {
      s.answered = true;
   }
   if (s.ec && health.lasting() && !c.stopped) {
      // Not a slow node: one that will not let us in until its setup or ours changes.
      s.ec = health.lasting();
      s.server_message = health.lasting_message();
   } else if (loading) {
      // It was written, so it may have run before the server restarted (ran_nowhere stays
      // false).
      s.ec = boost::asio::error::try_again;
      s.server_message = health.refused_ping();
   } else if (s.ec) {
      s.server_message = health.last_problem();
   } else {
      read_reply(s, c, code, resp);
   }
   return s;
}

eval_step refused_step(bool stopped, link_health const& health)
{
   eval_step s;
   if (stopped) {
      s.ec = boost::asio::error::operation_aborted;
      s.server_message = "not sent: the client was stopped";
   } else if (health.lasting()) {
      s.ec = health.lasting();
      s.server_message = health.lasting_message();
   } else {
      s.ec = boost::asio::error::timed_out;
      s.server_message = "not sent: a call timed out and the node has not answered since";
      if (!health.last_problem().empty())
         s.server_message += " (" + health.last_problem() + ")";
   }
   return s;
}

}  // namespace locksmith::detail
