// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// locksmith-bench: fixed lock workloads against Redis, spin against subscribe, with a raw
// SET NX / DEL floor; on request, RedLock with frozen nodes (quorum) and the watchdog's cost
// (renewal). Prints a table, or one JSON object per line per run (--json), and exits non-zero
// when its own sanity check fails (two holders at once, a failed operation, a lost lease, or no
// acquisition at all).
//
//   locksmith-bench --json
//   locksmith-bench --scenario handoff --workers 16 --processes 4 --json
//   locksmith-bench --scenario contended --hold 0ms,1ms,100ms
//   locksmith-bench --scenario handoff --plot /tmp/handoff.png
//   locksmith-bench --scenario quorum --nodes 5 --frozen 0,2 --json
//   locksmith-bench --scenario renewal --leases 10000 --duration 30s --json
//   locksmith-bench --scenario semaphore,rwlock,reentrant --strategy subscribe --json
//   locksmith-bench --scenario threads --json
#include "plot.hpp"
#include "cluster.hpp"
#include "mutex.hpp"
#include "quorum.hpp"
#include "renewal.hpp"
#include "report.hpp"
#include "runner.hpp"
#include "server.hpp"
#include "threads.hpp"

#include "sansio/token.hpp"
#include "sansio/url.hpp"

#include <CLI/CLI.hpp>

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <iostream>
#include <memory>

