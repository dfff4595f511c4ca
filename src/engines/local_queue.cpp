// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "engines/local_queue.hpp"
#include "engines/spawn.hpp"

namespace locksmith::detail {
namespace asio = boost::asio;

local_queue::local_queue(asio::any_io_executor ex)
    : ex_{std::move(ex)}
{}

asio::awaitable<error_code> local_queue::enter(std::string const& name, clock::time_point deadline,
                                               std::optional<handover>& handed)
{
   if (closed_)
      co_return asio::error::operation_aborted;
   if (try_enter(name))
      co_return error_code{};
   asio::steady_timer wake{ex_, deadline};
   waiter w{.wake = &wake, .granted = false, .handed = std::nullopt};
   slots_.at(name).push_back(w);
   // Woken by leave (granted), by the deadline, by close, or by cancellation.
   auto [ec] = co_await wake.async_wait(use_tuple);
   if (w.granted) {
      handed = std::move(w.handed);
      co_return error_code{};
   }
   slots_.at(name).unlink(w);
   if (ec == asio::error::operation_aborted || closed_)
      co_return asio::error::operation_aborted;
   co_return error::wait_timeout;
}

bool local_queue::try_enter(std::string const& name)
{
   return !closed_ && slots_.try_emplace(name).second;
}

bool local_queue::leave(std::string const& name) noexcept
{
   auto it = slots_.find(name);
   if (it == slots_.end())
      return false;
   auto& s = it->second;
   if (s.empty()) {
      bool const subscribed = s.subscribed;
      slots_.erase(it);
      return subscribed;
   }
   s.handovers = 0;
   grant(s, std::nullopt);
   return false;
}

bool local_queue::pass(std::string const& name, handover h)
{
   auto it = slots_.find(name);
   if (it == slots_.end() || it->second.empty() || it->second.handovers >= max_handovers || closed_)
      return false;
   ++it->second.handovers;
   grant(it->second, std::move(h));
   return true;
}

void local_queue::grant(slot& s, std::optional<handover> h) noexcept
{
   waiter* next = s.head;
   s.unlink(*next);
   next->granted = true;
   next->handed = std::move(h);
   next->wake->cancel();
}

void local_queue::slot::push_back(waiter& w) noexcept
{
   w.prev = tail;
   w.next = nullptr;
   (tail ? tail->next : head) = &w;
   tail = &w;
}

void local_queue::slot::unlink(waiter& w) noexcept
{
   (w.prev ? w.prev->next : head) = w.next;
   (w.next ? w.next->prev : tail) = w.prev;
   w.prev = w.next = nullptr;
}

bool local_queue::mark_subscribed(std::string const& name)
{
   // A reentrant lock's next hold contends without the name's place, which may be gone: it
   // polls instead of taking a reference that nothing would drop.
   auto it = slots_.find(name);
   if (it == slots_.end())
      return false;
   bool const first = !it->second.subscribed;
   it->second.subscribed = true;
   return first;
}

void local_queue::close() noexcept
{
   closed_ = true;
   for (auto& [name, s] : slots_)
      for (auto* w = s.head; w; w = w->next)
         w->wake->cancel();
}

}  // namespace locksmith::detail
