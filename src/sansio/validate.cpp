// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "sansio/url.hpp"
#include "sansio/validate.hpp"
#include "sansio/validity.hpp"

#include <algorithm>
#include <type_traits>

namespace locksmith::detail {

error_code validate_name(std::string_view name) noexcept
{
   // A leading '}' would end the {name} hash tag at once, and split the lock's keys over
   // Cluster slots.
   if (name.empty() || name.size() > max_key_size || name.front() == '}')
      return error::invalid_argument;
   return {};
}

error_code validate_owner(std::string_view owner) noexcept
{
   auto const control = [](unsigned char c) { return c < 0x20 || c == 0x7f; };
   if (owner.size() > max_owner_size || std::any_of(owner.begin(), owner.end(), control))
      return error::invalid_argument;
   return {};
}

error_code validate_ttl(std::chrono::milliseconds ttl) noexcept
{
   if (ttl < min_ttl || ttl > max_ttl)
      return error::invalid_argument;
   return {};
}

error_code validate_drift(std::chrono::milliseconds ttl,
                          std::optional<std::chrono::milliseconds> drift) noexcept
{
   // With the default drift, a TTL of 2 ms or less would leave no validity at all.
   auto const d = drift.value_or(default_drift(ttl));
   if (d.count() < 0 || d >= ttl)
      return error::invalid_argument;
   return {};
}

std::chrono::milliseconds renewal_room(std::chrono::milliseconds ttl,
                                       std::optional<std::chrono::milliseconds> drift,
                                       std::chrono::milliseconds node_timeout) noexcept
{
   // The watchdog's schedule, from the start of the lease: valid_until = ttl - drift, the loss at
   // valid_until - node_timeout - loss_margin, the first renewal at ttl / 3 (whole ms, as
   // watch() computes it), and no renewal starts later than one node timeout before the loss.
   return ttl - ttl / 3 - drift.value_or(default_drift(ttl)) - 2 * node_timeout;
}

error_code validate_options(std::string_view name, lock_options const& opts,
                            std::chrono::milliseconds node_timeout) noexcept
{
   if (auto ec = validate_name(name))
      return ec;
   if (auto ec = validate_ttl(opts.ttl))
      return ec;
   if (!opts.owner.fits())
      return error::invalid_argument;
   if (auto ec = validate_owner(opts.owner.view()))
      return ec;
   // An empty max_hold is no cap; a given one that is not positive would end the lease at once.
   if (opts.wait.count() < 0 || (opts.max_hold && opts.max_hold->count() <= 0) ||
       opts.loss_margin.count() < 0 || opts.loss_margin >= opts.ttl)
      return error::invalid_argument;
   if (auto ec = validate_drift(opts.ttl, opts.drift))
      return ec;
   // Strictly below: a renewal due at the very last moment it may start would find, woken a
   // little late by its timer, that it is too late, and the lease would be lost.
   if (opts.renew && opts.loss_margin >= renewal_room(opts.ttl, opts.drift, node_timeout))
      return error::invalid_argument;
   if (auto const* s = std::get_if<wait_strategy::spin>(&opts.strategy))
      if (s->interval.count() <= 0 || s->jitter.count() < 0)
         return error::invalid_argument;
   return {};
}

error_code validate_config(config const& cfg)
{
   if (cfg.nodes.empty())
      return error::invalid_argument;
   for (auto const& url : cfg.nodes)
      if (!parse_url(url))
         return error::invalid_argument;
   if (cfg.prefix.find_first_of("{}") != std::string::npos)
      return error::invalid_argument;
   if (cfg.node_timeout.count() <= 0 || cfg.node_timeout > std::chrono::hours{1} ||
       cfg.reconnect_wait.count() < 0 || cfg.health_check_interval.count() < 0 ||
       cfg.subscription_linger.count() < 0 || cfg.close_timeout.count() < 0 ||
       (cfg.restart_quarantine && cfg.restart_quarantine->count() < 0))
      return error::invalid_argument;
   // WAIT 0 waits forever, and a WAIT as long as the call's timeout would read as a timeout.
   if (cfg.replica_timeout &&
       (cfg.replica_timeout->count() <= 0 || *cfg.replica_timeout >= cfg.node_timeout))
      return error::invalid_argument;
   // A certificate without its key, or a key without its certificate, cannot be presented.
   if (cfg.tls.cert_file.empty() != cfg.tls.key_file.empty())
      return error::invalid_argument;
   return {};
}

}  // namespace locksmith::detail
