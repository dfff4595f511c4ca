// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include <locksmith/with_lock.hpp>

#include "engines/spawn.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace locksmith::detail {
namespace asio = boost::asio;

namespace {

// What the body's run and the loss watcher share; they may outlive the operation's frame.
struct body_run {
   explicit body_run(asio::any_io_executor ex)
       : finished{std::move(ex), std::chrono::steady_clock::time_point::max()}
   {}

   asio::cancellation_signal stop;
   asio::steady_timer finished;  // never expires; cancelled when the body is done
   bool done = false;
   std::exception_ptr thrown;
};

// Runs the body until it finishes, passing our caller's cancellation on to it.
asio::awaitable<void> run_body(lease& l, body_fn& body, std::shared_ptr<body_run> run)
{
   auto const ex = co_await asio::this_coro::executor;
   asio::co_spawn(ex, body(l),
                  asio::bind_cancellation_slot(run->stop.slot(), [run](std::exception_ptr e) {
                     run->done = true;
                     run->thrown = e;
                     run->finished.cancel();
                  }));
   // A lost lease stops the body at once: terminal cancellation, well before valid_until().
   l.async_wait_lost(asio::bind_executor(ex, [run](error_code ec) {
      if (!ec && !run->done)
         run->stop.emit(asio::cancellation_type::terminal);
   }));
   while (!run->done) {
      co_await run->finished.async_wait(use_tuple);
      if (run->done)
         break;
      // Our caller cancelled: pass it on, and keep waiting for the body to finish.
      auto const type = (co_await asio::this_coro::cancellation_state).cancelled();
      co_await asio::this_coro::reset_cancellation_state(asio::enable_total_cancellation());
      run->stop.emit(type == asio::cancellation_type::none ? asio::cancellation_type::terminal
                                                           : type);
   }
}

asio::awaitable<error_code> with_lock(client& c, std::string name, lock_options opts, body_fn body)
{
   co_await asio::this_coro::reset_cancellation_state(asio::enable_total_cancellation());
   auto [ec, l] = co_await c.async_lock(name, opts, use_tuple);
   if (ec)
      co_return ec;
   auto run = std::make_shared<body_run>(co_await asio::this_coro::executor);
   co_await run_body(l, body, run);
   bool const lost = l.lost();
   // Release on every path, whatever the body did.
   auto [released] = co_await c.async_unlock(l, use_tuple);
   if (lost)
      co_return error::lease_lost;
   if (run->thrown)
      co_return code_of(run->thrown);  // rethrows what is not a system_error
   if (released == error::not_owner || released == error::lease_expired)
      co_return error::lease_lost;
   co_return released;
}

}  // namespace

void async_with_lock_impl(client& c, std::string name, lock_options opts, body_fn body,
                          asio::any_completion_handler<void(error_code)> h)
{
   spawn(c.get_executor(), with_lock(c, std::move(name), std::move(opts), std::move(body)),
         std::move(h),
         [](auto h, std::exception_ptr e, error_code ec) { std::move(h)(e ? code_of(e) : ec); });
}

}  // namespace locksmith::detail
