// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// Runs an operation's coroutine body behind a type-erased handler.
#ifndef LOCKSMITH_SRC_SPAWN_HPP
#define LOCKSMITH_SRC_SPAWN_HPP

#include <locksmith/error.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/co_spawn.hpp>

#include <exception>

namespace locksmith::detail {

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

}  // namespace locksmith::detail

#endif
