// A Redis Cluster's release messages on sharded pub/sub, against real processes: a waiter woken
// by SPUBLISH on the master of its name's slot (and by nothing on the cluster bus), also after the
// slot migrated, and after its master's subscriber connection dropped.
#include "cluster_fixture.hpp"

#include "support/server_checks.hpp"
#include "support/subscribe_fixture.hpp"

#include <functional>
#include <string>

namespace test_cluster_pubsub {

namespace {

using namespace locksmith::test;

// Client a holds `name` (TTL 30 s) while client b waits for it (subscribe, `wait`). Once b is
// sharded-subscribed at master `first` and has tried twice, `meanwhile` runs and names the master
// that must carry the release; a's release then wakes b by that master's SPUBLISH, long before
// a's TTL, and b holds the key there.
void wake_by_sharded_release(
   cluster_fixture& f, std::string const& name, std::size_t first, std::chrono::seconds wait,
   std::function<asio::awaitable<std::size_t>(outcome const&)> const& meanwhile)
{
   auto& cluster = f.cluster;
   locksmith::client a{f.ioc.get_executor(), f.cfg()}, b{f.ioc.get_executor(), f.cfg()};
   auto const channel = release_channel(name);
   outcome wb;
   locksmith::test::event b_done{f.ioc};
   task_group tasks{f.ioc};
   run(f.ioc, 40s, [&]() -> asio::awaitable<void> {
      auto la = co_await a.async_lock(name, {.ttl = 30s, .wait = 10s});
      auto const locked_at = clock_type::now();
      tasks.spawn(wait_for_lock(b, name, locksmith::test::subscribe(30s, wait), wb, b_done));
      BOOST_REQUIRE(co_await eventually(
         [&] { return f.shard_subscribers(first, channel) == 1 && wb.diag.attempts >= 2; }, 10s,
         20ms));
      auto const at = co_await meanwhile(wb);
      BOOST_TEST(!b_done.is_set());

      auto const spublished = calls_of(cluster.master(at).commandstats(), "spublish");
      auto const unlocked_at = clock_type::now();
      co_await a.async_unlock(la);
      BOOST_REQUIRE(co_await b_done.wait(10s));
      BOOST_TEST_MESSAGE("wake latency: " << to_ms(*wb.at - unlocked_at) << " ms");
      BOOST_TEST(!wb.ec);
      BOOST_TEST((*wb.at - locked_at < 25s));  // the holder's key would have lived 30 s
      BOOST_TEST(cluster.master(at).text({"GET", lock_key(name)}) == wb.held.token());
      BOOST_TEST(calls_of(cluster.master(at).commandstats(), "spublish") > spublished);
      co_await b.async_unlock(wb.held);
      co_await a.async_close();
      co_await b.async_close();
   }());
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(cluster, cluster_fixture,
                         *needs_redis_server() * locksmith::test::needs_cluster_server())

// A waiter on master 2's slots, woken by sharded pub/sub: it SSUBSCRIBEs at that master (PUBSUB
// SHARDNUMSUB there, and no plain subscription anywhere), the release script SPUBLISHes there
// (INFO commandstats), and no master runs PUBLISH, which the cluster bus would carry to every
// node. The holder's TTL (30 s) is far off: only the message explains the waiter's lock.
BOOST_AUTO_TEST_CASE(a_release_wakes_a_waiter_by_sharded_pubsub_on_its_master)
{
   auto const name = name_on(2);
   auto const channel = release_channel(name);
   wake_by_sharded_release(*this, name, 2, 20s,
                           [&](outcome const&) -> asio::awaitable<std::size_t> {
                              for (std::size_t i = 0; i < cluster.size(); ++i) {
                                 BOOST_TEST(subscribers(i, channel) == 0);
                                 BOOST_TEST(shard_subscribers(i, channel) == (i == 2 ? 1 : 0));
                              }
                              co_return 2;
                           });
   BOOST_TEST(no_plain_publish());
   // Nor did the release cross the cluster bus (no replicas: nobody else serves the shard).
   for (std::size_t i = 0; i < cluster.size(); ++i)
      BOOST_TEST(
         cluster.master(i).text({"CLUSTER", "INFO"}).find("cluster_stats_messages_publish_") ==
         std::string::npos);
}

// A waiter whose name's slot moves to another master while it waits. The old master drops the
// sharded subscription when it gives the slot away (sunsubscribe), the client subscribes again at
// the new one, and the release there (SPUBLISH on the new master) wakes the waiter long before
// the holder's TTL.
BOOST_AUTO_TEST_CASE(a_waiter_follows_its_slot_and_wakes_on_the_new_master)
{
   auto const name = name_on(0);
   auto const channel = release_channel(name);
   wake_by_sharded_release(
      *this, name, 0, 25s, [&](outcome const& wb) -> asio::awaitable<std::size_t> {
         cluster.start_migration(slot_of(name), 0, 1);
         cluster.end_migration(slot_of(name), 1);
         BOOST_REQUIRE(co_await eventually(
            [&] { return shard_subscribers(1, channel) == 1 && wb.diag.attempts >= 2; }, 10s,
            20ms));
         BOOST_TEST(shard_subscribers(0, channel) == 0);
         co_return 1;
      });
   BOOST_TEST(no_plain_publish());
   BOOST_TEST(no_crossslot());
}

// Boost.Redis restores plain subscriptions after a reconnect, not sharded ones: the client does.
// The subscriber connections on the waiter's master are killed (CLIENT KILL TYPE pubsub); once
// they are back, the waiter's channel is sharded-subscribed there again, and the release wakes it.
BOOST_AUTO_TEST_CASE(a_waiter_subscribes_again_after_its_masters_connection_drops)
{
   auto const name = name_on(1);
   auto const channel = release_channel(name);
   auto const connections = [&] {
      auto const info = cluster.master(1).text({"INFO", "stats"});
      auto const at = info.find("total_connections_received:");
      return std::stoll(info.substr(at + std::string_view{"total_connections_received:"}.size()));
   };
   wake_by_sharded_release(
      *this, name, 1, 25s, [&](outcome const&) -> asio::awaitable<std::size_t> {
         auto const before = connections();
         cluster.master(1).command({"CLIENT", "KILL", "TYPE", "pubsub"});
         BOOST_REQUIRE(co_await eventually(
            [&] { return connections() > before && shard_subscribers(1, channel) == 1; }, 10s,
            20ms));
         co_return 1;
      });
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_cluster_pubsub
