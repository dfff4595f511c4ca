// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
//
// locksmith: a distributed flock. Runs a command while holding a lock kept in Redis; `locksmith
// status` shows who holds a lock (tools/status.cpp).
//
//   locksmith exec [--redis URL]... --key K [--ttl 30s] [--wait 10s] [--strategy subscribe|spin]
//                  [--node-timeout 50ms] [--grace DURATION] [--max-hold DURATION]
//                  [--fair | --permits N | --shared | --exclusive]
//                  [--tls-ca FILE] [--tls-cert FILE --tls-key FILE] -- CMD ARGS...
//
// --fair takes K as a fair lock (waiters served in their order of arrival); --permits N holds
// one of N permits of the semaphore K; --shared holds K as a reader of a read-write lock, and a
// plain exec (or --exclusive, its synonym) as its writer (see --help).
//
// Takes the lock K on the Redis node(s) (one URL: a single-instance lock; several independent
// masters: RedLock, with a quorum of N/2+1), runs CMD with LOCKSMITH_FENCING_TOKEN and
// LOCKSMITH_KEY added to its environment, releases the lock as soon as CMD exits, and exits with
// CMD's exit code (128+N if CMD was killed by signal N). SIGINT, SIGTERM and SIGHUP received while
// CMD runs are forwarded to CMD; received while waiting for the lock, they stop the wait (exit
// 128+N). Durations are an integer and a unit: ms, s, m or h (250ms, 30s, 5m, 1h).
//
// While CMD runs, the library's watchdog renews the lease every ttl/3. If renewal keeps failing,
// it declares the lease lost --grace plus one node timeout before the lease's validity ends; at
// once if the key is found deleted or taken; and at --max-hold. Then CMD gets SIGTERM, and
// SIGKILL if it still runs after --grace (0ms: SIGKILL at once); locksmith waits for it, releases
// what is still ours, and exits 76, whatever CMD exited with. So CMD is stopped before the key can
// expire in Redis, and a lock let go at --max-hold is only released once CMD has stopped. The
// grace defaults to 1 s, or less for a short --ttl: half of what the TTL leaves to renew in (see
// --help). A waiter sleeps until the holder's release is published (--strategy subscribe, the
// default, as in the library) unless --strategy spin asks it to retry every 100-200 ms.
//
// Exit codes (sysexits.h), besides CMD's own:
//   64  (EX_USAGE)       usage error or bad input: bad option, missing or empty --key,
//                        bad duration, malformed --redis URL, a --ttl or --grace that
//                        leaves no room to renew, a Redis Cluster older than 7.0
//   69  (EX_UNAVAILABLE) Redis unavailable: too few nodes answered (down, refused, timed out,
//                        still loading their data), or the TLS handshake failed; the node
//                        and the reason are printed
//   70  (EX_SOFTWARE)    Redis sent an unexpected reply, e.g. the lock key holds another type;
//                        the server's message is printed
//   75  (EX_TEMPFAIL)    the lock was not taken within --wait: another owner held it (no
//                        permit free; a writer, or readers, held it)
//   76                   the lease was lost while CMD ran, and CMD was stopped
//   77  (EX_NOPERM)      Redis refused the user or password, or an ACL denied a command (also
//                        inside a lock script: "ERR The user executing the script can't run
//                        this command", sansio/script_errors.hpp)
//   126, 127             CMD could not be executed, or was not found (as a shell)
//
// Example:
//   locksmith exec --redis redis://127.0.0.1:6379 --key nightly-backup --wait 0ms -- ./backup.sh
//   redis-cli --scan --pattern 'locksmith:*'     # watch the lock key while it runs
#include "child_process.hpp"
#include "exec_options.hpp"

#include <locksmith/locksmith.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

#include <signal.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

namespace {

namespace asio = boost::asio;
namespace cli = locksmith::cli;
using namespace cli;  // exit codes
using locksmith::error;
using locksmith::error_code;
using namespace std::chrono_literals;

// What main, the signal handler and the loss watch share. Lives as long as the io_context runs.
struct session {
   enum class phase { locking, running, finishing };

   explicit session(asio::io_context& ioc)
       : signals{ioc, SIGINT, SIGTERM, SIGHUP}
       , grace{ioc}
   {}

