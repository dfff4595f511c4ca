// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// Contention in the shape that once broke mutual exclusion (issue 16): several clients in one
// process (each with its own connections and local queue, as separate processes would have),
// several coroutines per client and several names, so that connections carry many contenders
// at once. An occupancy counter per name, at the resource, counts two holders at once, and the
// fencing tokens of successive holders of a name must rise strictly. Shared by the integration
// test and locksmith-bench's `mutex` scenario.
#pragma once

#include <locksmith/client.hpp>

#include "support/config.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace locksmith::test {

struct contention_shape {
   int clients = 4;
   int coroutines = 8;
   int names = 4;
   long cycles = 20'000;              // the run ends once this many lock/unlock cycles completed,
   std::chrono::seconds budget{240};  // or when this time has passed (TSan runs are slow)
   std::chrono::microseconds max_hold{500};  // each holder holds for a uniform 0..max_hold
   bool spin = false;                        // spin{2 ms, 2 ms} instead of subscribe
   bool fence = true;                        // lock_options::fence
   std::chrono::milliseconds node_timeout{1000};
   std::string names_prefix = {};  // the names are names_prefix + 0..names-1; empty: a fresh one
};

struct contention_tally {
   long cycles = 0;
   long overlaps = 0;    // a holder found another holder of its name at the resource
   long inversions = 0;  // a holder's fencing token was not above its predecessor's
   long errors = 0;
   std::map<std::string, long> kinds;  // errors by operation and message
   std::vector<long> per_client;       // cycles of each client: how evenly the lock was shared
   // From the clients' metrics (metrics_snapshot): tries sent to the servers (the first node's
   // acquire votes; a lease passed within a client sends none), and of them those after a lock
   // call's first that lost (retries_lost).
   std::uint64_t tries = 0;
   std::uint64_t retries_lost = 0;
   std::chrono::steady_clock::duration took{};
   std::chrono::steady_clock::duration longest_wait{};  // of one lock call, error or not

   double per_second() const
   {
      auto const s = std::chrono::duration<double>(took).count();
      return s > 0 ? static_cast<double>(cycles) / s : 0;
   }
};

namespace contention_detail {

namespace asio = boost::asio;

struct state {
   contention_tally t;
   std::vector<int> occupancy;
   std::vector<std::uint64_t> last_fence;
   int running = 0;
   bool stop = false;
};

inline asio::awaitable<void> contend(client& c, int who, state& st, contention_shape s,
                                     std::string prefix, unsigned seed)
{
   constexpr auto tuple = asio::as_tuple(asio::deferred);
   std::mt19937 rng{seed};
   asio::steady_timer hold{co_await asio::this_coro::executor};
   // A TTL that leaves the watchdog room to renew with the 1 s node timeout (lock_options::renew).
   // The wait is three TTLs: a waiter whose wake-up was lost sleeps until the PTTL it saw (up to
   // a TTL, by design), and a wait of one TTL made that an error on a loaded machine (a sanitizer
   // build at -j2: 5 of 20,000 cycles). The longest wait is in the tally instead.
   auto opts = lock_options{.ttl = std::chrono::seconds{5}, .wait = std::chrono::seconds{15}};
   opts.fence = s.fence;
   if (s.spin)
      opts.strategy = wait_strategy::spin{.interval = std::chrono::milliseconds{2},
                                          .jitter = std::chrono::milliseconds{2}};
   auto& t = st.t;
   while (t.cycles < s.cycles && !st.stop) {
      auto const k = static_cast<std::size_t>(rng() % static_cast<unsigned>(s.names));
      auto const asked = std::chrono::steady_clock::now();
      auto [ec, l] = co_await c.async_lock(prefix + std::to_string(k), opts, tuple);
      t.longest_wait = std::max(t.longest_wait, std::chrono::steady_clock::now() - asked);
      if (ec) {
         ++t.errors;
         ++t.kinds["lock: " + ec.message()];
         continue;
      }
      if (++st.occupancy[k] > 1)
         ++t.overlaps;
      // An unfenced lease has no token (0) to compare.
      if (s.fence && l.fencing_token() <= st.last_fence[k])
         ++t.inversions;
      st.last_fence[k] = std::max(st.last_fence[k], l.fencing_token());
      hold.expires_after(
         std::chrono::microseconds{rng() % static_cast<unsigned>(s.max_hold.count() + 1)});
      co_await hold.async_wait(asio::as_tuple(asio::use_awaitable));
      --st.occupancy[k];
      auto [uec] = co_await c.async_unlock(l, tuple);
      if (uec) {
         ++t.errors;
         ++t.kinds["unlock: " + uec.message()];
      }
      ++t.cycles;
      ++t.per_client[static_cast<std::size_t>(who)];
   }
}

}  // namespace contention_detail

/// Runs the shape against the nodes, on an io_context of its own, and returns the tally. Fresh
/// lock names each run. Stops at s.cycles, or at s.budget with the cycles counted so far.
inline contention_tally run_contention(std::vector<std::string> const& nodes, contention_shape s)
{
   namespace asio = boost::asio;
   asio::io_context ioc{1};
   auto const cfg = test_config(nodes, s.node_timeout);
   std::vector<std::unique_ptr<client>> clients;
   for (int i = 0; i < s.clients; ++i)
      clients.push_back(std::make_unique<client>(ioc.get_executor(), cfg));
   contention_detail::state st;
   st.occupancy.assign(static_cast<std::size_t>(s.names), 0);
   st.last_fence.assign(static_cast<std::size_t>(s.names), 0);
   st.t.per_client.assign(static_cast<std::size_t>(s.clients), 0);
   std::random_device rd;
   auto const prefix =
      s.names_prefix.empty() ? "contention/" + std::to_string(rd()) + "/" : s.names_prefix;
   asio::steady_timer all_done{ioc, s.budget};
   for (int i = 0; i < s.clients; ++i)
      for (int j = 0; j < s.coroutines; ++j) {
         ++st.running;
         asio::co_spawn(ioc, contention_detail::contend(*clients[i], i, st, s, prefix, rd()),
                        [&](std::exception_ptr e) {
                           if (e)
                              ++st.t.kinds["exception"], ++st.t.errors;
                           if (--st.running == 0)
                              all_done.cancel();
                        });
      }
   all_done.async_wait([&](auto) {
      // Out of time, or done: the workers end their cycles, and the clients close.
      st.stop = true;
   });
   auto const t0 = std::chrono::steady_clock::now();
   while (st.running > 0 && ioc.run_one() > 0) {}
   st.t.took = std::chrono::steady_clock::now() - t0;
   for (auto const& c : clients) {
      auto const m = c->metrics();
      st.t.retries_lost += m.retries_lost;
      if (!m.votes.empty())
         st.t.tries += m.votes[0].yes + m.votes[0].no + m.votes[0].failed + m.votes[0].none;
   }
   return st.t;
}

}  // namespace locksmith::test
