// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// Starts an operation on the client's executor from any thread, and runs an operation's coroutine
// body behind a type-erased handler; and the token of a co_await that reads an error.
#ifndef LOCKSMITH_SRC_SPAWN_HPP
#define LOCKSMITH_SRC_SPAWN_HPP

#include <locksmith/error.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <exception>
#include <memory>

namespace locksmith::detail {

/// The completion token of a co_await that reads an error rather than catching one.
inline constexpr auto use_tuple = boost::asio::as_tuple(boost::asio::use_awaitable);

/// The error_code an exception stands for: a system_error's own code, not_enough_memory for
/// bad_alloc. Any other exception is rethrown.
error_code code_of(std::exception_ptr e);

/// Runs `body` on `ex` and completes `h` through `complete(h, exception_ptr, result)`. The
/// handler's cancellation slot reaches the coroutine, and its executor runs the completion;
/// co_spawn never completes inline.
template <class T, class Handler, class Complete>
void spawn(boost::asio::any_io_executor const& ex, boost::asio::awaitable<T> body, Handler h,
           Complete complete)
{
   namespace asio = boost::asio;
   auto slot = asio::get_associated_cancellation_slot(h);
   auto hex = asio::get_associated_executor(h, ex);
   asio::co_spawn(ex, std::move(body),
                  asio::bind_cancellation_slot(
                     slot, asio::bind_executor(
                              hex, [h = std::move(h), complete](std::exception_ptr e, T r) mutable {
                                 complete(std::move(h), e, std::move(r));
                              })));
}

/// True when the caller runs on `ex` (an io_context's executor or a strand over one, as
/// client.hpp asks); false when it cannot tell (any_io_executor has no such query).
bool running_on(boost::asio::any_io_executor const& ex) noexcept;

/// Starts an operation on the client's executor `ex` from any thread: `start(h)` runs at once
/// when the caller is already on `ex`, else it is dispatched there (inline on this thread when
/// `ex` is an idle strand of an io_context that this thread runs, else one post). The
/// operation completes `h` on its associated executor, as every operation does. The caller emits
/// the handler's cancellation slot on its own thread: the slot is then relayed, so that the
/// operation sees (and clears) its slot on `ex` only. The relay leaves the caller's slot when the
/// handler runs, on the handler's executor.
template <class... Args, class Start>
void enter(boost::asio::any_io_executor const& ex,
           boost::asio::any_completion_handler<void(Args...)> h, Start start)
{
   namespace asio = boost::asio;
   if (running_on(ex))
      return start(std::move(h));
   auto callers = asio::get_associated_cancellation_slot(h);
   if (callers.is_connected()) {
      auto relay = std::make_shared<asio::cancellation_signal>();
      callers.assign([relay, ex](asio::cancellation_type type) {
         asio::dispatch(ex, [relay, type] { relay->emit(type); });
      });
      auto hex = asio::get_associated_executor(h, ex);
      h = asio::bind_cancellation_slot(
         relay->slot(),
         asio::bind_executor(hex, [h = std::move(h), callers, relay](Args... args) mutable {
            callers.clear();
            std::move(h)(std::move(args)...);
         }));
   }
   // Dispatched, not posted: inline after all on an executor that running_on() did not know.
   asio::dispatch(ex,
                  [h = std::move(h), start = std::move(start)]() mutable { start(std::move(h)); });
}

}  // namespace locksmith::detail

#endif
