// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#ifndef LOCKSMITH_DETAIL_SENTINEL_FOLLOW_HPP
#define LOCKSMITH_DETAIL_SENTINEL_FOLLOW_HPP

#include <boost/redis/resp3/node.hpp>

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace locksmith::detail {

// What the Sentinels say of a master's address, and when a node that reached its master through
// them must ask them again (transport/sentinel_watch.hpp does the I/O).

/// The new address ("ip:port") in a `+switch-master` message's payload, `<name> <old-ip>
/// <old-port> <new-ip> <new-port>`, when it is about `master_name`; empty for another master or
/// a malformed payload.
std::optional<std::string> switched_master(std::string_view payload, std::string_view master_name);

/// The address ("ip:port") in a `SENTINEL GET-MASTER-ADDR-BY-NAME` reply, an array of two
/// strings; empty for a null (the Sentinel does not know the master) or another shape.
std::optional<std::string> master_address(std::vector<boost::redis::resp3::node> const& reply);

/// Whether a node whose connections reach their master through the Sentinels must drop them and
/// ask again, without I/O. After a failover that left the old master running (`SENTINEL
/// FAILOVER`, a partition), the Sentinels name the new master within a second or two, but the old
/// one keeps its clients until the Sentinels demote it, which disconnects them, seconds later. A
/// node told the new address follows at once: it reconnects, and Boost.Redis asks the Sentinels
/// again. The Sentinel it asks may not know yet (each learns from the others within about 2 s),
/// so the node is checked again once its new connection is up, and reconnected again, further
/// apart each time, until it reaches the address named or the tries run out (the demotion still
/// moves it then).
class master_follow {
public:
   using clock = std::chrono::steady_clock;

   struct settings {
      std::chrono::milliseconds spacing{250};    // between the first two reconnects; doubles
      unsigned tries = 6;                        // reconnects per address named
      std::chrono::milliseconds patience{3000};  // for a reconnect to connect, before the next
      std::chrono::milliseconds poll{50};        // how often a reconnect under way is checked
   };

   /// What the node's command connection reached last: its address ("ip:port", as the Sentinel
   /// named it) and how many connections it made so far (0: none yet).
   struct link {
      std::string_view address;
      unsigned connections = 0;
   };

   /// What to do now: reconnect the node, and decide again after `again` (none: only when the
   /// Sentinels name an address again).
   struct step {
      bool reconnect = false;
      std::optional<std::chrono::milliseconds> again;
      bool arrived = false;  // a reconnect asked for reached the master named: once per address

      friend bool operator==(step const&, step const&) = default;
   };

   master_follow() = default;
   explicit master_follow(settings s)
       : s_{s}
   {}

   /// The Sentinels named `address` (a switch, or the answer to a question). True when it
   /// differs from the address named before: the tries start again for it.
   bool named(std::string address);

   /// The address named last; empty before any.
   std::string const& target() const noexcept { return target_; }

   step decide(link node, clock::time_point now);

private:
   settings s_;
   std::string target_;
   unsigned tried_ = 0;               // reconnects for target_
   bool waiting_ = false;             // a reconnect whose connection has not come yet
   unsigned connections_at_ask_ = 0;  // the node's connections when it was asked
   clock::time_point asked_at_{};
   clock::time_point next_try_{};
};

/// Of `items` (oldest first), the last `per_key` of each key (`key_of(item)`), oldest first.
/// The releases that a Redis Cluster's node sends again to a dead master's successor: a key left
/// there by a lost write holds the token of one of its last few leases, and sending every
/// release of the last seconds (thousands under load) kept the new master from answering
/// anything else for a third of a second. (Not a Sentinel's: its old master goes on serving
/// until the switch, a second after the promotion.)
template <class T, class KeyOf>
std::vector<T> last_per_key(std::vector<T> const& items, std::size_t per_key, KeyOf key_of)
{
   std::map<std::string, std::size_t, std::less<>> seen;
   std::vector<T> out;
   for (auto it = items.rbegin(); it != items.rend(); ++it)
      if (++seen[std::string{key_of(*it)}] <= per_key)
         out.push_back(*it);
   return {out.rbegin(), out.rend()};
}
/// How many releases per key that is.
inline constexpr std::size_t resent_per_key = 8;

/// How many of the releases a node made lately it keeps (sentinel_node, cluster_node), and for how
/// long a Sentinel's node does, to send them again to a new master. From the promotion to the
/// client's switch is a second or two; a switch told late (a Sentinel reached after a reconnect)
/// takes longer. The count bounds the memory (about 0.5 kB each): 1,024 covered 0.9 s of one chaos
/// worker (1,100 releases/s) and left names taken for their TTL; 4,096 cover 3.7 s of it.
inline constexpr std::size_t kept_releases = 4096;
inline constexpr std::chrono::milliseconds kept_releases_for{5000};
/// Such a release's timeout, sent again on a new connection: it queues behind nothing.
inline constexpr std::chrono::milliseconds resend_timeout{2000};

/// What a node did lately, for `keep` and at most `capacity` items (the oldest go first): the
/// releases that a Sentinel node made, sent again once it reached a new master (sentinel_node).
/// No I/O.
template <class T>
class recent {
public:
   using clock = std::chrono::steady_clock;

   recent(std::size_t capacity, std::chrono::milliseconds keep)
       : capacity_{capacity}
       , keep_{keep}
   {}

   void add(T item, clock::time_point now)
   {
      forget_old(now);
      if (capacity_ == 0)
         return;
      if (items_.size() == capacity_)
         items_.pop_front();
      items_.push_back({now, std::move(item)});
   }

   /// The items added within `keep` of `now`, oldest first.
   std::vector<T> since(clock::time_point now)
   {
      forget_old(now);
      std::vector<T> out;
      for (auto const& i : items_)
         out.push_back(i.second);
      return out;
   }

private:
   void forget_old(clock::time_point now)
   {
      while (!items_.empty() && now - items_.front().first > keep_)
         items_.pop_front();
   }

   std::size_t capacity_;
   std::chrono::milliseconds keep_;
   std::deque<std::pair<clock::time_point, T>> items_;
};

}  // namespace locksmith::detail

#endif
