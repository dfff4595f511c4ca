// What the subscribe strategy costs the server, counted by INFO commandstats against a real
// redis-server: a release wakes one contender per process, not every waiter, and the commands per
// acquisition do not grow with the hold time.
#include "support/integration.hpp"
#include "support/subscribe_fixture.hpp"

#include <algorithm>

namespace test_command_cost {

using locksmith::test::cost_between;
using locksmith::test::subscribe;
using locksmith::test::subscribe_fixture;

namespace {

// Workers that lock one name `rounds` times each, hold it for `hold`, and unlock it.
struct workload {
   workload(asio::io_context& ioc, std::string name, int workers, int rounds,
            std::chrono::milliseconds hold)
       : name{std::move(name)}
       , rounds{rounds}
       , hold{hold}
       , finished{ioc, workers}
   {}

   asio::awaitable<void> worker(locksmith::client& c)
   {
      asio::steady_timer t{co_await asio::this_coro::executor};
      for (int i = 0; i < rounds; ++i) {
         locksmith::report diag;
         auto [ec, l] = co_await c.async_lock(name, subscribe(30s, 60s, &diag), tuple);
         if (ec) {
            ++failures;
            BOOST_TEST_MESSAGE("lock failed: " << ec.message() << "; " << diag.message());
            continue;
         }
         if (hold > 0ms) {
            t.expires_after(hold);
            co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
         }
         auto [uec] = co_await c.async_unlock(l, diag, tuple);
         if (uec) {
            ++failures;
            BOOST_TEST_MESSAGE("unlock failed: " << uec.message() << "; " << diag.message());
         }
      }
      finished.done();
   }

   std::string name;
   int rounds;
   std::chrono::milliseconds hold;
   countdown finished;
   int failures = 0;
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(command_cost, subscribe_fixture, *needs_redis_server())

// 3 clients x 5 waiters on one key: a release wakes the head of each process, not each waiter, so
// the EVALSHA calls per acquisition stay small (about: its acquire, its release, and one failed
// try by the head of each other process that still waits).
BOOST_AUTO_TEST_CASE(one_release_wakes_one_contender_per_process)
{
   constexpr int clients = 3, per_client = 5;
   locksmith::client a{ioc.get_executor(), cfg()};
   auto const cs = make_clients(ioc, cfg(), clients);
   int failures = 0;
   countdown finished{ioc, clients * per_client};
   std::vector<locksmith::report> heads(clients);
   auto waiter = [&](int client, int i) -> asio::awaitable<void> {
      locksmith::report diag;
      auto [ec, l] = co_await cs[client]->async_lock(
         name, subscribe(30s, 20s, i == 0 ? &heads[client] : &diag), tuple);
      if (ec) {
         ++failures;
      } else {
         co_await yield();
         auto [uec] = co_await cs[client]->async_unlock(l, tuple);
         failures += uec ? 1 : 0;
      }
      finished.done();
   };
   task_group tasks{ioc};
   run(ioc, 30s, [&]() -> asio::awaitable<void> {
      auto la = co_await a.async_lock(name, {.ttl = 30s});
      for (int k = 0; k < clients; ++k) {
         tasks.spawn(waiter(k, 0));
         BOOST_REQUIRE(co_await eventually([&] { return heads[k].attempts >= 2; }));
      }
      for (int k = 0; k < clients; ++k)
         for (int i = 1; i < per_client; ++i)
            tasks.spawn(waiter(k, i));
      co_await yield();
      BOOST_TEST(numsub(channel(name)) == clients);
      auto const before = srv.commandstats();
      co_await a.async_unlock(la);
      BOOST_REQUIRE(co_await finished.all_done.wait(20s));
      auto const cost = cost_between(before, srv.commandstats());
      constexpr int acquisitions = clients * per_client;
      BOOST_TEST_MESSAGE("handoff of " << acquisitions << " acquisitions: " << cost.evalsha
                                       << " EVALSHA (" << double(cost.evalsha) / acquisitions
                                       << " per acquisition), " << cost.sent << " commands sent, "
                                       << cost.all << " with those of the scripts");
      BOOST_TEST(failures == 0);
      // Waking every waiter would make each release cost one try per waiter left (up to 14).
      BOOST_TEST(cost.evalsha <= 6 * acquisitions);
      BOOST_TEST(co_await eventually([&] { return numsub(channel(name)) == 0; }));
      BOOST_TEST(srv.text({"EXISTS", lock_key(name)}) == "0");
   }());
}

// 2 clients x 2 workers take one key 20 times each, holding it 0, 1 or 100 ms: the commands per
// acquisition must not grow with the hold time (a spinning waiter's would), since a waiter costs
// nothing while it sleeps. Counted: the commands that clients sent, from INFO commandstats (the
// commands that the scripts run inside, SET, GET, TIME, PTTL, DEL, PUBLISH, are reported apart:
// an uncontended acquire and release alone is 9 of those "all" commands).
BOOST_AUTO_TEST_CASE(commands_per_acquisition_do_not_grow_with_the_hold)
{
   constexpr int clients = 2, per_client = 2, rounds = 20;
   constexpr int acquisitions = clients * per_client * rounds;
   auto const cs = make_clients(ioc, cfg(), clients);
   std::vector<double> sent_per_acquisition;
   for (auto hold : {0ms, 1ms, 100ms}) {
      BOOST_TEST_CONTEXT("hold " << hold.count() << " ms")
      {
         workload w{ioc, unique_key(std::to_string(hold.count()) + "ms"), clients * per_client,
                    rounds, hold};
         task_group tasks{ioc};
         run(ioc, 90s, [&]() -> asio::awaitable<void> {
            // Connected (HELLO done) before counting.
            for (auto& c : cs) {
               auto l = co_await c->async_lock(unique_key("warm-up"));
               co_await c->async_unlock(l);
            }
            auto const before = srv.commandstats();
            auto const t0 = clock_type::now();
            for (auto& c : cs)
               for (int j = 0; j < per_client; ++j)
                  tasks.spawn(w.worker(*c));
            BOOST_REQUIRE(co_await w.finished.all_done.wait(60s));
            auto const elapsed = clock_type::now() - t0;
            // The last unsubscribe goes out after the last unlock: count it too.
            BOOST_TEST(co_await eventually([&] { return numsub(channel(w.name)) == 0; }));
            auto const cost = cost_between(before, srv.commandstats());
            BOOST_TEST_MESSAGE(
               "hold " << hold.count() << " ms: " << acquisitions << " acquisitions in "
                       << to_ms(elapsed) << " ms; per acquisition "
                       << double(cost.sent) / acquisitions << " commands sent ("
                       << double(cost.evalsha) / acquisitions << " EVALSHA), "
                       << double(cost.all) / acquisitions << " with those run by the scripts");
            BOOST_TEST(w.failures == 0);
            BOOST_TEST(cost.sent <= 8 * acquisitions);
            BOOST_TEST(cost.all <= 20 * acquisitions);  // ~4 script calls, each 5 commands at most
            sent_per_acquisition.push_back(double(cost.sent) / acquisitions);
         }());
      }
   }
   // Constant: holding 100 times longer costs (almost) nothing more.
   BOOST_REQUIRE(sent_per_acquisition.size() == 3u);
   auto const [low, high] =
      std::minmax_element(sent_per_acquisition.begin(), sent_per_acquisition.end());
   BOOST_TEST(*high - *low <= 1.0);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_command_cost
