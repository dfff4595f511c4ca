// Unit tests of default_drift, valid_until and deadline_after (src/sansio/validity.hpp).
#include "sansio/validity.hpp"

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <optional>

namespace test_validity {

namespace {

using namespace std::chrono_literals;
using namespace locksmith::detail;

// An arbitrary start, away from the clock's epoch.
constexpr clock::time_point start = clock::time_point{} + 1000h;

// Durations as nanosecond counts, which BOOST_TEST can print.
constexpr long long ns(clock::duration d)
{
   return std::chrono::nanoseconds{d}.count();
}

// How long after `start` the validity of an attempt that started then ends, seen at `now`, in
// ns; the case stops (BOOST_TEST_REQUIRE) when none is left.
long long ends_after_start(clock::time_point now, std::chrono::milliseconds ttl,
                           std::chrono::milliseconds drift)
{
   auto const until = valid_until(start, now, ttl, drift);
   BOOST_TEST_REQUIRE(until.has_value());
   return ns(*until - start);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(validity)

BOOST_AUTO_TEST_CASE(default_drift_is_one_percent_plus_two_ms)
{
   BOOST_TEST(default_drift(30s).count() == 302);
   BOOST_TEST(default_drift(1ms).count() == 2);
   BOOST_TEST(default_drift(10s).count() == 102);
   BOOST_TEST(default_drift(100ms).count() == 3);
   BOOST_TEST(default_drift(199ms).count() == 3);  // ttl / 100 rounds down
   BOOST_TEST(default_drift(24h).count() == 864002);
}

BOOST_AUTO_TEST_CASE(deadline_is_start_plus_ttl_minus_drift)
{
   BOOST_TEST(ends_after_start(start + 1s, 10s, 102ms) == ns(9898ms));
}

// Measured from the start: how long the attempt took moves `now`, never the deadline.
BOOST_AUTO_TEST_CASE(deadline_does_not_depend_on_now)
{
   for (std::chrono::milliseconds const elapsed : {0ms, 1ms, 500ms, 9000ms, 9897ms}) {
      BOOST_TEST_CONTEXT("elapsed " << elapsed.count() << " ms")
      {
         BOOST_TEST(ends_after_start(start + elapsed, 10s, 102ms) == ns(9898ms));
      }
   }
}

BOOST_AUTO_TEST_CASE(zero_drift_gives_the_whole_ttl)
{
   BOOST_TEST(ends_after_start(start, 5s, 0ms) == ns(5s));
}

BOOST_AUTO_TEST_CASE(boundary_at_the_deadline)
{
   auto const deadline = start + 10s - 102ms;
   auto const before = valid_until(start, deadline - 1ns, 10s, 102ms);
   BOOST_TEST_REQUIRE(before.has_value());
   BOOST_TEST(ns(*before - deadline) == 0);
   // Exactly at the deadline no validity is left: the attempt counts as lost.
   BOOST_TEST(!valid_until(start, deadline, 10s, 102ms).has_value());
   BOOST_TEST(!valid_until(start, deadline + 1ns, 10s, 102ms).has_value());
}

BOOST_AUTO_TEST_CASE(empty_after_the_deadline)
{
   BOOST_TEST(!valid_until(start, start + 10s, 10s, 102ms).has_value());
   BOOST_TEST(!valid_until(start, start + 1h, 10s, 102ms).has_value());
}

BOOST_AUTO_TEST_CASE(empty_when_drift_eats_the_ttl)
{
   BOOST_TEST(!valid_until(start, start, 100ms, 100ms).has_value());
   BOOST_TEST(!valid_until(start, start, 100ms, 200ms).has_value());
   BOOST_TEST(ends_after_start(start, 100ms, 99ms) == ns(1ms));
}

BOOST_AUTO_TEST_CASE(usable_in_constant_expressions)
{
   constexpr auto until = valid_until(start, start, 1s, 10ms);
   BOOST_TEST(until.has_value());
   BOOST_TEST(ns(*until - start) == ns(990ms));
}

// A wait or hold ends `span` after its start; forever, or anything longer, a century on, without
// overflowing the clock (milliseconds::max() in nanoseconds would).
BOOST_AUTO_TEST_CASE(deadline_after_stops_at_forever)
{
   BOOST_TEST(ns(deadline_after(start, 0ms) - start) == ns(0ms));
   BOOST_TEST(ns(deadline_after(start, 10s) - start) == ns(10s));
   BOOST_TEST(ns(deadline_after(start, locksmith::forever) - start) == ns(locksmith::forever));
   auto const longest = deadline_after(start, std::chrono::milliseconds::max());
   BOOST_TEST(ns(longest - start) == ns(locksmith::forever));
   BOOST_TEST((longest > start));
   BOOST_TEST(ns(locksmith::forever) == ns(std::chrono::hours{24 * 365 * 100}));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_validity
