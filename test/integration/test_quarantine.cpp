// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// Restart quarantine (issue 8): 3 of 5 nodes are killed and restarted empty while a lease is
// held. Without quarantine a second client gets the lock at once (the hazard, shown first); with
// it, neither an old client nor a new one gets it until the quarantine has passed. A fleet that
// no client has used counts at once, with the default quarantine, and so does one that a
// concurrent first client has half marked (issue 24 (a)). A rolling restart spaced as the README
// says loses no acquisition (issue 24). The README's ACL user: test_acl.cpp.
#include "support/integration.hpp"

#include <algorithm>
#include <random>

namespace test_quarantine {

namespace {

// The run_id of a server's current run.
std::string run_id(redis_server& s)
{
   auto const info = s.text({"INFO", "server"});
   auto const at = info.find("run_id:") + 7;
   return info.substr(at, info.find_first_of("\r\n", at) - at);
}

// A new client locks the name within `opts.wait`, unlocks and closes; the error, if any.
asio::awaitable<error_code> lock_once(asio::io_context& ioc, locksmith::config cfg,
                                      std::string name, locksmith::lock_options opts,
                                      locksmith::report& got)
{
   locksmith::client c{ioc.get_executor(), std::move(cfg)};
   auto [ec, l] = co_await c.async_lock(name, with_report(opts, got), tuple);
   if (!ec)
      co_await c.async_unlock(l, tuple);
   co_await c.async_close(tuple);
   co_return ec;
}

std::string const mark_key = locksmith::config{}.prefix + "trusted-run";

// A config for the fixture's servers with the default quarantine (30 s for 5 nodes), which their
// servers, all started a moment ago, are well within.
locksmith::config with_default_quarantine(servers_fixture const& f)
{
   auto c = f.cfg(200ms);
   c.restart_quarantine = locksmith::config{}.restart_quarantine;
   return c;
}

// A routine restart under a lease that stands on a bare quorum: another client's try holds the
// key on nodes 3 and 4, and node 0, one of the lease's three, restarts empty (`back`) or stays
// down as its holder unlocks. The unlock's verdict, its report, and how long it took.
std::tuple<std::optional<error_code>, locksmith::report, clock_type::duration>
unlock_across_a_restart(five_servers_fixture& f, locksmith::config cfg, bool back)
{
   auto& servers = f.servers;
   locksmith::client c{f.ioc.get_executor(), std::move(cfg)};
   auto const name = locksmith::test::unique_key();
   auto const key = lock_key(name);
   std::string const other = "0123456789abcdef0123456789abcdef";
   for (std::size_t i = 3; i < 5; ++i)
      servers[i]->text({"SET", key, other, "PX", "60000"});
   std::optional<error_code> unlocked;
   locksmith::report diag;
   clock_type::duration took{};
   run(f.ioc, 60s, [&]() -> asio::awaitable<void> {
      auto [ec, l] = co_await c.async_lock(name, {.ttl = 30s, .wait = 10s}, tuple);
      BOOST_TEST_REQUIRE(!ec, ec.message());
      servers[0]->kill();
      auto const t0 = clock_type::now();
      c.async_unlock(l, diag, [&](error_code e) {
         unlocked = e;
         took = clock_type::now() - t0;
      });
      co_await sleep_for(100ms);  // its calls to node 0 fail meanwhile
      if (back)
         servers[0]->restart();
      BOOST_TEST(co_await eventually([&] { return unlocked.has_value(); }, 20s, 10ms));
      if (!back)
         servers[0]->restart();
      co_await c.async_close(tuple);
   }());
   for (std::size_t i = 0; i < servers.size(); ++i)
      BOOST_TEST(servers[i]->text({"GET", key}) == (i < 3 ? "(nil)" : other), "node " << i);
   return {unlocked, diag, took};
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(restart_quarantine, five_servers_fixture, *needs_redis_server())

BOOST_AUTO_TEST_CASE(restarted_nodes_do_not_vote_until_their_quarantine_has_passed)
{
   auto cfg = [&](std::chrono::milliseconds quarantine) {
      auto c = servers_fixture::cfg(200ms);
      c.restart_quarantine = quarantine;
      return c;
   };
   constexpr auto quarantine = 3s;
   locksmith::client holder{ioc.get_executor(), cfg(0ms)};  // its own lock is not the subject
   locksmith::client old_client{ioc.get_executor(), cfg(quarantine)};
   auto const name = "quarantine/" + std::to_string(std::random_device{}());
   // No renewal, and a TTL within the quarantine: what the quarantine protects.
   auto const held = locksmith::lock_options{.ttl = 2s, .wait = 0s, .renew = false};
   run(ioc, 60s, [&]() -> asio::awaitable<void> {
      auto la = co_await holder.async_lock(name, held);
      // The old client found a fresh fleet (every server just started, none marked by a
      // client): its nodes count at once, and it marks their runs as trusted.
      auto [warm_ec, warm] = co_await old_client.async_lock(
         name + "/warm-up", {.ttl = 2s, .wait = 10s, .renew = false}, tuple);
      BOOST_REQUIRE(!warm_ec);
      co_await old_client.async_unlock(warm, tuple);

      auto const before_restart = clock_type::now();
      for (int i = 0; i < 3; ++i)
         servers[i]->restart();

      // The hazard: without quarantine, three empty nodes hand out the held lock.
      {
         locksmith::client careless{ioc.get_executor(), cfg(0ms)};
         auto [ec, l] = co_await careless.async_try_lock(name, held, tuple);
         BOOST_TEST(!ec, "without quarantine the held lock was taken: " << ec.message());
         if (!ec)
            co_await careless.async_unlock(l,
                                           tuple);  // releases its keys on the 3 restarted nodes
         co_await careless.async_close(tuple);
      }

      // With it: a new client and the old one (once reconnected) are refused.
      {
         locksmith::client fresh{ioc.get_executor(), cfg(quarantine)};
         locksmith::report diag;
         auto [ec, l] = co_await fresh.async_try_lock(name, with_report(held, diag), tuple);
         BOOST_TEST(ec, "a new client took the held lock");
         // The attempt ends as soon as the quorum is out of reach, before every node may have
         // answered: a refusal is a restarted node's, and a restarted node never counts.
         std::size_t refused = 0;
         std::string each;
         for (std::size_t i = 0; i < diag.nodes.size(); ++i) {
            auto const& n = diag.nodes[i];
            bool const in_quarantine = n.message.find("quarantine") != std::string::npos;
            refused += in_quarantine ? 1 : 0;
            BOOST_TEST((!in_quarantine || i < 3), "node " << i << " was not restarted");
            BOOST_TEST((i >= 3 || n.vote != locksmith::node_vote::yes), "node " << i);
            each += "\n  " + n.node + ": " + n.message;
         }
         // The two nodes that kept the holder's key say no: a third vote against, a refusal,
         // is what ends the attempt.
         BOOST_TEST(refused >= 1u, each);
         co_await fresh.async_close(tuple);
      }
      asio::steady_timer t{ioc};
      for (auto until = clock_type::now() + 1s; clock_type::now() < until;) {
         auto [ec, l] = co_await old_client.async_try_lock(name, held, tuple);
         BOOST_TEST(ec,
                    "the old client took the held lock "
                       << std::chrono::duration<double>(clock_type::now() - before_restart).count()
                       << " s after the restart");
         if (!ec)
            break;
         t.expires_after(50ms);
         co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
      }

      // Once the quarantine has passed (and the holder's key has expired), it gets the lock.
      locksmith::report got;
      auto [ec, lb] = co_await old_client.async_lock(
         name, {.ttl = 2s, .wait = 15s, .renew = false, .diag = &got}, tuple);
      BOOST_TEST(!ec, ec.message());
      BOOST_TEST(
         (clock_type::now() >= before_restart + quarantine),
         "acquired " << std::chrono::duration<double>(clock_type::now() - before_restart).count()
                     << " s after the restart: " << got.message());
      co_await old_client.async_unlock(lb, tuple);
      co_await holder.async_unlock(la, tuple);
   }());
}

// A fleet deployed a moment ago (every server young, none marked) is not a fleet restarted: a
// client with the default 30 s quarantine locks at once and marks each server's run; a client
// that comes later trusts those marks; a server restarted empty has lost its mark and sits out
// the quarantine, alone.
BOOST_AUTO_TEST_CASE(a_fresh_fleet_counts_at_once_and_a_restarted_node_does_not)
{
   auto cfg = with_default_quarantine(*this);
   auto const name = "fresh-fleet/" + std::to_string(std::random_device{}());
   auto const quick = locksmith::lock_options{.ttl = 5s, .wait = 5s, .renew = false};
   run(ioc, 60s, [&]() -> asio::awaitable<void> {
      locksmith::report got;
      auto ec = co_await lock_once(ioc, cfg, name, quick, got);  // the first client
      BOOST_TEST(!ec, ec.message() << ": " << got.message());
      // Each mark names its own run first, then the fleet's (every run).
      for (std::size_t i = 0; i < servers.size(); ++i) {
         auto const m = servers[i]->text({"GET", mark_key});
         BOOST_TEST(m.starts_with(run_id(*servers[i])), "server " << i << ": " << m);
         for (auto const& s : servers)
            BOOST_TEST(m.find(run_id(*s)) != std::string::npos, "server " << i << ": " << m);
      }

      ec = co_await lock_once(ioc, cfg, name, quick, got);  // a later one
      BOOST_TEST(!ec, ec.message() << ": " << got.message());

      servers[0]->restart();
      BOOST_TEST(servers[0]->text({"EXISTS", mark_key}) == "0");
      {
         std::vector<std::string> warnings;
         auto logged = cfg;
         logged.logger = [&](locksmith::log_level l, std::string_view line) {
            if (l == locksmith::log_level::warning &&
                line.find("restarted recently") != std::string_view::npos)
               warnings.emplace_back(line);
         };
         logged.min_log_level = locksmith::log_level::warning;
         locksmith::client after{ioc.get_executor(), logged};
         locksmith::report diag;
         auto [ec, l] = co_await after.async_lock(name, with_report(quick, diag), tuple);
         BOOST_TEST(!ec, ec.message() << ": " << diag.message());  // 4 of 5 is a quorum
         BOOST_TEST((diag.nodes.at(0).vote != locksmith::node_vote::yes), diag.message());
         // Node 0 alone sits out the quarantine (each node says so once, when it learns it).
         BOOST_TEST(co_await eventually([&] { return !warnings.empty(); }));
         BOOST_TEST(warnings.size() == 1u);
         for (auto const& w : warnings)
            BOOST_TEST(w.starts_with(servers[0]->url()), w);
         if (!ec)
            co_await after.async_unlock(l, tuple);
         co_await after.async_close(tuple);
      }
   }());
}

// Issue 24 (a): a client whose first contact with a new fleet meets it half marked by a
// concurrent first client (its marks written on 2 nodes, not yet on the other 3) locks within a
// wait far shorter than the quarantine: the marks name every run of the fleet, the unmarked
// nodes' too. Marks that name each node's own run alone (what the issue wrote by hand, and what
// older versions wrote) vouch for no sibling: a restart right after them looks the same, so the
// unmarked young nodes sit out their quarantine.
BOOST_AUTO_TEST_CASE(a_new_fleet_half_marked_by_a_concurrent_first_client_counts_at_once)
{
   auto cfg = with_default_quarantine(*this);
   auto const name = "half-marked/" + std::to_string(std::random_device{}());
   auto const within = locksmith::lock_options{.ttl = 5s, .wait = 3s, .renew = false};
   run(ioc, 60s, [&]() -> asio::awaitable<void> {
      locksmith::report got;
      auto ec = co_await lock_once(ioc, cfg, name, within, got);  // the first client
      BOOST_TEST(!ec, ec.message() << ": " << got.message());
      auto const first_mark = servers[0]->text({"GET", mark_key});
      for (std::size_t i = 2; i < servers.size(); ++i)
         BOOST_TEST(servers[i]->text({"DEL", mark_key}) == "1");

      auto const t0 = clock_type::now();
      ec = co_await lock_once(ioc, cfg, name, within, got);  // the concurrent one
      BOOST_TEST(!ec, ec.message() << ": " << got.message());
      BOOST_TEST_MESSAGE("half-marked fleet: locked in " << to_ms(clock_type::now() - t0) << " ms");
      for (std::size_t i = 2; i < servers.size(); ++i)
         BOOST_TEST(servers[i]->text({"GET", mark_key}).starts_with(run_id(*servers[i])));
      BOOST_TEST(servers[0]->text({"GET", mark_key}) == first_mark);  // kept whole
   }());
}

BOOST_AUTO_TEST_CASE(marks_of_single_runs_vouch_for_no_sibling)
{
   auto const cfg = with_default_quarantine(*this);
   for (std::size_t i = 0; i < 2; ++i)
      BOOST_TEST(servers[i]->text({"SET", mark_key, run_id(*servers[i])}) == "OK");
   auto const name = "single-marks/" + std::to_string(std::random_device{}());
   run(ioc, 30s, [&]() -> asio::awaitable<void> {
      locksmith::report got;
      auto const ec = co_await lock_once(ioc, cfg, name, {.ttl = 5s, .wait = 1s}, got);
      BOOST_TEST((ec == error::wait_timeout || ec == error::quorum_unreachable),
                 ec.message() << ": " << got.message());
      std::size_t quarantined = 0;
      for (auto const& n : got.nodes)
         quarantined += n.message.find("in restart quarantine") != std::string::npos ? 1 : 0;
      BOOST_TEST(quarantined >= 1u, got.message());
      // The unmarked ones now hold a mark that vouches for no run: the fleet was in use.
      for (std::size_t i = 2; i < servers.size(); ++i)
         BOOST_TEST(servers[i]->text({"GET", mark_key}) == "-", "server " << i);
   }());
}

// Issue 24 (a), as it was met: concurrent first clients of a new fleet. Each locks a name of its
// own within a wait far shorter than the quarantine, whichever marks it meets.
BOOST_AUTO_TEST_CASE(concurrent_first_clients_of_a_new_fleet_all_lock)
{
   auto const cfg = with_default_quarantine(*this);
   auto const name = "burst/" + std::to_string(std::random_device{}());
   std::vector<error_code> ecs(8);
   std::vector<std::string> why(8);
   run(ioc, 60s, [&]() -> asio::awaitable<void> {
      auto client = [&](std::size_t i) -> asio::awaitable<void> {
         locksmith::report got;
         ecs[i] = co_await lock_once(ioc, cfg, name + "/" + std::to_string(i),
                                     {.ttl = 5s, .wait = 5s, .renew = false}, got);
         why[i] = got.message();
      };
      task_group g{ioc};
      for (std::size_t i = 0; i < ecs.size(); ++i)
         g.spawn(client(i));
      BOOST_TEST(co_await eventually([&] { return g.running() == 0; }, 30s, 10ms));
   }());
   for (std::size_t i = 0; i < ecs.size(); ++i)
      BOOST_TEST(!ecs[i], "client " << i << ": " << ecs[i].message() << ": " << why[i]);
}

// The unlock waits for the node (a plain node's restart, restart_patience: here the node
// timeout, 5 s, for a loaded machine's slow restart) and counts its "no key" as released: the
// node lost the key with its memory, and sits out its quarantine.
BOOST_AUTO_TEST_CASE(an_unlock_waits_out_a_restart_of_a_node_its_bare_quorum_needs)
{
   auto cfg = with_default_quarantine(*this);
   cfg.node_timeout = 5s;
   auto const [unlocked, diag, took] = unlock_across_a_restart(*this, cfg, true);
   BOOST_TEST_REQUIRE(unlocked.has_value());
   BOOST_TEST(!*unlocked, unlocked->message() << ": " << diag.message());
   auto const& n = diag.nodes.at(0);
   BOOST_TEST(n.vote == locksmith::node_vote::yes);
   BOOST_TEST(n.message.find("counted as released") != std::string::npos, n.message);
}

// A node that stays down is an outage: the unlock says that it does not know, after
// restart_patience (2 s), and does not wait for the key to expire.
BOOST_AUTO_TEST_CASE(an_unlock_fails_when_a_node_its_bare_quorum_needs_stays_down)
{
   auto const [unlocked, diag, took] =
      unlock_across_a_restart(*this, with_default_quarantine(*this), false);
   BOOST_TEST_REQUIRE(unlocked.has_value());
   BOOST_TEST((*unlocked == locksmith::error::quorum_unreachable), unlocked->message());
   BOOST_TEST((took >= 2s), "the unlock waited " << std::chrono::duration<double>(took).count()
                                                 << " s for the node");
   BOOST_TEST(diag.nodes.at(0).vote == locksmith::node_vote::failed);
}

// Issue 24: 5 nodes restarted one at a time, each empty, spaced as the README says (the
// quarantine and one second after the previous one answers again), while two clients lock and
// unlock one name: no attempt fails, no two hold it at once, and each restarted node says that it
// sits out its quarantine.
BOOST_AUTO_TEST_CASE(a_rolling_restart_spaced_by_the_rule_loses_no_acquisition)
{
   constexpr auto quarantine = 2s;
   auto cfg = servers_fixture::cfg(1s);  // a loaded machine's stall is not a failure
   cfg.restart_quarantine = quarantine;
   std::vector<std::string> sat_out;
   cfg.logger = [&](locksmith::log_level, std::string_view line) {
      if (line.find("restarted recently") != std::string_view::npos)
         sat_out.emplace_back(line);
   };
   cfg.min_log_level = locksmith::log_level::warning;
   auto const name = "rolling/" + std::to_string(std::random_device{}());
   // A TTL within the quarantine: what it protects.
   auto const opts = locksmith::lock_options{.ttl = 1s, .wait = 10s, .renew = false};
   int inside = 0, overlaps = 0, failures = 0, grants = 0;
   bool done = false;
   std::string failed;
   run(ioc, 90s, [&]() -> asio::awaitable<void> {
      auto worker = [&]() -> asio::awaitable<void> {
         locksmith::client cl{ioc.get_executor(), cfg};
         while (!done) {
            locksmith::report got;
            auto [ec, l] = co_await cl.async_lock(name, with_report(opts, got), tuple);
            if (ec) {
               ++failures;
               failed += "\n  " + ec.message() + ": " + got.message();
               continue;
            }
            ++grants;
            overlaps += ++inside > 1 ? 1 : 0;
            co_await sleep_for(20ms);
            --inside;
            co_await cl.async_unlock(l, tuple);
         }
         co_await cl.async_close(tuple);
      };
      task_group g{ioc};
      for (int c = 0; c < 2; ++c)
         g.spawn(worker());
      // The rule: the next restart once the previous node has been up for the quarantine and
      // one second (Redis counts its uptime in whole seconds); the first once the new fleet
      // is past its own.
      auto const spacing = quarantine + 1s + 200ms;
      co_await sleep_for(spacing);
      for (auto const& s : servers) {
         s->restart();
         co_await sleep_for(spacing);
      }
      done = true;
      BOOST_TEST(co_await eventually([&] { return g.running() == 0; }, 30s, 10ms));
   }());
   BOOST_TEST_MESSAGE("rolling restart: " << grants << " grants, " << failures << " failures, "
                                          << overlaps << " overlaps");
   BOOST_TEST(failures == 0, failed);
   BOOST_TEST(overlaps == 0);
   BOOST_TEST(grants > 10);
   for (auto const& s : servers)
      BOOST_TEST(std::any_of(sat_out.begin(), sat_out.end(),
                             [&](auto const& line) { return line.starts_with(s->url()); }),
                 s->url() << " never sat out its quarantine");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_quarantine
