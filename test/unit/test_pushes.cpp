// Unit tests of parse_pushes and refusal_push (src/sansio/pushes.hpp): RESP3 nodes as Boost.Redis
// hands them to the receive loop of a subscriber connection.
#include "sansio/pushes.hpp"

#include <boost/test/unit_test.hpp>

#include <string_view>
#include <vector>

namespace test_pushes {

namespace {
using boost::redis::resp3::node;
using boost::redis::resp3::node_view;
using boost::redis::resp3::type;
using locksmith::detail::parse_pushes;
using locksmith::detail::push_event;
using locksmith::detail::refusal_push;
using kind = push_event::kind;

node head(std::size_t n, type t = type::push)
{
   return {t, n, 0, {}};
}
node text(std::string v, std::size_t depth = 1)
{
   return {type::blob_string, 1, depth, std::move(v)};
}
node count(int v)
{
   return {type::number, 1, 1, std::to_string(v)};
}

// One push as the server sends it: >3 kind channel third.
std::vector<node> push(std::string word, std::string channel, node third)
{
   return {head(3), text(std::move(word)), text(std::move(channel)), std::move(third)};
}

std::vector<node> cat(std::vector<std::vector<node>> parts)
{
   std::vector<node> out;
   for (auto& p : parts)
      out.insert(out.end(), p.begin(), p.end());
   return out;
}

// parse_pushes over views of `nodes`, as a generic_flat_response holds them.
std::vector<push_event> parse(std::vector<node> const& nodes, std::string_view marker)
{
   std::vector<node_view> views;
   for (auto const& n : nodes)
      views.push_back({n.data_type, n.aggregate_size, n.depth, n.value});
   return parse_pushes(views, marker);
}

// The events of these pushes, read under the default prefix.
std::vector<push_event> parsed(std::vector<std::vector<node>> pushes)
{
   return parse(cat(std::move(pushes)), "locksmith:");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(pushes)

BOOST_AUTO_TEST_CASE(messages_and_confirmations_in_order)
{
   auto const got = parsed({push("subscribe", "a", count(1)), push("message", "a", text("t1")),
                            push("unsubscribe", "a", count(0))});
   std::vector<push_event> const want{
      {kind::subscribed, "a", ""}, {kind::message, "a", "t1"}, {kind::unsubscribed, "a", ""}};
   BOOST_TEST((got == want));
}

// Redis Cluster's sharded pub/sub: the same pushes with an `s` before their word, marked sharded.
BOOST_AUTO_TEST_CASE(sharded_messages_and_confirmations)
{
   auto const got = parsed({push("ssubscribe", "a", count(1)), push("smessage", "a", text("t1")),
                            push("sunsubscribe", "a", count(0)), push("subscribe", "b", count(2))});
   std::vector<push_event> const want{{kind::subscribed, "a", "", true},
                                      {kind::message, "a", "t1", true},
                                      {kind::unsubscribed, "a", "", true},
                                      {kind::subscribed, "b", "", false}};
   BOOST_TEST((got == want));
}

BOOST_AUTO_TEST_CASE(only_sharded_words_drop_their_s)
{
   // "subscribe" begins with an s too; "spublish", "smessages" and "s" are nobody's.
   auto const got = parsed({push("spublish", "a", count(1)), push("smessages", "a", text("t")),
                            push("s", "a", count(1)), push("sssubscribe", "a", count(1))});
   BOOST_TEST(got.empty());
}

BOOST_AUTO_TEST_CASE(the_marker_confirmation_is_a_new_connection)
{
   // The marker is the key prefix, which sorts before every lock channel under it.
   auto const got = parsed({push("subscribe", "locksmith:", count(1)),
                            push("subscribe", "locksmith:{b}:released", count(2))});
   std::vector<push_event> const want{{kind::connected, "", ""},
                                      {kind::subscribed, "locksmith:{b}:released", ""}};
   BOOST_TEST((got == want));
   // A message published to the marker's channel by someone else is noise.
   BOOST_TEST(parse(push("message", "locksmith:", text("x")), "locksmith:").empty());
   // An empty prefix gives the empty marker.
   auto const empty = parse(push("subscribe", "", count(1)), "");
   BOOST_TEST((empty == std::vector<push_event>{{kind::connected, "", ""}}));
}

BOOST_AUTO_TEST_CASE(other_pushes_and_stray_replies_are_skipped_whole)
{
   // A pattern message (4 elements), a reply Boost.Redis took for a push (+PONG), and a push
   // whose channel is an aggregate; then one that counts.
   std::vector<node> const pmessage{head(4), text("pmessage"), text("p*"), text("p1"), text("")};
   std::vector<node> const pong{{type::simple_string, 1, 0, "PONG"}};
   std::vector<node> const nested{
      head(3), text("message"), {type::array, 1, 1, {}}, text("x", 2), text("")};
   auto const got = parse(cat({pmessage, pong, nested, push("message", "c", text(""))}), "");
   std::vector<push_event> const want{{kind::message, "c", ""}};
   BOOST_TEST((got == want));
}

// An error read among pushes (a SUBSCRIBE refused by an ACL; the empty SUBSCRIBE behind an
// SSUBSCRIBE that a MOVED ended) is a refusal in its place, or nothing, and costs none of the
// pushes read with it: a confirmation lost with it kept a channel unconfirmed for good.
BOOST_AUTO_TEST_CASE(an_error_among_pushes_costs_none_of_them)
{
   std::vector<node> const denied{
      {type::simple_error, 1, 0, "NOPERM this user has no permissions"}};
   std::vector<node> const empty_subscribe{
      {type::simple_error, 1, 0, "ERR wrong number of arguments for 'subscribe' command"}};
   auto const got =
      parse(cat({push("subscribe", "a", count(1)), denied, push("message", "a", text("t1")),
                 empty_subscribe, push("subscribe", "b", count(2))}),
            "");
   std::vector<push_event> const want{{kind::subscribed, "a", ""},
                                      {kind::refused, "", "NOPERM this user has no permissions"},
                                      {kind::message, "a", "t1"},
                                      {kind::subscribed, "b", ""}};
   BOOST_TEST((got == want));
   std::vector<node> const blob{{type::blob_error, 1, 0, "NOPERM no"}};
   BOOST_TEST((parse(blob, "") == std::vector<push_event>{{kind::refused, "", "NOPERM no"}}));
}

BOOST_AUTO_TEST_CASE(truncated_and_unknown_pushes_give_nothing)
{
   BOOST_TEST(parse({}, "").empty());
   BOOST_TEST(parse({head(3)}, "").empty());
   BOOST_TEST(parse({head(3), text("message")}, "").empty());
   BOOST_TEST(parse(push("invalidate", "k", text("")), "").empty());
   BOOST_TEST(parse({head(1), text("subscribe")}, "").empty());
}

// An error read on the subscriber connection: a refusal (an ACL denial, a MOVED for an SSUBSCRIBE),
// but not the error of the empty SUBSCRIBE that ends each SSUBSCRIBE's request.
BOOST_AUTO_TEST_CASE(errors_are_refusals_but_the_empty_subscribes)
{
   auto const denied =
      refusal_push("NOPERM User u has no permissions to access the 'c' channel", false);
   BOOST_TEST_REQUIRE(denied.has_value());
   BOOST_TEST(
      (*denied == push_event{kind::refused, "",
                             "NOPERM User u has no permissions to access the 'c' channel", false}));
   auto const moved = refusal_push("MOVED 4576 127.0.0.1:7001", true);
   BOOST_TEST_REQUIRE(moved.has_value());
   BOOST_TEST((*moved == push_event{kind::refused, "", "MOVED 4576 127.0.0.1:7001", true}));
   BOOST_TEST(!refusal_push("ERR wrong number of arguments for 'subscribe' command", true));
   BOOST_TEST(!refusal_push("ERR wrong number of arguments for 'subscribe' command", false));
   BOOST_TEST(refusal_push("ERR unknown command 'SSUBSCRIBE'", true).has_value());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_pushes
