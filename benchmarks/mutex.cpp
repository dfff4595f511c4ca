// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "mutex.hpp"

#include "report.hpp"
#include "server.hpp"

#include "support/contention.hpp"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <iostream>
#include <memory>
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

std::string row(int nodes, contention_shape const& s, contention_tally const& t, bool json)
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
         << R"(,"per_client_min":)" << lowest(t) << R"(,"per_client_max":)" << highest(t) << "}\n";
   } else {
      char line[200];
      std::snprintf(line, sizeof line,
                    "mutex  nodes=%d  %-12s  %8ld cycles  %9.0f/s  per client %ld..%ld  overlaps "
                    "%ld  inversions %ld  errors %ld\n",
                    nodes, (std::string{strategy} + (s.fence ? "" : "-nf")).c_str(), t.cycles,
                    t.per_second(), lowest(t), highest(t), t.overlaps, t.inversions, t.errors);
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
      double rate[2] = {0, 0};
      for (bool spin : {false, true}) {
         // The library's defaults, but spin at 2 ms, as the comparison asks.
         contention_shape s{.cycles = LONG_MAX,
                            .budget = plan.duration,
                            .spin = spin,
                            .fence = plan.fence,
                            .node_timeout = std::chrono::milliseconds{50}};
         auto const t = test::run_contention(urls, s);
         rate[spin] = t.per_second();
         std::cout << row(n, s, t, plan.json) << std::flush;
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
