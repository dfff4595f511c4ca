// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// Mutual exclusion under the shape that once broke it (issue 16): several clients in one process
// (each with its own connections and local queue, as separate processes would have), several
// coroutines per client and several names, so that connections carry many contenders at once.
// An occupancy counter per name, at the resource, counts two holders at once; the fencing
// tokens of successive holders of a name must rise strictly. No fault is injected: every error
// counts.
#include <locksmith/client.hpp>
#include <locksmith/detail/keys.hpp>

#include "support/redis_server.hpp"
#include "support/run.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/test/unit_test.hpp>

#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace {
namespace asio = boost::asio;
using namespace std::chrono_literals;
using locksmith::test::redis_server;

constexpr auto tuple = asio::as_tuple(asio::deferred);

struct shape {
   int clients = 4;
   int coroutines = 8;
   int names = 4;
   long cycles = 20'000;  // the run ends once this many lock/unlock cycles completed,
   std::chrono::seconds budget{90};  // or when this time has passed (then the test fails)
   bool spin = false;
};

struct tally {
   long cycles = 0;
   long overlaps = 0;   // a holder found another holder of its name at the resource
   long inversions = 0; // a holder's fencing token was not above its predecessor's
   long errors = 0;
   std::map<std::string, long> kinds;  // errors by operation and message
   std::vector<int> occupancy;
   std::vector<std::uint64_t> last_fence;
   int running = 0;
   bool stop = false;
   std::chrono::steady_clock::duration took{};
};

asio::awaitable<void> contend(locksmith::client& c, tally& t, shape s, std::string prefix, unsigned seed)
{
   std::mt19937 rng{seed};
   asio::steady_timer hold{co_await asio::this_coro::executor};
   auto opts = locksmith::lock_options{.ttl = 2s, .wait = 5s};
   if (s.spin)
      opts.strategy = locksmith::wait_strategy::spin{.interval = 2ms, .jitter = 2ms};
   while (t.cycles < s.cycles && !t.stop) {
      auto const k = static_cast<std::size_t>(rng() % static_cast<unsigned>(s.names));
      auto [ec, l] = co_await c.async_lock(prefix + std::to_string(k), opts, tuple);
      if (ec) {
         ++t.errors;
         ++t.kinds["lock: " + ec.message()];
         continue;
      }
      if (++t.occupancy[k] > 1)
         ++t.overlaps;
      if (l.fencing_token() <= t.last_fence[k])
         ++t.inversions;
      t.last_fence[k] = std::max(t.last_fence[k], l.fencing_token());
      // Hold for 0-500 µs: long enough for others to queue behind, short enough for many cycles.
      hold.expires_after(std::chrono::microseconds{rng() % 500});
      co_await hold.async_wait(asio::as_tuple(asio::use_awaitable));
      --t.occupancy[k];
      auto [uec] = co_await c.async_unlock(l, tuple);
      if (uec) {
         ++t.errors;
         ++t.kinds["unlock: " + uec.message()];
      }
      ++t.cycles;
   }
}

tally contend_everywhere(std::vector<std::unique_ptr<redis_server>> const& servers, shape s)
{
   asio::io_context ioc;
   locksmith::config cfg{.node_timeout = 1s};  // generous: the 2-core machine is shared
   cfg.nodes.clear();
   for (auto const& srv : servers)
      cfg.nodes.push_back(srv->url());
   std::vector<std::unique_ptr<locksmith::client>> clients;
   for (int i = 0; i < s.clients; ++i)
      clients.push_back(std::make_unique<locksmith::client>(ioc.get_executor(), cfg));
   tally t;
   t.occupancy.assign(static_cast<std::size_t>(s.names), 0);
   t.last_fence.assign(static_cast<std::size_t>(s.names), 0);
   std::random_device rd;
   auto const prefix = "mutex/" + std::to_string(rd()) + "/";
   auto const t0 = std::chrono::steady_clock::now();
   locksmith::test::run(ioc, [&]() -> asio::awaitable<void> {
      auto ex = co_await asio::this_coro::executor;
      asio::steady_timer all_done{ex, s.budget};
      for (int i = 0; i < s.clients; ++i)
         for (int j = 0; j < s.coroutines; ++j) {
            ++t.running;
            asio::co_spawn(ex, contend(*clients[i], t, s, prefix, rd()), [&](std::exception_ptr e) {
               if (e)
                  ++t.kinds["exception"], ++t.errors;
               if (--t.running == 0)
                  all_done.cancel();
            });
         }
      co_await all_done.async_wait(asio::as_tuple(asio::use_awaitable));
      // Out of time: let the workers finish their cycles, so that the tally is complete.
      t.stop = true;
      all_done.expires_at(asio::steady_timer::time_point::max());
      if (t.running > 0)
         co_await all_done.async_wait(asio::as_tuple(asio::use_awaitable));
   }(), s.budget + 30s);
   t.took = std::chrono::steady_clock::now() - t0;
   return t;
}

void check(tally const& t, shape const& s, char const* what)
{
   auto const secs = std::chrono::duration<double>(t.took).count();
   BOOST_TEST_MESSAGE(what << ": " << t.cycles << " cycles in " << secs << " s (" << t.cycles / secs
                           << "/s), " << t.overlaps << " overlaps, "
                           << t.inversions << " fence inversions, " << t.errors << " errors");
   for (auto const& [kind, n] : t.kinds)
      BOOST_TEST_MESSAGE("  " << kind << ": " << n);
   BOOST_TEST(t.cycles >= s.cycles);
   BOOST_TEST(t.overlaps == 0);
   BOOST_TEST(t.inversions == 0);
   BOOST_TEST(t.errors == 0);
}

std::vector<std::unique_ptr<redis_server>> start_servers(std::size_t n)
{
   std::vector<std::unique_ptr<redis_server>> v;
   for (std::size_t i = 0; i < n; ++i)
      v.push_back(std::make_unique<redis_server>());
   return v;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(mutual_exclusion)

BOOST_AUTO_TEST_CASE(one_node_subscribe)
{
   auto servers = start_servers(1);
   shape s;
   check(contend_everywhere(servers, s), s, "1 node, subscribe");
}

BOOST_AUTO_TEST_CASE(one_node_spin)
{
   auto servers = start_servers(1);
   shape s{.spin = true};
   check(contend_everywhere(servers, s), s, "1 node, spin 2 ms");
}

BOOST_AUTO_TEST_CASE(five_nodes_subscribe)
{
   auto servers = start_servers(5);
   shape s;
   check(contend_everywhere(servers, s), s, "5 nodes, subscribe");
}

BOOST_AUTO_TEST_CASE(five_nodes_spin)
{
   auto servers = start_servers(5);
   shape s{.spin = true};
   check(contend_everywhere(servers, s), s, "5 nodes, spin 2 ms");
}

BOOST_AUTO_TEST_SUITE_END()
