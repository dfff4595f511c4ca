// The client's log lines and metrics against real redis-servers: what they count for holders and
// waiters, a lost lease, a killed node of three (logged once, its password never shown), and the
// NOSCRIPT fallback after SCRIPT FLUSH.
#include "support/integration.hpp"
#include "support/prometheus.hpp"
#include "support/server_version.hpp"
#include "support/subscribe_fixture.hpp"

#include <algorithm>
#include <utility>

namespace test_observability {

namespace {

using locksmith::log_level;

// What a client logged, in order.
struct log_lines {
   std::vector<std::pair<log_level, std::string>> lines;

   locksmith::config into(locksmith::config cfg, log_level min = log_level::info)
   {
      cfg.logger = [this](log_level l, std::string_view s) { lines.emplace_back(l, s); };
      cfg.min_log_level = min;
      return cfg;
   }

   std::size_t count(log_level l, std::string_view part) const
   {
      return static_cast<std::size_t>(std::count_if(lines.begin(), lines.end(), [&](auto const& x) {
         return x.first == l && x.second.find(part) != std::string::npos;
      }));
   }

   std::string all() const
   {
      std::string s;
      for (auto const& [l, line] : lines)
         s += std::string{locksmith::to_string(l)} + ": " + line + '\n';
      return s;
   }
};

std::uint64_t failures(locksmith::metrics_snapshot const& m, locksmith::error e)
{
   for (auto const& f : m.failures)
      if (f.ec == e)
         return f.count;
   return 0;
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(observability, server_fixture, *needs_redis_server())

BOOST_AUTO_TEST_CASE(a_holder_and_a_waiter_are_counted)
{
   locksmith::client a{ioc.get_executor(), cfg()}, b{ioc.get_executor(), cfg()};
   run(ioc, [&]() -> asio::awaitable<void> {
      // A holder that never renews nor unlocks: the waiter wakes when its key is due to expire.
      auto held = co_await a.async_lock(name, {.ttl = 1s, .renew = false});
      auto [taken, none] = co_await b.async_try_lock(name, {}, tuple);
      BOOST_TEST(taken == error::lock_taken);
      auto l = co_await b.async_lock(name, {.ttl = 5s, .wait = 5s});
      co_await b.async_unlock(l);
   }());
   auto const ma = a.metrics(), mb = b.metrics();
   BOOST_TEST(ma.acquisitions == 1u);
   BOOST_TEST(ma.votes.size() == 1u);
   BOOST_TEST(ma.votes[0].node == srv.url());
   BOOST_TEST(ma.votes[0].yes == 1u);
   BOOST_TEST(mb.acquisitions == 1u);
   BOOST_TEST(failures(mb, error::lock_taken) == 1u);
   BOOST_TEST(mb.votes[0].no >= 2u);  // the try, and the waiter's first attempt
   BOOST_TEST(mb.wakes.ttl_timer >= 1u);
   BOOST_TEST(mb.wait.count == 1u);
   BOOST_TEST(mb.wait.sum > 0.5);  // it waited for most of a's second
   BOOST_TEST(mb.hold.count == 1u);
   auto const text = locksmith::to_prometheus(mb);
   auto const t = locksmith::test::parse_prometheus(text);
   BOOST_TEST(*t.value("locksmith_acquisitions_total") == 1);
   BOOST_TEST(*t.value("locksmith_lock_failures_total", {{"error", "lock_taken"}}) == 1);
   BOOST_TEST(*t.value("locksmith_lock_wait_seconds_count") == 1);
}

// A lease held past ttl/3 is renewed by its watchdog, each time with about two thirds of its
// validity left: that slack is recorded once per renewal, above zero and within the TTL.
BOOST_AUTO_TEST_CASE(a_renewal_records_the_validity_it_had_left)
{
   locksmith::client c{ioc.get_executor(), cfg()};
   constexpr auto ttl = 600ms;
   run(ioc, [&]() -> asio::awaitable<void> {
      auto l = co_await c.async_lock(name, {.ttl = ttl});
      // Renewed at ttl/3, then again ttl/3 after that.
      BOOST_TEST(co_await eventually([&] { return c.metrics().renewals >= 2; }, 5s));
      co_await c.async_unlock(l);
   }());
   auto const m = c.metrics();
   auto const& slack = m.renewal_slack;
   BOOST_TEST(m.renewals >= 2u);
   BOOST_TEST(slack.count == m.renewals);
   BOOST_TEST_REQUIRE(slack.count > 0u);
   auto const mean = slack.sum / static_cast<double>(slack.count);
   BOOST_TEST_MESSAGE("mean renewal slack: " << mean * 1000 << " ms");
   // About 400 ms each: more than ttl/6 leaves room for a renewal late on a loaded machine.
   BOOST_TEST(mean > 0.1);
   BOOST_TEST(mean <= 0.6);
   // None far above the TTL: every count is in a bucket whose bound is at most 1 s.
   auto const above = std::upper_bound(slack.bounds.begin(), slack.bounds.end(), 0.6);
   BOOST_TEST_REQUIRE((above != slack.bounds.end()));
   auto const first_empty = static_cast<std::size_t>(above - slack.bounds.begin()) + 1;
   for (auto i = first_empty; i < slack.counts.size(); ++i)
      BOOST_TEST(slack.counts[i] == 0u, "bucket " << i);
   auto const t = locksmith::test::parse_prometheus(locksmith::to_prometheus(m));
   BOOST_TEST(*t.value("locksmith_renewal_slack_seconds_count") ==
              static_cast<double>(slack.count));
}

// A waiter asleep on the release channel, woken by the holder's unlock long before the holder's
// key would expire: a message wake, no TTL one.
BOOST_FIXTURE_TEST_CASE(a_waiter_woken_by_a_release_counts_a_message_wake,
                        locksmith::test::subscribe_fixture)
{
   locksmith::client a{ioc.get_executor(), cfg()}, b{ioc.get_executor(), cfg()};
   locksmith::test::outcome wb;
   event b_done{ioc};
   task_group tasks{ioc};
   run(ioc, 30s, [&]() -> asio::awaitable<void> {
      auto held = co_await a.async_lock(name, {.ttl = 30s});
      tasks.spawn(
         locksmith::test::wait_for_lock(b, name, locksmith::test::subscribe(5s, 20s), wb, b_done));
      BOOST_TEST_REQUIRE(co_await sleeps_subscribed(name, wb.diag));
      auto const before = b.metrics().wakes;
      auto const unlocked_at = clock_type::now();
      co_await a.async_unlock(held);
      BOOST_TEST_REQUIRE(co_await b_done.wait(10s));
      BOOST_TEST_REQUIRE(!wb.ec, wb.ec.message());
      BOOST_TEST((*wb.at - unlocked_at < 10s));  // the holder's key would have lived 30 s
      auto const after = b.metrics().wakes;
      BOOST_TEST(after.message == before.message + 1);
      BOOST_TEST(after.ttl_timer == 0u);
      BOOST_TEST(after.spin == 0u);
      co_await b.async_unlock(wb.held);
   }());
}

BOOST_AUTO_TEST_CASE(a_lost_lease_is_counted_and_logged)
{
   log_lines log;
   locksmith::client c{ioc.get_executor(), log.into(cfg())};
   run(ioc, 10s, [&]() -> asio::awaitable<void> {
      auto l = co_await c.async_lock(name, {.ttl = 400ms});
      srv.pause();
      auto [ec] = co_await l.async_wait_lost(asio::cancel_after(5s, tuple));
      BOOST_TEST(!ec);
      srv.resume();
      auto [unlocked] = co_await c.async_unlock(l, tuple);
      BOOST_TEST(unlocked == error::lease_lost);
   }());
   auto const m = c.metrics();
   BOOST_TEST(m.leases_lost == 1u);
   BOOST_TEST(m.renewal_failures >= 1u);
   BOOST_TEST(m.hold.count == 1u);
   BOOST_TEST(log.count(log_level::error, "lease '" + name + "'") == 1u, log.all());
   BOOST_TEST(log.count(log_level::warning, "renewal of '" + name + "' failed") >= 1u, log.all());
}

BOOST_AUTO_TEST_CASE(a_noscript_fallback_is_logged)
{
   log_lines log;
   locksmith::client c{ioc.get_executor(), log.into(cfg())};
   run(ioc, [&]() -> asio::awaitable<void> {
      auto l = co_await c.async_lock(name);  // the scripts are loaded by now
      srv.command({"SCRIPT", "FLUSH"});
      co_await c.async_unlock(l);
   }());
   BOOST_TEST(log.count(log_level::info, srv.url() + ": NOSCRIPT") == 1u, log.all());
}

BOOST_AUTO_TEST_CASE(a_node_in_restart_quarantine_is_logged)
{
   log_lines log;
   auto quarantined = cfg();
   quarantined.restart_quarantine = 30s;  // the server has just started
   // ... and a client trusted an earlier run of it: a restart, not a new fleet.
   srv.command({"SET", quarantined.prefix + "trusted-run", "an-earlier-run"});
   locksmith::client c{ioc.get_executor(), log.into(quarantined)};
   run(ioc, [&]() -> asio::awaitable<void> {
      BOOST_TEST(co_await eventually([&] {
                    return log.count(log_level::warning, srv.url() + ": restarted recently") == 1;
                 }),
                 log.all());
      // Closed while `log` lives: the connections log until they end.
      co_await c.async_close(tuple);
   }());
}

// The client's connections end after it: none of their lines may reach a logger whose state
// went with the client. Here the client is destroyed while its connections wait for the answer
// to their setup (HELLO) from a frozen server, and Boost.Redis logs that setup's failure as
// they end.
BOOST_AUTO_TEST_CASE(no_line_reaches_the_logger_after_the_client_is_destroyed)
{
   std::size_t before = 0, after = 0;
   bool destroyed = false;
   auto with_log = cfg();
   with_log.min_log_level = log_level::debug;
   with_log.logger = [&](log_level, std::string_view) { ++(destroyed ? after : before); };
   srv.pause();  // connections are accepted (the listen backlog) and never answered
   auto c = std::make_unique<locksmith::client>(ioc.get_executor(), with_log);
   run(ioc, [&]() -> asio::awaitable<void> {
      co_await eventually([&] { return before > 0; });  // "Connected to ..."
      c.reset();
      destroyed = true;
   }());
   srv.resume();
   // What the connections still do as they end runs here.
   ioc.restart();
   ioc.run_for(1s);
   BOOST_TEST(before > 0u);
   BOOST_TEST(after == 0u);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_FIXTURE_TEST_SUITE(observability_redlock, servers_fixture, *needs_redis_server())

// A dead node of three costs no quorum; the log says so once, at warning, and names it without
// its password; its votes are counted as failed or missing.
BOOST_AUTO_TEST_CASE(a_dead_node_is_logged_once_without_its_password)
{
   start(3);
   auto cfg = test_config({});
   for (auto const& s : servers) {
      std::vector<std::string> user{"ACL", "SETUSER", "locker", "on", ">s3cret-pw", "~*", "+@all"};
      for (auto const& rule : locksmith::test::acl_channels("*"))
         user.push_back(rule);
      s->command(user);
      cfg.nodes.push_back("redis://locker:s3cret-pw@127.0.0.1:" + std::to_string(s->port()));
   }
   log_lines log;
   locksmith::client c{ioc.get_executor(), log.into(cfg)};
   auto const dead = "redis://locker:***@127.0.0.1:" + std::to_string(servers[2]->port());
   constexpr int cycles = 5;
   run(ioc, [&]() -> asio::awaitable<void> {
      auto const name = unique_key();
      auto first = co_await c.async_lock(name);  // connected everywhere
      co_await c.async_unlock(first);
      servers[2]->kill();
      for (int i = 0; i < cycles; ++i) {
         auto l = co_await c.async_lock(name);
         co_await c.async_unlock(l);
      }
      // The timed-out calls of the dead node answer after the quorum's decision.
      co_await eventually([&] { return log.count(log_level::warning, "timed out") > 0; });
   }());
   BOOST_TEST_MESSAGE(log.all());
   BOOST_TEST(log.all().find("s3cret-pw") == std::string::npos, log.all());
   for (auto const& [level, line] : log.lines)
      if (level >= log_level::warning)
         BOOST_TEST(line.starts_with(dead), line);
   // Warned once per thing that went wrong, not once per call or reconnection attempt: each
   // connection lost, and the calls that time out. (The telemetry's "failed in acquire" line may
   // also quote "a call timed out" as its reason, hence the whole phrase.)
   BOOST_TEST(log.count(log_level::warning, "a call timed out; no more are sent") == 1u, log.all());
   BOOST_TEST(log.count(log_level::warning, dead + " (commands)") == 1u, log.all());
   BOOST_TEST(log.count(log_level::warning, dead + " (pub/sub)") == 1u, log.all());
   auto const m = c.metrics();
   BOOST_TEST(m.acquisitions == std::uint64_t{cycles + 1});
   BOOST_TEST_REQUIRE(m.votes.size() == 3u);
   BOOST_TEST(m.votes[2].node == dead);
   // Every attempt counts once per node: a vote, or none when the quorum was decided before it.
   for (auto const& v : m.votes)
      BOOST_TEST(v.yes + v.no + v.failed + v.none == std::uint64_t{cycles + 1});
   BOOST_TEST(m.votes[2].yes <= 1u);
   BOOST_TEST(m.votes[0].failed + m.votes[1].failed == 0u);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_observability
