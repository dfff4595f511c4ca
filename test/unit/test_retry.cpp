// Unit tests of the retry decision after a lost attempt (src/sansio/retry.hpp).
#include "sansio/retry.hpp"

#include "support/print.hpp"

#include <boost/test/unit_test.hpp>

namespace test_retry {

namespace {
using namespace locksmith;
using namespace locksmith::detail;

attempt_facts taken()
{
   return {.lost = error::lock_taken, .by_message = true};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(retry)

BOOST_AUTO_TEST_CASE(gives_up_without_wait_out_of_time_or_on_a_server_error)
{
   auto f = taken();
   f.no_wait = true;
   BOOST_TEST(next_after(f) == next_step::give_up);
   BOOST_TEST((final_error(f) == error::lock_taken));
   f = taken();
   f.out_of_time = true;
   BOOST_TEST(next_after(f) == next_step::give_up);
   BOOST_TEST((final_error(f) == error::wait_timeout));
   f = {.lost = error::unexpected_reply};
   BOOST_TEST(next_after(f) == next_step::give_up);
   BOOST_TEST((final_error(f) == error::unexpected_reply));
   f = {.lost = error::quorum_unreachable, .out_of_time = true};
   BOOST_TEST((final_error(f) == error::quorum_unreachable));
}

// invalid_argument from a fan-out: a Redis Cluster too old to serve (cluster_node.hpp).
BOOST_AUTO_TEST_CASE(gives_up_at_once_on_refused_credentials_or_a_failed_handshake)
{
   for (auto e : {error::auth_failed, error::tls_failed, error::invalid_argument}) {
      attempt_facts f{.lost = e, .by_message = true};
      BOOST_TEST(next_after(f) == next_step::give_up);
      BOOST_TEST((final_error(f) == e));
   }
}

BOOST_AUTO_TEST_CASE(a_split_vote_draws_lots_whatever_the_strategy)
{
   auto f = taken();
   f.split_vote = true;
   BOOST_TEST(next_after(f) == next_step::draw_lots);
   f.by_message = false;
   BOOST_TEST(next_after(f) == next_step::draw_lots);
}

// A lost attempt frees what it took without a message when it tries again by itself, or when
// others hold a quorum without it; else its release wakes the next waiter, as a holder's does.
BOOST_AUTO_TEST_CASE(a_loser_that_retries_or_lost_to_a_quorum_releases_quietly)
{
   auto f = taken();
   f.split_vote = true;
   BOOST_TEST(releases_quietly(f, next_after(f)));
   // Out of time: it tries no more, and nobody else may hold a quorum.
   f.out_of_time = true;
   BOOST_TEST(!releases_quietly(f, next_after(f)));
   f.others_hold_quorum = true;
   BOOST_TEST(releases_quietly(f, next_after(f)));
   // Decided before its yes votes came: other owners' keys alone sank it.
   f = taken();
   f.others_hold_quorum = true;
   f.subscription_confirmed = true;
   BOOST_TEST(releases_quietly(f, next_after(f)));
   // Not lost to other owners (no quorum reached, a late win): the release wakes as ever.
   f = taken();
   BOOST_TEST(!releases_quietly(f, next_after(f)));
   for (auto e : {error::quorum_unreachable, error::validity_expired}) {
      attempt_facts g{.lost = e, .split_vote = true, .others_hold_quorum = true};
      BOOST_TEST(!releases_quietly(g, next_after(g)));
   }
}

BOOST_AUTO_TEST_CASE(subscribe_relies_on_messages_only_once_confirmed)
{
   auto f = taken();
   BOOST_TEST(next_after(f) == next_step::await_subscription);
   f.event_since_attempt = true;  // even with an event: unconfirmed, a release may be missed
   BOOST_TEST(next_after(f) == next_step::await_subscription);
   f.subscription_confirmed = true;
   BOOST_TEST(next_after(f) == next_step::retry_now);
   f.event_since_attempt = false;
   BOOST_TEST(next_after(f) == next_step::sleep_until_release);
}

BOOST_AUTO_TEST_CASE(spin_and_failures_sleep_an_interval)
{
   auto f = taken();
   f.by_message = false;
   BOOST_TEST(next_after(f) == next_step::sleep_spin);
   f = {.lost = error::quorum_unreachable, .by_message = true, .subscription_confirmed = true};
   BOOST_TEST(next_after(f) == next_step::sleep_spin);
   f.lost = error::validity_expired;
   BOOST_TEST(next_after(f) == next_step::sleep_spin);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_retry