namespace locksmith::bench {
namespace {

struct options {
   std::vector<std::string> urls;
   std::vector<std::string> scenarios{"uncontended", "independent", "contended", "handoff"};
   std::vector<std::string> strategies{"spin", "subscribe"};
   int workers = 0;    // 0: the scenario's default
   int processes = 0;  // 0: the scenario's default
   std::vector<std::string> holds;
   std::string duration;  // empty: the scenario's default (renewal 30s, the others 3s)
   std::string warmup = "300ms", think = "100ms", settle = "5ms";
   std::string spin_interval = "100ms", spin_jitter = "100ms";
   bool json = false;
   bool no_renew = false;
   bool fair = false;
   bool no_fence = false;
   bool checked_floor = false;
   std::string owner;  // lock_options::owner
   std::string plot;
   int nodes = 5;            // quorum: redis-servers to start
   std::vector<int> frozen;  // quorum: K of each run; empty: 0, 1 and 2
   std::string node_timeout = "50ms";
   int leases = 10'000;     // renewal
   std::string ttl = "3s";  // renewal
};

// The scenarios that run only when named: they start servers of their own, or run in this process.
bool on_request(std::string const& s)
{
   return s == "quorum" || s == "renewal" || s == "mutex" || s == "cluster" || s == "threads";
}

bool wanted(options const& o, std::string const& s)
{
   return std::find(o.scenarios.begin(), o.scenarios.end(), s) != o.scenarios.end();
}

// "250ms", "3s", "1.5s", "2m", "500us" (rounded down to milliseconds), "0".
std::optional<milliseconds> parse_duration(std::string const& text)
{
   double value = 0;
   auto const [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
   std::string_view const unit{end, static_cast<std::size_t>(text.data() + text.size() - end)};
   if (ec != std::errc{} || value < 0)
      return std::nullopt;
   double const scale = unit == "us"   ? 0.001
                        : unit == "ms" ? 1
                        : unit == "s"  ? 1000
                        : unit == "m"  ? 60'000
                                       : -1;
   if (scale < 0 && !(unit.empty() && value == 0))
      return std::nullopt;
   return milliseconds{static_cast<milliseconds::rep>(value * std::max(scale, 0.0))};
}

milliseconds duration_of(std::string const& text, char const* option)
{
   auto d = parse_duration(text);
   if (!d)
      throw CLI::ValidationError(option, "not a duration: '" + text + "' (write e.g. 250ms, 3s)");
   return *d;
}

std::string unique_prefix(std::string const& what)
{
   return "locksmith-bench:" + detail::random_token().substr(0, 8) + ":" + what + ":";
}

milliseconds node_timeout_of(options const& o)
{
   auto const t = duration_of(o.node_timeout, "--node-timeout");
   if (t.count() <= 0)
      throw CLI::ValidationError("--node-timeout", "must be at least 1ms");
   return t;
}

scenario scenario_of(std::string const& s)
{
   for (auto sc : {scenario::uncontended, scenario::independent, scenario::contended,
                   scenario::handoff, scenario::semaphore, scenario::rwlock, scenario::reentrant})
      if (name_of(sc) == s)
         return sc;
   throw CLI::ValidationError("--scenario", "unknown scenario '" + s +
                                               "' (uncontended, independent, contended, "
                                               "handoff, quorum, renewal, mutex, cluster, threads, "
                                               "semaphore, rwlock, reentrant)");
}

strategy strategy_of(std::string const& s)
{
   for (auto st : {strategy::raw, strategy::spin, strategy::subscribe})
      if (name_of(st) == s)
         return st;
   throw CLI::ValidationError("--strategy", "unknown strategy '" + s + "'");
}

int default_workers(scenario sc)
{
   switch (sc) {
   case scenario::uncontended:
      return 1;
   case scenario::independent:
      return 64;
   case scenario::contended:
      return 16;
   case scenario::handoff:
      return 2;
   case scenario::quorum:
      return 1;
   case scenario::semaphore:
   case scenario::rwlock:
   case scenario::reentrant:
      return 12;
   }
   return 1;
}

// Contention between processes is what spin and subscribe differ in: in one process, waiters
// queue in memory and only the head talks to Redis.
int default_processes(scenario sc, int workers)
{
   switch (sc) {
   case scenario::contended:
   case scenario::semaphore:
   case scenario::rwlock:
   case scenario::reentrant:
      return std::min(workers, 4);
   case scenario::handoff:
      return std::min(workers, 16);
   default:
      return 1;
   }
}

milliseconds default_hold(scenario sc)
{
   bool const held = sc == scenario::contended || sc == scenario::semaphore ||
                     sc == scenario::rwlock || sc == scenario::reentrant;
   return held ? 1ms : 0ms;
}

// Every (scenario, hold, strategy) to run, in order. The raw floor runs first in each scenario but
// contended (where it would have to spin), so that the others can be read as a ratio to it.
std::vector<run_spec> plan(options const& o)
{
   run_spec base;
   base.duration = duration_of(o.duration.empty() ? "3s" : o.duration, "--duration");
   base.warmup = duration_of(o.warmup, "--warmup");
   base.think = duration_of(o.think, "--think");
   base.settle = duration_of(o.settle, "--settle");
   base.spin_interval = duration_of(o.spin_interval, "--spin-interval");
   base.spin_jitter = duration_of(o.spin_jitter, "--spin-jitter");
   base.renew = !o.no_renew;
   base.fair = o.fair;
   base.fence = !o.no_fence;
   base.owner = o.owner;
   base.checked_floor = o.checked_floor;
   base.node_timeout = node_timeout_of(o);
   auto const run_id = detail::random_token().substr(0, 8);
   std::vector<run_spec> runs;
   for (auto const& sname : o.scenarios) {
      if (on_request(sname))
         continue;
      auto const sc = scenario_of(sname);
      if (o.no_fence && (o.fair || sc == scenario::semaphore || sc == scenario::rwlock ||
                         sc == scenario::reentrant))
         throw CLI::ValidationError("--no-fence",
                                    "only the plain lock goes without a fence: not with --fair or "
                                    "--scenario " +
                                       sname);
      if (o.fair && sc != scenario::uncontended && sc != scenario::independent &&
          sc != scenario::contended && sc != scenario::handoff)
         throw CLI::ValidationError("--fair",
                                    "the fair lock is a lock: not with --scenario " + sname);
      std::vector<milliseconds> holds;
      for (auto const& h : o.holds)
         holds.push_back(duration_of(h, "--hold"));
      if (holds.empty() || sc == scenario::uncontended)
         holds = {sc == scenario::uncontended ? 0ms : default_hold(sc)};
      std::vector<strategy> strategies;
      // The raw floor has no semaphore, read-write or reentrant lock, and would spin in contended.
      if (sc != scenario::contended && sc != scenario::semaphore && sc != scenario::rwlock &&
          sc != scenario::reentrant)
         strategies.push_back(strategy::raw);
      // A fair lock never spins: its rows are subscribe's.
      for (auto const& st : o.strategies)
         if (strategy_of(st) != strategy::raw && !(o.fair && strategy_of(st) == strategy::spin))
            strategies.push_back(strategy_of(st));
      for (auto hold : holds)
         for (auto st : strategies) {
            run_spec r = base;
            r.sc = sc;
            r.st = st;
            r.hold = hold;
            r.workers = sc == scenario::uncontended ? 1
                        : o.workers > 0             ? o.workers
                                                    : default_workers(sc);
            r.processes = sc == scenario::uncontended ? 1
                          : o.processes > 0           ? std::min(o.processes, r.workers)
                                                      : default_processes(sc, r.workers);
            r.prefix = "locksmith-bench:" + run_id + ":" + std::to_string(runs.size()) + ":";
            runs.push_back(r);
         }
   }
   return runs;
}

quorum_plan plan_quorum(options const& o)
{
   quorum_plan p;
   p.base.duration = duration_of(o.duration.empty() ? "3s" : o.duration, "--duration");
   p.base.warmup = duration_of(o.warmup, "--warmup");
   p.base.node_timeout = node_timeout_of(o);
   p.base.renew = !o.no_renew;
   p.base.fence = !o.no_fence;
   p.base.prefix = unique_prefix("quorum");
   p.urls = o.urls;
   p.nodes = o.urls.empty() ? o.nodes : static_cast<int>(o.urls.size());
   p.frozen = o.frozen;
   if (p.frozen.empty())
      for (int k : {0, 1, 2})
         if (k <= p.nodes)
            p.frozen.push_back(k);
   // Ascending, so that the healthy run comes first and the others can be read against it.
   std::sort(p.frozen.begin(), p.frozen.end());
   p.frozen.erase(std::unique(p.frozen.begin(), p.frozen.end()), p.frozen.end());
   for (int k : p.frozen)
      if (k > p.nodes)
         throw CLI::ValidationError("--frozen", "cannot freeze " + std::to_string(k) + " of " +
                                                   std::to_string(p.nodes) + " nodes");
   p.json = o.json;
   return p;
}

renewal_spec plan_renewal(options const& o)
{
   renewal_spec r;
   r.leases = o.leases;
   r.ttl = duration_of(o.ttl, "--ttl");
   r.hold = duration_of(o.duration.empty() ? "30s" : o.duration, "--duration");
   r.node_timeout = node_timeout_of(o);
   r.prefix = unique_prefix("renewal");
   r.json = o.json;
   return r;
}

// The mutex and cluster scenarios, on servers of their own, take the same options: --json,
// --no-fence, and --duration in whole seconds.
template <class Plan>
Plan plan_of_servers(options const& o)
{
   Plan p{.json = o.json, .fence = !o.no_fence};
   if (!o.duration.empty())
      p.duration =
         std::chrono::duration_cast<std::chrono::seconds>(duration_of(o.duration, "--duration"));
   return p;
}

std::string describe(run_spec const& r)
{
   return std::string{name_of(r.sc)} + "/" + std::string{name_of(r.st)} +
          " workers=" + std::to_string(r.workers) + " processes=" + std::to_string(r.processes) +
          " hold=" + format_ms(static_cast<double>(r.hold.count()));
}

// Fails early, with a message, rather than after a run that measured nothing. A TLS node cannot be
// asked by the harness's small client; its problems show as failures of the runs.
void check_reachable(std::vector<std::string> const& nodes)
{
   for (auto const& url : nodes) {
      auto const u = detail::parse_url(url);
      if (!u)
         throw std::runtime_error("not a Redis URL: " + url);
      auto const pong =
         u->tls ? std::optional<std::string>{"PONG"} : blocking_command(url, {"PING"});
      if (!pong || *pong != "PONG")
         throw std::runtime_error("Redis at " + detail::redacted(*u) + " does not answer PING" +
                                  (pong ? ": " + *pong : std::string{}));
   }
}

void add_options(CLI::App& app, options& o)
{
   app.add_option("--redis", o.urls,
                  "Redis node URL (repeat for RedLock); default: start a redis-server")
      ->delimiter(',');
   app.add_option(
         "--scenario", o.scenarios,
         "uncontended,independent,contended,handoff (default: these four); "
         "quorum, renewal, mutex, cluster (1 and 3 masters), semaphore (3 permits), rwlock (1 "
         "writer in 4), reentrant, threads (1 and 2 threads; --workers callers, default 32) "
         "(only when named)")
      ->delimiter(',');
   app.add_option("--strategy", o.strategies,
                  "spin,subscribe (default: both; the raw floor also runs, but not with contended)")
      ->delimiter(',');
   app.add_option("--workers", o.workers,
                  "Workers (default: independent 64, contended 16, handoff 2, semaphore, rwlock "
                  "and reentrant 12)")
      ->check(CLI::Range(1, max_workers));
   app.add_option(
         "--processes", o.processes,
         "Spread the workers over N processes (default: contended, semaphore, rwlock, reentrant "
         "min(workers,4), handoff "
         "min(workers,16), else 1)")
      ->check(CLI::Range(1, max_workers));
   app.add_option("--hold", o.holds,
                  "How long a worker holds the lock; a comma list runs each (default: "
                  "contended, semaphore, rwlock and reentrant 1ms, else 0)")
      ->delimiter(',');
   app.add_option("--duration", o.duration,
                  "Measure phase of each run (default 3s); renewal: the hold (default 30s)");
   app.add_option("--warmup", o.warmup, "Warm-up before each measure (default 300ms)");
   app.add_option("--think", o.think,
                  "handoff: a worker pauses uniformly 0..this after its release (default 100ms)");
   app.add_option("--settle", o.settle,
                  "handoff: a holder releases once another worker has waited this long "
                  "(default 5ms)");
   app.add_option("--spin-interval", o.spin_interval,
                  "spin: retry interval (default 100ms, the library's)");
   app.add_option("--spin-jitter", o.spin_jitter,
                  "spin: most random extra delay (default 100ms, the library's)");
   app.add_flag("--fair", o.fair,
                "Take a fair lock (lock_options::fair; uncontended, independent, contended and "
                "handoff only): its rows say strategy \"fair\", and there is no spin row");
   app.add_flag(
      "--no-fence", o.no_fence,
      "Lock with lock_options::fence = false (a plain SET NX, no fencing token), in every "
      "lock scenario but threads, beside the raw floor: its rows say \"fence\": false (table: the "
      "strategy ends in -nf)");
   app.add_flag(
      "--checked-floor", o.checked_floor,
      "The raw floor releases by a script that checks its token (EVALSHA of GET, "
      "compare and DEL, and PUBLISH in handoff) instead of DEL: the floor of any lock "
      "that checks its token. The rows of a scenario with a raw floor then say \"floor\": "
      "\"checked\", and are judged by no target over raw (table: raw-chk)");
   app.add_option("--owner", o.owner,
                  "Lock with lock_options::owner = LABEL (a holder label), to see what it costs: "
                  "its rows say \"owner_bytes\"")
      ->type_name("LABEL");
   app.add_flag("--no-renew", o.no_renew,
                "Lock with renew = false (no watchdog), to see what it costs");
   app.add_option("--nodes", o.nodes, "quorum: redis-servers to start (default 5)")
      ->check(CLI::Range(1, 15));
   app.add_option("--frozen", o.frozen,
                  "quorum: how many nodes to freeze (SIGSTOP) while measuring; a comma list runs "
                  "each (default: 0,1,2)")
      ->delimiter(',')
      ->check(CLI::NonNegativeNumber);
   app.add_option("--node-timeout", o.node_timeout,
                  "config::node_timeout of the clients (default 50ms, the library's)");
   app.add_option("--leases", o.leases,
                  "renewal: leases held at once, on distinct keys (default 10000)")
      ->check(CLI::Range(1, 1'000'000));
   app.add_option("--ttl", o.ttl,
                  "renewal: the leases' TTL; the watchdog renews every ttl/3 (default 3s)");
   app.add_flag("--json", o.json, "One JSON object per line per run, instead of a table");
   app.add_option("--plot", o.plot, "Draw the handoff latency CDFs into this PNG file (gnuplot)");
}

constexpr char const* legend =
   "times in microseconds; cyc: async_lock start to async_unlock end; hof: release by one worker\n"
   "to acquisition by another; cmd/acq: INFO commandstats calls per acquisition, with those run\n"
   "inside scripts; req/acq: without them; cpu/1k: server CPU ms per 1000 acquisitions; cli/acq:\n"
   "worker processes' CPU microseconds per acquisition; lost/a: the library's tries that lost,\n"
   "per acquisition; relost: of them, those after a lock call's first (a waiter woken in vain);\n"
   "min/proc: fewest acquisitions of one process; xraw: cycle p50 (handoff: handoff p50) over\n"
   "the raw row's; cpu/r: server CPU over the raw row's; spin/s: the spin row's rate over\n"
   "subscribe's; target: issue 9's or 27's target for the row (JSON: target, target_met)\n";

// Runs every planned run and prints it as it ends. Returns false when a sanity check failed.
bool run_all(options const& o, std::vector<run_spec> const& runs, std::optional<pid_t> server)
{
   bool const progress = ::isatty(STDERR_FILENO) != 0;
   bool sane = true;
   std::optional<summary> raw, spin;
   std::vector<plot_series> series;
   if (!o.json)
      std::cout << table_header() << std::flush;
   for (std::size_t i = 0; i < runs.size(); ++i) {
      auto const what =
         "[" + std::to_string(i + 1) + "/" + std::to_string(runs.size()) + "] " + describe(runs[i]);
      if (progress)
         std::cerr << "\r\033[K" << what << ": warming up" << std::flush;
      auto r = run_once(runs[i], server, [&](double s) {
         if (progress)
            std::fprintf(stderr, "\r\033[K%s: measuring %.1f/%.1f s", what.c_str(), s,
                         static_cast<double>(runs[i].duration.count()) / 1000);
      });
      if (progress)
         std::cerr << "\r\033[K" << std::flush;
      auto const s = summarize(r, raw ? &*raw : nullptr, spin ? &*spin : nullptr);
      if (r.spec.st == strategy::raw)
         raw = s;
      if (r.spec.st == strategy::spin)
         spin = s;
      std::cout << (o.json ? to_json(s) + "\n" : table_row(s)) << std::flush;
      if (!s.sane) {
         sane = false;
         std::cerr << "locksmith-bench: sanity check failed for " << describe(r.spec) << ": "
                   << s.overlaps << " overlaps, " << s.failures << " failures, " << s.acquisitions
                   << " acquisitions"
                   << (s.error.empty() ? "" : " (first failure: " + s.error + ")") << "\n";
      }
      if (r.spec.sc == scenario::handoff && !r.handoff_ns.empty())
         series.push_back({describe(r.spec), std::move(r.handoff_ns)});
   }
   if (!o.json)
      std::cout << legend;
   if (!o.plot.empty()) {
      auto const error = plot_handoff_cdf(o.plot, std::move(series));
      std::cerr << "locksmith-bench: "
                << (error.empty() ? "wrote the handoff CDF plot to " + o.plot : error) << "\n";
   }
   return sane;
}

}  // namespace
}  // namespace locksmith::bench

int main(int argc, char** argv)
{
   using namespace locksmith::bench;
   CLI::App app{"locksmith-bench: distributed-lock workloads on Redis, spin against subscribe"};
   options o;
   add_options(app, o);
   CLI11_PARSE(app, argc, argv);
   try {
      // First, so that a bad option fails before a server starts.
      auto runs = plan(o);
      auto const quorum = wanted(o, "quorum") ? std::optional{plan_quorum(o)} : std::nullopt;
      auto renewal = wanted(o, "renewal") ? std::optional{plan_renewal(o)} : std::nullopt;
      std::unique_ptr<redis_process> own;
      std::optional<pid_t> server;
      auto nodes = o.urls;
      if (!o.urls.empty())
         check_reachable(nodes);
      if (nodes.empty() && (!runs.empty() || renewal || wanted(o, "threads"))) {
         own = std::make_unique<redis_process>();  // quorum starts its own nodes
         nodes = {own->url()};
         server = own->pid();
      }
      bool sane = true;
      if (!runs.empty()) {
         for (auto& r : runs)
            r.nodes = nodes;
         sane = run_all(o, runs, server) && sane;
      }
      if (quorum)
         sane = run_quorum(*quorum) && sane;
      if (wanted(o, "mutex"))
         sane = run_mutex(plan_of_servers<mutex_plan>(o)) && sane;
      if (wanted(o, "cluster"))
         sane = run_cluster(plan_of_servers<cluster_plan>(o)) && sane;
      if (wanted(o, "threads")) {
         threads_plan t{.json = o.json};
         if (o.workers > 0)
            t.workers = o.workers;
         if (!o.duration.empty())
            t.duration = duration_of(o.duration, "--duration");
         t.warmup = duration_of(o.warmup, "--warmup");
         sane = run_threads(t, nodes.front()) && sane;
      }
      if (renewal) {
         renewal->nodes = nodes;
         renewal->server = server;
         sane = run_renewal(*renewal) && sane;
      }
      return sane ? 0 : 1;
   } catch (CLI::Error const& e) {
      return app.exit(e);
   } catch (std::exception const& e) {
      std::cerr << "locksmith-bench: " << e.what() << "\n";
      return 2;
   }
}
