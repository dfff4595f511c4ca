// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "runner.hpp"

#include "scenarios.hpp"
#include "server.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <numeric>
#include <stdexcept>
#include <thread>

namespace locksmith::bench {
namespace {

using clock = std::chrono::steady_clock;

// How long the processes may take to start, and to report after the stop (a contended waiter
// is cancelled at the stop, so they end within a hold or a spin interval).
constexpr auto start_limit = 10s;
constexpr auto report_limit = 30s;

struct child {
   pid_t pid = -1;
   int fd = -1;  // read end of its result pipe
};

// The child's side: run the workers, write the result, exit without running the parent's
// destructors or flushing its stdio buffers.
[[noreturn]] void child_main(run_spec const& spec, shared_block& shm, int index, int fd,
                             pid_t parent)
{
   if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent)
      ::_exit(126);
   int code = 0;
   try {
      auto const r = run_process(spec, shm, index);
      code = write_result(fd, r) ? 0 : 3;
   } catch (std::exception const& e) {
      std::fprintf(stderr, "locksmith-bench: worker process %d: %s\n", index, e.what());
      code = 4;
   }
   ::close(fd);
   ::_exit(code);
}

std::vector<child> fork_children(run_spec const& spec, shared_block& shm)
{
   std::vector<child> children;
   std::fflush(stdout);  // or the children would print the parent's buffered output again
   std::fflush(stderr);
   pid_t const parent = ::getpid();
   for (int i = 0; i < spec.processes; ++i) {
      int fds[2];
      if (::pipe2(fds, O_CLOEXEC) != 0)
         throw std::runtime_error("pipe failed");
      pid_t const pid = ::fork();
      if (pid < 0)
         throw std::runtime_error("fork failed");
      if (pid == 0) {
         ::close(fds[0]);
         child_main(spec, shm, i, fds[1], parent);
      }
      ::close(fds[1]);
      children.push_back({pid, fds[0]});
   }
   return children;
}

// Reads each child's result until the deadline; a child that cannot report counts as a failure.
void collect(std::vector<child>& children, run_result& out)
{
   auto const deadline = clock::now() + report_limit;
   for (auto& c : children) {
      pollfd p{c.fd, POLLIN, 0};
      auto const left =
         std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
      process_result r;
      bool const ok = ::poll(&p, 1, static_cast<int>(std::max<long long>(left.count(), 0))) > 0 &&
                      read_result(c.fd, r);
      ::close(c.fd);
      if (!ok) {
         ::kill(c.pid, SIGKILL);  // hung, or died: do not wait for it
         r.failures = 1;
         r.first_error = "a worker process did not report its result";
      }
      int status = 0;
      while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {}
      if (ok && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
         r.failures += 1;
         r.first_error = "a worker process exited abnormally";
      }
      out.per_worker.insert(out.per_worker.end(), r.per_worker.begin(), r.per_worker.end());
      out.per_process.push_back(
         std::accumulate(r.per_worker.begin(), r.per_worker.end(), std::int64_t{0}));
      out.client_cpu_ms += r.cpu_ms;
      if (r.tries >= 0)
         out.tries = out.tries.value_or(0) + r.tries;
      if (r.retries_lost >= 0)
         out.retries_lost = out.retries_lost.value_or(0) + r.retries_lost;
      out.cycle_ns.insert(out.cycle_ns.end(), r.cycle_ns.begin(), r.cycle_ns.end());
      out.handoff_ns.insert(out.handoff_ns.end(), r.handoff_ns.begin(), r.handoff_ns.end());
      out.acquire_ns.insert(out.acquire_ns.end(), r.acquire_ns.begin(), r.acquire_ns.end());
      out.unreachable_ns.insert(out.unreachable_ns.end(), r.unreachable_ns.begin(),
                                r.unreachable_ns.end());
      if (out.failures == 0 && r.failures > 0)
         out.first_error = r.first_error;
      out.failures += r.failures;
   }
}

void wait_started(shared_block const& shm, int processes)
{
   auto const deadline = clock::now() + start_limit;
   while (shm.started.load() < processes && clock::now() < deadline)
      std::this_thread::sleep_for(1ms);
}

// Fills commands and requests from the INFO commandstats taken before and after the measure.
void count_commands(run_result& out,
                    std::optional<std::map<std::string, std::int64_t>> const& before,
                    std::optional<std::map<std::string, std::int64_t>> const& after)
{
   if (!before || !after)
      return;
   auto calls_of = [](auto const& m, std::string const& name) {
      auto it = m.find(name);
      return it == m.end() ? std::int64_t{0} : it->second;
   };
   auto const info = calls_of(*after, "info") - calls_of(*before, "info");
   out.commands = sum_calls(*after, false) - sum_calls(*before, false) - info;
   if (out.spec.st == strategy::raw)
      out.requests = out.commands;  // no script: every command is a request
   else
      out.requests = *out.commands - (sum_calls(*after, true) - sum_calls(*before, true));
   // Unfenced, the acquire is the client's own SET, which run_by_scripts counts as a script's (a
   // registered waiter's try runs the script, whose SET then counts here as a request too).
   if (out.spec.st != strategy::raw && !out.spec.fence)
      *out.requests += calls_of(*after, "set") - calls_of(*before, "set");
}

// Sleeps through the measure phase, reporting progress.
void measure_for(std::chrono::milliseconds d, progress_fn const& progress)
{
   auto const start = clock::now();
   auto const end = start + d;
   for (auto now = start; now < end; now = clock::now()) {
      if (progress)
         progress(std::chrono::duration<double>(now - start).count());
      std::this_thread::sleep_for(std::min<clock::duration>(100ms, end - now));
   }
}

}  // namespace

