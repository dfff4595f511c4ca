// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The fair lock (lock_options::fair) on real redis-servers: waiters take it in their order of
// arrival, the release hands it to the first one directly, a waiter that gives up leaves the
// queue, 4 clients x 4 coroutines take turns, and processes keep mutual exclusion (on one node,
// in queue order); on 1 and on 5 nodes. Last, waiters that head the queues of different nodes,
// none a majority, on 5 nodes.
#include "support/counter_processes.hpp"
#include "support/integration.hpp"

#include "sansio/set_scripts.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

namespace test_fair_lock {

namespace {

locksmith::lock_options fair(std::chrono::milliseconds wait = 30s)
{
   return {.ttl = 10s, .wait = wait, .fair = true};
}

std::string queue_key(std::string const& name)
{
   return lock_key(name) + ":queue";
}

// True when the name's queue holds `k` tokens on each of the servers in [first, last) (pointers
// to redis_server, owning or not).
template <class It>
bool queued_on(It first, It last, std::string const& name, long long k)
{
   return std::all_of(first, last, [&](auto const& s) {
      return s->text({"LLEN", queue_key(name)}) == std::to_string(k);
   });
}

// A holder, then five waiters (each its own client, as five processes), each arriving once the
// one before is queued on every node: they get the lock in that order, each handed it by the
// release before, with fences that grow.
void waiters_in_their_order_of_arrival(asio::io_context& ioc, locksmith::config const& cfg,
                                       std::vector<redis_server*> const& servers)
{
   constexpr int n = 5;
   auto const name = unique_key();
   auto clients = make_clients(ioc, cfg, n + 1);
   std::vector<int> order;
   std::vector<std::uint64_t> fences;
   task_group tasks{ioc};
   countdown finished{ioc, n};
   auto waiter = [&](int i) -> asio::awaitable<void> {
      auto l = co_await clients[i + 1]->async_lock(name, fair());
      order.push_back(i);
      fences.push_back(l.fencing_token());
      co_await clients[i + 1]->async_unlock(l);
      finished.done();
   };
   auto queued_everywhere = [&](long long k) {
      return queued_on(servers.begin(), servers.end(), name, k);
   };
   run(ioc, 60s, [&]() -> asio::awaitable<void> {
      auto held = co_await clients[0]->async_lock(name, fair());
      fences.push_back(held.fencing_token());
      for (int i = 0; i < n; ++i) {
         tasks.spawn(waiter(i));
         BOOST_TEST_REQUIRE(co_await eventually([&] { return queued_everywhere(i + 1); }, 10s));
      }
      co_await clients[0]->async_unlock(held);
      BOOST_TEST_REQUIRE(co_await finished.all_done.wait(30s));
   }());
   BOOST_TEST(order == (std::vector<int>{0, 1, 2, 3, 4}));
   BOOST_TEST(std::is_sorted(fences.begin(), fences.end()));
   BOOST_TEST((std::adjacent_find(fences.begin(), fences.end()) == fences.end()));
   for (auto* s : servers) {
      BOOST_TEST(s->text({"EXISTS", lock_key(name)}) == "0");
      BOOST_TEST(s->text({"EXISTS", queue_key(name)}) == "0");
   }
}

// What `turns` saw: each worker's acquisitions, and how often a waiter gave its place in the
// queues up (a split vote that it did not keep, each followed by a draw of lots).
struct turns_seen {
   std::vector<int> count;
   std::uint64_t places_given_up = 0;
};

// 4 clients (as 4 processes) x 4 coroutines take the name in turns for a while: every worker
// gets it, and with one node the counts differ by one at most (a round each, in queue order).
turns_seen turns(asio::io_context& ioc, locksmith::config const& cfg,
                 std::chrono::milliseconds run_for)
{
   constexpr int processes = 4, workers = 4;
   auto const name = unique_key();
   auto clients = make_clients(ioc, cfg, processes);
   std::vector<int> count(processes * workers);
   int holders = 0, overlaps = 0, failures = 0;
   bool stop = false;
   countdown finished{ioc, processes * workers};
   task_group tasks{ioc};
   auto worker = [&](int id) -> asio::awaitable<void> {
      auto& c = *clients[id / workers];
      while (!stop) {
         auto [ec, l] = co_await c.async_lock(name, fair(), tuple);
         if (ec) {
            ++failures;
            break;
         }
         overlaps += ++holders > 1 ? 1 : 0;
         ++count[id];
         co_await yield();
         --holders;
         co_await c.async_unlock(l);
      }
      finished.done();
   };
   run(ioc, 60s, [&]() -> asio::awaitable<void> {
      for (int i = 0; i < processes * workers; ++i)
         tasks.spawn(worker(i));
      asio::steady_timer t{ioc, run_for};
      co_await t.async_wait(asio::use_awaitable);
      stop = true;
      BOOST_TEST_REQUIRE(co_await finished.all_done.wait(30s));
   }());
   BOOST_TEST(overlaps == 0);
   BOOST_TEST(failures == 0);
   turns_seen seen{std::move(count)};
   for (auto const& c : clients)
      seen.places_given_up += c->metrics().wakes.lots;
   return seen;
}

// How many turns each holder's queue decided: the next holder was its head, and the waiters
// behind that head stayed in their order, ahead of those who queued after them.
std::size_t turns_follow_the_queue(std::vector<std::vector<std::string>> const& turns)
{
   std::size_t decided = 0;
   for (std::size_t i = 0; i + 1 < turns.size(); ++i) {
      auto const& held = turns[i];
      auto const& next = turns[i + 1];
      if (held.size() < 2)
         continue;  // nobody queued: whoever comes first is next
      ++decided;
      BOOST_TEST_REQUIRE(next[0] == held[1], "turn " << i + 1 << " is not the queue's head");
      BOOST_TEST_REQUIRE((next.size() + 1 >= held.size() &&
                          std::equal(held.begin() + 2, held.end(), next.begin() + 1)),
                         "turn " << i + 1 << ": the queue behind its head changed order");
   }
   return decided;
}

// 4 processes x 4 coroutines, 10 rounds each, on one name, counting under the lock on `counter`
// (node 0 when `ordered`, which also records every turn): the increments come out exact, and
// when `ordered`, the lock goes to the head of the queue each time.
void four_processes_of_four_coroutines(std::vector<std::string> nodes, redis_server& counter,
                                       bool ordered)
{
   locksmith::test::counter_run const r{.nodes = std::move(nodes),
                                        .counter_port = counter.port(),
                                        .workers = 4,
                                        .rounds = 10,
                                        .lock = fair(60s),
                                        .record_turns = ordered};
   locksmith::test::run_and_check_children(r);
   BOOST_TEST(counter.text({"GET", r.counter}) == std::to_string(r.increments()));
   if (!ordered)
      return;
   auto const turns = locksmith::test::recorded_turns(r);
   BOOST_TEST_REQUIRE(turns.size() == static_cast<std::size_t>(r.increments()));
   auto const decided = turns_follow_the_queue(turns);
   BOOST_TEST_MESSAGE(decided << " of " << turns.size() << " turns handed to the queue's head");
   // 4 processes, one contender each in Redis: the queue is seldom empty, so the check above is
   // not vacuous. (Half the turns, usually; 46 of 160 with three sanitizer runs on 2 cores.)
   BOOST_TEST(decided >= turns.size() / 8);
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(fair_lock, server_fixture, *needs_redis_server())

BOOST_AUTO_TEST_CASE(the_scripts_load)
{
   using namespace locksmith::detail;
   for (auto const* s : {&fair_acquire_script(), &fair_release_script()})
      BOOST_TEST(srv.text({"SCRIPT", "LOAD", s->text}) == s->sha1, s->name);
}

BOOST_AUTO_TEST_CASE(waiters_take_it_in_their_order_of_arrival)
{
   waiters_in_their_order_of_arrival(ioc, cfg(), {&srv});
}

// A waiter that gives up (its wait ran out, or it was cancelled) leaves the queue at once: the
// holder's release then deletes the key instead of handing it to nobody.
BOOST_AUTO_TEST_CASE(a_waiter_that_gives_up_leaves_the_queue)
{
   locksmith::client a{ioc.get_executor(), cfg()}, b{ioc.get_executor(), cfg()};
   run(ioc, 20s, [&]() -> asio::awaitable<void> {
      auto held = co_await a.async_lock(name, fair());
      auto [ec, l] = co_await b.async_lock(name, fair(300ms), tuple);
      BOOST_TEST(ec == error::wait_timeout);
      BOOST_TEST(co_await eventually([&] { return srv.text({"LLEN", queue_key(name)}) == "0"; }));
      auto [cec, cl] = co_await b.async_lock(name, fair(), asio::cancel_after(300ms, tuple));
      BOOST_TEST(cec == asio::error::operation_aborted);
      BOOST_TEST(co_await eventually([&] { return srv.text({"LLEN", queue_key(name)}) == "0"; }));
      co_await a.async_unlock(held);
      BOOST_TEST(srv.text({"EXISTS", lock_key(name)}) == "0");
      auto again = co_await b.async_lock(name, fair(0ms));
      BOOST_TEST(again.held());
      co_await b.async_unlock(again);
   }());
}

// Only the waiter the lock was handed to is woken: the others make no request for it.
BOOST_AUTO_TEST_CASE(a_release_wakes_only_the_waiter_it_hands_the_lock_to)
{
   load_scripts(srv);
   auto clients = make_clients(ioc, cfg(), 4);
   task_group tasks{ioc};
   std::vector<lease> got(4);
   auto wait = [&](int i) -> asio::awaitable<void> {
      got[i] = co_await clients[i]->async_lock(name, fair());
   };
   run(ioc, 30s, [&]() -> asio::awaitable<void> {
      auto held = co_await clients[0]->async_lock(name, fair());
      for (int i = 1; i < 4; ++i) {
         tasks.spawn(wait(i));
         BOOST_TEST_REQUIRE(co_await eventually(
            [&] {
               return srv.text({"LLEN", queue_key(name)}) == std::to_string(i);
            },
            10s));
      }
      // A waiter's sleeps end by the release message or by its 500 ms keep-place timer; only
      // the timer may end those of the waiters the lock was not handed to.
      auto const woken = [&](int i, bool by_message) {
         auto const w = clients[i]->metrics().wakes;
         return by_message ? w.message : w.ttl_timer + w.spin + w.subscription + w.lots;
      };
      auto const timers = [&] { return woken(1, false) + woken(2, false) + woken(3, false); };
      std::vector<std::uint64_t> const messages{woken(2, true), woken(3, true)};
      auto const timers_before = timers();
      auto const before = calls("evalsha");
      co_await clients[0]->async_unlock(held);
      BOOST_TEST_REQUIRE(co_await eventually([&] { return got[1].held(); }, 10s));
      auto const spent = calls("evalsha") - before;
      auto const kept = timers() - timers_before;
      BOOST_TEST_MESSAGE("requests for one handoff with 3 waiters: " << spent << ", of which "
                                                                     << kept << " keep-place");
      BOOST_TEST(woken(2, true) == messages[0]);
      BOOST_TEST(woken(3, true) == messages[1]);
      // The release and the first waiter's one try, not one try per waiter; plus a try per
      // keep-place wake meanwhile, and per waiter at most one such try already sent when
      // `before` was read.
      BOOST_TEST(spent >= 2);
      BOOST_TEST(spent <= 2 + kept + 3);
      BOOST_TEST(!got[2].held());
      for (int i = 1; i < 4; ++i) {
         BOOST_TEST_REQUIRE(co_await eventually([&] { return got[i].held(); }, 10s));
         co_await clients[i]->async_unlock(got[i]);
      }
   }());
}

BOOST_AUTO_TEST_CASE(four_clients_of_four_coroutines_take_turns)
{
   auto const count = turns(ioc, cfg(), 3s).count;
   auto const [lo, hi] = std::minmax_element(count.begin(), count.end());
   BOOST_TEST_MESSAGE("acquisitions per worker in 3 s: " << *lo << " to " << *hi);
   BOOST_TEST(*lo > 0);
   BOOST_TEST(*hi - *lo <= 1);
}

// The fair lock's increments across 4 processes of 4 coroutines come out exact, and each holder
// is the head of the queue its predecessor saw (the counter is on the lock's server).
BOOST_AUTO_TEST_CASE(processes_keep_mutual_exclusion_and_queue_order_on_one_node)
{
   four_processes_of_four_coroutines({srv.url()}, srv, true);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_FIXTURE_TEST_SUITE(fair_lock_redlock, five_servers_fixture, *needs_redis_server())

BOOST_AUTO_TEST_CASE(waiters_take_it_in_their_order_of_arrival_on_five_nodes)
{
   waiters_in_their_order_of_arrival(ioc, cfg(1s), all());
}

// On 5 nodes, waiters may reach the queues of different nodes in different orders; a waiter
// that some nodes then hand the lock to, but not a quorum, steps back there and keeps its place.
// Every worker gets its turns, within one of each other as on one node, but for the waiters
// that gave their places up: a split among waiters alone (heads of different nodes, none with a
// majority), or a step back that a node did not confirm. Each such waiter queues again at the
// end, which costs it a turn at most.
BOOST_AUTO_TEST_CASE(four_clients_of_four_coroutines_take_turns_on_five_nodes)
{
   auto const seen = turns(ioc, cfg(1s), 3s);
   auto const [lo, hi] = std::minmax_element(seen.count.begin(), seen.count.end());
   BOOST_TEST_MESSAGE("acquisitions per worker in 3 s on 5 nodes: "
                      << *lo << " to " << *hi << ", places given up " << seen.places_given_up);
   BOOST_TEST(*lo > 0);
   BOOST_TEST(std::uint64_t(*hi - *lo) <= 1 + seen.places_given_up);
}

// A holder whose key one node of five lost (a restart; here a DEL) still holds the lock on the
// other four. The first waiter is the head of the queue everywhere, so node 0 gives it its free
// key at each try, a split vote: it gives the key back there but keeps its place in every
// queue, and still comes before the waiter that arrived after it. (It used to leave the queues
// and join again at their end, behind the later waiter.)
BOOST_AUTO_TEST_CASE(a_split_vote_keeps_the_waiters_place)
{
   auto clients = make_clients(ioc, cfg(1s), 3);
   std::vector<int> order;
   task_group tasks{ioc};
   countdown finished{ioc, 2};
   auto waiter = [&](int i) -> asio::awaitable<void> {
      auto l = co_await clients[i + 1]->async_lock(name, fair());
      order.push_back(i);
      co_await clients[i + 1]->async_unlock(l);
      finished.done();
   };
   // Queued on the four nodes where the holder's key is.
   auto queued = [&](long long k) {
      return queued_on(servers.begin() + 1, servers.end(), name, k);
   };
   auto evalsha_calls = [&] {
      auto const stats = servers[0]->text({"INFO", "commandstats"});
      auto const at = stats.find("cmdstat_evalsha:calls=");
      return at == std::string::npos ? 0 : std::stoll(stats.substr(at + 22));
   };
   run(ioc, 60s, [&]() -> asio::awaitable<void> {
      auto held = co_await clients[0]->async_lock(name, fair());
      servers[0]->command({"DEL", lock_key(name)});
      tasks.spawn(waiter(0));
      BOOST_TEST_REQUIRE(co_await eventually([&] { return queued(1); }, 10s));
      tasks.spawn(waiter(1));
      BOOST_TEST_REQUIRE(co_await eventually([&] { return queued(2); }, 10s));
      // Both try again a few times meanwhile (each waiter at least every 500 ms).
      auto const calls = evalsha_calls();
      BOOST_TEST_REQUIRE(co_await eventually([&] { return evalsha_calls() >= calls + 8; }, 10s));
      co_await clients[0]->async_unlock(held);
      BOOST_TEST_REQUIRE(co_await finished.all_done.wait(30s));
   }());
   BOOST_TEST(order == (std::vector<int>{0, 1}));
   for (auto const& s : servers) {
      BOOST_TEST(s->text({"EXISTS", lock_key(name)}) == "0");
      BOOST_TEST(s->text({"EXISTS", queue_key(name)}) == "0");
   }
}

BOOST_AUTO_TEST_CASE(processes_keep_mutual_exclusion_on_five_nodes)
{
   redis_server counter;
   four_processes_of_four_coroutines(cfg(1s).nodes, counter, false);
}

// Three waiters whose nodes disagree on the head of the queue, 2, 2 and 1 nodes each, as waiters
// that arrive together at a free key may leave them. Each is handed the key by its nodes, none
// has a majority; had each stepped back and kept its place, nobody would get the lock until the
// waits ran out (15 s here, and then only the last one left): they give their places up instead,
// draw lots and queue again.
BOOST_AUTO_TEST_CASE(a_three_way_split_of_the_heads_is_resolved)
{
   auto clients = make_clients(ioc, cfg(1s), 4);
   std::vector<int> order;
   task_group tasks{ioc};
   countdown finished{ioc, 3};
   auto waiter = [&](int i) -> asio::awaitable<void> {
      auto [ec, l] = co_await clients[i + 1]->async_lock(name, fair(15s), tuple);
      if (!ec) {
         order.push_back(i);
         co_await clients[i + 1]->async_unlock(l);
      }
      finished.done();
   };
   auto queued_everywhere = [&](long long k) {
      return queued_on(servers.begin(), servers.end(), name, k);
   };
   auto const t0 = clock_type::now();
   run(ioc, 60s, [&]() -> asio::awaitable<void> {
      auto held = co_await clients[0]->async_lock(name, fair());
      for (int i = 0; i < 3; ++i) {
         tasks.spawn(waiter(i));
         BOOST_TEST_REQUIRE(co_await eventually([&] { return queued_everywhere(i + 1); }, 10s));
      }
      auto const q = servers[0]->command({"LRANGE", queue_key(name), "0", "-1"});
      auto const a = q.elements[0].str, b = q.elements[1].str, c = q.elements[2].str;
      for (int n : {2, 3})
         servers[n]->command({"RPUSH", queue_key(name) + ":x", b, a, c});
      servers[4]->command({"RPUSH", queue_key(name) + ":x", c, a, b});
      for (int n : {2, 3, 4}) {
         servers[n]->command({"PEXPIRE", queue_key(name) + ":x", "60000"});
         servers[n]->command({"RENAME", queue_key(name) + ":x", queue_key(name)});
      }
      co_await clients[0]->async_unlock(held);
      BOOST_TEST(co_await finished.all_done.wait(40s));
   }());
   BOOST_TEST_MESSAGE("order " << order.size() << " after " << to_ms(clock_type::now() - t0));
   BOOST_TEST(order.size() == 3u);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_fair_lock
