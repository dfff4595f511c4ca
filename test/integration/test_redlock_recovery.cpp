// RedLock over five real redis-servers, when nodes lose what they held: nodes restarted empty
// under a held lock, a release to a node whose script cache was flushed, and mutual exclusion
// across two processes while nodes freeze and thaw at random.
#include "support/counter_processes.hpp"
#include "support/integration.hpp"
#include "support/redlock_fixture.hpp"

#include <functional>
#include <map>
#include <random>

namespace test_redlock_recovery {

using locksmith::test::count_votes;
using locksmith::test::redlock_fixture;

namespace {

// Freezes and thaws random nodes, at most two at a time, each for at most 300 ms, every 20 to 50
// ms; called often, it acts when its next moment has come.
struct freezer {
   explicit freezer(redlock_fixture& f)
       : f{f}
   {}

   void operator()()
   {
      auto const now = clock_type::now();
      if (now < next)
         return;
      next = now + std::chrono::milliseconds{std::uniform_int_distribution{20, 50}(random)};
      for (auto it = frozen.begin(); it != frozen.end();) {
         if (now - it->second > 300ms || std::uniform_int_distribution{0, 2}(random) == 0) {
            f.resume(it->first);
            it = frozen.erase(it);
         } else {
            ++it;
         }
      }
      auto const i =
         std::uniform_int_distribution<std::size_t>{0, redlock_fixture::node_count - 1}(random);
      if (frozen.size() < 2 && !frozen.contains(i)) {
         f.pause(i);
         frozen.emplace(i, now);
         ++freezes;
      }
   }

   void thaw_all()
   {
      for (auto const& [i, since] : frozen)
         f.resume(i);
      frozen.clear();
   }

