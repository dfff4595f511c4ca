// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "plot.hpp"

#include "stats.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

namespace locksmith::bench {
namespace {

// Enough points for a smooth curve at 1000 pixels, few enough for a small data file.
constexpr std::size_t cdf_resolution = 2000;

std::string with_extension(std::string const& png, std::string const& ext)
{
   auto const dot = png.rfind('.');
   auto const slash = png.rfind('/');
   bool const has_ext = dot != std::string::npos && (slash == std::string::npos || dot > slash);
   return (has_ext ? png.substr(0, dot) : png) + ext;
}

std::string quoted(std::string const& s)
{
   std::string out = "'";
   for (char c : s)
      out += c == '\'' ? std::string{"''"} : std::string(1, c);
   return out + "'";
}

// Runs `gnuplot script` and waits for it; true when it succeeded.
bool run_gnuplot(std::string const& script)
{
   std::fflush(stdout);
   std::fflush(stderr);
   pid_t const pid = ::fork();
   if (pid < 0)
      return false;
   if (pid == 0) {
      ::execlp("gnuplot", "gnuplot", script.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
   }
   int status = 0;
   while (::waitpid(pid, &status, 0) < 0) {}
   return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

std::string plot_handoff_cdf(std::string const& png, std::vector<plot_series> series)
{
   auto const dat = with_extension(png, ".dat");
   auto const gp = with_extension(png, ".gp");
   std::ofstream data{dat};
   std::ofstream script{gp};
   if (!data || !script)
      return "cannot write " + dat + " or " + gp;
   script
      << "set terminal pngcairo size 1000,650 noenhanced\n"
      << "set output " << quoted(png) << "\n"
      << "set title 'locksmith handoff latency: release by one worker to acquisition by another'\n"
      << "set logscale x 10\nset format x '%g'\n"
      << "set xlabel 'handoff latency (microseconds, log scale)'\n"
      << "set ylabel 'fraction of handoffs at or below'\n"
      << "set yrange [0:1]\nset grid xtics ytics mxtics\nset key below\n"
      << "plot ";
   std::size_t block = 0;
   for (auto& s : series) {
      auto const points = cdf_points(s.ns, cdf_resolution);
      if (points.empty())
         continue;
      // One gnuplot data block per series, separated by two blank lines.
      data << "# " << s.label << "\n";
      for (auto const& [us, fraction] : points)
         data << us << ' ' << fraction << '\n';
      data << "\n\n";
      script << (block ? ", \\\n     " : "") << quoted(dat) << " index " << block
             << " using 1:2 with steps linewidth 2 title "
             << quoted(s.label + " (n=" + std::to_string(s.ns.size()) + ")");
      ++block;
   }
   script << "\n";
   data.close();
   script.close();
   if (block == 0)
      return "no handoff was measured: nothing to plot";
   if (!run_gnuplot(gp))
      return "gnuplot failed on " + gp;
   return {};
}

}  // namespace locksmith::bench
