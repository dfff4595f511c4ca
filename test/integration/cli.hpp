// The helpers of the tests of the `locksmith` command-line tool (test_cli*.cpp, built only with
// the tool, like cli.cpp): one run of the tool as a process with its output captured, the
// arguments of `locksmith exec`, and the commands that it runs for the tests (shell one-liners
// that say what happened to them through files).
#pragma once

#include "support/keys.hpp"
#include "support/preconditions.hpp"
#include "support/redis_server.hpp"
#include "support/spawned_process.hpp"
#include "support/temp_dir.hpp"

#include <boost/test/unit_test.hpp>

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace locksmith::test::cli {

using clock_type = std::chrono::steady_clock;
using locksmith::test::poll_until;
using locksmith::test::read_file;
using locksmith::test::spawned_process;

// One run of the locksmith binary, its stdout and stderr captured in files (killed and reaped by
// the destructor if it still runs).
class cli_process : public spawned_process {
public:
   explicit cli_process(std::vector<std::string> args);
   /// The same, returning once the command it runs said so (created `ready` in `dir`, as
   /// hold_until and trap_term do); the case stops, with the tool's stderr, if it never does.
   cli_process(std::vector<std::string> args, temp_dir const& dir);
};

// What most tests of the tool start with: a server, a directory for the files of the commands it
// runs, and a lock name of the test's own.
struct cli_fixture {
   redis_server srv;
   temp_dir dir;
   std::string const key = unique_key();
};

// `locksmith exec --redis URL --key KEY <options...> -- <command...>`
std::vector<std::string> exec_args(redis_server const& srv, std::string const& key,
                                   std::vector<std::string> options,
                                   std::vector<std::string> const& command);

// When `path` came to exist, polled every millisecond (for timings), or nullopt after `limit`.
std::optional<clock_type::time_point> appears_at(std::string const& path,
                                                 std::chrono::milliseconds limit);

long long ms_between(clock_type::time_point from, clock_type::time_point to);
inline long long ms_since(clock_type::time_point t0)
{
   return ms_between(t0, clock_type::now());
}

// The key of the lock `name`, as the tool names it: "locksmith:{name}".
std::string lock_key(std::string const& name);
bool key_exists(redis_server const& srv, std::string const& name);

// How many clients listen for the release of the lock `name` (waiters with --strategy subscribe).
long long listeners(redis_server const& srv, std::string const& name);

// `sh -c SCRIPT sh ARGS...`: the script sees ARGS as $1, $2...
std::vector<std::string> shell(std::string script, std::vector<std::string> const& args);

// A command that says it runs (creates `ready`), then runs until `go` exists.
std::vector<std::string> hold_until(temp_dir const& dir);

// A command that records its pid, says it runs (creates `ready`), and on SIGTERM creates
// `termed` and exits 3. It waits in `wait`, which a trapped signal interrupts at once.
// It ends by itself after `seconds`, so that nothing it started outlives a failed test for long.
std::vector<std::string> trap_term(temp_dir const& dir, std::string const& seconds = "30");

// A command that ignores SIGTERM and, being exec'd by its shell, keeps the pid in `pid`.
std::vector<std::string> ignore_term(temp_dir const& dir);

// Whether the process whose pid the command wrote to `file` still exists.
bool still_runs(std::string const& file);

void create_file(std::string const& path);
bool exists(std::string const& path);
long long count_lines(std::string const& text);

}  // namespace locksmith::test::cli

// The names that the test files use.
namespace utf = boost::unit_test;
using namespace std::chrono_literals;
using namespace locksmith::test::cli;
using locksmith::test::needs_redis_server;
using locksmith::test::redis_server;
using locksmith::test::temp_dir;
using locksmith::test::unique_key;
