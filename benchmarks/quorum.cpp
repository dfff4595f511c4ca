// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "quorum.hpp"

#include "report.hpp"
#include "runner.hpp"
#include "server.hpp"
#include "stats.hpp"

#include "sansio/quorum.hpp"

#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>

namespace locksmith::bench {
namespace {

/// The figures of one quorum run.
struct quorum_summary {
   int nodes = 0, quorum = 0, frozen = 0;
   double node_timeout_ms = 0;
   bool reachable = true;  // frozen <= nodes - quorum
   std::int64_t acquisitions = 0;
   double acquisitions_per_s = 0;
   percentiles cycle_us, acquire_us;
   std::optional<double> cycle_max_us;
   std::size_t unreachable = 0;  // attempts that ended in quorum_unreachable, as expected
   std::optional<double> unreachable_p50_us, unreachable_p99_us;
   std::optional<double> commands_per_acquisition, requests_per_acquisition;  // live nodes only
   std::optional<double> client_cpu_us_per_acquisition;
   std::optional<double> p99_over_healthy_us;   // cycle p99 minus that of the run with none frozen
   std::optional<double> p50_ratio, cpu_ratio;  // cycle p50 and client CPU over the healthy run's
   std::int64_t overlaps = 0, failures = 0;
   std::string error;
   bool renew = true;
   bool fence = true;
   bool sane = false;
};

// The run with no node frozen, which the others are measured against.
struct healthy_run {
   std::optional<double> p50, p99, cpu;
};

// Issue 9's targets with nodes frozen, as ratios to the healthy run of the same invocation.
constexpr double p50_ratio_target = 1.1;
constexpr double cpu_ratio_target = 1.2;

std::optional<double> ratio(std::optional<double> a, std::optional<double> b)
{
   if (!a || !b || *b <= 0)
      return std::nullopt;
   return *a / *b;
}

quorum_summary summarize(run_result& r, healthy_run const& healthy)
{
   quorum_summary s;
   s.nodes = static_cast<int>(r.spec.nodes.size());
   s.quorum = static_cast<int>(detail::quorum_of(r.spec.nodes.size()));
   s.frozen = r.spec.frozen;
   s.node_timeout_ms = static_cast<double>(r.spec.node_timeout.count());
   s.reachable = s.frozen <= s.nodes - s.quorum;
   s.acquisitions = r.acquisitions();
   s.acquisitions_per_s = r.seconds > 0 ? static_cast<double>(s.acquisitions) / r.seconds : 0;
   s.cycle_us = percentiles_us(r.cycle_ns);
   s.cycle_max_us = percentile_us(r.cycle_ns, 100);
   s.acquire_us = percentiles_us(r.acquire_ns);
   s.unreachable = r.unreachable_ns.size();
   s.unreachable_p50_us = percentile_us(r.unreachable_ns, 50);
   s.unreachable_p99_us = percentile_us(r.unreachable_ns, 99);
   auto const n = static_cast<double>(s.acquisitions);
   s.commands_per_acquisition = per(as_double(r.commands), n);
   s.requests_per_acquisition = per(as_double(r.requests), n);
   s.client_cpu_us_per_acquisition = per(r.client_cpu_ms, n, 1000.0);
   if (healthy.p99 && s.cycle_us.p99 && s.frozen > 0)
      s.p99_over_healthy_us = *s.cycle_us.p99 - *healthy.p99;
   if (s.frozen > 0 && s.reachable) {
      s.p50_ratio = ratio(s.cycle_us.p50, healthy.p50);
      s.cpu_ratio = ratio(s.client_cpu_us_per_acquisition, healthy.cpu);
   }
   s.overlaps = r.overlaps;
   s.failures = r.failures;
   s.error = r.first_error;
   s.renew = r.spec.renew;
   s.fence = r.spec.fence;
   // Without a reachable quorum, every attempt must fail with quorum_unreachable (the workers
   // count any other outcome, a lease above all, as a failure).
   s.sane = s.overlaps == 0 && s.failures == 0 &&
            (s.reachable ? s.acquisitions > 0 : s.acquisitions == 0 && s.unreachable > 0);
   return s;
}

std::string to_json(quorum_summary const& s)
{
   json_object j;
   auto count = [](auto n) { return std::to_string(n); };
   j.field("scenario", json_string("quorum"));
   j.field("nodes", count(s.nodes));
   j.field("quorum", count(s.quorum));
   j.field("frozen", count(s.frozen));
   j.field("node_timeout_ms", number(s.node_timeout_ms));
   j.field("workers", "1");
   j.field("processes", "1");
   j.field("quorum_reachable", s.reachable ? "true" : "false");
   j.field("acquisitions", count(s.acquisitions));
   j.field("acquisitions_per_s", number(s.acquisitions_per_s));
   j.field("cycle", s.cycle_us);
   j.field("cycle_max_us", json_number(s.cycle_max_us));
   j.field("acquire", s.acquire_us);
   j.field("cycle_p99_over_healthy_us", json_number(s.p99_over_healthy_us));
   if (s.p99_over_healthy_us)
      j.field("p99_target_met",
              *s.p99_over_healthy_us <= quorum_p99_allowance_us ? "true" : "false");
   j.field("cycle_p50_ratio_to_healthy", json_number(s.p50_ratio));
   j.field("client_cpu_ratio_to_healthy", json_number(s.cpu_ratio));
   if (s.p50_ratio && s.cpu_ratio)
      j.field("ratio_targets_met",
              *s.p50_ratio <= p50_ratio_target && *s.cpu_ratio <= cpu_ratio_target ? "true"
                                                                                   : "false");
   j.field("quorum_unreachable", count(s.unreachable));
   j.field("quorum_unreachable_p50_us", json_number(s.unreachable_p50_us));
   j.field("quorum_unreachable_p99_us", json_number(s.unreachable_p99_us));
   j.field("redis_commands_per_acquisition", json_number(s.commands_per_acquisition));
   j.field("redis_requests_per_acquisition", json_number(s.requests_per_acquisition));
   j.field("client_cpu_us_per_acquisition", json_number(s.client_cpu_us_per_acquisition));
   j.field("overlaps", count(s.overlaps));
   j.field("failures", count(s.failures));
   j.field("renew", s.renew ? "true" : "false");
   j.field("fence", s.fence ? "true" : "false");
   if (!s.error.empty())
      j.field("first_error", json_string(s.error));
   j.field("sane", s.sane ? "true" : "false");
   return j.str();
}

constexpr char const* quorum_row_format =
   "%-8s %5s %6s %7s %8s %8s %8s %8s %8s %8s %8s %6s %6s %7s %8s %7s %7s %4s %4s\n";

std::string quorum_table_header()
{
   return underlined(table_line(quorum_row_format, "scenario", "nodes", "frozen", "acq", "acq/s",
                                "cyc p50", "cyc p90", "cyc p99", "acq p50", "acq p99", "+p99",
                                "p50/h", "cpu/h", "unreach", "unr p50", "req/acq", "cli/acq", "ovl",
                                "fail"));
}

std::string ratio_cell(std::optional<double> r)
{
   if (!r)
      return "-";
   char buf[16];
   std::snprintf(buf, sizeof buf, "%.2f", *r);
   return buf;
}

std::string table_row(quorum_summary const& s)
{
   auto const n = [](auto v) { return std::to_string(v); };
   return table_line(quorum_row_format, "quorum", n(s.nodes), n(s.frozen), n(s.acquisitions),
                     number(s.acquisitions_per_s), cell(s.cycle_us.p50), cell(s.cycle_us.p90),
                     cell(s.cycle_us.p99), cell(s.acquire_us.p50), cell(s.acquire_us.p99),
                     cell(s.p99_over_healthy_us), ratio_cell(s.p50_ratio), ratio_cell(s.cpu_ratio),
                     n(s.unreachable), cell(s.unreachable_p50_us), cell(s.requests_per_acquisition),
                     cell(s.client_cpu_us_per_acquisition), n(s.overlaps), n(s.failures)) +
          failure_note(s.error);
}

constexpr char const* quorum_legend =
   "times in microseconds; cyc: async_lock start to async_unlock end, one attempt (wait 0) per\n"
   "cycle; acq: async_lock alone; +p99: cyc p99 over the run with no node frozen (target: at "
   "most\n"
   "2000); p50/h, cpu/h: cyc p50 and cli/acq over the healthy run's (targets: at most 1.1 and\n"
   "1.2); unreach: attempts that ended in quorum_unreachable, as they must when more than\n"
   "nodes - quorum are frozen; unr p50: how long such an attempt took; req/acq: requests\n"
   "(EVALSHA, EVAL) per acquisition on the nodes not frozen; cli/acq: worker CPU us per "
   "acquisition\n";

// The nodes to run over: ours, started here, or the given ones (which nothing may freeze).
std::vector<std::string> node_urls(quorum_plan const& plan,
                                   std::vector<std::unique_ptr<redis_process>>& own)
{
   if (!plan.urls.empty()) {
      for (int k : plan.frozen)
         if (k > 0)
            throw std::runtime_error(
               "--frozen needs the harness's own redis-servers: drop --redis");
      return plan.urls;
   }
   std::vector<std::string> urls;
   for (int i = 0; i < plan.nodes; ++i) {
      own.push_back(std::make_unique<redis_process>());
      urls.push_back(own.back()->url());
   }
   return urls;
}

std::string describe_quorum(run_spec const& r)
{
   return "quorum nodes=" + std::to_string(r.nodes.size()) + " frozen=" + std::to_string(r.frozen);
}

}  // namespace

bool run_quorum(quorum_plan const& plan)
{
   std::vector<std::unique_ptr<redis_process>> own;
   auto const urls = node_urls(plan, own);
   bool const progress = ::isatty(STDERR_FILENO) != 0;
   bool sane = true;
   healthy_run healthy;
   if (!plan.json)
      std::cout << quorum_table_header() << std::flush;
   for (std::size_t i = 0; i < plan.frozen.size(); ++i) {
      run_spec spec = plan.base;
      spec.sc = scenario::quorum;
      spec.nodes = urls;
      spec.frozen = plan.frozen[i];
      spec.prefix = plan.base.prefix + std::to_string(i) + ":";
      auto const what = "[" + std::to_string(i + 1) + "/" + std::to_string(plan.frozen.size()) +
                        "] " + describe_quorum(spec);
      auto const frozen_begin = own.end() - std::min<std::ptrdiff_t>(spec.frozen, std::ssize(own));
      if (progress)
         std::cerr << "\r\033[K" << what << ": warming up" << std::flush;
      // Healthy first, so that every connection is up and busy when its node hangs; the
      // run's own warm-up then absorbs the attempts that the freeze caught in flight.
      auto freeze = [&] {
         std::this_thread::sleep_for(spec.warmup);
         for (auto it = frozen_begin; it != own.end(); ++it)
            (*it)->pause();
      };
      auto r = run_once(
         spec, std::nullopt,
         [&](double s) {
            if (progress)
               std::fprintf(stderr, "\r\033[K%s: measuring %.1f/%.1f s", what.c_str(), s,
                            static_cast<double>(spec.duration.count()) / 1000);
         },
         freeze);
      for (auto it = frozen_begin; it != own.end(); ++it)
         (*it)->resume();
      if (progress)
         std::cerr << "\r\033[K" << std::flush;
      auto const s = summarize(r, healthy);
      if (s.frozen == 0)
         healthy = {s.cycle_us.p50, s.cycle_us.p99, s.client_cpu_us_per_acquisition};
      std::cout << (plan.json ? to_json(s) + "\n" : table_row(s)) << std::flush;
      if (!s.sane) {
         sane = false;
         std::cerr << "locksmith-bench: sanity check failed for " << describe_quorum(spec) << ": "
                   << s.overlaps << " overlaps, " << s.failures << " failures, " << s.acquisitions
                   << " acquisitions, " << s.unreachable << " quorum_unreachable"
                   << (s.error.empty() ? "" : " (first failure: " + s.error + ")") << "\n";
      }
      if (s.p99_over_healthy_us && *s.p99_over_healthy_us > quorum_p99_allowance_us)
         std::cerr << "locksmith-bench: target missed: cycle p99 with " << s.frozen << " frozen is "
                   << number(*s.p99_over_healthy_us)
                   << " us over the healthy run's (target: at most "
                   << number(quorum_p99_allowance_us) << ")\n";
   }
   if (!plan.json)
      std::cout << quorum_legend;
   return sane;
}

}  // namespace locksmith::bench
