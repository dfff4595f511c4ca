// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// locksmith-chaos: mutual exclusion under faults that a user can run. It starts N redis-servers
// (the lock's nodes) and one more as the guarded resource, forks P worker processes of C
// coroutines each on K names, and meanwhile injects faults at random, one at a time: SIGSTOP for
// 0.1-1.5 s, CLIENT KILL TYPE normal and TYPE pubsub, kill -9 with an empty restart, and network
// delay of 5-300 ms for 0.3-2 s on one node (tc netem in a network namespace of its own when it
// runs as root on a kernel that has netem, else a TCP proxy in front of each node). Each
// holder counts itself into an occupancy counter on the resource (a second holder is an overlap)
// and makes a write that the resource accepts only with a fencing token above the last one it
// saw. Each holder also waits for its lease's loss signal, measures there how much of the
// lease's validity is left, and stops holding. At the end it checks every node for lock keys left
// behind and subscriptions left over, prints one JSON summary, and exits 1 on an overlap outside a
// restart's window, a loss signalled after valid_until, a hang, an orphan key, a leftover
// subscription or a crashed worker (2 when it could not run, or was interrupted).
// `--scenario` runs an operator's routine operations instead, under the same workers and checks
// (operations.hpp): slot moves, reshards, failovers and rolling restarts.
//
//   locksmith-chaos --duration 60s
//   locksmith-chaos --nodes 5 --processes 4 --coroutines 8 --names 8 --duration 10m
//   locksmith-chaos --scenario slot-move,reshard,failover --duration 30s
#include "../server.hpp"
#include "delay_proxy.hpp"
#include "netem.hpp"
#include "operations.hpp"
#include "options.hpp"
#include "processes.hpp"
#include "worker.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;
using locksmith::bench::blocking_command;
using locksmith::bench::chaos_options;
using locksmith::bench::delay_proxies;
using locksmith::bench::fork_workers;
using locksmith::bench::json_text;
using locksmith::bench::kill_workers;
using locksmith::bench::max_stamps;
using locksmith::bench::netem_net;
using locksmith::bench::now_ns;
using locksmith::bench::orphan_keys;
using locksmith::bench::reap_workers;
using locksmith::bench::redis_process;
using locksmith::bench::shared_block;
using locksmith::bench::subscribed_clients;

enum class fault { sigstop, kill_normal, kill_pubsub, restart, delay };
using fault_counts = std::array<long, 5>;

volatile std::sig_atomic_t interrupted = 0;

void on_signal(int)
{
   interrupted = 1;
}

// What a run sets up. Torn down in reverse on every path, so the network namespace goes too.
struct harness {
   std::unique_ptr<netem_net> net;
   std::string netem = "skipped: --no-delay";  // "on", or why not
   std::vector<std::unique_ptr<redis_process>> nodes;
   std::unique_ptr<redis_process> resource;
   std::unique_ptr<delay_proxies> proxies;
   std::vector<std::string> worker_nodes;  // where the workers reach the nodes and the resource
   std::string worker_resource;
   std::vector<pid_t> workers;  // not reaped yet

   ~harness() { kill_workers(workers); }

   char const* delay_via() const { return net ? "netem" : proxies ? "proxy" : "off"; }

   void set_delay(std::size_t node, std::chrono::microseconds d)
   {
      if (net && !net->set_delay(node, d))
         std::cerr << "locksmith-chaos: tc could not change the netem delay of node " << node
                   << "\n";
      if (proxies)
         proxies->set_delay(node, d);
   }
};

// Delay faults go through netem where it can be used, else through the proxies.
void choose_delay(chaos_options const& o, harness& h)
{
   if (!o.delay)
      return;
   std::string why;
   h.net = netem_net::open(o.nodes + 1, why);  // one pair more for the resource, never delayed
   h.netem = h.net ? "on" : "skipped: " + why;
   if (!h.net)
      std::cerr << "locksmith-chaos: netem skipped (" << why
                << "); delay faults go through a TCP proxy in front of each node\n";
}

