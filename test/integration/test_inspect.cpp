// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// client::async_inspect on real redis-servers: every kind (lock, fair lock with a waiter,
// semaphore, readers and a waiting writer, the writer, reentrant holds), held and free, on 1 node,
// on 5 nodes and on a Redis Cluster; too few nodes answering; bad input.
#include "cluster_fixture.hpp"
#include "support/integration.hpp"
#include "support/server_checks.hpp"

#include "protocol/kind_calls.hpp"

#include <algorithm>
#include <functional>

namespace test_inspect {

namespace {

using locksmith::inspection;
using locksmith::lock_kind;
using locksmith::node_inspection;

asio::awaitable<inspection> inspect(locksmith::client& c, std::string const& name)
{
   auto [ec, in] = co_await c.async_inspect(name, tuple);
   BOOST_TEST(!ec, ec.message());
   BOOST_TEST(in.answered == in.nodes.size());
   co_return in;
}

// Inspects until `shown` holds (what a quorum's last writes bring may land after the operation
// that made them completed), for 5 s at most; the last inspection.
asio::awaitable<inspection> inspect_until(locksmith::client& c, std::string const& name,
                                          std::function<bool(inspection const&)> shown)
{
   auto const until = clock_type::now() + 5s;
   for (;;) {
      auto in = co_await inspect(c, name);
      if (shown(in) || clock_type::now() > until)
         co_return in;
      co_await sleep_for(20ms);
   }
}

// How many nodes show `pred`.
std::size_t nodes_showing(inspection const& in, std::function<bool(node_inspection const&)> pred)
{
   return static_cast<std::size_t>(std::count_if(in.nodes.begin(), in.nodes.end(), pred));
}

bool held_by(inspection const& in, std::string const& token)
{
   return std::any_of(in.holders.begin(), in.holders.end(),
                      [&](auto const& h) { return h.token == token; });
}

// Free on every node: a release completes once a quorum answered, the others' may come after.
asio::awaitable<void> check_free(locksmith::client& c, std::string const& name)
{
   auto const in = co_await inspect_until(c, name, [](auto const& i) {
      return i.kind == lock_kind::none &&
             nodes_showing(i, [](auto const& n) { return n.held(); }) == 0u;
   });
   BOOST_TEST(in.name == name);
   BOOST_TEST(!in.held());
   BOOST_TEST((in.kind == lock_kind::none));
   BOOST_TEST(nodes_showing(in, [](auto const& n) { return n.held(); }) == 0u);
}

asio::awaitable<void> lock_and_fair(asio::io_context& ioc, locksmith::client& a,
                                    locksmith::client& b, task_group& tasks)
{
   auto const name = unique_key();
   co_await check_free(a, name);
   auto l = co_await a.async_lock(name, {.ttl = 20s});
   auto in = co_await inspect(a, name);
   BOOST_TEST((in.kind == lock_kind::lock));
   BOOST_TEST_REQUIRE(in.holders.size() == 1u);
   BOOST_TEST(in.holders[0].token == l.token());
   BOOST_TEST(in.holders[0].ttl > 0ms);
   BOOST_TEST(in.holders[0].ttl <= 20s);
   BOOST_TEST(in.fence >= static_cast<std::int64_t>(l.fencing_token()));
   co_await a.async_unlock(l);
   co_await check_free(a, name);
   auto after = co_await inspect(a, name);
   BOOST_TEST(after.fence >= static_cast<std::int64_t>(l.fencing_token()));  // kept for the next

   // A fair lock with a waiter from another client: the waiter shows in the queue.
   auto const fair = unique_key();
   auto h = co_await a.async_lock(fair, {.ttl = 20s, .fair = true});
   lease theirs;
   event got{ioc};
   // Parameters, not captures: the lambda is gone once spawn returns, its frame is not.
   tasks.spawn([](locksmith::client& b, std::string fair, lease& theirs,
                  event& got) -> asio::awaitable<void> {
      theirs = co_await b.async_lock(fair, {.ttl = 20s, .wait = 20s, .fair = true});
      got.set();
   }(b, fair, theirs, got));
   in = co_await inspect_until(a, fair, [&](auto const& i) {
      return i.kind == lock_kind::fair &&
             nodes_showing(i, [](auto const& n) { return n.waiters.size() == 1u; }) >= i.quorum;
   });
   BOOST_TEST((in.kind == lock_kind::fair));
   BOOST_TEST(held_by(in, h.token()));
   BOOST_TEST(nodes_showing(in, [](auto const& n) { return n.waiters.size() == 1u; }) >= in.quorum);
   co_await a.async_unlock(h);
   BOOST_TEST_REQUIRE(co_await got.wait(10s));
   in = co_await inspect_until(a, fair, [&](auto const& i) { return held_by(i, theirs.token()); });
   BOOST_TEST(held_by(in, theirs.token()));
   co_await b.async_unlock(theirs);
}

asio::awaitable<void> semaphore_and_reentrant(locksmith::client& a)
{
   auto const name = unique_key();
   auto p1 = co_await a.async_acquire_permit(name, 3, {.ttl = 20s});
   auto p2 = co_await a.async_acquire_permit(name, 3, {.ttl = 20s});
   auto in = co_await inspect_until(a, name, [](auto const& i) {
      return nodes_showing(i, [](auto const& n) { return n.holders.size() == 2u; }) >= i.quorum;
   });
   BOOST_TEST((in.kind == lock_kind::semaphore));
   BOOST_TEST(in.holders.size() == 2u);
   BOOST_TEST((held_by(in, p1.token()) && held_by(in, p2.token())));
   BOOST_TEST(nodes_showing(in, [](auto const& n) { return n.holders.size() == 2u; }) >= in.quorum);
   co_await a.async_unlock(p1);
   co_await a.async_unlock(p2);
   co_await check_free(a, name);

   auto const re = unique_key();
   auto r1 = co_await a.async_lock_reentrant(re, "inspect-owner", {.ttl = 20s});
   auto r2 = co_await a.async_lock_reentrant(re, "inspect-owner", {.ttl = 20s});
   in = co_await inspect_until(a, re, [](auto const& i) {
      return nodes_showing(i, [](auto const& n) { return n.holds.size() == 2u; }) >= i.quorum;
   });
   BOOST_TEST((in.kind == lock_kind::reentrant));
   BOOST_TEST(held_by(in, locksmith::detail::owner_token("inspect-owner")));
   BOOST_TEST(nodes_showing(in, [](auto const& n) { return n.holds.size() == 2u; }) >= in.quorum);
   co_await a.async_unlock(r2);
   co_await a.async_unlock(r1);
   co_await check_free(a, re);
}

asio::awaitable<void> read_write(asio::io_context& ioc, locksmith::client& a, locksmith::client& b,
                                 task_group& tasks)
{
   auto const name = unique_key();
   auto r1 = co_await a.async_read_lock(name, {.ttl = 20s});
   auto r2 = co_await a.async_read_lock(name, {.ttl = 20s});
   auto in = co_await inspect_until(
      a, name, [&](auto const& i) { return held_by(i, r1.token()) && held_by(i, r2.token()); });
   BOOST_TEST((in.kind == lock_kind::read_write));
   BOOST_TEST((held_by(in, r1.token()) && held_by(in, r2.token())));
   BOOST_TEST(nodes_showing(in, [](auto const& n) { return n.writer; }) == 0u);
   // A writer waits: the marker shows.
   lease w;
   event got{ioc};
   tasks.spawn(
      [](locksmith::client& b, std::string name, lease& w, event& got) -> asio::awaitable<void> {
         w = co_await b.async_write_lock(name, {.ttl = 20s, .wait = 20s});
         got.set();
      }(b, name, w, got));
   in = co_await inspect_until(a, name, [](auto const& i) {
      return nodes_showing(i, [](auto const& n) { return n.writer_waiting; }) >= i.quorum;
   });
   BOOST_TEST(nodes_showing(in, [](auto const& n) { return n.writer_waiting; }) >= in.quorum);
   co_await a.async_unlock(r1);
   co_await a.async_unlock(r2);
   BOOST_TEST_REQUIRE(co_await got.wait(10s));
   // The writer holds the lock key, the marker gone: the keys of a plain lock (inspection.hpp).
   in = co_await inspect(a, name);
   BOOST_TEST(held_by(in, w.token()));
   BOOST_TEST((in.kind == lock_kind::lock || in.kind == lock_kind::read_write));
   co_await b.async_unlock(w);
   co_await check_free(a, name);
}

// Every kind, held and free, through two clients of `cfg`.
void every_kind(asio::io_context& ioc, locksmith::config const& cfg)
{
   locksmith::client a{ioc.get_executor(), cfg};
   locksmith::client b{ioc.get_executor(), cfg};
   task_group tasks{ioc};
   run(ioc, 60s, [&]() -> asio::awaitable<void> {
      co_await lock_and_fair(ioc, a, b, tasks);
      co_await semaphore_and_reentrant(a);
      co_await read_write(ioc, a, b, tasks);
   }());
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(inspect_single, server_fixture, *needs_redis_server())

BOOST_AUTO_TEST_CASE(every_kind_on_one_node)
{
   every_kind(ioc, cfg());
}

BOOST_AUTO_TEST_CASE(bad_input_is_refused)
{
   locksmith::client c{ioc.get_executor(), cfg()};
   locksmith::client bad{ioc.get_executor(), test_config({"redis://"})};
   run(ioc, [&]() -> asio::awaitable<void> {
      auto [ec, in] = co_await c.async_inspect("", tuple);
      BOOST_TEST(ec == error::invalid_argument);
      BOOST_TEST(in.nodes.empty());
      auto [long_ec, _] =
         co_await c.async_inspect(std::string(locksmith::max_key_size + 1, 'k'), tuple);
      BOOST_TEST(long_ec == error::invalid_argument);
      auto [bad_ec, __] = co_await bad.async_inspect("k", tuple);
      BOOST_TEST(bad_ec == error::invalid_argument);
   }());
}

// A key of a type that no primitive writes reads as `other`, held by nobody.
BOOST_AUTO_TEST_CASE(a_foreign_key_reads_as_other)
{
   srv.command({"HSET", lock_key(name), "f", "v"});
   locksmith::client c{ioc.get_executor(), cfg()};
   run(ioc, [&]() -> asio::awaitable<void> {
      auto in = co_await inspect(c, name);
      BOOST_TEST((in.kind == lock_kind::other));
      BOOST_TEST(!in.held());
   }());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_FIXTURE_TEST_SUITE(inspect_redlock, five_servers_fixture, *needs_redis_server())

BOOST_AUTO_TEST_CASE(every_kind_on_five_nodes)
{
   every_kind(ioc, cfg(1s));
}

// Three of five nodes frozen: no quorum answers. Each frozen node's entry says why, and the two
// that answered say what they hold.
BOOST_AUTO_TEST_CASE(too_few_nodes_answer)
{
   locksmith::client c{ioc.get_executor(), cfg(200ms)};
   run(ioc, [&]() -> asio::awaitable<void> {
      auto l = co_await c.async_lock(name, {.ttl = 20s});
      for (std::size_t i = 2; i < 5; ++i)
         servers[i]->pause();
      auto [ec, in] = co_await c.async_inspect(name, tuple);
      for (std::size_t i = 2; i < 5; ++i)
         servers[i]->resume();
      BOOST_TEST(ec == error::quorum_unreachable);
      BOOST_TEST(in.answered == 2u);
      BOOST_TEST(in.quorum == 3u);
      BOOST_TEST(!in.held());
      BOOST_TEST_REQUIRE(in.nodes.size() == 5u);
      BOOST_TEST(!in.nodes[0].ec);
      BOOST_TEST(in.nodes[0].holders.at(0).token == l.token());
      BOOST_TEST(in.nodes[4].ec == error_code{asio::error::timed_out});
      co_await c.async_unlock(l);
   }());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_FIXTURE_TEST_SUITE(inspect_cluster, locksmith::test::cluster_fixture,
                         *needs_redis_server() * locksmith::test::needs_cluster_server())

BOOST_AUTO_TEST_CASE(every_kind_on_a_cluster)
{
   every_kind(ioc, cfg());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_inspect
