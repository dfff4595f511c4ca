// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "exec_options.hpp"

#include "cli_args.hpp"

#include <CLI/CLI.hpp>

#include <unistd.h>

#include <iostream>

namespace locksmith::cli {
namespace {

using namespace std::chrono_literals;

constexpr char const* default_node = "redis://127.0.0.1:6379";

// Longer than any sensible value, and short enough that no deadline computed from it overflows.
constexpr std::chrono::milliseconds max_grace = 24h;
constexpr std::chrono::milliseconds max_hold_limit = 8760h;  // 365 days

constexpr char const* exit_codes_help = R"(Exit status:
  CMD's exit status, or 128+N if CMD was killed by signal N. Otherwise:
  64   usage error or bad input: bad option, missing or empty --key, bad duration,
       malformed --redis URL, a --ttl or --grace that leaves no room to renew, a
       redis+cluster:// URL whose masters are older than Redis 7.0 (printed)
  69   Redis unavailable: too few nodes answered (down, refused, timed out, or
       still loading their data after a restart, beyond --wait), the TLS
       handshake failed (untrusted certificate, wrong host name, client
       certificate refused), or the lock reached fewer replicas than
       --wait-replicas; the node and the reason are printed
  70   Redis sent an unexpected reply (e.g. the lock key holds another type: K is
       used as a lock, a semaphore or a read-write lock elsewhere); the server's
       message is printed
  75   the lock was not taken within --wait (another owner held it; with --permits,
       every permit was held; with --shared, a writer held K or waited for it;
       otherwise, a holder or readers held K)
  76   the lease was lost while CMD ran (renewal kept failing, the key was deleted
       or taken, or --max-hold was reached): CMD was stopped, SIGTERM then SIGKILL
       after --grace. 76 whatever CMD exited with, even 0.
  77   Redis refused the user or password (WRONGPASS), or an ACL denied a command,
       key or channel the lock needs (NOPERM), also a command inside a lock script
       (Redis answers "ERR The user executing the script can't run this command",
       or "ACL failure in script", not NOPERM: give the user the commands the
       script runs); the server's message is printed
  126  CMD could not be executed;  127  CMD was not found
  128+N  interrupted by signal N while waiting for the lock
)";

constexpr char const* synopsis = R"(
  locksmith status [--redis URL]... --key K [--json] [--node-timeout 1s]
                   [--tls-ca FILE] [--tls-cert FILE --tls-key FILE]
  locksmith exec [--redis URL]... --key K [--ttl 30s] [--wait 10s] [--strategy subscribe|spin]
                 [--node-timeout 50ms] [--grace DURATION] [--max-hold DURATION] [--owner LABEL]
                 [--fair | --permits N | --shared | --exclusive] [--wait-replicas N]
                 [--tls-ca FILE] [--tls-cert FILE --tls-key FILE] -- CMD ARGS...
)";

