// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "transport/call_deadlines.hpp"

#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <optional>

namespace locksmith::detail {
namespace asio = boost::asio;

// Shared with the timer's wait, which may run after the owner is gone (it then finds `stopped`).
struct call_deadlines::state : std::enable_shared_from_this<state> {
   explicit state(asio::any_io_executor ex)
       : timer{std::move(ex)}
   {}

   asio::steady_timer timer;
   entry* head = nullptr;  // in the order watched: with one timeout, the earliest deadline first
   entry* tail = nullptr;
   std::optional<clock::time_point> armed_at;  // the wait pending, if any
   bool stopped = false;

   void link(entry& e) noexcept
   {
      e.prev_ = tail;
      e.next_ = nullptr;
      (tail ? tail->next_ : head) = &e;
      tail = &e;
      e.watched_ = true;
   }

   void unlink(entry& e) noexcept
   {
      (e.prev_ ? e.prev_->next_ : head) = e.next_;
      (e.next_ ? e.next_->prev_ : tail) = e.prev_;
      e.prev_ = e.next_ = nullptr;
      e.watched_ = false;
   }

   void arm(clock::time_point at)
   {
      armed_at = at;
      timer.expires_at(at);  // a wait still pending completes with operation_aborted
      timer.async_wait([self = shared_from_this(), at](boost::system::error_code ec) {
         // A wait that a later arm replaced, or a stop, leaves everything to the newer one.
         if (ec || self->stopped || self->armed_at != at)
            return;
         self->armed_at.reset();
         self->sweep();
      });
   }

   void sweep()
   {
      // One at a time, from the head again after each: a cancelled call's completion may
      // forget or watch other entries.
      auto const now = clock::now();
      for (;;) {
         auto* e = head;
         while (e && e->deadline_ > now)
            e = e->next_;
         if (!e)
            break;
         unlink(*e);
         e->signal_.emit(asio::cancellation_type::terminal);
      }
      if (stopped || !head)
         return;
      auto earliest = head->deadline_;
      for (auto* e = head->next_; e; e = e->next_)
         earliest = std::min(earliest, e->deadline_);
      // A call watched from inside a cancellation may have armed the timer already, later.
      if (!armed_at || earliest < *armed_at)
         arm(earliest);
   }
};

call_deadlines::call_deadlines(asio::any_io_executor ex)
    : s_{std::make_shared<state>(std::move(ex))}
{}

call_deadlines::~call_deadlines()
{
   stop();
}

void call_deadlines::watch(entry& e, clock::time_point deadline)
{
   if (e.watched_)
      s_->unlink(e);
   e.deadline_ = deadline;
   s_->link(e);
   if (!s_->stopped && (!s_->armed_at || deadline < *s_->armed_at))
      s_->arm(deadline);
}

void call_deadlines::forget(entry& e) noexcept
{
   if (e.watched_)
      s_->unlink(e);
}

std::size_t call_deadlines::size() const noexcept
{
   std::size_t n = 0;
   for (auto const* e = s_->head; e; e = e->next_)
      ++n;
   return n;
}

void call_deadlines::stop()
{
   s_->stopped = true;
   s_->armed_at.reset();
   s_->timer.cancel();
}

}  // namespace locksmith::detail