void start_servers(chaos_options const& o, harness& h)
{
   auto const address = [&](int i) { return h.net ? h.net->host_address(i) : std::string{}; };
   for (int i = 0; i < o.nodes; ++i)
      h.nodes.push_back(std::make_unique<redis_process>(address(i)));
   h.resource = std::make_unique<redis_process>(address(o.nodes));
   // With netem the workers are in the namespace, and reach each server over its veth pair.
   auto const seen_by_workers = [&](redis_process const& p, int i) {
      return h.net ? "redis://" + address(i) + ":" + std::to_string(p.port()) : p.url();
   };
   for (int i = 0; i < o.nodes; ++i)
      h.worker_nodes.push_back(seen_by_workers(*h.nodes[i], i));
   h.worker_resource = seen_by_workers(*h.resource, o.nodes);
   if (o.delay && !h.net) {
      h.proxies = std::make_unique<delay_proxies>(h.worker_nodes);
      h.worker_nodes = h.proxies->urls();
   }
}

// One fault, finished before the next: the lock keeps a quorum throughout.
void inject(std::mt19937& rng, harness& h, shared_block& shm, std::vector<fault> const& kinds,
            fault_counts& counts)
{
   auto const node = rng() % h.nodes.size();
   auto& n = *h.nodes[node];
   auto const kind = kinds[rng() % kinds.size()];
   switch (kind) {
   case fault::sigstop:
      n.pause();
      std::this_thread::sleep_for(std::chrono::milliseconds{100 + rng() % 1400});
      n.resume();
      break;
   case fault::kill_normal:
      blocking_command(n.url(), {"CLIENT", "KILL", "TYPE", "normal"});
      break;
   case fault::kill_pubsub:
      blocking_command(n.url(), {"CLIENT", "KILL", "TYPE", "pubsub"});
      break;
   case fault::restart: {
      auto const i = shm.restart_count++;
      if (i < max_stamps)
         shm.restart_at[i] = now_ns();
      n.restart();
      break;
   }
   case fault::delay:
      h.set_delay(node, std::chrono::milliseconds{5 + rng() % 296});
      std::this_thread::sleep_for(std::chrono::milliseconds{300 + rng() % 1701});
      h.set_delay(node, 0us);
      break;
   }
   ++counts[static_cast<std::size_t>(kind)];
}

fault_counts run_faults(chaos_options const& o, harness& h, shared_block& shm)
{
   std::vector<fault> kinds{fault::sigstop, fault::kill_normal, fault::kill_pubsub};
   if (o.restarts)
      kinds.push_back(fault::restart);
   if (h.net || h.proxies)
      kinds.push_back(fault::delay);
   auto const t0 = clock_type::now();
   std::mt19937 rng{std::random_device{}()};
   fault_counts counts{};
   while (!interrupted && clock_type::now() - t0 < std::chrono::seconds{o.seconds}) {
      std::this_thread::sleep_for(std::chrono::milliseconds{200 + rng() % 600});
      inject(rng, h, shm, kinds, counts);
   }
   if (interrupted)
      std::cerr << "locksmith-chaos: interrupted, stopping early\n";
   return counts;
}

// Overlaps within a restart's reach (TTL + quarantine after it) are the RedLock hazard that the
// quarantine bounds; any other overlap is a bug.
long overlaps_near_restart(chaos_options const& o, shared_block const& shm)
{
   long near_restart = 0;
   auto const reach =
      std::chrono::nanoseconds{std::chrono::milliseconds{o.ttl_ms + o.quarantine_ms}}.count();
   auto const overlaps = std::min(shm.overlap_count.load(), max_stamps);
   auto const restarts = std::min(shm.restart_count.load(), max_stamps);
   for (std::size_t i = 0; i < overlaps; ++i)
      for (std::size_t j = 0; j < restarts; ++j)
         if (shm.overlap_at[i] >= shm.restart_at[j] &&
             shm.overlap_at[i] - shm.restart_at[j] <= reach) {
            ++near_restart;
            break;
         }
   return near_restart;
}

struct outcome {
   double seconds = 0;
   fault_counts faults{};
   long orphans = 0, leftover = 0, crashed = 0, near_restart = 0;
};

