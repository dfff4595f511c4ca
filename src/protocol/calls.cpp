// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "protocol/calls.hpp"

#include "sansio/keys.hpp"
#include "sansio/scripts.hpp"
#include "sansio/set_scripts.hpp"

#include <algorithm>

namespace locksmith::detail {
using std::chrono::milliseconds;

namespace {

// The acquire and extend scripts take the same keys and arguments for each lease.
void add_lease(std::vector<std::string>& keys, std::vector<std::string>& args,
               std::string const& prefix, std::string const& name, std::string const& token,
               milliseconds ttl)
{
   keys.push_back(lock_key(prefix, name));
   keys.push_back(fence_key(prefix, name));
   args.push_back(token);
   args.push_back(std::to_string(ttl.count()));
   args.push_back(std::to_string((ttl + fence_linger).count()));
}

}  // namespace

std::shared_ptr<script_call const> acquire_call(std::string const& prefix, std::string const& name,
                                                std::string const& token, milliseconds ttl,
                                                bool quorum, std::string const* takes_over,
                                                waiter_entry const* waiter, bool fenced)
{
   std::vector<std::string> keys, args;
   keys.reserve(3);
   args.reserve(7);
   add_lease(keys, args, prefix, name, token, ttl);
   if (!fenced)
      args.back() = "0";
   if (takes_over || waiter)
      args.push_back(takes_over ? *takes_over : std::string{});
   if (waiter) {
      keys.push_back(waiters_key(prefix, name));
      args.push_back(*waiter->id);
      args.push_back(std::to_string(std::max<long long>(1, waiter->life.count())));
      args.push_back(waiter->registered ? "1" : "0");
   }
   return std::make_shared<script_call>(quorum ? quorum_acquire_script() : acquire_script(),
                                        std::move(keys), std::move(args));
}

std::shared_ptr<script_call const> unfenced_acquire_call(std::string const& prefix,
                                                         std::string const& name,
                                                         std::string const& token, milliseconds ttl)
{
   std::vector<std::string> keys, args;
   keys.reserve(1);
   keys.push_back(lock_key(prefix, name));
   args.reserve(2);
   args.push_back(token);
   args.push_back(std::to_string(ttl.count()));
   return std::make_shared<script_call>(unfenced_acquire_script(), std::move(keys),
                                        std::move(args));
}

std::shared_ptr<script_call const> extend_call(std::string const& prefix,
                                               std::span<extension const> leases)
{
   std::vector<std::string> keys, args;
   keys.reserve(2 * leases.size());
   args.reserve(3 * leases.size());
   for (auto const& l : leases)
      add_lease(keys, args, prefix, *l.name, *l.token, l.ttl);
   return std::make_shared<script_call>(extend_script(), std::move(keys), std::move(args));
}

std::shared_ptr<script_call const> extend_call(std::string const& prefix, std::string const& name,
                                               std::string const& token, milliseconds ttl)
{
   extension const one{&name, &token, ttl};
   return extend_call(prefix, std::span<extension const>{&one, 1});
}

std::shared_ptr<script_call const> release_call(std::string const& prefix, std::string const& name,
                                                std::string const& token, bool waiters)
{
   // Built in place: an initializer list would copy each string once more.
   std::vector<std::string> keys, args;
   keys.reserve(2);
   keys.push_back(lock_key(prefix, name));
   args.reserve(3);
   args.push_back(token);
   args.push_back(release_channel(prefix, name));
   if (waiters) {
      keys.push_back(waiters_key(prefix, name));
      args.emplace_back(handoff_prefix);
   }
   return std::make_shared<script_call>(release_script(), std::move(keys), std::move(args));
}

}  // namespace locksmith::detail
