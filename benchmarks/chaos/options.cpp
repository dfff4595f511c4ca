// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "options.hpp"

#include <CLI/CLI.hpp>

#include <iostream>

namespace locksmith::bench {

namespace {

std::string scenario_help()
{
   return "what to run, in order (comma-separated): faults (the default: random faults), or an "
          "operation under load: slot-move (a slot with --filler-keys other keys moved by hand, "
          "SETSLOT IMPORTING/MIGRATING, MIGRATE in batches, SETSLOT NODE), reshard (the stock "
          "redis-cli --cluster reshard of 2 such slots), failover (kill -9 of a master with a "
          "replica, the old master restarted once the replica is promoted), manual-failover "
          "(CLUSTER FAILOVER), rolling-restart (5 single nodes restarted empty one at a time, "
          "spaced by the README's rule), sentinel-failover (SENTINEL FAILOVER of a master with "
          "one replica)";
}

// The options that only the operation scenarios read, and those whose default is theirs.
void add_operation_options(CLI::App& app, request& q)
{
   app.add_option("--scenario", q.scenarios, scenario_help())
      ->delimiter(',')
      ->check(CLI::IsMember([] {
         auto names = operation_scenarios();
         names.push_back("faults");
         return names;
      }()));
   app.add_option("--wait-ms", q.x.wait_ms,
                  "each attempt's wait (default 3000; the operations 5000, failover and "
                  "sentinel-failover 20000)")
      ->check(CLI::Range(0, 600000));
   app.add_option("--filler-keys", q.x.filler_keys,
                  "slot-move, reshard: other keys in each moved slot (default 20000)")
      ->check(CLI::Range(0, 10'000'000));
   app.add_option("--migrate-batch", q.x.batch, "slot-move: keys per MIGRATE (default 100)")
      ->check(CLI::Range(1, 100000));
   app.add_option("--node-timeout-ms", q.x.node_timeout_ms,
                  "failover, manual-failover: cluster-node-timeout (default 1500)")
      ->check(CLI::Range(100, 600000));
   app.add_option("--restart-spacing-ms", q.x.spacing_ms,
                  "rolling-restart: start restarts this far apart (with --pause-ms 0 to go below "
                  "the rule); default: by the README's rule, once the previous node has been up "
                  "for the quarantine + --pause-ms")
      ->check(CLI::Range(1, 600000));
   app.add_option("--pause-ms", q.x.pause_ms,
                  "operations: quiet time once one has settled (default 1000)")
      ->check(CLI::Range(0, 600000));
   app.add_option("--wait-replicas", q.x.wait_replicas,
                  "config::wait_replicas (default 0; the failovers 1)")
      ->check(CLI::Range(0, 16));
}

}  // namespace

int parse_options(int argc, char** argv, request& q)
{
   auto& o = q.o;
   std::string duration = "60s";
   CLI::App app{"locksmith-chaos: mutual exclusion under random faults, and under an operator's "
                "routine operations, on redis-servers of its own"};
   add_operation_options(app, q);
   auto* nodes = app.add_option("--nodes", o.nodes, "lock nodes to start (default 5)")
                    ->check(CLI::Range(1, 15));
   app.add_option("--processes", o.processes, "worker processes (default 4)")
      ->check(CLI::Range(1, 64));
   app.add_option("--coroutines", o.coroutines, "coroutines per process (default 8)")
      ->check(CLI::Range(1, 256));
   app.add_option("--names", o.names, "lock names (default 8)")->check(CLI::Range(1, 100000));
   app.add_option("--duration", duration,
                  "how long to inject faults, or to repeat the operation, per scenario, e.g. "
                  "60s, 10m (default 60s)");
   app.add_option("--hold-ms", o.hold_ms,
                  "each holder holds for a random time below this; a loss ends it (default 1)")
      ->check(CLI::Range(1, 600000));
   auto* ttl =
      app.add_option("--ttl-ms", o.ttl_ms,
                     "lease TTL (default 2000; failover and sentinel-failover 10000; renewed by "
                     "the watchdog)")
         ->check(CLI::Range(200, 600000));
   auto* quarantine = app.add_option("--quarantine-ms", o.quarantine_ms,
                                     "config::restart_quarantine (default 3000; cluster "
                                     "scenarios 0)")
                         ->check(CLI::NonNegativeNumber);
   app.add_flag("!--no-fence", o.fence,
                "lock with lock_options::fence = false (a plain SET NX, no fencing token, so no "
                "fenced write at the resource); every scenario");
   app.add_option("--owner", o.owner,
                  "lock with lock_options::owner = LABEL (a holder label inside the lease's "
                  "value); every scenario")
      ->type_name("LABEL");
   app.add_flag("!--no-restarts", o.restarts, "no kill -9 and empty restarts");
   app.add_flag("!--no-delay", o.delay,
                "no network delay (tc netem as root where the kernel has it, else a TCP proxy)");
   try {
      app.parse(argc, argv);
   } catch (CLI::ParseError const& e) {
      return app.exit(e);
   }
   // The operation scenarios keep their own defaults for what was not given.
   if (nodes->count() > 0)
      q.x.nodes = o.nodes;
   if (ttl->count() > 0)
      q.x.ttl_ms = o.ttl_ms;
   if (quarantine->count() > 0)
      q.x.quarantine_ms = o.quarantine_ms;
   if (q.x.wait_ms)
      o.wait_ms = *q.x.wait_ms;
   auto const unit = duration.find_first_not_of("0123456789");
   if (unit == 0 || unit == std::string::npos ||
       (duration.substr(unit) != "s" && duration.substr(unit) != "m")) {
      std::cerr << "locksmith-chaos: --duration takes e.g. 60s or 10m\n";
      return 2;
   }
   o.seconds = std::stoi(duration.substr(0, unit)) * (duration.substr(unit) == "m" ? 60 : 1);
   return -1;
}

}  // namespace locksmith::bench
