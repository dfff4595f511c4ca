// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include <locksmith/detail/url.hpp>
#include <locksmith/detail/validate.hpp>

#include <type_traits>

namespace locksmith::detail {

error_code validate_name(std::string_view name) noexcept
{
   if (name.empty() || name.size() > max_key_size)
      return error::invalid_argument;
   return {};
}

error_code validate_ttl(std::chrono::milliseconds ttl) noexcept
{
   if (ttl < min_ttl || ttl > max_ttl)
      return error::invalid_argument;
   return {};
}

error_code validate_options(std::string_view name, lock_options const& opts) noexcept
{
   if (auto ec = validate_name(name))
      return ec;
   if (auto ec = validate_ttl(opts.ttl))
      return ec;
   if (opts.wait.count() < 0)
      return error::invalid_argument;
   if (opts.drift && (opts.drift->count() < 0 || *opts.drift >= opts.ttl))
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
   if (cfg.node_timeout.count() <= 0 || cfg.reconnect_wait.count() < 0 ||
       cfg.health_check_interval.count() < 0)
      return error::invalid_argument;
   return {};
}

}  // namespace locksmith::detail
