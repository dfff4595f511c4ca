// Unit tests of the watchdog's schedule (src/sansio/watchdog_schedule.hpp): when it
// renews, retries and declares a lease lost, on a clock that the test sets.
#include "sansio/watchdog_schedule.hpp"

#include "support/print.hpp"

#include <boost/test/unit_test.hpp>

namespace test_watchdog_schedule {

namespace {
using namespace std::chrono_literals;
using namespace locksmith::detail;
using clock_type = std::chrono::steady_clock;

clock_type::time_point const t0{std::chrono::hours{1}};

// A lease of 3 s taken at t0, valid until t0 + 2.9 s, 50 ms node timeout, no margin.
renewal_facts held()
{
   return {.renewed_at = t0,
           .valid_until = t0 + 2900ms,
           .ttl = 3000ms,
           .node_timeout = 50ms,
           .loss_margin = 0ms};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(watchdog_schedule)

BOOST_AUTO_TEST_CASE(renews_a_third_of_the_ttl_after_the_last_renewal)
{
   auto const f = held();
   BOOST_TEST((next_wake(f, t0) == t0 + 1000ms));
   BOOST_TEST((on_wake(f, t0 + 1000ms) == renewal_step::renew));
}

BOOST_AUTO_TEST_CASE(is_lost_one_node_timeout_and_the_margin_before_the_validity_ends)
{
   auto f = held();
   BOOST_TEST((loss_deadline(f) == t0 + 2850ms));
   BOOST_TEST((last_renewal_start(f) == t0 + 2800ms));
   f.loss_margin = 200ms;
   BOOST_TEST((loss_deadline(f) == t0 + 2650ms));
   BOOST_TEST((on_wake(f, t0 + 2600ms) == renewal_step::renew));
   BOOST_TEST((on_wake(f, t0 + 2601ms) == renewal_step::sleep));
   BOOST_TEST((on_wake(f, t0 + 2650ms) == renewal_step::lose));
}

BOOST_AUTO_TEST_CASE(retries_a_failed_renewal_quickly_until_too_late_to_start_one)
{
   auto f = held();
   f.failing = true;
   // ttl/30 = 100 ms, within [5, 100].
   BOOST_TEST((next_wake(f, t0 + 1000ms) == t0 + 1100ms));
   // Too late for a renewal to answer before the loss deadline: sleep until that deadline.
   BOOST_TEST((on_wake(f, t0 + 2801ms) == renewal_step::sleep));
   BOOST_TEST((next_wake(f, t0 + 2750ms) == t0 + 2850ms));
   BOOST_TEST((on_wake(f, t0 + 2850ms) == renewal_step::lose));
}

BOOST_AUTO_TEST_CASE(the_retry_interval_is_a_thirtieth_of_the_ttl_within_5_and_100_ms)
{
   BOOST_TEST(renewal_retry_interval(60ms).count() == 5);
   BOOST_TEST(renewal_retry_interval(900ms).count() == 30);
   BOOST_TEST(renewal_retry_interval(30s).count() == 100);
}

BOOST_AUTO_TEST_CASE(max_hold_ends_the_lease_even_while_renewals_succeed)
{
   auto f = held();
   f.cap = t0 + 500ms;
   BOOST_TEST((next_wake(f, t0) == t0 + 500ms));
   BOOST_TEST((on_wake(f, t0 + 500ms) == renewal_step::lose));
}

BOOST_AUTO_TEST_CASE(a_ttl_too_short_to_renew_in_time_sleeps_until_its_loss)
{
   // valid 140 ms, lost at 90, a renewal must start by 40, but a third of the TTL is 50.
   renewal_facts f{.renewed_at = t0, .valid_until = t0 + 140ms, .ttl = 150ms, .node_timeout = 50ms};
   BOOST_TEST((next_wake(f, t0) == t0 + 90ms));
   BOOST_TEST((on_wake(f, t0 + 90ms) == renewal_step::lose));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_watchdog_schedule
