// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "worker.hpp"

#include <locksmith/locksmith.hpp>
#include <locksmith/detail/url.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/redis/connection.hpp>

#include <memory>
#include <random>

namespace locksmith::bench {
namespace {
namespace asio = boost::asio;
namespace redis = boost::redis;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

constexpr auto tuple = asio::as_tuple(asio::deferred);

// The resource: an occupancy counter per name, and a register that takes only rising fences.
constexpr char const* enter_script = "return redis.call('INCR', KEYS[1])";
constexpr char const* leave_script = "return redis.call('DECR', KEYS[1])";
constexpr char const* fenced_write = R"(
local last = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) > last then redis.call('SET', KEYS[1], ARGV[1]) return 1 end
return 0)";

asio::awaitable<long long> eval(redis::connection& conn, char const* script, std::string const& key,
                                std::string arg = {})
{
   redis::request req;
   if (arg.empty())
      req.push("EVAL", script, 1, key);
   else
      req.push("EVAL", script, 1, key, arg);
   redis::response<long long> resp;
   auto [ec, n] = co_await conn.async_exec(req, resp, asio::as_tuple(asio::use_awaitable));
   if (ec || !std::get<0>(resp).has_value())
      co_return -1;
   co_return std::get<0>(resp).value();
}

void record_loss(shared_block& shm, clock_type::duration left)
{
   auto const slack = std::chrono::duration_cast<std::chrono::microseconds>(left).count();
   ++shm.leases_lost;
   if (slack < 0)
      ++shm.negative_loss_slack;
   for (auto m = shm.min_loss_slack_us.load();
        slack < m && !shm.min_loss_slack_us.compare_exchange_weak(m, slack);) {}
}

// Watches one lease at a time for the loss signal (lease::async_wait_lost), and records there how
// much of the lease's validity was left: the watchdog must signal a loss before valid_until.
class loss_watch {
public:
   loss_watch(asio::any_io_executor ex, shared_block& shm)
       : st_{std::make_shared<state>(asio::steady_timer{ex})}
       , shm_{shm}
   {}
   // Should the worker's frame go first (an exception), a wait still pending reads no lease.
   ~loss_watch()
   {
      st_->lease = nullptr;
      st_->work = nullptr;
   }
   loss_watch(loss_watch const&) = delete;
   loss_watch& operator=(loss_watch const&) = delete;

   // `l` and `work` must live until finish() has returned. A loss cancels `work` (the holder's
   // hold): the holder stops working at the loss signal, before valid_until.
   void start(locksmith::lease& l, asio::steady_timer& work)
   {
      st_->lease = &l;
      st_->work = &work;
      st_->pending = true;
      st_->done.expires_at(clock_type::time_point::max());
      l.async_wait_lost([st = st_, &shm = shm_](locksmith::error_code ec) {
         if (!ec && st->lease)
            record_loss(shm, st->lease->valid_until() - clock_type::now());
         if (!ec && st->work)
            st->work->cancel();
         st->pending = false;
         st->done.cancel();
      });
   }

   // Once the lease was released (the wait then completes with operation_aborted) or lost.
   asio::awaitable<void> finish()
   {
      if (st_->pending)
         co_await st_->done.async_wait(asio::as_tuple(asio::use_awaitable));
      st_->lease = nullptr;
      st_->work = nullptr;
   }

private:
   struct state {
      asio::steady_timer done;  // cancelled when the wait has completed
      locksmith::lease* lease = nullptr;
      asio::steady_timer* work = nullptr;
      bool pending = false;
   };
   std::shared_ptr<state> st_;
   shared_block& shm_;
};

asio::awaitable<void> worker(chaos_options const& o, locksmith::client& locks,
                             redis::connection& resource, shared_block& shm, unsigned seed)
{
   std::mt19937 rng{seed};
   auto const ex = co_await asio::this_coro::executor;
   asio::steady_timer hold{ex};
   loss_watch watch{ex, shm};
   auto const opts = locksmith::lock_options{.ttl = std::chrono::milliseconds{o.ttl_ms},
                                             .wait = std::chrono::milliseconds{o.wait_ms}};
   while (!shm.stop.load()) {
      auto const name = "n" + std::to_string(rng() % static_cast<unsigned>(o.names));
      auto const t0 = clock_type::now();
      auto [ec, l] = co_await locks.async_lock(name, opts, tuple);
      if (clock_type::now() - t0 > opts.wait + 1s)
         ++shm.hangs;
      if (ec) {
         ++shm.lock_errors;
         continue;
      }
      watch.start(l, hold);
      auto const occupancy = co_await eval(resource, enter_script, "occ:" + name);
      if (occupancy > 1) {
         ++shm.overlaps;
         auto const i = shm.overlap_count++;
         if (i < max_stamps)
            shm.overlap_at[i] = now_ns();
      }
      auto const wrote =
         co_await eval(resource, fenced_write, "fence:" + name, std::to_string(l.fencing_token()));
      if (wrote == 0)
         ++shm.stale_writes;
      if (occupancy < 0 || wrote < 0)
         ++shm.resource_errors;
      // Holds for a while, unless the lease was lost meanwhile: the loss ends the hold.
      if (!l.lost()) {
         hold.expires_after(
            std::chrono::microseconds{rng() % (1000u * static_cast<unsigned>(o.hold_ms))});
         co_await hold.async_wait(asio::as_tuple(asio::use_awaitable));
      }
      if (co_await eval(resource, leave_script, "occ:" + name) < 0)
         ++shm.resource_errors;
      auto [uec] = co_await locks.async_unlock(l, tuple);
      if (uec && uec != locksmith::error::lease_lost)
         ++shm.unlock_errors;
      // The watch reads the lease when it fires: keep the lease until the wait has completed.
      co_await watch.finish();
      ++shm.cycles;
   }
}

}  // namespace

// One worker process: its own client (connections, local queue), C coroutines.
int run_worker_process(chaos_options const& o, std::vector<std::string> const& nodes,
                       std::string const& resource_url, shared_block& shm, int index)
{
   asio::io_context ioc{1};
   locksmith::config cfg{.nodes = nodes,
                         .prefix = "chaos:",
                         .restart_quarantine = std::chrono::milliseconds{o.quarantine_ms}};
   locksmith::client locks{ioc.get_executor(), cfg};
   redis::connection resource{ioc, redis::logger{redis::logger::level::err}};
   redis::config rc;
   auto const where = locksmith::detail::parse_url(resource_url);
   if (!where)
      return 2;
   rc.addr = {where->host, where->port};
   resource.async_run(rc, asio::detached);
   int running = o.coroutines;
   for (int i = 0; i < o.coroutines; ++i)
      asio::co_spawn(ioc,
                     worker(o, locks, resource, shm,
                            static_cast<unsigned>(index * 1000 + i) ^ std::random_device{}()),
                     [&](std::exception_ptr e) {
                        if (e)
                           ++shm.lock_errors;
                        if (--running > 0)
                           return;
                        // Every worker is done: finish what the client owns, then stop.
                        locks.async_close([&](locksmith::error_code) {
                           resource.cancel();
                           ioc.stop();
                        });
                     });
   ioc.run();
   return 0;
}

}  // namespace locksmith::bench
