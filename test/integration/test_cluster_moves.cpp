// A Redis Cluster's routine operations as a lock user meets them, against real processes: a slot
// in motion (IMPORTING on one master, MIGRATING on the other, as every reshard starts, with other
// keys in the slot so that the move takes a while), and a replica in the way of a call (a replica
// as the seed, an old master that a failover made a replica while the client's map still names
// it) with config::wait_replicas. Each is a wait, never an error: the slot's move and the
// failover complete while the operation waits, and it succeeds.
#include "cluster_fixture.hpp"

#include "support/server_checks.hpp"

#include "sansio/keys.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace test_cluster_moves {

namespace {

using locksmith::test::cluster_fixture;
using locksmith::test::failover_fixture;

// How often the server answered with the error `what` (INFO errorstats), 0 when never.
long long error_count(redis_server const& s, std::string const& what)
{
   auto const stats = s.text({"INFO", "errorstats"});
   auto const field = "errorstat_" + what + ":count=";
   auto const at = stats.find(field);
   return at == std::string::npos ? 0 : std::stoll(stats.substr(at + field.size()));
}

// The slot in motion met by calls: TRYAGAIN or ASK answered by either side of a move.
long long motion_errors(cluster_fixture& f)
{
   long long n = 0;
   for (std::size_t i = 0; i < 2; ++i)
      n += error_count(f.cluster.master(i), "TRYAGAIN") + error_count(f.cluster.master(i), "ASK");
   return n;
}

// Puts `n` other keys of the name's hash tag (so in its slot) on master `i`: a slot that holds
// more than the lock's own keys, which a reshard moves in batches. Returns their names.
std::vector<std::string> fill_slot(cluster_fixture& f, std::string const& name, std::size_t i,
                                   int n)
{
   std::vector<std::string> keys, mset{"MSET"};
   for (int k = 0; k < n; ++k) {
      keys.push_back("other:{" + name + "}:" + std::to_string(k));
      mset.push_back(keys.back());
      mset.push_back("x");
   }
   f.cluster.master(i).command(mset);
   return keys;
}

// Locks `name` (or takes the lease of another `kind`) and keeps the outcome, then calls `then`:
// an attempt run beside the test.
asio::awaitable<void> lock_into(locksmith::client& c, std::string name,
                                locksmith::lock_options opts, error_code& ec, lease& l,
                                std::function<void()> then, locksmith::detail::lease_kind kind = {})
{
   auto token = asio::as_tuple(asio::use_awaitable);
   std::tie(ec, l) = co_await locksmith::detail::initiate_acquire(c, token, kind, name, opts);
   then();
}

std::string prefixed(std::string (*key)(std::string_view, std::string_view),
                     std::string const& name)
{
   return key("locksmith:", name);
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(cluster_moves, cluster_fixture,
                         *needs_redis_server() * locksmith::test::needs_cluster_server())

namespace {

// What an operation run beside the test ended with, empty while it runs.
using outcome = std::function<std::optional<error_code>()>;

// An attempt's outcome: `ec` once `done` is set.
outcome ended(locksmith::test::event const& done, error_code const& ec)
{
   return [&done, &ec]() -> std::optional<error_code> {
      return done.is_set() ? std::optional{ec} : std::nullopt;
   };
}

// After `waited`, checks that the operation run beside the test has not ended, then moves the
// rest of `slot` from master 0 to master 1 and ends the move, and checks that the operation then
// succeeds within `within`. Pass `out` as a named object: GCC 12 destroys a temporary made
// inside a co_await expression twice, which frees what a lambda's captures share.
asio::awaitable<void> end_move_once_it_waits(cluster_fixture& f, std::uint16_t slot,
                                             outcome const& out, std::chrono::milliseconds waited,
                                             std::chrono::seconds within)
{
   co_await sleep_for(waited);
   auto const early = out();
   BOOST_TEST(!early.has_value(),
              "ended while the slot moved: " << early.value_or(error_code{}).message());
   f.cluster.migrate_keys(slot, 0, 1);
   f.cluster.end_migration(slot, 1);
   BOOST_REQUIRE(co_await eventually([&] { return out().has_value(); }, within, 20ms));
   auto const ec = *out();
   BOOST_TEST(!ec, ec.message());
}

// A lock attempt on a name of master 0 while its slot moves to master 1: marked, half of the
// other keys moved, the lock's own keys still on master 0 (or never made, for a new name). Every
// call meets TRYAGAIN or ASK for as long as the move lasts; the attempt waits, well past a node
// timeout, and is granted on master 1 once the move completes.
void lock_across_a_move(cluster_fixture& f, bool used_before)
{
   auto& ioc = f.ioc;
   auto& cluster = f.cluster;
   locksmith::client c{ioc.get_executor(), test_config({cluster.url()}, 300ms)};
   auto const name = f.name_on(0);
   auto const slot = cluster_fixture::slot_of(name);
   run(ioc, 90s, [&]() -> asio::awaitable<void> {
      // The map known and the scripts loaded; for a used name, its fence key on master 0.
      // (Not a conditional inside co_await: GCC 12 destroys its temporary twice.)
      auto const warm_name = used_before ? name : f.name_on(0);
      auto warm = co_await c.async_lock(warm_name, {.wait = 10s});
      auto const fence_before = used_before ? warm.fencing_token() : std::uint64_t{0};
      co_await c.async_unlock(warm);
      BOOST_TEST(cluster.master(0).text({"EXISTS", fence_key(name)}) == (used_before ? "1" : "0"));

      auto const others = fill_slot(f, name, 0, 200);
      cluster.mark_migration(slot, 0, 1);
      cluster.migrate_keys(slot, 0, 1, {others.begin(), others.begin() + 100});
      auto const met_before = motion_errors(f);

      locksmith::test::task_group tasks{ioc};
      locksmith::test::event done{ioc};
      error_code ec;
      lease l;
      tasks.spawn(lock_into(c, name, {.ttl = 10s, .wait = 60s}, ec, l, [&] { done.set(); }));
      BOOST_REQUIRE(co_await eventually([&] { return motion_errors(f) > met_before; }, 10s));
      // Several node timeouts: calls gave up on the slot in motion, and the attempt waits on.
      auto const out = ended(done, ec);
      co_await end_move_once_it_waits(f, slot, out, 1500ms, 30s);
      BOOST_TEST(cluster.master(1).text({"GET", lock_key(name)}) == l.token());
      BOOST_TEST(l.fencing_token() > fence_before);
      co_await c.async_unlock(l);
      BOOST_TEST(cluster.master(1).text({"GET", lock_key(name)}) == "(nil)");
      co_await c.async_close();
   }());
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_lock_waits_out_its_slot_in_motion_for_a_name_whose_keys_exist)
{
   lock_across_a_move(*this, true);
}

BOOST_AUTO_TEST_CASE(a_lock_waits_out_its_slot_in_motion_for_a_new_name)
{
   lock_across_a_move(*this, false);
}

// Leases held while their slot is half moved for longer than a node timeout: a semaphore permit,
// a reentrant hold and a read lock, whose renewals touch several keys, split between the two
// masters (the permits, holds or readers moved, the fence key not), so that each renewal call
// meets TRYAGAIN until it gives up; and a plain lock, whose renewal touches its key alone and
// follows ASK. The move ends well within their validity, and none is lost.
BOOST_AUTO_TEST_CASE(renewals_outlast_a_slot_move_longer_than_a_node_timeout)
{
   locksmith::client c{ioc.get_executor(), test_config({cluster.url()}, 300ms)};
   locksmith::lock_options const opts{.ttl = 4s, .wait = 10s};
   run(ioc, 120s, [&]() -> asio::awaitable<void> {
      for (std::string const kind : {"permit", "reentrant", "read", "lock"}) {
         BOOST_TEST_CONTEXT(kind)
         {
            auto const name = name_on(0);
            auto const slot = slot_of(name);
            // The key that holds the lease, which each renewal sets the TTL of, and the key
            // moved ahead of the others.
            auto const held_in =
               kind == "read" ? prefixed(locksmith::detail::readers_key, name) : lock_key(name);
            auto moved = held_in;
            lease l;
            if (kind == "permit") {
               l = co_await c.async_acquire_permit(name, 2, opts);
            } else if (kind == "reentrant") {
               l = co_await c.async_lock_reentrant(name, "me", opts);
               moved = prefixed(locksmith::detail::holds_key, name);
            } else if (kind == "read") {
               l = co_await c.async_read_lock(name, opts);
            } else {
               l = co_await c.async_lock(name, opts);
            }
            auto const others = fill_slot(*this, name, 0, 100);
            cluster.mark_migration(slot, 0, 1);
            cluster.migrate_keys(slot, 0, 1, {moved});
            cluster.migrate_keys(slot, 0, 1, {others.begin(), others.begin() + 50});
            auto const met_before = motion_errors(*this);
            // The next renewal (every TTL/3) meets the move; then more than a node timeout.
            BOOST_REQUIRE(
               co_await eventually([&] { return motion_errors(*this) > met_before; }, 10s));
            co_await sleep_for(800ms);
            BOOST_TEST(!l.lost());
            cluster.migrate_keys(slot, 0, 1);
            cluster.end_migration(slot, 1);
            // Renewed on master 1 since: its TTL was set again after the move.
            auto const renewed = [&] {
               auto const pttl = cluster.master(1).text({"PTTL", held_in});
               return std::stoll(pttl) > 3000;
            };
            BOOST_TEST(co_await eventually(renewed, 10s, 20ms));
            BOOST_TEST(!l.lost());
            BOOST_TEST(l.held());
            co_await c.async_unlock(l);
         }
      }
      co_await c.async_close();
   }());
}

// Unlocks issued while their slot is migrating: a reentrant hold whose keys are split (the lock
// key moved, its holds key not), and a fair lock whose slot is only marked (its queue keys do
// not exist, so every call on its keys meets TRYAGAIN until all of them are on one side). Each
// release follows the slot until the move completes, and lands: no key is left, long before
// the 30 s TTL, and the unlock, which waits the move out, completes then with success.
BOOST_AUTO_TEST_CASE(an_unlock_issued_while_its_slot_migrates_lands_when_it_completes)
{
   auto conf = test_config({cluster.url()}, 300ms);
   conf.close_timeout = 20s;
   locksmith::client c{ioc.get_executor(), conf};
   locksmith::lock_options const opts{.ttl = 30s, .wait = 10s};
   run(ioc, 90s, [&]() -> asio::awaitable<void> {
      for (bool const fair : {false, true}) {
         BOOST_TEST_CONTEXT("fair " << fair)
         {
            auto const name = name_on(0);
            auto const slot = slot_of(name);
            auto o = opts;
            o.fair = fair;
            lease l;
            if (fair)
               l = co_await c.async_lock(name, o);
            else
               l = co_await c.async_lock_reentrant(name, "me", o);
            fill_slot(*this, name, 0, 100);
            cluster.mark_migration(slot, 0, 1);
            if (!fair)
               cluster.migrate_keys(slot, 0, 1, {lock_key(name)});
            auto const met_before = motion_errors(*this);
            auto const unlocked = unlock_beside(c, l);
            BOOST_TEST(co_await eventually([&] { return motion_errors(*this) > met_before; }, 10s));
            // Sent again meanwhile; the key stays where it was until the move ends, and the
            // unlock waits for it.
            outcome const out = [unlocked] { return *unlocked; };
            co_await end_move_once_it_waits(*this, slot, out, 500ms, 15s);
            BOOST_TEST(cluster.master(1).text({"EXISTS", lock_key(name)}) == "0");
            BOOST_TEST(cluster.master(1).text(
                          {"EXISTS", prefixed(locksmith::detail::holds_key, name)}) == "0");
         }
      }
      co_await c.async_close();
   }());
}

// A release that names one of two registered waiters, in a slot only marked as migrating (all its
// keys still on master 0). release.lua pops every registration, which deletes the waiters' set,
// and puts the other one back: in a MIGRATING slot Redis refuses that write to a key it no
// longer has ("Script attempted to access a non local key"), after the pop. The unlock once
// failed there with unexpected_reply (CLI exit 70; 1-4 per run of locksmith-chaos --scenario
// slot-move), then with quorum_unreachable while its release went on; it is a wait: sent again
// until the move ends, when it lands and the unlock completes with success, and a waiter gets the
// lock.
BOOST_AUTO_TEST_CASE(a_release_stopped_part_way_by_a_migrating_slot_lands_when_it_completes)
{
   auto const conf = test_config({cluster.url()}, 300ms);
   locksmith::client holder{ioc.get_executor(), conf}, w1{ioc.get_executor(), conf},
      w2{ioc.get_executor(), conf};
   auto const name = name_on(0);
   auto const slot = slot_of(name);
   auto const waiters = prefixed(locksmith::detail::waiters_key, name);
   locksmith::lock_options const opts{.ttl = 30s, .wait = 60s};
   run(ioc, 150s, [&]() -> asio::awaitable<void> {
      locksmith::test::task_group tasks{ioc};
      countdown got{ioc, 2};
      error_code ec1, ec2, ech;
      lease l1, l2, held;
      // The holder waits once, so that its release reads the waiters (a client that never
      // waited for the name does not).
      auto first = co_await w1.async_lock(name, opts);
      locksmith::test::event holds{ioc};
      tasks.spawn(lock_into(holder, name, opts, ech, held, [&] { holds.set(); }));
      BOOST_REQUIRE(co_await eventually(
         [&] {
            return cluster.master(0).text({"ZCARD", waiters}) == "1";
         },
         10s));
      co_await w1.async_unlock(first);
      BOOST_REQUIRE(co_await holds.wait(10s));
      BOOST_REQUIRE(!ech);
      // Two waiters of two processes registered.
      tasks.spawn(lock_into(w1, name, opts, ec1, l1, [&] { got.done(); }));
      tasks.spawn(lock_into(w2, name, opts, ec2, l2, [&] { got.done(); }));
      BOOST_REQUIRE(co_await eventually(
         [&] {
            return cluster.master(0).text({"ZCARD", waiters}) == "2";
         },
         10s));
      cluster.mark_migration(slot, 0, 1);
      auto const stopped_before = error_count(cluster.master(0), "ERR");
      // The unlock waits the move out (a routine operation): it completes once its release lands.
      auto const unlocked = unlock_beside(holder, held);
      // The release ran up to the refused write: the set is gone, the lock key still held.
      BOOST_REQUIRE(co_await eventually(
         [&] { return error_count(cluster.master(0), "ERR") > stopped_before; }, 10s));
      // (A key the node lacks in a MIGRATING slot is answered ASK.)
      BOOST_TEST(cluster.master(0).text({"EXISTS", waiters}) != "1");
      BOOST_TEST(cluster.master(0).text({"GET", lock_key(name)}) == held.token());
      // Sent again meanwhile, and refused each time: no verdict yet.
      outcome const out = [unlocked] { return *unlocked; };
      co_await end_move_once_it_waits(*this, slot, out, 500ms, 15s);
      BOOST_TEST(cluster.master(1).text({"GET", lock_key(name)}) != held.token());
      // The registrations went with the pop: the waiters are woken by the release's message (or
      // their channel's new subscription at master 1), else at the PTTL they saw (up to 30 s);
      // one gets the lock, then the other.
      BOOST_REQUIRE(co_await eventually([&] { return l1.held() || l2.held(); }, 40s));
      if (l1.held())
         co_await w1.async_unlock(l1);
      else
         co_await w2.async_unlock(l2);
      BOOST_REQUIRE(co_await got.all_done.wait(40s));
      BOOST_TEST(!ec1, ec1.message());
      BOOST_TEST(!ec2, ec2.message());
      if (l1.held())
         co_await w1.async_unlock(l1);
      if (l2.held())
         co_await w2.async_unlock(l2);
      co_await holder.async_close();
      co_await w1.async_close();
      co_await w2.async_close();
   }());
}

// A permit asked for in a slot only marked as migrating, where the semaphore's one entry is a
// crashed holder's, expired: semaphore_acquire.lua drops it, which deletes the set, then adds its
// own, and in a MIGRATING slot Redis refuses that write part way, as it refuses release.lua's
// (above). The attempt waits the move out and gets its permit on the new master.
BOOST_AUTO_TEST_CASE(a_permit_over_an_expired_one_waits_out_a_migrating_slot)
{
   locksmith::client c{ioc.get_executor(), test_config({cluster.url()}, 300ms)};
   auto const name = name_on(0);
   auto const slot = slot_of(name);
   run(ioc, 90s, [&]() -> asio::awaitable<void> {
      // The crashed holder: a permit never renewed, its expiry moved into the past by hand.
      auto crashed = co_await c.async_acquire_permit(name, 1, {.renew = false});
      BOOST_REQUIRE(cluster.master(0).text({"ZADD", lock_key(name), "XX", "1", crashed.token()}) ==
                    "0");
      cluster.mark_migration(slot, 0, 1);
      auto const stopped_before = error_count(cluster.master(0), "ERR");
      locksmith::test::task_group tasks{ioc};
      locksmith::test::event done{ioc};
      error_code ec;
      lease l;
      tasks.spawn(lock_into(c, name, {.wait = 60s}, ec, l, [&] { done.set(); },
                            {locksmith::detail::lease_kind::of::permit, 1}));
      // The script ran up to its ZADD: the expired entry dropped, and the set with it.
      BOOST_REQUIRE(co_await eventually(
         [&] { return error_count(cluster.master(0), "ERR") > stopped_before; }, 10s));
      // (A key the node lacks in a MIGRATING slot is answered ASK.)
      BOOST_TEST(cluster.master(0).text({"EXISTS", lock_key(name)}) != "1");
      auto const out = ended(done, ec);
      co_await end_move_once_it_waits(*this, slot, out, 1s, 30s);
      BOOST_TEST(cluster.master(1).text({"ZSCORE", lock_key(name), l.token()}) != "(nil)");
      co_await c.async_unlock(l);
      co_await c.async_unlock(crashed,
                              asio::as_tuple(asio::use_awaitable));  // expired: any verdict
      co_await c.async_close();
   }());
}

// config::wait_replicas = 1 with a replica as the only seed: the first calls, sent before the
// slot map is known, reach the replica, which answers the script with MOVED and the WAIT behind
// it with an error of its own; the MOVED wins, and each lock is granted on its master (and
// acknowledged by its replica).
BOOST_FIXTURE_TEST_CASE(wait_replicas_works_with_a_replica_as_the_seed, failover_fixture)
{
   auto conf =
      test_config({"redis+cluster://127.0.0.1:" + std::to_string(cluster.replica(0).port())}, 1s);
   conf.wait_replicas = 1;
   locksmith::client c{ioc.get_executor(), conf};
   std::vector<std::string> const names{name_on(0), name_on(1), name_on(2)};
   run(ioc, 60s, [&]() -> asio::awaitable<void> {
      locksmith::test::task_group tasks{ioc};
      countdown all{ioc, 3};
      std::vector<lease> held(3);
      std::vector<error_code> ecs(3);
      for (std::size_t i = 0; i < names.size(); ++i)
         tasks.spawn(lock_into(c, names[i], {.ttl = 10s, .wait = 20s}, ecs[i], held[i],
                               [&] { all.done(); }));
      BOOST_REQUIRE(co_await all.all_done.wait(40s));
      // The calls went out before the map was known: the replica redirected them.
      BOOST_TEST(error_count(cluster.replica(0), "MOVED") > 0);
      for (std::size_t i = 0; i < names.size(); ++i) {
         BOOST_TEST(!ecs[i], ecs[i].message());
         BOOST_TEST(cluster.master(i).text({"GET", lock_key(names[i])}) == held[i].token());
         co_await c.async_unlock(held[i]);
      }
      co_await c.async_close();
   }());
}

// config::wait_replicas = 1 after a manual failover (CLUSTER FAILOVER) of master 0: the old
// master rejoins as a replica of the new one, and the client's map still names it for master 0's
// slots. The next lock's call reaches it, meets MOVED (and WAIT's error behind it), follows it,
// and is granted on the new master.
BOOST_FIXTURE_TEST_CASE(wait_replicas_follows_moved_from_an_old_master_now_a_replica,
                        failover_fixture)
{
   auto conf = cfg();
   conf.wait_replicas = 1;
   locksmith::client c{ioc.get_executor(), conf};
   auto const name = name_on(0);
   run(ioc, 60s, [&]() -> asio::awaitable<void> {
      auto l = co_await c.async_lock(name, {.ttl = 10s, .wait = 20s});
      BOOST_TEST(cluster.master(0).text({"GET", lock_key(name)}) == l.token());
      co_await c.async_unlock(l);

      BOOST_TEST(cluster.replica(0).text({"CLUSTER", "FAILOVER"}) == "OK");
      auto const swapped = [&] {
         return cluster.master(0).text({"INFO", "replication"}).find("role:slave") !=
                   std::string::npos &&
                promoted(0, 1);
      };
      BOOST_REQUIRE(co_await eventually(swapped, 30s, 20ms));
      auto const moved_before = error_count(cluster.master(0), "MOVED");

      auto [ec, again] = co_await c.async_lock(name, {.ttl = 10s, .wait = 20s},
                                               asio::as_tuple(asio::use_awaitable));
      BOOST_TEST(!ec, ec.message());
      BOOST_TEST(error_count(cluster.master(0), "MOVED") > moved_before);
      BOOST_TEST(cluster.replica(0).text({"GET", lock_key(name)}) == again.token());
      co_await c.async_unlock(again);
      BOOST_TEST(cluster.replica(0).text({"GET", lock_key(name)}) == "(nil)");
      co_await c.async_close();
   }());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_cluster_moves
