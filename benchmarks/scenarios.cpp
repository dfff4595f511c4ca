// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The locksmith workers: acquire, hold, release, in a loop, and the steps shared with raw.cpp.
#include "scenarios.hpp"
#include "tokens.hpp"

#include "cpu.hpp"

#include <locksmith/locksmith.hpp>
#include <locksmith/detail/acquire_kind.hpp>
#include "sansio/quorum.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <functional>
#include <optional>

namespace locksmith::bench {
namespace asio = boost::asio;

namespace {

// How often a process looks at the shared phase to learn of the stop.
constexpr auto stop_poll = 2ms;

// Long enough that no wait runs out and no lease expires in a contended run: a failure then
// means a bug, not a slow machine.
lock_options bench_options(run_spec const& spec)
{
   lock_options o{.ttl = 10s,
                  .wait = 60s,
                  .renew = spec.renew,
                  .fair = spec.fair,
                  .fence = spec.fence,
                  .owner = spec.owner};
   if (spec.st == strategy::spin)
      o.strategy = wait_strategy::spin{.interval = spec.spin_interval, .jitter = spec.spin_jitter};
   else
      o.strategy = wait_strategy::subscribe;
   return o;
}

int key_index_of(run_spec const& spec, int worker_id)
{
   return spec.sc == scenario::independent ? worker_id : 0;
}

using of = detail::lease_kind::of;

// What the worker takes: a permit, a side of a read-write lock, or the lock.
detail::lease_kind kind_of(run_spec const& spec, int worker_id)
{
   if (spec.sc == scenario::semaphore)
      return {of::permit, spec.permits};
   if (spec.sc == scenario::rwlock)
      return {worker_id % spec.write_every == 0 ? of::write : of::read};
   if (spec.sc == scenario::reentrant)
      return {of::reentrant, 1, "worker-" + std::to_string(worker_id)};
   return {};
}

// Counts a holder in at its key and checks the bound of what it took: a lock or a writer alone,
// a reader beside no writer, a permit beside fewer than `permits` others. False when broken.
bool count_in(process_ctx& c, worker const& w)
{
   auto& key = c.shm.keys[w.key_index];
   auto const kind = kind_of(c.spec, w.id);
   if (kind.what == of::lock || kind.what == of::reentrant) {
      int expected = 0;
      return key.holder.compare_exchange_strong(expected, w.id + 1);
   }
   if (kind.what == of::write)
      return key.writers.fetch_add(1) == 0 && key.holders.load() == 0;
   int const now = key.holders.fetch_add(1) + 1;
   for (int most = c.shm.most_holders.load(); now > most;)
      if (c.shm.most_holders.compare_exchange_weak(most, now))
         break;
   return kind.what == of::read ? key.writers.load() == 0 : now <= static_cast<int>(kind.permits);
}

void count_out(process_ctx& c, worker const& w)
{
   auto& key = c.shm.keys[w.key_index];
   auto const kind = kind_of(c.spec, w.id);
   if (kind.what == of::lock || kind.what == of::reentrant) {
      int expected = w.id + 1;
      key.holder.compare_exchange_strong(expected, 0);
   } else {
      (kind.what == of::write ? key.writers : key.holders).fetch_sub(1);
   }
}

// reentrant: the holder takes the name again for its owner, which must succeed at once, and
// gives that hold back; the first hold keeps the lock.
asio::awaitable<void> reenter(process_ctx& c, client& cli, worker& w,
                              detail::lease_kind const& kind)
{
   auto opts = bench_options(c.spec);
   opts.wait = 0ms;
   auto token = use_tuple;
   auto [ec, inner] = co_await detail::initiate_acquire(cli, token, kind, w.name, opts);
   if (ec) {
      fail(c, "re-entry: " + ec.message());
      co_return;
   }
   auto [uec] = co_await cli.async_unlock(inner, use_tuple);
   if (uec)
      fail(c, "release of the re-entry: " + uec.message());
}

asio::awaitable<void> lock_worker(process_ctx& c, client& cli, worker& w)
{
   auto const opts = bench_options(c.spec);
   auto const kind = kind_of(c.spec, w.id);
   bool const handoff = c.spec.sc == scenario::handoff;
   if (handoff)
      co_await think(c, w);
   while (!stopping(c)) {
      auto const start = now_ns();
      c.shm.waiting_since[w.id] = start;
      w.locking = true;
      // (async_lock for the lock: it goes through the same initiation.)
      auto token = asio::bind_cancellation_slot(w.cancel.slot(), use_tuple);
      auto [ec, held] = co_await detail::initiate_acquire(cli, token, kind, w.name, opts);
      w.locking = false;
      auto const acquired = now_ns();
      c.shm.waiting_since[w.id] = 0;
      if (ec) {
         if (ec == asio::error::operation_aborted && stopping(c))
            break;
         fail(c, "async_lock: " + ec.message());
         co_await sleep_for(10ms);  // a broken setup must not flood the output
         continue;
      }
      bool const counted = measuring(c);
      enter_critical(c, w, start, acquired, counted);
      if (kind.what == of::reentrant)
         co_await reenter(c, cli, w, kind);
      if (c.spec.hold.count() > 0)
         co_await sleep_for(c.spec.hold);
      if (handoff)
         co_await await_settled_waiter(c, w);
      leave_critical(c, w);
      auto [uec] = co_await cli.async_unlock(held, use_tuple);
      if (uec)
         fail(c, "async_unlock: " + uec.message());
      if (counted)
         c.result.cycle_ns.push_back(now_ns() - start);
      if (handoff)
         co_await think(c, w);
   }
}

// quorum: one attempt per cycle (a wait of zero), so that a lost quorum shows at once as
// quorum_unreachable instead of being retried until the wait runs out. Failures count only while
// measuring: the nodes freeze during the warm-up, and an unlock caught by that is no finding.
asio::awaitable<void> quorum_worker(process_ctx& c, client& cli, worker& w)
{
   auto opts = bench_options(c.spec);
   opts.wait = 0ms;
   auto const n = c.spec.nodes.size();
   bool const reachable = static_cast<std::size_t>(c.spec.frozen) <= n - detail::quorum_of(n);
   while (!stopping(c)) {
      auto const start = now_ns();
      w.locking = true;
      auto [ec, held] = co_await cli.async_lock(
         w.name, opts, asio::bind_cancellation_slot(w.cancel.slot(), use_tuple));
      w.locking = false;
      auto const acquired = now_ns();
      bool const counted = measuring(c);
      if (ec == asio::error::operation_aborted && stopping(c))
         break;
      if (ec == error::quorum_unreachable && !reachable) {
         if (counted)
            c.result.unreachable_ns.push_back(acquired - start);
         continue;  // each attempt already took a node timeout
      }
      if (ec) {
         if (counted)
            fail(c, "async_lock: " + ec.message());
         co_await sleep_for(10ms);
         continue;
      }
      if (!reachable && counted)
         fail(c, "async_lock succeeded without a reachable quorum");
      enter_critical(c, w, start, acquired, counted);
      leave_critical(c, w);
      auto [uec] = co_await cli.async_unlock(held, use_tuple);
      if (uec && counted)
         fail(c, "async_unlock: " + uec.message());
      if (counted) {
         c.result.acquire_ns.push_back(acquired - start);
         c.result.cycle_ns.push_back(now_ns() - start);
      }
   }
}

// Takes the process's CPU time over the measure phase, and at the stop cancels the waits in
// flight: a contended waiter could otherwise wait a long time.
asio::awaitable<void> watch_stop(process_ctx& c, std::vector<worker>& workers)
{
   std::optional<double> cpu_start;
   process_ctx::try_counts start{};
   while (!stopping(c)) {
      if (!cpu_start && measuring(c)) {
         cpu_start = cpu_ms_now();
         if (c.count_tries)
            start = c.count_tries();
      }
      co_await sleep_for(stop_poll);
   }
   c.result.cpu_ms = cpu_start ? cpu_ms_now() - *cpu_start : 0;
   if (c.count_tries && cpu_start) {
      auto const end = c.count_tries();
      c.result.tries = end.tries - start.tries;
      c.result.retries_lost = end.retries_lost - start.retries_lost;
   }
   for (auto& w : workers)
      if (w.locking)
         w.cancel.emit(asio::cancellation_type::terminal);
}

asio::awaitable<void> run_lock_workers(process_ctx& c, std::vector<worker>& workers)
{
   client cli{c.io.get_executor(),
              config{.nodes = c.spec.nodes,
                     .prefix = c.spec.prefix,
                     .node_timeout = c.spec.node_timeout,
                     .restart_quarantine = std::chrono::milliseconds{0}}};  // servers just started
   c.shm.started.fetch_add(1);  // also on failure, so that the harness does not wait for us
   if (cli.config_error()) {
      fail(c, "bad configuration: " + cli.config_error().message());
      co_return;
   }
   // Each try asks every node, and the first node counts every vote.
   c.count_tries = [&cli] {
      auto const m = cli.metrics();
      process_ctx::try_counts n{.retries_lost = static_cast<std::int64_t>(m.retries_lost)};
      if (!m.votes.empty()) {
         auto const& v = m.votes.front();
         n.tries = static_cast<std::int64_t>(v.yes + v.no + v.failed + v.none);
      }
      return n;
   };
   co_await run_workers(c, workers, [&](worker& w) {
      return c.spec.sc == scenario::quorum ? quorum_worker(c, cli, w) : lock_worker(c, cli, w);
   });
   c.count_tries = {};
   co_await cli.async_close(asio::as_tuple(asio::use_awaitable));
}

}  // namespace

bool stopping(process_ctx const& c)
{
   return c.shm.ph.load() == static_cast<int>(phase::stop);
}
bool measuring(process_ctx const& c)
{
   return c.shm.ph.load() == static_cast<int>(phase::measure);
}

void fail(process_ctx& c, std::string const& what)
{
   if (c.result.failures++ == 0)
      c.result.first_error = what;
}

void enter_critical(process_ctx& c, worker const& w, std::int64_t wait_start, std::int64_t acquired,
                    bool counted)
{
   auto& key = c.shm.keys[w.key_index];
   if (!count_in(c, w))
      c.shm.overlaps.fetch_add(1);
   key.taken.fetch_add(1);
   if (!counted)
      return;
   ++c.result.per_worker[w.local];
   // The releaser stamped both before its release went out, and nobody stamps again before we
   // release, so the two are consistent here.
   auto const by = key.released_by.load();
   auto const at = key.released_at.load();
   if (by != 0 && by != w.id + 1 && at > wait_start)
      c.result.handoff_ns.push_back(acquired - at);
}

void leave_critical(process_ctx& c, worker const& w)
{
   auto& key = c.shm.keys[w.key_index];
   key.released_at = now_ns();
   key.released_by = w.id + 1;
   count_out(c, w);
   key.released.fetch_add(1);
}

asio::awaitable<void> sleep_for(nanoseconds d)
{
   asio::steady_timer t{co_await asio::this_coro::executor, d};
   co_await t.async_wait(use_tuple);
}

namespace {

// Since when the longest waiter other than `w` has waited, or 0 when nobody waits.
std::int64_t oldest_waiter(process_ctx const& c, worker const& w)
{
   std::int64_t oldest = 0;
   for (int i = 0; i < c.spec.workers; ++i) {
      auto const since = c.shm.waiting_since[i].load();
      if (i != w.id && since != 0 && (oldest == 0 || since < oldest))
         oldest = since;
   }
   return oldest;
}

}  // namespace

// The handoff scenario holds the lock until another worker has waited at least `settle`, so
// that every release passes the lock to a worker already asleep in async_lock (its first try and
// its subscription done), and the handoff measures the wake-up.
asio::awaitable<void> await_settled_waiter(process_ctx& c, worker const& w)
{
   auto const settle = std::chrono::duration_cast<nanoseconds>(c.spec.settle).count();
   for (;;) {
      if (stopping(c))
         co_return;
      auto const oldest = oldest_waiter(c, w);
      auto const now = now_ns();
      if (oldest != 0 && now - oldest >= settle)
         co_return;
      co_await sleep_for(oldest != 0 ? nanoseconds{oldest + settle - now} : nanoseconds{1ms});
   }
}

// The pause of a handoff worker before it asks (again): uniform in [0, think]; then, while a
// released lock is on its way to a waiter, until it got there. So the lock always passes to a
// worker that was already waiting: neither the releaser nor a newcomer takes it first, which
// under spin they often would (spinning waiters look only every 100-200 ms).
asio::awaitable<void> think(process_ctx& c, worker const& w)
{
   auto const most = std::chrono::duration_cast<nanoseconds>(c.spec.think).count();
   co_await sleep_for(nanoseconds{std::uniform_int_distribution<std::int64_t>{0, most}(c.random)});
   auto const& key = c.shm.keys[w.key_index];
   while (!stopping(c) && key.taken.load() == key.released.load() && oldest_waiter(c, w) != 0)
      co_await sleep_for(1ms);
}

// Runs body(w) for every worker at once, and the stop watcher; returns when all have ended.
asio::awaitable<void> run_workers(process_ctx& c, std::vector<worker>& workers,
                                  std::function<asio::awaitable<void>(worker&)> const& body)
{
   std::size_t running = workers.size() + 1;
   asio::steady_timer all_done{c.io, asio::steady_timer::time_point::max()};
   auto on_end = [&](std::exception_ptr e) {
      if (e)
         fail(c, "a worker threw an exception");
      if (--running == 0)
         all_done.cancel();
   };
   for (auto& w : workers)
      asio::co_spawn(c.io, body(w), on_end);
   asio::co_spawn(c.io, watch_stop(c, workers), on_end);
   // Woken by the last worker (or the watcher) to end.
   co_await all_done.async_wait(use_tuple);
}

process_result run_process(run_spec const& spec, shared_block& shm, int index)
{
   asio::io_context io{1};
   process_ctx c{spec, shm, io, {}};
   std::size_t count = 0;
   for (int id = index; id < spec.workers; id += spec.processes)
      ++count;
   std::vector<worker> workers(count);
   for (std::size_t i = 0; i < count; ++i) {
      auto& w = workers[i];
      w.id = index + static_cast<int>(i) * spec.processes;
      w.local = static_cast<int>(i);
      w.key_index = key_index_of(spec, w.id);
      w.name = "k" + std::to_string(w.key_index);
   }
   c.result.per_worker.assign(count, 0);
   auto body =
      spec.st == strategy::raw ? run_raw_workers(c, workers) : run_lock_workers(c, workers);
   asio::co_spawn(io, std::move(body), [&](std::exception_ptr e) {
      if (e)
         fail(c, "process threw an exception");
      io.stop();  // the connections' loops may still be winding down; nothing more to measure
   });
   io.run();
   return std::move(c.result);
}

}  // namespace locksmith::bench
