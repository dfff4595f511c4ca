// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#ifndef LOCKSMITH_DETAIL_QUARANTINE_HPP
#define LOCKSMITH_DETAIL_QUARANTINE_HPP

#include <locksmith/config.hpp>

#include <chrono>
#include <optional>
#include <string_view>

namespace locksmith::detail {

/// The restart quarantine in force for a config: config::restart_quarantine, or by default
/// 30 s with 3 nodes or more and none with fewer (one node has no quorum to protect).
std::chrono::milliseconds effective_quarantine(config const& cfg) noexcept;

/// `uptime_in_seconds` from the text of `INFO server`, if it is there and well formed.
std::optional<std::chrono::seconds> parse_uptime(std::string_view info) noexcept;

/// From when a node's votes count: `quarantine` after its server started. Redis counts its
/// uptime as the difference of two wall-clock times in whole seconds (now and the start, each
/// rounded down), so a server up for 0.1 s may say 1: it started no later than
/// `learned_at - uptime + 1 s`. (Seen: "uptime_in_seconds:1" 0.1 s after a restart, which let a
/// 3 s quarantine end after 2.1 s.)
inline std::chrono::steady_clock::time_point
trusted_from(std::chrono::steady_clock::time_point learned_at, std::chrono::seconds uptime,
             std::chrono::milliseconds quarantine) noexcept
{
   return learned_at - uptime + std::chrono::seconds{1} + quarantine;
}

}  // namespace locksmith::detail

#endif
