// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "report.hpp"

#include "stats.hpp"

#include <algorithm>
#include <cstdio>

namespace locksmith::bench {
namespace {

std::optional<double> per(std::optional<double> v, double n, double scale = 1.0)
{
   if (!v || n <= 0)
      return std::nullopt;
   return *v * scale / n;
}

std::optional<double> as_double(std::optional<std::int64_t> v)
{
   return v ? std::optional<double>{static_cast<double>(*v)} : std::nullopt;
}

} // namespace

std::string number(double v)
{
   char buf[64];
   double const a = v < 0 ? -v : v;
   std::snprintf(buf, sizeof buf,
                 a >= 100 || v == static_cast<long long>(v) ? "%.0f"
                 : a >= 10                                  ? "%.1f"
                                                            : "%.2f",
                 v);
   return buf;
}

std::string json_number(std::optional<double> v)
{
   return v ? number(*v) : "null";
}

std::string json_string(std::string const& s)
{
   std::string out = "\"";
   for (char c : s) {
      if (c == '"' || c == '\\')
         out += '\\';
      if (static_cast<unsigned char>(c) < 0x20)
         c = ' ';
      out += c;
   }
   return out + "\"";
}

std::string cell(std::optional<double> v)
{
   return v ? number(*v) : "-";
}

void json_object::field(char const* name, std::string const& value)
{
   if (text_.size() > 1)
      text_ += ", ";
   text_ += json_string(name) + ": " + value;
}

std::string format_ms(double ms)
{
   return ms >= 1000 ? number(ms / 1000) + "s" : number(ms) + "ms";
}

summary summarize(run_result& r, summary const* raw)
{
   summary s;
   s.scenario = name_of(r.spec.sc);
   s.strategy = name_of(r.spec.st);
   s.workers = r.spec.workers;
   s.processes = r.spec.processes;
   s.hold_ms = static_cast<double>(r.spec.hold.count());
   s.acquisitions = r.acquisitions();
   auto const n = static_cast<double>(s.acquisitions);
   s.acquisitions_per_s = r.seconds > 0 ? n / r.seconds : 0;
   s.cycle_p50_us = percentile_us(r.cycle_ns, 50);
   s.cycle_p90_us = percentile_us(r.cycle_ns, 90);
   s.cycle_p99_us = percentile_us(r.cycle_ns, 99);
   s.handoff_p50_us = percentile_us(r.handoff_ns, 50);
   s.handoff_p90_us = percentile_us(r.handoff_ns, 90);
   s.handoff_p99_us = percentile_us(r.handoff_ns, 99);
   s.handoffs = r.handoff_ns.size();
   s.commands_per_acquisition = per(as_double(r.commands), n);
   s.requests_per_acquisition = per(as_double(r.requests), n);
   s.server_cpu_ms_per_1000 = per(r.server_cpu_ms, n, 1000.0);
   if (!r.per_worker.empty()) {
      s.per_worker_min = *std::min_element(r.per_worker.begin(), r.per_worker.end());
      s.per_worker_max = *std::max_element(r.per_worker.begin(), r.per_worker.end());
   }
   if (!r.per_process.empty()) {
      s.per_process_min = *std::min_element(r.per_process.begin(), r.per_process.end());
      s.per_process_max = *std::max_element(r.per_process.begin(), r.per_process.end());
   }
   s.client_cpu_us_per_acquisition = per(r.client_cpu_ms, n, 1000.0);
   s.overlaps = r.overlaps;
   s.failures = r.failures;
   s.error = r.first_error;
   if (raw && raw->scenario == s.scenario && r.spec.st != strategy::raw) {
      if (raw->cycle_p50_us && s.cycle_p50_us)
         s.cycle_p50_vs_raw = *s.cycle_p50_us / *raw->cycle_p50_us;
      if (raw->acquisitions_per_s > 0)
         s.rate_vs_raw = s.acquisitions_per_s / raw->acquisitions_per_s;
      if (raw->handoff_p50_us && s.handoff_p50_us)
         s.handoff_p50_vs_raw = *s.handoff_p50_us / *raw->handoff_p50_us;
   }
   if (r.spec.st == strategy::spin) {
      s.spin_interval_ms = static_cast<double>(r.spec.spin_interval.count());
      s.spin_jitter_ms = static_cast<double>(r.spec.spin_jitter.count());
   }
   s.renew = r.spec.renew;
   s.sane = r.sane();
   return s;
}

std::string to_json(summary const& s)
{
   json_object j;
   auto field = [&](char const* name, std::string const& value) { j.field(name, value); };
   field("scenario", json_string(s.scenario));
   field("strategy", json_string(s.strategy));
   field("workers", std::to_string(s.workers));
   field("processes", std::to_string(s.processes));
   field("hold_ms", number(s.hold_ms));
   field("acquisitions", std::to_string(s.acquisitions));
   field("acquisitions_per_s", number(s.acquisitions_per_s));
   field("cycle_p50_us", json_number(s.cycle_p50_us));
   field("cycle_p90_us", json_number(s.cycle_p90_us));
   field("cycle_p99_us", json_number(s.cycle_p99_us));
   field("cycle_p50_vs_raw", json_number(s.cycle_p50_vs_raw));
   field("acquisitions_per_s_vs_raw", json_number(s.rate_vs_raw));
   field("handoff_p50_vs_raw", json_number(s.handoff_p50_vs_raw));
   field("handoffs", std::to_string(s.handoffs));
   field("handoff_p50_us", json_number(s.handoff_p50_us));
   field("handoff_p90_us", json_number(s.handoff_p90_us));
   field("handoff_p99_us", json_number(s.handoff_p99_us));
   field("redis_commands_per_acquisition", json_number(s.commands_per_acquisition));
   field("redis_requests_per_acquisition", json_number(s.requests_per_acquisition));
   field("server_cpu_ms_per_1000", json_number(s.server_cpu_ms_per_1000));
   field("per_worker_min", std::to_string(s.per_worker_min));
   field("per_worker_max", std::to_string(s.per_worker_max));
   field("per_process_min", std::to_string(s.per_process_min));
   field("per_process_max", std::to_string(s.per_process_max));
   field("client_cpu_us_per_acquisition", json_number(s.client_cpu_us_per_acquisition));
   field("overlaps", std::to_string(s.overlaps));
   field("failures", std::to_string(s.failures));
   if (s.spin_interval_ms) {
      field("spin_interval_ms", number(*s.spin_interval_ms));
      field("spin_jitter_ms", number(*s.spin_jitter_ms));
   }
   if (s.strategy != "raw")
      field("renew", s.renew ? "true" : "false");
   if (!s.error.empty())
      field("first_error", json_string(s.error));
   field("sane", s.sane ? "true" : "false");
   return j.str();
}

namespace {
constexpr char const* row_format =
    "%-11s %-9s %4s %4s %6s %8s %9s %8s %8s %8s %8s %6s %7s %7s %7s %7s %7s %7s %8s %4s %4s %6s\n";
}

std::string table_header()
{
   char buf[512];
   std::snprintf(buf, sizeof buf, row_format, "scenario", "strategy", "wrk", "proc", "hold", "acq",
                 "acq/s", "cyc p50", "cyc p99", "hof p50", "hof p99", "hofs", "cmd/acq", "req/acq",
                 "cpu/1k", "cli/acq", "min/wrk", "max/wrk", "min/proc", "ovl", "fail", "xraw");
   std::string units(std::string(buf).size() - 1, '-');
   return std::string{buf} + units + "\n";
}

std::string table_row(summary const& s)
{
   char buf[512];
   std::snprintf(
       buf, sizeof buf, row_format, s.scenario.c_str(), s.strategy.c_str(),
       std::to_string(s.workers).c_str(), std::to_string(s.processes).c_str(),
       format_ms(s.hold_ms).c_str(), std::to_string(s.acquisitions).c_str(),
       number(s.acquisitions_per_s).c_str(), cell(s.cycle_p50_us).c_str(),
       cell(s.cycle_p99_us).c_str(), cell(s.handoff_p50_us).c_str(), cell(s.handoff_p99_us).c_str(),
       std::to_string(s.handoffs).c_str(), cell(s.commands_per_acquisition).c_str(),
       cell(s.requests_per_acquisition).c_str(), cell(s.server_cpu_ms_per_1000).c_str(),
       cell(s.client_cpu_us_per_acquisition).c_str(), std::to_string(s.per_worker_min).c_str(),
       std::to_string(s.per_worker_max).c_str(), std::to_string(s.per_process_min).c_str(),
       std::to_string(s.overlaps).c_str(), std::to_string(s.failures).c_str(),
       cell(s.handoff_p50_vs_raw ? s.handoff_p50_vs_raw : s.cycle_p50_vs_raw).c_str());
   std::string row = buf;
   if (!s.error.empty())
      row += "  first failure: " + s.error + "\n";
   return row;
}

} // namespace locksmith::bench
