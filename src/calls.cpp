// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "calls.hpp"

#include <locksmith/detail/keys.hpp>
#include <locksmith/detail/scripts.hpp>

namespace locksmith::detail {
using std::chrono::milliseconds;

namespace {

// The acquire and extend scripts take the same keys and arguments.
std::shared_ptr<script_call const> lease_call(script const& code, std::string const& prefix,
                                              std::string const& name, std::string const& token,
                                              milliseconds ttl)
{
   return std::make_shared<script_call>(
      code, std::vector<std::string>{lock_key(prefix, name), fence_key(prefix, name)},
      std::vector<std::string>{token, std::to_string(ttl.count()),
                               std::to_string((ttl + fence_linger).count())});
}

}  // namespace

std::shared_ptr<script_call const> acquire_call(std::string const& prefix, std::string const& name,
                                                std::string const& token, milliseconds ttl)
{
   return lease_call(acquire_script(), prefix, name, token, ttl);
}

std::shared_ptr<script_call const> extend_call(std::string const& prefix, std::string const& name,
                                               std::string const& token, milliseconds ttl)
{
   return lease_call(extend_script(), prefix, name, token, ttl);
}

std::shared_ptr<script_call const> release_call(std::string const& prefix, std::string const& name,
                                                std::string const& token)
{
   return std::make_shared<script_call>(
      release_script(), std::vector<std::string>{lock_key(prefix, name)},
      std::vector<std::string>{token, release_channel(prefix, name)});
}

}  // namespace locksmith::detail
