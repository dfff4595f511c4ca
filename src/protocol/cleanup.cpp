// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "protocol/cleanup.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

namespace locksmith::detail {

void owned_work::done() noexcept
{
   if (pending_ > 0 && --pending_ == 0)
      for (auto* t : idle_waiters_)
         t->cancel();
}

void owned_work::close() noexcept
{
   closed_ = true;
   for (auto& w : retry_timers_)
      if (auto t = w.lock())
         t->cancel();
   retry_timers_.clear();
}

void owned_work::track(std::weak_ptr<boost::asio::steady_timer> t)
{
   if (retry_timers_.size() >= 64)
      std::erase_if(retry_timers_, [](auto const& w) { return w.expired(); });
   retry_timers_.push_back(std::move(t));
}

void owned_work::hurry() noexcept
{
   // A cancelled retry's handler sends at once unless the work is closed (fanout.cpp).
   std::erase_if(retry_timers_, [](auto const& w) { return w.expired(); });
   for (auto& w : retry_timers_)
      if (auto t = w.lock())
         t->cancel();
}

boost::asio::awaitable<bool> owned_work::idle_within(boost::asio::any_io_executor ex,
                                                     std::chrono::milliseconds bound)
{
   if (pending_ > 0) {
      boost::asio::steady_timer idle{ex, bound};
      idle_waiters_.push_back(&idle);
      // Woken when the last operation or release ends, or at the bound.
      co_await idle.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
      forget_idle_waiter(&idle);
   }
   co_return pending_ == 0;
}

void owned_work::forget_idle_waiter(boost::asio::steady_timer* t) noexcept
{
   idle_waiters_.erase(std::remove(idle_waiters_.begin(), idle_waiters_.end(), t),
                       idle_waiters_.end());
}

retry_plan release_retry(std::chrono::milliseconds node_timeout, unsigned attempt) noexcept
{
   using std::chrono::milliseconds;
   milliseconds const step = node_timeout * (1L << std::min(attempt, 10u));
   return {std::min(step, milliseconds{1000}),
           std::clamp(step, node_timeout, std::max(node_timeout, milliseconds{2000}))};
}

std::chrono::milliseconds restart_patience(std::chrono::milliseconds node_timeout) noexcept
{
   return release_retry(node_timeout, ~0u).timeout;
}

std::chrono::milliseconds stall_patience(std::chrono::milliseconds node_timeout) noexcept
{
   return std::max(node_timeout, restart_patience(node_timeout) / 4);
}

std::chrono::milliseconds patient_timeout(std::chrono::milliseconds node_timeout,
                                          std::chrono::steady_clock::duration left) noexcept
{
   using std::chrono::milliseconds;
   auto const longest = release_retry(node_timeout, ~0u).timeout;
   auto const rest = std::chrono::ceil<milliseconds>(std::max(left, left.zero()));
   return std::max(node_timeout, std::min(longest, rest));
}

}  // namespace locksmith::detail
