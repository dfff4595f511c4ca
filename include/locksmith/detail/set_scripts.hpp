// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The scripts of the lease kinds other than the plain lock: those that several holders share (a
// semaphore's permits and a read-write lock's readers, each holder a member of a sorted set,
// token → expiry in ms on the server's clock), the read-write lock's writer, the fair lock's
// queue and the reentrant lock's holds. Their replies have the shapes of the lock's scripts
// (scripts.hpp), and are parsed by the same functions.
#ifndef LOCKSMITH_DETAIL_SET_SCRIPTS_HPP
#define LOCKSMITH_DETAIL_SET_SCRIPTS_HPP

#include <locksmith/detail/scripts.hpp>

#include <string_view>
#include <vector>

namespace locksmith::detail {

/// KEYS: holder set, fence key, then keys that bar entry while they exist (the read-write lock's
/// writer and writer-waiting marker). ARGV: token, ttl ms, fence key ttl ms, permits.
/// Drops the members whose expiry has passed (a crashed holder's permit comes back so), then
/// adds the token with expiry now + ttl if fewer than `permits` remain, and mints a fencing
/// token as the acquire script does: `{1, fence}`. Else `{0, PTTL}`: of the first barring key
/// that exists, or the time until the first member expires.
script const& set_acquire_script();

/// KEYS: holder set, fence key. ARGV: token, ttl ms, fence key ttl ms.
/// Moves the token's expiry to now + ttl if it is a member that has not expired: 1; else -1
/// (an expired member is removed).
script const& set_extend_script();

/// KEYS: holder set. ARGV: token, release channel.
/// Removes the token and publishes the release (the token): 1; -1 when it was no member or
/// had expired.
script const& set_release_script();

/// KEYS: lock key, fence key, readers set, writer-waiting key. ARGV: token, ttl ms, fence key
/// ttl ms, writer-waiting ttl ms, longest pause ms.
/// Takes the lock key as the acquire script does if no unexpired reader remains, and clears the
/// writer-waiting key: `{1, fence}`. Else sets the writer-waiting key for its ttl, which stops
/// new readers, and answers `{0, t}`: t is the time until the holder's key or the first reader
/// expires, at most the longest pause, so that a waiting writer tries again (and keeps the key
/// set) before it expires.
script const& write_acquire_script();

/// The fair lock's scripts. KEYS: lock key, fence key, queue, queue deadlines (release: lock
/// key, queue, queue deadlines). ARGV: token, ttl ms, fence key ttl ms, entry ttl ms (release:
/// token, release channel, handoff_prefix).
/// Both first drop the waiters whose deadline has passed. Acquire: the key is ours when it holds
/// our token (the release handed it to us) or when it is free and the queue is empty or starts
/// with us: sets it for the ttl, leaves the queue, mints a fence: `{1, fence}`. Else joins the
/// queue at its end, or stays in its place, with the deadline now + entry ttl (both queue keys
/// live that long), and answers `{0, t}`: the holder's PTTL, at most a quarter of the entry ttl,
/// so that the waiter tries again, and so keeps its place, in time.
/// Release: leaves the queue (a waiter that gives up: -1); a holder (1) then hands the key to
/// the queue's head, for as long as its entry lives, and publishes handoff_prefix + its token,
/// which wakes that waiter only; with nobody waiting, deletes the key and publishes the token.
/// A free key is handed to the head in the same way (the head's own try would take it).
script const& fair_acquire_script();
script const& fair_release_script();

/// The fair lock's step back, for a waiter that took the key on some nodes but not on a quorum
/// (or too late): it must not keep the key while it waits, nor lose its place. Keys: lock,
/// queue, deadlines; args: token, entry ttl (ms). Where the token holds the key (it was the
/// head of the queue there), deletes the key and puts the token back at the head; elsewhere
/// queues it at the end if it is not queued; its deadline becomes now + entry ttl. Answers 1.
script const& fair_requeue_script();

/// What a fair release publishes before the token it hands the key to.
inline constexpr std::string_view handoff_prefix = "to:";

/// The reentrant lock's scripts. KEYS: lock key, fence key, holds set (release: lock key, holds
/// set). ARGV: hold token, ttl ms, fence key ttl ms, owner token (release: hold token, release
/// channel, owner token).
/// Acquire: if the lock key is free or holds the owner's token, sets it to the owner's token,
/// adds the hold with expiry now + ttl (dropping expired holds first), keeps both keys as long as
/// the longest hold, and mints a fence: `{1, fence}`; else `{0, PTTL}`.
/// Extend: moves the hold's expiry to now + ttl if the key is the owner's and the hold has not
/// expired: 1; else -1. Release: removes the hold (1, or -1 when it was gone); the last hold to
/// go deletes both keys and publishes the release.
script const& reentrant_acquire_script();
script const& reentrant_extend_script();
script const& reentrant_release_script();

/// The scripts of every lease kind: the lock's (all_scripts) and those above, as a node loads
/// them at its start.
std::vector<script const*> every_script();

/// The twin of one of every_script()'s scripts for a Redis Cluster: the same script with its
/// text made sharded_text (SPUBLISH), its own SHA-1, name, role and shape; `s` itself when it
/// publishes nothing. Built once, for all scripts at the first call.
script const& sharded_twin(script const& s);

/// The twins that differ from their script (those that publish), as a cluster's masters load
/// them at their start besides every_script().
std::vector<script const*> every_sharded_script();

}  // namespace locksmith::detail

#endif
