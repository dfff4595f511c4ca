// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#ifndef LOCKSMITH_DETAIL_CLUSTER_HPP
#define LOCKSMITH_DETAIL_CLUSTER_HPP

#include "sansio/url.hpp"

#include <boost/redis/resp3/node.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace locksmith::detail {

// Redis Cluster's pure parts: which slot a key hashes to, what a redirection says, and the slot
// map that CLUSTER SLOTS returns.

/// The number of hash slots of a Redis Cluster.
inline constexpr std::uint16_t slot_count = 16384;

/// The part of a key that Redis Cluster hashes: what lies between the first `{` and the first `}`
/// after it, when that is not empty; otherwise the whole key.
std::string_view hash_tag(std::string_view key) noexcept;

/// The slot of a key: CRC16 (XMODEM) of its hash tag, modulo 16384.
std::uint16_t hash_slot(std::string_view key) noexcept;

/// A redirection: `MOVED <slot> <host>:<port>` (the slot has a new master: ask it from now on)
/// or `ASK <slot> <host>:<port>` (the slot is being migrated: ask that node, for this request
/// only, after ASKING).
struct redirect {
   bool ask = false;
   std::uint16_t slot = 0;
   endpoint to;  // an empty host: the node that sent the redirection

   friend bool operator==(redirect const&, redirect const&) = default;
};

/// Parses a server error text as a redirection; empty when it is another error, or malformed.
std::optional<redirect> parse_redirect(std::string_view error);

/// Whether a script stopped part way on a slot in motion: Redis checks each command inside a
/// script as it runs, and in a slot that is MIGRATING a key the node does not have (one that the
/// script deleted itself, as release.lua's ZPOPMIN of the last waiters before it puts some back)
/// may be on the other side: `ERR Script attempted to access a non local key in a cluster node`.
/// Unlike MOVED, ASK and TRYAGAIN, the script ran up to there, and what it wrote stays.
bool stopped_in_a_moving_slot(std::string_view error) noexcept;

/// Whether a call's `WAIT` (config::wait_replicas) was cut short by its master's demotion: a
/// failover made the master a replica while the `WAIT` blocked, and Redis freed it with
/// `UNBLOCKED force unblock from blocking operation, instance state changed (master ->
/// replica?)`, which is then the request's reply. The script before it ran: a passing failure
/// of a call that was sent (it may have written), as a timeout is, and a sign that the node's
/// master has changed. (A call that the old master of a manual failover holds paused is not
/// freed so: it runs when the pause ends, as a replica's, and meets MOVED or READONLY.)
bool unblocked_by_a_demotion(std::string_view error) noexcept;

/// What a call does after a node answered it with MOVED, ASK or TRYAGAIN (which say that the
/// script did not run): its slot is in motion, a migration under way or a map that changes.
struct redirect_plan {
   bool give_up = false;                // no time left: the call fails as a passing failure
   std::chrono::milliseconds pause{0};  // before the call is sent again
};

/// The call follows the slot until its deadline (`left`: the time it has left), never up to a
/// fixed count: a reshard keeps a slot in motion far longer than one call. TRYAGAIN (the call's
/// keys split between two masters) is sent again after a pause; MOVED and ASK are followed at
/// once, but past a few in a row (two nodes that disagree for a moment), after the same pause.
/// It gives up when no time is left for another send after the pause.
redirect_plan plan_redirect(bool try_again, unsigned redirections,
                            std::chrono::steady_clock::duration left) noexcept;

/// Slots `first`..`last` (inclusive) and their master.
struct slot_range {
   std::uint16_t first = 0;
   std::uint16_t last = 0;
   endpoint master;  // an empty host: the node that answered

   friend bool operator==(slot_range const&, slot_range const&) = default;
};

/// Parses a CLUSTER SLOTS reply (RESP2 or RESP3): an array of [first, last, master, replicas...],
/// each node an array [host, port, id, ...]. A host that is empty or `?` (the node does not know
/// its own address) is returned empty. Empty when the reply has another shape, or a slot or port
/// is out of range.
std::optional<std::vector<slot_range>>
parse_cluster_slots(std::vector<boost::redis::resp3::node> const& reply);

/// The slots (by slot, slot_count of them) that `after` gives another master than `before` did:
/// a failover's promoted replica, or a slot moved. A slot that either map leaves out is not
/// counted. Both maps with their hosts filled in (none empty).
std::vector<bool> moved_slots(std::vector<slot_range> const& before,
                              std::vector<slot_range> const& after);

}  // namespace locksmith::detail

#endif
