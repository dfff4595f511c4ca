// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// What the engines need of a Redis node: the interface that redis_node (redis_node.hpp),
// cluster_node and the unit tests' fake nodes implement, and what a node answers to a call.
#ifndef LOCKSMITH_SRC_NODE_HPP
#define LOCKSMITH_SRC_NODE_HPP

#include "transport/script_call.hpp"

#include "sansio/pushes.hpp"
#include "sansio/quarantine.hpp"
#include <locksmith/error.hpp>

#include <boost/redis/response.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>

namespace locksmith::detail {

/// What one node answered to one script call.
struct node_reply {
   // transport error, timeout, auth_failed, tls_failed, not_enough_replicas, or try_again: a
   // routine operation under way (a server loading its data, a cluster's slot in motion)
   error_code ec;
   std::string server_message;  // the server's error text, or the connection's last problem
   boost::redis::generic_response resp;  // the reply, when !ec
   std::chrono::steady_clock::duration latency{};
   // false: the script ran nowhere, so the call left no key: refused at once, never written (the
   // node is silent, see silence_gate), refused by a server that loads its data set (LOADING),
   // or a Redis Cluster slot in motion (cluster_node)
   bool sent = true;
};

/// Called on the node's executor for each push of its subscriber connection, in order.
using push_handler = std::function<void(push_event const&)>;

/// What the acquire engine needs of a node. The engine runs over this interface so that unit
/// tests can drive it over fake nodes with injected failures.
class node {
public:
   virtual ~node() = default;

   /// Calls the script; `done(node_reply&&)` runs on the node's executor, never inline. The call
   /// is cancelled after `timeout`, which then reads as asio::error::timed_out, unless the
   /// connection's last attempt failed in a way that waiting will not mend: then it reads as
   /// error::auth_failed or error::tls_failed, with the reason. A NOPERM reply is auth_failed too.
   ///
   /// On NOSCRIPT the script's text is sent, but only if `still_wanted()` says so: an acquire
   /// fallback sent after the caller gave up would land behind the release it sent meanwhile, and
   /// take a key that nobody releases.
   void eval(std::shared_ptr<script_call const> call, std::chrono::milliseconds timeout,
             std::function<bool()> still_wanted, std::function<void(node_reply&&)> done)
   {
      do_eval(std::move(call), timeout, std::move(still_wanted), std::move(done), false);
   }

   /// As eval, but written even while the node is silent (a call of ours timed out and it has not
   /// answered since), when eval refuses calls at once: a release of a key that the node may hold
   /// must land behind the acquire that set it, whenever the node answers again.
   void eval_even_if_silent(std::shared_ptr<script_call const> call,
                            std::chrono::milliseconds timeout, std::function<bool()> still_wanted,
                            std::function<void(node_reply&&)> done)
   {
      do_eval(std::move(call), timeout, std::move(still_wanted), std::move(done), true);
   }

   /// Subscribes to the channel on the node's subscriber connection, which restores it after a
   /// reconnect. The server's confirmation comes later, as a `subscribed` push: only from then on
   /// are the channel's messages sure to arrive.
   virtual void subscribe(std::string const& channel) = 0;
   virtual void unsubscribe(std::string const& channel) = 0;

   /// The command connection is out of step with its replies (a reply of the wrong shape came
   /// back): drop it and connect again. Requests in flight on it fail.
   virtual void reconnect() = 0;

   /// Starts the node's loops, and hands each push of its subscriber connection to `on_push`; a
   /// `connected` push comes first on each (re)connection of that connection. Stops them
   /// (pending calls then complete with an error).
   virtual void start(push_handler on_push) = 0;
   virtual void stop() = 0;

   /// Calls `f` (on the node's executor) each time the node has a new route for some keys: a
   /// Redis Cluster's slots that another master serves, a Sentinel's new master. Releases that
   /// wait for their next retry are then sent at once (owned_work::hurry). None by default.
   virtual void on_reroute(std::function<void()> f) { (void)f; }

   /// True for a node that finds its master's successor by itself when that master fails (a
   /// Redis Cluster's new master for the slots, a Sentinel's promoted replica): a call that it
   /// could not deliver may land once the failover ends, so an unlock waits it out
   /// (persistence::wait_out_operations). False by default: a plain node's silence is an outage
   /// once it has lasted longer than a restart (persistence::restart_until).
   virtual bool follows_failovers() const noexcept { return false; }

   /// The node's URL without its password.
   virtual std::string const& name() const noexcept = 0;

   /// True while the node's server is in its restart quarantine (config::restart_quarantine),
   /// or its uptime is not known yet, or its restarts cannot be judged: its acquire votes do not
   /// count.
   virtual bool quarantined() const noexcept { return false; }

   /// True while the node's server started less than the quarantine ago by the earliest start
   /// that its uptime allows (Redis counts it in whole seconds): no client with the same
   /// quarantine has counted its votes yet, unless the whole fleet restarted within one
   /// quarantine (the fresh-fleet rule's limit, sansio/quarantine.hpp). Not while its uptime is
   /// unknown (a new connection not judged yet), nor when its restarts cannot be judged, nor
   /// when its run counts early. False by default: a node that follows failovers (a Redis
   /// Cluster's, a Sentinel's) never says so, as another server there is a failover's.
   virtual bool restarted_recently() const noexcept { return false; }

   /// Which run of its server the node is connected to: a number that changes each time its
   /// connection finds a server with another `run_id` (a restart), or unknown_run while that is
   /// not known (its `INFO` not answered on this connection; no quarantine; and by default, for
   /// a node that follows failovers). A key set in one run and missing in a later one was lost
   /// with the restart.
   virtual unsigned run() const noexcept { return unknown_run; }
   static constexpr unsigned unknown_run = ~0u;

   /// True while the node's current connection has not learned yet how long its server has been
   /// up (a connection made a moment ago, its `INFO` not answered): restarted_recently() cannot
   /// tell yet. Never for a node without a quarantine, nor for one whose restarts cannot be
   /// judged. False by default.
   virtual bool run_unknown() const noexcept { return false; }

   /// Why the node's restarts cannot be judged (the command and the server's reply, as "INFO
   /// server failed (NOPERM ...)"), or an empty `why`. Such a node is quarantined until they can
   /// be.
   virtual judge_failure unjudged() const { return {}; }

protected:
   /// eval (`even_if_silent` false) and eval_even_if_silent (true): what a node implements. One
   /// that never turns silent (a fake) may ignore `even_if_silent`.
   virtual void do_eval(std::shared_ptr<script_call const> call, std::chrono::milliseconds timeout,
                        std::function<bool()> still_wanted, std::function<void(node_reply&&)> done,
                        bool even_if_silent) = 0;
};

}  // namespace locksmith::detail

#endif
