// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The one front end of every acquisition: the lock's (client.hpp), a semaphore's permits
// (semaphore.hpp) and a read-write lock's sides (rw_lock.hpp). Each public operation only names
// the kind of lease it asks for.
#ifndef LOCKSMITH_DETAIL_ACQUIRE_KIND_HPP
#define LOCKSMITH_DETAIL_ACQUIRE_KIND_HPP

#include <locksmith/detail/lease_kind.hpp>
#include <locksmith/error.hpp>
#include <locksmith/lease.hpp>
#include <locksmith/lock_options.hpp>
#include <locksmith/report.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>

#include <memory>
#include <string>
#include <string_view>

namespace locksmith {
class client;
}

namespace locksmith::detail {

struct client_core;

using lease_handler = boost::asio::any_completion_handler<void(error_code, lease)>;

/// Validates, queues in the process, acquires a lease of the kind and completes `h` with it.
/// `diag`, when given, is reset first and must outlive the operation.
void async_acquire_kind(std::shared_ptr<client_core> const& core, lease_kind kind, std::string name,
                        lock_options opts, report* diag, lease_handler h);

/// The client's core (client.cpp), for the primitives' front ends.
std::shared_ptr<client_core> const& core_of(client const& c) noexcept;

/// A named initiation with get_executor(), so that asio::cancel_after works.
struct acquire_kind_initiation {
   std::shared_ptr<client_core> core;
   boost::asio::any_io_executor ex;
   using executor_type = boost::asio::any_io_executor;
   executor_type get_executor() const noexcept { return ex; }
   template <class Handler>
   void operator()(Handler&& h, lease_kind kind, std::string name, lock_options const& opts,
                   report* diag) const
   {
      async_acquire_kind(core, kind, std::move(name), opts, diag,
                         lease_handler{std::forward<Handler>(h)});
   }
};

template <class Client, class CompletionToken>
auto initiate_acquire(Client& c, CompletionToken& token, lease_kind kind, std::string_view name,
                      lock_options const& opts, report* diag)
{
   return boost::asio::async_initiate<CompletionToken, void(error_code, lease)>(
      acquire_kind_initiation{core_of(c), c.get_executor()}, token, kind, std::string{name}, opts,
      diag);
}

}  // namespace locksmith::detail

#endif
