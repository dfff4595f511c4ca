// Unit tests of what a try owes the nodes that had not answered when it was decided
// (acquire_engine::owed_calls): a won try's waiter leaves where they then say no or fail, a lost
// try releases where they then say yes or fail, whether their votes come before or after the try
// is judged, and the next try's flush sends the rest at once. No sockets; the integration test
// redlock/a_winner_leaves_the_waiters_also_where_its_try_answered_late runs it on servers.
#include "engines/acquire_engine.hpp"

#include <boost/test/unit_test.hpp>

#include <cstddef>
#include <vector>

namespace test_owed_calls {

using locksmith::detail::vote;
using owed_calls = locksmith::detail::acquire_engine::owed_calls;
using nodes = std::vector<std::size_t>;

bool leaves(vote v)
{
   return v != vote::yes;  // a won try's waiter
}

bool releases(vote v)
{
   return v != vote::no;  // a lost try's key
}

BOOST_AUTO_TEST_SUITE(owed_calls_suite)

BOOST_AUTO_TEST_CASE(a_won_try_leaves_where_the_late_votes_lost_or_failed)
{
   owed_calls owed;
   nodes called;
   owed.arm({2, 3, 4}, leaves, [&](std::size_t node) { called.push_back(node); });
   owed.on_late(3, vote::yes);
   owed.on_late(4, vote::no);
   owed.on_late(2, vote::failed);
   BOOST_TEST(called == (nodes{4, 2}));
}

BOOST_AUTO_TEST_CASE(a_lost_try_releases_where_the_late_votes_took_the_key_or_failed)
{
   owed_calls owed;
   nodes called;
   owed.arm({0, 1, 2}, releases, [&](std::size_t node) { called.push_back(node); });
   owed.on_late(0, vote::no);
   owed.on_late(1, vote::yes);
   owed.on_late(2, vote::failed);
   BOOST_TEST(called == (nodes{1, 2}));
}

// A late vote may come between the decision and the judging of the try (a posted completion):
// it waits until the try is judged, and counts once.
BOOST_AUTO_TEST_CASE(votes_before_the_try_is_judged_wait_for_it)
{
   owed_calls owed;
   nodes called;
   owed.on_late(4, vote::no);
   owed.on_late(3, vote::yes);
   owed.arm({3, 4}, leaves, [&](std::size_t node) { called.push_back(node); });
   BOOST_TEST(called == (nodes{4}));
   owed.on_late(4, vote::no);  // (a node votes once; a second is ignored)
   BOOST_TEST(called == (nodes{4}));
}

// The waiter's next try must land behind the calls it owes: flush sends them at once to the
// nodes still unanswered, whatever they will say, and their votes change nothing after.
BOOST_AUTO_TEST_CASE(flush_calls_the_unanswered_nodes_once)
{
   owed_calls owed;
   nodes called;
   owed.arm({1, 3, 4}, releases, [&](std::size_t node) { called.push_back(node); });
   owed.on_late(3, vote::no);
   owed.flush();
   BOOST_TEST(called == (nodes{1, 4}));
   owed.on_late(1, vote::yes);
   owed.on_late(4, vote::failed);
   owed.flush();
   BOOST_TEST(called == (nodes{1, 4}));
}

BOOST_AUTO_TEST_CASE(an_unjudged_try_calls_nowhere_and_arms_once)
{
   owed_calls owed;
   nodes called;
   owed.on_late(0, vote::yes);
   owed.flush();  // not judged (a won try without a waiter, say): nothing owed
   BOOST_TEST(called.empty());
   owed.arm({0}, releases, [&](std::size_t node) { called.push_back(node); });
   owed.arm({0}, releases, [&](std::size_t node) { called.push_back(node + 100); });
   BOOST_TEST(called == (nodes{0}));
}

// A won try whose waiter was never registered owes nothing: its votes, before or after, call
// nowhere, and a later arm changes nothing.
BOOST_AUTO_TEST_CASE(a_waived_try_calls_nowhere)
{
   owed_calls owed;
   nodes called;
   owed.on_late(3, vote::no);
   owed.waive();
   owed.on_late(4, vote::failed);
   owed.arm({3, 4}, leaves, [&](std::size_t node) { called.push_back(node); });
   owed.flush();
   BOOST_TEST(called.empty());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_owed_calls
