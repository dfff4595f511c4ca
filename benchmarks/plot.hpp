// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The handoff latency distribution of each run, drawn by gnuplot.
#ifndef LOCKSMITH_BENCH_PLOT_HPP
#define LOCKSMITH_BENCH_PLOT_HPP

#include <cstdint>
#include <string>
#include <vector>

namespace locksmith::bench {

/// One curve: a label and its samples, in nanoseconds.
struct plot_series {
   std::string label;
   std::vector<std::int64_t> ns;
};

/// Draws the CDF of each series on a log x axis into `png`, with gnuplot. Writes the data and
/// the script next to it (`png` with .dat and .gp instead of .png). Returns an error message, or
/// empty on success.
std::string plot_handoff_cdf(std::string const& png, std::vector<plot_series> series);

}  // namespace locksmith::bench

#endif
