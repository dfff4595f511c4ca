// The fixtures of the Redis Cluster tests (test_cluster*.cpp): three masters of real processes,
// optionally each with a replica, and what the tests ask of them (a name on a given master, the
// errors, subscribers and publishes that the masters counted).
#pragma once

#include "support/cluster_group.hpp"
#include "support/command_stats.hpp"
#include "support/integration.hpp"

#include "sansio/cluster.hpp"

#include <algorithm>
#include <set>
#include <string>

namespace locksmith::test {

struct cluster_fixture : context_fixture {
   cluster_group cluster;

   explicit cluster_fixture(bool with_replicas = false)
       : cluster{3, with_replicas}
   {}

   // A generous node timeout: a loaded 2-core machine.
   locksmith::config cfg() const { return test_config({cluster.url()}, 1s); }

   static std::uint16_t slot_of(std::string const& name)
   {
      return locksmith::detail::hash_slot(lock_key(name));
   }

   // A fresh name whose slot master `i` was given.
   std::string name_on(std::size_t i) const
   {
      for (int k = 0;; ++k) {
         auto name = unique_key() + "/" + std::to_string(k);
         if (cluster.first_owner(slot_of(name)) == i)
            return name;
      }
   }

   // A fresh prefix P such that the names P0 ... P(n-1) have slots on every master.
   std::string names_on_every_master(int n) const
   {
      for (int attempt = 0;; ++attempt) {
         auto prefix = unique_key() + "/" + std::to_string(attempt) + "/";
         std::set<std::size_t> owners;
         for (int k = 0; k < n; ++k)
            owners.insert(cluster.first_owner(slot_of(prefix + std::to_string(k))));
         if (owners.size() == cluster.size())
            return prefix;
      }
   }

   // The errors that master `i` answered, counted by their first word (INFO errorstats).
   std::string errors(std::size_t i) { return cluster.master(i).text({"INFO", "errorstats"}); }

   // The plain and the sharded subscribers of a channel at master `i`.
   long long subscribers(std::size_t i, std::string const& channel)
   {
      return count_of(cluster.master(i).command({"PUBSUB", "NUMSUB", channel}));
   }
   long long shard_subscribers(std::size_t i, std::string const& channel)
   {
      return count_of(cluster.master(i).command({"PUBSUB", "SHARDNUMSUB", channel}));
   }
   static long long count_of(locksmith::test::reply const& r)
   {
      return r.elements.size() == 2u ? r.elements[1].integer : -1;
   }

   // True when no master ran a PUBLISH: a cluster's releases publish with SPUBLISH.
   bool no_plain_publish()
   {
      for (std::size_t i = 0; i < cluster.size(); ++i)
         if (calls_of(cluster.master(i).commandstats(), "publish") != 0)
            return false;
      return true;
   }

   // True when no master ever answered CROSSSLOT.
   bool no_crossslot()
   {
      for (std::size_t i = 0; i < cluster.size(); ++i)
         if (errors(i).find("CROSSSLOT") != std::string::npos)
            return false;
      return true;
   }
};

// Three masters, each with a replica that takes over within a few seconds of its death.
struct failover_fixture : cluster_fixture {
   failover_fixture()
       : cluster_fixture(true)
   {}

   // A replication offset from INFO replication; -1 when it is not there.
   static long long offset(redis_server const& s, std::string const& field)
   {
      auto const info = s.text({"INFO", "replication"});
      auto const at = info.find(field + ":");
      return at == std::string::npos ? -1 : std::stoll(info.substr(at + field.size() + 1));
   }

   // True when master `i`'s replica is a master, as `CLUSTER NODES` of a surviving node says.
   bool promoted(std::size_t i, std::size_t asked)
   {
      auto const id = cluster.replica(i).text({"CLUSTER", "MYID"});
      auto const masters = cluster_group::live_masters(cluster.master(asked));
      return std::find(masters.begin(), masters.end(), id) != masters.end() &&
             cluster.master(asked).text({"CLUSTER", "INFO"}).find("cluster_state:ok") !=
                std::string::npos;
   }
};

}  // namespace locksmith::test
