// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include <locksmith/detail/quarantine.hpp>

#include <charconv>

namespace locksmith::detail {

std::chrono::milliseconds effective_quarantine(config const& cfg) noexcept
{
   if (cfg.restart_quarantine)
      return *cfg.restart_quarantine;
   return cfg.nodes.size() >= 3 ? std::chrono::milliseconds{30'000} : std::chrono::milliseconds{0};
}

std::optional<std::chrono::seconds> parse_uptime(std::string_view info) noexcept
{
   constexpr std::string_view field = "uptime_in_seconds:";
   for (std::size_t at = 0; at < info.size();) {
      auto const end = std::min(info.find('\n', at), info.size());
      auto line = info.substr(at, end - at);
      if (!line.empty() && line.back() == '\r')
         line.remove_suffix(1);
      if (line.starts_with(field)) {
         line.remove_prefix(field.size());
         long long v = 0;
         auto const [p, ec] = std::from_chars(line.data(), line.data() + line.size(), v);
         if (ec != std::errc{} || p != line.data() + line.size() || v < 0 || line.empty())
            return std::nullopt;
         return std::chrono::seconds{v};
      }
      at = end + 1;
   }
   return std::nullopt;
}

}  // namespace locksmith::detail
