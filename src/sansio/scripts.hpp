// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#ifndef LOCKSMITH_DETAIL_SCRIPTS_HPP
#define LOCKSMITH_DETAIL_SCRIPTS_HPP

#include <locksmith/error.hpp>

#include <boost/redis/response.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace locksmith::detail {

/// What a script does, whichever variant it is. The lease kinds' scripts (the semaphore's, the
/// read-write lock's, the reentrant lock's) have the same roles and answer in the same shapes:
/// an acquire `{1, fence}` or `{0, PTTL}`, a release 1, 0 or -1. A read (inspect.lua) writes
/// nothing and votes on nothing.
enum class script_role { acquire, release, extend, read };

/// A Lua script and its SHA-1, for EVALSHA. Each script is a whole file of src/scripts/, whose
/// header gives its KEYS, ARGV and replies; the build embeds it (cmake/embed_scripts.cmake) and
/// computes its SHA-1 there.
struct script {
   std::string_view name;  // for messages; the file is src/scripts/<name, with _ for spaces>.lua
   std::string_view text;
   std::string sha1;  // lower-case hex
   script_role role;
   // An extend script that renews any number of leases in one call and answers an array of
   // 1, 0 or -1 (extend_script(), parse_ownerships), which the watchdog batches. The lease
   // kinds' extend scripts renew one lease and answer one integer (parse_ownership).
   bool batched = false;
   // Not a Lua script: plain commands, sent as they are, never by EVALSHA, so never answered
   // NOSCRIPT (the unfenced acquire, unfenced_acquire_script()).
   bool plain = false;
   // It publishes (a release, which wakes a waiter). When another process may wait, its EVALSHA
   // goes behind a PING in the same request (script_call::leads), so that the server writes the
   // message before the script's reply: Redis writes the clients that have output in the
   // reverse order of their first output in one event loop turn, so the script's caller,
   // answered after its PUBLISH, went first, and waking it (an idle vCPU, here) held the
   // waiter's message back by about 60-90 µs of a 1-waiter handoff (benchmarks/README.md,
   // "Where the 1-waiter handoff goes"). The PONG is taken off the reply (strip_leading_pong)
   // before anything reads it.
   bool publishes = false;
};

/// Takes off the PONG that a publishing script's request led with (script::publishes), if the
/// reply has it (the EVAL fallback and an ASKING request go without).
void strip_leading_pong(boost::redis::generic_response& resp);

/// acquire.lua: SET NX PX of the lock key and a fencing token, `{1, fence}`, or `{0, PTTL}`. For
/// a client of one node the fence is the fence key's counter, started from the server's clock in
/// µs when the key is new: strictly increasing per name on one server. For RedLock (the fence
/// key's TTL sent negative, acquire_call) it is max(last + 1, server time in µs) on each node, so
/// that the highest fence of any quorum rises with the servers' clocks.
script const& acquire_script();

/// Not a script: `SET lock-key token NX PX ttl` alone (push_script says why no PTTL), the lock
/// without a fence (lock_options::fence = false). Its calls take the lock key and the token and
/// ttl (ms), and its reply parses as an acquire script's (parse_acquire), with fence 0.
script const& unfenced_acquire_script();

/// release.lua: deletes the key and publishes the release if it holds the token: 1; 0 when
/// another token holds it; -1 when there is no key (it expired).
script const& release_script();

/// extend.lua: renews any number of leases in one call (the watchdog renews the leases that fall
/// due together with one request per node), answering 1, 0 or -1 for each.
script const& extend_script();

/// Every script, as a node loads them.
std::array<script const*, 3> all_scripts();

/// The SHA-1 of a text, as lower-case hex (what Redis names a script by).
std::string sha1_hex(std::string_view text);

/// What the acquire script answered.
struct acquire_reply {
   bool acquired = false;
   std::int64_t fence = 0;             // when acquired
   std::chrono::milliseconds pttl{0};  // when not: time left on the holder's key, -1 none
   // When not (fair lock): no holder stands in the way, only other waiters: the key is free
   // with another token first in the queue, or handed to a token still queued.
   bool waiters_only = false;
   // When not (fair lock): the token that holds the key, empty when it is free.
   std::string holder{};
};

/// What the release and extend scripts answered.
enum class ownership { done, not_owner, expired };

/// The server's error text when the reply is an error (for example "NOSCRIPT ..." or
/// "WRONGTYPE ..."), else empty.
std::string server_error(boost::redis::generic_response const& r);

/// True when the reply says that the script is not in the server's cache.
bool is_noscript(boost::redis::generic_response const& r);

/// Parses the acquire script's reply. error::unexpected_reply for a server error or a malformed
/// reply, the unfenced acquire's among them: its plain commands answer in a shape of their own,
/// read by parse_unfenced_acquire (sansio/unfenced_reply.hpp); the fan-out and the replica check
/// pick the parser by the call's script::plain.
error_code parse_acquire(boost::redis::generic_response const& r, acquire_reply& out);

/// Parses the release script's reply. error::unexpected_reply for a server error or a malformed
/// reply.
error_code parse_ownership(boost::redis::generic_response const& r, ownership& out);

/// Parses the extend script's reply for `count` leases into `out` (resized to count).
/// error::unexpected_reply for a server error, or a reply of another shape or length.
error_code parse_ownerships(boost::redis::generic_response const& r, std::size_t count,
                            std::vector<ownership>& out);

}  // namespace locksmith::detail

#endif
