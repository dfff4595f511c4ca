// Unit tests of the unfenced acquire (lock_options::fence = false): its reply, the SET NX's OK or
// nil and the PTTL's integer, read by parse_unfenced_acquire (src/sansio/scripts.hpp), and its
// call, plain commands that are never sent as a script. What the server does with them is
// test/integration/test_unfenced.cpp's.
#include "protocol/calls.hpp"
#include "sansio/replicas.hpp"
#include "sansio/scripts.hpp"
#include "sansio/unfenced_reply.hpp"

#include "support/resp_reply.hpp"

#include <boost/test/unit_test.hpp>

#include <boost/redis/resp3/node.hpp>
#include <boost/redis/resp3/type.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace test_unfenced {

namespace {

using namespace locksmith::test::resp_names;
using locksmith::detail::acquire_reply;
using locksmith::detail::parse_unfenced_acquire;

node ok()
{
   return node{type::simple_string, 1, 0, "OK"};
}

node nil()
{
   return node{type::null, 1, 0, ""};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(unfenced)

BOOST_AUTO_TEST_CASE(set_ok_is_acquired_without_a_fence)
{
   acquire_reply out{.fence = 7, .pttl = std::chrono::milliseconds{3}};
   BOOST_TEST(!parse_unfenced_acquire(resp_reply({ok(), number("30000")}), out));
   BOOST_TEST(out.acquired);
   BOOST_TEST(out.fence == 0);
   BOOST_TEST(out.pttl.count() == 0);
   BOOST_TEST(!out.waiters_only);
}

BOOST_AUTO_TEST_CASE(set_nil_is_taken_with_the_holders_pttl)
{
   acquire_reply out{.acquired = true};
   BOOST_TEST(!parse_unfenced_acquire(resp_reply({nil(), number("29500")}), out));
   BOOST_TEST(!out.acquired);
   BOOST_TEST(out.pttl.count() == 29500);
   // A key without a TTL, as the script says it.
   BOOST_TEST(!parse_unfenced_acquire(resp_reply({nil(), number("-1")}), out));
   BOOST_TEST(out.pttl.count() == -1);
   // The key went between the SET and the PTTL: try again at once.
   BOOST_TEST(!parse_unfenced_acquire(resp_reply({nil(), number("-2")}), out));
   BOOST_TEST(out.pttl.count() == 0);
}

// Under ASKING (a Redis Cluster slot in migration) the SET is sent alone.
BOOST_AUTO_TEST_CASE(a_set_alone_leaves_the_pttl_unknown)
{
   acquire_reply out;
   BOOST_TEST(!parse_unfenced_acquire(resp_reply({ok()}), out));
   BOOST_TEST(out.acquired);
   BOOST_TEST(!parse_unfenced_acquire(resp_reply({nil()}), out));
   BOOST_TEST(!out.acquired);
   BOOST_TEST(out.pttl.count() == -1);
}

BOOST_AUTO_TEST_CASE(other_shapes_are_unexpected)
{
   auto const bad = [](std::vector<node> nodes) {
      acquire_reply out;
      return parse_unfenced_acquire(resp_reply(std::move(nodes)), out) == error::unexpected_reply;
   };
   BOOST_TEST(bad({node{type::simple_string, 1, 0, "QUEUED"}, number("1")}));
   BOOST_TEST(bad({number("1"), number("1")}));
   BOOST_TEST(bad({ok(), node{type::blob_string, 1, 0, "1"}}));
   BOOST_TEST(bad({ok(), number("1"), number("1")}));
   BOOST_TEST(bad({}));
   // Nor does either parser take the other's reply.
   acquire_reply out;
   auto const script_pair = resp_reply(
      {node{type::array, 2, 0, ""}, node{type::number, 1, 1, "1"}, node{type::number, 1, 1, "5"}});
   BOOST_TEST((parse_unfenced_acquire(script_pair, out) == error::unexpected_reply));
   BOOST_TEST((locksmith::detail::parse_acquire(resp_reply({ok(), number("5")}), out) ==
               error::unexpected_reply));
}

BOOST_AUTO_TEST_CASE(its_call_is_plain_commands_of_the_acquire_role)
{
   using namespace locksmith::detail;
   auto const& code = unfenced_acquire_script();
   BOOST_TEST(code.plain);
   BOOST_TEST((code.role == script_role::acquire));
   // The replica WAIT covers it, as it does the acquire script.
   BOOST_TEST(waits_for_replicas(code));
   BOOST_TEST(granted(code, resp_reply({ok(), number("100")})));
   BOOST_TEST(!granted(code, resp_reply({nil(), number("100")})));
   for (auto const* s : all_scripts())
      BOOST_TEST(s != &code);  // never loaded as a script
   auto const call = unfenced_acquire_call("p:", "name", "tok", std::chrono::milliseconds{1500});
   BOOST_TEST(call->code == &code);
   std::string_view const payload = call->by_sha.payload();
   BOOST_TEST(payload.find("EVAL") == std::string_view::npos);
   BOOST_TEST(payload.find("$3\r\nSET\r\n$8\r\np:{name}\r\n$3\r\ntok\r\n$2\r\nNX\r\n$2\r\nPX\r\n"
                           "$4\r\n1500\r\n") != std::string_view::npos);
   // The SET alone: no PTTL, which no waiter of a plain try reads (push_script).
   BOOST_TEST(payload.find("PTTL") == std::string_view::npos);
   BOOST_TEST(call->by_sha.get_commands() == 1u);
   BOOST_TEST(&call->by_text() == &call->by_sha);  // no script text to fall back on
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_unfenced
