// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "release_listener.hpp"

#include <locksmith/detail/quorum.hpp>

#include <algorithm>

namespace locksmith::detail {

release_listener::release_listener(std::size_t nodes, links l)
: nodes_{nodes}
, links_{std::move(l)}
{ }

release_listener::channel_state& release_listener::state(std::string const& channel)
{
   auto [it, fresh] = channels_.try_emplace(channel);
   if (fresh)
      it->second.nodes.resize(nodes_);
   return it->second;
}

void release_listener::acquire(std::string const& channel)
{
   auto& ch = state(channel);
   if (ch.refs++ > 0)
      return;
   for (std::size_t i = 0; i < nodes_; ++i) {
      ++ch.nodes[i].pending;
      links_.subscribe(i, channel);
   }
}

void release_listener::release(std::string const& channel) noexcept
{
   auto it = channels_.find(channel);
   if (it == channels_.end() || it->second.refs == 0 || --it->second.refs > 0)
      return;
   for (std::size_t i = 0; i < nodes_; ++i) {
      ++it->second.nodes[i].pending;
      links_.unsubscribe(i, channel);
   }
}

bool release_listener::confirmed(channel_state const& ch) const noexcept
{
   if (ch.refs == 0)
      return false;
   auto const n = std::count_if(ch.nodes.begin(), ch.nodes.end(), [](on_node const& x) {
      return x.active && x.pending == 0;
   });
   return static_cast<std::size_t>(n) >= quorum_of(nodes_);
}

bool release_listener::confirmed(std::string_view channel) const
{
   auto it = channels_.find(channel);
   return it != channels_.end() && confirmed(it->second);
}

std::uint64_t release_listener::events(std::string_view channel) const
{
   auto it = channels_.find(channel);
   return it == channels_.end() ? 0 : it->second.events;
}

void release_listener::add_sleeper(std::string const& channel, boost::asio::steady_timer* t)
{
   state(channel).sleepers.push_back(t);
}

void release_listener::remove_sleeper(std::string const& channel, boost::asio::steady_timer* t) noexcept
{
   auto it = channels_.find(channel);
   if (it == channels_.end())
      return;
   auto& s = it->second.sleepers;
   s.erase(std::remove(s.begin(), s.end(), t), s.end());
   forget_if_idle(it);
}

void release_listener::bump(channel_state& ch) noexcept
{
   ++ch.events;
   for (auto* t : ch.sleepers)
      t->cancel();
}

void release_listener::forget_if_idle(channel_map::iterator it) noexcept
{
   auto const& ch = it->second;
   bool const settled = std::all_of(ch.nodes.begin(), ch.nodes.end(), [](on_node const& x) { return x.pending == 0; });
   if (ch.refs == 0 && ch.sleepers.empty() && settled)
      channels_.erase(it);
}

void release_listener::on_push(std::size_t node, push_event const& e)
{
   if (node >= nodes_)
      return;
   using kind = push_event::kind;
   if (e.what == kind::connected) {
      // A new connection: whatever was subscribed before is being restored (its confirmations
      // follow), and a release may have been missed meanwhile. Every waiter looks again.
      for (auto it = channels_.begin(); it != channels_.end();) {
         auto next = std::next(it);
         it->second.nodes[node] = {};
         bump(it->second);
         forget_if_idle(it);
         it = next;
      }
      return;
   }
   auto it = channels_.find(e.channel);
   if (it == channels_.end())
      return;
   auto& ch = it->second;
   if (e.what == kind::message) {
      bump(ch);
      return;
   }
   bool const was = confirmed(ch);
   auto& n = ch.nodes[node];
   n.pending -= n.pending > 0 ? 1 : 0;
   n.active = e.what == kind::subscribed;
   if (!was && confirmed(ch))
      bump(ch);
   forget_if_idle(it);
}

void release_listener::wake_all() noexcept
{
   for (auto& [name, ch] : channels_)
      for (auto* t : ch.sleepers)
         t->cancel();
}

}  // namespace locksmith::detail
