// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The client's shared state: nodes, the in-process queue of each lock name, and the release
// subscriptions. Everything here lives on the client's executor.
#ifndef LOCKSMITH_SRC_CORE_HPP
#define LOCKSMITH_SRC_CORE_HPP

#include "cleanup.hpp"
#include "fanout.hpp"
#include "node.hpp"
#include "release_listener.hpp"

#include <locksmith/config.hpp>
#include <locksmith/lease.hpp>
#include <locksmith/lock_options.hpp>
#include <locksmith/report.hpp>
#include <locksmith/detail/retry.hpp>
#include <locksmith/detail/validity.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <deque>
#include <random>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace locksmith::detail {

struct client_core;

/// What a lease shares with the operations that act on it and with its watchdog.
struct lease_state {
   enum class status { held, released, dropped, lost };

   lease_state(
      std::shared_ptr<client_core> const& core,
      std::string name,
      std::string token,
      std::uint64_t fence,
      clock::time_point start,
      clock::time_point valid_until,
      lock_options const& opts);

   std::weak_ptr<client_core> core;
   std::string name;
   std::string token;
   std::uint64_t fence = 0;
   std::chrono::milliseconds ttl;
   std::optional<std::chrono::milliseconds> drift;
   clock::time_point renewed_at;   // start of the last acquire or extend that succeeded
   clock::time_point valid_until;
   status st = status::held;

   boost::asio::steady_timer watchdog;  // the renewal loop sleeps on it; cancelled when the lease ends
   boost::asio::steady_timer lost_event;  // never expires; cancelled when the lease ends, waking async_wait_lost

   bool in_slot = true;  // holds the name's place in the in-process queue

   /// Ends the lease in this process (no I/O): stops renewal and wakes the loss waiters. Unless
   /// it is being released, it also frees the name for the next local waiter; an unlock does that
   /// once its release has been answered.
   void end(status s) noexcept;

   /// Frees the name for the next local waiter, once.
   void leave_slot() noexcept;
};

struct client_core : std::enable_shared_from_this<client_core> {
   client_core(boost::asio::any_io_executor ex, config cfg);
   /// Over the given nodes instead of Redis connections made from cfg.nodes (unit tests' fake
   /// nodes); cfg.nodes is ignored.
   client_core(boost::asio::any_io_executor ex, config cfg, std::vector<std::shared_ptr<node>> nodes);
   void start();
   /// Ends every operation and stops the nodes at once; owned releases are abandoned.
   void stop();
   /// Ends new and waiting operations, waits until the operations in flight and the owned
   /// releases are done, at most `bound`, then stops: success, or timed_out at the bound.
   boost::asio::awaitable<error_code> close(std::chrono::milliseconds bound);

   struct lock_result {
      error_code ec;
      lease held;
   };
   boost::asio::awaitable<lock_result> lock(std::string name, lock_options opts, bool try_only, report* diag);
   boost::asio::awaitable<error_code> unlock(std::shared_ptr<lease_state> st, report* diag);
   boost::asio::awaitable<error_code> extend(std::shared_ptr<lease_state> st, std::chrono::milliseconds ttl, report* diag);

   /// Renews the lease every ttl/3 until it ends; retries a failed renewal quickly; declares
   /// the lease lost when its validity (minus one node timeout and the loss margin) runs out
   /// first, when the key is found taken or gone, or when `max_hold` is reached. Holds the core
   /// only weakly: renewal ends with the client.
   /// For a lease that is not renewed: frees the name in this process once the lease expires
   /// (later if it is extended meanwhile), so that local waiters may go on to Redis.
   static boost::asio::awaitable<void> expire(std::shared_ptr<lease_state> st);

   static boost::asio::awaitable<void> watch(
      std::weak_ptr<client_core> core,
      std::shared_ptr<lease_state> st,
      std::chrono::milliseconds max_hold,
      std::chrono::milliseconds loss_margin);


   // In-process queue: one contender (or holder) per name; the others wait in FIFO order.
   // A queued waiter lives in its coroutine's frame (enter_slot), and `wake` points at a timer
   // there: the coroutine unlinks itself from the queue before that frame can end, unless
   // leave_slot unlinked it first when granting it the name.
   struct waiter {
      boost::asio::steady_timer* wake;
      bool granted = false;
   };
   struct slot {
      std::deque<waiter*> queue;
      bool subscribed = false;  // holds one reference on the name's release channel
   };
   /// Waits until this coroutine is the only one of the process to contend for `name`:
   /// wait_timeout at the deadline, operation_aborted on cancellation.
   boost::asio::awaitable<error_code> enter_slot(std::string const& name, clock::time_point deadline);
   /// Passes the name to the next local waiter, which tries at once, or forgets it.
   void leave_slot(std::string const& name) noexcept;
   bool slot_busy(std::string const& name) const { return slots_.contains(name); }

   /// Sends release to every node that may hold the attempt's key (all but those that said
   /// taken), after a lost attempt, a cancelled one, or a won one whose validity ran out. The
   /// client owns it (persistence) until each node answered or `until` (when the key expires by
   /// itself) has passed.
   void release_where_taken(
      std::string const& name,
      std::string const& token,
      fanout_result const& r,
      clock::time_point until);

   /// The acquire script's call for one attempt.
   std::shared_ptr<script_call const> acquire_call(
      std::string const& name,
      std::string const& token,
      std::chrono::milliseconds ttl) const;

   /// The lease of a won attempt, with its watchdog (or, unrenewed, its expiry) started.
   lease grant(
      std::string const& name,
      std::string const& token,
      std::uint64_t fence,
      clock::time_point start,
      clock::time_point until,
      lock_options const& opts);

   /// After an attempt lost for `lost`: decides (next_after) and waits for the next try.
   /// Success: try again; else the error to complete with.
   boost::asio::awaitable<error_code> wait_to_retry(
      error_code lost,
      fanout_result const& r,
      std::string const& name,
      std::string const& channel,
      std::uint64_t seen,
      wait_strategy::spin const* spin,
      bool no_wait,
      clock::time_point deadline);

   /// Sleeps for `d`; with a channel, a release event on it (release_listener::events) ends the
   /// sleep early.
   /// operation_aborted on cancellation.
   boost::asio::awaitable<error_code> sleep(std::chrono::microseconds d, std::string const* channel);

   std::shared_ptr<script_call const> release_call(std::string const& name, std::string const& token) const;

   boost::asio::any_io_executor ex;
   bool stopped = false;  // the client was closed, cancelled or destroyed: operations end at once
   std::shared_ptr<owned_work> work = std::make_shared<owned_work>();  // what close() waits for
   config cfg;
   error_code config_error;
   std::vector<std::shared_ptr<node>> nodes;
   release_listener listener;
   std::mt19937_64 random;

private:
   release_listener::links listener_links();
   void halt();

   std::unordered_map<std::string, slot> slots_;
};

}  // namespace locksmith::detail

#endif
