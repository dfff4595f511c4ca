// A Redis Cluster of real processes for the integration tests: N cluster-enabled masters on
// free loopback ports, each given an equal range of slots with CLUSTER ADDSLOTS and joined
// with CLUSTER MEET (no redis-cli, which may prompt), and optionally a replica of each master
// (CLUSTER REPLICATE), so that killing a master fails it over. No Boost.Test here.
#pragma once

#include "support/redis_server.hpp"
#include "support/temp_dir.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace locksmith::test {

class cluster_group {
public:
   /// Starts the masters, assigns the slots and waits (at most 20 s) until every master says
   /// cluster_state:ok and knows the others. Throws std::runtime_error otherwise.
   explicit cluster_group(std::size_t masters = 3);

   /// With `with_replicas`, each master also gets a replica, and every node a short
   /// cluster-node-timeout (1500 ms), so that a killed master fails over in a few seconds; the
   /// constructor then also waits (at most 30 s) until each replica is its master's, with its
   /// replication link up. A `node_timeout` above zero is every node's cluster-node-timeout
   /// instead (the chaos kit's failover measures it against the time to promote a replica).
   cluster_group(std::size_t masters, bool with_replicas,
                 std::chrono::milliseconds node_timeout = {});

   std::size_t size() const { return masters_.size(); }
   /// The master given its slots at the start (after a failover, no longer a master).
   redis_server& master(std::size_t i) { return *masters_.at(i); }
   /// The replica of master(i); throws std::out_of_range without replicas.
   redis_server& replica(std::size_t i) { return *replicas_.at(i); }

   /// `redis+cluster://127.0.0.1:<p1>,...`, every master a seed.
   std::string url() const;

   /// The master that was given `slot` at the start.
   std::size_t first_owner(std::uint16_t slot) const;

   /// The master's node id (CLUSTER MYID).
   std::string id(std::size_t i) const;

   /// The node ids that `CLUSTER NODES`, asked of `s`, lists as masters that are not failed.
   static std::vector<std::string> live_masters(redis_server const& s);

   /// Moving `slot` with its keys from master `from` to master `to`, as redis-cli's resharding
   /// does. The start: IMPORTING on `to`, MIGRATING on `from`, and MIGRATE of every key in the
   /// slot. The keys are then on `to` while `from` still owns the slot, and redirects requests
   /// for them there with ASK.
   void start_migration(std::uint16_t slot, std::size_t from, std::size_t to);
   /// The first step of a move alone: IMPORTING on `to`, MIGRATING on `from`; the keys stay.
   void mark_migration(std::uint16_t slot, std::size_t from, std::size_t to);
   /// MIGRATE from `from` to `to` of the keys named, or of every key left in the slot.
   void migrate_keys(std::uint16_t slot, std::size_t from, std::size_t to,
                     std::vector<std::string> const& keys = {});
   /// The end: `to` owns the slot, and every master knows it (others redirect with MOVED).
   void end_migration(std::uint16_t slot, std::size_t to);

private:
   bool ready() const;
   bool replicas_ready() const;
   std::unique_ptr<redis_server> start_node(std::string const& name,
                                            std::string const& node_timeout);

   temp_dir dir_{"locksmith-cluster"};
   std::vector<std::unique_ptr<redis_server>> masters_;
   std::vector<std::unique_ptr<redis_server>> replicas_;  // [i] replicates masters_[i]
};

}  // namespace locksmith::test
