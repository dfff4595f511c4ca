// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The script calls of each kind of lease (detail/lease_kind.hpp): the lock's are those of
// calls.hpp; a permit and a reader are members of a holder set (set_scripts.hpp); a writer is
// taken by its own script and renewed and released as the lock is; the fair lock is taken and
// released by its queue's scripts and renewed as the lock is.
#ifndef LOCKSMITH_SRC_KIND_CALLS_HPP
#define LOCKSMITH_SRC_KIND_CALLS_HPP

#include "protocol/calls.hpp"
#include "transport/node.hpp"

#include <locksmith/detail/lease_kind.hpp>

#include <chrono>
#include <memory>
#include <string>

namespace locksmith::detail {

/// How long the writer-waiting key lives: how long a writer that died while it waited keeps
/// new readers out. A waiting writer tries again (and so sets it again) at least every
/// writer_wait_ttl / 4.
inline constexpr std::chrono::milliseconds writer_wait_ttl{1000};

/// How long a fair lock's waiter keeps its place in the queue without a word: how long a waiter
/// that died at the head of the queue holds the others up, at most. A waiting fair lock tries
/// again (and so moves its deadline) at least every fair_entry_ttl / 4.
inline constexpr std::chrono::milliseconds fair_entry_ttl{2000};

/// The lock key's value for a reentrant lock's owner: 32 hex characters of SHA-1 over the owner
/// id, so that every hold of the owner, in any process, finds the same value.
std::string owner_token(std::string const& owner);

/// The yes votes an acquire or extend of the kind needs among `nodes`: the majority, or for a
/// permit the permit quorum (sansio/quorum.hpp).
std::size_t kind_quorum(lease_kind const& kind, std::size_t nodes);

/// Whether the kind's extend script is the lock's (extend_script(), which renews any number of
/// leases in one call), so that the watchdog renews its leases in batches: the lock, the fair
/// lock and the writer. The others have an extend script of their own, for one lease at a time.
bool renewed_in_batches(lease_kind const& kind) noexcept;

/// `takes_over` (the token of a lease handed over in this process, calls.hpp) and `waiter` (a
/// waiter's registration) are for the lock only: the other kinds are never handed over, and the
/// fair lock keeps a queue of its own.
std::shared_ptr<script_call const> acquire_call(lease_kind const& kind, std::string const& prefix,
                                                std::string const& name, std::string const& token,
                                                std::chrono::milliseconds ttl, std::size_t nodes,
                                                std::string const* takes_over = nullptr,
                                                waiter_entry const* waiter = nullptr,
                                                bool fenced = true);

std::shared_ptr<script_call const> extend_call(lease_kind const& kind, std::string const& prefix,
                                               std::string const& name, std::string const& token,
                                               std::chrono::milliseconds ttl, std::size_t nodes);

/// `wakes`, `quiet`, `rejoin` and `handed`: as the plain lock's release_call (calls.hpp); the
/// other kinds' go without.
std::shared_ptr<script_call const> release_call(lease_kind const& kind, std::string const& prefix,
                                                std::string const& name, std::string const& token,
                                                bool wakes = false, bool quiet = false,
                                                waiter_entry const* rejoin = nullptr,
                                                std::string const* handed = nullptr);

/// A fair waiter's step back after a split vote (fair_requeue_script): it gives the key back
/// where it holds it and keeps its place in every queue. Won only if all `nodes` (those it is
/// sent to) did it.
std::shared_ptr<script_call const> fair_requeue_call(std::string const& prefix,
                                                     std::string const& name,
                                                     std::string const& token, std::size_t nodes);

}  // namespace locksmith::detail

#endif
