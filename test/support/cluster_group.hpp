// A Redis Cluster of real processes for the integration tests: N cluster-enabled masters on
// free loopback ports, each given an equal range of slots with CLUSTER ADDSLOTSRANGE and joined
// with CLUSTER MEET (no redis-cli, which may prompt). No replicas. No Boost.Test here.
#pragma once

#include "support/redis_server.hpp"
#include "support/temp_dir.hpp"

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

   std::size_t size() const { return masters_.size(); }
   redis_server& master(std::size_t i) { return *masters_.at(i); }

   /// `redis+cluster://127.0.0.1:<p1>,...`, every master a seed.
   std::string url() const;

   /// The master that was given `slot` at the start.
   std::size_t first_owner(std::uint16_t slot) const;

   /// The master's node id (CLUSTER MYID).
   std::string id(std::size_t i) const;

   /// Moving `slot` with its keys from master `from` to master `to`, as redis-cli's resharding
   /// does. The start: IMPORTING on `to`, MIGRATING on `from`, and MIGRATE of every key in the
   /// slot. The keys are then on `to` while `from` still owns the slot, and redirects requests
   /// for them there with ASK.
   void start_migration(std::uint16_t slot, std::size_t from, std::size_t to);
   /// The end: `to` owns the slot, and every master knows it (others redirect with MOVED).
   void end_migration(std::uint16_t slot, std::size_t to);

private:
   bool ready() const;

   temp_dir dir_{"locksmith-cluster"};
   std::vector<std::unique_ptr<redis_server>> masters_;
};

}  // namespace locksmith::test
