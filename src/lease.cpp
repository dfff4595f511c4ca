// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "core.hpp"

namespace locksmith {

namespace {
std::string const empty_string;
}

lease::lease() noexcept = default;
lease::lease(std::shared_ptr<detail::lease_state> st) noexcept
: st_{std::move(st)}
{ }
lease::lease(lease&&) noexcept = default;

lease& lease::operator=(lease&& other) noexcept
{
   if (this != &other) {
      drop();
      st_ = std::move(other.st_);
   }
   return *this;
}

lease::~lease() { drop(); }

void lease::drop() noexcept
{
   // No I/O: the key stays in Redis until its TTL runs out; local waiters may go on at once.
   if (st_)
      st_->end(detail::lease_state::status::dropped);
}

std::string const& lease::name() const noexcept { return st_ ? st_->name : empty_string; }
std::string const& lease::token() const noexcept { return st_ ? st_->token : empty_string; }
std::uint64_t lease::fencing_token() const noexcept { return st_ ? st_->fence : 0; }

lease::clock::time_point lease::valid_until() const noexcept
{
   return st_ ? st_->valid_until : clock::time_point{};
}

bool lease::held() const noexcept
{
   return st_ && st_->st == detail::lease_state::status::held && clock::now() < st_->valid_until;
}

}  // namespace locksmith
