// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "engines/release_listener.hpp"

#include "sansio/keys.hpp"
#include "sansio/quorum.hpp"
#include "sansio/set_scripts.hpp"

#include <algorithm>

namespace locksmith::detail {

release_listener::release_listener(boost::asio::any_io_executor ex, std::size_t nodes, links l,
                                   std::string tag, std::chrono::milliseconds linger,
                                   std::size_t max_lingering)
    : nodes_{nodes}
    , links_{std::move(l)}
    , tag_{std::move(tag)}
    , linger_{linger}
    , max_lingering_{max_lingering}
    , sweep_timer_{std::move(ex)}
{}

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
   if (ch.idle_since) {
      ch.idle_since.reset();  // still subscribed: its lingering_ entry is now stale
      return;
   }
   send(true, channel, ch);
}

void release_listener::send(bool subscribe, std::string const& channel, channel_state& ch)
{
   auto const& to = subscribe ? links_.subscribe : links_.unsubscribe;
   // The twin first: its confirmation comes before the name's, which wakes the waiters, so a
   // waiter that wakes to it finds both confirmed and registers with its next try.
   auto const twin = tag_.empty() ? std::string{} : waiter_channel(channel, tag_);
   for (std::size_t i = 0; i < nodes_; ++i) {
      if (!twin.empty()) {
         ++ch.nodes[i].own.pending;
         to(i, twin);
      }
      ++ch.nodes[i].name.pending;
      to(i, channel);
   }
}

void release_listener::release(std::string const& channel) noexcept
{
   auto it = channels_.find(channel);
   if (it == channels_.end() || it->second.refs == 0 || --it->second.refs > 0)
      return;
   if (linger_.count() <= 0)
      return unsubscribe(channel, it->second);
   auto const now = std::chrono::steady_clock::now();
   it->second.idle_since = now;
   lingering_.emplace_back(channel, now);
   sweep(false);
}

void release_listener::unsubscribe(std::string const& channel, channel_state& ch) noexcept
{
   ch.idle_since.reset();
   send(false, channel, ch);
}

void release_listener::sweep(bool timer_fired) noexcept
{
   if (timer_fired)
      sweep_armed_ = false;
   auto const now = std::chrono::steady_clock::now();
   while (!lingering_.empty()) {
      auto const& [name, since] = lingering_.front();
      auto it = channels_.find(name);
      bool const stale = it == channels_.end() || it->second.idle_since != since;
      bool const due = now - since >= linger_ || lingering_.size() > max_lingering_;
      if (!stale && !due)
         return arm_sweep(since + linger_);
      if (!stale) {
         unsubscribe(name, it->second);
         forget_if_idle(it);
      }
      lingering_.pop_front();
   }
}

void release_listener::arm_sweep(std::chrono::steady_clock::time_point at) noexcept
{
   if (sweep_armed_)
      return;
   sweep_armed_ = true;
   sweep_timer_.expires_at(at);
   sweep_timer_.async_wait(
      [this, alive = std::weak_ptr<bool>(alive_)](boost::system::error_code ec) {
         if (alive.expired() || ec)
            return;
         sweep(true);
      });
}

bool release_listener::confirmed(channel_state const& ch) const noexcept
{
   return ch.refs > 0 && subscribed(ch);
}

bool release_listener::subscribed(channel_state const& ch) const noexcept
{
   auto const n =
      std::count_if(ch.nodes.begin(), ch.nodes.end(), [this](on_node const& x) { return live(x); });
   return static_cast<std::size_t>(n) >= quorum_of(nodes_);
}

bool release_listener::live(on_node const& n) const noexcept
{
   return n.name.live() && (tag_.empty() || n.own.live());
}

std::string_view release_listener::name_of_twin(std::string_view channel) const noexcept
{
   auto const cut = tag_.size() + 1;
   if (tag_.empty() || channel.size() <= cut || !channel.ends_with(tag_) ||
       channel[channel.size() - cut] != ':')
      return {};
   return channel.substr(0, channel.size() - cut);
}

bool release_listener::confirmed(std::string_view channel) const
{
   auto it = channels_.find(channel);
   return it != channels_.end() && confirmed(it->second);
}

bool release_listener::subscribed(std::string_view channel) const
{
   auto it = channels_.find(channel);
   return it != channels_.end() && subscribed(it->second);
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

void release_listener::remove_sleeper(std::string const& channel,
                                      boost::asio::steady_timer* t) noexcept
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
   bool const settled = std::all_of(ch.nodes.begin(), ch.nodes.end(), [](on_node const& x) {
      return x.name.settled() && x.own.settled();
   });
   if (ch.refs == 0 && !ch.idle_since && ch.sleepers.empty() && settled)
      channels_.erase(it);
}

void release_listener::on_push(std::size_t node, push_event const& e)
{
   using kind = push_event::kind;
   if (node >= nodes_ || e.what == kind::refused)
      return;
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
   bool const twin = it == channels_.end() && !name_of_twin(e.channel).empty();
   if (twin)
      it = channels_.find(name_of_twin(e.channel));
   if (it == channels_.end())
      return;
   auto& ch = it->second;
   if (e.what == kind::message) {
      // Under RedLock one release publishes on every node: a waiter that wakes on the first
      // message and tries must not take the others for new releases, and try again in vain.
      // A key handed to another process's waiter: not for us. A handoff to ours is not taken
      // for a repeat of an earlier message: under RedLock the nodes hand the key over at
      // different moments (as each sees its queue's head), and a waiter that slept through a
      // later one would wait out its 500 ms pause (5 nodes, 16 waiters: handoff p99 503 ms
      // with that dedupe, 6 ms without).
      bool const handoff = e.payload.starts_with(handoff_prefix);
      if (handoff && !handoffs_.contains(std::string_view{e.payload}.substr(handoff_prefix.size())))
         return;
      if (!e.payload.empty() && !handoff) {
         if (std::find(ch.recent.begin(), ch.recent.end(), e.payload) != ch.recent.end())
            return;
         ch.recent[ch.next_recent++ % ch.recent.size()] = e.payload;
      }
      bump(ch);
      return;
   }
   bool const was = confirmed(ch);
   auto& n = twin ? ch.nodes[node].own : ch.nodes[node].name;
   n.pending -= n.pending > 0 ? 1 : 0;
   n.active = e.what == kind::subscribed;
   if (!was && confirmed(ch))
      bump(ch);
   forget_if_idle(it);
}

void release_listener::wake_all() noexcept
{
   sweep_timer_.cancel();
   sweep_armed_ = false;
   for (auto& [name, ch] : channels_)
      for (auto* t : ch.sleepers)
         t->cancel();
}

}  // namespace locksmith::detail
