// Unit tests of the restart quarantine's pure parts (src/sansio/quarantine.hpp).
#include "sansio/quarantine.hpp"

#include <boost/test/unit_test.hpp>

namespace test_quarantine {

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

BOOST_AUTO_TEST_CASE(a_blind_young_node_keeps_the_fleet_from_being_fresh)
{
   // Its mark could not be read (GET denied): it may hold one, so the fleet may be in use.
   fleet_contacts f{2};
   f.record(0, {.young = true});
   BOOST_TEST(!f.record(1, {.young = true, .blind = true}));
   BOOST_TEST(!f.fresh());
   BOOST_TEST(f.complete());
}

BOOST_AUTO_TEST_CASE(a_mark_names_its_run_and_the_fleet_it_was_trusted_with)
{
   auto const a = std::string(40, 'a'), b = std::string(40, 'b'), c = std::string(40, 'c');
   auto const mark = make_mark(a, {a, b, c});
   BOOST_TEST(mark == a + " " + b + " " + c);  // its own run first, not twice
   BOOST_TEST(make_mark(a) == a);              // what older versions wrote, and still read
   BOOST_TEST(mark_names(mark, a));
   BOOST_TEST(mark_names(mark, c));
   BOOST_TEST(!mark_names(mark, std::string(40, 'd')));
   BOOST_TEST(!mark_names(mark, a.substr(0, 39)));  // whole ids only
   BOOST_TEST(!mark_names(mark, ""));
   BOOST_TEST(mark_names(a, a));
}

BOOST_AUTO_TEST_CASE(a_mark_read_on_a_sibling_vouches_for_the_runs_it_names)
{
   // Issue 24 (a): a concurrent first client marked 2 of 5 new nodes with the fleet's runs; the
   // 3 unmarked young nodes are named there: they were young together at its first contact,
   // and a run that restarted since has a new id.
   auto const run = [](char c) { return std::string(40, c); };
   fleet_contacts f{5};
   f.learn_mark(make_mark(run('a'), {run('a'), run('b'), run('c'), run('d'), run('e')}));
   for (char c : {'a', 'b', 'c', 'd', 'e'})
      BOOST_TEST(f.vouched(run(c)));
   BOOST_TEST(!f.vouched(run('f')));  // node c restarted since: its new run is not named
   BOOST_TEST(!f.vouched(""));
   // A mark of one run (trusted by its uptime, or written by an older version) vouches for that
   // run alone: its young unmarked siblings may have restarted after it was written.
   fleet_contacts g{5};
   g.learn_mark(run('a'));
   BOOST_TEST(g.vouched(run('a')));
   BOOST_TEST(!g.vouched(run('b')));
}

namespace {

auto const info_young =
   "# Server\r\nrun_id:" + std::string(40, 'a') + "\r\nuptime_in_seconds:2\r\n";
auto const info_old = "# Server\r\nrun_id:" + std::string(40, 'a') + "\r\nuptime_in_seconds:99\r\n";
auto const no_info = "NOPERM User locker has no permissions to run the 'info' command";

}  // namespace

BOOST_AUTO_TEST_CASE(a_node_whose_info_is_denied_cannot_be_judged)
{
   // Issue 24: trusting it let 3 nodes restarted empty hand out a held lock.
   auto const now = std::chrono::steady_clock::now();
   auto const j = judge_run({.info_error = no_info}, "locksmith:trusted-run", now, 30s);
   BOOST_TEST(j.unjudged.denied);
   BOOST_TEST(j.unjudged.why == std::string{"INFO server failed ("} + no_info + ")");
   BOOST_TEST((j.trusted_from == std::chrono::steady_clock::time_point::max()));
   BOOST_TEST(!j.contact.young);  // a fleet with it is never fresh
   // Another failure, or an INFO without the uptime: not judged either, but not an ACL's doing.
   auto const proxy = judge_run({.info_error = "ERR unknown command 'INFO'"}, "k", now, 30s);
   BOOST_TEST(!proxy.unjudged.why.empty());
   BOOST_TEST(!proxy.unjudged.denied);
   auto const bare = judge_run({.info = "# Server\r\nredis_version:7.0.15\r\n"}, "k", now, 30s);
   BOOST_TEST(bare.unjudged.why == "INFO server gave no uptime_in_seconds");
}

BOOST_AUTO_TEST_CASE(a_judged_node_is_old_young_marked_or_blind)
{
   auto const now = std::chrono::steady_clock::now();
   auto const key = "locksmith:trusted-run";
   auto const old = judge_run({.info = info_old}, key, now, 30s);
   BOOST_TEST(old.unjudged.why.empty());
   BOOST_TEST((old.trusted_from <= now));
   BOOST_TEST(!old.contact.young);
   BOOST_TEST(old.run_id == std::string(40, 'a'));
   // Old, and GET denied: its age is all that matters.
   BOOST_TEST(judge_run({.info = info_old, .mark_error = "NOPERM"}, key, now, 30s).blind.empty());

   auto const young = judge_run({.info = info_young}, key, now, 30s);
   BOOST_TEST((young.trusted_from > now));
   BOOST_TEST(young.contact.young);
   BOOST_TEST(!young.contact.marked);
   BOOST_TEST(!young.marked_now);

   auto const own = std::string(40, 'a');
   auto const marked = judge_run({.info = info_young, .mark = own}, key, now, 30s);
   BOOST_TEST(marked.marked_now);
   BOOST_TEST(marked.contact.marked);
   // A mark of an earlier run (a restart from a dump): the fleet was in use, this run unknown.
   auto const earlier =
      judge_run({.info = info_young, .mark = std::string(40, 'b')}, key, now, 30s);
   BOOST_TEST(!earlier.marked_now);
   BOOST_TEST(earlier.contact.marked);

   auto const blind = judge_run({.info = info_young, .mark_error = "NOPERM no GET"}, key, now, 30s);
   BOOST_TEST(blind.contact.blind);
   BOOST_TEST(blind.blind == "GET locksmith:trusted-run failed (NOPERM no GET)");
   BOOST_TEST(blind.unjudged.why.empty());  // judged: it sits out its quarantine
   BOOST_TEST((blind.trusted_from > now));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_quarantine
