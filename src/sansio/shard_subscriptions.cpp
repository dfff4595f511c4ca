// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "sansio/shard_subscriptions.hpp"

namespace locksmith::detail {

using steps = shard_subscriptions::steps;

steps shard_subscriptions::subscribe(std::string const& channel, std::string const& owner)
{
   steps out;
   auto it = channels_.try_emplace(channel).first;
   auto& c = it->second;
   c.wanted = true;
   ++c.owed;
   // Always sent, even where it is subscribed already: behind the UNSUBSCRIBE of the listener's
   // previous call, whose confirmation may still be on its way.
   place(channel, c, owner, out);
   ++c.pending;
   out.send.push_back({true, owner, channel});
   settle(it, out);
   return out;
}

steps shard_subscriptions::unsubscribe(std::string const& channel)
{
   steps out;
   auto it = channels_.try_emplace(channel).first;
   auto& c = it->second;
   c.wanted = false;
   ++c.owed;
   if (!c.home.empty() && (c.active || c.pending > 0)) {
      ++c.pending;
      out.send.push_back({false, c.home, channel});
   }
   settle(it, out);
   return out;
}

steps shard_subscriptions::on_push(std::string const& master, push_event const& e)
{
   steps out;
   using kind = push_event::kind;
   if (!e.sharded || (e.what != kind::subscribed && e.what != kind::unsubscribed))
      return out;
   auto it = channels_.find(e.channel);
   if (it == channels_.end() || it->second.home != master)
      return out;
   auto& c = it->second;
   if (e.what == kind::subscribed) {
      c.pending -= c.pending > 0 ? 1 : 0;
      c.active = true;
   } else if (c.pending > 0) {
      --c.pending;
      c.active = false;
   } else {
      // Not an answer: the master gave the channel's slot away, and dropped the subscription.
      c.active = false;
      out.stale_map = c.wanted;
   }
   settle(it, out);
   return out;
}

steps shard_subscriptions::on_connected(std::string const& master)
{
   steps out;
   out.tell.push_back({push_event::kind::connected, {}, {}, false});
   // The listener forgets every call it made: it reset its view of this node.
   for (auto& [channel, c] : channels_) {
      c.owed = 0;
      c.reported = false;
      if (c.home != master)
         continue;
      c.pending = 0;
      c.active = false;
      if (!c.wanted) {
         c.home.clear();
         continue;
      }
      ++c.pending;
      out.send.push_back({true, master, channel});
   }
   for (auto it = channels_.begin(); it != channels_.end();)
      settle(it++, out);
   return out;
}

steps shard_subscriptions::follow(owner_fn const& owner)
{
   steps out;
   for (auto it = channels_.begin(); it != channels_.end();) {
      auto& [channel, c] = *it;
      auto const at = owner(channel);
      if (!c.wanted) {
         // Whatever is still to come from the old home no longer matters.
         if (c.home != at)
            c = channel_state{false, c.owed, c.reported, {}, 0, false};
      } else if (c.home != at || (!c.active && c.pending == 0)) {
         place(channel, c, at, out);
         ++c.pending;
         out.send.push_back({true, at, channel});
      }
      settle(it++, out);
   }
   return out;
}

// Makes `owner` the channel's home, leaving the old one; the caller sends the SSUBSCRIBE there.
// A late confirmation from the old home is ignored, and the SUNSUBSCRIBE sent behind our commands
// there leaves nothing subscribed (a master that lost the slot dropped it already).
void shard_subscriptions::place(std::string const& channel, channel_state& c,
                                std::string const& owner, steps& out)
{
   if (c.home == owner)
      return;
   if (!c.home.empty() && (c.active || c.pending > 0))
      out.send.push_back({false, c.home, channel});
   c.home = owner;
   c.pending = 0;
   c.active = false;
}

void shard_subscriptions::settle(channel_map::iterator it, steps& out)
{
   auto& c = it->second;
   bool const live = !c.home.empty() && c.active && c.pending == 0;
   bool const gone = c.home.empty() || (!c.active && c.pending == 0);
   auto const tell = [&](bool subscribed) {
      using kind = push_event::kind;
      out.tell.push_back({subscribed ? kind::subscribed : kind::unsubscribed, it->first, {}, true});
   };
   if (c.owed > 0 && (c.wanted ? live : gone)) {
      for (; c.owed > 0; --c.owed)
         tell(c.wanted);
      c.reported = c.wanted;
   } else if (c.owed == 0 && c.wanted && live != c.reported) {
      tell(live);
      c.reported = live;
   }
   if (!c.wanted && c.owed == 0 && gone)
      channels_.erase(it);
}

}  // namespace locksmith::detail
