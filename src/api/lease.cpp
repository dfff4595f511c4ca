// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "core/client_core.hpp"

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/append.hpp>
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
   if (st_)
      st_->end(detail::lease_state::status::dropped);
}

std::string const& lease::name() const noexcept
{
   return st_ ? st_->name : empty_string;
}
std::string const& lease::token() const noexcept
{
   return st_ ? st_->token : empty_string;
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
   return st_ ? st_->lost_event.get_executor() : executor_type{};
}

void lease::async_wait_lost_impl(wait_handler h)
{
   using status = detail::lease_state::status;
   auto outcome = [st = st_](error_code) {
      return asio::deferred.values(
         st->st == status::lost ? error_code{} : error_code{asio::error::operation_aborted});
   };
   if (st_->st != status::held) {
      auto const ec =
         st_->st == status::lost ? error_code{} : error_code{asio::error::operation_aborted};
      asio::post(st_->lost_event.get_executor(),
                 [h = std::move(h), ec]() mutable { std::move(h)(ec); });
      return;
   }
   // lost_event never expires: the lease's end cancels it, and so may the caller.
   st_->lost_event.async_wait(asio::deferred(outcome))(std::move(h));
}

}  // namespace locksmith
