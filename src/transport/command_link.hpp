// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// A node's command connection: script calls with a per-call timeout, the NOSCRIPT fallback, the
// silence gate and its probe, ASKING, WAIT, and the other requests of the node, each with a reply.
#ifndef LOCKSMITH_SRC_COMMAND_LINK_HPP
#define LOCKSMITH_SRC_COMMAND_LINK_HPP

#include "transport/call_deadlines.hpp"
#include "transport/command_exec.hpp"
#include "transport/log.hpp"
#include "transport/node.hpp"

#include "sansio/link_health.hpp"
#include "sansio/reply_slices.hpp"
#include "sansio/silence_gate.hpp"
#include "sansio/url.hpp"
#include <locksmith/config.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/redis/connection.hpp>

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <utility>

namespace locksmith::detail {

/// One Boost.Redis connection that carries only requests whose every command has a reply:
/// Boost.Redis 1.92 reads a reply as a push while the request at the head of its queue expects
/// none (a SUBSCRIBE), and from then on matches every reply to the wrong request
/// (command_exec.hpp refuses such a request). What a script call's reply means is decided by
/// next_eval_step (sansio/eval_reply.hpp); this link does the I/O it asks for.
///
/// Every operation started on the connection holds the link (shared_from_this) until it
/// completes: Boost.Redis's operations use their connection until then.
class command_link : public std::enable_shared_from_this<command_link> {
public:
   /// `name`: the node's, for log lines. With `reports_connections`, on_connected() may be given
   /// a function that the connection calls on each new connection.
   command_link(boost::asio::any_io_executor ex, node_url const& url, config const& cfg,
                std::string name, bool reports_connections);

   /// Called on each new connection, from inside Boost.Redis's logger (so: post before sending),
   /// once the socket is up and before any request is written on it. Only with
   /// `reports_connections`.
   void on_connected(std::function<void()> f);

   /// Starts the connection's run loop, which keeps the link alive until stop().
   void start();

   /// Loads the scripts of every lease kind (and their sharded twins, with `sharded`) ahead of the
   /// first calls; best effort.
   void load_scripts(bool sharded);

   /// Stops the run loop; pending calls complete with an error.
   void stop();
   bool stopped() const noexcept { return stopped_; }

   /// The connection lost step with its replies: drop it and connect again.
   void reconnect();

   /// How a script call is sent: refused at once while the node is silent (gated, a RedLock's
   /// node only), written even then, or written with ASKING before it (which is never gated).
   enum class send_mode { gated, even_if_silent, asking };

   /// node::eval, eval_even_if_silent and redis_node::eval_asking, by `mode`.
   void eval(std::shared_ptr<script_call const> call, std::chrono::milliseconds timeout,
             std::function<bool()> still_wanted, std::function<void(node_reply&&)> done,
             send_mode mode);

   /// True from a call of ours that timed out until the node answers again (silence_gate).
   bool silent() const noexcept { return !gate_.open(); }

   /// What the connection's attempts taught: its last problem, the server it reached last, how
   /// many times it connected, and whether it is up (sentinel_watch, cluster_node's held calls).
   link_health const& health() const noexcept { return *health_; }

   /// redis_node::command: a request whose every command has a reply, cancelled after `timeout`.
   void command(std::shared_ptr<boost::redis::request const> req, std::chrono::milliseconds timeout,
                std::function<void(error_code, boost::redis::generic_response&&)> done);

   /// A request whose every command has a reply, with no timeout (exec_command). The handler
   /// must hold what owns `req`, `resp` and this link until it runs.
   template <class Response, class Handler>
   void exec(boost::redis::request const& req, Response& resp, Handler&& handler)
   {
      exec_command(conn_, req, resp, std::forward<Handler>(handler));
   }

   boost::redis::connection::executor_type get_executor() noexcept { return conn_.get_executor(); }

private:
   struct pending_eval;
   void run();
   void exec_eval(std::shared_ptr<pending_eval> p, bool by_text);
   void on_eval(std::shared_ptr<pending_eval> p, bool by_text, error_code ec);
   void refuse(pending_eval& p);
   // Hands a finished call's reply to its caller now, or queues it for the next turn
   // (reply_slices); take_turn() is that turn, which post_turn() posts when one is due.
   void deliver(std::shared_ptr<pending_eval> p);
   void post_turn();
   void take_turn();
   void probe();
   boost::redis::request const& request_for(pending_eval& p, bool by_text) const;

   boost::redis::config cfg_;
   std::string name_;
   // Written by the connection's logger and TLS callbacks, before the connection they outlive.
   std::shared_ptr<link_health> health_;
   std::shared_ptr<std::function<void()>> on_connected_;  // called by the connection's logger
   boost::redis::connection conn_;
   call_deadlines deadlines_;  // the scripts' timeouts, one timer for all
   reply_slices slices_;       // how many replies reach their callers between two turns
   std::deque<std::shared_ptr<pending_eval>> waiting_;  // finished calls queued for a turn
   bool stopped_ = false;
   bool reconnecting_ = false;
   // Once a call timed out, new calls are refused at once until the node answers again (the
   // PING sent then, or an earlier call). Only with other nodes beside it: the single node of a
   // client is the quorum, and a refused call could only fail where a queued one may succeed.
   bool gated_;
   silence_gate gate_;
   // A master found through Sentinels: a READONLY reply means it was demoted, so the connection
   // asks the Sentinels again.
   bool sentinel_;
   // config::wait_replicas: WAIT behind each acquire and extend call.
   unsigned wait_replicas_;
   std::chrono::milliseconds replica_timeout_;
   log_sink log_;  // config::logger
};

}  // namespace locksmith::detail

#endif
