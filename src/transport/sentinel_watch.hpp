// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// A Sentinel node's watch on its Sentinels: told of a switch of master, the node follows at once,
// instead of when the old master drops its connections at its demotion.
#ifndef LOCKSMITH_SRC_SENTINEL_WATCH_HPP
#define LOCKSMITH_SRC_SENTINEL_WATCH_HPP

#include "transport/log.hpp"
#include "transport/redis_node.hpp"

#include "sansio/sentinel_follow.hpp"
#include "sansio/url.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/redis/connection.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace locksmith::detail {

/// Watches the Sentinels of one `redis+sentinel://` node over one connection, to the first
/// Sentinel that answers (the next one when it fails): it subscribes to `+switch-master` and then
/// asks `SENTINEL GET-MASTER-ADDR-BY-NAME` (in that order, in one request, so that no switch falls
/// between the two), and does both again on each new connection, which catches a switch missed
/// while it had none. Each address named goes to master_follow, which says when the node must
/// drop its connections and ask the Sentinels again (redis_node::follow_master), until it
/// reaches the master named (sentinel_node then sends its recent releases again).
///
/// What it changes for safety: nothing that a demotion did not already do, only sooner. The
/// node reaches the new master by the same path (Boost.Redis asks the Sentinels, checks ROLE),
/// its restart quarantine judges the server on the new connection as before, and `wait_replicas`
/// is counted by the master that grants. A grant on the old master after the promotion is lost
/// as it was, but the window in which this client makes one ends at its switch, not at the
/// demotion (docs/guarantees.md, Sentinel).
class sentinel_watch : public std::enable_shared_from_this<sentinel_watch> {
public:
   /// What the watch does to its node: drop its connections, so that they ask the Sentinels
   /// again (redis_node::follow_master), and what it is told once a reconnect it asked for
   /// reached the master named.
   struct actions {
      std::function<void()> follow;
      std::function<void()> arrived;
   };

   /// `url` is the node's (its Sentinels and master name); the node is held weakly.
   sentinel_watch(boost::asio::any_io_executor ex, node_url const& url, config const& cfg,
                  std::shared_ptr<redis_node> const& node, actions act);

   void start();
   /// Ends the connection and the timers; nothing is called afterwards.
   void stop();

private:
   struct link;
   void connect();
   void receive(std::shared_ptr<link> l);
   void on_pushes(link& l);
   void on_run_end();
   void named(std::string address, char const* how);
   void step();

   boost::asio::any_io_executor ex_;
   std::vector<endpoint> sentinels_;
   std::string master_name_;
   std::weak_ptr<redis_node> node_;
   actions act_;
   std::string node_name_;
   std::chrono::milliseconds health_check_;
   std::size_t next_ = 0;    // the Sentinel to connect to next
   std::size_t failed_ = 0;  // Sentinels that failed in a row
   std::shared_ptr<link> link_;
   boost::asio::steady_timer retry_timer_;
   boost::asio::steady_timer step_timer_;
   master_follow follow_;
   bool stopped_ = false;
   log_sink log_;
};

}  // namespace locksmith::detail

#endif
