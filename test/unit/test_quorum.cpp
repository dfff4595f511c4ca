// Unit tests of quorum_of and vote_counter (src/sansio/quorum.hpp).
#include "sansio/quorum.hpp"

#include <boost/test/unit_test.hpp>

#include <cstddef>
#include <ostream>
#include <string>

namespace locksmith::detail {

std::ostream& operator<<(std::ostream& os, outcome o)
{
   switch (o) {
   case outcome::pending:
      return os << "pending";
   case outcome::won:
      return os << "won";
   case outcome::lost:
      return os << "lost";
   }
   return os << "outcome(" << static_cast<int>(o) << ")";
}

}  // namespace locksmith::detail

namespace test_quorum {

namespace {

using locksmith::detail::outcome;
using locksmith::detail::quorum_of;
using locksmith::detail::vote_counter;

// The reference, written from the definition rather than from the implementation: a quorum is
// the smallest count that is a strict majority; the fan-out is won once that many said yes, and
// lost once even every node still silent saying yes could not reach it.
std::size_t reference_quorum(std::size_t n)
{
   std::size_t k = 0;
   while (2 * k <= n)
      ++k;
   return k;
}

outcome reference_outcome(std::size_t n, std::size_t yes, std::size_t no)
{
   auto const q = reference_quorum(n);
   if (yes >= q)
      return outcome::won;
   if (yes + (n - yes - no) < q)
      return outcome::lost;
   return outcome::pending;
}

// "YNY" for the first `count` votes of `mask` (bit i set: vote i is yes).
std::string describe(unsigned mask, std::size_t count)
{
   std::string s;
   for (std::size_t i = 0; i < count; ++i)
      s += (mask >> i) & 1u ? 'Y' : 'N';
   return s;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(quorum)

BOOST_AUTO_TEST_CASE(quorum_of_small_clusters)
{
   BOOST_TEST(quorum_of(1) == 1u);
   BOOST_TEST(quorum_of(2) == 2u);
   BOOST_TEST(quorum_of(3) == 2u);
   BOOST_TEST(quorum_of(4) == 3u);
   BOOST_TEST(quorum_of(5) == 3u);
   BOOST_TEST(quorum_of(6) == 4u);
   BOOST_TEST(quorum_of(7) == 4u);
}

BOOST_AUTO_TEST_CASE(quorum_of_is_the_smallest_strict_majority)
{
   for (std::size_t n = 1; n <= 7; ++n) {
      BOOST_TEST_CONTEXT("n = " << n)
      {
         BOOST_TEST(quorum_of(n) == reference_quorum(n));
         BOOST_TEST(2 * quorum_of(n) > n);         // a majority
         BOOST_TEST(2 * (quorum_of(n) - 1) <= n);  // and no larger than needed
         BOOST_TEST(vote_counter{n}.quorum() == quorum_of(n));
      }
   }
}

BOOST_AUTO_TEST_CASE(fresh_counter_is_pending)
{
   for (std::size_t n = 1; n <= 7; ++n) {
      vote_counter c{n};
      BOOST_TEST_CONTEXT("n = " << n)
      {
         BOOST_TEST(c.state() == outcome::pending);
         BOOST_TEST(c.yes() == 0u);
         BOOST_TEST(c.no() == 0u);
         BOOST_TEST(c.pending() == n);
      }
   }
}

// Every sequence of yes/no votes for 1 to 5 nodes, checked after each vote against the reference.
BOOST_AUTO_TEST_CASE(every_vote_sequence_matches_the_reference)
{
   for (std::size_t n = 1; n <= 5; ++n) {
      for (unsigned mask = 0; mask < (1u << n); ++mask) {
         vote_counter c{n};
         std::size_t yes = 0, no = 0;
         for (std::size_t i = 0; i < n; ++i) {
            bool const vote = (mask >> i) & 1u;
            (vote ? yes : no) += 1;
            BOOST_TEST_CONTEXT("n = " << n << ", votes " << describe(mask, i + 1))
            {
               auto const got = c.record(vote);
               BOOST_TEST(got == reference_outcome(n, yes, no));
               BOOST_TEST(c.state() == got);
               BOOST_TEST(c.yes() == yes);
               BOOST_TEST(c.no() == no);
               BOOST_TEST(c.pending() == n - yes - no);
            }
         }
         // Once every node voted, nothing is left to wait for.
         BOOST_TEST_CONTEXT("n = " << n << ", votes " << describe(mask, n))
         {
            BOOST_TEST(c.state() != outcome::pending);
         }
      }
   }
}

// The safety property on its own: a won fan-out always has a quorum of yes votes, and the
// decision, once made, does not change while the remaining nodes answer.
BOOST_AUTO_TEST_CASE(never_won_without_quorum_and_decisions_stick)
{
   for (std::size_t n = 1; n <= 5; ++n) {
      for (unsigned mask = 0; mask < (1u << n); ++mask) {
         vote_counter c{n};
         outcome decided = outcome::pending;
         for (std::size_t i = 0; i < n; ++i) {
            auto const got = c.record((mask >> i) & 1u);
            BOOST_TEST_CONTEXT("n = " << n << ", votes " << describe(mask, i + 1))
            {
               if (got == outcome::won)
                  BOOST_TEST(c.yes() >= quorum_of(n));
               if (got == outcome::lost)
                  BOOST_TEST(c.yes() + c.pending() < quorum_of(n));
               if (decided != outcome::pending)
                  BOOST_TEST(got == decided);
            }
            if (decided == outcome::pending)
               decided = got;
         }
      }
   }
}

BOOST_AUTO_TEST_CASE(decides_early)
{
   // 5 nodes: two yes then one more yes wins without waiting for the last two.
   vote_counter five{5};
   BOOST_TEST(five.record(true) == outcome::pending);
   BOOST_TEST(five.record(true) == outcome::pending);
   BOOST_TEST(five.record(true) == outcome::won);
   BOOST_TEST(five.pending() == 2u);

   // 5 nodes: three no lose at once, two nodes still silent.
   vote_counter lost{5};
   BOOST_TEST(lost.record(false) == outcome::pending);
   BOOST_TEST(lost.record(false) == outcome::pending);
   BOOST_TEST(lost.record(false) == outcome::lost);
   BOOST_TEST(lost.pending() == 2u);

   // 2 nodes need both: the first no loses.
   vote_counter two{2};
   BOOST_TEST(two.record(false) == outcome::lost);

   // 1 node is its own quorum.
   vote_counter one{1};
   BOOST_TEST(one.record(true) == outcome::won);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_quorum
