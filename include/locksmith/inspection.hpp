// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#ifndef LOCKSMITH_INSPECTION_HPP
#define LOCKSMITH_INSPECTION_HPP

#include <locksmith/error.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace locksmith {

/// What kind of primitive the keys of a name show on a node (client::async_inspect).
///
/// The kind is read from the keys, which carry no label: a read-write lock held by a writer
/// while no reader holds or writer waits, and a fair lock held while nobody waits in its queue,
/// have the keys of a plain lock and read as `lock`.
enum class lock_kind {
   none,        ///< no key of the name exists: free
   lock,        ///< the lock key holds a token (client::async_lock)
   fair,        ///< a lock whose waiters queue in Redis (lock_options::fair), some queued now
   semaphore,   ///< the lock key is a set of permit holders (semaphore.hpp)
   read_write,  ///< readers hold it, or a writer waits for them (rw_lock.hpp)
   reentrant,   ///< an owner's holds (reentrant_lock.hpp)
   other        ///< the lock key holds a type that no locksmith primitive writes
};

/// The kind's name as `locksmith status` prints it: "none", "lock", "fair", "semaphore",
/// "read-write", "reentrant" or "other".
constexpr std::string_view to_string(lock_kind k) noexcept
{
   constexpr std::string_view names[] = {"none",       "lock",      "fair", "semaphore",
                                         "read-write", "reentrant", "other"};
   return names[static_cast<std::size_t>(k)];
}

/// A token found in a name's keys, how long it has left there, and its holder's label.
struct holder_info {
   /// The token: a lease's (lease::token()), or a reentrant lock's owner's (a digest of its
   /// owner id). For at most 50 ms after a plain lock's release that woke a waiter of another
   /// process, the key is kept for that waiter, and this is its id (hex digits, ':' and its
   /// process's tag), not a lease's token.
   std::string token;
   /// Time left before the key or member expires, on the server's clock (-1: no TTL).
   std::chrono::milliseconds ttl{0};
   /// The holder's label (lock_options::owner), or, for a reentrant lock's owner, that of its
   /// latest hold; empty when none was given.
   std::string owner = {};
};

/// What one node knows of a name.
struct node_inspection {
   /// The node's URL, without its password.
   std::string node;
   /// Why the node could not be read (asio::error::timed_out, error::auth_failed,
   /// error::unexpected_reply, ...); success when the fields below are its answer.
   error_code ec;
   /// The server's error text, or the connection's last problem, when `ec` is set.
   std::string server_message;

   /// What the name's keys show here.
   lock_kind kind = lock_kind::none;
   /// Who holds the name: the lock key's token (a lock's, a fair lock's or a writer's holder, or
   /// a reentrant lock's owner), or the live members of a semaphore (its permits in use) or of a
   /// read-write lock's readers. Empty when it is free.
   std::vector<holder_info> holders;
   /// read_write: `holders` is the writer, not readers.
   bool writer = false;
   /// read_write: a writer waits for the readers to leave; no new reader enters meanwhile.
   bool writer_waiting = false;
   /// reentrant: the live holds of its owner (one per lease).
   std::vector<holder_info> holds;
   /// fair: the waiters in their queue order; `ttl` is how long each keeps its place without
   /// asking again.
   std::vector<holder_info> waiters;
   /// The last fencing token minted for the name here; 0 when its fence key has expired (the
   /// next one then follows the server's clock).
   std::int64_t fence = 0;

   /// True when someone holds the name on this node.
   bool held() const noexcept { return !holders.empty(); }
};

/// What the servers know of a name (client::async_inspect): each node's view, and the quorum's.
struct inspection {
   /// The name inspected.
   std::string name{};
   /// One entry per configured node, in the order of config::nodes (a Redis Cluster counts as
   /// one node: the master of the name's slot answers).
   std::vector<node_inspection> nodes;
   /// The nodes that must agree: the majority of config::nodes (1 of 1, 3 of 5).
   std::size_t quorum = 0;
   /// The nodes that answered.
   std::size_t answered = 0;
   /// The kind that most of the nodes that answered show (none if none shows any).
   lock_kind kind = lock_kind::none;
   /// The tokens that at least `quorum` nodes show as holders: the lease's owner, or for a
   /// semaphore or readers each holder on that many nodes (a permit's own quorum may be higher,
   /// and the servers do not know the permit count). `ttl`: how long a quorum keeps it, the
   /// quorum-th longest of its nodes' times left.
   std::vector<holder_info> holders{};
   /// The highest fencing token minted on any node (0: none known).
   std::int64_t fence = 0;

   /// True when a quorum of nodes shows a holder: the name is held.
   bool held() const noexcept { return !holders.empty(); }
};

}  // namespace locksmith

#endif
