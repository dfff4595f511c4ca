// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// One Redis node: two Boost.Redis connections, one for commands (script calls with a per-call
// timeout and the NOSCRIPT fallback) and one for pub/sub (SUBSCRIBE, UNSUBSCRIBE and the pushes
// they bring), each with its own run loop and reconnection.
#ifndef LOCKSMITH_SRC_NODE_HPP
#define LOCKSMITH_SRC_NODE_HPP

#include "transport/call_deadlines.hpp"
#include "transport/log.hpp"

#include <locksmith/config.hpp>
#include "sansio/link_health.hpp"
#include "sansio/pushes.hpp"
#include "sansio/quarantine.hpp"
#include "sansio/scripts.hpp"
#include "sansio/silence_gate.hpp"
#include "sansio/url.hpp"
#include <locksmith/error.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/redis/connection.hpp>

#include <chrono>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace locksmith::detail {

/// One script call, shared by the nodes of a fan-out. Its requests are built once.
struct script_call {
   script_call(script const& s, std::vector<std::string> keys, std::vector<std::string> args);

   script const* code;
   std::vector<std::string> keys;
   std::vector<std::string> args;
   std::size_t quorum = 0;        // the nodes that must say yes; 0: the majority (quorum_of)
   boost::redis::request by_sha;  // EVALSHA sha nkeys keys... args...

   /// EVAL text nkeys keys... args..., built on first use: only after NOSCRIPT, which is rare,
   /// and the text is most of the bytes.
   boost::redis::request const& by_text() const;

private:
   mutable std::optional<boost::redis::request> by_text_;
};

/// What one node answered to one script call.
struct node_reply {
   error_code ec;  // transport error, timeout, auth_failed, tls_failed or not_enough_replicas
   std::string server_message;  // the server's error text, or the connection's last problem
   boost::redis::generic_response resp;  // the reply, when !ec
   std::chrono::steady_clock::duration latency{};
   // false: the script ran nowhere, so the call left no key: refused at once, never written (the
   // node is silent, see silence_gate), or a Redis Cluster slot in motion (cluster_node)
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
   virtual void eval(std::shared_ptr<script_call const> call, std::chrono::milliseconds timeout,
                     std::function<bool()> still_wanted,
                     std::function<void(node_reply&&)> done) = 0;

   /// As eval, but written even while the node is silent (a call of ours timed out and it has not
   /// answered since), when eval refuses calls at once: a release of a key that the node may hold
   /// must land behind the acquire that set it, whenever the node answers again.
   virtual void eval_even_if_silent(std::shared_ptr<script_call const> call,
                                    std::chrono::milliseconds timeout,
                                    std::function<bool()> still_wanted,
                                    std::function<void(node_reply&&)> done)
   {
      eval(std::move(call), timeout, std::move(still_wanted), std::move(done));
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

   /// The node's URL without its password.
   virtual std::string const& name() const noexcept = 0;

   /// True while the node's server is in its restart quarantine (config::restart_quarantine),
   /// or its uptime is not known yet, or its restarts cannot be judged: its acquire votes do not
   /// count.
   virtual bool quarantined() const noexcept { return false; }

   /// Why the node's restarts cannot be judged (the command and the server's reply, as "INFO
   /// server failed (NOPERM ...)"), or an empty `why`. Such a node is quarantined until they can
   /// be.
   virtual judge_failure unjudged() const { return {}; }
};

/// A node on two Boost.Redis connections. The command connection carries only requests whose
/// every command has a reply: Boost.Redis 1.92 reads a reply as a push while the request at the
/// head of its queue expects none (a SUBSCRIBE), and from then on matches every reply to the wrong
/// request. Pub/sub therefore has a connection of its own.
///
/// Every operation started on either connection holds the node (shared_from_this) until it
/// completes: Boost.Redis's operations use their connection until then, so the node, which owns
/// both connections, must not end before the last of them.
struct node_fleet;

class redis_node final : public node, public std::enable_shared_from_this<redis_node> {
public:
   /// `fleet` (may be null) is shared by the nodes of one client, `index` is this node's place
   /// in it: their first contacts decide whether the fleet is fresh (fleet_contacts).
   redis_node(boost::asio::any_io_executor ex, node_url url, config const& cfg,
              std::shared_ptr<node_fleet> fleet = nullptr, std::size_t index = 0);

   /// Starts both connections' run loops and the push receive loop. They keep the node alive.
   void start(push_handler on_push) override;

   /// Stops every loop; pending calls complete with an error.
   void stop() override;