constexpr char const* exec_notes = R"(
URL: redis://[user[:password]@]host[:port][/db], or rediss://... for TLS, or
redis+sentinel://[user[:password]@]host[:port][,host[:port]]/master[/db] for a master that
Sentinels manage (port 26379 by default; the user and password are the master's; no TLS), or
redis+cluster://[user[:password]@]host[:port][,host[:port]] for a Redis Cluster, which counts as
one node: each lock goes to the master of its slot (any nodes of the cluster as seeds; no TLS).
Several --redis URLs make a RedLock over independent masters (quorum N/2+1). Passwords are
never printed (URLs are shown as redis://user:***@host:port), but other users of this machine
may see the command line: prefer an ACL user whose rights stop at the lock's keys (see the
README). --wait-replicas N counts the lock and each renewal only once N replicas of the node
have acknowledged it (WAIT, for at most half the node timeout).
TLS (rediss://): the server's certificate is verified against --tls-ca, or the system's trust
store without it, and must name the URL's host (a DNS name, or an IP address listed as such);
the host name is sent as SNI. --tls-cert and --tls-key present a client certificate (mutual
TLS). They apply to every rediss:// node. A failed handshake ends at once (exit 69).
CMD gets LOCKSMITH_FENCING_TOKEN (a number that grows with each acquisition of K) and
LOCKSMITH_KEY (K) in its environment. The lock is released as soon as CMD exits; on a Redis
Cluster or Sentinel, a slot move or a failover under way delays that release, and locksmith's
exit, until it ends (at most until the key would expire). SIGINT, SIGTERM and SIGHUP are
forwarded to CMD while it runs.
Durations: an integer and a unit, ms, s, m or h (250ms, 30s, 5m, 1h).
--owner LABEL is stored with the lock (inside its value: no extra key or command) and shown by
`locksmith status` beside the holder's token: by default <hostname>:<pid> of this locksmith
process; at most 256 bytes, no control characters; --owner '' stores none.

Renewal: while CMD runs, the lock is renewed every ttl/3 (its key is set back to --ttl), so CMD
may run longer than --ttl. If renewal keeps failing (Redis down, frozen or cut off), the lease is
declared lost --grace plus one node timeout (--node-timeout) before its validity ends; the
validity is --ttl minus a drift allowance of ttl/100+2ms, from the start of the last successful
renewal. The lease is also lost at once if the key is found deleted or taken, and at --max-hold.
Lease lost: locksmith prints one line on stderr, sends SIGTERM to CMD, then SIGKILL if CMD still
runs after --grace (0ms: SIGKILL at once, no SIGTERM), waits for CMD, releases the lock where it
is still ours, and exits 76. CMD is thus stopped before its key can expire in Redis, and a lock
given up at --max-hold is released only after CMD stopped. A key deleted or taken behind our back
may be taken by another at once: have the resource check LOCKSMITH_FENCING_TOKEN.
Renewal needs room: the first renewal, at ttl/3, must be able to answer within one node timeout
before the loss, so ttl - ttl/3 - drift - grace must exceed two node timeouts (usage error
otherwise). With the default node timeout, --ttl 1s allows a --grace of up to 554ms, and the
shortest --ttl is 155ms (with --grace 0ms). Without --grace, the grace is 1s, or for a short
--ttl half of ttl - ttl/3 - drift - 2 node timeouts (277ms for --ttl 1s), the other half being
left for retries of a failed renewal.
Waiting: subscribe (the default, as in the library) sleeps until the holder's release is
published, and costs Redis nothing meanwhile; spin retries every 100-200ms, for servers where
pub/sub is disabled.
Only CMD itself is signalled, not the processes it starts: a script should exec its last
command, or pass SIGTERM on.

Other primitives, with the same renewal, loss and exit codes:
--fair: K is a fair lock: waiters of every process queue in Redis in arrival order, and a
release hands K straight to the first of them (no barging). A waiter keeps its place by asking
again every 500ms or sooner (whatever --strategy says), leaves the queue when it gives up (exit
75, or a signal), and loses its place 2s after it died. Every user of K must pass --fair.
--permits N: K is a semaphore of N permits; CMD runs while it holds one, and at most N
commands hold one at once. Every user of K must pass the same N. With several --redis nodes a
permit needs more than nodes*N/(N+1) of them (4 of 5 for N = 2 or 3), not a majority.
--shared: CMD runs as a reader of the read-write lock K, beside other readers, never beside a
writer; no new reader enters while a writer waits.
A plain exec (without --fair, --permits or --shared) is also the writer when K is a
read-write lock: CMD runs once its readers have left, and no new reader enters while it waits.
--exclusive says so explicitly; it means the same.

)";

std::chrono::milliseconds duration_arg(char const* option, std::string const& text)
{
   if (auto d = parse_duration(text))
      return *d;
   throw usage_error{std::string{option} + ": bad duration '" + text +
                     "': expected an integer and a unit, ms, s, m or h (e.g. 30s)"};
}

// A duration option that shows its default in --help.
void add_duration(CLI::App& exec, std::string const& name, std::string& value,
                  std::string const& help)
{
   exec.add_option(name, value, help)->type_name("DURATION")->capture_default_str();
}

void add_lock_options(CLI::App& exec, exec_args& a)
{
   exec
      .add_option("--redis", a.nodes,
                  "A Redis node; repeat for RedLock (default redis://127.0.0.1:6379)")
      ->type_name("URL")
      ->allow_extra_args(false);
   exec.add_option("--key", a.key, "Name of the lock (the Redis key is locksmith:{K})")
      ->type_name("K")
      ->required();
   add_duration(exec, "--ttl", a.ttl,
                "Lifetime of the lock key, at most 24h; renewed every ttl/3 while CMD runs");
   add_duration(exec, "--wait", a.wait, "How long to wait for the lock; 0ms: try once");
   exec
      .add_option("--strategy", a.strategy,
                  "subscribe: wake on the holder's release; spin: retry every 100-200ms")
      ->type_name("NAME")
      ->check(CLI::IsMember({"spin", "subscribe"}))
      ->capture_default_str();
   add_duration(exec, "--node-timeout", a.node_timeout,
                "How long one Redis node may take to answer");
   // Through a function: CLI11 reads an empty value into an optional as no value, and
   // --owner '' must mean "no label", not the default one.
   exec
      .add_option_function<std::string>(
         "--owner", [&a](std::string const& v) { a.owner = v; },
         "Label stored with the lock and shown by status (default: <hostname>:<pid>)")
      ->type_name("LABEL");
   exec
      .add_option("--wait-replicas", a.wait_replicas,
                  "Count the lock only once N replicas of the node have it (WAIT); 0: no WAIT")
      ->type_name("N")
      ->capture_default_str();
}

void add_exec_options(CLI::App& exec, exec_args& a)
{
   exec.positionals_at_end();  // everything from CMD on belongs to CMD, even without "--"
   add_lock_options(exec, a);
   add_tls_options(exec, a.tls_ca, a.tls_cert, a.tls_key);
   exec
      .add_option("--grace", a.grace,
                  "Lease lost: time from SIGTERM to SIGKILL of CMD, at most 24h; "
                  "0ms: SIGKILL at once; default 1s, less for a short --ttl (see below)")
      ->type_name("DURATION");
   exec
      .add_option("--max-hold", a.max_hold,
                  "Hold the lock at most this long: then let it go and stop CMD (exit 76); "
                  "default: no limit")
      ->type_name("DURATION");
   auto* permits =
      exec.add_option("--permits", a.permits, "K is a semaphore: hold one of its N permits")
         ->type_name("N")
         ->check(CLI::PositiveNumber);
   auto* shared = exec.add_flag("--shared", a.shared, "Hold K as a reader of a read-write lock");
   exec.add_flag("--fair", a.fair, "K is a fair lock: waiters take it in their order of arrival")
      ->excludes(permits)
      ->excludes(shared);
   exec
      .add_flag("--exclusive", a.exclusive,
                "Hold K as the writer of a read-write lock (as a plain exec does)")
      ->excludes(permits)
      ->excludes(shared)
      ->excludes("--fair");
   shared->excludes(permits);
   exec.add_option("CMD", a.command, "The command to run under the lock, after \"--\"")
      ->type_name("ARGS")
      ->required();
}

}  // namespace

