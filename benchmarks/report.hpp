// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The numbers of a run, as one JSON object per line or as a row of an aligned table.
#ifndef LOCKSMITH_BENCH_REPORT_HPP
#define LOCKSMITH_BENCH_REPORT_HPP

#include "runner.hpp"
#include "stats.hpp"

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <type_traits>

namespace locksmith::bench {

/// The figures of one run, null (empty) where they mean nothing.
struct summary {
   std::string scenario, strategy;
   int workers = 0, processes = 0;
   double hold_ms = 0;
   std::int64_t acquisitions = 0;
   double acquisitions_per_s = 0;
   percentiles cycle_us, handoff_us;
   std::size_t handoffs = 0;
   std::optional<double> commands_per_acquisition, requests_per_acquisition;
   std::optional<double> failed_tries_per_acquisition;  // tries that lost, not raw
   // Of them, tries after a lock call's first (a waiter woken in vain: the herd)
   std::optional<double> retries_lost_per_acquisition;
   std::optional<double> server_cpu_ms_per_1000;
   std::int64_t per_worker_min = 0, per_worker_max = 0;
   std::int64_t per_process_min = 0, per_process_max = 0;
   std::optional<double> client_cpu_us_per_acquisition;
   std::int64_t overlaps = 0, failures = 0;
   std::optional<std::int64_t> permits, most_holders;  // semaphore; most_holders also rwlock
   std::string error;
   std::optional<double> cycle_p50_vs_raw;  // when the same scenario's raw row ran first
   std::optional<double> rate_vs_raw;       // acquisitions_per_s over the raw row's
   std::optional<double> handoff_p50_vs_raw;
   std::optional<double> server_cpu_vs_raw;  // server CPU per acquisition over the raw row's
   std::optional<double>
      spin_over_subscribe;  // subscribe rows: the spin row's rate over this one's
   std::string target;      // issue 9's or 27's target for this row, if it has one
   std::optional<bool> target_met;
   std::optional<double> spin_interval_ms, spin_jitter_ms;
   bool renew = true;
   bool fence = true;            // lock_options::fence
   std::size_t owner_bytes = 0;  // lock_options::owner's size (0: no label)
   bool fair = false;            // the strategy then reads "fair"
   // --checked-floor, in a scenario with a raw row: that row's release checks its token, and the
   // ratios are over it
   bool checked_floor = false;
   bool sane = false;
};

/// Sorts the run's samples. `raw`: the same scenario's raw row, if any, for the ratios; `spin`:
/// for a subscribe row, the spin row of the same scenario, hold and workers, if any.
summary summarize(run_result& r, summary const* raw, summary const* spin = nullptr);

/// One JSON object, without a newline.
std::string to_json(summary const& s);

/// The table's header lines, and one row (aligned with the header).
std::string table_header();
std::string table_row(summary const& s);

/// v * scale / n, when there is a v and n is positive.
std::optional<double> per(std::optional<double> v, double n, double scale = 1.0);
std::optional<double> as_double(std::optional<std::int64_t> v);

/// A duration in milliseconds as text: "0ms", "1ms", "1.5s".
std::string format_ms(double ms);

/// Three significant digits or so, enough for a benchmark and easy to read.
std::string number(double v);
/// As number(), or `null` for JSON, or `-` for a table cell, when there is no value.
std::string json_number(std::optional<double> v);
std::string cell(std::optional<double> v);
/// A JSON string literal (control characters become spaces).
std::string json_string(std::string const& s);
/// An integer, or `null` for JSON when there is none.
std::string json_int(std::optional<std::int64_t> v);

/// One line of a table: printf's `format` over the values, which may be std::strings.
template <class... Args>
std::string table_line(char const* format, Args const&... args)
{
   auto c_str = [](auto const& a) {
      if constexpr (std::is_same_v<std::decay_t<decltype(a)>, std::string>)
         return a.c_str();
      else
         return a;
   };
   char buf[512];
   std::snprintf(buf, sizeof buf, format, c_str(args)...);
   return buf;
}
/// The header line of a table, and a line of dashes under it.
std::string underlined(std::string const& header);
/// "  first failure: <error>" on a line of its own after a row, when there is an error.
std::string failure_note(std::string const& error);

/// One JSON object on one line, built field by field in order.
class json_object {
public:
   /// Adds `"name": value`; `value` is JSON text already (see json_number, json_string).
   void field(std::string const& name, std::string const& value);
   /// Adds `"<stem>_p50_us"`, p90 and p99.
   void field(std::string const& stem, percentiles const& p);
   std::string str() const { return text_ + "}"; }

private:
   std::string text_ = "{";
};

}  // namespace locksmith::bench

#endif
