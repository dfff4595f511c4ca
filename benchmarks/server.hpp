// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The Redis side of a benchmark: a redis-server of our own, and what the server counts
// (INFO commandstats, and its CPU time from /proc). The launcher, the blocking client and the
// commandstats parser are the tests' own (test/support), so that there is one of each.
#ifndef LOCKSMITH_BENCH_SERVER_HPP
#define LOCKSMITH_BENCH_SERVER_HPP

#include "support/command_stats.hpp"
#include "support/redis_server.hpp"

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace locksmith::bench {

/// `redis-server --port P --bind 127.0.0.1 --save '' --appendonly no` on a free loopback port,
/// ready (it answered PING) once constructed, and stopped by the destructor. It dies with the
/// harness (PR_SET_PDEATHSIG). Throws std::runtime_error when it cannot be started. The tests'
/// test::redis_server, with a resume() that waits until the server answers again.
class redis_process {
public:
   /// `also_bind`: one more local address to listen on, for clients that are not on loopback
   /// (protected mode is then off); empty for none.
   explicit redis_process(std::string also_bind = {});
   ~redis_process();
   redis_process(redis_process const&) = delete;
   redis_process& operator=(redis_process const&) = delete;

   std::string url() const { return srv_.url(); }
   int port() const { return srv_.port(); }
   pid_t pid() const { return srv_.pid(); }

   /// Freezes the server (SIGSTOP), as a hung node: the kernel still accepts its connections and
   /// buffers what they send, but nothing is answered. Returns once it has stopped.
   void pause();

   /// Lets it run again (SIGCONT). Returns once it answers PING, having worked off the commands
   /// that queued up meanwhile; throws std::runtime_error if it does not within 10 s.
   void resume();

   /// kill -9, then an empty server on the same port, as a node that crashed and came back
   /// without persistence. Throws std::runtime_error if it does not come back within 5 s.
   void restart();

private:
   test::redis_server srv_;
};

/// One command's line of `INFO commandstats`: calls, and failed calls (an EVALSHA's NOSCRIPT).
using test::command_stat;

/// `INFO commandstats` per command name, summed over the nodes. Empty when a node cannot be
/// asked (unreachable, TLS, which this small client does not speak).
std::optional<std::map<std::string, command_stat>>
command_stats(std::vector<std::string> const& urls);

/// The same, calls only.
std::optional<std::map<std::string, std::int64_t>>
command_calls(std::vector<std::string> const& urls);

/// The calls summed: all of them, or (`scripts_only`) those of the commands that the library runs
/// inside its scripts (test::run_by_scripts).
std::int64_t sum_calls(std::map<std::string, std::int64_t> const& calls, bool scripts_only);

/// User plus system CPU time of a process, in milliseconds, from /proc/PID/stat.
std::optional<double> process_cpu_ms(pid_t pid);

/// Sends one command over a fresh blocking connection and returns the reply's text (status, bulk
/// string, or error prefixed with '-'). Empty on any connection problem. Exposed for tests.
std::optional<std::string> blocking_command(std::string const& url,
                                            std::vector<std::string> const& args);

}  // namespace locksmith::bench

#endif
