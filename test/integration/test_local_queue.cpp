// The in-process queue against a real redis-server: cancellations leave no subscription and no
// broken queue, a cancelled head hands its place on, a name this client holds or waits for is
// answered without a round trip, and waiters acquire in FIFO order.
#include "support/integration.hpp"
#include "support/subscribe_fixture.hpp"

#include "engines/local_queue.hpp"

#include <list>
#include <random>

namespace test_local_queue {

using locksmith::test::calls_of;
using locksmith::test::cost_between;
using locksmith::test::outcome;
using locksmith::test::subscribe;
using locksmith::test::subscribe_fixture;

namespace {

using clients = std::vector<std::unique_ptr<locksmith::client>>;

// Waiters on one name, each cancelled after a random time with a random cancellation type, or
// right at initiation; counts how they ended.
struct storm {
   storm(asio::io_context& ioc, std::string name, int waiters)
       : name{std::move(name)}
       , finished{ioc, waiters}
   {}

   // Starts one waiter on `c`.
   void add(locksmith::client& c, task_group& tasks)
   {
      constexpr asio::cancellation_type types[] = {asio::cancellation_type::terminal,
                                                   asio::cancellation_type::partial,
                                                   asio::cancellation_type::total};
      auto const type = types[random() % 3];
      if (random() % 20 != 0)
         return tasks.spawn(waiter(c, std::chrono::microseconds{random() % 50'001}, type));
      // Cancelled in the same handler that started it.
      ++immediate;
      auto& sig = signals.emplace_back();
      c.async_lock(name, subscribe(30s, 10s),
                   asio::bind_cancellation_slot(sig.slot(),
                                                [this](error_code ec, lease l) { count(ec, l); }));
      sig.emit(type);
   }

   asio::awaitable<void> waiter(locksmith::client& c, std::chrono::microseconds after,
                                asio::cancellation_type type)
   {
      auto const t0 = clock_type::now();
      auto [ec, l] =
         co_await c.async_lock(name, subscribe(30s, 10s), asio::cancel_after(after, type, tuple));
      slowest = std::max(slowest, clock_type::now() - t0 - after);
      count(ec, l);
   }

   void count(error_code ec, lease const& l)
   {
      if (ec == asio::error::operation_aborted && !l.held())
         ++aborted;
      else
         ++other, others.push_back(ec);
      finished.done();
   }

   std::string name;
   std::mt19937 random{std::random_device{}()};
   int aborted = 0, other = 0, immediate = 0;
   std::vector<error_code> others;
   clock_type::duration slowest{};
   countdown finished;
   std::list<asio::cancellation_signal> signals;  // for the waiters cancelled at initiation
};

// Every client's queue is empty and consistent: each can take and release the key, and queues
// (then times out) behind its own lease.
asio::awaitable<void> each_queue_still_works(clients const& cs, std::string const& name)
{
   for (auto& c : cs) {
      auto [ec, l] = co_await c->async_try_lock(name, {}, tuple);
      BOOST_TEST(!ec, "try_lock after the storm: " << ec.message());
      auto [ec2, l2] = co_await c->async_lock(name, subscribe(30s, 200ms), tuple);
      BOOST_TEST(ec2 == error::wait_timeout);  // held by its own lease: queued, then timed out
      auto [uec] = co_await c->async_unlock(l, tuple);
      BOOST_TEST(!uec);
      auto [ec3, l3] = co_await c->async_lock(name, subscribe(30s, 1s), tuple);
      BOOST_TEST(!ec3);
      co_await c->async_unlock(l3);
   }
}

// One waiter per client, each of which a release must wake; counts those that failed.
struct wave {
   wave(asio::io_context& ioc, std::string const& name, int waiters)
       : name{name}
       , woken{ioc, waiters}
   {}

   asio::awaitable<void> waiter(locksmith::client& c)
   {
      auto [ec, l] = co_await c.async_lock(name, subscribe(30s, 10s), tuple);
      failures += ec ? 1 : 0;
      if (!ec) {
         auto [uec] = co_await c.async_unlock(l, tuple);
         failures += uec ? 1 : 0;
      }
      woken.done();
   }

   std::string const& name;
   countdown woken;
   int failures = 0;
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(local_queue, subscribe_fixture, *needs_redis_server())

// 1,000 waiters over 4 clients, cancelled at random times (some right at initiation), with
// random cancellation types: all complete with operation_aborted, no subscription remains, the
// holder keeps its key, and every client's queue still works.
BOOST_AUTO_TEST_CASE(cancellation_storm_leaks_no_subscription)
{
   constexpr int n = 4, per_client = 250;
   locksmith::client a{ioc.get_executor(), cfg()};
   auto const cs = make_clients(ioc, cfg(), n);
   storm st{ioc, unique_key(), n * per_client};
   auto const& name = st.name;
   wave after{ioc, name, n};  // after the storm
   task_group tasks{ioc};
   run(ioc, 60s, [&]() -> asio::awaitable<void> {
      auto la = co_await a.async_lock(name, {.ttl = 30s});
      for (int i = 0; i < per_client; ++i)
         for (auto& c : cs)
            st.add(*c, tasks);
      BOOST_REQUIRE(co_await st.finished.all_done.wait(20s));
      BOOST_TEST_MESSAGE(st.aborted << " aborted (" << st.immediate << " at initiation), "
                                    << st.other << " other outcomes; slowest cancellation took "
                                    << to_ms(st.slowest) << " ms");
      BOOST_TEST(st.aborted == n * per_client);
      BOOST_TEST(st.other == 0);
      for (auto const& ec : st.others)
         BOOST_TEST_MESSAGE("unexpected outcome: " << ec.message());
      BOOST_TEST((st.slowest < 1s));
      BOOST_TEST(co_await eventually([&] { return numsub(channel(name)) == 0; }));
      BOOST_TEST(srv.text({"GET", lock_key(name)}) == la.token());
      co_await a.async_unlock(la);
      co_await each_queue_still_works(cs, name);
      // Each client's subscription count went back to zero, not just the server's: each one
      // subscribes again for a new waiter, and the releases wake those waiters one after the
      // other, long before A's 30 s TTL.
      auto la2 = co_await a.async_lock(name, {.ttl = 30s});
      for (auto& c : cs)
         tasks.spawn(after.waiter(*c));
      BOOST_TEST(co_await eventually([&] { return numsub(channel(name)) == n; }));
      auto const unlocked_at = clock_type::now();
      co_await a.async_unlock(la2);
      BOOST_TEST(co_await after.woken.all_done.wait(5s));
      BOOST_TEST_MESSAGE(n << " waiters after the storm served in "
                           << to_ms(clock_type::now() - unlocked_at) << " ms");
      BOOST_TEST(after.failures == 0);
      BOOST_TEST(co_await eventually([&] { return numsub(channel(name)) == 0; }));
      BOOST_TEST(srv.text({"EXISTS", lock_key(name)}) == "0");
   }());
}

// Three waiters of one client: cancel the middle one, then the head (which sleeps subscribed);
// the last one must inherit the head's place and get the lock when A releases.
BOOST_AUTO_TEST_CASE(cancelling_the_middle_then_the_head_waiter)
{
   locksmith::client a{ioc.get_executor(), cfg()}, c{ioc.get_executor(), cfg()};
   outcome w[3];
   event done0{ioc}, done1{ioc}, done2{ioc};
   event* done[3] = {&done0, &done1, &done2};
   asio::cancellation_signal sig[2];
   auto waiter = [&](int i) -> asio::awaitable<void> {
      auto [ec, l] = co_await c.async_lock(name, subscribe(30s, 10s, &w[i].diag),
                                           asio::bind_cancellation_slot(sig[i].slot(), tuple));
      w[i].at = clock_type::now();
      w[i].ec = ec;
      w[i].held = std::move(l);
      done[i]->set();
   };
   task_group tasks{ioc};
   run(ioc, 20s, [&]() -> asio::awaitable<void> {
      auto la = co_await a.async_lock(name, {.ttl = 30s});
      tasks.spawn(waiter(0));
      BOOST_REQUIRE(co_await sleeps_subscribed(name, w[0].diag));
      auto const evals = calls("evalsha");
      tasks.spawn(waiter(1));
      // Waiter 2 has no cancellation slot of ours.
      tasks.spawn(locksmith::test::wait_for_lock(c, name, subscribe(30s, 10s), w[2], done2));
      co_await yield();
      // Queued behind the head: they do not talk to Redis.
      BOOST_TEST(calls("evalsha") == evals);
      BOOST_TEST(w[1].diag.attempts == 0u);
      BOOST_TEST(w[2].diag.attempts == 0u);

      sig[1].emit(asio::cancellation_type::terminal);
      BOOST_REQUIRE(co_await done[1]->wait(1s));
      BOOST_TEST(w[1].ec == asio::error::operation_aborted);
      BOOST_TEST(w[1].diag.attempts == 0u);
      BOOST_TEST(!done[0]->is_set());
      BOOST_TEST(!done[2]->is_set());

      sig[0].emit(asio::cancellation_type::terminal);
      BOOST_REQUIRE(co_await done[0]->wait(1s));
      BOOST_TEST(w[0].ec == asio::error::operation_aborted);
      // The last waiter is the head now: it tries once, finds the key taken, and sleeps
      // subscribed (the subscription passed on with the queue).
      BOOST_REQUIRE(co_await eventually([&] { return w[2].diag.attempts >= 1; }));
      BOOST_TEST(numsub(channel(name)) == 1);
      BOOST_TEST(!done[2]->is_set());

      auto const unlocked_at = clock_type::now();
      co_await a.async_unlock(la);
      BOOST_REQUIRE(co_await done[2]->wait(5s));
      BOOST_TEST_MESSAGE("last waiter woke " << to_ms(*w[2].at - unlocked_at)
                                             << " ms after the unlock");
      BOOST_TEST(!w[2].ec);
      BOOST_TEST((*w[2].at - unlocked_at < 5s));  // woken by the release, not its 30 s timer
      BOOST_TEST(srv.text({"GET", lock_key(name)}) == w[2].held.token());
      co_await c.async_unlock(w[2].held);
      BOOST_TEST(co_await eventually([&] { return numsub(channel(name)) == 0; }));
   }());
}

// A name that this client holds, or waits for, answers lock_taken without a round trip.
BOOST_AUTO_TEST_CASE(try_lock_on_a_locally_busy_name_makes_no_round_trip)
{
   locksmith::client a{ioc.get_executor(), cfg()}, c{ioc.get_executor(), cfg()};
   auto const held_name = unique_key("held");
   auto const waited_name = unique_key("waited");
   outcome w;
   event w_done{ioc};
   task_group tasks{ioc};
   run(ioc, 20s, [&]() -> asio::awaitable<void> {
      auto mine = co_await c.async_lock(held_name, {.ttl = 30s});
      auto theirs = co_await a.async_lock(waited_name, {.ttl = 30s});
      tasks.spawn(locksmith::test::wait_for_lock(c, waited_name, subscribe(30s, 10s), w, w_done));
      BOOST_REQUIRE(co_await eventually([&] { return w.diag.attempts >= 2; }));
      auto const before = srv.commandstats();
      for (auto const* n : {&held_name, &waited_name}) {
         locksmith::report diag;
         auto [ec, l] = co_await c.async_try_lock(*n, {.diag = &diag}, tuple);
         BOOST_TEST(ec == error::lock_taken);
         BOOST_TEST(diag.attempts == 0u);
         auto [ec2, l2] = co_await c.async_lock(*n, subscribe(30s, 0ms), tuple);
         BOOST_TEST(ec2 == error::lock_taken);
      }
      auto const cost = cost_between(before, srv.commandstats());
      BOOST_TEST(cost.evalsha == 0);
      BOOST_TEST(cost.sent - cost.ping == 0);
      BOOST_TEST(!w_done.is_set());
      co_await a.async_unlock(theirs);
      BOOST_REQUIRE(co_await w_done.wait(5s));
      BOOST_TEST(!w.ec);
      co_await c.async_unlock(w.held);
      co_await c.async_unlock(mine);
   }());
}

// Five coroutines of one client acquire in the order in which they asked, both when another
// client holds the key and when one of their own does.
BOOST_AUTO_TEST_CASE(local_queue_is_fifo)
{
   locksmith::client a{ioc.get_executor(), cfg()}, c{ioc.get_executor(), cfg()};
   constexpr int n = 5;
   for (bool held_by_other : {true, false}) {
      BOOST_TEST_CONTEXT("held by " << (held_by_other ? "another client" : "the same client"))
      {
         auto const name = unique_key(held_by_other ? "other" : "same");
         std::vector<int> order;
         std::vector<error_code> errors;
         countdown finished{ioc, n};
         locksmith::report head;
         auto waiter = [&](int i) -> asio::awaitable<void> {
            locksmith::report diag;
            auto [ec, l] =
               co_await c.async_lock(name, subscribe(30s, 10s, i == 0 ? &head : &diag), tuple);
            if (ec) {
               errors.push_back(ec);
            } else {
               order.push_back(i);
               co_await yield();  // hold it while the others stay queued
               co_await c.async_unlock(l);
            }
            finished.done();
         };
         task_group tasks{ioc};
         run(ioc, 20s, [&]() -> asio::awaitable<void> {
            auto& holder = held_by_other ? a : c;
            auto l = co_await holder.async_lock(name, {.ttl = 30s});
            for (int i = 0; i < n; ++i) {
               tasks.spawn(waiter(i));
               if (i == 0 && held_by_other)  // the head sleeps subscribed before the others come
                  BOOST_REQUIRE(co_await eventually([&] { return head.attempts >= 2; }));
               co_await yield();
            }
            BOOST_TEST(order.empty());
            co_await holder.async_unlock(l);
            BOOST_REQUIRE(co_await finished.all_done.wait(10s));
            BOOST_TEST(errors.empty());
            BOOST_TEST(order == (std::vector<int>{0, 1, 2, 3, 4}),
                       boost::test_tools::per_element());
            BOOST_TEST(co_await eventually([&] { return numsub(channel(name)) == 0; }));
         }());
      }
   }
}

// A holder's unlock hands the lease to the next coroutine of its client that waits for the name:
// the waiter takes the key over (its own token, a higher fence) without a release in Redis, at
// most local_queue::max_handovers times in a row; then a release (and its message) lets the
// other processes in. Counted at the server: PUBLISH runs only in the release script.
BOOST_AUTO_TEST_CASE(a_local_unlock_hands_the_lease_to_the_next_waiter)
{
   locksmith::client c{ioc.get_executor(), cfg()};
   constexpr int n = 6;
   std::vector<std::uint64_t> fences;
   std::vector<error_code> errors;
   countdown finished{ioc, n};
   auto waiter = [&]() -> asio::awaitable<void> {
      auto [ec, l] = co_await c.async_lock(name, subscribe(30s, 10s), tuple);
      if (ec) {
         errors.push_back(ec);
      } else {
         fences.push_back(l.fencing_token());
         BOOST_TEST(srv.text({"GET", lock_key(name)}) == l.token());  // the key is this lease's
         co_await yield();
         auto [uec] = co_await c.async_unlock(l, tuple);
         if (uec)
            errors.push_back(uec);
      }
      finished.done();
   };
   task_group tasks{ioc};
   run(ioc, 20s, [&]() -> asio::awaitable<void> {
      auto first = co_await c.async_lock(name, subscribe(30s, 0s));
      fences.push_back(first.fencing_token());
      for (int i = 0; i < n; ++i) {
         tasks.spawn(waiter());
         co_await yield();
      }
      auto const before = srv.commandstats();
      auto [ec] = co_await c.async_unlock(first, tuple);
      BOOST_TEST(!ec, ec.message());
      BOOST_REQUIRE(co_await finished.all_done.wait(10s));
      BOOST_TEST(errors.empty());
      for (std::size_t i = 1; i < fences.size(); ++i)
         BOOST_TEST(fences[i] > fences[i - 1], "fence " << i);
      // 7 leases, in runs of max_handovers handovers ended by a release in Redis.
      auto const run = 1 + static_cast<long long>(locksmith::detail::local_queue::max_handovers);
      auto const releases = (n + run) / run;
      auto const after = srv.commandstats();
      BOOST_TEST(calls_of(after, "publish") - calls_of(before, "publish") == releases);
      BOOST_TEST(srv.text({"EXISTS", lock_key(name)}) == "0");
   }());
}

// A waiter handed a lease that it then gives up (cancelled before or during its takeover)
// releases the handed key: it does not stay in Redis for its TTL.
BOOST_AUTO_TEST_CASE(a_handed_lease_that_the_waiter_gives_up_is_released)
{
   locksmith::client c{ioc.get_executor(), cfg()};
   for (int round = 0; round < 10; ++round) {
      auto const name = unique_key();
      asio::cancellation_signal sig;
      bool done = false;
      error_code waited;
      lease taken;
      run(ioc, 20s, [&]() -> asio::awaitable<void> {
         auto first = co_await c.async_lock(name, subscribe(30s, 0s));
         c.async_lock(name, subscribe(30s, 10s),
                      asio::bind_cancellation_slot(sig.slot(), [&](error_code ec, lease l) {
                         waited = ec;
                         taken = std::move(l);
                         done = true;
                      }));
         co_await yield();
         auto [ec] = co_await c.async_unlock(first, tuple);
         BOOST_TEST(!ec, ec.message());
         // Later and later in the waiter's takeover.
         for (int i = 0; i < round; ++i)
            co_await yield();
         sig.emit(asio::cancellation_type::terminal);
         BOOST_REQUIRE(co_await eventually([&] { return done; }));
         if (!waited) {  // the takeover was done before the cancellation came
            auto [uec] = co_await c.async_unlock(taken, tuple);
            BOOST_TEST(!uec, uec.message());
         } else {
            BOOST_TEST((waited == asio::error::operation_aborted), waited.message());
         }
         BOOST_TEST(co_await eventually([&] {
                       return srv.text({"EXISTS", lock_key(name)}) == "0";
                    }),
                    "round " << round << ": the handed key stayed");
      }());
   }
}

// A lease taken over from a handed one releases the handed token too. Where the takeover's write
// was lost (taken on a master that a failover demoted, whose replica was promoted before it
// came), the new master still holds the handed token, which no holder would release: its key
// kept the name from everyone for its TTL (SENTINEL FAILOVER under load: a name went 9 s
// without a grant). Here the server is set back to the handed token by hand, as the promoted
// replica had it; the lease's unlock frees the name.
BOOST_AUTO_TEST_CASE(a_taken_over_lease_releases_the_handed_token_too)
{
   locksmith::client c{ioc.get_executor(), cfg()};
   run(ioc, 30s, [&]() -> asio::awaitable<void> {
      auto first = co_await c.async_lock(name, subscribe(60s, 0s));
      auto const handed = first.token();
      lease taken;
      bool done = false;
      c.async_lock(name, subscribe(60s, 10s), [&](error_code ec, lease l) {
         BOOST_TEST(!ec, ec.message());
         taken = std::move(l);
         done = true;
      });
      co_await yield();
      co_await c.async_unlock(first);
      BOOST_REQUIRE(co_await eventually([&] { return done; }));
      BOOST_REQUIRE(srv.text({"GET", lock_key(name)}) == taken.token());  // taken over
      srv.command({"SET", lock_key(name), handed, "PX", "60000"});
      auto [ec] = co_await c.async_unlock(taken, tuple);
      // Its own token is gone: another one (not_owner), or none once the handed token's
      // release, sent beside it, deleted the key first (lease_expired).
      BOOST_TEST(
         (!ec || ec == locksmith::error::not_owner || ec == locksmith::error::lease_expired),
         ec.message());
      BOOST_TEST(co_await eventually([&] {
                    return srv.text({"EXISTS", lock_key(name)}) == "0";
                 }),
                 "the handed token's key stayed");
      // Another client gets the name at once, not after the 60 s TTL.
      locksmith::client other{ioc.get_executor(), cfg()};
      auto next = co_await other.async_lock(name, subscribe(10s, 5s));
      co_await other.async_unlock(next);
      co_await other.async_close();
   }());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_local_queue
