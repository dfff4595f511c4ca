// The fence key against a real redis-server: renewal keeps it alive with the lock, so that the
// fence stays strictly increasing however long a lease is held.
#include "support/integration.hpp"

#include <cstdint>

namespace test_fence {

namespace {

// How long the acquire script keeps the fence key beyond the lock's TTL (src/ops.cpp).
constexpr auto fence_linger = 60s;

}  // namespace

BOOST_FIXTURE_TEST_SUITE(fence, server_fixture, *needs_redis_server())

BOOST_AUTO_TEST_CASE(extend_sets_the_fence_key_beyond_the_new_ttl)
{
   locksmith::client c{ioc.get_executor(), cfg()};
   run(ioc, [&]() -> asio::awaitable<void> {
      auto l = co_await c.async_lock(name, {.ttl = 10s});
      auto const pttl = [&](std::string const& key) { return std::stoll(srv.text({"PTTL", key})); };
      BOOST_TEST(pttl(fence_key(name)) > pttl(lock_key(name)));
      // Longer than the fence key had left (10 s + 60 s): the old extend left it to expire first.
      auto [ec] = co_await c.async_extend(l, 120s, tuple);
      BOOST_TEST_REQUIRE(!ec, ec.message());
      auto const lock_left = pttl(lock_key(name));
      auto const fence_left = pttl(fence_key(name));
      BOOST_TEST_MESSAGE("after extend(120 s): lock key " << lock_left << " ms, fence key "
                                                          << fence_left << " ms");
      BOOST_TEST(lock_left > 119'000);
      BOOST_TEST(fence_left >= lock_left + 59'000);
      BOOST_TEST(fence_left <= std::chrono::milliseconds{120s + fence_linger}.count());
      BOOST_TEST(srv.text({"GET", fence_key(name)}) == std::to_string(l.fencing_token()));
      co_await c.async_unlock(l);
   }());
}

// A fence sequence that runs ahead of the server's clock (as it does after the clock is stepped
// back: each fence is the last one + 1) relies on the fence key alone. The holder's fence key is
// brought to the brink of expiry, as if the lease had been renewed for a minute, and the watchdog
// renews past that moment: the key must survive, and the next holder's fence follow the stored one.
BOOST_AUTO_TEST_CASE(a_lease_renewed_past_the_fence_keys_first_expiry_keeps_the_fence)
{
   locksmith::client a{ioc.get_executor(), cfg()}, b{ioc.get_executor(), cfg()};
   // A fence minted by a server whose clock said 2100 (µs since 1970, below 2^53).
   std::uint64_t const ahead = 4'102'444'800'000'000;
   srv.text({"SET", fence_key(name), std::to_string(ahead), "PX", "120000"});
   run(ioc, 20s, [&]() -> asio::awaitable<void> {
      constexpr auto ttl = 1s;
      auto l = co_await a.async_lock(name, {.ttl = ttl});
      BOOST_TEST_REQUIRE(l.fencing_token() == ahead + 1);
      // The fence key's first expiry, brought near: the old extend would let it pass.
      BOOST_TEST_REQUIRE(srv.text({"PEXPIRE", fence_key(name), "1500"}) == "1");
      auto const expiry = clock_type::now() + 1500ms;
      // Wait, with a deadline, for a renewal that starts after that expiry.
      auto const deadline = clock_type::now() + 10s;
      while (l.valid_until() <= expiry + ttl && l.held() && clock_type::now() < deadline)
         co_await sleep(5ms);
      BOOST_TEST_REQUIRE(l.held());
      BOOST_TEST_REQUIRE((l.valid_until() > expiry + ttl),
                         "no renewal after the fence key's expiry");
      auto const fence_left = std::stoll(srv.text({"PTTL", fence_key(name)}));
      BOOST_TEST_MESSAGE("fence key after renewals past its first expiry: " << fence_left
                                                                            << " ms left");
      BOOST_TEST(fence_left > std::chrono::milliseconds{fence_linger}.count());
      BOOST_TEST(srv.text({"GET", fence_key(name)}) == std::to_string(ahead + 1));
      co_await a.async_unlock(l);
      auto next = co_await b.async_lock(name, {.ttl = ttl});
      BOOST_TEST(next.fencing_token() > l.fencing_token());  // the server's clock alone: ~1.7e15
      co_await b.async_unlock(next);
   }());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_fence
