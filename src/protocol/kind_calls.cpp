// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "protocol/kind_calls.hpp"

#include "protocol/calls.hpp"

#include "sansio/keys.hpp"
#include "sansio/quorum.hpp"
#include "sansio/set_scripts.hpp"

#include <limits>

namespace locksmith::detail {
using std::chrono::milliseconds;
using of = lease_kind::of;

namespace {

using builder = script_call::builder;

// The suffix of the key that holds a holder of the kind: the holder set of a reader, else none
// (the lock key; a semaphore's permits share it).
std::string_view holder_suffix(lease_kind const& kind)
{
   return kind.what == of::read ? key_suffix::readers : std::string_view{};
}

std::shared_ptr<script_call const> with_quorum(std::shared_ptr<script_call> call,
                                               std::size_t quorum)
{
   call->quorum = quorum;
   return call;
}

// The reentrant lock's calls: lock key, fence key and holds set, the hold's token, ttl, fence ttl
// and the owner's token.
std::shared_ptr<script_call const> reentrant_call(script const& code, lease_kind const& kind,
                                                  std::string const& prefix,
                                                  std::string const& name, std::string const& token,
                                                  milliseconds ttl)
{
   builder b{code};
   b.key(prefix, name).key(prefix, name, key_suffix::fence).key(prefix, name, key_suffix::holds);
   b.arg(token).arg(ttl.count()).arg((ttl + fence_linger).count()).arg(owner_token(kind.owner));
   return b.done();
}

}  // namespace

std::string owner_token(std::string const& owner)
{
   return sha1_hex("locksmith owner\n" + owner).substr(0, 32);
}

bool renewed_in_batches(lease_kind const& kind) noexcept
{
   return kind.what == of::lock || kind.what == of::fair || kind.what == of::write;
}

std::size_t kind_quorum(lease_kind const& kind, std::size_t nodes)
{
   return kind.what == of::permit ? permit_quorum(nodes, kind.permits) : quorum_of(nodes);
}

std::shared_ptr<script_call const> acquire_call(lease_kind const& kind, std::string const& prefix,
                                                std::string const& name, std::string const& token,
                                                milliseconds ttl, std::size_t nodes,
                                                std::string const* takes_over,
                                                waiter_entry const* waiter, bool fenced)
{
   if (kind.what == of::lock)
      return acquire_call(prefix, name, token, ttl, nodes > 1, takes_over, waiter, fenced);
   if (kind.what == of::reentrant)
      return reentrant_call(reentrant_acquire_script(), kind, prefix, name, token, ttl);
   if (kind.what == of::fair) {
      builder b{fair_acquire_script()};
      b.key(prefix, name)
         .key(prefix, name, key_suffix::fence)
         .key(prefix, name, key_suffix::queue)
         .key(prefix, name, key_suffix::queue_deadlines);
      b.arg(token).arg(ttl.count()).arg((ttl + fence_linger).count()).arg(fair_entry_ttl.count());
      return b.done();
   }
   bool const write = kind.what == of::write;
   builder b{write ? write_acquire_script() : set_acquire_script()};
   b.key(prefix, name, holder_suffix(kind)).key(prefix, name, key_suffix::fence);
   // Readers share without bound, but not with a writer, nor while one waits.
   if (kind.what == of::read)
      b.key(prefix, name).key(prefix, name, key_suffix::writer_waiting);
   else if (write)
      b.key(prefix, name, key_suffix::readers).key(prefix, name, key_suffix::writer_waiting);
   b.arg(token).arg(ttl.count()).arg((ttl + fence_linger).count());
   if (kind.what == of::permit)
      b.arg(static_cast<long long>(kind.permits));
   else if (kind.what == of::read)
      b.arg(std::numeric_limits<std::int32_t>::max());
   else
      b.arg(writer_wait_ttl.count()).arg((writer_wait_ttl / 4).count());
   return with_quorum(b.done(), kind_quorum(kind, nodes));
}

std::shared_ptr<script_call const> extend_call(lease_kind const& kind, std::string const& prefix,
                                               std::string const& name, std::string const& token,
                                               milliseconds ttl, std::size_t nodes)
{
   if (renewed_in_batches(kind))
      return extend_call(prefix, name, token, ttl);
   if (kind.what == of::reentrant)
      return reentrant_call(reentrant_extend_script(), kind, prefix, name, token, ttl);
   builder b{set_extend_script()};
   b.key(prefix, name, holder_suffix(kind)).key(prefix, name, key_suffix::fence);
   b.arg(token).arg(ttl.count()).arg((ttl + fence_linger).count());
   return with_quorum(b.done(), kind_quorum(kind, nodes));
}

std::shared_ptr<script_call const> release_call(lease_kind const& kind, std::string const& prefix,
                                                std::string const& name, std::string const& token,
                                                bool wakes, bool quiet, waiter_entry const* rejoin,
                                                std::string const* handed)
{
   if (kind.what == of::lock || kind.what == of::write) {
      bool const lock = kind.what == of::lock;
      return release_call(prefix, name, token, lock, wakes && lock, quiet && lock, rejoin,
                          lock ? handed : nullptr);
   }
   if (kind.what == of::fair) {
      builder b{fair_release_script()};
      b.key(prefix, name)
         .key(prefix, name, key_suffix::queue)
         .key(prefix, name, key_suffix::queue_deadlines);
      b.arg(token).arg_of_name(prefix, name, key_suffix::released).arg(handoff_prefix);
      return b.done();
   }
   if (kind.what == of::reentrant) {
      builder b{reentrant_release_script()};
      b.key(prefix, name).key(prefix, name, key_suffix::holds);
      b.arg(token).arg_of_name(prefix, name, key_suffix::released).arg(owner_token(kind.owner));
      return b.done();
   }
   builder b{set_release_script()};
   b.key(prefix, name, holder_suffix(kind));
   b.arg(token).arg_of_name(prefix, name, key_suffix::released);
   return b.done();
}

std::shared_ptr<script_call const> fair_requeue_call(std::string const& prefix,
                                                     std::string const& name,
                                                     std::string const& token, std::size_t nodes)
{
   builder b{fair_requeue_script()};
   b.key(prefix, name)
      .key(prefix, name, key_suffix::queue)
      .key(prefix, name, key_suffix::queue_deadlines);
   b.arg(token).arg(fair_entry_ttl.count());
   return with_quorum(b.done(), nodes);
}

}  // namespace locksmith::detail
