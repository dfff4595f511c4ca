// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#ifndef LOCKSMITH_LEASE_HPP
#define LOCKSMITH_LEASE_HPP

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace locksmith {

namespace detail {
struct lease_state;
}

/// A held lock: the proof that this process owns the name until `valid_until()`.
///
/// Move-only. Obtained from `client::async_lock` or `client::async_try_lock`, and given back with
/// `client::async_unlock`. The destructor does no I/O: a lease dropped without unlock stays in
/// Redis until its TTL runs out (other processes wait that long), while waiters of this process
/// may take it over at once.
class lease {
public:
   using clock = std::chrono::steady_clock;

   /// An empty lease, which holds nothing.
   lease() noexcept;
   lease(lease&&) noexcept;
   lease& operator=(lease&&) noexcept;
   ~lease();

   /// The lock's name, as given to `async_lock`.
   std::string const& name() const noexcept;

   /// This owner's token: 32 lower-case hex characters (128 random bits), the lock key's value.
   std::string const& token() const noexcept;

   /// The fencing token: strictly greater than that of every earlier acquisition of the same
   /// name on the node (the maximum over the quorum with RedLock). Pass it to the resource you
   /// protect, and have it refuse writes with a smaller one: a paused holder whose lease ran out
   /// is then stopped by the resource, not by the lock.
   std::uint64_t fencing_token() const noexcept;

   /// Until when the lock may be relied on, on this process's steady clock: the attempt's start +
   /// ttl - drift. After that, Redis may have let someone else in.
   clock::time_point valid_until() const noexcept;

   /// True while the lease was acquired and not released or dropped, and `valid_until()` has not
   /// passed.
   bool held() const noexcept;

   /// @private
   explicit lease(std::shared_ptr<detail::lease_state> st) noexcept;
   /// @private
   std::shared_ptr<detail::lease_state> const& state() const noexcept { return st_; }

private:
   void drop() noexcept;
   std::shared_ptr<detail::lease_state> st_;
};

}  // namespace locksmith

#endif
