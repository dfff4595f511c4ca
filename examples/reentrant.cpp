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
#include "example.hpp"

#include <locksmith/locksmith.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>

#include <iostream>
#include <string>
#include <vector>

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
   auto [ec, hold] =
      co_await locks.async_lock_reentrant(account, request, {.ttl = 10s}, asio::as_tuple);
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
   auto [ec, hold] = co_await locks.async_lock_reentrant(account, request,
                                                         {.ttl = 10s, .wait = 10s}, asio::as_tuple);
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

// Two requests at once; Ctrl-C stops both, and each gives its holds back.
asio::awaitable<int> co_main(example::context& ctx)
{
   std::vector<asio::awaitable<void>> requests;
   for (int i = 0; i < 2; ++i)
      requests.push_back(handle(ctx.locks, "request-" + std::to_string(i)));
   co_await example::run_all(std::move(requests));
   co_return 0;
}
