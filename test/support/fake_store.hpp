// The keyspace of an in-memory Redis node (fake_node.hpp): string keys with expiries, and the
// lock's three scripts (acquire, release, extend) evaluated on them as Redis would,
// with the replies as Boost.Redis would hand them over. No I/O and no executor: what a test looks
// at, and what the node runs. The script table (script_table.hpp) runs the same rows here and on
// a real redis-server, so that this C++ cannot drift from the Lua it stands for.
#pragma once

#include "sansio/scripts.hpp"

#include <boost/redis/adapter/result.hpp>
#include <boost/redis/response.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace locksmith::test {

class fake_store {
public:
   using clock = std::chrono::steady_clock;

   /// `clock_base` is this node's server time (µs) at creation, so that nodes mint different
   /// fencing tokens and the maximum over a quorum means something.
   explicit fake_store(std::uint64_t clock_base)
       : clock_base_{clock_base}
   {}

   /// The value of a key that has not expired.
   std::optional<std::string> get(std::string const& key) const
   {
      auto it = store_.find(key);
      if (it == store_.end() || expired(it->second))
         return std::nullopt;
      return it->second.value;
   }

   /// The live keys whose value is `value` (a lock token).
   std::vector<std::string> keys_holding(std::string const& value) const
   {
      std::vector<std::string> out;
      for (auto const& [k, e] : store_)
         if (!expired(e) && e.value == value)
            out.push_back(k);
      return out;
   }

   /// Every live key that holds a lock token (not a fence key).
   std::map<std::string, std::string> lock_keys() const
   {
      std::map<std::string, std::string> out;
      for (auto const& [k, e] : store_)
         if (!expired(e) && !k.ends_with(":fence"))
            out.emplace(k, e.value);
      return out;
   }

   /// Time left on a key, or nothing.
   std::optional<clock::duration> ttl(std::string const& key) const
   {
      auto it = store_.find(key);
      if (it == store_.end() || expired(it->second) || !it->second.expires)
         return std::nullopt;
      return *it->second.expires - clock::now();
   }

   /// Every live key, in order.
   std::vector<std::string> keys() const
   {
      std::vector<std::string> out;
      for (auto const& [k, e] : store_)
         if (!expired(e))
            out.push_back(k);
      return out;
   }

   /// Sets a key, as another owner would have.
   void set(std::string const& key, std::string value, std::chrono::milliseconds ttl)
   {
      store_[key] = entry{std::move(value), clock::now() + ttl};
   }

   /// Sets a key that never expires.
   void set(std::string const& key, std::string value)
   {
      store_[key] = entry{std::move(value), std::nullopt};
   }

   /// The server's time in µs, as the scripts read it (each acquisition moves it on by one).
   std::uint64_t server_time() const { return clock_base_ + ticks_; }

   /// True for the scripts that evaluate() runs; the other lease kinds' are not modelled.
   static bool models(detail::script const& code)
   {
      return &code == &detail::acquire_script() || &code == &detail::release_script() ||
             &code == &detail::extend_script();
   }

   /// Deletes a key, as a restart that comes back empty does.
   void erase(std::string const& key) { store_.erase(key); }

   std::map<std::string, std::uint64_t> minted;  // token -> the last fence minted for it
   std::size_t publishes = 0;

protected:
   /// Runs one of the scripts; `publish(channel, message)` is what its PUBLISH does.
   boost::redis::generic_response
   evaluate(detail::script const& code, std::vector<std::string> const& keys,
            std::vector<std::string> const& args,
            std::function<void(std::string const&, std::string const&)> const& publish)
   {
      if (&code == &detail::acquire_script())
         return acquire(keys, args);
      if (&code == &detail::release_script())
         return release(keys, args, publish);
      if (&code == &detail::extend_script())
         return extend(keys, args);
      throw std::logic_error("fake_node: unknown script");
   }

   static boost::redis::generic_response number(std::int64_t v)
   {
      using boost::redis::resp3::type;
      boost::redis::generic_response r;
      r.value().push_back({type::number, 1, 0, std::to_string(v)});
      return r;
   }

   static boost::redis::generic_response pair(std::int64_t flag, std::int64_t v)
   {
      using boost::redis::resp3::type;
      boost::redis::generic_response r;
      r.value().push_back({type::array, 2, 0, ""});
      r.value().push_back({type::number, 1, 1, std::to_string(flag)});
      r.value().push_back({type::number, 1, 1, std::to_string(v)});
      return r;
   }

