// Unit tests of src/sansio/sentinel_follow.hpp: what the Sentinels say of a master's address,
// and when a Sentinel node drops its connections to follow a switch of master.
#include "sansio/sentinel_follow.hpp"

#include "support/print.hpp"

#include <boost/test/unit_test.hpp>

namespace resp3 = boost::redis::resp3;
namespace test_sentinel_follow {

using locksmith::detail::last_per_key;
using locksmith::detail::master_address;
using locksmith::detail::master_follow;
using locksmith::detail::switched_master;
using namespace std::chrono_literals;

namespace {

using clock_type = master_follow::clock;
using step = master_follow::step;

resp3::node node(resp3::type t, std::size_t size, std::size_t depth, std::string value = {})
{
   return resp3::node{t, size, depth, std::move(value)};
}

std::vector<resp3::node> address_reply(std::string host, std::string port)
{
   return {node(resp3::type::array, 2, 0), node(resp3::type::blob_string, 1, 1, std::move(host)),
           node(resp3::type::blob_string, 1, 1, std::move(port))};
}

master_follow::link at(std::string_view address, unsigned connections)
{
   return {address, connections};
}

// A follower whose node is on a:1 when the Sentinels name a:1, then b:2: a switch to follow.
master_follow switched(master_follow::settings s = {})
{
   master_follow f{s};
   f.named("a:1");
   f.named("b:2");
   return f;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(sentinel_follow)

BOOST_AUTO_TEST_CASE(a_switch_message_names_the_new_address_of_its_master_only)
{
   BOOST_TEST(*switched_master("mymaster 127.0.0.1 6379 127.0.0.1 6380", "mymaster") ==
              "127.0.0.1:6380");
   BOOST_TEST(*switched_master("m 10.0.0.1 26 10.0.0.2 7000", "m") == "10.0.0.2:7000");
   BOOST_TEST(!switched_master("other 127.0.0.1 6379 127.0.0.1 6380", "mymaster"));
   BOOST_TEST(!switched_master("mymaster 127.0.0.1 6379 127.0.0.1", "mymaster"));
   BOOST_TEST(!switched_master("mymaster 127.0.0.1 6379 127.0.0.1 port", "mymaster"));
   BOOST_TEST(!switched_master("mymaster 127.0.0.1 6379 127.0.0.1 6380 extra", "mymaster"));
   BOOST_TEST(!switched_master("", "mymaster"));
}

BOOST_AUTO_TEST_CASE(an_address_reply_is_two_strings)
{
   BOOST_TEST(*master_address(address_reply("127.0.0.1", "6380")) == "127.0.0.1:6380");
   // A Sentinel that does not know the master answers null.
   BOOST_TEST(!master_address({node(resp3::type::null, 1, 0)}));
   BOOST_TEST(!master_address(address_reply("", "6380")));
   BOOST_TEST(!master_address(address_reply("127.0.0.1", "x")));
   BOOST_TEST(!master_address({}));
   auto three = address_reply("127.0.0.1", "6380");
   three[0].aggregate_size = 3;
   three.push_back(node(resp3::type::blob_string, 1, 1, "x"));
   BOOST_TEST(!master_address(three));
}

BOOST_AUTO_TEST_CASE(a_node_already_at_the_address_named_is_left_alone)
{
   master_follow f;
   auto const now = clock_type::now();
   BOOST_TEST(f.named("127.0.0.1:6379"));
   BOOST_TEST(!f.named("127.0.0.1:6379"));  // not news
   BOOST_TEST((f.decide(at("127.0.0.1:6379", 1), now) == step{}));
   // Before its first connection the node asks the Sentinels by itself.
   BOOST_TEST((f.decide(at("", 0), now) == step{}));
}

BOOST_AUTO_TEST_CASE(a_switch_reconnects_the_node_once_and_waits_for_its_new_connection)
{
   master_follow f{{.spacing = 250ms, .tries = 6, .patience = 3s, .poll = 50ms}};
   auto const t0 = clock_type::now();
   f.named("127.0.0.1:6379");
   BOOST_TEST((f.decide(at("127.0.0.1:6379", 1), t0) == step{}));
   BOOST_TEST(f.named("127.0.0.1:6380"));
   BOOST_TEST((f.decide(at("127.0.0.1:6379", 1), t0) == step{true, 50ms}));
   // Not connected again yet: no second reconnect while the first is under way.
   BOOST_TEST((f.decide(at("127.0.0.1:6379", 1), t0 + 50ms) == step{false, 50ms}));
   BOOST_TEST((f.decide(at("127.0.0.1:6379", 1), t0 + 2s) == step{false, 50ms}));
   // Its new connection reached the master named: arrived, once.
   BOOST_TEST((f.decide(at("127.0.0.1:6380", 2), t0 + 2100ms) == step{false, std::nullopt, true}));
   BOOST_TEST((f.decide(at("127.0.0.1:6380", 2), t0 + 10s) == step{}));
}

BOOST_AUTO_TEST_CASE(a_reconnect_that_found_the_old_master_again_is_tried_again_further_apart)
{
   // The Sentinel the node asked did not know of the switch yet.
   auto f = switched({.spacing = 250ms, .tries = 3, .poll = 50ms});
   auto const t0 = clock_type::now();
   BOOST_TEST((f.decide(at("a:1", 1), t0) == step{true, 50ms}));
   // Connected again 100 ms later, to the old master: the next try is 250 ms after the first.
   BOOST_TEST((f.decide(at("a:1", 2), t0 + 100ms) == step{false, 150ms}));
   BOOST_TEST((f.decide(at("a:1", 2), t0 + 250ms) == step{true, 50ms}));
   // Then 500 ms apart.
   BOOST_TEST((f.decide(at("a:1", 3), t0 + 300ms) == step{false, 450ms}));
   BOOST_TEST((f.decide(at("a:1", 3), t0 + 750ms) == step{true, 50ms}));
   // Three tries made: the node stays until the Sentinels name an address again (or the old
   // master's demotion moves it).
   BOOST_TEST((f.decide(at("a:1", 4), t0 + 800ms) == step{}));
   BOOST_TEST((f.decide(at("a:1", 4), t0 + 60s) == step{}));
   BOOST_TEST(f.named("c:3"));
   BOOST_TEST((f.decide(at("a:1", 4), t0 + 61s) == step{true, 50ms}));
   BOOST_TEST((f.decide(at("c:3", 5), t0 + 62s) == step{false, std::nullopt, true}));
}

BOOST_AUTO_TEST_CASE(a_reconnect_that_does_not_connect_within_its_patience_is_made_again)
{
   auto f = switched({.patience = 3s, .poll = 50ms});
   auto const t0 = clock_type::now();
   BOOST_TEST((f.decide(at("a:1", 1), t0) == step{true, 50ms}));
   BOOST_TEST((f.decide(at("a:1", 1), t0 + 2999ms) == step{false, 50ms}));
   BOOST_TEST((f.decide(at("a:1", 1), t0 + 3s) == step{true, 50ms}));
}

BOOST_AUTO_TEST_CASE(a_node_that_moved_by_itself_needs_no_reconnect)
{
   // The demotion dropped its connections and it asked the Sentinels before the switch was told.
   auto f = switched();
   auto const t0 = clock_type::now();
   BOOST_TEST((f.decide(at("b:2", 2), t0) == step{}));
}

BOOST_AUTO_TEST_CASE(recent_items_are_kept_for_a_while_and_up_to_a_count)
{
   using locksmith::detail::recent;
   auto const t0 = clock_type::now();
   recent<int> r{3, 5s};
   BOOST_TEST(r.since(t0).empty());
   r.add(1, t0);
   r.add(2, t0 + 1s);
   BOOST_TEST((r.since(t0 + 2s) == std::vector<int>{1, 2}));
   r.add(3, t0 + 2s);
   r.add(4, t0 + 3s);  // the oldest goes
   BOOST_TEST((r.since(t0 + 3s) == std::vector<int>{2, 3, 4}));
   BOOST_TEST((r.since(t0 + 6500ms) == std::vector<int>{3, 4}));
   BOOST_TEST(r.since(t0 + 9s).empty());
   recent<int> none{0, 5s};
   none.add(1, t0);
   BOOST_TEST(none.since(t0).empty());
}

BOOST_AUTO_TEST_CASE(the_last_few_items_of_each_key_are_sent_again)
{
   using item = std::pair<std::string, int>;  // key, order
   std::vector<item> const items{{"a", 1}, {"b", 2}, {"a", 3}, {"a", 4}, {"b", 5}, {"c", 6}};
   auto const key = [](item const& i) -> std::string_view { return i.first; };
   BOOST_TEST((last_per_key(items, 2, key) ==
               std::vector<item>{{"b", 2}, {"a", 3}, {"a", 4}, {"b", 5}, {"c", 6}}));
   BOOST_TEST((last_per_key(items, 1, key) == std::vector<item>{{"a", 4}, {"b", 5}, {"c", 6}}));
   BOOST_TEST((last_per_key(items, 10, key) == items));
   BOOST_TEST(last_per_key(items, 0, key).empty());
   BOOST_TEST(last_per_key(std::vector<item>{}, 3, key).empty());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_sentinel_follow
