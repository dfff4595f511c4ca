// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
//
// rw_lock: many readers of a price list at once, one writer that republishes it. 4 reader
// coroutines read together (async_read_lock); a writer (async_write_lock) waits until they have
// left, and while it waits no new reader enters, so a steady stream of readers cannot starve it.
// Run it in two shells: readers of both processes share the lock, and the writers take turns.
//
// Run:    ./build/examples/rw_lock redis://127.0.0.1:6379
// Watch:  redis-cli zcard 'locksmith:{examples/prices}:readers'     (readers now)
//         redis-cli exists 'locksmith:{examples/prices}:writer_waiting'
//
// Ctrl-C stops everyone; each gives its lease back before the program exits.
#include "example.hpp"

#include <locksmith/locksmith.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>

#include <iostream>
#include <vector>

namespace asio = boost::asio;
using namespace std::chrono_literals;

constexpr char const* name = "examples/prices";
int readers_here = 0;

// Stands for reading or rewriting the list; false once cancelled (Ctrl-C).
asio::awaitable<bool> take_time(std::chrono::milliseconds d)
{
   asio::steady_timer t{co_await asio::this_coro::executor, d};
   auto [ec] = co_await t.async_wait(asio::as_tuple);
   co_return !ec;
}

// Takes the lease (a reader's or the writer's), runs one step, gives it back on every path.
template <class Take>
asio::awaitable<bool> step(locksmith::client& locks, Take take, int id, bool writer)
{
   auto [ec, l] =
      co_await take(locks, name, locksmith::lock_options{.ttl = 10s, .wait = 30s}, asio::as_tuple);
   if (ec) {
      std::cout << (writer ? "writer" : "reader ") << id << ": " << ec.message() << '\n';
      co_return false;
   }
   if (writer)
      std::cout << "writer " << id << " republishes (fencing token " << l.fencing_token()
                << "), readers here: " << readers_here << '\n';
   else
      std::cout << "reader " << id << " reads, with " << readers_here++ << " other readers here\n";
   bool const ok = co_await take_time(writer ? 300ms : 400ms);
   readers_here -= writer ? 0 : 1;
   co_await asio::this_coro::reset_cancellation_state();
   co_await locks.async_unlock(l, asio::as_tuple);
   co_return ok;
}

asio::awaitable<void> reader(locksmith::client& locks, int id)
{
   auto const take = [](locksmith::client& c, auto&&... args) {
      return c.async_read_lock(std::forward<decltype(args)>(args)...);
   };
   while (co_await step(locks, take, id, false) && co_await take_time(100ms * id)) {}
}

asio::awaitable<void> writer(locksmith::client& locks)
{
   auto const take = [](locksmith::client& c, auto&&... args) {
      return c.async_write_lock(std::forward<decltype(args)>(args)...);
   };
   while (co_await take_time(1s) && co_await step(locks, take, 0, true)) {}
}

// 4 readers and the writer, until Ctrl-C; each gives its lease back.
asio::awaitable<int> co_main(example::context& ctx)
{
   std::vector<asio::awaitable<void>> tasks;
   for (int id = 1; id <= 4; ++id)
      tasks.push_back(reader(ctx.locks, id));
   tasks.push_back(writer(ctx.locks));
   co_await example::run_all(std::move(tasks));
   co_return 0;
}
