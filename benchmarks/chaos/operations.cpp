// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The operation scenarios' driver: the workers lock while the scenario's operation runs again
// and again, each one marked, timed and followed by the first grant of every name; then the
// checks of the fault mode, and one JSON line.
#include "operations.hpp"

#include "../server.hpp"
#include "processes.hpp"

#include <locksmith/error.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace locksmith::bench {
namespace {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

double ms_between(clock_type::time_point from, clock_type::time_point to)
{
   return std::chrono::duration<double, std::milli>(to - from).count();
}

// 5 single nodes restarted empty one at a time. By the README's rule (Restarting nodes), the
// next restart comes once the previous node has been up for the quarantine, and --pause-ms (1 s)
// more; --restart-spacing-ms instead starts them that far apart, whatever the quarantine.
class rolling_restart final : public scenario {
public:
   rolling_restart(chaos_options const& o, ops_options const& x)
       : spacing_{x.spacing_ms}
       , quarantine_{o.quarantine_ms}
   {
      for (int i = 0; i < o.nodes; ++i)
         nodes_.push_back(std::make_unique<redis_process>());
   }

   std::vector<std::string> worker_nodes() const override { return check_urls(); }
   std::vector<std::string> check_urls() const override
   {
      std::vector<std::string> urls;
      for (auto const& n : nodes_)
         urls.push_back(n->url());
      return urls;
   }
   std::chrono::milliseconds spacing() const override { return spacing_; }

   // By the rule, the operation lasts until the node is back in the vote: its restart, then its
   // quarantine (counted from its start, as the client counts it from the server's uptime).
   double operate(int k, std::function<void()> const& begin) override
   {
      begin();
      auto const t0 = clock_type::now();
      nodes_[static_cast<std::size_t>(k) % nodes_.size()]->restart();
      auto const restarted = clock_type::now();
      restart_ms_ = std::max(restart_ms_, ms_between(t0, restarted));
      if (spacing_.count() == 0)
         std::this_thread::sleep_until(restarted + std::chrono::milliseconds{quarantine_});
      return ms_between(t0, clock_type::now());
   }

