// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The in-process queue: one contender (or holder) per lock name and process; the others wait
// here in FIFO order, so that only one coroutine per process contends in Redis. Everything here
// lives on the client's executor.
#ifndef LOCKSMITH_SRC_LOCAL_QUEUE_HPP
#define LOCKSMITH_SRC_LOCAL_QUEUE_HPP

#include <locksmith/error.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <unordered_map>

namespace locksmith::detail {

class local_queue {
public:
   using clock = std::chrono::steady_clock;

   /// A held lease passed to the next waiter of the process without a release: its key in Redis
   /// still holds `token`, until `until` at the latest. The waiter takes the key over (the acquire
   /// script's takeover) or, failing that, releases it.
   struct handover {
      std::string token;
      clock::time_point until;
   };

   /// Consecutive handovers of a name before its holder must release it in Redis, so that the
   /// waiters of other processes get their turn too. One: with 16 coroutines in each of 4
   /// processes on one name (locksmith-bench --scenario contended), the least served process
   /// got 315-321 acquisitions of about 2,100 with one, 5 with four, and 244 with none (every
   /// release through Redis, where the local successor tries at once).
   static constexpr unsigned max_handovers = 1;

   explicit local_queue(boost::asio::any_io_executor ex);

   /// Waits until this coroutine is the name's only contender in the process (at once if nobody
   /// has the name): success, wait_timeout at the deadline, operation_aborted on cancellation
   /// or once the queue is closed. On success, `handed` has the lease passed on, if any.
   boost::asio::awaitable<error_code> enter(std::string const& name, clock::time_point deadline,
                                            std::optional<handover>& handed);

   /// Makes the caller the name's only contender in the process when nobody has the name (and
   /// the queue is open): true; else nothing changes, and the caller may wait in enter().
   bool try_enter(std::string const& name);

   /// Passes the name to the next waiter, or forgets it. True when it was forgotten while it
   /// held a reference on the name's release channel (mark_subscribed): the caller drops it.
   [[nodiscard]] bool leave(std::string const& name) noexcept;

   /// Passes the name, and the held lease `h`, to the next waiter, unless none waits or the name
   /// was passed so max_handovers times in a row: then false, and nothing changed.
   bool pass(std::string const& name, handover h);

   /// True while some coroutine of the process has the name (contends for it or holds it).
   bool busy(std::string const& name) const { return slots_.contains(name); }

   /// Records that the name's contenders hold one reference on its release channel, until the
   /// name is forgotten. True the first time: the caller takes the reference then.
   [[nodiscard]] bool mark_subscribed(std::string const& name);

   /// Whether a contender for the name waited by message (mark_subscribed) since this process
   /// took its place: then other processes may wait too, and its release is sent so that their
   /// message goes out first (release_call's `wakes`).
   bool subscribed(std::string const& name) const
   {
      auto const it = slots_.find(name);
      return it != slots_.end() && it->second.subscribed;
   }

   /// Wakes every waiter, which completes with operation_aborted, as does every later enter().
   void close() noexcept;

private:
   // A queued waiter lives in the frame of the coroutine that waits in enter(), and `wake`
   // points at a timer in that same frame. Invariant: a waiter is in a queue only while its
   // coroutine is suspended in enter(). leave() unlinks the waiter it grants the name to before
   // it cancels that timer; any other waiter unlinks itself as soon as its wait ends, before its
   // frame can end. So no pointer here ever outlives what it points to.
   // The queue of a name is a list through its waiters, which costs a held name nothing (a
   // std::deque allocates its first block, about 600 bytes, even while empty).
   struct waiter {
      boost::asio::steady_timer* wake;
      bool granted = false;
      std::optional<handover> handed;
      waiter* prev = nullptr;
      waiter* next = nullptr;
   };
   struct slot {
      waiter* head = nullptr;  // the next to be granted the name
      waiter* tail = nullptr;
      bool subscribed = false;
      unsigned handovers = 0;  // in a row, since the name was last released in Redis

      bool empty() const noexcept { return head == nullptr; }
      void push_back(waiter& w) noexcept;
      void unlink(waiter& w) noexcept;
   };

   void grant(slot& s, std::optional<handover> h) noexcept;

   boost::asio::any_io_executor ex_;
   std::unordered_map<std::string, slot> slots_;
   bool closed_ = false;
};

}  // namespace locksmith::detail

#endif
