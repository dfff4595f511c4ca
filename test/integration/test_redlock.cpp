// RedLock over five real redis-servers: the healthy path checked on every node, frozen nodes
// (SIGSTOP) that must cost at most one node timeout, a node that comes back after the release,
// nodes restarted empty under a held lock, a release to a node whose script cache was flushed,
// and mutual exclusion across two processes while nodes freeze and thaw at random.
#include <locksmith/locksmith.hpp>
#include <locksmith/detail/keys.hpp>
#include <locksmith/detail/scripts.hpp>

#include "support/keys.hpp"
#include "support/print.hpp"
#include "support/redis_server.hpp"
#include "support/run.hpp"

#include <boost/asio.hpp>
#include <boost/redis/connection.hpp>
#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <thread>
#include <vector>

namespace asio = boost::asio;
namespace redis = boost::redis;
using namespace std::chrono_literals;
using locksmith::error;
using locksmith::error_code;
using locksmith::lease;
using locksmith::node_vote;
using locksmith::test::run;
using locksmith::test::unique_key;
using clock_type = std::chrono::steady_clock;

namespace {

constexpr auto tuple = asio::as_tuple(asio::deferred);
constexpr std::size_t node_count = 5;
constexpr auto node_timeout = 50ms;

double ms(clock_type::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// Node indexes [first, last). (A braced list inside a coroutine trips GCC 12.)
std::vector<std::size_t> nodes_in(std::size_t first, std::size_t last)
{
   std::vector<std::size_t> v;
   for (auto i = first; i < last; ++i)
      v.push_back(i);
   return v;
}

double median(std::vector<double> v)
{
   std::sort(v.begin(), v.end());
   return v.empty() ? 0 : v[v.size() / 2];
}

struct redlock_fixture {
   std::vector<std::unique_ptr<locksmith::test::redis_server>> servers;
   std::set<std::size_t> paused;
   asio::io_context ioc;

   redlock_fixture()
   {
      for (std::size_t i = 0; i < node_count; ++i)
         servers.push_back(std::make_unique<locksmith::test::redis_server>());
      for (auto& s : servers)
         load_scripts(*s);
   }

   ~redlock_fixture()
   {
      for (auto i : paused)
         servers[i]->resume();
   }

   // Warm nodes, as after the first call of a long-running client. (A node whose cache is empty
   // answers NOSCRIPT, and the client sends the text; see release_reaches_a_node_whose_scripts_were_flushed.)
   static void load_scripts(locksmith::test::redis_server& s)
   {
      using namespace locksmith::detail;
      for (auto const* sc : {&acquire_script(), &release_script(), &extend_script()})
         BOOST_REQUIRE(s.text({"SCRIPT", "LOAD", sc->text}) == sc->sha1);
   }

   locksmith::config cfg() const
   {
      // Servers that the test just started: no restart quarantine (see test_quarantine.cpp).
      locksmith::config c{.node_timeout = node_timeout, .restart_quarantine = 0ms};
      c.nodes.clear();
      for (auto const& s : servers)
         c.nodes.push_back(s->url());
      return c;
   }

   locksmith::test::redis_server& srv(std::size_t i) { return *servers.at(i); }

   void pause(std::size_t i)
   {
      servers.at(i)->pause();
      paused.insert(i);
   }
   void resume(std::size_t i)
   {
      servers.at(i)->resume();
      paused.erase(i);
   }

   static std::string lock_key(std::string const& name) { return locksmith::detail::lock_key("locksmith:", name); }
   static std::string fence_key(std::string const& name) { return locksmith::detail::fence_key("locksmith:", name); }

   // Polls `cond` while the io_context runs (it carries the clients' commands); false if it is
   // still not true after `deadline`.
   asio::awaitable<bool> eventually(std::function<bool()> cond, clock_type::duration deadline = 3s)
   {
      auto const until = clock_type::now() + deadline;
      asio::steady_timer t{ioc};
      for (;;) {
         if (cond())
            co_return true;
         if (clock_type::now() >= until)
            co_return false;
         t.expires_after(2ms);
         co_await t.async_wait();
      }
   }

   // True when no running, unpaused server in `which` has the key.
   asio::awaitable<bool> gone_from(std::vector<std::size_t> which, std::string const& key,
                                   clock_type::duration deadline = 3s)
   {
      co_return co_await eventually([&] {
         return std::all_of(which.begin(), which.end(), [&](std::size_t i) {
            return srv(i).text({"EXISTS", key}) == "0";
         });
      }, deadline);
   }

   asio::awaitable<bool> gone_everywhere(std::string const& key, clock_type::duration deadline = 3s)
   {
      co_return co_await gone_from(nodes_in(0, node_count), key, deadline);
   }

   // Latency of async_try_lock (median over `count`), each followed by an unlock.
   asio::awaitable<double> lock_latency(locksmith::client& c, std::string const& stem, int count,
                                        std::vector<std::string>& names)
   {
      std::vector<double> took;
      for (int i = 0; i < count; ++i) {
         names.push_back(stem + "/" + std::to_string(i));
         auto const t0 = clock_type::now();
         auto [ec, l] = co_await c.async_try_lock(names.back(), {.ttl = 30s}, tuple);
         took.push_back(ms(clock_type::now() - t0));
         BOOST_TEST(!ec, ec.message());
         auto [uec] = co_await c.async_unlock(l, tuple);
         BOOST_TEST(!uec, uec.message());
      }
      co_return median(took);
   }
};

std::size_t count_votes(locksmith::report const& r, node_vote v)
{
   return static_cast<std::size_t>(
      std::count_if(r.nodes.begin(), r.nodes.end(), [v](auto const& n) { return n.vote == v; }));
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(redlock, redlock_fixture)

// Acquire, renew and release on five nodes, checked on each node.
BOOST_AUTO_TEST_CASE(healthy_acquire_renew_release_on_all_nodes)
{
   locksmith::client c{ioc.get_executor(), cfg()};
   auto const name = unique_key();
   auto const key = lock_key(name);
   run(ioc, [&]() -> asio::awaitable<void> {
      locksmith::report diag;
      auto l = co_await c.async_lock(name, {.ttl = 10s}, diag);
      BOOST_TEST(l.held());
      BOOST_TEST(count_votes(diag, node_vote::yes) >= 3u);
      // The fan-out is decided on the third yes; the other two follow at once.
      BOOST_TEST(co_await eventually([&] {
         for (std::size_t i = 0; i < node_count; ++i)
            if (srv(i).text({"GET", key}) != l.token())
               return false;
         return true;
      }), "the token is on all five nodes");

      // The fencing token is the highest minted by the nodes that voted yes; the others, which
      // answered after the decision, may have minted higher ones (their clock had moved on).
      std::uint64_t yes_max = 0, all_max = 0;
      for (std::size_t i = 0; i < node_count; ++i) {
         std::uint64_t const f = std::stoull(srv(i).text({"GET", fence_key(name)}));
         all_max = std::max(all_max, f);
         if (diag.nodes[i].vote == node_vote::yes)
            yes_max = std::max(yes_max, f);
      }
      BOOST_TEST(l.fencing_token() == yes_max);
      BOOST_TEST(l.fencing_token() <= all_max);

      // Renew to 60 s: every node's TTL moves.
      auto const before = l.valid_until();
      auto [eec] = co_await c.async_extend(l, 60s, diag, tuple);
      BOOST_TEST(!eec, eec.message());
      BOOST_TEST((l.valid_until() > before + 40s));
      BOOST_TEST(co_await eventually([&] {
         for (std::size_t i = 0; i < node_count; ++i)
            if (std::stoll(srv(i).text({"PTTL", key})) <= 50'000)
               return false;
         return true;
      }), "the TTL is renewed on all five nodes");

      auto [uec] = co_await c.async_unlock(l, diag, tuple);
      BOOST_TEST(!uec, uec.message());
      BOOST_TEST(count_votes(diag, node_vote::yes) >= 3u);
      BOOST_TEST(co_await gone_everywhere(key), "the key is gone from all five nodes");
   }());
}

// One or two frozen nodes cost nothing: the quorum is won on the third yes, without waiting for
// their timeout.
BOOST_AUTO_TEST_CASE(one_or_two_frozen_nodes_do_not_slow_acquisition)
{
   locksmith::client c{ioc.get_executor(), cfg()};
   auto const stem = unique_key();
   std::vector<std::string> names;
   double healthy = 0, one_frozen = 0, two_frozen = 0;
   run(ioc, [&]() -> asio::awaitable<void> {
      co_await lock_latency(c, stem + "/warmup", 3, names);  // connections up
      healthy = co_await lock_latency(c, stem + "/healthy", 21, names);
      pause(0);
      one_frozen = co_await lock_latency(c, stem + "/one", 21, names);
      pause(1);
      two_frozen = co_await lock_latency(c, stem + "/two", 21, names);
      // Back from SIGSTOP, the two nodes run their backlog in order: each SET, then its release.
      resume(0);
      resume(1);
      for (auto const& n : names)
         BOOST_TEST(co_await gone_everywhere(lock_key(n)), n << " is left on some node");
   }(), 60s);
   BOOST_TEST_MESSAGE("median acquisition: healthy " << healthy << " ms, 1 frozen " << one_frozen
                                                     << " ms, 2 frozen " << two_frozen << " ms (node timeout "
                                                     << node_timeout.count() << " ms)");
   BOOST_TEST(healthy < 25.0);
   BOOST_TEST(one_frozen < 25.0);
   BOOST_TEST(two_frozen < 25.0);
}

// Three frozen nodes: no quorum. A try fails after one node timeout, not three; a wait of 300 ms
// retries until it runs out.
BOOST_AUTO_TEST_CASE(three_frozen_nodes_fail_with_quorum_unreachable)
{
   locksmith::client c{ioc.get_executor(), cfg()};
   auto const name = unique_key();
   run(ioc, [&]() -> asio::awaitable<void> {
      auto warm = co_await c.async_lock(unique_key("warmup"));
      co_await c.async_unlock(warm);
      pause(0);
      pause(1);
      pause(2);
      locksmith::report diag;
      auto t0 = clock_type::now();
      auto [ec, l] = co_await c.async_try_lock(name, {}, diag, tuple);
      auto took = clock_type::now() - t0;
      BOOST_TEST(ec == error::quorum_unreachable, ec.message());
      BOOST_TEST(!l.held());
      BOOST_TEST((took >= node_timeout), ms(took) << " ms");
      BOOST_TEST((took < 200ms), ms(took) << " ms");
      BOOST_REQUIRE(diag.nodes.size() == node_count);
      for (std::size_t i = 0; i < 3; ++i)
         BOOST_TEST((diag.nodes[i].vote == node_vote::failed || diag.nodes[i].vote == node_vote::none), "node " << i);
      BOOST_TEST(count_votes(diag, node_vote::failed) + count_votes(diag, node_vote::none) == 3u);
      BOOST_TEST(diag.nodes[3].vote == node_vote::yes);
      BOOST_TEST(diag.nodes[4].vote == node_vote::yes);
      auto const try_took = took;

      t0 = clock_type::now();
      auto [ec2, l2] = co_await c.async_lock(name, {.wait = 300ms}, diag, tuple);
      took = clock_type::now() - t0;
      BOOST_TEST(ec2 == error::quorum_unreachable, ec2.message());
      BOOST_TEST((took >= 300ms), ms(took) << " ms");
      BOOST_TEST((took < 600ms), ms(took) << " ms");
      BOOST_TEST(diag.attempts > 1u);
      BOOST_TEST_MESSAGE("3 frozen: try " << ms(try_took) << " ms; wait 300 ms: " << ms(took) << " ms over "
                                           << diag.attempts << " attempts");

      resume(0);
      resume(1);
      resume(2);
      BOOST_TEST(co_await gone_everywhere(lock_key(name)), "a partial acquisition is left");
   }());
}

// A node frozen during the acquisition and thawed after the release runs both in order: the late
// SET, then the release. With a 30 s TTL only the release can remove the key within the deadline.
BOOST_AUTO_TEST_CASE(node_frozen_during_acquire_and_thawed_after_release_holds_no_key)
{
   locksmith::client c{ioc.get_executor(), cfg()};
   auto const name = unique_key();
   auto const key = lock_key(name);
   run(ioc, [&]() -> asio::awaitable<void> {
      auto warm = co_await c.async_lock(unique_key("warmup"));
      co_await c.async_unlock(warm);
      pause(0);
      locksmith::report diag;
      auto l = co_await c.async_lock(name, {.ttl = 30s}, diag);
      BOOST_TEST(diag.nodes[0].vote == node_vote::none);
      BOOST_TEST(co_await eventually([&] {
         for (std::size_t i = 1; i < node_count; ++i)
            if (srv(i).text({"GET", key}) != l.token())
               return false;
         return true;
      }), "the token is on the four live nodes");
      auto [uec] = co_await c.async_unlock(l, tuple);
      BOOST_TEST(!uec, uec.message());
      BOOST_TEST(co_await gone_from(nodes_in(1, 5), key));
      resume(0);
      // The late acquire runs and takes the key (it mints a fence), then the release removes it.
      bool const ran_in_order = co_await eventually([&] {
         return srv(0).text({"EXISTS", fence_key(name)}) == "1" && srv(0).text({"EXISTS", key}) == "0";
      });
      auto const pttl = srv(0).text({"PTTL", key});
      BOOST_TEST(ran_in_order, "node 0: the late SET did not run, or its key stayed (PTTL " << pttl << " ms)");
   }());
}

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
   auto const name = unique_key();
   auto const key = lock_key(name);
   run(ioc, [&]() -> asio::awaitable<void> {
      auto la = co_await a.async_lock(name, {.ttl = 30s});
      BOOST_TEST(co_await eventually([&] {
         for (std::size_t i = 0; i < node_count; ++i)
            if (srv(i).text({"GET", key}) != la.token())
               return false;
         return true;
      }));
      srv(0).restart();
      srv(1).restart();
      BOOST_TEST(srv(0).text({"EXISTS", key}) == "0");
      BOOST_TEST(srv(1).text({"EXISTS", key}) == "0");

      // B tries several times, so that its connections to the restarted nodes are back up for
      // some of the tries: it may win nodes 0 and 1, never three.
      locksmith::report diag;
      for (int i = 0; i < 10; ++i) {
         auto [ec, lb] = co_await b.async_try_lock(name, {.ttl = 30s}, diag, tuple);
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
      BOOST_TEST_MESSAGE("restarted nodes after B's failed tries: " << (clean ? "no key left" : "B's key left behind"));
   }());
}

// SCRIPT FLUSH (or a restart, or a failover) empties a node's script cache: the release then
// gets NOSCRIPT and must be sent again as EVAL. Node 4 is frozen for the release and thawed right
// after the other four decided it, well within its node timeout: its NOSCRIPT arrives after the
// decision. The key must still go.
BOOST_AUTO_TEST_CASE(release_reaches_a_node_whose_scripts_were_flushed)
{
   locksmith::client c{ioc.get_executor(), cfg()};
   auto const name = unique_key();
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
      BOOST_TEST((took < node_timeout / 2), "unlock took " << ms(took) << " ms: node 4 may have timed out instead");
      BOOST_TEST(diag.nodes[4].vote == node_vote::none);
      BOOST_TEST(co_await gone_from(nodes_in(0, 4), key));
      bool const gone = co_await gone_from(nodes_in(4, 5), key, 2s);
      auto const pttl = srv(4).text({"PTTL", key});
      BOOST_TEST(gone, "node 4 still holds the released lock: its release got NOSCRIPT after the fan-out "
                       "was decided, and the EVAL fallback was not sent (PTTL " << pttl << " ms)");
   }());
}

namespace {

// One child process: 16 coroutines, each `rounds` times: lock, GET the counter, yield, SET it
// + 1, unlock. Returns the exit status: 0, or a bit per kind of trouble.
//
// An unlock may fail to confirm a quorum (quorum_unreachable) here and still be right: two nodes
// are frozen and a third holds, for a moment, the other process's key from a split vote that it
// is about to release. The release still lands everywhere our key is (the frozen nodes run it
// when they thaw). But not_owner or lease_expired for a lease that was still valid when the
// unlock began is wrong: nobody else held a quorum, and our key had not expired (see
// fanout/a_transient_failure_on_a_bare_quorum_is_not_a_lost_key).
int counter_child(std::vector<std::string> const& nodes, std::uint16_t counter_port, std::string const& name,
                  std::string const& counter, int rounds)
{
   constexpr int workers = 16;
   asio::io_context ioc;
   locksmith::client c{ioc.get_executor(), locksmith::config{.nodes = nodes, .node_timeout = node_timeout, .restart_quarantine = 0ms}};
   redis::connection data{ioc, redis::logger{redis::logger::level::err}};
   redis::config rc;
   rc.addr.port = std::to_string(counter_port);
   data.async_run(rc, asio::detached);
   int lock_failures = 0, unlock_unconfirmed = 0, unlock_misreported = 0, unlock_other = 0, overruns = 0,
       errors = 0, finished = 0;
   double longest_wait = 0;

   auto worker = [&]() -> asio::awaitable<void> {
      for (int i = 0; i < rounds; ++i) {
         auto const t0 = clock_type::now();
         auto [ec, l] = co_await c.async_lock(name, {.ttl = 2s, .wait = 30s}, tuple);
         longest_wait = std::max(longest_wait, ms(clock_type::now() - t0));
         if (ec) {
            ++lock_failures;
            std::fprintf(stderr, "child %d: lock: %s\n", ::getpid(), ec.message().c_str());
            continue;
         }
         redis::request get;
         get.push("GET", counter);
         redis::response<std::optional<std::int64_t>> value;
         co_await data.async_exec(get, value);
         // Let the other coroutines and processes run in the middle of the read-modify-write.
         co_await asio::post(ioc, asio::use_awaitable);
         redis::request set;
         set.push("SET", counter, std::get<0>(value).value().value_or(0) + 1);
         co_await data.async_exec(set);
         if (!l.held())
            ++overruns;  // the write may have come after the validity: the lock did not cover it
         bool const valid = l.held();
         locksmith::report diag;
         auto [uec] = co_await c.async_unlock(l, diag, tuple);
         if (uec) {
            if (uec == error::quorum_unreachable)
               ++unlock_unconfirmed;
            else if (valid && (uec == error::not_owner || uec == error::lease_expired))
               ++unlock_misreported;
            else
               ++unlock_other;
            std::string votes;
            for (auto const& n : diag.nodes)
               votes += " " + std::to_string(static_cast<int>(n.vote)) + "/" + n.ec.message() + "/" +
                        std::to_string(n.latency.count()) + "us";
            std::fprintf(stderr, "child %d: unlock of a lease %s: %s; votes (0 none 1 yes 2 no 3 failed):%s\n", ::getpid(),
                         valid ? "still valid" : "already invalid", uec.message().c_str(), votes.c_str());
         }
      }
      ++finished;
   };
   for (int j = 0; j < workers; ++j)
      asio::co_spawn(ioc, worker(), [&](std::exception_ptr e) {
         if (e) {
            ++errors;
            ++finished;
         }
      });
   auto const until = clock_type::now() + 50s;
   while (finished < workers && ioc.run_one_until(until) != 0) {
   }
   data.cancel();
   std::fprintf(stderr,
                "child %d: %d/%d workers done; lock failures %d; unlocks unconfirmed %d, misreported %d, "
                "other errors %d; overruns %d; exceptions %d; longest wait %.1f ms\n",
                ::getpid(), finished, workers, lock_failures, unlock_unconfirmed, unlock_misreported, unlock_other,
                overruns, errors, longest_wait);
   return (finished < workers ? 1 : 0) | (lock_failures ? 2 : 0) | (unlock_misreported ? 4 : 0) |
          (overruns ? 8 : 0) | (errors ? 16 : 0) | (unlock_other ? 32 : 0);
}

}  // namespace

// Two processes x 16 coroutines increment a counter (on a sixth server) under the lock, with a
// non-atomic GET, yield, SET, while the parent freezes and thaws random nodes (at most two at a
// time, each for at most 300 ms). The counter must be exact.
BOOST_AUTO_TEST_CASE(mutual_exclusion_across_processes_while_nodes_freeze)
{
   constexpr int children = 2, workers = 16, rounds = 75;
   locksmith::test::redis_server counter_server;
   auto const name = unique_key("lock");
   auto const counter = unique_key("counter");
   auto const nodes = cfg().nodes;

   std::cout.flush();
   std::cerr.flush();
   std::vector<pid_t> pids;
   for (int i = 0; i < children; ++i) {
      pid_t const pid = ::fork();
      BOOST_REQUIRE(pid >= 0);
      if (pid == 0) {
         ::prctl(PR_SET_PDEATHSIG, SIGKILL);
         int status = 16;
         try {
            status = counter_child(nodes, counter_server.port(), name, counter, rounds);
         } catch (std::exception const& e) {
            std::fprintf(stderr, "child %d: %s\n", ::getpid(), e.what());
         }
         std::fflush(stderr);
         ::_exit(status);
      }
      pids.push_back(pid);
   }

   // Chaos until both children are done.
   std::mt19937 random{std::random_device{}()};
   std::map<std::size_t, clock_type::time_point> frozen;  // node -> since
   std::vector<int> statuses(children, -1);
   int freezes = 0;
   auto const t0 = clock_type::now();
   auto const deadline = t0 + 60s;
   auto running = [&] { return std::count(statuses.begin(), statuses.end(), -1); };
   while (running() > 0 && clock_type::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds{std::uniform_int_distribution{20, 50}(random)});
      auto const now = clock_type::now();
      for (auto it = frozen.begin(); it != frozen.end();) {
         if (now - it->second > 300ms || std::uniform_int_distribution{0, 2}(random) == 0) {
            resume(it->first);
            it = frozen.erase(it);
         } else {
            ++it;
         }
      }
      if (frozen.size() < 2) {
         auto const i = std::uniform_int_distribution<std::size_t>{0, node_count - 1}(random);
         if (!frozen.contains(i)) {
            pause(i);
            frozen.emplace(i, now);
            ++freezes;
         }
      }
      for (int i = 0; i < children; ++i) {
         int status = 0;
         if (statuses[i] == -1 && ::waitpid(pids[i], &status, WNOHANG) == pids[i])
            statuses[i] = status;
      }
   }
   for (auto const& [i, since] : frozen)
      resume(i);
   auto const took = clock_type::now() - t0;
   for (int i = 0; i < children; ++i) {
      if (statuses[i] == -1) {
         ::kill(pids[i], SIGKILL);
         ::waitpid(pids[i], &statuses[i], 0);
         BOOST_TEST(false, "child " << i << " did not finish within 60 s");
         continue;
      }
      BOOST_TEST(WIFEXITED(statuses[i]));
      BOOST_TEST(WEXITSTATUS(statuses[i]) == 0,
                 "child " << i << " exit status " << WEXITSTATUS(statuses[i])
                          << " (1 unfinished, 2 lock failed, 4 unlock of a valid lease said not_owner or lease_expired, "
                             "8 write after the validity, 16 exception, 32 other unlock error)");
   }
   BOOST_TEST(counter_server.text({"GET", counter}) == std::to_string(children * workers * rounds));
   BOOST_TEST_MESSAGE(children * workers * rounds << " increments in " << ms(took) << " ms, " << freezes
                                                  << " node freezes");
   run(ioc, [&]() -> asio::awaitable<void> {
      BOOST_TEST(co_await gone_everywhere(lock_key(name), 5s), "a lock key is left after the run");
   }());
}

BOOST_AUTO_TEST_SUITE_END()
