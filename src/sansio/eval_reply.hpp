// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#ifndef LOCKSMITH_DETAIL_EVAL_REPLY_HPP
#define LOCKSMITH_DETAIL_EVAL_REPLY_HPP

#include "sansio/link_health.hpp"
#include "sansio/scripts.hpp"

#include <locksmith/error.hpp>

#include <boost/redis/response.hpp>

#include <chrono>
#include <functional>
#include <string>

namespace locksmith::detail {

/// One script call's request on a node's command link, as it completed.
struct eval_completion {
   error_code ec{};  // the request's: operation_aborted when its deadline (or a stop) ended it
   // It ended before its deadline: an operation_aborted then is its connection's end (Boost.Redis
   // aborts the requests it had written when their connection ends), not the deadline's.
   bool before_deadline = false;
   bool by_text = false;        // the request was the EVAL fallback already
   bool stopped = false;        // the node was stopped
   bool sentinel = false;       // the node is a master that Sentinels named
   unsigned wait_replicas = 0;  // a WAIT for this many replicas followed the script (0: none did)
   std::chrono::milliseconds replica_timeout{};  // that WAIT's timeout
};

/// What the command link does next with a script call, and what its caller is told. No I/O: the
/// link sends the text, feeds its silence_gate and reconnects when told.
struct eval_step {
   enum class action {
      send_text,  // NOSCRIPT: the script cache is empty (restart, failover, SCRIPT FLUSH); send
                  // the script's text, once
      complete,   // the call is over: `ec` and `server_message` are its outcome
   };
   action next = action::complete;
   error_code ec;  // no error for any reply of the server but those below: a MOVED, an ASK or a
                   // TRYAGAIN is the caller's to follow (cluster_node), by its server_message
   std::string server_message;  // the server's error text, or the connection's last problem
   bool timed_out = false;      // no answer within the call's timeout: silence_gate::on_timeout
   bool answered = false;       // the node answered: silence_gate::on_answer
   bool demoted = false;        // READONLY from a Sentinels' master: reconnect to ask them again
   bool ran_nowhere = false;    // refused before it ran (LOADING): node_reply::sent is false
};

/// The decision of one completion of a script call's request:
///  - NOSCRIPT to the EVALSHA: send_text, if `still_wanted()` says so (asked then only): an acquire
///    sent by text after its caller gave up would take a key that nobody releases;
///  - cancelled by its deadline (operation_aborted, not stopped): asio::error::timed_out;
///  - a transport error or a timeout while `health` says that the connection's setup fails in a
///    way that waiting will not mend: error::auth_failed or tls_failed, with the reason; a call
///    that its connection's end cut short (before its deadline), when the connection ended
///    because its server answered the health check with LOADING (link_health::refused_ping),
///    reads as that LOADING's, below, but may have run (not `timed_out`); any other transport
///    error, or a call cut short otherwise, carries the connection's last problem (the latter as
///    a timeout, as before);
///  - a server error: passed on with ec clear (the caller parses it or follows a redirection),
///    but NOPERM, WRONGPASS or NOAUTH (Redis 6 wraps them in a script error) read as
///    error::auth_failed, and READONLY (or UNBLOCKED: unblocked_by_a_demotion) from a Sentinels'
///    master as boost::redis::error::role_check_failed, `demoted` (a passing failure: the attempt
///    may retry);
///  - LOADING (a server that loads its data set after a restart): asio::error::try_again, a
///    passing failure that the caller waits out as a routine operation's, and `ran_nowhere`
///    unless a WAIT followed the script (whose own error it may be);
///  - a WAIT that fewer replicas acknowledged than asked, behind a script that wrote
///    (replicas.hpp's granted): error::not_enough_replicas, with replicas_message.
/// With a WAIT, its reply is taken off the end of `resp` (take_wait_reply), which `resp` keeps
/// otherwise: the script's reply, or its error.
eval_step next_eval_step(eval_completion const& c, script const& code, link_health const& health,
                         std::function<bool()> const& still_wanted,
                         boost::redis::generic_response& resp);

/// What a call that the link refuses, unsent, reads as: operation_aborted once `stopped`; else
/// the lasting failure of `health` if it has one; else asio::error::timed_out, as the node is
/// silent (a call timed out and it has not answered since), with its last problem if any.
eval_step refused_step(bool stopped, link_health const& health);

}  // namespace locksmith::detail

#endif
