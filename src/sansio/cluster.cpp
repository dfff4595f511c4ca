// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "sansio/cluster.hpp"

#include <charconv>

namespace locksmith::detail {
namespace {

std::uint16_t crc16(std::string_view s) noexcept
{
   // CRC16-CCITT (XMODEM): polynomial 0x1021, initial value 0, as Redis Cluster specifies.
   std::uint16_t crc = 0;
   for (unsigned char c : s) {
      crc ^= static_cast<std::uint16_t>(c << 8);
      for (int i = 0; i < 8; ++i)
         crc = (crc & 0x8000) ? static_cast<std::uint16_t>((crc << 1) ^ 0x1021)
                              : static_cast<std::uint16_t>(crc << 1);
   }
   return crc;
}

bool parse_uint(std::string_view s, long long max, long long& out)
{
   if (s.empty() || s.size() > 10)
      return false;
   auto const [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
   return ec == std::errc{} && p == s.data() + s.size() && out >= 0 && out <= max;
}

bool valid_slot(std::string_view s, std::uint16_t& slot)
{
   long long n = 0;
   if (!parse_uint(s, slot_count - 1, n))
      return false;
   slot = static_cast<std::uint16_t>(n);
   return true;
}

bool valid_port(std::string_view s)
{
   long long n = 0;
   return parse_uint(s, 65535, n) && n > 0;
}

// "host:port", split at the last colon (an IPv6 host has colons of its own, and may be bracketed).
std::optional<endpoint> parse_address(std::string_view a)
{
   auto const colon = a.rfind(':');
   if (colon == a.npos || !valid_port(a.substr(colon + 1)))
      return std::nullopt;
   auto host = a.substr(0, colon);
   if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
      host = host.substr(1, host.size() - 2);
   return endpoint{std::string{host}, std::string{a.substr(colon + 1)}};
}

// MOVED and ASK in a row that are followed at once; the pause after TRYAGAIN, and after more
// of them than that.
constexpr unsigned quick_redirections = 5;
constexpr std::chrono::milliseconds redirect_pause{10};

}  // namespace

redirect_plan plan_redirect(bool try_again, unsigned redirections,
                            std::chrono::steady_clock::duration left) noexcept
{
   redirect_plan p;
   if (try_again || redirections >= quick_redirections)
      p.pause = redirect_pause;
   p.give_up = left <= p.pause;
   return p;
}

std::string_view hash_tag(std::string_view key) noexcept
{
   auto const open = key.find('{');
   if (open == key.npos)
      return key;
   auto const close = key.find('}', open + 1);
   if (close == key.npos || close == open + 1)
      return key;
   return key.substr(open + 1, close - open - 1);
}

std::uint16_t hash_slot(std::string_view key) noexcept
{
   return crc16(hash_tag(key)) & (slot_count - 1);
}

bool stopped_in_a_moving_slot(std::string_view error) noexcept
{
   return error.find("Script attempted to access a non local key") != std::string_view::npos;
}

bool unblocked_by_a_demotion(std::string_view error) noexcept
{
   return error.starts_with("UNBLOCKED");
}

std::optional<redirect> parse_redirect(std::string_view error)
{
   redirect r;
   if (error.starts_with("MOVED "))
      error.remove_prefix(6);
   else if (error.starts_with("ASK "))
      error.remove_prefix(4), r.ask = true;
   else
      return std::nullopt;
   auto const space = error.find(' ');
   if (space == error.npos || !valid_slot(error.substr(0, space), r.slot))
      return std::nullopt;
   auto to = parse_address(error.substr(space + 1));
   if (!to)
      return std::nullopt;
   r.to = std::move(*to);
   return r;
}

namespace {

using resp_node = boost::redis::resp3::node;

bool is_aggregate(resp_node const& n) noexcept
{
   return boost::redis::resp3::is_aggregate(n.data_type);
}

// One entry of the reply, nodes [begin, end) at depth 1 and more: its first, last and master.
bool parse_entry(std::vector<resp_node> const& r, std::size_t begin, std::size_t end,
                 slot_range& out)
{
   // first, last, then the master's array and its host and port.
   if (end - begin < 6 || !is_aggregate(r[begin]) || r[begin + 1].depth != 2 ||
       r[begin + 2].depth != 2 || !is_aggregate(r[begin + 3]) || r[begin + 3].depth != 2 ||
       r[begin + 4].depth != 3 || r[begin + 5].depth != 3)
      return false;
   if (!valid_slot(r[begin + 1].value, out.first) || !valid_slot(r[begin + 2].value, out.last) ||
       out.first > out.last || !valid_port(r[begin + 5].value))
      return false;
   auto const& host = r[begin + 4].value;
   out.master = {host == "?" ? std::string{} : host, r[begin + 5].value};
   return true;
}

}  // namespace

std::optional<std::vector<slot_range>> parse_cluster_slots(std::vector<resp_node> const& reply)
{
   if (reply.empty() || !is_aggregate(reply.front()) || reply.front().depth != 0)
      return std::nullopt;
   std::vector<slot_range> out;
   std::size_t i = 1;
   while (i < reply.size()) {
      if (reply[i].depth != 1)
         return std::nullopt;
      auto end = i + 1;
      while (end < reply.size() && reply[end].depth > 1)
         ++end;
      slot_range s;
      if (!parse_entry(reply, i, end, s))
         return std::nullopt;
      out.push_back(std::move(s));
      i = end;
   }
   if (out.size() != reply.front().aggregate_size)
      return std::nullopt;
   return out;
}

std::vector<bool> moved_slots(std::vector<slot_range> const& before,
                              std::vector<slot_range> const& after)
{
   std::vector<endpoint const*> was(slot_count, nullptr);
   for (auto const& r : before)
      for (std::size_t s = r.first; s <= r.last && s < slot_count; ++s)
         was[s] = &r.master;
   std::vector<bool> moved(slot_count, false);
   for (auto const& r : after)
      for (std::size_t s = r.first; s <= r.last && s < slot_count; ++s)
         moved[s] = was[s] && *was[s] != r.master;
   return moved;
}

}  // namespace locksmith::detail
