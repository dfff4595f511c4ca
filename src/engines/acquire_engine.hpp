// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The acquire engine: tries a name on the nodes (the quorum fan-out), releases what a lost try
// may have taken, and between tries waits as the strategy and the retry decision
// (sansio/retry.hpp) say: for a release message, the holder's PTTL, a spin interval or a lot.
// Everything here lives on the client's executor.
#ifndef LOCKSMITH_SRC_ACQUIRE_ENGINE_HPP
#define LOCKSMITH_SRC_ACQUIRE_ENGINE_HPP

#include "engines/client_context.hpp"
#include "protocol/calls.hpp"
#include "protocol/fanout.hpp"
#include "engines/local_queue.hpp"
#include "engines/release_listener.hpp"

#include "sansio/retry.hpp"

#include <locksmith/detail/lease_kind.hpp>
#include <locksmith/lock_options.hpp>
#include <locksmith/report.hpp>

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace locksmith::detail {

class acquire_engine {
public:
   using clock = std::chrono::steady_clock;

   acquire_engine(client_context& ctx, local_queue& queue, release_listener& listener);

   /// A won attempt.
   struct won {
      std::string token;
      std::uint64_t fence = 0;
      clock::time_point start;         // when the winning try went out
      clock::time_point valid_until;   // start + ttl - drift
      std::vector<bool> may_hold;      // the nodes that may hold the key (may_hold_key)
      std::vector<unsigned> key_runs;  // by node: its run when it set the key (node_result::run)
      std::string took_over;           // the handed lease's token that the winning try took over
   };
   struct result {
      error_code ec;
      won lease;
   };

   /// What a try owes the nodes that had not answered when it was decided. Once it is judged
   /// (arm), a call goes to each of them whose vote, when it comes, is one that the rule names:
   /// a won try's waiter leaves where such a node then says no or fails (elsewhere the script
   /// took it out, or it was never in); a lost try releases where such a node then says yes or
   /// fails (elsewhere another owner holds the key). Votes that come before the try is judged
   /// wait for it. The next try of the same waiter must land behind these calls, as a release
   /// sent at once would: flush() sends them now to the nodes still unanswered.
   class owed_calls {
   public:
      using rule = bool (*)(vote);
      void on_late(std::size_t node, vote v);
      /// Once only: a second arm, or an arm after waive, is ignored.
      void arm(std::vector<std::size_t> unanswered, rule owes,
               std::function<void(std::size_t)> call);
      /// Judged with nothing owed (a won try whose waiter was never registered): later votes
      /// are dropped.
      void waive();
      void flush();

   private:
      void settle(std::size_t node, vote v);

      bool judged_ = false;
      std::function<void(std::size_t)> call_;
      rule owes_ = nullptr;
      std::vector<std::size_t> unanswered_;               // once armed
      std::vector<std::pair<std::size_t, vote>> before_;  // votes that came before arm
   };

   /// One try: its token, what it was sent at, and how the nodes answered; and the waiter that
   /// sends it, whose registration on the servers lets a release wake it alone (begin).
   struct attempt {
      std::string token;       // kept across tries by a fair waiter only
      std::uint64_t seen = 0;  // the name's release events when it went out
      clock::time_point t0;
      error_code ec;  // of the fan-out
      fanout_result r;
      error_code lost;  // why it lost, once judged (judge)
      // Until when the caller waits for the lock (none: a try-lock); set by the caller.
      std::optional<clock::time_point> wait_until;
      std::string waiter;       // its id among the name's waiters, once a try registered it
      bool registered = false;  // a try sent since may have registered it
      std::shared_ptr<owed_calls> owed;  // the last try's (begin), on a client of several nodes
   };

   /// What the fan-out of `a`'s last try (begin) is to tell of the votes that come after it was
   /// decided (owed_calls): nothing on a client of one node, whose one vote decides.
   static late_vote_handler late_votes(attempt const& a);

   /// Sends what `a`'s last try owes (owed_calls) at once to the nodes still unanswered: before
   /// the next try, or when the call ends, so that the name's next contender finds it done.
   static void settle_owed(attempt& a);

   /// Tries until won, or until the retry decision gives up (no_wait, the deadline, a lasting
   /// failure), the client stops, or the operation is cancelled. The caller is the name's only
   /// contender in the process (local_queue::enter), and the arguments outlive the operation.
   /// `kind` picks the scripts and the quorum. With `handed` (a plain lock's lease that a local
   /// holder passed on; only `kind` lock can take one over), the first try takes its key over;
   /// whatever of it that try does not take over is released. With `first`, a try already sent
   /// (begin) and judged lost, the operation goes on from there: the caller's fast path.
   boost::asio::awaitable<result> acquire(std::string const& name, lock_options const& opts,
                                          bool no_wait, clock::time_point deadline, report* diag,
                                          lease_kind const& kind,
                                          local_queue::handover const* handed = nullptr,
                                          attempt* first = nullptr);

   /// Readies a try of `a` (a new token unless it has one, the events seen, its start) and
   /// returns the call to send to every node; `channel` is the name's release channel. A plain
   /// lock's waiter that waits for release messages (subscribed: confirmed) registers with a try
   /// that loses, so that the next release wakes one waiter, not every process (release.lua).
   std::shared_ptr<script_call const> begin(attempt& a, std::string const& name,
                                            std::string const& channel, lock_options const& opts,
                                            lease_kind const& kind,
                                            local_queue::handover const* handed = nullptr);
   /// Judges a try that came back: the result when it failed (what it may have taken is
   /// released, and the waiter leaves) or won in time; nothing when it lost, why in `a.lost`.
   /// Reports to `diag`.
   std::optional<result> judge(attempt& a, std::string const& name, lock_options const& opts,
                               report* diag, lease_kind const& kind);

   /// A waiter that gives up takes its registration out of the name's waiters, in the
   /// background (else a release could name it, and wake nobody): on the nodes that `where`
   /// marks, all when it is null.
   void leave(std::string const& name, attempt& a, std::vector<bool> const* where = nullptr);

private:
   // Until when a leave is owned (release_on): a node timeout and leave_for from now.
   clock::time_point leave_deadline() const;
   // After an attempt lost for `lost`: decides (next_after) and waits for the next try.
   // Success: try again; else the error to complete with.
   struct retry_context {
      std::string const& name;
      std::string const& channel;
      std::uint64_t seen;  // the channel's events when the try went out
      wait_strategy::spin const* spin;
      bool no_wait;
      clock::time_point deadline;
      bool kept_place = false;  // a fair waiter whose yes votes were a step back (step_back):
                                // not a split vote to draw lots on; it waits for its handoff
   };
   // What the waiter knows after the try lost for `lost`; a waiter woken by messages takes the
   // name's channel first.
   attempt_facts facts_after(error_code lost, fanout_result const& r, retry_context const& c);
   boost::asio::awaitable<error_code> wait_to_retry(attempt_facts const& f, next_step step,
                                                    fanout_result const& r, retry_context const& c);
   // A fair waiter that took the key on some nodes (`r`), but not the lock, gives the key back
   // there and keeps its place in the queues (fair_requeue_script). True once every node that
   // may hold the key did it: only then may its token try again, since a step back that landed
   // after the next try would delete the key that try took.
   boost::asio::awaitable<bool> step_back(std::string const& name, std::string const& token,
                                          fanout_result const& r);

   // The registration that a try of `a` carries, if any (begin).
   std::optional<waiter_entry> registration(attempt& a, std::string const& channel,
                                            lock_options const& opts, lease_kind const& kind);

   // Releases what the try of `token` may hold (a fair waiter's: on every node, where it is
   // queued), so that it never outlives `until`, and forgets the token.
   // `quiet`: the attempt tries again by itself, so the release wakes nobody, and its waiter,
   // if registered, registers where the try took the key (release_call's `rejoin`).
   void give_up(std::string const& name, attempt& a, fanout_result const& r,
                clock::time_point until, lease_kind const& kind, bool quiet = false);

   // Sleeps for `d`; with a channel, a release event on it ends the sleep early.
   // operation_aborted on cancellation or once the client stops.
   boost::asio::awaitable<error_code> sleep(std::chrono::microseconds d,
                                            std::string const* channel);

   client_context& ctx_;
   local_queue& queue_;
   release_listener& listener_;
   std::mt19937_64 random_;
};

}  // namespace locksmith::detail

#endif
