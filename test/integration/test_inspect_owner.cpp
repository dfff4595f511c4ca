// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The holder label (lock_options::owner) on real redis-servers: client::async_inspect shows it
// for every kind (a lock, a fair lock's holder and waiter, permits, readers and the writer,
// reentrant holds and their owner) on 1 node and 5 nodes, and for a lock on a Redis Cluster; no
// key of the servers holds it after the release or after the expiry; a bad label is refused
// before any I/O.
#include "cluster_fixture.hpp"
#include "support/integration.hpp"
#include "support/server_checks.hpp"

#include "protocol/kind_calls.hpp"

#include <algorithm>
#include <functional>

namespace test_inspect_owner {

namespace {

using locksmith::holder_info;
using locksmith::inspection;
using locksmith::lock_kind;
using locksmith::lock_options;

// What the labels of the running case end with: a leftover of them can only be this case's.
std::string tag;

std::string label(std::string const& what)
{
   if (tag.empty())
      tag = unique_key();
   return what + "@" + tag;
}

// Inspects until `shown` holds (a quorum's last writes may land after the operation that made
// them completed), for 5 s at most; the last inspection.
asio::awaitable<inspection> inspect_until(locksmith::client& c, std::string const& name,
                                          std::function<bool(inspection const&)> shown)
{
   auto const until = clock_type::now() + 5s;
   for (;;) {
      auto [ec, in] = co_await c.async_inspect(name, tuple);
      BOOST_TEST(!ec, ec.message());
      if (shown(in) || clock_type::now() > until)
         co_return in;
      co_await sleep_for(20ms);
   }
}

// The entry of `hs` for `token`, if any.
holder_info const* entry(std::vector<holder_info> const& hs, std::string const& token)
{
   auto it = std::find_if(hs.begin(), hs.end(), [&](auto const& h) { return h.token == token; });
   return it == hs.end() ? nullptr : &*it;
}

// At least a quorum of nodes show `token` with the label `owner` in `list` (holders, holds or
// waiters).
bool shows(inspection const& in, std::string const& token, std::string const& owner,
           std::vector<holder_info> locksmith::node_inspection::*list)
{
   auto const nodes = std::count_if(in.nodes.begin(), in.nodes.end(), [&](auto const& n) {
      auto const* h = entry(n.*list, token);
      return h && h->owner == owner;
   });
   return static_cast<std::size_t>(nodes) >= in.quorum;
}

// The quorum's view and a quorum of nodes show `token` holding, with the label `owner`.
bool held_with(inspection const& in, std::string const& token, std::string const& owner)
{
   auto const* h = entry(in.holders, token);
   return h && h->owner == owner && shows(in, token, owner, &locksmith::node_inspection::holders);
}

bool free_everywhere(inspection const& in)
{
   return std::none_of(in.nodes.begin(), in.nodes.end(), [](auto const& n) {
      return n.held() || !n.holds.empty() || !n.waiters.empty();
   });
}

asio::awaitable<void> lock_and_fair(asio::io_context& ioc, locksmith::client& a,
                                    locksmith::client& b, task_group& tasks)
{
   auto const name = unique_key();
   auto const who = label("lock");
   auto l = co_await a.async_lock(name, {.ttl = 20s, .owner = who});
   BOOST_TEST(l.token().size() == 32u);  // the lease's token is without its label
   auto in =
      co_await inspect_until(a, name, [&](auto const& i) { return held_with(i, l.token(), who); });
   BOOST_TEST(held_with(in, l.token(), who));
   co_await a.async_unlock(l);

   // A fair lock: its holder, and a waiter of another client in the queue, each with its label.
   auto const fair = unique_key();
   auto const first = label("fair-holder");
   auto const second = label("fair-waiter");
   auto h = co_await a.async_lock(fair, {.ttl = 20s, .fair = true, .owner = first});
   lease theirs;
   event got{ioc};
   tasks.spawn([](locksmith::client& b, std::string fair, std::string second, lease& theirs,
                  event& got) -> asio::awaitable<void> {
      theirs =
         co_await b.async_lock(fair, {.ttl = 20s, .wait = 20s, .fair = true, .owner = second});
      got.set();
   }(b, fair, second, theirs, got));
   in = co_await inspect_until(a, fair, [&](auto const& i) {
      return std::count_if(i.nodes.begin(), i.nodes.end(), [&](auto const& n) {
                return n.waiters.size() == 1u && n.waiters[0].owner == second;
             }) >= static_cast<long>(i.quorum);
   });
   BOOST_TEST((in.kind == lock_kind::fair));
   BOOST_TEST(held_with(in, h.token(), first));
   // (On a quorum of the nodes: the first may not have queued it yet.)
   auto const shown = std::find_if(in.nodes.begin(), in.nodes.end(),
                                   [](auto const& n) { return !n.waiters.empty(); });
   BOOST_TEST_REQUIRE((shown != in.nodes.end()));
   BOOST_TEST(shown->waiters[0].owner == second);
   co_await a.async_unlock(h);
   BOOST_TEST_REQUIRE(co_await got.wait(10s));
   in = co_await inspect_until(a, fair,
                               [&](auto const& i) { return held_with(i, theirs.token(), second); });
   BOOST_TEST(held_with(in, theirs.token(), second));
   co_await b.async_unlock(theirs);
}

asio::awaitable<void> semaphore_and_reentrant(locksmith::client& a)
{
   auto const name = unique_key();
   auto const one = label("permit-1");
   auto const two = label("permit-2");
   auto p1 = co_await a.async_acquire_permit(name, 3, {.ttl = 20s, .owner = one});
   auto p2 = co_await a.async_acquire_permit(name, 3, {.ttl = 20s, .owner = two});
   auto in = co_await inspect_until(a, name, [&](auto const& i) {
      return held_with(i, p1.token(), one) && held_with(i, p2.token(), two);
   });
   BOOST_TEST((in.kind == lock_kind::semaphore));
   BOOST_TEST((held_with(in, p1.token(), one) && held_with(in, p2.token(), two)));
   co_await a.async_unlock(p1);
   co_await a.async_unlock(p2);

   // Each hold carries its label; the owner (the lock key's digest) shows the latest hold's.
   auto const re = unique_key();
   auto const outer = label("outer");
   auto const inner = label("inner");
   auto r1 = co_await a.async_lock_reentrant(re, "owner-id", {.ttl = 20s, .owner = outer});
   auto r2 = co_await a.async_lock_reentrant(re, "owner-id", {.ttl = 30s, .owner = inner});
   using locksmith::node_inspection;
   in = co_await inspect_until(a, re, [&](auto const& i) {
      return shows(i, r1.token(), outer, &node_inspection::holds) &&
             shows(i, r2.token(), inner, &node_inspection::holds);
   });
   BOOST_TEST((in.kind == lock_kind::reentrant));
   BOOST_TEST(shows(in, r1.token(), outer, &node_inspection::holds));
   BOOST_TEST(shows(in, r2.token(), inner, &node_inspection::holds));
   BOOST_TEST(held_with(in, locksmith::detail::owner_token("owner-id"), inner));
   co_await a.async_unlock(r2);
   co_await a.async_unlock(r1);
}

asio::awaitable<void> read_write(locksmith::client& a)
{
   auto const name = unique_key();
   auto const reader = label("reader");
   auto r = co_await a.async_read_lock(name, {.ttl = 20s, .owner = reader});
   auto in = co_await inspect_until(a, name,
                                    [&](auto const& i) { return held_with(i, r.token(), reader); });
   BOOST_TEST((in.kind == lock_kind::read_write));
   BOOST_TEST(held_with(in, r.token(), reader));
   co_await a.async_unlock(r);
   auto const writer = label("writer");
   auto w = co_await a.async_write_lock(name, {.ttl = 20s, .owner = writer});
   in = co_await inspect_until(a, name,
                               [&](auto const& i) { return held_with(i, w.token(), writer); });
   BOOST_TEST(held_with(in, w.token(), writer));
   co_await a.async_unlock(w);
}

// Whether any key of the server holds `text`: a string's value, a sorted set's or a list's
// member (every type that a lease writes its token to).
bool stored_anywhere(redis_server const& s, std::string const& text)
{
   auto const keys = s.command({"KEYS", "*"});
   for (auto const& k : keys.elements) {
      auto const type = s.command({"TYPE", k.str}).str;
      std::vector<std::string> values;
      if (type == "string")
         values.push_back(s.command({"GET", k.str}).str);
      for (auto const& v : type == "zset"   ? s.command({"ZRANGE", k.str, "0", "-1"}).elements
                           : type == "list" ? s.command({"LRANGE", k.str, "0", "-1"}).elements
                                            : std::vector<locksmith::test::reply>{})
         values.push_back(v.str);
      for (auto const& v : values)
         if (v.find(text) != std::string::npos)
            return true;
   }
   return false;
}

// Every kind labelled, through two clients of `cfg`; then nothing of this test's labels is left
// on `servers` once released (each release completes at a quorum: the others may come after).
void every_kind(asio::io_context& ioc, locksmith::config const& cfg,
                std::vector<redis_server*> const& servers)
{
   locksmith::client a{ioc.get_executor(), cfg};
   locksmith::client b{ioc.get_executor(), cfg};
   task_group tasks{ioc};
   tag = unique_key();
   run(ioc, 60s, [&]() -> asio::awaitable<void> {
      co_await lock_and_fair(ioc, a, b, tasks);
      co_await semaphore_and_reentrant(a);
      co_await read_write(a);
      for (auto* s : servers)
         BOOST_TEST(co_await eventually([&] { return !stored_anywhere(*s, tag); }, 5s, 20ms));
   }());
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(inspect_owner_single, server_fixture, *needs_redis_server())

BOOST_AUTO_TEST_CASE(every_kind_shows_its_label_on_one_node)
{
   every_kind(ioc, cfg(), {&srv});
}

// A lease dropped unreleased (no renewal) expires with its label: nothing of it stays behind.
BOOST_AUTO_TEST_CASE(the_label_goes_with_the_expiry)
{
   tag.clear();
   auto const who = label("expires");
   locksmith::client c{ioc.get_executor(), cfg()};
   run(ioc, [&]() -> asio::awaitable<void> {
      {
         auto l = co_await c.async_lock(name, {.ttl = 300ms, .renew = false, .owner = who});
         auto p = co_await c.async_acquire_permit(name + "/s", 2,
                                                  {.ttl = 300ms, .renew = false, .owner = who});
         BOOST_TEST(stored_anywhere(srv, who));
      }
      auto in = co_await inspect_until(c, name, free_everywhere);
      BOOST_TEST(free_everywhere(in));
      in = co_await inspect_until(c, name + "/s", free_everywhere);
      BOOST_TEST(free_everywhere(in));
      BOOST_TEST(co_await eventually([&] { return !stored_anywhere(srv, who); }, 5s, 20ms));
   }());
}

// Too long, or with a control character: invalid_argument for every kind, before any I/O (the
// server sees no command); the longest label is taken.
BOOST_AUTO_TEST_CASE(a_bad_label_is_refused)
{
   locksmith::client c{ioc.get_executor(), cfg()};
   run(ioc, [&]() -> asio::awaitable<void> {
      auto const before = calls("evalsha") + calls("eval") + calls("set");
      for (auto const& bad : {std::string(257, 'x'), std::string{"host\n1"}, std::string{"a\0b", 3},
                              std::string{"del\x7f"}}) {
         lock_options const opts{.ttl = 5s, .owner = bad};
         auto [e1, l1] = co_await c.async_lock(name, opts, tuple);
         BOOST_TEST(e1 == error::invalid_argument);
         auto [e2, l2] = co_await c.async_acquire_permit(name, 2, opts, tuple);
         BOOST_TEST(e2 == error::invalid_argument);
         auto [e3, l3] = co_await c.async_lock_reentrant(name, "o", opts, tuple);
         BOOST_TEST(e3 == error::invalid_argument);
         auto [e4, l4] = co_await c.async_read_lock(name, opts, tuple);
         BOOST_TEST(e4 == error::invalid_argument);
      }
      BOOST_TEST(calls("evalsha") + calls("eval") + calls("set") == before);
      auto const longest = std::string(256, 'y');
      auto l = co_await c.async_lock(name, {.ttl = 5s, .owner = longest});
      auto in = co_await inspect_until(
         c, name, [&](auto const& i) { return held_with(i, l.token(), longest); });
      BOOST_TEST(held_with(in, l.token(), longest));
      co_await c.async_unlock(l);
   }());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_FIXTURE_TEST_SUITE(inspect_owner_redlock, five_servers_fixture, *needs_redis_server())

BOOST_AUTO_TEST_CASE(every_kind_shows_its_label_on_five_nodes)
{
   every_kind(ioc, cfg(1s), all());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_FIXTURE_TEST_SUITE(inspect_owner_cluster, locksmith::test::cluster_fixture,
                         *needs_redis_server() * locksmith::test::needs_cluster_server())

BOOST_AUTO_TEST_CASE(a_lock_shows_its_label_on_a_cluster)
{
   auto const who = label("cluster");
   locksmith::client c{ioc.get_executor(), cfg()};
   run(ioc, [&]() -> asio::awaitable<void> {
      auto l = co_await c.async_lock(name, {.ttl = 20s, .owner = who});
      auto in = co_await inspect_until(c, name,
                                       [&](auto const& i) { return held_with(i, l.token(), who); });
      BOOST_TEST(held_with(in, l.token(), who));
      co_await c.async_unlock(l);
      in = co_await inspect_until(c, name, free_everywhere);
      BOOST_TEST(free_everywhere(in));
   }());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_inspect_owner
