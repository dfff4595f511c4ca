// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#ifndef LOCKSMITH_DETAIL_PUSHES_HPP
#define LOCKSMITH_DETAIL_PUSHES_HPP

#include <boost/redis/resp3/node.hpp>

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace locksmith::detail {

/// A server push on a subscriber connection that the release listener acts on.
struct push_event {
   enum class kind {
      message,       // a PUBLISH (SPUBLISH) on a channel we are subscribed to
      subscribed,    // the server confirmed a SUBSCRIBE (SSUBSCRIBE) of the channel
      unsubscribed,  // the server confirmed an UNSUBSCRIBE (SUNSUBSCRIBE) of the channel, or
                     // dropped a sharded subscription whose slot it no longer serves
      connected,     // the subscriber connection (re)connected: no channel; see connection_marker
      refused,       // the server answered an error (its text in payload), no channel: an ACL
                     // denial, or a MOVED for an SSUBSCRIBE sent to a master that lost the slot
   };
   kind what;
   std::string channel;
   std::string payload;   // a message's text (a release's token), an error's; empty otherwise
   bool sharded = false;  // smessage, ssubscribe, sunsubscribe: sharded pub/sub (Redis Cluster)

   friend bool operator==(push_event const&, push_event const&) = default;
};

/// The channel that a subscriber connection subscribes to first: the client's key prefix itself.
/// Boost.Redis restores a connection's subscriptions after a reconnect with one SUBSCRIBE of
/// every channel in sorted order, and the prefix sorts before every lock channel (`prefix{K}...`):
/// its confirmation says that the connection is new, and comes before the confirmations of the
/// lock channels that it restores. Being under the prefix, it needs no ACL right beyond the lock
/// channels' (`&locksmith:*`): one SUBSCRIBE that names a denied channel is refused whole.
inline std::string_view connection_marker(std::string_view prefix) noexcept
{
   return prefix;
}

/// The pushes among RESP3 nodes read from a subscriber connection, in order. A push is an
/// aggregate at depth 0 whose first element names its kind and whose second is the channel
/// (`message`, `subscribe`, `unsubscribe`, or the sharded `smessage`, `ssubscribe`,
/// `sunsubscribe`); a message's third element is its payload. An error at depth 0 (a SUBSCRIBE
/// refused by an ACL) is the push that refusal_push makes of it, in its place among the others.
/// Anything else is skipped whole, nested aggregates included: pattern messages, anything on the
/// connection marker but its confirmation (which reads as `connected`), and a reply that
/// Boost.Redis took for a push. `marker` is the connection marker (connection_marker(prefix)).
///
/// The nodes must be whole pushes: read them into a `resp3::flat_tree`, whose nodes of a push
/// still being read stay out of view, and out of reach of its `clear()`, until the push is
/// complete, and which keeps an error as a node. A `generic_response` has the nodes as they are
/// parsed, so a receive loop that cleared it lost the pushes that a read cut in two (a
/// subscription's confirmation among them); and it keeps only the error of a batch, losing the
/// pushes read with it.
std::vector<push_event> parse_pushes(std::span<boost::redis::resp3::node_view const> nodes,
                                     std::string_view marker);

/// The push that an error read on a subscriber connection makes (`sharded`: the error ended an
/// SSUBSCRIBE's or SUNSUBSCRIBE's request): `refused`, with the server's text (an ACL denial, a
/// MOVED), but none for the "ERR wrong number of arguments" of the SUBSCRIBE without channels that
/// follows each SSUBSCRIBE so that its request gets a reply (subscriber_link::shard_subscribe).
std::optional<push_event> refusal_push(std::string_view error, bool sharded);

}  // namespace locksmith::detail

#endif
