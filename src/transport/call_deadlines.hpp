// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The deadlines of one connection's calls in flight, kept by one timer for all of them. A timer
// per call (asio::cancel_after) costs every call a timer queue insertion, its removal, often a
// timerfd update, and a reactor turn for the cancelled wait; this timer fires about once per
// timeout while calls flow, and not at all while none is in flight.
#ifndef LOCKSMITH_SRC_CALL_DEADLINES_HPP
#define LOCKSMITH_SRC_CALL_DEADLINES_HPP

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>

#include <chrono>
#include <memory>

namespace locksmith::detail {

class call_deadlines {
public:
   using clock = std::chrono::steady_clock;

   /// One call's place. It stays where it is (no copy, no move) while watched, and is forgotten
   /// before it is destroyed.
   class entry {
   public:
      entry() = default;
      entry(entry const&) = delete;
      entry& operator=(entry const&) = delete;

      /// Bind the call to this slot: once its deadline has passed, it is cancelled (terminal).
      boost::asio::cancellation_slot slot() noexcept { return signal_.slot(); }

   private:
      friend class call_deadlines;
      boost::asio::cancellation_signal signal_;
      clock::time_point deadline_{};
      entry* prev_ = nullptr;
      entry* next_ = nullptr;
      bool watched_ = false;
   };

   explicit call_deadlines(boost::asio::any_io_executor ex);
   ~call_deadlines();
   call_deadlines(call_deadlines const&) = delete;
   call_deadlines& operator=(call_deadlines const&) = delete;

   /// Watches `e` until `deadline` (which may have passed: it is then cancelled at once, from
   /// the executor, never inside this call).
   void watch(entry& e, clock::time_point deadline);
   /// Stops watching `e`, whose call completed; nothing if it is not watched (any more).
   void forget(entry& e) noexcept;
   /// How many calls are watched (counted: for tests).
   std::size_t size() const noexcept;
   /// Stops the timer for good: no call is cancelled by its deadline any more (the connection's
   /// stop ends them). Until then, the timer may stay armed up to one timeout after the last
   /// call, which keeps the executor's work count up that long.
   void stop();

private:
   struct state;
   std::shared_ptr<state> s_;
};

}  // namespace locksmith::detail

#endif
