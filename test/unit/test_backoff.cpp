// Unit tests of spin_delay and expiry_delay (src/sansio/backoff.hpp).
#include "sansio/backoff.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <random>

namespace test_backoff {

namespace {

using namespace std::chrono_literals;
using namespace locksmith::detail;
using locksmith::wait_strategy::spin;
using std::chrono::microseconds;

// Durations as microsecond counts, which BOOST_TEST can print.
constexpr long long us(microseconds d)
{
   return d.count();
}

constexpr microseconds plenty = 1h;

}  // namespace

BOOST_AUTO_TEST_SUITE(backoff)

BOOST_AUTO_TEST_CASE(spin_delay_stays_within_interval_and_jitter)
{
   std::mt19937_64 random{1};
   spin const s{.interval = 100ms, .jitter = 50ms};
   for (int i = 0; i < 1000; ++i) {
      auto const d = spin_delay(s, plenty, random);
      BOOST_TEST(us(d) >= us(100ms));
      BOOST_TEST(us(d) <= us(150ms));
   }
}

BOOST_AUTO_TEST_CASE(spin_delay_covers_the_whole_range)
{
   std::mt19937_64 random{20240601};
   spin const s{.interval = 100ms, .jitter = 50ms};
   constexpr int draws = 10'000;
   auto lo = plenty, hi = microseconds{0};
   std::array<int, 10> buckets{};  // 5 ms each
   for (int i = 0; i < draws; ++i) {
      auto const d = spin_delay(s, plenty, random);
      BOOST_TEST_REQUIRE(us(d) >= us(100ms));
      BOOST_TEST_REQUIRE(us(d) <= us(150ms));
      lo = std::min(lo, d);
      hi = std::max(hi, d);
      buckets[std::min<std::size_t>((d - 100ms) / 5ms, buckets.size() - 1)] += 1;
   }
   // Uniform over 50,001 µs values: the extremes of 10,000 draws lie within ~5 µs of the ends
   // on average; 250 µs is far beyond any seed's luck.
   BOOST_TEST(us(lo) <= us(100ms + 250us));
   BOOST_TEST(us(hi) >= us(150ms - 250us));
   // Each tenth of the range gets about 1,000 draws.
   for (std::size_t b = 0; b < buckets.size(); ++b) {
      BOOST_TEST_CONTEXT("bucket " << b)
      {
         BOOST_TEST(buckets[b] > 800);
         BOOST_TEST(buckets[b] < 1200);
      }
   }
}

BOOST_AUTO_TEST_CASE(spin_delay_without_jitter_is_the_interval)
{
   std::mt19937_64 random{7};
   spin const none{.interval = 100ms, .jitter = 0ms};
   for (int i = 0; i < 100; ++i)
      BOOST_TEST(us(spin_delay(none, plenty, random)) == us(100ms));
   // A negative jitter counts as none.
   spin const negative{.interval = 100ms, .jitter = -5ms};
   for (int i = 0; i < 100; ++i)
      BOOST_TEST(us(spin_delay(negative, plenty, random)) == us(100ms));
   BOOST_TEST(us(spin_delay(spin{.interval = 0ms, .jitter = 0ms}, plenty, random)) == 0);
}

BOOST_AUTO_TEST_CASE(spin_delay_is_cut_to_the_time_left)
{
   std::mt19937_64 random{3};
   spin const s{.interval = 100ms, .jitter = 100ms};
   BOOST_TEST(us(spin_delay(s, 30ms, random)) == us(30ms));
   BOOST_TEST(us(spin_delay(s, 100ms, random)) == us(100ms));
   BOOST_TEST(us(spin_delay(s, 1us, random)) == 1);
   BOOST_TEST(us(spin_delay(s, 0us, random)) == 0);

   // Left inside the jitter range: never more than left, and left is reached.
   bool reached = false;
   for (int i = 0; i < 1000; ++i) {
      auto const d = spin_delay(s, 150ms, random);
      BOOST_TEST(us(d) >= us(100ms));
      BOOST_TEST(us(d) <= us(150ms));
      reached = reached || d == 150ms;
   }
   BOOST_TEST(reached);
}

BOOST_AUTO_TEST_CASE(spin_delay_is_zero_when_the_deadline_passed)
{
   std::mt19937_64 random{4};
   spin const s{.interval = 100ms, .jitter = 100ms};
   BOOST_TEST(us(spin_delay(s, -1us, random)) == 0);
   BOOST_TEST(us(spin_delay(s, -10s, random)) == 0);
}

BOOST_AUTO_TEST_CASE(expiry_delay_is_one_ms_past_the_pttl)
{
   BOOST_TEST(us(expiry_delay(250ms, 1s, plenty)) == us(251ms));
   BOOST_TEST(us(expiry_delay(0ms, 1s, plenty)) == us(1ms));
   BOOST_TEST(us(expiry_delay(30s, 1s, plenty)) == us(30001ms));
}

BOOST_AUTO_TEST_CASE(expiry_delay_falls_back_without_a_pttl)
{
   // PTTL -1: the key has no TTL; -2: no key. Either way, probe every `fallback`.
   BOOST_TEST(us(expiry_delay(-1ms, 1s, plenty)) == us(1s));
   BOOST_TEST(us(expiry_delay(-2ms, 1s, plenty)) == us(1s));
   BOOST_TEST(us(expiry_delay(-1ms, 250ms, plenty)) == us(250ms));
}

BOOST_AUTO_TEST_CASE(expiry_delay_is_cut_to_the_time_left)
{
   BOOST_TEST(us(expiry_delay(250ms, 1s, 100ms)) == us(100ms));
   BOOST_TEST(us(expiry_delay(250ms, 1s, 251ms)) == us(251ms));
   BOOST_TEST(us(expiry_delay(250ms, 1s, 250ms)) == us(250ms));
   BOOST_TEST(us(expiry_delay(-1ms, 1s, 300ms)) == us(300ms));
   BOOST_TEST(us(expiry_delay(250ms, 1s, 0us)) == 0);
   BOOST_TEST(us(expiry_delay(250ms, 1s, -5ms)) == 0);
   BOOST_TEST(us(expiry_delay(-1ms, 1s, -5ms)) == 0);
}

// After a split vote: a draw over a few round trips of the attempt, never a long sleep.
BOOST_AUTO_TEST_CASE(lots_delay_spreads_over_a_few_round_trips)
{
   std::mt19937_64 rng{7};
   microseconds longest{0};
   for (int i = 0; i < 2000; ++i)
      longest = std::max(longest, lots_delay(microseconds{100}, 50ms, plenty, rng));
   BOOST_TEST(us(longest) <= 400);  // 4 x 100 µs
   BOOST_TEST(us(longest) > 300);   // and uses the window
   for (int i = 0; i < 200; ++i) {
      BOOST_TEST(us(lots_delay(microseconds{1}, 50ms, plenty, rng)) <= 200);  // floor 200 µs
      BOOST_TEST(us(lots_delay(microseconds{1'000'000}, 50ms, plenty, rng)) <=
                 5000);  // cap node_timeout / 10
      BOOST_TEST(us(lots_delay(microseconds{100}, 50ms, microseconds{10}, rng)) <=
                 10);  // cut to the time left
   }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_backoff
