// Unit tests of shard_subscriptions (src/sansio/shard_subscriptions.hpp): a Redis
// Cluster's sharded subscriptions as the release listener sees them, one node that confirms each
// call, while masters confirm, reconnect and give slots away. No sockets.
#include "sansio/shard_subscriptions.hpp"

#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

namespace test_shard_subscriptions {

namespace {
using locksmith::detail::push_event;
using locksmith::detail::shard_subscriptions;
using kind = push_event::kind;
using command = shard_subscriptions::command;

push_event ssubscribed(std::string ch)
{
   return {kind::subscribed, std::move(ch), {}, true};
}
push_event sunsubscribed(std::string ch)
{
   return {kind::unsubscribed, std::move(ch), {}, true};
}
command ssub(std::string master, std::string ch)
{
   return {true, std::move(master), std::move(ch)};
}
command sunsub(std::string master, std::string ch)
{
   return {false, std::move(master), std::move(ch)};
}

bool same(std::vector<command> const& a, std::vector<command> const& b)
{
   return a == b;
}
bool same(std::vector<push_event> const& a, std::vector<push_event> const& b)
{
   return a == b;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(shard_subscriptions_suite)

BOOST_AUTO_TEST_CASE(a_call_is_answered_once_its_master_confirms)
{
   shard_subscriptions s;
   auto st = s.subscribe("c", "A");
   BOOST_TEST(same(st.send, {ssub("A", "c")}));
   BOOST_TEST(st.tell.empty());
   st = s.on_push("A", ssubscribed("c"));
   BOOST_TEST(same(st.tell, {ssubscribed("c")}));
   BOOST_TEST(!st.stale_map);

   st = s.unsubscribe("c");
   BOOST_TEST(same(st.send, {sunsub("A", "c")}));
   BOOST_TEST(st.tell.empty());
   st = s.on_push("A", sunsubscribed("c"));
   BOOST_TEST(same(st.tell, {sunsubscribed("c")}));
   BOOST_TEST(s.size() == 0u);
}

BOOST_AUTO_TEST_CASE(calls_in_flight_are_answered_together_in_the_last_state)
{
   shard_subscriptions s;
   s.subscribe("c", "A");
   s.unsubscribe("c");
   auto st = s.on_push("A", ssubscribed("c"));
   BOOST_TEST(st.tell.empty());  // the listener's last call was an unsubscribe
   st = s.on_push("A", sunsubscribed("c"));
   BOOST_TEST(same(st.tell, {sunsubscribed("c"), sunsubscribed("c")}));
   BOOST_TEST(s.size() == 0u);
}

BOOST_AUTO_TEST_CASE(an_unsubscribe_of_nothing_is_answered_at_once)
{
   shard_subscriptions s;
   auto st = s.unsubscribe("c");
   BOOST_TEST(st.send.empty());
   BOOST_TEST(same(st.tell, {sunsubscribed("c")}));
   BOOST_TEST(s.size() == 0u);
}

BOOST_AUTO_TEST_CASE(other_pushes_and_other_masters_are_ignored)
{
   shard_subscriptions s;
   s.subscribe("c", "A");
   BOOST_TEST(s.on_push("B", ssubscribed("c")).tell.empty());
   BOOST_TEST(s.on_push("A", {kind::subscribed, "c", {}, false}).tell.empty());  // not sharded
   BOOST_TEST(s.on_push("A", {kind::message, "c", "t", true}).tell.empty());
   BOOST_TEST(s.on_push("A", ssubscribed("d")).tell.empty());
   BOOST_TEST(same(s.on_push("A", ssubscribed("c")).tell, {ssubscribed("c")}));
}

// Redis drops a sharded subscription when its master gives the slot away (sunsubscribe, unasked):
// the listener hears an unsubscribe, the map is reloaded, and the channel follows its slot.
BOOST_AUTO_TEST_CASE(a_subscription_follows_its_slot_to_the_new_master)
{
   shard_subscriptions s;
   s.subscribe("c", "A");
   s.on_push("A", ssubscribed("c"));
   auto st = s.on_push("A", sunsubscribed("c"));
   BOOST_TEST(st.stale_map);
   BOOST_TEST(same(st.tell, {sunsubscribed("c")}));
   BOOST_TEST(st.send.empty());

   st = s.follow([](std::string const&) { return std::string{"B"}; });
   BOOST_TEST(same(st.send, {ssub("B", "c")}));  // nothing left at A to unsubscribe
   BOOST_TEST(st.tell.empty());
   st = s.on_push("B", ssubscribed("c"));
   BOOST_TEST(same(st.tell, {ssubscribed("c")}));
   // A map that says the same again sends nothing.
   st = s.follow([](std::string const&) { return std::string{"B"}; });
   BOOST_TEST((st.send.empty() && st.tell.empty()));
}

// An SSUBSCRIBE that met MOVED is never confirmed: the new map moves the channel on.
BOOST_AUTO_TEST_CASE(a_subscribe_sent_to_a_stale_master_moves_with_the_map)
{
   shard_subscriptions s;
   s.subscribe("c", "A");
   auto st = s.follow([](std::string const&) { return std::string{"B"}; });
   BOOST_TEST(same(st.send, {sunsub("A", "c"), ssub("B", "c")}));
   BOOST_TEST(s.on_push("A", ssubscribed("c")).tell.empty());  // too late: ignored
   st = s.on_push("B", ssubscribed("c"));
   BOOST_TEST(same(st.tell, {ssubscribed("c")}));
}

BOOST_AUTO_TEST_CASE(a_live_subscription_moves_when_the_map_says_so)
{
   shard_subscriptions s;
   s.subscribe("c", "A");
   s.on_push("A", ssubscribed("c"));
   auto st = s.follow([](std::string const&) { return std::string{"B"}; });
   BOOST_TEST(same(st.send, {sunsub("A", "c"), ssub("B", "c")}));
   BOOST_TEST(same(st.tell, {sunsubscribed("c")}));  // not live until B confirms
   BOOST_TEST(same(s.on_push("B", ssubscribed("c")).tell, {ssubscribed("c")}));
}

BOOST_AUTO_TEST_CASE(a_master_that_reconnects_gets_its_channels_again)
{
   shard_subscriptions s;
   s.subscribe("a", "A");
   s.subscribe("b", "B");
   s.on_push("A", ssubscribed("a"));
   s.on_push("B", ssubscribed("b"));
   auto st = s.on_connected("A");
   // As from one connection: connected (the listener forgets this node's state), then what is
   // still live elsewhere.
   BOOST_TEST(same(st.tell, {{kind::connected, {}, {}, false}, ssubscribed("b")}));
   BOOST_TEST(same(st.send, {ssub("A", "a")}));
   BOOST_TEST(same(s.on_push("A", ssubscribed("a")).tell, {ssubscribed("a")}));
}

BOOST_AUTO_TEST_CASE(a_reconnect_forgets_the_calls_in_flight)
{
   shard_subscriptions s;
   s.subscribe("a", "A");
   s.on_push("A", ssubscribed("a"));
   s.unsubscribe("a");
   auto st = s.on_connected("A");
   BOOST_TEST(st.send.empty());
   BOOST_TEST(same(st.tell, {{kind::connected, {}, {}, false}}));
   BOOST_TEST(s.size() == 0u);
   // A late confirmation of the old connection is nobody's.
   BOOST_TEST(s.on_push("A", sunsubscribed("a")).tell.empty());
}

BOOST_AUTO_TEST_CASE(the_first_connections_tell_only_connected)
{
   shard_subscriptions s;
   for (auto const* m : {"A", "B", "C"}) {
      auto st = s.on_connected(m);
      BOOST_TEST(same(st.tell, {{kind::connected, {}, {}, false}}));
      BOOST_TEST(st.send.empty());
   }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_shard_subscriptions
