// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#ifndef LOCKSMITH_DETAIL_SHARD_SUBSCRIPTIONS_HPP
#define LOCKSMITH_DETAIL_SHARD_SUBSCRIPTIONS_HPP

#include "sansio/pushes.hpp"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace locksmith::detail {

/// A Redis Cluster's release channels on sharded pub/sub, without I/O. Each channel is
/// SSUBSCRIBEd at one master, its `home`: the master of its slot when it was last placed. The
/// release listener sees the cluster as one node with one subscriber connection, which confirms
/// each SUBSCRIBE and UNSUBSCRIBE it sends, in order; this turns the confirmations of several
/// masters' connections (and their reconnects, and the slots that move) into that view:
/// - each call of the listener is answered once the channel is in the state that the last call
///   asked for at its home (`owed` answers, all of that state);
/// - between calls, a subscription lost (its slot moved, its master reconnected) reads as an
///   unsubscribe, and its renewal at the slot's master as a subscribe.
/// Masters are named by address ("host:port"); pushes from another master than a channel's home
/// are late answers to commands sent there before the channel moved, and are ignored.
class shard_subscriptions {
public:
   /// An SSUBSCRIBE (or SUNSUBSCRIBE) of `channel` to send to `master`.
   struct command {
      bool subscribe = true;
      std::string master;
      std::string channel;

      friend bool operator==(command const&, command const&) = default;
   };
   /// What to do after an event: commands to send, pushes to hand to the listener (in order),
   /// and whether the slot map looks stale (a master dropped a subscription of ours).
   struct steps {
      std::vector<command> send;
      std::vector<push_event> tell;
      bool stale_map = false;
   };
   /// The master of a channel's slot, as the slot map says now.
   using owner_fn = std::function<std::string(std::string const& channel)>;

   /// The listener subscribes the channel, whose slot `owner` serves.
   steps subscribe(std::string const& channel, std::string const& owner);
   /// The listener unsubscribes the channel.
   steps unsubscribe(std::string const& channel);
   /// A sharded confirmation (ssubscribe, sunsubscribe) from `master`'s subscriber connection.
   steps on_push(std::string const& master, push_event const& e);
   /// `master`'s subscriber connection is new: the server forgot its sharded subscriptions
   /// (Boost.Redis restores only SUBSCRIBE and PSUBSCRIBE). The listener hears `connected`
   /// first, as from one connection, and then a subscribe for each channel still live elsewhere.
   steps on_connected(std::string const& master);
   /// The slot map changed: each channel that is wanted moves to the master of its slot, or is
   /// subscribed again at its home if that dropped it.
   steps follow(owner_fn const& owner);

   /// Channels known (wanted, or with an answer or confirmation still to come).
   std::size_t size() const noexcept { return channels_.size(); }

private:
   struct channel_state {
      bool wanted = false;    // the listener's last call was a subscribe
      unsigned owed = 0;      // the listener's calls not answered yet
      bool reported = false;  // the listener was last told: subscribed
      std::string home;       // where it is (being) subscribed; empty: nowhere
      unsigned pending = 0;   // our commands at home whose confirmation is still to come
      bool active = false;    // home's last confirmation was a subscribe
   };
   using channel_map = std::map<std::string, channel_state, std::less<>>;

   void place(std::string const& channel, channel_state& c, std::string const& owner, steps& out);
   void settle(channel_map::iterator it, steps& out);

   channel_map channels_;
};

}  // namespace locksmith::detail

#endif
