// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The read-write lock (rw_lock.hpp) on real redis-servers: readers share, a writer excludes
// everyone, a waiting writer stops new readers, a steady stream of readers does not starve a
// writer, renewal and loss on both sides, and readers and writers of several processes at an
// occupancy counter, on 1 and on 5 nodes.
#include "support/counter_processes.hpp"
#include "support/integration.hpp"

#include <algorithm>

namespace test_rw_lock {

namespace {

std::string readers_key(std::string const& name)
{
   return lock_key(name) + ":readers";
}

std::string writer_waiting_key(std::string const& name)
{
   return lock_key(name) + ":writer_waiting";
}

// 4 processes x 6 coroutines (2 writers, 4 readers) x 10 rounds: a writer counts itself in and
// checks that nobody else holds; a reader checks that no writer does.
void readers_and_writers_of_four_processes(std::vector<std::string> nodes, redis_server& counter)
{
   locksmith::test::counter_run const r{.nodes = std::move(nodes),
                                        .counter_port = counter.port(),
                                        .workers = 6,
                                        .rounds = 10,
                                        .lock = {.ttl = 10s, .wait = 60s},
                                        .kind = {locksmith::detail::lease_kind::of::read},
                                        .writers = 2,
                                        .hold = 2ms};
   auto const o = locksmith::test::run_and_check_children(r);
   auto const most = locksmith::test::highest_occupancy(r);
   BOOST_TEST_MESSAGE(r.increments() << " read and write leases in " << to_ms(o.took)
                                     << " ms; most readers at once: " << most);
   // 16 readers, each holding 2 ms, enter together whenever no writer holds or waits.
   BOOST_TEST(most >= 2);
   BOOST_TEST(counter.text({"GET", r.counter + ":holders"}) == "0");
   BOOST_TEST(counter.text({"GET", r.counter + ":writers"}) == "0");
}

// A writer that waits for a reader keeps new readers out; it gets the lock when the reader
// leaves, and the refused reader gets it after the writer. `servers`: each node, where the
// writer's mark must show.
void a_waiting_writer_stops_new_readers(asio::io_context& ioc, locksmith::config const& cfg,
                                        std::vector<redis_server*> const& servers)
{
   locksmith::client a{ioc.get_executor(), cfg}, b{ioc.get_executor(), cfg},
      c{ioc.get_executor(), cfg};
   auto const name = unique_key();
   event wrote{ioc}, read{ioc};
   lease writer, late;
   auto write = [&]() -> asio::awaitable<void> {
      writer = co_await b.async_write_lock(name, {.ttl = 30s, .wait = 20s});
      wrote.set();
   };
   auto read_late = [&]() -> asio::awaitable<void> {
      late = co_await c.async_read_lock(name, {.ttl = 30s, .wait = 20s});
      read.set();
   };
   auto marked = [&](char const* exists) {
      return std::all_of(servers.begin(), servers.end(), [&](redis_server* s) {
         return s->text({"EXISTS", writer_waiting_key(name)}) == exists;
      });
   };
   task_group tasks{ioc};
   run(ioc, 20s, [&]() -> asio::awaitable<void> {
      auto reader = co_await a.async_read_lock(name, {.ttl = 30s});
      tasks.spawn(write());
      BOOST_TEST(co_await eventually([&] { return marked("1"); }, 5s));
      auto [ec, refused] = co_await c.async_read_lock(name, {.wait = 0ms}, tuple);
      BOOST_TEST(ec == error::lock_taken);
      // The writer's mark is kept fresh while it waits, past its own 1 s TTL.
      co_await sleep_for(2500ms);
      BOOST_TEST(!wrote.is_set());
      BOOST_TEST(marked("1"));
      co_await a.async_unlock(reader);
      BOOST_TEST(co_await wrote.wait(5s));
      BOOST_TEST(marked("0"));
      tasks.spawn(read_late());
      BOOST_TEST(!co_await read.wait(200ms));
      co_await b.async_unlock(writer);
      BOOST_TEST(co_await read.wait(5s));
      co_await c.async_unlock(late);
   }());
}

// Three readers take turns so that one always holds (each enters before the last leaves). A
// writer that arrives meanwhile still gets the lock, and the readers go on after it.
void a_steady_stream_of_readers_does_not_starve_a_writer(asio::io_context& ioc,
                                                         locksmith::config cfg,
                                                         std::vector<redis_server*> const& servers)
{
   // About fairness, not timeouts: a loaded machine must not fail a reader's try.
   cfg.node_timeout = 1s;
   locksmith::client w{ioc.get_executor(), cfg};
   std::vector<std::unique_ptr<locksmith::client>> readers;
   for (int i = 0; i < 3; ++i)
      readers.push_back(std::make_unique<locksmith::client>(ioc.get_executor(), cfg));
   auto const name = unique_key();
   int reads = 0, reads_after_write = 0;
   bool written = false, stop = false;
   auto reader = [&](int i) -> asio::awaitable<void> {
      co_await sleep_for(std::chrono::milliseconds{10 * i});  // staggered: always one holds
      while (!stop) {
         auto l = co_await readers[i]->async_read_lock(name, {.ttl = 10s, .wait = 10s});
         ++reads;
         reads_after_write += written ? 1 : 0;
         co_await sleep_for(30ms);
         co_await readers[i]->async_unlock(l);
      }
   };
   task_group tasks{ioc};
   run(ioc, 30s, [&]() -> asio::awaitable<void> {
      for (int i = 0; i < 3; ++i)
         tasks.spawn(reader(i));
      BOOST_TEST(co_await eventually([&] { return reads >= 10; }, 5s));
      auto held = co_await w.async_write_lock(name, {.ttl = 10s, .wait = 10s});
      written = true;
      // No reader where the writer holds, which is a quorum of the nodes. (On the others a
      // reader's attempt that lost its quorum may still hold an entry until its release lands.)
      std::size_t holds = 0;
      for (auto* s : servers) {
         if (s->text({"GET", lock_key(name)}) != held.token())
            continue;
         ++holds;
         BOOST_TEST(s->text({"ZCARD", readers_key(name)}) == "0");
      }
      BOOST_TEST(holds >= servers.size() / 2 + 1);
      co_await w.async_unlock(held);
      BOOST_TEST(co_await eventually([&] { return reads_after_write >= 3; }, 5s));
      stop = true;
      BOOST_TEST(co_await eventually([&] { return tasks.running() == 0; }, 5s));
   }());
   BOOST_TEST_MESSAGE(reads << " reads, " << reads_after_write << " after the write");
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(rw_lock, server_fixture, *needs_redis_server())

BOOST_AUTO_TEST_CASE(readers_share_and_exclude_a_writer)
{
   locksmith::client a{ioc.get_executor(), cfg()}, b{ioc.get_executor(), cfg()};
   run(ioc, [&]() -> asio::awaitable<void> {
      locksmith::lock_options const now{.ttl = 10s, .wait = 0ms};
      auto r1 = co_await a.async_read_lock(name, now);
      auto r2 = co_await a.async_read_lock(name, now);
      auto r3 = co_await b.async_read_lock(name, now);
      BOOST_TEST((r1.held() && r2.held() && r3.held()));
      BOOST_TEST(srv.text({"ZCARD", readers_key(name)}) == "3");
      auto [ec, w] = co_await b.async_write_lock(name, now, tuple);
      BOOST_TEST(ec == error::lock_taken);
      co_await a.async_unlock(r1);
      co_await a.async_unlock(r2);
      co_await b.async_unlock(r3);
      srv.text({"DEL", writer_waiting_key(name)});  // left by the refused writer
      auto held = co_await b.async_write_lock(name, now);
      BOOST_TEST(held.held());
      auto [rec, r4] = co_await a.async_read_lock(name, now, tuple);
      BOOST_TEST(rec == error::lock_taken);
      auto [wec, w2] = co_await a.async_write_lock(name, now, tuple);
      BOOST_TEST(wec == error::lock_taken);
      co_await b.async_unlock(held);
   }());
}

// Both sides are renewed past their TTL, and each finds its loss when its entry is gone. (TTLs of
// 1 s, so that a loaded machine's stall does not lose them before that.)
BOOST_AUTO_TEST_CASE(both_sides_are_renewed_and_their_loss_is_detected)
{
   locksmith::client c{ioc.get_executor(), cfg()};
   auto const name = unique_key(), other = unique_key();
   run(ioc, 10s, [&]() -> asio::awaitable<void> {
      auto r = co_await c.async_read_lock(name, {.ttl = 1s});
      auto w = co_await c.async_write_lock(other, {.ttl = 1s});
      co_await sleep(2500ms);
      BOOST_TEST((r.held() && w.held()));
      srv.text({"ZREM", readers_key(name), r.token()});
      srv.text({"DEL", lock_key(other)});
      auto [rec] = co_await r.async_wait_lost(asio::cancel_after(5s, tuple));
      auto [wec] = co_await w.async_wait_lost(asio::cancel_after(5s, tuple));
      BOOST_TEST((!rec && !wec));
      auto [u1] = co_await c.async_unlock(r, tuple);
      auto [u2] = co_await c.async_unlock(w, tuple);
      BOOST_TEST((u1 == error::lease_lost && u2 == error::lease_lost));
   }());
}

BOOST_AUTO_TEST_CASE(a_waiting_writer_stops_new_readers_on_one_node)
{
   a_waiting_writer_stops_new_readers(ioc, cfg(), {&srv});
}

BOOST_AUTO_TEST_CASE(a_steady_stream_of_readers_does_not_starve_a_writer_on_one_node)
{
   a_steady_stream_of_readers_does_not_starve_a_writer(ioc, cfg(), {&srv});
}

BOOST_AUTO_TEST_CASE(readers_and_writers_of_four_processes_on_one_node)
{
   redis_server counter;
   readers_and_writers_of_four_processes({srv.url()}, counter);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_FIXTURE_TEST_SUITE(rw_lock_redlock, five_servers_fixture, *needs_redis_server())

BOOST_AUTO_TEST_CASE(a_waiting_writer_stops_new_readers_on_five_nodes)
{
   a_waiting_writer_stops_new_readers(ioc, cfg(1s), all());
}

BOOST_AUTO_TEST_CASE(a_steady_stream_of_readers_does_not_starve_a_writer_on_five_nodes)
{
   a_steady_stream_of_readers_does_not_starve_a_writer(ioc, cfg(1s), all());
}

BOOST_AUTO_TEST_CASE(readers_and_writers_of_four_processes_on_five_nodes)
{
   redis_server counter;
   readers_and_writers_of_four_processes(cfg(1s).nodes, counter);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_rw_lock
