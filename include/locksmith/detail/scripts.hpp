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
/// an acquire `{1, fence}` or `{0, PTTL}`, a release 1, 0 or -1.
enum class script_role { acquire, release, extend };

/// A Lua script and its SHA-1, for EVALSHA.
struct script {
   std::string_view name;  // for messages
   std::string_view text;
   std::string sha1;  // lower-case hex
   script_role role;
   // An extend script that renews any number of leases in one call and answers an array of
   // 1, 0 or -1 (extend_script(), parse_ownerships), which the watchdog batches. The lease
   // kinds' extend scripts renew one lease and answer one integer (parse_ownership).
   bool batched = false;
};

/// KEYS: lock key, fence key. ARGV: token, ttl ms, fence key ttl ms, and optionally the token of
/// a lease handed over in this process (local_queue::pass), whose key counts as free.
/// Sets the lock key to the token if it is free and mints a fencing token:
/// `{1, fence}`, or `{0, PTTL}` when another owner holds it (PTTL -1: the key has no TTL).
/// Fails with WRONGTYPE when the lock key holds something other than a string.
/// The fence is the fence key's counter, started from the server's clock in µs when the key is
/// new: strictly increasing per name on one server. For a client of one node.
script const& acquire_script();

/// The same for RedLock: the fence is max(last + 1, server time in µs) on each node, so that the
/// highest fence of any quorum rises with the servers' clocks.
script const& quorum_acquire_script();

/// KEYS: lock key. ARGV: token, release channel.
/// Deletes the key and publishes the release (the message is the token, the same on every node,
/// so that a waiter counts one release once) if it holds the token: 1; 0 when another token
/// holds it; -1 when there is no key (it expired).
script const& release_script();

/// KEYS: lock key, fence key, for each lease. ARGV: token, ttl ms, fence key ttl ms, for each
/// lease, in the same order. For each lease: sets the lock key's TTL back to ttl, and the fence
/// key's (if it exists) to the fence key ttl, if the lock key holds the token. Answers an array
/// with one entry per lease: 1; 0 when another token (or a value of another type) holds the key;
/// -1 when there is no key. The watchdog renews the leases that fall due together in one call.
script const& extend_script();

/// Every script, as a node loads them.
std::array<script const*, 4> all_scripts();

/// A script's text for a Redis Cluster: every `redis.call('PUBLISH', ` made
/// `redis.call('SPUBLISH', `, so that a release reaches the subscribers at the master of its
/// channel's slot only (sharded pub/sub, Redis 7), where PUBLISH would cross the cluster bus to
/// every node. The same text when it publishes nothing.
std::string sharded_text(std::string_view text);

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
/// reply.
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
