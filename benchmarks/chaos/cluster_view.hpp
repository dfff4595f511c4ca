// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// What the chaos kit's cluster operations ask of a Redis Cluster whose roles change under them:
// who owns a slot now, who replicates whom, and whether the cluster has settled.
#ifndef LOCKSMITH_CHAOS_CLUSTER_VIEW_HPP
#define LOCKSMITH_CHAOS_CLUSTER_VIEW_HPP

#include "support/redis_server.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace locksmith::bench {

/// The servers of one cluster, masters and replicas alike; roles are read from the servers
/// each time, never remembered.
class cluster_view {
public:
   void add(test::redis_server& s) { servers_.push_back(&s); }

   /// The master that a live master's CLUSTER NODES names for `slot`. Throws std::runtime_error
   /// when none does.
   test::redis_server& owner(std::uint16_t slot) const;

   /// The server that names `master` as its master. Throws std::runtime_error when none does.
   test::redis_server& replica_of(test::redis_server const& master) const;

   /// CLUSTER MYID.
   std::string id(test::redis_server const& s) const;

   /// True when the server runs and its INFO replication says role:master.
   static bool is_master(test::redis_server const& s);

   /// Every live master's URL.
   std::vector<std::string> live_urls() const;

   /// Waits (at most `timeout`) until every live server says cluster_state:ok and marks no node
   /// failed, and every replica's link to its master is up. False if that never happened.
   bool settle(std::chrono::milliseconds timeout) const;

private:
   bool settled() const;
   test::redis_server& by_id(std::string const& id) const;

   std::vector<test::redis_server*> servers_;
};

}  // namespace locksmith::bench

#endif
