// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// Percentiles of latency samples.
#ifndef LOCKSMITH_BENCH_STATS_HPP
#define LOCKSMITH_BENCH_STATS_HPP

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

namespace locksmith::bench {

/// The p-th percentile (0 <= p <= 100) of samples in nanoseconds, in microseconds, by the
/// nearest-rank method. Empty when there are no samples. Sorts `ns` in place.
inline std::optional<double> percentile_us(std::vector<std::int64_t>& ns, double p)
{
   if (ns.empty())
      return std::nullopt;
   if (!std::is_sorted(ns.begin(), ns.end()))
      std::sort(ns.begin(), ns.end());
   auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(ns.size())));
   rank = std::clamp<std::size_t>(rank, 1, ns.size());
   return static_cast<double>(ns[rank - 1]) / 1000.0;
}

/// The usual percentiles of a run's latencies, in microseconds.
struct percentiles {
   std::optional<double> p50, p90, p99;
};

/// Sorts `ns` in place.
inline percentiles percentiles_us(std::vector<std::int64_t>& ns)
{
   return {percentile_us(ns, 50), percentile_us(ns, 90), percentile_us(ns, 99)};
}

/// The samples at `points` evenly spaced fractions of the sorted samples (for a CDF plot), as
/// (microseconds, fraction of samples at or below). Sorts `ns` in place.
inline std::vector<std::pair<double, double>> cdf_points(std::vector<std::int64_t>& ns,
                                                         std::size_t points)
{
   std::vector<std::pair<double, double>> out;
   if (ns.empty() || points < 2)
      return out;
   std::sort(ns.begin(), ns.end());
   auto const n = ns.size();
   auto const step = std::max<std::size_t>(1, n / points);
   for (std::size_t i = step - 1; i < n; i += step)
      out.emplace_back(static_cast<double>(ns[i]) / 1000.0,
                       static_cast<double>(i + 1) / static_cast<double>(n));
   if (out.empty() || out.back().second < 1.0)
      out.emplace_back(static_cast<double>(ns.back()) / 1000.0, 1.0);
   return out;
}

}  // namespace locksmith::bench

#endif
