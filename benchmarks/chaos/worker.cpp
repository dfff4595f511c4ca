// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "worker.hpp"

#include <locksmith/locksmith.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/redis/connection.hpp>

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

asio::awaitable<long long> eval(redis::connection& conn, char const* script, std::string const& key, std::string arg = {})
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

asio::awaitable<void> worker(chaos_options const& o, locksmith::client& locks, redis::connection& resource, shared_block& shm,
                             unsigned seed)
{
   std::mt19937 rng{seed};
   asio::steady_timer hold{co_await asio::this_coro::executor};
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
      auto const occupancy = co_await eval(resource, enter_script, "occ:" + name);
      if (occupancy > 1) {
         ++shm.overlaps;
         auto const i = shm.overlap_count++;
         if (i < max_stamps)
            shm.overlap_at[i] = now_ns();
      }
      auto const wrote = co_await eval(resource, fenced_write, "fence:" + name, std::to_string(l.fencing_token()));
      if (wrote == 0)
         ++shm.stale_writes;
      if (occupancy < 0 || wrote < 0)
         ++shm.resource_errors;
      hold.expires_after(std::chrono::microseconds{rng() % 1000});
      co_await hold.async_wait(asio::as_tuple(asio::use_awaitable));
      if (co_await eval(resource, leave_script, "occ:" + name) < 0)
         ++shm.resource_errors;
      if (l.lost()) {
         ++shm.leases_lost;
         auto const slack = std::chrono::duration_cast<std::chrono::microseconds>(l.valid_until() - clock_type::now());
         for (auto m = shm.min_loss_slack_us.load(); slack.count() < m && !shm.min_loss_slack_us.compare_exchange_weak(m, slack.count());) {
         }
      }
      auto [uec] = co_await locks.async_unlock(l, tuple);
      if (uec && uec != locksmith::error::lease_lost)
         ++shm.unlock_errors;
      ++shm.cycles;
   }
}

}  // namespace

// One worker process: its own client (connections, local queue), C coroutines.
int run_worker_process(chaos_options const& o, std::vector<std::string> const& nodes, std::string const& resource_url,
                       shared_block& shm, int index)
{
   asio::io_context ioc{1};
   locksmith::config cfg{.nodes = nodes, .prefix = "chaos:",
                         .restart_quarantine = std::chrono::milliseconds{o.quarantine_ms}};
   locksmith::client locks{ioc.get_executor(), cfg};
   redis::connection resource{ioc, redis::logger{redis::logger::level::err}};
   redis::config rc;
   rc.addr.port = resource_url.substr(resource_url.rfind(':') + 1);
   resource.async_run(rc, asio::detached);
   int running = o.coroutines;
   for (int i = 0; i < o.coroutines; ++i)
      asio::co_spawn(ioc, worker(o, locks, resource, shm, static_cast<unsigned>(index * 1000 + i) ^ std::random_device{}()),
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