void add_tls_options(CLI::App& cmd, std::string& ca, std::string& cert, std::string& key)
{
   cmd.add_option("--tls-ca", ca,
                  "rediss://: PEM file of the CAs to trust (default: the system's store)")
      ->type_name("FILE");
   cmd.add_option("--tls-cert", cert,
                  "rediss://: PEM file of the client certificate (mutual TLS); needs --tls-key")
      ->type_name("FILE");
   cmd.add_option("--tls-key", key, "rediss://: PEM file of the client certificate's key")
      ->type_name("FILE");
}

std::optional<int> parse_command_line(int argc, char** argv, exec_args& a, status_args& st,
                                      bool& status)
{
   CLI::App app{std::string{"locksmith: a distributed flock. "
                            "Runs a command while holding a lock kept in Redis.\n"} +
                synopsis};
   app.name("locksmith");
   app.footer(exit_codes_help);
   auto* exec = app.add_subcommand("exec", "Run CMD while holding the lock K, then release it");
   exec->footer(std::string{exec_notes} + exit_codes_help);
   add_exec_options(*exec, a);
   auto* stat = add_status_command(app, st);
   try {
      app.parse(argc, argv);
   } catch (CLI::CallForHelp const& e) {
      return app.exit(e);
   } catch (CLI::ParseError const& e) {
      std::cerr << "locksmith: " << e.what() << " (see locksmith "
                << (stat->parsed() ? "status" : "exec") << " --help)\n";
      return ex_usage;
   }
   status = stat->parsed();
   if (!exec->parsed() && !status) {
      std::cerr << app.help();
      return ex_usage;
   }
   return std::nullopt;
}

