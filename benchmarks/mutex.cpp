// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "mutex.hpp"

#include "cpu.hpp"
#include "report.hpp"
#include "server.hpp"

#include "support/contention.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

namespace locksmith::bench {
namespace {

using test::contention_shape;
using test::contention_tally;

long lowest(contention_tally const& t)
{
   return t.per_client.empty() ? 0 : *std::min_element(t.per_client.begin(), t.per_client.end());
}

long highest(contention_tally const& t)
{
   return t.per_client.empty() ? 0 : *std::max_element(t.per_client.begin(), t.per_client.end());
}

double longest_wait_ms(contention_tally const& t)
{
   return std::chrono::duration<double, std::milli>(t.longest_wait).count();
}

double per_cycle(contention_tally const& t, std::uint64_t n)
{
   return t.cycles > 0 ? static_cast<double>(n) / static_cast<double>(t.cycles) : 0;
}

// CPU per cycle, in µs: of this process (the clients, which run here) and of the servers summed.
// On a saturated machine the rate is the inverse of their sum.
struct cycle_cost {
   double client_us = 0;
   std::optional<double> server_us;
   // The servers' commands per cycle (INFO commandstats, without INFO), those that scripts ran
   // included, and the requests among them (a script call is one): none if a node cannot be
   // asked.
   std::optional<double> commands;
   std::optional<double> requests;
};

// Fills the cost's commands and requests from INFO commandstats taken before and after a run.
void count_commands(cycle_cost& cost, double cycles,
                    std::optional<std::map<std::string, std::int64_t>> const& before,
                    std::optional<std::map<std::string, std::int64_t>> const& after)
{
   if (!before || !after)
      return;
   auto const info = [](auto const& m) {
      auto const it = m.find("info");
      return it == m.end() ? std::int64_t{0} : it->second;
   };
   auto const all =
      sum_calls(*after, false) - sum_calls(*before, false) - info(*after) + info(*before);
   auto const in_scripts = sum_calls(*after, true) - sum_calls(*before, true);
   cost.commands = static_cast<double>(all) / cycles;
   cost.requests = static_cast<double>(all - in_scripts) / cycles;
}

std::string row(int nodes, contention_shape const& s, contention_tally const& t,
                cycle_cost const& cost, bool json)
{
   std::ostringstream os;
   char const* strategy = s.spin ? "spin" : "subscribe";
   if (json) {
      os << R"({"scenario":"mutex","nodes":)" << nodes << R"(,"strategy":")" << strategy
         << R"(","fence":)" << (s.fence ? "true" : "false") << R"(,"spin_interval_ms":2,"clients":)"
         << s.clients << R"(,"coroutines":)" << s.coroutines << R"(,"names":)" << s.names
         << R"(,"max_hold_us":)" << s.max_hold.count() << R"(,"cycles":)" << t.cycles
         << R"(,"cycles_per_s":)" << number(t.per_second()) << R"(,"overlaps":)" << t.overlaps
         << R"(,"fence_inversions":)" << t.inversions << R"(,"errors":)" << t.errors
         << R"(,"per_client_min":)" << lowest(t) << R"(,"per_client_max":)" << highest(t)
         << R"(,"longest_wait_ms":)" << number(longest_wait_ms(t)) << R"(,"tries_per_cycle":)"
         << number(per_cycle(t, t.tries)) << R"(,"retries_lost_per_cycle":)"
         << number(per_cycle(t, t.retries_lost)) << R"(,"commands_per_cycle":)"
         << json_number(cost.commands) << R"(,"requests_per_cycle":)" << json_number(cost.requests)
         << R"(,"client_cpu_us_per_cycle":)" << number(cost.client_us)
         << R"(,"server_cpu_us_per_cycle":)" << json_number(cost.server_us) << "}\n";
   } else {
      char line[400];
      std::snprintf(line, sizeof line,
                    "mutex  nodes=%d  %-12s  %8ld cycles  %9.0f/s  per client %ld..%ld  overlaps "
                    "%ld  inversions %ld  errors %ld  wait max %.0f ms  tries/cycle %.2f  "
                    "relost/cycle %.2f  "
                    "cmd/cycle %s  req/cycle %s  cpu/cycle client %.0f us, servers %s us\n",
                    nodes, (std::string{strategy} + (s.fence ? "" : "-nf")).c_str(), t.cycles,
                    t.per_second(), lowest(t), highest(t), t.overlaps, t.inversions, t.errors,
                    longest_wait_ms(t), per_cycle(t, t.tries), per_cycle(t, t.retries_lost),
                    cost.commands ? number(*cost.commands).c_str() : "-",
                    cost.requests ? number(*cost.requests).c_str() : "-", cost.client_us,
                    cost.server_us ? number(*cost.server_us).c_str() : "-");
      os << line;
   }
   return os.str();
}

}  // namespace

bool run_mutex(mutex_plan const& plan)
{
   bool sane = true;
   for (int n : plan.nodes) {
      std::vector<std::unique_ptr<redis_process>> servers;
      std::vector<std::string> urls;
      for (int i = 0; i < n; ++i) {
         servers.push_back(std::make_unique<redis_process>());
         urls.push_back(servers.back()->url());
      }
      // The servers' CPU time summed, in ms: none if one cannot be read.
      auto const servers_cpu = [&]() -> std::optional<double> {
         double sum = 0;
         for (auto const& p : servers) {
            auto const ms = process_cpu_ms(p->pid());
            if (!ms)
               return std::nullopt;
            sum += *ms;
         }
         return sum;
      };
      double rate[2] = {0, 0};
      for (bool spin : {false, true}) {
         // The library's defaults, but spin at 2 ms, as the comparison asks.
         contention_shape s{.cycles = LONG_MAX,
                            .budget = plan.duration,
                            .spin = spin,
                            .fence = plan.fence,
                            .node_timeout = std::chrono::milliseconds{50}};
         auto const calls0 = command_calls(urls);
         auto const client0 = cpu_ms_now();
         auto const server0 = servers_cpu();
         auto const t = test::run_contention(urls, s);
         auto const server1 = servers_cpu();
         auto const cycles = static_cast<double>(std::max(t.cycles, 1L));
         cycle_cost cost;
         cost.client_us = (cpu_ms_now() - client0) * 1e3 / cycles;
         if (server0 && server1)
            cost.server_us = (*server1 - *server0) * 1e3 / cycles;
         count_commands(cost, cycles, calls0, command_calls(urls));
         rate[spin] = t.per_second();
         std::cout << row(n, s, t, cost, plan.json) << std::flush;
         if (t.overlaps || t.inversions || t.errors) {
            sane = false;
            std::cerr << "locksmith-bench: sanity check failed for mutex nodes=" << n << ": "
                      << t.overlaps << " overlaps, " << t.inversions << " fence inversions, "
                      << t.errors << " errors\n";
            for (auto const& [kind, count] : t.kinds)
               std::cerr << "  " << kind << ": " << count << "\n";
         }
      }
      auto const ratio = rate[1] > 0 ? rate[0] / rate[1] : 0;
      if (plan.json)
         std::cout << R"({"scenario":"mutex","nodes":)" << n << R"(,"subscribe_over_spin":)"
                   << number(ratio) << "}\n";
      else
         std::cout << "mutex  nodes=" << n << "  subscribe / spin = " << number(ratio) << "\n";
      if (ratio < 1)
         std::cerr << "locksmith-bench: target missed: with " << n
                   << " nodes subscribe ran slower than spin{2ms, 2ms} (" << number(ratio)
                   << " x)\n";
   }
   return sane;
}

}  // namespace locksmith::bench
