// Unit tests of the restart quarantine's pure parts (include/locksmith/detail/quarantine.hpp).
#include <locksmith/detail/quarantine.hpp>

#include <boost/test/unit_test.hpp>

namespace {
using namespace std::chrono_literals;
using namespace locksmith;
using namespace locksmith::detail;
}  // namespace

BOOST_AUTO_TEST_SUITE(quarantine)

BOOST_AUTO_TEST_CASE(default_is_30_s_with_three_nodes_or_more_and_none_below)
{
   config c;
   c.nodes = {"redis://a", "redis://b"};
   BOOST_TEST(effective_quarantine(c).count() == 0);
   c.nodes.push_back("redis://c");
   BOOST_TEST(effective_quarantine(c).count() == 30'000);
   c.restart_quarantine = 0ms;
   BOOST_TEST(effective_quarantine(c).count() == 0);
   c.nodes = {"redis://a"};
   c.restart_quarantine = 5s;
   BOOST_TEST(effective_quarantine(c).count() == 5'000);
}

BOOST_AUTO_TEST_CASE(uptime_is_read_from_info_server)
{
   auto const info =
      "# Server\r\nredis_version:7.0.15\r\nuptime_in_seconds:42\r\nuptime_in_days:0\r\n";
   BOOST_TEST(parse_uptime(info).value().count() == 42);
   BOOST_TEST(parse_uptime("uptime_in_seconds:0").value().count() == 0);
   BOOST_TEST(!parse_uptime("# Server\r\nredis_version:7.0.15\r\n"));
   BOOST_TEST(!parse_uptime("uptime_in_seconds:\r\n"));
   BOOST_TEST(!parse_uptime("uptime_in_seconds:-3\r\n"));
   BOOST_TEST(!parse_uptime("uptime_in_seconds:12x\r\n"));
   BOOST_TEST(!parse_uptime("xuptime_in_seconds:12\r\n"));
   BOOST_TEST(!parse_uptime(""));
}

BOOST_AUTO_TEST_CASE(trust_starts_a_quarantine_after_the_server_started_never_sooner)
{
   auto const now = std::chrono::steady_clock::now();
   // Redis's "3" means between 2 and 4 s (a difference of two wall-clock seconds, each rounded
   // down): trusted as if it had been up 2 s.
   // Up for 3 s by its own count, so at least 2 s: trusted 28 s from now.
   BOOST_TEST((trusted_from(now, 3s, 30s) == now + 28s));
   BOOST_TEST((trusted_from(now, 1s, 3s) == now + 3s));  // "1" may mean 0.1 s
   BOOST_TEST((trusted_from(now, 100s, 30s) < now));     // up long ago: trusted at once
}

BOOST_AUTO_TEST_CASE(run_id_is_read_from_info_server)
{
   auto const info = "# Server\r\nredis_version:7.0.15\r\nrun_id:"
                     "5b1e8e0d2f3a4c5d6e7f8091a2b3c4d5e6f70812\r\nuptime_in_seconds:42\r\n";
   BOOST_TEST(parse_run_id(info).value() == "5b1e8e0d2f3a4c5d6e7f8091a2b3c4d5e6f70812");
   BOOST_TEST(!parse_run_id("run_id:\r\n"));
   BOOST_TEST(!parse_run_id("master_run_id:abc\r\n"));  // a field of its own, not run_id
   BOOST_TEST(!parse_run_id(""));
   BOOST_TEST(info_field("a:1\nbb:2\n", "bb").value() == "2");
   BOOST_TEST(!info_field("a:1\nbb:2\n", "b"));
}

BOOST_AUTO_TEST_CASE(a_fleet_is_fresh_when_every_node_is_young_and_unmarked)
{
   fleet_contacts f{3};
   BOOST_TEST(!f.record(0, {.young = true}));
   BOOST_TEST(!f.record(2, {.young = true}));
   BOOST_TEST(!f.fresh());  // node 1 has not answered yet
   BOOST_TEST(f.record(1, {.young = true}));
   BOOST_TEST(f.fresh());
   BOOST_TEST(!f.record(1, {.young = true}));  // decided once
   BOOST_TEST(!f.record(7, {}));               // no such node: ignored
}

BOOST_AUTO_TEST_CASE(a_fleet_in_use_is_not_fresh)
{
   // A node that a client trusted (marked, in this run or an earlier one): some client may hold
   // a lease there, and the young unmarked nodes beside it may have forgotten theirs.
   fleet_contacts marked{3};
   marked.record(0, {.young = true, .marked = true});
   marked.record(1, {.young = true});
   BOOST_TEST(!marked.record(2, {.young = true}));
   BOOST_TEST(!marked.fresh());
   // A node up for longer than the quarantine (or one whose INFO an ACL denies): the fleet is
   // not new.
   fleet_contacts old{2};
   old.record(0, {.young = true});
   BOOST_TEST(!old.record(1, {}));
   BOOST_TEST(!old.fresh());
   // A first contact that repeats does not change the picture.
   fleet_contacts again{2};
   again.record(0, {});
   again.record(0, {.young = true});
   BOOST_TEST(!again.record(1, {.young = true}));
   BOOST_TEST(!again.fresh());
}

BOOST_AUTO_TEST_SUITE_END()
