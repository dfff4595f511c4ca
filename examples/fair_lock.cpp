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
#include <locksmith/locksmith.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>

#include <iostream>
#include <memory>
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

asio::awaitable<bool> customer(locksmith::client& c, int id)
{
   auto [ec, turn] = co_await c.async_lock(desk, in_turn, asio::as_tuple);
   if (ec) {
      std::cout << "customer " << id << " gave up: " << ec.message() << '\n';
      co_return false;
   }
   std::cout << "customer " << id << " served (fencing token " << turn.fencing_token() << ")\n";
   co_await pause(20ms);
   co_await c.async_unlock(turn, asio::as_tuple);
   co_return true;
}

asio::awaitable<int> open_desk(std::vector<std::unique_ptr<locksmith::client>>& clients)
{
   // The clerk takes the desk first, so that every customer has to queue.
   auto [ec, clerk] = co_await clients[0]->async_lock(desk, in_turn, asio::as_tuple);
   if (ec) {
      std::cout << "the desk could not be opened: " << ec.message() << '\n';
      co_return 69;
   }
   int served = 0;
   for (int id = 1; id < static_cast<int>(clients.size()); ++id) {
      asio::co_spawn(co_await asio::this_coro::executor, customer(*clients[id], id),
                     [&served](std::exception_ptr, bool ok) { served += ok ? 1 : 0; });
      std::cout << "customer " << id << " arrives\n";
      co_await pause(100ms);
   }
   std::cout << "the clerk opens the desk\n";
   co_await clients[0]->async_unlock(clerk, asio::as_tuple);
   for (int i = 0; i < 300 && served < static_cast<int>(clients.size()) - 1; ++i)
      co_await pause(100ms);
   co_return served == static_cast<int>(clients.size()) - 1 ? 0 : 1;
}

int main(int argc, char** argv)
{
   asio::io_context ioc;
   auto const url = argc > 1 ? argv[1] : "redis://127.0.0.1:6379";
   std::vector<std::unique_ptr<locksmith::client>> clients;
   for (int i = 0; i < 5; ++i)  // the clerk's, then one per customer
      clients.push_back(std::make_unique<locksmith::client>(ioc.get_executor(),
                                                            locksmith::config{.nodes = {url}}));
   if (auto ec = clients[0]->config_error()) {
      std::cerr << "bad Redis URL: " << ec.message() << '\n';
      return 2;
   }
   int code = 1;
   asio::co_spawn(ioc, open_desk(clients), [&](std::exception_ptr, int c) {
      code = c;
      for (auto& cl : clients)
         cl->async_close(asio::detached);
   });
   ioc.run();
   return code;
}
