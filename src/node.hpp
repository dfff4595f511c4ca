// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// One Redis node: a Boost.Redis connection (commands and RESP3 pushes), its run loop, its push
// receive loop, and script calls with a per-call timeout and the NOSCRIPT fallback.
#ifndef LOCKSMITH_SRC_NODE_HPP
#define LOCKSMITH_SRC_NODE_HPP

#include <locksmith/config.hpp>
#include <locksmith/detail/scripts.hpp>
#include <locksmith/detail/url.hpp>
#include <locksmith/error.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/redis/connection.hpp>

#include <chrono>
#include <functional>
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
   boost::redis::request by_sha;  // EVALSHA sha nkeys keys... args...

   /// EVAL text nkeys keys... args..., built on first use: only after NOSCRIPT, which is rare,
   /// and the text is most of the bytes.
   boost::redis::request const& by_text() const;

private:
   mutable std::optional<boost::redis::request> by_text_;
};

/// What one node answered to one script call.
struct node_reply {
   error_code ec;                        // transport error, timeout, or server error
   std::string server_message;           // the server's error text, or the connection's last problem
   boost::redis::generic_response resp;  // the reply, when !ec
   std::chrono::steady_clock::duration latency{};
};

/// What the acquire engine needs of a node. The engine runs over this interface so that unit
/// tests can drive it over fake nodes with injected failures.
class node {
public:
   virtual ~node() = default;

   /// Calls the script; `done(node_reply&&)` runs on the node's executor, never inline. The call
   /// is cancelled after `timeout`, which then reads as asio::error::timed_out.
   ///
   /// On NOSCRIPT the script's text is sent, but only if `still_wanted()` says so: an acquire
   /// fallback sent after the caller gave up would land behind the release it sent meanwhile, and
   /// take a key that nobody releases.
   virtual void eval(
      std::shared_ptr<script_call const> call,
      std::chrono::milliseconds timeout,
      std::function<bool()> still_wanted,
      std::function<void(node_reply&&)> done) = 0;

   /// Subscribes to the channel, to be restored after a reconnect. Commands on one connection
   /// run in order, so a script sent after this runs after the subscription is active.
   virtual void subscribe(std::string const& channel) = 0;
   virtual void unsubscribe(std::string const& channel) = 0;

   /// Starts the node's loops; stops them (pending calls then complete with an error).
   virtual void start() = 0;
   virtual void stop() = 0;

   /// The node's URL without its password.
   virtual std::string const& name() const noexcept = 0;
};

/// A node on a Boost.Redis connection.
class redis_node final : public node, public std::enable_shared_from_this<redis_node> {
public:
   using message_handler = std::function<void(std::string_view channel)>;

   redis_node(boost::asio::any_io_executor ex, node_url url, config const& cfg, message_handler on_message);

   /// Starts the connection's run loop and the push receive loop. Both keep the node alive.
   void start() override;

   /// Stops both loops; pending calls complete with an error.
   void stop() override;

   void eval(
      std::shared_ptr<script_call const> call,
      std::chrono::milliseconds timeout,
      std::function<bool()> still_wanted,
      std::function<void(node_reply&&)> done) override;

   /// Uses request::subscribe, which Boost.Redis restores after a reconnect.
   void subscribe(std::string const& channel) override;
   void unsubscribe(std::string const& channel) override;

   std::string const& name() const noexcept override { return name_; }

   boost::redis::connection& connection() noexcept { return conn_; }

private:
   struct pending_eval;
   void exec_eval(std::shared_ptr<pending_eval> p, bool by_text);
   void receive_loop();
   void dispatch_pushes();

   boost::redis::config cfg_;
   std::string name_;
   std::shared_ptr<std::string> last_problem_;  // written by the connection's logger
   boost::redis::connection conn_;
   boost::redis::generic_response pushes_;
   message_handler on_message_;
   bool stopped_ = false;
};

}  // namespace locksmith::detail

#endif
