// Unit tests of the client's telemetry hooks (src/engines/telemetry.hpp) over decided fan-outs of
// fake nodes: which votes are counted, and which node failures are logged, how often.
#include "engines/telemetry.hpp"

#include "support/fake_node.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/test/unit_test.hpp>

#include <string>
#include <utility>
#include <vector>

namespace test_telemetry {

namespace {
using locksmith::log_level;
using namespace locksmith::detail;

struct three_nodes {
   boost::asio::io_context ioc;
   std::vector<std::shared_ptr<node>> nodes;
   std::vector<std::pair<log_level, std::string>> lines;
   telemetry tel;

   three_nodes()
   {
      auto plan = std::make_shared<locksmith::test::fault_plan>();
      for (int i = 0; i < 3; ++i)
         nodes.push_back(std::make_shared<locksmith::test::fake_node>(
            ioc.get_executor(), "redis://n" + std::to_string(i), plan, 1'000'000));
      locksmith::config cfg;
      cfg.logger = [this](log_level l, std::string_view s) { lines.emplace_back(l, s); };
      tel.configure(cfg);
   }

   // A decided fan-out from one letter per node: y yes, n no, f failed (timed out), p pending.
   void decided(std::string_view op, char const* letters, outcome decision)
   {
      fanout_result r;
      r.decision = decision;
      for (char const* c = letters; *c; ++c) {
         node_result n;
         n.v = *c == 'y'   ? vote::yes
               : *c == 'n' ? vote::no
               : *c == 'f' ? vote::failed
                           : vote::pending;
         if (*c == 'f')
            n.reply.ec = boost::asio::error::timed_out;
         r.nodes.push_back(std::move(n));
      }
      tel.votes(op, "name", r, nodes);
   }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(telemetry_hooks)

BOOST_AUTO_TEST_CASE(acquire_votes_are_counted_by_node_and_others_are_not)
{
   three_nodes t;
   t.decided("acquire", "yyp", outcome::won);
   t.decided("acquire", "nnf", outcome::lost);
   t.decided("extend", "yyy", outcome::won);
   auto const m = t.tel.snapshot(t.nodes);
   BOOST_TEST_REQUIRE(m.votes.size() == 3u);
   BOOST_TEST(m.votes[0].node == "redis://n0");
   BOOST_TEST(m.votes[0].yes == 1u);
   BOOST_TEST(m.votes[0].no == 1u);
   BOOST_TEST(m.votes[2].none == 1u);
   BOOST_TEST(m.votes[2].failed == 1u);
   BOOST_TEST(m.votes[2].yes == 0u);
}

BOOST_AUTO_TEST_CASE(a_node_that_fails_while_the_quorum_holds_is_warned_of_once)
{
   three_nodes t;
   t.decided("acquire", "yfy", outcome::won);
   t.decided("release", "yfy", outcome::won);
   t.decided("acquire", "yfy", outcome::won);
   t.decided("acquire", "ffy", outcome::lost);  // no quorum: the caller hears of it, not the log
   t.decided("acquire", "yyy", outcome::won);
   std::vector<std::pair<log_level, std::string>> const expected{
      {log_level::warning,
       "redis://n1: failed in acquire of 'name' (Connection timed out); the quorum held"},
      {log_level::info, "redis://n1: answers again"},
   };
   BOOST_TEST_REQUIRE(t.lines.size() == expected.size());
   for (std::size_t i = 0; i < expected.size(); ++i) {
      BOOST_TEST((t.lines[i].first == expected[i].first));
      BOOST_TEST(t.lines[i].second == expected[i].second);
   }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_telemetry