// Prints the summary; true when the run failed.
bool report(chaos_options const& o, harness const& h, shared_block const& shm, outcome const& r)
{
   long const without_restart = shm.overlaps - r.near_restart;
   auto const& f = r.faults;
   std::printf(
      "{\"scenario\":\"chaos\",\"fence\":%s,\"nodes\":%d,\"processes\":%d,\"coroutines\":%d,"
      "\"names\":%d,"
      "\"seconds\":%.1f,"
      "\"cycles\":%ld,\"cycles_per_s\":%.0f,\"overlaps\":%ld,\"overlaps_near_restart\":%ld,"
      "\"overlaps_without_restart\":%ld,\"stale_writes_rejected\":%ld,\"leases_lost\":%ld,"
      "\"min_loss_slack_us\":%ld,\"negative_loss_slack\":%ld,\"hangs\":%ld,\"lock_errors\":%ld,"
      "\"unlock_errors\":%ld,\"resource_errors\":%ld,"
      "\"orphan_keys\":%ld,\"leftover_subscriptions\":%ld,\"crashed_workers\":%ld,"
      "\"faults\":{\"sigstop\":%ld,\"kill_normal\":%ld,\"kill_pubsub\":%ld,\"restart\":%ld,"
      "\"delay\":%ld},"
      "\"delay_via\":\"%s\",\"netem\":\"%s\"}\n",
      o.fence ? "true" : "false", o.nodes, o.processes, o.coroutines, o.names, r.seconds,
      shm.cycles.load(), shm.cycles.load() / r.seconds, shm.overlaps.load(), r.near_restart,
      without_restart, shm.stale_writes.load(), shm.leases_lost.load(),
      shm.leases_lost.load() > 0 ? shm.min_loss_slack_us.load() : 0L,
      shm.negative_loss_slack.load(), shm.hangs.load(), shm.lock_errors.load(),
      shm.unlock_errors.load(), shm.resource_errors.load(), r.orphans, r.leftover, r.crashed, f[0],
      f[1], f[2], f[3], f[4], h.delay_via(), json_text(h.netem).c_str());
   return without_restart > 0 || shm.negative_loss_slack > 0 || shm.hangs > 0 || r.orphans != 0 ||
          r.leftover != 0 || r.crashed > 0;
}

// Everything but the report; throws std::runtime_error when a server cannot be run.
outcome run(chaos_options const& o, harness& h, shared_block& shm)
{
   choose_delay(o, h);
   start_servers(o, h);
   // The servers are new: let them pass the restart quarantine before the workers start.
   std::this_thread::sleep_for(std::chrono::milliseconds{o.quarantine_ms});
   h.workers = fork_workers(o, h.worker_nodes, h.worker_resource, shm, h.net.get());
   // The proxies' thread only now: a fork() copies only the thread that calls it.
   if (h.proxies)
      h.proxies->start();
   outcome r;
   auto const t0 = clock_type::now();
   r.faults = run_faults(o, h, shm);
   // A fault-free moment, so that what the faults left in flight settles, then stop.
   std::this_thread::sleep_for(std::chrono::milliseconds{o.ttl_ms});
   r.seconds = std::chrono::duration<double>(clock_type::now() - t0).count();
   shm.stop = true;
   r.crashed = reap_workers(o, h.workers, shm);
   if (h.proxies)
      h.proxies->stop();  // the workers' connections to the nodes go before the nodes are checked
   for (auto const& n : h.nodes) {
      r.orphans += orphan_keys(n->url());
      r.leftover += subscribed_clients(n->url());
   }
   r.near_restart = overlaps_near_restart(o, shm);
   return r;
}

// The fault mode: random faults on single nodes.
int run_faults_mode(chaos_options const& o)
{
   auto* const shm = locksmith::bench::map_shared_block();
   if (!shm)
      return 2;
   harness h;
   try {
      auto const r = run(o, h, *shm);
      bool const failed = report(o, h, *shm, r);
      return failed ? 1 : interrupted ? 2 : 0;
   } catch (std::exception const& e) {
      std::cerr << "locksmith-chaos: " << e.what() << "\n";
      return 2;
   }
}

}  // namespace

// Each scenario in turn, each on servers of its own; the worst exit status.
int main(int argc, char** argv)
{
   locksmith::bench::request q;
   if (int const status = locksmith::bench::parse_options(argc, argv, q); status >= 0)
      return status;
   // A signal ends the run early but cleanly: the namespace and the servers must not stay behind.
   std::signal(SIGINT, on_signal);
   std::signal(SIGTERM, on_signal);
   int worst = 0;
   for (auto const& name : q.scenarios) {
      if (interrupted)
         break;
      int const status = name == "faults"
                            ? run_faults_mode(q.o)
                            : locksmith::bench::run_operation_scenario(name, q.o, q.x, interrupted);
      worst = std::max(worst, status);
   }
   return worst;
}