   asio::signal_set signals;
   asio::cancellation_signal stop_locking;
   asio::cancellation_signal stop_watching;  // ends the wait for the lease's loss
   asio::steady_timer grace;                 // from SIGTERM to SIGKILL
   phase now = phase::locking;
   int caught = 0;  // the signal that stopped the wait for the lock
   pid_t child = -1;
   bool lease_lost = false;                        // lost while CMD ran: exit 76
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
int lock_failed(error_code ec, session const& s, exec_args const& a, locksmith::report const& r)
{
   if (s.caught != 0)
      return 128 + s.caught;  // interrupted: the wait was cancelled and its attempt released
   std::cerr << "locksmith: cannot lock '" << a.key << "': " << ec.message();
   if (ec == error::invalid_argument && r.message().empty())
      std::cerr << " (check --key and --ttl)";
   else if (auto const why = r.message(); !why.empty())
      std::cerr << " (" << why << ")";  // the server's error text, or the connection's problem
   std::cerr << "\n";
   if (ec == error::invalid_argument)
      return ex_usage;
   if (ec == error::auth_failed)
      return ex_noperm;
   if (ec == error::tls_failed || ec == error::not_enough_replicas)
      return ex_unavailable;
   if (ec == error::wait_timeout || ec == error::lock_taken || ec == error::validity_expired)
      return ex_tempfail;
   if (ec.category() == locksmith::error_category() && ec != error::quorum_unreachable)
      return ex_software;  // unexpected_reply, or an outcome async_lock should not produce
   return ex_unavailable;  // quorum_unreachable, or a network error passed through
}

// Once the lease is lost while CMD runs: SIGTERM to CMD, then SIGKILL after the grace period.
// CMD is signalled only until it is reaped (phase running), so a reused pid is never hit.
void stop_command_on_loss(session& s, locksmith::lease& l, std::string const& key,
                          std::chrono::milliseconds grace)
{
   auto on_lost = [&s, &key, grace](error_code ec) {
      // operation_aborted: the lease was released, or CMD exited and the wait was cancelled.
      if (ec || s.now != session::phase::running)
         return;
      s.lease_lost = true;
      std::cerr << "locksmith: lease on '" << key << "' lost; stopping CMD\n";
      if (grace == 0ms) {
         ::kill(s.child, SIGKILL);
         return;
      }
      ::kill(s.child, SIGTERM);
      s.grace.expires_after(grace);
      s.grace.async_wait([&s](error_code ec) {
         if (ec || s.now != session::phase::running)
            return;
         std::cerr << "locksmith: CMD still runs after --grace; sending SIGKILL\n";
         ::kill(s.child, SIGKILL);
      });
   };
   l.async_wait_lost(asio::bind_cancellation_slot(s.stop_watching.slot(), std::move(on_lost)));
}

// Runs CMD while the lease is held, stopping it if the lease is lost; returns its exit code.
asio::awaitable<int> run_command(session& s, exec_args const& a, locksmith::lease& l,
                                 std::chrono::milliseconds grace)
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
   stop_command_on_loss(s, l, a.key, grace);
   int code = ex_software;
   try {
      code = cli::exit_code_of(co_await cli::async_wait_exit(started.pid));
   } catch (boost::system::system_error const& e) {
      // Not expected (waitpid failing on our own child); the lock is still released.
      std::cerr << "locksmith: cannot wait for " << a.command[0] << ": " << e.what() << "\n";
   }
   // Reaped: the pid may be reused from now on, so stop signalling it.
   s.now = session::phase::finishing;
   s.child = -1;
   s.stop_watching.emit(asio::cancellation_type::terminal);
   s.grace.cancel();
   co_return code;
}

asio::awaitable<int> hold_and_run(locksmith::client& client, session& s, exec_args const& a,
                                  exec_settings const& set)
{
   // A signal during the wait cancels it; the library then releases what the attempt may have set.
   locksmith::report diag;
   auto opts = set.opts;
   opts.diag = &diag;
   auto token =
      asio::bind_cancellation_slot(s.stop_locking.slot(), asio::as_tuple(asio::use_awaitable));
   // The lock as a read-write lock's writer (--fair: a fair lock), a permit (--permits) or a
   // reader (--shared): the kind is chosen at run time, so through the members' one front end.
   auto [ec, lease] =
      co_await locksmith::detail::initiate_acquire(client, token, set.kind, a.key, opts);
   if (ec || s.caught != 0) {
      // A signal that came just as the lock was won still means "stop": give the lock back.
      if (!ec)
         co_await client.async_unlock(lease, asio::as_tuple(asio::use_awaitable));
      co_return lock_failed(ec, s, a, diag);
   }
   int const code = co_await run_command(s, a, lease, set.grace);
   // Release on every path; a lost lease is released only now that CMD has stopped, so that
   // nobody could enter while it ran.
   auto [unlock_ec] = co_await client.async_unlock(lease, asio::as_tuple(asio::use_awaitable));
   if (s.lease_lost)
      co_return ex_lease_lost;
   // CMD has finished: its exit code is the answer, whatever became of the lock meanwhile.
   if (unlock_ec == locksmith::error::lease_lost)
      std::cerr << "locksmith: warning: lease on '" << a.key << "' lost as CMD exited\n";
   else if (unlock_ec)
      std::cerr << "locksmith: warning: releasing '" << a.key << "': " << unlock_ec.message()
                << "\n";
   co_return code;
}

asio::awaitable<int> lock_and_run(session& s, exec_args const& a, exec_settings set)
{
   locksmith::client client{co_await asio::this_coro::executor, set.cfg};
   if (client.config_error()) {
      std::cerr << "locksmith: malformed --redis URL: expected " << url_forms << "\n";
      co_return ex_usage;
   }
   print_warnings(a, set);
   int const code = co_await hold_and_run(client, s, a, set);
   // The releases that the client still owns (a failed attempt's, or an unlock that a node did
   // not answer yet) must go out before the process ends: close sees them through, for at most
   // config::close_timeout.
   co_await client.async_close(asio::as_tuple(asio::use_awaitable));
   co_return code;
}

int run(exec_args const& a, exec_settings set, std::optional<std::vector<int>> inherited_fds)
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
   asio::co_spawn(ioc, lock_and_run(s, a, std::move(set)), done);
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
   status_args st;
   bool status = false;
   if (auto code = parse_command_line(argc, argv, a, st, status))
      return *code;
   if (status)
      return run_status(std::move(st));
   try {
      auto set = to_settings(a);
      return run(a, std::move(set), std::move(inherited_fds));
   } catch (usage_error const& e) {
      std::cerr << "locksmith: " << e.what() << "\n";
      return ex_usage;
   }
}
