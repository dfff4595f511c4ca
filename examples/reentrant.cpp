// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
//
// reentrant: one request takes "examples/account-42" for its request id, then calls a helper
// that takes the same lock again for the same id: the helper gets a second hold at once instead
// of waiting for itself. Another request waits until both holds are released. The owner is the
// request id the caller passes, never a thread.
//
// Run:    ./build/examples/reentrant redis://127.0.0.1:6379
// Watch:  redis-cli zrange 'locksmith:{examples/account-42}:holds' 0 -1 withscores
//         (one member per hold, with its expiry on the server's clock, in ms)
//
// Ctrl-C stops the requests; each gives its holds back before the program exits.
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
#include <string>

namespace asio = boost::asio;
using namespace std::chrono_literals;

constexpr char const* account = "examples/account-42";

// Stands for the work done under the lock; false once cancelled (Ctrl-C).
asio::awaitable<bool> work(std::chrono::milliseconds d)
{
   asio::steady_timer t{co_await asio::this_coro::executor, d};
   auto [ec] = co_await t.async_wait(asio::as_tuple);
   co_return !ec;
}

// A helper that needs the account locked, whoever called it: for the same request it re-enters.
asio::awaitable<bool> post_interest(locksmith::client& locks, std::string const& request)
{
   auto [ec, hold] = co_await locksmith::async_lock_reentrant(locks, account, request, {.ttl = 10s},
                                                              asio::as_tuple);
   if (ec) {
      std::cout << request << ": helper could not lock: " << ec.message() << '\n';
      co_return false;
   }
   std::cout << request << ": helper holds it again (fencing token " << hold.fencing_token()
             << ")\n";
   bool const ok = co_await work(300ms);
   co_await asio::this_coro::reset_cancellation_state();
   co_await locks.async_unlock(hold, asio::as_tuple);
   co_return ok;
}

asio::awaitable<void> handle(locksmith::client& locks, std::string request)
{
   auto [ec, hold] = co_await locksmith::async_lock_reentrant(
      locks, account, request, {.ttl = 10s, .wait = 10s}, asio::as_tuple);
   if (ec) {
      std::cout << request << ": could not lock: " << ec.message() << '\n';
      co_return;
   }
   std::cout << request << ": holds the account\n";
   // Nested: the same request takes the lock again without waiting for itself.
   bool ok = co_await work(200ms);
   if (ok)
      ok = co_await post_interest(locks, request);
   co_await asio::this_coro::reset_cancellation_state();
   auto [unlocked] = co_await locks.async_unlock(hold, asio::as_tuple);
   std::cout << request << ": released its last hold: " << unlocked.message()
             << (ok ? "" : " (stopped)") << '\n';
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
   constexpr int requests = 2;
   asio::cancellation_signal stop[requests];
   asio::signal_set signals{ioc, SIGINT, SIGTERM};
   signals.async_wait([&](boost::system::error_code ec, int) {
      if (!ec)
         for (auto& s : stop)
            s.emit(asio::cancellation_type::terminal);
   });
   int left = requests;
   for (int i = 0; i < requests; ++i)
      asio::co_spawn(ioc, handle(locks, "request-" + std::to_string(i)),
                     asio::bind_cancellation_slot(stop[i].slot(), [&](std::exception_ptr) {
                        if (--left > 0)
                           return;
                        signals.cancel();
                        locks.async_close(asio::detached);
                     }));
   ioc.run();
}
