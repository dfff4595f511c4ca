// A Redis Cluster as one node (redis+cluster://), against real processes: three masters that
// share the slots. Locks on every master, mutual exclusion over names of every shard, a waiter
// woken by the release's sharded message (also after its slot moved), and a lease that keeps its
// slot while the slot moves to another master.
#include "support/cluster_group.hpp"
#include "support/contention.hpp"
#include "support/integration.hpp"
#include "support/subscribe_fixture.hpp"

#include <locksmith/detail/cluster.hpp>

#include <algorithm>
#include <set>
#include <string>

namespace {

using locksmith::detail::hash_slot;
using locksmith::test::calls_of;
using locksmith::test::cluster_group;
using locksmith::test::outcome;
using locksmith::test::wait_for_lock;

struct cluster_fixture {
   cluster_group cluster;
   asio::io_context ioc;

   explicit cluster_fixture(bool with_replicas = false)
       : cluster{3, with_replicas}
   {}

   void teardown() { locksmith::test::expect_no_work_left(ioc); }

   // A generous node timeout: a loaded 2-core machine.
   locksmith::config cfg() const { return test_config({cluster.url()}, 1s); }

   static std::uint16_t slot_of(std::string const& name) { return hash_slot(lock_key(name)); }

   // A fresh name whose slot master `i` was given.
   std::string name_on(std::size_t i) const
   {
      for (int k = 0;; ++k) {
         auto name = unique_key() + "/" + std::to_string(k);
         if (cluster.first_owner(slot_of(name)) == i)
            return name;
      }
   }

   // The errors that master `i` answered, counted by their first word (INFO errorstats).
   std::string errors(std::size_t i) { return cluster.master(i).text({"INFO", "errorstats"}); }

   // The plain and the sharded subscribers of a channel at master `i`.
   long long subscribers(std::size_t i, std::string const& channel)
   {
      return count_of(cluster.master(i).command({"PUBSUB", "NUMSUB", channel}));
   }
   long long shard_subscribers(std::size_t i, std::string const& channel)
   {
      return count_of(cluster.master(i).command({"PUBSUB", "SHARDNUMSUB", channel}));
   }
   static long long count_of(locksmith::test::reply const& r)
   {
      return r.elements.size() == 2u ? r.elements[1].integer : -1;
   }

   // True when no master ran a PUBLISH: a cluster's releases publish with SPUBLISH.
   bool no_plain_publish()
   {
      for (std::size_t i = 0; i < cluster.size(); ++i)
         if (calls_of(cluster.master(i).commandstats(), "publish") != 0)
            return false;
      return true;
   }

   // True when no master ever answered CROSSSLOT.
   bool no_crossslot()
   {
      for (std::size_t i = 0; i < cluster.size(); ++i)
         if (errors(i).find("CROSSSLOT") != std::string::npos)
            return false;
      return true;
   }
};

// Three masters, each with a replica that takes over within a few seconds of its death.
struct failover_fixture : cluster_fixture {
   failover_fixture()
       : cluster_fixture(true)
   {}

   // A replication offset from INFO replication; -1 when it is not there.
   static long long offset(redis_server const& s, std::string const& field)
   {
      auto const info = s.text({"INFO", "replication"});
      auto const at = info.find(field + ":");
      return at == std::string::npos ? -1 : std::stoll(info.substr(at + field.size() + 1));
   }

