// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// Pure argument parsers and defaults of the `locksmith` command-line tool, kept apart so that they
// can be unit tested without sockets or processes.
#ifndef LOCKSMITH_TOOLS_CLI_ARGS_HPP
#define LOCKSMITH_TOOLS_CLI_ARGS_HPP

#include "sansio/validate.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>
#include <system_error>

namespace locksmith::cli {

/// Parses a duration written as a non-negative integer count and a unit: `ms`, `s`, `m` or `h`
/// (`250ms`, `30s`, `5m`, `1h`). Empty for anything else: no unit, another unit, a sign, a
/// fraction, spaces, or a value that does not fit in std::chrono::milliseconds.
inline std::optional<std::chrono::milliseconds> parse_duration(std::string_view text)
{
   struct unit {
      std::string_view suffix;
      std::int64_t ms;
   };
   // "ms" before "m" and "s": the longest suffix must win.
   constexpr unit units[] = {{"ms", 1}, {"s", 1'000}, {"m", 60'000}, {"h", 3'600'000}};
   for (auto const& u : units) {
      if (text.size() <= u.suffix.size() || !text.ends_with(u.suffix))
         continue;
      auto const digits = text.substr(0, text.size() - u.suffix.size());
      // Unsigned, so that from_chars refuses a minus sign; it refuses '+' and spaces by itself.
      std::uint64_t count = 0;
      auto const [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), count);
      if (ec != std::errc{} || end != digits.data() + digits.size())
         return std::nullopt;
      using rep = std::chrono::milliseconds::rep;
      if (count > static_cast<std::uint64_t>(std::numeric_limits<rep>::max() / u.ms))
         return std::nullopt;
      return std::chrono::milliseconds{static_cast<rep>(count) * u.ms};
   }
   return std::nullopt;
}

/// The grace period (SIGTERM to SIGKILL, and the lease's loss margin) when --grace is not given:
/// 1 s, or for a short TTL half of what it leaves to renew in (`room`, from
/// detail::renewal_room with the default drift), so that the default always leaves renewal room
/// and the other half goes to retries of a failed renewal. `room` must be positive.
inline std::chrono::milliseconds default_grace(std::chrono::milliseconds room)
{
   return std::min<std::chrono::milliseconds>(std::chrono::seconds{1}, room / 2);
}

}  // namespace locksmith::cli

#endif
