// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The release listener: the client's subscriptions to release channels, shared by all its waiters,
// and the wake-ups that their pushes bring. Everything here lives on the client's executor.
#ifndef LOCKSMITH_SRC_RELEASE_LISTENER_HPP
#define LOCKSMITH_SRC_RELEASE_LISTENER_HPP

#include "sansio/pushes.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace locksmith::detail {

class release_listener {
public:
   /// What the listener asks of the nodes: send SUBSCRIBE or UNSUBSCRIBE of a channel to one node.
   struct links {
      std::function<void(std::size_t node, std::string const& channel)> subscribe;
      std::function<void(std::size_t node, std::string const& channel)> unsubscribe;
   };

   /// A channel nobody refers to stays subscribed for `linger` (zero: unsubscribed at once), so
   /// that a name contended again soon needs no new SUBSCRIBE and no wait for its confirmation;
   /// at most `max_lingering` channels linger at once, the oldest going first.
   ///
   /// With a `tag` (no ':' in it), every channel has a twin of this process's own,
   /// waiter_channel(channel, tag), subscribed and unsubscribed with it (the twin first): a
   /// release that names one of our waiters (waiter_id(tag, ...)) publishes there, so that the
   /// other processes that wait on the name are not woken to read it. Its messages count as the
   /// channel's. Without one, a channel is the name's channel alone.
   release_listener(boost::asio::any_io_executor ex, std::size_t nodes, links l, std::string tag,
                    std::chrono::milliseconds linger = std::chrono::milliseconds{0},
                    std::size_t max_lingering = 1024);

   /// This process's tag (empty: no channels of our own).
   std::string const& tag() const noexcept { return tag_; }

   /// Takes a reference on the channel; the first one subscribes on every node, unless the
   /// channel still lingers subscribed.
   void acquire(std::string const& channel);
   /// Drops a reference; after the last one, the channel lingers, then is unsubscribed on every
   /// node.
   void release(std::string const& channel) noexcept;

   /// True when the server confirmed the channel's subscription (and its twin's) on a quorum of
   /// nodes, and no UNSUBSCRIBE of ours is still on its way there. A release by any holder of a
   /// quorum then reaches us: its quorum and ours share a node. Waiters rely on messages only
   /// from then on, and register among the name's waiters (acquire.lua) only from then on.
   bool confirmed(std::string_view channel) const;
   /// The same, referenced or not: also true of a channel that lingers subscribed.
   bool subscribed(std::string_view channel) const;

   /// Counts what may mean that the lock is free now or that a release was missed: releases (a
   /// release under RedLock brings one message per node, all with its token: counted once),
   /// the subscription becoming confirmed, and reconnects of a subscriber connection. A waiter
   /// reads it before it tries, and tries again at once if it moved meanwhile.
   std::uint64_t events(std::string_view channel) const;

   /// A timer that the next event on the channel cancels. The timer is a local of the sleeping
   /// coroutine's frame: the coroutine removes it (`remove_sleeper`) after its wait completed and
   /// before its frame can go away, so no pointer here outlives its timer.
   void add_sleeper(std::string const& channel, boost::asio::steady_timer* t);
   void remove_sleeper(std::string const& channel, boost::asio::steady_timer* t) noexcept;

   /// A fair lock's release hands the key to one waiter and says so (handoff_prefix + its
   /// token, set_scripts.hpp): such a message is an event only for a token awaited here, and
   /// wakes nobody else. The engine awaits its token while it tries and waits.
   void await_handoff(std::string const& token) { handoffs_.insert(token); }
   void forget_handoff(std::string const& token) noexcept { handoffs_.erase(token); }

   /// A push from node `node`'s subscriber connection.
   void on_push(std::size_t node, push_event const& e);

   /// Cancels every sleeper and the linger timer (the client stops).
   void wake_all() noexcept;

   /// Channels that linger subscribed with no reference.
   std::size_t lingering() const noexcept { return lingering_.size(); }

private:
   // One node's view of one channel. Pushes on a connection come in the order of its commands,
   // and our SUBSCRIBE and UNSUBSCRIBE of a channel alternate: `pending` counts those whose
   // confirmation is still to come, so a late confirmation of an earlier SUBSCRIBE never passes
   // for the latest one.
   struct subscription {
      unsigned pending = 0;
      bool active = false;  // the last confirmation was a subscribe
      bool settled() const noexcept { return pending == 0; }
      bool live() const noexcept { return active && pending == 0; }
   };
   struct on_node {
      subscription name;  // the name's channel
      subscription own;   // its twin (with a tag)
   };
   struct channel_state {
      std::size_t refs = 0;
      std::array<std::string, 4> recent;  // the last releases counted: one release, N messages
      std::size_t next_recent = 0;
      std::optional<std::chrono::steady_clock::time_point> idle_since;  // lingers subscribed
      std::uint64_t events = 0;
      std::vector<on_node> nodes;
      std::vector<boost::asio::steady_timer*> sleepers;
   };
   struct string_hash {
      using is_transparent = void;
      std::size_t operator()(std::string_view s) const noexcept
      {
         return std::hash<std::string_view>{}(s);
      }
   };
   using channel_map = std::unordered_map<std::string, channel_state, string_hash, std::equal_to<>>;

   channel_state& state(std::string const& channel);
   // The channel a push is about: the name's, for its twin's (empty: not a twin).
   std::string_view name_of_twin(std::string_view channel) const noexcept;
   void send(bool subscribe, std::string const& channel, channel_state& ch);
   bool live(on_node const& n) const noexcept;
   bool confirmed(channel_state const& ch) const noexcept;
   bool subscribed(channel_state const& ch) const noexcept;
   static void bump(channel_state& ch) noexcept;
   void forget_if_idle(channel_map::iterator it) noexcept;
   void unsubscribe(std::string const& channel, channel_state& ch) noexcept;
   void sweep(bool timer_fired) noexcept;
   void arm_sweep(std::chrono::steady_clock::time_point at) noexcept;

   std::size_t nodes_;
   links links_;
   std::string tag_;
   std::unordered_set<std::string, string_hash, std::equal_to<>> handoffs_;
   channel_map channels_;
   std::chrono::milliseconds linger_;
   std::size_t max_lingering_;
   // Channels in the order they became idle, with that moment; an entry whose channel was
   // taken again (or became idle again later) is stale and skipped.
   std::deque<std::pair<std::string, std::chrono::steady_clock::time_point>> lingering_;
   boost::asio::steady_timer sweep_timer_;
   bool sweep_armed_ = false;
   std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // outlived by a late timer handler
};

}  // namespace locksmith::detail

#endif
