// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#ifndef LOCKSMITH_DETAIL_VALIDITY_HPP
#define LOCKSMITH_DETAIL_VALIDITY_HPP

#include <locksmith/lock_options.hpp>

#include <algorithm>
#include <chrono>
#include <optional>

namespace locksmith::detail {

using clock = std::chrono::steady_clock;

/// The clock drift allowance when the caller gives none: ttl / 100 + 2 ms, as the RedLock
/// description and redsync use.
constexpr std::chrono::milliseconds default_drift(std::chrono::milliseconds ttl) noexcept
{
   return ttl / 100 + std::chrono::milliseconds{2};
}

/// The deadline until which a lock taken with `ttl`, whose attempt started at `start`, may be
/// relied on: start + ttl - drift. Measured from the start, because the key may have been set
/// at any moment after it. Empty when no validity is left at `now` (validity =
/// ttl - (now - start) - drift is not positive), which makes the attempt count as lost.
constexpr std::optional<clock::time_point> valid_until(clock::time_point start,
                                                       clock::time_point now,
                                                       std::chrono::milliseconds ttl,
                                                       std::chrono::milliseconds drift) noexcept
{
   auto const deadline = start + ttl - drift;
   if (now >= deadline)
      return std::nullopt;
   return deadline;
}

/// The end of a wait or hold of `span` that begins at `from`: from + span, where a span of
/// locksmith::forever or longer ends a century on (forever, for any caller), clear of the clock's
/// overflow.
constexpr clock::time_point deadline_after(clock::time_point from,
                                           std::chrono::milliseconds span) noexcept
{
   return from + std::min(span, forever);
}

}  // namespace locksmith::detail

#endif
