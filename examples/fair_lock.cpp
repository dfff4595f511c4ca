// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
//
// fair_lock: one service desk, customers served in the order they came, across processes. The
// desk ("examples/desk") is busy when four customers arrive, one every 100 ms, each through a
// client of its own, as four processes would. With lock_options::fair they queue in Redis in
// that order, and each release hands the desk straight to the next one: the output shows
// customers 1, 2, 3, 4, whatever the timing of their wake-ups. (Without `fair`, the first to
// try after a release wins, which is usually, but not always, the first to come.)
//
// Run:    ./build/examples/fair_lock redis://127.0.0.1:6379
// Watch:  redis-cli lrange 'locksmith:{examples/desk}:queue' 0 -1
//         (the waiters' tokens, in their order of arrival)
//
// Ctrl-C stops the clerk and the customers; whoever holds the desk gives it back.
#include "example.hpp"

#include <locksmith/locksmith.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>

#include <iostream>
#include <vector>

namespace asio = boost::asio;
using namespace std::chrono_literals;

constexpr char const* desk = "examples/desk";
constexpr locksmith::lock_options in_turn{.ttl = 10s, .wait = 30s, .fair = true};

asio::awaitable<void> pause(std::chrono::milliseconds d)
{
   asio::steady_timer t{co_await asio::this_coro::executor, d};
   co_await t.async_wait(asio::as_tuple);
}

// Each customer comes 100 ms after the one before, through a client of its own.
asio::awaitable<void> customer(locksmith::client& c, int id, int& served)
{
   co_await pause(100ms * (id - 1));
   std::cout << "customer " << id << " arrives\n";
   auto [ec, turn] = co_await c.async_lock(desk, in_turn, asio::as_tuple);
   if (ec) {
      std::cout << "customer " << id << " gave up: " << ec.message() << '\n';
      co_return;
   }
   std::cout << "customer " << id << " served (fencing token " << turn.fencing_token() << ")\n";
   co_await pause(20ms);
   // Given back on every path: Ctrl-C cancels the pause, not the unlock.
   co_await asio::this_coro::reset_cancellation_state();
   co_await c.async_unlock(turn, asio::as_tuple);
   ++served;
}

// The clerk opens the desk once the last customer has come.
asio::awaitable<void> clerk(locksmith::client& c, locksmith::lease busy)
{
   co_await pause(400ms);
   std::cout << "the clerk opens the desk\n";
   co_await asio::this_coro::reset_cancellation_state();
   co_await c.async_unlock(busy, asio::as_tuple);
}

asio::awaitable<int> co_main(example::context& ctx)
{
   int served = 0;
   std::vector<asio::awaitable<void>> people;
   for (int id = 1; id <= 4; ++id)
      people.push_back(customer(ctx.another_client(), id, served));
   // The clerk takes the desk first, so that every customer has to queue.
   auto [ec, busy] = co_await ctx.locks.async_lock(desk, in_turn, asio::as_tuple);
   if (ec) {
      std::cout << "the desk could not be opened: " << ec.message() << '\n';
      co_return 69;
   }
   people.push_back(clerk(ctx.locks, std::move(busy)));
   co_await example::run_all(std::move(people));
   co_return served == 4 ? 0 : 1;
}
