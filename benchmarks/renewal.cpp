// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "renewal.hpp"
#include "tokens.hpp"

#include "cpu.hpp"

#include "report.hpp"
#include "server.hpp"

#include <locksmith/locksmith.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>

namespace locksmith::bench {
namespace {

namespace asio = boost::asio;
using clock = std::chrono::steady_clock;

// Locks and unlocks in flight at once while taking and releasing: enough to fill the pipeline.
constexpr std::size_t lanes = 256;

/// What a run measured. The hold starts once every lease is taken.
struct renewal_result {
   std::int64_t taken = 0;
   double take_s = 0, held_for_s = 0, release_s = 0;
   std::int64_t lost = 0;      // lost() at the end, async_wait_lost succeeded, or no longer held()
   std::int64_t failures = 0;  // failed locks and unlocks (an unlock of a lost lease is in `lost`)
   std::string first_error;
   std::optional<std::int64_t> renewals;  // leases renewed during the hold (the script's GETs)
   std::optional<std::int64_t> requests;  // EVALSHA + EVAL calls during the hold
   std::optional<std::int64_t> noscript;  // EVALSHA calls that failed (NOSCRIPT) and went again
   std::optional<std::int64_t> commands;  // every command during the hold (without INFO)
   double client_cpu_ms = 0;              // this process's user + system CPU during the hold
   double rss_before_mb = 0;              // VmRSS with the client connected, before the leases
   double rss_taken_mb = 0;               // ... with every lease taken
   double rss_end_mb = 0;                 // ... at the end of the hold
   double rss_peak_mb = 0;                // VmHWM then: the most the process ever had
   std::optional<double> server_cpu_ms;   // during the hold, when the harness runs the server
   std::vector<char> lost_event;          // per lease: its async_wait_lost succeeded

