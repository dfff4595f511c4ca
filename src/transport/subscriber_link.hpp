// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// A node's subscriber connection: SUBSCRIBE, UNSUBSCRIBE (and their sharded forms) and the pushes
// they bring, read by a receive loop that never waits on anything slow.
#ifndef LOCKSMITH_SRC_SUBSCRIBER_LINK_HPP
#define LOCKSMITH_SRC_SUBSCRIBER_LINK_HPP

#include "transport/node.hpp"

#include "sansio/link_health.hpp"
#include "sansio/url.hpp"
#include <locksmith/config.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/redis/connection.hpp>
#include <boost/redis/resp3/flat_tree.hpp>

#include <memory>
#include <string>

namespace locksmith::detail {

/// One Boost.Redis connection for pub/sub only, apart from the command connection (command_link),
/// whose replies a request without one would shift. Its first subscription is the connection
/// marker (connection_marker), which Boost.Redis restores first after each reconnect: its
/// confirmation reads as a `connected` push.
///
/// Every operation started on the connection holds the link (shared_from_this) until it
/// completes: Boost.Redis's operations use their connection until then.
class subscriber_link : public std::enable_shared_from_this<subscriber_link> {
public:
   subscriber_link(boost::asio::any_io_executor ex, node_url const& url, config const& cfg);

   /// Starts the run loop and the receive loop, which keep the link alive until stop(), and
   /// subscribes to the marker; each push goes to `on_push`, in order.
   void start(push_handler on_push);
   /// Stops both loops.
   void stop();

   /// Uses request::subscribe, which Boost.Redis restores after a reconnect.
   void subscribe(std::string const& channel);
   void unsubscribe(std::string const& channel);

   /// redis_node::shard_subscribe: SSUBSCRIBE (or SUNSUBSCRIBE) of the channel.
   void shard_subscribe(std::string const& channel, bool subscribe);

   /// Drops the connection as a server that closes it does, so that Boost.Redis connects again
   /// (asking the Sentinels again, for a Sentinel node) and restores the subscriptions. Ending
   /// the run instead would forget them.
   void drop();

private:
   void send(boost::redis::request req);
   void receive_loop();
   void dispatch_pushes();

   boost::redis::config cfg_;
   std::string marker_;  // the connection marker channel (pushes.hpp)
   // Written by the connection's logger and TLS callbacks, before the connection they outlive.
   std::shared_ptr<link_health> health_;
   boost::redis::connection conn_;
   boost::redis::resp3::flat_tree pushes_;  // whole pushes only, errors among them (parse_pushes)
   push_handler on_push_;
   bool stopped_ = false;
};

}  // namespace locksmith::detail

#endif
