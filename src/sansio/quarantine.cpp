// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "sansio/quarantine.hpp"

#include "sansio/link_health.hpp"

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

std::string make_mark(std::string_view run_id, std::vector<std::string> const& also)
{
   std::string out{run_id};
   for (auto const& r : also)
      if (r != run_id && !r.empty())
         out.append(" ").append(r);
   return out;
}

bool mark_names(std::string_view mark, std::string_view run_id) noexcept
{
   if (run_id.empty())
      return false;
   for (std::size_t at = 0; at < mark.size();) {
      auto const end = std::min(mark.find(' ', at), mark.size());
      if (mark.substr(at, end - at) == run_id)
         return true;
      at = end + 1;
   }
   return false;
}

void fleet_contacts::learn_mark(std::string_view mark)
{
   for (std::size_t at = 0; at < mark.size();) {
      auto const end = std::min(mark.find(' ', at), mark.size());
      auto const run = mark.substr(at, end - at);
      if (!run.empty() && run != in_use_mark && !vouched(run))
         vouched_.emplace_back(run);
      at = end + 1;
   }
}

bool fleet_contacts::vouched(std::string_view run_id) const noexcept
{
   return !run_id.empty() && std::find(vouched_.begin(), vouched_.end(), run_id) != vouched_.end();
}

bool fleet_contacts::record(std::size_t i, first_contact c)
{
   if (i >= contacts_.size() || contacts_[i] || fresh_)
      return false;
   contacts_[i] = c;
   if (++known_ < contacts_.size())
      return false;
   fresh_ = std::all_of(contacts_.begin(), contacts_.end(),
                        [](auto const& f) { return f->young && !f->marked && !f->blind; });
   return fresh_;
}

run_judgement judge_run(contact_replies const& r, std::string_view mark_key,
                        std::chrono::steady_clock::time_point now,
                        std::chrono::milliseconds quarantine)
{
   run_judgement j;
   j.trusted_from = std::chrono::steady_clock::time_point::max();
   if (!r.info) {
      j.unjudged = {"INFO server failed (" + std::string{r.info_error} + ")",
                    is_auth_error(r.info_error)};
      return j;
   }
   auto const uptime = parse_uptime(*r.info);
   if (!uptime) {
      j.unjudged.why = "INFO server gave no uptime_in_seconds";
      return j;
   }
   j.run_id = std::string{parse_run_id(*r.info).value_or("")};
   j.trusted_from = trusted_from(now, *uptime, quarantine);
   j.marked_now = r.mark && mark_names(*r.mark, j.run_id);
   if (j.trusted_from <= now)
      return j;  // up for longer than the quarantine: whatever it forgot has expired
   j.contact.young = true;
   if (!r.mark_error.empty()) {
      j.contact.blind = true;
      j.blind = "GET " + std::string{mark_key} + " failed (" + std::string{r.mark_error} + ")";
      return j;
   }
   // A mark of an earlier run (a restart from a dump) says that the fleet was in use, but not
   // that this run is trusted.
   j.contact.marked = r.mark.has_value();
   return j;
}

}  // namespace locksmith::detail