   void fail(std::string const& what)
   {
      if (failures++ == 0)
         first_error = what;
   }
};

// A field of /proc/self/status in MB: VmRSS (resident now) or VmHWM (the most it ever was).
double status_mb(std::string const& field)
{
   std::ifstream in{"/proc/self/status"};
   for (std::string line; std::getline(in, line);)
      if (line.starts_with(field + ":"))
         return std::stod(line.substr(field.size() + 1)) / 1024;  // given in kB
   return 0;
}

double rss_mb()
{
   return status_mb("VmRSS");
}

/// What this process and the server had counted at one moment.
struct snapshot {
   clock::time_point at;
   double cpu_ms = 0;
   std::optional<double> server_cpu_ms;
   std::optional<std::map<std::string, command_stat>> stats;
};

snapshot take_snapshot(renewal_spec const& s)
{
   // INFO blocks this thread for a round trip, which the watchdogs can spare twice per run.
   auto stats = command_stats(s.nodes);
   return {clock::now(), cpu_ms_now(), s.server ? process_cpu_ms(*s.server) : std::nullopt,
           std::move(stats)};
}

command_stat stat_of(std::map<std::string, command_stat> const& m, std::string const& name)
{
   auto it = m.find(name);
   return it == m.end() ? command_stat{} : it->second;
}

void count_hold(renewal_result& out, snapshot const& before, snapshot const& after)
{
   out.held_for_s = std::chrono::duration<double>(after.at - before.at).count();
   out.client_cpu_ms = after.cpu_ms - before.cpu_ms;
   if (before.server_cpu_ms && after.server_cpu_ms)
      out.server_cpu_ms = *after.server_cpu_ms - *before.server_cpu_ms;
   if (!before.stats || !after.stats)
      return;
   auto delta = [&](std::string const& name) {
      auto const a = stat_of(*after.stats, name), b = stat_of(*before.stats, name);
      return command_stat{a.calls - b.calls, a.failed - b.failed};
   };
   auto const evalsha = delta("evalsha"), eval = delta("eval");
   out.requests = evalsha.calls + eval.calls;
   out.noscript = evalsha.failed;
   // Only renewals run scripts during the hold, and the extend script reads each lease's key once
   // (a batch renews many leases in one call).
   out.renewals = delta("get").calls;
   std::int64_t total = 0;
   for (auto const& [name, st] : *after.stats)
      total += name == "info" ? 0 : st.calls - stat_of(*before.stats, name).calls;
   out.commands = total;
}

// Runs body(i) for every i in [0, n), `lanes` at a time; returns when all have ended.
asio::awaitable<void> for_each_index(std::size_t n,
                                     std::function<asio::awaitable<void>(std::size_t)> const& body)
{
   auto ex = co_await asio::this_coro::executor;
   std::size_t next = 0;
   std::size_t running = std::min(lanes, n);
   if (running == 0)
      co_return;
   asio::steady_timer all_done{ex, clock::time_point::max()};
   std::exception_ptr error;
   auto lane = [&]() -> asio::awaitable<void> {
      while (next < n)
         co_await body(next++);
   };
   for (std::size_t i = 0, lanes_started = running; i < lanes_started; ++i)
      asio::co_spawn(ex, lane(), [&](std::exception_ptr e) {
         if (e && !error)
            error = e;
         if (--running == 0)
            all_done.cancel();
      });
   // Woken by the last lane to end.
   co_await all_done.async_wait(use_tuple);
   if (error)
      std::rethrow_exception(error);
}

std::string lease_name(std::size_t i)
{
   return "k" + std::to_string(i);
}

asio::awaitable<void> take_all(renewal_spec const& s, client& cli, std::vector<lease>& leases,
                               renewal_result& out)
{
   lock_options const opts{.ttl = s.ttl, .wait = 10s};  // renew: the default
   auto const t0 = clock::now();
   co_await for_each_index(leases.size(), [&](std::size_t i) -> asio::awaitable<void> {
      auto [ec, held] = co_await cli.async_lock(lease_name(i), opts, use_tuple);
      if (ec) {
         out.fail("async_lock: " + ec.message());
         co_return;
      }
      leases[i] = std::move(held);
      ++out.taken;
   });
   out.take_s = std::chrono::duration<double>(clock::now() - t0).count();
}

// Sleeps through the hold, reporting progress.
asio::awaitable<void> hold(renewal_spec const& s, clock::time_point start,
                           progress_fn const& progress)
{
   asio::steady_timer tick{co_await asio::this_coro::executor};
   for (auto now = start; now < start + s.hold; now = clock::now()) {
      if (progress)
         progress(std::chrono::duration<double>(now - start).count());
      tick.expires_at(std::min(start + s.hold, now + 100ms));
      co_await tick.async_wait(use_tuple);
   }
}

asio::awaitable<void> release_all(client& cli, std::vector<lease>& leases, renewal_result& out)
{
   auto const t0 = clock::now();
   co_await for_each_index(leases.size(), [&](std::size_t i) -> asio::awaitable<void> {
      if (leases[i].name().empty())
         co_return;  // never taken
      auto [ec] = co_await cli.async_unlock(leases[i], use_tuple);
      if (ec && ec != error::lease_lost)  // a lost lease is counted as such
         out.fail("async_unlock: " + ec.message());
   });
   out.release_s = std::chrono::duration<double>(clock::now() - t0).count();
}

asio::awaitable<void> run(renewal_spec const& s, client& cli, std::vector<lease>& leases,
                          renewal_result& out, progress_fn const& progress)
{
   // One lock first, so that the connections are up and the acquire and release scripts loaded
   // (the extend script is not: the first renewals find NOSCRIPT, see noscript_fallbacks).
   auto [ec, first] = co_await cli.async_lock("warm-up", lock_options{.ttl = s.ttl}, use_tuple);
   if (ec) {
      out.fail("warm-up async_lock: " + ec.message());
      co_return;
   }
   co_await cli.async_unlock(first, use_tuple);
   out.rss_before_mb = rss_mb();
   co_await take_all(s, cli, leases, out);
   out.rss_taken_mb = rss_mb();

   out.lost_event.assign(leases.size(), 0);
   for (std::size_t i = 0; i < leases.size(); ++i)
      if (leases[i].held())
         leases[i].async_wait_lost([&out, i](error_code lost_ec) {
            if (!lost_ec)
               out.lost_event[i] = 1;
         });
   auto const before = take_snapshot(s);
   co_await hold(s, before.at, progress);
   count_hold(out, before, take_snapshot(s));
   out.rss_end_mb = rss_mb();
   out.rss_peak_mb = status_mb("VmHWM");
   for (std::size_t i = 0; i < leases.size(); ++i)
      if (!leases[i].name().empty() && (leases[i].lost() || out.lost_event[i] || !leases[i].held()))
         ++out.lost;
   co_await release_all(cli, leases, out);
}

renewal_result measure(renewal_spec const& s, progress_fn const& progress)
{
   renewal_result out;
   asio::io_context io{1};
   client cli{io.get_executor(),
              config{.nodes = s.nodes,
                     .prefix = s.prefix,
                     .node_timeout = s.node_timeout,
                     .restart_quarantine = std::chrono::milliseconds{0}}};  // servers just started
   std::vector<lease> leases(static_cast<std::size_t>(s.leases));
   if (cli.config_error()) {
      out.fail("bad configuration: " + cli.config_error().message());
      return out;
   }
   asio::co_spawn(io, run(s, cli, leases, out, progress), [&](std::exception_ptr e) {
      if (e)
         out.fail("the run threw an exception");
      // Finish what the client owns, then stop: the connections' loops may still be winding down.
      cli.async_close([&](error_code) { io.stop(); });
   });
   io.run();
   return out;
}

bool sane(renewal_spec const& s, renewal_result const& r)
{
   // A hold longer than the renewal interval must have renewed something.
   bool const renewed = s.hold < s.ttl / 3 || r.renewals.value_or(1) > 0;
   return r.lost == 0 && r.failures == 0 && r.taken == s.leases && renewed;
}

// Issue 9's targets: at most 4 µs of client CPU per renewal and 1 KiB resident per lease.
struct renewal_targets {
   std::optional<double> us_per_renewal, kib_per_lease;
   std::optional<bool> met;  // unknown without renewals or leases
};

renewal_targets targets_of(renewal_result const& r)
{
   renewal_targets t{
      .us_per_renewal = per(r.client_cpu_ms * 1000, static_cast<double>(r.renewals.value_or(0))),
      .kib_per_lease = per((r.rss_taken_mb - r.rss_before_mb) * 1024, static_cast<double>(r.taken)),
      .met = std::nullopt};
   if (t.us_per_renewal && t.kib_per_lease)
      t.met = *t.us_per_renewal <= 4 && *t.kib_per_lease <= 1;
   return t;
}

std::string to_json(renewal_spec const& s, renewal_result const& r)
{
   json_object j;
   auto ms = [](milliseconds d) { return number(static_cast<double>(d.count())); };
   auto const held = r.held_for_s;
   auto const interval_s = static_cast<double>((s.ttl / 3).count()) / 1000;
   auto const t = targets_of(r);
   auto const rss_added = r.rss_taken_mb - r.rss_before_mb;
   j.field("scenario", json_string("renewal"));
   j.field("nodes", std::to_string(s.nodes.size()));
   j.field("leases", std::to_string(s.leases));
   j.field("taken", std::to_string(r.taken));
   j.field("ttl_ms", ms(s.ttl));
   j.field("renew_interval_ms", ms(s.ttl / 3));
   j.field("node_timeout_ms", ms(s.node_timeout));
   j.field("take_s", number(r.take_s));
   j.field("held_for_s", number(held));
   j.field("release_s", number(r.release_s));
   j.field("lost", std::to_string(r.lost));
   j.field("failures", std::to_string(r.failures));
   j.field("renewals", json_int(r.renewals));
   j.field("renewals_expected", number(static_cast<double>(r.taken) * held / interval_s));
   j.field("noscript_fallbacks", json_int(r.noscript));
   j.field("redis_requests", json_int(r.requests));
   j.field("redis_requests_per_s", json_number(per(as_double(r.requests), held)));
   j.field("leases_per_request",
           json_number(per(as_double(r.renewals),
                           static_cast<double>(r.requests.value_or(0) - r.noscript.value_or(0)))));
   j.field("redis_commands", json_int(r.commands));
   j.field("redis_commands_per_s", json_number(per(as_double(r.commands), held)));
   j.field("client_cpu_ms", number(r.client_cpu_ms));
   j.field("client_cpu_percent", json_number(per(r.client_cpu_ms / 10, held)));
   j.field("client_cpu_us_per_renewal", json_number(t.us_per_renewal));
   j.field("client_rss_mb", number(rss_added));
   j.field("client_rss_total_mb", number(r.rss_taken_mb));
   j.field("client_rss_before_mb", number(r.rss_before_mb));
   j.field("client_rss_end_mb", number(r.rss_end_mb));
   j.field("client_rss_peak_mb", number(r.rss_peak_mb));
   j.field("client_rss_kb_per_lease", json_number(t.kib_per_lease));
   j.field("server_cpu_ms", json_number(r.server_cpu_ms));
   j.field("server_cpu_percent", json_number(per(per(r.server_cpu_ms, 10), held)));
   j.field("targets", json_string("client_cpu_us_per_renewal <= 4, client_rss_kb_per_lease <= 1"));
   j.field("targets_met", t.met ? (*t.met ? "true" : "false") : "null");
   if (!r.first_error.empty())
      j.field("first_error", json_string(r.first_error));
   j.field("sane", sane(s, r) ? "true" : "false");
   return j.str();
}

constexpr char const* renewal_row_format =
   "%-8s %6s %5s %6s %6s %5s %4s %8s %8s %8s %8s %6s %7s %7s %7s %8s %6s %6s %6s\n";

std::string renewal_table_header()
{
   return underlined(table_line(renewal_row_format, "scenario", "leases", "ttl", "take s", "held s",
                                "lost", "fail", "renewals", "req/s", "cmd/s", "cli ms", "cli %",
                                "rss MB", "+rss MB", "end MB", "srv ms", "us/ren", "KiB/l",
                                "target"));
}

std::string table_row(renewal_spec const& s, renewal_result const& r)
{
   auto const n = [](auto v) { return std::to_string(v); };
   auto const opt_int = [](std::optional<std::int64_t> v) { return v ? std::to_string(*v) : "-"; };
   auto const t = targets_of(r);
   return table_line(renewal_row_format, "renewal", n(s.leases),
                     format_ms(static_cast<double>(s.ttl.count())), number(r.take_s),
                     number(r.held_for_s), n(r.lost), n(r.failures), opt_int(r.renewals),
                     cell(per(as_double(r.requests), r.held_for_s)),
                     cell(per(as_double(r.commands), r.held_for_s)), number(r.client_cpu_ms),
                     cell(per(r.client_cpu_ms / 10, r.held_for_s)), number(r.rss_taken_mb),
                     number(r.rss_taken_mb - r.rss_before_mb), number(r.rss_end_mb),
                     cell(r.server_cpu_ms), cell(t.us_per_renewal), cell(t.kib_per_lease),
                     t.met ? (*t.met ? "met" : "MISS") : "-") +
          failure_note(r.first_error);
}

constexpr char const* renewal_legend =
   "take s: time to take every lease (256 at a time); held s: the hold, during which the rest is\n"
   "counted; lost: leases lost (lost(), async_wait_lost, or no longer held() at the end);\n"
   "renewals: leases renewed (INFO commandstats: the extend script's GETs, one per lease);\n"
   "req/s: EVALSHA + EVAL calls per second (a batch renews the leases due together); cmd/s: every "
   "command, with those the scripts ran;\n"
   "cli ms, cli %: this process's CPU time; rss MB: VmRSS with every lease taken, +rss MB: over\n"
   "that before the first one, end MB: at the end of the hold; srv ms: the harness's\n"
   "redis-server's CPU time; us/ren: client CPU per renewal; KiB/l: +rss MB per lease; target:\n"
   "issue 9's, at most 4 us per renewal and 1 KiB per lease\n";

}  // namespace

bool run_renewal(renewal_spec const& s)
{
   bool const progress = ::isatty(STDERR_FILENO) != 0;
   auto const what = "renewal leases=" + std::to_string(s.leases) +
                     " ttl=" + format_ms(static_cast<double>(s.ttl.count()));
   if (progress)
      std::cerr << "\r\033[K" << what << ": taking the leases" << std::flush;
   auto const r = measure(s, [&](double elapsed) {
      if (progress)
         std::fprintf(stderr, "\r\033[K%s: holding %.1f/%.1f s", what.c_str(), elapsed,
                      static_cast<double>(s.hold.count()) / 1000);
   });
   if (progress)
      std::cerr << "\r\033[K" << std::flush;
   if (s.json)
      std::cout << to_json(s, r) << "\n";
   else
      std::cout << renewal_table_header() << table_row(s, r) << renewal_legend;
   std::cout << std::flush;
   bool const ok = sane(s, r);
   if (!ok)
      std::cerr << "locksmith-bench: sanity check failed for " << what << ": " << r.lost
                << " lost, " << r.failures << " failures, " << r.taken << " of " << s.leases
                << " taken"
                << (r.first_error.empty() ? "" : " (first failure: " + r.first_error + ")") << "\n";
   return ok;
}

}  // namespace locksmith::bench
