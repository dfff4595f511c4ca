// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The one front end of every acquisition, behind the client's members (client.hpp): the lock, a
// semaphore's permits (semaphore.hpp), a read-write lock's sides (rw_lock.hpp) and a reentrant
// lock's holds (reentrant_lock.hpp). Each member only names the kind of lease it asks for.
#ifndef LOCKSMITH_DETAIL_ACQUIRE_KIND_HPP
#define LOCKSMITH_DETAIL_ACQUIRE_KIND_HPP

#include <locksmith/detail/lease_kind.hpp>
#include <locksmith/error.hpp>
#include <locksmith/lease.hpp>
#include <locksmith/lock_options.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <type_traits>

namespace locksmith {
class client;
}

namespace locksmith::detail {

struct client_core;

using lease_handler = boost::asio::any_completion_handler<void(error_code, lease)>;

/// Whether `h`'s associated executor is `ex` itself, found where the handler's type is known:
/// then an operation that completes on `ex` calls it at once, as a dispatch there would, without
/// asking its type-erased form for its executor (an any_completion_executor, built on the heap
/// at each completion, with a work-tracking copy of it for the dispatch).
/// Only a handler whose executor is an any_io_executor (a coroutine's, or none: then it is `ex`)
/// is compared; any other (an any_completion_handler's, a strand's) says no, and completes by a
/// dispatch to its executor, as always.
template <class Handler>
bool runs_on(Handler const& h, boost::asio::any_io_executor const& ex)
{
   using executor = boost::asio::associated_executor_t<Handler, boost::asio::any_io_executor>;
   if constexpr (std::is_same_v<executor, boost::asio::any_io_executor>)
      return boost::asio::get_associated_executor(h, ex) == ex;
   else
      return false;
}

/// Validates, queues in the process, acquires a lease of the kind and completes `h` with it.
/// `opts.diag`, when given, is reset first and must outlive the operation. `on_client`: `h`
/// runs on the client's executor (runs_on).
void async_acquire_kind(std::shared_ptr<client_core> const& core, lease_kind kind, std::string name,
                        lock_options opts, lease_handler h, bool on_client = false);

/// The client's core (client.cpp), for the primitives' front ends.
std::shared_ptr<client_core> const& core_of(client const& c) noexcept;

/// A named initiation with get_executor(), so that asio::cancel_after works. A template, as the
/// client is not complete here.
template <class Client>
struct acquire_kind_initiation {
   Client* c;
   using executor_type = boost::asio::any_io_executor;
   executor_type get_executor() const noexcept { return c->get_executor(); }
   template <class Handler>
   void operator()(Handler&& h, lease_kind kind, std::string name, lock_options const& opts) const
   {
      bool const on_client = runs_on(h, c->get_executor());
      async_acquire_kind(core_of(*c), std::move(kind), std::move(name), opts,
                         lease_handler{std::forward<Handler>(h)}, on_client);
   }
};

/// Starts an acquisition of `kind`: the client's acquiring members (client.hpp) are this, each
/// with its kind. Callers that choose the kind at run time (the command-line tool, benchmarks,
/// tests) call it directly; it is not part of the public API.
template <class Client, class CompletionToken>
auto initiate_acquire(Client& c, CompletionToken& token, lease_kind kind, std::string_view name,
                      lock_options const& opts)
{
   return boost::asio::async_initiate<CompletionToken, void(error_code, lease)>(
      acquire_kind_initiation<Client>{&c}, token, std::move(kind), std::string{name}, opts);
}

}  // namespace locksmith::detail

#endif