   void eval(std::shared_ptr<script_call const> call, std::chrono::milliseconds timeout,
             std::function<bool()> still_wanted, std::function<void(node_reply&&)> done) override;
   void eval_even_if_silent(std::shared_ptr<script_call const> call,
                            std::chrono::milliseconds timeout, std::function<bool()> still_wanted,
                            std::function<void(node_reply&&)> done) override;

   /// As eval_even_if_silent, with ASKING before the script in the same request: what a Redis
   /// Cluster's ASK redirection asks for, the slot being migrated to this node.
   void eval_asking(std::shared_ptr<script_call const> call, std::chrono::milliseconds timeout,
                    std::function<bool()> still_wanted, std::function<void(node_reply&&)> done);

   /// True from a call of ours that timed out until the node answers again (silence_gate): a
   /// request on its command connection would queue behind the calls it does not answer.
   bool silent() const noexcept { return !gate_.open(); }

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

   std::string const& name() const noexcept override { return name_; }

   bool quarantined() const noexcept override;
   judge_failure unjudged() const override { return unjudged_; }

   /// True once the node's current run is known to hold a mark (read there, or written and
   /// acknowledged): see fleet_contacts.
   bool holds_mark() const noexcept { return holds_mark_; }

private:
   friend struct node_fleet;
   struct pending_eval;
   void exec_eval(std::shared_ptr<pending_eval> p, bool by_text);
   void on_eval(std::shared_ptr<pending_eval> p, bool by_text, error_code ec);
   void run_commands();
   void receive_loop();
   void dispatch_pushes();
   void send_pubsub(boost::redis::request req);
   void on_command_connection();
   void learn_uptime(unsigned connection);
   void judged(unsigned connection, run_judgement j, std::optional<std::string_view> mark);
   void judge_again(unsigned connection, std::chrono::milliseconds after);
   void first_contact_made(unsigned connection, first_contact c);
   bool counts_early() const noexcept;
   void mark_if_trusted();
   void mark(std::string value);
   void log_quarantine();
   void start_eval(std::shared_ptr<script_call const> call, std::chrono::milliseconds timeout,
                   std::function<bool()> still_wanted, std::function<void(node_reply&&)> done,
                   bool even_if_silent, bool asking = false);
   void refuse(pending_eval& p);
   void probe();
   boost::redis::request const& request_for(pending_eval& p, bool by_text) const;
   error_code check_replicas(pending_eval& p) const;
   error_code demoted();

   boost::redis::config cfg_;
   std::string name_;
   std::string marker_;  // the subscriber connection's marker channel (pushes.hpp)
   // Written by each connection's logger and TLS callbacks, before the connections they outlive.
   std::shared_ptr<link_health> cmd_health_;
   std::shared_ptr<link_health> sub_health_;
   std::shared_ptr<std::function<void()>>
      on_connected_;               // called by the command connection's logger
   boost::redis::connection cmd_;  // scripts only: every command has a reply
   boost::redis::connection sub_;  // SUBSCRIBE, UNSUBSCRIBE and their pushes only
   boost::redis::generic_response pushes_;
   call_deadlines deadlines_;  // the scripts' timeouts, one timer for all
   push_handler on_push_;
   bool stopped_ = false;
   bool reconnecting_ = false;
   bool sharded_scripts_ = false;
   // Once a call timed out, new calls are refused at once until the node answers again (the
   // PING sent then, or an earlier call). Only with other nodes beside it: the single node of a
   // client is the quorum, and a refused call could only fail where a queued one may succeed.
   bool gated_;
   silence_gate gate_;

   // A master found through Sentinels: a READONLY reply means it was demoted, so the command
   // connection asks the Sentinels again.
   bool sentinel_;
   // config::wait_replicas: WAIT behind each acquire and extend call.
   unsigned wait_replicas_;
   std::chrono::milliseconds replica_timeout_;

   // Restart quarantine (node_quarantine.cpp). The command connection's logger reports each new
   // connection; the uptime is asked (INFO server) on it, and until the answer the node's votes
   // do not count. The first connection's INFO is queued at start(), ahead of every script.
   // A node whose server is young counts early if a mark vouches for its run, or if the
   // client's first contacts found a fresh fleet and the server still runs the run it had then,
   // and in both cases only once every node of the fleet holds a mark (fleet_contacts); this
   // node marks each run that it trusts. A node whose INFO fails cannot be judged: it never
   // counts, and is asked again every second.
   std::chrono::milliseconds quarantine_;
   std::chrono::steady_clock::time_point trusted_from_;
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
