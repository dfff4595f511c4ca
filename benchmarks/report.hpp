// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The numbers of a run, as one JSON object per line or as a row of an aligned table.
#ifndef LOCKSMITH_BENCH_REPORT_HPP
#define LOCKSMITH_BENCH_REPORT_HPP

#include "runner.hpp"

#include <optional>
#include <string>

namespace locksmith::bench {

/// The figures of one run, null (empty) where they mean nothing.
struct summary {
   std::string scenario, strategy;
   int workers = 0, processes = 0;
   double hold_ms = 0;
   std::int64_t acquisitions = 0;
   double acquisitions_per_s = 0;
   std::optional<double> cycle_p50_us, cycle_p90_us, cycle_p99_us;
   std::optional<double> handoff_p50_us, handoff_p90_us, handoff_p99_us;
   std::size_t handoffs = 0;
   std::optional<double> commands_per_acquisition, requests_per_acquisition;
   std::optional<double> server_cpu_ms_per_1000;
   std::int64_t per_worker_min = 0, per_worker_max = 0;
   std::int64_t per_process_min = 0, per_process_max = 0;
   std::optional<double> client_cpu_us_per_acquisition;
   std::int64_t overlaps = 0, failures = 0;
   std::string error;
   std::optional<double> cycle_p50_vs_raw; // when the same scenario's raw row ran first
   std::optional<double> rate_vs_raw;      // acquisitions_per_s over the raw row's
   std::optional<double> handoff_p50_vs_raw;
   std::optional<double> spin_interval_ms, spin_jitter_ms;
   bool renew = true;
   bool sane = false;
};

/// Sorts the run's samples. `raw`: the same scenario's raw row, if any, for the ratios.
summary summarize(run_result& r, summary const* raw);

/// One JSON object, without a newline.
std::string to_json(summary const& s);

/// The table's header lines, and one row (aligned with the header).
std::string table_header();
std::string table_row(summary const& s);

/// A duration in milliseconds as text: "0ms", "1ms", "1.5s".
std::string format_ms(double ms);

/// Three significant digits or so, enough for a benchmark and easy to read.
std::string number(double v);
/// As number(), or `null` for JSON, or `-` for a table cell, when there is no value.
std::string json_number(std::optional<double> v);
std::string cell(std::optional<double> v);
/// A JSON string literal (control characters become spaces).
std::string json_string(std::string const& s);

/// One JSON object on one line, built field by field in order.
class json_object {
public:
   /// Adds `"name": value`; `value` is JSON text already (see json_number, json_string).
   void field(char const* name, std::string const& value);
   std::string str() const { return text_ + "}"; }

private:
   std::string text_ = "{";
};

} // namespace locksmith::bench

#endif
