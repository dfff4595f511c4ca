// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// A Redis Cluster as one node: a redis_node per master, each script call sent to the master of its
// keys' slot, and the redirections of a slot map that changes followed.
#ifndef LOCKSMITH_SRC_CLUSTER_NODE_HPP
#define LOCKSMITH_SRC_CLUSTER_NODE_HPP

#include "transport/redis_node.hpp"

#include "sansio/cluster.hpp"
#include "sansio/sentinel_follow.hpp"
#include "sansio/shard_subscriptions.hpp"

#include <boost/asio/steady_timer.hpp>

#include <map>

namespace locksmith::detail {

/// One node of the quorum that is a whole Redis Cluster (`redis+cluster://`). Every key and
/// channel of a lock carries its `{name}` hash tag, so each script call has one slot, and goes to
/// the master that the slot map names for it (the first seed while the map is not known yet).
/// A MOVED reply updates the slot, asks the cluster for its whole map again, and sends the call
/// to the new master; an ASK reply sends it with ASKING to the node named, for that call only;
/// TRYAGAIN (a migration has split the call's keys) sends it again after a pause. A call follows
/// its slot for as long as its timeout lasts (plan_redirect). When that runs out while the slot
/// is still in motion, the call fails as a passing failure (asio::error::try_again, marked not
/// sent: the script ran nowhere), as a silent node's call does, never as a server error: a
/// lock attempt waits the move out within its wait, a renewal within its validity, and a
/// release is sent again until it lands or the key expires.
///
/// A call that a master does not answer (a transport error, a timeout, a call refused while the
/// master is silent) or that meets CLUSTERDOWN (which then reads as asio::error::try_again, a
/// passing failure, with the server's message) fails as it is, and has the map reloaded, at most
/// once per refresh_spacing: after a failover the slots of a dead master have a new one, which
/// no redirection will name. The map is asked of the node that last answered it, then of the
/// seeds, then of every other master known.
///
/// When a reload of the map gives slots to another master (a failover), the calls that must land
/// (eval_even_if_silent: releases) still out to the old one are sent to the new master at once,
/// instead of waiting out their timeout (up to 2 s for a release's later retries) on a master
/// that is gone; the releases that the old masters answered in the last few seconds are sent
/// again (the DEL of each may not have reached the replica before the old master died, which
/// would leave the released key on the new one until its TTL; each deletes only a key that still
/// holds its own released token); and on_reroute's callback runs.
///
/// Release notifications use sharded pub/sub (Redis 7): each script that publishes is sent as its
/// sharded twin (SPUBLISH, sharded_twin), so a release reaches the master of its channel's slot
/// only, instead of crossing the cluster bus to every node; each release channel is SSUBSCRIBEd
/// on the subscriber connection of the master of its slot, and follows the slot when it moves
/// (shard_subscriptions): when the map changes, when a master drops the subscription because it
/// gave the slot away (an unasked sunsubscribe), when an SSUBSCRIBE meets MOVED, and when a
/// master's subscriber connection reconnects (Boost.Redis restores only plain subscriptions).
/// So each master is asked COMMAND GETKEYS SPUBLISH when it is started, ahead of any script: a
/// master without it (Redis 6) makes every call fail at once with error::invalid_argument and a
/// message that names it, instead of a lock whose release fails later.
class cluster_node final : public node, public std::enable_shared_from_this<cluster_node> {
public:
   cluster_node(boost::asio::any_io_executor ex, node_url url, config const& cfg);

   void start(push_handler on_push) override;
   void stop() override;

   void on_reroute(std::function<void()> f) override { on_reroute_ = std::move(f); }
   bool follows_failovers() const noexcept override { return true; }

   void subscribe(std::string const& channel) override;
   void unsubscribe(std::string const& channel) override;

   /// Reconnects every master's command connection: which one lost step is not known here.
   void reconnect() override;

   std::string const& name() const noexcept override { return name_; }