   std::string json_fields() const override
   {
      return ",\"nodes\":" + std::to_string(nodes_.size()) +
             ",\"quarantine_ms\":" + std::to_string(quarantine_) + ",\"spacing\":\"" +
             (spacing_.count() == 0 ? std::string{"rule"}
                                    : std::to_string(spacing_.count()) + " ms") +
             "\",\"restart_ms_max\":" + std::to_string(static_cast<long>(restart_ms_));
   }

private:
   std::chrono::milliseconds spacing_;  // zero: the rule
   int quarantine_;
   double restart_ms_ = 0;
   std::vector<std::unique_ptr<redis_process>> nodes_;
};

void apply_defaults(std::string const& name, chaos_options& o, ops_options const& x)
{
   bool const cluster = name != "rolling-restart";
   bool const failover = name.ends_with("failover");
   // A kill -9 or a Sentinel's failover takes seconds: leases and waits that outlast it.
   bool const long_failover = name == "failover" || name == "sentinel-failover";
   o.nodes = cluster ? 1 : 5;
   o.quarantine_ms = cluster ? 0 : 3000;
   o.ttl_ms = long_failover ? 10'000 : 2000;
   o.wait_ms = long_failover ? 20'000 : 5000;
   o.wait_replicas = x.wait_replicas >= 0 ? static_cast<unsigned>(x.wait_replicas)
                     : failover           ? 1u
                                          : 0u;
   o.nodes = x.nodes.value_or(o.nodes);
   o.ttl_ms = x.ttl_ms.value_or(o.ttl_ms);
   o.wait_ms = x.wait_ms.value_or(o.wait_ms);
   o.quarantine_ms = x.quarantine_ms.value_or(o.quarantine_ms);
}

// What one run measured besides the shared block.
struct record {
   std::vector<double> op_ms, first_grant_ms;  // per operation; -1: a name had no grant
   std::string failure;                        // why an operation failed; empty: none did
   double seconds = 0;
   long crashed = 0, keys_left = 0, leftover = 0;
};

std::size_t tracked(chaos_options const& o)
{
   return std::min(o.labels.empty() ? static_cast<std::size_t>(o.names) : o.labels.size(),
                   max_tracked_names);
}

// Once an operation began (op_mark_ns): the longest any name waited for its first grant after
// it, in ms, waiting at most `limit` for them; -1 when a name had none by then.
double first_grants(chaos_options const& o, shared_block const& shm, clock_type::duration limit)
{
   auto const mark = shm.op_mark_ns.load();
   auto const all_granted = [&] {
      for (std::size_t i = 0; i < tracked(o); ++i)
         if (shm.first_grant_after_mark_ns[i] < mark)
            return false;
      return true;
   };
   for (auto const until = clock_type::now() + limit; !all_granted();) {
      if (clock_type::now() >= until)
         return -1;
      std::this_thread::sleep_for(5ms);
   }
   std::int64_t latest = mark;
   for (std::size_t i = 0; i < tracked(o); ++i)
      latest = std::max(latest, shm.first_grant_after_mark_ns[i].load());
   return static_cast<double>(latest - mark) / 1e6;
}

void run_operations(std::string const& name, chaos_options const& o, ops_options const& x,
                    scenario& sc, shared_block& shm, record& r,
                    volatile std::sig_atomic_t const& interrupted)
{
   auto const t0 = clock_type::now();
   for (int k = 0; !interrupted && clock_type::now() - t0 < std::chrono::seconds{o.seconds}; ++k) {
      auto const start = clock_type::now();
      try {
         r.op_ms.push_back(sc.operate(k, [&] { begin_operation(shm); }));
         end_operation(shm);
         r.first_grant_ms.push_back(
            first_grants(o, shm, std::chrono::milliseconds{o.wait_ms} + 10s));
         sc.settle();
      } catch (std::runtime_error const& e) {
         end_operation(shm);
         r.failure = name + " #" + std::to_string(k) + ": " + e.what();
         std::cerr << "locksmith-chaos: " << r.failure << "\n";
         return;
      }
      std::this_thread::sleep_until(
         std::max(clock_type::now() + std::chrono::milliseconds{x.pause_ms}, start + sc.spacing()));
   }
}

double percentile(std::vector<double> v, double q)
{
   if (v.empty())
      return 0;
   std::sort(v.begin(), v.end());
   return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

// The q-quantile of a wait histogram, in ms (bucket lower bounds); 0 when it is empty.
long percentile(std::atomic<long> const (&h)[wait_buckets], double q)
{
   long total = 0;
   for (auto const& b : h)
      total += b.load();
   long seen = 0;
   auto const want = static_cast<long>(q * static_cast<double>(total));
   for (std::size_t i = 0; i < wait_buckets; ++i)
      if ((seen += h[i].load()) > want)
         return static_cast<long>(i);
   return 0;
}

// {"kind":count,...} of the non-zero kinds, summed over the tables.
template <std::size_t N>
std::string kinds(std::array<std::atomic<long> const*, N> const& tables)
{
   std::string s = "{";
   for (std::size_t i = 0; i < error_kinds; ++i) {
      long n = 0;
      for (auto const* t : tables)
         n += t[i].load();
      if (n > 0)
         s += (s.size() > 1 ? ",\"" : "\"") + error_kind_name(i) + "\":" + std::to_string(n);
   }
   return s + "}";
}

struct verdict {
   bool failed = false;
   std::string target;  // the issue's target for this scenario, and whether it was met
};

// The checks that fail a run, and the scenario's target (reported, never a failure: timing on a
// loaded machine is a measurement, not a check).
verdict judge(std::string const& name, chaos_options const& o, ops_options const& x,
              scenario const& sc, shared_block const& shm, record const& r, long extra_p99)
{
   auto const op_max = percentile(r.op_ms, 1.0);
   auto const grant_max = percentile(r.first_grant_ms, 1.0);
   auto const timeout_kind = static_cast<std::size_t>(error::wait_timeout);
   long const timeouts =
      shm.lock_error_kind[0][timeout_kind] + shm.lock_error_kind[1][timeout_kind];
   // A wait that outlasts the operation must not time out; a shorter one may.
   bool const timeouts_allowed = o.wait_ms < op_max + 1000;
   bool const lock_errors_bad = shm.lock_errors - (timeouts_allowed ? timeouts : 0) > 0;
   // An unlock that completed with an error is reported, not failed, as in the fault mode: the
   // client still owns its release and sends it again until it lands (keys_left checks that).
   // But where no lease may be lost, no unlock may find its key gone or another owner's in it:
   // that is a lease lost unseen, or a verdict read from a release whose earlier copy's lost
   // reply had released the key already (9b7d95a).
   bool const leases_bad = sc.keeps_leases() && shm.leases_lost > 0;
   auto const unlocks_that = [&](error e) {
      return shm.unlock_error_kind[static_cast<std::size_t>(e)].load();
   };
   bool const verdicts_bad =
      sc.keeps_leases() && unlocks_that(error::not_owner) + unlocks_that(error::lease_expired) > 0;
   bool const no_grant = std::count(r.first_grant_ms.begin(), r.first_grant_ms.end(), -1.0) > 0;
   verdict v;
   v.failed = shm.overlaps > 0 || shm.hangs > 0 || r.keys_left != 0 || r.leftover != 0 ||
              r.crashed > 0 || !r.failure.empty() || no_grant || lock_errors_bad || leases_bad ||
              verdicts_bad;
   char buf[160];
   if (name == "slot-move" || name == "reshard")
      std::snprintf(buf, sizeof buf, "extra_wait_p99_ms <= op_ms_max + 100: %s",
                    extra_p99 <= op_max + 100 ? "met" : "missed");
   else if (name == "sentinel-failover")
      std::snprintf(buf, sizeof buf, "0 overlaps: %s", shm.overlaps == 0 ? "met" : "missed");
   else if (name == "rolling-restart")
      std::snprintf(buf, sizeof buf, "0 failed acquisitions, 0 overlaps: %s",
                    shm.lock_errors == 0 && shm.overlaps == 0 ? "met" : "missed");
   else
      std::snprintf(buf, sizeof buf, "first_grant_after_op_ms_max <= %d + 1000: %s",
                    x.node_timeout_ms,
                    grant_max >= 0 && grant_max <= x.node_timeout_ms + 1000 ? "met" : "missed");
   v.target = buf;
   return v;
}

bool report(std::string const& name, chaos_options const& o, ops_options const& x,
            scenario const& sc, shared_block const& shm, record const& r)
{
   auto const p99_during = percentile(shm.wait_ms[1], 0.99);
   auto const p99_outside = percentile(shm.wait_ms[0], 0.99);
   auto const extra_p99 = std::max(0L, p99_during - p99_outside);
   auto const v = judge(name, o, x, sc, shm, r, extra_p99);
   auto const errors = kinds(std::array{shm.lock_error_kind[0], shm.lock_error_kind[1]});
   auto const errors_during = kinds(std::array{shm.lock_error_kind[1]});
   auto const unlock_errors = kinds(std::array{shm.unlock_error_kind});
   std::ostringstream j;
   j.setf(std::ios::fixed);
   j.precision(1);
   j << "{\"scenario\":\"" << name << "\",\"fence\":" << (o.fence ? "true" : "false")
     << ",\"processes\":" << o.processes << ",\"coroutines\":" << o.coroutines
     << ",\"names\":" << tracked(o) << ",\"ttl_ms\":" << o.ttl_ms << ",\"wait_ms\":" << o.wait_ms
     << ",\"wait_replicas\":" << o.wait_replicas << sc.json_fields() << ",\"seconds\":" << r.seconds
     << ",\"operations\":" << r.op_ms.size() << ",\"op_ms\":" << ms_list(r.op_ms)
     << ",\"first_grant_after_op_ms\":" << ms_list(r.first_grant_ms)
     << ",\"op_ms_p50\":" << percentile(r.op_ms, 0.5)
     << ",\"op_ms_max\":" << percentile(r.op_ms, 1.0) << ",\"attempts\":" << shm.attempts.load()
     << ",\"grants\":" << shm.grants.load() << ",\"errors\":" << errors
     << ",\"errors_during_ops\":" << errors_during << ",\"unlock_errors\":" << unlock_errors
     << ",\"max_unavailable_ms\":" << static_cast<double>(shm.max_gap_ns.load()) / 1e6
     << ",\"first_grant_after_op_ms_p50\":" << percentile(r.first_grant_ms, 0.5)
     << ",\"first_grant_after_op_ms_max\":" << percentile(r.first_grant_ms, 1.0)
     << ",\"wait_ms_p99_during_ops\":" << p99_during
     << ",\"wait_ms_p99_outside_ops\":" << p99_outside << ",\"extra_wait_ms_p99\":" << extra_p99
     << ",\"overlaps\":" << shm.overlaps.load()
     << ",\"stale_writes_rejected\":" << shm.stale_writes.load()
     << ",\"leases_lost\":" << shm.leases_lost.load() << ",\"hangs\":" << shm.hangs.load()
     << ",\"keys_left\":" << r.keys_left << ",\"leftover_subscriptions\":" << r.leftover
     << ",\"crashed_workers\":" << r.crashed << ",\"operation_failure\":\"" << json_text(r.failure)
     << "\",\"target\":\"" << v.target << "\",\"ok\":" << (v.failed ? "false" : "true") << "}\n";
   std::cout << j.str() << std::flush;
   return v.failed;
}

// Until every name has been granted once (the clients have found the servers), at most 20 s.
void warm_up(chaos_options const& o, shared_block const& shm)
{
   for (auto const until = clock_type::now() + 20s; clock_type::now() < until;) {
      std::size_t granted = 0;
      for (std::size_t i = 0; i < tracked(o); ++i)
         granted += shm.last_grant_ns[i] != 0 ? 1 : 0;
      if (granted == tracked(o))
         return;
      std::this_thread::sleep_for(20ms);
   }
}

struct worker_guard {
   std::vector<pid_t> pids;
   ~worker_guard() { kill_workers(pids); }
};

}  // namespace

std::vector<std::string> const& operation_scenarios()
{
   static std::vector<std::string> const names{"slot-move",       "reshard",
                                               "failover",        "manual-failover",
                                               "rolling-restart", "sentinel-failover"};
   return names;
}

std::unique_ptr<scenario> make_rolling_restart(chaos_options& o, ops_options const& x)
{
   return std::make_unique<rolling_restart>(o, x);
}

int run_operation_scenario(std::string const& name, chaos_options o, ops_options const& x,
                           volatile std::sig_atomic_t const& interrupted)
{
   apply_defaults(name, o, x);
   auto* const shm = map_shared_block();
   if (!shm)
      return 2;
   worker_guard workers;
   try {
      auto sc = name == "rolling-restart"     ? make_rolling_restart(o, x)
                : name == "sentinel-failover" ? make_sentinel_failover(o, x)
                                              : make_cluster_scenario(name, o, x);
      redis_process resource;
      workers.pids = fork_workers(o, sc->worker_nodes(), resource.url(), *shm);
      warm_up(o, *shm);
      record r;
      auto const t0 = clock_type::now();
      run_operations(name, o, x, *sc, *shm, r, interrupted);
      // A quiet moment, so that what the last operation left in flight settles, then stop.
      std::this_thread::sleep_for(std::chrono::milliseconds{o.ttl_ms});
      r.seconds = std::chrono::duration<double>(clock_type::now() - t0).count();
      shm->stop = true;
      r.crashed = reap_workers(o, workers.pids, *shm);
      for (auto const& url : sc->check_urls()) {
         r.keys_left += orphan_keys(url);
         r.leftover += subscribed_clients(url);
      }
      bool const failed = report(name, o, x, *sc, *shm, r);
      return failed ? 1 : interrupted ? 2 : 0;
   } catch (std::exception const& e) {
      std::cerr << "locksmith-chaos: " << name << ": " << e.what() << "\n";
      return 2;
   }
}

}  // namespace locksmith::bench
