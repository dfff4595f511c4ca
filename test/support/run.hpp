// Runs one coroutine to completion with a deadline, so that a test that hangs fails instead of
// blocking the whole test binary.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

namespace locksmith::test {
namespace detail {

// Shared with the completion handler, which may outlive run() when the deadline passes.
struct run_state_base {
   std::exception_ptr error;
   bool done = false;
   boost::asio::cancellation_signal cancel;
};

template <class T>
struct run_state : run_state_base {
   std::optional<T> value;
};

// Runs handlers one at a time rather than calling ioc.run(), because other work (a client's
// connection, a background timer) may keep the context busy long after the coroutine is done.
inline void drive(boost::asio::io_context& ioc, run_state_base& state,
                  std::chrono::steady_clock::duration deadline)
{
   auto give_up = std::chrono::steady_clock::now() + deadline;
   while (!state.done) {
      // A context that ran out of work earlier stays stopped until restarted.
      if (ioc.stopped())
         ioc.restart();
      ioc.run_one_until(give_up);
      if (state.done || std::chrono::steady_clock::now() < give_up)
         continue;
      // Ask the abandoned coroutine to unwind the next time the context runs, so it cannot act in a
      // later test; then leave the context ready for reuse.
      state.cancel.emit(boost::asio::cancellation_type::terminal);
      ioc.stop();
      ioc.restart();
      auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline).count();
      throw std::runtime_error("coroutine did not finish within " + std::to_string(ms) + " ms");
   }
}

}  // namespace detail

// Runs the coroutine on ioc until it completes, for at most `deadline`, and returns its value or
// rethrows its exception. Throws std::runtime_error if the deadline passes; the coroutine then gets
// a terminal cancellation and ioc is left restarted and reusable. ioc must not be run by other
// threads meanwhile. The deadline comes before the coroutine so that a lambda body, written in
// place, is the last argument and reads as a block: run(ioc, 20s, [&]() -> awaitable<void>
// {...}()).
template <class T>
T run(boost::asio::io_context& ioc, std::chrono::steady_clock::duration deadline,
      boost::asio::awaitable<T> aw)
{
   auto state = std::make_shared<detail::run_state<T>>();
   boost::asio::co_spawn(ioc, std::move(aw),
                         boost::asio::bind_cancellation_slot(
                            state->cancel.slot(), [state](std::exception_ptr e, T value) {
                               if (e)
                                  state->error = e;
                               else
                                  state->value.emplace(std::move(value));
                               state->done = true;
                            }));
   detail::drive(ioc, *state, deadline);
   if (state->error)
      std::rethrow_exception(state->error);
   return std::move(*state->value);
}

inline void run(boost::asio::io_context& ioc, std::chrono::steady_clock::duration deadline,
                boost::asio::awaitable<void> aw)
{
   auto state = std::make_shared<detail::run_state_base>();
   boost::asio::co_spawn(
      ioc, std::move(aw),
      boost::asio::bind_cancellation_slot(state->cancel.slot(), [state](std::exception_ptr e) {
         state->error = e;
         state->done = true;
      }));
   detail::drive(ioc, *state, deadline);
   if (state->error)
      std::rethrow_exception(state->error);
}

// The same with a 30 s deadline.
template <class T>
T run(boost::asio::io_context& ioc, boost::asio::awaitable<T> aw)
{
   return run(ioc, std::chrono::seconds(30), std::move(aw));
}

inline void run(boost::asio::io_context& ioc, boost::asio::awaitable<void> aw)
{
   run(ioc, std::chrono::seconds(30), std::move(aw));
}

}  // namespace locksmith::test
