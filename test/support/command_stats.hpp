// What a redis-server counts per command, from `INFO commandstats`: the figures that the tests of
// command cost and the benchmarks' commands-per-acquisition are made of. No Boost.Test here.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace locksmith::test {

// One command's line, "cmdstat_evalsha:calls=3,usec=...,rejected_calls=0,failed_calls=1".
struct command_stat {
   std::int64_t calls = 0;   // every call, failed ones included
   std::int64_t failed = 0;  // failed_calls: errors while running (an EVALSHA's NOSCRIPT)
};

// By command name as Redis spells it there: "evalsha", "client|list".
using command_stats = std::map<std::string, command_stat>;

// Adds the counts of an INFO commandstats text to `stats` (so that several nodes can be summed).
void add_command_stats(std::string_view info, command_stats& stats);

inline command_stats parse_command_stats(std::string_view info)
{
   command_stats stats;
   add_command_stats(info, stats);
   return stats;
}

// The calls of `name`, 0 if it has none.
inline std::int64_t calls_of(command_stats const& stats, std::string const& name)
{
   auto const it = stats.find(name);
   return it == stats.end() ? 0 : it->second.calls;
}

// The commands that locksmith's Lua scripts run inside EVALSHA: INFO commandstats counts them too,
// but no client sends them.
inline bool run_by_scripts(std::string_view cmd)
{
   // The lock's, then the sorted sets of the semaphore, the read-write and reentrant locks and
   // the fair lock's queue deadlines and the plain lock's waiters, then the fair lock's queue.
   // (The unfenced acquire's SET is sent by the client, but counts here as a script's.)
   for (std::string_view s : {"set",     "get",     "time",          "pttl",
                              "del",     "publish", "spublish",      "pexpire",
                              "incr",    "zadd",    "zrem",          "zscore",
                              "zcard",   "zrange",  "zrangebyscore", "zremrangebyscore",
                              "zpopmin", "rpush",   "lindex",        "lrem"})
      if (cmd == s)
         return true;
   return false;
}

}  // namespace locksmith::test
