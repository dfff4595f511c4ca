// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
//
// semaphore: at most 2 calls at once to a slow partner API, across every process that runs this
// program. 6 coroutines each ask for one of the 2 permits of "examples/partner-api", hold it
// for a while (the call), and give it back; a waiter wakes on the release message. Start the
// program in two shells at once: still no more than 2 holders in all.
//
// Run:    ./build/examples/semaphore redis://127.0.0.1:6379
// Watch:  redis-cli zrange 'locksmith:{examples/partner-api}' 0 -1 withscores
//         (the holders' tokens, each with its expiry on the server's clock, in ms)
//
// Ctrl-C stops the callers; each gives its permit back before the program exits.
#include "example.hpp"

#include <locksmith/locksmith.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>

#include <iostream>
#include <vector>

namespace asio = boost::asio;
using namespace std::chrono_literals;

constexpr std::size_t permits = 2;
constexpr char const* name = "examples/partner-api";
int holding = 0;  // in this process

// Stands for the call that the permits ration; a lost permit (renewal failed) cancels it.
asio::awaitable<bool> call_partner(locksmith::lease& permit)
{
   asio::steady_timer t{co_await asio::this_coro::executor, 700ms};
   auto [ec] = co_await t.async_wait(asio::as_tuple);
   co_return !ec && !permit.lost();
}

asio::awaitable<void> caller(locksmith::client& locks, int id)
{
   for (int round = 0; round < 3; ++round) {
      // Every user of the name must ask for the same number of permits.
      auto [ec, permit] = co_await locks.async_acquire_permit(
         name, permits, {.ttl = 10s, .wait = 30s}, asio::as_tuple);
      if (ec) {
         std::cout << "caller " << id << ": no permit: " << ec.message() << '\n';
         co_return;
      }
      std::cout << "caller " << id << " holds a permit (fencing token " << permit.fencing_token()
                << "), " << ++holding << " held here\n";
      bool const done = co_await call_partner(permit);
      --holding;
      // Given back on every path; a waiter elsewhere wakes on the release message.
      co_await asio::this_coro::reset_cancellation_state();
      auto [unlocked] = co_await locks.async_unlock(permit, asio::as_tuple);
      std::cout << "caller " << id << " gave it back: " << unlocked.message() << '\n';
      if (!done)
         co_return;  // Ctrl-C
   }
}

// Six callers at once; only two hold a permit at any moment, in all processes. Ctrl-C cancels
// every caller; each still gives its permit back.
asio::awaitable<int> co_main(example::context& ctx)
{
   std::vector<asio::awaitable<void>> callers;
   for (int id = 0; id < 6; ++id)
      callers.push_back(caller(ctx.locks, id));
   co_await example::run_all(std::move(callers));
   co_return 0;
}
