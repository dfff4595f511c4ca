// async_with_lock with Asio's per-operation cancellation (asio::cancel_after), against a real
// redis-server: its named initiation gives cancel_after the client's executor.
#include "support/integration.hpp"

namespace test_with_lock {

BOOST_FIXTURE_TEST_SUITE(with_lock, server_fixture, *needs_redis_server())

BOOST_AUTO_TEST_CASE(cancel_after_stops_a_running_body_and_releases_the_lock)
{
   locksmith::client c{ioc.get_executor(), cfg()};
   bool body_saw_cancel = false;
   run(ioc, 10s, [&]() -> asio::awaitable<void> {
      auto body = [&](lease&) -> asio::awaitable<void> {
         asio::steady_timer forever{co_await asio::this_coro::executor, 1h};
         auto [e] = co_await forever.async_wait(asio::as_tuple(asio::use_awaitable));
         body_saw_cancel = e == asio::error::operation_aborted;
      };
      auto [ec] = co_await locksmith::async_with_lock(c, name, {.ttl = 30s}, body,
                                                      asio::cancel_after(100ms, tuple));
      // The body ended normally after the cancellation it was passed; the release succeeded.
      BOOST_TEST(body_saw_cancel);
      BOOST_TEST(!ec);
      BOOST_TEST(co_await key_disappears(lock_key(name)));
      co_await c.async_close(tuple);
   }());
}

BOOST_AUTO_TEST_CASE(cancel_after_stops_the_wait_for_a_held_lock)
{
   locksmith::client holder{ioc.get_executor(), cfg()}, waiter{ioc.get_executor(), cfg()};
   run(ioc, 10s, [&]() -> asio::awaitable<void> {
      auto l = co_await holder.async_lock(name, {.ttl = 30s});
      bool ran = false;
      auto body = [&](lease&) -> asio::awaitable<int> {
         ran = true;
         co_return 1;
      };
      auto [ec, value] = co_await locksmith::async_with_lock(
         waiter, name, {.ttl = 30s, .wait = 10s}, body, asio::cancel_after(100ms, tuple));
      BOOST_TEST(ec == asio::error::operation_aborted);
      BOOST_TEST(value == 0);
      BOOST_TEST(!ran);
      co_await holder.async_unlock(l, tuple);
      co_await holder.async_close(tuple);
      co_await waiter.async_close(tuple);
   }());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_with_lock