std::int64_t run_result::acquisitions() const
{
   return std::accumulate(per_worker.begin(), per_worker.end(), std::int64_t{0});
}

run_result run_once(run_spec const& spec, std::optional<pid_t> server, progress_fn const& progress,
                    start_fn const& on_start)
{
   if (spec.workers < 1 || spec.workers > max_workers || spec.processes < 1 ||
       spec.processes > spec.workers)
      throw std::invalid_argument("bad run: workers must be 1.." + std::to_string(max_workers) +
                                  ", processes 1..workers");
   run_result out;
   out.spec = spec;
   shared_block* shm = map_shared_block();
   auto children = fork_children(spec, *shm);
   wait_started(*shm, spec.processes);
   if (on_start)
      on_start();
   std::this_thread::sleep_for(spec.warmup);

   // A frozen node cannot answer INFO (it would cost a 2 s timeout, and then count nothing).
   auto const frozen =
      std::min<std::size_t>(static_cast<std::size_t>(std::max(spec.frozen, 0)), spec.nodes.size());
   std::vector<std::string> const live(spec.nodes.begin(),
                                       spec.nodes.end() - static_cast<std::ptrdiff_t>(frozen));
   auto const calls_before = command_calls(live);
   auto const cpu_before = server ? process_cpu_ms(*server) : std::nullopt;
   auto const t0 = clock::now();
   shm->ph = static_cast<int>(phase::measure);
   measure_for(spec.duration, progress);
   shm->ph = static_cast<int>(phase::stop);
   auto const t1 = clock::now();
   auto const calls_after = command_calls(live);
   auto const cpu_after = server ? process_cpu_ms(*server) : std::nullopt;

   collect(children, out);
   out.seconds = std::chrono::duration<double>(t1 - t0).count();
   out.overlaps = shm->overlaps.load();
   out.most_holders = shm->most_holders.load();
   unmap_shared_block(shm);
   count_commands(out, calls_before, calls_after);
   if (cpu_before && cpu_after)
      out.server_cpu_ms = *cpu_after - *cpu_before;
   return out;
}

}  // namespace locksmith::bench
