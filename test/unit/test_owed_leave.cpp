// Unit tests of what a won try's waiter owes the nodes that had not answered when the try won
// (acquire_engine::owed_leave): it leaves where they then say no or fail, never where they say
// yes, whether their votes come before or after the win is judged. No sockets; the integration
// test redlock/a_winner_leaves_the_waiters_also_where_its_try_answered_late runs it on servers.
#include "engines/acquire_engine.hpp"

#include <boost/test/unit_test.hpp>

#include <cstddef>
#include <vector>

namespace test_owed_leave {

using locksmith::detail::vote;
using owed_leave = locksmith::detail::acquire_engine::owed_leave;

BOOST_AUTO_TEST_SUITE(owed_leave_suite)

BOOST_AUTO_TEST_CASE(votes_after_the_win_leave_where_they_lost_or_failed)
{
   owed_leave owed;
   std::vector<std::size_t> left;
   owed.arm([&](std::size_t node) { left.push_back(node); });
   owed.on_late(3, vote::yes);
   owed.on_late(4, vote::no);
   owed.on_late(2, vote::failed);
   BOOST_TEST(left == (std::vector<std::size_t>{4, 2}), "left on the wrong nodes");
}

// A late vote may come between the decision and the judging of the try (a posted completion):
// it is kept until the try is judged a win, and never acted on otherwise.
BOOST_AUTO_TEST_CASE(votes_before_the_win_is_judged_wait_for_it)
{
   owed_leave owed;
   std::vector<std::size_t> left;
   owed.on_late(4, vote::no);
   owed.on_late(3, vote::yes);
   BOOST_TEST(left.empty());
   owed.arm([&](std::size_t node) { left.push_back(node); });
   BOOST_TEST(left == (std::vector<std::size_t>{4}), "the early vote was lost or doubled");
   owed.on_late(1, vote::failed);
   BOOST_TEST(left == (std::vector<std::size_t>{4, 1}));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_owed_leave
