// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// One Redis node: the owner of its command link and its subscriber link, and of its restart
// quarantine (node_quarantine.cpp).
#ifndef LOCKSMITH_SRC_REDIS_NODE_HPP
#define LOCKSMITH_SRC_REDIS_NODE_HPP

#include "transport/command_link.hpp"
#include "transport/log.hpp"
#include "transport/node.hpp"
#include "transport/subscriber_link.hpp"

#include "sansio/quarantine.hpp"
#include "sansio/url.hpp"
#include <locksmith/config.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace locksmith::detail {

struct node_fleet;

/// A node on two Boost.Redis connections: a command_link for every request that has a reply
/// (scripts, the quarantine's INFO and marks, a cluster's CLUSTER SLOTS), and a subscriber_link
/// for pub/sub, which must stay off the command connection (command_link says why). Each link
/// holds itself alive until its operations complete; the node holds both.
class redis_node final : public node, public std::enable_shared_from_this<redis_node> {
public:
   /// `fleet` (may be null) is shared by the nodes of one client, `index` is this node's place
   /// in it: their first contacts decide whether the fleet is fresh (fleet_contacts).
   redis_node(boost::asio::any_io_executor ex, node_url url, config const& cfg,
              std::shared_ptr<node_fleet> fleet = nullptr, std::size_t index = 0);

   /// Starts both connections' run loops and the push receive loop. They keep the links alive.
   void start(push_handler on_push) override;

   /// Stops every loop; pending calls complete with an error.
   void stop() override;

   /// As eval_even_if_silent, with ASKING before the script in the same request: what a Redis
   /// Cluster's ASK redirection asks for, the slot being migrated to this node.
   void eval_asking(std::shared_ptr<script_call const> call, std::chrono::milliseconds timeout,
                    std::function<bool()> still_wanted, std::function<void(node_reply&&)> done);

   /// True from a call of ours that timed out until the node answers again (silence_gate): a
   /// request on its command connection would queue behind the calls it does not answer.
   bool silent() const noexcept { return cmd_->silent(); }

   /// Sends a request whose every command has a reply; `done` gets its reply or the error
   /// (asio::error::timed_out after `timeout`).
   void command(std::shared_ptr<boost::redis::request const> req, std::chrono::milliseconds timeout,
                std::function<void(error_code, boost::redis::generic_response&&)> done);

   /// Uses request::subscribe, which Boost.Redis restores after a reconnect.
   void subscribe(std::string const& channel) override;
   void unsubscribe(std::string const& channel) override;

   /// Sharded pub/sub, for a Redis Cluster's master: SSUBSCRIBE (or SUNSUBSCRIBE) of the channel
   /// on the subscriber connection. Its confirmation comes as a push, marked sharded. Boost.Redis
   /// 1.92 does not restore these after a reconnect (the caller does, on `connected`), and an
   /// error reply (a MOVED from a master that lost the slot) reaches on_push as `refused`.
   void shard_subscribe(std::string const& channel, bool subscribe);

   /// Loads the scripts' sharded twins (every_sharded_script) too at start(): a cluster's master.
   void load_sharded_scripts() noexcept { sharded_scripts_ = true; }

   void reconnect() override;

   /// The Sentinels named another master (sentinel_watch): both connections drop theirs and ask
   /// them again, as they do when the old master disconnects them at its demotion.
   void follow_master();
   /// What the command connection reached last (its server, its count of connections, up).
   link_health const& command_health() const noexcept { return cmd_->health(); }

   std::string const& name() const noexcept override { return name_; }

   bool quarantined() const noexcept override;
   bool restarted_recently() const noexcept override;
   bool run_unknown() const noexcept override;
   unsigned run() const noexcept override;
   judge_failure unjudged() const override { return unjudged_; }

   /// True once the node's current run is known to hold a mark (read there, or written and
   /// acknowledged): see fleet_contacts.
   bool holds_mark() const noexcept { return holds_mark_; }

private:
   friend struct node_fleet;
   void do_eval(std::shared_ptr<script_call const> call, std::chrono::milliseconds timeout,
                std::function<bool()> still_wanted, std::function<void(node_reply&&)> done,
                bool even_if_silent) override;
   void on_command_connection();
   void learn_uptime(unsigned connection);
   void judged(unsigned connection, run_judgement j, std::optional<std::string_view> mark,
               std::chrono::steady_clock::duration asked_for);
   void judge_again(unsigned connection, std::chrono::milliseconds after);
   void first_contact_made(unsigned connection, first_contact c);
   bool counts_early() const noexcept;
   void mark_if_trusted();
   void mark(std::string value);
   void log_quarantine();
   bool stopped() const noexcept { return cmd_->stopped(); }

   std::string name_;
   std::shared_ptr<command_link> cmd_;     // scripts only: every command has a reply
   std::shared_ptr<subscriber_link> sub_;  // SUBSCRIBE, UNSUBSCRIBE and their pushes only
   bool sharded_scripts_ = false;

   // Restart quarantine (node_quarantine.cpp). The command connection reports each new
   // connection; the uptime is asked (INFO server) on it, and until the answer the node's votes
   // do not count. The first connection's INFO is queued at start(), ahead of every script.
   // A node whose server is young counts early if a mark vouches for its run, or if the
   // client's first contacts found a fresh fleet and the server still runs the run it had then,
   // and in both cases only once every node of the fleet holds a mark (fleet_contacts); this
   // node marks each run that it trusts. A node whose INFO fails cannot be judged: it never
   // counts, and is asked again every second.
   std::chrono::milliseconds quarantine_;
   std::chrono::steady_clock::time_point trusted_from_;
   std::chrono::steady_clock::time_point young_until_{};  // restarted_recently() until then
   judge_failure unjudged_;   // why its restarts cannot be judged (empty: they can)
   bool marked_now_ = false;  // its mark (read, or written by this client) names its run
   bool holds_mark_ = false;  // see holds_mark()
   bool marking_ = false;     // a SET of its mark is in flight
   bool told_ = false;        // its quarantine was logged for this connection
   unsigned connections_ = 0;
   std::shared_ptr<node_fleet> fleet_;
   std::size_t index_;
   std::string mark_key_;
   std::string run_id_;        // of the server this node is connected to now (empty: unknown)
   std::string first_run_id_;  // of the server its first connection found
   std::string last_run_id_;   // the last run_id it learned, kept across connections
   unsigned runs_ = 0;         // run(): counts the changes of last_run_id_
   boost::asio::steady_timer judge_timer_;  // asks INFO again (LOADING, or unjudged)

   log_sink log_;  // config::logger
};

/// The nodes of one client, for the fresh-fleet rule: their first contacts, and the nodes to
/// tell once those make a fresh fleet.
struct node_fleet {
   explicit node_fleet(std::size_t nodes)
       : contacts{nodes}
   {}

   fleet_contacts contacts;
   std::vector<std::weak_ptr<redis_node>> nodes;

   /// True when every node of the fleet holds a mark of its current run.
   bool all_marked() const;
   /// The runs that this client's first contacts found, for a fresh fleet's marks.
   std::vector<std::string> first_runs() const;
};

}  // namespace locksmith::detail

#endif
