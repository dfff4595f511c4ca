// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The operation scenarios of locksmith-chaos: what an operator does on the servers as routine
// work (move a slot, reshard, fail a master over, restart nodes one by one), under the same
// workers and checks as the faults, with what it costs the lock's users measured.
#ifndef LOCKSMITH_CHAOS_OPERATIONS_HPP
#define LOCKSMITH_CHAOS_OPERATIONS_HPP

#include "worker.hpp"

#include <chrono>
#include <csignal>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace locksmith::bench {

/// The knobs of the operation scenarios (chaos_options holds the workload's).
struct ops_options {
   int filler_keys = 20'000;     // other keys in each slot that moves, with the lock's hash tag
   int batch = 100;              // keys per MIGRATE, in a move by hand
   int node_timeout_ms = 1'500;  // cluster-node-timeout of a cluster with replicas
   int spacing_ms = 0;           // rolling-restart: from one start to the next; 0: the README rule
   int pause_ms = 1'000;         // quiet time after an operation has settled
   int wait_replicas = -1;       // config::wait_replicas; -1: the scenario's own (1 for failovers)
   // Given on the command line, else the scenario's own.
   std::optional<int> nodes, ttl_ms, wait_ms, quarantine_ms;
};

/// The names `--scenario` takes besides `faults`, in the order --help lists them.
std::vector<std::string> const& operation_scenarios();

/// One operation scenario's servers and its operation.
class scenario {
public:
   virtual ~scenario() = default;
   /// config::nodes of the workers.
   virtual std::vector<std::string> worker_nodes() const = 0;
   /// Operation k. Calls `begin` (which marks the operation's start for the workers) right
   /// before its first action, and returns how long it took from there, in ms. Throws
   /// std::runtime_error when the operation itself failed.
   virtual double operate(int k, std::function<void()> const& begin) = 0;
   /// Waits until the servers are ready for the next operation (a restarted node resynced).
   virtual void settle() {}
   /// The nodes checked at the end for lock keys left and subscriptions left over.
   virtual std::vector<std::string> check_urls() const = 0;
   /// More fields of the scenario's JSON line, each starting with a comma.
   virtual std::string json_fields() const { return {}; }
   /// Whether a lost lease is a failure: not where a master's last writes may be lost.
   virtual bool keeps_leases() const { return true; }
   /// The least time from one operation's start to the next's.
   virtual std::chrono::milliseconds spacing() const { return {}; }
};

/// slot-move, reshard, failover or manual-failover: a Redis Cluster of 3 masters (with a replica
/// each for the failovers). Sets the workload's names (o.labels) and its defaults.
std::unique_ptr<scenario> make_cluster_scenario(std::string const& name, chaos_options& o,
                                                ops_options const& x);

/// rolling-restart: 5 single nodes (o.nodes), restarted empty one at a time.
std::unique_ptr<scenario> make_rolling_restart(chaos_options& o, ops_options const& x);

/// sentinel-failover: a master, its replica and 3 Sentinels; `SENTINEL FAILOVER`.
std::unique_ptr<scenario> make_sentinel_failover(chaos_options& o, ops_options const& x);

/// Runs one operation scenario for o.seconds and prints its JSON line. Returns 0, 1 when a check
/// failed, 2 when it could not run or was interrupted.
int run_operation_scenario(std::string const& name, chaos_options o, ops_options const& x,
                           volatile std::sig_atomic_t const& interrupted);

}  // namespace locksmith::bench

#endif
