// The quorum engine (src/protocol/fanout.cpp under client_core) over in-memory fake nodes: one
// fault injected at the n-th node call, for every n of a lock / extend / unlock run, with 1, 3 and
// 5 nodes. No sockets: the fake nodes (test/support/fake_node.hpp) keep the keys, so the tests can
// look at what each node holds when a lease is granted and after everything has settled. The cases
// that the sweep cannot set up are in test_fanout_cases.cpp.
#include "fanout.hpp"

namespace test_fanout {

using locksmith::detail::quorum_of;

namespace {

enum class mode { try_once, wait };

struct scenario {
   std::size_t nodes;
   std::size_t fail_at;
   fault what;
   mode how;
   std::size_t held_by_other = 0;  // nodes on which another owner holds the key before we start
};

std::ostream& operator<<(std::ostream& os, scenario const& s)
{
   return os << "N=" << s.nodes << " fail_at=" << s.fail_at
             << " fault=" << locksmith::test::to_string(s.what)
             << " mode=" << (s.how == mode::wait ? "wait" : "try")
             << " held_by_other=" << s.held_by_other;
}

struct run_stats {
   std::size_t calls = 0;  // node calls made in all
   bool granted = false;
};

// Lock, extend, unlock under one injected fault, and check the invariants:
//  - a lease is granted only while a quorum of nodes holds its token;
//  - its fencing token is the highest fence minted by the nodes that voted yes;
//  - once everything has settled, no node holds our token (a lock that was not granted, or was
//    released), except where the injected fault dropped that node's release itself (the key
//    then stays until its TTL, which nothing can prevent);
//  - the other owner's keys are untouched;
//  - the outcome of each operation is the one the fault allows.
run_stats check(scenario const& s)
{
   cluster c{s.nodes};
   c.plan->hang_for = 60ms;
   std::string const other = "0123456789abcdef0123456789abcdef";
   for (std::size_t i = 0; i < s.held_by_other; ++i)
      c.fakes[i]->set(key, other, 30s);
   c.plan->fail_at = s.fail_at;
   c.plan->what = s.what;
   std::size_t const quorum = quorum_of(s.nodes);
   bool const one = s.nodes == 1;
   run_stats stats;
   std::string token;

   bool const idle = c.run_until_idle([&]() -> asio::awaitable<void> {
      auto const opts = locksmith::lock_options{
         .ttl = 30s,
         .wait = s.how == mode::wait ? 5s : 0s,
         .strategy = locksmith::wait_strategy::spin{.interval = 1ms, .jitter = 1ms}};
      locksmith::report diag;
      auto [ec, l] = co_await c.core->lock(name, opts, s.how == mode::try_once, &diag);
      if (ec) {
         BOOST_TEST(!l.held());
         // Only a fault on the one node of one, or a quorum of free nodes that the fault breaks,
         // can refuse the lock.
         bool const tight = s.nodes - s.held_by_other == quorum;
         BOOST_TEST((one || tight), "refused with " << ec.message());
         if (s.held_by_other > 0 || (s.how == mode::wait && tight && !one))
            BOOST_TEST((ec == error::lock_taken || ec == error::wait_timeout), ec.message());
         else if (s.what == fault::error_reply || s.what == fault::wrong_shape)
            BOOST_TEST(ec == error::unexpected_reply, ec.message());
         else
            BOOST_TEST(ec == error::quorum_unreachable, ec.message());
         co_return;
      }
      stats.granted = true;
      token = l.token();
      // At the moment of the grant, a quorum holds the token.
      BOOST_TEST(c.holding(key, token) >= quorum);
      BOOST_TEST(l.held());
      std::size_t yes = 0;
      std::uint64_t fence = 0;
      for (std::size_t i = 0; i < s.nodes; ++i) {
         if (diag.nodes.at(i).vote != node_vote::yes)
            continue;
         ++yes;
         BOOST_TEST((c.fakes[i]->get(key) == token), "node " << i);
         fence = std::max(fence, c.fakes[i]->minted.at(token));
      }
      BOOST_TEST(yes >= quorum);
      BOOST_TEST(l.fencing_token() == fence);
      BOOST_TEST(l.fencing_token() > 0u);

      // Extend: same fan-out. The nodes that said yes now carry the new TTL.
      bool const tight = s.nodes - s.held_by_other == quorum;
      // Whether the fault hits a node whose vote this fan-out cannot do without: the only node,
      // or, when just a quorum of nodes is free, one of them. Calls go out in node order.
      auto needed_node_faulted = [&](std::size_t first_call) {
         if (s.what == fault::noscript || s.fail_at < first_call ||
             s.fail_at >= first_call + s.nodes)
            return false;
         return one || (tight && s.fail_at - first_call >= s.held_by_other);
      };
      // The error a fan-out that lost a needed node to the fault should report: a transient
      // failure (retry may help), not an answer about the key.
      bool const server_answer = s.what == fault::error_reply || s.what == fault::wrong_shape;
      error_code const transient = server_answer ? error_code{error::unexpected_reply}
                                                 : error_code{error::quorum_unreachable};
      auto const first_extend_call = c.plan->calls + 1;
      auto const before = l.valid_until();
      locksmith::report ediag;
      auto const eec = co_await c.core->extend(l.state(), 60s, &ediag);
      if (needed_node_faulted(first_extend_call)) {
         BOOST_TEST(eec);
         if (s.held_by_other == 0)  // with another owner's key around, see the dedicated test
            BOOST_TEST(eec == transient, eec.message());
      } else {
         BOOST_TEST(!eec, eec.message());
         BOOST_TEST((l.valid_until() > before));
         for (std::size_t i = 0; i < s.nodes; ++i)
            if (ediag.nodes.at(i).vote == node_vote::yes)
               BOOST_TEST((c.fakes[i]->ttl(key).value_or(0s) > 45s), "node " << i);
      }

      // Unlock: succeeds with a quorum of releases. The release goes where the lock may be (not
      // to the nodes that another owner held), in node order: the first of its calls is the
      // first free node's. A routine operation (in_motion) is waited out: the release is sent
      // again, and lands. So is a failed connection (timeout, refused), as a restart's: the lost
      // request never ran. A hang (on the release, or still on from the extend) is a stall, whose
      // late answer the call waits for (stall_patience).
      auto const first_unlock_call = c.plan->calls + 1;
      auto const release_node_faulted = [&] {
         return s.what != fault::noscript && s.what != fault::in_motion &&
                s.what != fault::timeout && s.what != fault::refused && s.what != fault::hang &&
                s.fail_at >= first_unlock_call &&
                s.fail_at < first_unlock_call + (s.nodes - s.held_by_other) && (one || tight);
      };
      auto const uec = co_await unlock(c, l.state(), nullptr);
      if (release_node_faulted()) {
         BOOST_TEST(uec);
         if (s.held_by_other == 0)
            BOOST_TEST(uec == transient, uec.message());
      } else {
         BOOST_TEST(!uec, uec.message());
      }
      BOOST_TEST(!l.held());
   }());
   BOOST_TEST(idle, "the io_context did not become idle");

   // Everything has settled: no partial acquisition is left anywhere.
   for (std::size_t i = 0; i < s.nodes; ++i) {
      auto const& f = *c.fakes[i];
      auto const left = f.lock_keys();
      if (i < s.held_by_other) {
         BOOST_TEST((left.size() == 1u && left.begin()->second == other),
                    "node " << i << ": the other owner's key");
         continue;
      }
      for (auto const& [k, v] : left) {
         bool const fault_dropped_its_release =
            std::find(f.releases_lost_to_faults.begin(), f.releases_lost_to_faults.end(), v) !=
            f.releases_lost_to_faults.end();
         BOOST_TEST(fault_dropped_its_release,
                    "node " << i << " still holds " << k << " = " << v
                            << (v == token ? " (granted, then released)" : " (never granted)")
                            << (f.releases_not_retried.empty()
                                   ? ""
                                   : "; its release got NOSCRIPT and was not sent again"));
      }
   }
   stats.calls = c.plan->calls;
   return stats;
}

void sweep(std::vector<fault> const& faults, std::size_t held_by_other_of_5 = 0)
{
   for (std::size_t n : {1u, 3u, 5u}) {
      auto const held = n == 5 ? held_by_other_of_5 : (held_by_other_of_5 > 0 && n == 3 ? 1u : 0u);
      if (held > 0 && n == 1)
         continue;
      for (mode how : {mode::try_once, mode::wait}) {
         // A clean run tells how many node calls there are to fail.
         auto const clean = check({n, 0, fault::none, how, held});
         BOOST_TEST_REQUIRE(clean.calls >= n);
         for (fault f : faults)
            for (std::size_t k = 1; k <= clean.calls + 3; ++k) {
               scenario const s{n, k, f, how, held};
               BOOST_TEST_CONTEXT(s)
               {
                  check(s);
               }
            }
      }
   }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(fanout)

BOOST_AUTO_TEST_CASE(fake_node_parses_the_calls)
{
   auto const words =
      locksmith::test::parse_resp_command("*3\r\n$4\r\nEVAL\r\n$0\r\n\r\n$1\r\n1\r\n");
   BOOST_TEST((words == std::vector<std::string>{"EVAL", "", "1"}));
   cluster c{1};
   BOOST_TEST(c.fakes[0]->started);
   BOOST_TEST(c.run_until_idle([&]() -> asio::awaitable<void> {
      auto [ec, l] = co_await c.core->lock(name, {.ttl = 10s}, true, nullptr);
      BOOST_TEST_REQUIRE(!ec);
      BOOST_TEST((c.fakes[0]->get(key) == l.token()));
      BOOST_TEST(c.fakes[0]->ttl(key).has_value());
      BOOST_TEST(l.fencing_token() == 1'000'001u);
      BOOST_TEST(co_await unlock(c, l.state(), nullptr) == error_code{});
      BOOST_TEST(!c.fakes[0]->get(key).has_value());
      BOOST_TEST(c.fakes[0]->publishes == 1u);
   }()));
}

// Timeouts, refused connections, a hung node, a SET whose reply is lost, an error reply, a reply
// of the wrong shape, and a slot in motion, at every node call of lock / extend / unlock.
BOOST_AUTO_TEST_CASE(every_single_fault_keeps_the_quorum_and_leaves_no_key)
{
   sweep({fault::timeout, fault::refused, fault::hang, fault::lost_reply, fault::error_reply,
          fault::wrong_shape, fault::in_motion});
}

// As above, while another owner holds the key on N - quorum nodes: every free node is needed, so
// one fault on them loses the attempt, whose partial acquisitions must be released.
BOOST_AUTO_TEST_CASE(every_single_fault_with_the_lock_partly_held_elsewhere)
{
   sweep({fault::timeout, fault::refused, fault::hang, fault::lost_reply, fault::error_reply}, 2);
}

// A node whose script cache was emptied (restart, failover, SCRIPT FLUSH) answers NOSCRIPT; the
// script's text must then be sent, or the call is lost. For an acquire that was decided already
// not sending it is right (it would take a key nobody releases); for a release it leaves the key.
BOOST_AUTO_TEST_CASE(every_call_survives_a_flushed_script_cache)
{
   sweep({fault::noscript});
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_fanout
