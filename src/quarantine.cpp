// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include <locksmith/detail/quarantine.hpp>

#include <algorithm>
#include <charconv>

namespace locksmith::detail {

std::chrono::milliseconds effective_quarantine(config const& cfg) noexcept
{
   if (cfg.restart_quarantine)
      return *cfg.restart_quarantine;
   return cfg.nodes.size() >= 3 ? std::chrono::milliseconds{30'000} : std::chrono::milliseconds{0};
}

std::optional<std::string_view> info_field(std::string_view info, std::string_view name) noexcept
{
   for (std::size_t at = 0; at < info.size();) {
      auto const end = std::min(info.find('\n', at), info.size());
      auto line = info.substr(at, end - at);
      if (!line.empty() && line.back() == '\r')
         line.remove_suffix(1);
      if (line.size() > name.size() && line.starts_with(name) && line[name.size()] == ':')
         return line.substr(name.size() + 1);
      at = end + 1;
   }
   return std::nullopt;
}

std::optional<std::chrono::seconds> parse_uptime(std::string_view info) noexcept
{
   auto const field = info_field(info, "uptime_in_seconds");
   if (!field || field->empty())
      return std::nullopt;
   long long v = 0;
   auto const [p, ec] = std::from_chars(field->data(), field->data() + field->size(), v);
   if (ec != std::errc{} || p != field->data() + field->size() || v < 0)
      return std::nullopt;
   return std::chrono::seconds{v};
}

std::optional<std::string_view> parse_run_id(std::string_view info) noexcept
{
   auto const field = info_field(info, "run_id");
   if (!field || field->empty())
      return std::nullopt;
   return field;
}

bool fleet_contacts::record(std::size_t i, first_contact c)
{
   if (i >= contacts_.size() || contacts_[i] || fresh_)
      return false;
   contacts_[i] = c;
   if (++known_ < contacts_.size())
      return false;
   fresh_ = std::all_of(contacts_.begin(), contacts_.end(),
                        [](auto const& f) { return f->young && !f->marked; });
   return fresh_;
}

}  // namespace locksmith::detail
