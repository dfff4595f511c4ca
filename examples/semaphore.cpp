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
#include <locksmith/locksmith.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>

#include <csignal>
#include <iostream>

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
      auto [ec, permit] = co_await locksmith::async_acquire_permit(
         locks, name, permits, {.ttl = 10s, .wait = 30s}, asio::as_tuple);
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

int main(int argc, char** argv)
{
   asio::io_context ioc;
   auto const url = argc > 1 ? argv[1] : "redis://127.0.0.1:6379";
   locksmith::client locks{ioc.get_executor(), {.nodes = {url}}};
   if (auto ec = locks.config_error()) {
      std::cerr << "bad Redis URL: " << ec.message() << '\n';
      return 2;
   }
   // Ctrl-C cancels every caller; each still gives its permit back.
   constexpr int callers = 6;
   asio::cancellation_signal stop[callers];
   asio::signal_set signals{ioc, SIGINT, SIGTERM};
   signals.async_wait([&](boost::system::error_code ec, int) {
      if (!ec)
         for (auto& s : stop)
            s.emit(asio::cancellation_type::terminal);
   });
   // Six callers at once; only two hold a permit at any moment, in all processes.
   int left = callers;
   for (int id = 0; id < callers; ++id)
      asio::co_spawn(ioc, caller(locks, id),
                     asio::bind_cancellation_slot(stop[id].slot(), [&](std::exception_ptr) {
                        if (--left > 0)
                           return;
                        signals.cancel();
                        locks.async_close(asio::detached);
                     }));
   ioc.run();
}
