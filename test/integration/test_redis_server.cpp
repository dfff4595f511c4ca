// The test-support helpers themselves: if these fail, every other integration test is suspect.
#include "support/fixture.hpp"
#include "support/keys.hpp"
#include "support/preconditions.hpp"
#include "support/redis_server.hpp"
#include "support/run.hpp"

#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/test/unit_test.hpp>

#include <signal.h>

#include <cerrno>
#include <chrono>
#include <stdexcept>
#include <string>

namespace test_redis_server {

namespace asio = boost::asio;
namespace utf = boost::unit_test;
using namespace std::chrono_literals;
using namespace std::string_literals;
using locksmith::test::redis_server;
using locksmith::test::reply;
using locksmith::test::unique_key;

namespace {

// True once the process has been reaped: kill(pid, 0) still succeeds on a zombie.
bool reaped(pid_t pid)
{
   return ::kill(pid, 0) == -1 && errno == ESRCH;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(redis_server_helper, *locksmith::test::needs_redis_server())

BOOST_AUTO_TEST_CASE(starts_empty_and_answers_ping, *utf::timeout(30))
{
   redis_server server;
   BOOST_TEST(server.running());
   BOOST_TEST(server.pid() > 0);
   BOOST_TEST(server.port() != 0);
   BOOST_TEST(server.url() == "redis://127.0.0.1:" + std::to_string(server.port()));
   BOOST_TEST(server.text({"PING"}) == "PONG");
   BOOST_TEST(server.text({"DBSIZE"}) == "0");
   // Persistence must be off, or a restart would not come back empty.
   reply save = server.command({"CONFIG", "GET", "save"});
   BOOST_REQUIRE(save.type == reply::kind::array);
   BOOST_REQUIRE(save.elements.size() == 2u);
   BOOST_TEST(save.elements[1].str == "");
   reply appendonly = server.command({"CONFIG", "GET", "appendonly"});
   BOOST_REQUIRE(appendonly.elements.size() == 2u);
   BOOST_TEST(appendonly.elements[1].str == "no");
}

BOOST_AUTO_TEST_CASE(parses_every_reply_type, *utf::timeout(30))
{
   redis_server server;
   std::string key = unique_key();
   std::string value = "line1\r\nline2 with \0 inside"s;  // bulk strings are binary-safe
   BOOST_TEST(server.text({"SET", key, value}) == "OK");
   reply got = server.command({"GET", key});
   BOOST_TEST((got.type == reply::kind::bulk));
   BOOST_TEST(got.str == value);
   BOOST_TEST(server.text({"GET", unique_key("missing")}) == "(nil)");
   BOOST_TEST(server.text({"INCRBY", unique_key("counter"), "-42"}) == "-42");
   reply error = server.command({"NO-SUCH-COMMAND"});
   BOOST_TEST((error.type == reply::kind::error));
   BOOST_TEST(error.str.starts_with("ERR"));
   reply array = server.command(std::vector<std::string>{"MGET", key, unique_key("missing")});
   BOOST_REQUIRE((array.type == reply::kind::array));
   BOOST_REQUIRE(array.elements.size() == 2u);
   BOOST_TEST(array.elements[0].str == value);
   BOOST_TEST((array.elements[1].type == reply::kind::nil));
   BOOST_TEST(server.text({"SET", key, std::string(1 << 20, 'x')}) ==
              "OK");  // several recv() calls
   BOOST_TEST(server.command({"GET", key}).str.size() == std::size_t{1} << 20);
   BOOST_CHECK_THROW(server.text({"MGET", key}), std::runtime_error);
}

BOOST_AUTO_TEST_CASE(extra_args_reach_the_server, *utf::timeout(30))
{
   redis_server server({"--maxmemory", "12345678"});
   reply maxmemory = server.command({"CONFIG", "GET", "maxmemory"});
   BOOST_REQUIRE(maxmemory.elements.size() == 2u);
   BOOST_TEST(maxmemory.elements[1].str == "12345678");
}

BOOST_AUTO_TEST_CASE(bad_extra_args_throw, *utf::timeout(30))
{
   BOOST_CHECK_EXCEPTION(
      redis_server({"--no-such-option", "1"}), std::runtime_error, [](const std::runtime_error& e) {
         return std::string(e.what()).find("--no-such-option") != std::string::npos;
      });
}

BOOST_AUTO_TEST_CASE(pause_hangs_and_resume_recovers, *utf::timeout(30))
{
   redis_server server;
   std::string key = unique_key();
   BOOST_TEST(server.text({"SET", key, "v"}) == "OK");
   server.pause();
   BOOST_TEST(server.running());
   auto start = std::chrono::steady_clock::now();
   BOOST_CHECK_THROW(server.command({"GET", key}, 200ms), std::runtime_error);
   auto waited = std::chrono::steady_clock::now() - start;
   BOOST_TEST((waited >= 200ms && waited < 2s));
   server.resume();
   BOOST_TEST(server.text({"GET", key}) == "v");
}

BOOST_AUTO_TEST_CASE(kill_refuses_connections, *utf::timeout(30))
{
   redis_server server;
   pid_t pid = server.pid();
   server.kill();
   BOOST_TEST(!server.running());
   BOOST_TEST(server.pid() == -1);
   BOOST_TEST(reaped(pid));
   BOOST_CHECK_THROW(server.command({"PING"}), std::runtime_error);
   server.kill();  // a second kill is a no-op
}

BOOST_AUTO_TEST_CASE(kill_works_on_a_paused_server, *utf::timeout(30))
{
   redis_server server;
   pid_t pid = server.pid();
   server.pause();
   server.kill();
   BOOST_TEST(!server.running());
   BOOST_TEST(reaped(pid));
}

BOOST_AUTO_TEST_CASE(restart_comes_back_empty_on_the_same_port, *utf::timeout(30))
{
   redis_server server;
   std::uint16_t port = server.port();
   pid_t pid = server.pid();
   std::string key = unique_key();
   BOOST_TEST(server.text({"SET", key, "v"}) == "OK");
   server.restart();
   BOOST_TEST(server.port() == port);
   BOOST_TEST(server.pid() != pid);
   BOOST_TEST(reaped(pid));
   BOOST_TEST(server.text({"GET", key}) == "(nil)");
   BOOST_TEST(server.text({"DBSIZE"}) == "0");
}

BOOST_AUTO_TEST_CASE(restart_works_after_kill_and_pause, *utf::timeout(30))
{
   redis_server server;
   std::uint16_t port = server.port();
   server.kill();
   server.restart();
   BOOST_TEST(server.text({"PING"}) == "PONG");
   server.pause();
   server.restart();
   BOOST_TEST(server.port() == port);
   BOOST_TEST(server.text({"PING"}) == "PONG");
}

BOOST_AUTO_TEST_CASE(destructor_reaps_even_a_paused_server, *utf::timeout(30))
{
   pid_t pid = -1;
   {
      redis_server server;
      pid = server.pid();
      server.pause();
   }
   BOOST_TEST(reaped(pid));
}

BOOST_AUTO_TEST_CASE(unique_key_names_the_test, *utf::timeout(30))
{
   std::string prefix = "redis_server_helper/unique_key_names_the_test/";
   std::string key = unique_key();
   BOOST_TEST(key.starts_with(prefix));
   BOOST_TEST(key.size() == prefix.size() + 16);
   BOOST_TEST(unique_key("lock").starts_with(prefix + "lock/"));
   BOOST_TEST(unique_key() != key);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(run_helper)

asio::awaitable<int> answer_after(std::chrono::milliseconds delay)
{
   asio::steady_timer timer(co_await asio::this_coro::executor, delay);
   co_await timer.async_wait(asio::use_awaitable);
   co_return 42;
}

asio::awaitable<void> throw_after_yield()
{
   co_await answer_after(1ms);
   throw std::logic_error("boom");
}

// Keeps the context busy forever, as a client's background connection would.
asio::awaitable<void> tick_forever()
{
   asio::steady_timer timer(co_await asio::this_coro::executor);
   for (;;) {
      timer.expires_after(1ms);
      co_await timer.async_wait(asio::use_awaitable);
   }
}

BOOST_AUTO_TEST_CASE(returns_the_value_despite_other_work, *utf::timeout(30))
{
   asio::io_context ioc;
   asio::co_spawn(ioc, tick_forever(), asio::detached);
   BOOST_TEST(locksmith::test::run(ioc, 5s, answer_after(10ms)) == 42);
   BOOST_TEST(locksmith::test::run(ioc, 5s, answer_after(1ms)) == 42);  // reusable
}

BOOST_AUTO_TEST_CASE(rethrows_the_exception, *utf::timeout(30))
{
   asio::io_context ioc;
   BOOST_CHECK_THROW(locksmith::test::run(ioc, 5s, throw_after_yield()), std::logic_error);
}

BOOST_AUTO_TEST_CASE(deadline_cancels_and_leaves_the_context_reusable, *utf::timeout(30))
{
   asio::io_context ioc;
   bool cancelled = false;
   auto hang = [&]() -> asio::awaitable<void> {
      try {
         co_await answer_after(1h);
      } catch (const boost::system::system_error& e) {
         cancelled = e.code() == asio::error::operation_aborted;
      }
   };
   auto start = std::chrono::steady_clock::now();
   BOOST_CHECK_EXCEPTION(locksmith::test::run(ioc, 50ms, hang()), std::runtime_error,
                         [](const std::runtime_error& e) {
                            return std::string(e.what()).starts_with("coroutine did not finish");
                         });
   BOOST_TEST((std::chrono::steady_clock::now() - start < 2s));
   BOOST_TEST(!ioc.stopped());
   BOOST_TEST(locksmith::test::run(ioc, 5s, answer_after(1ms)) == 42);
   BOOST_TEST(cancelled);  // the abandoned coroutine unwound while the context ran again
}

BOOST_AUTO_TEST_CASE(no_work_left_waits_for_work_that_ends, *utf::timeout(30))
{
   asio::io_context ioc;
   asio::steady_timer timer(ioc, 20ms);
   bool fired = false;
   timer.async_wait([&](boost::system::error_code) { fired = true; });
   locksmith::test::expect_no_work_left(ioc, 5s);
   BOOST_TEST(fired);
   BOOST_TEST(ioc.stopped());
}

// The check itself fails the test here, as it would after a test whose client left work behind.
BOOST_AUTO_TEST_CASE(no_work_left_fails_on_work_that_never_ends,
                     *utf::timeout(30) * utf::expected_failures(1))
{
   asio::io_context ioc;
   asio::co_spawn(ioc, tick_forever(), asio::detached);
   locksmith::test::expect_no_work_left(ioc, 50ms);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_redis_server
