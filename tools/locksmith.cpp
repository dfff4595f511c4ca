// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
//
// locksmith: a distributed flock. Runs a command while holding a lock kept in Redis.
//
//   locksmith exec [--redis URL]... --key K [--ttl 30s] [--wait 10s] [--strategy spin|subscribe]
//                  [--node-timeout 50ms] -- CMD ARGS...
//
// Takes the lock K on the Redis node(s) (one URL: a single-instance lock; several independent
// masters: RedLock, with a quorum of N/2+1), runs CMD with LOCKSMITH_FENCING_TOKEN and
// LOCKSMITH_KEY added to its environment, releases the lock as soon as CMD exits, and exits with
// CMD's exit code (128+N if CMD was killed by signal N). SIGINT, SIGTERM and SIGHUP received while
// CMD runs are forwarded to CMD; received while waiting for the lock, they stop the wait (exit
// 128+N). The lock is not renewed yet: a CMD that outlives --ttl loses the lock when its key
// expires. Durations are an integer and a unit: ms, s, m or h (250ms, 30s, 5m, 1h).
//
// Exit codes (sysexits.h), besides CMD's own:
//   64  (EX_USAGE)       usage error or bad input: bad option, missing or empty --key,
//                        bad duration, malformed --redis URL
//   69  (EX_UNAVAILABLE) Redis unavailable: too few nodes answered (down, refused, timed out)
//   70  (EX_SOFTWARE)    Redis sent an unexpected reply, e.g. the lock key holds another type
//   75  (EX_TEMPFAIL)    the lock was not taken within --wait: another owner held it
//   76                   reserved for "lease lost while CMD ran" (needs renewal, not implemented)
//   126, 127             CMD could not be executed, or was not found (as a shell)
//
// Example:
//   locksmith exec --redis redis://127.0.0.1:6379 --key nightly-backup --wait 0ms -- ./backup.sh
//   redis-cli --scan --pattern 'locksmith:*'     # watch the lock key while it runs
#include "child_process.hpp"
#include "cli_args.hpp"

#include <locksmith/locksmith.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

#include <CLI/CLI.hpp>

#include <signal.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace asio = boost::asio;
namespace cli = locksmith::cli;
using locksmith::error;
using locksmith::error_code;
using namespace std::chrono_literals;

// Exit codes, from sysexits.h and the shell.
constexpr int ex_usage = 64;
constexpr int ex_unavailable = 69;
constexpr int ex_software = 70;
constexpr int ex_tempfail = 75;
[[maybe_unused]] constexpr int ex_lease_lost = 76;  // reserved: set once leases are renewed
constexpr int ex_cannot_execute = 126;
constexpr int ex_not_found = 127;

constexpr char const* default_node = "redis://127.0.0.1:6379";

constexpr char const* exit_codes_help = R"(Exit status:
  CMD's exit status, or 128+N if CMD was killed by signal N. Otherwise:
  64   usage error or bad input: bad option, missing or empty --key, bad duration,
       malformed --redis URL
  69   Redis unavailable: too few nodes answered (down, refused, timed out)
  70   Redis sent an unexpected reply (e.g. the lock key holds another type)
  75   the lock was not taken within --wait (another owner held it)
  76   reserved for "lease lost while CMD ran"; not produced yet (no renewal)
  126  CMD could not be executed;  127  CMD was not found
  128+N  interrupted by signal N while waiting for the lock
)";

constexpr char const* synopsis = R"(
  locksmith exec [--redis URL]... --key K [--ttl 30s] [--wait 10s] [--strategy spin|subscribe]
                 [--node-timeout 50ms] -- CMD ARGS...
)";

constexpr char const* exec_notes = R"(
URL: redis://[user[:password]@]host[:port][/db], or rediss://... for TLS. Several --redis
URLs make a RedLock over independent masters (quorum N/2+1).
CMD gets LOCKSMITH_FENCING_TOKEN (a number that grows with each acquisition of K) and
LOCKSMITH_KEY (K) in its environment. The lock is released as soon as CMD exits. SIGINT, SIGTERM
and SIGHUP are forwarded to CMD while it runs. The lock is not renewed: if CMD runs longer than
--ttl, the key expires and another process may take the lock while CMD still runs.
Durations: an integer and a unit, ms, s, m or h (250ms, 30s, 5m, 1h).

)";

// A usage error: reported on one line, exit 64.
struct usage_error : std::runtime_error {
   using std::runtime_error::runtime_error;
};

struct exec_args {
   std::vector<std::string> nodes;
   std::string key;
   std::string ttl = "30s";
   std::string wait = "10s";
   std::string node_timeout = "50ms";
   std::string strategy = "spin";
   std::vector<std::string> command;
};

