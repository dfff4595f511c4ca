// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "core/client_core.hpp"
#include "engines/spawn.hpp"

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/append.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>

namespace locksmith {
namespace asio = boost::asio;

namespace {
std::string const empty_string;
}

lease::lease() noexcept = default;
lease::lease(std::shared_ptr<detail::lease_state> st) noexcept
    : st_{std::move(st)}
{}
lease::lease(lease&&) noexcept = default;

lease& lease::operator=(lease&& other) noexcept
{
   if (this != &other) {
      drop();
      st_ = std::move(other.st_);
   }
   return *this;
}

lease::~lease()
{
   drop();
}

void lease::drop() noexcept
{
   // No I/O: the key stays in Redis until its TTL runs out; local waiters may go on at once.
   // The end runs on the client's executor, which owns the state it touches: at once when we are
   // on it, else posted there (a failed allocation terminates, as in any noexcept function). A
   // lease that ended already (unlocked, lost) has nothing left to end.
   if (!st_ || st_->ended.load(std::memory_order_acquire))
      return st_.reset();
   auto const ex = st_->ex;
   asio::dispatch(ex, [st = std::move(st_)] { st->end(detail::lease_state::status::dropped); });
}

std::string const& lease::name() const noexcept
{
   return st_ ? st_->name : empty_string;
}
std::string const& lease::token() const noexcept
{
   if (!st_)
      return empty_string;
   return st_->bare_token.empty() ? st_->token : st_->bare_token;
}
std::uint64_t lease::fencing_token() const noexcept
{
   return st_ ? st_->fence : 0;
}

lease::clock::time_point lease::valid_until() const noexcept
{
   return st_ ? st_->valid_until : clock::time_point{};
}

bool lease::held() const noexcept
{
   return st_ && st_->st == detail::lease_state::status::held && clock::now() < st_->valid_until;
}

bool lease::lost() const noexcept
{
   return st_ && st_->st == detail::lease_state::status::lost;
}

lease::executor_type lease::get_executor() const noexcept
{
   return st_ ? st_->ex : executor_type{};
}

namespace {

// The wait, on the client's executor. Completes on the handler's executor (post and the timer's
// completion both honour it).
void wait_lost(std::shared_ptr<detail::lease_state> const& st,
               asio::any_completion_handler<void(error_code)> h)
{
   using status = detail::lease_state::status;
   auto outcome = [st](error_code) {
      return asio::deferred.values(
         st->st == status::lost ? error_code{} : error_code{asio::error::operation_aborted});
   };
   if (st->st != status::held) {
      auto const ec =
         st->st == status::lost ? error_code{} : error_code{asio::error::operation_aborted};
      asio::post(st->ex, asio::append(std::move(h), ec));
      return;
   }
   // The timer never expires: the lease's end cancels it, and so may the caller.
   st->lost_timer().async_wait(asio::deferred(outcome))(std::move(h));
}

}  // namespace

void lease::async_wait_lost_impl(wait_handler h)
{
   // From any thread, on the client's executor (enter), as the client's own operations.
   detail::enter(st_->ex, std::move(h),
                 [st = st_](wait_handler h) { wait_lost(st, std::move(h)); });
}

}  // namespace locksmith
