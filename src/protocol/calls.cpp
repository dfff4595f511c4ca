// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "protocol/calls.hpp"

#include "sansio/keys.hpp"
#include "sansio/scripts.hpp"
#include "sansio/set_scripts.hpp"

#include <algorithm>

namespace locksmith::detail {
using std::chrono::milliseconds;

namespace {

// A call's keys and arguments, built in place (an initializer list would copy each string once
// more) in vectors with room for `nkeys` and `nargs` of them.
struct call_lists {
   std::vector<std::string> keys, args;

   call_lists(std::size_t nkeys, std::size_t nargs)
   {
      keys.reserve(nkeys);
      args.reserve(nargs);
   }

   std::shared_ptr<script_call const> call(script const& code, bool leads = false) &&
   {
      return std::make_shared<script_call>(code, std::move(keys), std::move(args), leads);
   }
};

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
   call_lists l{3, 7};
   add_lease(l.keys, l.args, prefix, name, token, ttl);
   if (!fenced)
      l.args.back() = "0";
   else if (quorum)
      l.args.back().insert(0, 1, '-');  // the clock's fence (acquire.lua)
   if (takes_over || waiter)
      l.args.push_back(takes_over ? *takes_over : std::string{});
   if (waiter) {
      l.keys.push_back(waiters_key(prefix, name));
      l.args.push_back(*waiter->id);
      l.args.push_back(std::to_string(std::max<long long>(1, waiter->life.count())));
      l.args.push_back(waiter->registered ? "1" : "0");
   }
   return std::move(l).call(acquire_script());
}

std::shared_ptr<script_call const> unfenced_acquire_call(std::string const& prefix,
                                                         std::string const& name,
                                                         std::string const& token, milliseconds ttl)
{
   call_lists l{1, 2};
   l.keys.push_back(lock_key(prefix, name));
   l.args.push_back(token);
   l.args.push_back(std::to_string(ttl.count()));
   return std::move(l).call(unfenced_acquire_script());
}

std::shared_ptr<script_call const> extend_call(std::string const& prefix,
                                               std::span<extension const> leases)
{
   call_lists l{2 * leases.size(), 3 * leases.size()};
   for (auto const& e : leases)
      add_lease(l.keys, l.args, prefix, *e.name, *e.token, e.ttl);
   return std::move(l).call(extend_script());
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
   call_lists l{2, 7};
   l.keys.push_back(lock_key(prefix, name));
   l.args.push_back(token);
   l.args.push_back(release_channel(prefix, name));
   if (waiters) {
      l.keys.push_back(waiters_key(prefix, name));
      l.args.emplace_back(handoff_prefix);
      l.args.push_back(std::to_string(handoff_reserve.count()));
      if (quiet) {
         l.args.emplace_back("quiet");
         if (rejoin) {
            l.args.push_back(*rejoin->id);
            l.args.push_back(std::to_string(std::max<long long>(1, rejoin->life.count())));
         }
      } else if (handed) {
         l.args.emplace_back("handed");
         l.args.push_back(*handed);
      }
   }
   return std::move(l).call(release_script(), wakes && !quiet);
}

}  // namespace locksmith::detail
