// A server that restarts from its dump answers LOADING to every command until its data is in
// memory: a routine operation, which a lock and an unlock wait out within their time, and which
// is reported as an unavailable node (not as an unexpected reply) once that time runs out.
//
// The real thing: a redis-server with a dump of its own (SAVE into a temporary --dir), restarted
// with --key-load-delay (µs per key), so that its load lasts about 2.5 s, and with
// --loading-process-events-interval-bytes low enough that it answers meanwhile. Redis 7.0 and
// Valkey have both; Redis 6.0 lacks the second, so this suite is skipped there.
#include "support/integration.hpp"
#include "support/server_checks.hpp"
#include "support/temp_dir.hpp"

namespace test_server_loading {

namespace {

// × 1 ms of --key-load-delay: a load of about 2.5 s. Each key's 1 KiB is a
// --loading-process-events-interval-bytes, so the server answers every millisecond meanwhile
// (LOADING), well within a node timeout.
constexpr int filler_keys = 2500;

struct loading_fixture : locksmith::test::context_fixture {
   locksmith::test::temp_dir dir{"locksmith-loading"};
   redis_server srv{{"--dir", dir.path.string(), "--key-load-delay", "1000",
                     "--loading-process-events-interval-bytes", "1024"}};

   locksmith::config cfg() const { return test_config({srv.url()}); }

   // Saves the data set (with keys enough to make its load last: about 1 ms each), and restarts
   // the server from it: it answers LOADING when this returns.
   void restart_from_a_dump(int keys = filler_keys)
   {
      srv.command({"EVAL",
                   "local v = string.rep('x', 1024) "
                   "for i = 1, ARGV[1] do redis.call('SET', 'filler:' .. i, v) end",
                   "0", std::to_string(keys)});
      BOOST_REQUIRE_EQUAL(srv.text({"SAVE"}), "OK");
      srv.restart_loading();
      BOOST_REQUIRE_MESSAGE(srv.text({"PING"}).starts_with("LOADING"),
                            "the server loaded its dump before the test could use it");
   }
};

// --loading-process-events-interval-bytes came with Redis 7.0.
boost::unit_test::precondition needs_7_0()
{
   return locksmith::test::needs_server_version(7, 0, "--loading-process-events-interval-bytes");
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(server_loading, loading_fixture, *needs_redis_server() * needs_7_0())

// The lock is taken once the data is in: tried again meanwhile, never failed as a server error.
BOOST_AUTO_TEST_CASE(a_lock_waits_while_its_server_loads_its_dump)
{
   locksmith::client c{ioc.get_executor(), cfg()};
   run(ioc, 60s, [&]() -> asio::awaitable<void> {
      auto first = co_await c.async_lock(name);  // connected once
      co_await c.async_unlock(first);
      restart_from_a_dump();
      locksmith::report diag;
      auto [ec, l] = co_await c.async_lock(name, {.wait = 30s, .diag = &diag}, tuple);
      BOOST_TEST_REQUIRE(!ec, ec.message() << ": " << diag.message());
      BOOST_TEST(diag.attempts > 1u, "the lock met no LOADING: " << diag.attempts);
      BOOST_TEST(srv.text({"GET", lock_key(name)}) == l.token());
      co_await c.async_unlock(l);
      co_await c.async_close(tuple);
   }());
}

// A lease whose key is in the dump is released once the data is in, well within its TTL.
BOOST_AUTO_TEST_CASE(an_unlock_waits_while_its_server_loads_its_dump)
{
   locksmith::client c{ioc.get_executor(), cfg()};
   run(ioc, 60s, [&]() -> asio::awaitable<void> {
      auto l = co_await c.async_lock(name, {.ttl = 60s});
      restart_from_a_dump();
      locksmith::report diag;
      auto [ec] = co_await c.async_unlock(l, diag, tuple);
      BOOST_TEST(!ec, ec.message() << ": " << diag.message());
      BOOST_TEST(srv.text({"PING"}) == "PONG");
      BOOST_TEST(srv.text({"EXISTS", lock_key(name)}) == "0");
      co_await c.async_close(tuple);
   }());
}

// A load that outlasts the wait: the node was unavailable (exit 69 in the tool), and says why.
BOOST_AUTO_TEST_CASE(a_load_that_outlasts_the_wait_is_an_unavailable_node)
{
   // No health check within the wait: a loading server answers its PING with LOADING, which
   // drops the connection (the next case's), so here every try meets the server's own LOADING
   // reply, and runs nowhere.
   auto config = cfg();
   config.health_check_interval = 30s;
   locksmith::client c{ioc.get_executor(), config};
   run(ioc, 60s, [&]() -> asio::awaitable<void> {
      auto first = co_await c.async_lock(name);
      co_await c.async_unlock(first);
      restart_from_a_dump();
      locksmith::report diag;
      auto [ec, l] = co_await c.async_lock(name, {.wait = 1s, .diag = &diag}, tuple);
      BOOST_TEST(ec == locksmith::error::quorum_unreachable, ec.message());
      BOOST_TEST(diag.message().find("LOADING") != std::string::npos, diag.message());
      // Its tries ran nowhere: no key is left once the data is in.
      BOOST_TEST(co_await eventually([&] { return srv.text({"PING"}) == "PONG"; }, 30s, 50ms));
      BOOST_TEST(srv.text({"EXISTS", lock_key(name)}) == "0");
      co_await c.async_close(tuple);
   }());
}

// A loading server answers the connection's health check with LOADING, which drops the
// connection. A try made while it is down (until reconnect_wait has passed) is not answered: it
// times out, and says that the load ended the connection, not only that the connection ended.
BOOST_AUTO_TEST_CASE(a_try_while_the_load_keeps_the_connection_down_reports_the_load)
{
   auto config = cfg();
   config.health_check_interval = 100ms;
   config.reconnect_wait = 1s;
   bool dropped = false;
   config.logger = [&](locksmith::log_level, std::string_view line) {
      dropped = dropped || (line.find("Health checker") != std::string_view::npos &&
                            line.find("LOADING") != std::string_view::npos);
   };
   locksmith::client c{ioc.get_executor(), config};
   run(ioc, 60s, [&]() -> asio::awaitable<void> {
      auto first = co_await c.async_lock(name);
      co_await c.async_unlock(first);
      // A load of about 5 s: the connection is made again 1 s after the restart, and dropped
      // at its first health check.
      restart_from_a_dump(2 * filler_keys);
      BOOST_TEST_REQUIRE(co_await eventually([&] { return dropped; }, 20s, 5ms));
      locksmith::report diag;
      auto [ec, l] = co_await c.async_lock(name, {.wait = 300ms, .diag = &diag}, tuple);
      BOOST_TEST(ec == locksmith::error::quorum_unreachable, ec.message());
      BOOST_TEST(diag.message().find("LOADING") != std::string::npos, diag.message());
      co_await c.async_close(tuple);
   }());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_server_loading
