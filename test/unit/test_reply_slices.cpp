// Unit tests of the slices in which a command link hands its replies to their callers
// (src/sansio/reply_slices.hpp), alone and in a model of the executor's FIFO queue with
// Boost.Redis's writer, which shows why they exist.
#include "sansio/reply_slices.hpp"

#include <boost/test/unit_test.hpp>

#include <cstddef>
#include <deque>
#include <functional>
#include <vector>

namespace test_reply_slices {

using locksmith::detail::reply_slices;

namespace {

// A link over a FIFO executor, as command_link drives reply_slices. Each delivered reply's
// caller sends its next request at once, and the first request since the last write wakes the
// writer, which is posted behind what the queue holds (Boost.Redis's writer_cv_.cancel()).
struct model {
   explicit model(std::size_t per_slice)
       : slices{per_slice}
   {}

   reply_slices slices;
   std::deque<std::function<void()>> executor;
   std::deque<int> waiting;
   std::vector<int> delivered;
   std::vector<std::size_t> writes;  // requests per write
   std::size_t unwritten = 0;
   bool writer_posted = false;

   void send_request()
   {
      ++unwritten;
      if (!writer_posted) {
         writer_posted = true;
         executor.push_back([this] {
            writer_posted = false;
            writes.push_back(unwritten);
            unwritten = 0;
         });
      }
   }

   void done(int reply)
   {
      delivered.push_back(reply);
      send_request();
   }

   void post_turn_if_needed()
   {
      if (slices.turn_needed())
         executor.push_back([this] { take_turn(); });
   }

   void deliver(int reply)
   {
      if (slices.deliver_now(waiting.size()))
         done(reply);
      else
         waiting.push_back(reply);
      post_turn_if_needed();
   }

   void take_turn()
   {
      for (auto n = slices.on_turn(waiting.size()); n > 0; --n) {
         auto r = waiting.front();
         waiting.pop_front();
         done(r);
      }
      post_turn_if_needed();
   }

   // One read that holds `n` replies: Boost.Redis completes each, back to back.
   void read(int n)
   {
      for (int i = 0; i < n; ++i)
         executor.push_back([this, i] { deliver(i); });
   }

   void run()
   {
      while (!executor.empty()) {
         auto f = std::move(executor.front());
         executor.pop_front();
         f();
      }
   }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(reply_slices_tests)

BOOST_AUTO_TEST_CASE(a_slice_is_delivered_at_once_and_the_rest_waits_for_a_turn)
{
   reply_slices s{3};
   for (int i = 0; i < 3; ++i) {
      BOOST_TEST(s.deliver_now(0));
      // The turn is posted once the slice is full, after its last delivery, not before.
      BOOST_TEST(s.turn_needed() == (i == 2));
   }
   BOOST_TEST(!s.deliver_now(0));
   BOOST_TEST(!s.turn_needed());  // one turn is on its way already
   BOOST_TEST(!s.deliver_now(1));
   // The turn delivers a slice of the two waiting, and no further turn is needed...
   BOOST_TEST(s.on_turn(2) == 2u);
   BOOST_TEST(!s.turn_needed());
   // ...until that slice is full.
   BOOST_TEST(s.deliver_now(0));
   BOOST_TEST(s.turn_needed());
}

BOOST_AUTO_TEST_CASE(no_reply_overtakes_one_that_waits)
{
   reply_slices s{4};
   // Room left in the slice, but older replies wait: this one queues behind them.
   BOOST_TEST(!s.deliver_now(1));
   BOOST_TEST(s.on_turn(9) == 4u);
   BOOST_TEST(!s.deliver_now(5));
   BOOST_TEST(s.turn_needed());
}

BOOST_AUTO_TEST_CASE(a_slice_holds_one_reply_at_least)
{
   reply_slices s{0};
   BOOST_TEST(s.per_slice() == 1u);
   BOOST_TEST(s.deliver_now(0));
   BOOST_TEST(s.turn_needed());
   BOOST_TEST(!s.deliver_now(0));
}

BOOST_AUTO_TEST_CASE(a_round_in_one_read_is_written_in_slices_in_order)
{
   model m{16};
   m.read(64);
   m.run();
   // Every reply reached its caller, in the order of the read.
   BOOST_TEST_REQUIRE(m.delivered.size() == 64u);
   for (int i = 0; i < 64; ++i)
      BOOST_TEST(m.delivered[static_cast<std::size_t>(i)] == i);
   // The first slice's requests were written before the second slice was handled: four writes
   // of 16, where one slice of everything gives one write of 64 (below).
   BOOST_TEST(m.writes == (std::vector<std::size_t>{16, 16, 16, 16}),
              boost::test_tools::per_element());
   BOOST_TEST(m.unwritten == 0u);
   BOOST_TEST(m.waiting.empty());
}

BOOST_AUTO_TEST_CASE(without_slices_a_round_in_one_read_is_one_write)
{
   model m{1000};
   m.read(64);
   m.run();
   BOOST_TEST(m.delivered.size() == 64u);
   BOOST_TEST(m.writes == (std::vector<std::size_t>{64}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(replies_one_at_a_time_are_delivered_at_once)
{
   model m{16};
   for (int round = 0; round < 40; ++round) {
      m.read(1);
      m.run();
      // Each reaches its caller within the read's own turn or the one just posted behind it,
      // and nothing is left waiting.
      BOOST_TEST(m.delivered.size() == static_cast<std::size_t>(round + 1));
      BOOST_TEST(m.waiting.empty());
   }
   BOOST_TEST(m.writes.size() == 40u);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_reply_slices
