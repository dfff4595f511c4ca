// A small reader of Prometheus' text exposition format (version 0.0.4), strict enough to say
// whether a scrape would be accepted: what the unit test of to_prometheus and the gateway's test
// parse /metrics with. No Boost.Test here.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace locksmith::test {

struct prometheus_sample {
   std::string name;  // with its suffix: locksmith_lock_wait_seconds_bucket
   std::map<std::string, std::string> labels;
   double value = 0;
};

struct prometheus_text {
   std::map<std::string, std::string> types;  // family -> counter, gauge, histogram...
   std::vector<prometheus_sample> samples;

   /// The value of the one sample with this name and exactly these labels, if there is one.
   std::optional<double> value(std::string_view name,
                               std::map<std::string, std::string> const& labels = {}) const;
};

/// Parses the text. Throws std::runtime_error, naming the line, when it is not valid: a line that
/// is neither a comment nor a sample, a bad metric or label name, a bad escape, a value that is
/// not a number, a sample whose family has no `# TYPE` line before it, a family typed twice, a
/// counter whose name does not end in _total, or a histogram whose buckets are not cumulative or
/// whose `+Inf` bucket is missing or differs from its _count.
prometheus_text parse_prometheus(std::string_view text);

}  // namespace locksmith::test