std::chrono::milliseconds duration_arg(char const* option, std::string const& text)
{
   if (auto d = cli::parse_duration(text))
      return *d;
   throw usage_error{std::string{option} + ": bad duration '" + text +
                     "': expected an integer and a unit, ms, s, m or h (e.g. 30s)"};
}

// The client's config and the lock's options, or a usage_error.
std::pair<locksmith::config, locksmith::lock_options> to_options(exec_args& a)
{
   if (a.nodes.empty())
      a.nodes.push_back(default_node);
   if (a.key.empty())
      throw usage_error{"--key must not be empty"};
   if (a.key.size() > locksmith::max_key_size)
      throw usage_error{"--key is longer than " + std::to_string(locksmith::max_key_size) +
                        " bytes"};
   auto const ttl = duration_arg("--ttl", a.ttl);
   if (ttl > locksmith::max_ttl)
      throw usage_error{"--ttl must be at most 24h"};
   auto const node_timeout = duration_arg("--node-timeout", a.node_timeout);
   if (node_timeout <= 0ms)
      throw usage_error{"--node-timeout must be positive"};
   // No renewal yet: it comes with exit code 76 (lease lost while CMD ran) and stopping CMD then.
   locksmith::lock_options opts{.ttl = ttl, .wait = duration_arg("--wait", a.wait), .renew = false};
   if (a.strategy == "subscribe")
      opts.strategy = locksmith::wait_strategy::subscribe;
   return {locksmith::config{.nodes = a.nodes, .node_timeout = node_timeout}, opts};
}

void add_exec_options(CLI::App& exec, exec_args& a)
{
   exec.positionals_at_end();  // everything from CMD on belongs to CMD, even without "--"
   exec.add_option("--redis", a.nodes,
                   "A Redis node; repeat for RedLock (default redis://127.0.0.1:6379)")
      ->type_name("URL")
      ->allow_extra_args(false);
   exec.add_option("--key", a.key, "Name of the lock (the Redis key is locksmith:{K})")
      ->type_name("K")
      ->required();
   exec.add_option("--ttl", a.ttl, "Lifetime of the lock key, at most 24h (not renewed)")
      ->type_name("DURATION")
      ->capture_default_str();
   exec.add_option("--wait", a.wait, "How long to wait for the lock; 0ms: try once")
      ->type_name("DURATION")
      ->capture_default_str();
   exec.add_option("--strategy", a.strategy,
                   "spin: retry every 100-200ms; subscribe: wake on release")
      ->type_name("NAME")
      ->check(CLI::IsMember({"spin", "subscribe"}))
      ->capture_default_str();
   exec.add_option("--node-timeout", a.node_timeout, "How long one Redis node may take to answer")
      ->type_name("DURATION")
      ->capture_default_str();
   exec.add_option("CMD", a.command, "The command to run under the lock, after \"--\"")
      ->type_name("ARGS")
      ->required();
}

// Parses the command line. Returns an exit code when there is nothing to run (help, usage error).
std::optional<int> parse_command_line(int argc, char** argv, exec_args& a)
{
   CLI::App app{std::string{"locksmith: a distributed flock. "
                            "Runs a command while holding a lock kept in Redis.\n"} + synopsis};
   app.name("locksmith");
   app.footer(exit_codes_help);
   auto* exec = app.add_subcommand("exec", "Run CMD while holding the lock K, then release it");
   exec->footer(std::string{exec_notes} + exit_codes_help);
   add_exec_options(*exec, a);
   try {
      app.parse(argc, argv);
   } catch (CLI::CallForHelp const& e) {
      return app.exit(e);
   } catch (CLI::ParseError const& e) {
      std::cerr << "locksmith: " << e.what() << " (see locksmith exec --help)\n";
      return ex_usage;
   }
   if (!exec->parsed()) {
      std::cerr << app.help();
      return ex_usage;
   }
   return std::nullopt;
}

// What main and the signal handler share. Lives as long as the io_context runs.
struct session {
   enum class phase { locking, running, finishing };

   explicit session(asio::io_context& ioc) : signals{ioc, SIGINT, SIGTERM, SIGHUP} { }

   asio::signal_set signals;
   asio::cancellation_signal stop_locking;
   phase now = phase::locking;
   int caught = 0;  // the signal that stopped the wait for the lock
   pid_t child = -1;
   std::optional<std::vector<int>> inherited_fds;  // what CMD inherits besides stdin/out/err
   int exit_code = ex_software;
};

void listen_for_signals(session& s)
{
   s.signals.async_wait([&s](error_code ec, int signo) {
      if (ec)
         return;
      if (s.now == session::phase::running)
         ::kill(s.child, signo);
      else if (s.now == session::phase::locking && s.caught == 0) {
         s.caught = signo;
         s.stop_locking.emit(asio::cancellation_type::terminal);
      }
      listen_for_signals(s);
   });
}

