// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The semaphore (semaphore.hpp) on real redis-servers: its bound, wake-up by release, a crashed
// holder's permit coming back by its TTL, renewal and loss, and 8 processes on 3 permits, on 1 and
// on 5 nodes.
#include "support/counter_processes.hpp"
#include "support/integration.hpp"

#include "sansio/set_scripts.hpp"

namespace test_semaphore {

namespace {

std::string permits_key(std::string const& name)
{
   return lock_key(name);  // the holder set is the name's key
}

// 8 processes x 4 coroutines x 10 rounds on a 3-permit semaphore: each holder counts itself in at
// a counter on another server and checks that at most 3 hold at once; every coroutine finishes.
void eight_processes_on_three_permits(std::vector<std::string> nodes, std::uint16_t counter_port,
                                      redis_server& counter)
{
   locksmith::test::counter_run const r{.nodes = std::move(nodes),
                                        .counter_port = counter_port,
                                        .processes = 8,
                                        .workers = 4,
                                        .rounds = 10,
                                        .lock = {.ttl = 10s, .wait = 60s},
                                        .kind = {locksmith::detail::lease_kind::of::permit, 3},
                                        .hold = 2ms};
   auto const o = locksmith::test::run_and_check_children(r);
   auto const highest = locksmith::test::highest_occupancy(r);
   BOOST_TEST_MESSAGE(r.increments() << " permits taken in " << to_ms(o.took)
                                     << " ms; most holders at once: " << highest);
   BOOST_TEST(highest <= 3);
   BOOST_TEST(highest >= 1);
   BOOST_TEST(counter.text({"GET", r.counter + ":holders"}) == "0");
}

// A holder that dies without releasing (its client destroyed, its lease dropped) gives its permit
// back when its TTL runs out, though nobody published a release. `servers`: each node.
void a_crashed_holders_permit_comes_back(asio::io_context& ioc, locksmith::config const& cfg,
                                         std::vector<redis_server*> const& servers)
{
   locksmith::client b{ioc.get_executor(), cfg};
   auto const name = unique_key();
   run(ioc, 10s, [&]() -> asio::awaitable<void> {
      {
         locksmith::client a{ioc.get_executor(), cfg};
         auto gone = co_await a.async_acquire_permit(name, 1, {.ttl = 300ms, .renew = false});
         BOOST_TEST(gone.held());
      }
      auto [ec, l] = co_await b.async_acquire_permit(name, 1, {.wait = 0ms}, tuple);
      BOOST_TEST(ec == error::lock_taken);
      auto back = co_await b.async_acquire_permit(name, 1, {.ttl = 5s, .wait = 5s});
      BOOST_TEST(back.held());
      // The new holder's permit is on a majority of the nodes (one permit's quorum), not on
      // every node: a node where the crashed holder's entry had not expired yet when the
      // attempt reached it said no, and a grant does not wait for the last nodes' writes.
      auto const quorum = servers.size() / 2 + 1;
      bool const on_a_quorum = co_await eventually([&] {
         return static_cast<std::size_t>(
                   std::count_if(servers.begin(), servers.end(), [&](redis_server* s) {
                      return s->text({"ZSCORE", permits_key(name), back.token()}) != "(nil)";
                   })) >= quorum;
      });
      BOOST_TEST(on_a_quorum);
      co_await b.async_unlock(back);
   }());
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(semaphore, server_fixture, *needs_redis_server())

// The server compiles each script of the semaphore, the read-write lock and the reentrant lock
// (a Lua error would otherwise show only as unexpected_reply).
BOOST_AUTO_TEST_CASE(the_scripts_load)
{
   using namespace locksmith::detail;
   for (auto const* s : {&set_acquire_script(), &set_extend_script(), &set_release_script(),
                         &write_acquire_script(), &reentrant_acquire_script(),
                         &reentrant_extend_script(), &reentrant_release_script()})
      BOOST_TEST(srv.text({"SCRIPT", "LOAD", s->text}) == s->sha1, s->name);
}

BOOST_AUTO_TEST_CASE(three_permits_admit_three_holders_and_refuse_a_fourth)
{
   locksmith::client c{ioc.get_executor(), cfg()};
   run(ioc, [&]() -> asio::awaitable<void> {
      locksmith::lock_options const now{.ttl = 10s, .wait = 0ms};
      auto a = co_await c.async_acquire_permit(name, 3, now);
      auto b = co_await c.async_acquire_permit(name, 3, now);
      auto d = co_await c.async_acquire_permit(name, 3, now);
      BOOST_TEST((a.held() && b.held() && d.held()));
      BOOST_TEST(a.token() != b.token());
      BOOST_TEST(a.fencing_token() < b.fencing_token());
      BOOST_TEST(srv.text({"ZCARD", permits_key(name)}) == "3");
      auto [ec, e] = co_await c.async_acquire_permit(name, 3, now, tuple);
      BOOST_TEST(ec == error::lock_taken);
      co_await c.async_unlock(b);
      auto f = co_await c.async_acquire_permit(name, 3, now);
      BOOST_TEST(f.held());
      co_await c.async_unlock(a);  // (no braced list to loop over: it trips GCC 12 here)
      co_await c.async_unlock(d);
      co_await c.async_unlock(f);
      BOOST_TEST(srv.text({"EXISTS", permits_key(name)}) == "0");
   }());
}

// The holder's release wakes the waiter at once: the wait ends long before the holder's TTL.
BOOST_AUTO_TEST_CASE(a_release_wakes_a_waiter)
{
   locksmith::client a{ioc.get_executor(), cfg()}, b{ioc.get_executor(), cfg()};
   event got{ioc};
   lease theirs;
   auto waiter = [&]() -> asio::awaitable<void> {
      theirs = co_await b.async_acquire_permit(name, 1, {.ttl = 60s, .wait = 30s});
      got.set();
   };
   task_group tasks{ioc};
   run(ioc, 10s, [&]() -> asio::awaitable<void> {
      auto held = co_await a.async_acquire_permit(name, 1, {.ttl = 60s});
      tasks.spawn(waiter());
      BOOST_TEST(!co_await got.wait(300ms));  // still held: the waiter waits
      co_await a.async_unlock(held);
      BOOST_TEST(co_await got.wait(5s));
      BOOST_TEST(theirs.held());
      co_await b.async_unlock(theirs);
   }());
}

BOOST_AUTO_TEST_CASE(a_crashed_holders_permit_comes_back_after_its_ttl)
{
   a_crashed_holders_permit_comes_back(ioc, cfg(), {&srv});
}

// A permit is renewed past its TTL, and found lost once its entry is gone. (A TTL of 1 s: with
// 300 ms, renewals every 100 ms and a loss 250 ms after the last one, a loaded machine's stall
// could lose the permit.)
BOOST_AUTO_TEST_CASE(a_permit_is_renewed_and_its_loss_is_detected)
{
   locksmith::client c{ioc.get_executor(), cfg()};
   run(ioc, 10s, [&]() -> asio::awaitable<void> {
      auto l = co_await c.async_acquire_permit(name, 2, {.ttl = 1s});
      co_await sleep(2500ms);
      BOOST_TEST(l.held());
      BOOST_TEST(!l.lost());
      co_await c.async_extend(l, 1s);
      srv.text({"ZREM", permits_key(name), l.token()});
      auto [ec] = co_await l.async_wait_lost(asio::cancel_after(5s, tuple));
      BOOST_TEST(!ec);
      BOOST_TEST(l.lost());
      auto [uec] = co_await c.async_unlock(l, tuple);
      BOOST_TEST(uec == error::lease_lost);
   }());
}

BOOST_AUTO_TEST_CASE(zero_permits_and_a_lock_name_are_refused)
{
   locksmith::client a{ioc.get_executor(), cfg()}, b{ioc.get_executor(), cfg()};
   run(ioc, [&]() -> asio::awaitable<void> {
      auto [ec, l] = co_await a.async_acquire_permit(name, 0, {}, tuple);
      BOOST_TEST(ec == error::invalid_argument);
      auto held = co_await a.async_lock(name);
      auto [wec, w] = co_await b.async_acquire_permit(name, 2, {.wait = 0ms}, tuple);
      BOOST_TEST(wec == error::unexpected_reply);  // WRONGTYPE: the name is a lock
      co_await a.async_unlock(held);
   }());
}

BOOST_AUTO_TEST_CASE(eight_processes_never_exceed_three_holders_on_one_node)
{
   redis_server counter;
   eight_processes_on_three_permits({srv.url()}, counter.port(), counter);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_FIXTURE_TEST_SUITE(semaphore_redlock, five_servers_fixture, *needs_redis_server())

BOOST_AUTO_TEST_CASE(eight_processes_never_exceed_three_holders_on_five_nodes)
{
   redis_server counter;
   eight_processes_on_three_permits(cfg(1s).nodes, counter.port(), counter);
}

BOOST_AUTO_TEST_CASE(a_crashed_holders_permit_comes_back_after_its_ttl_on_five_nodes)
{
   a_crashed_holders_permit_comes_back(ioc, cfg(1s), all());
}

// 3 permits on 5 nodes need 4 nodes (permit_quorum): with one node down they are still granted,
// with two they are not.
BOOST_AUTO_TEST_CASE(three_permits_on_five_nodes_need_four)
{
   servers[4]->pause();
   locksmith::client c{ioc.get_executor(), cfg(1s)};
   run(ioc, 10s, [&]() -> asio::awaitable<void> {
      locksmith::report diag;
      auto [ec, l] =
         co_await c.async_acquire_permit(name, 3, {.ttl = 5s, .wait = 0ms, .diag = &diag}, tuple);
      BOOST_TEST(!ec);
      co_await c.async_unlock(l);
      servers[3]->pause();
      auto [ec2, l2] =
         co_await c.async_acquire_permit(name, 3, {.ttl = 5s, .wait = 0ms, .diag = &diag}, tuple);
      BOOST_TEST(ec2 == error::quorum_unreachable);
      servers[3]->resume();
   }());
   servers[4]->resume();
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_semaphore
