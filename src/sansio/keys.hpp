// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#ifndef LOCKSMITH_DETAIL_KEYS_HPP
#define LOCKSMITH_DETAIL_KEYS_HPP

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace locksmith::detail {

// Every key and channel of the lock named K carries the hash tag {K}, so that they share one
// Redis Cluster slot and one Lua script may touch them all.

/// The suffixes of a name's keys and channels, after its lock key (below): what a script call
/// frames in place (script_call::builder::key) and the functions below append.
namespace key_suffix {
inline constexpr std::string_view fence = ":fence";
inline constexpr std::string_view released = ":released";
inline constexpr std::string_view waiters = ":waiters";
inline constexpr std::string_view readers = ":readers";
inline constexpr std::string_view holds = ":holds";
inline constexpr std::string_view writer_waiting = ":writer_waiting";
inline constexpr std::string_view queue = ":queue";
inline constexpr std::string_view queue_deadlines = ":queue_deadlines";
}  // namespace key_suffix

/// The parts of a name's key or channel, in order: `prefix{name}suffix`. lock_key joins them; a
/// script call frames them in place (script_call::builder).
inline std::array<std::string_view, 5> key_parts(std::string_view prefix, std::string_view name,
                                                 std::string_view suffix = {})
{
   return {prefix, "{", name, "}", suffix};
}

/// The key that holds the owner's token: `prefix{name}`, and with a suffix, the name's other keys.
inline std::string lock_key(std::string_view prefix, std::string_view name,
                            std::string_view suffix = {})
{
   std::string k;
   k.reserve(prefix.size() + name.size() + 2 + suffix.size());
   for (auto part : key_parts(prefix, name, suffix))
      k.append(part);
   return k;
}

/// The key that remembers the last fencing token: `prefix{name}:fence`.
inline std::string fence_key(std::string_view prefix, std::string_view name)
{
   return lock_key(prefix, name, key_suffix::fence);
}

/// The channel on which a release is published: `prefix{name}:released`.
inline std::string release_channel(std::string_view prefix, std::string_view name)
{
   return lock_key(prefix, name, key_suffix::released);
}

/// `head:tail`, in one allocation: a waiter's channel and id (below).
inline std::string colon_joined(std::string_view head, std::string_view tail)
{
   std::string s;
   s.reserve(head.size() + 1 + tail.size());
   s.append(head).append(":").append(tail);
   return s;
}

/// A waiting process's own release channel for the name: the release channel, ':' and the
/// process's tag (release_listener::tag()). release.lua publishes there the message that names a
/// waiter whose id is `...:tag` (waiter_id), so that only that process wakes to read it.
inline std::string waiter_channel(std::string_view release_channel, std::string_view tag)
{
   return colon_joined(release_channel, tag);
}

/// A waiter's id as registered among the waiters: when its lock call first registered (`since`:
/// µs since 1970 as 14 hex digits, so that ids sort as those times), its own random part, ':' and
/// its process's tag (no ':' in it). release.lua names the least id among the live ones: the
/// longest waiting, and the same waiter on every node of a RedLock (registrations against one
/// holder expire at nearly the same time, in an order that differs from node to node). Only the
/// order depends on the clients' clocks (docs/design.md, "One process woken per release"). It
/// reads the tag back to find waiter_channel.
inline std::string waiter_id(std::chrono::system_clock::time_point since, std::string_view tag,
                             std::string_view attempt)
{
   auto const us = std::chrono::duration_cast<std::chrono::microseconds>(since.time_since_epoch());
   char order[15];
   std::snprintf(order, sizeof order, "%014llx",
                 static_cast<unsigned long long>(std::max<std::int64_t>(0, us.count())));
   std::string s;
   s.reserve(14 + attempt.size() + 1 + tag.size());
   s.append(order, 14).append(attempt).append(":").append(tag);
   return s;
}

/// The plain lock's waiting processes, a sorted set of waiter id → expiry (ms, server clock), so
/// that a release wakes one of them: `prefix{name}:waiters`.
inline std::string waiters_key(std::string_view prefix, std::string_view name)
{
   return lock_key(prefix, name, key_suffix::waiters);
}

/// The read-write lock's readers, a sorted set of token → expiry (ms, server clock):
/// `prefix{name}:readers`. Its writer holds the lock key.
inline std::string readers_key(std::string_view prefix, std::string_view name)
{
   return lock_key(prefix, name, key_suffix::readers);
}

/// The reentrant lock's holds, a sorted set of token → expiry (ms, server clock):
/// `prefix{name}:holds`. Its lock key holds the owner's token.
inline std::string holds_key(std::string_view prefix, std::string_view name)
{
   return lock_key(prefix, name, key_suffix::holds);
}

/// Set while a writer waits, so that no new reader enters: `prefix{name}:writer_waiting`.
inline std::string writer_waiting_key(std::string_view prefix, std::string_view name)
{
   return lock_key(prefix, name, key_suffix::writer_waiting);
}

/// The fair lock's queue of waiters in arrival order, a list of tokens: `prefix{name}:queue`.
inline std::string queue_key(std::string_view prefix, std::string_view name)
{
   return lock_key(prefix, name, key_suffix::queue);
}

/// The deadlines of the fair lock's waiters, a sorted set of token → deadline (ms, server clock)
/// that each waiter keeps moving while it waits: `prefix{name}:queue_deadlines`.
inline std::string queue_deadlines_key(std::string_view prefix, std::string_view name)
{
   return lock_key(prefix, name, key_suffix::queue_deadlines);
}

}  // namespace locksmith::detail

#endif
