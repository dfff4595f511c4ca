// Unit tests of the inspection's pure parts (src/sansio/inspection.hpp): the inspect script's
// keys, the parser of its reply into a node's view (kind, holders, holds, waiters, fence) over
// hand-built replies, and the quorum's view over several nodes. What the script itself reads is
// the script table's (script_rows_inspect.cpp), and the whole path the integration suite's
// (test_inspect.cpp).
#include "sansio/inspection.hpp"

#include "support/resp_reply.hpp"

#include <boost/test/unit_test.hpp>

#include <boost/redis/resp3/node.hpp>
#include <boost/redis/resp3/type.hpp>

#include <string>
#include <utility>
#include <vector>

namespace test_inspection {

namespace {

using namespace locksmith::test::resp_names;
using locksmith::holder_info;
using locksmith::inspection;
using locksmith::lock_kind;
using locksmith::node_inspection;
using namespace std::chrono_literals;

// One element of the script's flat reply: a bulk string, or an integer.
struct element {
   bool text;
   std::string value;
};
element s(std::string v)
{
   return {true, std::move(v)};
}
element i(long long v)
{
   return {false, std::to_string(v)};
}

generic_response resp_reply(std::vector<element> const& es)
{
   std::vector<node> nodes{node{type::array, es.size(), 0, ""}};
   for (auto const& e : es)
      nodes.push_back(node{e.text ? type::blob_string : type::number, 1, 1, e.value});
   return locksmith::test::resp_reply(std::move(nodes));
}

// The reply of a node: lock key type, PTTL, value, fence, writer-waiting PTTL, then the members,
// readers, holds and queue lists (each n, then n token/ms pairs).
std::vector<element> base(std::string type_, long long pttl, std::string value,
                          std::string fence = "", long long waiting = -2)
{
   return {s(std::move(type_)), i(pttl), s(std::move(value)), s(std::move(fence)), i(waiting)};
}

void add_list(std::vector<element>& es, std::vector<std::pair<std::string, long long>> const& l)
{
   es.push_back(i(static_cast<long long>(l.size())));
   for (auto const& [token, ms] : l) {
      es.push_back(s(token));
      es.push_back(i(ms));
   }
}

std::vector<element> full(std::vector<element> es,
                          std::vector<std::pair<std::string, long long>> members = {},
                          std::vector<std::pair<std::string, long long>> readers = {},
                          std::vector<std::pair<std::string, long long>> holds = {},
                          std::vector<std::pair<std::string, long long>> queue = {})
{
   add_list(es, members);
   add_list(es, readers);
   add_list(es, holds);
   add_list(es, queue);
   return es;
}

node_inspection parsed(std::vector<element> const& es)
{
   node_inspection n;
   auto const ec = locksmith::detail::parse_inspection(resp_reply(es), n);
   BOOST_TEST(!ec, ec.message());
   return n;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(inspection_parts)

BOOST_AUTO_TEST_CASE(keys_share_the_names_hash_tag)
{
   auto const keys = locksmith::detail::inspect_keys("p:", "job");
   BOOST_TEST(keys == (std::vector<std::string>{"p:{job}", "p:{job}:fence", "p:{job}:readers",
                                                "p:{job}:writer_waiting", "p:{job}:holds",
                                                "p:{job}:queue", "p:{job}:queue_deadlines"}),
              boost::test_tools::per_element());
   BOOST_TEST((locksmith::detail::inspect_script().role == locksmith::detail::script_role::read));
}

BOOST_AUTO_TEST_CASE(free_name)
{
   auto const n = parsed(full(base("none", -2, "")));
   BOOST_TEST((n.kind == lock_kind::none));
   BOOST_TEST(!n.held());
   BOOST_TEST(n.fence == 0);
}

BOOST_AUTO_TEST_CASE(free_name_keeps_its_last_fence)
{
   auto const n = parsed(full(base("none", -2, "", "1700000000000001")));
   BOOST_TEST((n.kind == lock_kind::none));
   BOOST_TEST(n.fence == 1700000000000001);
}

BOOST_AUTO_TEST_CASE(lock)
{
   auto const n = parsed(full(base("string", 29000, "tok", "42")));
   BOOST_TEST((n.kind == lock_kind::lock));
   BOOST_TEST_REQUIRE(n.holders.size() == 1u);
   BOOST_TEST(n.holders[0].token == "tok");
   BOOST_TEST(n.holders[0].ttl.count() == 29000);
   BOOST_TEST(n.fence == 42);
}

BOOST_AUTO_TEST_CASE(fair_lock_with_waiters)
{
   auto const n =
      parsed(full(base("string", 5000, "tok", "7"), {}, {}, {}, {{"w1", 1900}, {"w2", 800}}));
   BOOST_TEST((n.kind == lock_kind::fair));
   BOOST_TEST(n.holders.size() == 1u);
   BOOST_TEST_REQUIRE(n.waiters.size() == 2u);
   BOOST_TEST(n.waiters[0].token == "w1");
   BOOST_TEST(n.waiters[1].ttl.count() == 800);
}

BOOST_AUTO_TEST_CASE(fair_lock_free_with_waiters)
{
   auto const n = parsed(full(base("none", -2, ""), {}, {}, {}, {{"w1", 1900}}));
   BOOST_TEST((n.kind == lock_kind::fair));
   BOOST_TEST(!n.held());
}

BOOST_AUTO_TEST_CASE(semaphore_counts_permits)
{
   auto const n = parsed(full(base("zset", 30000, ""), {{"a", 10000}, {"b", 30000}}));
   BOOST_TEST((n.kind == lock_kind::semaphore));
   BOOST_TEST(n.holders.size() == 2u);
   BOOST_TEST(n.holders[1].token == "b");
}

BOOST_AUTO_TEST_CASE(readers_and_a_waiting_writer)
{
   auto const n = parsed(full(base("none", -2, "", "", 700), {}, {{"r1", 20000}}));
   BOOST_TEST((n.kind == lock_kind::read_write));
   BOOST_TEST(!n.writer);
   BOOST_TEST(n.writer_waiting);
   BOOST_TEST(n.holders.size() == 1u);
}

BOOST_AUTO_TEST_CASE(writer_while_another_waits)
{
   auto const n = parsed(full(base("string", 9000, "w", "", 800)));
   BOOST_TEST((n.kind == lock_kind::read_write));
   BOOST_TEST(n.writer);
   BOOST_TEST_REQUIRE(n.holders.size() == 1u);
   BOOST_TEST(n.holders[0].token == "w");
}

BOOST_AUTO_TEST_CASE(reentrant_owner_and_holds)
{
   auto const n =
      parsed(full(base("string", 30000, "owner"), {}, {}, {{"h1", 10000}, {"h2", 30000}}));
   BOOST_TEST((n.kind == lock_kind::reentrant));
   BOOST_TEST_REQUIRE(n.holders.size() == 1u);
   BOOST_TEST(n.holders[0].token == "owner");
   BOOST_TEST(n.holds.size() == 2u);
}

// The labels (lock_options::owner) are split from the stored values of every list; a reentrant
// lock's owner, whose key holds a digest, shows its latest labelled hold's.
BOOST_AUTO_TEST_CASE(labels_are_split_from_the_tokens)
{
   std::string const t(32, 'a'), u(32, 'b'), v(32, 'c');
   auto n = parsed(full(base("string", 29000, t + "@web-1:42")));
   BOOST_TEST_REQUIRE(n.holders.size() == 1u);
   BOOST_TEST(n.holders[0].token == t);
   BOOST_TEST(n.holders[0].owner == "web-1:42");
   n = parsed(full(base("string", 9000, t), {}, {}, {}, {{u + "@next", 2000}, {v, 2000}}));
   BOOST_TEST((n.kind == lock_kind::fair));
   BOOST_TEST(n.holders[0].owner.empty());
   BOOST_TEST_REQUIRE(n.waiters.size() == 2u);
   BOOST_TEST(n.waiters[0].token == u);
   BOOST_TEST(n.waiters[0].owner == "next");
   BOOST_TEST(n.waiters[1].owner.empty());
   n = parsed(full(base("zset", 9000, ""), {{t + "@p1", 100}, {u, 200}}));
   BOOST_TEST_REQUIRE(n.holders.size() == 2u);
   BOOST_TEST(n.holders[0].owner == "p1");
   BOOST_TEST(n.holders[1].token == u);
   n = parsed(full(base("none", -2, ""), {}, {{t + "@r", 100}}));
   BOOST_TEST_REQUIRE(n.holders.size() == 1u);
   BOOST_TEST(n.holders[0].owner == "r");
   n = parsed(full(base("string", 30000, v), {}, {}, {{t + "@outer", 1000}, {u + "@inner", 3000}}));
   BOOST_TEST((n.kind == lock_kind::reentrant));
   BOOST_TEST(n.holders[0].token == v);
   BOOST_TEST(n.holders[0].owner == "inner");
   BOOST_TEST(n.holds[0].owner == "outer");
}

BOOST_AUTO_TEST_CASE(a_key_of_another_type)
{
   auto const n = parsed(full(base("hash", -1, "")));
   BOOST_TEST((n.kind == lock_kind::other));
   BOOST_TEST(!n.held());
}

BOOST_AUTO_TEST_CASE(malformed_replies_are_rejected)
{
   auto rejects = [](generic_response const& r) {
      node_inspection n;
      return locksmith::detail::parse_inspection(r, n) == error_code{error::unexpected_reply};
   };
   auto ok = full(base("string", 100, "t"));
   BOOST_TEST(!rejects(resp_reply(ok)));
   auto short_ = ok;
   short_.pop_back();
   BOOST_TEST(rejects(resp_reply(short_)));
   auto longer = ok;
   longer.push_back(i(0));
   BOOST_TEST(rejects(resp_reply(longer)));
   BOOST_TEST(rejects(resp_reply(full({i(1), i(100), s("t"), s(""), i(-2)}))));  // type not text
   BOOST_TEST(rejects(resp_reply(full(base("string", 100, "t", "12x")))));       // fence
   auto lying = base("zset", 100, "");
   lying.push_back(i(3));  // three members announced, none given
   BOOST_TEST(rejects(resp_reply(lying)));
   generic_response err;
   err = boost::redis::adapter::error{type::simple_error, "NOPERM no rights"};
   BOOST_TEST(rejects(err));
}

namespace {

node_inspection holding(std::vector<holder_info> hs, std::int64_t fence = 0,
                        lock_kind k = lock_kind::lock)
{
   node_inspection n;
   n.kind = hs.empty() ? lock_kind::none : k;
   n.holders = std::move(hs);
   n.fence = fence;
   return n;
}

node_inspection failed()
{
   node_inspection n;
   n.ec = error::quorum_unreachable;
   return n;
}

}  // namespace

BOOST_AUTO_TEST_CASE(quorum_of_one_node)
{
   inspection in{.name = "k", .nodes = {holding({{"t", 500ms}}, 9)}};
   locksmith::detail::summarize(in);
   BOOST_TEST(in.quorum == 1u);
   BOOST_TEST(in.answered == 1u);
   BOOST_TEST(in.held());
   BOOST_TEST(in.holders[0].token == "t");
   BOOST_TEST(in.fence == 9);
   BOOST_TEST(!locksmith::detail::inspection_error(in));
}

BOOST_AUTO_TEST_CASE(quorum_needs_a_majority_of_the_same_token)
{
   inspection in{.nodes = {holding({{"a", 900ms}}, 3), holding({{"a", 700ms}}, 5),
                           holding({{"b", 800ms}}, 4), holding({}), holding({{"a", 950ms}})}};
   locksmith::detail::summarize(in);
   BOOST_TEST(in.quorum == 3u);
   BOOST_TEST_REQUIRE(in.holders.size() == 1u);
   BOOST_TEST(in.holders[0].token == "a");
   // The third longest of 950, 900 and 700: when fewer than a quorum will still hold it.
   BOOST_TEST(in.holders[0].ttl.count() == 700);
   BOOST_TEST(in.fence == 5);
   BOOST_TEST((in.kind == lock_kind::lock));

   inspection split{.nodes = {holding({{"a", 1s}}), holding({{"b", 1s}}), holding({})}};
   locksmith::detail::summarize(split);
   BOOST_TEST(!split.held());
}

BOOST_AUTO_TEST_CASE(the_quorums_holder_keeps_its_label)
{
   inspection in{
      .nodes = {holding({{"a", 900ms, "web-1"}}), holding({{"a", 700ms, "web-1"}}), failed()}};
   locksmith::detail::summarize(in);
   BOOST_TEST_REQUIRE(in.holders.size() == 1u);
   BOOST_TEST(in.holders[0].owner == "web-1");
}

BOOST_AUTO_TEST_CASE(no_ttl_is_the_longest)
{
   inspection in{.nodes = {holding({{"a", -1ms}}), holding({{"a", 300ms}}), holding({})}};
   locksmith::detail::summarize(in);
   BOOST_TEST_REQUIRE(in.held());
   BOOST_TEST(in.holders[0].ttl.count() == 300);
}

BOOST_AUTO_TEST_CASE(shared_holders_on_a_quorum_each)
{
   auto k = lock_kind::semaphore;
   inspection in{.nodes = {holding({{"a", 1s}, {"b", 1s}}, 0, k), holding({{"a", 1s}}, 0, k),
                           holding({{"b", 1s}}, 0, k)}};
   locksmith::detail::summarize(in);
   BOOST_TEST(in.holders.size() == 2u);
   BOOST_TEST((in.kind == lock_kind::semaphore));
}

BOOST_AUTO_TEST_CASE(too_few_answers)
{
   inspection in{.nodes = {holding({{"a", 1s}}), failed(), failed()}};
   locksmith::detail::summarize(in);
   BOOST_TEST(in.answered == 1u);
   BOOST_TEST(!in.held());
   BOOST_TEST(locksmith::detail::inspection_error(in) == error_code{error::quorum_unreachable});
   in.nodes[2].ec = error::auth_failed;
   BOOST_TEST(locksmith::detail::inspection_error(in) == error_code{error::auth_failed});
   // A quorum answered: the others' errors are in their entries only.
   in.nodes[1] = holding({});
   locksmith::detail::summarize(in);
   BOOST_TEST(!locksmith::detail::inspection_error(in));
}

BOOST_AUTO_TEST_CASE(kind_names)
{
   BOOST_TEST(locksmith::to_string(lock_kind::read_write) == "read-write");
   BOOST_TEST(locksmith::to_string(lock_kind::none) == "none");
   BOOST_TEST(locksmith::to_string(lock_kind::other) == "other");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_inspection
