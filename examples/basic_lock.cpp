// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
//
// basic_lock: take a lock, look at the lease, do some work, let it go. First by hand
// (async_lock, then async_unlock), then scoped (async_with_lock releases on every path).
// Errors are shown both ways: asio::as_tuple hands back the error_code, and the default
// token throws boost::system::system_error, whose code() compares to locksmith::error.
//
// Run:    ./build/examples/basic_lock redis://127.0.0.1:6379   (give 3 URLs or more for RedLock)
// Watch:  redis-cli monitor      (an EVALSHA that takes the lock, another that releases it)
//
// Ctrl-C stops the work; the lock is still released before the program exits.
#include "example.hpp"

#include <locksmith/locksmith.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/system/system_error.hpp>

#include <iostream>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using locksmith::error;

// Stands for the work the lock protects.
asio::awaitable<void> work(std::chrono::milliseconds d)
{
   asio::steady_timer t{co_await asio::this_coro::executor, d};
   co_await t.async_wait();  // throws operation_aborted on Ctrl-C
}

void describe(locksmith::lease const& l)
{
   auto const left = std::chrono::duration_cast<std::chrono::milliseconds>(
      l.valid_until() - locksmith::lease::clock::now());
   std::cout << "  held '" << l.name() << "'\n"
             << "  token          " << l.token() << "  (the key's value: proves ownership)\n"
             << "  fencing token  " << l.fencing_token() << "  (pass it to what you write)\n"
             << "  valid for      " << left.count() << " ms  (renewed in the background)\n";
}

asio::awaitable<void> by_hand(locksmith::client& locks)
{
   std::cout << "1. async_lock / async_unlock, errors as a tuple\n";
   auto const opts = locksmith::lock_options{.ttl = 10s, .wait = 5s};
   auto [ec, l] = co_await locks.async_lock("examples/basic", opts, asio::as_tuple);
   if (ec) {
      // error::wait_timeout, error::quorum_unreachable (Redis down)... compare, don't parse.
      std::cout << "  could not lock: " << ec.message() << '\n';
      co_return;
   }
   describe(l);

   // Unlock even when Ctrl-C cancels what we do while holding the lock. A cancelled coroutine
   // throws at its next co_await, so keep the exception, clear the cancellation, unlock, then
   // rethrow. (async_with_lock below does all of this for you.)
   std::exception_ptr stopped;
   try {
      // While we hold it, a second try from this process answers lock_taken at once, with no
      // round trip; another process would get the same answer from Redis.
      auto [busy, none] = co_await locks.async_try_lock("examples/basic", {}, asio::as_tuple);
      std::cout << "  try_lock again: " << busy.message()
                << (busy == error::lock_taken ? " (expected)\n" : "\n");
      co_await work(1500ms);
   } catch (boost::system::system_error const&) {
      stopped = std::current_exception();
   }
   co_await asio::this_coro::reset_cancellation_state();
   auto [unlocked] = co_await locks.async_unlock(l, asio::as_tuple);
   // lease_expired or not_owner here means that the work outlived the lease.
   std::cout << "  unlocked: " << unlocked.message() << '\n';
   if (stopped)
      std::rethrow_exception(stopped);
}

asio::awaitable<void> scoped(locksmith::client& locks)
{
   std::cout << "2. async_with_lock, errors as exceptions\n";
   // The body runs while the lease is held; its result comes back; the lock is released
   // after it on every path (return, exception, Ctrl-C, or a lost lease, which cancels it).
   int const rows = co_await locksmith::async_with_lock(
      locks, "examples/basic", {.ttl = 10s}, [](locksmith::lease& l) -> asio::awaitable<int> {
         describe(l);
         co_await work(1500ms);
         co_return 42;
      });
   std::cout << "  body returned " << rows << ", lock released\n";

   // A wait that runs out throws too. Hold the lock, and ask for it again with a short wait.
   auto try_again = [&](locksmith::lease&) -> asio::awaitable<void> {
      try {
         co_await locks.async_lock("examples/basic", {.wait = 200ms});
      } catch (boost::system::system_error const& e) {
         std::cout << "  second async_lock threw: " << e.code().message()
                   << (e.code() == error::wait_timeout ? " (expected)\n" : "\n");
      }
   };
   co_await locksmith::async_with_lock(locks, "examples/basic", {}, try_again);
}

asio::awaitable<int> co_main(example::context& ctx)
{
   // Ctrl-C cancels this; whatever it holds is released on the way out, and main() says
   // "stopped: ..." (status 1).
   co_await by_hand(ctx.locks);
   co_await scoped(ctx.locks);
   co_return 0;
}