   /// True while any master is in its restart quarantine.
   bool quarantined() const noexcept override;
   /// The first master's whose restarts cannot be judged.
   judge_failure unjudged() const override;

private:
   // How long a seed may take to answer CLUSTER SLOTS (or a master COMMAND GETKEYS) before the next
   // one is asked.
   static constexpr std::chrono::milliseconds slots_timeout{2000};
   // How long the releases that masters answered are kept, to be sent again to a new master:
   // longer than a replica takes to be promoted (cluster-node-timeout, 15 s by default, and a
   // second or two); at most kept_releases of them.
   static constexpr std::chrono::milliseconds releases_kept_for{30000};

   // A call on its way: where it goes and until when, and its completion.
   struct routed_call {
      std::shared_ptr<script_call const> call;
      std::chrono::steady_clock::time_point start;
      std::chrono::steady_clock::time_point deadline;
      std::function<bool()> still_wanted;
      std::function<void(node_reply&&)> done;
      bool even_if_silent = false;
      std::uint16_t slot = 0;
      unsigned redirections = 0;
      std::shared_ptr<redis_node> at;  // the master it was sent to last: only its reply counts
      bool finished = false;           // `done` ran
      // An earlier send may have written: one stopped part way on the slot in motion, or one
      // rerouted from a master that lost the slot (reroute)
      bool ran = false;
   };
   void do_eval(std::shared_ptr<script_call const> call, std::chrono::milliseconds timeout,
                std::function<bool()> still_wanted, std::function<void(node_reply&&)> done,
                bool even_if_silent) override;
   void route(std::shared_ptr<routed_call> c, std::shared_ptr<redis_node> to, bool asking);
   void on_reply(std::shared_ptr<routed_call> c, std::shared_ptr<redis_node> from, node_reply&& r);
   std::shared_ptr<redis_node> master_for(endpoint const& e);
   std::shared_ptr<redis_node> owner_of(std::uint16_t slot) const;
   void refresh();
   void refresh_soon();
   struct slots_source {
      std::string host;
      std::shared_ptr<redis_node> node;
   };
   std::vector<slots_source> slots_sources() const;
   void ask_slots(std::shared_ptr<std::vector<slots_source> const> from, std::size_t i);
   void apply(std::vector<slot_range> map, std::string const& asked_host);
   void reroute(std::vector<bool> const& moved);
   std::shared_ptr<redis_node> follow(redirect const& redir);
   void slot_in_motion(std::shared_ptr<routed_call> c, node_reply&& r);
   void finish(std::shared_ptr<routed_call> c, node_reply&& r);
   void start_master(std::string const& addr, std::shared_ptr<redis_node> const& n);
   void check_sharded_pubsub(std::shared_ptr<redis_node> const& n);
   void refuse(routed_call& c, node_reply&& r);
   void on_master_push(std::string const& addr, push_event const& e);
   void on_refused(std::string const& addr, std::string const& error);
   std::string const& address_of(std::shared_ptr<redis_node> const& n) const;
   void follow_slots();
   void run(shard_subscriptions::steps st, bool defer_tell);

   boost::asio::any_io_executor ex_;
   node_url url_;
   config cfg_;
   std::string name_;
   push_handler on_push_;
   bool started_ = false;
   bool stopped_ = false;
   bool refreshing_ = false;
   bool refresh_again_ = false;
   bool refresh_scheduled_ = false;
   std::chrono::steady_clock::time_point last_refresh_{};
   boost::asio::steady_timer refresh_timer_;
   std::shared_ptr<redis_node> answered_slots_;  // the node that last answered CLUSTER SLOTS
   std::map<std::string, std::shared_ptr<redis_node>> masters_;  // by "host:port"
   std::vector<std::shared_ptr<redis_node>> seeds_;              // in the URL's order
   std::vector<std::shared_ptr<redis_node>> owner_;       // each slot's master; null: not known
   std::vector<slot_range> map_;                          // the last map applied, hosts filled in
   std::vector<std::weak_ptr<routed_call>> owned_;        // even_if_silent calls, maybe out still
   recent<std::shared_ptr<script_call const>> releases_;  // plain releases lately answered
   std::function<void()> on_reroute_;
   shard_subscriptions shards_;  // the release channels, by master address
   std::string unsupported_;     // why a master cannot serve (no SPUBLISH); empty: none found
   log_sink log_;
};

}  // namespace locksmith::detail

#endif
