// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The script calls of one lock name: acquire, extend and release, with their keys and arguments.
#ifndef LOCKSMITH_SRC_CALLS_HPP
#define LOCKSMITH_SRC_CALLS_HPP

#include "transport/node.hpp"

#include <chrono>
#include <memory>
#include <span>
#include <string>

namespace locksmith::detail {

/// The fence key outlives the lock key by this much; after that, the server's clock keeps
/// fences rising.
inline constexpr std::chrono::milliseconds fence_linger{60'000};

/// How long a release keeps the key reserved for the waiter that it names (release.lua), so that
/// no arrival barges in before that waiter's try: its message and its try, each one way, take
/// well under a millisecond on a healthy network. A waiter slower than this finds the key free
/// (or taken, as without a reservation); one that is gone holds the name this long.
inline constexpr std::chrono::milliseconds handoff_reserve{50};

/// A waiter's registration among the name's waiters (acquire.lua), so that a release wakes it
/// alone: its id (one per lock call, never a try's token), how long the registration may live at
/// most (the time left of its wait), and whether an earlier try may have registered it.
struct waiter_entry {
   std::string const* id;
   std::chrono::milliseconds life;
   bool registered;
};

/// SET NX PX ttl of the lock key, then a fence minted from the fence key (kept ttl + fence_linger):
/// by the fence key's counter on one node, by the servers' clocks with a `quorum` of several.
/// With `takes_over`, a key that holds that token (a lease handed over in this process) counts as
/// free. With `waiter`, a try that loses registers it, and one that wins takes it out. Without
/// `fenced` (lock_options::fence = false, where a handover or a registration needs the script),
/// no fence is minted and the reply's is 0.
std::shared_ptr<script_call const>
acquire_call(std::string const& prefix, std::string const& name, std::string const& token,
             std::chrono::milliseconds ttl, bool quorum, std::string const* takes_over = nullptr,
             waiter_entry const* waiter = nullptr, bool fenced = true);

/// The lock without a fence (lock_options::fence = false): SET NX PX ttl of the lock key, a plain
/// command (unfenced_acquire_script).
std::shared_ptr<script_call const> unfenced_acquire_call(std::string const& prefix,
                                                         std::string const& name,
                                                         std::string const& token,
                                                         std::chrono::milliseconds ttl);

/// PEXPIRE ttl of the lock key and of the fence key (ttl + fence_linger), if the token matches.
std::shared_ptr<script_call const> extend_call(std::string const& prefix, std::string const& name,
                                               std::string const& token,
                                               std::chrono::milliseconds ttl);

/// One lease of a batched extension; the strings are copied into the call.
struct extension {
   std::string const* name;
   std::string const* token;
   std::chrono::milliseconds ttl;
};

/// The same for several leases in one call (the watchdog's batches), answered in their order.
std::shared_ptr<script_call const> extend_call(std::string const& prefix,
                                               std::span<extension const> leases);

/// DEL of the lock key and a PUBLISH on the release channel, if the token matches. With
/// `waiters` (the plain lock's), the message names the registered waiter to wake (else it is the
/// token, which wakes every one), for whom the key stays reserved for handoff_reserve instead of
/// deleted, and a waiter's id as the token takes it out of the waiters (or releases the key
/// reserved for it).
/// `wakes`: another process may wait (this one's contenders did): the request leads with a PING,
/// so that the waiter's message is written before the reply (script::publishes). `quiet` (with
/// `waiters`): the releaser tries again by itself (a split vote's loser), so nobody is woken;
/// with `rejoin`, the waiter that sent the try registers where its try took the key, as on the
/// nodes where it lost (for `rejoin->life`), so that every node names the same waiter.
/// `handed` (with `waiters`, not `quiet`): the token of the lease that this one took the key over
/// from (a local handover), which a key may still hold where a failover lost the takeover:
/// released as this lease's own.
std::shared_ptr<script_call const> release_call(std::string const& prefix, std::string const& name,
                                                std::string const& token, bool waiters = true,
                                                bool wakes = false, bool quiet = false,
                                                waiter_entry const* rejoin = nullptr,
                                                std::string const* handed = nullptr);

}  // namespace locksmith::detail

#endif
