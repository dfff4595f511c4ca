// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// Nothing leaked (issue 8): the releases of failed and cancelled attempts, and of unlocks, are
// owned by the client until every node answered; a graceful close sees them through; a release
// that meets a reconnecting node is sent again once it is back. Real redis-servers throughout.
#include "support/integration.hpp"

#include <random>

namespace test_cleanup {

namespace {

std::string fresh(std::string const& stem)
{
   static std::mt19937_64 r{std::random_device{}()};
   return "cleanup/" + stem + "/" + std::to_string(r());
}

struct nodes_fixture : servers_fixture {
   locksmith::config cfg(std::chrono::milliseconds node_timeout = 50ms) const
   {
      return servers_fixture::cfg(node_timeout);
   }

   // Lock keys of these names on any server.
   std::size_t keys_left(std::vector<std::string> const& names) const
   {
      std::size_t n = 0;
      for (auto const& s : servers)
         for (auto const& name : names)
            n += s->text({"EXISTS", lock_key(name)}) == "1" ? 1 : 0;
      return n;
   }
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(cleanup, nodes_fixture, *needs_redis_server())

// 100 attempts cancelled at random moments on free names: whether or not their SETs landed, a
// graceful close completes only once every release was answered, so no key is left the moment
// it completes.
BOOST_AUTO_TEST_CASE(close_sees_the_releases_of_cancelled_attempts_through)
{
   start(1);
   locksmith::client c{ioc.get_executor(), cfg(1s)};
   std::vector<std::string> names;
   int landed = 0;
   run(ioc, [&]() -> asio::awaitable<void> {
      std::mt19937 r{std::random_device{}()};
      for (int i = 0; i < 100; ++i) {
         names.push_back(fresh("cancelled"));
         auto const after = std::chrono::microseconds{r() % 400};
         auto [ec, l] =
            co_await c.async_lock(names.back(), {.ttl = 30s}, asio::cancel_after(after, tuple));
         if (!ec) {
            ++landed;  // won before the cancellation: a held lease, dropped below unreleased
            co_await c.async_unlock(l, tuple);
         }
      }
      auto [ec] = co_await c.async_close(tuple);
      BOOST_TEST(!ec, ec.message());
   }());
   BOOST_TEST_MESSAGE(landed << " of 100 attempts won before their cancellation");
   BOOST_TEST(keys_left(names) == 0u);
}

// 3 of 5 nodes frozen: 100 attempts fail (quorum_unreachable), and the client is closed at
// once. The SETs that reached the healthy nodes are released before close completes, and those
// queued to the frozen nodes are followed there by their releases: once the nodes resume, no
// key is left anywhere.
BOOST_AUTO_TEST_CASE(close_after_failed_attempts_leaves_no_key_anywhere)
{
   start(5);
   for (std::size_t i = 2; i < 5; ++i)
      servers[i]->pause();
   std::vector<std::string> names;
   {
      locksmith::client c{ioc.get_executor(), cfg()};
      run(ioc, 60s, [&]() -> asio::awaitable<void> {
         int failed = 0;
         for (int i = 0; i < 100; ++i) {
            names.push_back(fresh("failed"));
            auto [ec, l] = co_await c.async_try_lock(names.back(), {.ttl = 30s}, tuple);
            failed += ec == locksmith::error::quorum_unreachable ? 1 : 0;
         }
         BOOST_TEST(failed == 100);
         co_await c.async_close(tuple);  // the frozen nodes never answer: bounded by close_timeout
      }());
      // Before the nodes resume: the healthy ones are clean already.
      for (std::size_t i = 0; i < 2; ++i)
         for (auto const& name : names)
            BOOST_TEST(servers[i]->text({"EXISTS", lock_key(name)}) == "0");
   }
   for (std::size_t i = 2; i < 5; ++i)
      servers[i]->resume();
   run(ioc, [&]() -> asio::awaitable<void> {
      BOOST_TEST(co_await eventually([&] { return keys_left(names) == 0; }, 5s));
   }());
}

// The holder's command connection is dropped just before its unlock: the release cannot go out
// until the client has reconnected (reconnect_wait), long after the node timeout. It is sent
// again once the node is back, so the key goes, and a waiter of another client wakes by its
// message, far sooner than the 30 s TTL.
BOOST_AUTO_TEST_CASE(a_release_during_a_reconnect_is_sent_once_the_node_is_back)
{
   start(1);
   locksmith::client a{ioc.get_executor(), cfg()}, b{ioc.get_executor(), cfg(1s)};
   auto const name = fresh("reconnect");
   run(ioc, 30s, [&]() -> asio::awaitable<void> {
      auto la = co_await a.async_lock(name, {.ttl = 30s});
      bool b_done = false;
      error_code b_ec;
      locksmith::lease lb;
      asio::co_spawn(
         ioc,
         [&]() -> asio::awaitable<void> {
            auto [ec, l] = co_await b.async_lock(name, {.ttl = 30s, .wait = 20s}, tuple);
            b_ec = ec;
            lb = std::move(l);
            b_done = true;
         },
         asio::detached);
      auto const ch = release_channel(name);
      BOOST_REQUIRE(co_await eventually(
         [&] {
            auto r = servers[0]->command({"PUBSUB", "NUMSUB", ch});
            return r.elements.size() == 2 && r.elements[1].integer == 1;
         },
         5s));
      BOOST_TEST(servers[0]->text({"CLIENT", "KILL", "TYPE", "normal"}) != "0");
      auto const t0 = clock_type::now();
      auto [uec] = co_await a.async_unlock(la, tuple);
      BOOST_TEST_MESSAGE("unlock during the reconnect: " << (uec ? uec.message() : "ok"));
      BOOST_TEST(co_await eventually([&] { return b_done; }, 10s));
      auto const took = to_ms(clock_type::now() - t0);
      BOOST_TEST_MESSAGE("the waiter got the lock " << took << " ms after the unlock");
      BOOST_TEST(!b_ec, b_ec.message());
      BOOST_TEST(servers[0]->text({"GET", lock_key(name)}) == lb.token());
      co_await b.async_unlock(lb, tuple);
   }());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_cleanup
