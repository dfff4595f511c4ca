// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#ifndef LOCKSMITH_DETAIL_SCRIPTS_HPP
#define LOCKSMITH_DETAIL_SCRIPTS_HPP

#include <locksmith/error.hpp>

#include <boost/redis/response.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace locksmith::detail {

/// What a script answers: the acquire script's `{1, fence}` or `{0, PTTL}`, or the release and
/// extend scripts' 1, 0 or -1. Other scripts of the same shapes (the semaphore's, the read-write
/// lock's) are read the same way.
enum class reply_shape { acquire, ownership };

/// A Lua script and its SHA-1, for EVALSHA.
struct script {
   std::string_view name;  // for messages
   std::string_view text;
   std::string sha1;  // lower-case hex
   reply_shape shape = reply_shape::ownership;
};

/// KEYS: lock key, fence key. ARGV: token, ttl ms, fence key ttl ms.
/// Sets the lock key to the token if it is free and mints a fencing token:
/// `{1, fence}`, or `{0, PTTL}` when another owner holds it (PTTL -1: the key has no TTL).
/// Fails with WRONGTYPE when the lock key holds something other than a string.
script const& acquire_script();

/// KEYS: lock key. ARGV: token, release channel.
/// Deletes the key and publishes the release (the message is the token, the same on every node,
/// so that a waiter counts one release once) if it holds the token: 1; 0 when another token
/// holds it; -1 when there is no key (it expired).
script const& release_script();

/// KEYS: lock key, fence key. ARGV: token, ttl ms, fence key ttl ms.
/// Sets the lock key's TTL back to ttl, and the fence key's (if it exists) to the fence key ttl,
/// if the lock key holds the token: 1; 0 when another token holds it; -1 when there is no key.
script const& extend_script();

/// The SHA-1 of a text, as lower-case hex (what Redis names a script by).
std::string sha1_hex(std::string_view text);

/// What the acquire script answered.
struct acquire_reply {
   bool acquired = false;
   std::int64_t fence = 0;             // when acquired
   std::chrono::milliseconds pttl{0};  // when not: time left on the holder's key, -1 none
};

/// What the release and extend scripts answered.
enum class ownership { done, not_owner, expired };

/// The server's error text when the reply is an error (for example "NOSCRIPT ..." or
/// "WRONGTYPE ..."), else empty.
std::string server_error(boost::redis::generic_response const& r);

/// True when the reply says that the script is not in the server's cache.
bool is_noscript(boost::redis::generic_response const& r);

/// Parses the acquire script's reply. error::unexpected_reply for a server error or a malformed
/// reply.
error_code parse_acquire(boost::redis::generic_response const& r, acquire_reply& out);

/// Parses the release or extend script's reply. error::unexpected_reply for a server error or a
/// malformed reply.
error_code parse_ownership(boost::redis::generic_response const& r, ownership& out);

}  // namespace locksmith::detail

#endif
