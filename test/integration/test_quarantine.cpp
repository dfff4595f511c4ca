// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// Restart quarantine (issue 8): 3 of 5 nodes are killed and restarted empty while a lease is
// held. Without quarantine a second client gets the lock at once (the hazard, shown first); with
// it, neither an old client nor a new one gets it until the quarantine has passed. A fleet that
// no client has used counts at once, with the default quarantine.
#include "support/integration.hpp"

#include <random>

BOOST_FIXTURE_TEST_SUITE(restart_quarantine, servers_fixture, *needs_redis_server())

BOOST_AUTO_TEST_CASE(restarted_nodes_do_not_vote_until_their_quarantine_has_passed)
{
   start(5);
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
   run(
      ioc,
      [&]() -> asio::awaitable<void> {
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
            auto [ec, l] = co_await fresh.async_try_lock(name, held, diag, tuple);
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
            BOOST_TEST(
               ec, "the old client took the held lock "
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
            name, {.ttl = 2s, .wait = 15s, .renew = false}, got, tuple);
         BOOST_TEST(!ec, ec.message());
         BOOST_TEST(
            (clock_type::now() >= before_restart + quarantine),
            "acquired " << std::chrono::duration<double>(clock_type::now() - before_restart).count()
                        << " s after the restart: " << got.message());
         co_await old_client.async_unlock(lb, tuple);
         co_await holder.async_unlock(la, tuple);
      }(),
      60s);
}

// A fleet deployed a moment ago (every server young, none marked) is not a fleet restarted: a
// client with the default 30 s quarantine locks at once and marks each server's run; a client
// that comes later trusts those marks; a server restarted empty has lost its mark and sits out
// the quarantine, alone.
BOOST_AUTO_TEST_CASE(a_fresh_fleet_counts_at_once_and_a_restarted_node_does_not)
{
   start(5);
   auto cfg = servers_fixture::cfg(200ms);
   cfg.restart_quarantine = locksmith::config{}.restart_quarantine;  // the default: 30 s for 5
   auto const mark = cfg.prefix + "trusted-run";
   auto const run_id = [&](std::size_t i) {
      auto const info = servers[i]->text({"INFO", "server"});
      auto const at = info.find("run_id:") + 7;
      return info.substr(at, info.find_first_of("\r\n", at) - at);
   };
   auto const name = "fresh-fleet/" + std::to_string(std::random_device{}());
   auto const quick = locksmith::lock_options{.ttl = 5s, .wait = 5s, .renew = false};
   // A new client locks the name within its wait, unlocks and closes.
   auto const lock_once = [&]() -> asio::awaitable<void> {
      locksmith::client c{ioc.get_executor(), cfg};
      locksmith::report got;
      auto [ec, l] = co_await c.async_lock(name, quick, got, tuple);
      BOOST_TEST(!ec, ec.message() << ": " << got.message());
      if (!ec)
         co_await c.async_unlock(l, tuple);
      co_await c.async_close(tuple);
   };
   run(
      ioc,
      [&]() -> asio::awaitable<void> {
         co_await lock_once();  // the first client
         for (std::size_t i = 0; i < servers.size(); ++i)
            BOOST_TEST(servers[i]->text({"GET", mark}) == run_id(i), "server " << i);

         co_await lock_once();  // a later one

         servers[0]->restart();
         BOOST_TEST(servers[0]->text({"EXISTS", mark}) == "0");
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
            auto [ec, l] = co_await after.async_lock(name, quick, diag, tuple);
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
      }(),
      60s);
}

BOOST_AUTO_TEST_SUITE_END()