std::string default_owner()
{
   char host[256] = {};
   if (::gethostname(host, sizeof host - 1) != 0)
      host[0] = '\0';
   return std::string{host} + ":" + std::to_string(::getpid());
}

exec_settings to_settings(exec_args& a)
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
   // What the TTL leaves the watchdog to renew in: the grace (the lease's loss margin) must be
   // below it, as the library checks (lock_options::renew).
   auto owner = a.owner ? *a.owner : default_owner();
   if (locksmith::detail::validate_owner(owner))
      throw usage_error{"--owner must be at most " + std::to_string(locksmith::max_owner_size) +
                        " bytes, without control characters"};
   auto const room = locksmith::detail::renewal_room(ttl, std::nullopt, node_timeout);
   if (room <= 0ms)
      throw usage_error{"--ttl " + a.ttl + " is too short to renew with --node-timeout " +
                        a.node_timeout + ": ttl - ttl/3 - (ttl/100+2ms) must exceed " +
                        "two node timeouts"};
   auto const grace = a.grace ? duration_arg("--grace", *a.grace) : default_grace(room);
   if (grace > max_grace)
      throw usage_error{"--grace must be at most 24h"};
   // Checked here too, so that a bad --max-hold is a usage error (exit 64), not a failed lock.
   std::optional<std::chrono::milliseconds> max_hold;
   if (!a.max_hold.empty())
      max_hold = duration_arg("--max-hold", a.max_hold);
   if (max_hold && (*max_hold <= 0ms || *max_hold > max_hold_limit))
      throw usage_error{"--max-hold must be positive and at most 8760h (365 days)"};
   // renew is left at its default, true: the watchdog renews the lease while CMD runs.
   // The loss is declared early enough for CMD's grace period to end before the key expires.
   if (grace >= ttl)
      throw usage_error{"--grace must be below --ttl"};
   if (a.grace && grace >= room)  // the default is below it by construction
      throw usage_error{"--grace " + *a.grace + " leaves --ttl " + a.ttl + " no room to renew: " +
                        "it must be below " + std::to_string(room.count()) + "ms"};
   locksmith::lock_options opts{.ttl = ttl,
                                .wait = duration_arg("--wait", a.wait),
                                .max_hold = max_hold,
                                .loss_margin = grace,
                                .fair = a.fair,
                                .owner = std::move(owner)};
   if (a.strategy == "spin")
      opts.strategy = locksmith::wait_strategy::spin{};
   if (a.tls_cert.empty() != a.tls_key.empty())
      throw usage_error{"--tls-cert and --tls-key go together"};
   locksmith::config cfg{.nodes = a.nodes, .node_timeout = node_timeout};
   cfg.wait_replicas = a.wait_replicas;
   cfg.tls = {.ca_file = a.tls_ca, .cert_file = a.tls_cert, .key_file = a.tls_key};
   using of = detail::lease_kind::of;
   // A plain exec is the writer: its key is the lock's, so that it excludes a plain lock's
   // holders as the lock does, and it also waits for the readers of a read-write lock K.
   auto const kind = a.permits > 0 ? detail::lease_kind{of::permit, a.permits}
                     : a.shared    ? detail::lease_kind{of::read}
                     : a.fair      ? detail::lease_kind{}
                                   : detail::lease_kind{of::write};
   return {std::move(cfg), opts, kind, grace};
}

void print_warnings(exec_args const& a, exec_settings const& s)
{
   // Within one node timeout of the limit, a renewal that times out leaves no time for a retry.
   auto const room = locksmith::detail::renewal_room(s.opts.ttl, std::nullopt, s.cfg.node_timeout);
   if (room - s.grace <= s.cfg.node_timeout)
      std::cerr << "locksmith: warning: --ttl " << a.ttl << " leaves little room to renew with a "
                << "grace of " << s.grace.count()
                << "ms: the lease may be lost at the first slow renewal\n";
}

}  // namespace locksmith::cli
