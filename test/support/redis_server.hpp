// A real redis-server process for the integration tests and the benchmarks, plus a tiny blocking
// client to assert on its state.
//
// Each redis_server runs on its own free loopback port with persistence off, so every test starts
// from an empty node and can make it hang (pause), die (kill) or come back empty (restart). The
// process dies with the test binary (PR_SET_PDEATHSIG) and is always reaped by the destructor, so
// no server outlives a test. No Boost.Test here: the benchmarks start their servers with it too.
#pragma once

#include "support/blocking_client.hpp"
#include "support/command_stats.hpp"

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace locksmith::test {

// Asks the kernel for a free loopback port (redis_server's own, or a second listener such as
// --tls-port). The port is released again before redis binds it, so another process may take it
// in between; callers retry on a new port when that happens.
std::uint16_t free_loopback_port();

// The redis-server executable in PATH, or nothing when it is not installed.
std::optional<std::string> find_redis_server();

class redis_server {
public:
   // Starts `redis-server --port P --bind 127.0.0.1 --save '' --appendonly no --daemonize no
   // <extra_args>` on a free loopback port and waits (at most 5 s) until it answers PING. Throws
   // std::runtime_error if it cannot be started. The server is tied to the *thread* that constructs
   // it (PR_SET_PDEATHSIG fires when that thread exits), so construct it on the test's main thread,
   // not on a short-lived worker.
   //
   // With a `config_file`, it comes first on the command line, as redis-server wants it; for a
   // Sentinel, pass one that monitors a master and `--sentinel` among the extra args.
   explicit redis_server(std::vector<std::string> extra_args = {}, std::string config_file = {});

   // SIGCONT, SIGKILL and reap. Never throws.
   ~redis_server();

   redis_server(const redis_server&) = delete;
   redis_server& operator=(const redis_server&) = delete;

   // The port stays the same across kill() and restart().
   std::uint16_t port() const { return port_; }
   std::string url() const;            // "redis://127.0.0.1:<port>"
   pid_t pid() const { return pid_; }  // -1 after kill()

   // True while the process exists and has not exited, including while it is paused.
   bool running() const;

   // SIGSTOP, and wait until the process has actually stopped, so a command sent afterwards cannot
   // be answered. Connections stay open and the kernel still accepts new ones; nothing answers.
   // Throws std::logic_error if the server is not running.
   void pause();
   // SIGCONT: queued commands are answered again.
   void resume();
   // SIGKILL and reap, paused or not: connections are reset and new ones refused. No-op if not
   // running.
   void kill() noexcept;
   // kill() if running, then start an empty server on the same port and wait for PING. Retries for
   // up to 5 s while the port is not yet free. Throws std::runtime_error if the server does not
   // come back.
   void restart();
   // restart(), but returns as soon as the new server answers, even if only to say LOADING: for a
   // server that loads a dump (one started with `--dir D`, after a SAVE; `--key-load-delay` makes
   // the load last).
   void restart_loading();

   // Sends one command as a RESP array over a fresh loopback connection and parses the RESP2 reply.
   // An error reply is returned (type == kind::error), not thrown. Throws std::runtime_error if
   // connecting, sending or receiving fails or takes longer than `timeout` in total, e.g. when the
   // server is paused. A command that timed out on a paused server may still run once the server
   // resumes.
   reply command(std::initializer_list<std::string_view> args,
                 std::chrono::milliseconds timeout = default_command_timeout) const;
   reply command(const std::vector<std::string>& args,
                 std::chrono::milliseconds timeout = default_command_timeout) const;

   // The reply as text: status, bulk or error text, an integer in decimal, "(nil)" for nil. Arrays
   // are rejected with std::runtime_error, since a flattened array would hide what the test meant
   // to check.
   std::string text(std::initializer_list<std::string_view> args,
                    std::chrono::milliseconds timeout = default_command_timeout) const;

   // INFO commandstats: the calls of each command since the server started.
   command_stats commandstats() const;

private:
   // One attempt to run redis-server on port_; the outcome decides whether to retry.
   enum class start_result { ready, exited, timed_out };
   start_result try_start(std::chrono::steady_clock::time_point deadline, int& status,
                          bool loading = false);
   void restart(bool loading);
   // `loading`: LOADING counts as an answer.
   bool answers_ping_from_our_pid(std::chrono::steady_clock::time_point deadline,
                                  bool loading) const;
   std::string command_line() const;

   std::vector<std::string> extra_args_;
   std::string config_file_;  // empty: none
   std::uint16_t port_ = 0;
   pid_t pid_ = -1;  // -1 when no process of ours exists
};

}  // namespace locksmith::test
