// Unit tests of the calls' deadlines (src/transport/call_deadlines.hpp): one timer cancels every
// call whose deadline passed, and no other. On an io_context, with slots instead of Redis calls; no
// sockets. Deadlines are either past or an hour away, so that nothing rests on timing.
#include "transport/call_deadlines.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <optional>

namespace test_call_deadlines {

namespace {

namespace asio = boost::asio;
using locksmith::detail::call_deadlines;
using clock_type = call_deadlines::clock;
using namespace std::chrono_literals;

// A call in flight: its place, and the cancellation it received, if any.
struct call {
   call_deadlines::entry place;
   std::optional<asio::cancellation_type> cancelled;

   void start()
   {
      place.slot().assign([this](asio::cancellation_type t) { cancelled = t; });
   }
};

struct fixture {
   asio::io_context ioc;
   call_deadlines deadlines{ioc.get_executor()};

   static clock_type::time_point past() { return clock_type::now() - 1ms; }
   static clock_type::time_point far() { return clock_type::now() + 1h; }

   // Runs handlers until `c` is cancelled, for 10 s at most.
   void run_until_cancelled(call const& c)
   {
      auto const until = clock_type::now() + 10s;
      while (!c.cancelled && clock_type::now() < until)
         ioc.run_one_for(100ms);
   }
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(call_deadlines_tests, fixture)

BOOST_AUTO_TEST_CASE(a_call_past_its_deadline_is_cancelled_from_the_executor_not_inside_watch)
{
   call c;
   c.start();
   deadlines.watch(c.place, past());
   BOOST_TEST(!c.cancelled.has_value());
   run_until_cancelled(c);
   BOOST_REQUIRE(c.cancelled.has_value());
   BOOST_TEST((*c.cancelled == asio::cancellation_type::terminal));
   BOOST_TEST(deadlines.size() == 0u);
}

BOOST_AUTO_TEST_CASE(only_the_calls_whose_deadline_passed_are_cancelled)
{
   call late, early, later;
   for (auto* c : {&late, &early, &later})
      c->start();
   deadlines.watch(late.place, far());
   deadlines.watch(early.place, past());  // earlier than the timer was armed for: it is armed again
   deadlines.watch(later.place, far());
   run_until_cancelled(early);
   BOOST_TEST(early.cancelled.has_value());
   BOOST_TEST(!late.cancelled.has_value());
   BOOST_TEST(!later.cancelled.has_value());
   BOOST_TEST(deadlines.size() == 2u);
   deadlines.forget(late.place);
   deadlines.forget(later.place);
   BOOST_TEST(deadlines.size() == 0u);
   deadlines.stop();
   ioc.run();  // returns: nothing is armed any more
}

BOOST_AUTO_TEST_CASE(a_call_that_completed_is_never_cancelled)
{
   call c;
   c.start();
   deadlines.watch(c.place, clock_type::now() + 20ms);
   deadlines.forget(c.place);
   deadlines.forget(c.place);  // twice: nothing
   ioc.run();                  // the timer fires once, finds nothing, and is not armed again
   BOOST_TEST(!c.cancelled.has_value());
   BOOST_TEST(deadlines.size() == 0u);
}

BOOST_AUTO_TEST_CASE(a_call_watched_again_takes_its_new_deadline)
{
   call c;
   c.start();
   deadlines.watch(c.place, far());
   deadlines.watch(c.place, past());  // sent again (a NOSCRIPT fallback) with a passed deadline
   BOOST_TEST(deadlines.size() == 1u);
   run_until_cancelled(c);
   BOOST_TEST(c.cancelled.has_value());
}

BOOST_AUTO_TEST_CASE(a_cancellation_may_watch_and_forget_other_calls)
{
   call first, second, third;
   second.start();
   third.start();
   // The first call's cancellation forgets the second and watches a third, past its deadline:
   // the sweep must neither touch the forgotten one nor miss the new one.
   first.place.slot().assign([&](asio::cancellation_type t) {
      first.cancelled = t;
      deadlines.forget(second.place);
      deadlines.watch(third.place, past());
   });
   deadlines.watch(first.place, past());
   deadlines.watch(second.place, past());
   run_until_cancelled(third);
   BOOST_TEST(first.cancelled.has_value());
   BOOST_TEST(!second.cancelled.has_value());
   BOOST_TEST(third.cancelled.has_value());
   BOOST_TEST(deadlines.size() == 0u);
}

BOOST_AUTO_TEST_CASE(stop_disarms_the_timer_and_cancels_nothing)
{
   call c;
   c.start();
   deadlines.watch(c.place, far());
   deadlines.stop();
   ioc.run_for(10s);
   BOOST_TEST(ioc.stopped());  // ran out of work: the hour-long wait was cancelled
   BOOST_TEST(!c.cancelled.has_value());
   deadlines.forget(c.place);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_call_deadlines
