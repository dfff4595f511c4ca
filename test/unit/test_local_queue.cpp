// Unit tests of the in-process queue (src/engines/local_queue.hpp): handovers of a held lease to
// the next waiter, and their limit in a row. Coroutines on an io_context; no sockets.
#include "engines/local_queue.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/test/unit_test.hpp>

#include <optional>
#include <string>
#include <vector>

namespace test_local_queue {

namespace {

namespace asio = boost::asio;
using locksmith::error_code;
using locksmith::detail::local_queue;
using clock_type = local_queue::clock;

struct fixture {
   asio::io_context ioc;
   local_queue q{ioc.get_executor()};
   std::string const name = "n";

   // What one waiter got from enter(): its error and the lease handed to it, if any.
   struct entry {
      bool done = false;
      error_code ec;
      std::optional<local_queue::handover> handed;
   };

   // Runs what is ready (an io_context that ran out of work must be restarted first).
   void poll()
   {
      ioc.restart();
      ioc.poll();
   }

   // Starts a waiter, and runs until it waits (or is through).
   entry& enter(std::vector<entry>& out)
   {
      auto& e = out.emplace_back();
      asio::co_spawn(
         ioc,
         [&]() -> asio::awaitable<void> {
            e.ec = co_await q.enter(name, clock_type::now() + std::chrono::seconds{10}, e.handed);
            e.done = true;
         },
         asio::detached);
      poll();
      return e;
   }
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(local_queue_handovers, fixture)

BOOST_AUTO_TEST_CASE(the_first_comer_has_the_name_and_is_handed_nothing)
{
   std::vector<entry> waiters;
   waiters.reserve(2);
   auto& first = enter(waiters);
   BOOST_TEST(first.done);
   BOOST_TEST(!first.ec);
   BOOST_TEST(!first.handed.has_value());
   BOOST_TEST(!q.pass(name, {"tok", clock_type::now()}));  // nobody waits: nothing to hand over
}

// Whether the name's contenders waited by message, which makes its release lead with a PING
// (release_call's `wakes`): from mark_subscribed until the name is left.
BOOST_AUTO_TEST_CASE(the_name_is_subscribed_from_its_mark_until_it_is_left)
{
   std::vector<entry> waiters;
   waiters.reserve(1);
   BOOST_TEST(!q.subscribed(name));  // nobody has it
   enter(waiters);
   BOOST_TEST(!q.subscribed(name));
   BOOST_TEST(q.mark_subscribed(name));
   BOOST_TEST(q.subscribed(name));
   BOOST_TEST(!q.subscribed("other"));
   BOOST_TEST(q.leave(name));  // the caller drops the channel's reference
   BOOST_TEST(!q.subscribed(name));
}

BOOST_AUTO_TEST_CASE(a_pass_hands_the_lease_to_the_head_in_order)
{
   std::vector<entry> waiters;
   waiters.reserve(3);
   enter(waiters);
   auto& second = enter(waiters);
   auto& third = enter(waiters);
   BOOST_TEST(!second.done);
   auto const until = clock_type::now() + std::chrono::seconds{5};
   BOOST_TEST(q.pass(name, {"tok-1", until}));
   poll();
   BOOST_TEST(second.done);
   BOOST_TEST(!second.ec);
   BOOST_TEST_REQUIRE(second.handed.has_value());
   BOOST_TEST(second.handed->token == "tok-1");
   BOOST_TEST((second.handed->until == until));
   BOOST_TEST(!third.done);
   // A release in Redis passes the name on without a lease.
   BOOST_TEST(!q.leave(name));
   poll();
   BOOST_TEST(third.done);
   BOOST_TEST(!third.handed.has_value());
}

BOOST_AUTO_TEST_CASE(at_most_max_handovers_in_a_row_then_a_release_starts_the_count_again)
{
   constexpr auto limit = local_queue::max_handovers;
   std::vector<entry> waiters;
   waiters.reserve(2 * limit + 3);
   enter(waiters);
   for (unsigned i = 0; i < 2 * limit + 2; ++i)
      enter(waiters);
   for (unsigned i = 0; i < limit; ++i) {
      BOOST_TEST(q.pass(name, {"tok", clock_type::now()}), "handover " << i);
      poll();
   }
   BOOST_TEST(!q.pass(name, {"tok", clock_type::now()}));  // the holder must release in Redis
   BOOST_TEST(!q.leave(name));
   poll();
   BOOST_TEST(waiters[limit + 1].done);
   BOOST_TEST(!waiters[limit + 1].handed.has_value());
   BOOST_TEST(q.pass(name, {"tok", clock_type::now()}));  // counted afresh
   poll();
   BOOST_TEST(waiters[limit + 2].handed.has_value());
}

BOOST_AUTO_TEST_CASE(a_closed_queue_hands_nothing_over)
{
   std::vector<entry> waiters;
   waiters.reserve(2);
   enter(waiters);
   auto& second = enter(waiters);
   q.close();
   BOOST_TEST(!q.pass(name, {"tok", clock_type::now()}));
   poll();
   BOOST_TEST(second.done);
   BOOST_TEST((second.ec == asio::error::operation_aborted));
   BOOST_TEST(!second.handed.has_value());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_local_queue
