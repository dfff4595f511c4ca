// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The scripts of the lease kinds other than the plain lock: those that several holders share (a
// semaphore's permits and a read-write lock's readers, each holder a member of a sorted set,
// token → expiry in ms on the server's clock), the read-write lock's writer, the fair lock's
// queue and the reentrant lock's holds. Their replies have the shapes of the lock's scripts
// (scripts.hpp), and are parsed by the same functions.
#ifndef LOCKSMITH_DETAIL_SET_SCRIPTS_HPP
#define LOCKSMITH_DETAIL_SET_SCRIPTS_HPP

#include "sansio/scripts.hpp"

#include <string_view>
#include <vector>

namespace locksmith::detail {

/// semaphore_acquire.lua, semaphore_extend.lua, semaphore_release.lua: a semaphore's permits,
/// and a read-write lock's readers (whose acquire passes the writer's keys, which bar entry).
script const& set_acquire_script();
script const& set_extend_script();
script const& set_release_script();

/// write_acquire.lua: a read-write lock's writer, which waits for the readers to leave and stops
/// new ones meanwhile. Renewed and released as a lock.
script const& write_acquire_script();

/// fair_acquire.lua, fair_release.lua: the fair lock, whose waiters queue in Redis; a release
/// hands the key to the queue's head and wakes that waiter alone (handoff_prefix + its token).
script const& fair_acquire_script();
script const& fair_release_script();

/// fair_requeue.lua: the fair lock's step back, for a waiter that took the key on some nodes but
/// not on a quorum (or too late): it must not keep the key while it waits, nor lose its place.
script const& fair_requeue_script();

/// What a fair release publishes before the token it hands the key to.
inline constexpr std::string_view handoff_prefix = "to:";

/// reentrant_acquire.lua, reentrant_extend.lua, reentrant_release.lua: the reentrant lock's
/// holds, each a member of a set beside the lock key, which holds the owner's token.
script const& reentrant_acquire_script();
script const& reentrant_extend_script();
script const& reentrant_release_script();

/// The scripts of every lease kind: the lock's (all_scripts) and those above, as a node loads
/// them at its start.
std::vector<script const*> every_script();

/// The twin of one of every_script()'s scripts for a Redis Cluster: the same script, made by the
/// build with SPUBLISH for PUBLISH (sharded pub/sub, Redis 7: a release reaches the subscribers
/// at the master of its channel's slot only), with its own text and SHA-1, the same name, role
/// and shape; `s` itself when it publishes nothing.
script const& sharded_twin(script const& s);

/// The twins that differ from their script (those that publish), as a cluster's masters load
/// them at their start besides every_script().
std::vector<script const*> every_sharded_script();

}  // namespace locksmith::detail

#endif
