// The lock without a fence (lock_options::fence = false) against real redis-servers: a plain SET
// NX on one node and on five (RedLock), renewed and released by the usual scripts, waking its
// waiters with the usual release message; fenced and unfenced holders of one name exclude each
// other; the kinds that always mint a fence refuse it; and on a Redis Cluster, on every master.
#include "cluster_fixture.hpp"

#include "support/integration.hpp"
#include "support/redlock_fixture.hpp"
#include "support/server_checks.hpp"

namespace test_unfenced {

using locksmith::lock_options;
using locksmith::test::cluster_fixture;
using locksmith::test::redlock_fixture;

namespace {

lock_options unfenced(std::chrono::milliseconds ttl = 30s)
{
   return {.ttl = ttl, .fence = false};
}

// Locks `name` in a task of its own, and sets `done` with what it got.
struct waiter {
   explicit waiter(asio::io_context& ioc)
       : done{ioc}
   {}
   asio::awaitable<void> lock(locksmith::client& c, std::string name, lock_options opts)
   {
      auto [e, l] = co_await c.async_lock(name, opts, tuple);
      ec = e;
      held = std::move(l);
      done.set();
   }
   error_code ec;
   lease held;
   event done;
};

// `b` waits for the name that `a` holds (30 s TTL: only the release message wakes it in time),
// then `a` lets go; `b` must have it, unfenced.
asio::awaitable<void> release_wakes_the_waiter(asio::io_context& ioc, locksmith::client& a,
                                               locksmith::client& b, std::string const& name)
{
   auto la = co_await a.async_lock(name, unfenced());
   waiter w{ioc};
   task_group tasks{ioc};
   tasks.spawn(w.lock(b, name, {.ttl = 30s, .wait = 20s, .fence = false}));
   BOOST_TEST(!co_await w.done.wait(300ms), "the waiter got a held lock");
   co_await a.async_unlock(la);
   BOOST_TEST_REQUIRE(co_await w.done.wait(10s), "the release did not wake the waiter");
   BOOST_TEST_REQUIRE(!w.ec, w.ec.message());
   BOOST_TEST(w.held.held());
   BOOST_TEST(!w.held.has_fencing_token());
   co_await b.async_unlock(w.held);
}

// Takes `name` unfenced for 600 ms and waits (10 s at most) until the watchdog renewed it past the
// first TTL's end.
asio::awaitable<lease> lock_until_renewed(locksmith::client& c, std::string const& name)
{
   auto l = co_await c.async_lock(name, unfenced(600ms));
   auto const first = l.valid_until();
   BOOST_TEST(co_await eventually([&] { return l.valid_until() > first + 600ms; }, 10s),
              "not renewed");
   BOOST_TEST(l.held());
   BOOST_TEST(!l.lost());
   co_return l;
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(unfenced_lock, server_fixture, *needs_redis_server())

// The key holds the token and no fence key is made; another client is refused; extend and unlock
// work as for a fenced lease; the acquisition ran no script.
BOOST_AUTO_TEST_CASE(a_plain_set_nx_locks_extends_and_unlocks)
{
   locksmith::client a{ioc.get_executor(), cfg()}, b{ioc.get_executor(), cfg()};
   run(ioc, [&]() -> asio::awaitable<void> {
      auto const evals = calls("evalsha") + calls("eval");
      auto l = co_await a.async_lock(name, unfenced(10s));
      BOOST_TEST(calls("evalsha") + calls("eval") == evals, "the acquisition ran a script");
      BOOST_TEST(l.held());
      BOOST_TEST(!l.has_fencing_token());
      BOOST_TEST(l.fencing_token() == 0u);
      BOOST_TEST(srv.text({"GET", lock_key(name)}) == l.token());
      BOOST_TEST(srv.text({"EXISTS", fence_key(name)}) == "0");
      auto [tec, other] = co_await b.async_try_lock(name, unfenced(), tuple);
      BOOST_TEST((tec == error::lock_taken), tec.message());
      auto [eec] = co_await a.async_extend(l, 60s, tuple);
      BOOST_TEST_REQUIRE(!eec, eec.message());
      BOOST_TEST(std::stoll(srv.text({"PTTL", lock_key(name)})) > 50'000);
      auto [uec] = co_await a.async_unlock(l, tuple);
      BOOST_TEST(!uec, uec.message());
      BOOST_TEST(srv.text({"EXISTS", lock_key(name)}) == "0");
   }());
}

// The watchdog renews an unfenced lease as it does a fenced one.
BOOST_AUTO_TEST_CASE(the_watchdog_renews_it)
{
   locksmith::client c{ioc.get_executor(), cfg()};
   run(ioc, 20s, [&]() -> asio::awaitable<void> {
      auto l = co_await lock_until_renewed(c, name);
      BOOST_TEST(srv.text({"GET", lock_key(name)}) == l.token());
      co_await c.async_unlock(l);
   }());
}

BOOST_AUTO_TEST_CASE(a_release_wakes_a_waiter)
{
   locksmith::client a{ioc.get_executor(), cfg()}, b{ioc.get_executor(), cfg()};
   run(ioc, 30s, release_wakes_the_waiter(ioc, a, b, unique_key()));
}

// Fenced and unfenced holders share the lock key: each keeps the other out, each waits for the
// other's release, and the fenced ones' tokens still rise.
BOOST_AUTO_TEST_CASE(fenced_and_unfenced_holders_exclude_each_other)
{
   locksmith::client a{ioc.get_executor(), cfg()}, b{ioc.get_executor(), cfg()};
   run(ioc, 30s, [&]() -> asio::awaitable<void> {
      auto fenced = co_await a.async_lock(name, {.ttl = 30s});
      BOOST_TEST(fenced.has_fencing_token());
      auto [ec1, l1] = co_await b.async_try_lock(name, unfenced(), tuple);
      BOOST_TEST((ec1 == error::lock_taken), ec1.message());
      waiter w{ioc};
      task_group tasks{ioc};
      tasks.spawn(w.lock(b, name, {.ttl = 30s, .wait = 20s, .fence = false}));
      co_await a.async_unlock(fenced);
      BOOST_TEST_REQUIRE(co_await w.done.wait(10s), "the fenced release did not wake it");
      BOOST_TEST_REQUIRE(!w.ec, w.ec.message());
      auto [ec2, l2] = co_await a.async_try_lock(name, {.ttl = 30s}, tuple);
      BOOST_TEST((ec2 == error::lock_taken), ec2.message());
      co_await b.async_unlock(w.held);
      auto next = co_await a.async_lock(name, {.ttl = 30s});
      BOOST_TEST(next.fencing_token() > fenced.fencing_token());
      co_await a.async_unlock(next);
   }());
}

// The fair lock, the semaphore, the read-write and the reentrant lock always mint a fence.
BOOST_AUTO_TEST_CASE(the_kinds_that_always_fence_refuse_it)
{
   locksmith::client c{ioc.get_executor(), cfg()};
   auto const no_fence = unfenced();
   run(ioc, [&]() -> asio::awaitable<void> {
      auto const refused = [](error_code ec) { return ec == error::invalid_argument; };
      auto [e1, l1] = co_await c.async_lock(name, {.fair = true, .fence = false}, tuple);
      BOOST_TEST(refused(e1), e1.message());
      auto [e2, l2] = co_await c.async_acquire_permit(name, 3, no_fence, tuple);
      BOOST_TEST(refused(e2), e2.message());
      auto [e3, l3] = co_await c.async_read_lock(name, no_fence, tuple);
      BOOST_TEST(refused(e3), e3.message());
      auto [e4, l4] = co_await c.async_write_lock(name, no_fence, tuple);
      BOOST_TEST(refused(e4), e4.message());
      auto [e5, l5] = co_await c.async_lock_reentrant(name, "me", no_fence, tuple);
      BOOST_TEST(refused(e5), e5.message());
      BOOST_TEST(srv.text({"EXISTS", lock_key(name)}) == "0");
   }());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_FIXTURE_TEST_SUITE(unfenced_redlock, redlock_fixture, *needs_redis_server())

// SET NX on every node, a quorum's vote, extend and unlock on every node, and a waiter woken by
// the release.
BOOST_AUTO_TEST_CASE(five_nodes_lock_extend_unlock_and_wake)
{
   locksmith::client a{ioc.get_executor(), cfg()}, b{ioc.get_executor(), cfg()};
   auto const key = lock_key(name);
   run(ioc, 40s, [&]() -> asio::awaitable<void> {
      auto l = co_await a.async_lock(name, unfenced(10s));
      BOOST_TEST(!l.has_fencing_token());
      BOOST_TEST(
         co_await eventually([&] { return all_hold(nodes_in(0, node_count), key, l.token()); }),
         "the token is on all five nodes");
      for (std::size_t i = 0; i < node_count; ++i)
         BOOST_TEST(srv(i).text({"EXISTS", fence_key(name)}) == "0");
      auto [tec, other] = co_await b.async_try_lock(name, unfenced(), tuple);
      BOOST_TEST((tec == error::lock_taken), tec.message());
      auto [eec] = co_await a.async_extend(l, 60s, tuple);
      BOOST_TEST_REQUIRE(!eec, eec.message());
      co_await a.async_unlock(l);
      BOOST_TEST(co_await gone_from(nodes_in(0, node_count), key));
      co_await release_wakes_the_waiter(ioc, a, b, name);
   }());
}

// A frozen minority costs no more than without a fence, and the watchdog renews on the quorum.
BOOST_AUTO_TEST_CASE(a_frozen_node_leaves_a_renewed_quorum)
{
   locksmith::client c{ioc.get_executor(), cfg()};
   pause(4);
   run(ioc, 20s, [&]() -> asio::awaitable<void> {
      auto l = co_await lock_until_renewed(c, name);
      BOOST_TEST(all_hold(nodes_in(0, 3), lock_key(name), l.token()));
      co_await c.async_unlock(l);
   }());
   resume(4);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_FIXTURE_TEST_SUITE(unfenced_cluster, cluster_fixture,
                         *needs_redis_server() * locksmith::test::needs_cluster_server())

// A name on every master: the SET NX follows the slot map (and MOVED) as the script does, and
// the release's SPUBLISH wakes a waiter.
BOOST_AUTO_TEST_CASE(names_on_every_master_lock_unlock_and_wake)
{
   locksmith::client a{ioc.get_executor(), cfg()}, b{ioc.get_executor(), cfg()};
   run(ioc, 60s, [&]() -> asio::awaitable<void> {
      for (std::size_t i = 0; i < cluster.size(); ++i) {
         auto const name = name_on(i);
         auto l = co_await a.async_lock(name, unfenced(10s));
         BOOST_TEST(!l.has_fencing_token());
         BOOST_TEST(cluster.master(i).text({"GET", lock_key(name)}) == l.token());
         auto [tec, other] = co_await b.async_try_lock(name, unfenced(), tuple);
         BOOST_TEST((tec == error::lock_taken), tec.message());
         co_await a.async_unlock(l);
         BOOST_TEST(cluster.master(i).text({"EXISTS", lock_key(name)}) == "0");
         co_await release_wakes_the_waiter(ioc, a, b, name);
      }
      co_await a.async_close();
      co_await b.async_close();
   }());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_unfenced
