// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The reentrant lock (reentrant_lock.hpp) on real redis-servers: the same owner takes it again
// at once, in this process and through another client (as from another process), while others
// wait until the last hold is released; a lapsed hold does not free the lock under the owner's
// others; on 1 and on 5 nodes.
#include "support/integration.hpp"

namespace test_reentrant {

namespace {

// Three holds of one owner (one through another client), strangers refused until all three are
// released, and a waiter woken by the last release.
void holds_of_one_owner(asio::io_context& ioc, locksmith::config const& cfg)
{
   locksmith::client a{ioc.get_executor(), cfg}, b{ioc.get_executor(), cfg},
      stranger{ioc.get_executor(), cfg}, waiter{ioc.get_executor(), cfg};
   auto const name = unique_key();
   event waited{ioc};
   lease theirs;
   auto wait = [&]() -> asio::awaitable<void> {
      theirs = co_await waiter.async_lock_reentrant(name, "request-3", {.ttl = 10s, .wait = 20s});
      waited.set();
   };
   task_group tasks{ioc};
   run(ioc, 20s, [&]() -> asio::awaitable<void> {
      locksmith::lock_options const now{.ttl = 10s, .wait = 0ms};
      auto first = co_await a.async_lock_reentrant(name, "request-1", now);
      tasks.spawn(wait());
      auto again = co_await a.async_lock_reentrant(name, "request-1", now);
      auto elsewhere = co_await b.async_lock_reentrant(name, "request-1", now);
      BOOST_TEST((first.held() && again.held() && elsewhere.held()));
      BOOST_TEST(first.token() != again.token());
      BOOST_TEST(first.fencing_token() < again.fencing_token());
      auto [ec, l] = co_await stranger.async_lock_reentrant(name, "request-2", now, tuple);
      BOOST_TEST(ec == error::lock_taken);
      auto [pec, p] = co_await stranger.async_lock(name, now, tuple);
      BOOST_TEST(pec == error::lock_taken);  // a plain lock does not enter either
      co_await a.async_unlock(first);
      co_await b.async_unlock(elsewhere);
      auto [ec2, l2] = co_await stranger.async_lock_reentrant(name, "request-2", now, tuple);
      BOOST_TEST(ec2 == error::lock_taken);  // one hold is left
      BOOST_TEST(!waited.is_set());
      co_await a.async_unlock(again);
      BOOST_TEST(co_await waited.wait(5s));
      BOOST_TEST(theirs.held());
      co_await waiter.async_unlock(theirs);
   }());
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(reentrant_lock, server_fixture, *needs_redis_server())

BOOST_AUTO_TEST_CASE(the_owner_takes_it_again_and_others_wait_for_its_last_hold)
{
   holds_of_one_owner(ioc, cfg());
}

// A hold that lapses (not renewed, its TTL passed) does not free the lock while another hold of
// the owner is renewed; the last release does, and removes both keys.
BOOST_AUTO_TEST_CASE(a_lapsed_hold_does_not_free_the_lock_under_the_owners_others)
{
   locksmith::client a{ioc.get_executor(), cfg()}, b{ioc.get_executor(), cfg()};
   run(ioc, 10s, [&]() -> asio::awaitable<void> {
      // Renewed every 333 ms: a stall of the machine does not lose it before the checks.
      auto kept = co_await a.async_lock_reentrant(name, "job-7", {.ttl = 1s});
      auto lapsing = co_await a.async_lock_reentrant(name, "job-7", {.ttl = 200ms, .renew = false});
      co_await sleep(700ms);
      BOOST_TEST(!lapsing.held());
      BOOST_TEST(kept.held());
      auto [ec, l] = co_await b.async_lock(name, {.wait = 0ms}, tuple);
      BOOST_TEST(ec == error::lock_taken);
      BOOST_TEST(srv.text({"ZCARD", lock_key(name) + ":holds"}) == "1");
      auto [lec] = co_await a.async_unlock(lapsing, tuple);
      BOOST_TEST(lec == error::lease_expired);
      co_await a.async_unlock(kept);
      BOOST_TEST(srv.text({"EXISTS", lock_key(name), lock_key(name) + ":holds"}) == "0");
   }());
}

// Without an owner there is no reentrant lock; and a plain lock is never reentrant.
BOOST_AUTO_TEST_CASE(an_empty_owner_is_refused_and_a_plain_lock_stays_exclusive)
{
   locksmith::client a{ioc.get_executor(), cfg()}, b{ioc.get_executor(), cfg()};
   run(ioc, [&]() -> asio::awaitable<void> {
      auto [ec, l] = co_await a.async_lock_reentrant(name, "", {}, tuple);
      BOOST_TEST(ec == error::invalid_argument);
      auto held = co_await a.async_lock(name);
      auto [again, l2] = co_await b.async_lock(name, {.wait = 0ms}, tuple);
      BOOST_TEST(again == error::lock_taken);
      co_await a.async_unlock(held);
   }());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_FIXTURE_TEST_SUITE(reentrant_lock_redlock, five_servers_fixture, *needs_redis_server())

BOOST_AUTO_TEST_CASE(the_owner_takes_it_again_on_five_nodes)
{
   holds_of_one_owner(ioc, cfg(1s));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_reentrant
