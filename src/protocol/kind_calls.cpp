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

// The key that holds a holder of the kind: the holder set of a permit or reader, else the lock key.
std::string holder_key(lease_kind const& kind, std::string const& prefix, std::string const& name)
{
   return kind.what == of::read ? readers_key(prefix, name) : lock_key(prefix, name);
}

std::shared_ptr<script_call const> with_quorum(std::shared_ptr<script_call> call,
                                               std::size_t quorum)
{
   call->quorum = quorum;
   return call;
}

std::string ms(milliseconds d)
{
   return std::to_string(d.count());
}

// The reentrant lock's calls: lock key, fence key and holds set, the hold's token, ttl, fence ttl
// and the owner's token.
std::shared_ptr<script_call const> reentrant_call(script const& code, lease_kind const& kind,
                                                  std::string const& prefix,
                                                  std::string const& name, std::string const& token,
                                                  milliseconds ttl)
{
   return std::make_shared<script_call>(
      code,
      std::vector<std::string>{lock_key(prefix, name), fence_key(prefix, name),
                               holds_key(prefix, name)},
      std::vector<std::string>{token, ms(ttl), ms(ttl + fence_linger), owner_token(kind.owner)});
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
   if (kind.what == of::fair)
      return std::make_shared<script_call>(
         fair_acquire_script(),
         std::vector<std::string>{lock_key(prefix, name), fence_key(prefix, name),
                                  queue_key(prefix, name), queue_deadlines_key(prefix, name)},
         std::vector<std::string>{token, ms(ttl), ms(ttl + fence_linger), ms(fair_entry_ttl)});
   std::vector<std::string> keys{holder_key(kind, prefix, name), fence_key(prefix, name)};
   std::vector<std::string> args{token, ms(ttl), ms(ttl + fence_linger)};
   script const* code = &set_acquire_script();
   if (kind.what == of::permit) {
      args.push_back(std::to_string(kind.permits));
   } else if (kind.what == of::read) {
      // Readers share without bound, but not with a writer, nor while one waits.
      keys.push_back(lock_key(prefix, name));
      keys.push_back(writer_waiting_key(prefix, name));
      args.push_back(std::to_string(std::numeric_limits<std::int32_t>::max()));
   } else {
      keys.push_back(readers_key(prefix, name));
      keys.push_back(writer_waiting_key(prefix, name));
      args.push_back(ms(writer_wait_ttl));
      args.push_back(ms(writer_wait_ttl / 4));
      code = &write_acquire_script();
   }
   return with_quorum(std::make_shared<script_call>(*code, std::move(keys), std::move(args)),
                      kind_quorum(kind, nodes));
}

std::shared_ptr<script_call const> extend_call(lease_kind const& kind, std::string const& prefix,
                                               std::string const& name, std::string const& token,
                                               milliseconds ttl, std::size_t nodes)
{
   if (renewed_in_batches(kind))
      return extend_call(prefix, name, token, ttl);
   if (kind.what == of::reentrant)
      return reentrant_call(reentrant_extend_script(), kind, prefix, name, token, ttl);
   return with_quorum(
      std::make_shared<script_call>(
         set_extend_script(),
         std::vector<std::string>{holder_key(kind, prefix, name), fence_key(prefix, name)},
         std::vector<std::string>{token, ms(ttl), ms(ttl + fence_linger)}),
      kind_quorum(kind, nodes));
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
   if (kind.what == of::fair)
      return std::make_shared<script_call>(
         fair_release_script(),
         std::vector<std::string>{lock_key(prefix, name), queue_key(prefix, name),
                                  queue_deadlines_key(prefix, name)},
         std::vector<std::string>{token, release_channel(prefix, name),
                                  std::string{handoff_prefix}});
   if (kind.what == of::reentrant)
      return std::make_shared<script_call>(
         reentrant_release_script(),
         std::vector<std::string>{lock_key(prefix, name), holds_key(prefix, name)},
         std::vector<std::string>{token, release_channel(prefix, name), owner_token(kind.owner)});
   return std::make_shared<script_call>(
      set_release_script(), std::vector<std::string>{holder_key(kind, prefix, name)},
      std::vector<std::string>{token, release_channel(prefix, name)});
}

std::shared_ptr<script_call const> fair_requeue_call(std::string const& prefix,
                                                     std::string const& name,
                                                     std::string const& token, std::size_t nodes)
{
   return with_quorum(std::make_shared<script_call>(
                         fair_requeue_script(),
                         std::vector<std::string>{lock_key(prefix, name), queue_key(prefix, name),
                                                  queue_deadlines_key(prefix, name)},
                         std::vector<std::string>{token, ms(fair_entry_ttl)}),
                      nodes);
}

}  // namespace locksmith::detail
