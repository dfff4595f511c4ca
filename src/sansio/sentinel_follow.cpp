// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "sansio/sentinel_follow.hpp"

#include <algorithm>

namespace locksmith::detail {
namespace resp3 = boost::redis::resp3;
using std::chrono::milliseconds;

namespace {

// The next word of `s` (split on spaces), removed from it; empty at the end.
std::string_view next_word(std::string_view& s)
{
   auto const start = s.find_first_not_of(' ');
   if (start == std::string_view::npos) {
      s = {};
      return {};
   }
   s.remove_prefix(start);
   auto const end = std::min(s.find(' '), s.size());
   auto const word = s.substr(0, end);
   s.remove_prefix(end);
   return word;
}

bool is_port(std::string_view p)
{
   return !p.empty() && p.size() <= 5 &&
          std::all_of(p.begin(), p.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

std::optional<std::string> switched_master(std::string_view payload, std::string_view master_name)
{
   std::string_view words[5];
   for (auto& w : words)
      w = next_word(payload);
   if (words[0] != master_name || words[3].empty() || !is_port(words[4]) ||
       !next_word(payload).empty())
      return std::nullopt;
   return std::string{words[3]} + ":" + std::string{words[4]};
}

std::optional<std::string> master_address(std::vector<resp3::node> const& reply)
{
   if (reply.size() != 3 || reply[0].depth != 0 || reply[0].aggregate_size != 2)
      return std::nullopt;
   if (reply[0].data_type != resp3::type::array && reply[0].data_type != resp3::type::push)
      return std::nullopt;
   auto const& host = reply[1].value;
   auto const& port = reply[2].value;
   if (reply[1].depth != 1 || reply[2].depth != 1 || host.empty() || !is_port(port))
      return std::nullopt;
   return host + ":" + port;
}

bool master_follow::named(std::string address)
{
   if (address == target_)
      return false;
   target_ = std::move(address);
   tried_ = 0;
   waiting_ = false;
   next_try_ = {};
   return true;
}

master_follow::step master_follow::decide(link node, clock::time_point now)
{
   // Before its first connection the node asks the Sentinels by itself.
   if (target_.empty() || node.connections == 0)
      return {};
   if (waiting_) {
      bool const landed = node.connections != connections_at_ask_;
      if (!landed && now < asked_at_ + s_.patience)
         return {.reconnect = false, .again = s_.poll};
      waiting_ = false;
      if (landed && node.address == target_)
         return {.reconnect = false, .again = std::nullopt, .arrived = true};
   }
   if (node.address == target_ || tried_ >= s_.tries)
      return {};
   if (now < next_try_)
      return {.reconnect = false, .again = std::chrono::ceil<milliseconds>(next_try_ - now)};
   waiting_ = true;
   connections_at_ask_ = node.connections;
   asked_at_ = now;
   next_try_ = now + s_.spacing * (1u << std::min(tried_, 16u));
   ++tried_;
   return {.reconnect = true, .again = s_.poll};
}

}  // namespace locksmith::detail
