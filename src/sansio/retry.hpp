// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#ifndef LOCKSMITH_DETAIL_RETRY_HPP
#define LOCKSMITH_DETAIL_RETRY_HPP

#include <locksmith/error.hpp>

namespace locksmith::detail {

/// What a waiter knows after an acquire attempt that did not win.
struct attempt_facts {
   error_code lost;  // why: lock_taken, quorum_unreachable, unexpected_reply, validity_expired,
                     // auth_failed, tls_failed
   bool no_wait = false;      // async_try_lock, or a wait of zero
   bool out_of_time = false;  // the wait's deadline has passed
   bool split_vote =
      false;  // taken, but some nodes said yes to us: another contender split the vote
   bool by_message = false;              // the subscribe strategy
   bool subscription_confirmed = false;  // the release channel is confirmed on a quorum
   bool event_since_attempt =
      false;  // a release message (or a confirmation, or a reconnect) came since the try went out
   bool others_hold_quorum = false;  // the nodes that said no (held by others) are a quorum
};

/// What the waiter does next.
enum class next_step {
   give_up,    // complete with final_error()
   draw_lots,  // sleep a random fraction of a node timeout, then try: both sides of a split would
               // meet again at once
   retry_now,  // something happened since the try went out: try again at once
   await_subscription,  // subscribe if not yet, sleep until the subscription is confirmed, then try
   sleep_until_release,  // sleep until a release message, or until the holder's key expires
   sleep_spin,           // sleep a jittered interval (spin strategy, or no quorum to wait on)
};

/// The retry decision after a lost attempt. A server error (unexpected_reply), refused
/// credentials (auth_failed) and a failed TLS handshake (tls_failed) are never retried: they will
/// not mend by themselves.
next_step next_after(attempt_facts const& f) noexcept;

/// Whether the keys that a lost attempt may hold are freed without waking anyone (release.lua's
/// "quiet"): when the attempt tries again by itself (draw_lots), or when other owners' keys were
/// a quorum without its own. Then either one of them won, and its release wakes the next waiter,
/// or they split, and each draws lots and tries again: the waiters do not wait for this
/// attempt's keys. A message would wake one of them only to lose to that quorum, and free its
/// own keys with a message in turn: a chain of lost tries until the winner's release.
bool releases_quietly(attempt_facts const& f, next_step step) noexcept;

/// The error that a waiter that gives up completes with: a lock still taken when a wait ran out
/// is a wait_timeout; with no wait at all it is lock_taken.
error_code final_error(attempt_facts const& f) noexcept;

}  // namespace locksmith::detail

#endif