   // True when master `i`'s replica is a master, as `CLUSTER NODES` of a surviving node says.
   bool promoted(std::size_t i, std::size_t asked)
   {
      auto const id = cluster.replica(i).text({"CLUSTER", "MYID"});
      auto const masters = cluster_group::live_masters(cluster.master(asked));
      return std::find(masters.begin(), masters.end(), id) != masters.end() &&
             cluster.master(asked).text({"CLUSTER", "INFO"}).find("cluster_state:ok") !=
                std::string::npos;
   }
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(cluster, cluster_fixture, *needs_redis_server())

// Each lock's keys land on the master of its slot, and the first calls (sent to the first seed
// before the slot map is known, or after) follow MOVED. Leases taken together on every master
// fall due together, and are renewed in one call per slot, never in one that spans slots.
BOOST_AUTO_TEST_CASE(names_on_every_master_lock_renew_and_unlock)
{
   // A short node timeout leaves room for a short TTL (lock_options::loss_margin).
   locksmith::client c{ioc.get_executor(), test_config({cluster.url()}, 300ms)};
   std::vector<std::string> names;
   for (std::size_t i = 0; i < cluster.size(); ++i)
      names.push_back(name_on(i));
   run(
      ioc,
      [&]() -> asio::awaitable<void> {
         std::vector<lease> held;
         for (auto const& name : names)
            held.push_back(co_await c.async_lock(name, {.ttl = 2s, .wait = 10s}));
         for (std::size_t i = 0; i < names.size(); ++i) {
            BOOST_TEST(cluster.master(i).text({"GET", lock_key(names[i])}) == held[i].token());
            BOOST_TEST(cluster.master(i).text({"EXISTS", fence_key(names[i])}) == "1");
         }
         // 1.5 TTL: each lease is renewed at least twice, or lost.
         asio::steady_timer pause{ioc, 3s};
         co_await pause.async_wait(asio::use_awaitable);
         for (std::size_t i = 0; i < names.size(); ++i) {
            BOOST_TEST(!held[i].lost());
            co_await c.async_unlock(held[i]);
            BOOST_TEST(cluster.master(i).text({"GET", lock_key(names[i])}) == "(nil)");
         }
         co_await c.async_close();
      }(),
      30s);
   BOOST_TEST(no_crossslot());
}

// Every kind of lease, on a name of every master: their scripts touch several keys of the name
// (holders, readers, queues), which share its slot, so none meets CROSSSLOT.
BOOST_AUTO_TEST_CASE(every_kind_of_lease_works_on_every_master)
{
   locksmith::client c{ioc.get_executor(), cfg()};
   locksmith::lock_options const opts{.ttl = 10s, .wait = 10s};
   run(
      ioc,
      [&]() -> asio::awaitable<void> {
         for (std::size_t i = 0; i < cluster.size(); ++i) {
            std::vector<lease> held;
            held.push_back(co_await locksmith::async_acquire_permit(c, name_on(i), 2, opts));
            held.push_back(co_await locksmith::async_read_lock(c, name_on(i), opts));
            held.push_back(co_await locksmith::async_read_lock(c, name_on(i), opts));
            held.push_back(co_await locksmith::async_write_lock(c, name_on(i), opts));
            held.push_back(co_await locksmith::async_lock_reentrant(c, name_on(i), "me", opts));
            auto fair = opts;
            fair.fair = true;
            held.push_back(co_await c.async_lock(name_on(i), fair));
            for (auto& l : held) {
               BOOST_TEST(l.held());
               co_await c.async_unlock(l);
            }
         }
         co_await c.async_close();
      }(),
      60s);
   BOOST_TEST(no_crossslot());
}

// 64 coroutines in 2 clients on 12 names that cover the 3 masters: no two holders of a name at
// once, fencing tokens that rise, no error, and no CROSSSLOT.
BOOST_AUTO_TEST_CASE(mutual_exclusion_on_names_of_every_shard)
{
   constexpr int names = 12;
   std::string prefix;
   for (int attempt = 0;; ++attempt) {
      prefix = unique_key() + "/" + std::to_string(attempt) + "/";
      std::set<std::size_t> owners;
      for (int k = 0; k < names; ++k)
         owners.insert(cluster.first_owner(slot_of(prefix + std::to_string(k))));
      if (owners.size() == cluster.size())
         break;
   }
   locksmith::test::contention_shape const s{
      .clients = 2, .coroutines = 32, .names = names, .cycles = 4000, .names_prefix = prefix};
   auto const t = locksmith::test::run_contention({cluster.url()}, s);
   BOOST_TEST_MESSAGE("cluster of 3: " << t.cycles << " cycles ("
                                       << static_cast<long>(t.per_second()) << "/s), " << t.overlaps
                                       << " overlaps, " << t.errors << " errors");
   for (auto const& [kind, n] : t.kinds)
      BOOST_TEST_MESSAGE("  " << kind << ": " << n);
   BOOST_TEST(t.cycles >= s.cycles);
   BOOST_TEST(t.overlaps == 0);
   BOOST_TEST(t.inversions == 0);
   BOOST_TEST(t.errors == 0);
   for (std::size_t i = 0; i < cluster.size(); ++i)
      BOOST_TEST(calls_of(cluster.master(i).commandstats(), "evalsha") > 0);
   BOOST_TEST(no_crossslot());
}

// A waiter on master 2's slots, woken by sharded pub/sub: it SSUBSCRIBEs at that master (PUBSUB
// SHARDNUMSUB there, and no plain subscription anywhere), the release script SPUBLISHes there
// (INFO commandstats), and no master runs PUBLISH, which the cluster bus would carry to every
// node. The holder's TTL (30 s) is far off: only the message explains the waiter's lock.
BOOST_AUTO_TEST_CASE(a_release_wakes_a_waiter_by_sharded_pubsub_on_its_master)
{
   locksmith::client a{ioc.get_executor(), cfg()}, b{ioc.get_executor(), cfg()};
   auto const name = name_on(2);
   auto const channel = release_channel(name);
   outcome wb;
   locksmith::test::event b_done{ioc};
   task_group tasks{ioc};
   run(
      ioc,
      [&]() -> asio::awaitable<void> {
         auto la = co_await a.async_lock(name, {.ttl = 30s, .wait = 10s});
         auto const locked_at = clock_type::now();
         tasks.spawn(wait_for_lock(b, name, locksmith::test::subscribe(30s, 20s), wb, b_done));
         auto const subscribed = [&] {
            return shard_subscribers(2, channel) == 1 && wb.diag.attempts >= 2;
         };
         BOOST_REQUIRE(co_await eventually(subscribed, 10s, 20ms));
         BOOST_TEST(!b_done.is_set());
         for (std::size_t i = 0; i < cluster.size(); ++i) {
            BOOST_TEST(subscribers(i, channel) == 0);
            BOOST_TEST(shard_subscribers(i, channel) == (i == 2 ? 1 : 0));
         }
         auto const spublished = calls_of(cluster.master(2).commandstats(), "spublish");
         auto const unlocked_at = clock_type::now();
         co_await a.async_unlock(la);
         BOOST_REQUIRE(co_await b_done.wait(10s));
         BOOST_TEST_MESSAGE("wake latency: " << to_ms(*wb.at - unlocked_at) << " ms");
         BOOST_TEST(!wb.ec);
         BOOST_TEST((*wb.at - locked_at < 25s));  // the holder's key would have lived 30 s
         BOOST_TEST(cluster.master(2).text({"GET", lock_key(name)}) == wb.held.token());
         BOOST_TEST(calls_of(cluster.master(2).commandstats(), "spublish") > spublished);
         BOOST_TEST(no_plain_publish());
         // Nor did the release cross the cluster bus (no replicas: nobody else serves the shard).
         for (std::size_t i = 0; i < cluster.size(); ++i)
            BOOST_TEST(cluster.master(i)
                          .text({"CLUSTER", "INFO"})
                          .find("cluster_stats_messages_publish_") == std::string::npos);
         co_await b.async_unlock(wb.held);
         co_await a.async_close();
         co_await b.async_close();
      }(),
      40s);
}

// A waiter whose name's slot moves to another master while it waits. The old master drops the
// sharded subscription when it gives the slot away (sunsubscribe), the client subscribes again at
// the new one, and the release there (SPUBLISH on the new master) wakes the waiter long before
// the holder's TTL.
BOOST_AUTO_TEST_CASE(a_waiter_follows_its_slot_and_wakes_on_the_new_master)
{
   locksmith::client a{ioc.get_executor(), cfg()}, b{ioc.get_executor(), cfg()};
   auto const name = name_on(0);
   auto const channel = release_channel(name);
   outcome wb;
   locksmith::test::event b_done{ioc};
   task_group tasks{ioc};
   run(
      ioc,
      [&]() -> asio::awaitable<void> {
         auto la = co_await a.async_lock(name, {.ttl = 30s, .wait = 10s});
         auto const locked_at = clock_type::now();
         tasks.spawn(wait_for_lock(b, name, locksmith::test::subscribe(30s, 25s), wb, b_done));
         auto const on_master = [&](std::size_t i) {
            return [&, i] { return shard_subscribers(i, channel) == 1 && wb.diag.attempts >= 2; };
         };
         BOOST_REQUIRE(co_await eventually(on_master(0), 10s, 20ms));

         cluster.start_migration(slot_of(name), 0, 1);
         cluster.end_migration(slot_of(name), 1);
         BOOST_REQUIRE(co_await eventually(on_master(1), 10s, 20ms));
         BOOST_TEST(shard_subscribers(0, channel) == 0);
         BOOST_TEST(!b_done.is_set());

         auto const spublished = calls_of(cluster.master(1).commandstats(), "spublish");
         auto const unlocked_at = clock_type::now();
         co_await a.async_unlock(la);
         BOOST_REQUIRE(co_await b_done.wait(10s));
         BOOST_TEST_MESSAGE("wake latency: " << to_ms(*wb.at - unlocked_at) << " ms");
         BOOST_TEST(!wb.ec);
         BOOST_TEST((*wb.at - locked_at < 25s));  // the holder's key would have lived 30 s
         BOOST_TEST(cluster.master(1).text({"GET", lock_key(name)}) == wb.held.token());
         BOOST_TEST(calls_of(cluster.master(1).commandstats(), "spublish") > spublished);
         BOOST_TEST(no_plain_publish());
         co_await b.async_unlock(wb.held);
         co_await a.async_close();
         co_await b.async_close();
      }(),
      40s);
   BOOST_TEST(no_crossslot());
}

// Boost.Redis restores plain subscriptions after a reconnect, not sharded ones: the client does.
// The subscriber connections on the waiter's master are killed (CLIENT KILL TYPE pubsub); once
// they are back, the waiter's channel is sharded-subscribed there again, and the release wakes it.
BOOST_AUTO_TEST_CASE(a_waiter_subscribes_again_after_its_masters_connection_drops)
{
   locksmith::client a{ioc.get_executor(), cfg()}, b{ioc.get_executor(), cfg()};
   auto const name = name_on(1);
   auto const channel = release_channel(name);
   outcome wb;
   locksmith::test::event b_done{ioc};
   task_group tasks{ioc};
   auto const connections = [&] {
      auto const info = cluster.master(1).text({"INFO", "stats"});
      auto const at = info.find("total_connections_received:");
      return std::stoll(info.substr(at + std::string_view{"total_connections_received:"}.size()));
   };
   run(
      ioc,
      [&]() -> asio::awaitable<void> {
         auto la = co_await a.async_lock(name, {.ttl = 30s, .wait = 10s});
         auto const locked_at = clock_type::now();
         tasks.spawn(wait_for_lock(b, name, locksmith::test::subscribe(30s, 25s), wb, b_done));
         BOOST_REQUIRE(co_await eventually(
            [&] { return shard_subscribers(1, channel) == 1 && wb.diag.attempts >= 2; }, 10s,
            20ms));

         auto const before = connections();
         cluster.master(1).command({"CLIENT", "KILL", "TYPE", "pubsub"});
         BOOST_REQUIRE(co_await eventually(
            [&] { return connections() > before && shard_subscribers(1, channel) == 1; }, 10s,
            20ms));
         BOOST_TEST(!b_done.is_set());

         auto const spublished = calls_of(cluster.master(1).commandstats(), "spublish");
         co_await a.async_unlock(la);
         BOOST_REQUIRE(co_await b_done.wait(10s));
         BOOST_TEST(!wb.ec);
         BOOST_TEST((*wb.at - locked_at < 25s));  // the holder's key would have lived 30 s
         BOOST_TEST(cluster.master(1).text({"GET", lock_key(name)}) == wb.held.token());
         BOOST_TEST(calls_of(cluster.master(1).commandstats(), "spublish") > spublished);
         co_await b.async_unlock(wb.held);
         co_await a.async_close();
         co_await b.async_close();
      }(),
      40s);
}

// A lease whose slot moves to another master while it is held. While the keys are on the new
// master and the old one still owns the slot, renewals follow ASK (with ASKING); once the new
// master owns it, MOVED. The lease, renewed every TTL/3, is never lost over 1.5 TTL in each
// phase, and its release deletes the key on the new master.
BOOST_AUTO_TEST_CASE(a_held_lease_follows_its_slot_to_another_master)
{
   // A short node timeout leaves room for a short TTL (lock_options::loss_margin).
   locksmith::client c{ioc.get_executor(), test_config({cluster.url()}, 300ms)};
   auto const name = name_on(0);
   auto const slot = std::to_string(slot_of(name));
   run(
      ioc,
      [&]() -> asio::awaitable<void> {
         asio::steady_timer pause{ioc};
         auto l = co_await c.async_lock(name, {.ttl = 2s, .wait = 10s});
         BOOST_TEST(cluster.master(0).text({"GET", lock_key(name)}) == l.token());

         cluster.start_migration(slot_of(name), 0, 1);
         BOOST_TEST(cluster.master(0).text({"CLUSTER", "COUNTKEYSINSLOT", slot}) == "0");
         BOOST_TEST(cluster.master(1).text({"CLUSTER", "COUNTKEYSINSLOT", slot}) == "2");
         pause.expires_after(3s);
         co_await pause.async_wait(asio::use_awaitable);
         BOOST_TEST(!l.lost());
         BOOST_TEST(calls_of(cluster.master(1).commandstats(), "asking") > 0);
         BOOST_TEST(errors(0).find("errorstat_ASK:") != std::string::npos);

         cluster.end_migration(slot_of(name), 1);
         pause.expires_after(3s);
         co_await pause.async_wait(asio::use_awaitable);
         BOOST_TEST(!l.lost());
         BOOST_TEST(errors(0).find("errorstat_MOVED:") != std::string::npos);
         BOOST_TEST(cluster.master(1).text({"GET", lock_key(name)}) == l.token());
         co_await c.async_unlock(l);
         BOOST_TEST(cluster.master(1).text({"GET", lock_key(name)}) == "(nil)");
         co_await c.async_close();
      }(),
      40s);
   BOOST_TEST(no_crossslot());
}

// kill -9 of master 0, whose replica the cluster promotes. The client learnt its map before:
// every call for master 0's slots goes to the dead master until a failed call has the map
// reloaded. Names on the other masters lock throughout; after the failover a name of master 0's
// slots locks on the promoted replica, and a lease held across the failover (its key replicated,
// as the replica's offset shows) is still held there and released there.
BOOST_FIXTURE_TEST_CASE(locks_on_a_dead_masters_slots_work_again_after_its_failover,
                        failover_fixture)
{
   auto conf = cfg();
   // The releases of the attempts that timed out on the dead master are sent again, with a
   // growing pause, until the new master answers them: time for async_close to see them through.
   conf.close_timeout = 15s;
   locksmith::client c{ioc.get_executor(), conf};
   auto const name = name_on(0);
   std::vector<std::string> const others{name_on(1), name_on(2)};
   auto const lock_others = [&]() -> asio::awaitable<void> {
      for (std::size_t i = 0; i < others.size(); ++i) {
         auto l = co_await c.async_lock(others[i], {.ttl = 10s, .wait = 10s});
         BOOST_TEST(cluster.master(i + 1).text({"GET", lock_key(others[i])}) == l.token());
         co_await c.async_unlock(l);
      }
   };
   run(
      ioc,
      [&]() -> asio::awaitable<void> {
         auto l = co_await c.async_lock(name, {.ttl = 10s, .wait = 10s});
         BOOST_TEST(cluster.master(0).text({"GET", lock_key(name)}) == l.token());
         co_await c.async_unlock(l);
         co_await lock_others();
         auto const across = name_on(0);
         auto held = co_await c.async_lock(across, {.ttl = 60s, .wait = 10s});
         // WAIT on another connection than the write's would not wait for it: the replica's
         // offset must reach the master's.
         auto const written = offset(cluster.master(0), "master_repl_offset");
         BOOST_REQUIRE(co_await eventually(
            [&] { return offset(cluster.replica(0), "slave_repl_offset") >= written; }, 10s, 20ms));

         cluster.master(0).kill();
         auto const killed_at = clock_type::now();
         int rounds = 0;
         // The other masters' names lock while the cluster notices the death and fails over.
         BOOST_TEST_CHECKPOINT("the other masters during the failover");
         while (!promoted(0, 1)) {
            BOOST_REQUIRE(clock_type::now() - killed_at < 30s);
            co_await lock_others();
            ++rounds;
            asio::steady_timer pause{ioc, 50ms};
            co_await pause.async_wait(asio::use_awaitable);
         }
         BOOST_TEST_MESSAGE("failover after " << to_ms(clock_type::now() - killed_at) << " ms, "
                                              << rounds << " rounds on the other masters");
         BOOST_TEST(rounds > 0);

         BOOST_TEST_CHECKPOINT("lock on the new master");
         auto const relocked_from = clock_type::now();
         l = co_await c.async_lock(name, {.ttl = 10s, .wait = 20s});
         BOOST_TEST_MESSAGE("locked on the new master " << to_ms(clock_type::now() - relocked_from)
                                                        << " ms after the failover");
         BOOST_TEST(cluster.replica(0).text({"GET", lock_key(name)}) == l.token());
         BOOST_TEST_CHECKPOINT("unlock on the new master");
         co_await c.async_unlock(l);
         BOOST_TEST(cluster.replica(0).text({"GET", lock_key(name)}) == "(nil)");

         BOOST_TEST(!held.lost());
         BOOST_TEST(cluster.replica(0).text({"GET", lock_key(across)}) == held.token());
         BOOST_TEST_CHECKPOINT("unlock of the lease held across the failover");
         co_await c.async_unlock(held);
         BOOST_TEST(cluster.replica(0).text({"GET", lock_key(across)}) == "(nil)");
         BOOST_TEST_CHECKPOINT("the other masters after the failover");
         co_await lock_others();
         BOOST_TEST_CHECKPOINT("close");
         co_await c.async_close();
      }(),
      90s);
}

// A lease whose key never reached the replica that is promoted. The replica is stopped (SIGSTOP)
// and its master drops the replication link (CLIENT KILL TYPE replica) before the lock, so the key
// lives on the master only; then kill -9 of the master, and the replica, resumed, is promoted
// without the key. The lease's next renewal there finds the key gone, and the watchdog reports the
// lease lost well before its 30 s TTL would have run out.
BOOST_FIXTURE_TEST_CASE(a_lease_whose_key_missed_the_promoted_replica_is_reported_lost,
                        failover_fixture)
{
   locksmith::client c{ioc.get_executor(), cfg()};
   auto const name = name_on(0);
   run(
      ioc,
      [&]() -> asio::awaitable<void> {
         // The slot map known and the scripts loaded before the replica stops.
         auto warm = co_await c.async_lock(name_on(0), {.ttl = 10s, .wait = 10s});
         co_await c.async_unlock(warm);

         cluster.replica(0).pause();
         cluster.master(0).command({"CLIENT", "KILL", "TYPE", "replica"});
         auto const locked_from = clock_type::now();
         auto held = co_await c.async_lock(name, {.ttl = 30s, .wait = 10s});
         BOOST_TEST(cluster.master(0).text({"GET", lock_key(name)}) == held.token());
         cluster.master(0).kill();
         cluster.replica(0).resume();

         BOOST_TEST_CHECKPOINT("the replica is promoted without the key");
         BOOST_REQUIRE(co_await eventually([&] { return promoted(0, 1); }, 30s, 50ms));
         BOOST_TEST(cluster.replica(0).text({"GET", lock_key(name)}) == "(nil)");

         BOOST_TEST_CHECKPOINT("the watchdog finds the key gone");
         BOOST_REQUIRE(co_await eventually([&] { return held.lost(); }, 25s, 50ms));
         auto const lost_after = clock_type::now() - locked_from;
         BOOST_TEST_MESSAGE("lost " << to_ms(lost_after) << " ms after the lock");
         // Not by running out of time: the key would have lived 30 s.
         BOOST_TEST((lost_after < 25s));
         co_await c.async_close();
      }(),
      90s);
}

BOOST_AUTO_TEST_SUITE_END()
