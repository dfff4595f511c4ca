// The single-node lock when things go wrong: cancellation, a server that is down or frozen,
// bad input, and a key of another type.
#include "support/integration.hpp"

namespace test_lock_faults {

BOOST_FIXTURE_TEST_SUITE(single_node_faults, server_fixture, *needs_redis_server())

BOOST_AUTO_TEST_CASE(cancelling_a_waiter_leaves_no_key)
{
   locksmith::client a{ioc.get_executor(), cfg()}, b{ioc.get_executor(), cfg()};
   run(ioc, [&]() -> asio::awaitable<void> {
      auto la = co_await a.async_lock(name);
      for (auto strategy : {locksmith::wait_strategy_type{locksmith::wait_strategy::spin{}},
                            locksmith::wait_strategy_type{locksmith::wait_strategy::subscribe}}) {
         auto const t0 = clock_type::now();
         auto [ec, lb] = co_await b.async_lock(name, {.wait = 10s, .strategy = strategy},
                                               asio::cancel_after(50ms, tuple));
         BOOST_TEST(ec == asio::error::operation_aborted);
         BOOST_TEST((clock_type::now() - t0 < 1s));
         BOOST_TEST(!lb.held());
      }
      BOOST_TEST(srv.text({"GET", lock_key(name)}) == la.token());
      co_await a.async_unlock(la);
      // b's queue and subscription are gone: it can lock at once.
      auto [ec, lb] = co_await b.async_try_lock(name, {}, tuple);
      BOOST_TEST(!ec);
      co_await b.async_unlock(lb);
   }());
   // The channel lingers subscribed for config::subscription_linger, then goes.
   auto subscribers = [&] {
      auto numsub = srv.command({"PUBSUB", "NUMSUB", "locksmith:{" + name + "}:released"});
      BOOST_REQUIRE(numsub.elements.size() == 2u);
      return numsub.elements[1].integer;
   };
   run(ioc, [&]() -> asio::awaitable<void> {
      auto const until = clock_type::now() + 5s;
      while (subscribers() != 0 && clock_type::now() < until)
         co_await sleep(5ms);
   }());
   BOOST_TEST(subscribers() == 0);
}

// Cancel at every point of an acquisition of a free key: whether or not the SET landed, no key
// may remain once the cancelled operation has completed.
BOOST_AUTO_TEST_CASE(cancellation_racing_a_successful_set_releases_it)
{
   locksmith::client c{ioc.get_executor(), cfg()};
   int aborted = 0, won = 0;
   for (int i = 0; i < 60; ++i) {
      auto const name = unique_key();
      run(ioc, [&]() -> asio::awaitable<void> {
         asio::cancellation_signal sig;
         asio::steady_timer t{ioc, std::chrono::microseconds{(i % 20) * 15}};
         t.async_wait([&](error_code) { sig.emit(asio::cancellation_type::terminal); });
         auto [ec, l] =
            co_await c.async_lock(name, {}, asio::bind_cancellation_slot(sig.slot(), tuple));
         t.cancel();
         if (ec == asio::error::operation_aborted) {
            ++aborted;
            BOOST_TEST(!l.held());
         } else {
            BOOST_TEST(!ec);
            ++won;
            co_await c.async_unlock(l);
         }
         BOOST_TEST(co_await key_disappears(lock_key(name)), "iteration " << i);
      }());
   }
   BOOST_TEST_MESSAGE("cancelled " << aborted << ", won " << won);
   BOOST_TEST(aborted > 0);
}

BOOST_AUTO_TEST_CASE(server_down_fails_within_the_wait)
{
   locksmith::client c{ioc.get_executor(), cfg()};
   run(ioc, [&]() -> asio::awaitable<void> {
      auto l = co_await c.async_lock(name);  // connected once
      co_await c.async_unlock(l);
      srv.kill();
      auto t0 = clock_type::now();
      locksmith::report diag;
      auto [ec, l2] = co_await c.async_lock(name, {.wait = 300ms, .diag = &diag}, tuple);
      BOOST_TEST(ec == error::quorum_unreachable);
      BOOST_TEST((clock_type::now() - t0 >= 300ms));
      BOOST_TEST((clock_type::now() - t0 < 2s));
      BOOST_REQUIRE(diag.nodes.size() == 1u);
      BOOST_TEST(diag.nodes[0].vote == locksmith::node_vote::failed);
      BOOST_TEST(diag.attempts > 1u);
      t0 = clock_type::now();
      auto [ec2, l3] = co_await c.async_try_lock(name, {}, tuple);
      BOOST_TEST(ec2 == error::quorum_unreachable);
      BOOST_TEST((clock_type::now() - t0 < 1s));
   }());
}

BOOST_AUTO_TEST_CASE(server_never_reachable_fails_with_connection_problem)
{
   auto const port = srv.port();
   srv.kill();
   locksmith::client c{ioc.get_executor(),
                       {.nodes = {"redis://127.0.0.1:" + std::to_string(port)}}};
   run(ioc, [&]() -> asio::awaitable<void> {
      locksmith::report diag;
      auto [ec, l] = co_await c.async_lock(unique_key(), {.wait = 200ms, .diag = &diag}, tuple);
      BOOST_TEST(ec == error::quorum_unreachable);
      BOOST_TEST_MESSAGE("report: " << diag.message());
      BOOST_TEST(!diag.message().empty());
   }());
}

BOOST_AUTO_TEST_CASE(frozen_server_fails_within_the_wait)
{
   locksmith::client c{ioc.get_executor(), cfg()};
   run(ioc, [&]() -> asio::awaitable<void> {
      auto l = co_await c.async_lock(name);
      co_await c.async_unlock(l);
      srv.pause();
      auto const t0 = clock_type::now();
      auto [ec, l2] = co_await c.async_lock(name, {.wait = 200ms}, tuple);
      BOOST_TEST(ec == error::quorum_unreachable);
      BOOST_TEST((clock_type::now() - t0 < 2s));
      srv.resume();
   }());
}

// A server that stalls for a moment past the node timeout (a fork for BGSAVE, a short
// CLIENT PAUSE) runs the release when it wakes. The unlock hears that answer, however late, up to
// restart_patience: sent again after the node timeout, its second call would find no key, which
// cannot be told from a lease that ran out.
BOOST_AUTO_TEST_CASE(an_unlock_hears_a_server_that_stalls_past_the_node_timeout)
{
   locksmith::client c{ioc.get_executor(), cfg(20ms)};
   run(ioc, [&]() -> asio::awaitable<void> {
      auto l = co_await c.async_lock(name, {.ttl = 30s});
      srv.pause();
      auto const unlocked = unlock_beside(c, l);
      co_await sleep_for(150ms);  // seven node timeouts; a call waits 500 ms (stall_patience)
      srv.resume();
      BOOST_TEST(co_await eventually([&] { return unlocked->has_value(); }, 10s, 5ms));
      BOOST_TEST(!unlocked->value_or(error::lock_taken),
                 unlocked->value_or(error::lock_taken).message());
      BOOST_TEST(srv.text({"EXISTS", lock_key(name)}) == "0");
      co_await c.async_close(tuple);
   }());
}

BOOST_AUTO_TEST_CASE(bad_input_is_invalid_argument_before_any_io)
{
   locksmith::client c{ioc.get_executor(), cfg()};
   auto const before = srv.text({"INFO", "commandstats"});
   std::vector<std::pair<std::string, locksmith::lock_options>> cases = {
      {"", {}},
      {std::string(locksmith::max_key_size + 1, 'k'), {}},
      {"k", {.ttl = 0ms}},
      {"k", {.ttl = -5ms}},
      {"k", {.ttl = locksmith::max_ttl + 1ms}},
      {"k", {.wait = -1ms}},
      {"k", {.ttl = 10ms, .drift = 10ms}},
      // Renewal with no room: the first renewal could not answer before the loss deadline.
      {"k", {.ttl = 100ms}},
      {"k", {.ttl = 1s, .loss_margin = 600ms}},
      {"k", {.strategy = locksmith::wait_strategy::spin{.interval = 0ms}}},
      {"k", {.strategy = locksmith::wait_strategy::spin{.jitter = -1ms}}},
   };
   run(ioc, [&]() -> asio::awaitable<void> {
      for (auto const& [name, opts] : cases) {
         auto [ec, l] = co_await c.async_lock(name, opts, tuple);
         BOOST_TEST(ec == error::invalid_argument, "name of " << name.size() << " bytes");
         auto [ec2, l2] = co_await c.async_try_lock(name, opts, tuple);
         BOOST_TEST(ec2 == error::invalid_argument);
      }
      auto [ok, l] = co_await c.async_lock(std::string(locksmith::max_key_size, 'k'), {}, tuple);
      BOOST_TEST(!ok);
      co_await c.async_unlock(l);
   }());
   for (auto const& bad :
        std::vector<locksmith::config>{{.nodes = {}},
                                       {.nodes = {"http://127.0.0.1:6379"}},
                                       {.nodes = {srv.url(), "redis://127.0.0.1:99999"}},
                                       {.nodes = {srv.url()}, .prefix = "a{b"},
                                       {.nodes = {srv.url()}, .node_timeout = 0ms}}) {
      locksmith::client broken{ioc.get_executor(), bad};
      BOOST_TEST(broken.config_error() == error::invalid_argument);
      run(ioc, [&]() -> asio::awaitable<void> {
         auto [ec, l] = co_await broken.async_lock("k", {}, tuple);
         BOOST_TEST(ec == error::invalid_argument);
      }());
   }
}

BOOST_AUTO_TEST_CASE(wrongtype_key_gives_the_server_message)
{
   locksmith::client c{ioc.get_executor(), cfg()};
   srv.text({"RPUSH", lock_key(name), "x"});
   run(ioc, [&]() -> asio::awaitable<void> {
      locksmith::report diag;
      auto const t0 = clock_type::now();
      auto [ec, l] = co_await c.async_lock(name, {.wait = 5s, .diag = &diag}, tuple);
      BOOST_TEST(ec == error::unexpected_reply);
      BOOST_TEST((clock_type::now() - t0 < 1s));  // not retried until the wait runs out
      BOOST_TEST(diag.message().find("WRONGTYPE") != std::string::npos, diag.message());
   }());
   BOOST_TEST(srv.text({"TYPE", lock_key(name)}) == "list");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_lock_faults
