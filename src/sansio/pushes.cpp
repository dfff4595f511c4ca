// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "sansio/pushes.hpp"

#include <optional>
#include <string_view>

namespace locksmith::detail {
namespace {

using boost::redis::resp3::is_aggregate;
using push_node = boost::redis::resp3::node_view;
using push_nodes = std::span<push_node const>;

// Sharded pub/sub's words are the plain ones with an `s` before them.
bool is_sharded(std::string_view word)
{
   return word == "smessage" || word == "ssubscribe" || word == "sunsubscribe";
}

std::optional<push_event::kind> kind_of(std::string_view word)
{
   if (is_sharded(word))
      word.remove_prefix(1);
   if (word == "message")
      return push_event::kind::message;
   if (word == "subscribe")
      return push_event::kind::subscribed;
   if (word == "unsubscribe")
      return push_event::kind::unsubscribed;
   return std::nullopt;
}

// The push made of nodes[first, last), the first of which is at depth 0, if it is one we act on.
std::optional<push_event> parse_one(push_nodes nodes, std::size_t first, std::size_t last,
                                    std::string_view marker)
{
   auto const& head = nodes[first];
   if (!is_aggregate(head.data_type) || head.aggregate_size < 2 || last - first < 3)
      return std::nullopt;
   auto const& word = nodes[first + 1];
   auto const& channel = nodes[first + 2];
   // Both must be plain strings right under the head; a nested aggregate is not ours.
   if (word.depth != 1 || channel.depth != 1 || is_aggregate(word.data_type) ||
       is_aggregate(channel.data_type))
      return std::nullopt;
   auto const k = kind_of(word.value);
   if (!k)
      return std::nullopt;
   if (channel.value == marker) {
      // Only its confirmation means something; a message published to it is noise.
      if (*k != push_event::kind::subscribed)
         return std::nullopt;
      return push_event{push_event::kind::connected, {}, {}, false};
   }
   push_event e{*k, std::string{channel.value}, {}, is_sharded(word.value)};
   if (*k == push_event::kind::message && last - first >= 4 && nodes[first + 3].depth == 1 &&
       !is_aggregate(nodes[first + 3].data_type))
      e.payload = std::string{nodes[first + 3].value};
   return e;
}

}  // namespace

std::vector<push_event> parse_pushes(push_nodes nodes, std::string_view marker)
{
   std::vector<push_event> out;
   std::size_t first = 0;
   while (first < nodes.size()) {
      auto last = first + 1;
      while (last < nodes.size() && nodes[last].depth > 0)
         ++last;
      if (nodes[first].depth == 0) {
         auto const t = nodes[first].data_type;
         auto p = t == boost::redis::resp3::type::simple_error ||
                        t == boost::redis::resp3::type::blob_error
                     ? refusal_push(nodes[first].value, false)
                     : parse_one(nodes, first, last, marker);
         if (p)
            out.push_back(std::move(*p));
      }
      first = last;
   }
   return out;
}

std::optional<push_event> refusal_push(std::string_view error, bool sharded)
{
   if (error.starts_with("ERR wrong number of arguments"))
      return std::nullopt;
   return push_event{push_event::kind::refused, {}, std::string{error}, sharded};
}

}  // namespace locksmith::detail
