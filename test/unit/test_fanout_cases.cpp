// The quorum engine over in-memory fake nodes (test/support/fake_cluster.hpp), in the cases that
// the fault sweep of test_fanout.cpp cannot set up: a reply of the wrong shape, a flushed script
// cache on a slow node, a transient failure on a bare quorum, and hung nodes.
#include "fanout.hpp"
#include "protocol/cleanup.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>

#include <optional>

namespace test_fanout_cases {

namespace {

double ms(clock_type::duration d)
{
   return std::chrono::duration<double, std::milli>(d).count();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(fanout)

// A reply of another script's shape (a grant where a release's count belongs, a count where an
// acquire's pair belongs) is what a connection that matches replies to the wrong requests gives:
// no vote, unexpected_reply, and the node drops that connection.
BOOST_AUTO_TEST_CASE(a_reply_of_the_wrong_shape_is_no_vote_and_reconnects_the_node)
{
   cluster c{1};
   c.plan->what = fault::wrong_shape;
   c.plan->fail_at = 1;
   BOOST_TEST(c.run_until_idle([&]() -> asio::awaitable<void> {
      auto [ec, l] = co_await c.core->lock(name, {.ttl = 10s}, true, nullptr);
      BOOST_TEST((ec == error::unexpected_reply), ec.message());
      BOOST_TEST(!l.held());
      BOOST_TEST(c.fakes[0]->reconnects == 1u);
      auto [ec2, l2] = co_await c.core->lock(name, {.ttl = 10s}, true, nullptr);
      BOOST_TEST_REQUIRE(!ec2, ec2.message());
      c.plan->fail_at = c.plan->calls + 1;  // the release's reply: a grant
      BOOST_TEST((co_await unlock(c, l2.state(), nullptr) == error::unexpected_reply));
      BOOST_TEST(c.fakes[0]->reconnects == 2u);
   }()));
   BOOST_TEST(c.fakes[0]->lock_keys().empty());
}

// The smallest case of the above: 5 nodes, node 4's script cache flushed while the lock is held.
// The release reaches nodes 0..3 first; the fan-out is decided after three of them, so node 4's
// NOSCRIPT arrives after the decision.
BOOST_AUTO_TEST_CASE(release_after_a_script_flush_on_a_slow_node)
{
   cluster c{5};
   BOOST_TEST(c.run_until_idle([&]() -> asio::awaitable<void> {
      auto [ec, l] = co_await c.core->lock(name, {.ttl = 30s}, true, nullptr);
      BOOST_TEST_REQUIRE(!ec);
      BOOST_TEST(c.holding(key, l.token()) == 5u);
      c.fakes[4]->flush_scripts();
      BOOST_TEST(co_await unlock(c, l.state(), nullptr) == error_code{});
   }()));
   BOOST_TEST(c.fakes[4]->lock_keys().empty(),
              "node 4 still holds the released lock (until its 30 s TTL)");
   BOOST_TEST(c.fakes[4]->releases_not_retried.empty(),
              "node 4's release got NOSCRIPT and was not sent again");
}

// Extend and release that lose their quorum because a node failed (timeout, refused) must say
// so (quorum_unreachable: a retry may help), even when other nodes answered about the key. Here
// the lease stands on a bare quorum and one of its nodes refuses once:
//  - 3 nodes, node 0 holds another owner's stale key: node 0 answers "not owner";
//  - 5 nodes, nodes 0 and 1 restarted empty: they answer "no key".
// Reporting not_owner or lease_expired instead tells the watchdog that "no retry can help", and
// it declares a lease lost that a retry would have renewed. An unlock does better: it waits a
// plain node's refusal out for a while (a restart's), and its release lands.
BOOST_AUTO_TEST_CASE(a_transient_failure_on_a_bare_quorum_is_not_a_lost_key)
{
   for (std::size_t n : {3u, 5u}) {
      BOOST_TEST_CONTEXT("N=" << n)
      {
         cluster c{n};
         std::size_t const foreign = n == 3 ? 1 : 0;  // nodes holding another owner's key
         for (std::size_t i = 0; i < foreign; ++i)
            c.fakes[i]->set(key, "0123456789abcdef0123456789abcdef", 30s);
         c.plan->what = fault::refused;
         BOOST_TEST(c.run_until_idle([&]() -> asio::awaitable<void> {
            auto [ec, l] = co_await c.core->lock(name, {.ttl = 30s}, true, nullptr);
            BOOST_TEST_REQUIRE(!ec, ec.message());
            if (n == 5) {
               c.fakes[0]->erase(key);
               c.fakes[1]->erase(key);
            }
            // The last node refuses the extend once.
            c.plan->fail_at = c.plan->calls + n;
            locksmith::report diag;
            auto const eec = co_await c.core->extend(l.state(), 30s, &diag);
            BOOST_TEST(diag.nodes[n - 1].vote == node_vote::failed);
            BOOST_TEST(eec == error::quorum_unreachable, eec.message());
            // The same once more for the release, which goes where the lock may be (not to the
            // nodes that held another owner's key): its last call is still the last node's. An
            // unlock waits out a refusal for a while, as a restart's: sent again, it lands.
            c.plan->fail_at = c.plan->calls + (n - foreign);
            auto const uec = co_await unlock(c, l.state(), &diag);
            BOOST_TEST(diag.nodes[n - 1].vote == node_vote::yes);
            BOOST_TEST(uec == error_code{}, uec.message());
         }()));
      }
   }
}

// A lease's release goes only where its key may be: a node that held another owner's key when
// the lock was taken is not asked (it counts as no), and the release still wins on the others.
BOOST_AUTO_TEST_CASE(a_release_skips_the_nodes_another_owner_held)
{
   cluster c{3};
   c.fakes[0]->set(key, "0123456789abcdef0123456789abcdef", 30s);
   BOOST_TEST(c.run_until_idle([&]() -> asio::awaitable<void> {
      auto [ec, l] = co_await c.core->lock(name, {.ttl = 30s}, true, nullptr);
      BOOST_TEST_REQUIRE(!ec, ec.message());
      auto const asked = c.fakes[0]->evals;
      locksmith::report diag;
      BOOST_TEST(co_await unlock(c, l.state(), &diag) == error_code{});
      BOOST_TEST(c.fakes[0]->evals == asked, "node 0 was sent the release");
      BOOST_TEST(diag.nodes[0].vote == node_vote::no);
      BOOST_TEST(diag.nodes[1].vote == node_vote::yes);
      BOOST_TEST(diag.nodes[2].vote == node_vote::yes);
   }()));
   BOOST_TEST(c.fakes[0]->lock_keys().size() == 1u);  // the other owner's, untouched
   BOOST_TEST(c.fakes[1]->lock_keys().empty());
   BOOST_TEST(c.fakes[2]->lock_keys().empty());
}

// Decided as soon as the votes allow: with 2 of 5 nodes hung, the lock is granted on the third
// yes, long before the node timeout; with 3 hung, it fails after about one node timeout.
BOOST_AUTO_TEST_CASE(decision_does_not_wait_for_hung_nodes)
{
   constexpr auto node_timeout = 200ms;
   cluster c{5, node_timeout};
   c.fakes[3]->freeze();
   c.fakes[4]->freeze();
   BOOST_TEST(c.run_until_idle([&]() -> asio::awaitable<void> {
      auto t0 = clock_type::now();
      locksmith::report diag;
      auto [ec, l] = co_await c.core->lock(name, {.ttl = 30s, .wait = 0s}, false, &diag);
      auto const took = clock_type::now() - t0;
      BOOST_TEST_REQUIRE(!ec, ec.message());
      BOOST_TEST((took < node_timeout / 4), "lock took " << ms(took) << " ms");
      BOOST_TEST(c.holding(key, l.token()) == 3u);
      for (std::size_t i = 0; i < 5; ++i)
         BOOST_TEST(diag.nodes[i].vote == (i < 3 ? node_vote::yes : node_vote::none), "node " << i);
      t0 = clock_type::now();
      BOOST_TEST(co_await unlock(c, l.state(), nullptr) == error_code{});
      BOOST_TEST((clock_type::now() - t0 < node_timeout / 4));

      // A third node hangs: no quorum; one node timeout, not three.
      c.fakes[2]->freeze();
      for (bool try_only : {true, false}) {
         t0 = clock_type::now();
         auto [ec2, l2] = co_await c.core->lock(name, {.ttl = 30s, .wait = 0s}, try_only, &diag);
         auto const took2 = clock_type::now() - t0;
         BOOST_TEST(ec2 == error::quorum_unreachable, ec2.message());
         BOOST_TEST((took2 >= node_timeout), ms(took2) << " ms");
         BOOST_TEST((took2 < node_timeout + 100ms), ms(took2) << " ms");
         for (std::size_t i = 0; i < 5; ++i)
            BOOST_TEST(diag.nodes[i].vote == (i < 2 ? node_vote::yes : node_vote::failed),
                       "node " << i);
         BOOST_TEST((diag.nodes[4].ec == asio::error::timed_out), diag.nodes[4].ec.message());
      }
      // The hung nodes come back and run their backlog in order: acquire, then its release.
      for (auto& f : c.fakes)
         f->thaw();
   }()));
   for (std::size_t i = 0; i < 5; ++i)
      BOOST_TEST(c.fakes[i]->lock_keys().empty(), "node " << i);
}

// A lock whose first try is out (sent without a coroutine: acquisition::lock's fast path) and
// is cancelled completes at once with operation_aborted, not after the node timeout, leaves the
// name's place in the process, and releases what the try took: the two nodes that said yes at
// once, and the three hung ones once they run their backlog.
BOOST_AUTO_TEST_CASE(a_first_try_cancelled_in_flight_completes_at_once_and_leaves_no_key)
{
   constexpr auto node_timeout = 2s;
   cluster c{5, node_timeout};
   for (std::size_t i = 2; i < 5; ++i)
      c.fakes[i]->freeze();
   BOOST_TEST(c.run_until_idle([&]() -> asio::awaitable<void> {
      asio::cancellation_signal stop;
      asio::steady_timer soon{co_await asio::this_coro::executor, 50ms};
      soon.async_wait([&](error_code) { stop.emit(asio::cancellation_type::terminal); });
      auto const t0 = clock_type::now();
      auto op = c.core->async_lock(
         name, {.ttl = 30s}, false, nullptr, locksmith::detail::lease_kind{},
         asio::bind_cancellation_slot(stop.slot(), asio::as_tuple(asio::use_awaitable)));
      auto [ec, l] = co_await std::move(op);
      auto const took = clock_type::now() - t0;
      BOOST_TEST((ec == asio::error::operation_aborted), ec.message());
      BOOST_TEST(!l.held());
      BOOST_TEST((took < node_timeout / 2), ms(took) << " ms");
      for (auto& f : c.fakes)
         f->thaw();
      // The name's place was left, and every node runs its backlog in order (the cancelled
      // try's SET, then its release) before this lock's try: it takes the name at once.
      auto [ec2, l2] = co_await c.core->lock(name, {.ttl = 30s, .wait = 0s}, false, nullptr);
      BOOST_TEST_REQUIRE(!ec2, ec2.message());
      BOOST_TEST(co_await unlock(c, l2.state(), nullptr) == error_code{});
   }()));
   for (std::size_t i = 0; i < 5; ++i)
      BOOST_TEST(c.fakes[i]->lock_keys().empty(), "node " << i);
}

// A lock whose first try is still out when everything goes away (the try's completion is
// destroyed with its request and the io_context, never run) leaves no handler of its own behind
// in the caller's cancellation slot: the one it had put there pointed at the operation, and an
// emit after the destruction reached freed memory (a crash in this test, a use-after-free in the
// sanitizer run).
BOOST_AUTO_TEST_CASE(a_first_try_destroyed_unrun_leaves_nothing_in_the_callers_slot)
{
   asio::cancellation_signal stop;  // outlives the client, as a caller's signal may
   bool completed = false;
   std::weak_ptr<locksmith::detail::client_core> core;
   {
      cluster c{1};
      core = c.core;
      c.fakes[0]->freeze();
      c.core->async_lock(name, {.ttl = 30s}, false, nullptr, locksmith::detail::lease_kind{},
                         asio::bind_cancellation_slot(
                            stop.slot(), [&](error_code, locksmith::lease) { completed = true; }));
      c.ioc.poll();
      BOOST_TEST(c.fakes[0]->backlog() == 1u);  // the try is out
      c.fakes[0]->drop_backlog();  // as the io_context's destruction drops a real node's
   }
   BOOST_TEST(!completed);
   BOOST_TEST(core.expired());  // the operation was destroyed, not leaked
   stop.emit(asio::cancellation_type::terminal);
}

// A cancellation is never lost, whatever the operation is doing when it comes: emitted after
// each of the first handlers of a lock that must wait (its first try loses to another holder,
// then it goes on as a coroutine), it ends the lock with operation_aborted, long before its wait.
BOOST_AUTO_TEST_CASE(a_cancellation_between_any_two_handlers_ends_the_lock)
{
   for (int k = 0; k < 16; ++k) {
      BOOST_TEST_CONTEXT("cancelled after " << k << " handlers")
      {
         cluster c{1};
         c.fakes[0]->set(key, "0123456789abcdef0123456789abcdef", 30s);
         asio::cancellation_signal stop;
         std::optional<error_code> got;
         c.core->async_lock(name, {.ttl = 30s, .wait = 10s}, false, nullptr,
                            locksmith::detail::lease_kind{},
                            asio::bind_cancellation_slot(
                               stop.slot(), [&](error_code ec, locksmith::lease) { got = ec; }));
         for (int i = 0; i < k && !got; ++i)
            c.ioc.poll_one();
         stop.emit(asio::cancellation_type::terminal);
         auto const until = clock_type::now() + 2s;
         while (!got && clock_type::now() < until)
            c.ioc.run_one_until(until);
         BOOST_TEST_REQUIRE(got.has_value());
         BOOST_TEST((*got == asio::error::operation_aborted), got->message());
         // Then everything the lock left behind runs out, as run_until_idle would let it.
         c.core->stop();
         auto const idle_by = clock_type::now() + 5s;
         while (c.ioc.run_one_until(idle_by) != 0) {}
         BOOST_TEST(c.ioc.stopped());
      }
   }
}

// A node that answers that a routine operation is under way (a Redis Cluster slot in motion, an
// election: cluster_node's passing failure) has not voted on an unlock yet: the release is sent
// again until another answer, which is the vote.
BOOST_AUTO_TEST_CASE(an_unlock_waits_out_a_routine_operation)
{
   cluster c{1};
   BOOST_TEST(c.run_until_idle([&]() -> asio::awaitable<void> {
      auto [ec, l] = co_await c.core->lock(name, {.ttl = 30s}, true, nullptr);
      BOOST_TEST_REQUIRE(!ec);
      c.plan->what = fault::in_motion;
      c.plan->fail_at = c.plan->calls + 1;
      c.plan->times = 3;
      BOOST_TEST(co_await unlock(c, l.state(), nullptr) == error_code{});
      BOOST_TEST(c.plan->calls == c.plan->fail_at + 3);  // three refused, the fourth answered
      BOOST_TEST(!c.fakes[0]->get(key).has_value());
   }()));
}

// A node that follows failovers (a Redis Cluster, a Sentinel) whose master does not answer may
// be promoting a replica: an unlock waits that out, whether the calls time out or are refused,
// and the vote is the first answer. A plain node's may be restarting: the unlock waits that out
// too, for restart_patience (2 s).
BOOST_AUTO_TEST_CASE(an_unlock_waits_out_a_failover_of_a_node_that_follows_them)
{
   for (auto const f : {fault::timeout, fault::refused}) {
      for (bool const follows : {true, false}) {
         BOOST_TEST_CONTEXT(to_string(f) << ", follows failovers " << follows)
         {
            cluster c{1};
            c.fakes[0]->failovers = follows;
            BOOST_TEST(c.run_until_idle([&]() -> asio::awaitable<void> {
               auto [ec, l] = co_await c.core->lock(name, {.ttl = 30s}, true, nullptr);
               BOOST_TEST_REQUIRE(!ec);
               c.plan->what = f;
               c.plan->fail_at = c.plan->calls + 1;
               c.plan->times = 3;
               auto const uec = co_await unlock(c, l.state(), nullptr);
               BOOST_TEST(uec == error_code{}, uec.message());
               BOOST_TEST(c.plan->calls == c.plan->fail_at + 3);  // three failed, then landed
            }()));
            BOOST_TEST(!c.fakes[0]->get(key).has_value());
         }
      }
   }
}

// A plain node whose connection stays down past restart_patience is an outage, not a restart:
// the failure is its vote then, and the unlock says that it does not know (quorum_unreachable).
// Its release goes on, owned by the client, and lands when the node is back. A node that follows
// failovers waits on, up to the key's expiry.
BOOST_AUTO_TEST_CASE(a_plain_node_down_past_a_restarts_length_fails_the_unlock)
{
   using locksmith::detail::restart_patience;
   BOOST_TEST(restart_patience(20ms).count() == 2000);
   BOOST_TEST(restart_patience(3s).count() == 3000);  // never under the node timeout
   cluster c{1};
   BOOST_TEST(c.run_until_idle([&]() -> asio::awaitable<void> {
      auto [ec, l] = co_await c.core->lock(name, {.ttl = 30s}, true, nullptr);
      BOOST_TEST_REQUIRE(!ec);
      c.plan->what = fault::refused;
      c.plan->fail_at = c.plan->calls + 1;
      c.plan->times = 9;  // 20 ms doubling to 1 s apart: 3.5 s and more
      auto const t0 = clock_type::now();
      auto const uec = co_await unlock(c, l.state(), nullptr);
      BOOST_TEST(uec == error::quorum_unreachable, uec.message());
      BOOST_TEST((clock_type::now() - t0 >= restart_patience(20ms)));
      BOOST_TEST(c.plan->calls < c.plan->fail_at + c.plan->times);  // before the node is back
   }()));
   BOOST_TEST(!c.fakes[0]->get(key).has_value());  // the release went on, and landed
}

// A plain node that says that a routine operation is under way (a server loading its data answers
// LOADING: asio::error::try_again) is waited out past restart_patience while it keeps saying so:
// the failures of its connection in between are that operation's (a loading server fails its
// connection's health checks). One that then only fails is an outage restart_patience after it
// said so last, long before the key expires.
BOOST_AUTO_TEST_CASE(a_plain_node_that_loads_its_data_is_waited_out_past_a_restarts_length)
{
   using locksmith::detail::restart_patience;
   for (bool const loads_on : {true, false}) {
      BOOST_TEST_CONTEXT("keeps loading " << loads_on)
      {
         cluster c{1};
         BOOST_TEST(c.run_until_idle([&]() -> asio::awaitable<void> {
            auto [ec, l] = co_await c.core->lock(name, {.ttl = 30s}, true, nullptr);
            BOOST_TEST_REQUIRE(!ec);
            c.plan->pattern = {fault::in_motion, fault::refused};
            if (!loads_on)
               c.plan->pattern.resize(11, fault::refused);
            c.plan->fail_at = c.plan->calls + 1;
            c.plan->times = 11;  // 20 ms doubling to 1 s apart: 4 s and more
            auto const t0 = clock_type::now();
            auto const uec = co_await unlock(c, l.state(), nullptr);
            auto const took = clock_type::now() - t0;
            BOOST_TEST((took >= restart_patience(20ms)));
            if (loads_on) {
               BOOST_TEST(uec == error_code{}, uec.message());
               BOOST_TEST(c.plan->calls == c.plan->fail_at + c.plan->times);  // then landed
            } else {
               BOOST_TEST(uec == error::quorum_unreachable, uec.message());
               BOOST_TEST((took < 10s));  // the key lives 30 s
            }
         }()));
         BOOST_TEST(!c.fakes[0]->get(key).has_value());  // the release went on, and landed
      }
   }
}

// A release that finds its key gone, or another owner's, on a node whose server restarted since
// the key was set there (another run), and sits out its quarantine (node::restarted_recently),
// counts as landed there: the node lost the key with its memory, and no client has counted its
// votes since. Not so for a young node of the same run (its key vanished while it ran), nor for
// an extend (a lease's future needs its keys). Nodes 0 and 1 lost the key; node 1 holds another
// client's since.
BOOST_AUTO_TEST_CASE(a_release_counts_a_key_lost_to_a_restart_as_released)
{
   enum class since { restart, same_run };
   for (auto const how : {since::restart, since::same_run}) {
      BOOST_TEST_CONTEXT("restarted " << (how == since::restart))
      {
         cluster c{3};
         auto lose_keys = [&] {
            for (std::size_t i = 0; i < 2; ++i) {
               c.fakes[i]->erase(key);
               c.fakes[i]->restarted = true;
               c.fakes[i]->run_number += how == since::restart ? 1 : 0;
            }
            c.fakes[1]->set(key, "0123456789abcdef0123456789abcdef", 30s);
         };
         BOOST_TEST(c.run_until_idle([&]() -> asio::awaitable<void> {
            auto [eec, el] = co_await c.core->lock(name, {.ttl = 30s}, true, nullptr);
            BOOST_TEST_REQUIRE(!eec);
            lose_keys();
            auto const xec = co_await c.core->extend(el.state(), 30s, nullptr);
            BOOST_TEST(xec == error::not_owner, xec.message());
            co_await unlock(c, el.state(), nullptr);  // its key on node 2
            c.fakes[1]->erase(key);
            auto [ec, l] = co_await c.core->lock(name, {.ttl = 30s}, true, nullptr);
            BOOST_TEST_REQUIRE(!ec);
            lose_keys();
            locksmith::report diag;
            auto const uec = co_await unlock(c, l.state(), &diag);
            if (how == since::restart) {
               BOOST_TEST(uec == error_code{}, uec.message());
               // One node counted so (N - quorum, below) is enough beside node 2's release.
               auto const counted = std::count_if(
                  diag.nodes.begin(), diag.nodes.end(), [](locksmith::node_report const& n) {
                     return n.message.find("counted as released") != std::string::npos;
                  });
               BOOST_TEST(counted == 1);
            } else {
               BOOST_TEST(uec == error::not_owner, uec.message());
            }
         }()));
      }
   }
}

// At most N - quorum nodes count so: the others' keys must show that the lease held. Every node
// restarted within one quarantine (the fresh-fleet rule's limit: a new client may count them all
// at once) leaves no such key, and the unlock says that the lease was lost.
BOOST_AUTO_TEST_CASE(a_key_lost_to_restarts_everywhere_is_a_lost_lease)
{
   cluster c{3};
   BOOST_TEST(c.run_until_idle([&]() -> asio::awaitable<void> {
      auto [ec, l] = co_await c.core->lock(name, {.ttl = 30s}, true, nullptr);
      BOOST_TEST_REQUIRE(!ec);
      for (auto& f : c.fakes) {
         f->erase(key);
         f->restarted = true;
         ++f->run_number;
      }
      auto const uec = co_await unlock(c, l.state(), nullptr);
      BOOST_TEST(uec == error::lease_expired, uec.message());
   }()));
}

// ... only while the lease is valid: after that, its keys may have expired before the restart,
// and another holder may have taken the name. Here the lease ran out (its key lives on at node
// 2 alone, set longer by hand), node 0 restarted since, and another client holds node 1: the
// unlock says so (not_owner) instead of counting node 0's lost key.
BOOST_AUTO_TEST_CASE(a_key_lost_to_a_restart_counts_only_while_the_lease_is_valid)
{
   cluster c{3};
   BOOST_TEST(c.run_until_idle([&]() -> asio::awaitable<void> {
      auto [ec, l] = co_await c.core->lock(name, {.ttl = 300ms, .renew = false}, true, nullptr);
      BOOST_TEST_REQUIRE(!ec);
      c.fakes[2]->set(key, std::string{l.token()}, 30s);
      asio::steady_timer pause{co_await asio::this_coro::executor};
      while (clock_type::now() < l.valid_until()) {
         pause.expires_after(20ms);
         co_await pause.async_wait(asio::use_awaitable);
      }
      c.fakes[0]->erase(key);
      c.fakes[0]->restarted = true;
      ++c.fakes[0]->run_number;
      c.fakes[1]->set(key, "0123456789abcdef0123456789abcdef", 30s);
      auto const uec = co_await unlock(c, l.state(), nullptr);
      BOOST_TEST(uec == error::not_owner, uec.message());
   }()));
}

// While it waits out a failover, a call whose reply was lost may have released the key: the
// next one finds no key, or the next owner's. That says nothing of this lease (which had not
// run out), so the unlock reports what it knows: quorum_unreachable, not lease_expired or
// not_owner, which would tell its caller that its critical section may have overlapped another.
BOOST_AUTO_TEST_CASE(a_lost_reply_during_a_failover_is_no_expired_lease)
{
   for (bool const taken_after : {false, true}) {
      BOOST_TEST_CONTEXT("taken after the release " << taken_after)
      {
         cluster c{1};
         c.fakes[0]->failovers = true;
         BOOST_TEST(c.run_until_idle([&]() -> asio::awaitable<void> {
            auto [ec, l] = co_await c.core->lock(name, {.ttl = 30s}, true, nullptr);
            BOOST_TEST_REQUIRE(!ec);
            c.plan->what = fault::lost_reply;
            c.plan->fail_at = c.plan->calls + 1;
            std::optional<error_code> uec;
            c.core->async_unlock(l.state(), nullptr, [&](error_code e) { uec = e; });
            asio::steady_timer pause{co_await asio::this_coro::executor};
            // The first call ran: the key is gone. Another owner may take it before the next.
            while (c.fakes[0]->get(key).has_value()) {
               pause.expires_after(1ms);
               co_await pause.async_wait(asio::use_awaitable);
            }
            if (taken_after)
               c.fakes[0]->set(key, "0123456789abcdef0123456789abcdef", 30s);
            while (!uec) {
               pause.expires_after(5ms);
               co_await pause.async_wait(asio::use_awaitable);
            }
            BOOST_TEST((*uec == error::quorum_unreachable), uec->message());
         }()));
      }
   }
}

// Most such replies are not lost: while an unlock waits out a failover, its call to a node that
// follows them waits long for its answer (patient_timeout), as a new master busy with its old
// one's resync may answer late; and while it waits out a plain node's restart, its call waits so
// for a stall's (stall_patience: 500 ms), as a server forking for BGSAVE may answer late.
BOOST_AUTO_TEST_CASE(an_unlock_waits_long_for_a_slow_answer)
{
   for (bool const follows : {true, false}) {
      BOOST_TEST_CONTEXT("follows failovers " << follows)
      {
         cluster c{1};  // node timeout 20 ms
         c.fakes[0]->failovers = follows;
         BOOST_TEST(c.run_until_idle([&]() -> asio::awaitable<void> {
            auto [ec, l] = co_await c.core->lock(name, {.ttl = 30s}, true, nullptr);
            BOOST_TEST_REQUIRE(!ec);
            c.plan->what = fault::hang;
            c.plan->hang_for = 200ms;  // ten node timeouts; below stall_patience's 500 ms
            c.plan->fail_at = c.plan->calls + 1;
            auto const calls = c.plan->calls;
            auto const uec = co_await unlock(c, l.state(), nullptr);
            BOOST_TEST(uec == error_code{}, uec.message());
            BOOST_TEST(c.plan->calls == calls + 1);  // one call, answered late
         }()));
         BOOST_TEST(!c.fakes[0]->get(key).has_value());
      }
   }
}

// A plain node that stalls longer than stall_patience runs the first call's release when it wakes,
// whose answer is lost: the next call finds no key, which cannot be told from a lease that ran
// out, so the unlock says that it does not know (never that it released, nor that it expired).
BOOST_AUTO_TEST_CASE(an_unlock_does_not_know_after_a_plain_nodes_stall_longer_than_its_patience)
{
   cluster c{1};
   BOOST_TEST(c.run_until_idle([&]() -> asio::awaitable<void> {
      auto [ec, l] = co_await c.core->lock(name, {.ttl = 30s}, true, nullptr);
      BOOST_TEST_REQUIRE(!ec);
      c.plan->what = fault::hang;
      c.plan->hang_for = 800ms;
      c.plan->fail_at = c.plan->calls + 1;
      auto const uec = co_await unlock(c, l.state(), nullptr);
      BOOST_TEST(uec == error::quorum_unreachable, uec.message());
   }()));
   BOOST_TEST(!c.fakes[0]->get(key).has_value());
}

BOOST_AUTO_TEST_CASE(a_patient_call_waits_two_seconds_at_most_and_never_past_the_key)
{
   using locksmith::detail::patient_timeout;
   using locksmith::detail::stall_patience;
   BOOST_TEST(stall_patience(20ms).count() == 500);
   BOOST_TEST(stall_patience(50ms).count() == 500);
   BOOST_TEST(stall_patience(3s).count() == 3000);  // never under the node timeout
   BOOST_TEST(patient_timeout(50ms, 30s).count() == 2000);
   BOOST_TEST(patient_timeout(50ms, 700ms).count() == 700);
   BOOST_TEST(patient_timeout(50ms, 1500us).count() == 50);  // never under the node timeout
   BOOST_TEST(patient_timeout(50ms, -5s).count() == 50);     // the key has run out already
   BOOST_TEST(patient_timeout(3s, 30s).count() == 3000);     // a node timeout above 2 s stays
}

// A node's new connection may answer a release before its INFO says whether its server just
// restarted: its "no" is no verdict yet, and the release asks again once the node knows. Here
// node 0 turns out to have restarted (its "no" counts as released), or not (a lost key: the
// lease had expired). Node 1 lost the key without a restart, so the verdict hangs on node 0.
BOOST_AUTO_TEST_CASE(a_release_asks_again_a_node_whose_run_is_not_known_yet)
{
   for (bool const restarted : {true, false}) {
      BOOST_TEST_CONTEXT("restarted " << restarted)
      {
         cluster c{3};
         BOOST_TEST(c.run_until_idle([&]() -> asio::awaitable<void> {
            auto [ec, l] = co_await c.core->lock(name, {.ttl = 30s}, true, nullptr);
            BOOST_TEST_REQUIRE(!ec);
            c.fakes[0]->erase(key);
            c.fakes[1]->erase(key);
            c.fakes[0]->run_not_known = true;
            auto const evals = c.fakes[0]->evals;
            std::optional<error_code> uec;
            c.core->async_unlock(l.state(), nullptr, [&](error_code e) { uec = e; });
            asio::steady_timer pause{co_await asio::this_coro::executor};
            // Its first answer, a "no" of a run not known, is no vote: node 0 is asked again.
            while (c.fakes[0]->evals < evals + 2 && !uec) {
               pause.expires_after(1ms);
               co_await pause.async_wait(asio::use_awaitable);
            }
            BOOST_TEST(!uec.has_value());
            c.fakes[0]->run_not_known = false;
            c.fakes[0]->restarted = restarted;
            c.fakes[0]->run_number += restarted ? 1 : 0;
            while (!uec) {
               pause.expires_after(5ms);
               co_await pause.async_wait(asio::use_awaitable);
            }
            BOOST_TEST((*uec == (restarted ? error_code{} : error_code{error::lease_expired})),
                       uec->message());
         }()));
      }
   }
}

// ... and a close ends that wait: the answer kept back is the vote, and the unlock completes.
BOOST_AUTO_TEST_CASE(a_close_ends_an_unlock_that_waits_out_a_routine_operation)
{
   cluster c{1};
   std::optional<error_code> unlocked;
   BOOST_TEST(c.run_until_idle([&]() -> asio::awaitable<void> {
      auto [ec, l] = co_await c.core->lock(name, {.ttl = 30s}, true, nullptr);
      BOOST_TEST_REQUIRE(!ec);
      c.plan->what = fault::in_motion;
      c.plan->fail_at = c.plan->calls + 1;
      c.plan->times = 1'000'000;
      c.core->async_unlock(l.state(), nullptr, [&](error_code e) { unlocked = e; });
      asio::steady_timer pause{co_await asio::this_coro::executor};
      while (c.plan->calls < c.plan->fail_at + 2) {  // refused, sent again, refused again
         pause.expires_after(5ms);
         co_await pause.async_wait(asio::use_awaitable);
      }
      BOOST_TEST(!unlocked.has_value());
      auto const closed = co_await c.core->close(50ms);
      BOOST_TEST((closed == asio::error::timed_out), closed.message());
   }()));
   BOOST_REQUIRE(unlocked.has_value());
   BOOST_TEST((*unlocked == error::quorum_unreachable), unlocked->message());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_fanout_cases
