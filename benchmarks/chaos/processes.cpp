// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "processes.hpp"

#include "../server.hpp"
#include "netem.hpp"

#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <new>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace locksmith::bench {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

shared_block* map_shared_block()
{
   void* const p = ::mmap(nullptr, sizeof(shared_block), PROT_READ | PROT_WRITE,
                          MAP_SHARED | MAP_ANONYMOUS, -1, 0);
   return p == MAP_FAILED ? nullptr : new (p) shared_block{};
}

std::vector<pid_t> fork_workers(chaos_options const& o, std::vector<std::string> const& nodes,
                                std::string const& resource, shared_block& shm,
                                netem_net const* net)
{
   pid_t const harness_pid = ::getpid();
   std::vector<pid_t> pids;
   for (int p = 0; p < o.processes; ++p) {
      pid_t const pid = ::fork();
      if (pid < 0) {
         kill_workers(pids);
         throw std::runtime_error("fork failed");
      }
      if (pid == 0) {
         // A worker dies with the harness, and leaves Ctrl-C to it: the harness stops it.
         if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != harness_pid)
            ::_exit(3);
         std::signal(SIGINT, SIG_IGN);
         std::signal(SIGTERM, SIG_DFL);
         if (net && !net->enter())
            ::_exit(3);
         ::_exit(run_worker_process(o, nodes, resource, shm, p));
      }
      pids.push_back(pid);
   }
   return pids;
}

long reap_workers(chaos_options const& o, std::vector<pid_t>& pids, shared_block& shm)
{
   long crashed = 0;
   for (auto pid : pids) {
      int status = 0;
      auto const give_up = clock_type::now() + std::chrono::milliseconds{o.wait_ms} + 20s;
      while (::waitpid(pid, &status, WNOHANG) == 0 && clock_type::now() < give_up)
         std::this_thread::sleep_for(10ms);
      if (clock_type::now() >= give_up) {
         ::kill(pid, SIGKILL);
         ::waitpid(pid, &status, 0);
         ++shm.hangs;
      }
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
         ++crashed;
   }
   pids.clear();
   return crashed;
}

void kill_workers(std::vector<pid_t>& pids) noexcept
{
   for (auto pid : pids) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
   }
   pids.clear();
}

// A waiter's registration (:waiters) that a crash or a partition left is no orphan: it expires
// by itself, within its holder's TTL and a second.
long orphan_keys(std::string const& url)
{
   auto const r = blocking_command(
      url, {"EVAL",
            "local n = 0 for _, k in ipairs(redis.call('KEYS', 'chaos:*')) do "
            "if not string.find(k, ':fence$') and k ~= 'chaos:trusted-run' and "
            "not (string.find(k, ':waiters$') and redis.call('PTTL', k) > 0) then n = n + 1 end "
            "end return n",
            "0"});
   return r && !r->starts_with("-") ? std::stol(*r) : -1;
}

long subscribed_clients(std::string const& url)
{
   auto const r = blocking_command(url, {"CLIENT", "LIST", "TYPE", "pubsub"});
   if (!r)
      return -1;
   // A Sentinel's own connection to the servers it monitors is subscribed too: not ours.
   long n = 0;
   std::istringstream lines{*r};
   for (std::string line; std::getline(lines, line);)
      n += line.empty() || line.find("name=sentinel-") != std::string::npos ? 0 : 1;
   return n;
}

std::string ms_list(std::vector<double> const& ms)
{
   std::string s = "[";
   for (auto const v : ms)
      s += (s.size() > 1 ? "," : "") + std::to_string(static_cast<long>(v));
   return s + "]";
}

std::string json_text(std::string s)
{
   for (auto& c : s)
      c = c == '"' ? '\'' : c == '\\' || static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
   return s;
}

}  // namespace locksmith::bench