// Reports why the lock was not taken, and returns the exit code.
int lock_failed(error_code ec, session const& s, exec_args const& a)
{
   if (s.caught != 0)
      return 128 + s.caught;  // interrupted: the wait was cancelled and its attempt released
   std::cerr << "locksmith: cannot lock '" << a.key << "': " << ec.message()
             << (ec == error::invalid_argument ? " (check --key and --ttl)\n" : "\n");
   if (ec == error::invalid_argument)
      return ex_usage;
   if (ec == error::wait_timeout || ec == error::lock_taken || ec == error::validity_expired)
      return ex_tempfail;
   if (ec.category() == locksmith::error_category() && ec != error::quorum_unreachable)
      return ex_software;  // unexpected_reply, or an outcome async_lock should not produce
   return ex_unavailable;  // quorum_unreachable, or a network error passed through
}

// Runs CMD while the lease is held; returns its exit code.
asio::awaitable<int> run_command(session& s, exec_args const& a, locksmith::lease const& l)
{
   auto const started = cli::spawn_command(
      a.command,
      {{"LOCKSMITH_FENCING_TOKEN", std::to_string(l.fencing_token())}, {"LOCKSMITH_KEY", a.key}},
      s.inherited_fds);
   if (started.pid < 0) {
      std::cerr << "locksmith: " << a.command[0] << ": " << std::strerror(started.error) << "\n";
      co_return started.error == ENOENT ? ex_not_found : ex_cannot_execute;
   }
   s.child = started.pid;
   s.now = session::phase::running;
   int code = ex_software;
   try {
      code = cli::exit_code_of(co_await cli::async_wait_exit(started.pid));
   } catch (boost::system::system_error const& e) {
      // Not expected (waitpid failing on our own child); the lock is still released.
      std::cerr << "locksmith: cannot wait for " << a.command[0] << ": " << e.what() << "\n";
   }
   // Reaped: the pid may be reused from now on, so stop forwarding signals to it.
   s.now = session::phase::finishing;
   s.child = -1;
   co_return code;
}

asio::awaitable<int> lock_and_run(session& s, exec_args const& a, locksmith::config cfg,
                                  locksmith::lock_options opts)
{
   locksmith::client client{co_await asio::this_coro::executor, std::move(cfg)};
   if (client.config_error()) {
      std::cerr << "locksmith: malformed --redis URL: expected "
                   "redis://[user[:password]@]host[:port][/db] or rediss://...\n";
      co_return ex_usage;
   }
   // A signal during the wait cancels it; the library then releases what the attempt may have set.
   auto [ec, lease] = co_await client.async_lock(
      a.key, opts,
      asio::bind_cancellation_slot(s.stop_locking.slot(), asio::as_tuple(asio::use_awaitable)));
   if (ec || s.caught != 0) {
      // A signal that came just as the lock was won still means "stop": give the lock back.
      if (!ec)
         co_await client.async_unlock(lease, asio::as_tuple(asio::use_awaitable));
      co_return lock_failed(ec, s, a);
   }
   int const code = co_await run_command(s, a, lease);
   auto [unlock_ec] = co_await client.async_unlock(lease, asio::as_tuple(asio::use_awaitable));
   // CMD has finished: its exit code is the answer, whatever became of the lock meanwhile.
   if (unlock_ec)
      std::cerr << "locksmith: warning: releasing '" << a.key << "': " << unlock_ec.message()
                << "\n";
   co_return code;
}

int run(exec_args const& a, locksmith::config cfg, locksmith::lock_options opts,
        std::optional<std::vector<int>> inherited_fds)
{
   asio::io_context ioc;
   session s{ioc};
   s.inherited_fds = std::move(inherited_fds);
   listen_for_signals(s);
   auto done = [&](std::exception_ptr e, int code) {
      s.exit_code = code;
      if (e) {
         try {
            std::rethrow_exception(e);
         } catch (std::exception const& x) {
            std::cerr << "locksmith: " << x.what() << "\n";
         }
         s.exit_code = ex_software;
      }
      // The client's connections would keep the context busy: stop it, which closes them.
      ioc.stop();
   };
   asio::co_spawn(ioc, lock_and_run(s, a, std::move(cfg), std::move(opts)), done);
   ioc.run();
   return s.exit_code;
}

}  // namespace

int main(int argc, char** argv)
{
   // A SIGCHLD ignored by our parent would make the kernel reap CMD before we read its status.
   ::signal(SIGCHLD, SIG_DFL);
   // Before anything of ours is open: these descriptors are our parent's, for CMD to inherit.
   auto inherited_fds = cli::open_descriptors();
   exec_args a;
   if (auto code = parse_command_line(argc, argv, a))
      return *code;
   try {
      auto [cfg, opts] = to_options(a);
      return run(a, std::move(cfg), std::move(opts), std::move(inherited_fds));
   } catch (usage_error const& e) {
      std::cerr << "locksmith: " << e.what() << "\n";
      return ex_usage;
   }
}
