// Unit tests of Redis Cluster's pure parts (src/sansio/cluster.hpp): hash slots
// against values that redis-server 7.0's CLUSTER KEYSLOT gave, redirections and CLUSTER SLOTS.
#include "sansio/cluster.hpp"
#include "sansio/keys.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace test_cluster {

namespace {

using namespace locksmith::detail;
using boost::redis::resp3::node;
using boost::redis::resp3::type;

node agg(std::size_t size, std::size_t depth, type t = type::array)
{
   return {t, size, depth, {}};
}
node num(std::string v, std::size_t depth)
{
   return {type::number, 1, depth, std::move(v)};
}
node str(std::string v, std::size_t depth)
{
   return {type::blob_string, 1, depth, std::move(v)};
}

// One entry of a RESP3 CLUSTER SLOTS reply with its master and one replica.
void add_entry(std::vector<node>& r, int first, int last, std::string host, std::string port)
{
   r.push_back(agg(4, 1));
   r.push_back(num(std::to_string(first), 2));
   r.push_back(num(std::to_string(last), 2));
   for (auto const* id : {"id-master", "id-replica"}) {
      r.push_back(agg(4, 2));
      r.push_back(str(host, 3));
      r.push_back(num(port, 3));
      r.push_back(str(id, 3));
      r.push_back(agg(0, 3, type::map));
   }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cluster)

BOOST_AUTO_TEST_CASE(hash_slots_are_those_of_redis)
{
   BOOST_TEST(hash_slot("foo") == 12182);
   BOOST_TEST(hash_slot("bar") == 5061);
   BOOST_TEST(hash_slot("hello") == 866);
   BOOST_TEST(hash_slot("") == 0);
   BOOST_TEST(hash_slot("a{b") == 13340);  // no closing brace: the whole key
}

BOOST_AUTO_TEST_CASE(hash_tags_follow_redis_rules)
{
   BOOST_TEST(hash_slot("{user1000}.following") == 3443);
   BOOST_TEST(hash_slot("{user1000}.followers") == 3443);
   BOOST_TEST(hash_slot("foo{}{bar}") == 8363);     // an empty tag: the whole key
   BOOST_TEST(hash_slot("foo{{bar}}zap") == 4015);  // the tag is "{bar"
   BOOST_TEST(hash_slot("foo{bar}{zap}") == 5061);  // the first tag only: "bar"
   BOOST_TEST(hash_slot("{}") == 15257);
   BOOST_TEST(hash_slot("locksmith:{order-42}") == 9984);
}

BOOST_AUTO_TEST_CASE(every_key_and_channel_of_a_lock_shares_its_slot)
{
   for (auto const* name : {"order-42", "a}b", "a{b", "{x}", "ünï"}) {
      BOOST_TEST_CONTEXT("name " << name)
      {
         auto const slot = hash_slot(lock_key("p:", name));
         for (auto const& k :
              {fence_key("p:", name), release_channel("p:", name), readers_key("p:", name),
               holds_key("p:", name), writer_waiting_key("p:", name), queue_key("p:", name),
               queue_deadlines_key("p:", name)})
            BOOST_TEST(hash_slot(k) == slot);
      }
   }
}

BOOST_AUTO_TEST_CASE(parses_redirections)
{
   BOOST_TEST((parse_redirect("MOVED 3999 127.0.0.1:6381") ==
               redirect{false, 3999, {"127.0.0.1", "6381"}}));
   BOOST_TEST(
      (parse_redirect("ASK 16383 10.0.0.2:7000") == redirect{true, 16383, {"10.0.0.2", "7000"}}));
   BOOST_TEST((parse_redirect("MOVED 0 ::1:7000") == redirect{false, 0, {"::1", "7000"}}));
   BOOST_TEST((parse_redirect("MOVED 1 [::1]:7000") == redirect{false, 1, {"::1", "7000"}}));
   BOOST_TEST((parse_redirect("MOVED 1 :7000") == redirect{false, 1, {"", "7000"}}));
}

// A WAIT that its master's demotion cut short (Redis's text), and not a demoted master's other
// answer, nor a script's own error that mentions the word.
BOOST_AUTO_TEST_CASE(tells_a_call_unblocked_by_a_demotion)
{
   using locksmith::detail::unblocked_by_a_demotion;
   BOOST_TEST(unblocked_by_a_demotion("UNBLOCKED force unblock from blocking operation, instance "
                                      "state changed (master -> replica?)"));
   BOOST_TEST(!unblocked_by_a_demotion("READONLY You can't write against a read only replica."));
   BOOST_TEST(!unblocked_by_a_demotion("ERR Error running script: UNBLOCKED"));
   BOOST_TEST(!unblocked_by_a_demotion(""));
}

// A script that a migrating slot stopped part way (Redis 7's and Valkey's text), and not the
// errors that say a script never ran, nor a script's own error.
BOOST_AUTO_TEST_CASE(tells_a_script_stopped_in_a_moving_slot)
{
   using locksmith::detail::stopped_in_a_moving_slot;
   BOOST_TEST(stopped_in_a_moving_slot("ERR Script attempted to access a non local key in a "
                                       "cluster node script: e17ddfd6b1f3be25a666"
                                       "ca2424101dad70b96adf, on @user_script:83."));
   BOOST_TEST(!stopped_in_a_moving_slot("TRYAGAIN Multiple keys request during rehashing of slot"));
   BOOST_TEST(!stopped_in_a_moving_slot("ASK 3999 127.0.0.1:6381"));
   BOOST_TEST(!stopped_in_a_moving_slot("ERR Error running script (call to f_x): @user_script:1"));
   BOOST_TEST(!stopped_in_a_moving_slot(""));
}

BOOST_AUTO_TEST_CASE(rejects_other_errors_and_malformed_redirections)
{
   for (auto const* bad :
        {"", "NOSCRIPT No matching script", "CROSSSLOT Keys in request don't hash to the same slot",
         "TRYAGAIN Multiple keys request during rehashing of slot", "MOVED", "MOVED 1",
         "MOVED 16384 h:1", "MOVED -1 h:1", "MOVED x h:1", "MOVED 1 h", "MOVED 1 h:", "MOVED 1 h:0",
         "MOVED 1 h:65536", "ASK 1 h:x", "moved 1 h:1", "MOVED  1 h:1"}) {
      BOOST_TEST_CONTEXT("error \"" << bad << "\"")
      {
         BOOST_TEST(!parse_redirect(bad).has_value());
      }
   }
}

BOOST_AUTO_TEST_CASE(parses_cluster_slots)
{
   std::vector<node> r{agg(3, 0)};
   add_entry(r, 0, 5460, "127.0.0.1", "7000");
   add_entry(r, 5461, 10922, "?", "7001");
   add_entry(r, 10923, 16383, "", "7002");
   auto const slots = parse_cluster_slots(r);
   BOOST_TEST_REQUIRE(slots.has_value());
   BOOST_TEST_REQUIRE(slots->size() == 3u);
   BOOST_TEST(((*slots)[0] == slot_range{0, 5460, {"127.0.0.1", "7000"}}));
   BOOST_TEST(((*slots)[1] == slot_range{5461, 10922, {"", "7001"}}));
   BOOST_TEST(((*slots)[2] == slot_range{10923, 16383, {"", "7002"}}));
}

BOOST_AUTO_TEST_CASE(parses_an_empty_slot_map)
{
   auto const slots = parse_cluster_slots({agg(0, 0)});
   BOOST_TEST_REQUIRE(slots.has_value());
   BOOST_TEST(slots->empty());
}

BOOST_AUTO_TEST_CASE(rejects_malformed_cluster_slots)
{
   std::vector<node> good{agg(1, 0)};
   add_entry(good, 0, 16383, "h", "1");
   BOOST_TEST(parse_cluster_slots(good).has_value());

   BOOST_TEST(!parse_cluster_slots({}).has_value());
   BOOST_TEST(!parse_cluster_slots({str("OK", 0)}).has_value());
   auto const broken = [&](auto change) {
      auto r = good;
      change(r);
      return !parse_cluster_slots(r).has_value();
   };
   BOOST_TEST(broken([](auto& r) { r[0].aggregate_size = 2; }));  // an entry missing
   BOOST_TEST(broken([](auto& r) { r[2].value = "16384"; }));     // slot out of range
   BOOST_TEST(broken([](auto& r) { r[2].value = "x"; }));
   BOOST_TEST(broken([](auto& r) { r[3].value = "-1"; }));
   BOOST_TEST(broken([](auto& r) { r[6].value = "0"; }));  // port 0
   BOOST_TEST(broken([](auto& r) {                         // first > last
      r[2].value = "5";
      r[3].value = "4";
   }));
   BOOST_TEST(broken([](auto& r) { r.resize(4); }));  // no master
   BOOST_TEST(broken([](auto& r) { r[1].depth = 2; }));
}

// A call follows its slot until its deadline, not up to a count: TRYAGAIN after a pause, MOVED
// and ASK at once until a few in a row, then after the pause too; it gives up only when no time
// is left for another send after the pause.
BOOST_AUTO_TEST_CASE(a_redirected_call_follows_its_slot_until_its_deadline)
{
   using namespace std::chrono_literals;
   auto const plenty = std::chrono::steady_clock::duration{50ms};
   auto const moved = plan_redirect(false, 0, plenty);
   BOOST_TEST(!moved.give_up);
   BOOST_TEST(moved.pause.count() == 0);
   auto const again = plan_redirect(true, 0, plenty);
   BOOST_TEST(!again.give_up);
   BOOST_TEST(again.pause.count() > 0);
   BOOST_TEST((again.pause < 50ms));
   // Far past any fixed count, while time is left.
   auto const many = plan_redirect(false, 1000, plenty);
   BOOST_TEST(!many.give_up);
   BOOST_TEST((many.pause == again.pause));
   BOOST_TEST(!plan_redirect(true, 1000, plenty).give_up);
   // A few redirections in a row go at once; past them, each waits.
   unsigned quick = 0;
   while (plan_redirect(false, quick, plenty).pause.count() == 0)
      ++quick;
   BOOST_TEST(quick >= 2u);
   BOOST_TEST(quick <= 10u);
   // Out of time: no pause fits, or no time at all.
   BOOST_TEST(plan_redirect(true, 0, again.pause).give_up);
   BOOST_TEST(!plan_redirect(true, 0, again.pause + 1ms).give_up);
   BOOST_TEST(plan_redirect(false, 0, 0ms).give_up);
   BOOST_TEST(plan_redirect(false, 0, -5ms).give_up);
   BOOST_TEST(!plan_redirect(false, 0, 1ms).give_up);
}

BOOST_AUTO_TEST_CASE(moved_slots_are_those_with_another_master)
{
   endpoint const a{"127.0.0.1", "7000"}, b{"127.0.0.1", "7001"}, c{"127.0.0.1", "7002"};
   std::vector<slot_range> const before{{0, 5460, a}, {5461, 10922, b}, {10923, 16383, c}};
   // A failover: a's replica (c's port here, any other endpoint) serves a's slots.
   std::vector<slot_range> const failover{{0, 5460, c}, {5461, 10922, b}, {10923, 16383, c}};
   auto const moved = moved_slots(before, failover);
   BOOST_TEST(moved.size() == std::size_t{slot_count});
   BOOST_TEST(moved[0]);
   BOOST_TEST(moved[5460]);
   BOOST_TEST(!moved[5461]);
   BOOST_TEST(!moved[16383]);
   // The same map again: nothing moved.
   auto const same = moved_slots(before, before);
   BOOST_TEST(std::count(same.begin(), same.end(), true) == 0);
   // A first map (nothing known before), and slots that the new map leaves out: not moved.
   auto const first = moved_slots({}, before);
   BOOST_TEST(std::count(first.begin(), first.end(), true) == 0);
   auto const partial = moved_slots(before, {{0, 99, b}});
   BOOST_TEST(std::count(partial.begin(), partial.end(), true) == 100);
   BOOST_TEST(!partial[100]);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_cluster
