// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "protocol/calls.hpp"

#include "sansio/keys.hpp"
#include "sansio/scripts.hpp"
#include "sansio/set_scripts.hpp"

#include <algorithm>

namespace locksmith::detail {
using std::chrono::milliseconds;

namespace {

using builder = script_call::builder;

// The acquire and extend scripts take the same keys and arguments for each lease, the keys of
// every lease before the arguments of any (as a request has them); `fence_ttl` is the fence key's
// (acquire_call says how it is sent).
void add_lease_keys(builder& b, std::string const& prefix, std::string const& name)
{
   b.key(prefix, name).key(prefix, name, key_suffix::fence);
}

void add_lease_args(builder& b, std::string const& token, milliseconds ttl, long long fence_ttl)
{
   b.arg(token).arg(ttl.count()).arg(fence_ttl);
}

}  // namespace

std::shared_ptr<script_call const> acquire_call(std::string const& prefix, std::string const& name,
                                                std::string const& token, milliseconds ttl,
                                                bool quorum, std::string const* takes_over,
                                                waiter_entry const* waiter, bool fenced)
{
   // Unfenced, 0; by the servers' clocks (a quorum), negative (acquire.lua).
   auto const linger = (ttl + fence_linger).count();
   builder b{acquire_script()};
   add_lease_keys(b, prefix, name);
   if (waiter)
      b.key(prefix, name, key_suffix::waiters);
   add_lease_args(b, token, ttl, !fenced ? 0 : quorum ? -linger : linger);
   if (takes_over || waiter)
      b.arg(takes_over ? std::string_view{*takes_over} : std::string_view{});
   if (waiter) {
      b.arg(*waiter->id)
         .arg(std::max<long long>(1, waiter->life.count()))
         .arg(waiter->registered ? "1" : "0");
   }
   return b.done();
}

std::shared_ptr<script_call const> unfenced_acquire_call(std::string const& prefix,
                                                         std::string const& name,
                                                         std::string const& token, milliseconds ttl)
{
   builder b{unfenced_acquire_script()};
   b.key(prefix, name).arg(token).arg(ttl.count());
   return b.done();
}

std::shared_ptr<script_call const> extend_call(std::string const& prefix,
                                               std::span<extension const> leases)
{
   builder b{extend_script()};
   for (auto const& e : leases)
      add_lease_keys(b, prefix, *e.name);
   for (auto const& e : leases)
      add_lease_args(b, *e.token, e.ttl, (e.ttl + fence_linger).count());
   return b.done();
}

std::shared_ptr<script_call const> extend_call(std::string const& prefix, std::string const& name,
                                               std::string const& token, milliseconds ttl)
{
   extension const one{&name, &token, ttl};
   return extend_call(prefix, std::span<extension const>{&one, 1});
}

std::shared_ptr<script_call const> release_call(std::string const& prefix, std::string const& name,
                                                std::string const& token, bool waiters, bool wakes,
                                                bool quiet, waiter_entry const* rejoin,
                                                std::string const* handed)
{
   builder b{release_script()};
   b.key(prefix, name);
   if (waiters)
      b.key(prefix, name, key_suffix::waiters);
   b.arg(token).arg_of_name(prefix, name, key_suffix::released);
   if (waiters) {
      b.arg(handoff_prefix).arg(handoff_reserve.count());
      if (quiet) {
         b.arg("quiet");
         if (rejoin)
            b.arg(*rejoin->id).arg(std::max<long long>(1, rejoin->life.count()));
      } else if (handed) {
         b.arg("handed").arg(*handed);
      }
   }
   return b.done(wakes && !quiet);
}

}  // namespace locksmith::detail
