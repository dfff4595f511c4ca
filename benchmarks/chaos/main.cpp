// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// locksmith-chaos: mutual exclusion under faults that a user can run. It starts N redis-servers
// (the lock's nodes) and one more as the guarded resource, forks P worker processes of C
// coroutines each on K names, and meanwhile injects faults at random, one at a time: SIGSTOP for
// 0.1-1.5 s, CLIENT KILL TYPE normal and TYPE pubsub, and kill -9 with an empty restart. Each
// holder counts itself into an occupancy counter on the resource (a second holder is an overlap)
// and makes a write that the resource accepts only with a fencing token above the last one it
// saw. Each holder also waits for its lease's loss signal and measures there how much of the
// lease's validity is left. At the end it checks every node for lock keys left behind and
// subscriptions left over, prints one JSON summary, and exits 1 on an overlap outside a restart's
// window, a loss signalled after valid_until, a hang, an orphan key, a leftover subscription or a
// crashed worker (2 when it could not run).
//
//   locksmith-chaos --duration 60s
//   locksmith-chaos --nodes 5 --processes 4 --coroutines 8 --names 8 --duration 10m
#include "../server.hpp"
#include "worker.hpp"

#include <CLI/CLI.hpp>

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;
using locksmith::bench::blocking_command;
using locksmith::bench::redis_process;
using locksmith::bench::shared_block;
using locksmith::bench::max_stamps;
using locksmith::bench::now_ns;

// One fault, finished before the next: the lock keeps a quorum throughout.
void inject(std::mt19937& rng, std::vector<std::unique_ptr<redis_process>>& nodes, shared_block& shm, bool restarts,
            long counts[4])
{
   auto& n = *nodes[rng() % nodes.size()];
   switch (rng() % (restarts ? 4 : 3)) {
   case 0:
      n.pause();
      std::this_thread::sleep_for(std::chrono::milliseconds{100 + rng() % 1400});
      n.resume();
      ++counts[0];
      break;
   case 1:
      blocking_command(n.url(), {"CLIENT", "KILL", "TYPE", "normal"});
      ++counts[1];
      break;
   case 2:
      blocking_command(n.url(), {"CLIENT", "KILL", "TYPE", "pubsub"});
      ++counts[2];
      break;
   default: {
      auto const i = shm.restart_count++;
      if (i < max_stamps)
         shm.restart_at[i] = now_ns();
      n.restart();
      ++counts[3];
   }
   }
}

// Lock keys (not fence keys) still on the node, and connections still subscribed.
long orphan_keys(std::string const& url)
{
   auto const r = blocking_command(
      url, {"EVAL",
            "local n = 0 for _, k in ipairs(redis.call('KEYS', 'chaos:*')) do "
            "if not string.find(k, ':fence$') then n = n + 1 end end return n",
            "0"});
   return r ? std::stol(*r) : -1;
}

long subscribed_clients(std::string const& url)
{
   auto const r = blocking_command(url, {"CLIENT", "LIST", "TYPE", "pubsub"});
   if (!r)
      return -1;
   long n = 0;
   for (char c : *r)
      n += c == '\n' ? 1 : 0;
   return n;
}

}  // namespace

