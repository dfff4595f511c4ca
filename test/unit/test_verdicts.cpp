// Unit tests of what a decided fan-out means (src/protocol/verdicts.hpp): pure functions of its
// result.
#include "protocol/verdicts.hpp"

#include "sansio/retry.hpp"
#include <locksmith/error.hpp>

#include <boost/asio/error.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <initializer_list>
#include <string>
#include <vector>

namespace test_verdicts {

namespace {
using namespace std::chrono_literals;
using locksmith::error;
using locksmith::error_code;
using namespace locksmith::detail;

// A result from one letter per node: y yes, n taken (no), w no with only waiters in the way (fair
// lock), A to Z taken (no) by the holder that the fair script names so, f failed by timeout, a
// failed by auth_failed, o failed by invalid_argument (a cluster too old), r failed by
// not_enough_replicas, s failed by a server error, m a malformed reply, p pending.
fanout_result votes(char const* letters, outcome decision = outcome::lost)
{
   fanout_result r;
   r.decision = decision;
   for (char const* c = letters; *c; ++c) {
      node_result n;
      if (*c == 'y') {
         n.v = vote::yes;
      } else if (*c == 'n') {
         n.v = vote::no;
      } else if (*c >= 'A' && *c <= 'Z') {
         n.v = vote::no;
         n.acquire.holder = std::string(1, *c);
      } else if (*c == 'w') {
         n.v = vote::no;
         n.acquire.waiters_only = true;
      } else if (*c == 'f') {
         n.v = vote::failed;
         n.reply.ec = boost::asio::error::timed_out;
      } else if (*c == 'a') {
         n.v = vote::failed;
         n.reply.ec = error::auth_failed;
      } else if (*c == 'o') {
         n.v = vote::failed;
         n.reply.ec = error::invalid_argument;
      } else if (*c == 'r') {
         n.v = vote::failed;
         n.reply.ec = error::not_enough_replicas;
      } else if (*c == 's') {
         n.v = vote::failed;
         n.reply.resp =
            boost::redis::adapter::error{boost::redis::resp3::type::simple_error, "ERR wrong"};
      } else if (*c == 'm') {
         n.v = vote::failed;
         n.malformed = true;
      }
      r.nodes.push_back(n);
   }
   return r;
}

// One row a case: the votes, and the error that a verdict must give for them.
struct expected {
   char const* letters;
   error_code ec;
};

// Checks `verdict` (lost_reason, lasting_failure, ownership_result) on each row.
void check(error_code (*verdict)(fanout_result const&), std::initializer_list<expected> rows)
{
   for (auto const& row : rows)
      BOOST_TEST(verdict(votes(row.letters)) == row.ec, row.letters);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(verdicts)

BOOST_AUTO_TEST_CASE(a_split_among_waiters_has_no_holder_in_the_way)
{
   BOOST_TEST(split_among_waiters(votes("yywww")));
   BOOST_TEST(split_among_waiters(votes("ywfwp")));   // failures and pending votes are no holder
   BOOST_TEST(!split_among_waiters(votes("yywwn")));  // a holder on one node: wait for it
   BOOST_TEST(!split_among_waiters(votes("wwwww")));  // no yes: nothing to give up
   BOOST_TEST(!split_among_waiters(votes("yyyff")));  // no no: a won attempt too late
   BOOST_TEST(!split_among_waiters(votes("")));
}

// Waiters that each took the key where they head the queue hold a minority each: none of them
// can have won, so the split is theirs alone; a holder that may have a quorum, counting the
// nodes that did not answer, is waited for.
BOOST_AUTO_TEST_CASE(a_split_among_waiters_that_took_the_key_has_no_holder_with_a_quorum)
{
   BOOST_TEST(split_among_waiters(votes("yyBBC")));   // the three-way split: 2, 2 and 1 of 5
   BOOST_TEST(split_among_waiters(votes("yyBwC")));   // one of them not there yet
   BOOST_TEST(!split_among_waiters(votes("yBf")));    // B and the silent node make 2 of 3
   BOOST_TEST(!split_among_waiters(votes("yBBBB")));  // a holder that lost one node's key
   BOOST_TEST(!split_among_waiters(votes("yBBBf")));  // B may hold the silent node too
   BOOST_TEST(!split_among_waiters(votes("yyBBf")));  // likewise: B may hold 3
   BOOST_TEST(!split_among_waiters(votes("yyBBn")));  // an unnamed holder may hold a quorum
   BOOST_TEST(!split_among_waiters(votes("BBBCC")));  // no yes: nothing to give up
}

BOOST_AUTO_TEST_CASE(an_attempt_is_lost_to_a_holder_before_anything_else_that_may_mend)
{
   check(lost_reason, {{"ynf", error::lock_taken},
                       {"nnn", error::lock_taken},
                       {"yff", error::quorum_unreachable},
                       {"ymf", error::unexpected_reply},
                       {"f", error::quorum_unreachable}});
}

BOOST_AUTO_TEST_CASE(refused_credentials_count_only_when_they_alone_sink_the_quorum)
{
   // One node of three refusing us leaves a quorum possible: the others decide.
   check(lasting_failure, {{"ayy", {}}});
   check(lost_reason, {{"anf", error::lock_taken}});
   // Two of three refusing us: no wait can mend that.
   check(lasting_failure, {{"aay", error::auth_failed}});
   check(lost_reason, {{"aan", error::auth_failed}, {"a", error::auth_failed}});
   // A Redis Cluster too old to serve (its one node) is as lasting.
   check(lost_reason, {{"o", error::invalid_argument}});
   check(ownership_result, {{"o", error::invalid_argument}});
   check(lasting_failure, {{"oyy", {}}});
}

BOOST_AUTO_TEST_CASE(writes_short_of_replicas_are_blamed_when_they_alone_sink_the_quorum)
{
   // A holder elsewhere (rrn) is worth waiting for.
   check(lost_reason, {{"r", error::not_enough_replicas},
                       {"rry", error::not_enough_replicas},
                       {"ryf", error::quorum_unreachable},
                       {"rrn", error::lock_taken}});
   check(ownership_result, {{"r", error::not_enough_replicas},
                            {"rrryy", error::not_enough_replicas},
                            {"rrfyy", error::quorum_unreachable}});
}

BOOST_AUTO_TEST_CASE(a_won_release_or_extend_is_success)
{
   BOOST_TEST(ownership_result(votes("ynf", outcome::won)) == error_code{});
}

BOOST_AUTO_TEST_CASE(the_key_is_blamed_only_when_its_absence_alone_sinks_the_quorum)
{
   auto gone = votes("nny");
   gone.nodes[0].own = gone.nodes[1].own = ownership::expired;
   BOOST_TEST(ownership_result(gone) == error_code{error::lease_expired});
   auto taken = votes("nny");
   taken.nodes[0].own = ownership::expired;
   taken.nodes[1].own = ownership::not_owner;
   BOOST_TEST(ownership_result(taken) == error_code{error::not_owner});
   // Two of five nodes restarted empty beside a valid lease: the failures lost the quorum.
   auto restarted = votes("nnyff");
   BOOST_TEST(ownership_result(restarted) == error_code{error::quorum_unreachable});
   check(ownership_result, {{"nnysf", error::unexpected_reply},
                            {"aanyy", error::quorum_unreachable},
                            {"aaany", error::auth_failed}});
}

BOOST_AUTO_TEST_CASE(the_holders_shortest_pttl_the_slowest_answer_and_the_highest_fence)
{
   auto r = votes("nnyyf");
   r.nodes[0].acquire.pttl = 900ms;
   r.nodes[1].acquire.pttl = 300ms;
   r.nodes[2].acquire.fence = 7;
   r.nodes[3].acquire.fence = 9;
   r.nodes[0].reply.latency = 2ms;
   r.nodes[3].reply.latency = 5ms;
   r.nodes[4].reply.latency = 50ms;  // failed: not an answer
   BOOST_TEST(shortest_pttl(r).count() == 300);
   BOOST_TEST(highest_fence(r) == 9u);
   BOOST_TEST(slowest_reply(r).count() == 5000);
   // A holder's key without a TTL (-1) gives no bound; no holder at all gives none either.
   auto forever = votes("n");
   forever.nodes[0].acquire.pttl = -1ms;
   BOOST_TEST(shortest_pttl(forever).count() == -1);
   BOOST_TEST(shortest_pttl(votes("yy")).count() == -1);
   BOOST_TEST(highest_fence(votes("nn")) == 0u);
}

BOOST_AUTO_TEST_CASE(a_key_may_be_wherever_the_attempt_was_sent_and_not_refused_as_taken)
{
   auto r = votes("ynffp");
   r.nodes[3].reply.sent = false;        // silent: refused without being written
   auto const may = may_hold_key(r, 6);  // the sixth node had not been reached when it was decided
   BOOST_TEST(may == (std::vector<bool>{true, false, true, false, true, true}),
              boost::test_tools::per_element());
}

// A Redis Cluster node whose slot stayed in motion for the whole call (TRYAGAIN, ASK or MOVED to
// the end, see cluster_node): a passing failure, never a server error, so a waiter tries again
// and an unlock's release is sent again; and the script ran nowhere, so no key to release there.
BOOST_AUTO_TEST_CASE(a_slot_in_motion_is_a_passing_failure_that_left_no_key)
{
   auto r = votes("f");
   r.nodes[0].reply.ec = boost::asio::error::try_again;
   r.nodes[0].reply.sent = false;
   r.nodes[0].reply.server_message = "slot 4576 in motion: TRYAGAIN Multiple keys request";
   BOOST_TEST(!r.server_error());
   BOOST_TEST(lost_reason(r) == error_code{error::quorum_unreachable});
   BOOST_TEST(ownership_result(r) == error_code{error::quorum_unreachable});
   BOOST_TEST(may_hold_key(r, 1) == std::vector<bool>{false}, boost::test_tools::per_element());
   BOOST_TEST((next_after({.lost = lost_reason(r)}) != next_step::give_up));
   // A try (no wait) gives up, with the passing error.
   attempt_facts const once{.lost = lost_reason(r), .no_wait = true};
   BOOST_TEST((next_after(once) == next_step::give_up));
   BOOST_TEST(final_error(once) == error_code{error::quorum_unreachable});
}

// A report's message names the first node where something went wrong, with its call's failure
// too: a timed-out node has no server text, and was left out before.
BOOST_AUTO_TEST_CASE(a_report_message_says_a_call_failed_even_without_server_text)
{
   locksmith::report diag;
   diag.nodes.resize(3);
   for (std::size_t i = 0; i < 3; ++i)
      diag.nodes[i].node = std::string{"redis://"} + static_cast<char>('a' + i);
   diag.nodes[0].vote = locksmith::node_vote::yes;
   diag.nodes[1].vote = locksmith::node_vote::failed;
   diag.nodes[1].ec = boost::asio::error::timed_out;
   diag.nodes[2].vote = locksmith::node_vote::failed;
   diag.nodes[2].message = "NOPERM this user has no permissions";
   auto const timed_out = error_code{boost::asio::error::timed_out}.message();
   BOOST_TEST(diag.message() == "redis://b: " + timed_out);
   diag.nodes[1].message = "connection refused by 127.0.0.1:1";
   BOOST_TEST(diag.message() == "redis://b: " + timed_out + ", connection refused by 127.0.0.1:1");
   diag.nodes[1].vote = locksmith::node_vote::no;
   diag.nodes[1].ec = {};
   diag.nodes[1].message.clear();
   BOOST_TEST(diag.message() == "redis://c: NOPERM this user has no permissions");
   BOOST_TEST(diag.nodes[1].problem().empty());
   BOOST_TEST(diag.nodes[2].problem() == "redis://c: NOPERM this user has no permissions");
   diag.nodes.resize(2);
   BOOST_TEST(diag.message().empty());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_verdicts