   static boost::redis::generic_response error_resp(std::string text)
   {
      boost::redis::generic_response r;
      r = boost::redis::adapter::error{boost::redis::resp3::type::simple_error, std::move(text)};
      return r;
   }

private:
   struct entry {
      std::string value;
      std::optional<clock::time_point> expires;
   };

   static bool expired(entry const& e) { return e.expires && *e.expires <= clock::now(); }

   static void check(bool ok)
   {
      if (!ok)
         throw std::logic_error("fake_node: unexpected script arguments");
   }

   static std::chrono::milliseconds ms(std::string const& arg)
   {
      return std::chrono::milliseconds{std::stoll(arg)};
   }

   boost::redis::generic_response acquire(std::vector<std::string> const& keys,
                                          std::vector<std::string> const& args)
   {
      // A waiter's registration (KEYS[3], ARGV[5..7]) is not kept: no release names a waiter here,
      // so every release wakes every waiter, as a release that finds none registered does.
      check((keys.size() == 2 && (args.size() == 3 || args.size() == 4)) ||
            (keys.size() == 3 && args.size() == 7));
      // A key that a local holder hands over, or that a release reserved for this waiter.
      bool const taken_over = (args.size() >= 4 && !args[3].empty() && get(keys[0]) == args[3]) ||
                              (args.size() == 7 && get(keys[0]) == args[4]);
      if (get(keys[0]) && !taken_over)
         return pair(
            0, ttl(keys[0])
                  ? std::chrono::duration_cast<std::chrono::milliseconds>(*ttl(keys[0])).count()
                  : -1);
      auto const now = clock::now();
      store_[keys[0]] = entry{args[0], now + ms(args[1])};
      if (args[2] == "0")
         return pair(1, 0);  // no fence wanted
      // As the script: max(last + 1, server time) for RedLock (the fence key's TTL negative); on
      // one node, INCR while the fence key lives and the server's time when it starts anew.
      bool const by_clock = args[2].starts_with('-');
      auto const fence_ttl = by_clock ? args[2].substr(1) : args[2];
      std::uint64_t const server_time = clock_base_ + ++ticks_;
      std::uint64_t const last = get(keys[1]) ? std::stoull(*get(keys[1])) : 0;
      auto const fence = by_clock ? std::max(last + 1, server_time) : last ? last + 1 : server_time;
      store_[keys[1]] = entry{std::to_string(fence), now + ms(fence_ttl)};
      minted[args[0]] = fence;
      return pair(1, static_cast<std::int64_t>(fence));
   }

   boost::redis::generic_response
   release(std::vector<std::string> const& keys, std::vector<std::string> const& args,
           std::function<void(std::string const&, std::string const&)> const& publish)
   {
      check((keys.size() == 1 && args.size() == 2) ||
            (keys.size() == 2 &&
             (args.size() == 4 || args.size() == 5 || args.size() == 6 || args.size() == 7)));
      auto v = get(keys[0]);
      bool const handed = args.size() == 6 && args[4] == "handed" && v == args[5];
      if (v != args[0] && !handed)
         return number(v ? 0 : -1);
      store_.erase(keys[0]);
      if (args.size() >= 5 && args[4] == "quiet")  // (a waiter it registers is not kept)
         return number(1);
      ++publishes;
      publish(args[1], args[0]);
      return number(1);
   }

   boost::redis::generic_response extend(std::vector<std::string> const& keys,
                                         std::vector<std::string> const& args)
   {
      using boost::redis::resp3::type;
      check(keys.size() % 2 == 0 && args.size() == keys.size() / 2 * 3);
      auto const leases = keys.size() / 2;
      boost::redis::generic_response r;
      r.value().push_back({type::array, leases, 0, ""});
      for (std::size_t i = 0; i < leases; ++i) {
         auto const& lock = keys[2 * i];
         auto const& fence = keys[2 * i + 1];
         auto const v = get(lock);
         std::int64_t answer = v ? 0 : -1;
         if (v == args[3 * i]) {
            auto const now = clock::now();
            store_[lock].expires = now + ms(args[3 * i + 1]);
            if (get(fence))
               store_[fence].expires = now + ms(args[3 * i + 2]);
            answer = 1;
         }
         r.value().push_back({type::number, 1, 1, std::to_string(answer)});
      }
      return r;
   }

   std::uint64_t clock_base_;
   std::uint64_t ticks_ = 0;
   std::map<std::string, entry> store_;
};

}  // namespace locksmith::test