int main(int argc, char** argv)
{
   locksmith::bench::chaos_options o;
   std::string duration = "60s";
   CLI::App app{"locksmith-chaos: mutual exclusion under random faults, on redis-servers of its own"};
   app.add_option("--nodes", o.nodes, "lock nodes to start (default 5)")->check(CLI::Range(1, 15));
   app.add_option("--processes", o.processes, "worker processes (default 4)")->check(CLI::Range(1, 64));
   app.add_option("--coroutines", o.coroutines, "coroutines per process (default 8)")->check(CLI::Range(1, 256));
   app.add_option("--names", o.names, "lock names (default 8)")->check(CLI::Range(1, 100000));
   app.add_option("--duration", duration, "how long to inject faults, e.g. 60s, 10m (default 60s)");
   app.add_option("--ttl-ms", o.ttl_ms, "lease TTL (default 2000; renewed by the watchdog)")->check(CLI::Range(200, 600000));
   app.add_option("--quarantine-ms", o.quarantine_ms, "config::restart_quarantine (default 3000)")->check(CLI::NonNegativeNumber);
   app.add_flag("!--no-restarts", o.restarts, "no kill -9 and empty restarts");
   CLI11_PARSE(app, argc, argv);
   auto const unit = duration.find_first_not_of("0123456789");
   if (unit == 0 || unit == std::string::npos || (duration.substr(unit) != "s" && duration.substr(unit) != "m")) {
      std::cerr << "locksmith-chaos: --duration takes e.g. 60s or 10m\n";
      return 2;
   }
   o.seconds = std::stoi(duration.substr(0, unit)) * (duration.substr(unit) == "m" ? 60 : 1);

   auto* shm = static_cast<shared_block*>(
      ::mmap(nullptr, sizeof(shared_block), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
   if (shm == MAP_FAILED)
      return 2;
   new (shm) shared_block{};
   std::vector<std::unique_ptr<redis_process>> nodes;
   std::unique_ptr<redis_process> resource;
   try {
      for (int i = 0; i < o.nodes; ++i)
         nodes.push_back(std::make_unique<redis_process>());
      resource = std::make_unique<redis_process>();
   } catch (std::exception const& e) {
      std::cerr << "locksmith-chaos: " << e.what() << "\n";
      return 2;
   }
   std::vector<std::string> urls;
   for (auto& n : nodes)
      urls.push_back(n->url());
   // The servers are new: let them pass the restart quarantine before the workers start.
   std::this_thread::sleep_for(std::chrono::milliseconds{o.quarantine_ms});
   std::cerr << "netem: skipped (network delay injection is not implemented yet)\n";

   std::vector<pid_t> workers;
   for (int p = 0; p < o.processes; ++p) {
      pid_t const pid = ::fork();
      if (pid == 0)
         ::_exit(locksmith::bench::run_worker_process(o, urls, resource->url(), *shm, p));
      workers.push_back(pid);
   }
   auto const t0 = clock_type::now();
   std::mt19937 rng{std::random_device{}()};
   long faults[4] = {0, 0, 0, 0};
   while (clock_type::now() - t0 < std::chrono::seconds{o.seconds}) {
      std::this_thread::sleep_for(std::chrono::milliseconds{200 + rng() % 600});
      inject(rng, nodes, *shm, o.restarts, faults);
   }
   // A fault-free moment, so that what the faults left in flight settles, then stop.
   std::this_thread::sleep_for(std::chrono::milliseconds{o.ttl_ms});
   auto const elapsed = std::chrono::duration<double>(clock_type::now() - t0).count();
   shm->stop = true;
   long crashed = 0;
   for (auto pid : workers) {
      int status = 0;
      auto const give_up = clock_type::now() + std::chrono::milliseconds{o.wait_ms} + 20s;
      while (::waitpid(pid, &status, WNOHANG) == 0 && clock_type::now() < give_up)
         std::this_thread::sleep_for(10ms);
      if (clock_type::now() >= give_up) {
         ::kill(pid, SIGKILL);
         ::waitpid(pid, &status, 0);
         ++shm->hangs;
      }
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
         ++crashed;
   }
   long orphans = 0, leftover = 0;
   for (auto const& u : urls) {
      orphans += orphan_keys(u);
      leftover += subscribed_clients(u);
   }
   // Overlaps within a restart's reach (TTL + quarantine after it) are the RedLock hazard that the
   // quarantine bounds; any other overlap is a bug.
   long near_restart = 0;
   auto const reach = std::chrono::nanoseconds{std::chrono::milliseconds{o.ttl_ms + o.quarantine_ms}}.count();
   auto const overlaps = std::min(shm->overlap_count.load(), max_stamps);
   auto const restarts = std::min(shm->restart_count.load(), max_stamps);
   for (std::size_t i = 0; i < overlaps; ++i)
      for (std::size_t j = 0; j < restarts; ++j)
         if (shm->overlap_at[i] >= shm->restart_at[j] && shm->overlap_at[i] - shm->restart_at[j] <= reach) {
            ++near_restart;
            break;
         }
   long const without_restart = shm->overlaps - near_restart;
   std::printf(
      "{\"scenario\":\"chaos\",\"nodes\":%d,\"processes\":%d,\"coroutines\":%d,\"names\":%d,\"seconds\":%.1f,"
      "\"cycles\":%ld,\"cycles_per_s\":%.0f,\"overlaps\":%ld,\"overlaps_near_restart\":%ld,"
      "\"overlaps_without_restart\":%ld,\"stale_writes_rejected\":%ld,\"leases_lost\":%ld,"
      "\"min_loss_slack_us\":%ld,\"negative_loss_slack\":%ld,\"hangs\":%ld,\"lock_errors\":%ld,\"unlock_errors\":%ld,\"resource_errors\":%ld,"
      "\"orphan_keys\":%ld,\"leftover_subscriptions\":%ld,\"crashed_workers\":%ld,"
      "\"faults\":{\"sigstop\":%ld,\"kill_normal\":%ld,\"kill_pubsub\":%ld,\"restart\":%ld},\"netem\":\"skipped\"}\n",
      o.nodes, o.processes, o.coroutines, o.names, elapsed, shm->cycles.load(), shm->cycles.load() / elapsed,
      shm->overlaps.load(), near_restart, without_restart, shm->stale_writes.load(), shm->leases_lost.load(),
      shm->leases_lost.load() > 0 ? shm->min_loss_slack_us.load() : 0L, shm->negative_loss_slack.load(), shm->hangs.load(), shm->lock_errors.load(),
      shm->unlock_errors.load(), shm->resource_errors.load(), orphans, leftover, crashed, faults[0], faults[1],
      faults[2], faults[3]);
   bool const failed = without_restart > 0 || shm->negative_loss_slack > 0 || shm->hangs > 0 || orphans != 0 || leftover != 0 || crashed > 0;
   return failed ? 1 : 0;
}
