// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "cluster.hpp"

#include "report.hpp"
#include "server.hpp"

#include "support/cluster_group.hpp"
#include "support/command_stats.hpp"
#include "support/contention.hpp"

#include <sched.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace locksmith::bench {
namespace {

// On a machine of 2 cores or more: every master on core 0, this process (the clients) on core 1,
// so that the clients do not take the masters' core. True when done.
bool pin(test::cluster_group& cluster)
{
   if (std::thread::hardware_concurrency() < 2)
      return false;
   cpu_set_t servers, clients;
   CPU_ZERO(&servers);
   CPU_ZERO(&clients);
   CPU_SET(0, &servers);
   CPU_SET(1, &clients);
   bool ok = sched_setaffinity(0, sizeof clients, &clients) == 0;
   for (std::size_t i = 0; i < cluster.size(); ++i)
      ok = sched_setaffinity(cluster.master(i).pid(), sizeof servers, &servers) == 0 && ok;
   return ok;
}

void unpin()
{
   cpu_set_t all;
   CPU_ZERO(&all);
   for (unsigned c = 0; c < std::max(1u, std::thread::hardware_concurrency()); ++c)
      CPU_SET(c, &all);
   sched_setaffinity(0, sizeof all, &all);
}

// Each master's CPU time (ms) and script calls so far.
struct master_counts {
   std::vector<double> cpu_ms;
   std::vector<std::int64_t> scripts;
};

master_counts counts(test::cluster_group& cluster)
{
   master_counts c;
   for (std::size_t i = 0; i < cluster.size(); ++i) {
      c.cpu_ms.push_back(process_cpu_ms(cluster.master(i).pid()).value_or(0));
      auto const stats = cluster.master(i).commandstats();
      c.scripts.push_back(test::calls_of(stats, "evalsha") + test::calls_of(stats, "eval"));
   }
   return c;
}

template <class T>
std::string json_list(std::vector<T> const& v)
{
   std::string s = "[";
   for (std::size_t i = 0; i < v.size(); ++i)
      s += (i ? "," : "") + number(static_cast<double>(v[i]));
   return s + "]";
}

struct result {
   int masters = 0;
   bool pinned = false;
   test::contention_tally t;
   double server_us_per_acq = 0;  // all masters' CPU over the acquisitions
   master_counts by_master;       // during the run
};

std::string row(test::contention_shape const& s, result const& r, bool json)
{
   std::ostringstream os;
   auto const per_core = r.server_us_per_acq > 0 ? 1e6 / r.server_us_per_acq : 0;
   if (json) {
      os << R"({"scenario":"cluster","fence":)" << (s.fence ? "true" : "false") << R"(,"masters":)"
         << r.masters << R"(,"clients":)" << s.clients << R"(,"coroutines":)" << s.coroutines
         << R"(,"names":)" << s.names << R"(,"pinned":)" << (r.pinned ? "true" : "false")
         << R"(,"cycles":)" << r.t.cycles << R"(,"cycles_per_s":)" << number(r.t.per_second())
         << R"(,"server_cpu_us_per_acquisition":)" << number(r.server_us_per_acq)
         << R"(,"acquisitions_per_s_per_server_core":)" << number(per_core)
         << R"(,"server_cpu_ms_by_master":)" << json_list(r.by_master.cpu_ms)
         << R"(,"script_calls_by_master":)" << json_list(r.by_master.scripts) << R"(,"overlaps":)"
         << r.t.overlaps << R"(,"fence_inversions":)" << r.t.inversions << R"(,"errors":)"
         << r.t.errors << "}\n";
   } else {
      char line[240];
      std::snprintf(line, sizeof line,
                    "cluster  masters=%d  %8ld cycles  %9.0f/s  server CPU %.1f us/acq (%.0f/s per "
                    "core)  overlaps %ld  inversions %ld  errors %ld%s\n",
                    r.masters, r.t.cycles, r.t.per_second(), r.server_us_per_acq, per_core,
                    r.t.overlaps, r.t.inversions, r.t.errors, r.pinned ? "  (pinned)" : "");
      os << line;
   }
   return os.str();
}

}  // namespace

bool run_cluster(cluster_plan const& plan)
{
   bool sane = true;
   std::vector<result> results;
   // Independent names: 64 coroutines in 2 clients pick among 4096 names and hold for 0, so a
   // name is rarely contended, and every master gets its share of the slots.
   test::contention_shape const s{.clients = 2,
                                  .coroutines = 32,
                                  .names = 4096,
                                  .cycles = LONG_MAX,
                                  .budget = plan.duration,
                                  .max_hold = std::chrono::microseconds{0},
                                  .fence = plan.fence,
                                  .node_timeout = std::chrono::milliseconds{50},
                                  .names_prefix = {}};
   for (int n : plan.masters) {
      test::cluster_group cluster{static_cast<std::size_t>(n)};
      result r;
      r.masters = n;
      r.pinned = pin(cluster);
      auto const before = counts(cluster);
      r.t = test::run_contention({cluster.url()}, s);
      r.by_master = counts(cluster);
      unpin();
      double cpu = 0;
      for (std::size_t i = 0; i < cluster.size(); ++i) {
         r.by_master.cpu_ms[i] -= before.cpu_ms[i];
         r.by_master.scripts[i] -= before.scripts[i];
         cpu += r.by_master.cpu_ms[i];
      }
      r.server_us_per_acq = r.t.cycles > 0 ? cpu * 1000 / static_cast<double>(r.t.cycles) : 0;
      std::cout << row(s, r, plan.json) << std::flush;
      if (r.t.overlaps || r.t.inversions || r.t.errors || r.t.cycles == 0) {
         sane = false;
         std::cerr << "locksmith-bench: sanity check failed for cluster masters=" << n << ": "
                   << r.t.cycles << " cycles, " << r.t.overlaps << " overlaps, " << r.t.inversions
                   << " fence inversions, " << r.t.errors << " errors\n";
         for (auto const& [kind, count] : r.t.kinds)
            std::cerr << "  " << kind << ": " << count << "\n";
      }
      results.push_back(std::move(r));
   }
   if (results.size() >= 2 && results.front().t.per_second() > 0) {
      auto const ratio = results.back().t.per_second() / results.front().t.per_second();
      if (plan.json)
         std::cout << R"({"scenario":"cluster","masters":)" << results.back().masters
                   << R"(,"scaling_over_masters_)" << results.front().masters << R"(":)"
                   << number(ratio) << "}\n";
      else
         std::cout << "cluster  " << results.back().masters << " masters / "
                   << results.front().masters << " = " << number(ratio) << "\n";
   }
   return sane;
}

}  // namespace locksmith::bench