   redlock_fixture& f;
   std::mt19937 random{std::random_device{}()};
   std::map<std::size_t, clock_type::time_point> frozen;  // node -> since
   clock_type::time_point next = clock_type::now();
   int freezes = 0;
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(redlock, redlock_fixture, *needs_redis_server())

// Nodes restarted empty while a lock is held. After two of five restarts, the holder still has
// three nodes and nobody else can reach a quorum.
//
// RedLock is only safe across restarts if a restarted node stays out for longer than the longest
// TTL ("delayed restarts", in antirez's description of RedLock and in Kleppmann's critique of
// it): with persistence off (or fsync lagging), a node comes back without the key. Once three of
// the five nodes have restarted empty while A's lease is valid, B finds the key free on those
// three, wins a quorum, and both A and B hold the lock. No client can detect this; the remedy is
// operational (delay the restart past max TTL, or use AOF with fsync=always), and fencing tokens
// at the protected resource.
BOOST_AUTO_TEST_CASE(nodes_restarted_empty_under_a_held_lock)
{
   locksmith::client a{ioc.get_executor(), cfg()}, b{ioc.get_executor(), cfg()};
   auto const key = lock_key(name);
   run(ioc, [&]() -> asio::awaitable<void> {
      auto la = co_await a.async_lock(name, {.ttl = 30s});
      BOOST_TEST(
         co_await eventually([&] { return all_hold(nodes_in(0, node_count), key, la.token()); }));
      srv(0).restart();
      srv(1).restart();
      BOOST_TEST(srv(0).text({"EXISTS", key}) == "0");
      BOOST_TEST(srv(1).text({"EXISTS", key}) == "0");

      // B tries several times, so that its connections to the restarted nodes are back up for
      // some of the tries: it may win nodes 0 and 1, never three.
      locksmith::report diag;
      for (int i = 0; i < 10; ++i) {
         auto [ec, lb] = co_await b.async_try_lock(name, {.ttl = 30s, .diag = &diag}, tuple);
         BOOST_TEST(ec == error::lock_taken, ec.message());
         BOOST_TEST(!lb.held());
         BOOST_TEST(count_votes(diag, node_vote::yes) <= 2u);
         asio::steady_timer t{ioc, 30ms};
         co_await t.async_wait();
      }
      BOOST_TEST(la.held());

      // A keeps its quorum: it can still renew and release.
      auto [eec] = co_await a.async_extend(la, 30s, tuple);
      BOOST_TEST(!eec, eec.message());
      auto [uec] = co_await a.async_unlock(la, tuple);
      BOOST_TEST(!uec, uec.message());
      BOOST_TEST(co_await gone_from(nodes_in(2, 5), key));
      // B's failed tries were released on the restarted nodes too (their script cache was empty:
      // NOSCRIPT, then the text). Logged rather than checked: see
      // release_reaches_a_node_whose_scripts_were_flushed for the deterministic check.
      bool const clean = co_await gone_from(nodes_in(0, 2), key, 1s);
      BOOST_TEST_MESSAGE("restarted nodes after B's failed tries: "
                         << (clean ? "no key left" : "B's key left behind"));
   }());
}

// SCRIPT FLUSH (or a restart, or a failover) empties a node's script cache: the release then
// gets NOSCRIPT and must be sent again as EVAL. Node 4 is frozen for the release and thawed right
// after the other four decided it, well within its node timeout: its NOSCRIPT arrives after the
// decision. The key must still go. The node timeout is 1 s, not the fixture's 50 ms, so that a
// loaded machine cannot make node 4 time out before the four others decide.
BOOST_AUTO_TEST_CASE(release_reaches_a_node_whose_scripts_were_flushed)
{
   constexpr auto timeout = 1000ms;
   locksmith::client c{ioc.get_executor(), servers_fixture::cfg(timeout)};
   auto const key = lock_key(name);
   run(ioc, [&]() -> asio::awaitable<void> {
      auto l = co_await c.async_lock(name, {.ttl = 30s});
      BOOST_TEST(co_await eventually([&] { return srv(4).text({"GET", key}) == l.token(); }));
      BOOST_TEST(srv(4).text({"SCRIPT", "FLUSH"}) == "OK");
      pause(4);
      auto const t0 = clock_type::now();
      locksmith::report diag;
      auto [uec] = co_await c.async_unlock(l, diag, tuple);
      auto const took = clock_type::now() - t0;
      resume(4);
      BOOST_TEST(!uec, uec.message());
      BOOST_TEST((took < timeout / 2),
                 "unlock took " << to_ms(took) << " ms: node 4 may have timed out instead");
      BOOST_TEST(diag.nodes[4].vote == node_vote::none);
      BOOST_TEST(co_await gone_from(nodes_in(0, 4), key));
      bool const gone = co_await gone_from(nodes_in(4, 5), key, 2s);
      auto const pttl = srv(4).text({"PTTL", key});
      BOOST_TEST(gone,
                 "node 4 still holds the released lock: its release got NOSCRIPT after the fan-out "
                 "was decided, and the EVAL fallback was not sent (PTTL "
                    << pttl << " ms)");
   }());
}

// Two processes x 16 coroutines increment a counter (on a sixth server) under the lock, with a
// non-atomic GET, yield, SET, while the parent freezes and thaws random nodes (at most two at a
// time, each for at most 300 ms). The counter must be exact.
//
// An unlock may fail to confirm a quorum (quorum_unreachable) here and still be right: two nodes
// are frozen and a third holds, for a moment, the other process's key from a split vote that it
// is about to release. The release still lands everywhere our key is (the frozen nodes run it
// when they thaw).
BOOST_AUTO_TEST_CASE(mutual_exclusion_across_processes_while_nodes_freeze)
{
   redis_server counter_server;
   locksmith::test::counter_run const r{.nodes = cfg().nodes,
                                        .counter_port = counter_server.port(),
                                        .processes = 2,
                                        .workers = 16,
                                        .rounds = 75,
                                        .lock = {.ttl = 2s, .wait = 30s},
                                        .node_timeout = node_timeout,
                                        .unconfirmed_unlock_ok = true,
                                        .child_budget = 50s,
                                        .deadline = 60s};
   freezer chaos{*this};
   auto const o = locksmith::test::run_counter_processes(r, std::ref(chaos));
   chaos.thaw_all();
   locksmith::test::check_children(o, r);
   BOOST_TEST(counter_server.text({"GET", r.counter}) == std::to_string(r.increments()));
   BOOST_TEST_MESSAGE(r.increments() << " increments in " << to_ms(o.took) << " ms, "
                                     << chaos.freezes << " node freezes");
   run(ioc, [&]() -> asio::awaitable<void> {
      BOOST_TEST(co_await gone_everywhere(lock_key(r.name), 5s),
                 "a lock key is left after the run");
   }());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_redlock_recovery
