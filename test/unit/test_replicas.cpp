// Unit tests of the WAIT that config::wait_replicas adds behind a script
// (src/sansio/replicas.hpp), over hand-built RESP3 replies.
#include "sansio/replicas.hpp"

#include "support/resp_reply.hpp"

#include <boost/test/unit_test.hpp>

#include <boost/redis/resp3/node.hpp>
#include <boost/redis/resp3/type.hpp>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace test_replicas {

namespace {

using namespace std::chrono_literals;
using boost::redis::generic_response;
using boost::redis::resp3::node;
using boost::redis::resp3::type;
using locksmith::config;
using namespace locksmith::detail;

using locksmith::test::number;
using locksmith::test::resp_reply;

// The acquire script's `{flag, value}`, then what else the request read.
generic_response acquire_then(std::string flag, std::string value, std::vector<node> more)
{
   std::vector<node> nodes{
      {type::array, 2, 0, ""}, number(std::move(flag), 1), number(std::move(value), 1)};
   nodes.insert(nodes.end(), more.begin(), more.end());
   return resp_reply(std::move(nodes));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(replicas)

BOOST_AUTO_TEST_CASE(the_wait_reply_comes_off_the_end)
{
   auto r = acquire_then("1", "42", {number("2")});
   auto const acked = take_wait_reply(r);
   BOOST_TEST_REQUIRE(acked.has_value());
   BOOST_TEST(*acked == 2);
   BOOST_TEST(r.value().size() == 3u);  // the script's reply, which parses as before
   acquire_reply a;
   BOOST_TEST(!parse_acquire(r, a));
   BOOST_TEST(a.fence == 42);

   auto extended = resp_reply({number("1"), number("0")});
   BOOST_TEST(take_wait_reply(extended).value_or(-1) == 0);
   BOOST_TEST(extended.value().size() == 1u);
}

BOOST_AUTO_TEST_CASE(no_wait_reply_leaves_the_reply_alone)
{
   auto only_script = acquire_then("1", "42", {});
   BOOST_TEST(!take_wait_reply(only_script).has_value());
   BOOST_TEST(only_script.value().size() == 3u);
   auto single = resp_reply({number("1")});
   BOOST_TEST(!take_wait_reply(single).has_value());
   BOOST_TEST(single.value().size() == 1u);
   auto negative = resp_reply({number("1"), number("-1")});
   BOOST_TEST(!take_wait_reply(negative).has_value());
   auto text = resp_reply({number("1"), node{type::simple_string, 1, 0, "OK"}});
   BOOST_TEST(!take_wait_reply(text).has_value());
   BOOST_TEST(text.value().size() == 2u);
   generic_response error;
   error = boost::redis::adapter::error{type::simple_error, "NOSCRIPT No matching script"};
   BOOST_TEST(!take_wait_reply(error).has_value());
}

BOOST_AUTO_TEST_CASE(only_a_grant_needs_the_replicas)
{
   BOOST_TEST(granted(acquire_script(), acquire_then("1", "42", {})));
   BOOST_TEST(!granted(acquire_script(), acquire_then("0", "900", {})));
   // The extend script answers one entry per lease: a call that renewed any of them wrote.
   auto const renewed = [](std::vector<std::string> const& answers) {
      std::vector<node> nodes{{type::array, answers.size(), 0, ""}};
      for (auto const& a : answers)
         nodes.push_back(number(a, 1));
      return resp_reply(std::move(nodes));
   };
   BOOST_TEST(granted(extend_script(), renewed({"1"})));
   BOOST_TEST(granted(extend_script(), renewed({"0", "-1", "1"})));
   BOOST_TEST(!granted(extend_script(), renewed({"0"})));
   BOOST_TEST(!granted(extend_script(), renewed({"-1", "0"})));
   BOOST_TEST(!granted(extend_script(), resp_reply({number("1")})));   // not the extend's shape
   BOOST_TEST(!granted(acquire_script(), resp_reply({number("1")})));  // not the acquire's shape
}

BOOST_AUTO_TEST_CASE(acquire_and_extend_wait_but_release_does_not)
{
   BOOST_TEST(waits_for_replicas(acquire_script()));
   BOOST_TEST(waits_for_replicas(extend_script()));
   BOOST_TEST(!waits_for_replicas(release_script()));
}

BOOST_AUTO_TEST_CASE(replica_timeout_defaults_to_half_the_node_timeout_and_never_zero)
{
   BOOST_TEST(effective_replica_timeout(config{}).count() == 25);
   BOOST_TEST(effective_replica_timeout(config{.node_timeout = 1s}).count() == 500);
   BOOST_TEST(effective_replica_timeout(config{.node_timeout = 1ms}).count() == 1);
   BOOST_TEST(effective_replica_timeout(config{.replica_timeout = 7ms}).count() == 7);
}

BOOST_AUTO_TEST_CASE(the_message_says_how_many_of_how_many)
{
   BOOST_TEST(replicas_message(0, 1, 25ms) == "WAIT: 0 of 1 replicas acknowledged within 25 ms");
}

// A request of several commands (ASKING, the script, WAIT), read into one tree: the first
// command's error wins over those that follow it, and ASKING's OK is left out.
BOOST_AUTO_TEST_CASE(the_first_error_of_a_pipelined_request_wins)
{
   auto const text = [](generic_response const& r) {
      return r.has_error() ? r.error().diagnostic : std::string{};
   };
   node const ok{type::simple_string, 1, 0, "OK"};
   node const moved{type::simple_error, 1, 0, "MOVED 4576 127.0.0.1:7001"};
   node const refused{type::simple_error, 1, 0, "ERR WAIT cannot be used with replica instances"};
   node const acked = number("1");
   auto const script = acquire_then("1", "5", {}).value();

   // A replica: the script's MOVED, then WAIT's own error. The MOVED is what the call follows.
   BOOST_TEST(text(first_error_wins({moved, refused})) == moved.value);
   BOOST_TEST(text(first_error_wins({ok, moved, refused}, 1)) == moved.value);
   // ASKING refused (it is first) wins too.
   BOOST_TEST(text(first_error_wins({refused, moved}, 1)) == refused.value);
   // The script answered; WAIT's error is the request's.
   auto answered = script;
   answered.push_back(refused);
   BOOST_TEST(text(first_error_wins(answered)) == refused.value);
   // An error inside a command's reply counts as that command's.
   node const nested{type::blob_error, 1, 1, "ERR inside"};
   BOOST_TEST(text(first_error_wins({{type::array, 1, 0, ""}, nested, moved})) == "ERR inside");

   // No error: every reply's nodes in order, but those of the commands skipped.
   std::vector<node> all{ok};
   all.insert(all.end(), script.begin(), script.end());
   all.push_back(acked);
   auto const r = first_error_wins(all, 1);
   BOOST_TEST_REQUIRE(!r.has_error());
   auto expected = script;
   expected.push_back(acked);
   BOOST_TEST((r.value() == expected));
   BOOST_TEST(first_error_wins(all).value().size() == all.size());
   BOOST_TEST(first_error_wins({}).value().empty());
   // What the WAIT said comes off the end, as without ASKING.
   auto with_wait = first_error_wins(all, 1);
   BOOST_TEST(take_wait_reply(with_wait).value_or(-1) == 1);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_replicas
