// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// What a lease needs of the client that owns it. The owner (core/client_core.hpp) sits above the
// engines; a lease, its watchdog and the acquisition reach it through this interface, so that no
// include points up. An operation in flight holds its owner (shared_from_this) until it completes.
#ifndef LOCKSMITH_SRC_LEASE_OWNER_HPP
#define LOCKSMITH_SRC_LEASE_OWNER_HPP

#include <boost/asio/any_io_executor.hpp>

#include <memory>
#include <string>

namespace locksmith::detail {

class telemetry;

class lease_owner : public std::enable_shared_from_this<lease_owner> {
public:
   /// The client's executor, on which every lease lives.
   virtual boost::asio::any_io_executor const& executor() const noexcept = 0;

   /// The client's log and metrics hooks.
   virtual telemetry& observer() noexcept = 0;

   /// Frees the name's place in the in-process queue for its next local waiter.
   virtual void leave_slot(std::string const& name) noexcept = 0;

protected:
   ~lease_owner() = default;
};

}  // namespace locksmith::detail

#endif
